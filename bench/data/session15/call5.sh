#!/bin/bash
# Session 15, calls 5, 6 and 7 (the same script; each call carried its own commit's binaries): the
# dense search's chunk rule — call 5 staged a chunk from one query a leaf, call 6 from two with the
# descending chunks together, call 7 only for tiles with a chunk to stage. (a) test_gpu
# in full; (b) bench_versus --only queries, old (c08f339) and new, two alternating rounds; (c) the
# full bench_versus of the new binary (the closing table); (d) compute-sanitizer memcheck + racecheck
# of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt 2>&1
timeout 120 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED" $OUT/test_gpu.log | head -5
logs=()
for round in 1 2; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-old
        OMP_NUM_THREADS=16 timeout 60 $B --only queries --out-dir $OUT/q-$which-$round > $OUT/q-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/q-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
rm -rf $OUT/q-*/
OMP_NUM_THREADS=16 timeout 120 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log > $OUT/table.txt; grep -c "x$" $OUT/table.txt
grep -h "MISMATCH\|FAIL" $OUT/versus.log | head -5
for tool in memcheck racecheck; do
    HARMONIA_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu \
        > $OUT/sanitize-test_gpu-$tool.log 2>&1
    echo "## compute-sanitizer $tool test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitize-test_gpu-$tool.log | tail -1)"
done
echo "# elapsed $SECONDS s"
