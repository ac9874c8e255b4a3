#!/bin/bash
# Session 20, call 6 (H100; 64-bit descent path below 4 a leaf sorted, 4.5 in query order):
# (a) test_psa_bits, test_gpu; (b) multi_probe dense, one round (the library's call now on the path
# where it moved); (c) bench_versus --only batch, call 4's binary (c4) and the new one, alternating.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
for t in test_psa_bits test_gpu; do
  timeout 200 .device-bin/tests/$t > $OUT/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/$t.log | tr '\n' ' ')"
done
OMP_NUM_THREADS=16 timeout 200 .device-variants/multi_probe 1 dense > $OUT/dense.txt 2>&1
echo "## dense rc $? ($SECONDS s) WRONG: $(grep -c WRONG $OUT/dense.txt)"
grep -E "^round|library|Q=2" $OUT/dense.txt | sed 's/  */ /g' | cut -c1-90
OMP_NUM_THREADS=16 timeout 150 .device-variants/bench_versus_c4 --only batch --out-dir /tmp/v-c4 > $OUT/batch-c4.log 2>&1
echo "## c4 rc $? ($SECONDS s)"
OMP_NUM_THREADS=16 timeout 150 .device-bin/bench/bench_versus --only batch --out-dir $OUT/versus-batch > $OUT/batch-new.log 2>&1
echo "## new rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/batch-c4.log $OUT/batch-new.log | grep -E "workload|2\^2[2-6] u64|2\^1[048] u64"
grep -h "MISMATCH\|FAIL" $OUT/batch-new.log | head -5
echo "# elapsed $SECONDS s"
