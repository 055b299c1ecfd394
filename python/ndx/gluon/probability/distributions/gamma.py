"""The gamma distribution (shape / scale parameterization)."""
from . import constraint
from ._continuous_helpers import draw_shape, log_density_on, xlogy
from .divergence import register_kl
from .exp_family import ExponentialFamily
from .utils import _ndx, digamma, gammaln

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma(shape, scale): density x^(shape - 1) exp(-x / scale) / (Gamma(shape)
    scale^shape) on x >= 0.

    Parameters
    ----------
    shape : array or float
        The shape (often k or alpha), positive.
    scale : array or float, default 1
        The scale (often theta), 1 / rate; positive.
    """

    # (np.random.gamma carries no gradient to the shape; samples are draws * scale.)
    has_grad = False
    support = constraint.NonNegative()
    arg_constraints = {"shape": constraint.Positive(), "scale": constraint.Positive()}

    def __init__(self, shape, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.shape = shape
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        k, theta = self.shape, self.scale

        def log_density(x):
            return xlogy(k - 1, x) - x / theta - gammaln(k) - k * np.log(theta)

        # (-inf below 0 rather than the NaN of a log of a negative number)
        return log_density_on(value >= 0, value, 1.0, log_density)

    def sample(self, size=None):
        np = _ndx().np
        return np.random.gamma(self.shape, 1.0, draw_shape(self, size)) * self.scale

    @property
    def mean(self):
        return self.shape * self.scale

    @property
    def variance(self):
        return self.shape * self.scale ** 2

    def entropy(self):
        np = _ndx().np
        k = self.shape
        return k + np.log(self.scale) + gammaln(k) + (1 - k) * digamma(k)

    @property
    def _natural_params(self):
        return (self.shape - 1, -1 / self.scale)

    def _log_normalizer(self, x, y):
        return gammaln(x + 1) + (x + 1) * _ndx().np.log(-1 / y)

    @property
    def _mean_carrier_measure(self):
        return 0


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    np = _ndx().np
    return (q.shape * np.log(q.scale / p.scale) + gammaln(q.shape) - gammaln(p.shape)
            + (p.shape - q.shape) * digamma(p.shape)
            + p.shape * (p.scale / q.scale - 1))
