#!/bin/bash
# Session 31, call 4 (H200): the fused scan (new) against `nofuse` over the counted partitions,
# alternating, two rounds; the whole test list, memcheck and synccheck of test_gpu (quick) on the new
# build (which is the session's final library code unless the A/B says otherwise).
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for w in new nofuse new nofuse; do
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 18,20,22,23,24 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
BUILD=.device-bin OUT=$OUT/logs timeout 300 bash bench/run-gpu.sh tests > $OUT/logs/tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -30 $OUT/logs/tests.txt | grep -vE "^\s*$" | tail -25
HARMONIA_GPU_TEST_QUICK=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/memcheck-test_gpu.log 2>&1
echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/memcheck-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/memcheck-test_gpu.log | tail -1)"
HARMONIA_GPU_TEST_QUICK=1 timeout 80 compute-sanitizer --tool synccheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/synccheck-test_gpu.log 2>&1
echo "## synccheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/synccheck-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/synccheck-test_gpu.log | tail -1)"
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
