"""GPU tests: CuPy arrays in, CuPy arrays out (written in device memory by the GPU engine, on the
caller's stream), streams, out= device arrays, dtype conversion on the device, device arrays for
build and update, PyTorch CUDA tensors, the device copy and the NTG measurement. Every test is
skipped, with the reason, where CuPy, a CUDA build or a usable GPU is missing."""

import numpy as np
import pytest

import harmonia
from harmonia import _arrays
from conftest import Model, queries_for, random_keys


@pytest.fixture
def gpu_tree(rng, dtype, cp):
    keys = random_keys(rng, 50000, dtype)
    values = rng.integers(0, np.iinfo(dtype).max, size=keys.size, dtype=dtype, endpoint=True)
    tree = harmonia.build(keys, values)
    yield tree, Model(keys, values)
    tree.close()


def test_cupy_in_cupy_out(gpu_tree, rng, cp):
    tree, model = gpu_tree
    q = queries_for(rng, model, 20000)
    dq = cp.asarray(q)
    v, f = tree.lookup(dq)
    assert isinstance(v, cp.ndarray) and isinstance(f, cp.ndarray)
    assert v.dtype == model.dtype and f.dtype == np.bool_ and v.shape == q.shape
    mv, mf = model.lookup(q)
    np.testing.assert_array_equal(cp.asnumpy(f), mf)
    np.testing.assert_array_equal(cp.asnumpy(v), mv)
    k, v, f = tree.lower_bound(dq)
    mk, mv, mf = model.lower_bound(q)
    np.testing.assert_array_equal(cp.asnumpy(k), mk)
    np.testing.assert_array_equal(cp.asnumpy(v), mv)
    np.testing.assert_array_equal(cp.asnumpy(f), mf)
    lo, hi = np.minimum(q, q[::-1]), np.maximum(q, q[::-1])
    c = tree.range_count(cp.asarray(lo), cp.asarray(hi))
    assert isinstance(c, cp.ndarray) and c.dtype == np.uint64
    np.testing.assert_array_equal(cp.asnumpy(c), model.range_count(lo, hi))
    vals, found, pos = tree.lookup_unordered(dq)
    assert isinstance(pos, cp.ndarray)
    p = cp.asnumpy(pos).astype(np.int64)
    np.testing.assert_array_equal(np.sort(p), np.arange(q.size))
    np.testing.assert_array_equal(cp.asnumpy(vals), model.lookup(q[p])[0])


