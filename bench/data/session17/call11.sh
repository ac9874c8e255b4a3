#!/bin/bash
# Session 17, call 11: tests.list through run-gpu.sh with the tests that need the GPU to themselves
# (is_parallel: false; gpu_build) run first, alone, and test_gpu then in the background (call 10's
# run had test_gpu_build's memory hog beside test_gpu's upload: DEVICE_MEMORY).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 300 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; cat $OUT/run-tests.txt | tail -26
echo "# elapsed $SECONDS s"
