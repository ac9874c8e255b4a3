#!/bin/bash
# Session 24, call 5 (H100): the warp-state breakdown (every stall reason, ncu's raw page of the
# WarpStateStats and SchedulerStats sections) of the kernels call 4 profiled: session 23's
# bounds_probe (c41736e's library) — the 2^16 and 2^18 lookups, the partition's passes and the staged
# search of the sorted 2^23-2^24 windows.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
OMP_NUM_THREADS=16 timeout 300 ncu --profile-from-start off --cache-control all --clock-control none \
    --kernel-name regex:"^(pass_kernel|lookup_kernel|search_kernel)" --launch-count 6 \
    --section WarpStateStats --section SchedulerStats --page raw --print-units base --csv \
    .device-variants/bounds_probe ncu > $OUT/ncu-raw.csv 2> $OUT/ncu-stderr.txt
echo "## ncu rc $? ($SECONDS s)"
python3 - $OUT/ncu-raw.csv <<'PY'
import csv, sys, re
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
names = rows[head]
k = names.index("Kernel Name")
data = rows[head + 2:] if rows[head + 1][0] == "" else rows[head + 1:]
for r in data:
    if len(r) != len(names):
        continue
    kern = re.sub(r"\(.*", "", r[k]).replace("(anonymous namespace)::", "")[:60]
    stalls = []
    for i, n in enumerate(names):
        if "stalled" in n and not n.endswith("_not_issued") and "not_issued" not in n:
            try:
                stalls.append((float(r[i].replace(",", "")), n.replace("smsp__pcsamp_warps_issue_stalled_", "").replace("smsp__warp_issue_stalled_", "").replace("_per_warp_active.pct", "")[:60]))
            except ValueError:
                pass
    stalls.sort(reverse=True)
    other = {n: r[i] for i, n in enumerate(names) if n in ("smsp__issue_active.avg.pct_of_peak_sustained_active", "smsp__warps_eligible.avg.per_cycle_active", "smsp__warps_active.avg.per_cycle_active")}
    print(kern, r[names.index("Grid Size")] if "Grid Size" in names else "", other)
    print("   ", ", ".join(f"{n} {v:.1f}" for v, n in stalls[:10]))
PY
echo "# elapsed $SECONDS s"
