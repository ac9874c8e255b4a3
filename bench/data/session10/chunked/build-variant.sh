#!/bin/bash
# Builds bench_phases against another psa_partition.cu (a file, e.g. main's before the change, from
# `git show REV:psa/psa_partition.cu`), with the library build in $BUILD (default /tmp/bm), into
# $DEST/bench_phases-NAME. Usage: build-variant.sh NAME FILE ["-D..."]
set -euo pipefail
BUILD=${BUILD:-/tmp/bm}
SRC=$(cd "$(dirname "$0")/../../../.." && pwd)
DEST=${DEST:-$SRC/.device-variants}
name=$1 file=$(realpath "$2") defs=${3:-}
mkdir -p "$DEST"
cd "$BUILD"
compile_args=$(python3 - <<'PY'
import json
for c in json.load(open('compile_commands.json')):
    if c['file'].endswith('psa/psa_partition.cu'):
        print(c['command']); break
PY
)
obj=$DEST/psa_partition-$name.o
cmd=$(echo "$compile_args" | sed -E "s# -o [^ ]+# -o $obj#; s# -MD -MF [^ ]+##; s#[^ ]*psa/psa_partition.cu( |\$)#$file #")
eval "$cmd $defs"
rm -f "$DEST/libhm_psa-$name.a"
ar rcs "$DEST/libhm_psa-$name.a" "$obj" psa/libcu_psa_psa_sort_cu.a.p/psa_sort.cu.o psa/libhm_psa.a.p/psa_bits.c.o
nvcc -o "$DEST/bench_phases-$name" bench/bench_phases.p/bench_phases.cu.o \
    -Xlinker=harmonia/libhm_front.a -Xlinker=cpu_update/libhm_cpu_update.a -Xlinker=ntg/libhm_ntg.a \
    -Xlinker="$DEST/libhm_psa-$name.a" -Xlinker=key_region/libhm_key_region.a \
    -Xlinker=prefix_sum/libhm_prefix_sum.a -Xlinker=key_region/libhm_kr_alloc.a -Xcompiler=-fopenmp \
    -Xlinker=/usr/lib/x86_64-linux-gnu/libxxhash.so -lm -Xcompiler=-pthread -lcudart -lcudart_static \
    -gencode arch=compute_90,code=sm_90
rm -f "$obj" "$DEST/libhm_psa-$name.a"
echo "built $DEST/bench_phases-$name"
