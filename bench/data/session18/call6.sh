#!/bin/bash
# Session 18, call 6 (measurement only): PSA's sort path (CUB sort on the top B bits + the sorted
# descent from the fine start table) against the library's partition at 2-4 queries a leaf, sorted
# results (sort_sweep dense: 64-bit 2^26 keys with 2^24 and 2^23 queries, 32-bit 2^28 with 2^25).
set -u
source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 400 .device-variants/sort_sweep dense > $OUT/sort_sweep18.txt 2>&1
echo "## sort_sweep dense rc $? ($SECONDS s)"; cat $OUT/sort_sweep18.txt
echo "# elapsed $SECONDS s"
