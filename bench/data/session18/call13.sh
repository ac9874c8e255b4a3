#!/bin/bash
# Session 18, call 13: the range group timed in rounds too (time_gpu_rounds, shared by the batches'
# time_rounds): bench_versus --only ranges,batch, twice.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
for round in 1 2; do
    OMP_NUM_THREADS=16 timeout 200 .device-bin/bench/bench_versus --only ranges,batch > $OUT/rb-$round.log 2>&1
    echo "## ranges,batch round $round rc $? ($SECONDS s)"
done
python3 bench/data/session13/summ.py $OUT/rb-1.log $OUT/rb-2.log
grep -h "MISMATCH\|FAIL" $OUT/rb-*.log | head -5
echo "# elapsed $SECONDS s"
