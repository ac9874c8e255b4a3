#!/bin/bash
# Session 15, call 3: where 32-bit Zipf queries cost the PSA pipeline ≈ 1 ms more than uniform ones.
# (a) zipf_probe timing, 32-bit 2^28 and 64-bit 2^26 keys, uniform and Zipf 2^27 queries; (b) ncu
# of one unordered call on each (32-bit, then 64-bit): every kernel's duration, caches and clocks as
# in a run.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
for b in 32 64; do
    OMP_NUM_THREADS=16 timeout 120 .device-variants/zipf_probe time $b > $OUT/probe-$b.txt 2>&1
    echo "## zipf_probe $b rc $? ($SECONDS s)"; cat $OUT/probe-$b.txt
done
for b in 32 64; do
    OMP_NUM_THREADS=16 timeout 200 ncu --profile-from-start off --cache-control none --clock-control none \
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size \
        --csv --page raw .device-variants/zipf_probe ncu $b > $OUT/ncu-$b.csv 2> $OUT/ncu-$b.err
    echo "## ncu $b rc $? ($SECONDS s)"; tail -2 $OUT/ncu-$b.err
    python3 - $OUT/ncu-$b.csv <<'PY'
import csv, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines))
h = rows[0]; idx = {n: i for i, n in enumerate(h)}
for r in rows[2:]:
    name = r[idx['Kernel Name']][:60]
    print("%-60s %10s ns  rd %12s  wr %12s  grid %s" % (name, r[idx['gpu__time_duration.sum']], r[idx['dram__bytes_read.sum']],
          r[idx['dram__bytes_write.sum']], r[idx['launch__grid_size']]))
PY
done
echo "# elapsed $SECONDS s"
