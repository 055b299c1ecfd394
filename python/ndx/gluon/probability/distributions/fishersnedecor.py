"""Snedecor's F distribution."""
import math

from . import constraint
from ._continuous_helpers import constant_over_batch, draw_shape, log_density_on, xlogy
from .distribution import Distribution
from .utils import _ndx, digamma, gammaln

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """FisherSnedecor(df1, df2): the law of (U1 / df1) / (U2 / df2) for independent
    chi-square U1, U2 with df1 and df2 degrees of freedom (arrays or scalars, broadcast
    together).

    Parameters
    ----------
    df1 : array or float
        The degrees of freedom of the numerator, positive.
    df2 : array or float
        The degrees of freedom of the denominator, positive.
    """

    has_grad = False
    support = constraint.Positive()
    arg_constraints = {"df1": constraint.Positive(), "df2": constraint.Positive()}

    def __init__(self, df1, df2, F=None, validate_args=None):  # noqa: N803
        self.df1 = df1
        self.df2 = df2
        super().__init__(F=F, event_dim=0, validate_args=validate_args)

    def _log_beta_fn(self):
        a, b = self.df1 / 2, self.df2 / 2
        return gammaln(a) + gammaln(b) - gammaln(a + b)

    def log_prob(self, value):
        np = _ndx().np
        value = self._maybe_validate(value)
        a, b = self.df1 / 2, self.df2 / 2
        ratio = self.df1 / self.df2

        def log_density(x):
            return (a * np.log(ratio) + xlogy(a - 1, x) - (a + b) * np.log1p(ratio * x)
                    - self._log_beta_fn())

        # (-inf below 0 rather than NaN)
        return log_density_on(value >= 0, value, 1.0, log_density)

    def sample(self, size=None):
        np = _ndx().np
        shape = draw_shape(self, size)
        g1 = np.random.gamma(self.df1 / 2, 1.0, shape)
        g2 = np.random.gamma(self.df2 / 2, 1.0, shape)
        return (g1 * self.df2) / (g2 * self.df1)

    def _df2(self):
        return self.df2 + constant_over_batch(self, 0.0, self.df1, self.df2)

    @property
    def mean(self):
        """df2 / (df2 - 2) where df2 > 2, NaN elsewhere."""
        df2 = self._df2()
        return _ndx().np.where(df2 > 2, df2 / (df2 - 2), math.nan)

    @property
    def variance(self):
        """2 df2^2 (df1 + df2 - 2) / (df1 (df2 - 2)^2 (df2 - 4)) where df2 > 4, infinite
        where 2 < df2 <= 4, NaN elsewhere."""
        np = _ndx().np
        df1, df2 = self.df1, self._df2()
        finite = 2 * df2 ** 2 * (df1 + df2 - 2) / (df1 * (df2 - 2) ** 2 * (df2 - 4))
        return np.where(df2 > 4, finite, np.where(df2 > 2, math.inf, math.nan))

    def entropy(self):
        # X = (df2 / df1) Y for Y beta-prime(a, b): H = H(Y) + log(df2 / df1)
        np = _ndx().np
        a, b = self.df1 / 2, self.df2 / 2
        return (self._log_beta_fn() - (a - 1) * digamma(a) - (b + 1) * digamma(b)
                + (a + b) * digamma(a + b) + np.log(self.df2 / self.df1))
