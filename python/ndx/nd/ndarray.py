"""MXNet's legacy array type, ``mx.nd.NDArray``, as a subclass of ``ndx.numpy.ndarray``.

ndx has one array type; NDArray is the same array under MXNet's older name, so code written
for MXNet 1.x / 2.0 that builds, checks for or converts NDArrays runs: ``x.as_nd_ndarray()``
and ``y.as_np_ndarray()`` return the other kind of array over the same memory (no copy).

An NDArray keeps MXNet's legacy methods where they differ from NumPy's: ``reshape`` with the
special values 0 / -1 / -2 / -3 / -4 and ``reverse=``, reductions with ``exclude=``,
``argmax`` / ``argmin`` as float32, ``flatten`` to 2-D, comparisons as 0 / 1 in the operands'
dtype, ``asscalar``, ``split(num_outputs=)``, ... Arithmetic, indexing and the methods return
NDArrays, so chains keep these semantics; autograd records through them.

As in MXNet 2.0, where ``mx.np.ndarray`` is a subclass of ``mx.nd.NDArray``, every ndx array
passes ``isinstance(x, NDArray)``."""
import numpy as onp

from .. import numpy as _np

__all__ = ["NDArray", "array", "waitall", "zeros", "ones", "empty", "full", "eye", "arange",
           "linspace", "concatenate", "moveaxis", "imdecode"]


class _SparseStorage:
    """The base of mx.nd.sparse's arrays (nd/sparse.py), here so that the functions of this
    module can tell them apart without importing that one."""


class _NDArrayMeta(type):
    def __instancecheck__(cls, obj):
        # mx.np.ndarray derives from mx.nd.NDArray in MXNet 2.0: MXNet code tests arrays with
        # isinstance(x, mx.nd.NDArray). MXNet's sparse arrays are NDArrays too.
        return isinstance(obj, (_np.ndarray, _SparseStorage))


def _wrap(a):
    """`a` as an NDArray with the same handle (autograd history included); other values
    (tuples and lists of arrays too) pass through."""
    if isinstance(a, _np.ndarray):
        if type(a) is NDArray:
            return a
        r = a.view(type=NDArray)
        r._become(a)  # the handle itself, so a recorded result stays part of the graph
        return r
    if isinstance(a, (list, tuple)):
        return type(a)(_wrap(x) for x in a)
    return a


def _plain(a):
    """`a` as a plain ``ndx.numpy.ndarray`` with the same handle (autograd history kept);
    lists and tuples of arrays too; other values pass through."""
    if type(a) is NDArray:
        r = _np.ndarray.view(a, type=_np.ndarray)  # (a view, not the copy a recorded view is)
        r._become(a)
        return r
    if isinstance(a, _SparseStorage):  # MXNet's storage fallback: the dense array
        return _plain(a.tostype("default"))
    if isinstance(a, (list, tuple)) and any(type(x) is NDArray or isinstance(x, _SparseStorage)
                                            for x in a):
        return type(a)(_plain(x) for x in a)
    return a


def _plain_or_sparse(a):
    return a if isinstance(a, _SparseStorage) else _plain(a)


def _store_into(name, out, result):
    """MXNet's out= of the legacy functions: the result stored into `out` (an array of the
    result's shape), which is returned."""
    if isinstance(result, (list, tuple)):
        raise TypeError(f"[{name}] out= takes one array; this call returns {len(result)}")
    if isinstance(out, _SparseStorage):
        out[:] = result
        return out
    if not isinstance(out, _np.ndarray):
        raise TypeError(f"[{name}] out must be an NDArray, got {type(out).__name__}")
    value = _plain(result)
    if tuple(out.shape) != tuple(value.shape):
        raise ValueError(f"[{name}] out has shape {tuple(out.shape)}, the result "
                         f"{tuple(value.shape)}")
    _np.ndarray.__setitem__(out, Ellipsis, value)
    return out


