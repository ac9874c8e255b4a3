#!/bin/bash
# Session 11, call 5: ptr_cost (what a pointer classification costs with many allocations live),
# then bench_versus of every group with the library of this session (fine bins, no free-memory
# query), CSVs for the plots.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin V=.device-variants
SECONDS=0
$V/ptr_cost | tee $OUT/ptr_cost.txt
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 500 $B/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "bench_versus rc $? after $SECONDS s"
grep -E "^## |=>" $OUT/versus.log | sed -E 's/; hash table.*//' | grep -B1 "=>" | grep -v "^--" | cut -c1-200 | tail -120
grep -E "count   len|collect len" $OUT/versus.log | sed -E 's/ +/ /g'
echo "verified $(grep -c verified $OUT/versus.log), MISMATCH $(grep -c MISMATCH $OUT/versus.log)"
