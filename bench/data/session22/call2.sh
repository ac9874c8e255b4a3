#!/bin/bash
# Session 22, call 2 (H100): the restore's known answers picked field by field (call 1's reference
# put the restore kernel's parameters on the stack), and 32-bit keys aggregating pass 1's outside
# bin (new = PSA_RANK_AGGREGATE_32 1, noagg = 0). (a) outside_probe old / new /
# noagg, both widths; (b) bench_versus --only queries,sizes,batch old / new, queries,sizes noagg
# (every result verified; test_gpu in the final call).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
for bits in 32 64; do
  for v in old new noagg; do
    OMP_NUM_THREADS=16 timeout 150 .device-variants/outside_probe_$v time $bits 2 > $OUT/probe-$bits-$v.txt 2>&1
    echo "## probe $bits $v rc $? ($SECONDS s)"
    grep -E "queries|FAIL|WRONG|error" $OUT/probe-$bits-$v.txt | sed 's/queries: /: /; s/ (100 % of the sample found)//; s/2^27 //; s/sample verified/ok/'
  done
done
logs=()
for w in old new noagg; do
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  G=queries,sizes,batch; [ $w = noagg ] && G=queries,sizes
  OMP_NUM_THREADS=16 timeout 250 $B --only $G --out-dir /tmp/v-$w > $OUT/v-$w.log 2>&1
  echo "## versus $w rc $? ($SECONDS s)"
  logs+=($OUT/v-$w.log)
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
