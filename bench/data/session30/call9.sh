#!/bin/bash
# Session 30, call 9 (H200): after the final read — the 2^30 rows' gate now on the device's total
# memory; check that both widths still run them in both orders, every result verified.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 200 .device-bin/bench/bench_versus --only batch --batches 30 > $OUT/logs/b30.log 2>&1
echo "## batch 30 rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/logs/b30.log
grep -E "^# (done|FAILED)" $OUT/logs/b30.log
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
