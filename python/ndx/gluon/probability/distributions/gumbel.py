"""The Gumbel (type I extreme value, for maxima) distribution."""
import math

from . import constraint
from ._continuous_helpers import draw_shape
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx, gammaln

__all__ = ["Gumbel"]

_EULER_GAMMA = 0.5772156649015329


class Gumbel(Distribution):
    """Gumbel(loc, scale): cdf exp(-exp(-(x - loc) / scale)) (arrays or scalars, broadcast
    together).

    Parameters
    ----------
    loc : array or float
        The location (the mode).
    scale : array or float, default 1
        The scale, positive.
    """

    has_grad = True
    support = constraint.Real()
    arg_constraints = {"loc": constraint.Real(), "scale": constraint.Positive()}

    def __init__(self, loc, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.loc = loc
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        z = (value - self.loc) / self.scale
        return -z - np.exp(-z) - np.log(self.scale)

    def cdf(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        return np.exp(-np.exp(-(value - self.loc) / self.scale))

    def icdf(self, value):
        np = _ndx().np
        return self.loc - self.scale * np.log(-np.log(value))

    def sample(self, size=None):
        # loc + scale * (a standard draw): gradients reach loc and scale.
        np = _ndx().np
        return self.loc + self.scale * np.random.gumbel(0.0, 1.0, draw_shape(self, size))

    @property
    def mean(self):
        return self.loc + _EULER_GAMMA * self.scale

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return (math.pi ** 2 / 6) * self.scale ** 2

    def entropy(self):
        return _ndx().np.log(self.scale) + (1 + _EULER_GAMMA)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    np = _ndx().np
    ratio = p.scale / q.scale
    loc_q = q.loc / q.scale
    loc_p = p.loc / q.scale
    t1 = -np.log(ratio) - loc_q + loc_p
    # E_p[exp(-(x - q.loc) / q.scale)] = exp((q.loc - p.loc) / q.scale) * Gamma(1 + ratio)
    t3 = np.exp(loc_q - loc_p + gammaln(1 + ratio))
    return t1 + ratio * _EULER_GAMMA + t3 - (1 + _EULER_GAMMA)
