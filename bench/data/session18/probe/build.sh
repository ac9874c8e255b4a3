#!/bin/bash
# Builds small_probe against the library and suite objects of the build in $BUILD (default /tmp/bm)
# into $DEST (.device-variants).
set -euo pipefail
BUILD=${BUILD:-/tmp/bm}
SRC=$(cd "$(dirname "$0")/../../../.." && pwd)
DEST=${DEST:-$SRC/.device-variants}
mkdir -p "$DEST"
cd "$BUILD"
nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -I"$SRC" -I"$SRC/include" -Iinclude -Xcompiler=-fopenmp \
    -o "$DEST/probe18" "$SRC/bench/data/session18/probe/probe18.cu" \
    bench/libsuite_suite_util_cu.a.p/suite_util.cu.o bench/libsuite_suite_data_cu.a.p/suite_data.cu.o \
    bench/libsuite_suite_baselines_cu.a.p/suite_baselines.cu.o bench/libsuite_suite_verify_cu.a.p/suite_verify.cu.o \
    -Xlinker=harmonia/libhm_front.a -Xlinker=cpu_update/libhm_cpu_update.a -Xlinker=ntg/libhm_ntg.a \
    -Xlinker=psa/libhm_psa.a -Xlinker=key_region/libhm_key_region.a \
    -Xlinker=prefix_sum/libhm_prefix_sum.a -Xlinker=key_region/libhm_kr_alloc.a \
    -Xlinker=/usr/lib/x86_64-linux-gnu/libxxhash.so -lm -Xcompiler=-pthread -lcudart -lcudart_static
echo "built $DEST/probe18"
