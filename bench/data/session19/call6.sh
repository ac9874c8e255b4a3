#!/bin/bash
# Session 19, call 6: the descent path for results in query order (32-bit keys below one query a
# leaf): (a) tests.list through run-gpu.sh; (b) bench_versus --only batch, 2b9227b's binary (old)
# and the working tree's (new), alternating, two rounds each.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 300 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -26 $OUT/run-tests.txt | grep -v " OK "
for r in 1 2; do
  OMP_NUM_THREADS=16 timeout 120 .device-variants/bench_versus_old --only batch --out-dir /tmp/v-old-$r > $OUT/batch-old-$r.log 2>&1
  echo "## old round $r rc $? ($SECONDS s)"
  OMP_NUM_THREADS=16 timeout 120 .device-bin/bench/bench_versus --only batch --out-dir /tmp/v-new-$r > $OUT/batch-new-$r.log 2>&1
  echo "## new round $r rc $? ($SECONDS s)"
done
python3 bench/data/session13/summ.py $OUT/batch-old-1.log $OUT/batch-new-1.log $OUT/batch-old-2.log $OUT/batch-new-2.log
grep -h "MISMATCH\|FAIL" $OUT/batch-new-*.log | head -5
echo "# elapsed $SECONDS s"
