"""NumPy's numpy.polynomial.hermite over ndx arrays: physicists' Hermite series (H_{k+1} =
2x H_k - 2k H_{k-1}), coefficients lowest degree first."""
import math

import ndx.numpy as _np

from . import _make, _series
from . import polyutils as pu

_B = _series.Basis("herm", alpha=lambda k: 2, beta=lambda k: 0, gamma=lambda k: 2 * k,
                   line=lambda off, scl: [off, scl / 2],
                   log_norm=lambda k: 0.5 * math.log(math.pi) + k * math.log(2)
                   + math.lgamma(k + 1), symmetric=True)
_g = _make.module_globals(_B, "Hermite", [0, .5], [-1., 1.])
globals().update(_g)
__all__ = [*_g, "Hermite", "hermgauss", "hermweight"]
hermgauss = _make.gauss_function(_B, "Hermite")


def hermweight(x):
    """The Hermite weight exp(-x**2)."""
    x = pu._inexact(pu._to_nd(x))
    return _np.exp(-x ** 2)


Hermite = _make.make_class(
    "Hermite", _g, "herm", [-1., 1.], "H",
    "A Hermite series: Hermite([1, 2, 3]) is H_0 + 2 H_1 + 3 H_2.", __name__)
