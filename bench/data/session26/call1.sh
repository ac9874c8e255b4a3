#!/bin/bash
# Session 26, call 1 (H100): the session's start — a sanity row (short timeout), test_gpu (its new
# 10-bit plan case, 67053dc, not yet run on a GPU), memcheck of test_gpu (quick); what the driver
# says about pageable memory access and what a classification costs (attr-probe); the small batches
# in two runs (bench_versus --only batch --batches 10,14,16).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; uname -r >> $OUT/device.txt; cat $OUT/device.txt
nvidia-smi -q | grep -i -E "addressing|MIG M|Persistence" | head -5
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 40 .device-bin/bench/bench_versus --only batch --batches 24 --out-dir /tmp/v0 > $OUT/logs/sanity.log 2>&1
rc=$?; echo "## sanity rc $rc ($SECONDS s)"; grep -c verified $OUT/logs/sanity.log; grep -c MISMATCH $OUT/logs/sanity.log
[ $rc = 0 ] || { tar -czf $OUT/logs.tar.gz -C $OUT logs; exit 1; }
bench/data/session26/attr-probe/probe 2>&1 | tee $OUT/logs/attr-probe.txt
timeout 150 .device-bin/tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tr '\n' ' ')"
grep -E "FAILED|ERROR|fail" $OUT/logs/test_gpu.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/logs/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/logs/sanitize-memcheck.log | tail -1)"
logs=()
for r in 1 2; do
  OMP_NUM_THREADS=16 timeout 60 .device-bin/bench/bench_versus --only batch --batches 10,14,16 --out-dir /tmp/v-$r > $OUT/logs/v-$r.log 2>&1
  echo "## versus $r rc $? ($SECONDS s)"; logs+=($OUT/logs/v-$r.log)
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
