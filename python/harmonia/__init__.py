"""harmonia — a GPU B+tree index (the Harmonia design, PPoPP '19) over NumPy, CuPy and Arrow arrays.

    import numpy as np, harmonia
    tree = harmonia.build(keys)                  # uint32 / uint64 keys; values=None: row ids
    values, found = tree.lookup(queries)         # NumPy in, NumPy out; CuPy in, CuPy out
    keys_ge, values_ge, found = tree.lower_bound(queries)
    counts = tree.range_count(lo, hi)            # inclusive [lo, hi]
    offsets, ks, vs = tree.range_collect(lo, hi)
    stats = tree.update("upsert", keys, values)  # atomic batches; harmonia.Op for mixed kinds
    tree.save("col.idx"); tree = harmonia.load("col.idx")

Every call maps to one function of the C library's public API (include/harmonia.h) and keeps its
contract; errors raise harmonia.Error subclasses carrying the library's message. The GIL is released
during every library call.
"""

from . import _core
from ._core import (  # noqa: F401 - re-exported
    CapacityError,
    ConflictError,
    CorruptError,
    DeviceError,
    DeviceMemoryError,
    DuplicateKeyError,
    Error,
    FileError,
    InvalidArgumentError,
    KeyExistsError,
    KeyMissingError,
    NoDeviceError,
    OutOfMemoryError,
    UnsortedError,
    UnsupportedError,
)
from ._tree import Tree, build, device_probe, device_unavailable_reason, gpu_available, load  # noqa: F401
from ._types import (  # noqa: F401
    DeviceInfo,
    NtgMeasurement,
    NtgModel,
    NtgProfile,
    Op,
    TreeInfo,
    UpdateStats,
)

__version__ = _core.library_version
#: True when the GPU engine is compiled in (the build found nvcc); a GPU must still be present.
built_with_cuda = bool(_core.built_with_cuda)

__all__ = [
    "Tree", "build", "load", "device_probe", "device_unavailable_reason", "gpu_available", "built_with_cuda",
    "Op", "TreeInfo", "UpdateStats", "NtgModel", "NtgMeasurement", "NtgProfile", "DeviceInfo",
    "Error", "InvalidArgumentError", "OutOfMemoryError", "FileError", "CorruptError", "UnsupportedError",
    "DuplicateKeyError", "UnsortedError", "CapacityError", "NoDeviceError", "DeviceError",
    "DeviceMemoryError", "KeyExistsError", "KeyMissingError", "ConflictError",
]
