#!/bin/bash
# Session 27, call 3 (H100): the parameter lines read before the query's load (NTG_TOUCH_PARAMS,
# touch = 1: the small-batch kernel, touch2 = 2: every fixed-shape lookup_kernel) against the default
# (3add722's library), bench_versus --only batch --batches 10,14,16,18, alternating, three rounds.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for r in 1 2 3; do
  for w in new touch touch2; do
    B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 10,14,16,18 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
