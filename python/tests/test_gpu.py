"""GPU tests: CuPy arrays in, CuPy arrays out (written in device memory by the GPU engine, on the
caller's stream), streams and the asynchronous calls, out= device arrays, dtype conversion on the
device, device arrays for build and update, PyTorch CUDA tensors, the device copy and its device,
threads querying one tree on the GPU, and the NTG measurement. Every test is skipped, with the
reason, where CuPy, a CUDA build or a usable GPU is missing."""

import threading

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
    for pdt in (None, np.uint64):  # 32-bit positions by default (harmonia_lookup_unordered32)
        vals, found, pos = tree.lookup_unordered(dq, positions_dtype=pdt)
        assert isinstance(pos, cp.ndarray) and pos.dtype == (np.uint32 if pdt is None else pdt)
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
        assert not qc[9] and tree._qc(a, None, None, None, None, None, None, None, False)[9]
        v, f = tree.lookup(dq)
        np.testing.assert_array_equal(cp.asnumpy(v), mv)
        # sync=False: harmonia_*_async, queued on the stream; the stream's order makes the next use safe
        v2, f2 = tree.lookup(dq, sync=False)
        total = int(f2.sum())
        assert total == int(mf.sum())
        k3, v3, f3 = tree.lower_bound(dq, sync=False)
        c3 = tree.range_count(dq, dq, sync=False)
        v4, f4, p4 = tree.lookup_unordered(dq, sync=False)
        s.synchronize()
        mk, mv3, mf3 = model.lower_bound(q)
        np.testing.assert_array_equal(cp.asnumpy(k3), mk)
        np.testing.assert_array_equal(cp.asnumpy(c3), mf.astype(np.uint64))
        np.testing.assert_array_equal(np.sort(cp.asnumpy(p4)), np.arange(q.size))
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
    info = tree.info()
    assert info.device_resident and info.device == cp.cuda.runtime.getDevice()  # None: the current device
    assert info.device_bytes >= tree.device_bytes() > 0
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
    assert info.device == cp.cuda.runtime.getDevice()
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


def test_threads_query_one_tree_on_the_gpu(rng, cp):
    """Several Python threads query one tree at once on the GPU (the C contract allows it; the
    tree's lock is shared by queries): device arrays on each thread's own stream, synchronous and
    asynchronous, and host arrays through the GPU engine, against the model."""
    keys = random_keys(rng, 100000, np.uint64)
    tree = harmonia.build(keys)
    model = Model(keys, np.arange(keys.size, dtype=np.uint64))
    batches = [queries_for(rng, model, 50000) for _ in range(4)]
    errors = []

    def work(q):
        try:
            mv, mf = model.lookup(q)
            s = cp.cuda.Stream(non_blocking=True)
            for _ in range(5):
                with s:
                    dq = cp.asarray(q)
                    v, f = tree.lookup(dq)
                    assert (cp.asnumpy(v) == mv).all() and (cp.asnumpy(f) == mf).all()
                    v, f = tree.lookup(dq, sync=False, psa=False)
                    c = tree.range_count(dq, dq, sync=False)
                    s.synchronize()
                    assert (cp.asnumpy(v) == mv).all() and (cp.asnumpy(c) == mf).all()
                hv, hf = tree.lookup(q, backend="gpu")
                assert (hv == mv).all() and (hf == mf).all()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(q,)) for q in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_tree_on_a_chosen_device(rng, cp):
    """device=0 (the first GPU) and set_device: the copy goes there; device arrays elsewhere are refused."""
    keys = random_keys(rng, 10000, np.uint64)
    tree = harmonia.build(keys, device=0)
    v, f = tree.lookup(cp.asarray(keys[:100]))
    assert bool(f.all()) and tree.info().device == 0 and tree.info().device_resident
    tree.set_device(cp.cuda.Device(0))  # the same device: the copy stays
    assert tree.info().device_resident


def test_array_on_another_gpu(rng, cp):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU: the checks of arrays on another GPU need two")
    keys = random_keys(rng, 10000, np.uint64)
    tree = harmonia.build(keys, device=0)
    with cp.cuda.Device(1):
        q = cp.asarray(keys[:10])
    with pytest.raises(ValueError, match="GPU 1"):
        tree.lookup(q)
    # device None: the first GPU call makes the copy on its arrays' GPU, with that GPU current
    tree = harmonia.build(keys)
    v, f = tree.lookup(q)
    assert bool(f.all()) and v.device.id == 1
    assert tree.info().device == 1 and cp.cuda.runtime.getDevice() == 0
    with pytest.raises(ValueError, match="GPU 0"):
        tree.lookup(cp.asarray(keys[:10]))  # on GPU 0 now, the copy on GPU 1
    tree.set_device(0)  # released on GPU 1; the next call makes it on GPU 0
    assert not tree.info().device_resident
    v, f = tree.lookup(cp.asarray(keys[:10]))
    assert bool(f.all()) and tree.info().device == 0
