"""ndx.random: MXNet's mx.random (seed, uniform, normal, randint, ...) over ndx's one generator.

``ndx.random.seed(n)`` seeds everything random in ndx: np.random / npx.random, dropout,
parameter initializers and DataLoader shuffling all draw from the same Philox-based generator
(see ndx.numpy.random)."""
from .numpy import random as _np_random
from .numpy.random import (  # noqa: F401
    exponential,
    gamma,
    multinomial,
    normal,
    randint,
    randn,
    shuffle,
    uniform,
)


def seed(seed_state=None, device="all", ctx=None):
    """Seeds ndx's generator (MXNet's mx.random.seed(seed_state, device='all')). ndx has one
    generator for every device, so `device` (or MXNet 1.x's `ctx`) only has to name a device
    or be 'all'."""
    from .device import Device
    if ctx is not None:
        device = ctx
    if device != "all":
        Device(device)  # a typed error for something that is not a device
    _np_random.seed(seed_state)

__all__ = ["seed", "uniform", "normal", "randn", "randint", "gamma", "exponential",
           "multinomial", "shuffle"]
