#!/bin/bash
# Session 20, call 5 (H100): multi_probe `dense` — 64-bit 2^26 keys, 2.5 / 3 / 3.5 / 4 queries a
# leaf: the library's call (the staged search) against the partition + the descent (G = 4, Q = 1, 2),
# sorted results and query order, two rounds.
set -u
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
OMP_NUM_THREADS=16 timeout 300 .device-variants/multi_probe 2 dense > $OUT/dense.txt 2>&1
echo "rc $? ($SECONDS s) WRONG: $(grep -c WRONG $OUT/dense.txt)"; cat $OUT/device.txt
grep -E "^round|library|Q=" $OUT/dense.txt | sed 's/  */ /g; s/partition 8 bits + descent, sorted/(b) part+desc sorted/; s/partition + descent + restore/(c) part+desc+restore/' | cut -c1-90
