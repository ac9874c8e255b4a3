#!/bin/bash
# Session 28, call 6 (H200): the completion signals after the review (new = .device-bin) — test_gpu
# (with test_completion_signals_taken), test_gpu_embedding (20 threads), test_gpu_concurrent (its
# synchronous device-array calls of 3000 queries during updates are signalled) at once; memcheck
# and synccheck of test_gpu_embedding (quick, 4 threads); the small batches new against old.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
tar -xJf .device-variants/old.tar.xz -C /tmp
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
grep -A2 "RUN.*completion_signals" $OUT/logs/test_gpu.log $OUT/logs/test_gpu_embedding.log | head -8
for tool in memcheck synccheck; do
  HARMONIA_GPU_TEST_QUICK=1 HARMONIA_GPU_TEST_THREADS=4 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 tests/test_gpu_embedding > $OUT/logs/$tool-emb.log 2>&1
  echo "## $tool embedding rc $? ($SECONDS s) $(grep -E 'ERROR SUMMARY' $OUT/logs/$tool-emb.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/$tool-emb.log | tail -1)"
done
cd ..
logs=()
for w in new old new old; do
  [ $SECONDS -gt 420 ] && break
  B=.device-bin/bench/bench_versus; [ $w = old ] && B=/tmp/old/bench/bench_versus
  OMP_NUM_THREADS=16 timeout 40 $B --only batch --batches 10,14,16 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
