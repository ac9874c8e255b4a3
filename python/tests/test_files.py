"""save / load: round trips of both widths, verify on and off, locks, damaged files raising,
path types, and the errors' classes and messages."""

import os
import pathlib

import numpy as np
import pytest

import harmonia
from conftest import Model, queries_for, random_keys


def test_round_trip(tmp_path, rng, dtype):
    keys = random_keys(rng, 30000, dtype)
    values = rng.integers(0, np.iinfo(dtype).max, size=keys.size, dtype=dtype, endpoint=True)
    tree = harmonia.build(keys, values, fanout=32, leaf_size=32)
    tree.set_group_size(4)
    path = tmp_path / "col.idx"
    tree.save(path)  # a pathlib.Path
    loaded = harmonia.load(str(path))  # a str
    info = loaded.info()
    assert info.mapped and info.key_count == keys.size and info.fanout == 32 and info.leaf_size == 32
    assert info.ntg_group_size == 4  # the NTG choice travels with the file
    model = Model(keys, values)
    q = queries_for(rng, model, 4000)
    np.testing.assert_array_equal(loaded.lookup(q)[0], model.lookup(q)[0])
    np.testing.assert_array_equal(loaded.lower_bound(q)[0], model.lower_bound(q)[0])
    loaded.check()
    # an update of a loaded tree, saved again over the file it came from
    loaded.update("upsert", keys[:10], np.zeros(10, dtype))
    loaded.save(path)
    again = harmonia.load(path, verify=False)
    assert (again.lookup(keys[:10])[0] == 0).all()
    again.check()


def test_bytes_path_and_os_pathlike(tmp_path):
    tree = harmonia.build(np.arange(100, dtype=np.uint32))
    path = os.fsencode(tmp_path / "b.idx")
    tree.save(path)
    assert len(harmonia.load(path)) == 100

    class P:
        def __fspath__(self):
            return str(tmp_path / "p.idx")

    tree.save(P())
    assert len(harmonia.load(P())) == 100


def damage(path, offset_fraction, xor=0x5A):
    data = bytearray(pathlib.Path(path).read_bytes())
    i = int(len(data) * offset_fraction)
    data[i] ^= xor
    pathlib.Path(path).write_bytes(bytes(data))


@pytest.mark.parametrize("where", [0.001, 0.3, 0.6, 0.95])
def test_damaged_files_raise(tmp_path, rng, where):
    keys = random_keys(rng, 20000, np.uint64)
    path = tmp_path / "d.idx"
    harmonia.build(keys).save(path)
    damage(path, where)
    with pytest.raises((harmonia.CorruptError, harmonia.UnsupportedError)) as e:
        harmonia.load(path)
    assert str(e.value) and e.value.status in (4, 5)


def test_unverified_load_of_damaged_file(tmp_path, rng):
    keys = random_keys(rng, 20000, np.uint64)
    path = tmp_path / "u.idx"
    harmonia.build(keys).save(path)
    damage(path, 0.5)
    try:
        tree = harmonia.load(path, verify=False)
    except harmonia.CorruptError:
        return  # the structure checks caught it already
    with pytest.raises(harmonia.CorruptError):
        tree.check()
    with pytest.raises(harmonia.CorruptError):
        tree.save(tmp_path / "other.idx")  # a save never hides damage behind fresh checksums


def test_truncated_and_missing_files(tmp_path):
    path = tmp_path / "t.idx"
    harmonia.build(np.arange(1000, dtype=np.uint64)).save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(harmonia.CorruptError):
        harmonia.load(path)
    path.write_bytes(b"")
    with pytest.raises((harmonia.CorruptError, harmonia.FileError)):
        harmonia.load(path)
    with pytest.raises(harmonia.FileError) as e:
        harmonia.load(tmp_path / "missing.idx")
    assert isinstance(e.value, OSError) and e.value.status == 3
    assert "missing.idx" in str(e.value)
    with pytest.raises(harmonia.FileError):
        harmonia.build([1, 2]).save(tmp_path)  # a folder is not replaced


def test_locks(tmp_path):
    path = tmp_path / "l.idx"
    harmonia.build(np.arange(100, dtype=np.uint64)).save(path)
    holder = harmonia.load(path, lock="try")
    with pytest.raises(harmonia.ConflictError):
        harmonia.load(path, lock="try")
    with pytest.raises(harmonia.ConflictError):
        harmonia.build([1]).save(path)  # another tree may not replace a locked file
    holder.update("insert", [1000], [1])
    holder.save(path)  # the holder may
    holder.close()  # releases the lock
    again = harmonia.load(path, lock="wait")
    assert len(again) == 101
    with pytest.raises(ValueError, match="lock"):
        harmonia.load(path, lock="sometimes")


def test_progress_of_load(tmp_path):
    path = tmp_path / "g.idx"
    harmonia.build(np.arange(100000, dtype=np.uint64)).save(path)
    phases = []
    harmonia.load(path, progress=lambda p, f: phases.append(p))
    assert phases
