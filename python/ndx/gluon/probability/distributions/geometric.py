"""The geometric distribution (failures before the first success)."""
import math

from . import constraint
from ._discrete import ProbLogitParams, binary_log_probs, float_dtype, sample_shape, softplus
from ._discrete import uniform as _uniform
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx

__all__ = ["Geometric"]


class Geometric(ProbLogitParams, Distribution):
    """Geometric(prob=None, logit=None): the number of failures before the first success
    of independent trials that each succeed with probability ``prob``:
    P(k) = prob (1 - prob)^k for k = 0, 1, ... (scipy.stats.geom counts k + 1).

    Parameters
    ----------
    prob : array or float, optional
        The probability of success of each trial, in (0, 1].
    logit : array or float, optional
        The log-odds of success. Give exactly one of prob and logit.
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the parameter at construction and the values given to log_prob.
    """

    support = constraint.NonNegativeInteger()
    arg_constraints = {"prob": constraint.Interval(0, 1), "logit": constraint.Real()}

    def __init__(self, prob=None, logit=None, F=None, validate_args=None):  # noqa: N803
        self._set_prob_logit("Geometric", prob, logit)
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return 1 / self.prob - 1

    @property
    def variance(self):
        return (1 / self.prob - 1) / self.prob

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        log_p, log_q = binary_log_probs(self)
        # (no mass below 0, where prob (1 - prob)^k would grow past prob)
        return np.where(value < 0, -math.inf, value * log_q + log_p)

    def sample(self, size=None):
        # Inversion: P(K >= k) = (1 - p)^k, so K = floor(log(V) / log(1 - p)) for V uniform
        # on (0, 1]; V = 1 - U keeps log(V) finite.
        np = _ndx().np
        shape = sample_shape("Geometric", size, self._batch_shape())
        _, log_q = binary_log_probs(self)
        noise = np.log1p(-_uniform(shape, float_dtype(self.__dict__[self._given])))
        return np.floor(noise / log_q)

    def entropy(self):
        # The Bernoulli entropy per trial, softplus(logit) - p logit, over the mean number
        # of trials 1 / p.
        logit, prob = self.logit, self.prob
        return (softplus(logit) - prob * logit) / prob


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # log(p / q) + E_p[k] log((1 - p) / (1 - q)), with E_p[k] = (1 - p) / p.
    log_pp, log_pq = binary_log_probs(p)
    log_qp, log_qq = binary_log_probs(q)
    return log_pp - log_qp + p.mean * (log_pq - log_qq)
