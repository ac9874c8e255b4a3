#!/bin/bash
# Session 27, call 5 (H100, measurement only): where the key-range halves' 8 % comes from —
# per-kernel durations (ncu gpu__time_duration, everything else as in a run) of the sorted call on
# 2^27 queries over 64-bit 2^26 keys in one call (S = 1) and in two key-range halves (S = 2, one
# stream); overlap_probe again at 2^27 and at 2^26 queries.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
for S in 1 2; do
  timeout 200 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --csv --page raw \
      .device-variants/overlap_probe 26 27 $S 2 1 > $OUT/ncu-S$S.csv 2> $OUT/ncu-S$S.err
  echo "## ncu S=$S rc $? ($SECONDS s)"; grep -h "S=" $OUT/ncu-S$S.csv | head -3
  python3 - $OUT/ncu-S$S.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
hdr = rows[0]; ix = {h: i for i, h in enumerate(hdr)}
k = ix.get("Kernel Name"); d = ix.get("gpu__time_duration.sum")
tot = collections.OrderedDict(); cnt = collections.Counter()
for r in rows[2:]:
    try: v = float(r[d])
    except: continue
    name = r[k].split("(")[0].replace("void ", "")[:60]
    tot[name] = tot.get(name, 0) + v; cnt[name] += 1
for name, v in tot.items(): print(f"  {name:60s} n={cnt[name]:3d} total {v/1e3:9.1f} us")
print("  all", sum(tot.values())/1e3, "us")
PY
done
for q in 27 26; do OMP_NUM_THREADS=16 timeout 200 .device-variants/overlap_probe 26 $q 0 7 0 > $OUT/overlap-$q.txt 2>&1; echo "## overlap $q rc $? ($SECONDS s)"; cat $OUT/overlap-$q.txt; done
