#!/bin/bash
# Session 27, call 8 (H100): one bit fewer in all (PSA_BUCKET_BYTES 16 KiB: b16)
# against the default (b1414df's library), bench_versus --only batch --batches 24,26, alternating,
# two rounds; then --only sizes of the default and b16, alternating, as long as the call allows.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for r in 1 2; do
  for w in new b16; do
    B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 90 $B --only batch --batches 24,26 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
slogs=()
for w in new b16 new b16; do
  [ $SECONDS -gt 420 ] && break
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 150 $B --only sizes --out-dir /tmp/s-$w-$SECONDS > $OUT/logs/s-$w-$SECONDS.log 2>&1
  echo "## sizes $w rc $? ($SECONDS s)"
  slogs+=($(ls -t $OUT/logs/s-$w-*.log | head -1))
done
[ ${#slogs[@]} -gt 0 ] && python3 bench/data/session13/summ.py "${slogs[@]}"
grep -h "MISMATCH\|FAIL" $OUT/logs/s-*.log | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
