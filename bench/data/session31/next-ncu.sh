#!/bin/bash
# Prepared in session 31, NOT yet run: the measurement NOTES.md ("Where issue 11 stands after
# session 31") names next — why pass 1's count reads 64 MB at 2.4 TB/s, and why the 32-bit descent
# runs at 2.10 TB/s where the baseline's binary search reads at 2.42 — ncu's speed of light, memory
# workload and warp-state sections of hist1_kernel and of the descent kernels (64-bit 2^23 and 32-bit
# 2^24 sorted rows), beside the baseline's bsearch_kernel. Usage (device tool, after
# `bash bench/stage-prebuilt.sh`; carry [".device-deps", ".device-bin.tar.xz"]):
#   bash bench/data/session31/next-ncu.sh
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 400 ncu --cache-control none --clock-control none \
  -k regex:"hist1|lookup_multi|lookup_kernel|bsearch_kernel" -c 24 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
  .device-bin/bench/bench_versus --only batch --batches 23,24 --runs 1 --out-dir /tmp/nc > $OUT/logs/ncu.txt 2> $OUT/logs/ncu-err.txt
echo "## ncu rc $? ($SECONDS s)"
grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued" $OUT/logs/ncu.txt | head -120
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
