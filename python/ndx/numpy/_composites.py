"""NumPy functions built from ndx's ops (each step a registered op, so autograd and hybridize
see ordinary ops): where, ptp, var, std, average and the NaN-ignoring reductions. Imported by
ndx.numpy after its op functions exist."""
import math
import operator
import warnings
from collections import namedtuple as _namedtuple

import numpy as _onp

import ndx.numpy as _np

from .. import _core
from .._registry import internal_function as _internal_function
from . import _where_reductions as _wr


def _axes(ndim, axis):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, _onp.integer)) else tuple(axis)
    for a in axes:
        if ndim and not -ndim <= int(a) < ndim:  # NumPy's AxisError: a ValueError and IndexError
            raise _core.AxisError(f"axis {int(a)} is out of bounds for array of "
                                            f"dimension {ndim}")
    return tuple(int(a) % ndim if ndim else int(a) for a in axes)


def _axis(ndim, axis, name, param="axis"):
    """One integer axis of an ndim-d array, made non-negative. As NumPy's
    normalize_axis_index: a TypeError for a tuple, None or float (functions taking one axis),
    an AxisError (a ValueError and an IndexError) out of [-ndim, ndim)."""
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"[{name}] {param} must be an integer, got {type(axis).__name__} "
                        f"{axis!r}") from None
    if not -ndim <= ax < ndim:
        raise _core.AxisError(f"[{name}] {param} {ax} is out of bounds for array of "
                              f"dimension {ndim}")
    return ax % ndim


def _normalized_axes(ndim, axis, name):
    """NumPy's normalize_axis_tuple: non-negative axes, each in range and given once."""
    axes = _axes(ndim, axis)
    if not ndim and axes:
        raise _core.AxisError(f"[{name}] axis {axes[0]} is out of bounds for array of "
                              f"dimension 0")
    if len(set(axes)) != len(axes):
        raise ValueError(f"[{name}] repeated axis")
    return axes


def _count(a, axis):
    """How many elements each result reduces (NumPy's n)."""
    shape = a.shape
    return math.prod(shape[i] for i in _axes(len(shape), axis)) if shape else 1


_dev = _np._device_for  # device= for arrays made beside an input (None on the CPU)


def _as_array(a, like=None):
    """a as an ndarray; host data (lists, scalars, NumPy arrays) goes to the device of the
    ndarray `like` when one is given (else to the CPU). Python floats / complex numbers
    (alone or in lists) are the default float dtype, except beside a `like` with which that
    dtype would promote to float64 / complex128 (a float64 or uint64 array, say): there they
    stay float64 / complex128, so their values are not rounded to float32 first (README)."""
    if isinstance(a, _np.ndarray):
        return a
    if like is None:
        return _np.asarray(a)
    wide = _wide_host_dtype(a, like)
    if wide is not None:
        return _np.array(_onp.asarray(a), dtype=wide, device=_dev(like))
    return _np.asarray(a, device=_dev(like))


_WIDE = ("float64", "complex128")


def _wide_host_dtype(a, like):
    """float64 / complex128 for Python float / complex data (a scalar, list or tuple) whose
    default-dtype array would promote with `like` to float64 / complex128; else None."""
    if not isinstance(a, (float, complex, list, tuple)) or not isinstance(like, _np.ndarray):
        return None
    try:
        host = _onp.asarray(a)
    except (TypeError, ValueError):
        return None
    if host.dtype.name not in _WIDE:
        return None
    narrow = "float32" if host.dtype.kind == "f" else "complex64"
    promoted = _onp.dtype(_np.result_type(like.dtype, narrow)).name
    return host.dtype.name if promoted in _WIDE else None


def _pair(x, y):
    """x and y as ndarrays, host data on the other one's device."""
    x = _as_array(x, y)
    return x, _as_array(y, x)


def _weak_pair(x, y):
    """x and y as ndarrays; a Python scalar beside an array takes the dtype ndx's binary ops
    give the pair (NEP 50's weak scalars), so that it is rounded once, into that dtype."""
    scalar = (bool, int, float, complex)
    if isinstance(y, scalar) and not isinstance(x, scalar):
        y, x = _weak_pair(y, x)
        return x, y
    if isinstance(x, scalar) and not isinstance(y, scalar):
        y = _as_array(y)
        t = _np.result_type(y, x)
        if _np.result_type(y.dtype, t) == t:
            return _np.array(x, dtype=t, device=_dev(y)), y
        # (y widens that dtype: uint32 beside float32 is float64, so x is float64 too)
    return _pair(x, y)


def _like(a, m):
    """a in m's dtype (integers against a float32 mean would promote to float64)."""
    return a if a.dtype == m.dtype else a.astype(m.dtype)


def _finish(result, out):
    if out is None:
        return result
    out[...] = result
    return out


def where(condition, x=None, y=None):
    """x where condition is true, else y (broadcast together); with the condition alone, its
    nonzero indices."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("[where] either both or neither of x and y should be given")
    if isinstance(condition, _np.ndarray) and condition.dtype != _onp.bool_:
        condition = condition.astype("bool")  # truth values; keeps weak scalars weak
    elif not isinstance(condition, _np.ndarray):
        like = x if isinstance(x, _np.ndarray) else y
        condition = _as_array(condition, like).astype("bool")
    return _np._where_op(condition, x, y)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min along the axes."""
    a = _as_array(a)
    r = _np.subtract(_np.max(a, axis=axis, keepdims=keepdims),
                     _np.min(a, axis=axis, keepdims=keepdims))
    return _finish(r, out)


def _keep_mask(a, where, name, nan=False):
    """The elements a reduction keeps: where= (a bool mask) and, for the nan-functions, not NaN;
    None when it keeps them all."""
    keep = _wr.mask_of(where, a, name)
    if nan and _kind(a) in "fc":  # a complex value is NaN when either part is
        not_nan = _np.logical_not(_np.isnan(a))
        keep = not_nan if keep is None else _np.logical_and(keep, not_nan)
    return keep


_squared_difference = _internal_function("_npi_squared_difference")


def _abs_squared(d):
    """|d|^2: d * d, or re^2 + im^2 for complex d (real, as NumPy's var of complex input)."""
    if _kind(d) == "c":
        return _np.add(_np.square(_np.real(d)), _np.square(_np.imag(d)))
    return _np.square(d)


def _given_mean(mean, a, axis, name):
    """var's mean=: the caller's mean, shaped as keepdims=True would shape it."""
    m = _as_array(mean, a)
    want = tuple(1 if i in _axes(a.ndim, axis) else n for i, n in enumerate(a.shape))
    try:
        fits = _onp.broadcast_shapes(m.shape, want) == want
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"[{name}] mean must broadcast to the shape of a mean taken with "
                         f"keepdims=True, {want}; got {m.shape}")
    return m


def _var(a, keep, axis, dtype, ddof, keepdims, mean=None):
    """Mean squared deviation over the kept elements, divided by (their count - ddof); `mean`
    the caller's mean (keepdims shape), computed when None."""
    if keep is None:
        m = _np.mean(a, axis=axis, dtype=dtype, keepdims=True) if mean is None else mean
        if _kind(a) == "c" and _kind(m) != "c":
            # a real dtype= for complex data, as NumPy's: the mean of the real parts (the
            # sum cast into dtype), the complex deviations' |d|^2 summed in dtype
            s = _np.sum(_abs_squared(_np.subtract(a, m)), axis=axis, dtype=m.dtype,
                        keepdims=keepdims)
            return _np.true_divide(s, max(_count(a, axis) - ddof, 0))
        x = _like(a, m)
        sq = (_squared_difference(x, m) if _is_float(m) else
              _abs_squared(_np.subtract(x, m)))
        s = _np.sum(sq, axis=axis, keepdims=keepdims)
        return _np.true_divide(s, max(_count(a, axis) - ddof, 0))
    m = _wr.masked_mean(a, keep, axis, dtype, True) if mean is None else mean
    real_dtype = _kind(a) == "c" and _kind(m) != "c"  # (as above)
    d = where(keep, _np.subtract(a if real_dtype else _like(a, m), m), 0)
    s = _np.sum(_abs_squared(d), axis=axis, keepdims=keepdims,
                **({"dtype": m.dtype} if real_dtype else {}))
    n = _np.sum(_np.broadcast_to(keep, a.shape), axis=axis, keepdims=keepdims).astype(s.dtype)
    return _np.true_divide(s, _np.maximum(_np.subtract(n, ddof), 0))


def _ddof(ddof, correction, fn):
    """The Array API's correction is NumPy's ddof under another name: one of them, not both."""
    if correction != 0 and ddof != 0:
        raise ValueError(f"[{fn}] ddof and correction cannot both be given (ddof={ddof!r}, "
                         f"correction={correction!r})")
    return correction if correction != 0 else ddof


def _dtype_kind(dtype):
    """NumPy's kind letter of a dtype= argument (None for None; 'f' for bfloat16)."""
    if dtype is None:
        return None
    return "f" if str(dtype) == "bfloat16" else _onp.dtype(dtype).kind


def _var_in(a, keep, axis, dtype, ddof, keepdims, mean, name, nan=False):
    """_var with NumPy's dtype= rules: a complex dtype gives the (real) variance as that
    dtype; an integer or bool dtype computes in it as NumPy's does (_var_integral); the
    nan-functions refuse a non-inexact dtype for float or complex data, as NumPy's."""
    kind = _dtype_kind(dtype)
    if nan and kind is not None and kind not in "fc" and _kind(a) in "fc":
        raise TypeError(f"[{name}] If a is inexact, then dtype must be inexact")
    if kind == "c":  # (a NaN variance is NaN + NaN j there, as NumPy's complex arithmetic)
        work = dtype if _kind(a) == "c" else _onp.empty(0, dtype).real.dtype
        v = _var(a, keep, axis, work, ddof, keepdims, mean)
        return where(_np.isnan(v), complex(_onp.nan, _onp.nan), v.astype(dtype))
    if kind is not None and kind in "biu":
        if a.ndim == 0 and axis is not None and axis != ():
            bad = axis if isinstance(axis, (int, _onp.integer)) else tuple(axis)[0]
            raise _core.AxisError(f"axis {int(bad)} is out of bounds for array of dimension 0")
        return _var_integral(a, keep, axis, dtype, ddof, keepdims, mean)
    return _var(a, keep, axis, dtype, ddof, keepdims, mean)


def _var_integral(a, keep, axis, dtype, ddof, keepdims, mean):
    """NumPy's var with an integer / bool dtype=: the elements summed in dtype (each cast
    into it), the mean truncated into dtype, the deviations (a - mean, in their promoted
    dtype) squared, summed in dtype, and the quotient truncated into dtype."""
    b = a if keep is None else _np._where_op(keep, a, 0)
    if keep is None:
        n = n_out = _count(a, axis)
    else:
        kept = _np.broadcast_to(keep, a.shape)
        n = _np.sum(kept, axis=axis, keepdims=True)
        n_out = _np.sum(kept, axis=axis, keepdims=keepdims)
    if mean is None:
        total = _np.sum(b, axis=axis, dtype=dtype, keepdims=True).astype("float64")
        mean = _np.true_divide(total, n).astype(dtype)
    sq = _abs_squared(_np.subtract(a, mean))
    if keep is not None:
        sq = _np._where_op(keep, sq, 0)
    s = _np.sum(sq, axis=axis, dtype=dtype, keepdims=keepdims).astype("float64")
    return _np.true_divide(s, _np.maximum(_np.subtract(n_out, ddof), 0)).astype(dtype)


def _std_of(v, dtype, name):
    """The square root of a variance; an integer / bool dtype= truncates it into dtype for a
    0-d result and refuses the others, as NumPy's (its sqrt cannot write float64 into an
    integer array under same_kind)."""
    kind = _dtype_kind(dtype)
    if kind is None or kind not in "biu":
        return _np.sqrt(v)
    if v.ndim:
        raise TypeError(f"[{name}] Cannot cast ufunc 'sqrt' output from dtype('float64') to "
                        f"dtype('{_onp.dtype(dtype).name}') with casting rule 'same_kind'")
    return _np.sqrt(v.astype("float64")).astype(dtype)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=0.0):
    """Variance: mean of squared deviations, divided by n - ddof (float32 for integer input);
    mean= a precomputed mean (keepdims shape); correction is the Array API's name for ddof.
    dtype= as NumPy's: a complex one gives a complex result, an integer one computes in it."""
    a = _as_array(a)
    ddof = _ddof(ddof, correction, "var")
    m = None if mean is None else _given_mean(mean, a, axis, "var")
    return _finish(_var_in(a, _keep_mask(a, where, "var"), axis, dtype, ddof, keepdims, m,
                           "var"), out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=0.0):
    """Standard deviation: the square root of var."""
    a = _as_array(a)
    ddof = _ddof(ddof, correction, "std")
    m = None if mean is None else _given_mean(mean, a, axis, "std")
    v = _var_in(a, _keep_mask(a, where, "std"), axis, dtype, ddof, keepdims, m, "std")
    return _finish(_std_of(v, dtype, "std"), out)


