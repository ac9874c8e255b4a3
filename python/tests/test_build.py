"""harmonia.build: widths from dtypes, values, options, duplicates under each policy, sorted input,
wrong dtypes and shapes, progress, info."""

import numpy as np
import pytest

import harmonia
from conftest import Model, random_keys


def test_width_from_dtype(rng):
    for dtype, bits in [(np.uint32, 32), (np.uint64, 64), (np.int32, 32), (np.int64, 64), (np.uint16, 32),
                        (np.int8, 32), (np.uint8, 32)]:
        keys = np.arange(10, dtype=dtype)
        tree = harmonia.build(keys)
        assert tree.key_bits == bits, dtype
        assert tree.dtype == np.dtype(f"uint{bits}")
    # a list of Python ints: NumPy's int64, so 64-bit keys; key_bits= picks the width
    assert harmonia.build([3, 1, 2]).key_bits == 64
    assert harmonia.build([3, 1, 2], key_bits=32).key_bits == 32
    assert harmonia.build(np.arange(5, dtype=np.uint32), key_bits=64).key_bits == 64


def test_values_default_to_row_ids(rng, dtype):
    keys = random_keys(rng, 1000, dtype)
    tree = harmonia.build(keys)
    v, f = tree.lookup(keys)
    assert f.all()
    np.testing.assert_array_equal(v, np.arange(1000, dtype=dtype))


def test_values_converted_when_they_fit(rng):
    keys = np.arange(100, dtype=np.uint64)
    tree = harmonia.build(keys, np.arange(100, dtype=np.int64) * 3)
    assert tree.lookup(np.uint64(10))[0] == 30
    keys32 = np.arange(100, dtype=np.uint32)
    t32 = harmonia.build(keys32, np.arange(100, dtype=np.int64))  # row ids as int64 fit 32 bits
    assert t32.lookup(np.uint32(99))[0] == 99
    with pytest.raises(ValueError, match="does not fit uint32"):
        harmonia.build(keys32, np.full(100, 2**40, np.int64))
    with pytest.raises(ValueError, match="holds -1"):
        harmonia.build(keys, np.full(100, -1, np.int64))
    with pytest.raises(TypeError, match="float64"):
        harmonia.build(keys, np.zeros(100))


def test_wrong_dtypes_and_shapes():
    with pytest.raises(TypeError, match="float64"):
        harmonia.build(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="bool"):
        harmonia.build(np.array([True, False]))
    with pytest.raises(TypeError, match="datetime64"):
        harmonia.build(np.array(["2024-01-01"], dtype="datetime64[s]"))
    with pytest.raises(TypeError, match="object"):
        harmonia.build(np.array([1, None], dtype=object))
    with pytest.raises(ValueError, match="1-D"):
        harmonia.build(np.zeros((3, 3), np.uint64))
    with pytest.raises(ValueError, match="1-D"):
        harmonia.build(np.uint64(5))
    with pytest.raises(ValueError, match="values"):
        harmonia.build(np.arange(5, dtype=np.uint64), np.arange(4, dtype=np.uint64))
    with pytest.raises(ValueError, match="holds -3"):
        harmonia.build(np.array([1, -3], np.int64))
    with pytest.raises(ValueError, match="key_bits"):
        harmonia.build([1, 2], key_bits=16)
    with pytest.raises(ValueError, match="duplicates"):
        harmonia.build([1, 2], duplicates="some")


def test_non_contiguous_and_read_only_build_input(rng, dtype):
    keys = random_keys(rng, 3000, dtype)
    values = np.arange(3000, dtype=dtype)
    ro_keys = keys[::2]
    ro_keys.flags.writeable = False  # a read-only, non-contiguous view
    tree = harmonia.build(ro_keys, values[::2])
    v, f = tree.lookup(keys[::2])
    assert f.all()
    np.testing.assert_array_equal(v, values[::2])
    np.testing.assert_array_equal(keys[::2], ro_keys)  # inputs are not modified


