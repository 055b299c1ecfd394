"""ndx.kvstore: MXNet's KVStore API (mx.kv / mx.kvstore).

`create('local')` and `create('device')` give a store for one process that sums the values
pushed for a key (one per device) and hands the sum, or the sum applied to the stored value by
an optimizer (set_optimizer), to whoever pulls it. `create('dist_sync')` does the same across
worker processes (DistKVStore: an MPI allreduce, see ndx.distributed), and `create('nccl')`
for GPU arrays, one GPU per worker, over NCCL. 'dist_async' (which needs parameter servers),
'horovod' and 'byteps' raise NotImplementedError.

Row-sparse values (mx.nd.sparse.RowSparseNDArray) are MXNet's sparse gradients and weights:
a push of them is summed as row_sparse (the union of their rows), and an optimizer set on
the store gets that sum, so its lazy_update touches those rows only; row_sparse_pull hands
out the rows asked for; pull skips row-sparse outputs unless ignore_sparse=False. The store
keeps each value dense.
"""
import pickle

import numpy as onp

from . import numpy as np
from . import optimizer as _opt
from . import profiler as _profiler

__all__ = ["KVStore", "KVStoreBase", "DistKVStore", "create"]

_LOCAL_TYPES = ("local", "device", "local_update_cpu", "local_allreduce_cpu",
                "local_allreduce_device")
_DIST_TYPES = ("dist_sync", "dist_sync_device", "dist_device_sync", "nccl")
_PLANNED_TYPES = ("dist_async", "dist", "horovod", "byteps")


def _keys_values(who, key, value, allow_none=False):
    """(keys, per-key lists of arrays): MXNet's forms, a key with an array or a list of
    arrays (one per device), or a list of keys with a list of those."""
    if isinstance(key, (list, tuple)):
        if value is None and allow_none:
            return [_check_key(who, k) for k in key], [None] * len(key)
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            raise ValueError(f"[KVStore.{who}] {len(key)} keys need a list of {len(key)} "
                             f"values, got {type(value).__name__}")
        return [_check_key(who, k) for k in key], [_arrays(who, v) for v in value]
    return [_check_key(who, key)], [None if value is None and allow_none else
                                    _arrays(who, value)]


def _check_key(who, key):
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise TypeError(f"[KVStore.{who}] keys must be int or str, got {type(key).__name__}")
    return key


def _is_row_sparse(x):
    return type(x) is not np.ndarray and getattr(x, "stype", None) == "row_sparse"


def _dense(x):
    """x's dense value as an ndx array (x itself when it is one)."""
    return x.tostype("default").as_np_ndarray() if _is_row_sparse(x) else x


def _arrays(who, value):
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ValueError(f"[KVStore.{who}] got an empty list of arrays")
    for v in values:
        if not isinstance(v, np.ndarray) and not _is_row_sparse(v):
            raise TypeError(f"[KVStore.{who}] values must be ndx arrays or row_sparse "
                            f"arrays, got {type(v).__name__}")
    shape = values[0].shape
    if any(v.shape != shape for v in values):
        raise ValueError(f"[KVStore.{who}] the arrays of one key must have one shape, got "
                         f"{[tuple(v.shape) for v in values]}")
    return values


def _profiled(method):
    """Records each call as a "kvstore" span when the profiler runs."""
    name = "kvstore." + method.__name__

    def wrapper(self, *args, **kwargs):
        if not _profiler.is_recording():
            return method(self, *args, **kwargs)
        with _profiler.scope(name, "kvstore"):
            return method(self, *args, **kwargs)

    wrapper.__name__, wrapper.__doc__ = method.__name__, method.__doc__
    wrapper.__wrapped__ = method
    return wrapper


class KVStoreBase:
    """The interface every store type has (MXNet's KVStoreBase)."""

    OPTIMIZER = "optimizer"

    def is_capable(self, capability):
        return capability == self.OPTIMIZER


