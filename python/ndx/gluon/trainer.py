"""Trainer: applies an optimizer to a block's parameters after backward."""
from .. import optimizer as _opt
from .parameter import Parameter

__all__ = ["Trainer"]


class Trainer:
    def __init__(self, params, optimizer="sgd", optimizer_params=None):
        if isinstance(params, dict):
            params = list(params.values())
        self._params = [p for p in params if isinstance(p, Parameter) and p.grad_req != "null"]
        if not self._params and params:
            raise ValueError("[Trainer] no trainable parameters (all have grad_req='null')")
        self._optimizer = _opt.create(optimizer, **(optimizer_params or {}))
        self._states = {}

    @property
    def learning_rate(self):
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr):
        self._optimizer.learning_rate = lr

    def step(self, batch_size, ignore_stale_grad=False):
        """One update; gradients are scaled by 1 / batch_size."""
        if batch_size <= 0:
            raise ValueError(f"[Trainer] batch_size must be > 0, got {batch_size}")
        self._optimizer.rescale_grad = 1.0 / batch_size
        for i, p in enumerate(self._params):
            w = p.data()
            if i not in self._states:
                self._states[i] = self._optimizer.create_state(i, w)
            self._optimizer.update(i, w, w.grad, self._states[i])
