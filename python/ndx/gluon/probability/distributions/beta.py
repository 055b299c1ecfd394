"""The beta distribution on [0, 1]."""
import numpy as _onp

from . import constraint
from ._continuous_helpers import draw_shape, log_density_on, xlog1py, xlogy
from .divergence import register_kl
from .exp_family import ExponentialFamily
from .utils import _ndx, digamma, gammaln

__all__ = ["Beta"]

_EPS = float(_onp.finfo("float32").eps)


class Beta(ExponentialFamily):
    """Beta(alpha, beta): density x^(alpha - 1) (1 - x)^(beta - 1) / B(alpha, beta) on [0, 1].

    Parameters
    ----------
    alpha : array or float
        The first shape parameter, positive.
    beta : array or float
        The second shape parameter, positive.
    """

    has_grad = False
    support = constraint.UnitInterval()
    arg_constraints = {"alpha": constraint.Positive(), "beta": constraint.Positive()}

    def __init__(self, alpha, beta, F=None, validate_args=None):  # noqa: N803
        self.alpha = alpha
        self.beta = beta
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    def _log_beta_fn(self):
        a, b = self.alpha, self.beta
        return gammaln(a) + gammaln(b) - gammaln(a + b)

    def log_prob(self, value):
        value = self._maybe_validate(value)
        a, b = self.alpha, self.beta

        def log_density(x):
            return xlogy(a - 1, x) + xlog1py(b - 1, -x) - self._log_beta_fn()

        # (-inf outside [0, 1] rather than NaN)
        return log_density_on((value >= 0) & (value <= 1), value, 0.5, log_density)

    def sample(self, size=None):
        # X / (X + Y) for X ~ Gamma(alpha), Y ~ Gamma(beta), kept inside (0, 1) so that
        # log_prob of a sample stays finite.
        np = _ndx().np
        shape = draw_shape(self, size)
        x = np.random.gamma(self.alpha, 1.0, shape)
        y = np.random.gamma(self.beta, 1.0, shape)
        return np.clip(x / (x + y), _EPS, 1 - _EPS)

    @property
    def mean(self):
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self):
        a, b = self.alpha, self.beta
        return a * b / ((a + b) ** 2 * (a + b + 1))

    def entropy(self):
        a, b = self.alpha, self.beta
        return (self._log_beta_fn() - (a - 1) * digamma(a) - (b - 1) * digamma(b)
                + (a + b - 2) * digamma(a + b))

    @property
    def _natural_params(self):
        return (self.alpha, self.beta)

    def _log_normalizer(self, x, y):
        return gammaln(x) + gammaln(y) - gammaln(x + y)

    @property
    def _mean_carrier_measure(self):
        # log h(x) = -log x - log(1 - x); E[log x] = digamma(a) - digamma(a + b)
        a, b = self.alpha, self.beta
        return 2 * digamma(a + b) - digamma(a) - digamma(b)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.alpha + p.beta
    sum_q = q.alpha + q.beta
    t1 = gammaln(q.alpha) + gammaln(q.beta) + gammaln(sum_p)
    t2 = gammaln(p.alpha) + gammaln(p.beta) + gammaln(sum_q)
    t3 = (p.alpha - q.alpha) * digamma(p.alpha) + (p.beta - q.beta) * digamma(p.beta)
    return t1 - t2 + t3 + (sum_q - sum_p) * digamma(sum_p)
