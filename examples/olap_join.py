#!/usr/bin/env python3
"""olap_join.py — Harmonia in front of a column, the OLAP way (python -m pip install . first).

1. A dimension table's key column is read from a Parquet file with PyArrow (the example writes its
   own file when the one named is missing) and indexed: key -> row id.
2. A fact table's foreign keys are looked up in one batch: the join row ids (and which facts have no
   dimension row), then revenue per customer segment through those row ids.
3. A time column is indexed too and counted over ranges: orders per day of a month, one batch of
   range counts. Timestamps repeat, the tree's keys may not: each key is (seconds << 24) | row, so
   that [day start << 24, (day end << 24) | 0xFFFFFF] counts every order of the day.

On a GPU (CuPy installed, harmonia built with CUDA) the fact columns live in device memory and the
lookups and range counts run there on CuPy arrays; on the CPU engine otherwise (--cpu forces it).
Every result is checked against NumPy (np.searchsorted).

    python examples/olap_join.py [--dimension customers.parquet] [--customers N] [--orders N] [--cpu]
"""

import argparse
import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import harmonia

SEGMENTS = np.array(["retail", "wholesale", "online", "partner"])
ROW_BITS = 24  # rows of the fact table a timestamp key can tell apart: 2^24


def write_dimension(path, customers, rng):
    """customers.parquet: customer_id (sparse 64-bit ids, in no order) and segment."""
    ids = np.unique(rng.integers(1, 2**63, size=customers + customers // 10, dtype=np.uint64))
    rng.shuffle(ids)
    table = pa.table({"customer_id": pa.array(ids[:customers]),
                      "segment": pa.array(SEGMENTS[rng.integers(0, SEGMENTS.size, customers)]).dictionary_encode()})
    pq.write_table(table, path, row_group_size=1 << 18)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dimension", default="customers.parquet",
                        help="Parquet file with customer_id and segment columns (written when missing)")
    parser.add_argument("--customers", type=int, default=1_000_000)
    parser.add_argument("--orders", type=int, default=4_000_000)
    parser.add_argument("--cpu", action="store_true", help="the CPU engine even where a GPU is usable")
    args = parser.parse_args()
    rng = np.random.default_rng(14)
    if args.orders > 1 << ROW_BITS:
        parser.error(f"--orders: at most {1 << ROW_BITS} (row bits of the time keys)")

    xp, gpu = np, False
    if not args.cpu and harmonia.gpu_available():
        try:
            import cupy as xp
            gpu = True
        except ImportError:
            pass
    device = harmonia.device_probe()
    print(f"engine: {'GPU, CuPy arrays (' + device.name + ')' if gpu else 'CPU, NumPy arrays'}")

    # 1. the dimension table's key column, from Parquet, indexed: customer_id -> row id
    path = args.dimension
    if not os.path.exists(path):
        write_dimension(path, args.customers, rng)
        print(f"wrote {path}: {args.customers} customers")
    t0 = time.perf_counter()
    dimension = pq.read_table(path, columns=["customer_id", "segment"])
    customer_id = dimension["customer_id"]          # a chunked array, one chunk per row group
    index = harmonia.build(customer_id)             # values None: the row ids of the dimension table
    print(f"indexed {len(index)} customer ids from {path} in {time.perf_counter() - t0:.2f} s: {index}")

    # 2. the fact table's foreign keys (95 % known customers, 5 % unknown), looked up in one batch
    ids = customer_id.to_numpy()
    n = args.orders
    fk = ids[rng.integers(0, ids.size, n)]
    unknown = rng.random(n) < 0.05
    fk[unknown] = rng.integers(2**63, 2**64 - 1, size=int(unknown.sum()), dtype=np.uint64)
    amount = rng.gamma(2.0, 30.0, n).astype(np.float32)
    fk_col, amount_col = xp.asarray(fk), xp.asarray(amount)  # device arrays on the GPU
    if gpu:
        index.device_upload()                        # else the first GPU query uploads the tree
    t0 = time.perf_counter()
    rows, found = index.lookup(fk_col)               # CuPy in, CuPy out: no trip through the host
    if gpu:
        xp.cuda.get_current_stream().synchronize()
    seconds = time.perf_counter() - t0
    print(f"joined {n} orders in {seconds * 1e3:.1f} ms ({n / seconds / 1e6:.0f} M lookups/s): "
          f"{int(found.sum())} matched, {int((~found).sum())} without a customer")
    segment_of_row = pc.index_in(dimension["segment"].cast(pa.string()), value_set=pa.array(SEGMENTS))
    segment_codes = xp.asarray(segment_of_row.to_numpy().astype(np.int64))
    revenue = xp.bincount(segment_codes[rows[found].astype(xp.int64)], weights=amount_col[found].astype(xp.float64),
                          minlength=SEGMENTS.size)
    for name, total in zip(SEGMENTS, revenue.tolist()):
        print(f"  revenue {name:<10} {total:14,.2f}")
    # check against NumPy
    order = np.argsort(ids)
    at = np.minimum(np.searchsorted(ids[order], fk), ids.size - 1)
    want_found = ids[order][at] == fk
    host_found = found.get() if gpu else found
    host_rows = rows.get() if gpu else rows
    assert (host_found == want_found).all() and (host_rows[want_found] == order[at][want_found]).all()
    segment_names = dimension["segment"].cast(pa.string()).to_numpy(zero_copy_only=False)
    for name, total in zip(SEGMENTS, revenue.tolist()):
        mask = want_found.copy()
        mask[want_found] = segment_names[order[at][want_found]] == name
        assert abs(total - float(amount[mask].astype(np.float64).sum())) <= 1e-3 * max(1.0, total)

    # 3. a time column: orders per day of November, one batch of 30 range counts
    start = np.datetime64("2026-11-01T00:00:00", "s").astype(np.int64)
    order_ts = start + rng.integers(0, 30 * 86400, n)     # seconds; many orders share a second
    time_keys = (order_ts.astype(np.uint64) << np.uint64(ROW_BITS)) | np.arange(n, dtype=np.uint64)
    by_time = harmonia.build(xp.asarray(time_keys))       # built on the host (device arrays are copied)
    day_start = (start + 86400 * np.arange(30)).astype(np.uint64)
    lo = xp.asarray(day_start << np.uint64(ROW_BITS))
    hi = xp.asarray(((day_start + np.uint64(86399)) << np.uint64(ROW_BITS)) | np.uint64((1 << ROW_BITS) - 1))
    t0 = time.perf_counter()
    per_day = by_time.range_count(lo, hi)
    print(f"orders per day (30 range counts in {(time.perf_counter() - t0) * 1e3:.2f} ms): "
          f"min {int(per_day.min())}, max {int(per_day.max())}, total {int(per_day.sum())}")
    want = np.bincount((order_ts - start) // 86400, minlength=30)
    assert ((per_day.get() if gpu else per_day) == want).all() and int(per_day.sum()) == n
    print("all results match NumPy")


if __name__ == "__main__":
    main()
