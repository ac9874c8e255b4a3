#!/bin/bash
# Session 30, call 4 (H200): the descent path's G — `g2` (64-bit G = 2, 32-bit G = 1: -DNTG_SORTED_BYTES_64=64u
# -DNTG_SORTED_BYTES_32=128u) and `g8` (64-bit G = 8, 32-bit G = 4: 16u / 32u), gpu_query.cu only,
# against the defaults (.device-bin), alternating.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for w in new g2 g8 new g2 g8; do
  [ $SECONDS -gt 150 ] && break
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 22,23,24 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
