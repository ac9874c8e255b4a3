#!/bin/bash
# Session 9, second call: the partition passes with resident blocks and the next tile arriving by
# cp.async (psa_partition.cu), against the old kernel (.device-old9/bench_phases-base) in the same
# call; test_gpu and compute-sanitizer on the new kernel; bucket bits swept.
set -u
B=.device-bin
echo "## tests" | tee $OUT/tests.txt
( cd $B && ./tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $?" ) | tee -a $OUT/tests.txt
HARMONIA_GPU_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu > $OUT/memcheck.log 2>&1; echo "memcheck rc $? $(grep -h 'ERROR SUMMARY' $OUT/memcheck.log)" | tee -a $OUT/tests.txt
HARMONIA_GPU_TEST_QUICK=1 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu > $OUT/racecheck.log 2>&1; echo "racecheck rc $? $(grep -h 'RACECHECK SUMMARY' $OUT/racecheck.log)" | tee -a $OUT/tests.txt
HARMONIA_GPU_TEST_QUICK=1 compute-sanitizer --tool synccheck --error-exitcode 9 $B/tests/test_gpu > $OUT/synccheck.log 2>&1; echo "synccheck rc $? $(grep -h 'ERROR SUMMARY' $OUT/synccheck.log)" | tee -a $OUT/tests.txt
for w in "64 26 16,18" "32 28 17,18"; do
    set -- $w
    for bin in .device-old9/bench_phases-base $B/bench/bench_phases; do
        echo "## $bin $1-bit 2^$2"
        $bin --bits $1 --keys-log2 $2 --unordered-only --runs 9 --psa-bits $3 2>&1 | grep -v "^# bench\|^step"
    done
done 2>&1 | tee $OUT/phases.txt
