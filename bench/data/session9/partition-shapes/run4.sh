#!/bin/bash
# Session 9, fourth call: bucket bits swept on both pipelines (query order with the restore, sorted
# results with positions), 64-bit 2^26 and 32-bit 2^28 keys, 2^27 queries; the 8192-item pass tile
# (PSA_ITEMS=16) beside the library's 4096.
set -u
V=.device-variants
for v in base i16; do
    for w in "64 26 15,16" "32 28 16,17,18"; do
        set -- $w
        [ $v = i16 ] && [ $1 = 64 ] && continue
        echo "## $v $1-bit 2^$2"
        $V/bench_phases-$v --bits $1 --keys-log2 $2 --runs 7 --psa-bits $3 2>&1 | grep -v "^step"
    done
done 2>&1 | tee $OUT/bits-both.txt
