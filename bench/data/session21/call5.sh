#!/bin/bash
# Session 21, call 5 (H100): (a) test_psa_bits, test_gpu, compute-sanitizer memcheck and synccheck
# of test_gpu (quick) on the final code (rank_add's shuffle over the whole warp); (b) lb_probe
# dense32: 32-bit lower bounds at one and two queries a leaf, the library as built (the staged
# search there: PSA_DESCENT_LOWER_BOUND_MAX_HALVES_PER_LEAF_32 = 2) and with the bound at 5 (the
# descent path, as lookups in query order since session 21), alternating, two rounds.
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
for tool in memcheck synccheck; do
  HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu \
      > $OUT/sanitize-$tool.log 2>&1
  echo "## $tool test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-$tool.log | tail -1)"
done
for r in 1 2; do
  for v in base lb5; do
    OMP_NUM_THREADS=16 timeout 120 .device-variants/lb_probe_$v dense32 > $OUT/lb-$v-$r.txt 2>&1
    echo "## lb $v round $r rc $? ($SECONDS s)"; grep -E "queries|FAIL" $OUT/lb-$v-$r.txt
  done
done
echo "# elapsed $SECONDS s"
