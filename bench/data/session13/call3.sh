#!/bin/bash
# Session 13, call 3: a PSA call's windows on the caller's stream (no fork to lane 0 and join back),
# tests.list, then bench_versus --only sizes,batch with the previous (0725e5b, the closed form) and
# new binaries, alternating, three rounds each; one table at the end.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 220 bash bench/run-gpu.sh tests 2>&1 | tail -25
echo "# tests done ($SECONDS s)"
logs=()
for round in 1 2 3; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-0725e5b
        OMP_NUM_THREADS=16 timeout 130 $B --only sizes,batch --out-dir $OUT/versus-$which-$round > $OUT/versus-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/versus-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "mismatch\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
