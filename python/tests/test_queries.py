"""Queries against the NumPy model on random trees of both widths: lookup, lookup_unordered,
lower_bound, range_count, range_collect, with keys 0 and the maximum, empty inputs, shapes,
non-contiguous and read-only arrays, scalars, lists, out= arrays and both backends."""

import numpy as np
import pytest

import harmonia
from conftest import Model, queries_for, random_keys


def test_lookup_matches_model(tree_and_model, rng, backend):
    tree, model = tree_and_model
    q = queries_for(rng, model, 5000)
    values, found = tree.lookup(q, backend=backend)
    mv, mf = model.lookup(q)
    assert values.dtype == model.dtype and found.dtype == np.bool_
    assert values.shape == q.shape and found.shape == q.shape
    np.testing.assert_array_equal(found, mf)
    np.testing.assert_array_equal(values, mv)
    top = np.iinfo(model.dtype).max
    v, f = tree.lookup(np.array([0, top], model.dtype), backend=backend)
    assert f.all(), "0 and the maximum are keys of the tree"
    np.testing.assert_array_equal(v, model.lookup(np.array([0, top], model.dtype))[0])


@pytest.mark.parametrize("pdt", [None, np.uint32, np.uint64, "uint64"], ids=["default", "u32", "u64", "u64str"])
def test_lookup_unordered_is_a_permutation(tree_and_model, rng, backend, pdt):
    tree, model = tree_and_model
    q = queries_for(rng, model, 3000)
    values, found, positions = tree.lookup_unordered(q, backend=backend, positions_dtype=pdt)
    # the default: 32-bit positions (harmonia_lookup_unordered32) up to 2^32 queries
    assert positions.dtype == (np.uint32 if pdt is None else np.dtype(pdt))
    np.testing.assert_array_equal(np.sort(positions), np.arange(q.size, dtype=positions.dtype))
    mv, mf = model.lookup(q[positions.astype(np.int64)])
    np.testing.assert_array_equal(found, mf)
    np.testing.assert_array_equal(values, mv)


def test_lookup_unordered_positions_dtype_refused(tree_and_model):
    tree, model = tree_and_model
    q = np.zeros(4, model.dtype)
    for bad in (np.int64, np.float64, np.uint16):
        with pytest.raises(TypeError, match="positions_dtype"):
            tree.lookup_unordered(q, positions_dtype=bad)
    with pytest.raises(TypeError, match="positions_dtype"):
        tree.lookup_unordered(q, positions_dtype="not a dtype")


def test_lower_bound_matches_model(tree_and_model, rng, backend):
    tree, model = tree_and_model
    q = queries_for(rng, model, 5000)
    keys, values, found = tree.lower_bound(q, backend=backend)
    mk, mv, mf = model.lower_bound(q)
    np.testing.assert_array_equal(found, mf)
    np.testing.assert_array_equal(keys, mk)
    np.testing.assert_array_equal(values, mv)
    # results not wanted are not computed
    k2, v2, f2 = tree.lower_bound(q, keys=False, backend=backend)
    assert k2 is None
    np.testing.assert_array_equal(v2, mv)
    k3, v3, f3 = tree.lower_bound(q, values=False, backend=backend)
    assert v3 is None
    np.testing.assert_array_equal(k3, mk)


def test_range_count_matches_model(tree_and_model, rng, backend):
    tree, model = tree_and_model
    a = queries_for(rng, model, 2000)
    b = queries_for(rng, model, 2000)[: a.size]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    # some empty ranges (lo > hi) and some single keys
    lo[:50], hi[:50] = hi[:50], lo[:50]
    lo[50:100] = hi[50:100]
    counts = tree.range_count(lo, hi, backend=backend)
    assert counts.dtype == np.uint64
    np.testing.assert_array_equal(counts, model.range_count(lo, hi))
    top = np.iinfo(model.dtype).max
    assert tree.range_count(0, top, backend=backend) == model.keys.size
    assert tree.range_count(top, 0, backend=backend) == 0


