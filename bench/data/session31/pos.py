#!/usr/bin/env python3
"""Session 31: Harmonia's sorted results with 32-bit positions (harmonia_lookup_unordered32, the
`harmonia` sorted row) against 64-bit ones (harmonia_lookup_unordered, `harmonia_pos64`), in the
same process, per workload and log; and each log's sorted ratio to the strongest ordered baseline.
Usage: pos.py LOG..."""
import re, sys
rows, order = {}, []
for path in sys.argv[1:]:
    name = None
    for line in open(path, errors="replace"):
        m = re.match(r"## ([^:]+):", line)
        if m:
            name = m.group(1).strip()
            if name not in rows:
                rows[name] = {}
                order.append(name)
            continue
        m = re.match(r"^\s+(harmonia|harmonia_pos64)\s+(.*?)\s+sorted\s+([\d.]+) ms\s+([\d.]+) G/s", line)
        if m and name:
            rows[name].setdefault(path, {})[m.group(1)] = float(m.group(4))
        m = re.search(r"=> sorted order: harmonia ([\d.]+) G/s, strongest ordered baseline ([\d.]+) G/s .*: ([\d.]+)x", line)
        if m and name:
            rows[name].setdefault(path, {})["ratio"] = float(m.group(3))
short = [p.split("/")[-1].replace(".log", "") for p in sys.argv[1:]]
print("workload (sorted) | " + " | ".join(short) + "   [u32 G/s / u64 G/s = gain; ratio to baseline]")
for name in order:
    cells = []
    for p in sys.argv[1:]:
        r = rows[name].get(p, {})
        if "harmonia" in r and "harmonia_pos64" in r:
            cells.append(f"{r['harmonia']:.2f}/{r['harmonia_pos64']:.2f}={100 * (r['harmonia'] / r['harmonia_pos64'] - 1):+.1f}% {r.get('ratio', 0):.2f}x")
        else:
            cells.append("-")
    if any(c != "-" for c in cells):
        print(f"{name} | " + " | ".join(cells))
