#!/bin/bash
# Session 18, call 11 (call 10 on the H100): bench_versus with every batch timed in rounds (each method once a round; the
# untimed call before each timed one for batches of up to 2^16 queries only): the full run for the
# README's table and plots, then --only batch once more (is the spread of single blocks gone?).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 420 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log
python3 bench/data/session17/small.py $OUT/versus.log
OMP_NUM_THREADS=16 timeout 120 .device-bin/bench/bench_versus --only batch > $OUT/b-2.log 2>&1
echo "## batch rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log $OUT/b-2.log | grep batch
grep -h "MISMATCH\|FAIL" $OUT/versus.log $OUT/b-2.log | head -5
echo "# elapsed $SECONDS s"
