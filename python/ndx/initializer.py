"""Parameter initializers: Uniform, Normal, Xavier, Zero, One, Constant. The random ones draw
from ndx's generator (np.random), so ndx.random.seed / np.random.seed make them repeatable."""
import math

import numpy as _onp

from . import numpy as np

__all__ = ["Initializer", "Uniform", "Normal", "Xavier", "Zero", "One", "Constant", "create"]


class Initializer:
    """Fills a new parameter of `shape` and `dtype`; subclasses implement `values`."""

    def __call__(self, shape, dtype="float32", device=None):
        v = self.values(tuple(shape))
        if isinstance(v, np.ndarray):
            return v.astype(dtype)
        return np.array(_onp.asarray(v), dtype=dtype)

    def values(self, shape):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class Uniform(Initializer):
    def __init__(self, scale=0.07):
        self.scale = scale

    def values(self, shape):
        return np.random.uniform(-self.scale, self.scale, size=shape)


class Normal(Initializer):
    def __init__(self, sigma=0.01):
        self.sigma = sigma

    def values(self, shape):
        return np.random.normal(0.0, self.sigma, size=shape)


class Constant(Initializer):
    def __init__(self, value):
        self.value = value

    def values(self, shape):
        return _onp.full(shape, self.value)


class Zero(Constant):
    def __init__(self):
        super().__init__(0.0)


class One(Constant):
    def __init__(self):
        super().__init__(1.0)


class Xavier(Initializer):
    """Glorot: scale sqrt(magnitude / fan) with fan from factor_type ('avg', 'in', 'out')."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3.0):
        if rnd_type not in ("uniform", "gaussian"):
            raise ValueError(f"[Xavier] rnd_type must be 'uniform' or 'gaussian', got {rnd_type!r}")
        if factor_type not in ("avg", "in", "out"):
            raise ValueError(
                f"[Xavier] factor_type must be 'avg', 'in' or 'out', got {factor_type!r}")
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, magnitude

    def values(self, shape):
        if len(shape) < 2:
            raise ValueError(f"[Xavier] needs a parameter of at least 2 dims, got shape {shape}")
        receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        fan = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = math.sqrt(self.magnitude / fan)
        if self.rnd_type == "uniform":
            return np.random.uniform(-scale, scale, size=shape)
        return np.random.normal(0.0, scale, size=shape)


_NAMES = {"zeros": Zero, "zero": Zero, "ones": One, "one": One, "uniform": Uniform,
          "normal": Normal, "xavier": Xavier}


def create(init):
    """An Initializer from an instance, a name ('zeros', 'xavier', ...) or None (Uniform)."""
    if init is None:
        return Uniform()
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str) and init.lower() in _NAMES:
        return _NAMES[init.lower()]()
    raise ValueError(f"[initializer] unknown initializer {init!r}; expected one of "
                     f"{sorted(_NAMES)} or an Initializer")
