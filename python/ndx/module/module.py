"""Module: a symbol bound to executors on one or more devices (MXNet 1.x's mx.mod.Module).

    mod = mx.mod.Module(net, data_names=['data'], label_names=['softmax_label'])
    mod.fit(train_iter, eval_data=val_iter, optimizer='sgd',
            optimizer_params={'learning_rate': 0.1}, eval_metric='acc', num_epoch=10)
    mod.score(val_iter, 'acc'); mod.predict(test_iter)

The module keeps its own copy of the parameters (get_params) and the executors' copies on
the devices; update() applies the optimizer to the devices' parameters, by a local updater
on one device or through a KVStore (several devices, or 'dist_sync' across processes), as
MXNet does. As in MXNet, the optimizer's rescale_grad is 1 / batch size unless given (the
loss heads' gradients are per-example sums), biases get no weight decay when the optimizer
is named by a string, and lr_mult / wd_mult come from the symbol's attributes.

Sparse models (MXNet 1.x's sparse examples): CSR batches are fed as their dense values, and a
parameter whose gradient MXNet makes row_sparse -- a variable declared with
stype='row_sparse', or the weight of an Embedding with sparse_grad=True (contrib's
SparseEmbedding) -- reaches the optimizer as a RowSparseNDArray of its nonzero rows, so
lazy_update updates those rows only, as MXNet's. The executors hold the whole weight,
which update() keeps current, so prepare(batch, sparse_row_id_fn) has no rows to pull."""
import json
import logging
import os
import warnings

from .. import kvstore as _kvstore
from .. import model as _model
from .. import numpy as _np
from .. import optimizer as _opt
from ..device import Device, cpu
from ..initializer import InitDesc, Uniform
from ..io import DataDesc
from ..sym import Symbol
from .base_module import BaseModule, _check_input_names, parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]


def _create_kvstore(kvstore, num_device, arg_params):
    """(KVStore or None, update_on_kvstore) as MXNet decides them: no store for one device
    unless distributed; the update on the store unless MXNET_UPDATE_ON_KVSTORE=0 or (for
    'local') a parameter holds more than 16M values."""
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, _kvstore.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = _kvstore.create(kvstore)
            if kvstore == "local" and arg_params and \
                    max(a.size for a in arg_params.values()) > 16 * 1024 * 1024:
                update_on_kvstore = False
    else:
        raise TypeError(f"[Module.init_optimizer] kvstore must be a KVStore, a str or None, "
                        f"got {type(kvstore).__name__}")
    return kv, update_on_kvstore and kv is not None


def _as_row_sparse(grads):
    """The gradients as RowSparseNDArrays of their nonzero rows (MXNet's row_sparse
    gradient: lazy_update updates those rows only)."""
    from ..nd.sparse import cast_storage
    return [cast_storage(g, "row_sparse") for g in grads]


