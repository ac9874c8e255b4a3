#!/bin/bash
# Session 17, call 3: (a) test_gpu in full after the test's fix (an allocator of another context
# for each refusal); (b) ptr_probe: what a pointer classification costs on the host, by query shape;
# (c) compute-sanitizer memcheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
timeout 150 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED|ERROR|Failure" $OUT/test_gpu.log | head -8
for i in 1 2; do taskset -c 2 .device-variants/ptr_probe; done > $OUT/ptr_probe.txt 2>&1; cat $OUT/ptr_probe.txt
HARMONIA_GPU_TEST_QUICK=1 timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
echo "# elapsed $SECONDS s"
