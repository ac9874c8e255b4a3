"""Several Python threads on one tree: concurrent CPU queries, queries racing updates (the tree's
lock serialises them), and the GIL released during long calls."""

import threading

import numpy as np

import harmonia
from conftest import Model, queries_for, random_keys


def test_concurrent_cpu_queries(rng):
    keys = random_keys(rng, 100000, np.uint64)
    tree = harmonia.build(keys)
    model = Model(keys, np.arange(keys.size, dtype=np.uint64))
    batches = [queries_for(rng, model, 20000) for _ in range(8)]
    errors = []

    def work(q):
        try:
            for _ in range(5):
                v, f = tree.lookup(q, backend="cpu", threads=1)
                mv, mf = model.lookup(q)
                assert (v == mv).all() and (f == mf).all()
                assert (tree.range_count(q, q, backend="cpu") == mf).all()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(q,)) for q in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_queries_racing_updates(rng):
    base = np.arange(0, 200000, 2, dtype=np.uint64)  # even keys, present throughout
    tree = harmonia.build(base, base * 3)
    stop = threading.Event()
    errors = []

    def reader():
        try:
            while not stop.is_set():
                q = base[rng.integers(0, base.size, 5000)]
                v, f = tree.lookup(q)
                assert f.all() and (v == q * 3).all()
                o, k, _ = tree.range_collect(np.uint64(0), np.uint64(1000))
                assert int(o[-1]) == k.size and (np.diff(k.astype(np.int64)) > 0).all()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    readers = [threading.Thread(target=reader) for _ in range(3)]
    for t in readers:
        t.start()
    try:
        for i in range(20):  # odd keys come and go
            odd = np.arange(1 + 2 * i, 200000, 40, dtype=np.uint64)
            tree.update("insert", odd, odd)
            if i % 2:
                tree.delete(odd)
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert not errors, errors
    tree.check()


def test_gil_released_during_long_calls(rng):
    keys = random_keys(rng, 1 << 20, np.uint64)
    tree = harmonia.build(keys)
    q = keys[rng.integers(0, keys.size, 1 << 22)]
    done = threading.Event()
    ticks = 0

    def long_call():
        for _ in range(3):
            tree.lookup(q, backend="cpu", threads=1)
        done.set()

    t = threading.Thread(target=long_call)
    t.start()
    while not done.is_set():  # runs only while the lookup thread has let go of the GIL
        ticks += 1
    t.join()
    assert ticks > 10000, f"the main thread ran {ticks} iterations during the lookups"
