#!/bin/bash
# Session 25, call 4 (H100): persistent partition passes (each block walks tiles; the next tile's keys
# in flight during the write-out; pass 2's places from places_kernel) = new, against call 2's library
# (old), alternating, two rounds, bench_versus --only batch --batches 22,23,24,26 after a sanity row;
# then test_gpu, ncu by source line (pass_probe_li), memcheck and racecheck (quick) as time allows.
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
    OMP_NUM_THREADS=16 timeout 70 $B --only batch --batches 22,23,24,26 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
timeout 150 .device-bin/tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tr '\n' ' ')"
OMP_NUM_THREADS=16 timeout 100 ncu --profile-from-start off --cache-control none --clock-control none \
    --kernel-name regex:"pass_kernel" --launch-count 3 \
    --section SourceCounters --section WarpStateStats \
    -o $OUT/pk .device-variants/pass_probe_li ncu 64 > $OUT/probe.txt 2> $OUT/ncu-stderr.txt
echo "## ncu rc $? ($SECONDS s)"
timeout 60 ncu -i $OUT/pk.ncu-rep --page source --csv --print-source sass > $OUT/src-sass.csv 2> $OUT/src-err.txt
echo "## sass rc $? $(wc -c < $OUT/src-sass.csv) bytes"
timeout 30 ncu -i $OUT/pk.ncu-rep --page details --print-units base > $OUT/details.txt 2>&1
left=$((300 - SECONDS))
if [ $left -gt 40 ]; then
  HARMONIA_GPU_TEST_QUICK=1 timeout $left compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/memcheck.log 2>&1
  echo "## memcheck rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $OUT/logs/memcheck.log | tr '\n' ' ')"
fi
left=$((420 - SECONDS))
if [ $left -gt 40 ]; then
  HARMONIA_GPU_TEST_QUICK=1 timeout $left compute-sanitizer --tool racecheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/racecheck.log 2>&1
  echo "## racecheck rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $OUT/logs/racecheck.log | tr '\n' ' ')"
fi
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
