#!/bin/bash
# Session 32, call 3 (H200): programmatic dependent launch on PSA's paths (6ed9100 = new) against the
# same code launching plainly (nopdl: psa_partition.cu and ntg_kernels.cu built with -DHARMONIA_PDL=0),
# alternating, three rounds over the descent-path and staged batches; then test_gpu (quick) under
# memcheck and synccheck, and test_gpu in full.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for w in new nopdl nopdl new new nopdl; do
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 90 $B --only batch --batches 20,22,23,24,26 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
for tool in memcheck synccheck; do
  HARMONIA_GPU_TEST_QUICK=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/$tool-test_gpu.log 2>&1
  echo "## $tool test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/$tool-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/$tool-test_gpu.log | tail -1)"
done
timeout $((580 - SECONDS)) .device-bin/tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tr '\n' ' ')"
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
