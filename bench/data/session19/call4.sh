#!/bin/bash
# Session 19, call 4 (the descent path with the outside queries' keys written, from 2^21 queries
# again): (a) tests.list through run-gpu.sh; (b) the full bench_versus for the README's table and
# the plots; (c) compute-sanitizer memcheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt 2>&1
BUILD=.device-bin timeout 300 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -26 $OUT/run-tests.txt
OMP_NUM_THREADS=16 timeout 260 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log
python3 bench/data/session17/small.py $OUT/versus.log
grep -h "MISMATCH\|FAIL" $OUT/versus.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
echo "# elapsed $SECONDS s"
