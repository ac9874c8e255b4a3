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
# CUDA objects must carry their header dependencies (root meson.build: meson 1.0 gives nvcc none,
# the build names the depfiles itself); a silent mismatch would link stale objects after a change
if grep -q "cuda_COMPILER" build-test/build.ninja; then
    ninja -C build-test -t deps libcu_harmonia_gpu_query_cu.a.p/harmonia_gpu_query.cu.o | grep -q "harmonia/tree_internal.h" || {
        echo "test.sh: the CUDA objects have no header dependencies (depfile path mismatch in meson.build)" >&2
        exit 1
    }
fi
meson test -C build-test --print-errorlogs --num-processes 1

echo "== CPU-only build under AddressSanitizer + UndefinedBehaviorSanitizer =="
[ -d build-asan ] || meson setup build-asan -Dcuda=disabled -Dbuildtype=debug -Doptimization=1 \
    -Db_sanitize=address,undefined -Db_lundef=false
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes 1 --timeout-multiplier 4
