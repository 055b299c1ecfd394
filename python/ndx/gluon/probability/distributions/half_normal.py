"""The half-normal distribution: |X| for X ~ Normal(0, scale)."""
import math

from . import constraint
from ._continuous_helpers import draw_shape, positive_part
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx, erf, erfinv

__all__ = ["HalfNormal"]


class HalfNormal(Distribution):
    """HalfNormal(scale): the law of |X| for X ~ Normal(0, scale), density
    sqrt(2 / pi) / scale * exp(-x^2 / (2 scale^2)) on x >= 0.

    Parameters
    ----------
    scale : array or float, default 1
        The scale of the underlying normal distribution, positive.
    """

    has_grad = True
    support = constraint.NonNegative()
    arg_constraints = {"scale": constraint.Positive()}

    def __init__(self, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @property
    def loc(self):
        """The location of the underlying normal distribution: 0."""
        return 0.0

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        log_density = (0.5 * math.log(2 / math.pi) - np.log(self.scale)
                       - value ** 2 / (2 * self.scale ** 2))
        return np.where(value < 0, -math.inf, log_density)

    def cdf(self, value):
        value = self._maybe_validate(value)
        return erf(positive_part(value) / (math.sqrt(2) * self.scale))

    def icdf(self, value):
        return math.sqrt(2) * self.scale * erfinv(value)

    def sample(self, size=None):
        # scale * |standard normal|: gradients reach scale.
        np = _ndx().np
        return self.scale * np.abs(np.random.standard_normal(draw_shape(self, size)))

    @property
    def mean(self):
        return math.sqrt(2 / math.pi) * self.scale

    @property
    def variance(self):
        return (1 - 2 / math.pi) * self.scale ** 2

    def entropy(self):
        return 0.5 * math.log(math.pi / 2) + 0.5 + _ndx().np.log(self.scale)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    np = _ndx().np
    var_ratio = (p.scale / q.scale) ** 2
    return 0.5 * (var_ratio - 1 - np.log(var_ratio))
