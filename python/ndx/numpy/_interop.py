"""Interchange with other array libraries: np.from_dlpack (the Array API's DLPack consumer) and
np.shares_memory / np.may_share_memory. The capsule handling and the overlap test are C++
(``_core._from_dlpack``, ``_core._memory_overlap``); here is the protocol's negotiation."""
import numpy as _onp
from numpy.exceptions import TooHardError as _TooHardError

import ndx.numpy as _np

from .. import _core
from ..device import Device as _Device

_CPU, _CUDA = 1, 2  # DLPack's kDLCPU and kDLCUDA
_MAX_VERSION = (1, 0)  # the DLPack version asked of producers; ndx reads any 1.x


def _dl_device(device):
    """An ndx device (or its name) as DLPack's (device_type, device_id)."""
    d = device if isinstance(device, _Device) else _Device(device)
    return (_CPU, 0) if d.device_type == "cpu" else (_CUDA, d.device_id)


def _check_copy(copy, name):
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"[{name}] copy must be None, True or False, got {copy!r}")


def _consumer_stream(dl_device):
    """DLPack's stream argument: for memory of a GPU ndx can use, this thread's ndx stream on
    it (the producer orders its pending work before that stream); None otherwise (the import
    then fails with BufferError naming the device)."""
    kind, index = dl_device
    if kind == _CUDA and 0 <= index < _core._num_gpus():
        return _core._cuda_stream(index)
    return None


def from_dlpack(x, /, *, device=None, copy=None):
    """An ndarray over the memory of `x`, any object with ``__dlpack__`` (NumPy arrays,
    PyTorch tensors, ndx arrays), without a copy where possible (Array API ``from_dlpack``).

    copy=True always copies; copy=False never does and raises BufferError when a copy would be
    needed (read-only producer memory, another device); device moves the result there. The
    producer's memory stays alive until the last ndx array over it is gone.
    """
    _check_copy(copy, "from_dlpack")
    if not hasattr(x, "__dlpack__"):
        raise TypeError("[from_dlpack] x must have a __dlpack__ method (an array of a "
                        f"DLPack-aware library), got {type(x).__name__}; npx.from_dlpack "
                        "also takes a capsule")
    src = tuple(x.__dlpack_device__()) if hasattr(x, "__dlpack_device__") else (_CPU, 0)
    target = None if device is None else _dl_device(device)
    dl_device = target if target is not None and target != src else None
    stream = _consumer_stream(dl_device or src)
    try:
        capsule = x.__dlpack__(stream=stream, max_version=_MAX_VERSION, dl_device=dl_device,
                               copy=copy)
    except BufferError:
        if dl_device is None or copy is False:
            raise
        # The producer cannot put it on the target device (NumPy exports to the CPU only):
        # import it where it is and let ndx move it (a copy, which copy=None allows).
        capsule = x.__dlpack__(stream=_consumer_stream(src), max_version=_MAX_VERSION,
                               copy=copy)
    except TypeError:
        # A producer older than DLPack 1.0 knows none of these keywords: the legacy capsule,
        # and any copy or move is made here.
        capsule = x.__dlpack__(stream=stream) if stream is not None else x.__dlpack__()
    out = _core._from_dlpack(capsule, copy)
    if device is not None and _dl_device(out.device) != target:
        if copy is False:
            raise BufferError(f"[from_dlpack] moving the array from {out.device} to {device} "
                              "needs a copy, but copy=False")
        out = out.to_device(device)
    return out


def _overlap(a, b, max_work, name):
    if max_work is None:
        max_work = -1
    if not isinstance(max_work, int) or isinstance(max_work, bool):
        raise TypeError(f"[{name}] max_work must be None or an int, got {max_work!r}")
    if max_work < -1:
        raise ValueError(f"[{name}] max_work must be None, -1, 0 or a positive int, "
                         f"got {max_work}")
    return _core._memory_overlap(a, b, max_work)


def shares_memory(a, b, /, max_work=None):
    """Whether a and b (ndx or NumPy arrays) have an element's byte in common, decided
    exactly (NumPy's shares_memory). A positive max_work bounds the candidate solutions tried
    and raises numpy.exceptions.TooHardError past it; max_work=0 only compares the extents
    (TooHardError where they overlap, as NumPy); None or -1 has no bound."""
    r = _overlap(a, b, max_work, "shares_memory")
    if r < 0:
        raise _TooHardError(f"[shares_memory] exceeded max_work={max_work}")
    return bool(r)


def may_share_memory(a, b, /, max_work=None):
    """Whether a and b (ndx or NumPy arrays) might share memory: by default, whether their
    extents in the same memory overlap (NumPy's may_share_memory). A max_work other than
    None or 0 decides exactly, answering True when that takes more than max_work steps."""
    r = _overlap(a, b, 0 if max_work is None else max_work, "may_share_memory")
    return bool(r)  # -1 (too hard to decide): they may


# ---- MXNet's npx names ----
def npx_from_dlpack(dlpack, /, *, device=None, copy=None):
    """An ndarray over a DLPack capsule (MXNet's npx.from_dlpack) or over any object with
    ``__dlpack__`` (as np.from_dlpack). A capsule can be consumed once."""
    _check_copy(copy, "from_dlpack")
    if hasattr(dlpack, "__dlpack__"):
        return from_dlpack(dlpack, device=device, copy=copy)
    out = _core._from_dlpack(dlpack, copy)
    if device is not None and _dl_device(out.device) != _dl_device(device):
        if copy is False:
            raise BufferError(f"[from_dlpack] moving the array from {out.device} to {device} "
                              "needs a copy, but copy=False")
        out = out.to_device(device)
    return out


def npx_from_numpy(ndarray, zero_copy=True):
    """An ndarray from a NumPy array (MXNet's npx.from_numpy). zero_copy=True shares its
    memory, which must be C-contiguous, and marks the NumPy array read-only, as MXNet does
    (writes through it would change the ndx array behind its back); zero_copy=False copies."""
    if not isinstance(ndarray, _onp.ndarray):
        raise TypeError(f"[from_numpy] expects a numpy.ndarray, got {type(ndarray).__name__}")
    if not zero_copy:
        return _np.array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("[from_numpy] only C-contiguous arrays can be shared (zero_copy=True); "
                         f"got strides {ndarray.strides} for shape {ndarray.shape}")
    out = from_dlpack(ndarray)
    ndarray.flags["WRITEABLE"] = False
    return out


def to_dlpack_for_read(data):
    """A legacy DLPack capsule ("dltensor") sharing data's memory (MXNet's
    npx.to_dlpack_for_read). ndx computes synchronously, so the data is ready."""
    return _capsule_of(data, "to_dlpack_for_read")


def to_dlpack_for_write(data):
    """A legacy DLPack capsule ("dltensor") sharing data's memory, for the consumer to write
    into (MXNet's npx.to_dlpack_for_write)."""
    return _capsule_of(data, "to_dlpack_for_write")


def _capsule_of(data, name):
    if not isinstance(data, _core.ndarray):
        raise TypeError(f"[{name}] data must be an ndarray, got {type(data).__name__}")
    return data.__dlpack__()


def _shared_view(obj, dtype):
    """An ndarray over obj's memory with no copy (obj: a NumPy array or another DLPack
    producer) in dtype, or None when that takes a copy (np.array's copy=False)."""
    if not hasattr(obj, "__dlpack__") or isinstance(obj, _core.ndarray):
        return None
    try:
        out = from_dlpack(obj, copy=False)
    except (BufferError, TypeError, ValueError, RuntimeError):
        return None
    return out if dtype is None or out.dtype == dtype else None
