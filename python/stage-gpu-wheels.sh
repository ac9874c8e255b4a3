#!/usr/bin/env bash
# stage-gpu-wheels.sh — prepares .whl/ (ignored by git; the device tool carries it) for
# python/run-gpu-tests.sh on the GPU machine, which has no network and Python 3.12:
#   .whl/harmonia-<version>-cp311-abi3-linux_x86_64.whl   built here with CUDA for sm_90 (limited API:
#                                                         one wheel for CPython >= 3.11)
#   .whl/bin/bench_overhead_c                            the C side of bench/python_overhead.py, same build
#   .whl/meson_python-*, pyproject_metadata-*, meson-*   what `pip install .` needs to build from source
#                                                         there (`run-gpu-tests.sh source`; ninja, numpy
#                                                         and packaging >= 23.2 are on the machine)
# Usage: bash python/stage-gpu-wheels.sh      (needs nvcc and network here; a few minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
B=${STAGE_BUILD:-build-py/build}  # the build dir of test.sh's pip install (sm_90 as well): reused
venv=build-py/stage-venv
[ -x "$venv/bin/python" ] || $PY -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
rm -rf .whl
mkdir -p .whl/bin
command -v nvcc > /dev/null || { echo "stage-gpu-wheels.sh: nvcc is not on the PATH: the wheel would have no GPU engine" >&2; exit 1; }
# the options of test.sh's install (cuda auto, sm_90), so that its build dir is reused as it is
"$venv/bin/python" -m pip wheel --no-deps -w .whl -Cbuild-dir="$B" -Csetup-args=-Dgpu_arch=90 .
check=$(mktemp -d)
"$venv/bin/python" -m pip install -q numpy
"$venv/bin/python" -m pip install -q --no-deps --target "$check" .whl/harmonia-*.whl
PYTHONPATH="$check" "$venv/bin/python" -c 'import harmonia, sys; sys.exit(not harmonia.built_with_cuda)' ||
    { echo "stage-gpu-wheels.sh: the wheel has no GPU engine (nvcc not found by meson?)" >&2; exit 1; }
# the extension's fat binary must hold sm_90 code (the H100 / H200): its .nv_fatbin section read
# here, since cuobjdump may be missing (a fat binary: header 0xBA55ED50, then entries, kind 1 PTX /
# 2 ELF, the SM number at byte 28 of each entry's header)
"$venv/bin/python" - "$check"/harmonia/_core*.so <<'PYEOF' || exit 1
import struct, sys
data = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
names = sections[shstrndx][4]
archs = set()
for name, _, _, _, offset, size, *_ in sections:
    if data[names + name:data.index(b"\0", names + name)] != b".nv_fatbin":
        continue
    pos, end = offset, offset + size
    while pos + 16 <= end:
        magic, _, header, fat = struct.unpack_from("<IHHQ", data, pos)
        if magic != 0xBA55ED50:
            pos += 8
            continue
        entry, last = pos + header, pos + header + fat
        while entry < last:
            kind, _, entry_header, entry_size = struct.unpack_from("<HHIQ", data, entry)
            archs.add(("ptx_" if kind == 1 else "sm_") + str(struct.unpack_from("<I", data, entry + 28)[0]))
            entry += entry_header + entry_size
        pos = last
print("GPU code in the wheel's extension:", " ".join(sorted(archs)) or "none")
sys.exit(0 if "sm_90" in archs else "stage-gpu-wheels.sh: the wheel's extension has no sm_90 code")
PYEOF
rm -rf "$check"
"$venv/bin/python" -m pip install -q ninja
PATH="$PWD/$venv/bin:$PATH" ninja -C "$B" python/bench_overhead_c
cp "$B/python/bench_overhead_c" .whl/bin/
# pure-Python build requirements for the GPU machine's Python 3.12 (one version of each)
"$venv/bin/python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl "meson-python>=0.17" "pyproject-metadata>=0.9" "meson>=1.3"
dirty=$([ -n "$(git status --porcelain --untracked-files=no | head -1)" ] && echo ' (with uncommitted changes)' || true)
echo "$(git rev-parse --short HEAD)$dirty, built $(date -u +%Y-%m-%dT%H:%MZ) for sm_90" > .whl/bin/STAGED
ls -la .whl .whl/bin
du -sh .whl
