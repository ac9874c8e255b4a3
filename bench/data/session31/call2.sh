#!/bin/bash
# Session 31, call 2 (H200): the mended build (lookup_multi_kernel without positions) against the
# descent path's bucket bits (d9: 9 bits, d7: 7 bits; gpu_query.cu only) over the descent-path
# batches, alternating; the whole test list; memcheck of test_gpu (quick); the Python package's tests
# on the GPU (the staged wheel).
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for w in new d9 d7 new d9 d7; do
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 10,14,22,23,24 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
python3 bench/data/session31/pos.py "${logs[@]}"
BUILD=.device-bin OUT=$OUT/logs timeout 300 bash bench/run-gpu.sh tests > $OUT/logs/tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -30 $OUT/logs/tests.txt | grep -vE "^\s*$" | tail -28
HARMONIA_GPU_TEST_QUICK=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/memcheck-test_gpu.log 2>&1
echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/memcheck-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/memcheck-test_gpu.log | tail -1)"
mkdir -p $OUT/logs/py
OUT=$OUT/logs/py timeout $((585 - SECONDS)) bash python/run-gpu-tests.sh wheel tests > $OUT/logs/py.txt 2>&1
echo "## python rc $? ($SECONDS s)"; tail -8 $OUT/logs/py.txt
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