def _on_plain(fn, keep_sparse=False, sparse_fn=None):
    """fn called with its NDArray arguments as plain arrays (ndx.numpy's functions call
    array methods, which an NDArray overrides with MXNet's legacy semantics); sparse
    arguments become their dense values, unless fn takes them as they are (keep_sparse).
    With sparse_fn, a call with a sparse argument goes to sparse_fn instead (the nd.sparse
    version of fn, which keeps the storage type). out= (MXNet's) stores the result there."""
    plain = _plain_or_sparse if keep_sparse else _plain
    name = fn.__name__

    if sparse_fn is not None:
        def call(*args, out=None, **kwargs):
            sparse = False
            for a in args:  # (a loop: cheaper than any() over a generator)
                if isinstance(a, _SparseStorage):
                    sparse = True
                    break
            if not sparse and kwargs:
                sparse = any(isinstance(v, _SparseStorage) for v in kwargs.values())
            if sparse:
                result = sparse_fn(*args, **kwargs)
            else:
                result = fn(*[_plain(a) for a in args],
                            **{k: _plain(v) for k, v in kwargs.items()})
            return result if out is None else _store_into(name, out, result)
    else:
        def call(*args, out=None, **kwargs):
            result = fn(*[plain(a) for a in args], **{k: plain(v) for k, v in kwargs.items()})
            return result if out is None else _store_into(name, out, result)

    call.__name__ = fn.__name__
    call.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn
    return call


def _binary(name, compare=False):
    base = getattr(_np.ndarray, name)

    def method(self, other):
        if isinstance(other, _SparseStorage):
            return NotImplemented  # the sparse array's reflected method applies MXNet's rules
        out = base(self, other)
        if out is NotImplemented:
            return out
        if compare and isinstance(out, _np.ndarray) and out.dtype == onp.bool_:
            out = out.astype(self.dtype)  # MXNet's legacy comparisons: 0 / 1 in the dtype
        return _wrap(out)

    method.__name__ = name
    return method


def _unary(name):
    base = getattr(_np.ndarray, name)

    def method(self):
        return _wrap(base(self))

    method.__name__ = name
    return method


def _legacy(name):
    """A method calling the legacy function ``nd.<name>(self, ...)``."""

    def method(self, *args, **kwargs):
        from . import _op
        return getattr(_op, name)(self, *args, **kwargs)

    method.__name__ = name
    return method


class NDArray(_np.ndarray, metaclass=_NDArrayMeta):
    """An ndx array under MXNet's NDArray name (see the module docstring)."""

    __slots__ = ()  # no __dict__: views made with view(type=NDArray) are the base layout

    @property
    def context(self):
        """The device the array lives on (MXNet 1.x's name)."""
        return self.device

    @property
    def stype(self):
        """Storage type: 'default' (dense); the sparse arrays are ``nd.sparse``'s classes."""
        return "default"

    @property
    def T(self):  # noqa: N802  (MXNet's name)
        return _wrap(_np.ndarray.T.__get__(self))

    @property
    def grad(self):
        g = _np.ndarray.grad.__get__(self)
        return None if g is None else _wrap(g)

    def as_np_ndarray(self):
        """The same array as an ``ndx.numpy.ndarray`` (no copy; autograd history kept)."""
        return _plain(self)

    def as_nd_ndarray(self):
        return self

    def tostype(self, stype):
        """This array in storage type `stype`: itself for 'default', a CSRNDArray for
        'csr', a RowSparseNDArray for 'row_sparse'."""
        from .sparse import cast_storage
        return cast_storage(self, stype)

    def asscalar(self):
        """The value of a one-element array as a NumPy scalar (MXNet's ``asscalar``)."""
        if self.size != 1:
            raise ValueError(f"[NDArray.asscalar] the array must have exactly one element, "
                             f"its shape is {self.shape}")
        return self.asnumpy().reshape(-1)[0]

    def as_in_context(self, context):
        """This array on `context` (itself when it is already there)."""
        return _wrap(_np.ndarray.as_in_context(self, context))

    as_in_ctx = as_in_context

    def to_device(self, device, *args, **kwargs):
        return _wrap(_np.ndarray.to_device(self, device, *args, **kwargs))

    def copyto(self, other):
        """Copies into the NDArray `other` (returned; a sparse one keeps its storage type), or
        to a new array on device `other`."""
        if isinstance(other, _SparseStorage):
            if other.shape != self.shape:
                raise ValueError(f"[NDArray.copyto] the destination has shape {other.shape}, "
                                 f"the array {self.shape}")
            other[:] = self
            return other
        if isinstance(other, _np.ndarray):
            if other is self:
                return self
            other[...] = self.as_in_context(other.device)
            return _wrap(other)
        return _wrap(_np.ndarray.copyto(self, other))

    def copy(self):
        return _wrap(_np.ndarray.copy(self))

    def astype(self, dtype, copy=True):
        if not copy and onp.dtype(dtype) == self.dtype:
            return self
        return _wrap(_np.ndarray.astype(self, dtype))

    def detach(self):
        return _wrap(_np.ndarray.detach(self))

    def reshape(self, *shape, **kwargs):
        """MXNet's legacy reshape: ``x.reshape((2, -1))``, ``x.reshape(2, -1)`` or
        ``x.reshape(shape=...)``, with the special values 0 / -1 / -2 / -3 / -4 and
        ``reverse=`` (see ``mx.nd.reshape``)."""
        from . import _op
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        if "shape" in kwargs:
            shape = kwargs.pop("shape")
        reverse = kwargs.pop("reverse", False)
        if kwargs:
            raise TypeError(f"[NDArray.reshape] unexpected arguments {sorted(kwargs)}")
        return _op.reshape(self, shape, reverse=reverse)

    def __getitem__(self, key):
        return _wrap(_np.ndarray.__getitem__(self, _int_index(key)))

    def __setitem__(self, key, value):
        _np.ndarray.__setitem__(self, _int_index(key), value)

    def __reduce__(self):
        return (_rebuild, (self.as_np_ndarray(),))

    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{self.asnumpy()}\n<NDArray {shape} @{self.device}>"

    # MXNet's NDArray has no __str__ of its own: print(x) shows the repr, footer included
    __str__ = __repr__

    __hash__ = None


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__"):
    if hasattr(_np.ndarray, _name):
        setattr(NDArray, _name, _binary(_name))
