#!/bin/bash
# Session 12, call 1b: call 7's racecheck of test_gpu_embedding did not end in 280 s with 2 host
# threads (as once in session 10); re-run with 1 thread (run-gpu.sh's new setting) and with 2.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
for threads in 1 2; do
    SECONDS=0
    HARMONIA_GPU_TEST_QUICK=1 HARMONIA_GPU_TEST_THREADS=$threads timeout 200 compute-sanitizer --tool racecheck \
        --error-exitcode 9 .device-bin/tests/test_gpu_embedding > "$OUT/racecheck-embedding-t$threads.log" 2>&1
    rc=$?
    echo "racecheck test_gpu_embedding threads=$threads: exit $rc in $SECONDS s; $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' "$OUT/racecheck-embedding-t$threads.log" | tr '\n' ' ')"
done
