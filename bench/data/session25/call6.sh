#!/bin/bash
# Session 25, call 6 (H100): pass 2's tile places from a table built once (places_kernel; pass 2, its
# count and its restore step read one entry instead of searching) = new, against call 5's final code
# (bc825e6 = old): a sanity row, bench_versus --only batch --batches 22,23,24,26 alternating, two
# rounds; test_gpu; memcheck and synccheck (quick); then the full bench_versus of new.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 40 .device-bin/bench/bench_versus --only batch --batches 24 --out-dir /tmp/v0 > $OUT/logs/sanity.log 2>&1
rc=$?; echo "## sanity rc $rc ($SECONDS s)"; grep -c verified $OUT/logs/sanity.log; grep -c MISMATCH $OUT/logs/sanity.log
[ $rc = 0 ] || { tar -czf $OUT/logs.tar.gz -C $OUT logs; exit 1; }
logs=()
for r in 1 2; do
  for w in new old; do
    B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 22,23,24,26 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
timeout 120 .device-bin/tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tr '\n' ' ')"
for tool in memcheck synccheck; do
  HARMONIA_GPU_TEST_QUICK=1 timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu \
      > $OUT/logs/sanitize-$tool.log 2>&1
  echo "## $tool test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/logs/sanitize-$tool.log | tail -1)"
done
OMP_NUM_THREADS=16 timeout $((440 - SECONDS)) .device-bin/bench/bench_versus --out-dir $OUT/logs/versus > $OUT/logs/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/logs/versus.log
grep -h "MISMATCH\|FAIL" $OUT/logs/versus.log | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
