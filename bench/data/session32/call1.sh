#!/bin/bash
# Session 32, call 1 (H200): ncu's speed of light, memory workload, warp states, occupancy and launch
# statistics of (A) pass 1's count, the pass and the descent at 64-bit 2^26 keys, 2^23 queries, and
# (B) the descent kernels and the baseline's binary search at 32-bit 2^28 keys, 2^24 queries — what
# bounds the two sorted rows below 1.25x; then test_gpu (session 31's last test edits had not run on
# a GPU) and its memcheck (quick).
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
OMP_NUM_THREADS=16 timeout 170 ncu --cache-control none --clock-control none $S \
  -k regex:"hist1|pass_kernel|lookup_multi|lookup_kernel" -c 8 \
  .device-bin/bench/bench_versus --key-bits 64 --only batch --batches 23 --runs 1 --out-dir /tmp/nA > $OUT/logs/ncuA.txt 2> $OUT/logs/ncuA-err.txt
echo "## ncu A rc $? ($SECONDS s)"
OMP_NUM_THREADS=16 timeout 170 ncu --cache-control none --clock-control none $S \
  -k regex:"lookup_multi|lookup_kernel|bsearch" -c 10 \
  .device-bin/bench/bench_versus --key-bits 32 --only batch --batches 24 --runs 1 --out-dir /tmp/nB > $OUT/logs/ncuB.txt 2> $OUT/logs/ncuB-err.txt
echo "## ncu B rc $? ($SECONDS s)"
for f in ncuA ncuB; do
  echo "### $f"
  grep -E "^  [a-zA-Z_:<>]+.*\(|Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Warp Cycles Per Issued|Issued Warp|Grid Size|Eligible Warps" $OUT/logs/$f.txt | cut -c1-150 | head -150
done
timeout 150 .device-bin/tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tr '\n' ' ')"
HARMONIA_GPU_TEST_QUICK=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/logs/memcheck-test_gpu.log 2>&1
echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/memcheck-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/memcheck-test_gpu.log | tail -1)"
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
