"""NumPy's numpy.polynomial.chebyshev over ndx arrays: Chebyshev series of the first kind
(T_0 = 1, T_1 = x, T_{k+1} = 2x T_k - T_{k-1}), coefficients lowest degree first."""
import math

import numpy as _onp

import ndx.numpy as _np

from . import _make, _series
from . import polyutils as pu

_B = _series.Basis("cheb", alpha=lambda k: 2 if k else 1, beta=lambda k: 0,
                   gamma=lambda k: 1 if k else 0, line=lambda off, scl: [off, scl],
                   log_norm=lambda k: math.log(math.pi / 2 if k else math.pi), symmetric=True)
_g = _make.module_globals(_B, "Chebyshev", [0, 1], [-1., 1.])
globals().update(_g)
__all__ = [*_g, "chebpts1", "chebpts2", "Chebyshev", "chebgauss", "chebweight",
           "chebinterpolate"]


def chebweight(x):
    """The Chebyshev weight 1 / sqrt(1 - x**2)."""
    x = pu._inexact(pu._to_nd(x))
    return 1.0 / (_np.sqrt(1.0 + x) * _np.sqrt(1.0 - x))


def chebgauss(deg):
    """(nodes, weights) of Gauss-Chebyshev quadrature of degree deg."""
    ideg = pu._as_int(deg, "deg", "chebgauss")
    if ideg <= 0:
        raise ValueError("[chebgauss] deg must be a positive integer")
    x = _np.cos(math.pi * _np.arange(1, 2 * ideg, 2, dtype="float64") / (2.0 * ideg))
    w = _np.ones((ideg,), dtype="float64") * (math.pi / ideg)
    return x, w


def _npts(npts, least, name):
    n = int(npts)
    if n != npts:
        raise ValueError(f"[{name}] npts must be integer")
    if n < least:
        raise ValueError(f"[{name}] npts must be >= {least}")
    return n


def chebpts1(npts):
    """The Chebyshev points of the first kind (the roots of T_npts), ascending."""
    n = _npts(npts, 1, "chebpts1")
    return _np.sin(0.5 * math.pi / n * _np.arange(-n + 1, n + 1, 2, dtype="float64"))


def chebpts2(npts):
    """The Chebyshev points of the second kind (the extrema of T_(npts-1)), ascending."""
    n = _npts(npts, 2, "chebpts2")
    return _np.cos(_np.linspace(-math.pi, 0, n, dtype="float64"))


def chebinterpolate(func, deg, args=()):
    """The Chebyshev series of degree deg interpolating func(x, *args) at the Chebyshev
    points of the first kind."""
    d = _onp.asarray(deg)
    if d.ndim > 0 or d.dtype.kind not in "iu" or d.size == 0:
        raise TypeError("[chebinterpolate] deg must be an int")
    if d < 0:
        raise ValueError("[chebinterpolate] expected deg >= 0")
    order = int(d) + 1
    xcheb = chebpts1(order)
    yfunc = pu._inexact(pu._to_nd(func(xcheb, *args)))
    m = _g["chebvander"](xcheb, int(d))
    c = _np.tensordot(_np.transpose(m), yfunc, axes=1)
    scale = _np.asarray(_onp.array([1.0 / order] + [1.0 / (0.5 * order)] * (order - 1)))
    return c * (_np.expand_dims(scale, -1) if c.ndim == 2 else scale)


def _interpolate(cls, func, deg, domain=None, args=()):
    """The Chebyshev series of degree deg interpolating func on domain."""
    if domain is None:
        domain = cls.domain
    coef = chebinterpolate(lambda x: func(pu.mapdomain(x, cls.window, domain), *args), deg)
    return cls(coef, domain=domain)


Chebyshev = _make.make_class(
    "Chebyshev", _g, "cheb", [-1., 1.], "T",
    "A Chebyshev series: Chebyshev([1, 2, 3]) is T_0 + 2 T_1 + 3 T_2.", __name__,
    {"interpolate": classmethod(_interpolate)})
