"""The binomial distribution."""
import math

from . import constraint
from ._discrete import (
    ProbLogitParams,
    binary_log_probs,
    broadcast_shapes,
    check_count,
    float_dtype,
    sample_shape,
)
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx, gammaln

__all__ = ["Binomial"]


class Binomial(ProbLogitParams, Distribution):
    """Binomial(n=1, prob=None, logit=None): the number of successes in ``n`` independent
    trials that each succeed with probability ``prob``.

    Parameters
    ----------
    n : int
        The number of trials, a non-negative whole Python number.
    prob : array or float, optional
        The probability of success of each trial, in [0, 1].
    logit : array or float, optional
        The log-odds of success. Give exactly one of prob and logit.
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the parameter at construction and the values given to log_prob.
    """

    arg_constraints = {"prob": constraint.Interval(0, 1), "logit": constraint.Real()}

    def __init__(self, n=1, prob=None, logit=None, F=None, validate_args=None):  # noqa: N803
        self.n = check_count("Binomial", "n", n)
        self._set_prob_logit("Binomial", prob, logit)
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @constraint.dependent_property
    def support(self):
        return constraint.IntegerInterval(0, self.n)

    @property
    def mean(self):
        return self.n * self.prob

    @property
    def variance(self):
        return self.n * self.prob * (1 - self.prob)

    def log_prob(self, value):
        value = self._maybe_validate(value)
        n = self.n
        log_p, log_q = binary_log_probs(self)
        log_binom = math.lgamma(n + 1) - gammaln(value + 1) - gammaln(n - value + 1)
        return log_binom + value * log_p + (n - value) * log_q

    def sample(self, size=None):
        np = _ndx().np
        prob = self.prob
        shape = sample_shape("Binomial", size, self._batch_shape())
        return np.random.binomial(self.n, prob, size=shape).astype(float_dtype(prob))

    def entropy(self):
        """The exact sum of -p(k) log p(k) over k = 0 .. n (not in MXNet; n is small)."""
        np = _ndx().np
        batch = self._batch_shape()
        k = np.arange(self.n + 1, dtype=float_dtype(self.prob))
        log_pmf = self.log_prob(k.reshape((self.n + 1,) + (1,) * len(batch)))
        return -(np.exp(log_pmf) * log_pmf).sum(0)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    np = _ndx().np
    if p.n == q.n:
        # n (p log(p / q) + (1 - p) log((1 - p) / (1 - q))): the binomial coefficients cancel.
        log_pp, log_pq = binary_log_probs(p)
        log_qp, log_qq = binary_log_probs(q)
        return p.n * (p.prob * (log_pp - log_qp) + (1 - p.prob) * (log_pq - log_qq))
    if p.n > q.n:
        # p puts mass on counts q cannot reach.
        batch = broadcast_shapes(p._batch_shape(), q._batch_shape())
        return np.full(batch, float("inf"), dtype=float_dtype(p.prob, q.prob))
    # (p.n < q.n): the exact sum over p's support 0 .. p.n.
    batch = broadcast_shapes(p._batch_shape(), q._batch_shape())
    k = np.arange(p.n + 1, dtype=float_dtype(p.prob)).reshape((p.n + 1,) + (1,) * len(batch))
    log_p = p.log_prob(k)
    return (np.exp(log_p) * (log_p - q.log_prob(k))).sum(0)
