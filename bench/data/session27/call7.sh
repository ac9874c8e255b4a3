#!/bin/bash
# Session 27, call 7 (H100, measurement only): per-kernel times (ncu gpu__time_duration, caches and
# clocks as in a run) of the sorted call on 2^27 queries over 64-bit 2^26 keys (overlap_probe, one
# call, S = 1), with the default plan (8 + 8 bits) and PSA_PASS1_FEWER = 1 (7 + 9) and 2 (6 + 10)
# (libharmonia.so of each build).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader
for w in new f1 f2; do
  L=; [ $w != new ] && L=$PWD/.device-variants/lib-$w
  LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 200 ncu --cache-control none --clock-control none \
      --metrics gpu__time_duration.sum --csv --page raw .device-variants/overlap_probe 26 27 1 2 1 > $OUT/ncu-$w.csv 2> $OUT/ncu-$w.err
  echo "## ncu $w rc $? ($SECONDS s)"; grep -h "S=" $OUT/ncu-$w.csv | head -2
  python3 - $OUT/ncu-$w.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
hdr = rows[0]; ix = {h: i for i, h in enumerate(hdr)}
k = ix["Kernel Name"]; d = ix["gpu__time_duration.sum"]; g = ix["Grid Size"]
per = collections.defaultdict(list)
for r in rows[1:]:
    try: v = float(r[d].replace(",", ""))
    except ValueError: continue
    name = r[k].split("(")[0].replace("void ", "").replace("<unnamed>::", "")[:40]
    if any(s in name for s in ("pass_kernel", "search_kernel", "hist2", "scan1", "Scan")):
        per[name + " " + r[g]].append(v / 1e3)
for key, v in per.items(): print(f"  {key:60s} n={len(v)} us {' '.join(f'{x:8.1f}' for x in v)}")
PY
done
