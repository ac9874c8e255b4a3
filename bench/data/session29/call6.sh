#!/bin/bash
# Session 29, call 6 (H200): test_gpu on 27e7915 (the two-table check at 8 queries a leaf of the
# 2^27-key tree; call 5's one failure).
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
cd .device-bin && OMP_NUM_THREADS=16 timeout 250 tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|ERROR)|LINE|FAILED  \]" $OUT/test_gpu.log
