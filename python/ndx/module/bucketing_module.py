"""BucketingModule: one Module per bucket key (an RNN unrolled to each sequence length), all
training one set of parameters (MXNet 1.x's mx.mod.BucketingModule).

    def sym_gen(seq_len):
        ...                                  # the network unrolled seq_len steps
        return net, ('data',), ('softmax_label',)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=max_len)
    mod.fit(bucket_iter, ...)                # batches carry bucket_key and provide_data

The default bucket is bound first (it should be the largest); each new key's module is
bound sharing its parameter arrays and optimizer."""
import logging

from ..base import NDXRuntimeError
from ..initializer import Uniform
from .base_module import BaseModule
from .module import Module

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """sym_gen(bucket_key) returns (symbol, data_names, label_names); the other arguments
    are Module's, for every bucket."""

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None,
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if not callable(sym_gen):
            raise TypeError(f"[BucketingModule] sym_gen must be a function of the bucket key, "
                            f"got {type(sym_gen).__name__}")
        if default_bucket_key is None:
            raise ValueError("[BucketingModule] default_bucket_key is required")
        self._sym_gen = sym_gen
        self._default_bucket_key = default_bucket_key
        self._module_kwargs = dict(logger=logger, context=context,
                                   work_load_list=work_load_list,
                                   fixed_param_names=fixed_param_names,
                                   state_names=state_names, group2ctxs=group2ctxs,
                                   compression_params=compression_params)
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        self._default_module = Module(symbol, data_names, label_names, **self._module_kwargs)
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._grad_req = "write"
        self._monitor = None
        self._preload = None

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule of sym_gen whose parameters come from prefix-%04d.params (set at
        bind), as MXNet's; kwargs go to BucketingModule()."""
        if sym_gen is None or default_bucket_key is None:
            raise ValueError("[BucketingModule.load] sym_gen and default_bucket_key are "
                             "required to load a BucketingModule")
        from ..model import load_params
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        mod._preload = load_params(prefix, epoch)
        return mod

    def _call_sym_gen(self, key):
        out = self._sym_gen(key)
        if not (isinstance(out, tuple) and len(out) == 3):
            raise TypeError(f"[BucketingModule] sym_gen({key!r}) must return (symbol, "
                            f"data_names, label_names), got {type(out).__name__}")
        symbol, data_names, label_names = out
        return symbol, (list(data_names) if data_names is not None else []), \
            (list(label_names) if label_names is not None else [])

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _current(self, what):
        if self._curr_module is None:
            raise NDXRuntimeError(f"[BucketingModule.{what}] call bind() first")
        return self._curr_module

    # ---- names and shapes (of the current bucket) ----
    @property
    def data_names(self):
        return (self._curr_module or self._default_module).data_names

    @property
    def label_names(self):
        return (self._curr_module or self._default_module).label_names

    @property
    def output_names(self):
        return (self._curr_module or self._default_module).output_names

    @property
    def data_shapes(self):
        return self._current("data_shapes").data_shapes

    @property
    def label_shapes(self):
        return self._current("label_shapes").label_shapes

    @property
    def output_shapes(self):
        return self._current("output_shapes").output_shapes

    @property
    def symbol(self):
        return (self._curr_module or self._default_module).symbol

    # ---- parameters ----
    def get_params(self):
        self._require(params=True, what="get_params")
        module = self._buckets[self._default_bucket_key]
        module._params_dirty = module._params_dirty or self._params_dirty
        params = module.get_params()
        self._params_dirty = False
        return params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,  # noqa: B008
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._require(what="init_params")
        self._buckets[self._default_bucket_key].init_params(
            initializer=initializer, arg_params=arg_params, aux_params=aux_params,
            allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        self._require(what="set_params")
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        self._buckets[self._default_bucket_key].set_params(
            arg_params, aux_params, allow_missing=allow_missing, force_init=force_init,
            allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        return self._current("get_states").get_states(merge_multi_context)

    def set_states(self, states=None, value=None):
        self._current("set_states").set_states(states, value)

    # ---- binding ----
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Binds the default bucket's module."""
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise ValueError("[BucketingModule.bind] shared_module is not supported for a "
                             "BucketingModule")
        module = self._default_module
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=force_rebind, grad_req=grad_req)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self.binded = True
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self.params_initialized:
            self.set_params(arg_params, aux_params)
        elif self._preload is not None:  # (BucketingModule.load's parameters)
            arg_params, aux_params = self._preload
            self._preload = None
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Makes bucket_key's module current, binding it (sharing the default bucket's
        parameters) the first time."""
        self._require(what="switch_bucket")
        if bucket_key not in self._buckets:
            symbol, data_names, label_names = self._call_sym_gen(bucket_key)
            module = Module(symbol, data_names, label_names, **self._module_kwargs)
            default = self._buckets[self._default_bucket_key]
            module.bind(data_shapes, label_shapes, self.for_training, self.inputs_need_grad,
                        force_rebind=False, shared_module=default, grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        self._curr_module = self._buckets[bucket_key]
        self._curr_bucket_key = bucket_key

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        self._require(params=True, what="init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        default = self._buckets[self._default_bucket_key]
        default.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for module in self._buckets.values():
            if module is not default:
                module.borrow_optimizer(default)
        self.optimizer_initialized = True

    # ---- computation ----
    def forward(self, data_batch, is_train=None):
        """Runs the batch on the module of its bucket_key (the default one when None)."""
        self._require(params=True, what="forward")
        key = data_batch.bucket_key
        if key is None:
            key = self._default_bucket_key
        data_shapes = getattr(data_batch, "provide_data", None)
        if key not in self._buckets and not data_shapes:
            raise ValueError(f"[BucketingModule.forward] the batch of the new bucket {key!r} "
                             f"needs provide_data (and provide_label) to bind its module")
        self.switch_bucket(key, data_shapes, getattr(data_batch, "provide_label", None))
        self._curr_module.forward(data_batch, is_train=is_train)
        if is_train or (is_train is None and self.for_training):
            self._params_dirty = True

    def backward(self, out_grads=None):
        self._current("backward").backward(out_grads=out_grads)

    def update(self):
        self._require(params=True, optimizer=True, what="update")
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        return self._current("get_outputs").get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        return self._current("get_input_grads").get_input_grads(merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._current("update_metric").update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Installs `mon` on every bucket's executors, present and future."""
        self._require(what="install_monitor")
        self._monitor = mon
        for module in self._buckets.values():
            module.install_monitor(mon)

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False,
                        remove_amp_cast=True):
        """Writes the default bucket's symbol as prefix-symbol.json, the parameters and
        (save_optimizer_states) the optimizer states, which every bucket shares."""
        self._require(params=True, what="save_checkpoint")
        self.get_params()  # (training on other buckets only leaves the default one clean)
        self._buckets[self._default_bucket_key].save_checkpoint(prefix, epoch,
                                                                save_optimizer_states)

    def save_optimizer_states(self, fname):
        self._require(optimizer=True, what="save_optimizer_states")
        self._buckets[self._default_bucket_key].save_optimizer_states(fname)

    def load_optimizer_states(self, fname):
        self._require(optimizer=True, what="load_optimizer_states")
        self._buckets[self._default_bucket_key].load_optimizer_states(fname)
