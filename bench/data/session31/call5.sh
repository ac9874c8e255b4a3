#!/bin/bash
# Session 31, call 5 (H200): the session's final library code (32-bit positions, the descent path's
# 7 bits for 64-bit keys): the whole test list, memcheck of test_gpu (quick), then the full
# bench_versus with its CSVs for the plots.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
BUILD=.device-bin OUT=$OUT/logs timeout 300 bash bench/run-gpu.sh tests > $OUT/logs/tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -30 $OUT/logs/tests.txt | grep -vE "^\s*$" | tail -25
HARMONIA_GPU_TEST_QUICK=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/memcheck-test_gpu.log 2>&1
echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/memcheck-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/memcheck-test_gpu.log | tail -1)"
OMP_NUM_THREADS=16 timeout $((545 - SECONDS)) .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/logs/versus.log 2>&1
echo "## versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/logs/versus.log
python3 bench/data/session31/pos.py $OUT/logs/versus.log
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
