"""NumPy's numpy.polynomial.hermite_e over ndx arrays: probabilists' Hermite series
(He_{k+1} = x He_k - k He_{k-1}), coefficients lowest degree first."""
import math

import ndx.numpy as _np

from . import _make, _series
from . import polyutils as pu

_B = _series.Basis("herme", alpha=lambda k: 1, beta=lambda k: 0, gamma=lambda k: k,
                   line=lambda off, scl: [off, scl],
                   log_norm=lambda k: 0.5 * math.log(2 * math.pi) + math.lgamma(k + 1),
                   symmetric=True)
_g = _make.module_globals(_B, "HermiteE", [0, 1], [-1., 1.])
globals().update(_g)
__all__ = [*_g, "HermiteE", "hermegauss", "hermeweight"]
hermegauss = _make.gauss_function(_B, "HermiteE")


def hermeweight(x):
    """The HermiteE weight exp(-x**2 / 2)."""
    x = pu._inexact(pu._to_nd(x))
    return _np.exp(-.5 * x ** 2)


HermiteE = _make.make_class(
    "HermiteE", _g, "herme", [-1., 1.], "He",
    "A HermiteE series: HermiteE([1, 2, 3]) is He_0 + 2 He_1 + 3 He_2.", __name__)
