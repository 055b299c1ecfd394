"""gluon.probability.distributions: MXNet 2.0's distribution classes, their constraints and
KL divergences."""
from . import constraint, utils  # noqa: F401
from .bernoulli import *  # noqa: F401,F403
from .beta import *  # noqa: F401,F403
from .binomial import *  # noqa: F401,F403
from .categorical import *  # noqa: F401,F403
from .cauchy import *  # noqa: F401,F403
from .chi2 import *  # noqa: F401,F403
from .constraint import *  # noqa: F401,F403
from .dirichlet import *  # noqa: F401,F403
from .distribution import *  # noqa: F401,F403
from .divergence import *  # noqa: F401,F403
from .exp_family import *  # noqa: F401,F403
from .exponential import *  # noqa: F401,F403
from .fishersnedecor import *  # noqa: F401,F403
from .gamma import *  # noqa: F401,F403
from .geometric import *  # noqa: F401,F403
from .gumbel import *  # noqa: F401,F403
from .half_cauchy import *  # noqa: F401,F403
from .half_normal import *  # noqa: F401,F403
from .independent import *  # noqa: F401,F403
from .laplace import *  # noqa: F401,F403
from .multinomial import *  # noqa: F401,F403
from .multivariate_normal import *  # noqa: F401,F403
from .negative_binomial import *  # noqa: F401,F403
from .normal import *  # noqa: F401,F403
from .one_hot_categorical import *  # noqa: F401,F403
from .pareto import *  # noqa: F401,F403
from .poisson import *  # noqa: F401,F403
from .relaxed_bernoulli import *  # noqa: F401,F403
from .relaxed_one_hot_categorical import *  # noqa: F401,F403
from .student_t import *  # noqa: F401,F403
from .transformed_distribution import *  # noqa: F401,F403
from .uniform import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403
from .weibull import *  # noqa: F401,F403
