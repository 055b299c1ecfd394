"""MXNet's legacy array type, ``mx.nd.NDArray``, as a subclass of ``ndx.numpy.ndarray``.

ndx has one array type; NDArray is the same array under MXNet's older name, so code written
for MXNet 1.x / 2.0 that builds, checks for or converts NDArrays runs: ``x.as_nd_ndarray()``
and ``y.as_np_ndarray()`` return the other kind of array over the same memory (no copy).
Operations on NDArrays return ``ndx.numpy.ndarray`` (NumPy semantics, which ndx always has).

As in MXNet 2.0, where ``mx.np.ndarray`` is a subclass of ``mx.nd.NDArray``, every ndx array
passes ``isinstance(x, NDArray)``."""
import numpy as onp

from .. import numpy as _np

__all__ = ["NDArray", "array", "waitall"]


class _NDArrayMeta(type):
    def __instancecheck__(cls, obj):
        # mx.np.ndarray derives from mx.nd.NDArray in MXNet 2.0: MXNet code tests arrays with
        # isinstance(x, mx.nd.NDArray).
        return isinstance(obj, _np.ndarray)


class NDArray(_np.ndarray, metaclass=_NDArrayMeta):
    """An ndx array under MXNet's NDArray name (see the module docstring)."""

    __slots__ = ()  # no __dict__: views made with view(type=NDArray) are the base layout

    @property
    def context(self):
        """The device the array lives on (MXNet 1.x's name)."""
        return self.device

    @property
    def stype(self):
        """Storage type: always 'default' (dense); ndx has no sparse storage."""
        return "default"

    def as_np_ndarray(self):
        """The same memory as an ``ndx.numpy.ndarray`` (no copy)."""
        return self.view()

    def as_nd_ndarray(self):
        return self

    def tostype(self, stype):
        if stype != "default":
            raise NotImplementedError(f"[NDArray.tostype] sparse storage is not supported; "
                                      f"stype must be 'default', got {stype!r}")
        return self

    def __reduce__(self):
        return (_rebuild, (self.as_np_ndarray(),))

    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{self.asnumpy()}\n<NDArray {shape} @{self.device}>"


def _rebuild(arr):
    return as_nd_ndarray(arr)


def as_nd_ndarray(arr):
    """`arr` (an ndx array) as an NDArray over the same memory (no copy)."""
    if not isinstance(arr, _np.ndarray):
        raise TypeError(f"[as_nd_ndarray] expected an ndx ndarray, got {type(arr).__name__}")
    return arr.view(type=NDArray)


def array(source_array, ctx=None, dtype=None, device=None):
    """An NDArray holding a copy of source_array (MXNet's ``mx.nd.array``): dtype defaults to
    the source's for arrays and to float32 for anything else (lists, scalars), as in MXNet."""
    if dtype is None:
        dtype = source_array.dtype if isinstance(source_array, (_np.ndarray, onp.ndarray)) \
            else "float32"
    kwargs = {"dtype": dtype}
    if device is None:
        device = ctx
    if device is not None:
        kwargs["device"] = device
    return as_nd_ndarray(_np.array(source_array, **kwargs))


def waitall():
    """Waits for all queued device work (MXNet's ``mx.nd.waitall``)."""
    from ..device import synchronize
    synchronize()


def _as_np_ndarray(self):
    return self


# MXNet 2.0's mx.np.ndarray has both conversions (it inherits them from NDArray).
if not hasattr(_np.ndarray, "as_nd_ndarray"):
    _np.ndarray.as_nd_ndarray = as_nd_ndarray
if not hasattr(_np.ndarray, "as_np_ndarray"):
    _np.ndarray.as_np_ndarray = _as_np_ndarray
