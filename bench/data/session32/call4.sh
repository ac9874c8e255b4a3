#!/bin/bash
# Session 32, call 4 (H200): the session's final library code (e41018d: session 31's library; the
# session's two changes refuted and reverted): the whole test list, memcheck and synccheck of
# test_gpu (quick), the Python package's tests on the GPU (the staged wheel), then the full
# bench_versus with its CSVs for the plots. Racecheck: call 5.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
BUILD=.device-bin OUT=$OUT/logs timeout 280 bash bench/run-gpu.sh tests > $OUT/logs/tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -30 $OUT/logs/tests.txt | grep -vE "^\s*$" | tail -26
for tool in memcheck synccheck; do
  HARMONIA_GPU_TEST_QUICK=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/$tool-test_gpu.log 2>&1
  echo "## $tool test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/$tool-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/$tool-test_gpu.log | tail -1)"
done
mkdir -p $OUT/logs/py
OUT=$OUT/logs/py timeout 70 bash python/run-gpu-tests.sh wheel tests > $OUT/logs/py.txt 2>&1
echo "## python rc $? ($SECONDS s)"; tail -4 $OUT/logs/py.txt
OMP_NUM_THREADS=16 timeout $((590 - SECONDS)) .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/logs/versus.log 2>&1
echo "## versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/logs/versus.log
python3 bench/data/session31/pos.py $OUT/logs/versus.log
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
