#!/bin/bash
# Session 12, call 2: the range collect's G picked on the device (no read-back of the offsets).
# The new binaries' test_gpu (full), test_gpu_embedding, memcheck of test_gpu (quick); then
# bench_versus --only ranges with the old (c8d681d) and new binaries, alternating, two rounds each.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
mkdir -p old && tar -xJf .device-variants/device-bin-c8d681d.tar.xz -C old
SECONDS=0
(cd .device-bin && timeout 200 tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' $OUT/test_gpu.log) OK in $SECONDS s")
(cd .device-bin && timeout 60 tests/test_gpu_embedding > $OUT/test_gpu_embedding.log 2>&1; echo "test_gpu_embedding rc $? $(grep -c '\[       OK \]' $OUT/test_gpu_embedding.log) OK")
for round in 1 2; do
    for which in old new; do
        B=.device-bin; [ $which = old ] && B=old/.device-bin
        OMP_NUM_THREADS=16 timeout 120 $B/bench/bench_versus --only ranges --out-dir $OUT/ranges-$which-$round > $OUT/ranges-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        grep -E "count   len|collect len" $OUT/ranges-$which-$round.log | sed -E 's/ +/ /g'
    done
done
HARMONIA_GPU_TEST_QUICK=1 timeout 280 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/memcheck-test_gpu.log 2>&1
echo "memcheck test_gpu (quick) rc $?; $(grep -E 'ERROR SUMMARY' $OUT/memcheck-test_gpu.log | tail -1) ($SECONDS s)"
