#!/bin/bash
# Session 28, call 1 (first call on the H200): 334f52d's binaries — test_gpu (incl. session 27's
# reordered test_bucket_tables), test_psa_bits, memcheck of test_gpu (quick); the sync probe (what a
# small synchronous call's completion costs); bench_versus (all groups) and a second process of the
# small batches.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; nproc >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
cd .device-bin
timeout 240 tests/test_gpu > $OUT/logs/test_gpu.log 2>&1; echo "## test_gpu rc $? ($SECONDS s)"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|\[  ERROR" $OUT/logs/test_gpu.log | head -8
tests/test_psa_bits > $OUT/logs/test_psa_bits.log 2>&1; echo "## test_psa_bits rc $? ($SECONDS s)"
HARMONIA_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu > $OUT/logs/memcheck.log 2>&1; echo "## memcheck rc $? ($SECONDS s)"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/logs/memcheck.log | tail -3
cd ..
for a in "4 6" "16 6" "4 10"; do .device-variants/sync_probe $a 301; done 2>&1 | tee $OUT/logs/sync_probe.log
echo "## sync probe ($SECONDS s)"
OMP_NUM_THREADS=16 timeout 230 .device-bin/bench/bench_versus --out-dir /tmp/full > $OUT/logs/full.log 2>&1
echo "## bench_versus full rc $? ($SECONDS s)"
OMP_NUM_THREADS=16 timeout 60 .device-bin/bench/bench_versus --only batch --batches 10,14,16,18 --out-dir /tmp/small > $OUT/logs/small.log 2>&1
echo "## small batches rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/logs/full.log $OUT/logs/small.log
grep -h "MISMATCH\|FAIL" $OUT/logs/full.log $OUT/logs/small.log 2>/dev/null | head -5
cp /tmp/full/*.csv $OUT/logs/ 2>/dev/null
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
