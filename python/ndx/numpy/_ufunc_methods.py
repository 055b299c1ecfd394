"""NumPy's ufunc methods on ndx's ufuncs: reduce, accumulate, reduceat, outer and at, with the
attributes nin, nout, nargs and identity. add / multiply / maximum / minimum / logical_and /
logical_or reduce through the registered reductions (sum, prod, max, min, all, any), add and
multiply accumulate through cumsum / cumprod, add.at and subtract.at scatter through
npx.index_add; the other ufuncs apply their op along the axis, one slice at a time."""
import functools

import numpy as _onp

import ndx.numpy as _np

from .. import _core
from ._composites import _as_array, _finish

_NO_VALUE = object()

_BINARY = ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power",
           "float_power", "mod", "remainder", "fmod", "maximum", "minimum", "fmax", "fmin",
           "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
           "bitwise_xor", "left_shift", "right_shift", "arctan2", "hypot", "logaddexp",
           "logaddexp2", "copysign", "nextafter", "heaviside", "ldexp", "gcd", "lcm", "equal",
           "not_equal", "less", "less_equal", "greater", "greater_equal")
_UNARY = ("negative", "positive", "absolute", "fabs", "sign", "sqrt", "cbrt", "square",
          "reciprocal", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos",
          "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
          "arctanh", "deg2rad", "rad2deg", "floor", "ceil", "trunc", "rint", "isnan", "isinf",
          "isfinite", "signbit", "logical_not", "invert", "bitwise_not", "spacing")
_UNARY_NAMES = frozenset(_UNARY)
# The registered reductions and scans that are these ufuncs' reduce / accumulate.
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
               "logical_and": "all", "logical_or": "any"}
_ACCUMULATIONS = {"add": "cumsum", "multiply": "cumprod"}
# NumPy's identities (None: none), and the ops it may reduce over several axes at once.
_IDENTITY = {"add": 0, "multiply": 1, "logical_and": True, "logical_or": False,
             "logical_xor": False, "bitwise_and": -1, "bitwise_or": 0, "bitwise_xor": 0,
             "gcd": 0, "hypot": 0, "logaddexp": -_onp.inf, "logaddexp2": -_onp.inf}
