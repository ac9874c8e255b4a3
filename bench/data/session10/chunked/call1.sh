#!/bin/bash
# Session 10, device call 1: pass 1 into chunks (no count for two-pass plans of >= 2^23 queries)
# with pass 2's query indices loaded with the keys. bench_phases (both pipelines) of the new code
# against 64f4d59's binary (.device-old9/bench_phases-base) in the same call, then test_gpu in full.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin
for w in "64 26" "32 28"; do
    set -- $w
    for bin in .device-old9/bench_phases-base $B/bench/bench_phases; do
        echo "## $bin $1-bit 2^$2"
        timeout 100 $bin --bits $1 --keys-log2 $2 --runs 7 2>&1 | grep -v "^step"
    done
done 2>&1 | tee $OUT/phases.txt
( cd $B && timeout 300 ./tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' $OUT/test_gpu.log) OK" ) | tee $OUT/tests.txt
