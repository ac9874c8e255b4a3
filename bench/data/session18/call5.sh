#!/bin/bash
# Session 18, call 5 (measurement only): the sorted-results pipeline of 2^22 and 2^24 queries (the
# rows at 1.07-1.13x) step by step at several PSA plans (bench_phases --psa-bits): is the library's
# plan (buckets of PSA_BUCKET_BYTES, tuned at 2^27 queries) the best one at these batch sizes?
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
P=.device-bin/bench/bench_phases
OMP_NUM_THREADS=16 timeout 150 $P --bits 64 --keys-log2 26 --queries-log2 24 --group 4 --runs 7 --psa-bits 9,12,14,18 > $OUT/p64-24.txt 2>&1
echo "## 64-bit 2^26 keys, 2^24 queries rc $? ($SECONDS s)"; grep -v "^#" $OUT/p64-24.txt
OMP_NUM_THREADS=16 timeout 150 $P --bits 64 --keys-log2 26 --queries-log2 22 --group 4 --runs 7 --psa-bits 9,12,14 > $OUT/p64-22.txt 2>&1
echo "## 64-bit 2^26 keys, 2^22 queries rc $? ($SECONDS s)"; grep -v "^#" $OUT/p64-22.txt
OMP_NUM_THREADS=16 timeout 200 $P --bits 32 --keys-log2 28 --queries-log2 24 --group 4 --runs 7 --psa-bits 9,12,14,16,18 > $OUT/p32-24.txt 2>&1
echo "## 32-bit 2^28 keys, 2^24 queries rc $? ($SECONDS s)"; grep -v "^#" $OUT/p32-24.txt
echo "# elapsed $SECONDS s"
