#!/bin/bash
# Session 27, call 9 (H100, measurement only): per-kernel times (ncu gpu__time_duration, caches and
# clocks as in a run) of one call of 2^27 queries over 64-bit 2^26 and 2^27 keys (overlap_probe, S = 1),
# sorted results and query order, with the default plans (8 + 8, 8 + 9 bits) and 16 KiB buckets (b16: 7 + 8, 8 + 8;
# libharmonia.so of each build).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader
for kl in 26 27; do
for w in new b16; do
  L=; [ $w != new ] && L=$PWD/.device-variants/lib-$w
  LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 200 ncu --cache-control none --clock-control none \
      --metrics gpu__time_duration.sum --csv --page raw .device-variants/overlap_probe $kl 27 1 2 0 > $OUT/ncu-$kl-$w.csv 2> $OUT/ncu-$kl-$w.err
  echo "## ncu 2^$kl keys $w rc $? ($SECONDS s)"; grep -h "S=" $OUT/ncu-$kl-$w.csv | head -2
  python3 - $OUT/ncu-$kl-$w.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
hdr = rows[0]; ix = {h: i for i, h in enumerate(hdr)}
k = ix["Kernel Name"]; d = ix["gpu__time_duration.sum"]; g = ix["Grid Size"]
per = collections.defaultdict(list)
for r in rows[1:]:
    try: v = float(r[d].replace(",", ""))
    except ValueError: continue
    name = r[k].split("(")[0].replace("void ", "").replace("<unnamed>::", "")[:40]
    if any(s in name for s in ("pass_kernel", "search_kernel", "hist2", "scan1", "Scan", "restore")):
        per[name + " " + r[g]].append(v / 1e3)
for key, v in per.items(): print(f"  {key:60s} n={len(v)} us {' '.join(f'{x:8.1f}' for x in v)}")
PY
done
done
