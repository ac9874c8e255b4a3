#!/bin/bash
# Session 17, call 4: (a) test_gpu in full (the fine table capped at PSA_MAX_BITS = 19; the test
# asked 2^20 of it in call 3); (b) call_probe twice: where a small call's host time goes.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
timeout 150 .device-bin/tests/test_gpu > $OUT/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s)"; grep -E "PASSED|FAILED|ERROR|Failure" $OUT/test_gpu.log | head -8
for i in 1 2; do OMP_NUM_THREADS=16 timeout 100 .device-variants/call_probe; echo "## call_probe rc $? ($SECONDS s)"; done > $OUT/call_probe.txt 2>&1
cat $OUT/call_probe.txt
echo "# elapsed $SECONDS s"
