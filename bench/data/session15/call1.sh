#!/bin/bash
# Session 15, call 1: the tiled descent of sorted windows. (a) tiled_sweep: the library's call (new
# policy: one 8-bit pass, tiled descent) against the old pipeline by hand and the new one for G in
# {1, 2, 4} x tile in {512, 1024, 2048}, and the 16-bit sort + binary search baseline, two rounds;
# (b) test_gpu in full; (c) compute-sanitizer memcheck + racecheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt 2>&1
OMP_NUM_THREADS=16 timeout 200 .device-variants/tiled_sweep > $OUT/tiled_sweep.txt 2>&1
echo "## tiled_sweep rc $? ($SECONDS s)"; cat $OUT/tiled_sweep.txt
timeout 150 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED|\[  FAILED|SKIPPED" $OUT/test_gpu.log | head -8
for tool in memcheck racecheck; do
    HARMONIA_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu \
        > $OUT/sanitize-test_gpu-$tool.log 2>&1
    echo "## compute-sanitizer $tool test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitize-test_gpu-$tool.log | tail -1)"
done
echo "# elapsed $SECONDS s"