_REORDERABLE = frozenset(("add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and",
                          "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                          "bitwise_xor", "gcd", "lcm", "hypot", "logaddexp", "logaddexp2"))


def _axes_of(axis, ndim, name, method):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, _onp.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -max(ndim, 1) <= int(a) < max(ndim, 1):
            raise _core.AxisError(f"[{name}.{method}] axis {int(a)} is out of bounds for array "
                                  f"of dimension {ndim}")
        out.append(int(a) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"[{name}.{method}] duplicate value in 'axis'")
    return tuple(out)


def _as_result(op, x):
    """x in the dtype op gives for two operands like it (bool for logical_and of ints)."""
    t = op(x[..., :0] if x.ndim else _np.reshape(x, (1,))[:0], x[..., :0] if x.ndim else
           _np.reshape(x, (1,))[:0]).dtype
    return x if x.dtype == t else x.astype(t)


def _fold(op, a, initial, name):
    """op applied along a's first axis: a[0] op a[1] op ... (initial first when given)."""
    n = a.shape[0]
    if n == 0:
        start = initial if initial is not _NO_VALUE else _IDENTITY.get(name)
        if start is None:
            raise ValueError(f"[{name}.reduce] zero-size array to reduction operation {name} "
                             "which has no identity")
        return _np.full(a.shape[1:], start, dtype=a.dtype)
    r = _as_result(op, a[0]) if initial is _NO_VALUE else op(
        _np.full(a.shape[1:], initial, dtype=a.dtype), a[0])
    for i in range(1, n):
        r = op(r, a[i])
    return r


def reduce(name, op, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
           where=True):
    """ufunc.reduce: op folded over the axis (axes, or all of them for None)."""
    a = _as_array(array)
    if name in _REDUCTIONS:
        kwargs = {"axis": axis, "keepdims": keepdims}
        if dtype is not None:
            kwargs["dtype"] = dtype
        if initial is not _NO_VALUE:
            kwargs["initial"] = initial
        if where is not True:
            kwargs["where"] = where
        return _finish(getattr(_np, _REDUCTIONS[name])(a, **kwargs), out)
    if where is not True:
        raise NotImplementedError(f"[{name}.reduce] where= is supported for add, multiply, "
                                  "maximum, minimum, logical_and and logical_or")
    if dtype is not None:
        a = a.astype(dtype)
    axes = _axes_of(axis, a.ndim, name, "reduce")
    if len(axes) > 1 and name not in _REORDERABLE:
        raise ValueError(f"[{name}.reduce] reduction operation '{name}' is not reorderable, so "
                         "at most one axis may be specified")
    if a.ndim == 0:
        return _finish(a.copy(), out)
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = _np.transpose(a, tuple(axes) + tuple(kept))
    flat = _np.reshape(moved, (-1,) + tuple(a.shape[d] for d in kept))
    r = _fold(op, flat, initial, name)
    if keepdims:
        r = _np.reshape(r, tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
    return _finish(r, out)


def accumulate(name, op, array, axis=0, dtype=None, out=None):
    """ufunc.accumulate: the running op along one axis."""
    a = _as_array(array)
    if a.ndim == 0:
        raise TypeError(f"[{name}.accumulate] cannot accumulate a 0-d array")
    (ax,) = _axes_of(axis, a.ndim, name, "accumulate")
    if name in _ACCUMULATIONS:
        return _finish(getattr(_np, _ACCUMULATIONS[name])(a, axis=ax, dtype=dtype), out)
    if dtype is not None:
        a = a.astype(dtype)
    moved = _np.moveaxis(a, ax, 0)
    if moved.shape[0] == 0:
        return _finish(a.copy(), out)
    steps = [_as_result(op, moved[0])]
    for i in range(1, moved.shape[0]):
        steps.append(op(steps[-1], moved[i]))
    return _finish(_np.moveaxis(_np.stack(steps), 0, ax), out)


def reduceat(name, op, array, indices, axis=0, dtype=None, out=None):
    """ufunc.reduceat: the reduction of array[indices[i]:indices[i + 1]] along axis for each i
    (just array[indices[i]] where indices[i] >= indices[i + 1]; to the end for the last)."""
    a = _as_array(array)
    (ax,) = _axes_of(axis, a.ndim, name, "reduceat")
    idx = _onp.asarray(indices.asnumpy() if isinstance(indices, _np.ndarray) else indices)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
        raise TypeError(f"[{name}.reduceat] indices must be a 1-d array of integers")
    n = a.shape[ax]
    if ((idx < 0) | (idx >= n)).any():
        bad = int(idx[(idx < 0) | (idx >= n)][0])
        raise IndexError(f"[{name}.reduceat] index {bad} out-of-bounds in {name}.reduceat "
                         f"[0, {n})")
    moved = _np.moveaxis(a, ax, 0)
    parts = []
    for k, start in enumerate(idx.tolist()):
        stop = idx[k + 1] if k + 1 < idx.size else n
        piece = moved[start:stop] if start < stop else moved[start:start + 1]
        parts.append(reduce(name, op, piece, axis=0, dtype=dtype))
    if not parts:
        return _finish(_np.zeros((0,) + moved.shape[1:], dtype=a.dtype), out)
    return _finish(_np.moveaxis(_np.stack(parts), 0, ax), out)


def outer(name, op, A, B, **kwargs):
    """ufunc.outer: op of every element of A with every element of B (shape A.shape +
    B.shape)."""
    a, b = _as_array(A), _as_array(B)
    return op(_np.reshape(a, a.shape + (1,) * b.ndim), b, **kwargs)


def at(name, op, a, indices, b=None):
    """ufunc.at: op applied in place at a[indices], unbuffered: an index named twice is
    operated on twice (in order). add and subtract scatter in one pass."""
    if not isinstance(a, _np.ndarray):
        raise TypeError(f"[{name}.at] the first argument must be an ndarray, got "
                        f"{type(a).__name__}")
    if (b is None) != (name in _UNARY_NAMES):
        raise TypeError(f"[{name}.at] " + ("a second operand b is expected for a binary ufunc"
                                           if b is None else "b is not expected for a unary "
                                           "ufunc"))
    chosen = _np.arange(a.size, device=_np._device_for(a)).reshape(a.shape)[indices]
    pos = _np.reshape(chosen, (-1,))  # the flat positions named, repeats included
    vals = None if b is None else _np.reshape(_np.broadcast_to(_as_array(b, a), chosen.shape),
                                              (-1,))
    flat = a.copy().reshape(-1)
    if name in ("add", "subtract") and pos.shape[0]:
        v = vals.astype(a.dtype) if name == "add" else _np.negative(vals).astype(a.dtype)
        from .. import numpy_extension as _npx
        flat = _npx.index_add(flat, _np.reshape(pos, (1, -1)), v)
    else:
        host = pos.asnumpy()
        order = _onp.argsort(host, kind="stable")
        ranks = _onp.empty_like(order)
        first = _onp.r_[True, host[order][1:] != host[order][:-1]] if host.size else order
        starts = _onp.maximum.accumulate(_onp.where(first, _onp.arange(host.size), 0)) \
            if host.size else order
        ranks[order] = _onp.arange(host.size) - starts
        for r in range(int(ranks.max()) + 1 if host.size else 0):
            sel = _onp.flatnonzero(ranks == r)
            p = _np.array(host[sel])
            cur = flat[p]
            new = op(cur) if vals is None else op(cur, vals[_np.array(sel)])
            flat[p] = new.astype(a.dtype)
    a[...] = _np.reshape(flat, a.shape)


def attach():
    """Puts the methods and attributes on each ufunc of ndx.numpy."""
    for name in _BINARY + _UNARY:
        fn = getattr(_np, name, None)
        if fn is None or hasattr(fn, "nin"):
            continue
        binary = name in _BINARY
        fn.nin, fn.nout = (2, 1) if binary else (1, 1)
        fn.nargs = fn.nin + fn.nout
        fn.identity = _IDENTITY.get(name)
        fn.at = functools.partial(at, name, fn)
        if binary:
            fn.reduce = functools.partial(reduce, name, fn)
            fn.accumulate = functools.partial(accumulate, name, fn)
            fn.reduceat = functools.partial(reduceat, name, fn)
            fn.outer = functools.partial(outer, name, fn)
