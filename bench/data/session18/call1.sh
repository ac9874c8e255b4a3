#!/bin/bash
# Session 18, call 1 (profiling; nothing built on the device): ncu --set full of the 2^18-query
# batches' kernels (the library's lookup_kernel through the NULL-config and memory-DEVICE calls, the
# Eytzinger baseline's eyt_lookup_kernel), 64-bit 2^26 and 32-bit 2^28 keys, caches and clocks as
# in a run: is the 2^18 descent bound by DRAM bytes, by latency (lookups in flight), or by issue?
set -u
source .device-deps/setup.sh
SECONDS=0
PROBE_SIZES=18 OMP_NUM_THREADS=16 timeout 300 ncu --cache-control none --clock-control none \
    -k regex:"lookup_kernel|eyt_lookup_kernel" --set full --csv --page details \
    .device-variants/small_probe ncu > $OUT/ncu-18.csv 2> $OUT/ncu-18.err
echo "## ncu 2^18 rc $? ($SECONDS s)"; tail -3 $OUT/ncu-18.err
python3 - $OUT/ncu-18.csv <<'PY'
import csv, sys, collections
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines)); h = rows[0]; ix = {n: i for i, n in enumerate(h)}
k = collections.OrderedDict()
for r in rows[1:]:
    d = k.setdefault(int(r[ix['ID']]), {'name': r[ix['Kernel Name']][:30]})
    d[r[ix['Metric Name']]] = r[ix['Metric Value']]
want = ['Duration', 'DRAM Throughput', 'Memory Throughput', 'L1/TEX Hit Rate', 'L2 Hit Rate', 'Achieved Occupancy',
        'Registers Per Thread', 'Issue Slots Busy', 'Executed Ipc Active', 'Warp Cycles Per Issued Instruction',
        'Grid Size']
print('id | name | ' + ' | '.join(want))
for i, d in k.items():
    print(i, '|', d['name'], '|', ' | '.join(d.get(w, '-') for w in want))
PY
echo "# elapsed $SECONDS s"
