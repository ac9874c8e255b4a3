#!/bin/bash
# Session 9, call 8 (the review's code): test_gpu, memcheck of the quick test_gpu, bench_phases in
# both modes (the refactored checks: restored results and unordered slots against the CPU engine,
# unordered slots against the restored ones).
set -u
B=.device-bin
( cd $B && timeout 300 ./tests/test_gpu > /tmp/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' /tmp/test_gpu.log) OK" ) | tee $OUT/review.txt
HARMONIA_GPU_TEST_QUICK=1 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu > /tmp/mc.log 2>&1; echo "memcheck rc $? $(grep -h 'ERROR SUMMARY' /tmp/mc.log)" | tee -a $OUT/review.txt
$B/bench/bench_phases --bits 64 --keys-log2 26 --unordered-only --runs 5 2>&1 | tee -a $OUT/review.txt
$B/bench/bench_phases --bits 32 --keys-log2 24 --queries-log2 24 --runs 3 2>&1 | tee -a $OUT/review.txt
