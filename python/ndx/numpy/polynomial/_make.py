"""Builds the module globals of one orthogonal basis (chebyshev, legendre, ...) from a Basis:
its functions, constants and the conversions to and from the power basis."""
import numpy as _onp

import ndx.numpy as _np

from . import _series
from ._polybase import ABCPolyBase
from .polynomial import _B as _POWER

_FUNCS = ["line", "add", "sub", "mulx", "mul", "div", "pow", "val", "der", "int", "fromroots",
          "vander", "fit", "trim", "roots", "val2d", "val3d", "grid2d", "grid3d", "vander2d",
          "vander3d", "companion"]


def module_globals(b, doc_name, x, domain):
    """name -> object for the basis module of prefix b.prefix (everything but the class)."""
    p = b.prefix
    f = _series.make_functions(b, doc_name)
    g = {p + s: f[p + s] for s in _FUNCS}
    g[p + "domain"] = _np.asarray(_onp.array(domain, dtype="float64"))
    g[p + "zero"] = _np.asarray(_onp.array([0]))
    g[p + "one"] = _np.asarray(_onp.array([1]))
    g[p + "x"] = _np.asarray(_onp.array(x))

    def to_poly(c):
        return _series.to_poly(b, _POWER, c)

    def from_poly(pol):
        return _series.from_poly(b, pol)

    to_poly.__name__ = to_poly.__qualname__ = p + "2poly"
    to_poly.__doc__ = f"The {doc_name} series c as a power series."
    from_poly.__name__ = from_poly.__qualname__ = "poly2" + p
    from_poly.__doc__ = f"The power series pol as a {doc_name} series."
    g[p + "2poly"] = to_poly
    g["poly2" + p] = from_poly
    return g


def gauss_function(b, doc_name):
    def gauss(deg):
        return _series.gauss(b, b.prefix + "gauss", deg)
    gauss.__name__ = gauss.__qualname__ = b.prefix + "gauss"
    gauss.__doc__ = f"(nodes, weights) of Gauss-{doc_name} quadrature of degree deg."
    return gauss


def make_class(name, g, p, domain, basis_name, doc, module, extra=None):
    """The ABCPolyBase subclass of the basis of prefix p (functions from the globals g)."""
    names = {"_add": "add", "_sub": "sub", "_mul": "mul", "_div": "div", "_pow": "pow",
             "_val": "val", "_int": "int", "_der": "der", "_fit": "fit", "_line": "line",
             "_roots": "roots", "_fromroots": "fromroots"}
    attrs = {k: staticmethod(g[p + v]) for k, v in names.items()}
    attrs["domain"] = _np.asarray(_onp.array(domain, dtype="float64"))
    attrs["window"] = _np.asarray(_onp.array(domain, dtype="float64"))
    attrs.update(basis_name=basis_name, __doc__=doc, __module__=module, **(extra or {}))
    return type(name, (ABCPolyBase,), attrs)

