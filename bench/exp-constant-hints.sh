#!/usr/bin/env bash
# exp-constant-hints.sh — the experiment of bench/NOTES.md "constant cut and cache hints": point
# lookups (bench_gpu, 2^27 queries, ordered, G = 2, PSA off; and sorted results, G = 1, PSA on over
# the whole batch, 16 bits) under caps on the __constant__ cut of the first-child array
# (HARMONIA_CONSTANT_ENTRIES) and under the traversal loads' cache hints (HARMONIA_CACHE_HINTS:
# 1 leaves evict-first, 2 internal nodes L2 evict-last, 3 both). Prints one line per run.
# Usage (GPU machine): source .device-deps/setup.sh && BUILD=.device-bin bash bench/exp-constant-hints.sh
set -uo pipefail
OUT=${OUT:-bench/out}
BUILD=${BUILD:-build-gpu}
B=$BUILD/bench/bench_gpu
LOG=$OUT/exp-constant-hints.txt
mkdir -p "$OUT"
one() { # label, env..., -- bench args...
    local label=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" timeout 60 "$B" --runs 3 "$@" > /tmp/exp.out 2>&1
    local rc=$?
    echo "## $label ${envs[*]} $*" >> "$LOG"; cat /tmp/exp.out >> "$LOG"
    grep -E "^harmonia" /tmp/exp.out | sed "s/^/$label /" | awk -v e="${envs[*]}" '{ print $0, "  [" e "]" }'
    [ $rc -eq 0 ] || { echo "$label: exit $rc; stopping"; tail -5 /tmp/exp.out; exit 1; }
}
echo "# phase A: __constant__ cut (no hints), 64-bit, ordered G = 2 PSA off"
for k in ${EXP_SIZES:-21 23 25 26}; do
    for cap in ${EXP_CAPS:-default 0 300}; do
        e=(HARMONIA_CACHE_HINTS=0); [ $cap != default ] && e+=(HARMONIA_CONSTANT_ENTRIES=$cap)
        one "A k=$k cap=$cap" "${e[@]}" -- --bits 64 --keys-log2 $k --group 2 --psa 0
    done
done
echo "# phase B: cache hints x cut, ordered G = 2 PSA off, and sorted results G = 1 PSA on 2^27 window 16 bits"
for spec in "64 26" "32 28"; do
    set -- $spec
    for cap in ${EXP_HINT_CAPS:-default}; do
        for h in 0 1 2 3; do
            e=(HARMONIA_CACHE_HINTS=$h); [ $cap != default ] && e+=(HARMONIA_CONSTANT_ENTRIES=$cap)
            one "B bits=$1 k=$2 cap=$cap hints=$h" "${e[@]}" -- --bits $1 --keys-log2 $2 --group 2 --psa 0
            one "B bits=$1 k=$2 cap=$cap hints=$h" "${e[@]}" -- --bits $1 --keys-log2 $2 --group 1 --psa 1 --unordered \
                --window 134217728 --psa-bits 16
        done
    done
done
