#!/bin/bash
# Session 11: builds bench_phases against psa_partition.cu and psa_bits.c compiled with extra -D
# flags (e.g. -DPSA_FINE_BINS=0), with the library build in $BUILD (default /tmp/bm), into
# $DEST/bench_phases-NAME. Usage: build-variant.sh NAME "-D... -D..."
set -euo pipefail
BUILD=${BUILD:-/tmp/bm}
SRC=$(cd "$(dirname "$0")/../../../.." && pwd)
DEST=${DEST:-$SRC/.device-variants}
name=$1 defs=${2:-}
mkdir -p "$DEST"
cd "$BUILD"
objs=()
for f in psa/psa_partition.cu psa/psa_bits.c; do
    compile_args=$(F=$f python3 - <<'PY'
import json, os
for c in json.load(open('compile_commands.json')):
    if c['file'].endswith(os.environ['F']):
        print(c['command']); break
PY
)
    obj=$DEST/$(basename $f)-$name.o
    cmd=$(echo "$compile_args" | sed -E "s# -o [^ ]+# -o $obj#; s# -MD -MF [^ ]+##")
    eval "$cmd $defs"
    objs+=("$obj")
done
rm -f "$DEST/libhm_psa-$name.a"
ar rcs "$DEST/libhm_psa-$name.a" "${objs[@]}" psa/libcu_psa_psa_sort_cu.a.p/psa_sort.cu.o
nvcc -o "$DEST/bench_phases-$name" bench/bench_phases.p/bench_phases.cu.o \
    -Xlinker=harmonia/libhm_front.a -Xlinker=cpu_update/libhm_cpu_update.a -Xlinker=ntg/libhm_ntg.a \
    -Xlinker="$DEST/libhm_psa-$name.a" -Xlinker=key_region/libhm_key_region.a \
    -Xlinker=prefix_sum/libhm_prefix_sum.a -Xlinker=key_region/libhm_kr_alloc.a -Xcompiler=-fopenmp \
    -Xlinker=/usr/lib/x86_64-linux-gnu/libxxhash.so -lm -Xcompiler=-pthread -lcudart -lcudart_static \
    -gencode arch=compute_90,code=sm_90
rm -f "${objs[@]}" "$DEST/libhm_psa-$name.a"
echo "built $DEST/bench_phases-$name"
