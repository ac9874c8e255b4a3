#!/bin/bash
# Session 13, call 2: the closed form in three words (base, share, extra_end: the G = 1 and 2
# kernels back to 32 registers), tests.list, then bench_versus --only sizes,batch,ranges with the
# old (945b5a6) and new binaries, alternating, three rounds each; one table at the end.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 220 bash bench/run-gpu.sh tests 2>&1 | tail -25
echo "# tests done ($SECONDS s)"
logs=()
for round in 1 2 3; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-945b5a6
        OMP_NUM_THREADS=16 timeout 130 $B --only sizes,batch,ranges --out-dir $OUT/versus-$which-$round > $OUT/versus-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/versus-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "mismatch\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
