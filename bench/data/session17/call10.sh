#!/bin/bash
# Session 17, call 10 (after the review): the fine table built only where its plan has more buckets
# than the coarse one's; test_start_table's expectations from the plans, a fine table checked in
# quick mode, the coarse table refused alone; bench_versus's small batches verified again after
# their timed runs. (a) test_gpu in full; (b) memcheck of test_gpu (quick); (c) bench_versus
# --only batch once; (d) tests.list.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
timeout 150 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED|Failure" $OUT/test_gpu.log | head -6
HARMONIA_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
OMP_NUM_THREADS=16 timeout 70 .device-bin/bench/bench_versus --only batch > $OUT/batch.log 2>&1
echo "## batch rc $? ($SECONDS s)"; python3 bench/data/session13/summ.py $OUT/batch.log; grep -h "MISMATCH\|FAIL" $OUT/batch.log | head -3
BUILD=.device-bin timeout 200 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; grep -c " OK " $OUT/run-tests.txt; grep -v " OK " $OUT/run-tests.txt | tail -3
echo "# elapsed $SECONDS s"
