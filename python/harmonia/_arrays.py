"""_arrays.py — arrays in and out: turns what a caller passes (NumPy arrays, anything exposing the
buffer protocol or __array__, Python ints and lists, PyArrow arrays and chunked arrays, CuPy arrays,
PyTorch tensors, other __cuda_array_interface__ or DLPack device arrays) into flat C-contiguous
arrays of the tree's key dtype, checks out= arrays, allocates results of the caller's kind and
gives them back in the caller's shape.

Dtype rules (the same for host and device arrays):
  * uint32 and uint64 arrays are used as they are (zero-copy when C-contiguous);
  * another integer dtype (int8 .. int64, uint8, uint16) is converted to the target dtype when every
    element fits (checked: one min/max pass; a signed array of the target's width with no negative
    element is reinterpreted without a copy); an element that does not fit is a ValueError naming
    the dtype and the element;
  * any other dtype (float, bool, datetime, object, strings ...) is a TypeError naming the dtype.
A tree's width comes from the keys' dtype at build: 64-bit integer dtypes give 64-bit keys, the
narrower ones 32-bit keys (unless build(..., key_bits=) says otherwise).

Devices: a device array stays on its GPU; the work on it (conversions, results) runs with that GPU
current and on the caller's stream there. Whether the array's GPU is the tree's is checked by
harmonia.Tree (the tree's device, _tree.py).
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

U8 = np.dtype(np.uint8)
U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)
BOOL = np.dtype(np.bool_)

_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13


def key_dtype(bits: int) -> np.dtype:
    return U32 if bits == 32 else U64


def _cupy():
    try:
        import cupy
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("harmonia: device arrays are handled through CuPy, which is not installed "
                          "(pip install cupy-cuda13x, or cupy-cuda12x)") from e
    return cupy


class Adapted:
    """One argument, adapted: `flat` is a 1-D C-contiguous array of the target dtype (NumPy on the
    host, CuPy on the device) over the caller's data where no conversion was needed; `shape` the
    caller's shape; `wrap` turns a result of the same kind back into the caller's kind (None: as is);
    device arrays: `stream` the address of the stream to work on, `device_id` the array's GPU."""

    __slots__ = ("flat", "shape", "scalar", "device", "wrap", "stream", "torch_device", "device_id")

    def __init__(self, flat, shape, scalar, device, wrap, stream=None, torch_device=None):
        self.flat = flat
        self.shape = shape
        self.scalar = scalar
        self.device = device
        self.wrap = wrap
        self.stream = stream
        self.torch_device = torch_device
        self.device_id = flat.device.id if device else None


def _flat(x):
    """x as 1-D, itself where it is already (a CuPy view costs microseconds a call)."""
    return x if x.ndim == 1 else x.reshape(-1)


def width_of(dtype: np.dtype, name: str) -> np.dtype:
    """The key dtype a build takes from an input dtype."""
    if dtype.kind not in "ui":
        raise TypeError(f"{name}: dtype {dtype} is not supported: keys are unsigned 32- or 64-bit integers "
                        f"(uint32 / uint64; other integer dtypes are converted when every element fits)")
    return U64 if dtype.itemsize == 8 else U32


def _fit_error(name, dtype, value, target):
    return ValueError(f"{name}: dtype {dtype} holds {value}, which does not fit {target} "
                      f"(keys and values are unsigned {target.itemsize * 8}-bit integers)")


def convert(arr, target: np.dtype, name: str):
    """arr (NumPy or CuPy) as target dtype by the rules above; the same object when it already is."""
    dtype = arr.dtype
    if dtype == target:
        return arr
    if dtype.kind not in "ui":
        raise TypeError(f"{name}: dtype {dtype} is not supported: harmonia takes unsigned integers of the "
                        f"tree's width ({target}); integer dtypes are converted when every element fits")
    if arr.size:
        low, high = int(arr.min()), int(arr.max())
        if low < 0:
            raise _fit_error(name, dtype, low, target)
        if high > np.iinfo(target).max:
            raise _fit_error(name, dtype, high, target)
    if dtype.itemsize == target.itemsize and dtype.isnative and arr.flags.c_contiguous:
        return arr.view(target)  # a signed array with no negative element: reinterpreted, no copy
    return arr.astype(target)  # wider, narrower or byte-swapped: converted


# --- Arrow ------------------------------------------------------------------------------------

def _is_arrow(x) -> bool:
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(x, (pa.Array, pa.ChunkedArray))


def _arrow_chunk(pa, chunk, name):
    if chunk.null_count:
        raise ValueError(f"{name}: the Arrow array holds {chunk.null_count} null(s); keys, values and queries "
                         f"cannot be null (drop them with pyarrow.compute.drop_null, or fill them with "
                         f"pyarrow.compute.fill_null)")
    if not pa.types.is_integer(chunk.type):
        raise TypeError(f"{name}: Arrow type {chunk.type} is not supported: harmonia takes integer columns "
                        f"(uint32 / uint64, or other integer types whose values fit); cast it, e.g. "
                        f".cast(pyarrow.int64()) for timestamps")
    return chunk.to_numpy(zero_copy_only=True)  # a read-only view of the Arrow buffer


