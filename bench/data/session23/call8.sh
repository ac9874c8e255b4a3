#!/bin/bash
# Session 23, call 8 (H100): both probes again after their tree set-up moved into probe_tree.h
# (bounds_probe time mode, classify_probe once): the same figures within their noise.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
OMP_NUM_THREADS=16 timeout 200 .device-variants/bounds_probe time > $OUT/bounds-time.txt 2>&1
echo "## bounds_probe time rc $? ($SECONDS s)"; cat $OUT/bounds-time.txt
OMP_NUM_THREADS=16 timeout 100 .device-variants/classify_probe > $OUT/classify.txt 2>&1
echo "## classify_probe rc $? ($SECONDS s)"; cat $OUT/classify.txt
