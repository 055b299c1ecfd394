"""ndx.npx.random: MXNet's npx.random (bernoulli, uniform_n, normal_n) and the np.random
samplers it shares, over the same counter-based generator as ndx.numpy.random."""
import numpy as _onp

from ..numpy.random import (  # noqa: F401
    _global,
    beta,
    chisquare,
    exponential,
    gamma,
    gumbel,
    laplace,
    logistic,
    lognormal,
    normal,
    pareto,
    power,
    randint,
    rayleigh,
    seed,
    uniform,
    weibull,
)

bernoulli = _global.bernoulli


def _batched(draw, a, b, batch_shape, dtype, device, ctx):
    from .. import numpy as np
    batch = () if batch_shape is None else (
        tuple(batch_shape) if isinstance(batch_shape, (tuple, list)) else (batch_shape,))
    shape = np.broadcast_shapes(*(getattr(v, "shape", None) or _onp.shape(v) for v in (a, b)))
    return draw(a, b, size=batch + tuple(shape), dtype=dtype, device=device, ctx=ctx)


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, device=None, ctx=None):
    """Uniform samples of shape batch_shape + broadcast(low, high).shape (MXNet's uniform_n)."""
    return _batched(uniform, low, high, batch_shape, dtype, device, ctx)


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, device=None, ctx=None):
    """Normal samples of shape batch_shape + broadcast(loc, scale).shape (MXNet's normal_n)."""
    return _batched(normal, loc, scale, batch_shape, dtype, device, ctx)
