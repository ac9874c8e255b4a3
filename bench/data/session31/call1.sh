#!/bin/bash
# Session 31, call 1 (H200): harmonia_lookup_unordered32 (the `harmonia` sorted row) against the 64-bit
# call (`harmonia_pos64`) in the same processes; the count's grid variants (h1p2: 2 blocks an SM; h32:
# 32 bytes a thread) alternating with the new build over the batches; test_gpu and memcheck of
# test_gpu (quick) on the new build.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
(cd .device-bin && OMP_NUM_THREADS=16 timeout 200 tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
 echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tail -1)"
 grep -E "^\[  FAILED|ERROR|error" $OUT/logs/test_gpu.log | head -5
 OMP_NUM_THREADS=16 timeout 60 tests/test_differential > $OUT/logs/test_differential.log 2>&1
 echo "## test_differential rc $? ($SECONDS s)"
 HARMONIA_GPU_TEST_QUICK=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu > $OUT/logs/memcheck-test_gpu.log 2>&1
 echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/memcheck-test_gpu.log | tail -1)")
logs=()
for w in new h1p2 h32 new h1p2 h32; do
  [ $SECONDS -gt 330 ] && break
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 80 $B --only batch --batches 10,14,22,23,24,26 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
python3 bench/data/session31/pos.py "${logs[@]}"
if [ $SECONDS -lt 380 ]; then
  OMP_NUM_THREADS=16 timeout 120 .device-bin/bench/bench_versus --only sizes --out-dir /tmp/s > $OUT/logs/sizes-new.log 2>&1
  echo "## sizes rc $? ($SECONDS s)"
  python3 bench/data/session31/pos.py $OUT/logs/sizes-new.log
  python3 bench/data/session13/summ.py $OUT/logs/sizes-new.log
fi
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
