"""Exceptions: harmonia.Error and one subclass per status, carrying the library's message, the
status code and its description; the built-in bases Python code catches."""

import numpy as np
import pytest

import harmonia


def test_hierarchy():
    classes = {
        1: harmonia.InvalidArgumentError, 2: harmonia.OutOfMemoryError, 3: harmonia.FileError,
        4: harmonia.CorruptError, 5: harmonia.UnsupportedError, 6: harmonia.DuplicateKeyError,
        7: harmonia.UnsortedError, 8: harmonia.CapacityError, 9: harmonia.NoDeviceError,
        10: harmonia.DeviceError, 11: harmonia.DeviceMemoryError, 12: harmonia.KeyExistsError,
        13: harmonia.KeyMissingError, 14: harmonia.ConflictError,
    }
    assert harmonia._core.errors_by_status == classes
    for status, cls in classes.items():
        assert issubclass(cls, harmonia.Error) and cls.__module__ == "harmonia"
        assert f"({status})" in cls.__doc__
    assert issubclass(harmonia.InvalidArgumentError, ValueError)
    assert issubclass(harmonia.DuplicateKeyError, ValueError)
    assert issubclass(harmonia.OutOfMemoryError, MemoryError)
    assert issubclass(harmonia.FileError, OSError)
    assert issubclass(harmonia.Error, Exception)


def test_error_carries_library_message():
    with pytest.raises(harmonia.InvalidArgumentError) as e:
        harmonia.build(np.arange(10, dtype=np.uint64), fanout=12)
    err = e.value
    assert err.status == 1 and err.reason == harmonia._core.strerror(1)
    assert "12" in str(err)  # the library's message names the bad fanout
    with pytest.raises(harmonia.DuplicateKeyError, match="7"):
        harmonia.build(np.array([7, 7], np.uint32))
    tree = harmonia.build(np.arange(10, dtype=np.uint64))
    with pytest.raises(harmonia.InvalidArgumentError) as e:
        tree.set_group_size(3)
    assert "3" in str(e.value)
    with pytest.raises(harmonia.InvalidArgumentError):
        tree.set_group_size(32)  # above F = 16
    tree.set_group_size(8)
    assert tree.info().ntg_group_size == 8
    tree.set_group_size(0)
