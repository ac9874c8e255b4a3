#!/bin/bash
# Builds bench_phases against psa_partition.cu compiled with other pass-tile shapes (-D overrides of
# psa/psa_policy.h), next to the library build in $BUILD (default /tmp/bm), into $DEST.
# Usage: build-variants.sh NAME "-DPSA_THREADS=.. -DPSA_ITEMS=.. -DPSA_MIN_BLOCKS=.." [NAME "DEFS"]...
set -euo pipefail
BUILD=${BUILD:-/tmp/bm}
SRC=$(cd "$(dirname "$0")/../../../.." && pwd)
DEST=${DEST:-$SRC/.device-variants}
mkdir -p "$DEST"
cd "$BUILD"
compile_args=$(python3 - <<'PY'
import json
for c in json.load(open('compile_commands.json')):
    if c['file'].endswith('psa/psa_partition.cu'):
        print(c['command']); break
PY
)
while [ $# -ge 2 ]; do
    name=$1 defs=$2; shift 2
    obj=$DEST/psa_partition-$name.o
    # the library's own command, with the defines added and the output renamed
    cmd=$(echo "$compile_args" | sed -E "s# -o [^ ]+# -o $obj#; s# -MD -MF [^ ]+##")
    eval "$cmd $defs"
    rm -f "$DEST/libhm_psa-$name.a"
    ar rcs "$DEST/libhm_psa-$name.a" "$obj" psa/libcu_psa_psa_sort_cu.a.p/psa_sort.cu.o psa/libhm_psa.a.p/psa_bits.c.o
    nvcc -o "$DEST/bench_phases-$name" bench/bench_phases.p/bench_phases.cu.o \
        -Xlinker=harmonia/libhm_front.a -Xlinker=cpu_update/libhm_cpu_update.a -Xlinker=ntg/libhm_ntg.a \
        -Xlinker="$DEST/libhm_psa-$name.a" -Xlinker=key_region/libhm_key_region.a \
        -Xlinker=prefix_sum/libhm_prefix_sum.a -Xlinker=key_region/libhm_kr_alloc.a -Xcompiler=-fopenmp \
        -Xlinker=/usr/lib/x86_64-linux-gnu/libxxhash.so -lm -Xcompiler=-pthread -lcudart -lcudart_static \
        -gencode arch=compute_90,code=sm_90
    echo "built $DEST/bench_phases-$name ($defs)"
done
