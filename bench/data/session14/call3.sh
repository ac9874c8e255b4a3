#!/bin/bash
# Session 14, call 3: the top cut out of the view. (a) tests.list on the new binaries; (b)
# small_probe launch (the library's kernel bare and its two calls against Eytzinger); (c)
# bench_versus --only batch,ranges: old (b45c362's kernels) and new, two alternating rounds;
# (d) compute-sanitizer memcheck + racecheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 220 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; cat $OUT/run-tests.txt | tail -26
OMP_NUM_THREADS=16 timeout 60 .device-variants/small_probe launch > $OUT/launch.txt 2>&1
echo "## small_probe launch rc $? ($SECONDS s)"; grep -v "^#" $OUT/launch.txt | head -32
logs=()
for round in 1 2; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-old
        OMP_NUM_THREADS=16 timeout 70 $B --only batch,ranges --out-dir $OUT/versus-$which-$round > $OUT/versus-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/versus-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
rm -rf $OUT/versus-*/
for tool in memcheck racecheck; do
    HARMONIA_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu \
        > $OUT/sanitize-test_gpu-$tool.log 2>&1
    echo "## compute-sanitizer $tool test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitize-test_gpu-$tool.log | tail -1)"
done
echo "# elapsed $SECONDS s"
