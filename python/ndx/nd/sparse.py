"""MXNet's sparse storage, ``mx.nd.sparse``: CSR matrices (``CSRNDArray``) and row-sparse
arrays (``RowSparseNDArray``).

A sparse array keeps its parts as dense ndx arrays, as MXNet's do:

- ``CSRNDArray`` (2-D): ``data`` (the stored values), ``indices`` (the column of each, int64)
  and ``indptr`` (where each row's values start, then their count; int64);
- ``RowSparseNDArray`` (any ndim >= 1): ``indices`` (the stored rows, sorted, int64) and
  ``data`` (those rows, shape ``(len(indices),) + shape[1:]``).

The products and conversions of CSR matrices are registered C++ ops on those parts
(``src/operator/sparse.cc``: ``_sparse_csr_dot``, ``_sparse_csr_todense``,
``_sparse_csr_gather``), so they are threaded, take work proportional to the stored values,
and record for autograd: ``dot(csr, w)`` with ``w`` attached to autograd gives ``w`` its
gradient, ``csr.T @ ograd``. Everything else composes ndx's array ops on the parts.

Storage types of results follow MXNet's storage inference: ``dot(csr, dense) = dense``,
``dot(csr, dense, transpose_a=True) = row_sparse``, ``dot(dense, csr) = csr``, and
``forward_stype`` asks for another; ``add`` / ``subtract`` of two arrays of one sparse stype
and ``multiply`` of a sparse array by a scalar, a dense array or one of its stype keep the
stype; the zero-preserving element-wise functions (``abs``, ``sqrt``, ``tanh``, ...) map the
stored values; anything else falls back to dense storage, as MXNet's storage fallback does.
The ``mx.nd`` functions of these names call them for sparse arguments; the other ``mx.nd``
functions, comparisons and ``**`` take a sparse array as its dense values.

``mx.io.LibSVMIter`` reads LibSVM files into CSR batches.

Gluon's row-sparse gradients (``Embedding(sparse_grad=True)``) reach the optimizers as
RowSparseNDArrays of the gradient's nonzero rows, for ``lazy_update`` (see ndx.optimizer).
Row-sparse weights (``Parameter(stype='row_sparse')``, ``contrib.nn.SparseEmbedding``) live
in the Trainer's KVStore and are read a few rows at a time (``row_sparse_data``,
``KVStore.row_sparse_pull``); ``Embedding`` and ``dot(csr, row_sparse)`` read only the stored
rows and give them the gradient.

Not provided: sparse arrays are not ``mx.np`` arrays (``mxnet.numpy`` has no sparse storage
either), sparse symbols and GPU kernels."""
import builtins as _builtins
import numbers as _numbers

import numpy as onp

from .. import _core
from .. import autograd as _autograd
from .. import numpy as _np
from .._registry import ops as _ops
from . import _op
from .ndarray import _device, _SparseStorage, _wrap
from .ndarray import _plain as _nd_plain
from .ndarray import empty as _empty_dense
from .ndarray import zeros as _zeros_dense

__all__ = ["csr_matrix", "row_sparse_array", "array", "zeros", "empty", "BaseSparseNDArray",
           "CSRNDArray", "RowSparseNDArray", "add", "subtract", "multiply", "divide", "dot",
           "cast_storage", "retain", "square_sum", "elemwise_add", "elemwise_sub",
           "elemwise_mul", "elemwise_div", "add_n", "sum", "mean", "norm", "abs", "sign",
           "sqrt", "square", "negative", "relu", "sin", "tan", "arcsin", "arctan", "sinh",
           "tanh", "arcsinh", "arctanh", "expm1", "log1p", "rint", "round", "ceil", "floor",
           "trunc", "fix", "degrees", "radians", "clip", "zeros_like", "stop_gradient",
           "slice", "concat", "take", "Embedding"]

_STYPES = ("default", "csr", "row_sparse")


def _invoke(name, inputs, params):
    """One of the CSR ops (src/operator/sparse.cc), whose first input (and rhs, the fourth)
    holds values. The kernels compute in float: integer values go through float64, exact
    for magnitudes below 2**53, and the result returns to their dtype."""
    values = inputs[0]
    if values.dtype.kind == "f":
        return _core._invoke(_ops()[name].handle, tuple(inputs), params)
    wide = (values.astype("float64"),) + tuple(inputs[1:3]) + tuple(
        x.astype("float64") for x in inputs[3:])
    return _core._invoke(_ops()[name].handle, wide, params).astype(values.dtype)


def _plain(x):
    """x as a plain ndx array (NDArrays, NumPy arrays, lists and scalars are converted)."""
    if isinstance(x, _np.ndarray):
        return _nd_plain(x)  # (keeps x's autograd history)
    return _np.array(x)


def _index_array(x, ctx, who, what):
    a = _np.array(x.asnumpy() if isinstance(x, _np.ndarray) else onp.asarray(x), device=ctx)
    if a.ndim != 1:
        raise ValueError(f"[{who}] {what} must be 1-D, got shape {a.shape}")
    if a.size and a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and bool(_np.all(a == _np.floor(a))):
            return a.astype("int64")
        raise TypeError(f"[{who}] {what} must be integers, got dtype {a.dtype}")
    if a.size and a.dtype == onp.uint64 and int(a.max()) > onp.iinfo(onp.int64).max:
        raise ValueError(f"[{who}] {what} must fit int64, got {int(a.max())}")
    return a.astype("int64")


def _check_stype(stype, who):
    if stype not in _STYPES:
        raise ValueError(f"[{who}] stype must be one of {_STYPES}, got {stype!r}")


def _shape_tuple(shape, who):
    if isinstance(shape, _numbers.Integral):
        shape = (shape,)
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"[{who}] shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"[{who}] shape must not have negative sizes, got {shape}")
    return shape


