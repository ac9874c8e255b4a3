#!/bin/bash
# Session 13's A/B calls: tests.list on the new binaries, then bench_versus --only GROUPS with the
# old binary (.device-variants/bench_versus-OLD) and the new one, alternating, three rounds each;
# one table at the end (summ.py). Usage: bash bench/data/session13/ab.sh OLD GROUPS TIMEOUT_S
set -u
old=$1 groups=$2 limit=$3
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 220 bash bench/run-gpu.sh tests 2>&1 | tail -25
echo "# tests done ($SECONDS s)"
logs=()
for round in 1 2 3; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-$old
        OMP_NUM_THREADS=16 timeout $limit $B --only $groups --out-dir $OUT/versus-$which-$round > $OUT/versus-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/versus-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "mismatch\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
