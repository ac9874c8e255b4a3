#!/usr/bin/env python3
"""python_overhead.py — what the Python binding costs: a batch of point lookups (default 2^24) from
NumPy (or CuPy, --device) against the same call from C (python/bench_overhead_c.c) through the same
data: the same keys and queries (written to files the C program reads), the same tree (default
configuration, values = row ids), the same query configuration, outputs preallocated in C.

Python is timed twice: `tree.lookup(q)` as a user writes it (result arrays allocated by each call:
NumPy's fresh pages are faulted in by the lookup; CuPy's pool reuses its memory) and
`tree.lookup(q, out=(values, found))` (preallocated, as the C program). The C program runs beside
(bench_overhead_c --serve, its own tree over the same files) and the calls alternate one by one (C,
Python, Python with out=, in rotating order), so that a noisy machine weighs on both alike. The
overhead is reported from the medians and as the median of the paired differences.

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


class CProgram:
    """bench_overhead_c --serve: its own tree over the same files; one timed C call per request."""

    def __init__(self, program, args, keys_path, queries_path):
        cmd = [program, "--serve", "--bits", str(args.bits), "--keys", keys_path, "--queries", queries_path,
               "--warmup", str(args.warmup), "--backend", args.backend]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        if args.device:
            cmd.append("--device")
        if args.cpu_time:
            cmd.append("--cpu-time")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            sys.exit(f"python_overhead.py: {program} did not start (exit {self.proc.wait()})")
        self.check = None

    def call(self):
        self.proc.stdin.write("1\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        m = re.match(r"times ([0-9.]+) found=(\d+) value_sum=(\d+)", line)
        if not m:
            sys.exit(f"python_overhead.py: the C program answered {line!r}")
        self.check = (int(m.group(2)), int(m.group(3)))
        return float(m.group(1))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log2-keys", type=int, default=24)
    p.add_argument("--log2-queries", type=int, default=24)
    p.add_argument("--bits", type=int, choices=(32, 64), default=64)
    p.add_argument("--runs", type=int, default=15, help="timed calls per side")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--pause", type=float, default=0.05, help="seconds between two timed calls")
    p.add_argument("--small-calls", type=int, default=20000, help="calls of the one-query measurement")
    p.add_argument("--cpu-time", action="store_true",
                   help="time the process's CPU time, not the wall clock (with --threads 1: the work alone, "
                        "on a machine others load)")
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

        clock = time.process_time if args.cpu_time else time.perf_counter

        def python_call(**extra):
            sync()
            t0 = clock()
            values, found = tree.lookup(q, **opts, **extra)
            sync()
            return clock() - t0

        c_program = CProgram(program, args, keys_path, queries_path)
        for _ in range(args.warmup):
            python_call()
            python_call(out=out)
        # call by call, in rotating order: C, Python, Python with out=
        calls = [c_program.call, python_call, lambda: python_call(out=out)]
        times = [[], [], []]
        for i in range(args.runs):
            for j in range(3):
                k = (i + j) % 3
                time.sleep(args.pause)  # the other side's idle OpenMP threads stop spinning
                times[k].append(calls[k]())
        c_program.close()
        c_times, py_times, py_out_times = times
        values, found = tree.lookup(q, **opts)
        if args.device:
            values, found = values.get(), found.get()
        py_check = (int(found.sum()), int(values.astype(np.uint64).sum(dtype=np.uint64)))
        if py_check != c_program.check:
            sys.exit(f"python_overhead.py: Python and C disagree: found/value sums {py_check} vs {c_program.check}")

        # the fixed cost of one call: a batch of one query, many calls
        one = os.path.join(tmp, "one.bin")
        queries[:1].tofile(one)
        cmd = [program, "--bits", str(args.bits), "--keys", keys_path, "--queries", one, "--runs",
               str(args.small_calls), "--warmup", "100", "--backend", args.backend]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        if args.device:
            cmd.append("--device")
        if args.cpu_time:
            cmd.append("--cpu-time")
        out_text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        c_small = float(re.search(r"median_s=([0-9.]+)", out_text).group(1))
        q1 = q[:1]
        out1 = (out[0][:1], out[1][:1])
        small = {}
        for name, extra in (("alloc", {}), ("out", {"out": out1})):
            ts = []
            for r in range(100 + args.small_calls):
                sync()
                t0 = clock()
                tree.lookup(q1, **opts, **extra)
                sync()
                if r >= 100:
                    ts.append(clock() - t0)
            small[name] = statistics.median(ts)

    c = statistics.median(c_times)
    engine = "GPU" if (args.backend == "gpu" or (args.backend == "auto" and harmonia.gpu_available())) else "CPU"
    print(f"# {n} lookups ({args.bits}-bit keys, {n_keys} in the tree), {engine} engine, "
          f"{'device (CuPy)' if args.device else 'host (NumPy)'} arrays, threads {args.threads or 'default'}, "
          f"{len(c_times)} calls per side, alternating, {'CPU' if args.cpu_time else 'wall-clock'} time; "
          f"harmonia {harmonia.__version__}")
    print(f"{'call':<40} {'median ms':>10} {'min ms':>9} {'overhead (median)':>18} {'paired':>8}")
    print(f"{'C: harmonia_lookup (bench_overhead_c)':<40} {c * 1e3:10.3f} {min(c_times) * 1e3:9.3f}")
    for name, t in (("Python: tree.lookup(q)", py_times), ("Python: tree.lookup(q, out=...)", py_out_times)):
        m = statistics.median(t)
        paired = statistics.median((p - q_) / q_ for p, q_ in zip(t, c_times))
        print(f"{name:<40} {m * 1e3:10.3f} {min(t) * 1e3:9.3f} {(m - c) / c * 100:+17.1f}% {paired * 100:+7.1f}%")
    print("overhead (median) = (median Python - median C) / median C; paired = median over the alternating "
          "calls of (Python - C) / C")
    print(f"one query per call, median of {args.small_calls} calls: C {c_small * 1e6:.1f} us, Python "
          f"{small['alloc'] * 1e6:.1f} us (with out=: {small['out'] * 1e6:.1f} us): the binding's fixed cost is "
          f"about {(small['out'] - c_small) * 1e6:.1f} us a call, {(small['out'] - c_small) / c * 100:.4f} % of "
          f"the batch above")


if __name__ == "__main__":
    main()
