#!/bin/bash
# Session 18, call 7 (measurement only): (a) sort_sweep dense2: the sort path against the partition
# at 2.5 and 3 queries a leaf, both widths; (b) bench_versus --only batch with the batch sizes now
# 2^10, 2^14, 2^16, 2^18, 2^20, 2^22, 2^23, 2^24, 2^26, 2^30 (call 6 found the 64-bit 2^23 sorted
# row, which the suite did not have, below the baseline).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 300 .device-variants/sort_sweep dense2 > $OUT/sort_sweep18-dense2.txt 2>&1
echo "## sort_sweep dense2 rc $? ($SECONDS s)"; grep -E "keys|library|G=2|G=4|baseline" $OUT/sort_sweep18-dense2.txt
OMP_NUM_THREADS=16 timeout 200 .device-bin/bench/bench_versus --only batch > $OUT/b-1.log 2>&1
echo "## batch rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/b-1.log
grep -h "MISMATCH\|FAIL" $OUT/b-1.log | head -5
echo "# elapsed $SECONDS s"