class BaseSparseNDArray(_SparseStorage):
    """The common part of MXNet's sparse arrays (see the module docstring)."""

    __array_priority__ = 1000.0  # NumPy hands mixed arithmetic to these classes
    __hash__ = None  # (== is element-wise, as NDArray's)

    stype = None

    def __init__(self, *args, **kwargs):
        raise TypeError(f"[{type(self).__name__}] create sparse arrays with "
                        f"mx.nd.sparse.csr_matrix / row_sparse_array / zeros / array, or "
                        f"x.tostype(...)")

    @classmethod
    def _make(cls, shape, dtype, **parts):
        self = object.__new__(cls)
        self._shape = tuple(int(d) for d in shape)
        self._dtype = onp.dtype(dtype)
        for name, value in parts.items():
            setattr(self, "_" + name, value)
        return self

    # -- MXNet's array attributes --
    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def size(self):
        out = 1
        for d in self._shape:
            out *= d
        return out

    @property
    def context(self):
        return self._data.device

    ctx = context
    device = context

    @property
    def data(self):
        """A copy of the stored values (an NDArray; MXNet's is a deep copy too)."""
        return _wrap(self._data.copy())

    @property
    def indices(self):
        """A copy of the column (CSR) or row (row_sparse) indices of the stored values
        (int64)."""
        return _wrap(self._indices.copy())

    def __len__(self):
        return self._shape[0]

    def __repr__(self):
        dims = "x".join(str(d) for d in self._shape)
        return f"\n<{type(self).__name__} {dims} @{self.context}>"

    def __bool__(self):
        raise ValueError(f"[{type(self).__name__}] the truth value of a sparse array is "
                         f"ambiguous")

    def wait_to_read(self):
        pass

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Back-propagates from this array, recorded under autograd: the gradient reaches the
        stored values (the others are zeros whatever the inputs), from out_grad's values at
        the stored positions (ones by default)."""
        if out_grad is not None:
            if isinstance(out_grad, BaseSparseNDArray):
                out_grad = out_grad.tostype("default")
            dense = _plain(out_grad)
            if dense.shape != self._shape:
                raise ValueError(f"[{type(self).__name__}.backward] out_grad has shape "
                                 f"{dense.shape}, the array {self._shape}")
            out_grad = self._values_at(dense.astype(self._dtype))
        self._data.backward(out_grad, retain_graph=retain_graph, train_mode=train_mode)

    def asnumpy(self):
        """The dense values as a NumPy array."""
        return self.tostype("default").asnumpy()

    def __array__(self, dtype=None, copy=None):
        out = self.asnumpy()
        return out if dtype is None else out.astype(dtype)

    def todense(self):
        return self.tostype("default")

    def tostype(self, stype):
        return cast_storage(self, stype)

    def astype(self, dtype, copy=True):
        if not copy and onp.dtype(dtype) == self._dtype:
            return self
        return self._with_data(self._data.astype(dtype), who=f"{type(self).__name__}.astype")

    def copy(self):
        return self._with_data(self._data.copy(), copy_indices=True)

    def copyto(self, other):
        """A copy on device `other`, or copied into the array `other` (sparse of the same
        stype, or dense; the same shape) and returned."""
        if isinstance(other, BaseSparseNDArray):
            if other is self:
                return self
            other[:] = self
            return other
        if isinstance(other, _np.ndarray):
            if other.shape != self._shape:
                raise ValueError(f"[{type(self).__name__}.copyto] the destination has shape "
                                 f"{other.shape}, the array {self._shape}")
            other[...] = _plain(self.tostype("default"))
            return other
        return self.as_in_context(other)

    def as_in_context(self, context):
        if context == self.context:
            return self
        parts = {k: getattr(self, "_" + k).as_in_context(context) for k in self._parts}
        return type(self)._make(self._shape, self._dtype, **parts)

    as_in_ctx = as_in_context

    def _with_data(self, data, copy_indices=False, who="nd.sparse"):
        parts = {k: getattr(self, "_" + k) for k in self._parts}
        if copy_indices:
            parts = {k: v.copy() for k, v in parts.items()}
        parts["data"] = _float_values(data, who)
        return type(self)._make(self._shape, data.dtype, **parts)

    def __setitem__(self, key, value):
        if not (isinstance(key, _builtins.slice) and key == _builtins.slice(None)):
            raise ValueError(f"[{type(self).__name__}.__setitem__] only x[:] = value is "
                             f"supported on sparse arrays, got key {key!r}")
        if isinstance(value, _numbers.Number):
            value = _np.full(self._shape, value, dtype=self._dtype)
        value = cast_storage(value, self.stype) if not isinstance(value, type(self)) else value
        if value.shape != self._shape:
            raise ValueError(f"[{type(self).__name__}.__setitem__] the value has shape "
                             f"{value.shape}, the array {self._shape}")
        for k in self._parts:
            part = getattr(value, "_" + k)
            setattr(self, "_" + k, part.astype(self._dtype) if k == "data"
                    else part.copy())

    # -- arithmetic (MXNet's storage rules, dense fallback otherwise) --
    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return subtract(self, other)

    def __rsub__(self, other):
        return subtract(other, self)

    def __mul__(self, other):
        return multiply(self, other)

    def __rmul__(self, other):
        return multiply(other, self)

    def __truediv__(self, other):
        return divide(self, other)

    def __rtruediv__(self, other):
        return divide(other, self)

    def __neg__(self):
        return negative(self)

    def __iadd__(self, other):
        self[:] = add(self, other)
        return self

    def __isub__(self, other):
        self[:] = subtract(self, other)
        return self

    def __imul__(self, other):
        self[:] = multiply(self, other)
        return self

    def __itruediv__(self, other):
        self[:] = divide(self, other)
        return self

    # comparisons, powers, floor division and remainders compute densely (MXNet's storage
    # fallback): ==, <, ** of a sparse array give a dense NDArray
    def _dense_op(name):
        def method(self, other):
            if isinstance(other, BaseSparseNDArray):
                other = other.tostype("default")
            return getattr(self.tostype("default"), name)(other)

        method.__name__ = name
        return method

    __eq__ = _dense_op("__eq__")
    __ne__ = _dense_op("__ne__")
    __lt__ = _dense_op("__lt__")
    __le__ = _dense_op("__le__")
    __gt__ = _dense_op("__gt__")
    __ge__ = _dense_op("__ge__")
    __pow__ = _dense_op("__pow__")
    __rpow__ = _dense_op("__rpow__")
    __floordiv__ = _dense_op("__floordiv__")
    __rfloordiv__ = _dense_op("__rfloordiv__")
    __mod__ = _dense_op("__mod__")
    __rmod__ = _dense_op("__rmod__")
    del _dense_op

    def abs(self):
        return abs(self)

    def sqrt(self):
        return sqrt(self)

    def square(self):
        return square(self)

    def sign(self):
        return sign(self)

    def clip(self, a_min, a_max):
        return clip(self, a_min, a_max)

    def sum(self, axis=None, keepdims=False):
        return sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return mean(self, axis=axis, keepdims=keepdims)

    def norm(self):
        return norm(self)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D matrix in compressed sparse row storage (MXNet's ``CSRNDArray``)."""

    stype = "csr"
    _parts = ("data", "indices", "indptr")

    @property
    def indptr(self):
        """A copy of where each row's stored values start in data / indices, then their
        count."""
        return _wrap(self._indptr.copy())

    def _values_at(self, dense):
        return _invoke("_sparse_csr_gather", (_np.ascontiguousarray(dense), self._indices,
                                              self._indptr), {"num_cols": self._shape[1]})

    def asscipy(self):
        """The matrix as a ``scipy.sparse.csr_matrix``."""
        import scipy.sparse as sp
        return sp.csr_matrix((self._data.asnumpy(), self._indices.asnumpy(),
                              self._indptr.asnumpy()), shape=self._shape)

    def __getitem__(self, key):
        """Rows: an int (a 1-row CSRNDArray, as MXNet's) or a slice with step 1."""
        rows = self._shape[0]
        if isinstance(key, _numbers.Integral) and not isinstance(key, bool):
            k = int(key) + rows if key < 0 else int(key)
            if not 0 <= k < rows:
                raise IndexError(f"[CSRNDArray.__getitem__] row {key} is out of range for "
                                 f"{rows} rows")
            key = _builtins.slice(k, k + 1)
        if not isinstance(key, _builtins.slice):
            raise TypeError(f"[CSRNDArray.__getitem__] index rows with an int or a slice, "
                            f"got {type(key).__name__}")
        begin, end, step = key.indices(rows)
        if step != 1:
            raise ValueError(f"[CSRNDArray.__getitem__] slices must have step 1, got {step}")
        end = _builtins.max(begin, end)
        ptr = self._indptr[begin:end + 1]
        lo, hi = (int(ptr[0]), int(ptr[-1])) if ptr.size else (0, 0)
        return CSRNDArray._make((end - begin, self._shape[1]), self._dtype,
                                data=self._data[lo:hi].copy(),
                                indices=self._indices[lo:hi].copy(),
                                indptr=(ptr - lo) if ptr.size else _np.zeros(1, dtype="int64"))

    def check_format(self, full_check=True):
        """Raises ValueError unless indptr runs from 0 to nnz without decreasing and every
        column is in range (and, with full_check, sorted and unique within its row)."""
        _check_csr(self._data, self._indices, self._indptr, self._shape, full_check,
                   "CSRNDArray.check_format")


