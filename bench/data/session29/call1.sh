#!/bin/bash
# Session 29, call 1 (H200): the tests session 28 left unrun (test_gpu, test_gpu_embedding,
# test_gpu_concurrent at once; memcheck of test_gpu, quick) on the new code (.device-bin: value
# lines prefetched by the staged search), then new against nopf (-DNTG_PS_PREFETCH_VALUES=0),
# alternating: batches of 2^23, 2^24, 2^26 queries, then the tree sizes (2^27 queries).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
cd .device-bin
for t in test_gpu test_gpu_embedding test_gpu_concurrent; do
  (timeout 300 tests/$t > $OUT/logs/$t.log 2>&1; echo "## $t rc $? ($SECONDS s)") &
done
wait
for t in test_gpu test_gpu_embedding test_gpu_concurrent; do grep -E "^\[  (PASSED|FAILED)|FAILED  \]|\[  ERROR" $OUT/logs/$t.log | sed "s/^/$t: /" | head -6; done
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu > $OUT/logs/memcheck-test_gpu.log 2>&1
echo "## memcheck test_gpu rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/memcheck-test_gpu.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/memcheck-test_gpu.log | tail -1)"
cd ..
blogs=(); slogs=()
for w in new nopf new nopf; do
  [ $SECONDS -gt 420 ] && break
  B=.device-bin/bench/bench_versus; [ $w = nopf ] && B=.device-variants/bench_versus_nopf
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 23,24,26 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; blogs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${blogs[@]}"
for w in new nopf; do
  [ $SECONDS -gt 470 ] && break
  B=.device-bin/bench/bench_versus; [ $w = nopf ] && B=.device-variants/bench_versus_nopf
  OMP_NUM_THREADS=16 timeout 70 $B --only sizes --out-dir /tmp/s-$w > $OUT/logs/s-$w-$SECONDS.log 2>&1
  echo "## sizes $w rc $? ($SECONDS s)"; slogs+=($(ls -t $OUT/logs/s-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${slogs[@]}"
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
