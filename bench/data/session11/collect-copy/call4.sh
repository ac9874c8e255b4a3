#!/bin/bash
# Session 11, call 4: the collect copy's variants (branch collect-copy, 772e60a: NTG_COLLECT_UNROLL,
# NTG_COLLECT_VEC; built by helper-15 in /tmp/bcol-*): test_gpu of the vector build (test_ranges
# against the CPU engine), then bench_versus --only ranges of base / unroll 8 / vectors, alternating
# twice, every collect verified by bench_versus itself.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
V=.device-variants
SECONDS=0
timeout 240 $V/test_gpu-collect-vec > /tmp/tg.log 2>&1; echo "test_gpu-collect-vec rc $? $(grep -c '\[       OK \]' /tmp/tg.log) OK"
grep -E "FAILED|rror" /tmp/tg.log | head -5
echo "# elapsed $SECONDS s"
for r in 1 2; do
    for v in base u8 vec; do
        echo "## $v round $r"
        OMP_NUM_THREADS=16 timeout 120 $V/bench_versus-collect-$v --only ranges > /tmp/r.log 2>&1; echo "rc $?"
        grep -E "count   len|collect len" /tmp/r.log | sed -E 's/ +/ /g'
        cp /tmp/r.log $OUT/ranges-$v-$r.log
    done
    echo "# elapsed $SECONDS s"
done
