"""The one-hot categorical distribution: a categorical draw as a one-hot vector."""
from . import constraint
from ._discrete import ProbLogitParams, broadcast_params, check_num_events, zero_where_absent
from .categorical import Categorical, _kl_categorical_categorical
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx, as_size_tuple

__all__ = ["OneHotCategorical"]


class OneHotCategorical(ProbLogitParams, Distribution):
    """OneHotCategorical(num_events=None, prob=None, logit=None): the one-hot vector of a
    class drawn with probabilities ``prob`` (event shape (num_events,)).

    Parameters
    ----------
    num_events : int, optional
        The number of classes; None takes the last axis of prob / logit.
    prob : array, optional
        The probabilities of the classes over the last axis (on the simplex).
    logit : array, optional
        Log-probabilities of the classes, up to a constant. Give exactly one of prob and
        logit.
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the parameter at construction and the values given to log_prob.
    """

    _binary = False
    has_enumerate_support = True
    support = constraint.Simplex()
    arg_constraints = {"prob": constraint.Simplex(), "logit": constraint.Real()}

    def __init__(self, num_events=None, prob=None, logit=None, F=None,  # noqa: N803
                 validate_args=None):
        self._set_prob_logit("OneHotCategorical", prob, logit)
        self.num_events = check_num_events("OneHotCategorical", num_events,
                                           self.__dict__[self._given])
        super().__init__(F=F, event_dim=1, validate_args=validate_args)

    @property
    def _categorical(self):
        """The categorical distribution of the class index (sharing the parameters)."""
        return Categorical(self.num_events, validate_args=False,
                           **{self._given: self.__dict__[self._given]})

    @property
    def mean(self):
        return self.prob

    @property
    def variance(self):
        return self.prob * (1 - self.prob)

    def log_prob(self, value):
        value = self._maybe_validate(value)
        log_p = _ndx().npx.log_softmax(self.logit, axis=-1)
        return (value * zero_where_absent(value, log_p)).sum(-1)

    def sample(self, size=None):
        """One-hot samples of shape ``size + (num_events,)`` (``size`` defaults to the
        batch shape)."""
        indices = self._categorical.sample(size)
        return _ndx().npx.one_hot(indices, self.num_events, dtype=self._dtype())

    def sample_n(self, size=None):
        size = as_size_tuple(size, "OneHotCategorical.sample_n")
        return self.sample(size + self._batch_shape())

    def _dtype(self):
        param = self.__dict__[self._given]
        return param.dtype if str(param.dtype).startswith("float") else "float32"

    def enumerate_support(self):
        """The one-hot vector of every class, of shape
        (num_events,) + batch_shape + (num_events,)."""
        indices = self._categorical.enumerate_support()
        return _ndx().npx.one_hot(indices, self.num_events, dtype=self._dtype())

    def entropy(self):
        return self._categorical.entropy()

    def broadcast_to(self, batch_shape):
        batch_shape = as_size_tuple(batch_shape, "OneHotCategorical.broadcast_to")
        return broadcast_params(self, ("prob", "logit"), batch_shape + (self.num_events,))


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)
