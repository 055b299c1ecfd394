"""The base class of every distribution (MXNet 2.0's gluon.probability.Distribution)."""
import numbers

from .utils import _ndx, as_size_tuple, batch_shape_of

__all__ = ["Distribution"]


class Distribution:
    """A probability distribution over arrays.

    Parameters
    ----------
    F : ignored
        MXNet's running-mode argument; ndx's arrays serve eager and hybridized code alike.
    event_dim : int
        How many right-most axes one sample of the distribution spans (0 for scalars).
    validate_args : bool or None
        Check the parameters (at construction) and the values given to log_prob / cdf against
        their constraints; None takes the class default (``set_default_validate_args``).
    """

    # Whether sample() is reparameterized (gradients flow from the samples to the parameters).
    has_grad = False
    support = None
    has_enumerate_support = False
    arg_constraints = {}
    _validate_args = False

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = bool(value)

    def __init__(self, F=None, event_dim=None, validate_args=None):  # noqa: N803
        if isinstance(F, bool):
            # (MXNet 2.0's later signatures drop F: Laplace(0., 1., True) means validate_args)
            F, validate_args = None, F
        elif isinstance(F, numbers.Integral):
            # (and Distribution(event_dim, validate_args))
            F, event_dim, validate_args = None, F, event_dim
        self.F = F if F is not None else _ndx()
        self.event_dim = event_dim
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if name in self.__dict__ and self.__dict__[name] is not None:
                    checked = constraint.check(self.__dict__[name],
                                               f"{type(self).__name__}: {name}")
                    setattr(self, name, checked)

    # ---------------------------------------------------------------- to be implemented
    def _unimplemented(self, what):
        return NotImplementedError(f"{type(self).__name__} does not implement {what}")

    def log_prob(self, value):
        """The log of the density / mass function at ``value``."""
        raise self._unimplemented("log_prob")

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise self._unimplemented("cdf")

    def icdf(self, value):
        """The inverse of the cumulative distribution function at ``value``."""
        raise self._unimplemented("icdf")

    def sample(self, size=None):
        """Samples of shape ``size`` (broadcast with the batch shape; None: the batch shape)."""
        raise self._unimplemented("sample")

    def enumerate_support(self):
        """Every value a discrete distribution can take."""
        raise self._unimplemented("enumerate_support")

    @property
    def mean(self):
        raise self._unimplemented("mean")

    @property
    def variance(self):
        raise self._unimplemented("variance")

    def entropy(self):
        raise self._unimplemented("entropy")

    # ---------------------------------------------------------------- generic
    def pdf(self, value):
        """The density / mass function at ``value``: exp(log_prob(value))."""
        return _ndx().np.exp(self.log_prob(value))

    prob = pdf

    @property
    def stddev(self):
        return _ndx().np.sqrt(self.variance)

    def perplexity(self):
        """exp(entropy())."""
        return _ndx().np.exp(self.entropy())

    def _param_names(self):
        return [k for k in self.arg_constraints if self.__dict__.get(k) is not None]

    def _batch_shape(self):
        """The broadcast shape of the parameters, less the event axes."""
        shape = batch_shape_of(*[self.__dict__[k] for k in self._param_names()])
        event = self.event_dim or 0
        return shape[:len(shape) - event] if event else shape

    def _event_shape(self):
        shape = batch_shape_of(*[self.__dict__[k] for k in self._param_names()])
        event = self.event_dim or 0
        return shape[len(shape) - event:] if event else ()

    def sample_n(self, size=None):
        """Samples of shape ``size + batch_shape (+ event_shape)``: ``size`` independent
        draws of the whole batch."""
        size = as_size_tuple(size, f"{type(self).__name__}.sample_n")
        return self.sample(size + self._batch_shape() + self._event_shape())

    def broadcast_to(self, batch_shape):
        """A copy of this distribution with its parameters broadcast to ``batch_shape``
        (plus the event shape)."""
        np = _ndx().np
        batch_shape = as_size_tuple(batch_shape, f"{type(self).__name__}.broadcast_to")
        new = self.__new__(type(self))
        new.__dict__.update(self.__dict__)
        full = batch_shape + self._event_shape()
        for name in self._param_names():
            value = self.__dict__[name]
            if isinstance(value, numbers.Number):
                value = np.array(value)
            new.__dict__[name] = np.broadcast_to(value, full)
        return new

    def _validate_samples(self, value):
        """``value`` checked against the support (raises ValueError outside it)."""
        return self.support.check(value, f"{type(self).__name__}: the value")

    def _maybe_validate(self, value):
        return self._validate_samples(value) if self._validate_args else value

    def __repr__(self):
        parts = []
        for name in self._param_names():
            value = self.__dict__[name]
            shape = () if isinstance(value, numbers.Number) else tuple(value.shape)
            parts.append(f"{name}: size {shape}")
        parts.append(f"event_dim: {self.event_dim}")
        return f"{type(self).__name__}({', '.join(parts)})"


class _OverBase(Distribution):
    """A distribution built on another one, ``_base()``: its axes are the base's batch and
    event axes, of which the right-most ``event_dim`` are its events (Independent,
    TransformedDistribution)."""

    def _base(self):
        raise self._unimplemented("_base")

    def _full_shape(self):
        base = self._base()
        return base._batch_shape() + base._event_shape()

    def _batch_shape(self):
        full = self._full_shape()
        return full[:len(full) - self.event_dim]

    def _event_shape(self):
        full = self._full_shape()
        return full[len(full) - self.event_dim:]
