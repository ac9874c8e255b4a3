#!/bin/bash
# Session 26, call 4 (H100): the final code (NTG_L2_HINTS = 2: scattered lookups of 2^17+ queries load
# leaves and values evict_first) — test_psa_bits, test_gpu, memcheck and synccheck of test_gpu (quick),
# then the full bench_versus (every group, CSVs for the plots).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
for t in test_psa_bits test_gpu; do
  timeout 200 .device-bin/tests/$t > $OUT/logs/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|ERROR|fail" $OUT/logs/test_gpu.log | head -5
for tool in memcheck synccheck; do
  HARMONIA_GPU_TEST_QUICK=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu \
      > $OUT/logs/sanitize-$tool.log 2>&1
  echo "## $tool test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/logs/sanitize-$tool.log | tail -1)"
done
OMP_NUM_THREADS=16 timeout $((585 - SECONDS)) .device-bin/bench/bench_versus --out-dir $OUT/logs/versus > $OUT/logs/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/logs/versus.log
grep -h "MISMATCH\|FAIL" $OUT/logs/versus.log | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
