#!/bin/bash
# Session 18, call 3: bench_versus --only batch (its G sweep now from G = 1), twice: is G = 2 (more
# lookups in flight a warp) better than the policy's G = 4 at 2^18 queries with today's kernels?
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
logs=()
for round in 1 2; do
    OMP_NUM_THREADS=16 timeout 90 .device-bin/bench/bench_versus --only batch > $OUT/b-$round.log 2>&1
    echo "## batch round $round rc $? ($SECONDS s)"
    logs+=($OUT/b-$round.log)
done
python3 bench/data/session17/small.py "${logs[@]}"
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
