#!/bin/bash
# Session 12, final call A: every test program of tests.list (run-gpu.sh tests) and bench_versus of
# every group with the session's final library; the summary lines and the ranges.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 300 bash bench/run-gpu.sh tests 2>&1 | tail -26
echo "# tests done after $SECONDS s"
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 250 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "bench_versus rc $? after $SECONDS s"
grep -E "=>" $OUT/versus.log | sed -E 's/; hash table.*//; s/strongest ordered baseline/base/' | cut -c1-150 | tail -80
grep -E "count   len|collect len" $OUT/versus.log | sed -E 's/ +/ /g'
echo "verified $(grep -c verified $OUT/versus.log), MISMATCH $(grep -c MISMATCH $OUT/versus.log)"
