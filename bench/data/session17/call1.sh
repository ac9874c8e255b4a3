#!/bin/bash
# Session 17, call 1 (bench/NOTES.md, "Session 17"): (a) bench_versus --only batch of the base
# (16-bit start table), s18 and s20 in alternating rounds, two each: the small batches timed in
# rounds, the G sweep beside them; (b) bench_versus --only sizes of each (large batches, every tree
# size: what a larger table costs in L2).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt 2>&1
bin() { [ $1 = base ] && echo .device-bin/bench/bench_versus || echo .device-variants/bench_versus-$1; }
logs=()
for round in 1 2; do
    for which in base s18 s20; do
        OMP_NUM_THREADS=16 timeout 70 $(bin $which) --only batch > $OUT/b-$which-$round.log 2>&1
        echo "## batch $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/b-$which-$round.log)
    done
done
python3 bench/data/session17/small.py "${logs[@]}"
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
slogs=()
for which in base s20 s18; do
    OMP_NUM_THREADS=16 timeout 80 $(bin $which) --only sizes > $OUT/sizes-$which.log 2>&1
    echo "## sizes $which rc $? ($SECONDS s)"
    slogs+=($OUT/sizes-$which.log)
done
python3 bench/data/session13/summ.py "${slogs[@]}"
grep -h "MISMATCH\|FAIL" "${slogs[@]}" | head -5
echo "# elapsed $SECONDS s"
