"""NTG profiling, sampling and the GPU settings, on a machine with or without a GPU."""

import numpy as np
import pytest

import harmonia
from conftest import random_keys


def test_profile_model(rng, dtype):
    tree = harmonia.build(random_keys(rng, 100000, dtype))
    profile = tree.profile_ntg(count=50000, measure=False)
    m = profile.model
    assert profile.measurement is None and not profile.kept
    assert m.group_sizes == tuple(g for g in (1, 2, 4, 8, 16, 32) if g <= tree.info().fanout)
    assert profile.choice == m.choice and m.choice in m.group_sizes
    assert len(m.steps) == len(m.group_sizes) and len(m.level_steps) == len(m.group_sizes)
    assert m.sample_queries > 0
    kept = tree.profile_ntg(tree.sample_keys(20000, seed=3), measure=False, keep=True, sample=2000, levels=3,
                            psa=False)
    assert kept.kept and tree.info().ntg_group_size == kept.choice


def test_sample_keys(rng):
    keys = random_keys(rng, 5000, np.uint32)
    tree = harmonia.build(keys)
    a = tree.sample_keys(1000, seed=7)
    assert a.dtype == np.uint32 and a.size == 1000
    np.testing.assert_array_equal(a, tree.sample_keys(1000, seed=7))
    assert np.isin(a, keys).all()
    with pytest.raises(harmonia.InvalidArgumentError):
        harmonia.build(np.empty(0, np.uint32)).sample_keys(5)


def test_gpu_calls_without_gpu(rng):
    if harmonia.gpu_available():
        pytest.skip("a GPU is usable here: tests/test_gpu.py covers these calls")
    assert harmonia.device_probe() is None
    assert harmonia.device_unavailable_reason()
    tree = harmonia.build(np.arange(100, dtype=np.uint64))
    with pytest.raises(harmonia.NoDeviceError):
        tree.device_upload()
    tree.device_release()  # a no-op without a device copy
    with pytest.raises(harmonia.NoDeviceError):
        tree.profile_ntg(count=1000, measure=True)
    tree.set_constant_levels("all")
    tree.set_constant_levels(0)
    assert tree.info().constant_prefix_levels == 0
    v, f = tree.lookup(np.arange(5, dtype=np.uint64))  # backend auto: the CPU engine
    assert f.all()


def test_device_choice_without_gpu(rng, tmp_path):
    """device= of build and load, set_device, device_bytes: settings the library keeps without a GPU."""
    keys = random_keys(rng, 20000, np.uint64)
    tree = harmonia.build(keys)
    assert tree.info().device == -1  # None: the current device when the copy is made
    assert tree.device_bytes() > 0 and tree.device_bytes() >= keys.size * 8
    assert not tree.info().device_resident  # device_bytes makes no copy
    tree.set_device(3)
    assert tree.info().device == 3
    tree.set_device(None)
    assert tree.info().device == -1
    assert harmonia.build(keys, device=2).info().device == 2
    path = tmp_path / "col.idx"
    tree.save(path)
    assert harmonia.load(path, device=1).info().device == 1
    assert harmonia.load(path).info().device == -1
    for bad in (-1, -2, "0", 1.5, True):
        with pytest.raises(ValueError, match="device"):
            harmonia.build(keys[:10], device=bad)
        with pytest.raises(ValueError, match="device"):
            tree.set_device(bad)


def test_sync_false_takes_device_arrays(rng):
    """The asynchronous calls take device arrays only (as harmonia_*_async): host arrays with
    sync=False are refused, never answered late."""
    tree = harmonia.build(random_keys(rng, 1000, np.uint64))
    q = np.arange(10, dtype=np.uint64)
    for call in (lambda: tree.lookup(q, sync=False), lambda: tree.lower_bound(q, sync=False),
                 lambda: tree.range_count(q, q, sync=False), lambda: tree.lookup_unordered(q, sync=False)):
        with pytest.raises(ValueError, match="device arrays"):
            call()
    assert tree.lookup(q, sync=True)[1].dtype == np.bool_