def test_cupy_range_collect(gpu_tree, rng, cp):
    tree, model = gpu_tree
    top = np.iinfo(model.dtype).max
    lo = np.sort(queries_for(rng, model, 500))[:500]
    span = np.array(top // 5000, model.dtype)
    hi = np.where(lo > top - span, np.array(top, model.dtype), lo + span).astype(model.dtype)
    o, k, v = tree.range_collect(cp.asarray(lo), cp.asarray(hi))
    assert isinstance(o, cp.ndarray) and isinstance(k, cp.ndarray)
    mo, mk, mv = model.range_collect(lo, hi)
    np.testing.assert_array_equal(cp.asnumpy(o), mo)
    np.testing.assert_array_equal(cp.asnumpy(k), mk)
    np.testing.assert_array_equal(cp.asnumpy(v), mv)
    o, k, v = tree.range_collect(cp.asarray(lo[:0]), cp.asarray(hi[:0]))
    assert cp.asnumpy(o).tolist() == [0] and k.size == 0


def test_large_batch_psa(gpu_tree, rng, cp):
    """2^22 device queries: PSA (auto) partitions them; results in query order."""
    tree, model = gpu_tree
    q = np.concatenate([model.keys[rng.integers(0, model.keys.size, 1 << 21)],
                        rng.integers(0, np.iinfo(model.dtype).max, 1 << 21, dtype=model.dtype)])
    rng.shuffle(q)
    v, f = tree.lookup(cp.asarray(q))
    mv, mf = model.lookup(q)
    np.testing.assert_array_equal(cp.asnumpy(f), mf)
    np.testing.assert_array_equal(cp.asnumpy(v), mv)
    for psa in (True, False):
        v2, f2 = tree.lookup(cp.asarray(q), psa=psa, group_size=4)
        np.testing.assert_array_equal(cp.asnumpy(v2), mv)
    # host arrays through the GPU engine (pinned staging over the lanes) agree with the CPU engine
    hv, hf = tree.lookup(q, backend="gpu")
    cv, cf = tree.lookup(q, backend="cpu")
    np.testing.assert_array_equal(hv, cv)
    np.testing.assert_array_equal(hf, cf)


def test_streams(gpu_tree, rng, cp):
    tree, model = gpu_tree
    q = queries_for(rng, model, 100000)
    mv, mf = model.lookup(q)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        dq = cp.asarray(q)
        a = _arrays.adapt(dq, "queries", tree.dtype)
        qc = tree._qc(a, None, None, None, None, None, None, None, True)
        assert a.stream == s.ptr and qc[6] == 2 and qc[8] == s.ptr  # device memory, the caller's stream
        v, f = tree.lookup(dq)
        np.testing.assert_array_equal(cp.asnumpy(v), mv)
        # sync=False: queued on the stream; the stream's order makes the next use safe
        v2, f2 = tree.lookup(dq, sync=False)
        total = int(f2.sum())
        assert total == int(mf.sum())
    s.synchronize()
    other = cp.cuda.Stream(non_blocking=True)
    dq = cp.asarray(q)
    cp.cuda.get_current_stream().synchronize()
    v3, f3 = tree.lookup(dq, stream=other)  # an explicit stream (CuPy object or address)
    np.testing.assert_array_equal(cp.asnumpy(v3), mv)
    v4, f4 = tree.lookup(dq, stream=other.ptr)
    np.testing.assert_array_equal(cp.asnumpy(f4), mf)


def test_device_out_arrays(gpu_tree, rng, cp):
    tree, model = gpu_tree
    q = cp.asarray(queries_for(rng, model, 5000))
    v = cp.empty(q.shape, model.dtype)
    f = cp.empty(q.shape, cp.uint8)
    rv, rf = tree.lookup(q, out=(v, f))
    assert rv is v and rf is f
    mv, mf = model.lookup(cp.asnumpy(q))
    np.testing.assert_array_equal(cp.asnumpy(v), mv)
    np.testing.assert_array_equal(cp.asnumpy(f).astype(bool), mf)
    with pytest.raises(TypeError, match="CuPy"):
        tree.lookup(q, out=(np.empty(q.shape, model.dtype), f))
    with pytest.raises(TypeError, match="NumPy"):
        tree.lookup(cp.asnumpy(q), out=(v, f))
    with pytest.raises(ValueError, match="contiguous"):
        tree.lookup(q, out=(cp.empty(2 * q.size, model.dtype)[::2], f))
    with pytest.raises(TypeError, match="dtype"):
        tree.range_count(q, q, out=cp.empty(q.shape, cp.int64))


def test_device_dtypes_shapes_and_backend(gpu_tree, rng, cp):
    tree, model = gpu_tree
    k = model.keys[:1000]
    signed = cp.asarray((k % 100000).astype(np.int64))
    v, f = tree.lookup(signed)  # converted on the device: no negative element
    np.testing.assert_array_equal(cp.asnumpy(f), model.lookup(cp.asnumpy(signed).astype(model.dtype))[1])
    with pytest.raises(ValueError, match="-5"):
        tree.lookup(cp.asarray(np.array([1, -5], np.int64)))
    with pytest.raises(TypeError, match="float"):
        tree.lookup(cp.zeros(4, cp.float32))
    strided = cp.asarray(k)[::3]
    v, f = tree.lookup(strided)
    assert f.all()
    two_d = cp.asarray(k[:900]).reshape(30, 30)
    v, f = tree.lookup(two_d)
    assert v.shape == (30, 30)
    with pytest.raises(ValueError, match="host memory"):
        tree.lookup(cp.asarray(k), backend="cpu")
    e = cp.empty(0, model.dtype)
    v, f = tree.lookup(e)
    assert v.size == 0 and isinstance(v, cp.ndarray)
    with pytest.raises(TypeError, match="device memory and the other in host"):
        tree.range_count(cp.asarray(k), k)
    top = int(np.iinfo(model.dtype).max)
    c = tree.range_count(cp.asarray(k), top)  # a host scalar beside device arrays goes to the device
    assert isinstance(c, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(c), model.range_count(k, np.full(k.size, top, model.dtype)))
    o, ks, vs = tree.range_collect(0, cp.asarray(k[:3]))
    assert isinstance(o, cp.ndarray)


def test_build_and_update_from_device_arrays(rng, dtype, cp):
    keys = random_keys(rng, 20000, dtype)
    tree = harmonia.build(cp.asarray(keys), cp.asarray(np.arange(keys.size, dtype=dtype)))
    v, f = tree.lookup(cp.asarray(keys))
    assert bool(f.all()) and (cp.asnumpy(v) == np.arange(keys.size)).all()
    tree.device_upload()
    assert tree.info().device_resident
    stats = tree.update("upsert", cp.asarray(keys[:100]), cp.zeros(100, dtype))
    assert stats.updated == 100
    info = tree.info()
    assert info.device_version == info.version  # the device copy followed the update
    v, f = tree.lookup(cp.asarray(keys[:100]))
    assert not bool(v.any())
    tree.device_release()
    assert not tree.info().device_resident
    tree.set_constant_levels("all")
    v, f = tree.lookup(cp.asarray(keys[:1000]))
    assert bool(f.all())


def test_device_probe_and_ntg_measure(rng, cp):
    info = harmonia.device_probe()
    assert info is not None and info.sm_count > 0 and info.global_memory_bytes > 0
    assert harmonia.device_unavailable_reason() is None
    tree = harmonia.build(random_keys(rng, 1 << 20, np.uint64))
    profile = tree.profile_ntg(count=1 << 20, runs=2, keep=True)
    m = profile.measurement
    assert m is not None and m.best in m.group_sizes and m.queries == 1 << 20 and m.found == 1 << 20
    assert profile.choice == m.best and tree.info().ntg_group_size == m.best


def test_torch_tensors(rng, cp):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    keys = random_keys(rng, 10000, np.uint64)
    tree = harmonia.build(keys)
    q = torch.as_tensor(keys[:500].astype(np.int64) % (1 << 62), device="cuda")
    v, f = tree.lookup(q)
    assert isinstance(v, torch.Tensor) and v.is_cuda and isinstance(f, torch.Tensor)
    model = Model(keys, np.arange(keys.size, dtype=np.uint64))
    mv, mf = model.lookup(q.cpu().numpy().astype(np.uint64))
    assert f.cpu().numpy().tolist() == mf.tolist()
    # a CPU tensor in, a CPU tensor out
    v, f = tree.lookup(torch.as_tensor(keys[:10].astype(np.int64) % (1 << 62)))
    assert isinstance(v, torch.Tensor) and not v.is_cuda


def test_array_on_another_gpu(cp):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU: the check of arrays on another GPU needs two")
    tree = harmonia.build(np.arange(100, dtype=np.uint64))
    with cp.cuda.Device(1):
        q = cp.arange(10, dtype=cp.uint64)
    with pytest.raises(ValueError, match="GPU 1"):
        tree.lookup(q)
