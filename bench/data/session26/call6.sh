#!/bin/bash
# Session 26, call 6 (H100): after the review's refactor of pass 2's tile lookup (b1414df:
# pass2_tile_to, the same code in one helper) — test_psa_bits, test_gpu, memcheck of test_gpu (quick),
# and one row of the partitioned batches as a check (--only batch --batches 24,26).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
for t in test_psa_bits test_gpu; do
  timeout 200 .device-bin/tests/$t > $OUT/logs/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/$t.log | tr '\n' ' ')"
done
HARMONIA_GPU_TEST_QUICK=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/logs/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/logs/sanitize-memcheck.log | tail -1)"
OMP_NUM_THREADS=16 timeout 60 .device-bin/bench/bench_versus --only batch --batches 24,26 --out-dir /tmp/v > $OUT/logs/v.log 2>&1
echo "## versus rc $? ($SECONDS s)"; python3 bench/data/session13/summ.py $OUT/logs/v.log; grep -h "MISMATCH\|FAIL" $OUT/logs/v.log | head -3
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
