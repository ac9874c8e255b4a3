#!/bin/bash
# Session 21, call 3 (H100): pass 1's outside-bin aggregation for 64-bit keys only (32-bit keys
# compile to the code before it). (a) test_psa_bits, test_gpu, compute-sanitizer memcheck of
# test_gpu (quick); (b) outside_probe 64-bit, base (e6efb89) and new; (c) multi_probe ordered32:
# the 32-bit descent path + restore in query order at 0.5 / 1 / 2 queries a leaf against the
# library's call (staged search from one a leaf); (d) bench_versus --only queries,sizes, old
# (e6efb89) and new, one round each.
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
for v in base new; do
  OMP_NUM_THREADS=16 timeout 150 .device-variants/outside_probe_$v time 64 1 > $OUT/probe-64-$v.txt 2>&1
  echo "## probe 64 $v rc $? ($SECONDS s)"; grep -E "queries|FAIL|error" $OUT/probe-64-$v.txt | sed 's/queries: /: /; s/ (100 % of the sample found)//'
done
OMP_NUM_THREADS=16 timeout 200 .device-variants/multi_probe 2 ordered32 > $OUT/ordered32.txt 2>&1
echo "## multi_probe ordered32 rc $? ($SECONDS s) WRONG: $(grep -c WRONG $OUT/ordered32.txt)"
grep -E "^round|library|\(c\)" $OUT/ordered32.txt | sed 's/  */ /g' | cut -c1-100
logs=()
for w in old new; do
  B=.device-bin/bench/bench_versus; [ $w = old ] && B=.device-variants/bench_versus_old
  OMP_NUM_THREADS=16 timeout 200 $B --only queries,sizes --out-dir /tmp/qs-$w > $OUT/qs-$w.log 2>&1
  echo "## queries,sizes $w rc $? ($SECONDS s)"
  logs+=($OUT/qs-$w.log)
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
