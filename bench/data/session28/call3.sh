#!/bin/bash
# Session 28, call 3 (H200): a036409 (new: one fence a block, signals up to 2^16 queries) — the GPU
# tests (gpu, gpu_embedding, gpu_concurrent) at once, memcheck of test_gpu_embedding (quick); the
# small and one-launch batches, new against 334f52d (old) and `wide` (signals for every one-launch
# call), alternating; then bench_versus (all groups) of new.
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
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu_embedding > $OUT/logs/memcheck_emb.log 2>&1; echo "## memcheck embedding rc $? ($SECONDS s)"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/logs/memcheck_emb.log | tail -3
cd ..
logs=()
for r in 1 2 3; do
  for w in new old wide; do
    [ $SECONDS -gt 300 ] && break 2
    B=.device-bin/bench/bench_versus; [ $w = old ] && B=/tmp/old/bench/bench_versus; [ $w = wide ] && B=.device-variants/bench_versus_wide
    OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 10,14,16,18,20 --out-dir /tmp/b-$w$r > $OUT/logs/b-$w$r.log 2>&1
    echo "## batch $w$r rc $? ($SECONDS s)"; logs+=($OUT/logs/b-$w$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
OMP_NUM_THREADS=16 timeout 250 .device-bin/bench/bench_versus --out-dir /tmp/full > $OUT/logs/full.log 2>&1
echo "## bench_versus full rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/logs/full.log
grep -h "MISMATCH\|FAIL" $OUT/logs/b-*.log $OUT/logs/full.log 2>/dev/null | head -5
cp /tmp/full/*.csv $OUT/logs/ 2>/dev/null
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
