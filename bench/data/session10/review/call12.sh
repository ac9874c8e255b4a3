#!/bin/bash
# Session 10, call 12 (the review: unordered partitions always write the caller's positions, the
# search takes an `unordered` flag): test_gpu in full, memcheck of the quick test_gpu, bench_phases
# of both priority trees (both pipelines, results checked against the CPU engine).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin
( cd $B && timeout 300 ./tests/test_gpu > /tmp/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' /tmp/test_gpu.log) OK" ) | tee $OUT/review.txt
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu > /tmp/mc.log 2>&1
echo "memcheck rc $? $(grep -h 'ERROR SUMMARY' /tmp/mc.log)" | tee -a $OUT/review.txt
for w in "64 26" "32 28"; do
    set -- $w
    timeout 100 $B/bench/bench_phases --bits $1 --keys-log2 $2 --runs 7 2>&1 | grep -v "^step"
done 2>&1 | tee -a $OUT/review.txt | grep -E "^# bench|total|sorted results|of which|and the search|every" | grep -v "9 bits"
