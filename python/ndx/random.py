"""ndx.random: MXNet's ``mx.random`` over ndx's one generator.

The samplers are MXNet's (the same functions as ``mx.nd.random``): ``uniform(low=0, high=1,
shape=None, dtype=None, ctx=None, out=None)``, ``normal``, ``randn``, ``randint``,
``exponential``, ``gamma``, ``poisson``, ``negative_binomial``,
``generalized_negative_binomial``, ``multinomial``, ``shuffle``; they return ``NDArray``s,
float32 by default (``randint`` int32), of shape (1,) when no shape is given. NumPy's
``size=`` is taken as another name for ``shape=``, and NumPy's ``multinomial(n, pvals)`` /
``gamma(shape=, scale=)`` keywords still reach NumPy's samplers (``ndx.np.random`` holds
NumPy's API).

``ndx.random.seed(n)`` seeds everything random in ndx: np.random / npx.random, mx.nd.random,
dropout, parameter initializers and DataLoader shuffling all draw from the same Philox-based
generator (see ndx.numpy.random)."""
import functools
import numbers

from .nd import random as _nd_random
from .nd.random import bernoulli, randn  # noqa: F401
from .numpy import random as _np_random

__all__ = ["seed", "uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle",
           "bernoulli"]


def _shape(who, shape, size):
    """MXNet's shape=, or NumPy's size= under its other name (not both, unless equal)."""
    if size is None:
        return shape
    if shape is not None and shape != size:
        raise TypeError(f"[random.{who}] got both shape={shape!r} and size={size!r}; "
                        f"pass one")
    return size


def _returns_out(fn):
    """`out` itself returned when given, as MXNet's samplers do (nd.random's functions hand
    back another view of it)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        r = fn(*args, **kwargs)
        out = kwargs.get("out")
        return r if out is None else out
    return call


def _no_extra(who, kwargs):
    # MXNet's samplers reject unknown arguments; silently dropping one (a misspelt shape=)
    # would return a (1,)-shaped sample
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"[random.{who}] unexpected arguments {sorted(kwargs)}")


@_returns_out
def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, device=None,
            size=None, **kwargs):
    """Samples of U[low, high) (float32 by default; shape (1,) when no shape is given)."""
    _no_extra("uniform", kwargs)
    return _nd_random.uniform(low, high, _shape("uniform", shape, size), dtype, ctx, out, device)


@_returns_out
def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, device=None,
           size=None, **kwargs):
    """Samples of N(loc, scale^2) (float32 by default)."""
    _no_extra("normal", kwargs)
    return _nd_random.normal(loc, scale, _shape("normal", shape, size), dtype, ctx, out, device)


@_returns_out
def randint(low, high=None, shape=None, dtype=None, ctx=None, out=None, device=None,
            size=None, **kwargs):
    """Integers uniform in [low, high) (int32 by default); ``randint(n)`` draws from
    [0, n) as NumPy's."""
    _no_extra("randint", kwargs)
    if high is None:
        low, high = 0, low
    return _nd_random.randint(low, high, _shape("randint", shape, size), dtype, ctx, out,
                              device)


@_returns_out
def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, device=None, size=None,
                **kwargs):
    """Samples of the exponential distribution of mean `scale` (float32 by default)."""
    lam = kwargs.pop("lam", None)
    _no_extra("exponential", kwargs)
    if lam is not None:
        scale = 1.0 / lam
    return _nd_random.exponential(scale, _shape("exponential", shape, size), dtype, ctx, out,
                                  device)


@_returns_out
def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, device=None,
          size=None, scale=None, **kwargs):
    """Samples of Gamma(alpha, beta) with beta the scale (MXNet's names). NumPy's keywords
    ``gamma(shape=k, scale=theta, size=n)`` are read as NumPy's (the shape parameter, not
    the sample shape) when ``scale=`` or ``size=`` is given."""
    _no_extra("gamma", kwargs)
    if scale is not None or size is not None:
        if shape is not None:
            alpha = shape
        if scale is not None:
            beta = scale
        shape = None
    return _nd_random.gamma(alpha, beta, _shape("gamma", shape, size), dtype, ctx, out, device)


@_returns_out
def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, device=None, size=None,
            **kwargs):
    """Poisson samples of rate `lam` (float32 by default, as MXNet's)."""
    _no_extra("poisson", kwargs)
    return _nd_random.poisson(lam, _shape("poisson", shape, size), dtype, ctx, out, device)


@_returns_out
def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, device=None,
                      size=None, **kwargs):
    """Failures before the k-th success with success probability p (float32)."""
    _no_extra("negative_binomial", kwargs)
    return _nd_random.negative_binomial(k, p, _shape("negative_binomial", shape, size), dtype, ctx,
                              out, device)


@_returns_out
def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None,
                                  device=None, size=None, **kwargs):
    """Negative binomial of mean mu and dispersion alpha (float32)."""
    _no_extra("generalized_negative_binomial", kwargs)
    return _nd_random.generalized_negative_binomial(
        mu, alpha, _shape("generalized_negative_binomial", shape, size), dtype, ctx, out,
        device)


@_returns_out
def multinomial(data=None, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
    """MXNet's multinomial: category indices drawn from the probabilities in data's last axis
    (one per row, or `shape` per row; with get_prob also their log-probabilities). NumPy's
    ``multinomial(n, pvals, size=None)`` (counts of n trials) is served when the first
    argument is a number or ``pvals=`` is given."""
    if "pvals" in kwargs or "n" in kwargs or isinstance(data, numbers.Integral):
        n = kwargs.pop("n", data)
        pvals = kwargs.pop("pvals", shape)
        size = kwargs.pop("size", None)
        _no_extra("multinomial", kwargs)
        return _np_random.multinomial(n, pvals, size=size)
    _no_extra("multinomial", kwargs)
    return _nd_random.multinomial(data, shape, get_prob, out, dtype)


def shuffle(data, out=None, **kwargs):
    """A copy of data with its first axis in random order (MXNet's; `data` is left as it
    is, unlike NumPy's in-place shuffle); with `out`, written there."""
    _no_extra("shuffle", kwargs)
    r = _nd_random.shuffle(data)
    if out is not None:
        out[...] = r
        return out
    return r


def seed(seed_state=None, device="all", ctx=None):
    """Seeds ndx's generator (MXNet's mx.random.seed(seed_state, device='all')). ndx has one
    generator for every device, so `device` (or MXNet 1.x's `ctx`) only has to name a device
    or be 'all'."""
    from .device import Device
    if ctx is not None:
        device = ctx
    if device != "all":
        Device(device)  # a typed error for something that is not a device
    _np_random.seed(seed_state)
