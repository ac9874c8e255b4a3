#!/usr/bin/env bash
# bench.sh — the main job on a fresh Debian machine: installs the packages, builds, and runs
# `harmonia bench` on its embedded default (data generated on the fly; the GPU engine where a GPU is
# present, the CPU engine otherwise). Extra arguments go to `harmonia bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
harmonia_install_deps
[ -d build ] || meson setup build -Dbuildtype=release
ninja -C build
./build/harmonia/cli/harmonia bench "$@"
