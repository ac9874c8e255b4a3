#!/usr/bin/env bash
# mpi_run.sh — runs a program under MPI for the tests: mpi_run.sh RANKS PROGRAM [ARGS...]. Finds
# mpirun (or mpiexec); with Open MPI it adds --oversubscribe (CI machines have fewer cores than
# ranks) and, as root, --allow-run-as-root; one OpenMP thread per rank unless OMP_NUM_THREADS is
# set. Exits 77 (skipped) when no MPI launcher is installed.
set -u
ranks=$1
shift
launcher=$(command -v mpirun || command -v mpiexec || true)
if [ -z "$launcher" ]; then
    echo "SKIP: no mpirun or mpiexec on the PATH (install openmpi-bin)"
    exit 77
fi
flags=()
if "$launcher" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
    flags+=(--oversubscribe)
    # more ranks than cores: waiting ranks yield the core instead of spinning on it
    [ "$ranks" -gt "$(nproc)" ] && export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
    [ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# sanitizer builds: Open MPI's own leaks are not this project's (tests/lsan-mpi.supp); the
# suppressions need whole stacks (no fast unwinding) and Open MPI's components kept loaded
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan-mpi.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export OMPI_MCA_mca_base_component_disable_dlclose=1
exec "$launcher" "${flags[@]}" -np "$ranks" "$@"
