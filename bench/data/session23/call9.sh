#!/bin/bash
# Session 23, call 9 (H100): 64-byte leaves for 64-bit keys, as a variant: bench_versus of the
# defaults (base: L = 16, the fixed-shape kernels for L = 16) against the build whose fixed-shape
# kernels are compiled for L = 8 (l8: -DNTG_FIXED_LEAF=8) run with --leaf-size 8; --only batch
# --batches 16,18,20,22,24, alternating, two rounds (every result verified). Only the 64-bit rows
# count (l8's 32-bit trees get 32-byte leaves).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for r in 1 2; do
  for w in base l8; do
    if [ $w = base ]; then B=".device-bin/bench/bench_versus"; else B=".device-variants/bench_versus_l8 --leaf-size 8"; fi
    OMP_NUM_THREADS=16 timeout 150 $B --only batch --batches 16,18,20,22,24 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s) $(grep -m2 '^# tree' $OUT/logs/v-$w-$r.log | tr '\n' ' ')"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
