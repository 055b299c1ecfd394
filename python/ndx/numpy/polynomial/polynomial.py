"""NumPy's numpy.polynomial.polynomial over ndx arrays: power series, coefficients lowest
degree first (numpy.poly1d and np.polyval have them highest first)."""
import numpy as _onp

import ndx.numpy as _np

from . import _series
from . import polyutils as pu
from ._polybase import ABCPolyBase

__all__ = [
    "polyzero", "polyone", "polyx", "polydomain", "polyline", "polyadd", "polysub",
    "polymulx", "polymul", "polydiv", "polypow", "polyval", "polyvalfromroots", "polyder",
    "polyint", "polyfromroots", "polyvander", "polyfit", "polytrim", "polyroots", "Polynomial",
    "polyval2d", "polyval3d", "polygrid2d", "polygrid3d", "polyvander2d", "polyvander3d",
    "polycompanion"]


def _polydiv(c1, c2):
    """NumPy's polydiv elimination (c1 at least as long as c2, c2 of length 2 or more)."""
    lc1, lc2 = len(c1), len(c2)
    scl = c2[-1]
    c2 = c2[:-1] / scl
    i, j = lc1 - lc2, lc1 - 1
    while i >= 0:
        c1 = _np.concatenate([c1[:i], c1[i:j] - c2 * c1[j], c1[j:]])
        i -= 1
        j -= 1
    return c1[j + 1:] / scl, pu.trimseq(c1[:j + 1])


_B = _series.Basis("poly", alpha=lambda k: 1, beta=lambda k: 0, gamma=lambda k: 0,
                   line=lambda off, scl: [off, scl], flip_companion=False)
_B.mul_impl = _np.convolve
_B.div_impl = _polydiv
_B.pow_mul = _np.convolve
_f = _series.make_functions(_B, "power")

polydomain = _np.asarray(_onp.array([-1., 1.]))
polyzero = _np.asarray(_onp.array([0]))
polyone = _np.asarray(_onp.array([1]))
polyx = _np.asarray(_onp.array([0, 1]))

polyline = _f["polyline"]
polyadd = _f["polyadd"]
polysub = _f["polysub"]
polymulx = _f["polymulx"]
polymul = _f["polymul"]
polydiv = _f["polydiv"]
polypow = _f["polypow"]
polyval = _f["polyval"]
polyval2d = _f["polyval2d"]
polyval3d = _f["polyval3d"]
polygrid2d = _f["polygrid2d"]
polygrid3d = _f["polygrid3d"]
polyder = _f["polyder"]
polyint = _f["polyint"]
polyfromroots = _f["polyfromroots"]
polyvander = _f["polyvander"]
polyvander2d = _f["polyvander2d"]
polyvander3d = _f["polyvander3d"]
polyfit = _f["polyfit"]
polycompanion = _f["polycompanion"]
polyroots = _f["polyroots"]
polytrim = pu.trimcoef


def polyvalfromroots(x, r, tensor=True):
    """The polynomial with roots r evaluated at x: prod(x - r) along r's first axis."""
    r = pu._series(r)
    if isinstance(x, (tuple, list)):
        x = pu._to_nd(x)
    elif isinstance(x, (_onp.ndarray, _onp.generic)):
        x = _np.asarray(x)
    if isinstance(x, _np.ndarray):
        if tensor:
            r = _np.reshape(r, tuple(r.shape) + (1,) * x.ndim)
        elif x.ndim >= r.ndim:
            raise ValueError("[polyvalfromroots] x.ndim must be < r.ndim when tensor == False")
    return _np.prod(x - r, axis=0)


class Polynomial(ABCPolyBase):
    """A power series: Polynomial([1, 2, 3]) is 1 + 2x + 3x**2 (on domain, mapped onto
    window before evaluation)."""

    _add = staticmethod(polyadd)
    _sub = staticmethod(polysub)
    _mul = staticmethod(polymul)
    _div = staticmethod(polydiv)
    _pow = staticmethod(polypow)
    _val = staticmethod(polyval)
    _int = staticmethod(polyint)
    _der = staticmethod(polyder)
    _fit = staticmethod(polyfit)
    _line = staticmethod(polyline)
    _roots = staticmethod(polyroots)
    _fromroots = staticmethod(polyfromroots)

    domain = _np.asarray(_onp.array([-1., 1.]))
    window = _np.asarray(_onp.array([-1., 1.]))
    basis_name = None

    @classmethod
    def _str_term_unicode(cls, i, arg_str):
        if i == "1":
            return f"·{arg_str}"
        return f"·{arg_str}{i.translate(cls._superscript_mapping)}"

    @staticmethod
    def _str_term_ascii(i, arg_str):
        if i == "1":
            return f" {arg_str}"
        return f" {arg_str}**{i}"

    @staticmethod
    def _repr_latex_term(i, arg_str, needs_parens):
        if needs_parens:
            arg_str = rf"\left({arg_str}\right)"
        if i == 0:
            return "1"
        if i == 1:
            return arg_str
        return f"{arg_str}^{{{i}}}"
