#!/bin/bash
# Session 30, call 7 (H200): item 2's batches at both ends, after a review — the 2^30-query batches
# with sorted results and the 32-bit 2^30 batch (now run where the device has the memory), and the
# 2^10 / 2^14 batches in three processes (their margin over the baseline is near the runs' spread).
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 300 .device-bin/bench/bench_versus --only batch --batches 10,14,30 --out-dir $OUT/versus > $OUT/logs/b30.log 2>&1
echo "## batch 10,14,30 rc $? ($SECONDS s)"
logs=($OUT/logs/b30.log)
for k in 2 3; do
  [ $SECONDS -gt 360 ] && break
  OMP_NUM_THREADS=16 timeout 60 .device-bin/bench/bench_versus --only batch --batches 10,14 --out-dir /tmp/b$k > $OUT/logs/small-$k.log 2>&1
  echo "## batch 10,14 rc $? ($SECONDS s)"; logs+=($OUT/logs/small-$k.log)
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -E "^# (done|FAILED)|no GPU memory" $OUT/logs/*.log | head
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
