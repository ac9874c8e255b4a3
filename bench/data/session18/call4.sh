#!/bin/bash
# Session 18, call 4: a start table of 2^22 buckets for every plain descent (A/B build "t22":
# -DNTG_START_FINE_MAX_BITS=22u -DNTG_START_FINE_BATCH=0x80000000u) against the defaults ("new"):
# (a) bench_versus --only batch, alternating, two rounds each; (b) --only sizes of t22.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
bin() { [ $1 = new ] && echo .device-bin/bench/bench_versus || echo .device-variants/bench_versus-$1; }
logs=()
for round in 1 2; do
    for which in new t22; do
        OMP_NUM_THREADS=16 timeout 70 $(bin $which) --only batch > $OUT/b-$which-$round.log 2>&1
        echo "## batch $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/b-$which-$round.log)
    done
done
python3 bench/data/session17/small.py "${logs[@]}"
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
OMP_NUM_THREADS=16 timeout 80 $(bin t22) --only sizes > $OUT/sizes-t22.log 2>&1
echo "## sizes t22 rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/sizes-t22.log
grep -h "MISMATCH\|FAIL" $OUT/sizes-t22.log | head -5
echo "# elapsed $SECONDS s"
