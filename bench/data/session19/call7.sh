#!/bin/bash
# Session 19, call 7 (92a8ecc, the descent path in both orders): (a) compute-sanitizer memcheck of
# test_gpu (quick mode); (b) the full bench_versus for the README's table and the plots.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt 2>&1
HARMONIA_GPU_TEST_QUICK=1 timeout 220 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
grep -E "^\[  (PASSED|FAILED)" $OUT/sanitize-memcheck.log
OMP_NUM_THREADS=16 timeout 300 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log
grep -h "MISMATCH\|FAIL" $OUT/versus.log | head -5
echo "# elapsed $SECONDS s"
