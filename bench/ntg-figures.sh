#!/usr/bin/env bash
# ntg-figures.sh — issue 6, item 5: for F = 16, 32, 64 and 128, the NTG model's choice of G against
# the measured best on this machine's GPU (`harmonia profile-ntg`), with results in query order
# (PSA auto = off) and in PSA order (--unordered: PSA on). One key set of 2^26 uniform 64-bit keys
# (L = 16, leaves full), 2^24 queries drawn from the keys (seed 1), median of 5 runs per G.
# Writes $OUT/ntg-figures.txt (every table), $OUT/ntg-f<F>.svg (query order) and prints a summary
# table last. The indexes are scratch files (--no-store: the choice is printed, not stored).
# Usage (GPU machine, repo root):
#   source .device-deps/setup.sh && bash bench/ntg-figures.sh
# Sizes can be changed for a quick look: NTG_KEYS=2^20 NTG_QUERIES=2^20 bash bench/ntg-figures.sh
# BUILD=dir picks the build folder (default build-gpu, configured for sm_90 if missing; a folder of
# binaries from bench/stage-prebuilt.sh is used as it is).
set -uo pipefail
OUT=${OUT:-bench/out}
BUILD=${BUILD:-build-gpu}
KEYS=${NTG_KEYS:-2^26}
QUERIES=${NTG_QUERIES:-2^24}
FANOUTS=${NTG_FANOUTS:-16 32 64 128}
WORK=${NTG_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/ntg-figures.XXXXXX")}
mkdir -p "$OUT" "$WORK"
trap 'rm -rf "$WORK"' EXIT

# xxHash is not on the GPU machine: unpack the staged Debian packages beside cmocka's (as run-gpu.sh)
hd=/opt/hdeps
if [ -d "$hd" ] && [ ! -f "$hd/usr/include/xxhash.h" ]; then
    for f in .device-deps/libxxhash*.deb; do dpkg -x "$f" "$hd"; done
    sed -i "s#-L/usr/#-L$hd/usr/#g; s#-I/usr/#-I$hd/usr/#g; s#=/usr#=$hd/usr#g" \
        "$hd"/usr/lib/x86_64-linux-gnu/pkgconfig/libxxhash.pc
fi
if [ ! -f "$BUILD/.prebuilt" ]; then   # binaries from bench/stage-prebuilt.sh need no build
    if [ ! -f "$BUILD/build.ninja" ]; then
        rm -rf "$BUILD"
        meson setup "$BUILD" -Dbuildtype=release -Dgpu_arch=90 > "$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log"; exit 1; }
    fi
    ninja -C "$BUILD" harmonia/cli/harmonia > "$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; exit 1; }
fi
T=$BUILD/harmonia/cli/harmonia
LOG=$OUT/ntg-figures.txt
{
    echo "# ntg-figures.sh: keys $KEYS, queries $QUERIES, F = $FANOUTS, $(date -u +%Y-%m-%dT%H:%MZ)"
    git log -1 --format='# commit %H %s' 2>/dev/null
    $T info --device
} | tee "$LOG"

$T generate keys --count "$KEYS" --seed 42 --out "$WORK/keys.bin" --quiet >> "$LOG" 2>&1 || { tail -5 "$LOG"; exit 1; }
summary=()
status=0
for F in $FANOUTS; do
    idx=$WORK/f$F.idx
    $T build --input "$WORK/keys.bin" --fanout "$F" --leaf-size 16 --out "$idx" --quiet >> "$LOG" 2>&1 ||
        { echo "build F = $F failed"; tail -5 "$LOG"; status=1; continue; }
    for order in query psa; do
        extra=(); [ "$order" = psa ] && extra=(--unordered)
        plot=(); [ "$order" = query ] && plot=(--plot "$OUT/ntg-f$F.svg")
        echo >> "$LOG"
        echo "## F = $F, results in $order order" >> "$LOG"
        text=$($T profile-ntg --index "$idx" --count "$QUERIES" --runs 5 --no-verify --no-store --quiet "${extra[@]}" "${plot[@]}" 2>&1)
        rc=$?
        echo "$text" >> "$LOG"
        if [ $rc -ne 0 ]; then echo "profile-ntg F = $F ($order order) failed:"; echo "$text" | tail -5; status=1; continue; fi
        model=$(echo "$text" | sed -n "s/^model's choice: G = \([0-9]*\).*/\1/p")
        best=$(echo "$text" | sed -n 's/^measured best:  G = \([0-9]*\).*/\1/p')
        agree=$([ -n "$best" ] && { [ "$model" = "$best" ] && echo yes || echo no; } || echo "-")
        # throughput of both from the table: columns G, steps, ratio, ms, G queries/s
        rate_of() { echo "$text" | awk -v g="$1" '$1 == g && NF >= 5 { print $5; exit }'; }
        summary+=("$(printf '| %3s | %-5s | %5s | %8s | %5s | %8s | %-5s |' "$F" "$order" "$model" "$(rate_of "$model")" \
            "${best:--}" "$([ -n "$best" ] && rate_of "$best" || echo -)" "$agree")")
    done
done
{
    echo
    echo "| F | results | model's G | its G q/s | measured best G | its G q/s | same |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${summary[@]}"
} | tee -a "$LOG"
exit $status
