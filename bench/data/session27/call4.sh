#!/bin/bash
# Session 27, call 4 (H100, measurement only): overlap_probe (bench/data/session27/overlap/) on 64-bit
# 2^26 keys, 2^27 queries, with the library of b1414df (.device-bin).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
OMP_NUM_THREADS=16 timeout 400 .device-variants/overlap_probe 26 27 > $OUT/overlap.txt 2>&1
echo "## overlap_probe rc $? ($SECONDS s)"; cat $OUT/overlap.txt
