"""NumPy's numpy.polynomial over ndx arrays: power, Chebyshev, Legendre, Hermite, HermiteE
and Laguerre series (coefficients lowest degree first) and their classes."""
from . import (
    _polybase,
    chebyshev,
    hermite,
    hermite_e,
    laguerre,
    legendre,
    polynomial,
    polyutils,  # noqa: F401
)
from .chebyshev import Chebyshev
from .hermite import Hermite
from .hermite_e import HermiteE
from .laguerre import Laguerre
from .legendre import Legendre
from .polynomial import Polynomial

__all__ = ["set_default_printstyle", "polynomial", "Polynomial", "chebyshev", "Chebyshev",
           "legendre", "Legendre", "hermite", "Hermite", "hermite_e", "HermiteE", "laguerre",
           "Laguerre"]


def set_default_printstyle(style):
    """The default format of str() of the series classes: 'unicode' or 'ascii'."""
    if style not in ("unicode", "ascii"):
        raise ValueError(f"[set_default_printstyle] Unsupported format string '{style}'. "
                         f"Valid options are 'ascii' and 'unicode'")
    _polybase.ABCPolyBase._use_unicode = style == "unicode"
