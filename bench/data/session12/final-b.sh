#!/bin/bash
# Session 12, final call B: test_gpu (the collect test fixed after call A), then compute-sanitizer on the GPU engine's tests (run-gpu.sh sanitize:
# memcheck and racecheck of test_gpu; memcheck, racecheck with one host thread and synccheck of
# test_gpu_embedding) with the session's final library.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
(cd .device-bin && timeout 200 tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' $OUT/test_gpu.log) OK ($SECONDS s)"; grep -E "FAILED|ERROR" $OUT/test_gpu.log | head -5)
BUILD=.device-bin timeout 580 bash bench/run-gpu.sh sanitize 2>&1 | tail -8
echo "# elapsed $SECONDS s"
