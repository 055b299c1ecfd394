"""The categorical distribution over class indices 0 .. num_events - 1."""
from . import constraint
from ._discrete import (
    ProbLogitParams,
    broadcast_params,
    broadcast_shapes,
    check_num_events,
    float_dtype,
    sample_shape,
    zero_where_absent,
)
from ._discrete import uniform as _uniform
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx, as_size_tuple

__all__ = ["Categorical"]


def log_softmax(logit):
    """The normalized log-probabilities of (possibly unnormalized) logits, last axis."""
    return _ndx().npx.log_softmax(logit, axis=-1)


def gumbel_argmax(logit, shape):
    """Class indices of ``shape``: argmax over the last axis of logit plus Gumbel noise
    (the Gumbel-max trick), the noise -log(-log(u)) made from scalar-bounded uniforms."""
    np = _ndx().np
    noise = -np.log(-np.log(_uniform(shape + (logit.shape[-1],), float_dtype(logit))))
    return np.argmax(logit + noise, axis=-1)


class Categorical(ProbLogitParams, Distribution):
    """Categorical(num_events, prob=None, logit=None): class ``k`` with probability
    ``prob[..., k]``. Samples are int64 class indices; the batch shape is the parameter's
    shape less its last axis (the events).

    Parameters
    ----------
    num_events : int
        The number of classes; the last axis of prob / logit must have this length.
    prob : array, optional
        The probabilities of the classes over the last axis (on the simplex).
    logit : array, optional
        Log-probabilities of the classes, up to a constant (normalized by a softmax).
        Give exactly one of prob and logit.
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the parameter at construction and the values given to log_prob.
    """

    _binary = False
    has_enumerate_support = True
    arg_constraints = {"prob": constraint.Simplex(), "logit": constraint.Real()}

    def __init__(self, num_events, prob=None, logit=None, F=None,  # noqa: N803
                 validate_args=None):
        self._set_prob_logit("Categorical", prob, logit)
        self.num_events = check_num_events("Categorical", num_events,
                                           self.__dict__[self._given])
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    @constraint.dependent_property
    def support(self):
        return constraint.IntegerInterval(0, self.num_events - 1)

    def _batch_shape(self):
        return tuple(self.__dict__[self._given].shape[:-1])

    def _event_shape(self):
        return ()

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        if not hasattr(value, "shape"):
            value = np.array(value)
        log_p = log_softmax(self.logit)
        index = np.expand_dims(value, -1).astype("int64")
        shape = broadcast_shapes(tuple(index.shape[:-1]), tuple(log_p.shape[:-1]))
        if shape is None:
            raise ValueError(f"Categorical.log_prob: a value of shape {tuple(value.shape)} "
                             f"does not broadcast with the batch shape {self._batch_shape()}")
        log_p = np.broadcast_to(log_p, shape + (self.num_events,))
        index = np.broadcast_to(index, shape + (1,))
        return np.take_along_axis(log_p, index, axis=-1)[..., 0]

    def sample(self, size=None):
        shape = sample_shape("Categorical", size, self._batch_shape())
        return gumbel_argmax(self.logit, shape)

    def enumerate_support(self):
        """Every class index, of shape (num_events,) + batch_shape: entry k holds k."""
        np = _ndx().np
        batch = self._batch_shape()
        values = np.arange(self.num_events).reshape((self.num_events,) + (1,) * len(batch))
        return np.broadcast_to(values, (self.num_events,) + batch)

    def entropy(self):
        # (classes of probability 0, logit -inf, add 0)
        prob = self.prob
        return -(prob * zero_where_absent(prob, log_softmax(self.logit))).sum(-1)

    def broadcast_to(self, batch_shape):
        batch_shape = as_size_tuple(batch_shape, "Categorical.broadcast_to")
        return broadcast_params(self, ("prob", "logit"), batch_shape + (self.num_events,))


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    # (classes p cannot draw add 0, even where q cannot draw them either)
    prob = p.prob
    log_ratio = log_softmax(p.logit) - log_softmax(q.logit)
    return (prob * zero_where_absent(prob, log_ratio)).sum(-1)
