#!/usr/bin/env bash
# Session 8, device call 7 (review): one switch over G for every launcher, the workspace assertion and
# both widths of the sort path under memcheck; bench_versus batch to see the launches unchanged.
set -u
echo "== test_gpu"; timeout 300 $BUILD/tests/test_gpu > $OUT/test_gpu.txt 2>&1; echo "test_gpu rc $?"; grep -E "FAILED|PASSED" $OUT/test_gpu.txt
HARMONIA_GPU_TEST_QUICK=1 timeout 280 compute-sanitizer --tool memcheck --error-exitcode 9 $BUILD/tests/test_gpu > $OUT/memcheck-test_gpu.log 2>&1
echo "memcheck test_gpu: exit $?; $(grep 'ERROR SUMMARY' $OUT/memcheck-test_gpu.log | tail -1)"
OMP_NUM_THREADS=16 timeout 200 $BUILD/bench/bench_versus --only batch > $OUT/versus-batch.log 2>&1; echo "versus rc $?"
grep -E "=>" $OUT/versus-batch.log | sed -E 's/; hash table.*//; s/strongest ordered baseline/base/'
