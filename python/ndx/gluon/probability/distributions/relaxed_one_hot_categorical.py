"""The relaxed one-hot categorical (Concrete, Gumbel-softmax) distribution."""
import math

from . import constraint
from ._discrete import (
    ProbLogitParams,
    as_param,
    broadcast_params,
    broadcast_shapes,
    check_num_events,
    float_dtype,
    sample_shape,
)
from ._discrete import uniform as _uniform
from .distribution import Distribution
from .utils import _ndx, as_size_tuple

__all__ = ["RelaxedOneHotCategorical"]


class RelaxedOneHotCategorical(ProbLogitParams, Distribution):
    """RelaxedOneHotCategorical(T=None, num_events=None, prob=None, logit=None): the
    Concrete (Gumbel-softmax) distribution on the simplex, a reparameterized relaxation of
    OneHotCategorical(prob) at temperature ``T``: X = softmax((logit + G) / T) with G
    independent standard Gumbel noise (event shape (num_events,)).

    Parameters
    ----------
    T : array or float
        The temperature, > 0 (an array has the batch shape: no event axis).
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
        Check the parameters at construction and the values given to log_prob.
    """

    _binary = False
    has_grad = True
    support = constraint.Simplex()
    arg_constraints = {"T": constraint.Positive(), "prob": constraint.Simplex(),
                       "logit": constraint.Real()}

    def __init__(self, T=None, num_events=None, prob=None, logit=None, F=None,  # noqa: N803
                 validate_args=None):
        owner = "RelaxedOneHotCategorical"
        if T is None:
            raise ValueError(f"{owner}: expected the temperature T (> 0), got None")
        self.T = as_param(owner, "T", T)
        self._set_prob_logit(owner, prob, logit)
        self.num_events = check_num_events(owner, num_events, self.__dict__[self._given])
        self._batch_shape()  # (raises ValueError if T does not broadcast with the batch)
        super().__init__(F=F, event_dim=1, validate_args=validate_args)

    def _batch_shape(self):
        param_batch = tuple(self.__dict__[self._given].shape[:-1])
        shape = broadcast_shapes(tuple(getattr(self.T, "shape", ())), param_batch)
        if shape is None:
            raise ValueError(f"RelaxedOneHotCategorical: T of shape {tuple(self.T.shape)} "
                             f"does not broadcast with the batch shape {param_batch}")
        return shape

    def _event_shape(self):
        return (self.num_events,)

    def _event_temperature(self):
        """T with an event axis appended, to broadcast against per-class arrays."""
        T = self.T  # noqa: N806
        return _ndx().np.expand_dims(T, -1) if getattr(T, "ndim", 0) else T

    def log_prob(self, value):
        # The Concrete density (Maddison et al., 2017) with respect to the first K - 1
        # coordinates: (K - 1)! T^(K - 1) prod_k(pi_k x_k^(-T - 1)) / (sum_k pi_k x_k^(-T))^K.
        np, npx = _ndx().np, _ndx().npx
        value = self._maybe_validate(value)
        k = self.num_events
        log_x = np.log(value)
        scores = npx.log_softmax(self.logit, axis=-1) - self._event_temperature() * log_x
        log_norm = np.log(np.exp(scores - scores.max(-1, keepdims=True)).sum(-1)) \
            + scores.max(-1)
        return (math.lgamma(k) + (k - 1) * np.log(self.T)
                + (scores - log_x).sum(-1) - k * log_norm)

    def sample(self, size=None):
        """Reparameterized samples of shape ``size + (num_events,)`` (``size`` defaults to
        the batch shape): gradients reach the parameters and T."""
        np, npx = _ndx().np, _ndx().npx
        shape = sample_shape("RelaxedOneHotCategorical", size, self._batch_shape())
        logit = self.logit
        # Gumbel noise -log(-log(u)) from parameter-free uniforms (kept off 0).
        u = _uniform(shape + (self.num_events,), float_dtype(logit, self.T))
        gumbel = -np.log(-np.log(np.maximum(u, 1e-30)))
        return npx.softmax((logit + gumbel) / self._event_temperature(), axis=-1)

    def sample_n(self, size=None):
        size = as_size_tuple(size, "RelaxedOneHotCategorical.sample_n")
        return self.sample(size + self._batch_shape())

    def broadcast_to(self, batch_shape):
        batch_shape = as_size_tuple(batch_shape, "RelaxedOneHotCategorical.broadcast_to")
        new = broadcast_params(self, ("prob", "logit"), batch_shape + (self.num_events,))
        return broadcast_params(new, ("T",), batch_shape)
