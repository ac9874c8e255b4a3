#!/bin/bash
# Session 17, call 12: the read-through's bench_versus (time_rounds through one call helper): --only batch once.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 90 .device-bin/bench/bench_versus --only batch > $OUT/batch.log 2>&1
echo "## batch rc $? ($SECONDS s)"; python3 bench/data/session13/summ.py $OUT/batch.log; grep -h "MISMATCH\|FAIL" $OUT/batch.log | head -3
