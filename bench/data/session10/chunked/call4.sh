#!/bin/bash
# Session 10, device call 4 (code of f9b6cf7): bench_versus sizes with its CSVs.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 300 $B/bench/bench_versus --only sizes --out-dir $OUT/versus > $OUT/versus-sizes.log 2>&1
echo "bench_versus rc $?"
grep -E "^## |=>" $OUT/versus-sizes.log | sed -E 's/; hash table.*//' | tail -40
