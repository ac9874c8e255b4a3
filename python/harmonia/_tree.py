"""_tree.py — harmonia.Tree (the array API over the C handle harmonia._core.Tree), harmonia.build
and harmonia.load. Every call maps to one function of include/harmonia.h; its contract holds here.

Results come back as the same kind of array as the queries: NumPy in, NumPy out (Arrow, buffers,
lists and scalars in: NumPy out; PyTorch CPU tensors in: tensors out); CuPy in, CuPy out, written on
the device by the GPU engine on the caller's current CuPy stream (or `stream=`), with no host round
trip; PyTorch CUDA tensors in, CUDA tensors out (through DLPack, on PyTorch's current stream).

A tree's device copy lives on one GPU: `device=` of build / load, or set_device; by default (None)
the current CUDA device when the copy is made (its first GPU query, or device_upload). Device arrays
must be on the tree's GPU; a call on them runs with their GPU current, so a tree with device=None
and no copy yet makes it there.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Optional, Tuple

import numpy as np

from . import _arrays as A
from . import _core
from . import _types as T

_BACKENDS = {None: 0, "auto": 0, "cpu": 1, "gpu": 2}
_MEMORY_HOST, _MEMORY_DEVICE = 1, 2
_DUPLICATES = {"reject": 0, "keep_first": 1, "keep_last": 2, "first": 1, "last": 2}
_INSERT_EXISTING = {"error": 0, "upsert": 1}
_UPDATE_MISSING = {"error": 0, "skip": 1}
_LOCKS = {None: 0, False: 0, "none": 0, "try": 1, True: 2, "wait": 2}
_OP_NAMES = {"insert": 0, "update": 1, "upsert": 2, "delete": 3}
_FOUND_DTYPES = (A.BOOL, A.U8)
_U32, _I32 = 2**32 - 1, 2**31 - 1  # the limits of the C fields (uint32_t, int)
_POSITIONS32_MAX = 2**32  # HARMONIA_POSITIONS32_MAX_COUNT: queries whose positions fit 32 bits


def _choice(table, value, name):
    try:
        return table[value.lower() if isinstance(value, str) else value]
    except (KeyError, TypeError):
        names = ", ".join(repr(k) for k in table if isinstance(k, str))
        raise ValueError(f"{name}={value!r}: one of {names}") from None


def _psa_option(psa):
    if psa is None or psa == "auto" or psa == -1:
        return -1
    if psa is True or psa == "on" or psa == 1:
        return 1
    if psa is False or psa == "off" or psa == 0:
        return 0
    raise ValueError(f"psa={psa!r}: True / 'on', False / 'off' or None / 'auto'")


def _device_option(device, name="device"):
    """None (the current device when the copy is made), a CUDA device id, or a CuPy / PyTorch device."""
    if device is None:
        return _core.device_current
    for attribute in ("id", "index"):  # cupy.cuda.Device, torch.device
        value = getattr(device, attribute, None)
        if isinstance(value, int):
            device = value
            break
    if isinstance(device, bool) or not isinstance(device, (int, np.integer)) or not 0 <= int(device) <= _I32:
        raise ValueError(f"{name}={device!r}: None (the current device) or a CUDA device id (an int >= 0)")
    return int(device)


def _count(x, name, limit=2**64 - 1):
    if x is None:
        return 0
    x = int(x)
    if not 0 <= x <= limit:
        raise ValueError(f"{name}={x}: must be in [0, {limit}]")
    return x


class Tree(_core.Tree):
    """A Harmonia B+tree over unsigned 32- or 64-bit keys, each with a value of the same width.

    Made by :func:`harmonia.build` or :func:`harmonia.load`. Queries take arrays of any shape and
    give results of that shape; every query method takes the query options of the C API as keyword
    arguments: ``backend`` ('auto': the GPU when one is usable, 'cpu', 'gpu'), ``threads`` (CPU
    engine, OpenMP), ``psa`` (None/'auto', True, False), ``psa_window``, ``psa_bits``,
    ``group_size``, ``pipeline_depth``, ``stream`` (device arrays: a CuPy/PyTorch stream or a
    cudaStream_t address; default the caller's current stream) and ``sync`` (device arrays: False
    calls the library's asynchronous form, harmonia_*_async, which returns once the work is queued
    on the stream; host arrays take sync=True only).

    Device: the tree's device copy lives on one GPU (``device=`` of build / load, or
    :meth:`set_device`; by default the current CUDA device when the copy is made). Device arrays
    must live on that GPU; the call runs with their GPU current.

    Threads: queries run at once from several Python threads, on the CPU and on the GPU (the C
    contract allows it; the GIL is released during every call). Updates, saves, checks and the
    settings take the tree alone: the tree's lock serialises them against everything else.
    """

    __slots__ = ()

    # --- plumbing ---------------------------------------------------------------------------

    @property
    def dtype(self) -> np.dtype:
        """The dtype of keys and values: uint32 or uint64."""
        return A.key_dtype(self.key_bits)

    def _qc(self, a: A.Adapted, backend, threads, psa, psa_window, psa_bits, group_size, pipeline_depth,
            sync) -> tuple:
        b = _choice(_BACKENDS, backend, "backend")
        if a.device:
            if b == 1:
                raise ValueError("backend='cpu': the CPU engine reads host memory only, and these arrays are in "
                                 "device memory (copy them to the host, or use backend='gpu')")
            self._check_device(a)
            b, memory, stream = 2, _MEMORY_DEVICE, a.stream
        else:
            if not sync:
                raise ValueError("sync=False: the asynchronous calls take device arrays (CuPy arrays, CUDA "
                                 "tensors); host arrays are answered in place when the call returns (sync=True)")
            memory, stream = _MEMORY_HOST, 0
        return (b, _count(threads, "threads", _I32), _psa_option(psa), _count(psa_window, "psa_window"),
                _count(psa_bits, "psa_bits", _U32), _count(group_size, "group_size", _U32), memory,
                _count(pipeline_depth, "pipeline_depth", _U32), stream, not sync)

    def _queries(self, q, name, stream):
        return A.adapt(q, name, self.dtype, stream=stream)

    def _check_device(self, a: A.Adapted):
        """Device arrays must be on the tree's GPU: its device copy's, else its setting (None, the
        current device, takes the arrays' GPU: the call runs with it current)."""
        device, resident = self._device_state()
        if device >= 0 and device != a.device_id:
            where = "device copy is on" if resident else "device is"
            raise ValueError(f"the arrays are on GPU {a.device_id}; the tree's {where} GPU {device} (move the "
                             f"arrays, or tree.set_device({a.device_id}))")

    @staticmethod
    def _on_device(a: A.Adapted):
        """The context of a call on a's arrays: device arrays' GPU current, their stream CuPy's."""
        return A.on_stream(a.stream, a.device_id) if a.device else contextlib.nullcontext()

    def _result(self, a: A.Adapted, out, name, dtypes, dtype):
        """(flat array to write, object to give back or None) for one result."""
        if out is None:
            r = A.empty(a, a.shape, dtype)
            return (r if r.ndim == 1 else r.reshape(-1)), None
        return A.check_out(out, name, a, dtypes, a.shape)

    @staticmethod
    def _give(a, flat, given, shape=None):
        """The result to return: the caller's out= array as given, else `flat` in the queries' shape
        (no new view where it has it already: a CuPy view costs microseconds a call)."""
        if given is not None:
            return given
        shape = a.shape if shape is None else shape
        return A.give(a, flat if tuple(flat.shape) == tuple(shape) else flat.reshape(shape))

    # --- point queries ----------------------------------------------------------------------

    def lookup(self, queries, *, out=None, backend=None, threads=None, psa=None, psa_window=None,
               psa_bits=None, group_size=None, pipeline_depth=None, stream=None, sync=True):
        """Point lookups (harmonia_lookup): ``(values, found)`` of the queries' shape; found[i] is True
        and values[i] the key's value when queries[i] is present, else False and 0.
        ``out=(values, found)`` writes into given arrays (values of the tree's dtype, found bool or
        uint8, the queries' shape, C-contiguous, writable, of the queries' kind)."""
        a = self._queries(queries, "queries", stream)
        qc = self._qc(a, backend, threads, psa, psa_window, psa_bits, group_size, pipeline_depth, sync)
        vo, fo = (None, None) if out is None else self._pair(out, "out", 2)
        v, vg = self._result(a, vo, "out[0] (values)", (self.dtype,), self.dtype)
        f, fg = self._result(a, fo, "out[1] (found)", _FOUND_DTYPES, A.BOOL)
        n = a.flat.size
        with self._on_device(a):
            if a.device:
                self._lookup(qc, n, a.flat.data.ptr, v.data.ptr, f.data.ptr)
            else:
                self._lookup(qc, n, a.flat, v, f)
        return (self._give(a, v, vg), self._give(a, f, fg))

    def lookup_unordered(self, queries, *, backend=None, threads=None, psa=None, psa_window=None,
                         psa_bits=None, group_size=None, pipeline_depth=None, stream=None, sync=True,
                         positions_dtype=None):
        """Point lookups with results in the engine's order: ``(values, found, positions)``, 1-D;
        slot i holds the result of query positions[i] (of the flattened queries). With PSA the order
        is the partition's, which saves the restore step; otherwise positions[i] = i.
        ``positions_dtype``: ``None`` (the default) gives uint32 positions up to 2^32 queries
        (harmonia_lookup_unordered32: half the bytes written, the fast path) and uint64 beyond;
        ``numpy.uint32`` or ``numpy.uint64`` asks for one (uint32 above 2^32 queries: ValueError)."""
        a = self._queries(queries, "queries", stream)
        qc = self._qc(a, backend, threads, psa, psa_window, psa_bits, group_size, pipeline_depth, sync)
        n = a.flat.size
        if positions_dtype is None:
            pdt = A.U32 if n <= _POSITIONS32_MAX else A.U64
        else:
            try:
                pdt = np.dtype(positions_dtype)
            except TypeError as e:
                raise TypeError(f"positions_dtype: {positions_dtype!r} is not a dtype (uint32 or uint64)") from e
            if pdt not in (A.U32, A.U64):
                raise TypeError(f"positions_dtype: {pdt} (use numpy.uint32 or numpy.uint64)")
            if pdt == A.U32 and n > _POSITIONS32_MAX:
                raise ValueError(f"positions_dtype uint32: {n} queries, more than 2^32 (use uint64)")
        v = A.empty(a, (n,), self.dtype)
        f = A.empty(a, (n,), A.BOOL)
        p = A.empty(a, (n,), pdt)
        wide = pdt == A.U64
        with self._on_device(a):
            if a.device:
                self._lookup_unordered(qc, n, a.flat.data.ptr, v.data.ptr, f.data.ptr, p.data.ptr, wide)
            else:
                self._lookup_unordered(qc, n, a.flat, v, f, p, wide)
        if a.wrap is not None:
            return a.wrap(v), a.wrap(f), a.wrap(p)
        return v, f, p

    def lower_bound(self, queries, *, keys=True, values=True, out=None, backend=None, threads=None, psa=None,
                    psa_window=None, psa_bits=None, group_size=None, pipeline_depth=None, stream=None,
                    sync=True):
        """Lower bounds (harmonia_lower_bound): ``(keys, values, found)``: for each query the smallest
        key >= it and its value, found True; found False and 0, 0 when no key is >= it.
        keys=False / values=False skip that result (None in its place). ``out=(keys, values, found)``
        writes into given arrays (None entries for skipped results)."""
        a = self._queries(queries, "queries", stream)
        qc = self._qc(a, backend, threads, psa, psa_window, psa_bits, group_size, pipeline_depth, sync)
        ko, vo, fo = (None, None, None) if out is None else self._pair(out, "out", 3)
        k = kg = v = vg = None
        if keys:
            k, kg = self._result(a, ko, "out[0] (keys)", (self.dtype,), self.dtype)
        if values:
            v, vg = self._result(a, vo, "out[1] (values)", (self.dtype,), self.dtype)
        f, fg = self._result(a, fo, "out[2] (found)", _FOUND_DTYPES, A.BOOL)
        n = a.flat.size
        with self._on_device(a):
            if a.device:
                self._lower_bound(qc, n, a.flat.data.ptr, None if k is None else k.data.ptr,
                                  None if v is None else v.data.ptr, f.data.ptr)
            else:
                self._lower_bound(qc, n, a.flat, k, v, f)
        return (None if k is None else self._give(a, k, kg),
                None if v is None else self._give(a, v, vg),
                self._give(a, f, fg))

    # --- range queries ----------------------------------------------------------------------

    def _ranges(self, lo, hi, stream):
        a = self._queries(lo, "lo", stream)
        b = self._queries(hi, "hi", stream if stream is not None else (a.stream if a.device else None))
        a, b = A.same_place(a, b, "lo and hi")
        return A.broadcast(a, b)

    def range_count(self, lo, hi, *, out=None, backend=None, threads=None, psa=None, psa_window=None,
                    psa_bits=None, group_size=None, pipeline_depth=None, stream=None, sync=True):
        """Range counts (harmonia_range_count): the number of keys k with lo <= k <= hi (inclusive on
        both ends; lo > hi counts 0), uint64, of the broadcast shape of lo and hi."""
        a, b, shape = self._ranges(lo, hi, stream)
        qc = self._qc(a, backend, threads, psa, psa_window, psa_bits, group_size, pipeline_depth, sync)
        c, cg = self._result(a, out, "out (counts)", (A.U64,), A.U64)
        n = a.flat.size
        with self._on_device(a):
            if a.device:
                self._range_count(qc, n, a.flat.data.ptr, b.flat.data.ptr, c.data.ptr)
            else:
                self._range_count(qc, n, a.flat, b.flat, c)
        return self._give(a, c, cg, shape)

    def range_collect(self, lo, hi, *, keys=True, values=True, backend=None, threads=None, psa=None,
                      psa_window=None, psa_bits=None, group_size=None, pipeline_depth=None, stream=None):
        """Range collect (harmonia_range_collect, both phases): ``(offsets, keys, values)``: the pairs of
        range i, ascending by key, are keys[offsets[i]:offsets[i+1]] and values[...]; offsets has
        len(lo) + 1 entries (uint64), offsets[-1] the total. lo and hi are scalars or 1-D.
        keys=False / values=False skip that result. The tree stays locked across both phases, so an
        update from another thread cannot come between them. Synchronous."""
        a, b, shape = self._ranges(lo, hi, stream)
        if len(shape) > 1:
            raise ValueError(f"range_collect: lo and hi must be scalars or 1-D, not of shape {shape}")
        qc = self._qc(a, backend, threads, psa, psa_window, psa_bits, group_size, pipeline_depth, True)
        n = a.flat.size
        offsets = A.empty(a, (n + 1,), A.U64)
        results = []

        def allocate():  # called between the phases, the tree still locked
            total = int(offsets[n] - offsets[0]) if n else 0
            k = A.empty(a, (total,), self.dtype) if keys else None
            v = A.empty(a, (total,), self.dtype) if values else None
            results.append((k, v))
            if a.device:
                return (None if k is None else k.data.ptr, None if v is None else v.data.ptr, total)
            return k, v, total

        with self._on_device(a):
            if a.device:
                self._range_collect(qc, n, a.flat.data.ptr, b.flat.data.ptr, offsets.data.ptr, allocate)
            else:
                self._range_collect(qc, n, a.flat, b.flat, offsets, allocate)
        k, v = results[0] if results else (None, None)
        wrap = a.wrap or (lambda x: x)
        return (wrap(offsets), None if k is None else wrap(k), None if v is None else wrap(v))

    # --- updates ----------------------------------------------------------------------------

    def update(self, kinds, keys, values=None, *, insert_existing="error", update_missing="error",
               split_fill=None, threads=None, skip_upload=False) -> T.UpdateStats:
        """Applies a batch of operations as one atomic batch (harmonia_update): kinds[i] (an
        :class:`Op`, its name 'insert' / 'update' / 'upsert' / 'delete', or an array of them; one kind
        applies to every key) on keys[i] with values[i] (values may be None when all are deletes).
        Operations on the same key apply in batch order. Policies: insert_existing 'error' (a present
        key fails the batch: KeyExistsError) or 'upsert'; update_missing 'error' (KeyMissingError) or
        'skip'. A failed batch leaves the tree exactly as it was; its exception carries
        ``.failed_operation`` (the index) and ``.stats``. Returns :class:`UpdateStats`. Device
        arrays are copied to the host (the updater runs on the CPU); the device copy of the tree is
        synchronised before the call returns (unless skip_upload)."""
        k = A.adapt(keys, "keys", self.dtype, host_only=True)
        if k.flat.ndim != 1 or len(k.shape) > 1:
            raise ValueError(f"keys: a 1-D array is required, not of shape {k.shape}")
        n = k.flat.size
        kind_array = self._kinds(kinds, n)
        v = None
        if values is not None:
            va = A.adapt(values, "values", self.dtype, host_only=True)
            if va.flat.size != n or len(va.shape) > 1:
                raise ValueError(f"values: {n} values (1-D) are required, not of shape {va.shape}")
            v = va.flat
        policies = (_choice(_INSERT_EXISTING, insert_existing, "insert_existing"),
                    _choice(_UPDATE_MISSING, update_missing, "update_missing"), float(split_fill or 0.0),
                    _count(threads, "threads", _I32), bool(skip_upload))
        try:
            stats = self._update(n, kind_array, k.flat, v, *policies)
        except _core.Error as e:
            if isinstance(getattr(e, "stats", None), dict):
                e.stats = T.update_stats(e.stats)
            raise
        return T.update_stats(stats)

    @staticmethod
    def _kinds(kinds, n):
        if isinstance(kinds, (str, int, np.integer)):
            code = _choice(_OP_NAMES, kinds, "kinds") if isinstance(kinds, str) else int(kinds)
            if not 0 <= code <= 255:
                raise ValueError(f"kinds={kinds!r}: an operation kind is 0 to 3 (harmonia.Op)")
            return np.full(n, code, dtype=A.U8)
        if isinstance(kinds, (list, tuple)) and kinds and isinstance(kinds[0], str):
            kinds = np.asarray(kinds)
        arr = kinds
        if isinstance(kinds, np.ndarray) and kinds.dtype.kind in "US":
            names = np.char.lower(kinds.astype(str))
            arr = np.full(kinds.shape, 255, dtype=A.U8)
            for name, code in _OP_NAMES.items():
                arr[names == name] = code
            bad = np.flatnonzero(arr == 255)
            if bad.size:
                raise ValueError(f"kinds[{bad[0]}] = {kinds.reshape(-1)[bad[0]]!r}: one of "
                                 f"{', '.join(map(repr, _OP_NAMES))}")
        a = A.adapt(arr, "kinds", A.U8, host_only=True)
        if a.flat.size != n or len(a.shape) > 1:
            raise ValueError(f"kinds: {n} kinds (1-D) are required, not of shape {a.shape}")
        return a.flat

    def insert(self, keys, values=None, **policy) -> T.UpdateStats:
        """update('insert', keys, values, ...); values None: each key's value is 0."""
        return self.update("insert", keys, self._zeros_if_none(values, keys), **policy)

    def upsert(self, keys, values, **policy) -> T.UpdateStats:
        """update('upsert', keys, values, ...)."""
        return self.update("upsert", keys, values, **policy)

    def delete(self, keys, **policy) -> T.UpdateStats:
        """update('delete', keys): absent keys are counted (stats.missing), not an error."""
        return self.update("delete", keys, None, **policy)

    def _zeros_if_none(self, values, keys):
        if values is not None:
            return values
        return np.zeros(A.adapt(keys, "keys", self.dtype, host_only=True).flat.size, self.dtype)

    # --- files, checks, information ---------------------------------------------------------

    def save(self, path) -> None:
        """Saves the tree to path atomically (harmonia_save: temporary file, fsync, rename; regular
        files only; ConflictError when another process holds the file's lock or replaced it)."""
        self._save(os.fspath(path))

    def check(self) -> None:
        """Runs the integrity checker (harmonia_check); raises CorruptError naming the first broken
        invariant. A tree loaded without verification also gets its checksums checked."""
        self._check()

    def info(self) -> T.TreeInfo:
        """harmonia_info: shape, sizes, version and device copy, as :class:`TreeInfo`."""
        return T.tree_info(self._info())

    def __len__(self) -> int:
        return self._info()["key_count"]

    def __contains__(self, key) -> bool:
        a = A.adapt(key, "key", self.dtype)
        if a.flat.size != 1:
            raise TypeError("`key in tree` takes one key; use tree.lookup(keys) for arrays")
        return bool(self.lookup(a.flat, backend="cpu")[1][0])

    def get(self, key, default=None):
        """The value of one key, or default when absent."""
        a = A.adapt(key, "key", self.dtype)
        if a.flat.size != 1:
            raise TypeError("get takes one key; use tree.lookup(keys) for arrays")
        values, found = self.lookup(a.flat, backend="cpu")
        return int(values[0]) if found[0] else default

    def items(self, *, backend=None) -> Tuple[np.ndarray, np.ndarray]:
        """Every (key, value) pair, ascending by key, as two NumPy arrays (one range collect)."""
        top = np.iinfo(self.dtype).max
        _, k, v = self.range_collect(np.array([0], self.dtype), np.array([top], self.dtype), backend=backend)
        return k, v

    def sample_keys(self, count: int, seed: int = 0) -> np.ndarray:
        """count keys drawn uniformly, with replacement, from the tree's keys (harmonia_sample_keys):
        a workload of hits; deterministic for a seed."""
        out = np.empty(_count(count, "count"), self.dtype)
        self._sample_keys(out.size, int(seed), out)
        return out

    # --- NTG profiling and GPU settings -----------------------------------------------------

    def profile_ntg(self, queries=None, *, count: int = 1 << 20, seed: int = 0, measure: Optional[bool] = None,
                    keep: bool = False, unordered: bool = False, sample: Optional[int] = None,
                    levels: Optional[int] = None, warmup: Optional[int] = None, runs: Optional[int] = None,
                    psa=None, psa_window=None, psa_bits=None, pipeline_depth=None) -> T.NtgProfile:
        """Chooses G, the threads searching one query together on the GPU: the model (paper Eq. 4,
        harmonia_ntg_model, no GPU needed) and, where a GPU is usable (measure=None) or when asked
        (measure=True), the measurement (harmonia_ntg_measure). The workload is `queries` (host
        memory) or `count` keys sampled from the tree with `seed`. keep=True stores the choice with
        the tree (harmonia_set_group_size; save to keep it in the file)."""
        if queries is None:
            q = self.sample_keys(count, seed)
        else:
            q = A.adapt(queries, "queries", self.dtype, host_only=True).flat
        if measure is None:
            measure = gpu_available()
        qc = (0, 0, _psa_option(psa), _count(psa_window, "psa_window"), _count(psa_bits, "psa_bits", _U32), 0,
              0, _count(pipeline_depth, "pipeline_depth", _U32), 0, False)
        model, measured, choice = self._profile_ntg(
            qc, bool(unordered), _count(sample, "sample"), _count(levels, "levels", _U32),
            _count(warmup, "warmup", _U32), _count(runs, "runs", _U32), q.size, q, bool(measure))
        if keep and choice:
            self._set_group_size(choice)
        return T.NtgProfile(T.ntg_model(model), T.ntg_measurement(measured), choice, bool(keep and choice))

    def set_group_size(self, group_size: int) -> None:
        """Stores G with the tree (harmonia_set_group_size); 0 clears it. Saved by save()."""
        self._set_group_size(_count(group_size, "group_size", _U32))

    def set_constant_levels(self, levels) -> None:
        """Internal levels, root first, whose first-child entries the GPU kernels read from constant
        memory (harmonia_set_constant_levels): an int, or 'all' (as many as fit). Takes effect at
        the next GPU call."""
        self._set_constant_levels(-1 if levels == "all" else int(levels))

    def set_device(self, device=None) -> None:
        """The GPU of the tree's device copy (harmonia_set_device): a CUDA device id (or a CuPy /
        PyTorch device), or None, the current device when the copy is made. A copy on another GPU
        is released; the next GPU query or device_upload() makes it on the new one."""
        self._set_device(_device_option(device))

    def device_upload(self) -> None:
        """Makes the device copy now on the tree's device (harmonia_device_upload; with device None,
        the current CUDA device); queries do it on first use. Synchronous."""
        self._device_upload()

    def device_release(self) -> None:
        """Frees the device copy (harmonia_device_release), after the queries already queued."""
        self._device_release()

    def device_bytes(self) -> int:
        """The GPU memory the device copy takes, whether or not it exists yet
        (harmonia_device_bytes; its scratch comes on top). Needs no GPU."""
        return self._device_bytes()

    # --- life cycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Frees the tree now (host memory, mapped file, device copy, file lock); later calls raise
        ValueError. Garbage collection does the same."""
        self._close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "<harmonia.Tree (closed)>"
        i = self._info()
        return (f"<harmonia.Tree {i['key_count']} keys of {i['key_bits']} bits, F={i['fanout']} "
                f"L={i['leaf_size']} height={i['height']}{' mapped' if i['mapped'] else ''}>")

    def __reduce__(self):
        raise TypeError("harmonia.Tree cannot be pickled: save it with tree.save(path) and harmonia.load(path)")

    @staticmethod
    def _pair(out, name, n):
        if not isinstance(out, (tuple, list)) or len(out) != n:
            raise TypeError(f"{name}: a tuple of {n} arrays is expected")
        return tuple(out)


# --- module functions ---------------------------------------------------------------------------

def build(keys, values=None, *, fanout: Optional[int] = None, leaf_size: Optional[int] = None,
          fill: Optional[float] = None, duplicates: str = "reject", sorted: bool = False,
          threads: Optional[int] = None, key_bits: Optional[int] = None, progress=None, device=None) -> Tree:
    """Builds a tree from keys and values (harmonia_build; synchronous, OpenMP-parallel, on the host).

    keys: any integer array (NumPy, Arrow, buffers, lists; device arrays are copied to the host);
    the key width comes from its dtype (64-bit integer dtypes: 64-bit keys, narrower: 32-bit) unless
    key_bits says 32 or 64. values: of the same length, converted to the key width when every value
    fits; None = each key's position in the input (a row id). fanout (F: 8 .. 128, None = the
    width's default), leaf_size (L), fill (leaf fill in (0, 1]), duplicates ('reject':
    DuplicateKeyError, 'keep_first', 'keep_last'), sorted (the caller promises ascending keys:
    verified, UnsortedError), threads (OpenMP threads; None = OpenMP's default), progress (a
    callable(phase, fraction)), device (the GPU of the device copy: a CUDA device id, or None = the
    current device when the copy is made; no copy is made here).
    The inputs are not kept: the tree owns a copy."""
    target = None if key_bits is None else A.key_dtype(_choice({32: 32, 64: 64}, key_bits, "key_bits"))
    k = A.adapt(keys, "keys", target, host_only=True)
    if len(k.shape) != 1:
        raise ValueError(f"keys: a 1-D array is required, not of shape {k.shape}")
    dtype = k.flat.dtype
    v = None
    if values is not None:
        va = A.adapt(values, "values", dtype, host_only=True)
        if len(va.shape) != 1 or va.flat.size != k.flat.size:
            raise ValueError(f"values: {k.flat.size} values (1-D) are required, not of shape {va.shape}")
        v = va.flat
    return _core.build(Tree, dtype.itemsize * 8, k.flat.size, k.flat, v, _count(fanout, "fanout", _U32),
                       _count(leaf_size, "leaf_size", _U32), float(fill or 0.0),
                       _choice(_DUPLICATES, duplicates, "duplicates"), bool(sorted),
                       _count(threads, "threads", _I32), progress, _device_option(device))


def load(path, verify: bool = True, *, lock=None, progress=None, device=None) -> Tree:
    """Loads an index file written by save (harmonia_load), mapping it into memory. verify=True
    checks every checksum and runs the integrity checker (CorruptError on damage); verify=False
    keeps the O(nodes) structure checks only (the tree is verified in full before its first update
    or save). lock: None (no lock), 'try' (take the file's exclusive lock or ConflictError at once)
    or 'wait'; the lock is held until the tree is closed. device: as build's (None = the current
    device when the copy is made)."""
    return _core.load(Tree, os.fspath(path), bool(verify), _choice(_LOCKS, lock, "lock"), progress,
                      _device_option(device))


_probe: Any = None


def device_probe(refresh: bool = False) -> Optional[T.DeviceInfo]:
    """The current CUDA device as the library sees it (harmonia_device_probe; .device its id), or
    None when no GPU is usable (then :func:`device_unavailable_reason` says why). The answer is
    kept: refresh=True probes again (after the current device changed). The first call creates the
    CUDA context."""
    global _probe
    if _probe is None or refresh:
        _probe = _core.device_probe()
    ok, info = _probe
    return T.DeviceInfo(**info) if ok else None


def device_unavailable_reason() -> Optional[str]:
    """Why no GPU is usable ("built without CUDA", "no CUDA-capable device is detected", ...), or None."""
    device_probe()
    ok, info = _probe
    return None if ok else info


def gpu_available() -> bool:
    """Whether the GPU engine is built in and a GPU is usable."""
    return device_probe() is not None
