#!/usr/bin/env bash
# Session 8, device call 3: the sort path on 16 bits with G = 2, and from fewer than 2 queries a leaf.
set -u
echo "== test_gpu"; timeout 240 $BUILD/tests/test_gpu > $OUT/test_gpu.txt 2>&1; echo "test_gpu rc $?"; grep -E "FAILED|PASSED" $OUT/test_gpu.txt
echo "== versus batch"
OMP_NUM_THREADS=16 timeout 200 $BUILD/bench/bench_versus --only batch > $OUT/versus-batch.log 2>&1; echo "rc $?"
echo "== versus hits,queries,keys"
OMP_NUM_THREADS=16 timeout 280 $BUILD/bench/bench_versus --only hits,queries,keys > $OUT/versus-hqk.log 2>&1; echo "rc $?"
grep -E "=>" $OUT/versus-hqk.log | sed -E 's/; hash table.*//' | head -60
