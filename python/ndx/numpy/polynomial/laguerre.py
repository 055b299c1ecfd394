"""NumPy's numpy.polynomial.laguerre over ndx arrays: Laguerre series ((k+1) L_{k+1} =
(2k+1 - x) L_k - k L_{k-1}), coefficients lowest degree first."""
import ndx.numpy as _np

from . import _make, _series
from . import polyutils as pu

_B = _series.Basis("lag", alpha=lambda k: -1 / (k + 1), beta=lambda k: (2 * k + 1) / (k + 1),
                   gamma=lambda k: k / (k + 1), line=lambda off, scl: [off + scl, -scl],
                   log_norm=lambda k: 0.0)
_g = _make.module_globals(_B, "Laguerre", [1, -1], [0., 1.])
globals().update(_g)
__all__ = [*_g, "Laguerre", "laggauss", "lagweight"]
laggauss = _make.gauss_function(_B, "Laguerre")


def lagweight(x):
    """The Laguerre weight exp(-x)."""
    x = pu._inexact(pu._to_nd(x))
    return _np.exp(-x)


Laguerre = _make.make_class(
    "Laguerre", _g, "lag", [0., 1.], "L",
    "A Laguerre series: Laguerre([1, 2, 3]) is L_0 + 2 L_1 + 3 L_2.", __name__)
