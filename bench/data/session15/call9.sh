#!/bin/bash
# Session 15, call 9: the final commit's binaries (comments, a static_assert and test_psa_partition's
# edge queries changed since call 8): tests.list and compute-sanitizer memcheck of test_gpu (quick).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 230 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; grep -c " OK " $OUT/run-tests.txt; grep -v " OK " $OUT/run-tests.txt | tail -4
HARMONIA_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-test_gpu-memcheck.log 2>&1
echo "## compute-sanitizer memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-test_gpu-memcheck.log | tail -1)"
echo "# elapsed $SECONDS s"
