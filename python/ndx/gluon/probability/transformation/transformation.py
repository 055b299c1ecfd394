"""Invertible transformations with computable log |det Jacobian|, the building blocks of
TransformedDistribution and of the domain maps (``biject_to`` / ``transform_to``).

Every transformation works on ndx arrays eagerly, under ``autograd.record()`` and inside a
hybridized block: only ndx operators are used, and parameters (an AffineTransform's loc and
scale, a PowerTransform's exponent) may be arrays or Python scalars."""
import math
import numbers

from ...block import HybridBlock
from ..distributions.utils import _clip_prob, _ndx, sum_right_most

__all__ = ["Transformation", "TransformBlock", "ComposeTransform", "ExpTransform",
           "AffineTransform", "PowerTransform", "AbsTransform", "SigmoidTransform",
           "SoftmaxTransform"]


def _check_param(value, owner, name):
    """``value`` when it is a real Python number or an ndx array; TypeError otherwise."""
    mx = _ndx()
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, mx.np.ndarray)):
        raise TypeError(f"{owner}: {name} must be a real number or an ndx array, "
                        f"got {type(value).__name__}")
    return value


def _check_event_dim(event_dim, owner):
    if isinstance(event_dim, bool) or not isinstance(event_dim, numbers.Integral):
        raise TypeError(f"{owner}: event_dim must be an int, got {type(event_dim).__name__}")
    if event_dim < 0:
        raise ValueError(f"{owner}: event_dim must be >= 0, got {event_dim}")
    return int(event_dim)


def _softplus(x):
    """log(1 + exp(x)), written so that it neither overflows for large x nor loses
    precision for very negative x."""
    np = _ndx().np
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


class Transformation:
    """An invertible map y = T(x) with a computable log |dy/dx|.

    Subclasses give ``_forward_compute(x)``, ``_inverse_compute(y)``,
    ``log_det_jacobian(x, y)`` and, when T is monotone, ``sign``.

    Parameters
    ----------
    F : ignored
        MXNet's running-mode argument (kept as ``self.F``, the ndx module by default).

    Attributes
    ----------
    bijective : bool
        Whether T is one-to-one (so that the change-of-variables formula holds).
    event_dim : int
        How many right-most axes one application of T couples: log_det_jacobian sums over
        them (0 for an elementwise map).
    """

    bijective = False
    event_dim = 0

    def __init__(self, F=None, **kwargs):  # noqa: N803 (MXNet's keyword)
        # (kwargs reach HybridBlock when this is a TransformBlock)
        super().__init__(**kwargs)
        self._inv = None
        self._F = F

    @property
    def F(self):  # noqa: N802 (MXNet's name)
        return self._F if self._F is not None else _ndx()

    @F.setter
    def F(self, value):  # noqa: N802
        self._F = value

    @property
    def sign(self):
        """The sign of dy/dx (+1 increasing, -1 decreasing) of a monotone elementwise map."""
        raise NotImplementedError(f"{type(self).__name__} is not monotone: it has no sign")

    @property
    def inv(self):
        """The inverse transformation (y -> x), made once and kept."""
        if self._inv is None:
            self._inv = _InverseTransformation(self)
        return self._inv

    def __call__(self, x):
        return self._forward_compute(x)

    def _inv_call(self, y):
        return self._inverse_compute(y)

    def _forward_compute(self, x):
        raise NotImplementedError(f"{type(self).__name__} does not implement its forward map")

    def _inverse_compute(self, y):
        raise NotImplementedError(f"{type(self).__name__} does not implement its inverse")

    def log_det_jacobian(self, x, y):
        """log |det dy/dx| at x (with y = T(x) given, to spare recomputing it); its shape is
        x's less the ``event_dim`` right-most axes."""
        raise NotImplementedError(f"{type(self).__name__} does not implement "
                                  "log_det_jacobian")

    def __repr__(self):
        return f"{type(self).__name__}()"