for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(NDArray, _name, _binary(_name, compare=True))
for _name in ("__neg__", "__pos__", "__abs__"):
    setattr(NDArray, _name, _unary(_name))
# Legacy methods that differ from NumPy's, or that NumPy's array does not have.
for _name in ("sum", "mean", "max", "min", "prod", "nansum", "nanprod", "norm", "argmax",
              "argmin", "argsort", "sort", "topk", "flatten", "expand_dims", "squeeze",
              "broadcast_to", "broadcast_like", "broadcast_axes", "reshape_like", "tile",
              "repeat", "flip", "transpose", "swapaxes", "slice", "slice_axis", "take",
              "pick", "one_hot", "clip", "split", "softmax", "log_softmax", "relu", "sigmoid",
              "tanh", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
              "square", "abs", "sign", "floor", "ceil", "round", "rint", "fix", "trunc",
              "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh",
              "arccosh", "arctanh", "reciprocal", "zeros_like", "ones_like", "diag", "dot",
              "cumsum", "where"):
    setattr(NDArray, _name, _legacy(_name))
del _name


def _int_index(key):
    """`key` with its float arrays as int64: MXNet 1.x indexes with NDArrays, which are
    float32 by default (x[nd.array([0, 2])])."""
    if isinstance(key, _np.ndarray):
        return key.astype("int64") if key.dtype.kind == "f" else key
    if isinstance(key, tuple) and any(isinstance(k, _np.ndarray) for k in key):
        return tuple(_int_index(k) for k in key)
    return key


def _rebuild(arr):
    return as_nd_ndarray(arr)


def as_nd_ndarray(arr):
    """`arr` (an ndx array) as an NDArray over the same memory (no copy)."""
    if not isinstance(arr, _np.ndarray):
        raise TypeError(f"[as_nd_ndarray] expected an ndx ndarray, got {type(arr).__name__}")
    return _wrap(arr)


def _device(ctx, device=None):
    from ..device import current_device
    if device is None:
        device = ctx
    return current_device() if device is None else device


