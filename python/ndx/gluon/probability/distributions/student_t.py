"""Student's t distribution, with a location and a scale."""
import math

from . import constraint
from ._continuous_helpers import constant_over_batch, draw_shape
from .distribution import Distribution
from .utils import _ndx, digamma, gammaln

__all__ = ["StudentT"]


class StudentT(Distribution):
    """StudentT(df, loc, scale): loc + scale * T for T Student's t with ``df`` degrees of
    freedom (arrays or scalars, broadcast together).

    Parameters
    ----------
    df : array or float
        The degrees of freedom, positive.
    loc : array or float, default 0
        The location (the mean where df > 1).
    scale : array or float, default 1
        The scale, positive.
    """

    # (loc and scale get pathwise gradients; df does not, through its chi-square draw)
    has_grad = False
    support = constraint.Real()
    arg_constraints = {"df": constraint.Positive(), "loc": constraint.Real(),
                       "scale": constraint.Positive()}

    def __init__(self, df, loc=0.0, scale=1.0, F=None, validate_args=None):  # noqa: N803
        self.df = df
        self.loc = loc
        self.scale = scale
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        df = self.df
        z = (value - self.loc) / self.scale
        return (gammaln((df + 1) / 2) - gammaln(df / 2) - np.log(self.scale)
                - 0.5 * np.log(math.pi * df) - 0.5 * (df + 1) * np.log1p(z ** 2 / df))

    def sample(self, size=None):
        # Z * sqrt(df / V) for Z standard normal and V ~ chi-square(df) = 2 Gamma(df / 2)
        np = _ndx().np
        shape = draw_shape(self, size)
        z = np.random.standard_normal(shape)
        chi2 = 2 * np.random.gamma(self.df / 2, 1.0, shape)
        return self.loc + self.scale * z * np.sqrt(self.df / chi2)

    def _zeros(self):
        return constant_over_batch(self, 0.0, self.df, self.loc, self.scale)

    @property
    def mean(self):
        """loc where df > 1, NaN elsewhere."""
        return _ndx().np.where(self.df > 1, self.loc + self._zeros(), math.nan)

    @property
    def variance(self):
        """scale^2 df / (df - 2) where df > 2, infinite where 1 < df <= 2, NaN elsewhere."""
        np = _ndx().np
        df = self.df + self._zeros()
        finite = self.scale ** 2 * df / (df - 2)
        return np.where(df > 2, finite, np.where(df > 1, math.inf, math.nan))

    def entropy(self):
        np = _ndx().np
        df = self.df
        log_beta = gammaln(df / 2) + math.lgamma(0.5) - gammaln((df + 1) / 2)
        return (np.log(self.scale) + 0.5 * (df + 1) * (digamma((df + 1) / 2) - digamma(df / 2))
                + 0.5 * np.log(df) + log_beta)
