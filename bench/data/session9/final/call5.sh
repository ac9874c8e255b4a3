#!/bin/bash
# Session 9, device call 5 (code of 64f4d59): test_gpu (all of it), memcheck and racecheck of the
# quick test_gpu, bench_phases on the library's new plans, bench_versus sizes with its CSVs.
set -u
B=.device-bin
( cd $B && timeout 300 ./tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' $OUT/test_gpu.log) OK" ) | tee $OUT/tests.txt
# the sanitizers' logs come back only when they fail (few files come back)
for tool in memcheck racecheck; do
    HARMONIA_GPU_TEST_QUICK=1 timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/test_gpu > /tmp/$tool.log 2>&1
    rc=$?
    echo "$tool rc $rc $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' /tmp/$tool.log)" | tee -a $OUT/tests.txt
    [ $rc -ne 0 ] && tail -60 /tmp/$tool.log > $OUT/$tool.log
done
for w in "64 26" "32 28"; do
    set -- $w
    $B/bench/bench_phases --bits $1 --keys-log2 $2 --unordered-only --runs 9 2>&1 | grep -v "^step"
done 2>&1 | tee $OUT/phases.txt
mkdir -p $OUT/versus
OMP_NUM_THREADS=16 timeout 200 $B/bench/bench_versus --only sizes --out-dir $OUT/versus > $OUT/versus-sizes.log 2>&1
echo "bench_versus rc $?"
grep -E "=>" $OUT/versus-sizes.log | tail -20
