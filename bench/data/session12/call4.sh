#!/bin/bash
# Session 12, call 4: the PSA scratch without CUB size queries a call (f61bf35) against c8d681d's
# binaries: the host cost of the queries (sort_sweep, costs only), bench_versus --only sizes,batch
# alternating old / new twice, then the new binaries' test_gpu, test_gpu_embedding and memcheck.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
mkdir -p old && tar -xJf .device-variants/device-bin-c8d681d.tar.xz -C old
SECONDS=0
.device-variants/sort_sweep costs 2>&1 | tee $OUT/costs.txt
for round in 1 2; do
    for which in old new; do
        B=.device-bin; [ $which = old ] && B=old/.device-bin
        OMP_NUM_THREADS=16 timeout 150 $B/bench/bench_versus --only sizes,batch --out-dir $OUT/versus-$which-$round > $OUT/versus-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        grep -E "^## |=>" $OUT/versus-$which-$round.log | grep -B1 "=>" | grep -v "^--" | sed -E 's/strongest ordered baseline/base/; s/\(([a-z_+0-9]+),[^)]*\)/(\1)/; s/; hash table.*//' | paste - - - | sed -E 's/## ([^:]*):[^=]*=> query order: harmonia/\1 | q/; s/=> sorted order: harmonia/| s/' | cut -c1-200
    done
done
(cd .device-bin && timeout 200 tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' $OUT/test_gpu.log) OK ($SECONDS s)")
(cd .device-bin && timeout 60 tests/test_gpu_embedding > $OUT/test_gpu_embedding.log 2>&1; echo "test_gpu_embedding rc $? $(grep -c '\[       OK \]' $OUT/test_gpu_embedding.log) OK")
HARMONIA_GPU_TEST_QUICK=1 timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu > $OUT/memcheck-test_gpu.log 2>&1
echo "memcheck test_gpu (quick) rc $?; $(grep -E 'ERROR SUMMARY' $OUT/memcheck-test_gpu.log | tail -1) ($SECONDS s)"