def _weights_along(w, a, axis, name):
    """NumPy's check of weights: a's shape, or a's shape along the axes (a normalized tuple,
    in its order), then set to broadcast over the other axes."""
    if w.shape == a.shape:
        return w
    if axis is None:
        raise TypeError(f"[{name}] Axis must be specified when shapes of a and weights "
                        f"differ.")
    if w.shape != tuple(a.shape[ax] for ax in axis):
        raise ValueError(f"[{name}] Shape of weights must be consistent with shape of a "
                         f"along specified axis.")
    w = _np.transpose(w, tuple(int(i) for i in _onp.argsort(axis)))
    return _np.reshape(w, tuple(n if ax in axis else 1 for ax, n in enumerate(a.shape)))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted mean; `returned` also gives the sum of the weights. weights: a's shape, or
    its shape along the axes (NumPy 2)."""
    a = _as_array(a)
    if weights is None:
        avg = _np.mean(a, axis=axis, keepdims=keepdims)
        scl = _np.full(avg.shape, float(_count(a, axis)), dtype=avg.dtype, device=_dev(avg))
    else:
        axis = None if axis is None else _normalized_axes(a.ndim, axis, "average")
        w = _weights_along(_as_array(weights, a), a, axis, "average")
        if _kind(a) in "biu":  # NumPy's result_type(a, w, 'f8'), with ndx's default float
            t = _np._default_float()
            t = _np.result_type(a.dtype, w.dtype, t) if _kind(w) in "fc" else t
            a, w = a.astype(t), w.astype(t)
        scl = _np.sum(_np.multiply(w, _np.ones_like(a)), axis=axis, keepdims=keepdims)
        if bool(_np.any(scl == 0)):
            raise ZeroDivisionError("[average] the weights sum to zero")
        avg = _np.true_divide(_np.sum(_np.multiply(a, w), axis=axis, keepdims=keepdims), scl)
    return (avg, scl) if returned else avg


# ---- NaN-ignoring reductions: NaN replaced by the reduction's identity ----
def _kind(a):
    """NumPy's kind letter of a's dtype ('f' for bfloat16, which NumPy does not know)."""
    return a.dtype.kind if hasattr(a.dtype, "kind") else "f"


def _is_float(a):
    return _kind(a) == "f"


def _replace_nan(a, value):
    a = _as_array(a)
    if _kind(a) not in "fc":  # a complex value is NaN when either part is
        return a, None
    nan = _np.isnan(a)
    return where(nan, value, a), nan


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Sum treating NaN as 0."""
    a = _as_array(a)
    keep = _keep_mask(a, where, "nansum", nan=True)
    b = a if keep is None else _np._where_op(keep, a, 0)
    return _finish(_np.sum(b, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial), out)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product treating NaN as 1."""
    a = _as_array(a)
    keep = _keep_mask(a, where, "nanprod", nan=True)
    b = a if keep is None else _np._where_op(keep, a, 1)
    return _finish(_np.prod(b, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial), out)


_NO_INITIAL = object()


def _nan_extremum(a, axis, out, keepdims, is_max, initial, where_, name):
    """NumPy's fmax / fmin reduction: NaN ignored; where= needs initial= (fmax has no
    identity); without initial an all-NaN slice is NaN, with it the initial value."""
    a = _as_array(a)
    if where_ is not True and initial is _NO_INITIAL:
        raise ValueError(f"[{name}] reduction operation '{'fmax' if is_max else 'fmin'}' does "
                         f"not have an identity, so to use a where mask one has to specify "
                         f"'initial'")
    fill = -_onp.inf if is_max else _onp.inf
    b, nan = _replace_nan(a, fill)
    if where_ is not True:
        keep = _np.broadcast_to(_as_array(where_, a).astype("bool"), a.shape)
        if _kind(a) in "fc":
            pad = fill
        elif _kind(a) == "b":  # (bool has no iinfo: False is its least value, True its most)
            pad = not is_max
        else:
            pad = _np.iinfo(a.dtype).min if is_max else _np.iinfo(a.dtype).max
        b = where(keep, b, pad)
    fn = _np.max if is_max else _np.min
    if initial is not _NO_INITIAL and _kind(a) == "c" and isinstance(
            initial, (complex, _onp.complexfloating)):
        # (max / min take no complex initial=: it is joined to each slice's extremum here)
        if _count(b, axis) == 0:
            shape = _np.sum(b.real, axis=axis, keepdims=keepdims).shape
            return _finish(_np.full(shape, initial, dtype=a.dtype, device=_dev(a)), out)
        both = _np.maximum if is_max else _np.minimum
        return _finish(both(fn(b, axis=axis, keepdims=keepdims), complex(initial)), out)
    if initial is not _NO_INITIAL:
        return _finish(fn(b, axis=axis, keepdims=keepdims, initial=initial), out)
    r = fn(b, axis=axis, keepdims=keepdims)
    if nan is not None:  # all-NaN slices stay NaN (NumPy warns; ndx does not)
        r = where(_np.all(nan, axis=axis, keepdims=keepdims), _onp.nan, r)
    return _finish(r, out)


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NO_INITIAL, where=True):
    """Maximum ignoring NaN; NaN where a slice is all NaN (initial= joins every slice;
    where= needs it, as NumPy's)."""
    return _nan_extremum(a, axis, out, keepdims, True, initial, where, "nanmax")


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NO_INITIAL, where=True):
    """Minimum ignoring NaN; NaN where a slice is all NaN (initial= and where= as nanmax)."""
    return _nan_extremum(a, axis, out, keepdims, False, initial, where, "nanmin")


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Mean of the non-NaN elements (NaN for an all-NaN slice)."""
    a = _as_array(a)
    _check_inexact_dtype(a, dtype, "nanmean")
    keep = _keep_mask(a, where, "nanmean", nan=True)
    if keep is None:
        return _finish(_np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims), out)
    return _finish(_wr.masked_mean(a, keep, axis, dtype, keepdims), out)


def _check_inexact_dtype(a, dtype, name):
    """NumPy's nanmean / nanvar / nanstd: a float or complex a needs a float or complex
    dtype= (an integer one is a TypeError)."""
    if dtype is not None and _kind(a) in "fc" and _onp.dtype(dtype).kind not in "fc":
        raise TypeError(f"[{name}] If a is inexact, then dtype must be inexact, got a of "
                        f"{a.dtype} and dtype={_onp.dtype(dtype)}")


def _nan_where_no_dof(v, a, keep, axis, ddof, keepdims):
    """NumPy's nanvar of float or complex data: NaN where the non-NaN count less ddof is not
    positive (var's inf there is for integer data only)."""
    if keep is None or _kind(a) not in "fc":
        return v
    n = _np.sum(_np.broadcast_to(keep, a.shape), axis=axis, keepdims=keepdims)
    return where(_np.less_equal(_np.subtract(n, ddof), 0), _onp.nan, v)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=0.0):
    """Variance of the non-NaN elements (correction: the Array API's name for ddof)."""
    ddof = _ddof(ddof, correction, "nanvar")
    a = _as_array(a)
    _check_inexact_dtype(a, dtype, "nanvar")
    keep = _keep_mask(a, where, "nanvar", nan=True)
    m = None if mean is None else _given_mean(mean, a, axis, "nanvar")
    v = _var_in(a, keep, axis, dtype, ddof, keepdims, m, "nanvar", True)
    return _finish(_nan_where_no_dof(v, a, keep, axis, ddof, keepdims), out)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=0.0):
    """Standard deviation of the non-NaN elements (correction: ddof's Array API name)."""
    ddof = _ddof(ddof, correction, "nanstd")
    a = _as_array(a)
    _check_inexact_dtype(a, dtype, "nanstd")
    keep = _keep_mask(a, where, "nanstd", nan=True)
    m = None if mean is None else _given_mean(mean, a, axis, "nanstd")
    v = _var_in(a, keep, axis, dtype, ddof, keepdims, m, "nanstd", True)
    v = _nan_where_no_dof(v, a, keep, axis, ddof, keepdims)
    return _finish(_std_of(v, dtype, "nanstd"), out)


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


# ---- cumulative ----
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The Array API's cumsum: axis may be omitted only for 1-d input; include_initial puts
    a 0 first; out= receives the result."""
    return _finish(_cumulative(_np.cumsum, 0, x, axis, dtype, include_initial,
                               "cumulative_sum"), out)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The Array API's cumprod: as cumulative_sum, with a 1 first for include_initial."""
    return _finish(_cumulative(_np.cumprod, 1, x, axis, dtype, include_initial,
                               "cumulative_prod"), out)


def _cumulative(fn, identity, x, axis, dtype, include_initial, name):
    x = _as_array(x)
    if isinstance(axis, tuple):  # NumPy 2.4 takes a 1-tuple (an accumulation's one axis)
        if len(axis) != 1:
            _axes(max(x.ndim, 1), axis)  # (NumPy checks the bounds first)
            raise ValueError(f"[{name}] accumulate does not allow multiple axes")
        if include_initial:  # (NumPy 2.4 indexes the shape with the tuple there)
            raise TypeError(f"[{name}] include_initial=True needs an integer axis, got "
                            f"{axis!r}")
        axis = axis[0]
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"[{name}] axis must be given for arrays of more than one dimension")
        axis = 0
    r = fn(x if x.ndim else _np.reshape(x, (1,)), axis=axis, dtype=dtype)
    if not include_initial:
        return r
    shape = list(r.shape)
    shape[axis] = 1
    first = _np.full(tuple(shape), identity, dtype=r.dtype, device=_dev(r))
    return _np.concatenate([first, r], axis=axis)


def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum treating NaN as 0."""
    b, _ = _replace_nan(a, 0)
    return _finish(_np.cumsum(b, axis=axis, dtype=dtype), out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod treating NaN as 1."""
    b, _ = _replace_nan(a, 1)
    return _finish(_np.cumprod(b, axis=axis, dtype=dtype), out)


# ---- order statistics: sort along the reduced axes, then pick / interpolate ----
# NumPy's 13 methods (Hyndman & Fan). The continuous ones interpolate at the virtual index
# n*q + alpha + q*(1 - alpha - beta) - 1 ((n - 1)*q for linear); the others pick one element.
_CONTINUOUS = {"linear": None, "weibull": (0.0, 0.0), "hazen": (0.5, 0.5),
               "interpolated_inverted_cdf": (0.0, 1.0), "median_unbiased": (1 / 3, 1 / 3),
               "normal_unbiased": (3 / 8, 3 / 8)}
_PICKING = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
_QUANTILE_METHODS = tuple(_CONTINUOUS) + ("midpoint", "averaged_inverted_cdf") + _PICKING


def _to_last_axis(a, axis):
    """a with the reduced axes moved last and merged into one."""
    if axis is None:
        return _np.reshape(a, (a.size,))
    axes = _axes(a.ndim, axis)
    if len(set(axes)) != len(axes):
        raise ValueError("[quantile] duplicate value in 'axis'")
    kept = [i for i in range(a.ndim) if i not in axes]
    moved = _np.transpose(a, tuple(kept + list(axes)))
    n = math.prod(a.shape[i] for i in axes)
    return _np.reshape(moved, tuple(a.shape[i] for i in kept) + (n,))


def _keepdims_shape(a, axis, qshape):
    if axis is None:
        return qshape + (1,) * a.ndim
    axes = _axes(a.ndim, axis)
    return qshape + tuple(1 if i in axes else a.shape[i] for i in range(a.ndim))


def _positions(method, n, q, m, where_fn):
    """The sorted positions a quantile reads: (lo, hi, t) with hi's weight t, or (i, None,
    None) for a method that picks one element. n counts the values (an int, or per-slice
    counts); q is in the dtype NumPy computes in; m is the math module of n and q (NumPy on
    the host, ndx for per-slice counts) and where_fn its where."""
    if method in ("lower", "higher", "nearest", "midpoint", "linear"):
        v = (n - 1) * q
        if method != "midpoint" and method != "linear":
            return {"lower": m.floor, "higher": m.ceil, "nearest": m.around}[method](v), None, None
    elif method in ("inverted_cdf", "closest_observation"):
        v = n * q - (1 if method == "inverted_cdf" else 1.5)
        lo = m.floor(v)
        at = (v - lo) == 0
        if method == "closest_observation":
            at = m.logical_and(at, lo % 2 == 1)  # 1-based: the even order statistic
        return m.maximum(where_fn(at, lo, lo + 1), 0), None, None
    elif method == "averaged_inverted_cdf":
        v = n * q - 1
    else:
        alpha, beta = _CONTINUOUS[method]
        v = n * q + (alpha + q * (1 - alpha - beta)) - 1
    lo = m.floor(v)
    if method == "midpoint":
        t = where_fn(v - lo == 0, 0.0, 0.5)
    elif method == "averaged_inverted_cdf":
        t = where_fn(v - lo == 0, 0.5, 1.0)
    else:
        t = v - lo
    top, below = v >= n - 1, v < 0
    lo = where_fn(top, n - 1, where_fn(below, 0, lo))
    hi = where_fn(top, n - 1, where_fn(below, 0, lo + 1))
    return lo, hi, t


def _q_values(q, a, name):
    """(the quantiles as a host array in the dtype NumPy computes positions in, the dtype q
    adds to the result's): a Python number with a float a takes a's dtype and adds nothing;
    an array keeps and adds its own float dtype; Python numbers and lists otherwise are
    float64 for the positions but add only ndx's default float (where NumPy adds float64)."""
    if isinstance(q, _np.ndarray):
        q = q.asnumpy()
    if type(q) in (int, float) and _is_float(a):  # (NumPy scalars are not weak, as NumPy's)
        qs, adds = _onp.asarray(q, dtype=_q_dtype(a.dtype)), None
    elif isinstance(q, (_onp.ndarray, _onp.generic)):
        q = _onp.asarray(q)
        qs = q if q.dtype.kind == "f" else q.astype(_onp.float64)
        adds = qs.dtype
    else:
        qs, adds = _onp.asarray(q, dtype=_onp.float64), _np._default_float()
    if qs.size and (_onp.isnan(qs).any() or (qs < 0).any() or (qs > 1).any()):
        raise ValueError(f"[{name}] quantiles must be in the range [0, 1]")
    return qs, adds


def _q_dtype(dtype):
    """The host dtype quantile positions of `dtype` data are computed in (bfloat16: float32)."""
    d = _onp.dtype(dtype) if hasattr(dtype, "kind") else None
    return d if d is not None and d.kind == "f" else _onp.dtype("float32")


def _result_dtype(a, q_adds, method):
    """A picking method keeps a's dtype; the others give a's float dtype (the default float
    for integers) promoted with the dtype q adds."""
    if method in _PICKING:
        return a.dtype
    base = a.dtype if _is_float(a) else _np._default_float()
    return base if q_adds is None else _np.result_type(base, q_adds)


def _lerp_into(lo, hi, t, dtype):
    """NumPy's lerp: hi - lo in the data's dtype, weighted in the result dtype, from the
    nearer end so t = 0 and t = 1 are exact (t a host scalar, or an array)."""
    d = _np.subtract(hi, lo)
    if d.dtype != dtype:
        lo, hi, d = lo.astype(dtype), hi.astype(dtype), d.astype(dtype)
    if not isinstance(t, _np.ndarray):
        t = float(t)
        return (_np.add(lo, _np.multiply(d, t)) if t < 0.5
                else _np.subtract(hi, _np.multiply(d, 1 - t)))
    t = t.astype(dtype)
    return where(_np.less(t, 0.5), _np.add(lo, _np.multiply(d, t)),
                 _np.subtract(hi, _np.multiply(d, _np.subtract(1, t))))


def _sorted_last(a, axis, name, complex_ok=False):
    """a's reduced axes merged last, and that sorted (complex input only for the median,
    as NumPy's quantiles refuse it)."""
    if _kind(a) == "c" and not complex_ok:
        raise TypeError(f"[{name}] a must be an array of real numbers, got {a.dtype}")
    x = _to_last_axis(a, axis)
    return x, _np.sort(x, axis=-1)


