#!/bin/bash
# Builds lb_probe against the library build in $BUILD (default /tmp/bm) into $DEST/lb_probe$SUFFIX.
set -euo pipefail
BUILD=${BUILD:-/tmp/bm}
SUFFIX=${SUFFIX:-}
SRC=$(cd "$(dirname "$0")/../../../.." && pwd)
DEST=${DEST:-$SRC/.device-variants}
mkdir -p "$DEST"
cd "$BUILD"
nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -I"$SRC" -I"$SRC/include" -Iinclude -I"$BUILD/layer-views/harmonia" \
    -o "$DEST/lb_probe$SUFFIX" "$SRC/bench/data/session19/lb-probe/lb_probe.cu" \
    -Xlinker=harmonia/libhm_front.a -Xlinker=cpu_update/libhm_cpu_update.a -Xlinker=ntg/libhm_ntg.a \
    -Xlinker=psa/libhm_psa.a -Xlinker=key_region/libhm_key_region.a \
    -Xlinker=prefix_sum/libhm_prefix_sum.a -Xlinker=key_region/libhm_kr_alloc.a -Xcompiler=-fopenmp \
    -Xlinker=/usr/lib/x86_64-linux-gnu/libxxhash.so -lm -Xcompiler=-pthread -lcudart -lcudart_static
echo "built $DEST/lb_probe$SUFFIX"
