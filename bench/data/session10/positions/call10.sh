#!/bin/bash
# Session 10, call 10: the sorted pipeline with the positions written by the passes, pass-2 query
# indices loaded early (the library) against loaded after the grouping (noearly), in one call.
set -u
for w in "64 26" "32 28"; do
    set -- $w
    for bin in .device-variants/bench_phases-lib .device-variants/bench_phases-noearly .device-variants/bench_phases-lib; do
        echo "## $bin $1-bit 2^$2"
        timeout 100 $bin --bits $1 --keys-log2 $2 --unordered-only --runs 9 2>&1 | grep -v "^step\|^# bench"
    done
done 2>&1 | tee $OUT/phases.txt
