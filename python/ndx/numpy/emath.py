"""np.emath (NumPy's numpy.lib.scimath) over ndx arrays: sqrt, log, log2, log10, logn,
power, arccos, arcsin and arctanh that give complex results where real input is out of the
real domain (sqrt(-1) is 1j), and real results, as the plain ufuncs, when all of it is in.

As in NumPy, the whole array becomes complex when any element is out of the domain:
complex64 for float32, int8, int16, uint8 and uint16 input (and bfloat16, here), complex128
for the others. Result dtypes are NumPy's for the input's dtype (sqrt of int64 is float64,
of int16 float32), which can differ from ndx's plain ufuncs (these give integers ndx's default
float). Python scalars become arrays as np.asarray makes them (a Python float is float32, the
default float), and the results are ndx arrays (0-d for scalars), as ndx's ufuncs give."""
import functools

import numpy as _onp

import ndx.numpy as _np

__all__ = ["arccos", "arcsin", "arctanh", "log", "log2", "log10", "logn", "power", "sqrt"]

_TO_COMPLEX64 = frozenset(_onp.dtype(t) for t in (
    "float32", "int8", "int16", "uint8", "uint16", "complex64"))


def _array(x):
    return x if isinstance(x, _np.ndarray) else _np.asarray(x)


def _is_bfloat16(x):
    return isinstance(x.dtype, str)  # ndx's bfloat16 dtype is the string 'bfloat16'


def _to_complex(x):
    """x cast to complex as NumPy's scimath casts (complex64 for single and small integers)."""
    small = _is_bfloat16(x) or x.dtype in _TO_COMPLEX64
    return x.astype("complex64" if small else "complex128")


def _fix_lt_zero(x):
    """x, complex when an element is negative (NumPy's _fix_real_lt_zero)."""
    x = _array(x)
    if not _np._is_complex(x) and bool((x < 0).any()):
        x = _to_complex(x)
    return x


def _fix_abs_gt_1(x):
    """x, complex when an element is outside [-1, 1] (NumPy's _fix_real_abs_gt_1)."""
    x = _array(x)
    if not _np._is_complex(x) and bool(((x > 1) | (x < -1)).any()):
        x = _to_complex(x)
    return x


def _fix_int_lt_zero(p):
    """p, a float when it is integer (or bool) and an element is negative: an integer to a
    negative integer power has no integer result (NumPy's _fix_int_lt_zero, p * 1.0)."""
    p = _array(p)
    if not _is_bfloat16(p) and p.dtype.kind in "biu" and bool((p < 0).any()):
        p = p.astype("float64")
    return p


@functools.lru_cache(maxsize=None)
def _numpy_dtype(name, *dtypes):
    """The dtype NumPy's ufunc `name` gives for operands of these dtypes."""
    return getattr(_onp, name)(*[_onp.empty(0, t) for t in dtypes]).dtype


def _apply(name, *xs):
    """ndx's ufunc `name` of xs, computed in the dtype NumPy's would give."""
    if not any(_is_bfloat16(x) for x in xs):
        t = _numpy_dtype(name, *[x.dtype for x in xs])
        xs = [x if x.dtype == t else x.astype(t) for x in xs]
    return getattr(_np, name)(*xs)


def sqrt(x):
    """The square root; complex where x has negative elements (sqrt(-4) is 2j)."""
    return _apply("sqrt", _fix_lt_zero(x))


def log(x):
    """The natural logarithm; complex where x has negative elements (log(-1) is pi*1j)."""
    return _apply("log", _fix_lt_zero(x))


def log2(x):
    """The base-2 logarithm; complex where x has negative elements."""
    return _apply("log2", _fix_lt_zero(x))


def log10(x):
    """The base-10 logarithm; complex where x has negative elements."""
    return _apply("log10", _fix_lt_zero(x))


def logn(n, x):
    """The base-n logarithm of x, log(x) / log(n); complex where x or n has negative
    elements."""
    lx, ln = log(x), log(n)
    return _apply("divide", lx, ln)


def power(x, p):
    """x to the power p; complex where x has negative elements, float where integer p has
    negative ones (power(-4, 0.5) is 2j, power(2, -1) is 0.5)."""
    return _apply("power", _fix_lt_zero(x), _fix_int_lt_zero(p))


def arccos(x):
    """The inverse cosine; complex where x has elements outside [-1, 1]."""
    return _apply("arccos", _fix_abs_gt_1(x))


def arcsin(x):
    """The inverse sine; complex where x has elements outside [-1, 1]."""
    return _apply("arcsin", _fix_abs_gt_1(x))


def arctanh(x):
    """The inverse hyperbolic tangent; complex where x has elements outside [-1, 1]."""
    return _apply("arctanh", _fix_abs_gt_1(x))
