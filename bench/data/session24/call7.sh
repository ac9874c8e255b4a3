#!/bin/bash
# Session 24, call 7 (H100): the next tiles' keys asked of the L2 (PSA_PREFETCH_AHEAD). A sanity row
# (short timeout), then bench_versus --only batch --batches 22,23,24,26 of the defaults (prefetch) and
# an A/B build with -DPSA_PREFETCH_AHEAD=0 (off), alternating, two rounds; then, if time is left,
# test_gpu and compute-sanitizer memcheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 40 .device-bin/bench/bench_versus --only batch --batches 24 --out-dir /tmp/v0 > $OUT/logs/sanity.log 2>&1
rc=$?; echo "## sanity rc $rc ($SECONDS s)"; grep "=>" $OUT/logs/sanity.log; grep -c verified $OUT/logs/sanity.log
[ $rc = 0 ] || { tar -czf $OUT/logs.tar.gz -C $OUT logs; exit 1; }
logs=()
for r in 1 2; do
  for w in base off; do
    B=.device-bin/bench/bench_versus; [ $w != base ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 22,23,24,26 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
timeout 110 .device-bin/tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tr '\n' ' ')"
left=$((190 - SECONDS))
if [ $left -gt 35 ]; then
  HARMONIA_GPU_TEST_QUICK=1 timeout $left compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/memcheck.log 2>&1
  echo "## memcheck rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $OUT/logs/memcheck.log | tr '\n' ' ')"
fi
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