def test_range_collect_matches_model(tree_and_model, rng, backend):
    tree, model = tree_and_model
    top = np.iinfo(model.dtype).max
    a = queries_for(rng, model, 300)
    span = np.array(top // 2000, model.dtype)
    lo = a
    hi = np.where(a > top - span, np.array(top, model.dtype), a + span).astype(model.dtype)
    lo[:5], hi[:5] = hi[:5], lo[:5]  # empty ranges
    offsets, keys, values = tree.range_collect(lo, hi, backend=backend)
    mo, mk, mv = model.range_collect(lo, hi)
    np.testing.assert_array_equal(offsets, mo)
    np.testing.assert_array_equal(keys, mk)
    np.testing.assert_array_equal(values, mv)
    # the whole tree, and one result array alone
    o, k, v = tree.range_collect(0, top, values=False, backend=backend)
    assert v is None and o.tolist() == [0, model.keys.size]
    np.testing.assert_array_equal(k, model.keys)
    o, k, v = tree.range_collect(0, top, keys=False, backend=backend)
    assert k is None
    np.testing.assert_array_equal(v, model.values)
    ks, vs = tree.items()
    np.testing.assert_array_equal(ks, model.keys)
    np.testing.assert_array_equal(vs, model.values)


def test_empty_queries(tree_and_model, backend):
    tree, model = tree_and_model
    e = np.empty(0, model.dtype)
    v, f = tree.lookup(e, backend=backend)
    assert v.shape == (0,) and f.shape == (0,) and v.dtype == model.dtype
    k, v, f = tree.lower_bound(e, backend=backend)
    assert k.shape == (0,)
    assert tree.range_count(e, e, backend=backend).shape == (0,)
    o, k, v = tree.range_collect(e, e, backend=backend)
    assert o.tolist() == [0] and k.size == 0 and v.size == 0
    v, f, p = tree.lookup_unordered(e, backend=backend)
    assert p.size == 0


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64], ids=["u32", "u64"])
def test_empty_tree(dtype, backend):
    dtype = np.dtype(dtype)
    tree = harmonia.build(np.empty(0, dtype))
    assert len(tree) == 0
    info = tree.info()
    assert info.key_count == 0 and info.min_key is None and info.max_key is None
    q = np.array([0, 5, np.iinfo(dtype).max], dtype)
    v, f = tree.lookup(q, backend=backend)
    assert not f.any() and not v.any()
    k, v, f = tree.lower_bound(q, backend=backend)
    assert not f.any()
    assert not tree.range_count(q, q, backend=backend).any()
    o, k, v = tree.range_collect(0, np.iinfo(dtype).max, backend=backend)
    assert o.tolist() == [0, 0]
    tree.check()


def test_shapes_scalars_and_lists(tree_and_model, rng):
    tree, model = tree_and_model
    q = queries_for(rng, model, 600)[:600].reshape(20, 30)
    v, f = tree.lookup(q)
    assert v.shape == (20, 30) and f.shape == (20, 30)
    mv, mf = model.lookup(q)
    np.testing.assert_array_equal(v, mv)
    np.testing.assert_array_equal(f, mf)
    # a scalar in, scalars out
    key = model.keys[7]
    v, f = tree.lookup(key)
    assert np.isscalar(v) and np.isscalar(f) and f and v == model.values[7]
    v, f = tree.lookup(int(key))
    assert f and v == model.values[7]
    # lists and tuples of Python ints
    v, f = tree.lookup([int(model.keys[0]), int(model.keys[1])])
    assert f.all()
    np.testing.assert_array_equal(v, model.values[:2])
    # broadcasting of lo and hi
    top = np.iinfo(model.dtype).max
    lo = model.keys[:10]
    np.testing.assert_array_equal(tree.range_count(lo, top), model.range_count(lo, np.full(10, top, model.dtype)))
    # get / in
    assert model.keys[3] in tree
    assert tree.get(model.keys[3]) == model.values[3]
    missing = model.lookup(q.reshape(-1))[1]
    absent = q.reshape(-1)[~missing][0]
    assert absent not in tree and tree.get(absent, "none") == "none"
    assert len(tree) == model.keys.size


