#!/bin/bash
# Session 12, final call D: what bounds the sparse sorted-order rows — ncu's DRAM sectors and time
# of each kernel of the library's call, the library's pipeline by hand and the 16-bit sort + binary
# search baseline (sort_sweep ncu: 64-bit 2^26 keys / 2^22 queries, 32-bit 2^28 / 2^24), and the
# copy and random-gather rates in a process of the same binary.
set -u
source .device-deps/setup.sh
SECONDS=0
.device-variants/sort_sweep rates | tee $OUT/rates.txt
timeout 400 ncu --metrics gpu__time_duration.sum,dram__sectors_read.sum,dram__sectors_write.sum --csv \
    .device-variants/sort_sweep ncu > $OUT/ncu.csv 2> $OUT/ncu.err
echo "ncu rc $? ($SECONDS s)"; tail -2 $OUT/ncu.err
python3 - $OUT/ncu.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; rows = rows[1:]
ki, mi, vi, ii = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value"), head.index("ID")
kern = {}
for r in rows:
    k = kern.setdefault(int(r[ii]), {"name": r[ki]})
    k[r[mi]] = float(r[vi].replace(",", ""))
names = ["library call", "library's B and G by hand", "16-bit sort + binary search"]
cases = [("64-bit 2^26 keys, 2^22 queries", 1 << 22), ("32-bit 2^28 keys, 2^24 queries", 1 << 24)]
pipe, out = [], []
for i in sorted(kern):
    pipe.append(kern[i])
    if "lookup_kernel" in kern[i]["name"] or "bsearch_kernel" in kern[i]["name"]:
        out.append(pipe); pipe = []
for n, p in enumerate(out):
    case, q = cases[n // 3]
    t = sum(k.get("gpu__time_duration.sum", 0) for k in p) / 1e3
    rd = sum(k.get("dram__sectors_read.sum", 0) for k in p); wr = sum(k.get("dram__sectors_write.sum", 0) for k in p)
    print(f"{case} | {names[n % 3]}: {len(p)} kernels, {t:.1f} us of kernels, DRAM {rd / q:.2f} sectors read + {wr / q:.2f} written a lookup ({32 * (rd + wr) / q:.0f} B)")
    for k in p:
        print(f"    {k['name'][:60]:60s} {k.get('gpu__time_duration.sum', 0) / 1e3:8.1f} us  rd {k.get('dram__sectors_read.sum', 0) / q:6.2f}  wr {k.get('dram__sectors_write.sum', 0) / q:6.2f}")
PY
echo "# elapsed $SECONDS s"
