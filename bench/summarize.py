#!/usr/bin/env python3
"""summarize.py — turns the benchmark suite's CSV tables (bench_suite --out-dir DIR) into the
Markdown section that goes into bench/RESULTS.md: the run's facts, the ceilings, each target of
../shared/PERFORMANCE.md against what this run measured (met only where verified), the priority
lookup points with every baseline as ratios, the ablation, ranges, the build steps, the size sweep,
and what was skipped or failed. Standard library only.

Usage: python3 bench/summarize.py [CSV_DIR (default bench/out)] [--plots RELATIVE_DIR] >> bench/RESULTS.md
"""
import csv
import math
import os
import sys
from collections import defaultdict

# The targets of PERFORMANCE.md ("Targets for Harmonia on the H100") and the baselines it names.
TARGET_E2E_64 = 15.0          # G/s, 64-bit keys, 2^26 keys, end to end, query order
TARGET_E2E_64_VS_BS = 1.6     # x the best binary-search pipeline in the same run
TARGET_E2E_32 = 13.0          # G/s, 32-bit keys, 2^28 keys
TARGET_E2E_32_VS_LIGHT = 2.0  # x the best lightweight index in the same run
TARGET_SORTED_64 = 25.0       # G/s, results in sorted order, 64-bit, 2^26 keys
TARGET_H2H_RATIO = 1.2        # x the PCIe copy time of the queries and results alone
TARGET_RANGE8 = 5.0           # G/s, range count length 8, 2^26 keys (10 x the GPU B-tree's 0.50)
TARGET_BUILD_S = 1.0          # s, bulk build of 2^28 pairs from unsorted input

BS_PIPELINES = ("bs_plain", "bs_fullsort", "bs_top16")
LIGHTWEIGHT = BS_PIPELINES + ("eytzinger_k9",)
BASELINE_NAMES = {
    "bs_plain": "binary search, plain (unsorted queries)",
    "bs_fullsort": "binary search: full sort + search + scatter",
    "bs_top16": "binary search: top-16-bit sort + search + scatter",
    "bs_sorted_only": "binary search alone on sorted queries (sort not timed)",
    "eytzinger_k9": "K-ary Eytzinger (K = 9, 8 threads/query)",
    "hbtree": "regular pointer B+tree (HB+tree style)",
    "cpu_engine": "Harmonia CPU engine, all cores",
    "cpu_binary_search": "binary search on the CPU",
    "eytzinger_k9_cpu": "K-ary Eytzinger on the CPU",
    "hbtree_cpu": "pointer B+tree on the CPU",
}


def read(dir_, name):
    path = os.path.join(dir_, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x, default=0.0):
    try:
        return float(x)
    except (TypeError, ValueError):
        return default


def ok(row):
    return row.get("verified") in ("yes", "reference")


def fmt(x, digits=2):
    if x is None or (isinstance(x, float) and (math.isnan(x) or x == 0.0)):
        return "—"
    if abs(x) < 10 ** -digits * 5:
        return f"{x:.2g}"
    return f"{x:.{digits}f}"


def verdict(met):
    return "**met**" if met else "not met"


def config_label(r):
    parts = []
    if r["method"] == "harmonia":
        parts.append(f"G={r['group_size']}")
        psa = r["psa"]
        parts.append({"1": "PSA on", "0": "PSA off"}.get(psa, "PSA auto"))
        if r["psa_window"] not in ("0", ""):
            parts.append(f"window 2^{int(math.log2(int(r['psa_window'])))}")
        if r["pipeline"] not in ("0", ""):
            parts.append(f"depth {r['pipeline']}")
    return ", ".join(parts)


