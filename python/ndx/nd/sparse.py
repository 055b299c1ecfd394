"""MXNet's legacy ``mx.nd.sparse``, as far as ndx can honour it. ndx stores every array
densely: it has no CSR or row_sparse storage, so the constructors of sparse arrays
(``csr_matrix``, ``row_sparse_array``, ``array``, ``zeros`` / ``empty`` with a sparse stype)
and the sparse-only operators raise NotImplementedError saying so; use dense NDArrays
(``mx.nd.array``, ``mx.nd.zeros``, ``mx.nd.dot``) instead, which compute the same values.

What is well defined on dense arrays works: ``zeros`` / ``empty`` with stype 'default',
``cast_storage(x, 'default')``, and the element-wise ``add`` / ``subtract`` / ``multiply`` /
``divide`` and ``dot`` on dense operands (whose results MXNet also returns dense).
``CSRNDArray``, ``RowSparseNDArray`` and ``BaseSparseNDArray`` exist for isinstance checks
(no ndx array is one) and cannot be created."""
from . import _op
from .ndarray import _dense
from .ndarray import empty as _empty
from .ndarray import zeros as _zeros

__all__ = ["csr_matrix", "row_sparse_array", "array", "zeros", "empty", "BaseSparseNDArray",
           "CSRNDArray", "RowSparseNDArray", "add", "subtract", "multiply", "divide", "dot",
           "cast_storage", "retain", "square_sum"]

_DENSE = ("ndx has no sparse storage (CSR / row_sparse): every array is dense. Use a dense "
          "NDArray instead (mx.nd.array(...), mx.nd.zeros(...), and mx.nd.dot / arithmetic "
          "on it compute the same values).")


def _unsupported(who):
    return NotImplementedError(f"[nd.sparse.{who}] {_DENSE}")


class BaseSparseNDArray:
    """MXNet's base class of sparse arrays; ndx has none (every array is dense)."""

    def __new__(cls, *args, **kwargs):
        raise _unsupported(cls.__name__)


class CSRNDArray(BaseSparseNDArray):
    """MXNet's CSR array; ndx has no sparse storage."""


class RowSparseNDArray(BaseSparseNDArray):
    """MXNet's row_sparse array; ndx has no sparse storage."""


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """Not supported: ndx has no CSR storage (use mx.nd.array on the dense values)."""
    raise _unsupported("csr_matrix")


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """Not supported: ndx has no row_sparse storage (use mx.nd.array on the dense values)."""
    raise _unsupported("row_sparse_array")


def array(source_array, ctx=None, dtype=None):
    """Not supported: makes a sparse array, which ndx has not (use mx.nd.array)."""
    raise _unsupported("array")


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """A dense NDArray of zeros for stype 'default'; sparse stypes raise
    NotImplementedError."""
    if stype not in (None, "default"):
        raise _unsupported(f"zeros(stype={stype!r})")
    return _zeros(shape, ctx=ctx, dtype=dtype)


def empty(stype, shape, ctx=None, dtype=None):
    """A dense uninitialized NDArray for stype 'default'; sparse stypes raise
    NotImplementedError."""
    if stype not in (None, "default"):
        raise _unsupported(f"empty(stype={stype!r})")
    return _empty(shape, ctx=ctx, dtype=dtype)


def cast_storage(data, stype):
    """data itself for stype 'default' (it is already dense); sparse stypes raise
    NotImplementedError."""
    _dense(stype, "sparse.cast_storage")
    return data


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """mx.nd.dot of dense operands (a sparse forward_stype raises NotImplementedError)."""
    _dense(forward_stype, "sparse.dot")
    return _op.dot(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b)


def add(lhs, rhs):
    return _op.add(lhs, rhs)


def subtract(lhs, rhs):
    return _op.subtract(lhs, rhs)


def multiply(lhs, rhs):
    return _op.multiply(lhs, rhs)


def divide(lhs, rhs):
    return _op.divide(lhs, rhs)


def _sparse_only(name):
    def op(*args, **kwargs):
        raise _unsupported(name)

    op.__name__ = name
    op.__doc__ = f"Not supported: MXNet's sparse {name}; ndx has no sparse storage."
    return op


# Operators defined on row_sparse storage only.
retain = _sparse_only("retain")
square_sum = _sparse_only("square_sum")
