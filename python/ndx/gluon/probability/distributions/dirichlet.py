"""The Dirichlet distribution over the probability simplex (event_dim 1)."""
import numbers

import numpy as _onp

from . import constraint
from ._continuous_helpers import xlogy
from ._discrete import broadcast_shapes
from .divergence import register_kl
from .exp_family import ExponentialFamily
from .utils import _ndx, as_size_tuple, digamma, gammaln

__all__ = ["Dirichlet"]

_EPS = float(_onp.finfo("float32").eps)


class Dirichlet(ExponentialFamily):
    """Dirichlet(alpha): density prod_i x_i^(alpha_i - 1) / B(alpha) on the simplex of the
    last axis.

    Parameters
    ----------
    alpha : array
        The concentrations, positive; the last axis is the event axis (the categories),
        the others are batch axes.
    """

    has_grad = False
    support = constraint.Simplex()
    arg_constraints = {"alpha": constraint.Positive()}

    def __init__(self, alpha, F=None, validate_args=None):  # noqa: N803
        if isinstance(alpha, numbers.Number) or len(alpha.shape) == 0:
            raise ValueError("Dirichlet: alpha must be an array with at least one axis (the "
                             f"categories), got {alpha!r}")
        self.alpha = alpha
        super().__init__(F=F, event_dim=1, validate_args=validate_args)

    def log_prob(self, value):
        value = self._maybe_validate(value)
        alpha = self.alpha
        log_norm = gammaln(alpha.sum(-1)) - gammaln(alpha).sum(-1)
        return xlogy(alpha - 1, value).sum(-1) + log_norm

    def sample(self, size=None):
        """Samples of shape ``size + (K,)``, K the number of categories: ``size`` is a batch
        shape that alpha's batch shape broadcasts to (as MXNet's Dirichlet, and as ndx's
        other event_dim 1 distributions take it); None: alpha's shape. ``sample_n(n)``
        gives n draws of the whole batch."""
        # Independent Gamma(alpha_i) draws over their sum, kept inside (0, 1) (as MXNet
        # does) so that log_prob of a sample stays finite.
        np = _ndx().np
        batch = self._batch_shape()
        if size is None:
            size = batch
        else:
            size = as_size_tuple(size, "Dirichlet.sample")
            if broadcast_shapes(size, batch) != size:
                raise ValueError(f"Dirichlet.sample: the batch shape {batch} cannot be "
                                 f"broadcast to size {size}")
        draws = np.random.gamma(self.alpha, 1.0, size + self._event_shape())
        return np.clip(draws / draws.sum(-1, keepdims=True), _EPS, 1 - _EPS)

    def sample_n(self, size=None):
        """Samples of shape ``size + batch_shape + (K,)``."""
        size = as_size_tuple(size, "Dirichlet.sample_n")
        return self.sample(size + self._batch_shape())

    @property
    def mean(self):
        return self.alpha / self.alpha.sum(-1, keepdims=True)

    @property
    def variance(self):
        a = self.alpha
        a0 = a.sum(-1, keepdims=True)
        return a * (a0 - a) / (a0 ** 2 * (a0 + 1))

    def entropy(self):
        a = self.alpha
        k = a.shape[-1]
        a0 = a.sum(-1)
        log_b = gammaln(a).sum(-1) - gammaln(a0)
        return log_b + (a0 - k) * digamma(a0) - ((a - 1) * digamma(a)).sum(-1)

    @property
    def _natural_params(self):
        return (self.alpha,)

    def _log_normalizer(self, x):
        return gammaln(x).sum(-1) - gammaln(x.sum(-1))

    @property
    def _mean_carrier_measure(self):
        # log h(x) = -sum_i log x_i; E[log x_i] = digamma(alpha_i) - digamma(alpha_0)
        a = self.alpha
        return -(digamma(a) - _ndx().np.expand_dims(digamma(a.sum(-1)), -1)).sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    np = _ndx().np
    sum_p = p.alpha.sum(-1)
    t1 = gammaln(sum_p) - gammaln(q.alpha.sum(-1))
    t2 = (gammaln(p.alpha) - gammaln(q.alpha)).sum(-1)
    # E_p[log x_i] = digamma(alpha_i) - digamma(alpha_0)
    e_log = digamma(p.alpha) - np.expand_dims(digamma(sum_p), -1)
    return t1 - t2 + ((p.alpha - q.alpha) * e_log).sum(-1)
