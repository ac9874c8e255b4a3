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

# The fuzz build (-Dfuzz=true) needs clang's libFuzzer runtime and clang's OpenMP (libomp). Only
# where clang is installed: test.sh skips the fuzzing without it. Returns non-zero when they
# cannot be had.
harmonia_install_fuzz_deps() {
    command -v clang >/dev/null 2>&1 || return 1
    harmonia_install_packages libclang-rt-dev libomp-dev
}
