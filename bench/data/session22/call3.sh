#!/bin/bash
# Session 22, call 3 (H100): unordered windows of the staged search set the edges apart too (pass 1
# answers what it sets apart: psa_set_apart). (a) test_psa_bits, test_gpu, compute-sanitizer memcheck
# and synccheck of test_gpu (quick); (b) outside_probe old (866f469) / new, both widths; (c)
# bench_versus --only queries,sizes,batch, old / new alternating, two rounds.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
for t in test_psa_bits test_gpu; do
  timeout 240 .device-bin/tests/$t > $OUT/logs/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|ERROR|fail" $OUT/logs/test_gpu.log | head -5
for tool in memcheck synccheck; do
  HARMONIA_GPU_TEST_QUICK=1 timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu \
      > $OUT/logs/sanitize-$tool.log 2>&1
  echo "## $tool test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/logs/sanitize-$tool.log | tail -1)"
done
for bits in 32 64; do
  for v in old new; do
    OMP_NUM_THREADS=16 timeout 150 .device-variants/outside_probe_$v time $bits 2 > $OUT/logs/probe-$bits-$v.txt 2>&1
    echo "## probe $bits $v rc $? ($SECONDS s)"
    grep -E "queries|FAIL|WRONG|error" $OUT/logs/probe-$bits-$v.txt | sed 's/queries: /: /; s/ (100 % of the sample found)//; s/2^27 //; s/sample verified/ok/'
  done
done
logs=()
for r in 1 2; do
  for w in old new; do
    B=.device-bin/bench/bench_versus; [ $w = old ] && B=.device-variants/bench_versus_old
    OMP_NUM_THREADS=16 timeout 150 $B --only queries,sizes,batch --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
