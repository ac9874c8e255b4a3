#!/bin/bash
# Session 17, call 6: test_gpu_build after its GPU-memory hog was made robust (the pool trimmed,
# as many allocations as it takes), twice; then tests.list again.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
for i in 1 2; do timeout 120 .device-bin/tests/test_gpu_build > $OUT/gpu_build-$i.log 2>&1; echo "## test_gpu_build rc $? ($SECONDS s)"; grep -E "PASSED|FAILED|Failure" $OUT/gpu_build-$i.log | head -4; done
BUILD=.device-bin timeout 200 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; grep -c " OK " $OUT/run-tests.txt; grep -v " OK " $OUT/run-tests.txt | tail -3
echo "# elapsed $SECONDS s"
