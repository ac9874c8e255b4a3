"""PyArrow input: arrays (zero-copy), chunked arrays (one chunk zero-copy, several concatenated),
slices with offsets, nulls rejected with a clear error, non-integer types rejected, results as
NumPy."""

import numpy as np
import pytest

import harmonia
from conftest import Model, queries_for, random_keys

pa = pytest.importorskip("pyarrow")


def test_arrow_arrays_in_numpy_out(rng, dtype):
    keys = random_keys(rng, 10000, dtype)
    values = np.arange(keys.size, dtype=dtype)
    tree = harmonia.build(pa.array(keys), pa.array(values))
    model = Model(keys, values)
    q = queries_for(rng, model, 2000)
    v, f = tree.lookup(pa.array(q))
    assert isinstance(v, np.ndarray) and isinstance(f, np.ndarray)
    np.testing.assert_array_equal(v, model.lookup(q)[0])
    np.testing.assert_array_equal(tree.range_count(pa.array(q), pa.array(q)), model.range_count(q, q))


def test_arrow_is_zero_copy():
    from harmonia import _arrays

    arr = pa.array(np.arange(1000, dtype=np.uint64))
    adapted = _arrays.adapt(arr, "q", np.dtype(np.uint64))
    assert adapted.flat.ctypes.data == arr.buffers()[1].address
    sliced = arr.slice(100, 50)  # an offset into the buffer: still zero-copy
    adapted = _arrays.adapt(sliced, "q", np.dtype(np.uint64))
    assert adapted.flat.ctypes.data == arr.buffers()[1].address + 100 * 8
    assert adapted.flat[0] == 100


def test_chunked_arrays(rng):
    keys = random_keys(rng, 9000, np.uint64)
    chunked = pa.chunked_array([keys[:3000], keys[3000:6000], keys[6000:]])
    tree = harmonia.build(chunked)  # several chunks: concatenated (one copy)
    v, f = tree.lookup(pa.chunked_array([keys[::-1][:100], keys[::-1][100:200]]))
    assert f.all()
    np.testing.assert_array_equal(v, np.arange(9000)[::-1][:200])
    one = pa.chunked_array([keys])
    assert len(harmonia.build(one)) == 9000
    empty = pa.chunked_array([], type=pa.uint64())
    assert len(harmonia.build(empty)) == 0
    assert tree.lookup(empty)[0].size == 0


def test_nulls_rejected(rng):
    with pytest.raises(ValueError, match=r"1 null.*drop_null"):
        harmonia.build(pa.array([1, None, 3], type=pa.uint64()))
    tree = harmonia.build(np.arange(10, dtype=np.uint64))
    with pytest.raises(ValueError, match="2 null"):
        tree.lookup(pa.array([None, 4, None], type=pa.uint64()))
    with pytest.raises(ValueError, match="null"):
        tree.lookup(pa.chunked_array([[1, 2], [None]], type=pa.uint64()))
    with pytest.raises(ValueError, match="null"):
        harmonia.build(np.arange(3, dtype=np.uint64), pa.array([1, None, 2], type=pa.uint64()))
    # once the nulls are dropped, it works
    import pyarrow.compute as pc
    assert tree.lookup(pc.drop_null(pa.array([None, 4, None], type=pa.uint64())))[1].tolist() == [True]


def test_arrow_types(rng):
    tree = harmonia.build(pa.array([1, 2, 3], type=pa.int64()))  # no negatives: converted (viewed)
    assert tree.key_bits == 64
    assert harmonia.build(pa.array([1, 2], type=pa.uint32())).key_bits == 32
    assert harmonia.build(pa.array([1, 2], type=pa.int16())).key_bits == 32
    with pytest.raises(ValueError, match="-1"):
        harmonia.build(pa.array([1, -1], type=pa.int32()))
    for bad in (pa.array([1.5]), pa.array(["a"]), pa.array([True]),
                pa.array([0], type=pa.timestamp("s"))):
        with pytest.raises(TypeError, match="Arrow type"):
            harmonia.build(bad)


def test_arrow_table_column_as_values(rng):
    keys = random_keys(rng, 1000, np.uint32)
    table = pa.table({"id": keys, "row": np.arange(1000, dtype=np.int64)})
    tree = harmonia.build(table["id"], table["row"])  # chunked columns; int64 row ids fit uint32
    v, f = tree.lookup(table["id"])
    assert f.all() and v.tolist() == list(range(1000))
