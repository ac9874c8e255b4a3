#!/bin/bash
# Session 20, call 4 (H100; the final code: 32-bit keys back to one query a group): (a) test_gpu;
# (b) the full bench_versus for the README's table and the plots.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt
timeout 200 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/test_gpu.log | tr '\n' ' ')"
OMP_NUM_THREADS=16 timeout 400 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log
grep -h "MISMATCH\|FAIL" $OUT/versus.log | head -5
echo "# elapsed $SECONDS s"
