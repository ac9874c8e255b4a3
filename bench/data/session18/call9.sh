#!/bin/bash
# Session 18, call 9: call 8's 32-bit 2^20 sorted row came out bimodal (median 0.196 ms, min 0.138,
# max 0.351; call 7: 0.138): bench_versus --only batch three more times, the 2^20 rows with their
# min / median / max.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
for round in 1 2 3; do
    OMP_NUM_THREADS=16 timeout 120 .device-bin/bench/bench_versus --only batch --out-dir $OUT/b$round > $OUT/b-$round.log 2>&1
    echo "## batch round $round rc $? ($SECONDS s)"
    grep "batch 2^20\|batch 2^23" $OUT/b$round/versus.csv | grep "harmonia,\|eytzinger\|sorted results" | cut -d, -f1,9-16
done
python3 bench/data/session13/summ.py $OUT/b-1.log $OUT/b-2.log $OUT/b-3.log
grep -h "MISMATCH\|FAIL" $OUT/b-*.log | head -5
rm -f $OUT/b*/versus-summary.csv
echo "# elapsed $SECONDS s"