class Run:
    def __init__(self, dir_):
        self.dir = dir_
        self.meta = defaultdict(list)
        for r in read(dir_, "meta.csv"):
            self.meta[r["key"]].append(r["value"])
        self.ceilings = read(dir_, "ceilings.csv")
        self.lookup = read(dir_, "lookup.csv")
        self.ablation = read(dir_, "ablation.csv")
        self.range = read(dir_, "range.csv")
        self.build = read(dir_, "build.csv")
        self._shapes = {}  # key bits -> (fanout, leaf_size) of the priority points, found once

    def default_shape(self, bits):
        """(fanout, leaf_size) as strings: the shape of the run's priority points for this key width
        (the library's defaults when the suite ran: F = L = 16 before session 3, F = 32 for 32-bit
        keys since), found from the rows of a baseline only the priority points run."""
        if bits not in self._shapes:
            self._shapes[bits] = next(((r["fanout"], r["leaf_size"]) for r in self.lookup
                                       if int(r["key_bits"]) == bits and r["method"] == "bs_fullsort"
                                       and r["key_dist"] == "uniform"),
                                      ("32" if bits == 32 else "16", "16"))
        return self._shapes[bits]

    def is_default_shape(self, r):
        return (r["fanout"], r["leaf_size"]) == self.default_shape(int(r["key_bits"]))

    def m(self, key, default=""):
        v = self.meta.get(key)
        return v[-1] if v else default

    def rows(self, bits, log2, method=None, dist="uniform", qdist="uniform", hits=1.0, fanout=None, leaf=None,
             memory="device", default_knobs=True, verified=True):
        if fanout is None or leaf is None:
            f, l = self.default_shape(bits)
            fanout = fanout or f
            leaf = leaf or l
        out = []
        for r in self.lookup:
            if int(r["key_bits"]) != bits or int(r["keys_log2"]) != log2 or r["key_dist"] != dist:
                continue
            if r["query_dist"] != qdist or abs(num(r["hit_rate"]) - hits) > 1e-6:
                continue
            if r["fanout"] != fanout or r["leaf_size"] != leaf:
                continue
            if memory and r["memory"] != memory:
                continue
            if method and r["method"] != method:
                continue
            if default_knobs and (r["psa_window"] != "0" or r["pipeline"] != "0"):
                continue
            if verified and not ok(r):
                continue
            if num(r["gqps"]) <= 0:
                continue
            out.append(r)
        return out

    def best(self, bits, log2, method, order=None, **kw):
        rows = [r for r in self.rows(bits, log2, method, **kw) if order is None or r["order"] == order]
        return max(rows, key=lambda r: num(r["gqps"]), default=None)


def ceiling_rate(run, what):
    for r in run.ceilings:
        if r["what"] == what:
            return r
    return None


def section_header(run, out, plots):
    mode = run.m("mode", "?")
    out.append(f"## Benchmark suite (issue 5): {mode}\n")
    detail = run.m("device_detail", "")
    out.append(f"- Device: {run.m('device', '?')}{' (' + detail + ')' if detail else ''}; "
               f"{run.m('cpu_threads', '?')} CPU threads.")
    out.append(f"- Date: {run.m('date', '?')}. Commit: {run.m('commit', '?')}.")
    out.append(f"- Command: `{run.m('command', '?')}` (build: `meson setup build-gpu -Dbuildtype=release "
               f"-Dgpu_arch=90`; device call: `source .device-deps/setup.sh && bash bench/run-gpu.sh suite`).")
    out.append(f"- Method: queries {run.m('queries', '?')}; {run.m('runs', '?')}; CUDA events; every "
               f"configuration compared with the CPU engine on {run.m('verification_sample', '?')}. "
               f"Budget {run.m('budget_seconds', '?')} s, used {run.m('elapsed_seconds', '?')} s.")
    status = run.m("status", "?")
    out.append(f"- Status: **{status}**.")
    if plots:
        out.append(f"- Plots: [lookups vs size, 64-bit]({plots}/lookup_vs_size_64bit.svg), "
                   f"[32-bit]({plots}/lookup_vs_size_32bit.svg), [ablation]({plots}/ablation.svg), "
                   f"[ranges]({plots}/range_vs_length.svg).")
    out.append("")


def section_ceilings(run, out):
    rows = [r for r in run.ceilings]
    if not rows:
        return
    out.append("### Ceilings of the machine (same run)\n")
    out.append("| what | where | bytes | median ms | GB/s | G ops/s |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        out.append(f"| {r['what']} | {r['point']} | {int(num(r['bytes'])):,} | {fmt(num(r['ms_median']), 3)} | "
                   f"{fmt(num(r['gbps']), 1)} | {fmt(num(r['gops']), 2)} |")
    out.append("")


