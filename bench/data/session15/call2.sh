#!/bin/bash
# Session 15, call 2: the 16-bit sort of the sort path without its copy (two separate-output
# one-pass sorts). (a) tests.list on the new binaries; (b) bench_versus --only batch, old (c0fd306)
# and new, two alternating rounds; (c) compute-sanitizer memcheck + racecheck of test_gpu (quick).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 230 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -26 $OUT/run-tests.txt
logs=()
for round in 1 2; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-old
        OMP_NUM_THREADS=16 timeout 70 $B --only batch --out-dir $OUT/versus-$which-$round > $OUT/versus-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/versus-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
rm -rf $OUT/versus-*/
for tool in memcheck racecheck; do
    HARMONIA_GPU_TEST_QUICK=1 timeout 110 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu \
        > $OUT/sanitize-test_gpu-$tool.log 2>&1
    echo "## compute-sanitizer $tool test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitize-test_gpu-$tool.log | tail -1)"
done
echo "# elapsed $SECONDS s"
