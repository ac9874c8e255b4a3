#!/bin/bash
# Session 11, call 6: every test program of the build on the GPU (tests.list), with the library of
# this session (7930696: fine bins, no free-memory query while the lane's scratch serves).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 540 bash bench/run-gpu.sh tests 2>&1 | tail -30
echo "# elapsed $SECONDS s"
