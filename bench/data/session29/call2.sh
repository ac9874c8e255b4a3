#!/bin/bash
# Session 29, call 2 (H200): the value prefetch in every tile staged whole (the sparse kernel too);
# test_gpu, memcheck of test_gpu (quick: the capture step now left out there); new against nopf,
# alternating (batches of 2^23, 2^24, 2^26); ncu sections of the staged search at 2^24 queries.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
cd .device-bin
timeout 300 tests/test_gpu > $OUT/logs/test_gpu.log 2>&1; echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tail -1)"
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu > $OUT/logs/memcheck-test_gpu.log 2>&1
echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/memcheck-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/memcheck-test_gpu.log | tail -1)"
cd ..
blogs=()
for w in new nopf new nopf new nopf; do
  [ $SECONDS -gt 330 ] && break
  B=.device-bin/bench/bench_versus; [ $w = nopf ] && B=.device-variants/bench_versus_nopf
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 23,24,26 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; blogs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${blogs[@]}"
OMP_NUM_THREADS=16 timeout 200 ncu --cache-control none --clock-control none -k regex:search_kernel -c 2 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
  .device-bin/bench/bench_versus --only batch --batches 24 --runs 1 --out-dir /tmp/nc > $OUT/logs/ncu.txt 2> $OUT/logs/ncu-err.txt
echo "## ncu rc $? ($SECONDS s)"; tail -2 $OUT/logs/ncu-err.txt
grep -E "search_kernel|Duration|Throughput|Stall|Achieved Occupancy|Registers|Shared Memory Config|Block Limit|Hit Rate|Grid Size" $OUT/logs/ncu.txt | head -60
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
