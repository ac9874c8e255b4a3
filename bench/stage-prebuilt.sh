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
