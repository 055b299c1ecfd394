"""gluon.probability: MXNet 2.0's probability module (``import mxnet.gluon.probability as
mgp``): distributions with log_prob / cdf / icdf / sample / entropy / mean / variance, their
KL divergences, transformations, and StochasticBlock for losses collected in forward."""
from .block import *  # noqa: F401,F403
from .distributions import *  # noqa: F401,F403
from .transformation import *  # noqa: F401,F403
