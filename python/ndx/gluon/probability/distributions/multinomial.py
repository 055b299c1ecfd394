"""The multinomial distribution."""
from . import constraint
from ._discrete import (
    ProbLogitParams,
    broadcast_params,
    check_count,
    check_num_events,
    sample_shape,
    zero_where_absent,
)
from .categorical import gumbel_argmax
from .distribution import Distribution
from .utils import _ndx, as_size_tuple, gammaln

__all__ = ["Multinomial"]


class Multinomial(ProbLogitParams, Distribution):
    """Multinomial(num_events, prob=None, logit=None, total_count=1): the counts of each of
    ``num_events`` classes in ``total_count`` independent categorical draws (event shape
    (num_events,)).

    Parameters
    ----------
    num_events : int
        The number of classes; the last axis of prob / logit must have this length.
    prob : array, optional
        The probabilities of the classes over the last axis (on the simplex).
    logit : array, optional
        Log-probabilities of the classes, up to a constant. Give exactly one of prob and
        logit.
    total_count : int
        The number of draws, a non-negative whole Python number.
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the parameter at construction and the values given to log_prob.
    """

    _binary = False
    arg_constraints = {"prob": constraint.Simplex(), "logit": constraint.Real()}

    def __init__(self, num_events, prob=None, logit=None, total_count=1, F=None,  # noqa: N803
                 validate_args=None):
        self.total_count = check_count("Multinomial", "total_count", total_count)
        self._set_prob_logit("Multinomial", prob, logit)
        self.num_events = check_num_events("Multinomial", num_events,
                                           self.__dict__[self._given])
        super().__init__(F=F, event_dim=1, validate_args=validate_args)

    @constraint.dependent_property
    def support(self):
        return constraint.IntegerInterval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.prob

    @property
    def variance(self):
        return self.total_count * self.prob * (1 - self.prob)

    def log_prob(self, value):
        npx = _ndx().npx
        value = self._maybe_validate(value)
        # log(n! / prod(x_k!)) with n the count of the value itself, as MXNet does.
        log_coef = gammaln(value.sum(-1) + 1) - gammaln(value + 1).sum(-1)
        log_p = npx.log_softmax(self.logit, axis=-1)
        return log_coef + (value * zero_where_absent(value, log_p)).sum(-1)

    def sample(self, size=None):
        """Counts of shape ``size + (num_events,)`` (``size`` defaults to the batch shape):
        one-hot categorical draws, ``total_count`` of them per sample, summed."""
        np, npx = _ndx().np, _ndx().npx
        shape = sample_shape("Multinomial", size, self._batch_shape())
        logit = self.logit
        dtype = logit.dtype if str(logit.dtype).startswith("float") else "float32"
        if self.total_count == 0:
            return np.zeros(shape + (self.num_events,), dtype=dtype)
        indices = gumbel_argmax(logit, (self.total_count,) + shape)
        return npx.one_hot(indices, self.num_events, dtype=dtype).sum(0)

    def sample_n(self, size=None):
        size = as_size_tuple(size, "Multinomial.sample_n")
        return self.sample(size + self._batch_shape())

    def broadcast_to(self, batch_shape):
        batch_shape = as_size_tuple(batch_shape, "Multinomial.broadcast_to")
        return broadcast_params(self, ("prob", "logit"), batch_shape + (self.num_events,))

