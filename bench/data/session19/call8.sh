#!/bin/bash
# Session 19, call 8: lower bounds on PSA's descent path: (a) test_gpu (full) and compute-sanitizer
# memcheck of test_gpu (quick); (b) lb_probe built with PSA_DESCENT_LOWER_BOUND = 0 and 1,
# alternating, two rounds each.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
timeout 200 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED)|ERROR" $OUT/test_gpu.log | head
HARMONIA_GPU_TEST_QUICK=1 timeout 220 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
for r in 1 2; do
  for v in 0 1; do
    OMP_NUM_THREADS=16 timeout 100 .device-variants/lb_probe_$v > $OUT/lb-$v-$r.txt 2>&1
    echo "## lb_probe_$v round $r rc $? ($SECONDS s)"; cat $OUT/lb-$v-$r.txt
  done
done
echo "# elapsed $SECONDS s"
