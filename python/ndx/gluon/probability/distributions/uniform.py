"""The continuous uniform distribution, and its KL divergences to Uniform, Normal and
Gumbel."""
import math
import numbers

from . import constraint
from ._continuous_helpers import draw_shape
from .distribution import Distribution
from .divergence import register_kl
from .gumbel import Gumbel
from .normal import Normal
from .utils import _ndx

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform(low, high): constant density 1 / (high - low) on [low, high] (arrays or
    scalars, broadcast together).

    Parameters
    ----------
    low : array or float, default 0
        The lower end of the support.
    high : array or float, default 1
        The upper end of the support; with validate_args it must exceed ``low``.
    """

    # ndx's np.random.uniform carries gradients to low and high (MXNet's backend did not).
    has_grad = True
    arg_constraints = {"low": constraint.Real(), "high": constraint.Real()}

    def __init__(self, low=0.0, high=1.0, F=None, validate_args=None):  # noqa: N803
        self.low = low
        self.high = high
        super().__init__(F=F, event_dim=0, validate_args=validate_args)
        if self._validate_args:
            self._check_order()

    def _check_order(self):
        """high > low, checked on whichever of the two is an array (so the check stays a
        node of a hybridized graph)."""
        name = type(self).__name__
        if isinstance(self.high, numbers.Number) and not isinstance(self.low, numbers.Number):
            self.low = constraint.LessThan(self.high).check(self.low, f"{name}: low")
        else:
            self.high = constraint.GreaterThan(self.low).check(self.high, f"{name}: high")

    @constraint.dependent_property
    def support(self):
        return constraint.Interval(self.low, self.high)

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        inside = (value >= self.low) & (value <= self.high)
        return np.where(inside, -np.log(self.high - self.low), -math.inf)

    def cdf(self, value):
        value = self._maybe_validate(value)
        return _ndx().np.clip((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value):
        return self.low + value * (self.high - self.low)

    def sample(self, size=None):
        # (an explicit size: with scalar bounds and size None np.random returns a scalar)
        return _ndx().np.random.uniform(self.low, self.high, draw_shape(self, size))

    @property
    def mean(self):
        return (self.low + self.high) / 2

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def entropy(self):
        return _ndx().np.log(self.high - self.low)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    """log of the ratio of the widths; infinite where q does not cover p's support."""
    np = _ndx().np
    result = np.log((q.high - q.low) / (p.high - p.low))
    return np.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    np = _ndx().np
    width = p.high - p.low
    t1 = np.log(math.sqrt(2 * math.pi) * q.scale / width)
    # E_p[(x - loc)^2] = width^2 / 12 + (midpoint - loc)^2
    t2 = width ** 2 / 12 + ((p.high + p.low) / 2 - q.loc) ** 2
    return t1 + t2 / (2 * q.scale ** 2)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    np = _ndx().np
    ratio = q.scale / (p.high - p.low)
    z_high = (p.high - q.loc) / q.scale
    z_low = (p.low - q.loc) / q.scale
    # -H(p) - E_p[log q(x)], with E_p[z] the mean of z_low, z_high and E_p[exp(-z)] in closed form
    t1 = np.log(ratio) + 0.5 * (z_high + z_low)
    return t1 + ratio * (np.exp(-z_low) - np.exp(-z_high))
