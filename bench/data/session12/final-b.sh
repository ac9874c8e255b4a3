#!/bin/bash
# Session 12, final call B: compute-sanitizer on the GPU engine's tests (run-gpu.sh sanitize:
# memcheck and racecheck of test_gpu; memcheck, racecheck with one host thread and synccheck of
# test_gpu_embedding) with the session's final library.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 580 bash bench/run-gpu.sh sanitize 2>&1 | tail -8
echo "# elapsed $SECONDS s"
