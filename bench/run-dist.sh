#!/usr/bin/env bash
# run-dist.sh — the distributed index on the one-GPU machine (issue 16), in one device call: the MPI
# tests with the shards on the GPU (test_dist on 1 and 2 ranks, backend auto), then bench_dist with
# the same data and queries on 1 rank and on 2 ranks sharing the GPU: a build of 2^27 pairs, 2^27
# uniform and 2^27 Zipf lookups, 2^27 lower bounds, 2^22 range counts of 64 keys and a 2^22-operation
# update batch, each step timed (route, exchange, local engine, return), with the bytes between ranks
# per query and every kind of result checked on a sample. Logs and the CSV go to $OUT; a table last.
# Stage once on the development machine:  bash bench/stage-dist.sh [--prebuilt]
# Device call (carry [".device-deps", ".device-mpi"], plus ".device-bin-dist" when prebuilt):
#   source .device-deps/setup.sh && bash bench/run-dist.sh [tests] [bench] [wide]
# `wide` adds 2 ranks x 2^27 pairs each (twice the data on the one GPU). Sizes: PAIRS, LOOKUPS, RANGES,
# OPS (totals over the ranks, numbers or 2^K, default 2^27 2^27 2^22 2^22); RUNS (3).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
what=("$@")
[ ${#what[@]} -eq 0 ] && what=(tests bench)
want() { for w in "${what[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
source bench/dist-common.sh
{
    nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
    git log -1 --format='commit %H %s' 2>/dev/null
} | tee "$OUT/device.txt"
setup_log=$(mktemp)
dist_setup > "$setup_log" 2>&1   # in this shell: it sets BIN and the MPI environment
rc=$?
tee -a "$OUT/device.txt" < "$setup_log"
[ $rc -eq 0 ] || exit 1
status=0

if want tests; then
    for ranks in 1 2; do
        t0=$SECONDS
        DIST_TEST_BACKEND=gpu OMP_NUM_THREADS=8 mpirun_cmd "$ranks" "$BIN/tests/test_dist" \
            > "$OUT/tests-np$ranks.log" 2>&1
        rc=$?
        printf 'test_dist on %d rank(s), shards on the GPU: %s (%d s)\n' "$ranks" \
            "$([ $rc -eq 0 ] && echo OK || echo "FAIL($rc)")" $((SECONDS - t0)) | tee -a "$OUT/device.txt"
        [ $rc -eq 0 ] || { tail -30 "$OUT/tests-np$ranks.log"; status=1; }
    done
fi

PAIRS=$(dist_number "${PAIRS:-2^27}")
LOOKUPS=$(dist_number "${LOOKUPS:-2^27}")
RANGES=$(dist_number "${RANGES:-2^22}")
OPS=$(dist_number "${OPS:-2^22}")
RUNS=${RUNS:-3}
bench() { # RANKS PAIRS-PER-RANK LABEL: the totals split over the ranks
    local ranks=$1 per=$2 label=$3
    echo "== $label: $ranks rank(s), $per pairs per rank ==" | tee -a "$OUT/bench.log"
    mpirun_cmd "$ranks" "$BIN/dist/bench_dist" --pairs-per-rank "$per" \
        --lookups-per-rank $((LOOKUPS / ranks)) --ranges-per-rank $((RANGES / ranks)) \
        --update-ops-per-rank $((OPS / ranks)) --runs "$RUNS" --label "$label" --csv "$OUT/dist.csv" \
        2>&1 | tee -a "$OUT/bench.log"
    return "${PIPESTATUS[0]}"
}
if want bench; then
    bench 1 "$PAIRS" "1 rank" || status=1
    bench 2 $((PAIRS / 2)) "2 ranks share the GPU" || status=1
    if want wide; then
        bench 2 "$PAIRS" "2 ranks x all pairs" || status=1
    fi
    # the table: each step's rate and split for 1 rank against 2 ranks on the same data
    if [ -f "$OUT/dist.csv" ]; then
        echo
        python3 - "$OUT/dist.csv" <<'PY' | tee "$OUT/summary.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'configuration':24} {'step':16} {'M/s':>9} {'route':>7} {'exch':>7} {'local':>7} {'return':>7} {'B/query':>8} {'wrong':>6}")
for r in rows:
    rate = float(r['per_second']) / 1e6 if r['per_second'] else 0.0
    f = lambda k: f"{float(r[k]):7.3f}" if r[k] else "      -"
    print(f"{r['label'][:24]:24} {r['step'][:16]:16} {rate:9.1f} {f('route_s')} {f('exchange_s')} "
          f"{f('local_s')} {f('return_s')} {float(r['bytes_per_query'] or 0):8.2f} {r['wrong']:>6}")
PY
    fi
fi
exit $status
