#!/bin/bash
# Session 10, call 11 (the library with the positions written by the passes, early loads removed):
# test_gpu in full, memcheck and racecheck of the quick test_gpu, bench_versus of every workload
# with the CSVs.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin
( cd $B && timeout 300 ./tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' $OUT/test_gpu.log) OK" ) | tee $OUT/tests.txt
for tool in memcheck racecheck; do
    HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/test_gpu > /tmp/$tool.log 2>&1
    echo "$tool rc $? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' /tmp/$tool.log)" | tee -a $OUT/tests.txt
done
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 240 $B/bench/bench_versus --only sizes,batch,hits,queries --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "bench_versus rc $?"
grep -E "^## |=>" $OUT/versus.log | sed -E 's/; hash table.*//' | grep "=>" | tail -60
