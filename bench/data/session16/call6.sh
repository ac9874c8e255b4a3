#!/bin/bash
# Session 16, call 6: the final read-through (the start table's plan returned whole to the test, one
# NTG_SORTED_BYTES, a test of a tree whose allocator refuses the table): tests.list and
# compute-sanitizer memcheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 230 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; grep -c " OK " $OUT/run-tests.txt; grep -v " OK " $OUT/run-tests.txt | tail -3
HARMONIA_GPU_TEST_QUICK=1 timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
echo "# elapsed $SECONDS s"
