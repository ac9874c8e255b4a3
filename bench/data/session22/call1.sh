#!/bin/bash
# Session 22, call 1 (H100): queries on the smallest and largest keys answered by the restore
# (plan.edges). (a) test_psa_bits, test_gpu, compute-sanitizer memcheck of test_gpu (quick);
# (b) outside_probe of 866f469 (old), the new library (new) and the new one with pass 1's outside
# bin aggregated for 32-bit keys too (agg32), alternating, both widths; (c) bench_versus --only
# queries of the old binary and the new one, alternating.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
for t in test_psa_bits test_gpu; do
  timeout 240 .device-bin/tests/$t > $OUT/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|ERROR|fail" $OUT/test_gpu.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
for bits in 32 64; do
  for v in old new agg32; do
    OMP_NUM_THREADS=16 timeout 150 .device-variants/outside_probe_$v time $bits 2 > $OUT/probe-$bits-$v.txt 2>&1
    echo "## probe $bits $v rc $? ($SECONDS s)"
    grep -E "queries|FAIL|WRONG|error" $OUT/probe-$bits-$v.txt | sed 's/queries: /: /; s/ (100 % of the sample found)//'
  done
done
for round in 1 2; do
  for w in old new; do
    B=.device-bin/bench/bench_versus; [ $w = old ] && B=.device-variants/bench_versus_old
    OMP_NUM_THREADS=16 timeout 200 $B --only queries --out-dir /tmp/v-$w > $OUT/queries-$w-$round.log 2>&1
    echo "## queries $w $round rc $? ($SECONDS s)"
  done
done
python3 bench/data/session13/summ.py $OUT/queries-old-1.log $OUT/queries-new-1.log $OUT/queries-old-2.log $OUT/queries-new-2.log
grep -h "MISMATCH\|FAIL" $OUT/queries-*.log | head -5
echo "# elapsed $SECONDS s"
