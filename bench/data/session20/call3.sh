#!/bin/bash
# Session 20, call 3 (H100): (a) test_gpu and test_psa_bits, the GPU embedding and concurrency tests;
# (b) compute-sanitizer memcheck of test_gpu (quick); (c) bench_versus --only batch, 0731ef5's binary
# (old: one query a group, 64-bit query order in query order) and the working tree's (new),
# alternating, two rounds each.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt
cat $OUT/device.txt
for t in test_psa_bits test_gpu test_gpu_embedding test_gpu_concurrent; do
  timeout 200 .device-bin/tests/$t > $OUT/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|ERROR" $OUT/test_gpu.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 220 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
for r in 1 2; do
  OMP_NUM_THREADS=16 timeout 150 .device-variants/bench_versus_old --only batch --out-dir /tmp/v-old-$r > $OUT/batch-old-$r.log 2>&1
  echo "## old round $r rc $? ($SECONDS s)"
  OMP_NUM_THREADS=16 timeout 150 .device-bin/bench/bench_versus --only batch --out-dir /tmp/v-new-$r > $OUT/batch-new-$r.log 2>&1
  echo "## new round $r rc $? ($SECONDS s)"
done
python3 bench/data/session13/summ.py $OUT/batch-old-1.log $OUT/batch-new-1.log $OUT/batch-old-2.log $OUT/batch-new-2.log
grep -h "MISMATCH\|FAIL" $OUT/batch-new-*.log | head -5
echo "# elapsed $SECONDS s"