class RowSparseNDArray(BaseSparseNDArray):
    """An array whose stored rows are listed in ``indices`` (MXNet's ``RowSparseNDArray``)."""

    stype = "row_sparse"
    _parts = ("data", "indices")

    def __getitem__(self, key):
        if isinstance(key, _builtins.slice) and key == _builtins.slice(None):
            return self
        raise ValueError(f"[RowSparseNDArray.__getitem__] only x[:] is supported, got "
                         f"{key!r}; convert with tostype('default') to index rows")

    def retain(self, indices):
        return retain(self, indices)

    def _values_at(self, dense):
        return dense[self._indices]

    def check_format(self, full_check=True):
        """Raises ValueError unless the data holds one row per index and the indices are in
        range (and, with full_check, sorted and unique)."""
        _check_rsp(self._data, self._indices, self._shape, full_check,
                   "RowSparseNDArray.check_format")


def _check_csr(data, indices, indptr, shape, full_check, who):
    rows, cols = shape
    if data.ndim != 1 or indices.shape != data.shape:
        raise ValueError(f"[{who}] data and indices must be 1-D of one length, got "
                         f"{data.shape} and {indices.shape}")
    if indptr.shape != (rows + 1,):
        raise ValueError(f"[{who}] indptr must have {rows + 1} elements for {rows} rows, got "
                         f"shape {indptr.shape}")
    ptr = indptr.asnumpy()
    if ptr[0] != 0 or ptr[-1] != data.size or (onp.diff(ptr) < 0).any():
        raise ValueError(f"[{who}] indptr must run from 0 to nnz ({data.size}) without "
                         f"decreasing, got {ptr.tolist()[:8]}...")
    col = indices.asnumpy()
    if col.size and (col.min() < 0 or col.max() >= cols):
        raise ValueError(f"[{who}] column indices must be in [0, {cols}), got values in "
                         f"[{col.min()}, {col.max()}]")
    if full_check and col.size:
        row_of = onp.repeat(onp.arange(rows), onp.diff(ptr))
        same_row = row_of[1:] == row_of[:-1]
        if (col[1:][same_row] <= col[:-1][same_row]).any():
            raise ValueError(f"[{who}] column indices must be sorted and unique within each "
                             f"row")


def _check_rsp(data, indices, shape, full_check, who):
    if indices.ndim != 1 or data.shape != (indices.size,) + tuple(shape[1:]):
        raise ValueError(f"[{who}] data must have shape {(indices.size,) + tuple(shape[1:])} "
                         f"for {indices.size} indices of an array of shape {shape}, got "
                         f"{data.shape}")
    rows = indices.asnumpy()
    if rows.size and (rows.min() < 0 or rows.max() >= shape[0]):
        raise ValueError(f"[{who}] row indices must be in [0, {shape[0]}), got values in "
                         f"[{rows.min()}, {rows.max()}]")
    if full_check and (onp.diff(rows) <= 0).any():
        raise ValueError(f"[{who}] row indices must be sorted and unique")


# ---------------------------------------------------------------- construction


def _float_values(data, who="nd.sparse"):
    """data, whose dtype a sparse array can hold: a float or integer one (MXNet's)."""
    if data.dtype.kind not in "fiu":
        raise TypeError(f"[{who}] dtype: sparse arrays hold float or integer values, got "
                        f"{data.dtype}")
    return data


def _csr(data, indices, indptr, shape, who="nd.sparse"):
    _float_values(data, who)
    return CSRNDArray._make(shape, data.dtype, data=data, indices=indices, indptr=indptr)


def _rsp(data, indices, shape, who="nd.sparse"):
    _float_values(data, who)
    return RowSparseNDArray._make(shape, data.dtype, data=data, indices=indices)


def _default_dtype(source, dtype):
    if dtype is not None:
        return onp.dtype(dtype)
    if isinstance(source, (_np.ndarray, onp.ndarray, BaseSparseNDArray)):
        return onp.dtype(source.dtype)
    return onp.dtype("float32")


def _values(x, dtype, ctx):
    if isinstance(x, _np.ndarray):
        return _plain(x).astype(dtype).as_in_context(ctx)
    return _np.array(onp.asarray(x), dtype=dtype, device=ctx)


def _is_scipy_sparse(x):
    return hasattr(x, "tocsr") and hasattr(x, "nnz")


