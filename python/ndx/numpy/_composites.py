"""NumPy functions built from ndx's ops (each step a registered op, so autograd and hybridize
see ordinary ops): where, ptp, var, std, average and the NaN-ignoring reductions. Imported by
ndx.numpy after its op functions exist."""
import math

import numpy as _onp

import ndx.numpy as _np


def _axes(ndim, axis):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, _onp.integer)) else tuple(axis)
    return tuple(int(a) % ndim if ndim else int(a) for a in axes)


def _count(a, axis):
    """How many elements each result reduces (NumPy's n)."""
    shape = a.shape
    return math.prod(shape[i] for i in _axes(len(shape), axis)) if shape else 1


def _as_array(a):
    return a if isinstance(a, _np.ndarray) else _np.asarray(a)


def _like(a, m):
    """a in m's dtype (integers against a float32 mean would promote to float64)."""
    return a if a.dtype == m.dtype else a.astype(m.dtype)


def _finish(result, out):
    if out is None:
        return result
    out[...] = result
    return out


def where(condition, x=None, y=None):
    """x where condition is true, else y (broadcast together)."""
    if x is None and y is None:
        raise NotImplementedError("[where] the one-argument form (nonzero) is not built yet")
    if x is None or y is None:
        raise ValueError("[where] either both or neither of x and y should be given")
    if isinstance(condition, _np.ndarray) and condition.dtype != _onp.bool_:
        condition = condition.astype("bool")  # truth values; keeps weak scalars weak
    elif not isinstance(condition, _np.ndarray):
        condition = _np.asarray(condition).astype("bool")
    return _np._where_op(condition, x, y)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min along the axes."""
    a = _as_array(a)
    r = _np.subtract(_np.max(a, axis=axis, keepdims=keepdims),
                     _np.min(a, axis=axis, keepdims=keepdims))
    return _finish(r, out)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance: mean of squared deviations, divided by n - ddof (float32 for integer input)."""
    a = _as_array(a)
    m = _np.mean(a, axis=axis, dtype=dtype, keepdims=True)
    d = _np.subtract(_like(a, m), m)
    s = _np.sum(_np.square(d), axis=axis, keepdims=keepdims)
    return _finish(_np.true_divide(s, max(_count(a, axis) - ddof, 0)), out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation: the square root of var."""
    return _finish(_np.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)), out)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean; `returned` also gives the sum of the weights."""
    a = _as_array(a)
    if weights is None:
        avg = _np.mean(a, axis=axis, keepdims=keepdims)
        scl = _np.full(avg.shape, float(_count(a, axis)), dtype=avg.dtype)
    else:
        w = _as_array(weights)
        if w.shape != a.shape:
            if axis is None:
                raise TypeError("[average] axis must be given when the shapes of a and "
                                "weights differ")
            if w.ndim != 1 or not isinstance(axis, (int, _onp.integer)):
                raise TypeError("[average] 1-d weights need one axis")
            if w.shape[0] != a.shape[axis]:
                raise ValueError("[average] the length of weights differs from the axis")
            shape = [1] * a.ndim
            shape[axis] = w.shape[0]
            w = _np.reshape(w, tuple(shape))
        scl = _np.sum(_np.multiply(w, _np.ones_like(a)), axis=axis, keepdims=keepdims)
        if bool(_np.any(scl == 0)):
            raise ZeroDivisionError("[average] the weights sum to zero")
        avg = _np.true_divide(_np.sum(_np.multiply(a, w), axis=axis, keepdims=keepdims), scl)
    return (avg, scl) if returned else avg


# ---- NaN-ignoring reductions: NaN replaced by the reduction's identity ----
def _is_float(a):
    return a.dtype.kind == "f" if hasattr(a.dtype, "kind") else str(a.dtype) == "bfloat16"


def _replace_nan(a, value):
    a = _as_array(a)
    if not _is_float(a):
        return a, None
    nan = _np.isnan(a)
    return where(nan, value, a), nan


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """Sum treating NaN as 0."""
    b, _ = _replace_nan(a, 0)
    return _finish(_np.sum(b, axis=axis, dtype=dtype, keepdims=keepdims), out)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product treating NaN as 1."""
    b, _ = _replace_nan(a, 1)
    return _finish(_np.prod(b, axis=axis, dtype=dtype, keepdims=keepdims), out)


def _nan_extremum(a, axis, out, keepdims, is_max):
    b, nan = _replace_nan(a, -_onp.inf if is_max else _onp.inf)
    fn = _np.max if is_max else _np.min
    r = fn(b, axis=axis, keepdims=keepdims)
    if nan is not None:  # all-NaN slices stay NaN (NumPy warns; ndx does not)
        r = where(_np.all(nan, axis=axis, keepdims=keepdims), _onp.nan, r)
    return _finish(r, out)


def nanmax(a, axis=None, out=None, keepdims=False):
    """Maximum ignoring NaN; NaN where a slice is all NaN."""
    return _nan_extremum(a, axis, out, keepdims, True)


def nanmin(a, axis=None, out=None, keepdims=False):
    """Minimum ignoring NaN; NaN where a slice is all NaN."""
    return _nan_extremum(a, axis, out, keepdims, False)


def _nan_count(a, nan, axis, keepdims):
    if nan is None:
        return _count(a, axis)
    return _np.count_nonzero(_np.logical_not(nan), axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Mean of the non-NaN elements (NaN for an all-NaN slice)."""
    a = _as_array(a)
    b, nan = _replace_nan(a, 0)
    s = _np.sum(b, axis=axis, dtype=dtype, keepdims=keepdims)
    if nan is None:
        return _finish(_np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims), out)
    n = _nan_count(a, nan, axis, keepdims)
    return _finish(_np.true_divide(s, n.astype(s.dtype)), out)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance of the non-NaN elements."""
    a = _as_array(a)
    if not _is_float(a):
        return var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)
    nan = _np.isnan(a)
    m = nanmean(a, axis=axis, dtype=dtype, keepdims=True)
    d = where(nan, 0, _np.subtract(_like(a, m), m))
    s = _np.sum(_np.square(d), axis=axis, keepdims=keepdims)
    n = _nan_count(a, nan, axis, keepdims).astype(s.dtype)
    return _finish(_np.true_divide(s, _np.maximum(_np.subtract(n, ddof), 0)), out)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation of the non-NaN elements."""
    return _finish(_np.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)),
                   out)


def _nan_arg(a, axis, keepdims, is_max):
    a = _as_array(a)
    b, nan = _replace_nan(a, -_onp.inf if is_max else _onp.inf)
    if nan is not None and bool(_np.any(_np.all(nan, axis=axis))):
        raise ValueError("[nanargmax] All-NaN slice encountered" if is_max
                         else "[nanargmin] All-NaN slice encountered")
    fn = _np.argmax if is_max else _np.argmin
    return fn(b, axis=axis, keepdims=keepdims)


def nanargmax(a, axis=None, out=None, keepdims=False):
    """Index of the maximum ignoring NaN; ValueError for an all-NaN slice."""
    return _finish(_nan_arg(a, axis, keepdims, True), out)


def nanargmin(a, axis=None, out=None, keepdims=False):
    """Index of the minimum ignoring NaN; ValueError for an all-NaN slice."""
    return _finish(_nan_arg(a, axis, keepdims, False), out)
