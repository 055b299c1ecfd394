"""Private helpers of the continuous univariate distributions: the shape of a draw, arrays
of a constant over the batch, x log(y) forms that stay finite at the support's edge, and
log densities that are -inf (not NaN) outside the support."""
import math

from .utils import _ndx, as_size_tuple


def draw_shape(dist, size):
    """The shape of ``dist.sample(size)``: ``size`` broadcast with the batch (and event)
    shape of the parameters; the batch (and event) shape alone when ``size`` is None."""
    full = dist._batch_shape() + dist._event_shape()
    if size is None:
        return full
    size = as_size_tuple(size, f"{type(dist).__name__}.sample")
    try:
        return tuple(_ndx().np.broadcast_shapes(size, full))
    except ValueError:
        raise ValueError(f"{type(dist).__name__}.sample: size {size} does not broadcast with "
                         f"the parameters' shape {full}") from None


def constant_over_batch(dist, value, *params):
    """An array of ``value`` with the batch shape, built from ``params`` (arrays or scalars)
    so that inside a hybridized block it is a node of the graph like any other result."""
    np = _ndx().np
    total = 0.0
    for p in params:
        total = total + p
    return np.zeros_like(np.broadcast_to(total, dist._batch_shape())) + value


def positive_part(value):
    """max(value, 0), to evaluate a cdf below a support that starts at 0."""
    return _ndx().np.maximum(value, 0)


def xlogy(x, y):
    """x * log(y), taken as 0 where x == 0 and y == 0 (a density's (k - 1) log(value) at
    value 0 for k == 1), without a NaN in the value or the gradient there."""
    np = _ndx().np
    both_zero = np.logical_and(np.equal(x, 0), np.equal(y, 0))
    return x * np.log(np.where(both_zero, 1.0, y))


def xlog1py(x, y):
    """x * log1p(y), taken as 0 where x == 0 and y == -1."""
    np = _ndx().np
    both_zero = np.logical_and(np.equal(x, 0), np.equal(y, -1))
    return x * np.log1p(np.where(both_zero, 0.0, y))


def log_density_on(inside, value, safe, log_density):
    """``log_density(value)`` where ``inside`` holds and -inf elsewhere (density 0 outside
    the support, as scipy.stats gives). The density is evaluated at ``safe`` (a point of the
    support) in place of the values outside, so that neither the result nor its gradient
    picks up the NaN of a log of a negative number there."""
    np = _ndx().np
    return np.where(inside, log_density(np.where(inside, value, safe)), -math.inf)