def test_non_contiguous_and_read_only_inputs(tree_and_model, rng):
    tree, model = tree_and_model
    q = queries_for(rng, model, 4000)
    strided = q[::3]
    assert not strided.flags.c_contiguous
    v, f = tree.lookup(strided)
    np.testing.assert_array_equal(v, model.lookup(strided)[0])
    fortran = np.asfortranarray(q[:3000].reshape(60, 50))
    v, f = tree.lookup(fortran)
    np.testing.assert_array_equal(v, model.lookup(fortran)[0])
    ro = q.copy()
    ro.flags.writeable = False
    v, f = tree.lookup(ro)
    np.testing.assert_array_equal(f, model.lookup(ro)[1])
    reversed_view = q[::-1]
    k, v, f = tree.lower_bound(reversed_view)
    np.testing.assert_array_equal(k, model.lower_bound(reversed_view)[0])


def test_out_arrays(tree_and_model, rng):
    tree, model = tree_and_model
    q = queries_for(rng, model, 1000)
    values = np.empty(q.shape, model.dtype)
    found = np.empty(q.shape, np.uint8)
    rv, rf = tree.lookup(q, out=(values, found))
    assert rv is values and rf is found
    mv, mf = model.lookup(q)
    np.testing.assert_array_equal(values, mv)
    np.testing.assert_array_equal(found.astype(bool), mf)
    counts = np.empty(q.shape, np.uint64)
    assert tree.range_count(q, q, out=counts) is counts
    np.testing.assert_array_equal(counts, mf.astype(np.uint64))
    keys = np.empty(q.shape, model.dtype)
    found_b = np.empty(q.shape, bool)
    k, v, f = tree.lower_bound(q, values=False, out=(keys, None, found_b))
    assert k is keys and v is None and f is found_b
    np.testing.assert_array_equal(keys, model.lower_bound(q)[0])


def test_out_arrays_rejected(tree_and_model):
    tree, model = tree_and_model
    q = model.keys[:100]
    good_f = np.empty(100, bool)
    with pytest.raises(TypeError, match="dtype"):
        tree.lookup(q, out=(np.empty(100, np.int64), good_f))
    with pytest.raises(ValueError, match="shape"):
        tree.lookup(q, out=(np.empty(99, model.dtype), good_f))
    with pytest.raises(ValueError, match="C-contiguous"):
        tree.lookup(q, out=(np.empty(200, model.dtype)[::2], good_f))
    ro = np.empty(100, model.dtype)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tree.lookup(q, out=(ro, good_f))
    with pytest.raises(TypeError, match="NumPy array"):
        tree.lookup(q, out=([0] * 100, good_f))
    with pytest.raises(TypeError, match="tuple of 2"):
        tree.lookup(q, out=np.empty(100, model.dtype))
    with pytest.raises(TypeError, match="dtype"):
        tree.range_count(q, q, out=np.empty(100, np.int64))


