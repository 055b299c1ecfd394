"""Optimizers: SGD (momentum, weight decay), Adam and AdamW. Updates are ndx array ops, run
outside autograd recording, written into the parameters in place."""
from . import numpy as np

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "create"]


class Optimizer:
    def __init__(self, learning_rate=0.01, wd=0.0, rescale_grad=1.0, clip_gradient=None):
        if learning_rate <= 0:
            raise ValueError(f"[optimizer] learning_rate must be > 0, got {learning_rate}")
        self.learning_rate = learning_rate
        self.wd = wd
        self.rescale_grad = rescale_grad
        self.clip_gradient = clip_gradient
        self.num_update = 0

    def create_state(self, index, weight):
        return None

    def _prepared_grad(self, grad):
        g = grad * self.rescale_grad
        if self.clip_gradient is not None:
            c = float(self.clip_gradient)
            g = np.minimum(np.maximum(g, -c), c)
        return g

    def update(self, index, weight, grad, state):
        raise NotImplementedError


class SGD(Optimizer):
    """w -= lr * (g + wd * w), with momentum m = momentum * m - lr * (g + wd * w); w += m."""

    def __init__(self, learning_rate=0.01, momentum=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return (np.zeros(weight.shape, dtype=weight.dtype, device=weight.device) if self.momentum
                else None)

    def update(self, index, weight, grad, state):
        g = self._prepared_grad(grad)
        if self.wd:
            g = g + weight * self.wd
        if state is None:
            weight -= g * self.learning_rate
        else:
            state *= self.momentum
            state -= g * self.learning_rate
            weight += state


class Adam(Optimizer):
    """Adam (Kingma and Ba) with bias correction; wd is added to the gradient (L2)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self._steps = {}

    def create_state(self, index, weight):
        return (np.zeros(weight.shape, dtype=weight.dtype, device=weight.device),
                np.zeros(weight.shape, dtype=weight.dtype, device=weight.device))

    def _step(self, index):
        t = self._steps.get(index, 0) + 1
        self._steps[index] = t
        lr = self.learning_rate * (1 - self.beta2**t) ** 0.5 / (1 - self.beta1**t)
        return lr

    def _moments(self, state, g):
        m, v = state
        m *= self.beta1
        m += g * (1 - self.beta1)
        v *= self.beta2
        v += np.square(g) * (1 - self.beta2)
        return m, v

    def update(self, index, weight, grad, state):
        g = self._prepared_grad(grad)
        if self.wd:
            g = g + weight * self.wd
        lr = self._step(index)
        m, v = self._moments(state, g)
        weight -= m / (np.sqrt(v) + self.epsilon) * lr


class AdamW(Adam):
    """Adam with decoupled weight decay: w -= lr * wd * w besides the Adam step."""

    def update(self, index, weight, grad, state):
        g = self._prepared_grad(grad)
        lr = self._step(index)
        m, v = self._moments(state, g)
        if self.wd:
            weight -= weight * (self.learning_rate * self.wd)
        weight -= m / (np.sqrt(v) + self.epsilon) * lr


_NAMES = {"sgd": SGD, "adam": Adam, "adamw": AdamW}


def create(name, **kwargs):
    if isinstance(name, Optimizer):
        return name
    try:
        return _NAMES[name.lower()](**kwargs)
    except KeyError:
        raise ValueError(f"[optimizer] unknown optimizer {name!r}; expected one of "
                         f"{sorted(_NAMES)}") from None