def arrow_to_numpy(x, name):
    """An Arrow array: zero-copy; a chunked array: its one chunk zero-copy, several concatenated."""
    import pyarrow as pa
    if isinstance(x, pa.ChunkedArray):
        if x.null_count:
            raise ValueError(f"{name}: the Arrow chunked array holds {x.null_count} null(s); keys, values and "
                             f"queries cannot be null (drop them with pyarrow.compute.drop_null, or fill them)")
        chunks = [_arrow_chunk(pa, c, name) for c in x.chunks]
        if len(chunks) == 1:
            return chunks[0]
        if not chunks:
            if not pa.types.is_integer(x.type):
                raise TypeError(f"{name}: Arrow type {x.type} is not supported: harmonia takes integer columns")
            return np.empty(0, dtype=x.type.to_pandas_dtype())
        return np.concatenate(chunks)
    return _arrow_chunk(pa, x, name)


# --- classification ---------------------------------------------------------------------------

def _torch_host_wrap(result):
    import torch
    return torch.from_numpy(result)


def _torch_device_wrap(result):
    import torch
    try:
        return torch.from_dlpack(result)
    except (RuntimeError, TypeError, BufferError):
        # a PyTorch whose DLPack import lacks unsigned types: through the signed type of the width
        signed = {U64: np.int64, U32: np.int32}.get(result.dtype)
        if signed is None:
            raise
        return torch.from_dlpack(result.view(signed)).view(getattr(torch, str(result.dtype)))


def _dlpack_device_type(x):
    f = getattr(x, "__dlpack_device__", None)
    if f is None:
        return None
    try:
        return f()[0]
    except Exception:  # noqa: BLE001 - not a usable DLPack object
        return None


def classify(x, name):
    """Returns ('host', numpy array, wrap) or ('device', cupy array, wrap, stream-or-None, torch device)."""
    t = type(x)
    if t is np.ndarray:
        return "host", x, None
    cp = sys.modules.get("cupy")  # an array of a library can only exist once it is imported
    if cp is not None and isinstance(x, cp.ndarray):
        return "device", x, None, None, None
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        if x.is_cuda:
            stream = torch.cuda.current_stream(x.device).cuda_stream
            with on_stream(stream, x.device.index):
                return "device", _cupy().from_dlpack(x.detach()), _torch_device_wrap, stream, x.device
        return "host", x.detach().numpy(), _torch_host_wrap
    if hasattr(x, "__cuda_array_interface__"):
        return "device", _cupy().asarray(x), None, None, None
    kind = _dlpack_device_type(x)
    if kind in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        return "device", _cupy().from_dlpack(x), None, None, None
    if _is_arrow(x):
        return "host", arrow_to_numpy(x, name), None
    if kind == _KDL_CPU and not hasattr(x, "__array__"):
        return "host", np.from_dlpack(x), None
    if isinstance(x, np.ma.MaskedArray) and np.ma.is_masked(x):
        raise ValueError(f"{name}: the masked array has {int(np.ma.count_masked(x))} masked element(s); keys, "
                         f"values and queries cannot be missing (take x.compressed(), or fill them)")
    if isinstance(x, (list, tuple)) and len(x) == 0:
        return "host", np.empty(0, U64), None  # NumPy would make it float64
    try:
        return "host", np.asarray(x), None
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(f"{name}: cannot read {t.__name__} as an array of integers ({e})") from e


