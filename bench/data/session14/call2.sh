#!/bin/bash
# Session 14, call 2: (a) small_probe launch — where a small call's time goes (empty kernels with
# 16 B and view-sized parameters, both kernels bare, the library's two calls; rounds); (b)
# sector_sweep — the sorted descent reading its leaf by sectors against reading it whole, every G,
# against the library's call and the 16-bit sort + binary search; (c) tests.list on the new
# binaries; (d) bench_versus --only sizes,batch: old (b45c362's kernels) and new, two rounds each.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 100 .device-variants/small_probe launch > $OUT/launch.txt 2>&1
echo "## small_probe launch rc $? ($SECONDS s)"; grep -v "^#" $OUT/launch.txt | tail -60
OMP_NUM_THREADS=16 timeout 200 .device-variants/sector_sweep > $OUT/sector_sweep.txt 2>&1
echo "## sector_sweep rc $? ($SECONDS s)"; cat $OUT/sector_sweep.txt
BUILD=.device-bin timeout 200 bash bench/run-gpu.sh tests > $OUT/tests.log 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -26 $OUT/tests.log
logs=()
for round in 1 2; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-old
        OMP_NUM_THREADS=16 timeout 70 $B --only sizes,batch --out-dir $OUT/versus-$which-$round > $OUT/versus-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/versus-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
