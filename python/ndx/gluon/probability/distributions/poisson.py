"""The Poisson distribution."""
from . import constraint
from ._discrete import as_param, float_dtype, sample_shape
from .divergence import register_kl
from .exp_family import ExponentialFamily
from .utils import _ndx, gammaln

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Poisson(rate=1.0): counts k = 0, 1, ... with P(k) = rate^k exp(-rate) / k!.

    Parameters
    ----------
    rate : array or float
        The mean number of events, > 0.
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the parameter at construction and the values given to log_prob.
    """

    support = constraint.NonNegativeInteger()
    arg_constraints = {"rate": constraint.Positive()}

    def __init__(self, rate=1.0, F=None, validate_args=None):  # noqa: N803
        self.rate = as_param("Poisson", "rate", rate)
        if self.rate is None:
            raise ValueError("Poisson: expected rate (an array or a number > 0), got None")
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def variance(self):
        return self.rate

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        return value * np.log(self.rate) - self.rate - gammaln(value + 1)

    def sample(self, size=None):
        np = _ndx().np
        shape = sample_shape("Poisson", size, self._batch_shape())
        return np.random.poisson(self.rate, size=shape).astype(float_dtype(self.rate))

    def entropy(self):
        # E[log k!] has no closed form (and MXNet's Poisson has no entropy either).
        raise NotImplementedError("Poisson does not implement entropy: it has no closed form")

    @property
    def _natural_params(self):
        return (_ndx().np.log(self.rate),)

    def _log_normalizer(self, x):
        return _ndx().np.exp(x)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    np = _ndx().np
    return p.rate * (np.log(p.rate) - np.log(q.rate)) - (p.rate - q.rate)
