#!/bin/bash
# Session 16, call 3: the pointer classification through the driver (gpu_upload.cu) and G = 2 for
# the 64-bit sorted descent. (a) tests.list (every GPU test, program by program); (b) bench_versus
# --only batch: call 1's binary (bc6aafe, "s16c1") and the new one, two alternating rounds;
# (c) compute-sanitizer memcheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 230 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; grep -c " OK " $OUT/run-tests.txt; grep -v " OK " $OUT/run-tests.txt | tail -4
logs=()
for round in 1 2; do
    for which in s16c1 new; do
        B=.device-bin/bench/bench_versus; [ $which = s16c1 ] && B=.device-variants/bench_versus-s16c1
        OMP_NUM_THREADS=16 timeout 60 $B --only batch > $OUT/b-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/b-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
for f in "${logs[@]}"; do echo "$f: $(grep -A4 '^## batch 2^1[04] ' $f | grep -E 'harmonia ' | awk '{print $(NF-4)}' | tr '\n' ' ')"; done
HARMONIA_GPU_TEST_QUICK=1 timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
echo "# elapsed $SECONDS s"
