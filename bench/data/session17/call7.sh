#!/bin/bash
# Session 17, call 7 (the final code, fb90bd6): the full bench_versus once more for the README's table
# and the plots (call 5's versus.csv did not come back: at most 8 files return from a call).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 200 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log > $OUT/table.txt; cat $OUT/table.txt
python3 bench/data/session17/small.py $OUT/versus.log
grep -h "MISMATCH\|FAIL" $OUT/versus.log | head -5
echo "# elapsed $SECONDS s"