class Module(BaseModule):
    """A symbol with its data, label and parameter names, trained and run on `context` (a
    Device or a list of them: the batch is split over them in proportion to
    work_load_list). fixed_param_names are not trained; state_names are inputs that are
    neither data nor labels nor trained (an RNN's begin states)."""

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if not isinstance(symbol, Symbol):
            raise TypeError(f"[Module] symbol must be a Symbol, got {type(symbol).__name__}")
        if group2ctxs is not None:
            raise NotImplementedError("[Module] group2ctxs (model parallelism over device "
                                      "groups) is not supported")
        context = cpu() if context is None else context
        self._context = list(context) if isinstance(context, (list, tuple)) else [context]
        if not self._context or not all(isinstance(c, Device) for c in self._context):
            raise TypeError(f"[Module] context must be a Device or a non-empty list of "
                            f"Devices, got {context!r}")
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise ValueError(f"[Module] work_load_list has {len(work_load_list)} entries for "
                             f"{len(self._context)} devices")
        self._work_load_list = list(work_load_list)
        self._symbol = symbol
        self._compression_params = compression_params

        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)

        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()

        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ---- checkpoints ----
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module of prefix-symbol.json with the parameters of prefix-%04d.params (and,
        with load_optimizer_states, the optimizer states of prefix-%04d.states, restored at
        init_optimizer). kwargs go to Module()."""
        sym, args, auxs = _model.load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{epoch:04d}.states"
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False,
                        remove_amp_cast=True):
        """Writes prefix-symbol.json, prefix-%04d.params and (save_optimizer_states)
        prefix-%04d.states."""
        self._symbol.save(f"{prefix}-symbol.json")
        param_name = _model._params_file(prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            self.save_optimizer_states(f"{prefix}-{epoch:04d}.states")

    # ---- names and shapes ----
    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        self._require(what="data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self):
        self._require(what="label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._require(what="output_shapes")
        return self._exec_group.get_output_shapes()

    # ---- parameters ----
    def get_params(self):
        """(arg_params, aux_params): the module's copies, brought up to date from the
        devices."""
        self._require(params=True, what="get_params")
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,  # noqa: B008
                    allow_missing=False, force_init=False, allow_extra=False):
        """Fills the parameters and auxiliary states: from arg_params / aux_params by name
        when given (a name they lack raises unless allow_missing, which lets the
        initializer fill it), else by the initializer (Uniform(0.01) by default; a
        variable's own __init__ attribute wins), in sorted name order, as MXNet's (so a
        seeded run draws the same values)."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. init_params "
                          "call ignored.", stacklevel=2)
            return
        self._require(what="init_params")
        attrs = self._symbol.attr_dict()

        def fill(name, arr, cache):
            desc = InitDesc(name, attrs.get(name, None))
            if cache is not None and name in cache:
                src = cache[name]
                if src is not arr:
                    if tuple(src.shape) != tuple(arr.shape):
                        raise ValueError(f"[Module.init_params] '{name}' has shape "
                                         f"{tuple(src.shape)}; the module's is {arr.shape}")
                    arr[...] = _np.array(src, dtype=arr.dtype)
            elif cache is not None and not allow_missing:
                raise RuntimeError(f"{name} is not presented")
            elif initializer is not None:
                initializer(desc, arr)

        for name, arr in sorted(self._arg_params.items()):
            fill(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            fill(name, arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params,
                                    allow_extra=allow_extra)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Sets the parameters from name -> array dicts (a name they lack raises unless
        allow_missing; a name the module lacks raises unless allow_extra)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params "
                          "call ignored.", stacklevel=2)
            return
        self._require(what="set_params")
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # ---- binding ----
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Binds executors for data_shapes / label_shapes (lists of (name, shape) or
        DataDesc, usually the iterator's provide_data / provide_label). The parameter shapes
        are inferred from them. shared_module (a bound, initialized Module: a bucket of a
        BucketingModule) lends its parameter arrays."""
        if force_rebind:
            if self.binded and self.params_initialized and self._params_dirty:
                # (the executors about to go hold the trained values; the new ones get them)
                self._sync_params_from_devices()
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise ValueError("[Module.bind] inputs_need_grad=True needs for_training=True")
        data_shapes, label_shapes = parse_data_desc(self._data_names, self._label_names,
                                                    data_shapes, label_shapes)
        shared_group = None
        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded and
                    shared_module.params_initialized):
                raise ValueError("[Module.bind] shared_module must be a bound Module with "
                                 "initialized parameters")
            shared_group = shared_module._exec_group
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, data_shapes, label_shapes,
            self._param_names, for_training, inputs_need_grad, shared_group,
            logger=self.logger, fixed_param_names=self._fixed_param_names,
            grad_req=grad_req, state_names=self._state_names)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        self.binded = True

        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # re-binding (or Module.load): the module's parameters go to the new executors
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            group = self._exec_group
            params = [n for n in group.arg_names if n in self._param_names]
            self._arg_params = {n: _np.zeros(a[0].shape, dtype=a[0].dtype)
                                for n, a in zip(params, group.param_arrays)}
            self._aux_params = {n: _np.zeros(a[0].shape, dtype=a[0].dtype)
                                for n, a in zip(self._aux_names, group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)

    def reshape(self, data_shapes, label_shapes=None):
        """Re-binds for new input shapes (another batch size), keeping the parameters."""
        self._require(what="reshape")
        data_shapes, label_shapes = parse_data_desc(self._data_names, self._label_names,
                                                    data_shapes, label_shapes)
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        self._exec_group.reshape(data_shapes, label_shapes)

    # ---- optimizer ----
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Installs the optimizer (a name with optimizer_params, or an Optimizer) and the
        KVStore that keeps several devices' (or processes') parameters in step."""
        self._require(params=True, what="init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kv, update_on_kvstore = _create_kvstore(kvstore, len(self._context), self._arg_params)
        batch_size = self._exec_group.batch_size or 1
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        rescale_grad = 1.0 / batch_size

        group = self._exec_group
        params = [n for n in group.arg_names if n in self._param_names]
        if update_on_kvstore:
            idx2name = dict(enumerate(params))
        else:
            n_dev = len(self._context)
            idx2name = {i * n_dev + k: n for i, n in enumerate(params) for k in range(n_dev)}
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            optimizer_params.setdefault("rescale_grad", rescale_grad)
            optimizer = _opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                    **optimizer_params)
        elif isinstance(optimizer, _opt.Optimizer):
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(f"Optimizer created manually outside Module but rescale_grad is "
                              f"not normalized to 1.0/batch_size/num_workers "
                              f"({optimizer.rescale_grad} vs. {rescale_grad}). Is this "
                              f"intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        else:
            raise TypeError(f"[Module.init_optimizer] optimizer must be a name or an "
                            f"Optimizer, got {type(optimizer).__name__}")

        self._optimizer = optimizer
        self._kvstore = kv
        self._update_on_kvstore = update_on_kvstore
        self._updater = None if update_on_kvstore else _opt.get_updater(optimizer)
        if kv is not None:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            for index, (name, on_devices) in enumerate(zip(params, group.param_arrays)):
                kv.init(name, self._arg_params[name])
                if update_on_kvstore or "dist" in kv.type:
                    # (every device, and every worker, starts from the store's value:
                    # rank 0's for a distributed store)
                    kv.pull(name, on_devices, priority=-index)
            self._params_dirty = True
            if update_on_kvstore:
                kv.set_optimizer(self._optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Uses shared_module's optimizer, updater and KVStore (BucketingModule's
        buckets)."""
        if not shared_module.optimizer_initialized:
            raise ValueError("[Module.borrow_optimizer] the shared module has no optimizer")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname):
        """Writes the optimizer's states (the updater's, or the KVStore's)."""
        self._require(optimizer=True, what="save_optimizer_states")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            with open(fname, "wb") as f:
                f.write(self._updater.get_states())

    def load_optimizer_states(self, fname):
        """Reads what save_optimizer_states wrote."""
        self._require(optimizer=True, what="load_optimizer_states")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, "rb") as f:
                self._updater.set_states(f.read())

    # ---- computation ----
    def forward(self, data_batch, is_train=None):
        """Runs a DataBatch (is_train defaults to for_training). A batch of other shapes
        than the bound ones (the last, smaller batch) re-binds first (reshape)."""
        self._require(params=True, what="forward")
        if isinstance(data_batch, list):
            raise NotImplementedError("[Module.forward] pre-sliced (list) batches are not "
                                      "supported; give one DataBatch")
        new_shapes = tuple(tuple(d.shape) for d in data_batch.data)
        # (a batch with labels after a bind / reshape without them -- predict's -- binds them
        # again, else its labels would be ignored and training would read stale ones)
        batch_label = getattr(data_batch, "label", None)  # (a namedtuple Batch has none)
        labels_unbound = bool(batch_label) and bool(self._label_names) and \
            not self._label_shapes
        if tuple(tuple(d.shape) for d in self._data_shapes) != new_shapes or labels_unbound:
            new_dshape = getattr(data_batch, "provide_data", None) or \
                [DataDesc(d.name, s, d.dtype, d.layout)
                 for d, s in zip(self._data_shapes, new_shapes)]
            new_lshape = getattr(data_batch, "provide_label", None)
            if not new_lshape and batch_label and self._label_shapes:
                new_lshape = [DataDesc(d.name, tuple(lab.shape), d.dtype, d.layout)
                              for d, lab in zip(self._label_shapes, batch_label)]
            elif not new_lshape and labels_unbound:
                new_lshape = [DataDesc(n, tuple(lab.shape))
                              for n, lab in zip(self._label_names, batch_label)]
            self.reshape(new_dshape, new_lshape or None)
        self._exec_group.forward(data_batch, is_train)
        if is_train or (is_train is None and self.for_training):
            self._params_dirty = True  # (training updates the auxiliary states)

    def backward(self, out_grads=None):
        """Back-propagates the last forward (out_grads: the gradients of outputs that are
        not loss heads)."""
        self._require(params=True, what="backward")
        self._exec_group.backward(out_grads=out_grads)

    def _row_sparse_grads(self):
        """The names of the parameters whose gradient MXNet makes row_sparse (see the module
        docstring), found in the symbol's graph once per symbol."""
        cached = self.__dict__.get("_sparse_grad_cache")
        if cached is not None and cached[0] is self._symbol:
            return cached[1]
        nodes = json.loads(self._symbol.tojson())["nodes"]
        names = {n["name"] for n in nodes if n["op"] == "null" and
                 n.get("attrs", {}).get("__storage_type__") == "1"}
        for n in nodes:
            if n["op"] == "_npx_embedding" and \
                    n.get("attrs", {}).get("sparse_grad") in ("True", "true", "1"):
                weight = nodes[n["inputs"][1][0]]
                if weight["op"] == "null":
                    names.add(weight["name"])
        names &= set(self._param_names)
        self._sparse_grad_cache = (self._symbol, names)
        return names

    def update(self):
        """Applies the optimizer to the parameters with the gradients of the last
        backward."""
        self._require(params=True, optimizer=True, what="update")
        self._params_dirty = True
        group = self._exec_group
        params = [n for n in group.arg_names if n in self._param_names]
        n_dev = len(self._context)
        updates = [[] for _ in range(n_dev)]
        sparse = self._row_sparse_grads()
        for index, (name, weights, grads) in enumerate(zip(params, group.param_arrays,
                                                           group.grad_arrays)):
            if grads[0] is None:
                continue
            if self._update_on_kvstore:
                self._kvstore.push(name, _as_row_sparse(grads) if name in sparse else grads,
                                   priority=-index)
                self._kvstore.pull(name, weights, priority=-index)
                continue
            if self._kvstore is not None:  # (summed over the devices, the sum on each)
                self._kvstore.push(name, grads, priority=-index)
                self._kvstore.pull(name, grads, priority=-index)
            if name in sparse:
                grads = _as_row_sparse(grads)
            for k, (w, g) in enumerate(zip(weights, grads)):
                updates[k].append((index * n_dev + k, g, w))
        for device_updates in updates:
            if device_updates:
                indices, grads, weights = zip(*device_updates)
                self._updater(list(indices), list(grads), list(weights))

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward (per device without merge_multi_context)."""
        self._require(params=True, what="get_outputs")
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data (bind with inputs_need_grad=True)."""
        self._require(params=True, what="get_input_grads")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        self._require(params=True, what="get_states")
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Sets the state arrays (state_names) to `states` or fills them with `value`."""
        self._require(params=True, what="set_states")
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulates eval_metric over the last forward's outputs and `labels`."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Gets ready for data_batch. sparse_row_id_fn (MXNet's: batch -> {parameter name:
        the row ids it needs}) is called and checked; the executors hold the whole of every
        weight, kept current by update(), so no rows need pulling."""
        self._require(what="prepare")
        if sparse_row_id_fn is None:
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise TypeError(f"[Module.prepare] sparse_row_id_fn must return a dict {{parameter "
                            f"name: row ids}}, got {type(row_ids).__name__}")
        unknown = [n for n in row_ids if n not in self._param_names]
        if unknown:
            raise ValueError(f"[Module.prepare] sparse_row_id_fn names {unknown}, which are "
                             f"not parameters of the module ({sorted(self._param_names)})")

    def install_monitor(self, mon):
        """Installs mx.monitor.Monitor `mon` on the executors (and those a reshape makes)."""
        self._require(what="install_monitor")
        self._exec_group.install_monitor(mon)
