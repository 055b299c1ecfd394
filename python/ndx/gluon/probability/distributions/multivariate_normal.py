"""The multivariate normal distribution."""
import math

from . import constraint
from .distribution import Distribution
from .divergence import register_kl
from .utils import _ndx, as_size_tuple, cached_property

__all__ = ["MultivariateNormal"]

_MATRICES = ("cov", "precision", "scale_tril")


def _broadcast_shapes(*shapes):
    """The broadcast of shape tuples (NumPy's rule), or None when they do not broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            return None
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _mat_vec(matrix, vector):
    """matrix @ vector over the last axes, broadcasting the batch axes."""
    np = _ndx().np
    return np.matmul(matrix, np.expand_dims(vector, -1))[..., 0]


def _tril_solve(tril, rhs):
    """tril^-1 @ rhs (rhs a batch of vectors), broadcasting the batch axes. ndx has no
    triangular solve in np.linalg, so the general (LU) solve is used: same result, O(n^3)."""
    return _ndx().np.linalg.solve(tril, _ndx().np.expand_dims(rhs, -1))[..., 0]


def _diag(matrix):
    """The diagonals of a batch of square matrices. (np.diagonal indexes with an integer
    array, which ndx refuses while hybridize traces a block; a product with the identity
    traces.)"""
    np = _ndx().np
    return (matrix * np.eye(matrix.shape[-1], dtype=matrix.dtype)).sum(-1)


def _half_log_det(tril):
    """log det(L L^T) / 2 = the sum of the logs of L's diagonal."""
    return _ndx().np.log(_diag(tril)).sum(-1)


