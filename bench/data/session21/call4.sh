#!/bin/bash
# Session 21, call 4 (H100): 32-bit lookups in query order on the descent path below 2.5 a leaf.
# (a) test_psa_bits, test_gpu, compute-sanitizer memcheck of test_gpu (quick); (b) multi_probe
# ordered32 at 1.5, 2.5 and 3 queries a leaf (built against df7df8d: the library's call there is
# the staged search); (c) bench_versus --only batch of the old binary (e6efb89), then the full
# bench_versus of the new one (the session's closing table).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
for t in test_psa_bits test_gpu; do
  timeout 200 .device-bin/tests/$t > $OUT/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|ERROR" $OUT/test_gpu.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 220 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-memcheck.log | tail -1)"
OMP_NUM_THREADS=16 timeout 200 .device-variants/multi_probe 2 ordered32 1.5,2.5,3 > $OUT/ordered32.txt 2>&1
echo "## multi_probe ordered32 rc $? ($SECONDS s) WRONG: $(grep -c WRONG $OUT/ordered32.txt)"
grep -E "^round|library|\(c\)" $OUT/ordered32.txt | sed 's/  */ /g' | cut -c1-100
OMP_NUM_THREADS=16 timeout 200 .device-variants/bench_versus_old --only batch --out-dir /tmp/b-old > $OUT/batch-old.log 2>&1
echo "## batch old rc $? ($SECONDS s)"
OMP_NUM_THREADS=16 timeout 400 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## full new rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/batch-old.log $OUT/versus.log
grep -h "MISMATCH\|FAIL" $OUT/batch-old.log $OUT/versus.log | head -5
echo "# elapsed $SECONDS s"
