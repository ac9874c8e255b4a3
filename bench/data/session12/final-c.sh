#!/bin/bash
# Session 12, final call C: the collect's guard against decreasing device offsets (867de90):
# test_gpu, memcheck of test_gpu (quick), and bench_versus --only ranges twice (the collect's speed).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
(cd .device-bin && timeout 200 tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' $OUT/test_gpu.log) OK ($SECONDS s)"; grep -E "FAILED|ERROR" $OUT/test_gpu.log | head -5)
for round in 1 2; do
    OMP_NUM_THREADS=16 timeout 100 .device-bin/bench/bench_versus --only ranges --out-dir $OUT/r$round > $OUT/ranges-$round.log 2>&1
    echo "## ranges round $round rc $? ($SECONDS s)"
    grep -E "count   len|collect len" $OUT/ranges-$round.log | sed -E 's/ +/ /g'
done
rm -rf $OUT/r1 $OUT/r2
HARMONIA_GPU_TEST_QUICK=1 timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/memcheck-test_gpu.log 2>&1
echo "memcheck test_gpu (quick) rc $?; $(grep -E 'ERROR SUMMARY' $OUT/memcheck-test_gpu.log | tail -1) ($SECONDS s)"
