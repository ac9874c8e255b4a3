#!/bin/bash
# Session 19, call 1 (measurement only): sort_sweep `part` (PSA's partition at 8-16 bits + the
# sorted descent, against the library's call, its sort path by hand and the 16-bit baseline) and
# small_probe `stream` (small calls back to back on one stream).
set -u
source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
OMP_NUM_THREADS=16 timeout 300 .device-variants/sort_sweep part > $OUT/part.txt 2>&1
echo "## sort_sweep part rc $? ($SECONDS s)"; cat $OUT/part.txt
OMP_NUM_THREADS=16 timeout 200 .device-variants/small_probe stream > $OUT/stream.txt 2>&1
echo "## small_probe stream rc $? ($SECONDS s)"; cat $OUT/stream.txt
echo "# elapsed $SECONDS s"
