"""python_overhead_inprocess.py — the binding's cost on CuPy arrays inside one process: 2^24 lookups
(2^24 64-bit keys, half the queries hits) through tree.lookup (with and without out=), the
extension's own C call with the arguments made once (tree._lookup: what the wrapper adds is the
difference), and on a non-blocking stream; CUDA events and wall clock around each call, median of
30 after 5 warm-ups. Needs a GPU, CuPy and the harmonia package (python/run-gpu-tests.sh installs
the wheel into /tmp/site):  PYTHONPATH=/tmp/site python3 bench/python_overhead_inprocess.py"""
import statistics
import time

import cupy as cp
import numpy as np

import harmonia

n_keys = n = 1 << 24
rng = np.random.default_rng(5)
keys = np.unique(rng.integers(0, np.iinfo(np.uint64).max, size=n_keys + n_keys // 4, dtype=np.uint64))
rng.shuffle(keys)
keys = keys[:n_keys]
queries = np.concatenate([keys[rng.integers(0, n_keys, n // 2)],
                          rng.integers(0, np.iinfo(np.uint64).max, size=n - n // 2, dtype=np.uint64)])
rng.shuffle(queries)
tree = harmonia.build(keys)
q = cp.asarray(queries)
out = (cp.empty(n, cp.uint64), cp.empty(n, cp.bool_))
ref_values, ref_found = tree.lookup(queries, backend="cpu")


def timeit(name, f, stream, runs=30):
    for _ in range(5):
        f()
    stream.synchronize()
    walls, events = [], []
    for _ in range(runs):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        stream.synchronize()
        t0 = time.perf_counter()
        e0.record(stream)
        f()
        e1.record(stream)
        stream.synchronize()
        walls.append(time.perf_counter() - t0)
        events.append(cp.cuda.get_elapsed_time(e0, e1) / 1e3)
    print(f"{name:45s} wall {statistics.median(walls) * 1e3:8.3f} ms  events {statistics.median(events) * 1e3:8.3f} ms")


s = cp.cuda.get_current_stream()
timeit("tree.lookup(q, out=out)", lambda: tree.lookup(q, out=out), s)
assert (out[1].get() == ref_found).all() and (out[0].get() == ref_values).all()
timeit("tree.lookup(q)", lambda: tree.lookup(q), s)
a = tree._queries(q, "queries", None)
qc = tree._qc(a, None, None, None, None, None, None, None, True)
timeit("tree._lookup (the extension's C call alone)",
       lambda: tree._lookup(qc, n, q.data.ptr, out[0].data.ptr, out[1].data.ptr), s)
st = cp.cuda.Stream(non_blocking=True)
with st:
    timeit("tree.lookup(q, out=out), non-blocking stream", lambda: tree.lookup(q, out=out), st)
print("results checked against the CPU engine")