def resolve_stream(stream, default):
    """A stream argument (int address, CuPy or PyTorch stream, None) as an int address."""
    if stream is None:
        return default
    if isinstance(stream, int):
        return stream
    for attribute in ("ptr", "cuda_stream", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise TypeError(f"stream: an int (cudaStream_t address), a CuPy or a PyTorch stream is expected, "
                    f"not {type(stream).__name__}")


def adapt(x, name, target=None, *, stream=None, host_only=False):
    """Adapts one argument (see the module's docstring). target None: the dtype's own width (build).
    host_only: device arrays are copied to the host (build and update run on the host)."""
    c = classify(x, name)
    if c[0] == "host" or host_only:
        arr = c[1]
        wrap = c[2]
        if c[0] == "device":
            with arr.device:
                s = resolve_stream(stream, c[3] if c[3] is not None else _cupy().cuda.get_current_stream().ptr)
            with on_stream(s, arr.device.id):
                arr = arr.get()
            wrap = None
        if target is None:
            target = width_of(arr.dtype, name)
        arr = convert(arr, target, name)
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        return Adapted(_flat(arr), arr.shape, arr.ndim == 0, False, wrap)
    _, arr, wrap, own_stream, torch_device = c
    cp = _cupy()
    if own_stream is None:
        with arr.device:  # the current stream of the array's GPU
            own_stream = cp.cuda.get_current_stream().ptr
    s = resolve_stream(stream, own_stream)
    if target is None:
        target = width_of(arr.dtype, name)
    if arr.dtype != target or not arr.flags.c_contiguous:
        with on_stream(s, arr.device.id):
            arr = convert(arr, target, name)
            if not arr.flags.c_contiguous:
                arr = cp.ascontiguousarray(arr)
    return Adapted(_flat(arr), arr.shape, arr.ndim == 0, True, wrap, s, torch_device)


def _to_device(x: Adapted, like: Adapted) -> Adapted:
    with on_stream(like.stream, like.device_id):
        moved = _cupy().asarray(x.flat)
    return Adapted(moved, x.shape, x.scalar, True, like.wrap, like.stream, like.torch_device)


def same_place(a: Adapted, b: Adapted, names: str):
    """a and b in the same memory: a host scalar beside a device array goes to the device (so that
    range_count(device_lo, 2**40) works); arrays in different memories are refused."""
    if a.device and b.device and a.device_id != b.device_id:
        raise ValueError(f"{names}: one array is on GPU {a.device_id} and the other on GPU {b.device_id}")
    if a.device == b.device:
        return a, b
    if b.device and a.scalar:
        return _to_device(a, b), b
    if a.device and b.scalar:
        return a, _to_device(b, a)
    raise TypeError(f"{names}: one array is in device memory and the other in host memory")


def broadcast(a: Adapted, b: Adapted):
    """lo and hi of range queries in one shape (NumPy broadcasting)."""
    if a.shape == b.shape:
        return a, b, a.shape
    xp = _cupy() if a.device else np
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError as e:
        raise ValueError(f"lo and hi: shapes {a.shape} and {b.shape} do not broadcast") from e
    out = []
    with (on_stream(a.stream, a.device_id) if a.device else contextlib.nullcontext()):
        for x in (a, b):
            full = xp.ascontiguousarray(xp.broadcast_to(x.flat.reshape(x.shape), shape))
            out.append(Adapted(full.reshape(-1), shape, len(shape) == 0, x.device, x.wrap, x.stream,
                               x.torch_device))
    return out[0], out[1], shape


def on_stream(s, device_id):
    """A context making GPU device_id current and stream address s (a stream of that GPU) CuPy's
    current stream (nothing to do where they are)."""
    cp = _cupy()
    if cp.cuda.runtime.getDevice() == device_id:
        if cp.cuda.get_current_stream().ptr == s:
            return contextlib.nullcontext()
        return cp.cuda.ExternalStream(s)
    both = contextlib.ExitStack()
    both.enter_context(cp.cuda.Device(device_id))
    both.enter_context(cp.cuda.ExternalStream(s))
    return both


def empty(a: Adapted, shape, dtype):
    """A result array of the kind of a (NumPy on the host, CuPy on a's stream on the device)."""
    if not a.device:
        return np.empty(shape, dtype)
    with on_stream(a.stream, a.device_id):
        return _cupy().empty(shape, dtype)


def check_out(out, name, a: Adapted, dtypes, shape):
    """An out= array: of a's kind, one of dtypes (exactly), shape, C-contiguous, writable, on a's GPU.
    Returns (the flat array to write, the object to give back)."""
    if a.device:
        cp = _cupy()
        given = out
        if not isinstance(out, cp.ndarray):
            torch = sys.modules.get("torch")
            if torch is not None and isinstance(out, torch.Tensor) and out.is_cuda:
                out = cp.from_dlpack(out)
            else:
                raise TypeError(f"{name}: the queries are in device memory: a CuPy array (or a CUDA "
                                f"tensor) is required, not {type(out).__name__}")
        if out.device.id != a.device_id:
            raise ValueError(f"{name}: the array is on GPU {out.device.id}; the queries, and so the results, are "
                             f"on GPU {a.device_id}")
    else:
        given = out
        if not isinstance(out, np.ndarray):
            torch = sys.modules.get("torch")
            if torch is not None and isinstance(out, torch.Tensor) and not out.is_cuda:
                out = out.numpy()
            else:
                raise TypeError(f"{name}: the queries are in host memory: a NumPy array is required, "
                                f"not {type(out).__name__}")
        if not out.flags.writeable:
            raise ValueError(f"{name}: the array is read-only")
    if out.dtype not in dtypes:
        want = " or ".join(str(d) for d in dtypes)
        raise TypeError(f"{name}: dtype {out.dtype}, but {want} is required")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{name}: shape {tuple(out.shape)}, but the queries' shape {tuple(shape)} is required")
    if not out.flags.c_contiguous:
        raise ValueError(f"{name}: the array is not C-contiguous")
    return _flat(out), given


def give(a: Adapted, result):
    """A result in the caller's kind and shape: a scalar for scalar queries (NumPy), else an array."""
    if a.scalar and not a.device:
        return result[()]
    if a.wrap is not None:
        return a.wrap(result)
    return result