def _shaped(out, qs, lead, dtype, a, axis, keepdims, device):
    r = (_np.stack(out) if out
         else _np.zeros((0,) + lead, dtype=dtype, device=device))
    r = _np.reshape(r, qs.shape + lead)
    if keepdims:
        r = _np.reshape(r, _keepdims_shape(a, axis, qs.shape))
    return r


def _quantile(a, q, axis, method, keepdims, name):
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"[{name}] method must be one of {_QUANTILE_METHODS}, got {method!r}")
    a = _as_array(a)
    qs, q_adds = _q_values(q, a, name)
    x, s = _sorted_last(a, axis, name)
    n = x.shape[-1]
    if n == 0:
        raise IndexError(f"[{name}] cannot take a quantile of an empty reduction")
    dtype = _result_dtype(a, q_adds, method)
    has_nan = _np.isnan(s[..., n - 1]) if _is_float(a) else None
    out = []
    for qv in qs.reshape(-1):
        lo, hi, t = _positions(method, n, qv, _onp, _onp.where)
        r = s[..., int(lo)]
        if hi is not None:
            r = _lerp_into(r, s[..., int(hi)], t, dtype)
        elif r.dtype != dtype:
            r = r.astype(dtype)
        out.append(r if has_nan is None else where(has_nan, _onp.nan, r))
    return _shaped(out, qs, tuple(s.shape[:-1]), dtype, a, axis, keepdims, _dev(s))


def _nanquantile(a, q, axis, method, keepdims, name):
    """Quantiles of each slice's non-NaN values: NaN sorts last, so a slice's values are its
    first `count` sorted entries and each slice picks its own positions. All-NaN slices give
    NaN, as NumPy's (which also warns)."""
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"[{name}] method must be one of {_QUANTILE_METHODS}, got {method!r}")
    a = _as_array(a)
    if not _is_float(a):
        if a.size:
            return _quantile(a, q, axis, method, keepdims, name)  # no NaN to skip
        a = a.astype(_np._default_float())  # an empty slice gives NaN, as NumPy's

    qs, q_adds = _q_values(q, a, name)
    x, s = _sorted_last(a, axis, name)
    last = max(x.shape[-1] - 1, 0)
    dtype = _result_dtype(a, q_adds, method)
    count = _np.sum(_np.logical_not(_np.isnan(s)), axis=-1).astype("float64")
    out = []
    for qv in qs.reshape(-1):
        lo, hi, t = _positions(method, count, float(qv), _np, where)

        def at(i):
            i = _np.clip(i, 0, last)
            return _npx().pick(s, i, axis=-1) if x.shape[-1] else i.astype(s.dtype)
        r = at(lo)
        if hi is not None:
            r = _lerp_into(r, at(hi), t if isinstance(t, _np.ndarray) else
                           _np.full(count.shape, t, dtype="float64", device=_dev(s)), dtype)
        elif r.dtype != dtype:
            r = r.astype(dtype)
        out.append(where(_np.equal(count, 0), _onp.nan, r))
    return _shaped(out, qs, tuple(count.shape), dtype, a, axis, keepdims, _dev(s))


