"""Tree.update against a dict model: every kind, the policies, statistics, failed batches leaving
the tree unchanged (bit for bit: same answers, same version), and the shortcuts."""

import numpy as np
import pytest

import harmonia
from conftest import Model, random_keys


def apply_model(model_dict, kinds, keys, values, insert_existing="error", update_missing="error"):
    d = dict(model_dict)
    for i, (k, key) in enumerate(zip(kinds, keys)):
        key = int(key)
        value = int(values[i]) if values is not None else 0
        if k == harmonia.Op.INSERT:
            if key in d and insert_existing == "error":
                return None, i
            d[key] = value
        elif k == harmonia.Op.UPDATE:
            if key in d:
                d[key] = value
            elif update_missing == "error":
                return None, i
        elif k == harmonia.Op.UPSERT:
            d[key] = value
        else:
            d.pop(key, None)
    return d, None


def check_tree(tree, d, dtype):
    keys = np.array(sorted(d), dtype)
    values = np.array([d[int(k)] for k in keys], dtype)
    ks, vs = tree.items()
    np.testing.assert_array_equal(ks, keys)
    np.testing.assert_array_equal(vs, values)
    tree.check()


def test_random_batches_match_model(rng, dtype):
    keys = random_keys(rng, 5000, dtype)
    values = rng.integers(0, 10**6, size=keys.size).astype(dtype)
    tree = harmonia.build(keys, values, leaf_size=8)
    d = {int(k): int(v) for k, v in zip(keys, values)}
    top = np.iinfo(dtype).max
    for batch in range(6):
        n = 3000
        present = keys[rng.integers(0, keys.size, n // 2)]
        fresh = rng.integers(0, top, n - n // 2, dtype=dtype, endpoint=True)
        bkeys = np.concatenate([present, fresh])
        rng.shuffle(bkeys)
        bvalues = rng.integers(0, 10**6, size=n).astype(dtype)
        # every kind, with the lenient policies so that the batch applies
        kinds = rng.integers(0, 4, size=n).astype(np.uint8)
        stats = tree.update(kinds, bkeys, bvalues, insert_existing="upsert", update_missing="skip")
        d, failed = apply_model(d, kinds, bkeys, bvalues, "upsert", "skip")
        assert failed is None
        assert stats.operations == n and stats.failed_operation is None
        assert stats.inserted + stats.updated + stats.deleted == stats.applied
        assert tree.info().version == batch + 1
        check_tree(tree, d, dtype)
        keys = np.array(list(d), dtype) if d else keys


def test_kinds_as_names_ops_and_scalars(dtype):
    tree = harmonia.build(np.array([1, 2, 3], dtype), np.array([10, 20, 30], dtype))
    stats = tree.update(["insert", "update", "delete", "upsert"], np.array([4, 1, 2, 9], dtype),
                        np.array([40, 11, 0, 90], dtype))
    assert (stats.inserted, stats.updated, stats.deleted) == (2, 1, 1)
    check_tree(tree, {1: 11, 3: 30, 4: 40, 9: 90}, dtype)
    tree.update(harmonia.Op.UPSERT, [3], [33])
    tree.update("DELETE", np.array([4], dtype))
    check_tree(tree, {1: 11, 3: 33, 9: 90}, dtype)
    tree.insert([5, 6])
    tree.upsert([5], [55])
    stats = tree.delete([6, 7])
    assert stats.deleted == 1 and stats.missing == 1
    check_tree(tree, {1: 11, 3: 33, 5: 55, 9: 90}, dtype)
    with pytest.raises(ValueError, match="kinds"):
        tree.update("replace", [1], [1])
    with pytest.raises(ValueError, match=r"kinds\[1\]"):
        tree.update(["insert", "merge"], [1, 2], [1, 2])
    with pytest.raises(harmonia.InvalidArgumentError):
        tree.update(np.array([7], np.uint8), [1], [1])  # the library refuses kind 7
    with pytest.raises(ValueError, match="values"):
        tree.update("insert", [1, 2], [1])
    with pytest.raises(ValueError, match="kinds"):
        tree.update(np.zeros(3, np.uint8), [1, 2], [1, 2])


@pytest.mark.parametrize("policy", ["insert_existing", "update_missing"])
def test_failed_batch_leaves_tree_unchanged(rng, dtype, policy):
    keys = random_keys(rng, 4000, dtype)
    tree = harmonia.build(keys, leaf_size=8)
    before_items = tree.items()
    before_info = tree.info()
    n = 2000
    bkeys = rng.integers(0, np.iinfo(dtype).max, size=n, dtype=dtype)
    kinds = np.full(n, harmonia.Op.UPSERT, np.uint8)
    if policy == "insert_existing":
        kinds[1500] = harmonia.Op.INSERT
        bkeys[1500] = keys[17]  # present: KEY_EXISTS under 'error'
        exc = harmonia.KeyExistsError
    else:
        kinds[1500] = harmonia.Op.UPDATE
        bkeys[1500] = 123456789 if 123456789 not in set(keys.tolist()) else 123456790
        exc = harmonia.KeyMissingError
    with pytest.raises(exc) as e:
        tree.update(kinds, bkeys, bkeys)
    assert e.value.failed_operation == 1500
    assert e.value.stats.failed_operation == 1500 and e.value.stats.operations == n
    assert "1500" in str(e.value)  # the library's message names the operation
    after = tree.items()
    np.testing.assert_array_equal(after[0], before_items[0])
    np.testing.assert_array_equal(after[1], before_items[1])
    assert tree.info() == before_info  # version and every size unchanged
    tree.check()
    # the lenient policy applies the same batch
    stats = tree.update(kinds, bkeys, bkeys, **{policy: "upsert" if policy == "insert_existing" else "skip"})
    assert stats.applied > 0 and tree.info().version == 1


def test_split_and_relayout(rng, dtype):
    tree = harmonia.build(np.arange(0, 2000, 2, dtype=dtype), leaf_size=8)
    stats = tree.update("insert", np.arange(1, 2000, 2, dtype=dtype), np.arange(1000, dtype=dtype),
                        split_fill=0.5, threads=2)
    assert stats.shape_changed and stats.leaves_split > 0
    assert len(tree) == 2000
    tree.check()
    stats = tree.delete(np.arange(0, 1900, dtype=dtype))
    assert stats.deleted == 1900 and stats.leaves_removed > 0
    assert len(tree) == 100
    tree.check()


def test_update_with_all_deletes_needs_no_values(dtype):
    tree = harmonia.build(np.arange(10, dtype=dtype))
    tree.update(np.full(3, harmonia.Op.DELETE, np.uint8), np.array([1, 2, 3], dtype))
    assert len(tree) == 7
    with pytest.raises(harmonia.InvalidArgumentError):
        tree.update("insert", np.array([100], dtype))  # values required for inserts


def test_empty_batch(dtype):
    tree = harmonia.build(np.arange(10, dtype=dtype))
    stats = tree.update("insert", np.empty(0, dtype), np.empty(0, dtype))
    assert stats.operations == 0
    assert len(tree) == 10
