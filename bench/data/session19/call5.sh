#!/bin/bash
# Session 19, call 5 (measurement only): sort_sweep part-q — results in query order: the library's
# harmonia_lookup (2b9227b's library) against the ordered partition at 8 bits (or the library's
# plan) + the descent into slot-order buffers + psa_restore.
set -u
source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 400 .device-variants/sort_sweep part-q > $OUT/part_q.txt 2>&1
echo "## sort_sweep part-q rc $? ($SECONDS s)"; cat $OUT/part_q.txt
echo "# elapsed $SECONDS s"
