"""The Cauchy (Lorentz) distribution."""
import math

from . import constraint
from ._continuous_helpers import constant_over_batch, draw_shape
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy(loc, scale): density 1 / (pi scale (1 + ((x - loc) / scale)^2)) (arrays or
    scalars, broadcast together). Its mean and variance are undefined (NaN).

    Parameters
    ----------
    loc : array or float, default 0
        The mode and median.
    scale : array or float, default 1
        The half width at half maximum, positive.
    """

    has_grad = True
    support = constraint.Real()
    # (MXNet declares scale Real; a scale <= 0 gives no distribution, so it is Positive here)
    arg_constraints = {"loc": constraint.Real(), "scale": constraint.Positive()}

    def __init__(self, loc=0.0, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.loc = loc
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - np.log(self.scale) - np.log1p(z ** 2)

    def cdf(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        return np.arctan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        np = _ndx().np
        return self.loc + self.scale * np.tan(math.pi * (value - 0.5))

    def sample(self, size=None):
        np = _ndx().np
        return self.loc + self.scale * np.random.standard_cauchy(draw_shape(self, size))

    @property
    def mean(self):
        return constant_over_batch(self, math.nan, self.loc, self.scale)

    @property
    def variance(self):
        return constant_over_batch(self, math.nan, self.loc, self.scale)

    def entropy(self):
        return math.log(4 * math.pi) + _ndx().np.log(self.scale)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    np = _ndx().np
    t1 = np.log((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2)
    return t1 - np.log(4 * p.scale * q.scale)
