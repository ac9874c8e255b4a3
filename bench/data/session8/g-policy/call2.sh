#!/usr/bin/env bash
# Session 8, device call 2: the fixed-shape kernels with the new default G (bytes a thread by batch).
set -u
echo "== test_gpu"; timeout 240 $BUILD/tests/test_gpu > $OUT/test_gpu.txt 2>&1; echo "test_gpu rc $?"
echo "== versus batch"
OMP_NUM_THREADS=16 timeout 240 $BUILD/bench/bench_versus --only batch > $OUT/versus-batch.log 2>&1; echo "rc $?"
echo "== sort-descend harness"
cp .device-old-harness/sort_descend $BUILD/bench/ && timeout 200 $BUILD/bench/sort_descend > $OUT/sort-descend.txt 2>&1; echo "rc $?"
echo "== versus sizes"
OMP_NUM_THREADS=16 timeout 280 $BUILD/bench/bench_versus --only sizes > $OUT/versus-sizes.log 2>&1; echo "rc $?"
grep -E "=>" $OUT/versus-sizes.log | sed -E 's/; hash table.*//' | head -40
