#!/usr/bin/env bash
# test.sh — the whole test suite on a fresh Debian machine: installs the packages, builds (with CUDA
# where nvcc is found) and runs every test, then runs the tests of a CPU-only build under
# AddressSanitizer and UndefinedBehaviorSanitizer. GPU tests report skipped without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
harmonia_install_deps
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}

echo "== build and test (release) =="
[ -d build-test ] || meson setup build-test -Dbuildtype=release
ninja -C build-test
meson test -C build-test --print-errorlogs --num-processes 1

echo "== CPU-only build under AddressSanitizer + UndefinedBehaviorSanitizer =="
[ -d build-asan ] || meson setup build-asan -Dcuda=disabled -Dbuildtype=debug -Doptimization=1 \
    -Db_sanitize=address,undefined -Db_lundef=false
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes 1 --timeout-multiplier 4
