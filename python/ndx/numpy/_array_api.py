"""ndx.np as an Array API standard (2023.12) namespace: the version, the inspection namespace,
ndarray.__array_namespace__, devices as ndx Device objects, and the functions whose standard
signature NumPy's does not cover (astype, vecdot, sort/argsort with descending, result_type
with Python scalars). tools/array_api_coverage.py checks the namespace against the standard's
function list; tests/python/test_array_api.py checks behaviour.

ndx's defaults differ from NumPy's where MXNet's do: the default real floating dtype is
float32 (complex64 for complex), the default integer and index dtype int64. With
``npx.set_np(dtype=True)`` the default float is float64, and default_dtypes() says so."""
import builtins as _builtins
import operator as _operator

import numpy as _onp

import ndx.numpy as _np

from .. import _core
from .._registry import internal_function as _internal_function
from ..device import Device, cpu, num_gpus

__array_api_version__ = "2023.12"

# Versions whose namespace ndx.np is: each later standard is a superset of the earlier ones
# for everything ndx implements.
_VERSIONS = ("2021.12", "2022.12", "2023.12")

_DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float32", "float64", "complex64", "complex128")
_KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
          "complex floating", "numeric")


def _array_namespace(self, /, *, api_version=None):
    """The Array API namespace of this array: ndx.np (for the standard's versions up to
    2023.12)."""
    if api_version is not None:
        if not isinstance(api_version, str):
            raise TypeError(f"[__array_namespace__] api_version must be a str or None, got "
                            f"{type(api_version).__name__}")
        if api_version not in _VERSIONS:
            raise ValueError(f"[__array_namespace__] api_version must be one of {_VERSIONS} "
                             f"or None, got {api_version!r}")
    return _np


_ndarray = _core.ndarray
_ndarray.__array_namespace__ = _array_namespace

_device_of = _ndarray.device.__get__  # the C getter: the device's string
_DEVICES = {}


def _device(self):
    text = _device_of(self)
    d = _DEVICES.get(text)
    if d is None:
        d = _DEVICES[text] = Device(text)
    return d


_ndarray.device = property(_device, doc="The device the array lives on (an ndx Device).")


def _dtype(name):
    return _onp.dtype(name)


class ArrayNamespaceInfo:
    """The Array API's inspection namespace for ndx.np (``np.__array_namespace_info__()``)."""

    __module__ = "ndx.numpy"

    def capabilities(self):
        """Boolean masks index arrays, and functions with data-dependent output shapes
        (nonzero, unique_*, boolean indexing) exist."""
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self):
        """The device arrays are created on when none is given: the CPU."""
        return cpu()

    def devices(self):
        """The devices arrays can be placed on in this process: the CPU, and each GPU."""
        return [cpu()] + [Device("gpu", i) for i in range(num_gpus())]

    def default_dtypes(self, *, device=None):
        """ndx's defaults: float32 for real floating point (MXNet's default, where NumPy uses
        float64; float64 after npx.set_np(dtype=True)), complex64 beside it (complex128 beside
        float64), int64 for integers and indices."""
        self._check_device(device, "default_dtypes")
        real = _dtype(_core._default_float())
        complex_ = _dtype("complex128" if real == _onp.float64 else "complex64")
        return {"real floating": real, "complex floating": complex_,
                "integral": _dtype("int64"), "indexing": _dtype("int64")}

    def dtypes(self, *, device=None, kind=None):
        """The Array API dtypes ndx supports, by name; `kind` as in isdtype (a kind name, a
        dtype, or a tuple of them). float16 and bfloat16 are ndx dtypes too but not the
        standard's, so they are not listed."""
        self._check_device(device, "dtypes")
        out = {n: _dtype(n) for n in _DTYPE_NAMES}
        if kind is None:
            return out
        if isinstance(kind, str) and kind not in _KINDS:
            raise ValueError(f"[dtypes] kind must be one of {_KINDS}, a dtype or a tuple of them, "
                             f"got {kind!r}")
        return {n: t for n, t in out.items() if _np.isdtype(t, kind)}

    def _check_device(self, device, fn):
        if device is not None and device not in self.devices():
            raise ValueError(f"[{fn}] device must be one of {self.devices()} or None, got "
                             f"{device!r}")


def __array_namespace_info__():
    """The Array API's inspection namespace: capabilities(), default_device(),
    default_dtypes(), dtypes(), devices()."""
    return ArrayNamespaceInfo()


def __getattr__(name):
    # np.bool is the Array API's (and NumPy 2's) name for the boolean dtype. A module-level
    # `bool` would shadow the builtin inside ndx/numpy/__init__.py, so it is served here.
    if name == "bool":
        return _onp.bool_
    raise AttributeError(f"module 'ndx.numpy' has no attribute {name!r}")


def astype(x, dtype, /, *, copy=True, device=None):
    """x cast to dtype (on device, if given). copy=False returns x itself when neither the
    dtype nor the device changes."""
    if not isinstance(x, _ndarray):
        raise TypeError(f"[astype] x must be an ndarray, got {type(x).__name__}")
    if device is not None:
        _np._check_device(device, "astype")
    out = x.astype(dtype, copy=copy)
    if device is not None and Device(device) != x.device:
        out = out.to_device(device)
    return out


