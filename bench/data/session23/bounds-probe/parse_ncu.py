#!/usr/bin/env python3
"""Session 23: bounds_probe's ncu CSV (--csv --log-file) and its stdout -> per workload, the summed
kernel time, DRAM bytes read + written per lookup (or per gathered load), and the DRAM rate.
Usage: parse_ncu.py NCU_CSV PROBE_STDOUT [QUERIES_BY_INDEX as name=log2 is read from the stdout lines]"""
import csv, re, sys, collections

UNITS = {'byte': 1, 'Kbyte': 1e3, 'Mbyte': 1e6, 'Gbyte': 1e9, 'Tbyte': 1e12, 'KB': 1e3, 'MB': 1e6, 'GB': 1e9,
         'nsecond': 1e-9, 'usecond': 1e-6, 'msecond': 1e-3, 'second': 1.0, 'ns': 1e-9, 'us': 1e-6, 'ms': 1e-3, 'usecond': 1e-6,
         '%': 1.0, 'sector': 1, 'Ksector': 1e3, 'Msector': 1e6, 'Gsector': 1e9}

def value(v, unit):
    v = float(v.replace(',', ''))
    return v * UNITS.get(unit, 1.0)

lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines))
h = rows[0]; idx = {n: i for i, n in enumerate(h)}
kernels = collections.OrderedDict()
for r in rows[1:]:
    k = kernels.setdefault(int(r[idx['ID']]), {'name': r[idx['Kernel Name']], 'grid': r[idx['Grid Size']]})
    k[r[idx['Metric Name']]] = value(r[idx['Metric Value']], r[idx['Metric Unit']])
names = {}
for l in open(sys.argv[2]):
    m = re.match(r'ncu (\d+): (.*)', l.strip())
    if m:
        names[int(m.group(1))] = m.group(2)
groups = collections.OrderedDict()
current = None
for kid, k in kernels.items():
    if 'marker_kernel' in k['name']:
        current = int(re.match(r'\((\d+)', k['grid']).group(1)) - 1
        groups[current] = []
    elif current is not None:
        groups[current].append(k)
print('| workload | kernels | time (us) | DRAM read + written (MB) | bytes a lookup (a load) | DRAM rate (GB/s) | % of DRAM peak (time-weighted) |')
print('| --- | --- | --- | --- | --- | --- | --- |')
for g, ks in groups.items():
    name = names.get(g, str(g))
    m = re.search(r'2\^(\d+)', name.split(',', 1)[1] if ',' in name else name)
    nq = 2 ** int(m.group(1)) if m else 0
    if 'gather' in name:  # ceiling_gather's warm-up kernel runs inside the profiled range too
        nq *= len(ks)
    t = sum(k.get('gpu__time_duration.sum', 0) for k in ks)
    b = sum(k.get('dram__bytes_read.sum', 0) + k.get('dram__bytes_write.sum', 0) for k in ks)
    pct = sum(k.get('dram__throughput.avg.pct_of_peak_sustained_elapsed', 0) * k.get('gpu__time_duration.sum', 0) for k in ks) / t if t else 0
    short = ', '.join(re.sub(r'[<(].*', '', k['name']) + ' %.0f' % (k.get('gpu__time_duration.sum', 0) * 1e6) for k in ks)
    print(f'| {name} | {short} | {t*1e6:.1f} | {b/1e6:.1f} | {b/nq if nq else 0:.1f} | {b/t/1e9 if t else 0:.0f} | {pct:.1f} |')
if len(sys.argv) > 3 and sys.argv[3] == '--kernels':  # each kernel of each workload
    print()
    for g, ks in groups.items():
        name = names.get(g, str(g))
        m = re.search(r'2\^(\d+)', name.split(',', 1)[1] if ',' in name else name)
        nq = 2 ** int(m.group(1)) if m else 1
        print(f'## {name}')
        for k in ks:
            t = k.get('gpu__time_duration.sum', 0)
            b = k.get('dram__bytes_read.sum', 0) + k.get('dram__bytes_write.sum', 0)
            short = re.sub(r'<unnamed>::|^void ', '', k['name'])
            short = short[:short.find('(')] if '(' in short else short
            print(f"   {short[:48]:48s} {t*1e6:9.1f} us {b/nq:7.1f} B a query {b/t/1e9 if t else 0:6.0f} GB/s "
                  f"{k.get('dram__throughput.avg.pct_of_peak_sustained_elapsed', 0):5.1f} % of DRAM peak")
