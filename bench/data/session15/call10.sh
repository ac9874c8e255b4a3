#!/bin/bash
# Session 15, call 10 (review): the sparse and dense kernels' chunk loops as one function
# (search_chunks; the sparse kernel now descends its unstaged chunks together after the staged
# ones). (a) test_gpu in full; (b) bench_versus --only batch,queries, old (3e7ae20 + records) and
# new, two alternating rounds; (c) compute-sanitizer memcheck of test_gpu (quick).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
timeout 120 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED" $OUT/test_gpu.log | head -5
logs=()
for round in 1 2; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-old
        OMP_NUM_THREADS=16 timeout 60 $B --only batch,queries --out-dir $OUT/q-$which-$round > $OUT/q-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/q-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
rm -rf $OUT/q-*/
HARMONIA_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-test_gpu-memcheck.log 2>&1
echo "## compute-sanitizer memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-test_gpu-memcheck.log | tail -1)"
echo "# elapsed $SECONDS s"
