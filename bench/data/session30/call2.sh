#!/bin/bash
# Session 30, call 2 (H200): pass 1's count with 64 bytes of loads a thread (PSA_HIST1_BYTES = 64,
# .device-bin) against one key a thread (`h1old`: -DPSA_HIST1_BYTES=1, psa/psa_partition.cu only),
# alternating over the batches whose plans count pass 1; ncu of hist1_kernel in each; test_gpu and
# memcheck of test_gpu (quick) on the new build.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for w in new h1old new h1old new h1old; do
  [ $SECONDS -gt 150 ] && break
  B=.device-bin/bench/bench_versus; [ $w = h1old ] && B=.device-variants/bench_versus_h1old
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 18,20,22,23,24 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
for w in new h1old; do
  B=.device-bin/bench/bench_versus; [ $w = h1old ] && B=.device-variants/bench_versus_h1old
  OMP_NUM_THREADS=16 timeout 100 ncu --cache-control none --clock-control none --csv -k regex:hist1 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum \
    $B --only batch --batches 23,24 --runs 1 --out-dir /tmp/nc > $OUT/logs/ncu-$w.csv 2> $OUT/logs/ncu-$w-err.txt
  echo "## ncu $w rc $? ($SECONDS s)"
  grep hist1 $OUT/logs/ncu-$w.csv | python3 -c "
import sys,csv
for r in csv.reader(sys.stdin):
    print(r[4][:40], r[-3], r[-1])" | paste - - | awk '{print}' | head -16
done
(cd .device-bin && OMP_NUM_THREADS=16 timeout 200 tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
 echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tail -1)"
 HARMONIA_GPU_TEST_QUICK=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu > $OUT/logs/memcheck-test_gpu.log 2>&1
 echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/memcheck-test_gpu.log | tail -1)")
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