def test_dtype_rules_for_queries(tree_and_model):
    tree, model = tree_and_model
    k = model.keys[:50]
    want = model.lookup(k)
    # other integer dtypes are converted when every element fits
    small = (k % 1000).astype(np.int32)
    np.testing.assert_array_equal(tree.lookup(small)[1], model.lookup(small.astype(model.dtype))[1])
    as_u16 = (k % 60000).astype(np.uint16)
    np.testing.assert_array_equal(tree.lookup(as_u16)[1], model.lookup(as_u16.astype(model.dtype))[1])
    if model.dtype == np.uint64:
        fits = k[k < 2**63].view(np.int64)
        np.testing.assert_array_equal(tree.lookup(fits)[0], model.lookup(fits.view(np.uint64))[0])
        np.testing.assert_array_equal(tree.lookup(k.astype(np.uint64))[0], want[0])
    else:
        # uint64 queries on a 32-bit tree: converted when they fit, refused when not
        np.testing.assert_array_equal(tree.lookup(k.astype(np.uint64))[0], want[0])
        with pytest.raises(ValueError, match="does not fit uint32"):
            tree.lookup(np.array([2**32], np.uint64))
    with pytest.raises(ValueError, match=r"int64 holds -1"):
        tree.lookup(np.array([5, -1], np.int64))
    for bad in (np.float64, np.float32, np.bool_, "datetime64[ns]", object, "U3"):
        with pytest.raises(TypeError, match="dtype"):
            tree.lookup(np.zeros(3, dtype=bad))
    with pytest.raises(TypeError):
        tree.lookup("abc")


def test_option_validation(tree_and_model):
    tree, model = tree_and_model
    q = model.keys[:10]
    with pytest.raises(ValueError, match="backend"):
        tree.lookup(q, backend="tpu")
    with pytest.raises(ValueError, match="psa"):
        tree.lookup(q, psa="maybe")
    with pytest.raises(ValueError, match="threads"):
        tree.lookup(q, threads=-1)
    # explicit options reach the library (threads, and GPU options the CPU engine ignores)
    v, f = tree.lookup(q, backend="cpu", threads=1, psa=False, group_size=4, pipeline_depth=2)
    assert f.all()
    if not harmonia.gpu_available():
        with pytest.raises(harmonia.NoDeviceError, match="GPU"):
            tree.lookup(q, backend="gpu")


def test_memoryview_and_array_module(rng):
    import array

    keys = array.array("Q", [5, 1, 9, 3])
    tree = harmonia.build(keys)
    assert tree.key_bits == 64
    v, f = tree.lookup(memoryview(array.array("Q", [9, 4])))
    assert f.tolist() == [True, False] and v[0] == 2
    t32 = harmonia.build(array.array("I", [7, 8]))
    assert t32.key_bits == 32 and t32.dtype == np.uint32


@pytest.mark.parametrize("n", [1, 2, 17, 1000])
def test_small_trees_every_key(rng, dtype, n, backend):
    keys = random_keys(rng, n, dtype, with_extremes=n >= 2)
    tree = harmonia.build(keys, fanout=8, leaf_size=8)
    model = Model(keys, np.arange(n, dtype=dtype))  # values None: row ids
    v, f = tree.lookup(keys, backend=backend)
    assert f.all()
    np.testing.assert_array_equal(v, np.arange(n, dtype=dtype))
    q = queries_for(rng, model, 200)
    np.testing.assert_array_equal(tree.lower_bound(q, backend=backend)[0], model.lower_bound(q)[0])
    tree.check()


def test_byte_order_masked_and_empty_lists(tree_and_model):
    tree, model = tree_and_model
    k = model.keys[:100]
    swapped = k.astype(k.dtype.newbyteorder())  # the same values, big-endian
    v, f = tree.lookup(swapped)
    assert f.all()
    np.testing.assert_array_equal(v, model.values[:100])
    signed_swapped = (k % 1000).astype(np.dtype(f"i{k.dtype.itemsize}").newbyteorder())
    np.testing.assert_array_equal(tree.lookup(signed_swapped)[1], model.lookup(k % 1000)[1])
    masked = np.ma.masked_array(k, mask=np.arange(100) == 3)
    with pytest.raises(ValueError, match="1 masked"):
        tree.lookup(masked)
    v, f = tree.lookup(np.ma.masked_array(k))  # nothing masked: used as it is
    assert f.all()
    v, f = tree.lookup([])
    assert v.shape == (0,) and v.dtype == model.dtype
    assert len(harmonia.build([])) == 0
