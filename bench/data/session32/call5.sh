#!/bin/bash
# Session 32, call 5 (H200): the final library code (e41018d) under compute-sanitizer racecheck
# (test_gpu, quick mode: every PSA plan, the descent path, the staged search, the ranges).
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
HARMONIA_GPU_TEST_QUICK=1 timeout 400 compute-sanitizer --tool racecheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/racecheck-test_gpu.log 2>&1
echo "## racecheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $OUT/logs/racecheck-test_gpu.log | tr '\n' ' ')"
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
