#!/bin/bash
# Session 21, call 7 (H100): (a) test_psa_bits, test_gpu, compute-sanitizer memcheck and synccheck of
# test_gpu (quick; its window two thirds outside the span now runs in quick mode); (b) multi_probe
# ordered32small: a 32-bit tree of 2^26 keys, 2^22 and 2^23 queries (one and two a leaf) in query
# order, the library as built (the descent path) and with session 20's bounds (old: the descent in
# query order at one a leaf, the staged search at two), beside the descent (a) and the path (c) by
# hand; alternating, two rounds.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
for t in test_psa_bits test_gpu; do
  timeout 200 .device-bin/tests/$t > $OUT/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|ERROR|Failure" $OUT/test_gpu.log | head -5
for tool in memcheck synccheck; do
  HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 .device-bin/tests/test_gpu \
      > $OUT/sanitize-$tool.log 2>&1
  echo "## $tool test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/sanitize-$tool.log | tail -1)"
done
for r in 1 2; do
  for v in old new; do
    OMP_NUM_THREADS=16 timeout 120 .device-variants/multi_probe_$v 1 ordered32small > $OUT/small-$v-$r.txt 2>&1
    echo "## small $v round $r rc $? ($SECONDS s) WRONG: $(grep -c WRONG $OUT/small-$v-$r.txt)"
    grep -E "^round|library|\(a\)|\(c\)" $OUT/small-$v-$r.txt | sed 's/  */ /g' | cut -c1-100
  done
done
echo "# elapsed $SECONDS s"