def _is_shape(x):
    return isinstance(x, tuple) and all(isinstance(d, _numbers.Integral) for d in x)


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray (MXNet's ``mx.nd.sparse.csr_matrix``) from

    - ``(data, indices, indptr)``, the CSR parts (shape inferred when None);
    - ``(data, (row, col))``, coordinates (duplicates summed, as SciPy's);
    - ``(M, N)``, an empty matrix;
    - a dense array (NDArray, NumPy array, nested lists), a SciPy sparse matrix or a
      CSRNDArray.

    dtype defaults to the source's for arrays and float32 otherwise."""
    ctx = _device(ctx)
    who = "nd.sparse.csr_matrix"
    if isinstance(arg1, CSRNDArray):
        out = arg1.as_in_context(ctx).astype(_default_dtype(arg1, dtype))
        return out if shape is None or tuple(shape) == out.shape else _shape_mismatch(
            who, shape, out.shape)
    if _is_scipy_sparse(arg1):
        m = arg1.tocsr()
        if not m.has_canonical_format:  # sorted columns, duplicates summed (as MXNet's)
            m = m.copy()
            m.sum_duplicates()
        return csr_matrix((m.data, m.indices, m.indptr), shape=m.shape, ctx=ctx,
                          dtype=dtype if dtype is not None else m.dtype)
    if _is_shape(arg1):
        if len(arg1) != 2:
            raise ValueError(f"[{who}] a CSR matrix is 2-D, got shape {arg1}")
        return zeros("csr", arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        dtype = _default_dtype(arg1[0], dtype)
        data = _values(arg1[0], dtype, ctx)
        indices = _index_array(arg1[1], ctx, who, "indices")
        indptr = _index_array(arg1[2], ctx, who, "indptr")
        if shape is None:
            cols = int(indices.max()) + 1 if indices.size else 0
            shape = (indptr.size - 1, cols)
        shape = _shape_tuple(shape, who)
        if len(shape) != 2:
            raise ValueError(f"[{who}] a CSR matrix is 2-D, got shape {shape}")
        _check_csr(data, indices, indptr, shape, False, who)
        return _csr(data, indices, indptr, shape, who)
    if isinstance(arg1, tuple) and len(arg1) == 2 and isinstance(arg1[1], tuple):
        dtype = _default_dtype(arg1[0], dtype)
        data = _values(arg1[0], dtype, ctx)
        row = _index_array(arg1[1][0], ctx, who, "row")
        col = _index_array(arg1[1][1], ctx, who, "col")
        if not data.ndim == 1 or row.shape != data.shape or col.shape != data.shape:
            raise ValueError(f"[{who}] data, row and col must be 1-D of one length, got "
                             f"{data.shape}, {row.shape}, {col.shape}")
        if shape is None:
            shape = ((int(row.max()) + 1, int(col.max()) + 1) if row.size else (0, 0))
        shape = _shape_tuple(shape, who)
        for what, idx, n in (("row", row, shape[0]), ("col", col, shape[1])):
            if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
                raise ValueError(f"[{who}] {what} indices must be in [0, {n})")
        return _csr_from_coo(row, col, data, shape)
    if isinstance(arg1, (BaseSparseNDArray, _np.ndarray, onp.ndarray, list, tuple)):
        dense = arg1.tostype("default") if isinstance(arg1, BaseSparseNDArray) else arg1
        dense = _values(dense, _default_dtype(arg1, dtype), ctx)
        if dense.ndim != 2:
            raise ValueError(f"[{who}] arg1: a dense source must be 2-D, got shape "
                             f"{dense.shape}")
        if shape is not None and _shape_tuple(shape, who) != dense.shape:
            _shape_mismatch(who, shape, dense.shape)
        _float_values(dense, who)
        return cast_storage(dense, "csr")
    raise TypeError(f"[{who}] arg1 must be (data, indices, indptr), (data, (row, col)), a "
                    f"shape, a dense array or a sparse matrix; got {type(arg1).__name__}")


def _shape_mismatch(who, shape, actual):
    raise ValueError(f"[{who}] shape {tuple(shape)} does not match the source's {actual}")


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray (MXNet's ``mx.nd.sparse.row_sparse_array``) from ``(data,
    indices)`` (data holds the rows listed in indices; shape inferred when None), a shape,
    a dense array or a RowSparseNDArray. Unsorted indices are sorted with their rows;
    repeated ones are refused."""
    ctx = _device(ctx)
    who = "nd.sparse.row_sparse_array"
    if isinstance(arg1, RowSparseNDArray):
        if shape is not None and _shape_tuple(shape, who) != arg1.shape:
            _shape_mismatch(who, shape, arg1.shape)
        return arg1.as_in_context(ctx).astype(_default_dtype(arg1, dtype))
    if _is_shape(arg1):
        return zeros("row_sparse", arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        dtype = _default_dtype(arg1[0], dtype)
        data = _values(arg1[0], dtype, ctx)
        indices = _index_array(arg1[1], ctx, who, "indices")
        if data.ndim < 1 or data.shape[0] != indices.size:
            raise ValueError(f"[{who}] data must have one row per index ({indices.size}), "
                             f"got shape {data.shape}")
        if shape is None:
            shape = ((int(indices.max()) + 1 if indices.size else 0),) + data.shape[1:]
        shape = _shape_tuple(shape, who)
        if data.shape[1:] != shape[1:]:
            raise ValueError(f"[{who}] the rows of data have shape {data.shape[1:]}, the "
                             f"array's rows {shape[1:]}")
        order = _np.argsort(indices, kind="stable")
        indices, data = indices[order], data[order]
        _check_rsp(data, indices, shape, True, who)
        return _rsp(data, indices, shape, who)
    if isinstance(arg1, (BaseSparseNDArray, _np.ndarray, onp.ndarray, list)):
        dense = arg1.tostype("default") if isinstance(arg1, BaseSparseNDArray) else arg1
        dense = _values(dense, _default_dtype(arg1, dtype), ctx)
        if dense.ndim < 1:
            raise ValueError(f"[{who}] arg1: a dense source has at least one dimension, got "
                             f"a 0-d array")
        if shape is not None and _shape_tuple(shape, who) != dense.shape:
            _shape_mismatch(who, shape, dense.shape)
        _float_values(dense, who)
        return cast_storage(dense, "row_sparse")
    raise TypeError(f"[{who}] arg1 must be (data, indices), a shape or a dense array; got "
                    f"{type(arg1).__name__}")


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a sparse one (a copy) or a SciPy sparse matrix (CSR)."""
    if isinstance(source_array, BaseSparseNDArray):
        out = source_array.as_in_context(_device(ctx))
        return out.astype(_default_dtype(source_array, dtype), copy=True)
    if _is_scipy_sparse(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise TypeError(f"[nd.sparse.array] expected a sparse array or a SciPy sparse matrix, "
                    f"got {type(source_array).__name__} (use mx.nd.array for dense data)")


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage type `stype` (nothing stored for a sparse one)."""
    _check_stype(stype, "nd.sparse.zeros")
    if stype == "default":
        return _zeros_dense(shape, ctx=ctx, dtype=dtype)
    shape = _shape_tuple(shape, "nd.sparse.zeros")
    ctx = _device(ctx)
    dtype = onp.dtype(dtype or "float32")
    if dtype.kind not in "fiu":
        _float_values(_np.zeros(0, dtype=dtype), "nd.sparse.zeros")
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"[nd.sparse.zeros] a CSR matrix is 2-D, got shape {shape}")
        return _csr(_np.zeros(0, dtype=dtype, device=ctx), _np.zeros(0, dtype="int64",
                                                                     device=ctx),
                    _np.zeros(shape[0] + 1, dtype="int64", device=ctx), shape)
    if not shape:
        raise ValueError("[nd.sparse.zeros] a row_sparse array has at least one dimension")
    return _rsp(_np.zeros((0,) + shape[1:], dtype=dtype, device=ctx),
                _np.zeros(0, dtype="int64", device=ctx), shape)


def empty(stype, shape, ctx=None, dtype=None):
    """As zeros for the sparse stypes (nothing is stored); uninitialized for 'default'."""
    _check_stype(stype, "nd.sparse.empty")
    if stype == "default":
        return _empty_dense(shape, ctx=ctx, dtype=dtype)
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


# ---------------------------------------------------------------- storage casts


def _ones_vector(n, dtype, ctx):
    return _np.ones(n, dtype=dtype, device=ctx)


def _row_ids(x):
    """The row of each stored value of a CSRNDArray."""
    counts = x._indptr[1:] - x._indptr[:-1]
    return _np.repeat(_np.arange(x._shape[0], dtype="int64", device=x.context), counts)


def _csr_todense(x):
    return _invoke("_sparse_csr_todense", (x._data, x._indices, x._indptr),
                   {"num_cols": x._shape[1]})


def _rsp_todense(x):
    if x._indices.size and _autograd.is_recording():
        # a gather, so that the stored rows get the gradient of what uses the dense value
        slot = _np.zeros(x._shape[0], dtype="int64", device=x.context)
        slot[x._indices] = _np.arange(1, x._indices.size + 1, dtype="int64",
                                      device=x.context)
        zero = _np.zeros((1,) + x._shape[1:], dtype=x._dtype, device=x.context)
        return _np.take(_np.concatenate([zero, x._data]), slot, axis=0)
    out = _np.zeros(x._shape, dtype=x._dtype, device=x.context)
    if x._indices.size:
        out[x._indices] = x._data
    return out


def _dense_to_csr(x):
    if x.ndim != 2:
        raise ValueError(f"[cast_storage] a CSR matrix is 2-D, got an array of shape {x.shape}")
    rows, cols = _np.nonzero(x)
    counts = _np.count_nonzero(x, axis=1).astype("int64")
    indptr = _np.concatenate([_np.zeros(1, dtype="int64", device=x.device),
                              _np.cumsum(counts, dtype="int64")])
    data = _invoke("_sparse_csr_gather", (x, cols, indptr), {"num_cols": x.shape[1]})
    return _csr(data, cols.astype("int64"), indptr, x.shape)


def _dense_to_rsp(x):
    if x.ndim < 1:
        raise ValueError("[cast_storage] a row_sparse array has at least one dimension, got "
                         "a 0-d array")
    width = 1
    for d in x.shape[1:]:
        width *= d
    flat = _np.reshape(x, (x.shape[0], width))
    rows = _np.flatnonzero(_np.any(flat, axis=1)).astype("int64")  # (no temporary)
    return _rsp(x[rows], rows, x.shape)


def cast_storage(data, stype):
    """`data` in storage type `stype` ('default', 'csr' or 'row_sparse'; MXNet's
    ``cast_storage``): zeros are not stored in the sparse results."""
    _check_stype(stype, "cast_storage")
    if isinstance(data, BaseSparseNDArray):
        if data.stype == stype:
            return data.copy()  # (MXNet's cast_storage returns a copy)
        dense = _csr_todense(data) if data.stype == "csr" else _rsp_todense(data)
        return _wrap(dense) if stype == "default" else cast_storage(dense, stype)
    if stype == "default":
        return _wrap(data) if isinstance(data, _np.ndarray) else _wrap(_plain(data))
    x = _float_values(_plain(data), "cast_storage")
    return _dense_to_csr(x) if stype == "csr" else _dense_to_rsp(x)


def _csr_from_coo(row, col, data, shape):
    """A CSR matrix of the (row, col, value) triples, sorted, duplicates summed."""
    ctx = data.device
    rows, cols = shape
    key = row * _builtins.max(cols, 1) + col
    order = _np.argsort(key, kind="stable")
    key, data = key[order], data[order]
    n = key.size
    if n:
        starts = _np.concatenate([_np.zeros(1, dtype="int64", device=ctx),
                                  _np.flatnonzero(key[1:] != key[:-1]).astype("int64") + 1])
    else:
        starts = _np.zeros(0, dtype="int64", device=ctx)
    first = key[starts]
    if starts.size != n:  # sum the duplicates: a CSR matrix with one column per run
        runs = _np.concatenate([starts, _np.full(1, n, dtype="int64", device=ctx)])
        data = _invoke("_sparse_csr_dot", (data, _np.zeros(n, dtype="int64", device=ctx),
                                            runs, _ones_vector(1, data.dtype, ctx)),
                       {"num_cols": 1, "transpose_a": False})
    else:
        data = data[starts] if n else data
    out_rows = first // _builtins.max(cols, 1)
    counts = _np.bincount(out_rows, minlength=rows).astype("int64") if first.size else \
        _np.zeros(rows, dtype="int64", device=ctx)
    indptr = _np.concatenate([_np.zeros(1, dtype="int64", device=ctx),
                              _np.cumsum(counts, dtype="int64")])
    return _csr(data, (first % _builtins.max(cols, 1)).astype("int64"), indptr, shape)


# ---------------------------------------------------------------- products


def _dense_operand(x):
    return _plain(x.tostype("default")) if isinstance(x, BaseSparseNDArray) else _plain(x)


def _as_stype(out, stype):
    return _wrap(out) if stype == "default" else cast_storage(out, stype)


def _csr_dot(csr, rhs, transpose):
    """csr @ rhs (csr.T @ rhs with `transpose`) of a dense 1-D / 2-D rhs, in the operands'
    promoted float dtype (an integer rhs takes the matrix's)."""
    dtype = onp.result_type(csr.dtype, rhs.dtype) if rhs.dtype.kind == "f" else csr.dtype
    data = csr._data if csr.dtype == dtype else csr._data.astype(dtype)
    if rhs.dtype != dtype:
        rhs = rhs.astype(dtype)
    return _invoke("_sparse_csr_dot", (data, csr._indices, csr._indptr, rhs),
                   {"num_cols": csr._shape[1], "transpose_a": bool(transpose)})


def _stored_slots(indices, wanted):
    """(slot, found): for each of `wanted` (row numbers), its position in the sorted
    `indices` (clipped into range) and whether it is stored there."""
    slot = _np.minimum(_np.searchsorted(indices, wanted), indices.size - 1)
    return slot, indices[slot] == wanted


def _csr_dot_rows(csr, rsp):
    """csr @ rsp of a row_sparse right operand, from its stored rows only: each column of
    csr is renumbered to its row's place among them (a column with no stored row meets
    zeros), so neither operand is made dense and rsp's rows get the gradient."""
    dtype = onp.result_type(csr.dtype, rsp.dtype) if rsp.dtype.kind == "f" else csr.dtype
    if not rsp._indices.size:  # (recorded through the empty rows, so backward reaches them)
        return _np.zeros((csr.shape[0], rsp.shape[1]), dtype=dtype, device=csr.context) + \
            rsp._data.astype(dtype).sum()
    slot, found = _stored_slots(rsp._indices, csr._indices)
    values = csr._data.astype(dtype) * found.astype(dtype)
    return _invoke("_sparse_csr_dot", (values, slot, csr._indptr, rsp._data.astype(dtype)),
                   {"num_cols": rsp._indices.size, "transpose_a": False})


def Embedding(data, weight, input_dim=None, output_dim=None, dtype="float32",  # noqa: N802
              sparse_grad=False):
    """MXNet's Embedding with a row_sparse weight (contrib.nn.SparseEmbedding's): the rows of
    the ids in `data` (ids are clipped into [0, input_dim), as the dense op clips them), an
    id whose row is not stored giving zeros; the stored rows get the gradient. Any other
    weight is looked up densely."""
    if not isinstance(weight, RowSparseNDArray):
        return _op.Embedding(_dense_operand(data), _dense_operand(weight), input_dim,
                             output_dim, dtype, sparse_grad)
    who = "nd.Embedding"
    if weight.ndim != 2:
        raise ValueError(f"[{who}] weight must be 2-D (input_dim, output_dim), got shape "
                         f"{weight.shape}")
    for name, given, actual in (("input_dim", input_dim, weight.shape[0]),
                                ("output_dim", output_dim, weight.shape[1])):
        if given is not None and int(given) != actual:
            raise ValueError(f"[{who}] {name}={given} does not match the weight's shape "
                             f"{weight.shape}")
    ids = _dense_operand(data)
    if ids.dtype.kind not in "iuf":
        raise TypeError(f"[{who}] data must hold row ids (integers or floats), got dtype "
                        f"{ids.dtype}")
    ids = _np.clip(ids, 0, weight.shape[0] - 1).astype("int64")
    out_shape = tuple(ids.shape) + (weight.shape[1],)
    if not weight._indices.size:  # (recorded through the empty rows: backward reaches them)
        return _wrap(_np.zeros(out_shape, dtype=weight.dtype, device=weight.context) +
                     weight._data.sum())
    slot, found = _stored_slots(weight._indices, ids.reshape(-1))
    rows = _np.take(weight._data, slot, axis=0) * _np.expand_dims(
        found.astype(weight.dtype), 1)
    return _wrap(rows.reshape(out_shape))


def _shape_of(x):
    return tuple(x.shape) if hasattr(x, "shape") else onp.shape(x)


def _check_dot_shapes(lhs_shape, rhs_shape, transpose_a, transpose_b):
    """Both operands 1-D or 2-D (after their transposes) with matching inner sizes."""
    shapes = []
    for name, shape, flip in (("lhs", lhs_shape, transpose_a), ("rhs", rhs_shape, transpose_b)):
        if len(shape) not in (1, 2):
            raise ValueError(f"[nd.dot] {name}: a product with a sparse operand takes 1-D or "
                             f"2-D arrays, got shape {shape}")
        shapes.append(tuple(reversed(shape)) if flip else tuple(shape))
    (a, b) = shapes
    if a[-1] != b[0]:
        raise ValueError(f"[nd.dot] shapes {lhs_shape} and {rhs_shape} (transpose_a="
                         f"{bool(transpose_a)}, transpose_b={bool(transpose_b)}) are not "
                         f"aligned: {a[-1]} != {b[0]}")


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """MXNet's dot with sparse operands. Result storage (MXNet's rules on the CPU):
    dot(csr, dense or row_sparse) = dense, the same with transpose_a=True = row_sparse,
    dot(dense, csr) = csr, dot(dense, csr, transpose_b=True) = dense; forward_stype asks for
    another stype, and other combinations compute densely (dense result)."""
    if forward_stype is not None:
        _check_stype(forward_stype, "nd.dot")
    csr_times_other = isinstance(lhs, CSRNDArray) and not isinstance(rhs, CSRNDArray)
    dense_times_csr = isinstance(rhs, CSRNDArray) and not isinstance(lhs, BaseSparseNDArray)
    if csr_times_other or dense_times_csr:
        _check_dot_shapes(_shape_of(lhs), _shape_of(rhs), transpose_a, transpose_b)
    if csr_times_other and isinstance(rhs, RowSparseNDArray) and not transpose_a \
            and not transpose_b and rhs.ndim == 2:
        return _as_stype(_csr_dot_rows(lhs, rhs), forward_stype or "default")
    if csr_times_other:
        dense_rhs = _dense_operand(rhs)
        if transpose_b:
            dense_rhs = _np.transpose(dense_rhs)
        out = _csr_dot(lhs, dense_rhs, transpose_a)
        default = "row_sparse" if transpose_a and not transpose_b and out.ndim == 2 \
            else "default"
        return _as_stype(out, forward_stype or default)
    if dense_times_csr:
        a = _plain(lhs)
        if transpose_a:
            a = _np.transpose(a)
        # a @ B = (B.T @ a.T).T and a @ B.T = (B @ a.T).T
        out = _np.transpose(_csr_dot(rhs, _np.transpose(a), not transpose_b))
        default = "csr" if not transpose_a and not transpose_b and out.ndim == 2 \
            else "default"
        return _as_stype(out, forward_stype or default)
    out = _op.dot(_dense_operand(lhs), _dense_operand(rhs), transpose_a=transpose_a,
                  transpose_b=transpose_b)
    return _as_stype(out, forward_stype or "default")


# ---------------------------------------------------------------- element-wise


def _is_scalar(x):
    return isinstance(x, _numbers.Number) or (isinstance(x, (onp.ndarray, _np.ndarray))
                                              and x.ndim == 0)


def _scalar(x):
    return x.item() if hasattr(x, "item") else x


def _keys(x):
    return _row_ids(x) * _builtins.max(x._shape[1], 1) + x._indices


def _same_shape(lhs, rhs, who):
    if lhs.shape != rhs.shape:
        raise ValueError(f"[nd.sparse.{who}] the operands must have the same shape, got "
                         f"{lhs.shape} and {rhs.shape}")


def _csr_combine(lhs, rhs, sign):
    """lhs + sign * rhs of two CSR matrices, as a CSR matrix."""
    dtype = onp.result_type(lhs.dtype, rhs.dtype)
    row = _np.concatenate([_row_ids(lhs), _row_ids(rhs)])
    col = _np.concatenate([lhs._indices, rhs._indices])
    data = _np.concatenate([lhs._data.astype(dtype), rhs._data.astype(dtype) * sign])
    return _csr_from_coo(row, col, data, lhs.shape)


def _rsp_combine(lhs, rhs, sign):
    dtype = onp.result_type(lhs.dtype, rhs.dtype)
    rows = _np.union1d(lhs._indices, rhs._indices).astype("int64")
    data = _np.zeros((rows.size,) + lhs.shape[1:], dtype=dtype, device=lhs.context)
    if lhs._indices.size:
        data[_np.searchsorted(rows, lhs._indices)] = lhs._data.astype(dtype)
    if rhs._indices.size:
        at = _np.searchsorted(rows, rhs._indices)
        data[at] = data[at] + rhs._data.astype(dtype) * sign
    return _rsp(data, rows, lhs.shape)


def _combine(lhs, rhs, sign, who):
    if isinstance(lhs, BaseSparseNDArray) and isinstance(rhs, BaseSparseNDArray) and \
            lhs.stype == rhs.stype:
        _same_shape(lhs, rhs, who)
        return (_csr_combine if lhs.stype == "csr" else _rsp_combine)(lhs, rhs, sign)
    a, b = _dense_operand(lhs) if not _is_scalar(lhs) else lhs, \
        _dense_operand(rhs) if not _is_scalar(rhs) else rhs
    return _wrap(a + b if sign > 0 else a - b)


def add(lhs, rhs):
    """lhs + rhs: csr + csr = csr, row_sparse + row_sparse = row_sparse, else dense."""
    return _combine(lhs, rhs, 1, "add")


def subtract(lhs, rhs):
    """lhs - rhs: csr - csr = csr, row_sparse - row_sparse = row_sparse, else dense."""
    return _combine(lhs, rhs, -1, "subtract")


elemwise_add = add
elemwise_sub = subtract


def _scale_sparse(x, other, divide_by):
    """x * other (or x / other) of a sparse x and a scalar or dense other: x's stype."""
    if _is_scalar(other):
        other = _scalar(other)
        return x._with_data(x._data / other if divide_by else x._data * other)
    d = _dense_operand(other)
    if x.stype == "csr":
        full = _np.broadcast_to(d, x.shape) if d.shape != x.shape else d
        at = _invoke("_sparse_csr_gather", (_np.ascontiguousarray(full).astype(x.dtype),
                                            x._indices, x._indptr),
                     {"num_cols": x._shape[1]})
    else:
        full = _np.broadcast_to(d, x.shape) if d.shape != x.shape else d
        at = full[x._indices]
    return x._with_data(x._data / at if divide_by else x._data * at)


def _multiply_same(lhs, rhs):
    """Element-wise product of two sparse arrays of one stype (their common entries)."""
    if lhs.stype == "csr":
        ka, kb = _keys(lhs), _keys(rhs)
        order = _np.argsort(ka, kind="stable")
        ka, va = ka[order], lhs._data[order]
        at = _np.minimum(_np.searchsorted(ka, kb), _builtins.max(ka.size - 1, 0))
        hit = (ka[at] == kb) if ka.size else _np.zeros(kb.shape, dtype=bool)
        cols = _builtins.max(lhs._shape[1], 1)
        kb_hit = kb[hit]
        return _csr_from_coo(kb_hit // cols, kb_hit % cols, va[at[hit]] * rhs._data[hit],
                             lhs.shape)
    rows = _np.intersect1d(lhs._indices, rhs._indices).astype("int64")
    data = lhs._data[_np.searchsorted(lhs._indices, rows)] * \
        rhs._data[_np.searchsorted(rhs._indices, rows)]
    return _rsp(data, rows, lhs.shape)


def multiply(lhs, rhs):
    """lhs * rhs: a sparse array times a scalar, a dense array (broadcast to its shape) or a
    sparse array of its stype keeps its stype; anything else is dense."""
    if isinstance(lhs, BaseSparseNDArray) and isinstance(rhs, BaseSparseNDArray):
        if lhs.stype == rhs.stype:
            _same_shape(lhs, rhs, "multiply")
            return _multiply_same(lhs, rhs)
        return _wrap(_dense_operand(lhs) * _dense_operand(rhs))
    if isinstance(lhs, BaseSparseNDArray):
        return _scale_sparse(lhs, rhs, False)
    if isinstance(rhs, BaseSparseNDArray):
        return _scale_sparse(rhs, lhs, False)
    return _wrap(_plain(lhs) * _plain(rhs))


def divide(lhs, rhs):
    """lhs / rhs: a sparse array divided by a scalar or a dense array keeps its stype; a
    divisor with sparse storage makes the result dense (0 / 0 is NaN)."""
    if isinstance(lhs, BaseSparseNDArray) and not isinstance(rhs, BaseSparseNDArray):
        return _scale_sparse(lhs, rhs, True)
    a = _dense_operand(lhs) if not _is_scalar(lhs) else lhs
    return _wrap(a / _dense_operand(rhs))


def elemwise_mul(lhs, rhs):
    """MXNet's elemwise_mul storage rule: two arrays of one sparse stype keep it, row_sparse
    with dense is row_sparse, anything else (csr with dense included) is dense."""
    sparse = [a.stype for a in (lhs, rhs) if isinstance(a, BaseSparseNDArray)]
    if sparse == ["row_sparse"] or (len(sparse) == 2 and sparse[0] == sparse[1]):
        return multiply(lhs, rhs)
    return _wrap(_dense_operand(lhs) * _dense_operand(rhs))


def elemwise_div(lhs, rhs):
    """MXNet's elemwise_div: a dense result for any storage types."""
    return _wrap(_dense_operand(lhs) / _dense_operand(rhs))


def add_n(*args):
    """The sum of the arrays: row_sparse if all are row_sparse, else dense."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if not args:
        raise ValueError("[nd.sparse.add_n] expected at least one array")
    if all(isinstance(a, RowSparseNDArray) for a in args):
        out = args[0]
        for a in args[1:]:
            out = add(out, a)
        return out if len(args) > 1 else out.copy()
    return _wrap(_op.add_n(*[_dense_operand(a) for a in args]))


def _zero_preserving(name):
    """MXNet's nd.<name> (f(0) = 0): on a sparse array, of the stored values."""
    dense = getattr(_op, name)  # (the dense function, so both storages round etc. alike)

    def op(data, *args, **kwargs):
        if isinstance(data, BaseSparseNDArray):
            return data._with_data(_plain(dense(data._data, *args, **kwargs)))
        return dense(_plain(data), *args, **kwargs)

    op.__name__ = name
    op.__doc__ = (f"{name} of every element; on a sparse array, of the stored values "
                  f"(f(0) = 0, so the result keeps the storage type).")
    return op


abs = _zero_preserving("abs")  # noqa: A001  (MXNet's names)
sign = _zero_preserving("sign")
sqrt = _zero_preserving("sqrt")
square = _zero_preserving("square")
negative = _zero_preserving("negative")
relu = _zero_preserving("relu")
sin = _zero_preserving("sin")
tan = _zero_preserving("tan")
arcsin = _zero_preserving("arcsin")
arctan = _zero_preserving("arctan")
sinh = _zero_preserving("sinh")
tanh = _zero_preserving("tanh")
arcsinh = _zero_preserving("arcsinh")
arctanh = _zero_preserving("arctanh")
expm1 = _zero_preserving("expm1")
log1p = _zero_preserving("log1p")
rint = _zero_preserving("rint")
round = _zero_preserving("round")  # noqa: A001
ceil = _zero_preserving("ceil")
floor = _zero_preserving("floor")
trunc = _zero_preserving("trunc")
fix = _zero_preserving("fix")
degrees = _zero_preserving("degrees")
radians = _zero_preserving("radians")


def clip(data, a_min, a_max):
    """Values clipped to [a_min, a_max]; a sparse array keeps its stype when the range
    holds 0 (MXNet's rule), else the result is dense."""
    if isinstance(data, BaseSparseNDArray):
        if (a_min is None or a_min <= 0) and (a_max is None or a_max >= 0):
            return data._with_data(_np.clip(data._data, a_min, a_max))
        data = data.tostype("default")
    return _wrap(_np.clip(_plain(data), a_min, a_max))


# ---------------------------------------------------------------- reductions


def _axis(axis, ndim, who, exclude=False):
    """None (every axis), one axis or a sorted tuple of several, each checked (MXNet's
    legacy rules: () is every axis; exclude=True reduces the axes not listed)."""
    if axis is None or (isinstance(axis, (tuple, list)) and not len(axis)):
        return None
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    for a in axes:
        if not isinstance(a, _numbers.Integral) or not -ndim <= int(a) < ndim:
            raise ValueError(f"[nd.sparse.{who}] axis {a!r} is out of range for {ndim} "
                             f"dimensions")
    picked = sorted({int(a) % ndim for a in axes})
    if len(picked) != len(axes):
        raise ValueError(f"[nd.sparse.{who}] axis {axis} repeats an axis")
    if exclude:
        picked = [a for a in range(ndim) if a not in picked]
    if len(picked) == ndim:
        return None
    return picked[0] if len(picked) == 1 else tuple(picked)


def sum(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    """The sum over all elements or the given axes; a CSR matrix sums its stored values
    (through the CSR product with a vector of ones). Dense result."""
    if not isinstance(data, BaseSparseNDArray):
        return _op.sum(data, axis=axis, keepdims=keepdims, exclude=exclude)
    ax = _axis(axis, data.ndim, "sum", exclude)
    if isinstance(ax, tuple):  # several (not all) axes of a row_sparse array: densely
        return _op.sum(data.tostype("default"), axis=ax, keepdims=keepdims)
    if data.stype == "csr" and ax in (0, 1):
        n = data._shape[0] if ax == 0 else data._shape[1]
        out = _csr_dot(data, _ones_vector(n, data.dtype, data.context), ax == 0)
        return _wrap(_np.expand_dims(out, ax) if keepdims else out)
    if ax is None:
        total = _np.sum(data._data)
        return _wrap(_np.reshape(total, (1,) * data.ndim) if keepdims else total)
    if data.stype == "row_sparse" and ax != 0:
        part = _rsp(_np.sum(data._data, axis=ax, keepdims=True), data._indices,
                    data._shape[:ax] + (1,) + data._shape[ax + 1:])
        out = _rsp_todense(part)
        return _wrap(out if keepdims else _np.squeeze(out, axis=ax))
    if data.stype == "row_sparse":
        return _wrap(_np.sum(data._data, axis=0, keepdims=keepdims))
    return _op.sum(data.tostype("default"), axis=axis, keepdims=keepdims)


def mean(data, axis=None, keepdims=False, exclude=False):
    """The mean over all elements or the given axes (zeros included). Dense result."""
    if not isinstance(data, BaseSparseNDArray):
        return _op.mean(data, axis=axis, keepdims=keepdims, exclude=exclude)
    ax = _axis(axis, data.ndim, "mean", exclude)
    count = 1
    for a in (range(data.ndim) if ax is None else ax if isinstance(ax, tuple) else (ax,)):
        count *= data._shape[a]
    total = sum(data, axis=ax, keepdims=keepdims)
    return _wrap(_plain(total) / _builtins.max(count, 1) if count else
                 _plain(total) * onp.nan)


def norm(data, ord=2, axis=None, keepdims=False, out_dtype=None):  # noqa: A002
    """The L2 norm of all stored values (MXNet's norm of a sparse array); other cases go to
    the dense norm."""
    if isinstance(data, BaseSparseNDArray) and ord == 2 and axis is None:
        out = _np.sqrt(_np.sum(data._data * data._data))
        out = _np.reshape(out, (1,) * data.ndim) if keepdims else out
        return _wrap(out if out_dtype is None else out.astype(out_dtype))
    return _op.norm(_dense_operand(data), ord=ord, axis=axis, keepdims=keepdims,
                    out_dtype=out_dtype)


def square_sum(data, axis=None, keepdims=False):
    """The sum of squares of a row_sparse array over all elements or an axis. axis=1 with
    keepdims gives a row_sparse array (MXNet's rule); other results are dense."""
    if not isinstance(data, RowSparseNDArray):
        raise TypeError(f"[nd.sparse.square_sum] expected a row_sparse array, got "
                        f"{type(data).__name__}")
    sq = data._with_data(data._data * data._data)
    ax = _axis(axis, data.ndim, "square_sum")
    if ax == 1 and keepdims:
        return _rsp(_np.sum(sq._data, axis=1, keepdims=True), data._indices,
                    (data._shape[0], 1) + data._shape[2:])
    return sum(sq, axis=axis, keepdims=keepdims)


def retain(data, indices):
    """The rows of a row_sparse array whose indices are listed in `indices` (MXNet's
    ``_sparse_retain``); the others are dropped."""
    if not isinstance(data, RowSparseNDArray):
        raise TypeError(f"[nd.sparse.retain] expected a row_sparse array, got "
                        f"{type(data).__name__}")
    keep = _index_array(indices, data.context, "nd.sparse.retain", "indices")
    hit = _np.isin(data._indices, keep)
    return _rsp(data._data[hit], data._indices[hit], data._shape)


# ---------------------------------------------------------------- shape functions


def zeros_like(data, dtype=None):
    """Zeros of data's shape, in data's storage type (MXNet's zeros_like keeps it)."""
    if isinstance(data, BaseSparseNDArray):
        return zeros(data.stype, data.shape, ctx=data.context, dtype=dtype or data.dtype)
    return _op.zeros_like(data, dtype=dtype)


def stop_gradient(data):
    """data, with no gradient flowing back through it; a sparse array keeps its stype."""
    if isinstance(data, BaseSparseNDArray):
        return data._with_data(_plain(_op.stop_gradient(data._data)))
    return _op.stop_gradient(data)


def slice(data, begin, end, step=()):  # noqa: A001  (MXNet's name)
    """MXNet's slice; of a CSR matrix (step 1), the CSR matrix of rows [begin[0], end[0])
    and, when given, columns [begin[1], end[1]) (MXNet's slice(csr) = csr)."""
    if not isinstance(data, CSRNDArray):
        return _op.slice(_dense_operand(data), begin, end, step)
    begin, end = tuple(begin), tuple(end)
    if not 1 <= len(begin) == len(end) <= 2 or any(s not in (None, 1) for s in tuple(step)):
        raise ValueError(f"[nd.sparse.slice] a CSR matrix takes begin / end of one or two "
                         f"entries and step 1, got begin {begin}, end {end}, step {step}")
    rows = data[_builtins.slice(begin[0], end[0])]
    if len(begin) == 1:
        return rows
    c0, c1, _ = _builtins.slice(begin[1], end[1]).indices(data.shape[1])
    c1 = _builtins.max(c0, c1)
    keep = (rows._indices >= c0) & (rows._indices < c1)
    counts = _np.bincount(_row_ids(rows)[keep], minlength=rows.shape[0]).astype("int64") \
        if rows.shape[0] else _np.zeros(0, dtype="int64", device=data.context)
    indptr = _np.concatenate([_np.zeros(1, dtype="int64", device=data.context),
                              _np.cumsum(counts, dtype="int64")])
    return _csr(rows._data[keep], rows._indices[keep] - c0, indptr, (rows.shape[0], c1 - c0))


def concat(*data, dim=1, num_args=None):
    """MXNet's concat; CSR matrices along dim 0 give a CSR matrix (MXNet's rule), anything
    else the dense concatenation."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    if not (data and dim == 0 and all(isinstance(d, CSRNDArray) for d in data)):
        return _op.concat(*[_dense_operand(d) for d in data], dim=dim)
    cols = {d.shape[1] for d in data}
    if len(cols) != 1:
        raise ValueError(f"[nd.sparse.concat] the matrices must have as many columns, got "
                         f"{sorted(cols)}")
    indptrs, total = [], 0
    for d in data:
        indptrs.append(d._indptr[1:] + total if indptrs else d._indptr + total)
        total += d._data.size
    dtype = onp.result_type(*[d.dtype for d in data])
    return _csr(_np.concatenate([d._data.astype(dtype) for d in data]),
                _np.concatenate([d._indices for d in data]), _np.concatenate(indptrs),
                (_builtins.sum(d.shape[0] for d in data), cols.pop()))


def __getattr__(name):
    # MXNet's mx.nd.sparse namespace holds every operator with a sparse path; here the other
    # mx.nd functions stand in (they take sparse arrays as their dense values).
    if not name.startswith("_"):
        from .. import nd
        fn = vars(nd).get(name)
        if callable(fn):
            return fn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def take(a, indices, axis=0, mode="clip"):
    """MXNet's take; of a CSR matrix along axis 0, the CSR matrix of the rows `indices`
    lists, in that order (take(csr) = csr), indices clipped to the rows (mode 'clip') or
    wrapped ('wrap'); anything else as the dense take."""
    if not (isinstance(a, CSRNDArray) and axis == 0):
        return _op.take(_dense_operand(a), indices, axis=axis, mode=mode)
    if mode not in ("clip", "wrap"):
        raise ValueError(f"[nd.sparse.take] mode must be 'clip' or 'wrap', got {mode!r}")
    rows = a.shape[0]
    idx = _index_array(indices, a.context, "nd.sparse.take", "indices")
    if rows == 0 and idx.size:
        raise IndexError("[nd.sparse.take] cannot take rows of a matrix with none")
    if idx.size:
        idx = _np.clip(idx, 0, rows - 1) if mode == "clip" else _np.mod(idx, rows)
    starts, counts = a._indptr[idx], a._indptr[idx + 1] - a._indptr[idx]
    indptr = _np.concatenate([_np.zeros(1, dtype="int64", device=a.context),
                              _np.cumsum(counts, dtype="int64")])
    total = int(indptr[-1])
    # the stored positions of the picked rows: each row's run, from its start
    pos = _np.arange(total, dtype="int64", device=a.context) + _np.repeat(
        starts - indptr[:-1], counts) if total else _np.zeros(0, dtype="int64",
                                                               device=a.context)
    return _csr(a._data[pos], a._indices[pos], indptr, (idx.size, a.shape[1]))
