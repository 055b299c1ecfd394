"""Helpers shared by the distributions: probability / logit conversion, right-most sums,
cached properties and the special functions, all over ndx's np / npx operators so they work
eagerly, under autograd and inside hybridized blocks."""
import numbers
import types
from functools import update_wrapper

import numpy as _onp

__all__ = ["getF", "prob2logit", "logit2prob", "cached_property", "sample_n_shape_converter",
           "sum_right_most", "constraint_check", "gammaln", "digamma", "erf", "erfinv",
           "as_size_tuple", "batch_shape_of"]


def _ndx():
    import ndx

    return ndx


def getF(*params):
    """MXNet's running-mode lookup: ``mx.sym`` when the parameters are symbols, ``mx.nd``
    for arrays and Python scalars. Mixing both raises TypeError, as MXNet's does."""
    mx = _ndx()
    kinds = set()
    for param in params:
        if isinstance(param, mx.sym.Symbol):
            kinds.add("sym")
        elif isinstance(param, (mx.np.ndarray, mx.nd.NDArray)):
            kinds.add("nd")
    if len(kinds) > 1:
        raise TypeError("getF: the parameters mix symbols and arrays; expected one kind")
    return mx.sym if kinds == {"sym"} else mx.nd


def sum_right_most(x, ndim):
    """The sum of ``x`` over its right-most ``ndim`` axes (``x`` itself for ndim 0)."""
    if ndim == 0:
        return x
    return x.sum(axis=tuple(range(-ndim, 0)))


def _clip_prob(prob):
    eps = float(_onp.finfo("float32").eps)
    return _ndx().np.clip(prob, eps, 1 - eps)


def prob2logit(prob, binary=True, F=None):  # noqa: N803 (MXNet's keyword)
    """log(p / (1 - p)) for binary probabilities, log(p) for categorical ones (clipped
    away from 0 and 1 by float32's eps, as MXNet does)."""
    np = _ndx().np
    clipped = _clip_prob(prob)
    if binary:
        return np.log(clipped) - np.log1p(-clipped)
    return np.log(clipped)


def logit2prob(logit, binary=True, F=None):  # noqa: N803
    """sigmoid(logit) for binary logits, softmax over the last axis for categorical ones."""
    npx = _ndx().npx
    return npx.sigmoid(logit) if binary else npx.softmax(logit, axis=-1)


class _CachedProperty:
    """A property computed once per instance, then stored on it (so it can also be set)."""

    def __init__(self, func):
        self._func = func
        update_wrapper(self, func)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self._func(instance)
        setattr(instance, self._func.__name__, value)
        return value


cached_property = _CachedProperty


def as_size_tuple(size, owner="sample"):
    """``size`` (None, an int or a sequence of ints) as a tuple; None gives ()."""
    if size is None:
        return ()
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        size = (size,)
    try:
        size = tuple(size)
    except TypeError:
        raise TypeError(f"{owner}: size must be None, an int or a tuple of ints, "
                        f"got {type(size).__name__}") from None
    for s in size:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 0:
            raise ValueError(f"{owner}: size must hold non-negative ints, got {size!r}")
    return tuple(int(s) for s in size)


def sample_n_shape_converter(size):
    """``size`` of ``sample_n`` as a tuple of batch dimensions (None and () give ())."""
    return as_size_tuple(size, "sample_n")


def _shape_of(value):
    if isinstance(value, numbers.Number):
        return ()
    return tuple(value.shape)


def batch_shape_of(*params):
    """The broadcast shape of the parameters (Python scalars count as 0-d)."""
    return tuple(_onp.broadcast_shapes(*[_shape_of(p) for p in params])) if params else ()


def constraint_check(F=None):  # noqa: N803
    """MXNet's ``constraint_check(F)``: returns npx.constraint_check."""
    return _ndx().npx.constraint_check


_NO_VALUE = object()


def _special(name):
    def fn(x=_NO_VALUE):
        mx = _ndx()
        if x is _NO_VALUE or isinstance(x, types.ModuleType):
            # MXNet's factory forms: gammaln() (2.0) or gammaln(F) (its F-era releases)
            # return the function itself, as in ``lgamma = gammaln(); lgamma(x)``.
            return fn
        if isinstance(x, numbers.Number):  # (a Python scalar stays one, computed in float64)
            return getattr(mx.npx, name)(mx.np.array(float(x), dtype="float64")).item()
        return getattr(mx.npx, name)(x)

    fn.__name__ = name
    fn.__doc__ = (f"npx.{name} of an array; a float for a Python scalar. Called with no "
                  f"value (or with MXNet's F), returns itself, as MXNet's {name}() does.")
    return fn


gammaln = _special("gammaln")
digamma = _special("digamma")
erf = _special("erf")
erfinv = _special("erfinv")
