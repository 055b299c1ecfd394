"""Trainer: applies an optimizer to a block's parameters after backward."""
from .. import optimizer as _opt
from .parameter import Parameter

__all__ = ["Trainer"]


class Trainer:
    """Applies `optimizer` (a name for optimizer.create, with `optimizer_params`, or an
    Optimizer) to the parameters. step(batch_size) scales gradients by
    rescale_grad / batch_size, as MXNet's Trainer does."""

    def __init__(self, params, optimizer="sgd", optimizer_params=None):
        if isinstance(params, dict):
            params = list(params.values())
        self._params = [p for p in params if isinstance(p, Parameter) and p.grad_req != "null"]
        if not self._params and params:
            raise ValueError("[Trainer] no trainable parameters (all have grad_req='null')")
        optimizer_params = dict(optimizer_params or {})
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, _opt.Optimizer):
            if optimizer_params:
                raise ValueError("[Trainer] optimizer_params must be None when optimizer is an "
                                 "Optimizer instance")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = _opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._scale = self._optimizer.rescale_grad
        self._states = {}

    @property
    def optimizer(self):
        return self._optimizer

    @property
    def learning_rate(self):
        """The optimizer's current rate (its lr_scheduler's value at num_update, if any)."""
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr):
        self._optimizer.set_learning_rate(lr)

    def step(self, batch_size, ignore_stale_grad=False):
        """One update; gradients are scaled by rescale_grad / batch_size."""
        self.update(batch_size, ignore_stale_grad)

    def update(self, batch_size, ignore_stale_grad=False):
        """The update of step() (ndx has one device, so there is no allreduce to skip)."""
        if batch_size <= 0:
            raise ValueError(f"[Trainer] batch_size must be > 0, got {batch_size}")
        self._optimizer.rescale_grad = self._scale / batch_size
        for i, p in enumerate(self._params):
            w = p.data()
            if i not in self._states:
                self._states[i] = self._optimizer.create_state_multi_precision(i, w)
            self._optimizer.update_multi_precision(i, w, w.grad, self._states[i])
