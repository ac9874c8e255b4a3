#!/bin/bash
# Session 17, call 5 (the final code's binaries): (a) tests.list through run-gpu.sh; (b) the full
# bench_versus (the closing table; CSVs for the plots; small batches in warm rounds, the G sweep up
# to 2^18 queries); (c) compute-sanitizer memcheck and racecheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt 2>&1
BUILD=.device-bin timeout 200 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; grep -c " OK " $OUT/run-tests.txt; grep -v " OK " $OUT/run-tests.txt | tail -3
OMP_NUM_THREADS=16 timeout 130 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log > $OUT/table.txt; cat $OUT/table.txt
python3 bench/data/session17/small.py $OUT/versus.log
grep -h "MISMATCH\|FAIL" $OUT/versus.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
HARMONIA_GPU_TEST_QUICK=1 timeout 140 compute-sanitizer --tool racecheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-racecheck.log 2>&1
echo "## racecheck test_gpu: exit $? ($SECONDS s); $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/sanitize-racecheck.log | tail -1)"
echo "# elapsed $SECONDS s"
