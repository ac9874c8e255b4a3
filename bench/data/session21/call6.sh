#!/bin/bash
# Session 21, call 6 (H100): test_psa_bits and test_gpu on the final code (32-bit lower bounds on the
# descent path below 1.5 a leaf: test_sparse_unordered's 32-bit windows of 0.7 and 1.4 a leaf).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
for t in test_psa_bits test_gpu; do
  timeout 200 .device-bin/tests/$t > $OUT/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|ERROR|Failure|assert" $OUT/test_gpu.log | head -5
echo "# elapsed $SECONDS s"
