#!/bin/bash
# Session 14, call 1 (profiling; nothing built on the device): (a) small_probe's timing schemes —
# does bench_versus's order of methods bias the 2^10-2^18 rows? (b) ncu of the small batches'
# kernels (Harmonia's lookup_kernel and the Eytzinger baseline's), caches and clocks as in a run;
# (c) ncu --set full of the sparse sorted-order descent (sort_sweep's ncu mode: 64-bit 2^26 keys /
# 2^22 queries, 32-bit 2^28 / 2^24) and of the binary search it is compared with.
set -u
source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 150 .device-variants/small_probe > $OUT/small_probe.txt 2>&1
echo "## small_probe rc $? ($SECONDS s)"; grep -v "^#" $OUT/small_probe.txt | tail -45
OMP_NUM_THREADS=16 timeout 200 ncu --cache-control none --clock-control none -k regex:"lookup_kernel" \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --csv --page details \
    .device-variants/small_probe ncu > $OUT/ncu-small.csv 2> $OUT/ncu-small.err
echo "## ncu small rc $? ($SECONDS s)"; tail -3 $OUT/ncu-small.err
OMP_NUM_THREADS=16 timeout 200 ncu --cache-control none --clock-control none -k regex:"lookup_kernel|bsearch_kernel" \
    --set full --csv --page details .device-variants/sort_sweep ncu > $OUT/ncu-sorted.csv 2> $OUT/ncu-sorted.err
echo "## ncu sorted rc $? ($SECONDS s)"; tail -3 $OUT/ncu-sorted.err
ls -la $OUT
echo "# elapsed $SECONDS s"
