#!/usr/bin/env bash
# Session 8, device call 1: the fixed-shape descent kernels (new binaries in $BUILD) against the
# binaries of f8e44d7 (.device-old): test_gpu, bench_versus --only batch of both, and a G sweep
# with profile-ntg at small and medium batches on the default shapes. Output under $OUT.
set -u
H=$BUILD/harmonia/cli/harmonia
echo "== test_gpu"; timeout 240 $BUILD/tests/test_gpu > $OUT/test_gpu.txt 2>&1; echo "test_gpu rc $?"; grep -E "PASSED|FAILED" $OUT/test_gpu.txt | head
for v in new old; do
  B=$BUILD; [ $v = old ] && B=.device-old
  echo "== versus batch $v"
  OMP_NUM_THREADS=16 timeout 200 $B/bench/bench_versus --only batch > $OUT/versus-batch-$v.log 2>&1; echo "rc $?"
  grep -E "^##|=>" $OUT/versus-batch-$v.log | head -60
done
echo "== G sweep"
$H generate keys --count 67108864 --bits 64 --seed 7 --out /tmp/k64.bin --quiet
$H build --input /tmp/k64.bin --out /tmp/k64.idx --quiet
for c in 1024 16384 262144 1048576 4194304; do
  echo "== k64 count $c"; timeout 60 $H profile-ntg --index /tmp/k64.idx --count $c --runs 21 --no-store --quiet 2>&1 | tail -8
done
for c in 1024 16384 262144; do
  echo "== OLD k64 count $c"; timeout 60 .device-old/harmonia/cli/harmonia profile-ntg --index /tmp/k64.idx --count $c --runs 21 --no-store --quiet 2>&1 | tail -8
done
rm -f /tmp/k64.bin /tmp/k64.idx
$H generate keys --count 268435456 --bits 32 --seed 7 --out /tmp/k32.bin --quiet
$H build --input /tmp/k32.bin --out /tmp/k32.idx --quiet
for c in 1024 16384 262144 1048576 4194304; do
  echo "== k32 count $c"; timeout 60 $H profile-ntg --index /tmp/k32.idx --count $c --runs 21 --no-store --quiet 2>&1 | tail -8
done
