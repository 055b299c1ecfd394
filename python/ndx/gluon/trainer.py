"""Trainer: applies an optimizer to a block's parameters after backward."""
from .. import kvstore as _kv
from .. import optimizer as _opt
from .parameter import Parameter

__all__ = ["Trainer"]


class Trainer:
    """Applies `optimizer` (a name for optimizer.create, with `optimizer_params`, or an
    Optimizer) to the parameters. step(batch_size) scales gradients by
    rescale_grad / batch_size, as MXNet's Trainer does.

    kvstore: a type name ('device', the default, or 'local'), a KVStore, or None. As in
    MXNet, a type name in one process with one device needs no store, so none is made. A
    KVStore instance is used: gradients go through it (pushpull), or with update_on_kvstore
    (the default for an instance) the store applies the optimizer and the weights are pulled
    back. Distributed types raise NotImplementedError (issue 17). compression_params: only
    {'type': 'none'}."""

    def __init__(self, params, optimizer="sgd", optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
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
        self._kvstore, self._update_on_kvstore = self._init_kvstore(
            kvstore, compression_params, update_on_kvstore)

    def _init_kvstore(self, kvstore, compression_params, update_on_kvstore):
        if kvstore is None or isinstance(kvstore, str):
            if isinstance(kvstore, str):
                _kv.create(kvstore)  # a typed error for unknown and distributed types
            if compression_params and compression_params.get("type", "none") != "none":
                raise NotImplementedError("[Trainer] gradient compression is not supported")
            if update_on_kvstore:
                raise ValueError("[Trainer] update_on_kvstore=True needs a store, and one "
                                 "process with one device makes none (pass a KVStore)")
            return None, False
        if not isinstance(kvstore, _kv.KVStoreBase):
            raise TypeError(f"[Trainer] kvstore must be a str, a KVStore or None, got "
                            f"{type(kvstore).__name__}")
        if compression_params:
            kvstore.set_gradient_compression(compression_params)
        on_store = True if update_on_kvstore is None else bool(update_on_kvstore)
        self._kv_keys = set()  # keys are initialized at the first step, once weights exist
        if on_store:
            kvstore.set_optimizer(self._optimizer)
        return kvstore, on_store

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
        if self._kvstore is not None:
            self._update_through_kvstore()
            return
        for i, p in enumerate(self._params):
            w = p.data()
            if i not in self._states:
                self._states[i] = self._optimizer.create_state_multi_precision(i, w)
            self._optimizer.update_multi_precision(i, w, w.grad, self._states[i])

    def _update_through_kvstore(self):
        kv = self._kvstore
        for i, p in enumerate(self._params):
            w = p.data()
            if i not in self._kv_keys:
                kv.init(i, w)
                self._kv_keys.add(i)
            if self._update_on_kvstore:  # the store updates its copy; the weight is pulled
                kv.push(i, w.grad)
                kv.pull(i, out=w)
            else:  # the gradients are summed over workers, then updated here
                kv.pushpull(i, w.grad)
                if i not in self._states:
                    self._states[i] = self._optimizer.create_state_multi_precision(i, w)
                self._optimizer.update_multi_precision(i, w, w.grad, self._states[i])

    @property
    def kvstore(self):
        return self._kvstore
