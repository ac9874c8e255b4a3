#!/bin/bash
# Session 23, call 7 (H100): where the default call's excess over the explicit call goes at 2^10 and
# 2^14 queries (classify_probe: the default call, the explicit one, the explicit one after three of
# the library's classifications or three one-attribute driver queries or one classification, in
# rounds; the classifications alone on the host clock). Run twice (two processes).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
for r in 1 2; do
  OMP_NUM_THREADS=16 timeout 120 .device-variants/classify_probe > $OUT/probe-$r.txt 2>&1
  echo "## classify_probe $r rc $? ($SECONDS s)"; cat $OUT/probe-$r.txt
done