def section_targets(run, out):
    """Each target against the best verified configuration of the run, whatever its knobs (PSA
    window and pipeline depth are options a caller sets; the label names them)."""
    out.append("### Against the targets (`../shared/PERFORMANCE.md`)\n")
    out.append("| workload | target | measured (this run) | verdict |")
    out.append("| --- | --- | --- | --- |")

    def best_bs(bits, log2):
        cands = [run.best(bits, log2, m) for m in BS_PIPELINES]
        cands = [c for c in cands if c]
        return max(cands, key=lambda r: num(r["gqps"]), default=None)

    def best_light(bits, log2):
        cands = [run.best(bits, log2, m) for m in LIGHTWEIGHT]
        cands = [c for c in cands if c]
        return max(cands, key=lambda r: num(r["gqps"]), default=None)

    h = run.best(64, 26, "harmonia", order="ordered", default_knobs=False)
    b = best_bs(64, 26)
    if h:
        ratio = num(h["gqps"]) / num(b["gqps"]) if b else float("nan")
        met = num(h["gqps"]) >= TARGET_E2E_64 and b is not None and ratio >= TARGET_E2E_64_VS_BS
        out.append(f"| lookups, 64-bit, 2^26 keys, 2^27 queries, end to end, query order | ≥ {TARGET_E2E_64} G/s and "
                   f"≥ {TARGET_E2E_64_VS_BS}× best binary-search pipeline | {fmt(num(h['gqps']))} G/s "
                   f"({config_label(h)}); {fmt(ratio)}× {b['method'] if b else '—'} ({fmt(num(b['gqps'])) if b else '—'} G/s) "
                   f"| {verdict(met)} |")
    else:
        out.append("| lookups, 64-bit, 2^26 keys | ≥ 15 G/s | not measured | — |")
    h = run.best(32, 28, "harmonia", order="ordered", default_knobs=False)
    b = best_light(32, 28)
    if h:
        ratio = num(h["gqps"]) / num(b["gqps"]) if b else float("nan")
        met = num(h["gqps"]) >= TARGET_E2E_32 and b is not None and ratio >= TARGET_E2E_32_VS_LIGHT
        out.append(f"| lookups, 32-bit, 2^28 keys, 2^27 queries, end to end, query order | ≥ {TARGET_E2E_32} G/s "
                   f"(2× best lightweight index) | {fmt(num(h['gqps']))} G/s ({config_label(h)}); {fmt(ratio)}× "
                   f"{b['method'] if b else '—'} ({fmt(num(b['gqps'])) if b else '—'} G/s) | {verdict(met)} |")
    else:
        out.append("| lookups, 32-bit, 2^28 keys | ≥ 13 G/s | not measured | — |")
    h = run.best(64, 26, "harmonia", order="unordered", default_knobs=False)
    if h:
        out.append(f"| lookups, sorted results (no restore), 64-bit, 2^26 keys | ≥ {TARGET_SORTED_64} G/s | "
                   f"{fmt(num(h['gqps']))} G/s ({config_label(h)}) | {verdict(num(h['gqps']) >= TARGET_SORTED_64)} |")
    else:
        out.append("| lookups, sorted results, 64-bit, 2^26 keys | ≥ 25 G/s | not measured | — |")
    h2h = [r for r in run.lookup if r["memory"] == "host_pinned" and ok(r) and num(r["gqps"]) > 0]
    duplex = [r for r in run.ceilings if r["what"] == "pcie_duplex_pinned"]
    if h2h and duplex:
        best = max(h2h, key=lambda r: num(r["gqps"]))
        ratio = num(best["ms_median"]) / num(duplex[-1]["ms_median"])
        out.append(f"| lookups from host memory, 2^{int(math.log2(int(best['queries'])))} queries, pinned | within "
                   f"{TARGET_H2H_RATIO}× the PCIe copy time alone | {fmt(num(best['ms_median']), 1)} ms = {fmt(ratio)}× "
                   f"the duplex copy ({fmt(num(duplex[-1]['ms_median']), 1)} ms); {fmt(num(best['gqps']))} G/s "
                   f"({config_label(best)}) | {verdict(ratio <= TARGET_H2H_RATIO)} |")
    else:
        out.append("| lookups from host memory, 2^30 queries | within 1.2× PCIe | not measured | — |")
    r8 = [r for r in run.range if r["op"] == "count" and r["length"] == "8" and r["method"] == "harmonia"
          and r["verified"] == "yes" and r["key_bits"] == "64" and r["keys_log2"] == "26"]
    if r8:
        best = max(r8, key=lambda r: num(r["granges_per_s"]))
        v = num(best["granges_per_s"])
        out.append(f"| range count, length 8, 2^26 keys | ≥ {TARGET_RANGE8} G/s (10× the GPU B-tree) | {fmt(v)} G/s "
                   f"(G={best['group_size']}) | {verdict(v >= TARGET_RANGE8)} |")
    else:
        out.append("| range count, length 8, 2^26 keys | ≥ 5 G/s | not measured | — |")
    for bits in (32, 64):
        totals = [r for r in run.build if r["key_bits"] == str(bits) and r["keys_log2"] == "28" and r["step"] == "total"]
        for r in totals:
            s = num(r["seconds"])
            out.append(f"| bulk build, 2^28 {bits}-bit pairs from unsorted input ({r['method']}) | ≤ {TARGET_BUILD_S} s | "
                       f"{fmt(s, 2)} s | {verdict(s <= TARGET_BUILD_S)} |")
    out.append("| CPU batch update (2^26 keys, 4M operations) | ≥ 100 M ops/s | not part of this suite "
               "(bench_update) | — |")
    out.append("")


