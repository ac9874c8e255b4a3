#!/bin/bash
# Session 28, call 4 (H200): a036409 — compute-sanitizer on the completion signals' kernels
# (memcheck and synccheck of test_gpu, synccheck of test_gpu_embedding, quick); then, for the next
# lever, kernel times and DRAM bytes (ncu, caches and clocks as in a run) of the batches still below
# 1.25x: 2^23 and 2^24 queries, 64-bit 2^26 and 32-bit 2^28 keys, every method (bench_versus
# --only batch --runs 1).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
cd .device-bin
for p in "test_gpu memcheck" "test_gpu synccheck" "test_gpu_embedding synccheck"; do
  set -- $p
  HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $2 --error-exitcode 9 tests/$1 > $OUT/logs/$2-$1.log 2>&1
  echo "## $2 $1 rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/$2-$1.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/$2-$1.log | tail -1)"
done
cd ..
OMP_NUM_THREADS=16 timeout 280 ncu --cache-control none --clock-control none --csv \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
  .device-bin/bench/bench_versus --only batch --batches 23,24 --runs 1 --out-dir /tmp/nc > $OUT/logs/ncu.csv 2> $OUT/logs/ncu-err.txt
echo "## ncu rc $? ($SECONDS s) $(wc -l < $OUT/logs/ncu.csv) lines"; tail -2 $OUT/logs/ncu-err.txt
grep -E "^  |=>" $OUT/logs/ncu.csv | grep -E "harmonia |sort\+bsearch.*sorted|=> sorted" | head -20
gzip $OUT/logs/ncu.csv
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
