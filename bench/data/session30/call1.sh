#!/bin/bash
# The descent-path prefetch branch (s29-descent-prefetch) in one device call (H200). Before it, here:
#   git checkout s29-descent-prefetch && bash bench/stage-prebuilt.sh
#   cp bench/data/session24/mkvar.sh /tmp/mkvar.sh
#   SRCS="harmonia/gpu_query.cu" bash /tmp/mkvar.sh nodp "-DNTG_DESCENT_PREFETCH=0"
# then run it with carry [".device-deps", ".device-bin.tar.xz", ".device-variants"]. It runs new
# (.device-bin) against nodp alternating over the descent path's batches (2^22, 2^23 of 64-bit
# 2^26 keys; 2^23, 2^24 of 32-bit 2^28 keys) and 2^24 (staged, unchanged), then test_gpu and memcheck
# of test_gpu (quick) on new.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for w in new nodp new nodp new nodp; do
  [ $SECONDS -gt 200 ] && break
  B=.device-bin/bench/bench_versus; [ $w = nodp ] && B=.device-variants/bench_versus_nodp
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 22,23,24 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
(cd .device-bin && OMP_NUM_THREADS=16 timeout 200 tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
 echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tail -1)"
 HARMONIA_GPU_TEST_QUICK=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu > $OUT/logs/memcheck-test_gpu.log 2>&1
 echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/memcheck-test_gpu.log | tail -1)")
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
