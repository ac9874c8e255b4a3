#!/bin/bash
# Session 10, device call 5 (code of f9b6cf7): bench_versus batch, hits and queries with the CSVs.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 560 $B/bench/bench_versus --only batch,hits,queries --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "bench_versus rc $?"
grep -E "^## |=>" $OUT/versus.log | sed -E 's/; hash table.*//' | tail -80