def section_points(run, out):
    points = []
    for r in run.lookup:
        key = (int(r["key_bits"]), int(r["keys_log2"]))
        if r["key_dist"] == "uniform" and run.is_default_shape(r) and key not in points:
            if any(x["method"] == "bs_fullsort" for x in run.rows(*key)):  # a priority point (every baseline)
                points.append(key)
    for bits, log2 in points:
        rows = run.rows(bits, log2, memory=None)
        rows = [r for r in rows if r["memory"] in ("device", "host")]
        if not rows:
            continue
        gather = max((num(r["gather_gps"]) for r in rows), default=0)
        out.append(f"### Point lookups, {bits}-bit keys, 2^{log2} keys, uniform, 2^{int(math.log2(int(rows[0]['queries'])))} "
                   f"uniform queries, 100 % hits, F = {run.default_shape(bits)[0]}, L = {run.default_shape(bits)[1]}\n")
        out.append(f"Random 8-byte gather over an array the size of the tree: {fmt(gather)} G loads/s.\n")
        bs = [run.best(bits, log2, m) for m in BS_PIPELINES]
        bs = max([b for b in bs if b], key=lambda r: num(r["gqps"]), default=None)
        bs_v = num(bs["gqps"]) if bs else 0
        out.append("| method | best configuration | median ms | G q/s | of gather | × best BS pipeline |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        entries = []
        for m in ("bs_plain", "bs_fullsort", "bs_top16", "bs_sorted_only", "eytzinger_k9", "hbtree", "cpu_engine"):
            r = run.best(bits, log2, m, memory=None)
            if r:
                entries.append((BASELINE_NAMES.get(m, m), r))
        for order, label in (("ordered", "Harmonia, results in query order"), ("unordered", "Harmonia, sorted results")):
            r = run.best(bits, log2, "harmonia", order=order)
            if r:
                entries.append((label, r))
        for label, r in entries:
            v = num(r["gqps"])
            out.append(f"| {label} | {config_label(r) or '—'} | {fmt(num(r['ms_median']), 3)} | {fmt(v)} | "
                       f"{fmt(num(r['frac_gather']))} | {fmt(v / bs_v) if bs_v else '—'} |")
        out.append("")
        # every G
        out.append("| G | in order, PSA off | in order, PSA on | sorted results, PSA on |")
        out.append("| --- | --- | --- | --- |")
        for g in ("1", "2", "4", "8", "16", "32"):
            cells = []
            for order, psa in (("ordered", "0"), ("ordered", "1"), ("unordered", "1")):
                c = [r for r in run.rows(bits, log2, "harmonia") if r["group_size"] == g and r["order"] == order
                     and r["psa"] == psa]
                cells.append(fmt(num(c[0]["gqps"])) if c else "—")
            if any(c != "—" for c in cells):
                out.append(f"| {g} | " + " | ".join(cells) + " |")
        out.append("")


def section_other_lookups(run, out):
    """Windows, depth, query variants, F/L, key distributions: every harmonia row not at default knobs,
    summarised per point and knob."""
    rows = [r for r in run.lookup if ok(r) and num(r["gqps"]) > 0 and r["memory"] in ("device", "host")]
    knobs = [r for r in rows if r["method"] == "harmonia" and (r["psa_window"] != "0" or r["pipeline"] != "0")]
    if knobs:
        out.append("### PSA window and pipeline depth\n")
        out.append("| tree | G | order | PSA | window | depth | G q/s |")
        out.append("| --- | --- | --- | --- | --- | --- | --- |")
        for r in knobs:
            w = r["psa_window"]
            w = f"2^{int(math.log2(int(w)))}" if w != "0" else "default"
            out.append(f"| {r['point']} | {r['group_size']} | {r['order']} | {r['psa']} | {w} | "
                       f"{r['pipeline'] if r['pipeline'] != '0' else 'default'} | {fmt(num(r['gqps']))} |")
        out.append("")
    variants = defaultdict(dict)
    for r in rows:
        if r["psa_window"] != "0" or r["pipeline"] != "0":
            continue
        if r["key_dist"] == "uniform" and r["query_dist"] == "uniform" and num(r["hit_rate"]) == 1.0 \
                and run.is_default_shape(r):
            continue
        key = (r["point"], r["key_dist"], r["query_dist"], r["hit_rate"], r["fanout"], r["leaf_size"])
        name = r["method"] if r["method"] != "harmonia" else f"harmonia {r['order']}"
        if num(r["gqps"]) > num(variants[key].get(name, {}).get("gqps", 0)):
            variants[key][name] = r
    if variants:
        cols = ["harmonia ordered", "harmonia unordered", "bs_plain", "bs_top16", "eytzinger_k9", "hbtree", "cpu_engine",
                "cpu_binary_search", "eytzinger_k9_cpu", "hbtree_cpu"]
        cols = [c for c in cols if any(c in d for d in variants.values())]
        out.append("### Other trees and query sets (best G per cell; G/s)\n")
        out.append("| tree | keys | queries | hits | F | L | " + " | ".join(cols) + " |")
        out.append("| --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in cols) + " |")
        for key, d in variants.items():
            cells = [fmt(num(d[c]["gqps"])) + (f" (G={d[c]['group_size']})" if c.startswith("harmonia") else "")
                     if c in d else "—" for c in cols]
            out.append(f"| {key[0]} | {key[1]} | {key[2]} | {float(key[3]) * 100:.0f} % | {key[4]} | {key[5]} | "
                       + " | ".join(cells) + " |")
        out.append("")


def section_ablation(run, out):
    if not run.ablation:
        return
    out.append("### Ablation (the paper's Fig. 13), ratios to the regular pointer B+tree\n")
    points = []
    for r in run.ablation:
        if r["point"] not in points:
            points.append(r["point"])
    labels = {}
    for r in run.ablation:
        labels[int(r["step"])] = r["label"]
    steps = sorted(labels)
    out.append("| tree | " + " | ".join(labels[s] for s in steps) + " |")
    out.append("| --- | " + " | ".join("---" for _ in steps) + " |")
    for p in points:
        cells = []
        for s in steps:
            c = [r for r in run.ablation if r["point"] == p and int(r["step"]) == s]
            cells.append(f"{fmt(num(c[0]['ratio_to_regular']))}× ({fmt(num(c[0]['gqps']))} G/s"
                         + (f", G={c[0]['group_size']}" if c[0]["method"] == "harmonia" else "") + ")" if c else "—")
        out.append(f"| {p} | " + " | ".join(cells) + " |")
    out.append("\nThe paper (TITAN V, F = 64): layout 1.4×, + PSA 2×, + NTG 3.4×.\n")


def section_ranges(run, out):
    if not run.range:
        return
    out.append("### Range queries (count; collect = both phases), best G per cell\n")
    out.append("| tree | length | op | sorted array G ranges/s | Harmonia G ranges/s | Harmonia G keys/s | × sorted array |")
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    keys = []
    for r in run.range:
        k = (r["point"], int(r["length"]), r["op"])
        if k not in keys:
            keys.append(k)
    for p, length, op in keys:
        rs = [r for r in run.range if r["point"] == p and int(r["length"]) == length and r["op"] == op
              and r["verified"] == "yes"]
        base = max((r for r in rs if r["method"] in ("sorted_array", "cpu_sorted_array")),
                   key=lambda r: num(r["granges_per_s"]), default=None)
        harm = max((r for r in rs if r["method"] in ("harmonia", "cpu_engine")),
                   key=lambda r: num(r["granges_per_s"]), default=None)
        bv = num(base["granges_per_s"]) if base else 0
        hv = num(harm["granges_per_s"]) if harm else 0
        out.append(f"| {p} | {length} | {op} | {fmt(bv, 3)} | {fmt(hv, 3)}"
                   + (f" (G={harm['group_size']})" if harm and harm["method"] == "harmonia" else "")
                   + f" | {fmt(num(harm['gpairs_per_s']) if harm else 0, 2)} | {fmt(hv / bv) if bv else '—'} |")
    out.append("")


def section_build(run, out):
    rows = [r for r in run.build if r["method"] in ("cpu_unsorted", "gpu_sort+cpu_layout", "upload")]
    if not rows:
        return
    out.append("### Bulk build, step by step\n")
    out.append("| pairs | method | step | seconds | M pairs/s |")
    out.append("| --- | --- | --- | --- | --- |")
    for r in rows:
        out.append(f"| 2^{r['keys_log2']} × {r['key_bits']}-bit | {r['method']} | {r['step']} | {fmt(num(r['seconds']), 3)} | "
                   f"{fmt(num(r['mpairs_per_s']), 0)} |")
    out.append("")


def section_sweep(run, out):
    cols = ["harmonia ordered", "harmonia unordered", "bs_plain", "bs_top16", "eytzinger_k9", "hbtree", "cpu_engine",
            "cpu_binary_search", "eytzinger_k9_cpu", "hbtree_cpu"]
    table = defaultdict(dict)
    for r in run.lookup:
        if not ok(r) or num(r["gqps"]) <= 0 or r["psa_window"] != "0" or r["pipeline"] != "0":
            continue
        if r["key_dist"] != "uniform" or r["query_dist"] != "uniform" or num(r["hit_rate"]) != 1.0:
            continue
        if not run.is_default_shape(r) or r["memory"] not in ("device", "host"):
            continue
        name = r["method"] if r["method"] != "harmonia" else f"harmonia {r['order']}"
        key = (int(r["key_bits"]), int(r["keys_log2"]))
        if num(r["gqps"]) > num(table[key].get(name, {}).get("gqps", 0)):
            table[key][name] = r
    if not table:
        return
    cols = [c for c in cols if any(c in d for d in table.values())]
    shapes = "; ".join(f"{b}-bit F = {run.default_shape(b)[0]}, L = {run.default_shape(b)[1]}"
                       for b in sorted({k[0] for k in table}, reverse=True))
    out.append(f"### Lookups against tree size (uniform, 100 % hits, {shapes}; best G per cell; G/s)\n")
    out.append("| key bits | log2 keys | " + " | ".join(cols) + " |")
    out.append("| --- | --- | " + " | ".join("---" for _ in cols) + " |")
    for key in sorted(table, key=lambda k: (-k[0], k[1])):
        d = table[key]
        cells = [fmt(num(d[c]["gqps"])) + (f" ({d[c]['group_size']})" if c.startswith("harmonia") else "")
                 if c in d else "—" for c in cols]
        out.append(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
    out.append("")


def section_status(run, out):
    total = len([r for r in run.lookup if r["verified"] in ("yes", "NO")]) + \
        len([r for r in run.range if r["verified"] in ("yes", "NO")])
    bad = [r for r in run.lookup if r["verified"] in ("NO", "error")] + \
        [r for r in run.range if r["verified"] in ("NO", "error")]
    out.append("### Verification and coverage\n")
    out.append(f"- {total} measured configurations compared with the CPU engine; "
               f"{len(bad)} mismatched or failed.")
    for f in run.meta.get("failed", []):
        out.append(f"  - FAILED: {f}")
    skipped = run.meta.get("skipped", [])
    if skipped:
        out.append(f"- Skipped ({len(skipped)}):")
        for s in skipped:
            out.append(f"  - {s}")
    else:
        out.append("- Nothing was skipped.")
    out.append("")


def main(argv):
    dir_ = "bench/out"
    plots = "plots"
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--plots" and args:
            plots = args.pop(0)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            dir_ = a
    if not os.path.exists(os.path.join(dir_, "meta.csv")):
        print(f"summarize.py: no meta.csv in {dir_}", file=sys.stderr)
        return 1
    run = Run(dir_)
    out = []
    section_header(run, out, plots)
    section_targets(run, out)
    section_ceilings(run, out)
    section_points(run, out)
    section_ablation(run, out)
    section_ranges(run, out)
    section_other_lookups(run, out)
    section_sweep(run, out)
    section_build(run, out)
    section_status(run, out)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
