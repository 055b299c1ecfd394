"""NumPy's numpy.polynomial.legendre over ndx arrays: Legendre series ((k+1) P_{k+1} =
(2k+1) x P_k - k P_{k-1}), coefficients lowest degree first."""
import math

from . import _make, _series
from . import polyutils as pu

_B = _series.Basis("leg", alpha=lambda k: (2 * k + 1) / (k + 1), beta=lambda k: 0,
                   gamma=lambda k: k / (k + 1), line=lambda off, scl: [off, scl],
                   log_norm=lambda k: math.log(2 / (2 * k + 1)), symmetric=True)
_g = _make.module_globals(_B, "Legendre", [0, 1], [-1., 1.])
globals().update(_g)
__all__ = [*_g, "Legendre", "leggauss", "legweight"]
leggauss = _make.gauss_function(_B, "Legendre")


def legweight(x):
    """The Legendre weight: 1."""
    x = pu._inexact(pu._to_nd(x))
    return x * 0.0 + 1.0


Legendre = _make.make_class(
    "Legendre", _g, "leg", [-1., 1.], "P",
    "A Legendre series: Legendre([1, 2, 3]) is P_0 + 2 P_1 + 3 P_2.", __name__)
