#!/bin/bash
# Session 27, call 2 (H100, measurement only): what a 2^10-query lookup kernel spends its ~5 us on,
# against the K-ary Eytzinger baseline's kernel, with caches and clocks as in a run (ncu
# --cache-control none --clock-control none): lookup_kernel of every G (one round of bench_versus's
# timed rounds) and eyt_lookup_kernel, 64-bit 2^26 and 32-bit 2^28 keys, SourceCounters and
# WarpStateStats by SASS instruction (bench_versus_li: 3add722's library with ntg_kernels.cu built
# with -lineinfo).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
cat .device-bin/.prebuilt
B=.device-variants/bench_versus_li
S="--section SourceCounters --section WarpStateStats --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis --import-source yes"
run() { # name regex skip count
  OMP_NUM_THREADS=16 timeout 150 ncu --cache-control none --clock-control none -k regex:"$2" --launch-skip $3 --launch-count $4 $S \
      -o $OUT/$1 $B --only batch --batches 10 --out-dir /tmp/v-$1 > $OUT/$1-run.txt 2> $OUT/$1-err.txt
  echo "## ncu $1 rc $? ($SECONDS s)"; tail -2 $OUT/$1-err.txt
  timeout 60 ncu -i $OUT/$1.ncu-rep --page details --print-units base > $OUT/$1-details.txt 2>&1
  grep -E "lookup_kernel|Duration|L2 Hit Rate|L1/TEX Hit Rate|DRAM Throughput|Warp Cycles Per Issued|Registers Per|Executed Ipc A" $OUT/$1-details.txt | sed 's/  */ /g' | cut -c1-150
  timeout 60 ncu -i $OUT/$1.ncu-rep --page source --csv --print-source sass > $OUT/$1-sass.csv 2>/dev/null
  echo "## $1 sass $(wc -c < $OUT/$1-sass.csv) bytes"
}
run lk64 "^lookup_kernel" 60 14
run ey64 "eyt_lookup_kernel" 50 2
run lk32 "^lookup_kernel" 820 16
run ey32 "eyt_lookup_kernel" 155 2
mkdir -p /tmp/keep && mv $OUT/*.csv $OUT/*-details.txt $OUT/*-err.txt $OUT/*-run.txt /tmp/keep/ && tar -czf $OUT/call2.tar.gz -C /tmp/keep . && rm -f $OUT/*.ncu-rep
echo "# elapsed $SECONDS s"
