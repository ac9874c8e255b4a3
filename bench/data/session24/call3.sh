#!/bin/bash
# Session 24, call 3 (H100): the value burst prefetched when the leaf is known (NTG_PREFETCH_VALUE).
# A sanity row first (short timeout), then bench_versus --only batch --batches 16,18,20,22 of the
# defaults (prefetch) and an A/B build with -DNTG_PREFETCH_VALUE=0 (off), alternating, two rounds.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 40 .device-bin/bench/bench_versus --only batch --batches 18 --out-dir /tmp/v0 > $OUT/logs/sanity.log 2>&1
rc=$?; echo "## sanity rc $rc ($SECONDS s)"; grep "=>" $OUT/logs/sanity.log
[ $rc = 0 ] || { tar -czf $OUT/logs.tar.gz -C $OUT logs; exit 1; }
logs=()
for r in 1 2; do
  for w in base off; do
    B=.device-bin/bench/bench_versus; [ $w != base ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 16,18,20,22 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
