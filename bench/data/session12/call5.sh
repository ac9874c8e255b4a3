#!/bin/bash
# Session 12, call 5: call 4 saw the 64-bit 2^22-query sorted row slower with f61bf35 (0.516 / 0.489
# ms against 0.478 / 0.475): bench_versus --only batch, old (c8d681d) and new alternating, 3 rounds.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
mkdir -p old && tar -xJf .device-variants/device-bin-c8d681d.tar.xz -C old
SECONDS=0
.device-variants/sort_sweep costs 2>&1 | tee $OUT/costs.txt
for round in 1 2 3; do
    for which in new old; do
        B=.device-bin; [ $which = old ] && B=old/.device-bin
        OMP_NUM_THREADS=16 timeout 100 $B/bench/bench_versus --only batch --out-dir $OUT/b-$which-$round > $OUT/batch-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        awk '/^## batch/ {name = $3 " " $4 " " $5} /harmonia +defaults/ {line[name] = line[name] " " $6 " " $7} END {for (n in line) print n ":" line[n]}' $OUT/batch-$which-$round.log | sort
    done
done
rm -rf $OUT/b-*
