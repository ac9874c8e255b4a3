"""Shared fixtures of the Python tests: random trees of both widths next to a NumPy model (sorted
keys and their values, answered with np.searchsorted), and the GPU skip."""

import numpy as np
import pytest

import harmonia


class Model:
    """The reference: sorted distinct keys and their values."""

    def __init__(self, keys, values):
        order = np.argsort(keys, kind="stable")
        self.keys = np.asarray(keys)[order]
        self.values = np.asarray(values)[order]
        assert np.all(self.keys[1:] > self.keys[:-1]), "the model wants distinct keys"
        self.dtype = self.keys.dtype

    def lookup(self, q):
        q = np.asarray(q, self.dtype)
        i = np.searchsorted(self.keys, q)
        inside = i < self.keys.size
        ic = np.where(inside, i, 0)
        found = inside & (self.keys[ic] == q) if self.keys.size else np.zeros(q.shape, bool)
        values = np.where(found, self.values[ic] if self.keys.size else 0, 0).astype(self.dtype)
        return values, found

    def lower_bound(self, q):
        q = np.asarray(q, self.dtype)
        i = np.searchsorted(self.keys, q, side="left")
        found = i < self.keys.size
        ic = np.where(found, i, 0)
        if not self.keys.size:
            z = np.zeros(q.shape, self.dtype)
            return z, z.copy(), found
        return (np.where(found, self.keys[ic], 0).astype(self.dtype),
                np.where(found, self.values[ic], 0).astype(self.dtype), found)

    def range_count(self, lo, hi):
        lo = np.asarray(lo, self.dtype)
        hi = np.asarray(hi, self.dtype)
        a = np.searchsorted(self.keys, lo, side="left")
        b = np.searchsorted(self.keys, hi, side="right")
        return np.where(lo <= hi, b - a, 0).astype(np.uint64)

    def range_collect(self, lo, hi):
        lo = np.atleast_1d(np.asarray(lo, self.dtype))
        hi = np.atleast_1d(np.asarray(hi, self.dtype))
        offsets = [0]
        ks, vs = [], []
        for l, h in zip(lo, hi):
            if l <= h:
                a = np.searchsorted(self.keys, l, side="left")
                b = np.searchsorted(self.keys, h, side="right")
                ks.append(self.keys[a:b])
                vs.append(self.values[a:b])
                offsets.append(offsets[-1] + b - a)
            else:
                offsets.append(offsets[-1])
        empty = np.empty(0, self.dtype)
        return (np.array(offsets, np.uint64), np.concatenate(ks) if ks else empty,
                np.concatenate(vs) if vs else empty)


def random_keys(rng, n, dtype, *, with_extremes=True):
    """n distinct keys of dtype in random order, 0 and the maximum among them."""
    top = np.iinfo(dtype).max
    keys = np.unique(rng.integers(1, top - 1, size=n + n // 8 + 16, dtype=dtype, endpoint=True))
    rng.shuffle(keys)
    extremes = np.array([0, top] if with_extremes and n >= 2 else [], dtype)
    keys = np.concatenate([keys[:n - extremes.size], extremes])
    rng.shuffle(keys)
    assert np.unique(keys).size == n
    return keys


def queries_for(rng, model, m):
    """m queries: half hits, half random (mostly misses), 0, max, and neighbours of keys."""
    dtype = model.dtype
    top = np.iinfo(dtype).max
    parts = [rng.integers(0, top, size=m // 2, dtype=dtype, endpoint=True), np.array([0, 1, top, top - 1], dtype)]
    if model.keys.size:
        hits = model.keys[rng.integers(0, model.keys.size, size=m - m // 2)]
        parts += [hits, hits + np.array(1, dtype), hits - np.array(1, dtype)]
    q = np.concatenate(parts)
    rng.shuffle(q)
    return q


@pytest.fixture
def rng():
    return np.random.default_rng(20261124)


@pytest.fixture(params=[np.uint32, np.uint64], ids=["u32", "u64"])
def dtype(request):
    return np.dtype(request.param)


@pytest.fixture(params=[None, "cpu"], ids=["auto", "cpu"])
def backend(request):
    return request.param


@pytest.fixture
def tree_and_model(rng, dtype):
    """A random tree of 20 000 keys (0 and the maximum among them) with random values."""
    keys = random_keys(rng, 20000, dtype)
    values = rng.integers(0, np.iinfo(dtype).max, size=keys.size, dtype=dtype, endpoint=True)
    tree = harmonia.build(keys, values)
    yield tree, Model(keys, values)
    tree.close()


def gpu_reason():
    """Why the GPU tests cannot run here, or None."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "CuPy is not installed"
    if not harmonia.built_with_cuda:
        return "harmonia was built without CUDA (no nvcc at build time)"
    if not harmonia.gpu_available():
        return f"no usable GPU: {harmonia.device_unavailable_reason()}"
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy sees no GPU"
    except Exception as e:  # noqa: BLE001
        return f"CuPy cannot use the GPU: {e}"
    return None


@pytest.fixture
def cp():
    reason = gpu_reason()
    if reason:
        pytest.skip(reason)
    import cupy
    return cupy
