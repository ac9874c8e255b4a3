#!/bin/bash
# Session 17, call 9 (profiling the small batches; small_probe of session 14 rebuilt against fb90bd6's
# libraries): (a) small_probe launch mode (rounds of 201, events around each call: empty kernels,
# Eytzinger, the library's kernel launched bare with the view's coarse table, the library's call
# with memory DEVICE and with a NULL config (the fine table)); (b) ncu of its kernels, caches and
# clocks as in a run (session 14's command).
set -u
source .device-deps/setup.sh
SECONDS=0
OMP_NUM_THREADS=16 timeout 150 .device-variants/small_probe launch > $OUT/small_probe_launch.txt 2>&1
echo "## small_probe launch rc $? ($SECONDS s)"; grep -v "^#" $OUT/small_probe_launch.txt | tail -60
OMP_NUM_THREADS=16 timeout 200 ncu --cache-control none --clock-control none -k regex:"lookup_kernel" \
    --section SpeedOfLight --section LaunchStats --csv --page details \
    .device-variants/small_probe ncu > $OUT/ncu-small.csv 2> $OUT/ncu-small.err
echo "## ncu small rc $? ($SECONDS s)"; tail -2 $OUT/ncu-small.err
python3 - $OUT/ncu-small.csv <<'PY'
import csv, sys, collections
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines)); h = rows[0]; ix = {n: i for i, n in enumerate(h)}
k = collections.OrderedDict()
for r in rows[1:]:
    d = k.setdefault(int(r[ix['ID']]), {'name': r[ix['Kernel Name']][:40], 'grid': r[ix['Grid Size']] if 'Grid Size' in ix else ''})
    d[r[ix['Metric Name']]] = r[ix['Metric Value']] + ' ' + r[ix['Metric Unit']]
for i, d in k.items():
    print(i, d['name'], d['grid'], d.get('Duration', '-'), d.get('Elapsed Cycles', '-'), d.get('SM Active Cycles', '-'), d.get('Registers Per Thread', '-'))
PY
echo "# elapsed $SECONDS s"
