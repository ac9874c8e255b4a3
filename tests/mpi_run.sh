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
    [ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
    # no network transports to probe on a CI machine: shared memory and self
    export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp}
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
exec "$launcher" "${flags[@]}" -np "$ranks" "$@"
