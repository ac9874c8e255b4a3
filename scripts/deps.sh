#!/usr/bin/env bash
# deps.sh — installs the Debian packages Harmonia builds and tests with, when any is missing.
# Sourced by scripts/test.sh and scripts/bench.sh; uses sudo when not root.
harmonia_install_packages() {
    local pkgs=("$@")
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing: ${missing[*]}"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

harmonia_install_deps() {
    # openmpi-bin and libopenmpi-dev: the distributed index (dist/, harmonia-dist) and its tests
    harmonia_install_packages gcc meson ninja-build pkg-config libcmocka-dev libxxhash-dev \
        openmpi-bin libopenmpi-dev
}

# The Python package (test.sh's pip install . and pytest): a Python with its headers and venv. The
# Python packages themselves (numpy, pyarrow, pytest; meson-python, meson and ninja for the build)
# come from PyPI into a virtual environment, never into the system.
harmonia_install_python_deps() {
    local python=${1:-python3}
    if command -v "$python" > /dev/null 2>&1 && "$python" -c 'import sys, sysconfig, os, venv, ensurepip
sys.exit(0 if sys.version_info >= (3, 11) and os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 1)' 2>/dev/null; then
        return 0  # a Python >= 3.11 with headers, venv and pip (e.g. a pyenv build)
    fi
    harmonia_install_packages python3 python3-dev python3-venv
}

# The fuzz build (-Dfuzz=true) needs clang's libFuzzer runtime and clang's OpenMP (libomp). Only
# where clang is installed: test.sh skips the fuzzing without it. Returns non-zero when they
# cannot be had.
harmonia_install_fuzz_deps() {
    command -v clang >/dev/null 2>&1 || return 1
    harmonia_install_packages libclang-rt-dev libomp-dev
}
