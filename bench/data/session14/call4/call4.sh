#!/bin/bash
# Session 14, call 4 (final): bench_versus, every group, on 96741d4's binaries (the table of the
# closing note), then compute-sanitizer memcheck, racecheck and synccheck of test_gpu_embedding.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 300 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log
grep -h "MISMATCH\|FAIL" $OUT/versus.log | head -5
grep -E "^  => " $OUT/versus.log | wc -l
for tool in memcheck racecheck synccheck; do
    HARMONIA_GPU_TEST_QUICK=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu_embedding \
        > $OUT/sanitize-test_gpu_embedding-$tool.log 2>&1
    echo "## compute-sanitizer $tool test_gpu_embedding: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitize-test_gpu_embedding-$tool.log | tail -1)"
done
echo "# elapsed $SECONDS s"
