#!/bin/bash
# Session 29, call 7 (H200): the final code (468f9f3: the prefetch's first address inside the run):
# test_gpu, memcheck of test_gpu (quick), and if time is left the 2^24 batches once.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
cd .device-bin
OMP_NUM_THREADS=16 timeout 170 tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/test_gpu.log | tail -1)"; grep -E "LINE|FAILED  \]" $OUT/test_gpu.log
HARMONIA_GPU_TEST_QUICK=1 timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu > $OUT/memcheck-test_gpu.log 2>&1
echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/memcheck-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/memcheck-test_gpu.log | tail -1)"
cd ..
if [ $SECONDS -lt 190 ]; then
  OMP_NUM_THREADS=16 timeout 15 .device-bin/bench/bench_versus --only batch --batches 24 --out-dir /tmp/b > $OUT/batch.log 2>&1
  echo "## batch rc $? ($SECONDS s)"; python3 bench/data/session13/summ.py $OUT/batch.log
fi
