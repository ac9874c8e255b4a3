#!/bin/bash
# Builds pass_probe (with the suite's data generators and ceilings) against the library build in $BUILD
# (default /tmp/bm) into $DEST (.device-variants).
set -euo pipefail
BUILD=${BUILD:-/tmp/bm}
SRC=$(cd "$(dirname "$0")/../../../.." && pwd)
DEST=${DEST:-$SRC/.device-variants}
mkdir -p "$DEST"
cd "$BUILD"
nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -I"$SRC" -I"$SRC/include" -Iinclude -I"$BUILD/layer-views/harmonia" \
    -o "$DEST/pass_probe${SUFFIX:-}" "$SRC/bench/data/session25/pass-probe/pass_probe.cu" "$SRC/bench/suite_data.cu" \
    "$SRC/bench/suite_util.cu" "$SRC/bench/suite_ceilings.cu" \
    -Xlinker=harmonia/libhm_front.a -Xlinker=cpu_update/libhm_cpu_update.a -Xlinker=ntg/libhm_ntg.a \
    -Xlinker=psa/libhm_psa.a -Xlinker=key_region/libhm_key_region.a \
    -Xlinker=prefix_sum/libhm_prefix_sum.a -Xlinker=key_region/libhm_kr_alloc.a -Xcompiler=-fopenmp \
    -Xlinker=/usr/lib/x86_64-linux-gnu/libxxhash.so -lm -Xcompiler=-pthread -lcudart -lcudart_static
echo "built $DEST/pass_probe${SUFFIX:-}"
