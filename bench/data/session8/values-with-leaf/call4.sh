#!/usr/bin/env bash
# Session 8, device call 4: leaf values loaded beside the keys for small batches; the sort path per width.
set -u
echo "== test_gpu"; timeout 240 $BUILD/tests/test_gpu > $OUT/test_gpu.txt 2>&1; echo "test_gpu rc $?"; grep -E "FAILED|PASSED" $OUT/test_gpu.txt
for r in 1 2; do
echo "== versus batch run $r"
OMP_NUM_THREADS=16 timeout 200 $BUILD/bench/bench_versus --only batch > $OUT/versus-batch-$r.log 2>&1; echo "rc $?"
done
