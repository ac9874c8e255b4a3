#!/bin/bash
# Session 29, call 4 (H200): the value prefetch with session 27's wider unordered plan (new =
# 4e4c374, from 16 plan bits), never wider (wide0), wider from 17 bits (wide17): tree sizes (2^27
# queries) and batches of 2^24 and 2^26, alternating, two rounds.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
blogs=(); slogs=()
for r in 1 2; do
  for w in new wide0 wide17; do
    [ $SECONDS -gt 420 ] && break
    B=.device-variants/bench_versus_$w; [ $w = new ] && B=.device-bin/bench/bench_versus
    OMP_NUM_THREADS=16 timeout 70 $B --only sizes --out-dir /tmp/s-$w > $OUT/logs/s-$w-$r.log 2>&1; echo "## sizes $w rc $? ($SECONDS s)"
    OMP_NUM_THREADS=16 timeout 40 $B --only batch --batches 24,26 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$r.log 2>&1; echo "## batch $w rc $? ($SECONDS s)"
    slogs+=($OUT/logs/s-$w-$r.log); blogs+=($OUT/logs/b-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${slogs[@]}"
python3 bench/data/session13/summ.py "${blogs[@]}"
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
