#!/bin/bash
# Session 18, call 15 (after a helper's review): test_gpu in full (test_sparse_unordered now sends a
# window of 2.2 queries a leaf through the unordered lookup: the sort path for 64-bit keys, the
# partition for 32-bit), and bench_versus --only ranges (each collect's offsets, keys and values
# poisoned before its check).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
timeout 200 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED|ERROR|sparse_unordered|Failure" $OUT/test_gpu.log | head -8
OMP_NUM_THREADS=16 timeout 120 .device-bin/bench/bench_versus --only ranges > $OUT/ranges.log 2>&1
echo "## ranges rc $? ($SECONDS s)"; grep -E "^  (count|collect)" $OUT/ranges.log
grep -h "MISMATCH\|FAIL" $OUT/ranges.log | head -5
echo "# elapsed $SECONDS s"
