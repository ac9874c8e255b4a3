#!/bin/bash
# Session 21, call 2: pass 1's outside-bin ranks aggregated only (rank_add; call 1's all-bin forms
# cost uniform 32-bit windows 7 %). (a) test_psa_bits, test_gpu; compute-sanitizer memcheck of
# test_gpu (quick); (b) outside_probe, base (e6efb89) and new, both widths, two rounds; (c)
# bench_versus --only queries (two alternating rounds) and --only sizes (one each), old (e6efb89)
# and new.
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
for b in 32 64; do
  for v in base new; do
    OMP_NUM_THREADS=16 timeout 150 .device-variants/outside_probe_$v time $b 2 > $OUT/probe-$b-$v.txt 2>&1
    echo "## probe $b $v rc $? ($SECONDS s)"; grep -E "queries|FAIL|error" $OUT/probe-$b-$v.txt | sed 's/queries: /: /; s/ (100 % of the sample found)//'
  done
done
logs=()
for r in 1 2; do
  for w in old new; do
    B=.device-bin/bench/bench_versus; [ $w = old ] && B=.device-variants/bench_versus_old
    OMP_NUM_THREADS=16 timeout 120 $B --only queries --out-dir /tmp/q-$w-$r > $OUT/q-$w-$r.log 2>&1
    echo "## queries $w round $r rc $? ($SECONDS s)"
    logs+=($OUT/q-$w-$r.log)
  done
done
for w in old new; do
  B=.device-bin/bench/bench_versus; [ $w = old ] && B=.device-variants/bench_versus_old
  OMP_NUM_THREADS=16 timeout 200 $B --only sizes --out-dir /tmp/s-$w > $OUT/s-$w.log 2>&1
  echo "## sizes $w rc $? ($SECONDS s)"
  logs+=($OUT/s-$w.log)
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
