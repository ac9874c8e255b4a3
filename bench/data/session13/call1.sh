#!/bin/bash
# Session 13, call 1: each level's children from its closed form (no first-child reads on the
# device). The new binaries' test programs (tests.list), then bench_versus --only sizes,batch with
# the old (945b5a6) and new binaries, alternating, three rounds each; one table at the end.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 220 bash bench/run-gpu.sh tests 2>&1 | tail -25
echo "# tests done ($SECONDS s)"
logs=()
for round in 1 2 3; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-945b5a6
        OMP_NUM_THREADS=16 timeout 100 $B --only sizes,batch --out-dir $OUT/versus-$which-$round > $OUT/versus-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/versus-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "mismatch\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
