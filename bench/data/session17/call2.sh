#!/bin/bash
# Session 17, call 2: two start tables (the coarse 2^16 for large unsorted batches, the fine 2^20 for
# sorted descents and windows below 2^16 queries; ntg_policy.h). (a) test_gpu in full (both tables
# checked entry by entry; the allocator refusing the fine, then both); (b) bench_versus --only batch
# of the base (one table, 6746b10: the same bench) and the new, alternating, two
# rounds each (small batches in warm rounds); (c) bench_versus --only sizes of the new; (d)
# compute-sanitizer memcheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt 2>&1
timeout 150 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED|ERROR|start table|Failure" $OUT/test_gpu.log | head -8
bin() { [ $1 = new ] && echo .device-bin/bench/bench_versus || echo .device-variants/bench_versus-$1; }
logs=()
for round in 1 2; do
    for which in base new; do
        OMP_NUM_THREADS=16 timeout 70 $(bin $which) --only batch > $OUT/b-$which-$round.log 2>&1
        echo "## batch $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/b-$which-$round.log)
    done
done
python3 bench/data/session17/small.py "${logs[@]}"
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
OMP_NUM_THREADS=16 timeout 80 $(bin new) --only sizes > $OUT/sizes-new.log 2>&1
echo "## sizes new rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/sizes-new.log
grep -h "MISMATCH\|FAIL" $OUT/sizes-new.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
echo "# elapsed $SECONDS s"
