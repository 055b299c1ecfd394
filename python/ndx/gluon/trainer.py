"""Trainer: applies an optimizer to a block's parameters after backward."""
import functools
import weakref

from .. import _core
from .. import autograd as _autograd
from .. import kvstore as _kv
from .. import optimizer as _opt
from .parameter import Parameter

__all__ = ["Trainer"]


class Trainer:
    """Applies `optimizer` (a name for optimizer.create, with `optimizer_params`, or an
    Optimizer) to the parameters. step(batch_size) scales gradients by
    rescale_grad / batch_size, as MXNet's Trainer does.

    kvstore: a type name ('device', the default, 'local' or 'dist_sync'), a KVStore, or
    None. As in MXNet, 'device' or 'local' in one process with one device needs no store, so
    none is made. A store is used: gradients go through it (pushpull), or with
    update_on_kvstore (the default with a KVStore instance) the store applies the optimizer
    and the weights are pulled back. With 'dist_sync' (update_on_kvstore False unless given:
    the same numbers, without the store's copies) every worker starts from rank 0's parameters
    (broadcast when the Trainer is made, or when a deferred parameter gets its shape) and the
    gradients are summed over the workers, as MXNet sums them: pass the global batch size
    (the per-worker batch times kvstore.num_workers) to step() for the update one process
    would make on the concatenated batches. compression_params: only {'type': 'none'}.

    Several devices in one process (parameters initialized with ctx=[cpu(0), cpu(1)], one
    copy per device, as MXNet's data parallelism): step() sums the gradients of the copies
    (what MXNet's 'device' / 'local' store does; allreduce_grads() alone does that), updates
    the first copy and copies the result to the others, so the copies stay equal. Pass the
    whole batch's size to step(): the update is the one the concatenated batch would make
    on one device. With a store (a KVStore, or update_on_kvstore=True) the copies'
    gradients are pushed as one key's values and the weights pulled into every copy.

    Stale gradients (MXNet's check): step() / update() raise UserWarning when a parameter's
    gradient has not been written by a backward pass since the last step, unless
    ignore_stale_grad=True, which skips updating those parameters. Backward flags each
    gradient it writes (autograd's fresh-gradient flag, read and cleared here at each step);
    a parameter whose array was replaced since the last step, or since the Trainer was made
    (a deferred parameter's first step, set_data with a new array, cast, reset_device),
    counts as fresh, as nothing could have been observed. Gradients written by hand
    (p.grad()[:] = ...) or by autograd.grad are not backward writes, as in MXNet; but until
    backward has written any of this Trainer's gradients there is nothing to check against,
    and no check is made (MXNet would raise there as well: code that only sets gradients by
    hand keeps working here)."""

    def __init__(self, params, optimizer="sgd", optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        names = {}
        if isinstance(params, dict):
            names = {}
            for n, p in params.items():  # (a shared parameter keeps its first name)
                names.setdefault(id(p), n)
            params = list(params.values())
        # Each parameter once (a layer used twice, or share_parameters, lists it under two
        # names), frozen ones (grad_req='null') included: as in MXNet, each step skips the
        # parameters frozen at that time, so one unfrozen later is trained.
        self._params, seen = [], set()
        for p in params:
            if not isinstance(p, Parameter):
                raise ValueError("[Trainer] params must be a dict or list of Parameters "
                                f"(net.collect_params()), got an element of type "
                                f"{type(p).__name__}")
            if id(p) not in seen:
                seen.add(id(p))
                self._params.append(p)
        self._names = [names.get(id(p), p.name) for p in self._params]
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
        self._overlap = None
        self._kvstore, self._update_on_kvstore = self._init_kvstore(
            kvstore, compression_params, update_on_kvstore)
        for i in self._sparse_weights:
            self._params[i]._set_trainer(self)
        # (array, grad_req) at the last step, or when the Trainer was made: a parameter
        # unused by the first backward is stale then too, as in MXNet
        self._stepped = [(p._data, p.grad_req) if p._data is not None else None
                         for p in self._params]
        self._seen_backward = False  # whether backward has written any of the gradients

    def _init_kvstore(self, kvstore, compression_params, update_on_kvstore):
        # Row-sparse weights (Parameter(stype='row_sparse')) live in a store, which updates
        # them: MXNet's rule, whatever the store type (one process, one device included).
        self._sparse_weights = [i for i, p in enumerate(self._params)
                                if p.stype == "row_sparse"]
        # Parameters whose gradient is row_sparse: the store's updater gets it as one.
        self._sparse_grads = {i for i, p in enumerate(self._params)
                              if getattr(p, "grad_stype", "default") == "row_sparse"}
        if self._sparse_weights:
            for i in self._sparse_weights:  # (tied to this Trainer once it is made)
                self._params[i]._check_trainer(self)
            kvstore, update_on_kvstore = self._sparse_weight_store(kvstore, update_on_kvstore)
        if isinstance(kvstore, str) and kvstore in _kv._DIST_TYPES:
            kvstore = _kv.create(kvstore)
            if update_on_kvstore is None:
                # MXNet lets the Trainer choose. With no servers, updating here after the
                # allreduce gives the same numbers as updating on the store, without the
                # store's copies of the weights.
                update_on_kvstore = False
        if kvstore is None or isinstance(kvstore, str):
            store = None
            if isinstance(kvstore, str):
                store = _kv.create(kvstore)  # a typed error for unknown and unsupported types
            if compression_params and compression_params.get("type", "none") != "none":
                raise NotImplementedError("[Trainer] gradient compression is not supported")
            if not update_on_kvstore:
                return None, False
            if store is None or not any(p._devices is not None for p in self._params):
                raise ValueError("[Trainer] update_on_kvstore=True needs a store, and one "
                                 "process with one device makes none (pass a KVStore, or "
                                 "initialize the parameters on several devices first)")
            kvstore = store  # several devices: MXNet's store, which updates the weights
        if not isinstance(kvstore, _kv.KVStoreBase):
            raise TypeError(f"[Trainer] kvstore must be a str, a KVStore or None, got "
                            f"{type(kvstore).__name__}")
        if compression_params:
            kvstore.set_gradient_compression(compression_params)
        on_store = True if update_on_kvstore is None else bool(update_on_kvstore)
        self._kv_keys = set()  # keys are initialized once their weights exist
        if on_store:
            kvstore.set_optimizer(self._optimizer)
            # set_data (load_parameters: a checkpoint resumed) after this point must reach
            # the store's copy, or the next step would update the old weights and pull them
            # back over the new ones (MXNet resets its store in set_data)
            me = weakref.ref(self)
            for i, p in enumerate(self._params):
                hooks = p.__dict__.setdefault("_on_set", [])
                hooks[:] = [h for h in hooks if not _dead_hook(h)]
                hooks.append(functools.partial(_store_value_set, me, i))
        self._kvstore = kvstore
        self._init_kv_keys([i for i, p in enumerate(self._params) if p._data is not None])
        for i, p in enumerate(self._params):
            if p._data is None:  # deferred: its key is made when forward gives it a shape
                p._on_create.append(lambda _p, i=i: self._init_kv_keys([i]))
        return kvstore, on_store

    def _sparse_weight_store(self, kvstore, update_on_kvstore):
        names = [self._names[i] for i in self._sparse_weights]
        if update_on_kvstore is not None and not update_on_kvstore:
            raise ValueError(f"[Trainer] update_on_kvstore=False is not supported with "
                             f"row_sparse weights ({', '.join(names)}): the store holds and "
                             "updates them")
        if kvstore is None:
            raise TypeError(f"[Trainer] row_sparse weights ({', '.join(names)}) need a "
                            "KVStore, which holds them; got kvstore=None")
        if isinstance(kvstore, str):
            kvstore = _kv.create(kvstore)
        return kvstore, True

    def _sparse_index(self, parameter):
        return next(i for i in self._sparse_weights if self._params[i] is parameter)

    def _stored_weight(self, parameter):
        """The store's array of a row_sparse weight (None before the store holds it)."""
        index = self._sparse_index(parameter)
        stored = getattr(self._kvstore, "_store", None)
        if index not in self._kv_keys or stored is None:
            return None
        return stored[index]

    def _row_sparse_pull(self, parameter, out, row_id):
        """Fills `out` (a RowSparseNDArray) with the rows row_id lists of `parameter`'s
        weight, from the store (Parameter.row_sparse_data calls it)."""
        index = self._sparse_index(parameter)
        self._init_kv_keys([index])
        self._kvstore.row_sparse_pull(index, out=out, row_ids=row_id)

    def _init_kv_keys(self, indices):
        """Puts the weights under their keys (one call for all, so a distributed store
        broadcasts rank 0's values in one collective) and copies the stored values back:
        every worker then starts from rank 0's weights."""
        indices = [i for i in indices if i not in self._kv_keys]
        if not indices:
            return
        weights = [self._params[i]._data if self._params[i]._copies is None else
                   self._params[i]._copies for i in indices]
        with _autograd.pause():  # (a deferred parameter is made inside a recorded forward)
            self._kvstore.init(indices, weights)
            self._kvstore.pull(indices, out=weights)
        self._kv_keys.update(indices)
        stored = getattr(self._kvstore, "_store", None)
        for i in self._sparse_weights:
            if i in indices and stored is not None:
                # a row_sparse weight is the store's array: one copy of the whole table,
                # which set_data and save_parameters see as the store updates it
                self._params[i]._data = stored[i]

    def _refresh_store_value(self, index):
        """The store's copy of parameter `index` takes the parameter's new value (locally: on
        a distributed store, every worker sets the same value, as load_parameters on each
        worker does)."""
        stored = getattr(self._kvstore, "_store", None)
        if not self._update_on_kvstore or stored is None or index not in stored:
            return
        if index in self._sparse_weights:  # the store takes the array: the one copy
            stored[index] = self._params[index]._data
            return
        with _autograd.pause():
            stored[index] = self._params[index]._data.copy()

    def _updater_states(self):
        """The optimizer states of the parameters: the store's when it updates the weights
        (update_on_kvstore), the Trainer's otherwise."""
        updater = getattr(self._kvstore, "_updater", None)
        if self._kvstore is not None and self._update_on_kvstore and updater is not None:
            return updater.states
        return self._states

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
        """One update; gradients are scaled by rescale_grad / batch_size. With several
        devices, the copies' gradients are summed first (allreduce_grads)."""
        if Parameter._multi and self._kvstore is None and self._multi_device():
            _checked_batch_size(batch_size)
            self._allreduce_copies()
        self.update(batch_size, ignore_stale_grad)

    def _trainable(self, indices=None):
        """`indices` (None: all) less the parameters frozen now (grad_req='null'); None when
        none is frozen."""
        frozen = {i for i, p in enumerate(self._params) if p.grad_req == "null"}
        if not frozen:
            return indices
        return [i for i in (range(len(self._params)) if indices is None else indices)
                if i not in frozen]

    def _multi_device(self):
        """Whether some parameter has copies on several devices."""
        return any(p._copies is not None for p in self._params)

    def update(self, batch_size, ignore_stale_grad=False):
        """The update of step(). With one device there is no allreduce to skip; with several
        (no store), the update uses the first copy's gradient, which allreduce_grads() has
        made the sum over the copies (call it first, as MXNet requires), and every copy gets
        the updated weight."""
        batch_size = _checked_batch_size(batch_size)
        arrays = [p._data for p in self._params]
        if self._sparse_weights:  # (their gradients are the pulled rows': checked apart)
            self._stale_sparse = self._stale_sparse_weights(ignore_stale_grad)
            for i in self._sparse_weights:
                arrays[i] = None
        multi = Parameter._multi and self._multi_device()
        fresh = self._trainable(self._fresh_indices(arrays, ignore_stale_grad, multi))
        self._optimizer.rescale_grad = self._scale / batch_size
        try:
            if self._kvstore is not None:
                self._update_through_kvstore(fresh, multi)
            elif not self._amp_overflow():
                self._update_all([p._data for p in self._params] if multi else
                                 [p.data() for p in self._params], fresh)
                if multi:
                    self._broadcast_copies(fresh)
        finally:
            self._stepped = [(a, p.grad_req) for a, p in zip(arrays, self._params)]
        # the gradients used are stale from now on (only after an update: a refused step
        # leaves them as they were, so step(ignore_stale_grad=True) can follow)
        used = arrays if fresh is None else [arrays[i] for i in fresh]
        if multi:
            used = [c for i in (range(len(arrays)) if fresh is None else fresh)
                    for c in _copies(self._params[i])]
        _core._autograd_fresh_grads([a for a in used if a is not None], True)

    def _allreduce_copies(self):
        """Sums the gradients of each parameter's copies into every copy (MXNet's 'device'
        store reduce and broadcast)."""
        with _autograd.pause():
            for p in self._params:
                copies = p._copies
                if copies is None or copies[0].grad is None:
                    continue
                total = copies[0].grad
                for c in copies[1:]:
                    total += c.grad.to_device(total.device)
                for c in copies[1:]:
                    c.grad[...] = total.to_device(c.device)

    def _broadcast_copies(self, indices=None):
        """Copies each updated first copy to the parameter's other copies."""
        with _autograd.pause():
            for i in range(len(self._params)) if indices is None else indices:
                copies = self._params[i]._copies
                if copies is not None:
                    for c in copies[1:]:
                        c[...] = copies[0].to_device(c.device)

    def _fresh_indices(self, arrays, ignore_stale_grad, multi=False):
        """The indices of the parameters whose gradient backward wrote since the last step
        (or that could not be watched), None for all of them; UserWarning for a stale one
        unless ignore_stale_grad. With several devices, a gradient written on any copy
        counts."""
        complete = all(a is not None for a in arrays)
        present = arrays if complete else [a for a in arrays if a is not None]
        flags = _core._autograd_fresh_grads(present, False)
        if multi:
            flags = list(flags)
            owners, extra = [], []
            for k, i in enumerate(i for i, a in enumerate(arrays) if a is not None):
                for c in (self._params[i]._copies or [None])[1:]:
                    owners.append(k)
                    extra.append(c)
            if extra:
                for k, flag in zip(owners, _core._autograd_fresh_grads(extra, False)):
                    flags[k] = flags[k] or flag
        if complete and all(flags):  # the usual step: backward wrote every gradient
            self._seen_backward = True
            return None
        fresh = [False] * len(arrays)
        for i, flag in zip([i for i, a in enumerate(arrays) if a is not None], flags):
            fresh[i] = flag
        self._seen_backward = self._seen_backward or any(fresh)
        if not self._seen_backward:  # gradients set by hand only: nothing to check against
            return None
        out = []
        for i, p in enumerate(self._params):
            if p.grad_req == "null" or i in self._sparse_weights:  # (frozen; checked apart)
                continue
            last = self._stepped[i]
            known = last is not None and last[0] is arrays[i] and last[1] == p.grad_req
            if not known or fresh[i]:
                out.append(i)
            elif not ignore_stale_grad:
                raise self._stale_error(i)
        return out

    def _stale_error(self, i):
        """MXNet's UserWarning for parameter i, whose gradient no backward wrote."""
        return UserWarning(
            f"Gradient of Parameter `{self._names[i]}` on device {self._params[i]._data.device} "
            "has not been updated by backward since last `step`. This could mean a bug in your "
            "model that made it only use a subset of the Parameters (Blocks) for this "
            "iteration. If you are intentionally only using a subset, call step with "
            "ignore_stale_grad=True to suppress this warning and skip updating of Parameters "
            "with stale gradient")

    def _stale_sparse_weights(self, ignore_stale_grad):
        """The row_sparse weights no backward reached since the last step (their pulled rows'
        gradients unwritten): UserWarning, as for the others, unless ignore_stale_grad,
        which leaves them out of the step."""
        stale = set()
        for i in self._sparse_weights:
            p = self._params[i]
            if p.grad_req == "null":
                continue
            watched = p._watched()
            if watched and any(_core._autograd_fresh_grads(watched, False)):
                self._seen_backward = True
            else:
                stale.add(i)
        if stale and self._seen_backward and not ignore_stale_grad:
            raise self._stale_error(min(stale))
        return stale

    _stale_sparse = frozenset()

    def allreduce_grads(self):
        """Sums the gradients over devices / workers (MXNet's Trainer.allreduce_grads, for
        manual gradient work between it and update()). With no store there is one copy
        of each gradient, so nothing to do; with one, the gradients go through pushpull."""
        if self._kvstore is None:
            if Parameter._multi and self._multi_device():
                self._allreduce_copies()
            return
        if self._update_on_kvstore:
            raise RuntimeError("[Trainer] allreduce_grads() is not supported with "
                               "update_on_kvstore=True: the store updates the weights")
        self._init_kv_keys(range(len(self._params)))
        keys = self._trainable(list(range(len(self._params))))
        if Parameter._multi and self._multi_device():
            if keys:
                self._kvstore.pushpull(keys, [[c.grad for c in _copies(self._params[k])]
                                              for k in keys])
            self._grads_reduced = True  # (update() then does not sum them again)
            return
        if keys:
            self._kvstore.pushpull(keys, [self._params[k].data().grad for k in keys])

    _grads_reduced = False
    _sparse_weights = ()  # indices of the row_sparse weights (set by _init_kvstore)
    _sparse_grads = frozenset()  # indices of the parameters with row_sparse gradients

    def save_states(self, fname):
        """Writes the optimizer's states (momentum, Adam's moments, ...: the store's when it
        updates the weights) and its update counts to `fname`, for load_states to resume
        training (MXNet's save_states)."""
        import pickle
        states = {i: _to_numpy(st) for i, st in self._updater_states().items()}
        opt = self._optimizer
        payload = {"format": "ndx-trainer-states-1", "states": states,
                   "num_update": opt.num_update,
                   "index_update_count": dict(opt._index_update_count),
                   "optimizer": opt}
        with open(fname, "wb") as f:
            pickle.dump(payload, f)

    def load_states(self, fname):
        """Reads a file written by save_states: the optimizer (its hyperparameters and
        update counts) and the states of every parameter."""
        import pickle
        with open(fname, "rb") as f:
            try:
                payload = pickle.load(f)
            except Exception as e:  # (a damaged file fails in any of pickle's ways)
                raise ValueError(f"[Trainer] load_states: {fname} is not a file written by "
                                 f"save_states ({type(e).__name__}: {e})") from e
        if not isinstance(payload, dict) or payload.get("format") != "ndx-trainer-states-1":
            raise ValueError(f"[Trainer] {fname} is not a file written by save_states")
        opt = payload["optimizer"]
        opt.param_dict = dict(enumerate(self._params))
        self._optimizer = opt
        self._scale = opt.rescale_grad if self._scale is None else self._scale
        opt.num_update = payload["num_update"]
        opt._index_update_count.clear()
        opt._index_update_count.update(payload["index_update_count"])
        weights = {i: p._data for i, p in enumerate(self._params)}
        self._states = {i: _from_numpy(st, weights.get(i)) for i, st in
                        payload["states"].items()}
        if self._kvstore is not None and self._update_on_kvstore:
            self._kvstore.set_optimizer(opt)
            updater = getattr(self._kvstore, "_updater", None)
            if updater is not None:  # (the store applies the optimizer: its states)
                updater.states = dict(self._states)
                updater.states_synced = dict.fromkeys(self._states, True)

    _amp_loss_scaler = None  # amp.init_trainer's LossScaler

    @property
    def amp_loss_scale(self):
        """The loss scale of amp.init_trainer's LossScaler (MXNet's Trainer.amp_loss_scale)."""
        if self._amp_loss_scaler is None:
            raise RuntimeError("[Trainer] no AMP loss scaler: call amp.init_trainer(trainer)")
        return self._amp_loss_scaler.loss_scale

    def _amp_overflow(self):
        """With AMP's loss scaler: whether this step's gradients overflowed, in which case the
        update is skipped (and the scaler lowers the scale), as MXNet's Trainer does."""
        scaler = self._amp_loss_scaler
        return scaler is not None and scaler.has_overflow(self._params)

    def _update_all(self, weights, indices=None):
        """One optimizer call for every parameter in `indices` (all by default; its checks
        and bookkeeping run once)."""
        if indices is None:
            indices = range(len(weights))
        indices = list(indices)
        if not indices:
            return
        states = self._states
        for i in indices:
            if i not in states:
                states[i] = self._optimizer.create_state_multi_precision(i, weights[i])
        self._optimizer.update_multi_precision(indices, [weights[i] for i in indices],
                                               [self._grad_for_optimizer(i, weights[i])
                                                for i in indices],
                                               [states[i] for i in indices])

    def _grad_for_optimizer(self, index, weight):
        """weight's gradient, as a RowSparseNDArray of its nonzero rows for a parameter with
        grad_stype='row_sparse' (MXNet's sparse gradient: lazy_update skips the other rows)."""
        if getattr(self._params[index], "grad_stype", "default") != "row_sparse":
            return weight.grad
        from ..nd.sparse import cast_storage
        return cast_storage(weight.grad, "row_sparse")

    def _update_through_kvstore(self, fresh=None, multi=False):
        """One call per step for all keys, so a distributed store sends the gradients in
        a few fused buckets rather than one message per parameter."""
        kv = self._kvstore
        self._init_kv_keys(range(len(self._params)))
        keys = self._trainable(list(range(len(self._params))))  # (frozen ones left out)
        if not keys:
            self._grads_reduced = False
            return
        if self._update_on_kvstore and (self._sparse_weights or self._sparse_grads):
            self._push_to_updating_store(keys)
            return
        if multi:  # (one key's values: the copies' gradients; every copy pulls the weight)
            copies = [_copies(p) for p in self._params]
            if self._update_on_kvstore:
                kv.push(keys, [[c.grad for c in copies[k]] for k in keys])
                kv.pull(keys, out=[copies[k] for k in keys])
                return
            if not self._grads_reduced:
                kv.pushpull(keys, [[c.grad for c in copies[k]] for k in keys])
            self._grads_reduced = False
            if self._amp_overflow():
                return
            self._update_all([cs[0] for cs in copies], fresh)
            self._broadcast_copies(fresh)
            return
        weights = [p.data() for p in self._params]
        grads = [weights[k].grad for k in keys]
        if self._update_on_kvstore:  # the store updates its copy; the weight is pulled
            kv.push(keys, grads)
            kv.pull(keys, out=[weights[k] for k in keys])
            return
        if self._overlap is not None:  # backward has summed most of them already
            self._overlap.finish(weights)
        else:
            kv.pushpull(keys, grads)  # the gradients are summed over workers, updated here
        if self._overlap is None and _overlap_wanted(kv, self._params):
            self._overlap = _OverlappedAllreduce(len(self._params))
        if self._overlap is not None:
            self._overlap.arm(weights)  # (again each step: a parameter may have new data)
        if self._amp_overflow():  # (every worker sees the same summed gradients)
            return
        self._update_all(weights, fresh)

    def _push_to_updating_store(self, keys):
        """A step through a store that updates the weights, with row_sparse gradients among
        them: those are pushed as RowSparseNDArrays (the store's optimizer updates their rows
        lazily with lazy_update), and the dense weights are pulled back; a row_sparse weight
        is not (forward pulls the rows it needs)."""
        from ..nd.sparse import cast_storage
        keys = [k for k in keys if k not in self._stale_sparse]
        values = []
        for k in keys:
            p = self._params[k]
            if p.stype == "row_sparse":
                values.append(p.grad())
            elif k in self._sparse_grads:
                values.append([cast_storage(c.grad, "row_sparse") for c in _copies(p)])
            else:
                values.append([c.grad for c in _copies(p)])
        if not keys:
            return
        self._kvstore.push(keys, values)
        for k in keys:
            p = self._params[k]
            if p.stype == "row_sparse":
                _core._autograd_fresh_grads(p._watched(), True)  # (used: stale from now)
                p._step_done()
        dense = [k for k in keys if self._params[k].stype != "row_sparse"]
        if dense:
            self._kvstore.pull(dense, out=[_copies(self._params[k]) for k in dense])

    @property
    def kvstore(self):
        return self._kvstore


def _store_value_set(trainer_ref, index, param):
    """Parameter._on_set hook of a Trainer whose store updates the weights."""
    trainer = trainer_ref()
    if trainer is not None and trainer._params[index] is param:
        trainer._refresh_store_value(index)


def _dead_hook(hook):
    """Whether `hook` is a _store_value_set hook of a Trainer that no longer exists."""
    return (isinstance(hook, functools.partial) and hook.func is _store_value_set
            and hook.args[0]() is None)


def _checked_batch_size(batch_size):
    if not isinstance(batch_size, (int, float)):
        # a one-element array or NumPy scalar, as MXNet takes (d2l's seq2seq steps by
        # num_tokens = valid_len.sum())
        batch_size = float(batch_size)
    if batch_size <= 0:
        raise ValueError(f"[Trainer] batch_size must be > 0, got {batch_size}")
    return batch_size


def _copies(p):
    """A parameter's copies (its data alone with one device)."""
    return p._copies if p._copies is not None else [p._data]


def _to_numpy(state):
    """An optimizer state (None, an array or nested tuples / lists of them) with NumPy
    arrays in place of ndx's, for pickling."""
    if isinstance(state, (tuple, list)):
        return type(state)(_to_numpy(s) for s in state)
    if hasattr(state, "asnumpy"):
        return ("__ndx_array__", state.asnumpy())
    return state


def _from_numpy(state, weight):
    """_to_numpy undone: arrays on the weight's device."""
    if isinstance(state, list):
        return [_from_numpy(s, weight) for s in state]
    if isinstance(state, tuple):
        if len(state) == 2 and isinstance(state[0], str) and state[0] == "__ndx_array__":
            from .. import numpy as np
            arr = np.array(state[1], dtype=state[1].dtype)
            if weight is not None:
                arr = arr.to_device(weight.device)
            return arr
        return tuple(_from_numpy(s, weight) for s in state)
    return state


def _overlap_wanted(kv, params):
    """Whether to sum gradients while backward runs: a distributed store with several
    workers, updates in the Trainer, grad_req 'write' everywhere (an 'add' buffer is not final
    when backward writes it), and NDX_DIST_OVERLAP: 1 (on), 0 (off) or auto (the default: on
    when this machine has at least 2 cores per local worker, since the communication thread
    then has a core of its own)."""
    import os

    from .. import distributed
    if not isinstance(kv, _kv.DistKVStore) or kv.num_workers < 2:
        return False
    if any(p.grad_req != "write" for p in params):
        return False
    mode = os.environ.get("NDX_DIST_OVERLAP", "auto")
    if mode not in ("0", "1", "auto"):
        raise ValueError(f"[Trainer] NDX_DIST_OVERLAP must be 0, 1 or auto, got {mode!r}")
    if mode != "auto":
        return mode == "1"
    local = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE", distributed.world_size()))
    return len(os.sched_getaffinity(0)) >= 2 * max(local, 1)


class _OverlappedAllreduce:
    """Sums gradients over the workers while backward runs (autograd's gradient hook): each
    gradient joins a bucket when backward writes it, last layer first, and a full bucket
    (NDX_DIST_BUCKET_MB) is queued to the communication thread at once; at the end of the
    backward pass the rest is queued and waited for, so after backward() the gradients are
    summed, as after PyTorch DDP's. Every worker must run the same backward passes: the
    buckets are formed in the order the gradients are written."""

    def __init__(self, count):
        import os
        self._bucket_bytes = float(os.environ.get("NDX_DIST_BUCKET_MB", 4)) * 2**20
        self._reduced = [False] * count  # summed over the workers since its last write
        self._bucket, self._bucket_size, self._works = [], 0, []
        self._in_flight = set()  # indices queued and not yet waited for
        self._grads = None

    def arm(self, weights):
        from .. import _core
        self._grads = [w.grad for w in weights]
        self._reduced = [True] * len(weights)  # (the values just used are summed ones)
        _core._autograd_set_grad_hook(weights, self._event)

    def _event(self, index, event):
        if event == 0:  # before backward writes grads[index]: nothing may be reducing it
            if index in self._in_flight:  # (a second backward before step)
                self._wait()
            self._reduced[index] = False
        elif event == 1:
            if index not in self._bucket:
                self._bucket.append(index)
                self._bucket_size += self._grads[index].nbytes
            if self._bucket_size >= self._bucket_bytes:
                self._flush()
        else:  # the backward pass is over
            self._flush()
            self._wait()

    def _flush(self):
        from .. import distributed
        if self._bucket:
            self._works.append(distributed.allreduce_async([self._grads[i] for i in
                                                            self._bucket]))
            for i in self._bucket:
                self._reduced[i] = True
            self._in_flight.update(self._bucket)
            self._bucket, self._bucket_size = [], 0

    def _wait(self):
        works, self._works = self._works, []
        for w in works:
            w.wait()
        self._in_flight.clear()

    def finish(self, weights):
        """At step: waits, and sums whatever no backward pass has summed (gradients it did
        not reach)."""
        from .. import distributed
        self._flush()
        self._wait()
        rest = [w.grad for w, done in zip(weights, self._reduced)
                if not done and w.grad is not None]  # (not the frozen ones)
        if rest:
            distributed.allreduce(rest)
