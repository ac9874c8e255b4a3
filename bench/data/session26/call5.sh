#!/bin/bash
# Session 26, call 5 (H100): the bound of the load priorities at 2^16 queries (b16 =
# -DNTG_L2_HINTS_BATCH=65536, so that 2^16-query batches take them too, against the default 2^17;
# alternating, three rounds of --only batch --batches 16), then a second full bench_versus of the
# final code (c5416ba's library = 887983b's).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for r in 1 2 3; do
  for w in new b16; do
    B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 40 $B --only batch --batches 16 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
OMP_NUM_THREADS=16 timeout $((570 - SECONDS)) .device-bin/bench/bench_versus --out-dir $OUT/logs/versus > $OUT/logs/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/logs/versus.log
grep -h "MISMATCH\|FAIL" $OUT/logs/versus.log | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
