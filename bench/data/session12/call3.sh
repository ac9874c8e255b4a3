#!/bin/bash
# Session 12, call 3: sort_sweep (the PSA sort path's bits and G for sorted results of sparse
# windows, against the library's default call and the 16-bit sort + binary search baseline).
set -u
source .device-deps/setup.sh
SECONDS=0
timeout 400 .device-variants/sort_sweep 2>&1 | tee $OUT/sort_sweep.txt
echo "# elapsed $SECONDS s"
