"""The relaxed Bernoulli (binary Concrete) distribution."""
from . import constraint
from ._discrete import EPS, ProbLogitParams, as_param, float_dtype, sample_shape, softplus
from ._discrete import uniform as _uniform
from .distribution import Distribution
from .utils import _ndx

__all__ = ["RelaxedBernoulli"]


class RelaxedBernoulli(ProbLogitParams, Distribution):
    """RelaxedBernoulli(T=None, prob=None, logit=None): the binary Concrete (Gumbel-sigmoid)
    distribution on (0, 1), a reparameterized relaxation of Bernoulli(prob) at temperature
    ``T``: X = sigmoid((logit + L) / T) with L standard logistic. As T falls to 0, X tends
    to a Bernoulli(prob) draw.

    Parameters
    ----------
    T : array or float
        The temperature, > 0.
    prob : array or float, optional
        The probability of the Bernoulli being relaxed, in [0, 1].
    logit : array or float, optional
        Its log-odds. Give exactly one of prob and logit.
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the parameters at construction and the values given to log_prob / cdf.
    """

    has_grad = True
    support = constraint.OpenInterval(0, 1)
    arg_constraints = {"T": constraint.Positive(), "prob": constraint.Interval(0, 1),
                       "logit": constraint.Real()}

    def __init__(self, T=None, prob=None, logit=None, F=None, validate_args=None):  # noqa: N803
        if T is None:
            raise ValueError("RelaxedBernoulli: expected the temperature T (> 0), got None")
        self.T = as_param("RelaxedBernoulli", "T", T)
        self._set_prob_logit("RelaxedBernoulli", prob, logit)
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        # Y = logit(X) is logistic with location logit / T and scale 1 / T; with
        # d = logit - T Y, log f_Y = log T + d - 2 softplus(d), and the change of variables
        # X = sigmoid(Y) adds -log(X (1 - X)).
        np = _ndx().np
        value = self._maybe_validate(value)
        log_x, log_1mx = np.log(value), np.log1p(-value)
        diff = self.logit - self.T * (log_x - log_1mx)
        return np.log(self.T) + diff - 2 * softplus(diff) - log_x - log_1mx

    def cdf(self, value):
        # P(X <= x) = P(L <= T logit(x) - logit) = sigmoid(T logit(x) - logit).
        np, npx = _ndx().np, _ndx().npx
        value = self._maybe_validate(value)
        return npx.sigmoid(self.T * (np.log(value) - np.log1p(-value)) - self.logit)

    def icdf(self, value):
        np, npx = _ndx().np, _ndx().npx
        return npx.sigmoid((self.logit + np.log(value) - np.log1p(-value)) / self.T)

    def sample(self, size=None):
        """Reparameterized samples: gradients reach the parameters and T."""
        np = _ndx().np
        shape = sample_shape("RelaxedBernoulli", size, self._batch_shape())
        # The logistic noise log(u / (1 - u)) comes from parameter-free uniforms, so the
        # path from the parameters to the sample is differentiable.
        u = np.clip(_uniform(shape, float_dtype(self.T, self.logit)), EPS, 1 - EPS)
        x = self.icdf(u)
        # Keep samples inside the open support where the sigmoid rounds to 0 or 1.
        return np.clip(x, EPS, 1 - EPS)
