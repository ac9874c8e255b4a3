#!/usr/bin/env bash
# run-nightly.sh — issue 15's items 3 and 4 in one call: the nightly flow of bench_nightly (build 2^28
# unsorted 64-bit pairs -> a 2^24-operation batch -> save -> load -> 2^24 lookups, every step timed
# and verified) with the build on the GPU and again on the CPU, then `harmonia build` of a 2^28-pair
# binary file end to end (read, build, save; its build steps with --verbose), and prints the markdown
# tables. Big files go only under a temporary folder ($TMPDIR or /tmp; about 14 GB at the peak:
# the pair file 4 GB, an index 4.6 GB, removed at the end). About 1-2 minutes on an H100 box with 16
# cores; needs ~40 GiB of memory. The first failure stops the script (exit 1).
# Usage (device tool, from the repo root, binaries staged by bench/stage-prebuilt.sh):
#   source .device-deps/setup.sh && BUILD=.device-bin bash bench/run-nightly.sh
#   QUICK=1 BUILD=build bash bench/run-nightly.sh        (small sizes: a smoke test, CPU or GPU)
# Output: markdown on stdout; the logs in $OUT (default bench/out).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
BUILD=${BUILD:-build}
BIN="$BUILD/bench/bench_nightly"
CLI="$BUILD/harmonia/cli/harmonia"
for f in "$BIN" "$CLI"; do
    if [ ! -x "$f" ]; then
        echo "run-nightly.sh: no $f (build it, or stage it with bench/stage-prebuilt.sh and set BUILD)" >&2
        exit 1
    fi
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/harmonia-nightly.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
threads=${OMP_NUM_THREADS:-$(nproc)}
if [ "${QUICK:-0}" = 1 ]; then
    sizes=(--quick)
    file_pairs=$((1 << 18))
else
    sizes=(--log2-keys 28 --log2-ops 24 --log2-queries 24)
    file_pairs=$((1 << 28))
fi
gpu=${GPU:-0}
nvidia-smi -L > /dev/null 2>&1 && gpu=1

echo "## Machine"
echo
[ -f "$BUILD/.prebuilt" ] && echo "- binaries: $(cat "$BUILD/.prebuilt")"
git log -1 --format='- commit: %h %s' 2>/dev/null || true
echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1); $(nproc) CPUs; OMP_NUM_THREADS=$threads"
echo "- memory: $(free -g | awk '/^Mem:/ {print $2 " GiB, " $7 " GiB available"}'); temporary folder $WORK ($(df -h --output=avail "$WORK" | tail -1 | tr -d ' ') free)"
[ $gpu = 1 ] && echo "- GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"

flow() { # name, backend: one nightly flow, stops the script at its first failure
    local name=$1 backend=$2
    echo
    echo "## Nightly flow, build on the $name"
    echo
    local start=$SECONDS
    OMP_NUM_THREADS=$threads "$BIN" "${sizes[@]}" --backend "$backend" --dir "$WORK" \
        > "$OUT/nightly-$name.log" 2> "$OUT/nightly-$name.err"
    local status=$?
    grep -v '^bench_nightly: all verified' "$OUT/nightly-$name.log"
    if [ $status -ne 0 ] || ! grep -q '^bench_nightly: all verified' "$OUT/nightly-$name.log"; then
        cat "$OUT/nightly-$name.err" >&2
        echo "run-nightly.sh: the $name flow FAILED (exit $status); logs in $OUT/nightly-$name.*" >&2
        exit 1
    fi
    echo "($name flow: verified, $((SECONDS - start)) s with the input's generation)"
}

[ $gpu = 1 ] && flow GPU gpu
flow CPU cpu

echo
echo "## harmonia build of a $file_pairs-pair binary file, end to end"
echo
"$CLI" generate keys --count "$file_pairs" --out "$WORK/pairs.bin" --quiet || { echo "run-nightly.sh: generate FAILED" >&2; exit 1; }
echo "- input: $WORK/pairs.bin, $(du -h "$WORK/pairs.bin" | cut -f1) (uniform 64-bit keys in random order, row-id values)"
for backend in auto cpu; do
    [ $gpu = 0 ] && [ $backend = auto ] && continue
    rm -f "$WORK/pairs.idx"
    start=$(date +%s.%N)
    OMP_NUM_THREADS=$threads "$CLI" build --input "$WORK/pairs.bin" --out "$WORK/pairs.idx" --backend $backend \
        --verbose > "$OUT/nightly-cli-$backend.log" 2> "$OUT/nightly-cli-$backend.err"
    status=$?
    end=$(date +%s.%N)
    if [ $status -ne 0 ]; then
        cat "$OUT/nightly-cli-$backend.err" >&2
        echo "run-nightly.sh: harmonia build --backend $backend FAILED" >&2
        exit 1
    fi
    echo "- \`harmonia build --backend $backend --verbose\` ($(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s with the process; the input was just written, so it reads from the page cache):"
    sed 's/^/  - /' "$OUT/nightly-cli-$backend.log"
    "$CLI" check --index "$WORK/pairs.idx" > /dev/null ||
        { echo "run-nightly.sh: harmonia check of the built index FAILED" >&2; exit 1; }
    echo "  - the index passed \`harmonia check\`"
done
echo
echo "run-nightly.sh: all verified in $SECONDS s"
