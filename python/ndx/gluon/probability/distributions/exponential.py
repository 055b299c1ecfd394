"""The exponential distribution, and its KL divergences to Exponential, Gamma, Gumbel and
Normal."""
import math

from . import constraint
from ._continuous_helpers import draw_shape, positive_part
from .divergence import register_kl
from .exp_family import ExponentialFamily
from .gamma import Gamma
from .gumbel import Gumbel
from .normal import Normal
from .utils import _ndx, gammaln

__all__ = ["Exponential"]

_EULER_GAMMA = 0.5772156649015329


class Exponential(ExponentialFamily):
    """Exponential(scale): density exp(-x / scale) / scale on x >= 0.

    Parameters
    ----------
    scale : array or float, default 1
        The scale (the mean), 1 / rate; positive.
    """

    has_grad = True
    support = constraint.NonNegative()
    arg_constraints = {"scale": constraint.Positive()}

    def __init__(self, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @property
    def rate(self):
        """1 / scale."""
        return 1 / self.scale

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        rate = self.rate
        return np.where(value < 0, -math.inf, np.log(rate) - rate * value)

    def cdf(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        return -np.expm1(-self.rate * positive_part(value))

    def icdf(self, value):
        return -self.scale * _ndx().np.log1p(-value)

    def sample(self, size=None):
        # scale * (a standard draw): gradients reach scale.
        np = _ndx().np
        return self.scale * np.random.standard_exponential(draw_shape(self, size))

    @property
    def mean(self):
        return self.scale

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def entropy(self):
        return 1.0 + _ndx().np.log(self.scale)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -_ndx().np.log(-x)

    @property
    def _mean_carrier_measure(self):
        return 0


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = p.scale / q.scale
    return -_ndx().np.log(ratio) + ratio - 1


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    np = _ndx().np
    ratio = q.scale / p.scale
    loc_ratio = q.loc / q.scale
    t1 = np.log(ratio) - 1
    # E_p[exp(-x / q.scale)] = q.scale / (q.scale + p.scale)
    t2 = np.exp(loc_ratio) * ratio / (ratio + 1)
    return t1 - loc_ratio + t2 + 1 / ratio


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    np = _ndx().np
    var = q.scale ** 2
    t1 = 0.5 * np.log(2 * math.pi * var / p.scale ** 2)
    # E_p[(x - loc)^2] / 2 = scale^2 - loc scale + loc^2 / 2
    t2 = p.scale ** 2 - q.loc * p.scale + 0.5 * q.loc ** 2
    return t1 - 1 + t2 / var


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    np = _ndx().np
    ratio = p.scale / q.scale
    # E_p[log x] = log(p.scale) - euler_gamma
    return (-q.shape * np.log(ratio) + ratio + gammaln(q.shape)
            + q.shape * _EULER_GAMMA - (1 + _EULER_GAMMA))
