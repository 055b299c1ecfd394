"""The two-parameter Weibull distribution."""

from . import constraint
from ._continuous_helpers import draw_shape, log_density_on, positive_part, xlogy
from .distribution import Distribution
from .utils import _ndx, gammaln

__all__ = ["Weibull"]

_EULER_GAMMA = 0.5772156649015329


class Weibull(Distribution):
    """Weibull(concentration, scale): cdf 1 - exp(-(x / scale)^concentration) on x >= 0
    (arrays or scalars, broadcast together).

    Parameters
    ----------
    concentration : array or float
        The shape parameter k, positive.
    scale : array or float, default 1
        The scale parameter lambda, positive.
    """

    has_grad = True
    support = constraint.Positive()
    arg_constraints = {"scale": constraint.Positive(), "concentration": constraint.Positive()}

    def __init__(self, concentration, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.concentration = concentration
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        k, scale = self.concentration, self.scale

        def log_density(x):
            z = x / scale
            return np.log(k / scale) + xlogy(k - 1, z) - z ** k

        # (-inf below 0 rather than NaN; the density at 0 itself stays as it is)
        return log_density_on(value >= 0, value, 1.0, log_density)

    def cdf(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        return -np.expm1(-(positive_part(value) / self.scale) ** self.concentration)

    def icdf(self, value):
        np = _ndx().np
        return self.scale * (-np.log1p(-value)) ** (1 / self.concentration)

    def sample(self, size=None):
        # scale * E^(1 / k) for E standard exponential: gradients reach both parameters.
        np = _ndx().np
        e = np.random.standard_exponential(draw_shape(self, size))
        return self.scale * e ** (1 / self.concentration)

    @property
    def mean(self):
        return self.scale * _ndx().np.exp(gammaln(1 + 1 / self.concentration))

    @property
    def variance(self):
        np = _ndx().np
        k = self.concentration
        return self.scale ** 2 * (np.exp(gammaln(1 + 2 / k)) - np.exp(2 * gammaln(1 + 1 / k)))

    def entropy(self):
        np = _ndx().np
        k = self.concentration
        return _EULER_GAMMA * (1 - 1 / k) + np.log(self.scale / k) + 1
