#!/bin/bash
# Session 10, device call 2: bench_phases (both pipelines) of four builds of psa_partition.cu in one
# call: head (main before the change), nochunk (pass-2 positions loaded with the keys, counted pass 1),
# the library (chunked pass 1, pass-2 tiles in bin order), ahead (chunks published one ahead).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
for w in "64 26" "32 28"; do
    set -- $w
    for bin in .device-variants/bench_phases-head .device-variants/bench_phases-nochunk .device-bin/bench/bench_phases .device-variants/bench_phases-ahead; do
        echo "## $bin $1-bit 2^$2"
        timeout 100 $bin --bits $1 --keys-log2 $2 --runs 7 2>&1 | grep -v "^step"
    done
done 2>&1 | tee $OUT/phases.txt
