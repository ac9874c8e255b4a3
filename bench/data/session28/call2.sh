#!/bin/bash
# Session 28, call 2 (H200): the completion signals (new = .device-bin) — the GPU tests (gpu,
# gpu_embedding with test_completion_signals, gpu_concurrent, gpu_build, the example) at once;
# memcheck of test_gpu_embedding and test_gpu (quick); then bench_versus --only batch on the small
# and one-launch sizes, new against 334f52d (old, .device-variants/old.tar.xz), alternating.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
tar -xJf .device-variants/old.tar.xz -C /tmp
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
cd .device-bin
for t in test_gpu test_gpu_embedding test_gpu_concurrent test_gpu_build; do
  (timeout 300 tests/$t > $OUT/logs/$t.log 2>&1; echo "## $t rc $? ($SECONDS s)") &
done
(timeout 120 examples/olap_column 200000 > $OUT/logs/example.log 2>&1; echo "## example rc $? ($SECONDS s)") &
wait
for t in test_gpu test_gpu_embedding test_gpu_concurrent test_gpu_build; do grep -E "^\[  (PASSED|FAILED)|FAILED  \]|\[  ERROR" $OUT/logs/$t.log | sed "s/^/$t: /" | head -6; done
grep -A3 "completion_signals" $OUT/logs/test_gpu_embedding.log | head -8
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu_embedding > $OUT/logs/memcheck_emb.log 2>&1; echo "## memcheck embedding rc $? ($SECONDS s)"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/logs/memcheck_emb.log | tail -3
HARMONIA_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 tests/test_gpu > $OUT/logs/memcheck.log 2>&1; echo "## memcheck gpu rc $? ($SECONDS s)"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/logs/memcheck.log | tail -3
cd ..
logs=()
for r in 1 2 3; do
  for w in new old; do
    [ $SECONDS -gt 470 ] && break 2
    B=.device-bin/bench/bench_versus; [ $w != new ] && B=/tmp/old/bench/bench_versus
    OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 10,14,16,18,20 --out-dir /tmp/b-$w$r > $OUT/logs/b-$w$r.log 2>&1
    echo "## batch $w$r rc $? ($SECONDS s)"; logs+=($OUT/logs/b-$w$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" $OUT/logs/b-*.log 2>/dev/null | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
