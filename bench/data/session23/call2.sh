#!/bin/bash
# Session 23, call 2 (H100): do the small batches still want the values beside the leaf and the fine
# table? bench_versus --only batch --batches 10,14,16 of base, novals (NTG_VALUES_WITH_LEAF_BATCH 0),
# nofine (NTG_START_FINE_BATCH 0), fine (2^19), alternating, three rounds.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for r in 1 2 3; do
  [ $SECONDS -gt 400 ] && { echo "## round 2 skipped ($SECONDS s)"; break; }
  for w in base novals nofine fine; do
    B=.device-bin/bench/bench_versus; [ $w != base ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 130 $B --only batch --batches 10,14,16 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "harmonia" "${logs[@]}" | grep -E "2\^1[68]|harmonia_g|explicit" | head -0
for f in "${logs[@]}"; do echo "# $f"; grep -E "^## |harmonia_explicit|harmonia_g" $f | sed 's/  */ /g' | head -30; done > $OUT/explicit.txt
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
