#!/bin/bash
# Session 13, call 4: the range count's children from the closed form alone (no cut branch), against
# call 2's 5 % slower count of length 8: bench_versus --only ranges with 945b5a6 (before the session),
# 0725e5b (the closed form) and the new binaries, alternating, two rounds each; then compute-sanitizer
# on the new binaries (run-gpu.sh sanitize: memcheck and racecheck of test_gpu, memcheck, racecheck
# and synccheck of test_gpu_embedding).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
logs=()
for round in 1 2; do
    for which in 945b5a6 0725e5b new; do
        B=.device-bin/bench/bench_versus; [ $which != new ] && B=.device-variants/bench_versus-$which
        OMP_NUM_THREADS=16 timeout 100 $B --only ranges --out-dir $OUT/ranges-$which-$round > $OUT/ranges-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/ranges-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
BUILD=.device-bin timeout 330 bash bench/run-gpu.sh sanitize 2>&1 | tail -8
echo "# elapsed $SECONDS s"
