"""The negative binomial distribution."""
from . import constraint
from ._discrete import ProbLogitParams, as_param, binary_log_probs, float_dtype, sample_shape
from .distribution import Distribution
from .utils import _ndx, gammaln, logit2prob

__all__ = ["NegativeBinomial"]


class NegativeBinomial(ProbLogitParams, Distribution):
    """NegativeBinomial(n, prob=None, logit=None): the number of successes (trials that
    give 1, each with probability ``prob``) before the ``n``-th failure.

    P(k) = C(k + n - 1, k) prob^k (1 - prob)^n, mean n prob / (1 - prob) = n exp(logit),
    variance n prob / (1 - prob)^2; scipy.stats.nbinom(n, 1 - prob) is the same law.

    Parameters
    ----------
    n : array or float
        The number of failures to stop at, > 0 (need not be whole).
    prob : array or float, optional
        The probability of success (1) of each trial, in [0, 1).
    logit : array or float, optional
        The log-odds of success. Give exactly one of prob and logit.
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the parameters at construction and the values given to log_prob.
    """

    support = constraint.NonNegativeInteger()
    arg_constraints = {"n": constraint.Positive(), "prob": constraint.Interval(0, 1),
                       "logit": constraint.Real()}

    def __init__(self, n, prob=None, logit=None, F=None, validate_args=None):  # noqa: N803
        self.n = as_param("NegativeBinomial", "n", n)
        if self.n is None:
            raise ValueError("NegativeBinomial: expected n (the number of failures), got None")
        self._set_prob_logit("NegativeBinomial", prob, logit)
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return self.n * _ndx().np.exp(self.logit)

    @property
    def variance(self):
        return self.n * self.prob / (1 - self.prob) ** 2

    def log_prob(self, value):
        value = self._maybe_validate(value)
        n = self.n
        log_p, log_q = binary_log_probs(self)
        log_binom = gammaln(value + n) - gammaln(value + 1) - gammaln(n)
        return log_binom + value * log_p + n * log_q

    def _failure_prob(self):
        """1 - prob, from the logit when that was given (exact for prob near 1)."""
        return logit2prob(-self.logit) if self._given == "logit" else 1 - self.prob

    def sample(self, size=None):
        # NumPy's negative_binomial(n, p) counts the failures (probability 1 - p each)
        # before the n-th success: with p = 1 - prob that is this count.
        np = _ndx().np
        shape = sample_shape("NegativeBinomial", size, self._batch_shape())
        draws = np.random.negative_binomial(self.n, self._failure_prob(), size=shape)
        return draws.astype(float_dtype(self.n, self.__dict__[self._given]))
