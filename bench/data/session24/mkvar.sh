#!/bin/bash
# mkvar.sh NAME DEFINES... : a copy of build-dev90 with ntg_kernels.cu and gpu_query.cu recompiled with DEFINES, bench_versus relinked
set -e
name=$1; shift
X=/tmp/var-$name
rm -rf $X && cp -a /work/main/build-dev90 $X
cd $X
for src in ${SRCS:-ntg/ntg_kernels.cu harmonia/gpu_query.cu}; do
  cmd=$(ninja -t commands bench/bench_versus | grep -E "nvcc .* -c .*\.\./$src|nvcc .*\.\./$src" | grep -v "^rm" | head -1)
  cmd=${cmd//..\//\/work\/main\/}
  eval "$cmd $*"
done
eval "$(ninja -t commands bench/bench_versus | tail -1)"
mkdir -p /work/main/.device-variants
cp bench/bench_versus /work/main/.device-variants/bench_versus_$name
