#!/usr/bin/env bash
# run-gpu.sh — everything the GPU machine runs in one call: build for sm_90, the whole test suite
# (GPU tests for real), compute-sanitizer memcheck and racecheck on a quick GPU test, and the point
# lookup benchmarks. Logs go to $OUT (the device tool brings them back); a short table ends it.
# Usage (device tool, from the repo root):
#   source .device-deps/setup.sh && bash bench/run-gpu.sh [tests|sanitize|bench|psa|all]...
set -uo pipefail
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
what=("$@")
[ ${#what[@]} -eq 0 ] && what=(all)
want() { for w in "${what[@]}"; do [ "$w" = "$1" ] || [ "$w" = all ] && return 0; done; return 1; }

# xxHash is not on the GPU machine: unpack the staged Debian packages beside cmocka's
hd=/opt/hdeps
if [ -d "$hd" ] && [ ! -f "$hd/usr/include/xxhash.h" ]; then
    for f in .device-deps/libxxhash*.deb; do dpkg -x "$f" "$hd"; done
    sed -i "s#-L/usr/#-L$hd/usr/#g; s#-I/usr/#-I$hd/usr/#g; s#=/usr#=$hd/usr#g" \
        "$hd"/usr/lib/x86_64-linux-gnu/pkgconfig/libxxhash.pc
fi

nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee "$OUT/device.txt"
git log -1 --format='commit %H %s' 2>/dev/null | tee -a "$OUT/device.txt"
[ -f build-gpu/build.ninja ] || { rm -rf build-gpu; meson setup build-gpu -Dbuildtype=release -Dgpu_arch=90 > "$OUT/setup.log" 2>&1; } || { cat "$OUT/setup.log"; exit 1; }
ninja -C build-gpu > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
status=0
if want tests; then
    OMP_NUM_THREADS=16 timeout 300 meson test -C build-gpu --print-errorlogs --num-processes 2 2>&1 | tee "$OUT/tests.log" | tail -20
    grep -q "^Fail: *0" "$OUT/tests.log" || status=1
fi
if want sanitize; then
    for tool in memcheck racecheck; do
        HARMONIA_GPU_TEST_QUICK=1 timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 build-gpu/tests/test_gpu \
            > "$OUT/sanitize-$tool.log" 2>&1
        rc=$?
        echo "compute-sanitizer $tool: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.log" | tail -1)"
        [ $rc -eq 0 ] || status=1
    done
fi
if want bench; then
    B=build-gpu/bench/bench_gpu
    { $B --bits 64 --keys-log2 23 && $B --bits 64 --keys-log2 26 && $B --bits 32 --keys-log2 28; } \
        2>&1 | tee "$OUT/bench.txt" | grep -E "^#|G=|binary" || status=1
fi
if want psa; then
    # PSA windows and bits, ordered (in-kernel restore below 2^23, sort-based restore from 2^23) and unordered
    timeout 240 build-gpu/bench/bench_gpu --bits 64 --keys-log2 26 --runs 3 --group 2 --psa 1 --both-orders \
        --windows 0,8388608,33554432,134217728 --psa-bits 0,16 2>&1 | tee "$OUT/bench-psa.txt" | grep -E "^#|G=|binary" || status=1
fi
exit $status
