#!/bin/bash
# Session 16, call 1: the start table (bench/NOTES.md, "The start table"). (a) test_gpu in full (the
# table checked entry by entry, every query kind through it); (b) bench_versus --only batch,ranges,
# old (47726d0) and new, two alternating rounds; (c) bench_versus --only sizes,hits,queries,keys of
# the new binary; (d) compute-sanitizer memcheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt 2>&1
timeout 150 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED|ERROR|start table" $OUT/test_gpu.log | head -8
logs=()
for round in 1 2; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-old
        OMP_NUM_THREADS=16 timeout 70 $B --only batch,ranges > $OUT/b-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/b-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
OMP_NUM_THREADS=16 timeout 100 .device-bin/bench/bench_versus --only sizes,hits,queries,keys > $OUT/rest-new.log 2>&1
echo "## rest new rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/rest-new.log
grep -h "MISMATCH\|FAIL" $OUT/rest-new.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
echo "# elapsed $SECONDS s"
