"""Helpers shared by the discrete (and relaxed discrete) distributions: argument checks with
messages that name the class, sample shapes, the float dtype of samples, uniform noise, and
numerically stable log-probabilities of a binary event."""
import numbers

from .utils import _ndx, as_size_tuple, cached_property, logit2prob, prob2logit

__all__ = []

# float32's machine epsilon: how far probabilities are kept from 0 and 1 before a log
# (the clipping utils.prob2logit applies too).
EPS = 1.1920928955078125e-07


def describe(value):
    """A short account of ``value`` for error messages (arrays by type and shape)."""
    if value is None:
        return "None"
    if hasattr(value, "shape"):
        return f"an array of shape {tuple(value.shape)}"
    return f"{type(value).__name__} {value!r}"


def check_prob_logit(owner, prob, logit):
    """Raises ValueError unless exactly one of ``prob`` and ``logit`` is given."""
    if (prob is None) == (logit is None):
        raise ValueError(f"{owner}: expected exactly one of prob and logit, got "
                         f"prob={describe(prob)} and logit={describe(logit)}")


def as_param(owner, name, value):
    """A parameter as given (array or Python number); lists and tuples become arrays."""
    if isinstance(value, (list, tuple)):
        return _ndx().np.array(value)
    if value is not None and not (isinstance(value, numbers.Number)
                                  or hasattr(value, "shape")):
        raise TypeError(f"{owner}: {name} must be an array or a number, "
                        f"got {type(value).__name__}")
    return value


def check_count(owner, name, value):
    """``value`` as an int after checking it is a non-negative whole Python number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{owner}: {name} must be a non-negative integer (a Python number), "
                        f"got {describe(value)}")
    if value < 0 or value % 1 != 0:
        raise ValueError(f"{owner}: {name} must be a non-negative integer, got {value!r}")
    return int(value)


def check_num_events(owner, num_events, param):
    """``num_events`` as an int, checked positive and equal to the last axis of ``param``
    (the probabilities or logits); None takes it from that axis."""
    if param is None or not hasattr(param, "shape") or len(param.shape) == 0:
        raise ValueError(f"{owner}: prob / logit must be an array whose last axis holds the "
                         f"events, got {describe(param)}")
    if num_events is None:
        return int(param.shape[-1])
    if isinstance(num_events, bool) or not isinstance(num_events, numbers.Integral):
        raise TypeError(f"{owner}: num_events must be a positive int, got {describe(num_events)}")
    if num_events <= 0:
        raise ValueError(f"{owner}: num_events must be greater than 0, got {num_events}")
    if param.shape[-1] != num_events:
        raise ValueError(f"{owner}: num_events is {num_events} but the last axis of prob / "
                         f"logit has {param.shape[-1]} events")
    return int(num_events)


def broadcast_shapes(*shapes):
    """The broadcast of shape tuples (NumPy's rule), or None when they do not broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        dims = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0} - {1}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def sample_shape(owner, size, batch_shape):
    """The shape of ``sample(size)``: ``size`` itself (the batch shape must broadcast to it),
    or the batch shape when ``size`` is None."""
    if size is None:
        return tuple(batch_shape)
    size = as_size_tuple(size, f"{owner}.sample")
    if broadcast_shapes(size, tuple(batch_shape)) != size:
        raise ValueError(f"{owner}.sample: the batch shape {tuple(batch_shape)} cannot be "
                         f"broadcast to size {size}")
    return size


def float_dtype(*params):
    """The dtype of samples: that of the first floating-point array parameter, else
    float32 (ndx's default)."""
    for p in params:
        dtype = getattr(p, "dtype", None)
        if dtype is not None and str(dtype).startswith("float"):
            return dtype
    return "float32"


def uniform(shape, dtype):
    """Uniform [0, 1) noise of ``shape``. Scalar bounds keep the draw a graph node of its
    own, so a hybridized block draws afresh on every call."""
    return _ndx().np.random.uniform(0.0, 1.0, size=shape, dtype=dtype)


def zero_where_absent(weight, log_p):
    """``log_p`` with 0 where ``weight`` is 0, so that ``weight * log_p`` is 0 there even
    where log_p is -inf (0 log 0 = 0: a class whose logit is -inf, a count of 0 of it), with
    a finite gradient."""
    return _ndx().np.where(weight == 0, 0.0, log_p)


def softplus(x):
    """log(1 + exp(x)), without overflow for large x."""
    np = _ndx().np
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


# (the smallest normal number, the largest number below 1) of each float dtype
_LIMITS = {"float16": (2.0 ** -14, 1 - 2.0 ** -11), "float32": (2.0 ** -126, 1 - 2.0 ** -24),
           "float64": (2.0 ** -1022, 1 - 2.0 ** -53)}


def binary_log_probs(dist):
    """(log p, log(1 - p)) of a distribution with ``prob`` / ``logit``: from the logit when
    it was the parameter given (exact in the tails), else from the probability, kept off 0
    and 1 by the dtype's smallest steps so that 0 * log 0 stays 0."""
    np = _ndx().np
    if dist._given == "logit":
        logit = dist.logit
        return -softplus(-logit), -softplus(logit)
    prob = dist.prob
    low, high = _LIMITS.get(str(float_dtype(prob)), _LIMITS["float32"])
    return np.log(np.maximum(prob, low)), np.log1p(-np.minimum(prob, high))


def broadcast_params(dist, names, shape):
    """A copy of ``dist`` whose parameters ``names`` (those set on it) are broadcast to
    ``shape``; Python numbers become arrays."""
    np = _ndx().np
    new = dist.__new__(type(dist))
    new.__dict__.update(dist.__dict__)
    for name in names:
        value = dist.__dict__.get(name)
        if value is None:
            continue
        if isinstance(value, numbers.Number):
            value = np.array(value)
        new.__dict__[name] = np.broadcast_to(value, shape)
    return new


class ProbLogitParams:
    """``prob`` and ``logit`` of a distribution parameterized by either: the one given is
    stored, the other is a cached property computed from it. Subclasses set ``_binary``
    (True: sigmoid / log-odds; False: softmax / log over the last axis)."""

    _binary = True

    def _set_prob_logit(self, owner, prob, logit):
        """Stores whichever of ``prob`` / ``logit`` is given (exactly one must be)."""
        check_prob_logit(owner, prob, logit)
        if prob is not None:
            self.prob = as_param(owner, "prob", prob)
            self._given = "prob"
        else:
            self.logit = as_param(owner, "logit", logit)
            self._given = "logit"

    @cached_property
    def prob(self):
        """The probability of each event (sigmoid / softmax of ``logit``)."""
        return logit2prob(self.logit, self._binary)

    @cached_property
    def logit(self):
        """The log-odds of the event (binary), or the log-probabilities of the events."""
        return prob2logit(self.prob, self._binary)
