"""The half-Cauchy distribution: |X| for X ~ Cauchy(0, scale)."""
import math

from . import constraint
from ._continuous_helpers import constant_over_batch, draw_shape, positive_part
from .distribution import Distribution
from .utils import _ndx

__all__ = ["HalfCauchy"]


class HalfCauchy(Distribution):
    """HalfCauchy(scale): the law of |X| for X ~ Cauchy(0, scale), density
    2 / (pi scale (1 + (x / scale)^2)) on x >= 0. Its mean and variance are infinite.

    Parameters
    ----------
    scale : array or float, default 1
        The scale of the underlying Cauchy distribution, positive.
    """

    has_grad = True
    support = constraint.NonNegative()
    arg_constraints = {"scale": constraint.Positive()}

    def __init__(self, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @property
    def loc(self):
        """The location of the underlying Cauchy distribution: 0."""
        return 0.0

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        log_density = (math.log(2 / math.pi) - np.log(self.scale)
                       - np.log1p((value / self.scale) ** 2))
        return np.where(value < 0, -math.inf, log_density)

    def cdf(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        return (2 / math.pi) * np.arctan(positive_part(value) / self.scale)

    def icdf(self, value):
        np = _ndx().np
        return self.scale * np.tan((math.pi / 2) * value)

    def sample(self, size=None):
        np = _ndx().np
        return self.scale * np.abs(np.random.standard_cauchy(draw_shape(self, size)))

    @property
    def mean(self):
        # (MXNet returns scale * sqrt(2 / pi), the half-normal's mean; the integral diverges)
        return constant_over_batch(self, math.inf, self.scale)

    @property
    def variance(self):
        return constant_over_batch(self, math.inf, self.scale)

    def entropy(self):
        return math.log(2 * math.pi) + _ndx().np.log(self.scale)
