#!/bin/bash
# Session 11, call 3: api_gap against the library before (api_gap-old, 1732d14) and after (3aa-,
# no cudaMemGetInfo when the lane's scratch serves the window), alternating; then bench_versus's
# batch sweep with the new library (both widths, both orders, every result verified).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin V=.device-variants
SECONDS=0
for r in 1 2; do
    for b in api_gap-old api_gap; do echo "## $b"; timeout 100 $V/$b 9 26; done
done 2>&1 | tee $OUT/api_gap.txt
echo "# elapsed $SECONDS s"
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 300 $B/bench/bench_versus --only batch --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "bench_versus rc $?"
grep "=>" $OUT/versus.log | sed -E 's/; hash table.*//' | tail -40
grep -c verified $OUT/versus.log; grep -c MISMATCH $OUT/versus.log
echo "# elapsed $SECONDS s"
