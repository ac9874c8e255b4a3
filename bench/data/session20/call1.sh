#!/bin/bash
# Session 20, call 1: (a) test_gpu (full; the lower bounds on the descent path are in it);
# (b) lb_probe with PSA_DESCENT_LOWER_BOUND = 0 and 1, alternating, two rounds;
# (c) multi_probe (Q queries a group in flight), two rounds.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt
timeout 200 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED)|ERROR|FAIL" $OUT/test_gpu.log | head
for r in 1 2; do
  for v in 0 1; do
    OMP_NUM_THREADS=16 timeout 100 .device-variants/lb_probe_$v > $OUT/lb-$v-$r.txt 2>&1
    echo "## lb_probe_$v round $r rc $? ($SECONDS s)"; grep -v "^OK" $OUT/lb-$v-$r.txt
  done
done
OMP_NUM_THREADS=16 timeout 330 .device-variants/multi_probe 2 > $OUT/multi.txt 2>&1
echo "## multi_probe rc $? ($SECONDS s)"
echo "WRONG lines: $(grep -c WRONG $OUT/multi.txt)"; tail -3 $OUT/multi.txt
echo "# elapsed $SECONDS s"
