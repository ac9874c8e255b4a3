#!/bin/bash
# Session 27, call 10 (H100): the unordered lookups' own plan (50c1a41 = new, .device-bin) — test_gpu,
# test_psa_bits, memcheck of test_gpu (quick); then bench_versus --only sizes and --only batch
# --batches 24,26 of new against b1414df (old), alternating, as long as the call allows.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
cd .device-bin
timeout 240 tests/test_gpu > $OUT/logs/test_gpu.log 2>&1; echo "## test_gpu rc $? ($SECONDS s)"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|\[  ERROR" $OUT/logs/test_gpu.log | head -8
tests/test_psa_bits > $OUT/logs/test_psa_bits.log 2>&1; echo "## test_psa_bits rc $? ($SECONDS s)"
HARMONIA_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu > $OUT/logs/memcheck.log 2>&1; echo "## memcheck rc $? ($SECONDS s)"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/logs/memcheck.log | tail -3
cd ..
logs=()
for w in new old; do
  [ $SECONDS -gt 330 ] && break
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_old
  OMP_NUM_THREADS=16 timeout 60 $B --only sizes --out-dir /tmp/s-$w > $OUT/logs/s-$w.log 2>&1
  echo "## sizes $w rc $? ($SECONDS s)"; logs+=($OUT/logs/s-$w.log)
done
for w in new old; do
  [ $SECONDS -gt 400 ] && break
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_old
  OMP_NUM_THREADS=16 timeout 30 $B --only batch --batches 24,26 --out-dir /tmp/b-$w > $OUT/logs/b-$w.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($OUT/logs/b-$w.log)
done
[ ${#logs[@]} -gt 0 ] && python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" $OUT/logs/s-*.log $OUT/logs/b-*.log 2>/dev/null | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
