"""The Pareto (type I) distribution."""
import math

from . import constraint
from ._continuous_helpers import draw_shape
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx

__all__ = ["Pareto"]


class Pareto(Distribution):
    """Pareto(alpha, scale): cdf 1 - (scale / x)^alpha on x >= scale (arrays or scalars,
    broadcast together).

    Parameters
    ----------
    alpha : array or float
        The shape (tail index), positive.
    scale : array or float, default 1
        The scale, the lower end of the support; positive.
    """

    has_grad = True
    arg_constraints = {"scale": constraint.Positive(), "alpha": constraint.Positive()}

    def __init__(self, alpha, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.alpha = alpha
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @constraint.dependent_property
    def support(self):
        return constraint.GreaterThanEq(self.scale)

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        a = self.alpha
        log_density = np.log(a) + a * np.log(self.scale) - (a + 1) * np.log(value)
        return np.where(value < self.scale, -math.inf, log_density)

    def cdf(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        return -np.expm1(self.alpha * np.log(self.scale / np.maximum(value, self.scale)))

    def icdf(self, value):
        np = _ndx().np
        return self.scale * np.exp(-np.log1p(-value) / self.alpha)

    def sample(self, size=None):
        # scale * exp(E / alpha) for E standard exponential: gradients reach both parameters.
        np = _ndx().np
        e = np.random.standard_exponential(draw_shape(self, size))
        return self.scale * np.exp(e / self.alpha)

    @property
    def mean(self):
        """alpha scale / (alpha - 1) where alpha > 1, infinite elsewhere."""
        np = _ndx().np
        a = self.alpha
        return np.where(a > 1, a * self.scale / (a - 1), math.inf)

    @property
    def variance(self):
        """scale^2 alpha / ((alpha - 1)^2 (alpha - 2)) where alpha > 2, infinite elsewhere."""
        np = _ndx().np
        a = self.alpha
        return np.where(a > 2, self.scale ** 2 * a / ((a - 1) ** 2 * (a - 2)), math.inf)

    def entropy(self):
        return _ndx().np.log(self.scale / self.alpha) + 1 / self.alpha + 1


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    """Infinite where p.scale < q.scale (p has mass where q has none)."""
    np = _ndx().np
    alpha_ratio = q.alpha / p.alpha
    result = (q.alpha * np.log(p.scale / q.scale) - np.log(alpha_ratio) + alpha_ratio - 1)
    return np.where(p.scale < q.scale, math.inf, result)
