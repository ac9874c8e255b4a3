#!/usr/bin/env bash
# stage-prebuilt.sh — builds the sm_90 binaries on the development machine (no GPU needed) and copies
# the ones the GPU machine runs (tests, benchmarks, the CLI) into .device-bin/, with the test list
# (tests.list: name, timeout, 1 if it may run beside others (meson's is_parallel) else 0, command
# relative to the build folder, from `meson introspect`), so a
# device call spends its time running rather than compiling. The CUDA runtime is linked
# dynamically (meson 1.0's CUDA dependency adds -lcudart): the GPU machine's toolkit provides
# libcudart.so.13; cmocka and xxHash come from .device-deps (setup.sh puts them on LD_LIBRARY_PATH).
# Usage: bash bench/stage-prebuilt.sh   then carry [".device-deps", ".device-bin.tar.xz"] and run
#        tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh && BUILD=.device-bin bash bench/run-gpu.sh ...
#        (or carry ".device-bin" itself while it is below the 64 MiB carry limit)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${STAGE_BUILD:-build-dev90}
if [ -f "$B/build.ninja" ]; then
    meson configure "$B" -Dbuildtype=release -Dgpu_arch=90 > /dev/null
else
    meson setup "$B" -Dbuildtype=release -Dgpu_arch=90
fi
ninja -C "$B"
rm -rf .device-bin
mkdir -p .device-bin/tests .device-bin/bench .device-bin/harmonia/cli .device-bin/examples
cp "$B"/tests/test_* .device-bin/tests/ 2>/dev/null || true
rm -rf .device-bin/tests/*.p
# the programs linked with libharmonia.so find it through their $ORIGIN/../harmonia runpath
cp -a "$B"/harmonia/libharmonia.so "$B"/harmonia/libharmonia.so.[0-9]* .device-bin/harmonia/
rm -rf .device-bin/harmonia/*.p
cp "$B/examples/olap_column" .device-bin/examples/ 2>/dev/null || true
for f in "$B"/bench/*; do [ -f "$f" ] && [ -x "$f" ] && cp "$f" .device-bin/bench/; done
cp "$B/harmonia/cli/harmonia" .device-bin/harmonia/cli/
# the tests of the build tree's shape (layers, exports: they read the sources) stay on this machine
meson introspect "$B" --tests | python3 -c '
import json, os, sys
build = os.path.abspath(sys.argv[1]) + "/"
source = os.path.abspath(sys.argv[2]) + "/"
for t in json.load(sys.stdin):
    paths = [os.path.normpath(os.path.join(build, a)) + ("/" if a.endswith("/") else "") for a in t["cmd"]]
    if any((p.startswith(source) and not (p + "/").startswith(build)) or p + "/" == source for p in paths):
        continue
    cmd = [a[len(build):] if a.startswith(build) else a for a in t["cmd"]]
    print("\t".join([t["name"], str(t.get("timeout") or 300), "1" if t.get("is_parallel", True) else "0"] + cmd))
' "$B" "$PWD" > .device-bin/tests.list
dirty=$([ -n "$(git status --porcelain | grep -v '^?? \.device' | head -1)" ] && echo ' (with uncommitted changes)' || true)
echo "$(git rev-parse --short HEAD)$dirty, built $(date -u +%Y-%m-%dT%H:%MZ) for sm_90" > .device-bin/.prebuilt
grep -qxF '/.device-bin*/' .gitignore || echo '/.device-bin*/' >> .gitignore
grep -qxF '/.device-bin.tar.xz' .gitignore || echo '/.device-bin.tar.xz' >> .gitignore
# the same folder as one archive: every test and benchmark links the library's CUDA code, so xz's
# long window shrinks 50-70 MB of binaries to 1-2 MB, well inside the device tool's 64 MiB carry
# (carry [".device-deps", ".device-bin.tar.xz"] and start the command with tar -xJf .device-bin.tar.xz)
tar -cJf .device-bin.tar.xz .device-bin
echo "$(wc -l < .device-bin/tests.list) tests listed; $(du -sh .device-bin | cut -f1) in .device-bin," \
     "$(du -h .device-bin.tar.xz | cut -f1) as .device-bin.tar.xz"
