#!/bin/bash
# Session 9, call 7: pass 2's query indices loaded with the keys (branch s9-pos-prefetch) against
# 64f4d59's bench_phases, in the same call; sorted results with positions.
set -u
for w in "64 26" "32 28"; do
    set -- $w
    for bin in .device-bin/bench/bench_phases .device-variants/bench_phases-pos; do
        echo "## $bin $1-bit 2^$2"
        $bin --bits $1 --keys-log2 $2 --unordered-only --runs 11 2>&1 | grep -v "^# bench\|^step"
    done
done 2>&1 | tee $OUT/phases.txt
