"""The distribution of Y = T_n(...T_1(X)) for X from a base distribution."""
from ..transformation.transformation import Transformation
from .constraint import is_dependent
from .distribution import Distribution, _OverBase
from .utils import sum_right_most

__all__ = ["TransformedDistribution"]


def _as_transform_list(transforms):
    if isinstance(transforms, Transformation):
        return [transforms]
    if not isinstance(transforms, (list, tuple)):
        raise TypeError(f"TransformedDistribution: transforms must be a Transformation or a "
                        f"list of them, got {type(transforms).__name__}")
    for t in transforms:
        if not isinstance(t, Transformation):
            raise TypeError(f"TransformedDistribution: transforms must be Transformations, "
                            f"got {type(t).__name__}")
    return list(transforms)


class TransformedDistribution(_OverBase):
    """The distribution of ``transforms`` applied in order to draws of ``base_dist``.

    log_prob follows the change of variables, log p_Y(y) = log p_X(x) - log |det dy/dx|;
    cdf and icdf are available when every transformation is monotone and elementwise.

    Parameters
    ----------
    base_dist : Distribution
        The distribution of X.
    transforms : Transformation or list of Transformation
        T_1, ..., T_n, applied first to last.
    validate_args : bool or None
        As for Distribution (a subclass's own parameters are checked at construction).
    F : ignored
        MXNet's running-mode argument.
    """

    def __init__(self, base_dist, transforms, validate_args=None, F=None):  # noqa: N803
        if not isinstance(base_dist, Distribution):
            raise TypeError(f"TransformedDistribution: base_dist must be a Distribution, got "
                            f"{type(base_dist).__name__}")
        self._base_dist = base_dist
        self._transforms = _as_transform_list(transforms)
        event_dim = max([base_dist.event_dim or 0] + [t.event_dim for t in self._transforms])
        super().__init__(F=F, event_dim=event_dim, validate_args=validate_args)

    @property
    def base_dist(self):
        return self._base_dist

    @property
    def transforms(self):
        return self._transforms

    @property
    def has_grad(self):
        # (the transformations are differentiable: samples are as reparameterized as the
        # base distribution's)
        return self._base_dist.has_grad

    # ---------------------------------------------------------------- shapes
    def _base(self):
        return self._base_dist

    def broadcast_to(self, batch_shape):
        new = super().broadcast_to(batch_shape)
        # the base's batch axes are ours plus those the transformations made event axes
        extra = self.event_dim - (self._base_dist.event_dim or 0)
        new._base_dist = self._base_dist.broadcast_to(
            tuple(batch_shape) + self._event_shape()[:extra])
        return new

    # ---------------------------------------------------------------- sampling
    def _apply(self, x):
        for t in self._transforms:
            x = t(x)
        return x

    def sample(self, size=None):
        return self._apply(self._base_dist.sample(size))

    def sample_n(self, size=None):
        return self._apply(self._base_dist.sample_n(size))

    # ---------------------------------------------------------------- densities
    def _maybe_validate(self, value):
        support = self.support
        if support is None or is_dependent(support):
            return value
        return super()._maybe_validate(value)

    def log_prob(self, value):
        """log p(value) = log p_base(x) - sum of log |det J| along the inverse chain."""
        value = self._maybe_validate(value)
        for t in self._transforms:
            if not t.bijective:
                raise NotImplementedError(f"{type(self).__name__}.log_prob: {t!r} is not "
                                          "bijective, so the change of variables does not hold")
        log_prob = 0
        y = value
        for t in reversed(self._transforms):
            x = t.inv(y)
            log_prob = log_prob - sum_right_most(t.log_det_jacobian(x, y),
                                                 self.event_dim - t.event_dim)
            y = x
        base_event = self._base_dist.event_dim or 0
        return log_prob + sum_right_most(self._base_dist.log_prob(y),
                                         self.event_dim - base_event)

    def _monotone_sign(self, what):
        """The product of the transformations' signs; NotImplementedError unless every
        transformation is monotone and elementwise over a scalar base distribution."""
        if self.event_dim:
            raise NotImplementedError(f"{type(self).__name__}.{what} needs scalar events, "
                                      f"got event_dim {self.event_dim}")
        sign = 1
        for t in self._transforms:
            try:
                sign = sign * t.sign
            except NotImplementedError:
                raise NotImplementedError(f"{type(self).__name__}.{what}: {t!r} is not "
                                          "monotone") from None
        return sign

    def cdf(self, value):
        """P(Y <= value): the base cdf at the preimage, or 1 minus it when the chain
        decreases."""
        sign = self._monotone_sign("cdf")
        value = self._maybe_validate(value)
        for t in reversed(self._transforms):
            value = t.inv(value)
        base_cdf = self._base_dist.cdf(value)
        # sign * (c - 0.5) + 0.5 is c for an increasing chain, 1 - c for a decreasing one
        return sign * (base_cdf - 0.5) + 0.5

    def icdf(self, value):
        """The value y with P(Y <= y) = ``value``."""
        sign = self._monotone_sign("icdf")
        base_value = sign * (value - 0.5) + 0.5
        return self._apply(self._base_dist.icdf(base_value))

    def __repr__(self):
        return (f"{type(self).__name__}(base_dist: {self._base_dist!r}, transforms: "
                f"[{', '.join(repr(t) for t in self._transforms)}])")

