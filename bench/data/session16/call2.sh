#!/bin/bash
# Session 16, call 2: sort_sweep (bench/data/session16/sort-sweep): the sorted path's B x G with and
# without the start table; the G of 2^10-2^18 query-order batches with the table.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 300 .device-variants/sort_sweep > $OUT/sort_sweep.txt 2>&1
echo "## sort_sweep rc $? ($SECONDS s)"; cat $OUT/sort_sweep.txt
