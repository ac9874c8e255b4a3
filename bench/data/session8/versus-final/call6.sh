#!/usr/bin/env bash
# Session 8, device call 6: bench_versus batch, sizes and ranges with its CSV tables (for the plots).
set -u
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 540 $BUILD/bench/bench_versus --only batch,sizes,ranges --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "bench_versus rc $?"
grep -E "=>|count |collect " $OUT/versus.log | sed -E 's/; hash table.*//' | tail -40
