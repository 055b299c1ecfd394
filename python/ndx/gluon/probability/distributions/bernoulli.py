"""The Bernoulli distribution."""
from . import constraint
from ._discrete import ProbLogitParams, binary_log_probs, float_dtype, sample_shape, softplus
from ._discrete import uniform as _uniform
from .divergence import register_kl
from .exp_family import ExponentialFamily

__all__ = ["Bernoulli"]


class Bernoulli(ProbLogitParams, ExponentialFamily):
    """Bernoulli(prob=None, logit=None): 1 with probability ``prob``, else 0.

    Parameters
    ----------
    prob : array or float, optional
        The probability of 1, in [0, 1].
    logit : array or float, optional
        The log-odds of 1, log(prob / (1 - prob)). Give exactly one of prob and logit.
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the parameter at construction and the values given to log_prob.
    """

    support = constraint.Boolean()
    arg_constraints = {"prob": constraint.Interval(0, 1), "logit": constraint.Real()}

    def __init__(self, prob=None, logit=None, F=None, validate_args=None):  # noqa: N803
        self._set_prob_logit("Bernoulli", prob, logit)
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return self.prob

    @property
    def variance(self):
        return self.prob * (1 - self.prob)

    def log_prob(self, value):
        value = self._maybe_validate(value)
        log_p, log_q = binary_log_probs(self)
        return value * log_p + (1 - value) * log_q

    def sample(self, size=None):
        # 1 where uniform noise falls below prob: the noise is drawn with scalar bounds, so
        # a hybridized block draws it afresh on every call.
        prob = self.prob
        shape = sample_shape("Bernoulli", size, self._batch_shape())
        dtype = float_dtype(prob)
        return (_uniform(shape, dtype) < prob).astype(dtype)

    def entropy(self):
        # -p log p - (1 - p) log(1 - p) = softplus(logit) - p * logit, finite at p = 0, 1.
        logit = self.logit
        return softplus(logit) - self.prob * logit

    @property
    def _natural_params(self):
        return (self.logit,)

    def _log_normalizer(self, x):
        return softplus(x)

    @property
    def _mean_carrier_measure(self):
        return 0


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    # p log(p / q) + (1 - p) log((1 - p) / (1 - q)) written with logits, which stays finite
    # where a probability is 0 or 1.
    return softplus(q.logit) - softplus(p.logit) + p.prob * (p.logit - q.logit)