def _shape(shape):
    if isinstance(shape, (int, onp.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def array(source_array, ctx=None, dtype=None, device=None):
    """An NDArray holding a copy of source_array (MXNet's ``mx.nd.array``) on `ctx` (the
    current device by default). As MXNet's, dtype defaults to the source's for an ndx array
    (an NDArray) and to float32 for anything else: NumPy arrays (a float64 or int64 NumPy
    array becomes float32), lists, scalars."""
    if isinstance(source_array, _SparseStorage) or (
            not isinstance(source_array, (_np.ndarray, onp.ndarray, list, tuple)) and
            hasattr(source_array, "tocsr")):  # a sparse array, a SciPy sparse matrix
        from . import sparse
        return sparse.array(source_array, ctx=_device(ctx, device), dtype=dtype)
    if dtype is None:
        dtype = source_array.dtype if isinstance(source_array, _np.ndarray) else "float32"
    out = _np.array(source_array, dtype=dtype, device=_device(ctx, device))
    return _wrap(out)


def empty(shape, ctx=None, dtype=None, stype=None, device=None):
    """An uninitialized NDArray (float32 by default) on `ctx`; an empty sparse array for
    stype 'csr' / 'row_sparse'."""
    if stype not in (None, "default"):
        from .sparse import empty as sparse_empty
        return sparse_empty(stype, shape, ctx=_device(ctx, device), dtype=dtype)
    return _wrap(_np.empty(_shape(shape), dtype=dtype or "float32",
                           device=_device(ctx, device)))


def zeros(shape, ctx=None, dtype=None, stype=None, device=None, **kwargs):
    """An NDArray of zeros (float32 by default) on `ctx` (the current device by default);
    an all-zero sparse array for stype 'csr' / 'row_sparse'."""
    if stype not in (None, "default"):
        from .sparse import zeros as sparse_zeros
        return sparse_zeros(stype, shape, ctx=_device(ctx, device), dtype=dtype)
    return _wrap(_np.zeros(_shape(shape), dtype=dtype or "float32",
                           device=_device(ctx, device)))


def ones(shape, ctx=None, dtype=None, stype=None, device=None, **kwargs):
    """An NDArray of ones (float32 by default) on `ctx` (the current device by default)."""
    _dense(stype, "ones")
    return _wrap(_np.ones(_shape(shape), dtype=dtype or "float32",
                          device=_device(ctx, device)))


def eye(N, M=0, k=0, ctx=None, dtype="float32", device=None, **kwargs):  # noqa: N803
    """An N x M NDArray (N x N for M=0, MXNet's default) with ones on diagonal `k`, float32
    by default (MXNet's ``mx.nd.eye``)."""
    return _wrap(_np.eye(int(N), int(M) or int(N), int(k), dtype=dtype or "float32",
                         device=_device(ctx, device)))


def full(shape, val, ctx=None, dtype="float32", out=None, device=None):
    """An NDArray filled with `val` (float32 by default); with `out`, fills `out`."""
    if out is not None:
        out[...] = val
        return out
    return _wrap(_np.full(_shape(shape), val, dtype=dtype or "float32",
                          device=_device(ctx, device)))


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None,
           dtype="float32", device=None):
    """MXNet's legacy arange: float32 by default, each value `repeat` times."""
    out = _np.arange(start, stop, step, dtype=dtype or "float32", device=_device(ctx, device))
    if repeat != 1:
        out = _np.repeat(out, int(repeat))
    return _wrap(out)


def linspace(start, stop, num, endpoint=True, ctx=None, dtype="float32", device=None):
    """`num` evenly spaced values from start to stop (inclusive with endpoint), float32 by
    default (MXNet's ``mx.nd.linspace``)."""
    return _wrap(_np.linspace(start, stop, int(num), endpoint=endpoint,
                              dtype=dtype or "float32", device=_device(ctx, device)))


def concatenate(arrays, axis=0, always_copy=True):
    """The arrays joined along `axis` (MXNet's ``mx.nd.concatenate``)."""
    return _wrap(_np.concatenate(list(arrays), axis=axis))


def moveaxis(tensor, source, destination):
    return _wrap(_np.moveaxis(tensor, source, destination))


def imdecode(str_img, *args, **kwargs):
    """Decodes an image (``mx.image.imdecode``)."""
    from ..image import imdecode as _imdecode
    return _wrap(_imdecode(str_img, *args, **kwargs))


def _dense(stype, who):
    if stype not in (None, "default"):
        raise NotImplementedError(f"[nd.{who}] sparse storage is not supported; stype must be "
                                  f"'default', got {stype!r}")


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