def test_options_reach_the_library(rng, dtype):
    keys = random_keys(rng, 5000, dtype)
    for fanout in (8, 16, 32, 64, 128):
        for leaf_size in (8, 128):
            tree = harmonia.build(keys, fanout=fanout, leaf_size=leaf_size, fill=0.5, threads=2)
            info = tree.info()
            assert (info.fanout, info.leaf_size) == (fanout, leaf_size)
            assert 0.45 <= info.leaf_fill <= 0.55
            tree.check()
    default = harmonia.build(keys).info()
    assert default.fanout == (32 if dtype == np.uint32 else 16) and default.leaf_size == 16
    with pytest.raises(harmonia.InvalidArgumentError, match="F|fanout"):
        harmonia.build(keys, fanout=7)
    with pytest.raises(harmonia.InvalidArgumentError):
        harmonia.build(keys, fill=1.5)


def test_duplicates_under_each_policy(dtype):
    keys = np.array([5, 3, 5, 9, 3, 5], dtype)
    values = np.array([10, 20, 30, 40, 50, 60], dtype)
    with pytest.raises(harmonia.DuplicateKeyError) as e:
        harmonia.build(keys, values)
    assert "5" in str(e.value) or "3" in str(e.value)  # the library's message names the key
    assert e.value.status == 6 and isinstance(e.value, ValueError) and isinstance(e.value, harmonia.Error)
    first = harmonia.build(keys, values, duplicates="keep_first")
    last = harmonia.build(keys, values, duplicates="keep_last")
    q = np.array([3, 5, 9], dtype)
    assert first.lookup(q)[0].tolist() == [20, 10, 40]
    assert last.lookup(q)[0].tolist() == [50, 60, 40]
    assert len(first) == len(last) == 3
    # row ids under keep_first / keep_last
    assert harmonia.build(keys, duplicates="keep_last").lookup(q)[0].tolist() == [4, 5, 3]


def test_sorted_promise(dtype):
    keys = np.arange(0, 3000, 3, dtype=dtype)
    tree = harmonia.build(keys, sorted=True)
    assert len(tree) == keys.size
    shuffled = keys.copy()
    shuffled[[10, 11]] = shuffled[[11, 10]]
    with pytest.raises(harmonia.UnsortedError, match="10|11|order|sorted"):
        harmonia.build(shuffled, sorted=True)


def test_progress_callback(rng):
    seen = []
    keys = random_keys(rng, 50000, np.uint64)
    harmonia.build(keys, progress=lambda phase, fraction: seen.append((phase, fraction)))
    assert seen and all(0.0 <= f <= 1.0 for _, f in seen)

    def fails(phase, fraction):
        raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt, match="stop"):
        harmonia.build(keys, progress=fails)


def test_info_fields(rng, dtype):
    keys = random_keys(rng, 10000, dtype)
    tree = harmonia.build(keys)
    info = tree.info()
    assert info.key_bits == dtype.itemsize * 8
    assert info.key_count == 10000 and len(info.level_nodes) == info.height
    assert info.level_nodes[0] == 1 and info.level_nodes[-1] == info.leaf_count
    assert info.min_key == 0 and info.max_key == np.iinfo(dtype).max
    assert info.version == 0 and not info.mapped
    assert repr(tree).startswith("<harmonia.Tree 10000 keys")
    with pytest.raises(Exception):
        info.key_count = 5  # frozen


def test_close_and_context_manager(rng):
    with harmonia.build(np.arange(10, dtype=np.uint64)) as tree:
        assert len(tree) == 10
    assert tree.closed and repr(tree) == "<harmonia.Tree (closed)>"
    for call in (lambda: tree.lookup([1]), tree.info, tree.check, lambda: tree.range_collect(0, 5),
                 lambda: tree.update("delete", [1]), lambda: tree.save("/tmp/x")):
        with pytest.raises(ValueError, match="closed"):
            call()
    tree.close()  # idempotent
    with pytest.raises(TypeError):
        harmonia.Tree()
    import pickle
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(harmonia.build([1]))


def test_large_build_model(rng, dtype):
    keys = random_keys(rng, 200000, dtype)
    values = rng.integers(0, 1000, size=keys.size).astype(dtype)
    tree = harmonia.build(keys, values, threads=2)
    model = Model(keys, values)
    q = model.keys[::7]
    v, f = tree.lookup(q)
    assert f.all()
    np.testing.assert_array_equal(v, model.values[::7])