class _InverseTransformation(Transformation):
    """The inverse of a transformation; reached through ``Transformation.inv``."""

    def __init__(self, forward_transformation):
        super().__init__()
        self._inv = forward_transformation

    @property
    def inv(self):
        return self._inv

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        # (the inverse of a monotone map is monotone the same way)
        return self._inv.sign

    @property
    def event_dim(self):
        return self._inv.event_dim

    def __call__(self, y):
        return self._inv._inverse_compute(y)

    def _forward_compute(self, y):
        return self._inv._inverse_compute(y)

    def _inverse_compute(self, x):
        return self._inv(x)

    def log_det_jacobian(self, x, y):
        # log |dx/dy| = -log |dy/dx| at the same point
        return -self._inv.log_det_jacobian(y, x)

    def __repr__(self):
        return f"{self._inv!r}.inv"


class TransformBlock(Transformation, HybridBlock):
    """A transformation that is also a gluon HybridBlock, so that it can hold Parameters
    (a normalizing flow's layers, say): subclasses define ``_forward_compute`` (which is the
    block's forward, so ``hybridize()`` captures it), ``_inverse_compute`` and
    ``log_det_jacobian``, and register parameters as any block does."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)

    def __call__(self, x):
        return HybridBlock.__call__(self, x)

    def forward(self, x):
        return self._forward_compute(x)

    def __repr__(self):
        return HybridBlock.__repr__(self)


class ComposeTransform(Transformation):
    """The transformations ``parts`` applied in order: y = parts[-1](...parts[0](x)).

    Parameters
    ----------
    parts : list of Transformation
        The transformations, first applied first; an empty list is the identity.
    """

    def __init__(self, parts):
        if isinstance(parts, Transformation) or not isinstance(parts, (list, tuple)):
            raise TypeError(f"ComposeTransform: parts must be a list of Transformations, "
                            f"got {type(parts).__name__}")
        for part in parts:
            if not isinstance(part, Transformation):
                raise TypeError(f"ComposeTransform: parts must be Transformations, got "
                                f"{type(part).__name__}")
        super().__init__()
        self._parts = list(parts)

    @property
    def F(self):  # noqa: N802
        return self._parts[0].F if self._parts else _ndx()

    @F.setter
    def F(self, value):  # noqa: N802
        for part in self._parts:
            part.F = value

    @property
    def bijective(self):
        return all(part.bijective for part in self._parts)

    @property
    def sign(self):
        sign = 1
        for part in self._parts:
            sign = sign * part.sign
        return sign

    @property
    def event_dim(self):
        return max((part.event_dim for part in self._parts), default=0)

    @property
    def inv(self):
        if self._inv is None:
            inverse = ComposeTransform([part.inv for part in reversed(self._parts)])
            inverse._inv = self
            self._inv = inverse
        return self._inv

    def _forward_compute(self, x):
        for part in self._parts:
            x = part(x)
        return x

    def _inverse_compute(self, y):
        for part in reversed(self._parts):
            y = part.inv(y)
        return y

    def log_det_jacobian(self, x, y):
        """The sum of the parts' log |det J|, each summed over the axes that are events of
        the composition but not of the part (the chain rule)."""
        if not self._parts:
            return _ndx().np.zeros_like(x)
        result = 0
        for part in self._parts[:-1]:
            x_next = part(x)
            result = result + sum_right_most(part.log_det_jacobian(x, x_next),
                                             self.event_dim - part.event_dim)
            x = x_next
        last = self._parts[-1]
        return result + sum_right_most(last.log_det_jacobian(x, y),
                                       self.event_dim - last.event_dim)

    def __repr__(self):
        return f"ComposeTransform([{', '.join(repr(p) for p in self._parts)}])"


class ExpTransform(Transformation):
    """y = exp(x)."""

    bijective = True
    sign = 1

    def _forward_compute(self, x):
        return _ndx().np.exp(x)

    def _inverse_compute(self, y):
        return _ndx().np.log(y)

    def log_det_jacobian(self, x, y):
        # d exp(x) / dx = exp(x), whose log is x
        return x


class AffineTransform(Transformation):
    """Elementwise y = loc + scale * x.

    Parameters
    ----------
    loc : array or float
        The shift.
    scale : array or float
        The (non-zero) factor.
    event_dim : int, default 0
        How many right-most axes form one event: log_det_jacobian sums over them.
    """

    bijective = True

    def __init__(self, loc, scale, event_dim=0):
        super().__init__()
        self._loc = _check_param(loc, "AffineTransform", "loc")
        self._scale = _check_param(scale, "AffineTransform", "scale")
        if isinstance(scale, numbers.Real) and scale == 0:
            raise ValueError("AffineTransform: scale must be non-zero, got 0")
        self.event_dim = _check_event_dim(event_dim, "AffineTransform")

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _forward_compute(self, x):
        return self._loc + self._scale * x

    def _inverse_compute(self, y):
        return (y - self._loc) / self._scale

    def log_det_jacobian(self, x, y):
        np = _ndx().np
        if isinstance(self._scale, numbers.Real):
            log_abs_scale = math.log(abs(self._scale))
        else:
            log_abs_scale = np.log(np.abs(self._scale))
        # (broadcast to x's shape before summing the event axes)
        return sum_right_most(np.ones_like(x) * log_abs_scale, self.event_dim)

    @property
    def sign(self):
        if isinstance(self._scale, numbers.Real):
            return 1 if self._scale > 0 else -1
        return _ndx().np.sign(self._scale)

    def __repr__(self):
        return f"AffineTransform(event_dim={self.event_dim})"


class PowerTransform(Transformation):
    """Elementwise y = x ** exponent, on x > 0.

    Parameters
    ----------
    exponent : array or float
        The (non-zero) power.
    """

    bijective = True

    def __init__(self, exponent):
        super().__init__()
        self._exponent = _check_param(exponent, "PowerTransform", "exponent")
        if isinstance(exponent, numbers.Real) and exponent == 0:
            raise ValueError("PowerTransform: exponent must be non-zero, got 0")

    @property
    def exponent(self):
        return self._exponent

    def _forward_compute(self, x):
        return _ndx().np.power(x, self._exponent)

    def _inverse_compute(self, y):
        return _ndx().np.power(y, 1 / self._exponent)

    def log_det_jacobian(self, x, y):
        np = _ndx().np
        # dy/dx = exponent * x ** (exponent - 1) = exponent * y / x
        return np.log(np.abs(self._exponent * y / x))

    @property
    def sign(self):
        # (x ** p on x > 0 increases for p > 0, decreases for p < 0)
        if isinstance(self._exponent, numbers.Real):
            return 1 if self._exponent > 0 else -1
        return _ndx().np.sign(self._exponent)


class SigmoidTransform(Transformation):
    """y = 1 / (1 + exp(-x)), kept inside (eps, 1 - eps) (float32's eps) so that the inverse
    and log densities stay finite."""

    bijective = True
    sign = 1

    def _forward_compute(self, x):
        return _clip_prob(_ndx().npx.sigmoid(x))

    def _inverse_compute(self, y):
        np = _ndx().np
        clipped = _clip_prob(y)
        return np.log(clipped) - np.log1p(-clipped)

    def log_det_jacobian(self, x, y):
        # log sigmoid'(x) = log sigmoid(x) + log sigmoid(-x) = -softplus(-x) - softplus(x)
        return -_softplus(-x) - _softplus(x)


class SoftmaxTransform(Transformation):
    """y = softmax(x) over the last axis. Not bijective (adding a constant to x leaves y
    unchanged): the inverse returns log(y), one of the preimages, and there is no
    log_det_jacobian."""

    event_dim = 1

    def _forward_compute(self, x):
        return _ndx().npx.softmax(x, axis=-1)

    def _inverse_compute(self, y):
        return _ndx().np.log(y)


class AbsTransform(Transformation):
    """y = |x|. Not bijective: the inverse returns y, the non-negative preimage."""

    def _forward_compute(self, x):
        return _ndx().np.abs(x)

    def _inverse_compute(self, y):
        return y

    def log_det_jacobian(self, x, y):
        # |d|x|/dx| = 1 wherever it is defined
        return _ndx().np.zeros_like(x)
