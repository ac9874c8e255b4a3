#!/bin/bash
# Session 27, call 1 (H100, measurement only): where a small call's host time goes, stage by stage
# (stage_probe: the library of 3add722 with bench/data/session27/stage-probe/hooks.patch, timing
# hooks between the stages of harmonia_lookup / harmonia_lookup_async), and the CUDA pieces alone.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
which nsys ncu; nproc; lscpu | grep -E "Model name|MHz" | head -3
OMP_NUM_THREADS=16 timeout 200 .device-variants/stage_probe > $OUT/stage_probe.txt 2>&1
echo "## stage_probe rc $? ($SECONDS s)"; cat $OUT/stage_probe.txt
