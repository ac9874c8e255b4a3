#!/bin/bash
# Session 11, call 7: memcheck and racecheck (and synccheck of the embedding test) of the GPU
# engine's tests (run-gpu.sh sanitize), with the library of this session.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 560 bash bench/run-gpu.sh sanitize 2>&1 | tail -12
echo "# elapsed $SECONDS s"
