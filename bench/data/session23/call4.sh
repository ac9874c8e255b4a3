#!/bin/bash
# Session 23, call 4 (H100): what bounds the rows below 1.25x, in one run (bounds_probe: the library's
# default call on bench_versus's trees and queries, timed and verified, with the copy and random-gather
# ceilings of the same process; then ncu of each call and of one gather kernel, caches and clocks as
# in a run).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
OMP_NUM_THREADS=16 timeout 240 .device-variants/bounds_probe time > $OUT/time.txt 2>&1
echo "## bounds_probe time rc $? ($SECONDS s)"; cat $OUT/time.txt
OMP_NUM_THREADS=16 timeout 300 ncu --csv --log-file $OUT/ncu.csv --profile-from-start off --cache-control none \
    --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    .device-variants/bounds_probe ncu > $OUT/ncu-stdout.txt 2>&1
echo "## bounds_probe ncu rc $? ($SECONDS s)"; tail -3 $OUT/ncu-stdout.txt
python3 bench/data/session23/bounds-probe/parse_ncu.py $OUT/ncu.csv $OUT/ncu-stdout.txt | tee $OUT/bounds.md
echo "# elapsed $SECONDS s"
