"""MXNet's legacy ``mx.nd.random``: samplers with MXNet's signatures (``shape=``, ``ctx=``,
float32 by default, ``randint`` int32), drawn from ndx's generator (``mx.random.seed``
repeats them). Array parameters (``low``, ``loc``, ...) give a sample of shape
``param.shape + shape`` per element, as MXNet's ``_sample_*`` ops."""
from .. import numpy as _np
from ._op import _plain_inputs
from .ndarray import _device, _wrap

__all__ = ["uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle",
           "bernoulli"]


def _size(shape):
    if shape is None or shape == ():
        return None
    if isinstance(shape, int):
        return (shape,)
    return tuple(shape)


def _counts(fn):
    """A count sampler (integer dtypes only in ndx.numpy) giving MXNet's float32 default:
    the integer draw cast to `dtype`."""
    def draw(*params, size=None, dtype=None, device=None):
        return fn(*params, size=size, device=device).astype(dtype)
    return draw


def _draw(fn, params, shape, dtype, ctx, device, out):
    size = _size(shape)
    arrays = [p for p in params if isinstance(p, _np.ndarray)]
    if arrays:
        # one sample of `shape` per parameter element: parameters broadcast on the left
        base = arrays[0].shape
        full = base + (size or ())
        params = [_np.reshape(p, p.shape + (1,) * len(size or ()))
                  if isinstance(p, _np.ndarray) else p for p in params]
        size = full
        if ctx is None and device is None:
            device = arrays[0].device
    dev = _device(ctx, device)
    if size is None:
        size = (1,)  # MXNet's legacy samplers default to shape (1,)
    r = fn(*params, size=size, dtype=dtype or "float32", device=dev)
    if out is not None:
        out[...] = r
        return out
    return _wrap(r)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, device=None,
            **kwargs):
    """Samples of U[low, high) (float32 by default)."""
    return _draw(_np.random.uniform, (low, high), shape, dtype, ctx, device, out)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, device=None,
           **kwargs):
    """Samples of N(loc, scale^2) (float32 by default)."""
    return _draw(_np.random.normal, (loc, scale), shape, dtype, ctx, device, out)


def randn(*shape, **kwargs):
    """Standard normal samples of the given shape (``loc`` / ``scale`` shift them)."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    return normal(loc, scale, shape or None, **kwargs)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Integers uniform in [low, high) (int32 by default)."""
    dev = _device(ctx, device)
    r = _np.random.randint(low, high, size=_size(shape) or (1,), dtype=dtype or "int32",
                           device=dev)
    if out is not None:
        out[...] = r
        return out
    return _wrap(r)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Samples of the exponential distribution of mean `scale` (MXNet's ``lam`` is its
    rate; pass scale=1/lam)."""
    if "lam" in kwargs:
        scale = 1.0 / kwargs.pop("lam")
    return _draw(_np.random.exponential, (scale,), shape, dtype, ctx, device, out)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, device=None,
          **kwargs):
    """Samples of Gamma(shape alpha, scale beta)."""
    return _draw(_np.random.gamma, (alpha, beta), shape, dtype, ctx, device, out)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Poisson samples (float32 by default, as MXNet's)."""
    return _draw(_counts(_np.random.poisson), (lam,), shape, dtype, ctx, device,
                 out)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, device=None,
                      **kwargs):
    """Failures before the k-th success with success probability p (float32)."""
    return _draw(_counts(_np.random.negative_binomial), (k, p), shape, dtype, ctx, device,
                 out)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None,
                                  out=None, device=None, **kwargs):
    """Negative binomial of mean mu and dispersion alpha: k = 1 / alpha,
    p = 1 / (1 + mu * alpha)."""
    k = 1.0 / alpha
    p = 1.0 / (1.0 + mu * alpha)
    return negative_binomial(k, p, shape, dtype, ctx, out, device)


def bernoulli(prob=0.5, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """1 with probability prob, else 0 (float32 by default)."""
    u = uniform(0, 1, shape, "float32", ctx, None, device)
    if isinstance(prob, _np.ndarray):
        prob = _np.reshape(prob, prob.shape + (1,) * (u.ndim - prob.ndim))
    r = (u < prob).astype(dtype or "float32")
    if out is not None:
        out[...] = r
        return out
    return _wrap(r)


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
    """Category indices drawn from the probabilities in data's last axis: one per row
    (shape=None), or `shape` per row; with get_prob also the log-probability of each
    draw."""
    size = _size(shape)
    n = 1
    for d in size or ():
        n *= d
    probs = _np.reshape(data, (-1, data.shape[-1]))
    u = _np.random.uniform(0, 1, size=(probs.shape[0], n), device=data.device)
    cdf = _np.cumsum(probs, axis=-1)
    cdf = cdf / cdf[:, -1:]
    idx = _np.sum(_np.expand_dims(u, -1) >= _np.expand_dims(cdf, 1), axis=-1)
    idx = _np.minimum(idx, data.shape[-1] - 1)
    lead = data.shape[:-1]
    shp = lead + (size or ())
    picks = _np.reshape(idx, shp).astype(dtype)
    if out is not None:
        out[...] = picks
        picks = out
    picks = _wrap(picks)
    if not get_prob:
        return picks
    logp = _np.log(_np.take_along_axis(probs, idx, axis=-1))
    return picks, _wrap(_np.reshape(logp, shp))


def shuffle(data, **kwargs):
    """A copy of data with its first axis in random order."""
    perm = _np.random.permutation(data.shape[0])
    return _wrap(_np.take(data, _np.array(perm).astype("int64"), axis=0))


_plain_inputs(globals())
