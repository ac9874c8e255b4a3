#!/usr/bin/env python3
"""Session 17 (the G = 1 and 2 columns from session 18, "-" in older logs): the small batches' methods in microseconds (bench_versus logs: batch rows of up to
2^16 queries, timed in rounds). Usage: small.py LOG..."""
import re, sys
cols = ["harmonia query", "harmonia sorted", "harmonia_explicit", "harmonia_g G = 1", "harmonia_g G = 2",
        "harmonia_g G = 4", "harmonia_g G = 8",
        "harmonia_g G = 16", "harmonia_g G = 32", "eytzinger_k9", "binary_search", "sort+bsearch fused"]
def key_of(method, config, order):
    if method == "harmonia":
        return "harmonia " + order
    if method == "harmonia_g":
        return "harmonia_g " + config.split(",")[0]
    if method == "sort+bsearch":
        return "sort+bsearch fused" if "fused" in config else None
    return method
for path in sys.argv[1:]:
    name, table = None, {}
    for line in open(path, errors="replace"):
        if line.startswith("## "):
            m = re.match(r"## (batch 2\^(\d+) [^:]*):", line)
            name = m.group(1) if m and int(m.group(2)) <= 18 else None
            continue
        m = re.match(r"\s+(\S+)\s+(.*?)\s+(query|sorted)\s+([\d.]+) ms", line)
        if m and name:
            k = key_of(m.group(1), m.group(2), m.group(3))
            if k in cols:
                table.setdefault(name, {}).setdefault(k, float(m.group(4)) * 1000)
    print("#", path, "(us)")
    print("workload | " + " | ".join(c.replace("harmonia", "h") for c in cols))
    for name, row in table.items():
        print(name + " | " + " | ".join(f"{row[c]:.2f}" if c in row else "-" for c in cols))
