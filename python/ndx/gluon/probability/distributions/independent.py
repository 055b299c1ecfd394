"""Independent: some batch axes of a distribution reinterpreted as event axes."""
import numbers

from .constraint import dependent_property, is_dependent
from .distribution import Distribution, _OverBase
from .divergence import kl_divergence, register_kl
from .utils import sum_right_most

__all__ = ["Independent"]


class Independent(_OverBase):
    """The right-most ``reinterpreted_batch_ndims`` batch axes of ``base_distribution`` taken
    as event axes: one sample spans them, and log_prob / entropy are summed over them (the
    components being independent). Normal(loc, scale) with loc of shape (B, D) wrapped with 1
    is a diagonal-covariance normal over R^D with batch shape (B,).

    Parameters
    ----------
    base_distribution : Distribution
        The distribution whose batch axes are reinterpreted.
    reinterpreted_batch_ndims : int
        How many right-most batch axes become event axes (>= 0).
    validate_args : bool or None
        As for Distribution: checks the values given to log_prob against the base's support.
    """

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None,
                 F=None):  # noqa: N803
        if not isinstance(base_distribution, Distribution):
            raise TypeError(f"Independent: base_distribution must be a Distribution, got "
                            f"{type(base_distribution).__name__}")
        ndims = reinterpreted_batch_ndims
        if isinstance(ndims, bool) or not isinstance(ndims, numbers.Integral):
            raise TypeError(f"Independent: reinterpreted_batch_ndims must be an int, got "
                            f"{type(ndims).__name__}")
        if ndims < 0:
            raise ValueError(f"Independent: reinterpreted_batch_ndims must be >= 0, got {ndims}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = int(ndims)
        event_dim = self.reinterpreted_batch_ndims + (base_distribution.event_dim or 0)
        super().__init__(F=F, event_dim=event_dim, validate_args=validate_args)

    @property
    def has_grad(self):
        return self.base_dist.has_grad

    @property
    def has_enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @dependent_property
    def support(self):
        return self.base_dist.support

    # ---------------------------------------------------------------- shapes
    def _base(self):
        return self.base_dist

    def broadcast_to(self, batch_shape):
        new = self.__new__(type(self))
        new.__dict__.update(self.__dict__)
        base_batch = self.base_dist._batch_shape()
        kept = base_batch[len(base_batch) - self.reinterpreted_batch_ndims:]
        new.base_dist = self.base_dist.broadcast_to(tuple(batch_shape) + kept)
        return new

    # ---------------------------------------------------------------- delegated
    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, size=None):
        return self.base_dist.sample(size)

    def sample_n(self, size=None):
        return self.base_dist.sample_n(size)

    def _maybe_validate(self, value):
        support = self.base_dist.support
        if not self._validate_args or support is None or is_dependent(support):
            return value
        return support.check(value, f"{type(self).__name__}: the value")

    def log_prob(self, value):
        value = self._maybe_validate(value)
        return sum_right_most(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_right_most(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Independent: enumerating the cartesian product of the "
                                      "reinterpreted axes is not implemented")
        return self.base_dist.enumerate_support()

    def __repr__(self):
        return (f"Independent({self.base_dist!r}, reinterpreted_batch_ndims="
                f"{self.reinterpreted_batch_ndims})")


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    """The KL of the bases summed over the reinterpreted axes (the log densities are sums of
    independent terms); defined when both reinterpret the same axes."""
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            f"kl_divergence: Independent distributions reinterpreting different numbers of "
            f"batch axes ({p.reinterpreted_batch_ndims} and {q.reinterpreted_batch_ndims})")
    return sum_right_most(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)
