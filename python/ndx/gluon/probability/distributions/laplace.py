"""The Laplace (double exponential) distribution."""
import math

from . import constraint
from ._continuous_helpers import draw_shape
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale) (arrays or scalars,
    broadcast together).

    Parameters
    ----------
    loc : array or float, default 0
        The mean (and median).
    scale : array or float, default 1
        The scale, positive.
    """

    # Samples are loc + scale * (a standard draw), so gradients reach both parameters.
    has_grad = True
    support = constraint.Real()
    arg_constraints = {"loc": constraint.Real(), "scale": constraint.Positive()}

    def __init__(self, loc=0.0, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.loc = loc
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        return -np.log(2 * self.scale) - np.abs(value - self.loc) / self.scale

    def cdf(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        d = value - self.loc
        return 0.5 - 0.5 * np.sign(d) * np.expm1(-np.abs(d) / self.scale)

    def icdf(self, value):
        np = _ndx().np
        d = value - 0.5
        return self.loc - self.scale * np.sign(d) * np.log1p(-2 * np.abs(d))

    def sample(self, size=None):
        np = _ndx().np
        return self.loc + self.scale * np.random.laplace(0.0, 1.0, draw_shape(self, size))

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    @property
    def variance(self):
        return 2 * self.scale ** 2

    def entropy(self):
        return 1 + _ndx().np.log(2 * self.scale)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    np = _ndx().np
    ratio = p.scale / q.scale
    loc_gap = np.abs(p.loc - q.loc)
    return -np.log(ratio) + loc_gap / q.scale + ratio * np.exp(-loc_gap / p.scale) - 1
