"""The normal (Gaussian) distribution."""
import math

from . import constraint
from .divergence import register_kl
from .exp_family import ExponentialFamily
from .utils import _ndx, erf, erfinv

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """Normal(loc, scale): mean ``loc``, standard deviation ``scale`` (arrays or scalars,
    broadcast together)."""

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
        return (-((value - self.loc) ** 2) / (2 * self.variance) - np.log(self.scale)
                - 0.5 * math.log(2 * math.pi))

    def sample(self, size=None):
        # np.random.normal is reparameterized: its gradient reaches loc and scale.
        return _ndx().np.random.normal(self.loc, self.scale, size)

    def cdf(self, value):
        value = self._maybe_validate(value)
        return 0.5 * (1 + erf((value - self.loc) / (math.sqrt(2) * self.scale)))

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + _ndx().np.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale ** 2, -0.5 / self.scale ** 2)

    def _log_normalizer(self, x, y):
        np = _ndx().np
        return -0.25 * x ** 2 / y + 0.5 * np.log(-math.pi / y)

    @property
    def _mean_carrier_measure(self):
        return 0


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    np = _ndx().np
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - np.log(var_ratio))
