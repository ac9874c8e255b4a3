#!/usr/bin/env bash
# run-update.sh — issue 15's CPU measurements in one call: the machine (CPU, memory, huge pages,
# copy bandwidth), then bench_update: the paper's mix (4M operations on a 2^26-key 64-bit tree: the
# first batch into fresh arrays, the next ones into the previous layout's, one with
# free_previous_layout), insert-only / delete-only / mixed batches of 2^16, 2^20, 2^24 operations,
# the full build of the same tree from unsorted pairs, and the bulk build of 2^28 pairs from
# unsorted input with its steps; then the paper mix with plain stores instead of streaming ones, and
# at 4 and 8 threads (scaling). Every step is verified (integrity checker, lookups against a model);
# the first failure stops the script (exit 1). About 2-3 minutes on 16 cores; needs ~20 GiB.
# Usage (device tool, from the repo root, binaries staged by bench/stage-prebuilt.sh):
#   BUILD=.device-bin bash bench/run-update.sh          (or BUILD=build-cpu on any machine)
#   QUICK=1 BUILD=build-cpu bash bench/run-update.sh    (small sizes: a smoke test of the script)
# Output: markdown tables on stdout; the full logs in $OUT (default bench/out).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
BUILD=${BUILD:-build}
BIN="$BUILD/bench/bench_update"
if [ ! -x "$BIN" ]; then
    echo "run-update.sh: no $BIN (build it, or stage it with bench/stage-prebuilt.sh and set BUILD)" >&2
    exit 1
fi
threads=${OMP_NUM_THREADS:-$(nproc)}
quick=${QUICK:-0}

{
    echo "## Machine"
    echo
    [ -f "$BUILD/.prebuilt" ] && echo "- binaries: $(cat "$BUILD/.prebuilt")"
    git log -1 --format='- commit: %h %s' 2>/dev/null || true
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1); $(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Thread(s) per core: *//p') threads a core, $(lscpu 2>/dev/null | sed -n 's/^NUMA node(s): *//p') NUMA nodes; L3 $(lscpu 2>/dev/null | sed -n 's/^L3 cache: *//p')"
    echo "- memory: $(free -g | awk '/^Mem:/ {print $2 " GiB, " $7 " GiB available"}'); transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null), defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null)"
    echo "- OMP_NUM_THREADS=$threads OMP_PROC_BIND=${OMP_PROC_BIND:-unset}"
    echo
} | tee "$OUT/update-machine.md"

run() { # name, threads, arguments...: runs bench_update, stops the script at its first failure
    local name=$1 t=$2 keep='.'
    shift 2
    [ "$name" = main ] || keep='^#|^\| (paper|batch|---)' # the others: the paper mix rows only
    echo
    echo "## $name ($t threads)"
    echo
    local start=$SECONDS
    OMP_NUM_THREADS=$t "$BIN" "$@" > "$OUT/update-$name.log" 2> "$OUT/update-$name.err"
    local status=$?
    grep -v '^bench_update: all verified' "$OUT/update-$name.log" | grep -E "$keep"
    if [ $status -ne 0 ] || ! grep -q '^bench_update: all verified' "$OUT/update-$name.log"; then
        cat "$OUT/update-$name.err" >&2
        echo "run-update.sh: $name FAILED (exit $status); logs in $OUT/update-$name.*" >&2
        exit 1
    fi
    echo
    echo "($name: verified, $((SECONDS - start)) s)"
}

if [ "$quick" = 1 ]; then
    run main "$threads" --quick
    run plain-stores "$threads" --quick --no-streaming --sizes 0 --build-log2 0 --bandwidth-mib 0
    run half-threads $(( (threads + 1) / 2 )) --quick --sizes 0 --build-log2 0 --bandwidth-mib 0
else
    run main "$threads"
    run plain-stores "$threads" --no-streaming --paper-batches 2 --sizes 0 --build-log2 0 --bandwidth-mib 0
    for t in 8 4; do
        [ "$t" -lt "$threads" ] || continue
        run "threads-$t" "$t" --paper-batches 2 --sizes 0 --build-log2 0 --bandwidth-mib 2048
    done
fi
echo
echo "run-update.sh: all verified in $SECONDS s"
