"""gluon.probability.distributions: MXNet 2.0's distribution classes, their constraints and
KL divergences."""
from . import constraint, utils  # noqa: F401
from .constraint import *  # noqa: F401,F403
from .distribution import *  # noqa: F401,F403
from .divergence import *  # noqa: F401,F403
from .exp_family import *  # noqa: F401,F403
from .normal import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403
