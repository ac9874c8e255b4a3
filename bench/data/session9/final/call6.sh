#!/bin/bash
# Session 9, device call 6 (code of 64f4d59): bench_versus batch, hits and queries (the workloads
# whose windows go through PSA besides `sizes`), with the CSVs.
set -u
B=.device-bin
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 560 $B/bench/bench_versus --only batch,hits,queries --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "bench_versus rc $?"
grep -E "^## |=>" $OUT/versus.log | sed -E 's/; hash table.*//' | tail -80
