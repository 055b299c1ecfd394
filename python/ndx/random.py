"""ndx.random: MXNet's mx.random (seed, uniform, normal, randint, ...) over ndx's one generator.

``ndx.random.seed(n)`` seeds everything random in ndx: np.random / npx.random, dropout,
parameter initializers and DataLoader shuffling all draw from the same Philox-based generator
(see ndx.numpy.random)."""
from .numpy.random import (  # noqa: F401
    exponential,
    gamma,
    multinomial,
    normal,
    randint,
    randn,
    seed,
    shuffle,
    uniform,
)

__all__ = ["seed", "uniform", "normal", "randn", "randint", "gamma", "exponential",
           "multinomial", "shuffle"]
