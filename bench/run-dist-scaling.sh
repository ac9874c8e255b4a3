#!/usr/bin/env bash
# run-dist-scaling.sh — issue 17's scaling run of the distributed index, in one device call on a
# machine with several GPUs (nvidia-h200-x2 / -x4): one MPI rank per GPU on 1, 2 and (if present) 4
# GPUs; each configuration builds 2^28 64-bit pairs per GPU from unsorted input, then per rank 2^27
# point lookups (uniform and Zipf-skewed), 2^27 lower bounds, 2^22 range counts of 64 keys and a
# 2^22-operation share of one update batch, every step timed (route, exchange, local, return) and
# checked on a sample against the data's model (bench_dist). Weak scaling: the work per GPU is fixed.
# CSV and logs go to $OUT; a table with the scaling efficiency against 1 GPU ends it.
# Stage once on the development machine:  bash bench/stage-dist.sh [--prebuilt]
# Device call (carry [".device-deps", ".device-mpi"], plus ".device-bin-dist" when prebuilt):
#   source .device-deps/setup.sh && bash bench/run-dist-scaling.sh
# DRY_RUN=1 bash bench/run-dist-scaling.sh runs the same steps on the CPU engine at small sizes with
# 1, 2 and 4 ranks on any machine with MPI (BUILD=<a build folder with MPI>, default build-dist; the
# mpirun on the PATH, which must be the MPI that build used). Sizes: PAIRS, LOOKUPS, RANGES,
# OPS per rank (2^K or numbers); GPUS ("1 2 4"); END (seconds after the start by which the last
# configuration must finish, default 560).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
source bench/dist-common.sh
dry=${DRY_RUN:-0}
if [ "$dry" = 1 ]; then
    backend=cpu
    available=4
    MPIRUN_FLAGS=(--bind-to none)   # the MPI on the PATH: the one BUILD was built with
    [ "$(id -u)" -eq 0 ] && MPIRUN_FLAGS+=(--allow-run-as-root)
    BIN=${BUILD:-build-dist}
    [ -x "$BIN/dist/bench_dist" ] || { echo "DRY_RUN: no $BIN/dist/bench_dist (set BUILD)"; exit 1; }
    PAIRS=$(dist_number "${PAIRS:-2^16}")
    LOOKUPS=$(dist_number "${LOOKUPS:-2^15}")
    RANGES=$(dist_number "${RANGES:-2^12}")
    OPS=$(dist_number "${OPS:-2^12}")
    echo "dry run on the CPU engine: $(nproc) cores, $(mpirun --version 2>&1 | head -1)" | tee "$OUT/device.txt"
else
    backend=auto
    {
        nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
        git log -1 --format='commit %H %s' 2>/dev/null
    } | tee "$OUT/device.txt"
    setup_log=$(mktemp)
    dist_setup > "$setup_log" 2>&1   # in this shell: it sets BIN and the MPI environment
    rc=$?
    tee -a "$OUT/device.txt" < "$setup_log"
    [ $rc -eq 0 ] || exit 1
    available=$(nvidia-smi -L | wc -l)
    PAIRS=$(dist_number "${PAIRS:-2^28}")
    LOOKUPS=$(dist_number "${LOOKUPS:-2^27}")
    RANGES=$(dist_number "${RANGES:-2^22}")
    OPS=$(dist_number "${OPS:-2^22}")
fi
END=${END:-560}
status=0
for gpus in ${GPUS:-1 2 4}; do
    if [ "$gpus" -gt "$available" ]; then
        echo "skipped $gpus GPUs: $available present" | tee -a "$OUT/scaling.log"
        continue
    fi
    left=$((END - SECONDS))
    if [ "$left" -lt 60 ]; then
        echo "skipped $gpus GPUs: $left s left before END=$END" | tee -a "$OUT/scaling.log"
        continue
    fi
    echo "== $gpus rank(s), one per GPU: $PAIRS pairs, $LOOKUPS lookups per rank and kind ==" | tee -a "$OUT/scaling.log"
    timeout "$left" "$SHELL" -c "$(declare -f mpirun_cmd); MPIRUN_FLAGS=(${MPIRUN_FLAGS[*]}); \
        mpirun_cmd $gpus $BIN/dist/bench_dist --pairs-per-rank $PAIRS --lookups-per-rank $LOOKUPS \
        --ranges-per-rank $RANGES --range-length 64 --update-ops-per-rank $OPS --runs ${RUNS:-3} \
        --backend $backend --label '$gpus GPU' --csv $OUT/scaling.csv" 2>&1 | tee -a "$OUT/scaling.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
# the table: rate per configuration and the efficiency against one GPU, per step
if [ -f "$OUT/scaling.csv" ]; then
    echo
    python3 - "$OUT/scaling.csv" <<'PY' | tee "$OUT/scaling-summary.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {r['step']: float(r['per_second']) for r in rows if r['ranks'] == '1' and r['per_second']}
print(f"{'ranks':>5} {'step':16} {'M/s':>9} {'eff.':>6} {'route':>7} {'exch':>7} {'local':>7} {'return':>7} {'B/query':>8} {'checked':>9} {'wrong':>6}")
for r in rows:
    rate = float(r['per_second']) if r['per_second'] else 0.0
    ranks = int(r['ranks'])
    eff = rate / (ranks * base[r['step']]) if base.get(r['step']) else float('nan')
    f = lambda k: f"{float(r[k]):7.3f}" if r[k] else "      -"
    print(f"{ranks:5d} {r['step'][:16]:16} {rate/1e6:9.1f} {eff:6.2f} {f('route_s')} {f('exchange_s')} "
          f"{f('local_s')} {f('return_s')} {float(r['bytes_per_query'] or 0):8.2f} {r['checked']:>9} {r['wrong']:>6}")
PY
fi
echo "exchange path: host memory through MPI_Alltoallv (Open MPI shared memory within the node); the"
echo "shards' engines take host arrays through their pinned staging (no CUDA-aware MPI or NCCL)"
exit $status
