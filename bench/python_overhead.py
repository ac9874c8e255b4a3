#!/usr/bin/env python3
"""python_overhead.py — what the Python binding costs: a batch of point lookups (default 2^24) from
NumPy (or CuPy, --device) against the same call from C (python/bench_overhead_c.c) through the same
data: the same keys and queries (written to files the C program reads), the same tree (default
configuration, values = row ids), the same query configuration, outputs preallocated in C.

Python is timed twice: `tree.lookup(q)` as a user writes it (result arrays allocated by each call:
NumPy's fresh pages are faulted in by the lookup; CuPy's pool reuses its memory) and
`tree.lookup(q, out=(values, found))` (preallocated, as the C program). Rounds alternate C and
Python so that a noisy machine weighs on both alike; each figure is the median of all timed runs.
The overhead is (Python - C) / C.

    ninja -C BUILD python/bench_overhead_c      # the C program, from the build pip install used
    python bench/python_overhead.py --c-program BUILD/python/bench_overhead_c [--device] [--threads T]
"""

import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import harmonia


def find_c_program():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    for pattern in ("build-py/build/python/bench_overhead_c", "build*/python/bench_overhead_c",
                    ".whl/bin/bench_overhead_c"):
        hits = sorted(glob.glob(os.path.join(root, pattern)))
        if hits:
            return hits[0]
    return None


def run_c(program, args, bits, keys_path, queries_path):
    cmd = [program, "--bits", str(bits), "--keys", keys_path, "--queries", queries_path, "--runs", str(args.runs),
           "--warmup", str(args.warmup), "--backend", args.backend]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    if args.device:
        cmd.append("--device")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    runs = [float(x) for x in re.findall(r"^run \d+ ([0-9.]+) s$", out, re.M)]
    m = re.search(r"found=(\d+) value_sum=(\d+)", out)
    return runs, (int(m.group(1)), int(m.group(2)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log2-keys", type=int, default=24)
    p.add_argument("--log2-queries", type=int, default=24)
    p.add_argument("--bits", type=int, choices=(32, 64), default=64)
    p.add_argument("--runs", type=int, default=7, help="timed calls per round and side")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    p.add_argument("--threads", type=int, default=0, help="OpenMP threads of the CPU engine (0: default)")
    p.add_argument("--device", action="store_true", help="queries and results in GPU memory (CuPy)")
    p.add_argument("--c-program", default=None, help="bench_overhead_c (default: searched in build*/python/)")
    args = p.parse_args()

    program = args.c_program or find_c_program()
    if not program or not os.access(program, os.X_OK):
        sys.exit("python_overhead.py: the C program is missing: ninja -C BUILD python/bench_overhead_c, then "
                 "--c-program BUILD/python/bench_overhead_c")
    dtype = np.dtype(np.uint32 if args.bits == 32 else np.uint64)
    rng = np.random.default_rng(2024)
    n_keys, n = 1 << args.log2_keys, 1 << args.log2_queries
    keys = np.unique(rng.integers(0, np.iinfo(dtype).max, size=n_keys + n_keys // 4, dtype=dtype))
    rng.shuffle(keys)
    keys = keys[:n_keys]
    queries = np.concatenate([keys[rng.integers(0, n_keys, n // 2)],  # half hits, half random
                              rng.integers(0, np.iinfo(dtype).max, size=n - n // 2, dtype=dtype)])
    rng.shuffle(queries)

    with tempfile.TemporaryDirectory() as tmp:
        keys_path, queries_path = os.path.join(tmp, "keys.bin"), os.path.join(tmp, "queries.bin")
        keys.tofile(keys_path)
        queries.tofile(queries_path)
        tree = harmonia.build(keys)
        opts = {"backend": args.backend, "threads": args.threads or None}
        if args.device:
            import cupy as cp
            q = cp.asarray(queries)
            out = (cp.empty(n, dtype), cp.empty(n, cp.bool_))

            def sync():
                cp.cuda.get_current_stream().synchronize()
        else:
            q = queries
            out = (np.empty(n, dtype), np.empty(n, np.bool_))

            def sync():
                pass

        def timed(**extra):
            times = []
            for r in range(-args.warmup, args.runs):
                sync()
                t0 = time.perf_counter()
                values, found = tree.lookup(q, **opts, **extra)
                sync()
                if r >= 0:
                    times.append(time.perf_counter() - t0)
                del values, found
            return times

        c_times, py_times, py_out_times = [], [], []
        for _ in range(args.rounds):
            runs, c_check = run_c(program, args, args.bits, keys_path, queries_path)
            c_times += runs
            py_times += timed()
            py_out_times += timed(out=out)
        values, found = tree.lookup(q, **opts)
        if args.device:
            values, found = values.get(), found.get()
        py_check = (int(found.sum()), int(values.astype(np.uint64).sum(dtype=np.uint64)))
        if py_check != c_check:
            sys.exit(f"python_overhead.py: Python and C disagree: found/value sums {py_check} vs {c_check}")

    c = statistics.median(c_times)
    engine = "GPU" if (args.backend == "gpu" or (args.backend == "auto" and harmonia.gpu_available())) else "CPU"
    print(f"# {n} lookups ({args.bits}-bit keys, {n_keys} in the tree), {engine} engine, "
          f"{'device (CuPy)' if args.device else 'host (NumPy)'} arrays, threads {args.threads or 'default'}, "
          f"median of {len(c_times)} runs per side; harmonia {harmonia.__version__}")
    print(f"{'call':<44} {'median ms':>10} {'min ms':>9} {'overhead':>9}")
    print(f"{'C: harmonia_lookup (bench_overhead_c)':<44} {c * 1e3:10.2f} {min(c_times) * 1e3:9.2f} {'':>9}")
    for name, t in (("Python: tree.lookup(q)", py_times), ("Python: tree.lookup(q, out=...)", py_out_times)):
        m = statistics.median(t)
        print(f"{name:<44} {m * 1e3:10.2f} {min(t) * 1e3:9.2f} {(m - c) / c * 100:+8.1f}%")


if __name__ == "__main__":
    main()
