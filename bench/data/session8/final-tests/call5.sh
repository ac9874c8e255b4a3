#!/usr/bin/env bash
# Session 8, device call 5: every GPU test program, and compute-sanitizer on the kernels changed
# (memcheck and racecheck of test_gpu, memcheck and synccheck of test_gpu_embedding; racecheck of
# test_gpu_embedding is left out: it hung in sessions 5-7).
set -u
bash bench/run-gpu.sh tests 2>&1 | tail -30
for t in "test_gpu memcheck" "test_gpu racecheck" "test_gpu_embedding memcheck" "test_gpu_embedding synccheck"; do
  set -- $t
  HARMONIA_GPU_TEST_QUICK=1 HARMONIA_GPU_TEST_THREADS=4 timeout 200 compute-sanitizer --tool $2 --error-exitcode 9 \
      $BUILD/tests/$1 > $OUT/sanitize-$1-$2.log 2>&1
  echo "compute-sanitizer $2 $1: exit $?; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitize-$1-$2.log | tail -1)"
done
