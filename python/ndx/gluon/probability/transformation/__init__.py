"""gluon.probability.transformation: invertible transformations of random variables and the
domain maps (biject_to / transform_to) from the reals onto a constraint's region."""
from .domain_map import *  # noqa: F401,F403
from .transformation import *  # noqa: F401,F403
