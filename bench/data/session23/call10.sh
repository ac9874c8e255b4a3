#!/bin/bash
# Session 23, call 10 (H100): after the read-through (test_gpu's edges refusal test on a zeroed
# struct; bench_versus's option parsing): test_psa_bits, test_gpu, and bench_versus --only batch
# --batches 16 with --fanout 16 --leaf-size 16 (the default shape given explicitly).
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
OMP_NUM_THREADS=16 timeout 100 .device-bin/bench/bench_versus --only batch --batches 16 --fanout 16 --leaf-size 16 \
    --out-dir /tmp/v > $OUT/logs/versus.log 2>&1
echo "## versus rc $? ($SECONDS s)"; grep -E "^# tree|=>" $OUT/logs/versus.log
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
