#!/bin/bash
# Session 30, call 6 (H200): the final code's kernels (6ecb63a: pass 1's count with 64 bytes of loads
# a thread) under compute-sanitizer racecheck and synccheck (test_gpu, quick mode: every PSA plan,
# the descent path's one-pass count included); memcheck ran in call 5.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
for tool in racecheck synccheck; do
  left=$((560 - SECONDS)); [ $left -lt 60 ] && break
  HARMONIA_GPU_TEST_QUICK=1 timeout $left compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/$tool-test_gpu.log 2>&1
  echo "## $tool test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $OUT/logs/$tool-test_gpu.log | tr '\n' ' ')"
done
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
