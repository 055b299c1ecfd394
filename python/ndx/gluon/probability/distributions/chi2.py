"""The chi-square distribution: Gamma(df / 2, 2)."""
from . import constraint
from .exp_family import ExponentialFamily
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi2(df): the sum of ``df`` squared standard normals, i.e. Gamma(shape=df / 2,
    scale=2); everything but the parameters comes from Gamma.

    Parameters
    ----------
    df : array or float
        The degrees of freedom, positive.
    """

    arg_constraints = {"df": constraint.Positive()}

    def __init__(self, df, F=None, validate_args=None):  # noqa: N803
        self.df = df
        # (not Gamma.__init__: shape and scale are read from df, so broadcast_to and the
        # validation see the one parameter)
        ExponentialFamily.__init__(self, F=F, event_dim=0, validate_args=validate_args)

    @property
    def shape(self):
        return self.df / 2

    @property
    def scale(self):
        return 2.0