class KVStore(KVStoreBase):
    """A key-value store for one process: values pushed for a key are summed; pull hands out
    the stored value (MXNet's local and device stores)."""

    def __init__(self, kvstore_type="local"):
        self._type = kvstore_type
        self._store = {}
        self._updater = None
        self._compression = None

    @property
    def type(self):
        return self._type

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def init(self, key, value):
        """Stores a copy of `value` (of its first array, for a list) under `key`, once."""
        keys, values = _keys_values("init", key, value)
        for k in keys:
            if k in self._store:
                raise ValueError(f"[KVStore.init] key {k!r} is already initialized")
        for k, vs in zip(keys, values):
            self._store[k] = _dense(vs[0]).copy()

    def _stored(self, who, key):
        if key not in self._store:
            raise KeyError(f"[KVStore.{who}] key {key!r} is not initialized (call init first)")
        return self._store[key]

    @_profiled
    def push(self, key, value, priority=0):
        """Sums the arrays pushed for each key; with an optimizer set, updates the stored
        value with the sum as its gradient, else stores the sum."""
        keys, values = _keys_values("push", key, value)
        merged = []
        for k, vs in zip(keys, values):
            stored = self._stored("push", k)
            if vs[0].shape != stored.shape:
                raise ValueError(f"[KVStore.push] key {k!r} holds shape {tuple(stored.shape)}, "
                                 f"got {tuple(vs[0].shape)}")
            merged.append(_merged(vs))
        sparse = [i for i, m in enumerate(merged) if _is_row_sparse(m)]
        if sparse and self.num_workers > 1:
            merged = self._reduce_row_sparse(merged, sparse)
        else:
            self._reduce_over_workers(merged)
        for k, m in zip(keys, merged):
            if self._updater is not None:
                self._updater(k, m, self._store[k])  # (a row_sparse sum: a lazy update)
            else:
                self._store[k][...] = _dense(m)

    def _reduce_row_sparse(self, merged, sparse):
        """merged summed over the workers, its row_sparse values (at `sparse`) densely, with
        a 0 / 1 mask of their rows beside each: the sum holds the rows any worker pushed
        (MXNet's union of rows), a row whose gradients sum to zero included."""
        from .nd.sparse import RowSparseNDArray
        arrays, masks = list(merged), []
        for i in sparse:
            mask = np.zeros(merged[i].shape[0], dtype="float32", device=merged[i].context)
            mask[merged[i]._indices] = 1
            masks.append(mask)
            arrays[i] = _dense(merged[i])
        self._reduce_over_workers(arrays + masks)
        for i, mask in zip(sparse, masks):
            rows = np.flatnonzero(mask).astype("int64")
            arrays[i] = RowSparseNDArray._make(arrays[i].shape, arrays[i].dtype,
                                               data=arrays[i][rows], indices=rows)
        return arrays

    def _reduce_over_workers(self, arrays):
        """Sums each array over the worker processes, in place: one process has nothing
        to add."""

    @_profiled
    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copies the stored value into `out` (an array, or one per device). Row-sparse
        outputs are skipped (MXNet's ignore_sparse; row_sparse_pull fills them) unless
        ignore_sparse=False, which gives them every row."""
        if out is None:
            raise ValueError("[KVStore.pull] out must be given (the arrays to copy into)")
        keys, outs = _keys_values("pull", key, out)
        for k, os_ in zip(keys, outs):
            stored = self._stored("pull", k)
            for o in os_:
                if o.shape != stored.shape:
                    raise ValueError(f"[KVStore.pull] key {k!r} holds shape "
                                     f"{tuple(stored.shape)}, out has {tuple(o.shape)}")
                if not _is_row_sparse(o):
                    o[...] = stored
                elif ignore_sparse:
                    _warn_sparse_pull_ignored()
                else:
                    _fill_rows(o, stored, None)

    @_profiled
    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Fills each row_sparse `out` with the stored rows listed in its `row_ids` (an
        integer array of any shape, repeats and any order allowed; MXNet's
        row_sparse_pull). One key's
        outs (one per device) take one row_ids array, or a list of one per out."""
        if out is None or row_ids is None:
            raise ValueError("[KVStore.row_sparse_pull] out and row_ids must be given")
        keys, outs = _keys_values("row_sparse_pull", key, out)
        ids = row_ids if isinstance(row_ids, (list, tuple)) else [row_ids]
        flat = [o for os_ in outs for o in os_]
        if len(ids) == 1:
            ids = ids * len(flat)
        if len(ids) != len(flat):
            raise ValueError(f"[KVStore.row_sparse_pull] {len(ids)} row_ids for {len(flat)} "
                             "outputs: give one, or one per output")
        at = 0
        for k, os_ in zip(keys, outs):
            stored = self._stored("row_sparse_pull", k)
            for o in os_:
                if not _is_row_sparse(o):
                    raise TypeError(f"[KVStore.row_sparse_pull] out must be row_sparse "
                                    f"arrays, got {type(o).__name__}")
                if o.shape != stored.shape:
                    raise ValueError(f"[KVStore.row_sparse_pull] key {k!r} holds shape "
                                     f"{tuple(stored.shape)}, out has {tuple(o.shape)}")
                _fill_rows(o, stored, _row_ids(ids[at], stored.shape[0]))
                at += 1

    @_profiled
    def pushpull(self, key, value, out=None, priority=0):
        """push, then pull into `out` (into `value` when out is None): with one worker and no
        optimizer, the sum of the pushed arrays."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority, ignore_sparse=False)

    @_profiled
    def broadcast(self, key, value, out, priority=0):
        """Stores `value` under `key` (rank 0's value, the only rank here) and copies it into
        `out`."""
        keys, _ = _keys_values("broadcast", key, value)
        for k in keys:
            self._store.pop(k, None)
        self.init(key, value)
        self.pull(key, out, priority)

    def set_optimizer(self, optimizer):
        """Applies `optimizer` to pushed values from now on (update_on_kvstore)."""
        if not isinstance(optimizer, _opt.Optimizer):
            raise TypeError(f"[KVStore.set_optimizer] expects an ndx.optimizer.Optimizer, got "
                            f"{type(optimizer).__name__}")
        self._updater = _opt.get_updater(optimizer)

    def set_gradient_compression(self, compression_params):
        """Gradient compression is off; {'type': 'none'} keeps it off, anything else raises."""
        kind = (compression_params or {}).get("type", "none")
        if kind != "none":
            raise NotImplementedError(f"[KVStore.set_gradient_compression] {kind!r} compression "
                                      "is not supported; ndx sends gradients uncompressed")
        self._compression = None

    def save_optimizer_states(self, fname, dump_optimizer=False):
        if self._updater is None:
            raise ValueError("[KVStore.save_optimizer_states] no optimizer is set")
        states = {k: v for k, v in self._updater.states.items()}
        blob = {"states": states}
        if dump_optimizer:
            blob["optimizer"] = self._updater.optimizer
        with open(fname, "wb") as f:
            pickle.dump(blob, f)

    def load_optimizer_states(self, fname):
        if self._updater is None:
            raise ValueError("[KVStore.load_optimizer_states] no optimizer is set")
        with open(fname, "rb") as f:
            blob = pickle.load(f)
        if "optimizer" in blob:
            self._updater.optimizer = blob["optimizer"]
        self._updater.states = dict(blob["states"])
        self._updater.states_synced = {k: False for k in self._updater.states}

    def barrier(self):
        """Waits for every worker: with one, returns at once."""

    def _barrier(self):
        self.barrier()


def _any_row_sparse(value):
    if isinstance(value, (list, tuple)):
        return any(_any_row_sparse(v) for v in value)
    return _is_row_sparse(value)


def _merged(values):
    """The sum of one key's values (one per device): on the first one's device, row_sparse
    when they all are."""
    if len(values) == 1:
        return values[0].copy()
    if all(_is_row_sparse(v) for v in values):
        from .nd.sparse import add_n
        first = values[0].context
        return add_n([v.as_in_context(first) for v in values])
    m = _dense(values[0]).copy()
    for v in values[1:]:
        m += _dense(v).to_device(m.device)
    return m


def _row_ids(ids, rows):
    """row_ids as sorted unique int64 row numbers, checked against the `rows` stored."""
    if isinstance(ids, np.ndarray) or hasattr(ids, "asnumpy"):
        host = ids.asnumpy()
    else:
        host = onp.asarray(ids)
    if host.dtype.kind not in "iuf" or (
            host.dtype.kind == "f" and (host != host.round()).any()):
        raise TypeError(f"[KVStore.row_sparse_pull] row_ids must be integer row numbers, got "
                        f"dtype {host.dtype} and shape {host.shape}")
    host = onp.unique(host.astype("int64").ravel())
    if host.size and (host[0] < 0 or host[-1] >= rows):
        raise IndexError(f"[KVStore.row_sparse_pull] row_ids must be in [0, {rows}), got "
                         f"values in [{host[0]}, {host[-1]}]")
    return np.array(host, dtype="int64")


def _fill_rows(out, stored, rows):
    """Makes the row_sparse `out` hold the stored `rows` (None: every row), in its dtype and
    on its device."""
    if rows is None:
        rows = np.arange(stored.shape[0], dtype="int64", device=stored.device)
    device = out.context
    out._data = stored[rows.to_device(stored.device)].astype(out.dtype).to_device(device)
    out._indices = rows.to_device(device)


_SPARSE_PULL_WARNED = []


def _warn_sparse_pull_ignored():
    if not _SPARSE_PULL_WARNED:
        _SPARSE_PULL_WARNED.append(True)
        import warnings
        warnings.warn("[KVStore.pull] row_sparse outputs are skipped (ignore_sparse=True): "
                      "fill them with row_sparse_pull, or pull with ignore_sparse=False",
                      stacklevel=3)


class DistKVStore(KVStore):
    """'dist_sync' (and 'dist_sync_device', 'dist_device_sync'): MXNet's synchronous
    distributed store, without servers. Every worker keeps the store; a push is summed over
    the workers by an MPI allreduce (one call for a list of keys, fused into buckets in C++),
    so every worker applies the same sum, and an optimizer (set_optimizer) the same update:
    the stores stay identical. init and broadcast give every worker rank 0's value.

    Start the workers with ``python -m ndx.distributed.launch -n N script.py``; a script
    started on its own is worker 0 of 1."""

    def __init__(self, kvstore_type="dist_sync"):
        super().__init__(kvstore_type)
        from . import distributed
        self._dist = distributed
        distributed.init()

    @property
    def rank(self):
        return self._dist.rank()

    @property
    def num_workers(self):
        return self._dist.world_size()

    def init(self, key, value):
        """Stores rank 0's value of each key (its copy of `value`) on every worker."""
        keys, _ = _keys_values("init", key, value)
        super().init(key, value)
        self._dist.broadcast([self._store[k] for k in keys], root=0)

    def _reduce_over_workers(self, arrays):
        self._check_devices(arrays)
        self._dist.allreduce(arrays)

    def _check_devices(self, arrays):
        if self._type == "nccl" and any(a.device.device_type != "gpu" for a in arrays):
            raise ValueError("[KVStore.push] the 'nccl' store reduces GPU arrays (over NCCL); "
                             "use 'dist_sync' for CPU arrays")

    @_profiled
    def pushpull(self, key, value, out=None, priority=0):
        """The sum of `value` over devices and workers, into `out` (into `value` when out is
        None); with an optimizer set, push then pull. Keys need no init without one."""
        if self._updater is not None or _any_row_sparse(value):
            self.push(key, value, priority)
            self.pull(key, value if out is None else out, priority, ignore_sparse=False)
            return
        if (out is None and self._type != "nccl" and type(key) is list
                and type(value) is list and len(key) == len(value)
                and all(type(v) is np.ndarray for v in value)):
            # A Trainer's step (one array per key, summed in place): straight to the
            # allreduce, which has the only checks left to make.
            for k in key:
                _check_key("pushpull", k)
            self._dist.allreduce(value)
            return
        keys, values = _keys_values("pushpull", key, value)
        outs = values if out is None else _keys_values("pushpull", key, out)[1]
        merged = []
        for vs in values:
            m = vs[0] if len(vs) == 1 and out is None else vs[0].copy()
            for v in vs[1:]:
                m += v.to_device(m.device)
            merged.append(m)
        self._check_devices(merged)
        self._dist.allreduce(merged)
        for m, os_ in zip(merged, outs):
            for o in os_:
                if o is not m:
                    if o.shape != m.shape:
                        raise ValueError(f"[KVStore.pushpull] out has shape {tuple(o.shape)}, "
                                         f"the values {tuple(m.shape)}")
                    o[...] = m

    @_profiled
    def broadcast(self, key, value, out, priority=0):
        """Stores rank 0's `value` under `key` on every worker and copies it into `out`."""
        keys, _ = _keys_values("broadcast", key, value)
        for k in keys:
            self._store.pop(k, None)
        self.init(key, value)
        self.pull(key, out, priority)

    def barrier(self):
        """Returns once every worker has called barrier()."""
        self._dist.barrier()


def create(name="local"):
    """A store of type `name`: 'local' or 'device' (and MXNet's other single-process names),
    or 'dist_sync' (DistKVStore, across the worker processes the launcher started)."""
    if isinstance(name, KVStoreBase):
        return name
    if not isinstance(name, str):
        raise TypeError(f"[kvstore.create] name must be a str, got {type(name).__name__}")
    if name in _LOCAL_TYPES:
        return KVStore(name)
    if name in _DIST_TYPES and name != "nccl":
        return DistKVStore(name)
    if name == "dist_async" or name == "dist":
        raise NotImplementedError(
            f"[kvstore.create] {name!r}: ndx has no parameter servers, so no asynchronous "
            "updates; 'dist_sync' sums gradients over the workers with an MPI allreduce")
    if name == "nccl":
        from . import device as _device
        from . import distributed as _distributed
        if _device.num_gpus() == 0:
            raise _distributed.DistributedError(
                "[kvstore.create] 'nccl' reduces GPU arrays and this process sees no GPU ("
                f"{_device.gpu_unavailable_reason()}); 'dist_sync' reduces CPU arrays over MPI")
        return DistKVStore(name)
    if name in _PLANNED_TYPES:
        raise NotImplementedError(
            f"[kvstore.create] {name!r} is not supported: ndx's distributed store is "
            "'dist_sync' (MPI allreduce; start workers with python -m ndx.distributed.launch)")
    raise ValueError(f"[kvstore.create] unknown store type {name!r}; known: "
                     f"{', '.join(_LOCAL_TYPES + _DIST_TYPES + _PLANNED_TYPES)}")
