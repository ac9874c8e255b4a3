#!/bin/bash
# Session 11, call 1: pass 2's count from pass 1's fine bins. bench_phases of the library (fine bins
# on) against the same code built with -DPSA_FINE_BINS=0 (the count reads the keys) and with
# -DPSA_ODD_BIT_PASS=1 (17-bit plans 9 + 8: 1-byte fine bins), alternating, every result checked
# against the CPU engine by bench_phases itself.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin/bench V=.device-variants
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
run() { # binary bits keys_log2
    echo "## $(basename $1) --bits $2 --keys-log2 $3"
    timeout 100 $1 --bits $2 --keys-log2 $3 --runs 9 2>&1 | grep -E "^# bench|^partition, 1|search of the|restore|total|sorted results|of which|and the search|every|MISMATCH|rror" | grep -v "9 bits (9 + 0)"
}
SECONDS=0
for r in 1 2; do
    run $B/bench_phases 64 26; run $V/bench_phases-nofine 64 26
done
echo "# elapsed $SECONDS s"
run $B/bench_phases 32 28; run $V/bench_phases-odd1 32 28
echo "# elapsed $SECONDS s"
run $B/bench_phases 64 27; run $V/bench_phases-odd1 64 27; run $V/bench_phases-nofine 64 27
echo "# elapsed $SECONDS s"
[ $SECONDS -lt 420 ] && { run $V/bench_phases-odd1 32 28; run $B/bench_phases 32 28; }
echo "# elapsed $SECONDS s"