def vecdot(x1, x2, /, out=None, *, axis=-1, keepdims=False, dtype=None):
    """The dot product of vectors along axis, broadcasting the other axes (complex x1 is
    conjugated): np.linalg.vecdot, with NumPy's gufunc keywords out=, keepdims=, dtype=."""
    from ._composites import _weak_pair
    from ._products import _check_gufunc_dtype, _gufunc_finish
    _check_gufunc_dtype("vecdot", dtype, x1, x2)
    x1, x2 = _weak_pair(x1, x2)  # (a Python int out of the array's range: OverflowError first)
    r = _np.linalg.vecdot(x1, x2, axis=axis)
    if keepdims:
        r = _np.expand_dims(r, axis if axis < 0 else axis - _np.ndim(x1))  # (from the end)
    return _gufunc_finish(r, out, dtype)


_sort_op = _internal_function("_np_sort")
_argsort_op = _internal_function("_np_argsort")


def _flipped(x, axis):
    return x[(slice(None),) * (axis % x.ndim) + (slice(None, None, -1),)]


def _finish(r, out):
    if out is None:
        return r
    out[...] = r
    return out


def _sort_args(a, axis, fn):
    a = a if isinstance(a, _ndarray) else _np.asarray(a)
    if axis is None:
        return a.reshape(-1), -1
    axis = _operator.index(axis)
    if not -a.ndim <= axis < _builtins.max(a.ndim, 1):
        raise _core.AxisError(f"[{fn}] axis {axis} is out of bounds for array of dimension "
                              f"{a.ndim}")
    return a, axis


def _no_fields(order, name):
    """NumPy's order= names fields of structured arrays, which ndx does not have."""
    if order is not None:
        raise ValueError(f"[{name}] Cannot specify order when the array has no fields.")


def sort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False, out=None):
    """A sorted copy along axis (None: the flattened array); NaN sorts last (first with
    descending=True). The sort is always stable; descending keeps equal elements in their
    order too. stable defaults to True, the Array API's (NumPy's None); with kind given,
    stable=False is NumPy's ValueError."""
    _no_fields(order, "sort")
    stable = None if kind is not None and stable is True else stable  # NumPy: one of them
    if not descending:
        return _sort_op(a, axis=axis, kind=kind, stable=stable, out=out)
    a, axis = _sort_args(a, axis, "sort")
    if a.ndim == 0:
        return _sort_op(a, axis=axis, kind=kind, stable=stable)
    return _finish(_flipped(_sort_op(_flipped(a, axis), axis=axis, kind=kind, stable=stable),
                            axis), out)


def argsort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False, out=None):
    """The indices that sort a along axis (None: the flattened array), stable: equal elements
    keep their order, in descending order as well."""
    _no_fields(order, "argsort")
    stable = None if kind is not None and stable is True else stable
    if not descending:
        return _argsort_op(a, axis=axis, kind=kind, stable=stable, out=out)
    a, axis = _sort_args(a, axis, "argsort")
    if a.ndim == 0:
        return _argsort_op(a, axis=axis, kind=kind, stable=stable)
    # Sorting the reversed axis ascending and reversing the result puts equal elements back in
    # their original order; positions in the reversed axis count from the end.
    idx = _argsort_op(_flipped(a, axis), axis=axis, kind=kind, stable=stable)
    return _np.subtract(a.shape[axis] - 1, _flipped(idx, axis), out=out)


_KIND_ORDER = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_SCALAR_KIND = {bool: "b", int: "i", float: "f", complex: "c"}


def _python_scalar_kind(v):
    if isinstance(v, _onp.generic):
        return None  # NumPy scalars have a dtype of their own
    for t, k in _SCALAR_KIND.items():
        if type(v) is t:
            return k
    return None


def _default_of_kind(kind):
    if kind == "b":
        return _dtype("bool")
    if kind == "i":
        return _dtype("int64")
    real = _dtype(_core._default_float())
    if kind == "f":
        return real
    return _dtype("complex128" if real == _onp.float64 else "complex64")


def result_type(*arrays_and_dtypes):
    """The dtype the arguments promote to (NumPy 2's rules, bfloat16 included). Python bool,
    int, float and complex scalars are weak (NEP 50, the Array API): they only raise the kind,
    to the default dtype of that kind (float32 for float, as ndx's arithmetic does) or, for a
    complex scalar beside a real float, to the complex dtype of the same precision."""
    strong, kinds = [], []
    for a in arrays_and_dtypes:
        k = _python_scalar_kind(a)
        if k is None:
            strong.append(a)
        else:
            kinds.append(k)
    if not kinds:
        return _core.result_type(*arrays_and_dtypes)
    top = _builtins.max(kinds, key=_KIND_ORDER.__getitem__)
    if not strong:
        return _default_of_kind(top)
    t = _core.result_type(*strong)
    tk = "f" if isinstance(t, str) else t.kind  # bfloat16 is spelled as a string
    if _KIND_ORDER[top] <= _KIND_ORDER[tk]:
        return t
    if top == "c" and tk == "f":
        return _dtype("complex128" if t == _onp.float64 else "complex64")
    return _default_of_kind(top)