class MultivariateNormal(Distribution):
    """MultivariateNormal(loc, cov | precision | scale_tril): a normal distribution over
    vectors (event_dim 1) with mean ``loc`` and a covariance given by exactly one of three
    matrices; the other two are computed when first used.

    Parameters
    ----------
    loc : array, shape (..., n)
        The mean.
    cov : array, shape (..., n, n), optional
        The covariance matrix (symmetric positive definite).
    precision : array, shape (..., n, n), optional
        The inverse of the covariance matrix.
    scale_tril : array, shape (..., n, n), optional
        The lower Cholesky factor L of the covariance (cov = L L^T, positive diagonal).
    F : ignored
        MXNet's running-mode argument.
    validate_args : bool or None
        Check the given parameters (and log_prob's values) against their constraints.

    The batch axes of loc and the matrix broadcast together.
    """

    has_grad = True
    support = constraint.Real()
    arg_constraints = {"loc": constraint.Real(),
                       "cov": constraint.PositiveDefinite(),
                       "precision": constraint.PositiveDefinite(),
                       "scale_tril": constraint.LowerCholesky()}

    def __init__(self, loc, cov=None, precision=None, scale_tril=None, F=None,  # noqa: N803
                 validate_args=None):
        given = {name: value for name, value in zip(_MATRICES, (cov, precision, scale_tril))
                 if value is not None}
        if len(given) != 1:
            raise ValueError("MultivariateNormal: exactly one of cov, precision and scale_tril "
                             f"must be given, got {len(given)} ({', '.join(given) or 'none'})")
        (name, matrix), = given.items()
        self._check_shapes(loc, name, matrix)
        self.loc = loc
        # (an instance attribute shadows the cached property of the same name)
        setattr(self, name, matrix)
        super().__init__(F=F, event_dim=1, validate_args=validate_args)

    @staticmethod
    def _check_shapes(loc, name, matrix):
        ndarray = _ndx().np.ndarray
        for arg, value in (("loc", loc), (name, matrix)):
            if not isinstance(value, ndarray):
                raise TypeError(f"MultivariateNormal: {arg} must be an ndx array, got "
                                f"{type(value).__name__}")
        if loc.ndim < 1:
            raise ValueError("MultivariateNormal: loc must have at least one axis (the event "
                             f"axis), got shape {tuple(loc.shape)}")
        if matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2]:
            raise ValueError(f"MultivariateNormal: {name} must be a batch of square matrices "
                             f"(shape (..., n, n)), got shape {tuple(matrix.shape)}")
        if loc.shape[-1] != matrix.shape[-1]:
            raise ValueError(f"MultivariateNormal: loc has {loc.shape[-1]} components but "
                             f"{name} is {matrix.shape[-1]} x {matrix.shape[-1]}")
        if _broadcast_shapes(tuple(loc.shape[:-1]), tuple(matrix.shape[:-2])) is None:
            raise ValueError(f"MultivariateNormal: the batch shapes of loc {tuple(loc.shape)} "
                             f"and {name} {tuple(matrix.shape)} do not broadcast")

    # ---------------------------------------------------------------- the three matrices
    def _given_matrix(self):
        return next(self.__dict__[n] for n in _MATRICES if n in self.__dict__)

    @cached_property
    def scale_tril(self):
        """The lower Cholesky factor L of the covariance."""
        np = _ndx().np
        if "cov" in self.__dict__:
            return np.linalg.cholesky(self.cov)
        # From the precision P without inverting it first: with J the reversal permutation
        # and U = cholesky(J P J), P = V V^T for the upper-triangular V = J U J, so
        # cov = V^-T V^-1 and L = V^-T is lower triangular with a positive diagonal.
        upper = np.flip(np.linalg.cholesky(np.flip(self.precision, (-2, -1))), (-2, -1))
        return np.linalg.inv(np.swapaxes(upper, -1, -2))

    @cached_property
    def cov(self):
        """The covariance matrix."""
        np = _ndx().np
        if "precision" in self.__dict__:
            return np.linalg.inv(self.precision)
        tril = self.scale_tril
        return np.matmul(tril, np.swapaxes(tril, -1, -2))

    @cached_property
    def precision(self):
        """The inverse of the covariance matrix."""
        np = _ndx().np
        if "cov" in self.__dict__:
            return np.linalg.inv(self.cov)
        tril_inv = np.linalg.inv(self.scale_tril)
        return np.matmul(np.swapaxes(tril_inv, -1, -2), tril_inv)

    # ---------------------------------------------------------------- shapes
    def _size(self):
        return self.loc.shape[-1]

    def _batch_shape(self):
        return _broadcast_shapes(tuple(self.loc.shape[:-1]),
                                 tuple(self._given_matrix().shape[:-2]))

    def _event_shape(self):
        return (self._size(),)

    def broadcast_to(self, batch_shape):
        np = _ndx().np
        batch_shape = as_size_tuple(batch_shape, "MultivariateNormal.broadcast_to")
        n = self._size()
        new = self.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.loc = np.broadcast_to(self.loc, batch_shape + (n,))
        for name in _MATRICES:
            if name in self.__dict__:
                new.__dict__[name] = np.broadcast_to(self.__dict__[name], batch_shape + (n, n))
        return new

    # ---------------------------------------------------------------- moments
    @property
    def mean(self):
        return _ndx().np.broadcast_to(self.loc, self._batch_shape() + self._event_shape())

    @property
    def variance(self):
        # diag(L L^T)_i = sum_k L_ik^2
        var = (self.scale_tril ** 2).sum(-1)
        return _ndx().np.broadcast_to(var, self._batch_shape() + self._event_shape())

    # ---------------------------------------------------------------- sampling
    def sample(self, size=None):
        """Draws of shape ``size + (n,)`` (``size`` broadcastable with the batch shape; None:
        the batch shape), reparameterized: loc + L @ eps with eps ~ N(0, I), so gradients
        reach loc and the covariance parameter."""
        np = _ndx().np
        batch = self._batch_shape()
        if size is None:
            size = batch
        else:
            size = as_size_tuple(size, "MultivariateNormal.sample")
            if _broadcast_shapes(size, batch) != size:  # (None when they do not broadcast)
                raise ValueError(f"MultivariateNormal.sample: size {size} does not hold the "
                                 f"batch shape {batch}")
        eps = np.random.normal(0, 1, size=size + self._event_shape(), dtype=self.loc.dtype)
        return self.loc + _mat_vec(self.scale_tril, eps)

    def sample_n(self, size=None):
        """``size`` independent draws of the whole batch: shape size + batch + (n,)."""
        size = as_size_tuple(size, "MultivariateNormal.sample_n")
        return self.sample(size + self._batch_shape())

    # ---------------------------------------------------------------- densities
    def log_prob(self, value):
        """-(n log 2 pi + |L^-1 (value - loc)|^2) / 2 - log det L."""
        value = self._maybe_validate(value)
        white = _tril_solve(self.scale_tril, value - self.loc)
        mahalanobis = (white ** 2).sum(-1)
        return (-0.5 * (self._size() * math.log(2 * math.pi) + mahalanobis)
                - _half_log_det(self.scale_tril))

    def entropy(self):
        """n (1 + log 2 pi) / 2 + log det L (of the covariance's batch shape, as MXNet's)."""
        return (0.5 * self._size() * (1 + math.log(2 * math.pi))
                + _half_log_det(self.scale_tril))


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    """(tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - n + log det Sq - log det Sp) / 2, with
    the trace as |Lq^-1 Lp|_F^2 and the quadratic form as |Lq^-1 (mq - mp)|^2."""
    np = _ndx().np
    if p._size() != q._size():
        raise ValueError(f"kl_divergence: MultivariateNormals of sizes {p._size()} and "
                         f"{q._size()}")
    ratio = np.linalg.solve(q.scale_tril, p.scale_tril)
    trace = (ratio ** 2).sum(axis=(-2, -1))
    white = _tril_solve(q.scale_tril, q.loc - p.loc)
    mahalanobis = (white ** 2).sum(-1)
    return (_half_log_det(q.scale_tril) - _half_log_det(p.scale_tril)
            + 0.5 * (trace + mahalanobis - p._size()))
