#!/bin/bash
# Session 18, call 14 (the final code): tests.list through run-gpu.sh (the suite's helpers changed
# since call 8: bench_suite_quick and the benchmarks link them).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 300 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -26 $OUT/run-tests.txt
echo "# elapsed $SECONDS s"
