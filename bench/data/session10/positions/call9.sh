#!/bin/bash
# Session 10, call 9: unordered windows' positions written by the partition's passes (the search
# writes values and found flags only). test_gpu in full, memcheck of the quick test_gpu,
# bench_phases (both pipelines) on both priority trees, bench_versus sizes with its CSVs.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin
( cd $B && timeout 300 ./tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' $OUT/test_gpu.log) OK" ) | tee $OUT/tests.txt
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu > /tmp/mc.log 2>&1
echo "memcheck rc $? $(grep -h 'ERROR SUMMARY' /tmp/mc.log)" | tee -a $OUT/tests.txt
for w in "64 26" "32 28"; do
    set -- $w
    timeout 100 $B/bench/bench_phases --bits $1 --keys-log2 $2 --runs 7 2>&1 | grep -v "^step"
done 2>&1 | tee $OUT/phases.txt | grep -E "^# bench|total|sorted results|of which|and the search" | grep -v "9 bits" | head -20
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 200 $B/bench/bench_versus --only sizes --out-dir $OUT/versus > $OUT/versus-sizes.log 2>&1
echo "bench_versus rc $?"
grep -E "=>" $OUT/versus-sizes.log | sed -E 's/; hash table.*//' | tail -20