def _median(a, axis, keepdims, name, skip_nan):
    """NumPy's median: the middle element, or the mean of the two middle ones (summed in
    float32 for float16, as np.mean does); NaN for a slice holding NaN (skip_nan: of its
    non-NaN values) and for an empty one."""
    a = _as_array(a)
    x, s = _sorted_last(a, axis, name, complex_ok=True)
    n = x.shape[-1]
    inexact = _kind(a) in "fc"  # (complex: sorted lexicographically, NaN last)
    dtype = a.dtype if inexact else _np._default_float()
    work = "float32" if dtype in (_np.float16, "bfloat16") else dtype
    lead = tuple(s.shape[:-1])
    if n == 0:  # (NumPy's mean of nothing: NaN, NaN + NaN j for complex)
        nan = complex(_onp.nan, _onp.nan) if _kind(a) == "c" else _onp.nan
        r = _np.full(lead, nan, dtype=dtype, device=_dev(s))
    elif skip_nan and inexact:
        count = _np.sum(_np.logical_not(_np.isnan(s)), axis=-1).astype("int64")
        last = _np.maximum(_np.subtract(count, 1), 0)
        lo, hi = _np.floor_divide(last, 2), _np.floor_divide(_np.add(last, 1), 2)
        x_lo = _pick_last(s, lo).astype(work)
        x_hi = _pick_last(s, hi).astype(work)
        mid = _np.multiply(_np.add(x_lo, x_hi), 0.5)
        r = where(_np.equal(lo, hi), x_lo, mid).astype(dtype)
        r = where(_np.equal(count, 0), _onp.nan, r)
    else:
        x_lo = s[..., (n - 1) // 2].astype(work)
        r = x_lo if n % 2 else _np.multiply(_np.add(x_lo, s[..., n // 2].astype(work)), 0.5)
        r = r.astype(dtype)
        if inexact:  # a slice with NaN gives it (NaN sorts last; NumPy returns that element)
            last = s[..., n - 1]
            r = where(_np.isnan(last), last, r)
    if keepdims:
        r = _np.reshape(r, _keepdims_shape(a, axis, ()))
    return r


def _npx():
    from .. import numpy_extension
    return numpy_extension


def _pick_last(s, idx):
    """s[..., idx[...]]: npx.pick, or take_along_axis for complex s (pick is real-only)."""
    if _kind(s) == "c":
        return _np.take_along_axis(s, _np.expand_dims(idx, -1), axis=-1)[..., 0]
    return _npx().pick(s, idx, axis=-1)


def _fraction(q, a):
    """Percentages q as fractions, divided as NumPy's percentile does: by a's float dtype's 100
    for a float a (a Python q stays a weak Python number); q's kind (Python number, list,
    array) is kept for _q_values."""
    a = _as_array(a)
    if isinstance(q, _np.ndarray):
        q = q.asnumpy()
    if type(q) in (int, float):  # (NumPy scalars are not weak, as NumPy's)
        if _is_float(a):
            return float(_onp.asarray(q, dtype=_q_dtype(a.dtype)) / _q_dtype(a.dtype).type(100))
        return q / 100
    if isinstance(q, (_onp.ndarray, _onp.generic)):
        return _onp.asarray(_onp.true_divide(q, 100))
    return (_onp.asarray(q, dtype=_onp.float64) / 100).tolist()


def _picking_method(q, method):
    """NumPy's quantile takes elements for integer (or bool) q under 'linear' (its positions
    are whole numbers), keeping a's dtype: 'lower' picks the same elements."""
    if method != "linear":
        return method
    if isinstance(q, _np.ndarray):
        kind = _kind(q)
    else:
        try:
            kind = _onp.asarray(q).dtype.kind
        except (TypeError, ValueError):
            return method
    return "lower" if kind in "iub" else method


def _real_data(a, name, what="a"):
    """a as an ndarray, refusing complex data (NumPy's TypeError: quantiles, digitize)."""
    a = _as_array(a)
    if _kind(a) == "c":
        raise TypeError(f"[{name}] {what} must be an array of real numbers, got {a.dtype}")
    return a


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """quantile ignoring NaN; an all-NaN slice gives NaN (weights= as quantile's)."""
    a = _real_data(a, "nanquantile")
    if weights is not None:
        return _finish(_weighted_quantile(a, q, axis, method, keepdims, weights,
                                          "nanquantile", True), out)
    method = _picking_method(q, method)
    return _finish(_nanquantile(a, q, axis, method, keepdims, "nanquantile"), out)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """percentile ignoring NaN."""
    a = _real_data(a, "nanpercentile")
    if weights is not None:
        return _finish(_weighted_quantile(a, _fraction(q, a), axis, method, keepdims, weights,
                                          "nanpercentile", True), out)
    return _finish(_nanquantile(a, _fraction(q, a), axis, method, keepdims, "nanpercentile"),
                   out)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaN."""
    return _finish(_median(a, axis, keepdims, "nanmedian", True), out)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The q-th quantiles (q in [0, 1]) along the axes, by any of NumPy's 13 methods (linear,
    lower, higher, nearest, midpoint, inverted_cdf, averaged_inverted_cdf,
    closest_observation, interpolated_inverted_cdf, hazen, weibull, median_unbiased,
    normal_unbiased). NaN in a slice gives NaN. The picking methods keep a's dtype. weights=
    (a's shape, or 1-d along a single axis) weighs the elements, for 'inverted_cdf' only."""
    a = _real_data(a, "quantile")
    if weights is not None:
        return _finish(_weighted_quantile(a, q, axis, method, keepdims, weights, "quantile",
                                          False), out)
    method = _picking_method(q, method)
    return _finish(_quantile(a, q, axis, method, keepdims, "quantile"), out)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """quantile with q in percent."""
    a = _real_data(a, "percentile")
    if weights is not None:
        return _finish(_weighted_quantile(a, _fraction(q, a), axis, method, keepdims, weights,
                                          "percentile", False), out)
    return _finish(_quantile(a, _fraction(q, a), axis, method, keepdims, "percentile"), out)


def _weighted_quantile(a, q, axis, method, keepdims, weights, name, skip_nan):
    """NumPy's weighted inverted_cdf: the first sorted value whose cumulative weight share
    reaches q (skip_nan: NaN elements weigh nothing, as the nan-functions' do)."""
    if method != "inverted_cdf":
        raise ValueError(f"[{name}] Only method 'inverted_cdf' supports weights. Got: "
                         f"{method}.")
    a = _as_array(a)
    axis = None if axis is None else _normalized_axes(a.ndim, axis, name)
    w = _np.broadcast_to(_weights_along(_as_array(weights, a), a, axis, name), a.shape)
    if bool(_np.any(_np.less(w, 0))):
        raise ValueError(f"[{name}] Weights must be non-negative.")
    qs, q_adds = _q_values(q, a, name)
    x = _to_last_axis(a, axis)
    order = _np.argsort(x, axis=-1)
    s = _np.take_along_axis(x, order, axis=-1)
    sw = _np.take_along_axis(_to_last_axis(w, axis).astype("float64"), order, axis=-1)
    total = _np.sum(sw, axis=-1, keepdims=True)
    if not bool(_np.all(_np.isfinite(total))) or (not skip_nan and not bool(
            _np.all(_np.greater(total, 0)))):
        raise ValueError(f"[{name}] Weights included NaN, inf or were all zero.")
    nan = _np.isnan(s) if _is_float(a) else None
    if skip_nan and nan is not None:  # NaN elements drop out with their weights
        sw = where(nan, 0.0, sw)
        total = _np.sum(sw, axis=-1, keepdims=True)
        all_nan = _np.all(nan, axis=-1, keepdims=True)  # (NaN results, not errors)
        if not bool(_np.all(_np.logical_or(_np.greater(total, 0), all_nan))):
            raise ValueError(f"[{name}] Weights included NaN, inf or were all zero.")
        total = where(all_nan, 1.0, total)
    elif skip_nan and not bool(_np.all(_np.greater(total, 0))):
        raise ValueError(f"[{name}] Weights included NaN, inf or were all zero.")
    cdf = _np.true_divide(_np.cumsum(sw, axis=-1), total)
    if qs.dtype.kind == "f":  # compared in q's dtype, as NumPy compares them
        cdf = cdf.astype(str(qs.dtype))
    cdf = where(_np.equal(cdf, 0), -1.0, cdf)  # (q = 0 picks the first element with weight)
    n = s.shape[-1]
    dtype = _result_dtype(a, q_adds, method)
    out = []
    for qv in qs.reshape(-1):  # the first position whose share reaches q (searchsorted left)
        idx = _np.minimum(_np.sum(_np.less(cdf, float(qv)), axis=-1, keepdims=True), n - 1)
        r = _np.take_along_axis(s, idx, axis=-1)[..., 0]
        r = r if r.dtype == dtype else r.astype(dtype)
        if nan is not None:
            all_nan = _np.all(nan, axis=-1) if skip_nan else _np.any(nan, axis=-1)
            r = where(all_nan, _onp.nan, r)
        out.append(r)
    return _shaped(out, qs, tuple(s.shape[:-1]), dtype, a, axis, keepdims, _dev(s))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along the axes (the mean of the two middle values for even counts; NaN for
    an empty array, as NumPy's)."""
    return _finish(_median(a, axis, keepdims, "median", False), out)


# ---- comparisons of whole arrays ----
def _as_float_operand(x, like=None):
    """x as an array (on like's device); integers and bool as float64 (NumPy compares them in
    float64); complex as it is."""
    x = _as_array(x, like)
    return x if _kind(x) in "fc" else x.astype("float64")


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| elementwise; infinities are close only to themselves."""
    x = _as_float_operand(a, b)
    y = _as_float_operand(b, x)
    close = _np.less_equal(_np.absolute(_np.subtract(x, y)),
                           _np.add(atol, _np.multiply(rtol, _np.absolute(y))))
    finite = _np.logical_and(_np.isfinite(x), _np.isfinite(y))
    r = where(finite, close, _np.equal(x, y))
    if equal_nan:
        r = _np.logical_or(r, _np.logical_and(_np.isnan(x), _np.isnan(y)))
    return r


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of a is close to b's (isclose)."""
    return bool(_np.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """Same shape and equal elements (NaN equal to NaN with equal_nan)."""
    x, y = _pair(a1, a2)
    if x.shape != y.shape:
        return False
    eq = _np.equal(x, y)
    if equal_nan and _kind(x) in "fc" and _kind(y) in "fc":
        eq = _np.logical_or(eq, _np.logical_and(_np.isnan(x), _np.isnan(y)))
    return bool(_np.all(eq))


def array_equiv(a1, a2):
    """Shapes that broadcast together and equal elements."""
    x, y = _pair(a1, a2)
    try:
        eq = _np.equal(x, y)
    except ValueError:
        return False
    return bool(_np.all(eq))


# ---- searching and sets: boolean and integer indexing, sort and searchsorted ----
def searchsorted(a, v, side="left", sorter=None):
    """Indices where v's elements would go in the sorted 1-d a (or a[sorter])."""
    a = _as_array(a)
    if sorter is not None:
        sorter = _as_array(sorter, a)
        if _kind(sorter) not in "iu":
            raise TypeError(f"[searchsorted] sorter must be integers, got {sorter.dtype}")
        if sorter.size != a.size:
            raise ValueError(f"[searchsorted] sorter.size must equal a.size: {sorter.size} "
                             f"and {a.size}")
        if sorter.size and (int(_np.min(sorter)) < 0 or int(_np.max(sorter)) >= a.size):
            raise ValueError("[searchsorted] Sorter index out of range.")
        a = a[sorter]
    return _np._searchsorted_op(a, v, side=side)


def nonzero(a):
    """The indices of the nonzero elements, one int64 array per dimension."""
    return _as_array(a)._nonzero()  # C++: one pass over the mask


def argwhere(a):
    """The indices of the nonzero elements as an (N, ndim) int64 array."""
    a = _as_array(a)
    if a.ndim == 0:
        return _np.zeros((1 if bool(a) else 0, 0), dtype="int64", device=_dev(a))
    return _np.stack(nonzero(a), axis=-1)


def flatnonzero(a):
    """The indices of the nonzero elements of the flattened array."""
    return _as_array(a).reshape(-1)._nonzero()[0]


def extract(condition, arr):
    """The elements of arr (flattened) where condition (flattened) is nonzero."""
    arr = _np.reshape(_as_array(arr), (-1,))
    return arr[flatnonzero(condition)]


def take(a, indices, axis=None, out=None, mode="raise"):
    """Elements of a at integer indices along axis (of the flattened a for None); mode 'raise'
    (IndexError out of range), 'wrap' or 'clip'."""
    a = _as_array(a)
    if isinstance(axis, (tuple, list)):  # (NumPy's take: one integer axis)
        raise TypeError(f"[take] '{type(axis).__name__}' object cannot be interpreted as an "
                        f"integer")
    if axis is None or a.ndim == 0:  # (NumPy reads a 0-d array as one element along axis 0)
        a, axis = _np.reshape(a, (-1,)), 0 if axis is None else axis
    axis = _axes(a.ndim, axis)[0]
    idx = _as_array(indices, a)
    if _kind(idx) == "b" or (not idx.size and isinstance(indices, (list, tuple))):
        idx = idx.astype("int64")  # bools are the indices 0 and 1 (not a mask); [] is intp
    if _kind(idx) not in "iu":
        raise TypeError(f"[take] indices must be integers, got {idx.dtype}")
    n = a.shape[axis]
    if mode == "wrap" and n:
        idx = _np.mod(idx, n)
    elif mode == "clip":
        idx = _np.clip(idx, 0, max(n - 1, 0))
    elif mode != "raise" and mode != "wrap":
        raise ValueError(f"[take] mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    rest = a.size // n if n else 0
    if _core._is_tracing() or (rest and a.__dlpack_device__()[0] == 1):
        # The _npi_take op (idx already wrapped or clipped above): a graph cannot trace
        # integer-array indexing, and on the host the op's gather (and its gradient) is the
        # fastest there is
        return _finish(_take_op(a, idx, axis=axis, mode="raise"), out)
    if _np._core._autograd_is_recording() and _is_float(a) and rest:
        return _finish(_take_recorded(a, idx, axis), out)  # (the device's own gather)
    return _finish(a[(slice(None),) * axis + (idx,)], out)


_take_op = _internal_function("_npi_take")


def _take_recorded(a, idx, axis):
    """take under autograd off the host: the other axes flattened into rows of an embedding
    lookup, whose gradient adds each output row back into the row it came from."""
    n = a.shape[axis]
    if idx.size and (bool(_np.any(idx >= n)) or bool(_np.any(idx < -n))):
        raise IndexError(f"[take] index out of range for axis {axis} of size {n}")
    idx = _np._where_op(idx < 0, _np.add(idx, n), idx)
    others = [i for i in range(a.ndim) if i != axis]
    # (the identity transposes and reshapes are skipped: rows of a 2-d table taken along
    # axis 0 are the table itself)
    rows = a if axis == 0 else _np.transpose(a, tuple([axis] + others))
    if rows.ndim != 2:
        rows = _np.reshape(rows, (n, -1))
    g = _npx().embedding(idx, rows, input_dim=n, output_dim=rows.shape[1])
    shape = idx.shape + tuple(a.shape[i] for i in others)
    if g.shape != shape:
        g = _np.reshape(g, shape)
    k = idx.ndim
    perm = (list(range(k, k + axis)) + list(range(k)) + list(range(k + axis, g.ndim)))
    return g if perm == list(range(g.ndim)) else _np.transpose(g, tuple(perm))


def compress(condition, a, axis=None, out=None):
    """The slices of a along axis where condition (1-d, at most that long) is true."""
    a = _as_array(a)
    if axis is None or a.ndim == 0:  # (NumPy reads a 0-d array as one element along axis 0)
        a, axis = _np.reshape(a, (-1,)), 0 if axis is None else axis
    axis = _axis(a.ndim, axis, "compress")
    cond = _as_array(condition)
    if cond.ndim != 1:
        raise ValueError("[compress] condition must be a 1-d array")
    if cond.shape[0] > a.shape[axis]:  # allowed while the extra entries are all false
        extra = flatnonzero(cond[a.shape[axis]:])
        if extra.size:
            raise IndexError(f"[compress] index {a.shape[axis] + int(extra[0])} is out of "
                             f"bounds for axis {axis} with size {a.shape[axis]}")
        cond = cond[:a.shape[axis]]
    return _finish(a[(slice(None),) * axis + (flatnonzero(cond),)], out)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):  # noqa: A002  (NumPy 2.3's name)
    """The sorted unique elements of the flattened array, with optionally the first index of
    each, the inverse (ar's elements as indices into it, in ar's shape) and the counts.
    sorted=False is allowed (NumPy 2.3: the order is then unspecified); they come sorted."""
    if axis is not None:
        a = _as_array(ar)
        if isinstance(axis, (tuple, list)):  # NumPy's unique takes one axis, an integer
            _axes(a.ndim, axis)  # (its AxisError for an out-of-range one comes first)
            if len(axis) != 1:
                raise ValueError(f"[unique] axis must be one integer, got {axis!r}")
            raise TypeError(f"[unique] axis must be an integer, got {type(axis).__name__}")
        return _unique_along(a, axis, return_index, return_inverse, return_counts)
    a = _as_array(ar)
    flat = a.reshape(-1)  # a view when a is contiguous (np.reshape, the op, copies)
    n = flat.shape[0]
    need_order = return_index or return_inverse
    # argsort is stable, so the first of equal elements comes first; values alone just sort.
    order = _np.argsort(flat) if need_order else None
    s = flat[order] if need_order else _np.sort(flat)
    dev = _dev(a)
    if n == 0:
        first = _np.zeros((0,), dtype="bool", device=dev)
    else:
        first = _np.concatenate([_np.ones((1,), dtype="bool", device=dev),
                                 _np.not_equal(s[1:], s[:-1])])
        if equal_nan and _kind(s) in "fc" and bool(_np.isnan(s[-1])):
            # NaNs sort last: keep the first of their run only (complex: every value with a
            # NaN part, as NumPy).
            nans = int(_np.count_nonzero(_np.isnan(s)))
            first[n - nans + 1:] = False
    if not (need_order or return_counts):
        return s[first]
    starts = flatnonzero(first)
    values = s[starts]
    result = [values]
    if return_index:
        result.append(order[starts])
    if return_inverse:
        inverse = _np.zeros((n,), dtype="int64", device=dev)
        inverse[order] = _np.subtract(_np.cumsum(first.astype("int64")), 1)
        result.append(_np.reshape(inverse, a.shape))
    if return_counts:
        ends = _np.concatenate([starts[1:], _np.full((1,), n, dtype="int64", device=dev)])
        result.append(_np.subtract(ends, starts))
    return result[0] if len(result) == 1 else tuple(result)


def _unique_along(a, axis, return_index, return_inverse, return_counts):
    """unique(axis=): the distinct sub-arrays along axis, sorted lexicographically."""
    axis = _axis(a.ndim, axis, "unique")  # (a 0-d array has no axis: AxisError, NumPy's)
    perm = [axis] + [i for i in range(a.ndim) if i != axis]  # NumPy's moveaxis(a, axis, 0)
    moved = _np.transpose(a, tuple(perm))
    n = moved.shape[0]
    dev = _dev(a)
    rows = _np.reshape(moved, (n, -1)) if n else _np.zeros((0, 0), dtype=a.dtype, device=dev)
    m = rows.shape[1]
    order = (lexsort([rows[:, j] for j in reversed(range(m))]) if m and n
             else _np.arange(n, dtype="int64", device=dev))
    s = rows[order]
    if n == 0:
        first = _np.zeros((0,), dtype="bool", device=dev)
    else:
        differs = (_np.any(_np.not_equal(s[1:], s[:-1]), axis=1) if m
                   else _np.zeros((n - 1,), dtype="bool", device=dev))
        first = _np.concatenate([_np.ones((1,), dtype="bool", device=dev), differs])
    starts = flatnonzero(first)
    values = _np.transpose(moved[order[starts]], tuple(int(i) for i in _onp.argsort(perm)))
    result = [values]
    if return_index:
        result.append(order[starts])
    if return_inverse:
        inverse = _np.zeros((n,), dtype="int64", device=dev)
        inverse[order] = _np.subtract(_np.cumsum(first.astype("int64")), 1)
        result.append(inverse)
    if return_counts:
        ends = _np.concatenate([starts[1:], _np.full((1,), n, dtype="int64", device=dev)])
        result.append(_np.subtract(ends, starts))
    return result[0] if len(result) == 1 else tuple(result)


def unique_values(x):
    """The Array API's unique_values: the unique elements (sorted here; NaNs each distinct)."""
    return unique(x, equal_nan=False)


UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices",
                                                   "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _inverse_shaped(inverse, x):
    """The Array API's inverse_indices have the shape of x (unique's are flat)."""
    return _np.reshape(inverse, _as_array(x).shape)


def unique_counts(x):
    """(values, counts), as the Array API's unique_counts (a named tuple)."""
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x):
    """(values, inverse_indices), as the Array API's unique_inverse: inverse_indices has x's
    shape, values[inverse_indices] is x."""
    values, inverse = unique(x, return_inverse=True, equal_nan=False)
    return UniqueInverseResult(values, _inverse_shaped(inverse, x))


def unique_all(x):
    """(values, indices, inverse_indices, counts), as the Array API's unique_all: indices of
    the first occurrences in the flattened x, inverse_indices in x's shape."""
    values, index, inverse, counts = unique(x, return_index=True, return_inverse=True,
                                            return_counts=True, equal_nan=False)
    return UniqueAllResult(values, index, _inverse_shaped(inverse, x), counts)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of `element` is in test_elements (element's shape)."""
    e, t = _pair(element, test_elements)
    _check_isin_kind(kind, e, t, "isin")
    t = unique(_np.reshape(t, (-1,)))
    if t.shape[0] == 0:
        found = _np.zeros(e.shape, dtype="bool", device=_dev(e))
    else:
        pos = _np.clip(searchsorted(t, e), 0, t.shape[0] - 1)
        found = _np.equal(t[pos], e)
    return _np.logical_not(found) if invert else found


def _check_isin_kind(kind, e, t, name):
    """NumPy's kind= of isin: None, 'sort' or 'table' (the last for bool / integer data)."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"[{name}] Invalid kind: {kind!r}. Please use None, 'sort' or 'table'.")
    if kind == "table" and (_kind(e) not in "biu" or _kind(t) not in "biu"):
        raise ValueError(f"[{name}] The 'table' method is only supported for boolean or "
                         f"integer arrays, got {e.dtype} and {t.dtype}. Please select 'sort' "
                         f"or None for kind.")


def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
    """isin over the flattened ar1 (NumPy 1's name)."""
    return isin(_np.reshape(_as_array(ar1), (-1,)), ar2, invert=invert, kind=kind)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted unique values in both arrays; with return_indices also the index of each
    value's first occurrence in each (flattened) input."""
    ar1, ar2 = _pair(ar1, ar2)
    dtype = _np.result_type(ar1, ar2)  # NumPy joins the two: their common dtype
    if not return_indices:
        a, b = unique(ar1), unique(ar2)
        values = a[isin(a, b)]
        return values if values.dtype == dtype else values.astype(dtype)
    a, ia = unique(ar1, return_index=True)
    b, ib = unique(ar2, return_index=True)
    both = isin(a, b)
    values = a[both]
    at_b = ib[searchsorted(b, values)]
    return (values if values.dtype == dtype else values.astype(dtype)), ia[both], at_b


def union1d(ar1, ar2):
    """The sorted unique values in either array (a Python scalar weak beside the other, as
    NumPy's concatenate takes it: union1d(uint8_array, 6) is uint8)."""
    a, b = _weak_pair(ar1, ar2)
    return unique(_np.concatenate([_np.reshape(a, (-1,)), _np.reshape(b, (-1,))]))


def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted unique values of ar1 that are not in ar2."""
    a = unique(ar1) if not assume_unique else _np.reshape(_as_array(ar1), (-1,))
    return a[isin(a, ar2, invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted unique values in exactly one of the arrays."""
    a, b = (unique(x) for x in _pair(ar1, ar2))
    s = _np.sort(_np.concatenate([a, b]))
    if s.shape[0] == 0:
        return s
    # NumPy's rule: keep the values unequal to both neighbours (NaN is unequal to NaN, so a
    # NaN in each input stays twice).
    edge = _np.ones((1,), dtype="bool", device=_dev(s))
    differs = _np.concatenate([edge, _np.not_equal(s[1:], s[:-1]), edge])
    return s[_np.logical_and(differs[1:], differs[:-1])]


# ---- differences, integrals, counting ----
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along axis (not_equal for bool, as NumPy)."""
    a = _as_array(a)
    if n == 0:  # NumPy returns a itself first: axis, prepend and append unread
        return a
    if n < 0:
        raise ValueError(f"[diff] order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ValueError("[diff] requires input that is at least one dimensional")
    axis = _axis(a.ndim, axis, "diff")
    parts, host = [], []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        e = _as_array(extra, a)
        if not isinstance(extra, _np.ndarray) and e.dtype != _onp.asarray(extra).dtype:
            host.append(len(parts))  # (rounded to ndx's default float: see below)
        if e.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            e = _np.broadcast_to(e, tuple(shape))
        parts.append(e)
    given = [p for p in (parts[0], a, parts[1]) if p is not None]
    if host and _onp.dtype(_np.result_type(*given)).name in _WIDE:
        # the other parts widen the result to float64 / complex128: Python floats / complex
        # numbers keep their own values (NumPy's), not float32 ones
        for i in host:
            e = _np.array(_onp.asarray((prepend, append)[i]), device=_dev(a))
            parts[i] = _np.broadcast_to(e, parts[i].shape) if e.ndim == 0 else e
    if parts[0] is not None or parts[1] is not None:
        a = _np.concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    lead = (slice(None),) * axis
    for _ in range(min(n, a.shape[axis])):  # past the axis' length the result stays empty
        hi, lo = a[lead + (slice(1, None),)], a[lead + (slice(None, -1),)]
        a = _np.not_equal(hi, lo) if a.dtype == _onp.bool_ else _np.subtract(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with to_begin / to_end around them."""
    a = _np.reshape(_as_array(ary), (-1,))
    d = _np.subtract(a[1:], a[:-1])
    parts = [d]
    for name, extra in (("to_begin", to_begin), ("to_end", to_end)):
        if extra is None:
            continue
        if not isinstance(extra, _np.ndarray):  # NumPy's dtype (float64), cast once below
            extra = _np.array(_onp.asarray(extra), device=_dev(a))
        e = _np.reshape(extra, (-1,))
        if not _np.can_cast(e.dtype, d.dtype, "same_kind"):  # (Python ints too, as NumPy)
            raise TypeError(f"[ediff1d] dtype of `{name}` must be compatible with input `ary` "
                            f"under the `same_kind` rule.")
        if name == "to_begin":
            parts.insert(0, e.astype(d.dtype))
        else:
            parts.append(e.astype(d.dtype))
    return _np.concatenate(parts) if len(parts) > 1 else d


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y along axis by the trapezoidal rule (samples at x, or spaced dx)."""
    y = _as_array(y)
    if x is not None and _onp.ndim(x) == 0:  # (NumPy's diff(x) fails before axis is read)
        raise ValueError("[trapezoid] diff requires input that is at least one dimensional")
    given_axis, axis = axis, _axis(y.ndim, axis, "trapezoid")
    lead = (slice(None),) * axis
    hi, lo = y[lead + (slice(1, None),)], y[lead + (slice(None, -1),)]
    if x is None:
        widths = dx
    else:
        x = _as_array(x, y)
        if x.ndim == 1:
            widths = _np.subtract(x[1:], x[:-1])
            shape = [1] * y.ndim
            shape[axis] = widths.shape[0]
            widths = _np.reshape(widths, tuple(shape))
        else:  # (NumPy's diff along the given axis of x: x may have fewer axes than y)
            widths = diff(x, axis=given_axis)
    return _np.sum(_np.multiply(_np.multiply(_np.add(hi, lo), widths), 0.5), axis=axis)


def trapz(y, x=None, dx=1.0, axis=-1):
    """trapezoid under its NumPy 1 name (MXNet's np.trapz; NumPy 2 removed it)."""
    return trapezoid(y, x=x, dx=dx, axis=axis)


def msort(a):
    """A copy of a sorted along its first axis (MXNet's np.msort; NumPy 2 removed it)."""
    return _np.sort(_as_array(a), axis=0)


def alltrue(a, axis=None, out=None, keepdims=False):
    """all under its NumPy 1 name (MXNet's np.alltrue; NumPy 2 removed it)."""
    return _np.all(a, axis=axis, out=out, keepdims=keepdims)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d(1-d slice, *args, **kwargs) on every 1-d slice of arr along axis; the results
    (all of the first one's shape, cast to its dtype) take axis's place in the output, as in
    NumPy. Differentiable where func1d is."""
    if not callable(func1d):
        raise TypeError(f"[apply_along_axis] func1d must be callable, got {type(func1d).__name__}")
    arr = _as_array(arr)
    if isinstance(axis, (bool, _onp.bool_)) or not isinstance(axis, (int, _onp.integer)):
        raise TypeError(f"[apply_along_axis] axis must be an integer, got {axis!r}")
    if arr.ndim == 0:
        raise _core.AxisError(f"[apply_along_axis] axis {axis} is out of bounds for array of "
                              "dimension 0")
    axis = _axes(arr.ndim, axis)[0]
    moved = _np.moveaxis(arr, axis, -1)
    outer = moved.shape[:-1]
    if 0 in outer:
        raise ValueError("[apply_along_axis] cannot apply_along_axis when any iteration "
                         f"dimensions are 0 (array of shape {arr.shape}, axis {axis})")
    # (no -1: an empty axis leaves it ambiguous; func1d then sees empty slices, as NumPy's)
    flat = _np.reshape(moved, (math.prod(outer), moved.shape[-1]))
    first = _as_array(func1d(flat[0], *args, **kwargs), arr)
    results = [first]
    for i in range(1, flat.shape[0]):
        r = _as_array(func1d(flat[i], *args, **kwargs), arr)
        if r.shape != first.shape:
            raise ValueError(f"[apply_along_axis] func1d returned shape {r.shape} for slice {i}, "
                             f"but {first.shape} for the first")
        results.append(r if r.dtype == first.dtype else r.astype(first.dtype))
    out = _np.reshape(_np.stack(results), outer + first.shape)
    # func1d's own axes go where axis was.
    k = first.ndim
    order = list(range(axis)) + list(range(len(outer), len(outer) + k)) + \
        list(range(axis, len(outer)))
    return _np.transpose(out, order) if order != list(range(out.ndim)) else out


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, each result kept at a's number of
    dimensions (a reduced axis comes back with length one), as NumPy's apply_over_axes."""
    val = _as_array(a)
    n = val.ndim
    for axis in (axes,) if _onp.ndim(axes) == 0 else tuple(axes):
        axis = _axes(n, int(axis))[0] if n else int(axis)
        res = _as_array(func(val, axis), val)
        if res.ndim != val.ndim:
            res = _np.expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise ValueError("[apply_over_axes] func is not returning an array of the "
                                 f"correct shape: {res.ndim - 1} dimensions for {n}")
        val = res
    return val


def piecewise(x, condlist, funclist, *args, **kw):
    """Where condlist[i] holds, funclist[i] (a value, or a function called on those elements of
    x only, with *args / **kw); one extra function is the default where no condition holds;
    elsewhere 0. The output has x's shape and dtype, as in NumPy."""
    x = _as_array(x)
    if not (_onp.isscalar(condlist) or isinstance(condlist, (list, tuple, _onp.ndarray,
                                                              _np.ndarray))):
        raise TypeError(f"[piecewise] condlist must be a bool array or a list of them, got "
                        f"{type(condlist).__name__}")
    if not isinstance(funclist, (list, tuple, _onp.ndarray, _np.ndarray)):
        raise TypeError(f"[piecewise] funclist must be a list of functions or values, got "
                        f"{type(funclist).__name__}")
    n_funcs = len(funclist)
    # NumPy's rule: one condition unless condlist's first entry is a list or an array.
    first = condlist if _onp.isscalar(condlist) else condlist[0]
    if _onp.isscalar(condlist) or (x.ndim != 0 and not isinstance(first, list) and not (
            isinstance(first, (_onp.ndarray, _np.ndarray)) and first.ndim > 0)):
        condlist = [condlist]
    conds = [_np.broadcast_to(_as_array(c, x).astype("bool"), x.shape) for c in condlist]
    if len(conds) == n_funcs - 1:
        rest = _np.logical_not(_np.any(_np.stack(conds), axis=0)) if conds else \
            _np.ones(x.shape, dtype="bool", device=_dev(x))
        conds.append(rest)
    elif len(conds) != n_funcs:
        raise ValueError(f"[piecewise] with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected, got {n_funcs}")
    y = _np.zeros_like(x)
    for cond, func in zip(conds, funclist):
        if not callable(func):
            y[cond] = func
        else:
            vals = x[cond]
            if vals.size > 0:
                y[cond] = func(vals, *args, **kw)
    return y


def bincount(x, weights=None, minlength=0):
    """Counts (or summed weights) of each value 0..max(x) of a 1-d array of non-negative ints."""
    x = _as_array(x)
    if x.ndim != 1:
        raise ValueError("[bincount] object too deep for desired array: x must be 1-d")
    if _kind(x) not in "iub" and not (x.size == 0 and _kind(x) == "f"):  # (an empty list)
        raise TypeError(f"[bincount] x must be integers, got {x.dtype}")
    if isinstance(minlength, (float, _onp.floating)) or minlength is None:
        raise TypeError(f"[bincount] minlength must be an integer, got "
                        f"{type(minlength).__name__}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("[bincount] minlength must be non-negative")
    n = x.shape[0]
    if n and int(_np.min(x)) < 0:
        raise ValueError("[bincount] the first argument must be non-negative")
    length = max(int(_np.max(x)) + 1 if n else 0, minlength)
    if weights is None:
        s = _np.sort(x).astype("int64")
        bins = _np.arange(length, device=_dev(x))
        return _np.subtract(searchsorted(s, bins, side="right"),
                            searchsorted(s, bins, side="left"))
    w = _as_array(weights, x)
    if w.shape != x.shape:
        raise ValueError("[bincount] weights must have the shape of x")
    if _kind(w) == "c":
        raise TypeError("[bincount] Cannot cast array data from complex weights to float64 "
                        "according to the rule 'safe'")
    if n == 0:  # (NumPy's: int64 zeros, weights or not)
        return _np.zeros((length,), dtype="int64", device=_dev(x))
    return _summed_per_bin(x, w.astype("float64"), length)


def _summed_per_bin(idx, w, length):
    """The weights w summed per bin idx (0 <= idx < length), each bin on its own (an inf or
    NaN weight stays in its bin), in w's dtype."""
    if _kind(w) == "c":  # (each part on its own, written into the parts' views)
        c = _np.zeros((length,), dtype=w.dtype, device=_dev(w))
        _np.real(c)[...] = _summed_per_bin(idx, _np.real(w), length)
        _np.imag(c)[...] = _summed_per_bin(idx, _np.imag(w), length)
        return c
    c = _np.zeros((length,), dtype=w.dtype, device=_dev(w))
    if idx.shape[0] == 0:
        return c
    return _npx().index_add(c, _np.reshape(idx.astype("int64"), (1, -1)), w)


def _summed_by_cumsum(idx, w, length):
    """The weights w summed per bin idx as differences of their running sum, NumPy's
    histogram with explicit edges: an inf or NaN weight spoils the later bins there too."""
    order = _np.argsort(idx)
    s = idx[order].astype("int64")
    bins = _np.arange(length, device=_dev(w))
    lo = searchsorted(s, bins, side="left")
    hi = searchsorted(s, bins, side="right")
    c = _np.concatenate([_np.zeros((1,), dtype=w.dtype, device=_dev(w)),
                         _np.cumsum(w[order])])
    return _np.subtract(c[hi], c[lo])


def digitize(x, bins, right=False):
    """The index of the bin each x falls in (bins increasing or decreasing)."""
    x = _real_data(x, "digitize", "x")
    b = _real_data(_as_array(bins, x), "digitize", "bins")
    if b.ndim != 1:
        raise ValueError("[digitize] bins must be 1-dimensional")
    side = "left" if right else "right"
    if b.shape[0] > 1 and not (bool(_np.all(b[1:] >= b[:-1]))
                               or bool(_np.all(b[1:] <= b[:-1]))):
        raise ValueError("[digitize] bins must be monotonically increasing or decreasing")
    if b.shape[0] > 1 and bool(b[-1] < b[0]):
        return _np.subtract(b.shape[0], searchsorted(b[::-1], x, side=side))
    return searchsorted(b, x, side=side)


def _ptp_of(x):
    """max - min as NumPy's histogram estimators take it: in x's float dtype, exact for
    integers."""
    lo, hi = _np.min(x).asnumpy()[()], _np.max(x).asnumpy()[()]
    return int(hi) - int(lo) if _kind(x) in "iub" else _onp.subtract(hi, lo)


def _bins_sqrt(x, edges):
    return _ptp_of(x) / _onp.sqrt(x.size)


def _bins_sturges(x, edges):
    return _ptp_of(x) / (_onp.log2(x.size) + 1.0)


def _bins_rice(x, edges):
    return _ptp_of(x) / (2.0 * x.size ** (1.0 / 3))


def _bins_scott(x, edges):
    return (24.0 * _onp.pi ** 0.5 / x.size) ** (1.0 / 3.0) * float(std(x.astype("float64")))


def _bins_stone(x, edges):
    """The width minimizing Stone's leave-one-out cost over 1 .. max(100, sqrt(n)) bins."""
    n, ptp_x = x.size, _ptp_of(x)
    if n <= 1 or ptp_x == 0:
        return 0

    def cost(nbins):
        p = histogram(x, bins=nbins, range=edges)[0].astype("float64").asnumpy() / n
        return (2 - (n + 1) * p.dot(p)) / (ptp_x / nbins)
    upper = max(100, int(_onp.sqrt(n)))
    return ptp_x / min(range(1, upper + 1), key=cost)


def _bins_doane(x, edges):
    if x.size > 2:
        xf = x.astype("float64")
        sg1 = _onp.sqrt(6.0 * (x.size - 2) / ((x.size + 1.0) * (x.size + 3)))
        sigma = float(std(xf))
        if sigma > 0.0:
            g1 = float(_np.mean(_np.power(_np.true_divide(_np.subtract(xf, _np.mean(xf)), sigma),
                                          3)))
            return _ptp_of(x) / (1.0 + _onp.log2(x.size) + _onp.log2(1.0 + abs(g1) / sg1))
    return 0.0


def _bins_fd(x, edges):
    q75, q25 = percentile(x.astype("float64"), _onp.array([75.0, 25.0])).asnumpy()
    return 2.0 * (q75 - q25) * x.size ** (-1.0 / 3.0)


def _bins_auto(x, edges):
    fd, sturges = _bins_fd(x, edges), _bins_sturges(x, edges)
    return min(fd, sturges) if fd else sturges


# NumPy's bin-width estimators for histogram(bins=<name>).
_BIN_ESTIMATORS = {"auto": _bins_auto, "fd": _bins_fd, "doane": _bins_doane,
                   "scott": _bins_scott, "stone": _bins_stone, "rice": _bins_rice,
                   "sturges": _bins_sturges, "sqrt": _bins_sqrt}


def _estimated_bins(a, name, weights, lo, hi, range):
    """How many equal bins the estimator `name` picks for a within [lo, hi]."""
    if name not in _BIN_ESTIMATORS:
        raise ValueError(f"[histogram] {name!r} is not a valid estimator for `bins`; expected "
                         f"one of {sorted(_BIN_ESTIMATORS)}")
    if weights is not None:
        raise TypeError("[histogram] automated estimation of the number of bins is not "
                        "supported for weighted data")
    x = a
    if range is not None:
        x = a[_np.logical_and(_np.greater_equal(a, lo), _np.less_equal(a, hi))]
    if x.size == 0:
        return 1
    width = _BIN_ESTIMATORS[name](x, (lo, hi))
    if not width:
        return 1  # e.g. fd when the interquartile range is 0
    if _kind(a) in "iub" and width < 1:  # (NumPy takes bool input as uint8)
        width = 1
    return int(_onp.ceil(_onp.subtract(hi, lo) / width))


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of the bins histogram would use: equal-width bins (a count, or a NumPy
    estimator's name: auto, fd, doane, scott, stone, rice, sturges, sqrt), or the given
    edges."""
    a = _as_array(a)
    if weights is not None and tuple(weights.shape if isinstance(weights, _np.ndarray)
                                     else _onp.shape(weights)) != a.shape:
        raise ValueError("[histogram] weights should have the same shape as a.")
    a = _np.reshape(a, (-1,))
    if not isinstance(bins, str) and (bins.ndim if isinstance(bins, _np.ndarray)
                                      else _onp.ndim(bins)) == 0:
        try:
            bins = operator.index(bins)
        except TypeError:
            raise TypeError("[histogram] `bins` must be an integer, a string, or an "
                            "array") from None
    if not isinstance(bins, (int, str)):  # edges given (a list: NumPy's float64)
        edges = bins if isinstance(bins, _np.ndarray) else _np.array(_onp.asarray(bins),
                                                                     device=_dev(a))
        if edges.ndim != 1:
            raise ValueError("[histogram] `bins` must be 1d, when an array")
        if edges.shape[0] > 1 and bool(_np.any(_np.greater(edges[:-1], edges[1:]))):
            raise ValueError("[histogram] `bins` must increase monotonically, when an array")
        return edges
    if not isinstance(bins, str) and bins < 1:
        raise ValueError("[histogram] bins must be a positive integer")
    # NumPy's edges keep a floating input's dtype; integer inputs get float64.  Its linspace
    # runs in the dtype of (lo, hi): the input's own for an autodetected range.  (bfloat16,
    # which NumPy's linspace cannot make: float32.)
    floating = _kind(a) == "f"
    edge_type = (_onp.dtype("float32") if a.dtype == "bfloat16" else a.dtype) if floating \
        else _onp.dtype("float64")
    if range is not None:
        try:
            lo, hi = (float(v) for v in range)
        except (TypeError, ValueError) as e:
            cls = TypeError if _onp.ndim(range) == 0 else ValueError  # (NumPy's unpacking)
            raise cls(f"[histogram] range must be a pair of numbers (min, max), got "
                      f"{range!r}") from e
        if lo > hi:
            raise ValueError("[histogram] max must be larger than min in range parameter")
    elif a.shape[0]:
        lo, hi = _np.min(a).asnumpy()[()], _np.max(a).asnumpy()[()]
        if not floating:
            lo, hi = float(lo), float(hi)
    else:
        lo, hi = 0.0, 1.0
    if not (_onp.isfinite(lo) and _onp.isfinite(hi)):
        raise ValueError(f"[histogram] autodetected range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    if isinstance(bins, str):
        bins = _estimated_bins(a, bins, weights, lo, hi, range)
    return _np.array(_onp.linspace(lo, hi, bins + 1, dtype=edge_type), device=_dev(a))


def histogram(a, bins=10, range=None, density=None, weights=None):
    """(counts, bin_edges): the last bin includes its right edge, as NumPy's. Counts are
    int64, or of the weights' dtype."""
    edges = histogram_bin_edges(a, bins, range, weights)
    x = _np.reshape(_as_array(a), (-1,)).astype("float64")
    search_edges = edges.astype("float64")
    nb = edges.shape[0] - 1
    idx = _np.subtract(searchsorted(search_edges, x, side="right"), 1)
    idx = where(_np.equal(x, search_edges[nb]), nb - 1, idx)  # the right edge is in the last bin
    inside = _np.logical_and(_np.greater_equal(idx, 0), _np.less(idx, nb))
    w = None if weights is None else _np.reshape(_as_array(weights, x), (-1,))
    if w is None:
        counts = bincount(idx[inside], minlength=nb)
    else:
        # NumPy sums equal bins' weights bin by bin (bincount), given edges' by a running sum
        # (complex weights: both parts); the counts take the weights' dtype.
        summed = (_summed_per_bin if isinstance(bins, (int, _onp.integer, str))
                  else _summed_by_cumsum)
        wt = "complex128" if _kind(w) == "c" else "float64"
        counts = summed(idx[inside], w[inside].astype(wt), nb)
        if counts.dtype != w.dtype:
            counts = counts.astype(w.dtype)
    if density:
        # NumPy's n / widths / n.sum(): the total in the counts' own dtype
        wide = "complex128" if _kind(counts) == "c" else "float64"
        widths = _np.subtract(edges[1:], edges[:-1]).astype("float64")
        return _np.true_divide(_np.true_divide(counts.astype(wide), widths),
                               _np.sum(counts).astype(wide)), edges
    return counts, edges


# ---- covariance and correlation ----
def _check_cov_dtype(dtype, name):
    if dtype is not None and _onp.dtype(dtype).kind not in "fc":  # (NumPy's subtract cast)
        raise TypeError(f"[{name}] dtype must be a float or complex dtype (the deviations from "
                        f"the mean are inexact), got {_onp.dtype(dtype)}")


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """The covariance matrix of the variables (rows, or columns with rowvar=False).
    fweights: integer repeat counts of the observations; aweights: their relative weights
    (NumPy's normalization with both, ddof included). Complex data gives X @ X^H (the
    conjugate product), complex; the default dtype is at least float64, as NumPy's."""
    x = _as_array(m)
    if x.ndim > 2:
        raise ValueError("[cov] m has more than 2 dimensions")
    yy = None
    if y is not None:
        yy = _as_array(y, x)
        if yy.ndim > 2:
            raise ValueError("[cov] y has more than 2 dimensions")
    if dtype is None:
        dtype = _np.result_type(x.dtype, "float64", *(() if yy is None else (yy.dtype,)))
    x = _cast_values(x, dtype)
    m_ndim = x.ndim
    x = _np.reshape(x, (1, -1)) if x.ndim < 2 else x
    if not rowvar and m_ndim != 1:  # (NumPy 2: a (1, N) m is N variables of one observation)
        x = _np.transpose(x)
    if x.shape[0] == 0:  # no variables: NumPy's empty float64 matrix, whatever the dtype
        return _np.zeros((0, 0), dtype="float64")
    if yy is not None:
        yy = _cast_values(yy, dtype)
        yy = _np.reshape(yy, (1, -1)) if yy.ndim < 2 else yy
        if not rowvar and yy.shape[0] != 1:
            yy = _np.transpose(yy)
        x = _np.concatenate([x, yy], axis=0)
    _check_cov_dtype(dtype, "cov")  # (after the shapes, as NumPy's subtract comes after them)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _cov_weights(fweights, "fweights", n, x)
        if not bool(_np.all(_np.equal(w, _np.round(w)))):
            raise TypeError("[cov] fweights must be integers")
    if aweights is not None:
        a = _cov_weights(aweights, "aweights", n, x)
        w = a if w is None else _np.multiply(w, a)
    if w is None:
        fact = n - ddof
        xc = _np.subtract(x, _np.mean(x, axis=1, keepdims=True))
        xt = _np.transpose(xc)
    else:
        w_sum = float(_np.sum(w))
        avg = _np.true_divide(_np.sum(_np.multiply(x, w), axis=1, keepdims=True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * float(_np.sum(_np.multiply(w, a))) / w_sum
        xc = _np.subtract(x, avg)
        xt = _np.transpose(_np.multiply(xc, w))
    if _kind(xt) == "c":
        xt = _np.conj(xt)
    c = _np.true_divide(_np.matmul(xc, xt), max(fact, 0))
    return _np.squeeze(c) if c.shape == (1, 1) else c


def _cast_values(x, dtype):
    """x in dtype; complex to real drops the imaginary part with NumPy's ComplexWarning."""
    x = _as_array(x)
    kind = "f" if str(dtype) == "bfloat16" else _onp.dtype(dtype).kind
    if _kind(x) == "c" and kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part",
                      _onp.exceptions.ComplexWarning, stacklevel=3)
    return x if x.dtype == dtype else x.astype(dtype)


def _cov_weights(v, name, n, like):
    """cov's weights as float64: 1-d, one per observation, none negative."""
    w = _as_array(v, like).astype("float64")
    if w.shape != (n,):
        raise ValueError(f"[cov] {name} must be 1-d with one weight per observation ({n}), "
                         f"got shape {w.shape}")
    if bool(_np.any(_np.less(w, 0))):
        raise ValueError(f"[cov] {name} cannot be negative")
    return w


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients (cov normalized by the standard deviations; the real
    and imaginary parts each clipped to [-1, 1], as NumPy's)."""
    try:
        c = cov(x, y, rowvar, dtype=dtype)
    except TypeError as e:
        if str(e).startswith("[cov] dtype"):
            raise TypeError(str(e).replace("[cov]", "[corrcoef]", 1)) from None
        raise
    if c.ndim == 0:
        return _np.true_divide(c, c)
    d = _np.sqrt(_np.real(_np.diagonal(c)))
    r = _np.true_divide(_np.true_divide(c, _np.reshape(d, (-1, 1))), _np.reshape(d, (1, -1)))
    if _kind(r) != "c":
        return _np.clip(r, -1, 1)
    for part in (_np.real(r), _np.imag(r)):  # writeable views
        part[...] = _np.clip(part, -1, 1)
    return r


# ---- 1-d convolution ----
def _windows(a, m):
    """Rows a[i:i + m] for every i, stacked (a is 1-d and at least m long)."""
    return _np.stack([a[i:i + m] for i in range(a.shape[0] - m + 1)])


def correlate(a, v, mode="valid"):
    """The cross-correlation of two 1-d arrays: c[k] = sum_n a[n + k] conj(v[n]) (NumPy's
    modes)."""
    a, v = _pair(a, v)
    _check_1d_pair(a, v, "correlate")
    if _kind(v) == "c":
        v = _np.conjugate(v)
    return _correlate(a, v, mode)


def _check_1d_pair(a, v, name):
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"[{name}] object too deep for desired array: a and v must be 1-d")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"[{name}] a and v cannot be empty")


def _correlate(a, v, mode):
    """sum_n a[n + k] v[n] (no conjugate) in NumPy's modes."""
    swapped = v.shape[0] > a.shape[0]
    if swapped:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    if mode == "valid":
        pad = 0
    elif mode == "same":
        pad = m // 2
    elif mode == "full":
        pad = m - 1
    else:
        raise ValueError(f"[correlate] mode must be 'valid', 'same' or 'full', got {mode!r}")
    t = _np.result_type(a, v)
    a = a.astype(t)
    if pad:
        z = _np.zeros((pad,), dtype=t, device=_dev(a))
        right = pad if mode == "full" else m - 1 - pad
        a = _np.concatenate([z, a] + ([_np.zeros((right,), dtype=t, device=_dev(a))]
                                      if right else []))
    v = v.astype(t)
    windows = _windows(a, m)
    if pad and not bool(_np.all(_np.isfinite(v))):
        # NumPy sums only the overlapping products: a padding zero times an infinity or NaN
        # of v would make a NaN that NumPy's result does not have.
        at = _np.add(_np.reshape(_np.arange(windows.shape[0], device=_dev(a)), (-1, 1)),
                     _np.reshape(_np.arange(m, device=_dev(a)), (1, -1)))
        inside = _np.logical_and(_np.greater_equal(at, pad), _np.less(at, pad + n))
        r = _np.sum(where(inside, _np.multiply(windows, v), 0), axis=1)
    else:
        r = _np.matmul(windows, v)
    if mode == "same" and r.shape[0] != n:
        r = r[:n]
    return r[::-1] if swapped else r


def convolve(a, v, mode="full"):
    """The discrete linear convolution of two 1-d arrays (0-d ones as one element; NumPy's
    modes): sum_n a[n] v[k - n], no conjugate."""
    a, v = _pair(a, v)
    a, v = (_np.reshape(x, (1,)) if x.ndim == 0 else x for x in (a, v))
    _check_1d_pair(a, v, "convolve")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return _correlate(a, v[::-1], mode)


# ---- selection ----
def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else default."""
    if len(condlist) != len(choicelist):
        raise ValueError("[select] list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("[select] select with an empty condition list is not possible")
    choicelist, default = _select_operands(list(choicelist), default)
    r = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        c = _as_array(cond)
        if c.dtype != _onp.bool_:
            raise TypeError(f"[select] invalid entry in condlist: should be boolean ndarray, "
                            f"got {c.dtype}")
        r = where(c, choice, r)
    return _as_array(r)


def _select_operands(choices, default):
    """select's choices and default with NumPy's result dtype: the arrays' common dtype, lifted
    by the Python scalars among them as weak scalars; each scalar made an array of that dtype
    (so it is rounded once, into it). Only Python scalars: as they are (ndx's defaults)."""
    values = choices + [default]
    weak = [isinstance(v, (bool, int, float, complex)) for v in values]
    arrays = [_as_array(v) for v, w in zip(values, weak) if not w]
    if not arrays:
        return choices, default
    dtype = _np.result_type(*arrays)
    probe = _np.zeros((0,), dtype=dtype, device=_dev(arrays[0]))
    for v, w in zip(values, weak):
        if w:
            dtype = where(True, probe, v).dtype
            probe = _np.zeros((0,), dtype=dtype, device=_dev(arrays[0]))
    values = [_np.array(v, dtype=dtype, device=_dev(arrays[0])) if w else v
              for v, w in zip(values, weak)]
    return values[:-1], values[-1]


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] for integer a broadcast against the choices."""
    idx = _as_array(a)
    if _kind(idx) == "b":  # (as NumPy: False picks choice 0, True choice 1)
        idx = idx.astype("int64")
    if _kind(idx) not in "iu" or idx.dtype == _onp.uint64:  # (NumPy: a 'safe' cast to int64)
        raise TypeError(f"[choose] a must be integers that cast safely to int64, got "
                        f"{idx.dtype}")
    if not isinstance(choices, (list, tuple, _np.ndarray, _onp.ndarray)):
        raise TypeError(f"[choose] choices must be a sequence of arrays, got "
                        f"{type(choices).__name__}")
    k = len(choices)
    if k == 0:
        raise ValueError("[choose] choices must hold at least one array, got none")
    if mode == "wrap":
        idx = _np.mod(idx, k)
    elif mode == "clip":
        idx = _np.clip(idx, 0, k - 1)
    elif mode != "raise":
        raise ValueError(f"[choose] mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    elif idx.size and (int(_np.min(idx)) < 0 or int(_np.max(idx)) >= k):
        raise ValueError("[choose] invalid entry in choice array")
    last = _as_array(choices[k - 1])
    r = where(_np.equal(idx, k - 1), last, last)  # broadcast against a
    for i in range(k - 2, -1, -1):
        r = where(_np.equal(idx, i), choices[i], r)
    return _finish(r, out)


def lexsort(keys, axis=-1):
    """Indices that sort along axis by the last key, then the one before it, and so on
    (stable). keys: arrays of one shape, or an array whose first axis holds them."""
    keys = [_as_array(k) for k in keys]
    if not keys:
        raise TypeError("[lexsort] need a sequence of keys with len >= 1")
    shape = keys[0].shape
    if any(k.shape != shape for k in keys):
        raise ValueError("[lexsort] all keys need to be the same shape, got "
                         f"{[k.shape for k in keys]}")
    if isinstance(axis, bool) or not isinstance(axis, (int, _onp.integer)):
        raise TypeError(f"[lexsort] axis must be an integer, got {type(axis).__name__}")
    if not shape:  # one element (axis checked as for 1-d keys, NumPy's)
        _axis(1, axis, "lexsort")
        return _np.zeros((), dtype="int64")
    (ax,) = _axes(len(shape), axis)
    # least significant key first; each later stable sort keeps the earlier order among ties
    order = _np.argsort(keys[0], axis=ax, kind="stable")
    for k in keys[1:]:
        step = _np.argsort(_np.take_along_axis(k, order, axis=ax), axis=ax, kind="stable")
        order = _np.take_along_axis(order, step, axis=ax)
    return order


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """An array whose k-th element is the one a sorted array would have there, smaller ones
    before it and larger ones after: here a full (stable) sort, which is one such array."""
    _check_select_kind(kind, "partition")
    _check_kth(a, kth, axis, "partition")
    return _np.sort(a, axis=axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition a (here: that sort it, stably)."""
    _check_select_kind(kind, "argpartition")
    _check_kth(a, kth, axis, "argpartition")
    return _np.argsort(a, axis=axis)


def _check_select_kind(kind, name):
    """NumPy's kind= of partition: 'introselect', the only selection algorithm."""
    if not isinstance(kind, str):
        raise TypeError(f"[{name}] select kind must be str, not {type(kind).__name__}")
    if kind != "introselect":
        raise ValueError(f"[{name}] select kind must be 'introselect' (got {kind!r})")


def _check_kth(a, kth, axis, name):
    a = _as_array(a)
    n = a.size if axis is None else a.shape[_axis(a.ndim, axis, name)] if a.ndim else 1
    kth = _onp.atleast_1d(kth.asnumpy() if isinstance(kth, _np.ndarray) else kth)
    if kth.dtype.kind == "b":  # (NumPy's: True is no index 1 here)
        raise ValueError(f"[{name}] Booleans unacceptable as partition index")
    if kth.dtype.kind not in "iu":
        raise TypeError(f"[{name}] Partition index must be integer, got {kth.dtype}")
    for k in kth if n else ():  # (an empty axis takes any kth, as NumPy)
        if not -n <= int(k) < n:
            raise ValueError(f"[{name}] kth(={int(k)}) out of bounds ({n})")


# ---- npx.topk (MXNet's signature) ----
def topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    """The k largest (or, with is_ascend, smallest) elements along axis, as MXNet's topk:
    ret_typ 'indices' (in `dtype`, float32 by default as in MXNet), 'value', 'both'
    ((values, indices)) or 'mask' (1 where an element is among them). k < 1 sorts the whole
    axis; axis=None works on the flattened array (the mask keeps data's shape)."""
    if ret_typ not in ("indices", "value", "both", "mask"):
        raise ValueError(f"[topk] ret_typ must be 'indices', 'value', 'both' or 'mask', got "
                         f"{ret_typ!r}")
    a = _as_array(data)
    shape = a.shape
    if axis is None:
        a, axis = _np.reshape(a, (-1,)), 0
    if a.ndim == 0:
        raise ValueError("[topk] data must have at least one dimension")
    axis = _axes(a.ndim, axis)[0]
    n = a.shape[axis]
    if k > n:
        raise ValueError(f"[topk] k ({k}) must not exceed the length of axis {axis} ({n})")
    k = n if k < 1 else k
    order = _np.argsort(a, axis=axis)
    lead = (slice(None),) * axis
    if not is_ascend:
        order = order[lead + (slice(None, None, -1),)]  # descending
    idx = order[lead + (slice(0, k),)]
    # (no integer-array indexing or assignment, so that hybridize can trace topk: the
    # values are a take_along_axis, which also differentiates, and the mask compares each
    # element's rank in `order` with k)
    if ret_typ == "mask":
        rank = _np.argsort(order, axis=axis)
        return _np.reshape((rank < k).astype(a.dtype), shape)  # (data's shape, as MXNet's)
    values = _np.take_along_axis(a, idx, axis=axis)
    indices = idx.astype(dtype)
    if ret_typ == "value":
        return values
    if ret_typ == "both":
        return values, indices
    return indices


def spacing(x, out=None):
    """The distance from x to the next float away from zero, in x's own format (negative for
    negative x; NaN for infinities; the smallest subnormal for -0.0 as for 0.0, as NumPy's)."""
    x = _as_array(x)
    if _kind(x) == "c":
        raise TypeError("[spacing] ufunc 'spacing' not supported for complex input")
    if not _is_float(x):
        x = x.astype(_np._default_float())
    # x + 0 turns -0.0 into +0.0 (round to nearest), so zeros of both signs step up.
    away = _np.copysign(_np.full(x.shape, _onp.inf, dtype=x.dtype, device=_dev(x)), x + 0)
    return _finish(_np.subtract(_np.nextafter(x, away), x), out)


# ---- diagonal, trace, repeat, resize, put (the ndarray methods of the same names use these) ----
def _axis_pair(a, axis1, axis2, name):
    if a.ndim < 2:
        raise ValueError(f"[{name}] needs an array of at least 2 dimensions, got {a.ndim}")
    # (NumPy's AxisError, a ValueError and an IndexError, out of range)
    ax1, ax2 = _axis(a.ndim, axis1, name, "axis1"), _axis(a.ndim, axis2, name, "axis2")
    if ax1 == ax2:
        raise ValueError(f"[{name}] axis1 and axis2 cannot be the same")
    return ax1, ax2


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The offset-th diagonal of the 2-d sub-arrays on axis1 and axis2, as a new last axis:
    a read-only view, as NumPy's (a copy while autograd records or hybridize traces, so
    gradients flow)."""
    a = _as_array(a)
    ax1, ax2 = _axis_pair(a, axis1, axis2, "diagonal")
    offset = int(offset)
    n1, n2 = a.shape[ax1], a.shape[ax2]
    rows, cols = (0, offset) if offset >= 0 else (-offset, 0)
    k = max(0, min(n1 - rows, n2 - cols))
    rest = [i for i in range(a.ndim) if i not in (ax1, ax2)]
    if not (_core._autograd_is_recording() or _core._is_tracing()):
        start = a
        if k:  # the view starts at the diagonal's first element
            corner = [slice(None)] * a.ndim
            corner[ax1], corner[ax2] = slice(rows, None), slice(cols, None)
            start = a[tuple(corner)]
        strides = a.strides
        view = start._as_strided(tuple(a.shape[i] for i in rest) + (k,),
                                 tuple(strides[i] for i in rest) + (strides[ax1] + strides[ax2],))
        view._set_writeable(False)
        return view
    b = _np.reshape(_np.transpose(a, tuple(rest + [ax1, ax2])),
                    tuple(a.shape[i] for i in rest) + (n1 * n2,))
    # The diagonal is every (n2 + 1)-th element of the flattened pair of axes from
    # rows * n2 + cols: a strided basic slice, which hybridize can trace (an integer-array
    # take of a constant index array it cannot).
    start = rows * n2 + cols
    stop = start + (k - 1) * (n2 + 1) + 1 if k else start
    return b[..., start:stop:n2 + 1]


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along the offset-th diagonal."""
    return _finish(_np.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype), out)


def repeat(a, repeats, axis=None):
    """Each element repeated `repeats` times (an int, or one count per element) along axis (of
    the flattened array for None)."""
    a = _as_array(a)
    if axis is None:
        a, axis = _np.reshape(a, (-1,)), 0
    elif not -a.ndim <= axis < max(a.ndim, 1):
        raise ValueError(f"[repeat] axis {axis} is out of bounds for an array of dimension "
                         f"{a.ndim}")
    if a.ndim == 0:
        a = _np.reshape(a, (1,))
    axis %= a.ndim
    r = _onp.asarray(repeats.asnumpy() if isinstance(repeats, _np.ndarray) else repeats)
    if r.dtype.kind not in "iub":
        raise TypeError(f"[repeat] repeats must be integers, got {r.dtype}")
    if (r < 0).any():
        raise ValueError("[repeat] repeats may not contain negative values")
    n = a.shape[axis]
    if r.size != 1 and r.shape != (n,):
        raise ValueError(f"[repeat] repeats of shape {r.shape} do not match the {n} elements "
                         f"along axis {axis}")
    counts = r.reshape(-1)
    total = n * int(counts[0]) if r.size == 1 else float(counts.sum(dtype=_onp.float64))
    if total > 1 << 40:  # before NumPy builds the index (its size overflows int64 past 2**63)
        raise ValueError(f"[repeat] the result would have {int(total)} elements along axis {axis}: "
                         f"array is too big")
    idx = _onp.repeat(_onp.arange(n), r.reshape(-1)[0] if r.size == 1 else r)
    return take(a, _np.array(idx, dtype="int64", device=_dev(a)), axis=axis)


def _shape_tuple(shape, name):
    shape = (shape,) if isinstance(shape, (int, _onp.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"[{name}] all elements of new_shape must be non-negative, got {shape}")
    return shape


def resize(a, new_shape):
    """An array of new_shape filled with a's elements in C order, repeated as needed (zeros when
    a is empty)."""
    a = _as_array(a)
    shape = _shape_tuple(new_shape, "resize")
    total = math.prod(shape)
    if a.size == 0:
        return _np.zeros(shape, dtype=a.dtype, device=_dev(a))
    idx = _np.array(_onp.arange(total) % a.size, dtype="int64", device=_dev(a))
    return _np.reshape(take(_np.reshape(a, (-1,)), idx), shape)


def _assigned_values(v, a, name=None):
    """v converted for writing into a, as NumPy's put / place / putmask convert it: host data
    (Python numbers and lists, NumPy scalars) straight into a's dtype (a Python int out of its
    range is an OverflowError, a complex value into a real array a TypeError, as in NumPy), an
    array cast unsafely; with a `name` (place, putmask) an array must cast under the 'safe'
    rule, else NumPy's TypeError (a float64 array into an int32 one)."""
    if name is not None and isinstance(v, (_np.ndarray, _onp.ndarray)) \
            and not _safe_cast(v.dtype, a.dtype):
        raise TypeError(f"[{name}] Cannot cast array data from {v.dtype} to {a.dtype} "
                        f"according to the rule 'safe'")
    if isinstance(v, _np.ndarray):
        return v.astype(a.dtype)
    if a.dtype == "bfloat16":
        return _as_array(v, a).astype(a.dtype)
    return _np.array(_onp.asarray(v, dtype=a.dtype), device=_dev(a))


def _safe_cast(src, dst):
    """NumPy's can_cast(src, dst, 'safe'), with bfloat16 (which NumPy lacks): it casts safely
    to float32 and wider, and only bool and 8-bit integers cast safely to it."""
    if str(dst) == "bfloat16":
        return str(src) in ("bfloat16", "bool", "int8", "uint8")
    src = "float32" if str(src) == "bfloat16" else src
    return bool(_onp.can_cast(_onp.dtype(src), _onp.dtype(dst), "safe"))


def put(a, ind, v, mode="raise"):
    """Writes v (repeated as needed) into the flattened a at indices ind, in place; mode 'raise'
    (IndexError out of range), 'wrap' or 'clip'."""
    if not isinstance(a, _np.ndarray):
        raise TypeError(f"[put] a must be an ndarray, got {type(a).__name__}")
    if not a._writeable():  # (before the indices, as NumPy checks)
        raise ValueError("[put] assignment destination is read-only")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"[put] mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    # As NumPy's: an array of indices must cast to int64 under the 'safe' rule (bools do,
    # uint64 and floats do not); host data (lists, scalars) is cast whatever its type.
    if isinstance(ind, (_np.ndarray, _onp.ndarray)):
        if not _safe_cast(ind.dtype, "int64"):
            raise TypeError(f"[put] Cannot cast array data from {ind.dtype} to int64 "
                            f"according to the rule 'safe'")
        idx = (ind.asnumpy() if isinstance(ind, _np.ndarray) else ind).astype(_onp.int64)
    else:
        idx = _onp.array(ind, dtype=_onp.int64)
    idx = idx.reshape(-1)
    vals = _np.reshape(_assigned_values(v, a), (-1,))
    if idx.size == 0 or vals.size == 0:  # nothing to write, whatever the indices (NumPy)
        return None
    n = a.size
    if mode == "wrap":
        idx = idx % n if n else idx
    elif mode == "clip":
        idx = _onp.clip(idx, 0, max(n - 1, 0))
    if n == 0 or ((idx < -n) | (idx >= n)).any():
        raise IndexError(f"[put] index out of range for an array of size {n}")
    dev = _dev(a)
    vals = take(vals, _np.array(_onp.arange(idx.size) % vals.size, dtype="int64", device=dev))
    flat = _np.reshape(a.copy(), (-1,))  # written back whole: a may be a strided view
    flat[_np.array(idx % n, dtype="int64", device=dev)] = vals
    a[...] = _np.reshape(flat, a.shape)
    return None


_NO_BOUND = object()  # np.clip's default for a bound not given (NumPy's np._NoValue)


def _clip_bounds(a_min, a_max, min, max):
    """np.clip's bounds from NumPy's names (a_min, a_max) or the Array API's (min, max).
    With _NO_BOUND as the defaults, NumPy 2.4's rules: neither a_min nor a_max (the bounds
    then min / max, or None), or both; one without the other is a TypeError."""
    min = None if min is _NO_BOUND else min
    max = None if max is _NO_BOUND else max
    if a_min is _NO_BOUND and a_max is _NO_BOUND:
        return min, max
    for name, value in (("a_min", a_min), ("a_max", a_max)):
        if value is _NO_BOUND:
            raise TypeError(f"[clip] clip() missing 1 required positional argument: '{name}'")
    if min is not None:
        if a_min is not None:
            raise ValueError("[clip] give a_min or min, not both")
        a_min = min
    if max is not None:
        if a_max is not None:
            raise ValueError("[clip] give a_max or max, not both")
        a_max = max
    return a_min, a_max


def _int_clip_bounds(a, a_min, a_max):
    """NumPy 2.1's rule for an integer array: a Python int bound at or past the dtype's own
    limit (clip(uint8, -5, 300)) bounds nothing and is dropped, rather than an OverflowError;
    one past the other limit (a_min=300 for uint8) still is one."""
    if _kind(a) not in "iu":
        return a_min, a_max
    info = _onp.iinfo(a.dtype)
    if type(a_min) is int and a_min <= info.min:
        a_min = None
    if type(a_max) is int and a_max >= info.max:
        a_max = None
    return a_min, a_max


# ---- numerical derivatives, phase unwrapping ----
def _along(ndim, axis, index):
    """An index tuple taking `index` (a slice or an int) along `axis`."""
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


def _on_axis(v, ndim, axis):
    """A 1-d array v shaped to broadcast along `axis` of an ndim-dimensional array."""
    return _np.reshape(v, (1,) * axis + (-1,) + (1,) * (ndim - axis - 1))


def _gradient_spacings(f, varargs, axes):
    """Per axis: a Python float (uniform spacing) or a 1-d array of the steps between
    coordinates (NumPy's rules: none, one scalar for all, or one scalar / coordinate array per
    axis)."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and _onp.ndim(varargs[0]) == 0:
        return [_scalar_spacing(varargs[0])] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"[gradient] invalid number of spacing arguments: {len(varargs)} for "
                        f"{len(axes)} axes")
    out = []
    for d, ax in zip(varargs, axes):
        if _onp.ndim(d) == 0:
            out.append(_scalar_spacing(d))
            continue
        d = _as_array(d, f)
        if d.ndim != 1:
            raise ValueError("[gradient] distances must be either scalars or 1d")
        if d.shape[0] != f.shape[ax]:
            raise ValueError("[gradient] when 1d, distances must match the length of the "
                             "corresponding dimension")
        if _kind(d) in "iub":
            d = d.astype("float64")
        steps = _np.subtract(d[1:], d[:-1])
        uniform = steps.shape[0] and bool(_np.all(_np.equal(steps, steps[0])))
        out.append(float(steps[0]) if uniform else steps)
    return out


def _scalar_spacing(d):
    """A scalar spacing as a Python float, or complex when it is one (NumPy divides by it,
    and a real f keeps only the real part of the result)."""
    if isinstance(d, _np.ndarray):
        d = d.item()
    return complex(d) if _onp.iscomplexobj(d) else float(d)


def _gradient_axis(f, ax, h, edge_order):
    """The derivative of f along ax: central differences inside, one-sided at the ends."""
    nd = f.ndim

    def at(i):
        return f[_along(nd, ax, i)]

    def part(lo, hi):
        return f[_along(nd, ax, slice(lo, hi))]

    uniform = isinstance(h, (float, complex))
    if uniform:
        inner = _np.true_divide(_np.subtract(part(2, None), part(None, -2)), 2.0 * h)
    else:
        dx1, dx2 = h[:-1], h[1:]
        a = _np.negative(_np.true_divide(dx2, _np.multiply(dx1, _np.add(dx1, dx2))))
        b = _np.true_divide(_np.subtract(dx2, dx1), _np.multiply(dx1, dx2))
        c = _np.true_divide(dx1, _np.multiply(dx2, _np.add(dx1, dx2)))
        a, b, c = (_on_axis(v, nd, ax) for v in (a, b, c))
        inner = _np.add(_np.add(_np.multiply(a, part(None, -2)), _np.multiply(b, part(1, -1))),
                        _np.multiply(c, part(2, None)))
    if edge_order == 1:
        d0, dn = (h, h) if uniform else (h[0], h[-1])
        first = _np.true_divide(_np.subtract(at(1), at(0)), d0)
        last = _np.true_divide(_np.subtract(at(-1), at(-2)), dn)
    else:
        if uniform:
            coef0 = (-1.5 / h, 2.0 / h, -0.5 / h)
            coefn = (0.5 / h, -2.0 / h, 1.5 / h)
        else:
            dx1, dx2 = h[0], h[1]
            coef0 = (_np.negative((2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))),
                     (dx1 + dx2) / (dx1 * dx2), _np.negative(dx1 / (dx2 * (dx1 + dx2))))
            dx1, dx2 = h[-2], h[-1]
            coefn = (dx2 / (dx1 * (dx1 + dx2)), _np.negative((dx2 + dx1) / (dx1 * dx2)),
                     (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2)))
        first = _np.add(_np.add(_np.multiply(at(0), coef0[0]), _np.multiply(at(1), coef0[1])),
                        _np.multiply(at(2), coef0[2]))
        last = _np.add(_np.add(_np.multiply(at(-3), coefn[0]), _np.multiply(at(-2), coefn[1])),
                       _np.multiply(at(-1), coefn[2]))
    pieces = [_np.expand_dims(first, ax), inner, _np.expand_dims(last, ax)]
    return _np.concatenate([p.astype(inner.dtype) for p in pieces], axis=ax)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The derivative of f sampled on a grid, per axis: second-order central differences
    inside (uneven coordinates included) and first- or second-order one-sided differences at
    the ends (edge_order). One array for one axis, else a tuple of them."""
    f = _as_array(f)
    if edge_order not in (1, 2):
        raise ValueError(f"[gradient] edge_order must be 1 or 2, got {edge_order!r}")
    if f.ndim == 0 and axis is not None:
        raise _core.AxisError(f"[gradient] axis {axis!r} is out of bounds for array of "
                              f"dimension 0")
    axes = _axes(f.ndim, axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"[gradient] repeated axis in {axis!r}")
    if f.dtype == _onp.bool_:
        raise TypeError("[gradient] boolean samples have no differences (NumPy's subtract "
                        "refuses them too)")
    spacings = _gradient_spacings(f, varargs, axes)
    if _kind(f) in "iu":
        f = f.astype("float64")  # (NumPy's: integer samples give float64 derivatives)
    out = []
    for ax, h in zip(axes, spacings):
        if f.shape[ax] < edge_order + 1:
            raise ValueError(f"[gradient] shape of array too small to calculate a numerical "
                             f"gradient, at least (edge_order + 1) = {edge_order + 1} elements "
                             f"are required along axis {ax}, got {f.shape[ax]}")
        # in f's dtype, as NumPy's (float64 coordinates do not widen a float32 result;
        # complex spacings leave a real f the real part, with NumPy's ComplexWarning)
        if isinstance(h, complex) and _kind(f) != "c" and edge_order == 2 and f.ndim == 1:
            # (NumPy writes a complex Python scalar into its real 1-d result there)
            raise TypeError("[gradient] cannot write the complex edge values of a real "
                            "1-d f with a complex spacing (NumPy's float() refuses them)")
        g = _gradient_axis(f, ax, h, edge_order)
        if _kind(g) == "c" and _kind(f) != "c":
            warnings.warn("Casting complex values to real discards the imaginary part",
                          _onp.exceptions.ComplexWarning, stacklevel=2)
            g = _np.real(g)
        out.append(g.astype(f.dtype))
    return out[0] if len(out) == 1 else tuple(out)


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """p with jumps between neighbours along `axis` larger than max(discont, period / 2)
    replaced by their equivalents modulo `period` (phase unwrapping)."""
    p = _as_array(p)
    if p.ndim == 0:
        raise ValueError("[unwrap] p must have at least one dimension")
    ax = _axis(p.ndim, axis, "unwrap")
    if p.dtype == "bfloat16":  # (NumPy has no bfloat16: computed in float32)
        return unwrap(p.astype("float32"), discont, axis, period=period).astype("bfloat16")
    dtype = _onp.result_type(_onp.dtype(p.dtype), period)
    if p.shape[ax] == 0:
        return p.astype(dtype)
    dd = diff(p, axis=ax)
    if discont is None:
        discont = period / 2
    if dtype.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    small = _np.less(_np.absolute(dd), discont)  # (NumPy's: in p's dtype, before the cast)
    dd = dd.astype(dtype)
    low = -high
    ddmod = _np.add(_np.mod(_np.subtract(dd, low), period), low)
    if ambiguous:  # a jump of exactly half a period keeps its sign
        at_low = _np.logical_and(_np.equal(ddmod, low), _np.greater(dd, 0))
        ddmod = where(at_low, _np.array(high, dtype=dtype, device=_dev(p)), ddmod)
    correction = where(small, _np.zeros((), dtype=dtype, device=_dev(p)),
                       _np.subtract(ddmod, dd))
    base = p.astype(dtype)
    rest = _np.add(base[_along(p.ndim, ax, slice(1, None))],
                   _np.cumsum(correction, axis=ax)).astype(dtype)  # (int32 cumsums in int64)
    return _np.concatenate([base[_along(p.ndim, ax, slice(0, 1))], rest], axis=ax)


def sort_complex(a):
    """a sorted as complex numbers along its last axis (by real part, then imaginary), as a
    complex array (complex64 from 8- and 16-bit integers, else complex128 for real input)."""
    a = _as_array(a)
    if _kind(a) != "c":
        a = a.astype("complex64" if a.dtype in ("int8", "int16", "uint8", "uint16")
                     else "complex128")
    if a.ndim == 0:
        raise _core.AxisError("[sort_complex] axis -1 is out of bounds for array of dimension 0")
    return _np.sort(a, axis=-1)  # complex input sorts in NumPy's order


# ---- multidimensional histograms ----
def _histdd_sample(sample):
    """(N, D) coordinates: an (N, D) array as it is, a 1-d array as (N, 1), a sequence of D
    1-d arrays as their columns (NumPy's reading)."""
    if isinstance(sample, (_np.ndarray, _onp.ndarray)) and _onp.ndim(sample) == 2:
        return _as_array(sample)
    if isinstance(sample, (list, tuple)) and sample and any(
            isinstance(s, _np.ndarray) for s in sample):
        like = next(s for s in sample if isinstance(s, _np.ndarray))
        cols = [_np.reshape(_as_array(s, like), (-1,)) for s in sample]
        if any(c.shape[0] != cols[0].shape[0] for c in cols):
            raise ValueError("[histogramdd] every coordinate sequence must have the same length")
        return _np.stack(cols, axis=1)
    x = _as_array(sample)
    if x.ndim > 2:
        raise ValueError(f"[histogramdd] sample must be an (N, D) array or D sequences, got "
                         f"{x.ndim} dimensions")
    return _np.transpose(_np.reshape(x, (1, -1)) if x.ndim < 2 else x)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """(H, edges): the counts of the (N, D) sample in a D-dimensional grid of bins (float64;
    a density with density=True) and the D arrays of bin edges. Each bin includes its left
    edge, and the last along each axis its right edge too."""
    x = _histdd_sample(sample)
    n, d = x.shape
    try:
        if len(bins) != d:
            raise ValueError(f"[histogramdd] the dimension of bins ({len(bins)}) must equal "
                             f"the dimension of the sample ({d})")
        per_axis_bins = list(bins)
    except TypeError:
        per_axis_bins = [bins] * d
    if range is None:
        range = (None,) * d
    elif not isinstance(range, (tuple, list, _onp.ndarray, _np.ndarray)):
        raise TypeError(f"[histogramdd] range must be a sequence of (low, high) pairs or None, "
                        f"got {type(range).__name__}")
    elif len(range) != d:
        raise ValueError("[histogramdd] range must have one entry per dimension")
    edges, counts_shape, cells = [], [], []
    for i, b in enumerate(per_axis_bins):
        column = x[:, i]
        if _onp.ndim(b) == 0:
            if not isinstance(b, (int, _onp.integer)) or isinstance(b, bool):
                raise TypeError(f"[histogramdd] bins[{i}] must be an integer or an array of "
                                f"edges, got {type(b).__name__}")
            if b < 1:
                raise ValueError(f"[histogramdd] bins[{i}] must be positive, when an integer")
            # NumPy's edges: float64 from a given range or an empty sample, else in the
            # sample's float dtype (float64 for integers)
            if range[i] is not None or column.shape[0] == 0:
                column = column.astype("float64")
            e = histogram_bin_edges(column, b, range[i])
        else:
            e = b if isinstance(b, _np.ndarray) else _np.array(_onp.asarray(b), device=_dev(x))
            if e.ndim != 1 or e.shape[0] < 1:
                raise ValueError(f"[histogramdd] bins[{i}] must be a 1-d array of edges")
            if e.shape[0] > 1 and not bool(_np.all(_np.greater_equal(e[1:], e[:-1]))):
                raise ValueError(f"[histogramdd] bins[{i}] must be monotonically increasing, "
                                 f"when an array")
        edges.append(e)
        nb = e.shape[0] - 1
        col64, e64 = column.astype("float64"), e.astype("float64")
        idx = searchsorted(e64, col64, side="right")  # 0: below, nb + 1: above
        if nb >= 0 and e.shape[0]:
            idx = where(_np.equal(col64, e64[-1]), _np.subtract(idx, 1), idx)
        cells.append(idx)
        counts_shape.append(nb + 2)
    total = math.prod(counts_shape)
    flat = _np.ravel_multi_index(tuple(c.astype("int64") for c in cells), counts_shape)
    w = None if weights is None else _np.reshape(_as_array(weights, x), (-1,))
    if w is not None and w.shape[0] != n:
        raise ValueError(f"[histogramdd] weights must have one value per sample ({n}), got "
                         f"{w.shape[0]}")
    hist = bincount(flat, weights=w, minlength=total).astype("float64")
    hist = _np.reshape(hist, counts_shape)[(slice(1, -1),) * d]
    if density:
        s = _np.sum(hist)
        for i, e in enumerate(edges):
            widths = _np.subtract(e[1:], e[:-1]).astype("float64")
            hist = _np.true_divide(hist, _on_axis(widths, d, i))
        hist = _np.true_divide(hist, s)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """(H, xedges, yedges): histogramdd of the points (x[i], y[i]); bins is a count or an
    edge array for both axes, or a pair of them."""
    x, y = _pair(x, y)
    if x.ndim != 1 or y.ndim != 1 or x.shape[0] != y.shape[0]:
        raise ValueError(f"[histogram2d] x and y must be 1-d arrays of the same length, got "
                         f"shapes {tuple(x.shape)} and {tuple(y.shape)}")
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):  # one edge array for both axes
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
