#!/bin/bash
# Session 19, call 2 (measurement only): api_cost (an async call's host cost, piece by piece);
# sort_sweep part-small (the partition + descent at 2^20 and 2^21 queries, library of the working
# tree: the descent path); bench_versus --only batch, HEAD's binary (old, the radix sort) and the
# working tree's (new, the descent path), two alternating rounds.
set -u
source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 60 .device-variants/api_cost > $OUT/api_cost.txt 2>&1
echo "## api_cost rc $? ($SECONDS s)"; cat $OUT/api_cost.txt
OMP_NUM_THREADS=16 timeout 200 .device-variants/sort_sweep part-small > $OUT/part_small.txt 2>&1
echo "## sort_sweep part-small rc $? ($SECONDS s)"; cat $OUT/part_small.txt
for r in 1 2; do
  for v in old new; do
    OMP_NUM_THREADS=16 timeout 150 .device-variants/bench_versus_$v --only batch --out-dir /tmp/v-$v-$r > $OUT/batch-$v-$r.log 2>&1
    echo "## bench_versus $v round $r rc $? ($SECONDS s)"
  done
done
grep -h "=>" $OUT/batch-old-1.log | head -0
python3 bench/data/session13/summ.py $OUT/batch-old-1.log $OUT/batch-new-1.log $OUT/batch-old-2.log $OUT/batch-new-2.log 2>&1 | head -80
echo "# elapsed $SECONDS s"
