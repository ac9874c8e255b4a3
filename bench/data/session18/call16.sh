#!/bin/bash
# Session 18, call 16 (the read-through's refactors: psa_sort_max_halves_per_leaf, measure()'s
# signature): test_gpu in full and bench_versus --only batch, every result verified.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
timeout 200 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED|ERROR|Failure" $OUT/test_gpu.log | head -5
OMP_NUM_THREADS=16 timeout 150 .device-bin/bench/bench_versus --only batch > $OUT/b.log 2>&1
echo "## batch rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/b.log
grep -h "MISMATCH\|FAIL" $OUT/b.log | head -5
echo "# elapsed $SECONDS s"
