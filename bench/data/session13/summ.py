#!/usr/bin/env python3
"""Session 13: one table of bench_versus logs (query / sorted order, Harmonia G/s and ratio to the
strongest ordered baseline) for each workload, a column a log. Usage: summ.py LOG..."""
import re, sys
rows, order = {}, []
for path in sys.argv[1:]:
    name = None
    for line in open(path, errors="replace"):
        m = re.match(r"## ([^:]+):\s*([^,]*)", line)
        if m:
            name = m.group(1).strip()
            if name == "ranges":
                name += " " + m.group(2).split("-uniform")[0]
            if name not in rows:
                rows[name] = {}
                order.append(name)
            continue
        m = re.search(r"=> (query|sorted) order: harmonia ([\d.]+) G/s, strongest ordered baseline ([\d.]+) G/s \(([^,)]+)[^:]*: ([\d.]+)x", line)
        if m and name:
            rows[name].setdefault(path, {})[m.group(1)] = (float(m.group(2)), float(m.group(3)), float(m.group(5)))
        m = re.match(r"\s+(count|collect)\s+len (\d+)\s+harmonia\s+([\d.]+) ms.*sorted array\s+([\d.]+) ms.*\| ([\d.]+)x", line)
        if m and name:
            key = f"{name} {m.group(1)} {m.group(2)}"
            if key not in rows:
                rows[key] = {}
                order.append(key)
            rows[key].setdefault(path, {})["query"] = (float(m.group(3)), float(m.group(4)), float(m.group(5)))
        m = re.search(r"harmonia_explicit .* ([\d.]+) ms +([\d.]+) G/s", line)
        if m and name:
            rows[name].setdefault(path, {}).setdefault("explicit", float(m.group(2)))
short = [p.split("/")[-1].replace(".log", "") for p in sys.argv[1:]]
print("workload | " + " | ".join(short))
for name in order:
    for kind in ("query", "sorted"):
        cells = []
        for p in sys.argv[1:]:
            r = rows[name].get(p, {}).get(kind)
            cells.append(f"{r[0]:.3f}/{r[1]:.3f}={r[2]:.2f}x" if r else "-")
        if any(c != "-" for c in cells):
            print(f"{name} {kind[0]} | " + " | ".join(cells))
