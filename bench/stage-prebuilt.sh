#!/usr/bin/env bash
# stage-prebuilt.sh — builds the sm_90 binaries on the development machine (no GPU needed) and copies
# the ones the GPU machine runs (tests, benchmarks, the CLI) into .device-bin/, so a device call
# spends its time running rather than compiling. The CUDA runtime is linked statically; cmocka and
# xxHash come from .device-deps on the GPU machine (setup.sh puts them on LD_LIBRARY_PATH).
# Usage: bash bench/stage-prebuilt.sh   then carry [".device-deps", ".device-bin"] and run
#        source .device-deps/setup.sh && BUILD=.device-bin bash bench/run-gpu.sh ...
set -euo pipefail
B=${STAGE_BUILD:-build-dev90}
[ -f "$B/build.ninja" ] || meson setup "$B" -Dbuildtype=release -Dgpu_arch=90
# meson 1.0's nvcc rule writes no depfile (nvcc names it x.cu.d, ninja looks for x.cu.o.d), so a
# changed header does not rebuild the .cu files that include it: rebuild them all when any header
# is newer than the oldest CUDA object
oldest=$(find "$B" -name '*.cu.o' -printf '%T@ %p\n' 2>/dev/null | sort -n | head -1 | cut -d' ' -f2-)
if [ -n "$oldest" ] && [ -n "$(find . -path ./build\* -prune -o \( -name '*.h' -o -name '*.cuh' \) -newer "$oldest" -print | head -1)" ]; then
    echo "a header changed: rebuilding the CUDA objects"
    find "$B" -name '*.cu.o' -delete
fi
ninja -C "$B"
rm -rf .device-bin
mkdir -p .device-bin/tests .device-bin/bench .device-bin/harmonia/cli
cp "$B"/tests/test_* .device-bin/tests/ 2>/dev/null || true
rm -rf .device-bin/tests/*.p
for f in "$B"/bench/*; do [ -f "$f" ] && [ -x "$f" ] && cp "$f" .device-bin/bench/; done
cp "$B/harmonia/cli/harmonia" .device-bin/harmonia/cli/
echo "$(git rev-parse --short HEAD)$([ -n "$(git status --porcelain --untracked-files=no | head -1)" ] && echo ' (with uncommitted changes)'), built $(date -u +%Y-%m-%dT%H:%MZ) for sm_90" > .device-bin/.prebuilt
grep -qx '/.device-bin/' .gitignore || echo '/.device-bin/' >> .gitignore
du -sh .device-bin
