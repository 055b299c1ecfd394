"""Parameters: arrays a Block learns, with deferred shape inference (0 marks an unknown dim;
-1, MXNet 2.0's mark, is taken as 0)."""
import os
import re
import threading
import warnings
import weakref
from collections import OrderedDict

import numpy as _onp

from .. import initializer as _init
from .. import numpy as np

__all__ = ["Parameter", "Constant", "ParameterDict", "DeferredInitializationError"]


def _checked_shape(name, shape):
    """A parameter's shape: non-negative integers, 0 marking a dim inferred later."""
    import operator
    if isinstance(shape, int):
        shape = (shape,)
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"[Parameter] {name}: shape must be a tuple of integers, got "
                        f"{shape!r}") from None
    if any(d < -1 for d in dims):
        raise ValueError(f"[Parameter] {name}: shape {dims} has a negative dimension (0 or, "
                         "as in MXNet 2.0's NumPy mode, -1 marks one inferred at the first "
                         "forward pass)")
    return tuple(0 if d == -1 else d for d in dims)


class DeferredInitializationError(RuntimeError):
    """The parameter's shape is not known yet: run a forward pass first."""


def _devices_of(device, name):
    """(first device, [devices] or None): MXNet's device / ctx argument, a device or a list
    of them; the list is None unless there are several (one copy per device)."""
    if not isinstance(device, (list, tuple)):
        return device, None
    if len(device) <= 1:
        return (device[0] if device else None), None
    from ..device import Device
    devices = [Device(d) for d in device]
    if len(set(devices)) != len(devices):
        raise ValueError(f"[Parameter] {name}: the device list {devices} names a device "
                         "twice (one copy per device)")
    return devices[0], devices


# The device of the block call running in this thread (the first input array's), when some
# parameter has copies on several devices: data() with no device returns the copy there.
_CALL = threading.local()


def _one_multi_less(key):
    Parameter._multi -= 1
    _MULTI_DONE.pop(key, None)


_MULTI_DONE = {}  # id(parameter with several devices) -> its weakref.finalize


def _copy_to(value, device):
    out = value.to_device(device)
    return value.copy() if out is value else out


class _Tracing(threading.local):
    """This thread's traced stand-ins of parameters while a HybridBlock traces its forward
    (another thread's calls, traced or not, read the parameters themselves)."""
    params = None


_TRACING = _Tracing()
# Deferred initialization creates a parameter once when threads make the first call together.
_INIT_LOCK = threading.RLock()


def _new_init_lock():  # a forked child (a DataLoader worker) must not inherit a held lock
    global _INIT_LOCK
    _INIT_LOCK = threading.RLock()


os.register_at_fork(after_in_child=_new_init_lock)


class Parameter:
    # How many threads are tracing a forward now: data() looks for a stand-in only then.
    _tracing = 0
    # How many parameters (alive) have several devices: while some do, blocks note the
    # device of their inputs for data() to pick the copy there (else: no per-call work).
    _multi = 0
    # With several devices (MXNet's one copy per device): the devices and the copies, in
    # order (_copies[0] is _data); None with one device.
    _devices = None
    _copies = None
    # Whether the gradient buffer is attached to the data (not for a row_sparse weight,
    # whose gradient reaches the rows row_sparse_data pulls).
    _dense_grad = True

    # (MXNet 2.0's argument order, so that positional arguments mean the same)
    def __init__(self, name="weight", grad_req="write", shape=None, dtype="float32", lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=True, differentiable=True,
                 stype="default", grad_stype="default"):
        for what, value in (("stype", stype), ("grad_stype", grad_stype)):
            if value not in ("default", "row_sparse", "csr"):
                raise ValueError(f"[Parameter] {name}: {what} must be 'default', 'row_sparse' "
                                 f"or 'csr', got {value!r}")
        if "csr" in (stype, grad_stype):
            raise NotImplementedError(f"[Parameter] {name}: csr storage of a weight or its "
                                      f"gradient is not supported; 'row_sparse' is")
        if stype == "row_sparse":
            # (its own class, so the dense parameters' data() pays no check)
            self.__class__ = _RowSparseParameter
            grad_stype = "row_sparse"  # (the gradient reaches the rows pulled: row_sparse)
        self.name = name
        # 'row_sparse': the Trainer hands the optimizer the gradient's nonzero rows as a
        # RowSparseNDArray (so lazy_update touches only those); the buffer, grad(), is dense
        self.grad_stype = grad_stype
        self.stype = stype
        self._data = None
        # False for state no gradient ever flows to (BatchNorm's running statistics), which
        # MXNet calls auxiliary: export names it 'aux:...' rather than 'arg:...'; its
        # grad_req stays 'null' (set before grad_req, whose setter reads it).
        self.differentiable = differentiable
        self.grad_req = grad_req
        # Multipliers of the optimizer's learning rate and weight decay (Trainer reads them).
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.shape = shape
        self.dtype = dtype
        self.init = init
        self.allow_deferred_init = allow_deferred_init
        self._deferred = None  # the initializer waiting for the shape
        self._device = None  # where initialize() put (or will put) the data; None: the CPU
        # Called with the parameter once its data exists (a distributed Trainer broadcasts
        # rank 0's value of a deferred parameter there, before forward uses it).
        self._on_create = []
        # Called with the parameter after set_data (load_parameters) gave it a new value: a
        # Trainer whose KVStore holds the weights (update_on_kvstore) refreshes the store's
        # copy there, which MXNet's set_data does by resetting the store.
        self._on_set = []

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    def __getstate__(self):
        # (a copy is no Trainer's parameter: the hooks of set_data stay with the original)
        state = dict(self.__dict__)
        state["_on_set"] = []
        return state

    def __setstate__(self, state):  # (copy.deepcopy, pickle: a copy with several devices counts)
        self.__dict__.update(state)
        if self._devices is not None:
            self._count_multi()

    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        """'write', 'add' or 'null'; on initialized data, as in MXNet, 'null' drops the
        gradient and 'write' / 'add' attach one (zeros)."""
        if req not in ("write", "add", "null"):
            raise ValueError(
                f"[Parameter] grad_req must be 'write', 'add' or 'null', got {req!r}")
        if not getattr(self, "differentiable", True):
            # MXNet: no gradient for a non-differentiable parameter, so that
            # net.setattr('grad_req', 'write') after freezing leaves running statistics alone
            req = "null"
        old = getattr(self, "_grad_req", None)
        self._grad_req = req
        if self._data is None or req == old:
            return
        if not self._dense_grad:
            self._grad_req_changed()
            return
        copies = []
        for a in self._all_copies():
            if req == "null":
                a = a.detach() if hasattr(a, "detach") else a.copy()
            else:
                a.attach_grad(grad_req=req)
            copies.append(a)
        self._set_copies(copies)

    @property
    def shape(self):
        """The shape (0 marks a dimension inferred at the first forward pass; None: not
        declared)."""
        return self.__dict__.get("_shape")

    @shape.setter
    def shape(self, new_shape):
        """As MXNet's setter: a declared shape only takes a new shape of the same rank whose
        dimensions agree with its known (non-0) ones."""
        new = None if new_shape is None else _checked_shape(self.name, new_shape)
        old = self.shape
        if old is not None and (new is None or len(new) != len(old) or any(
                o and o != n for o, n in zip(old, new))):
            raise ValueError(f"[Parameter] {self.name}: shape {new} is incompatible with its "
                             f"shape {old} (only its unknown, 0, dimensions can be set)")
        self._shape = new

    def _all_copies(self):
        """Every copy of the data (one with one device)."""
        return self._copies if self._copies is not None else [self._data]

    def _set_copies(self, copies):
        self._data = copies[0]
        self._copies = copies if self._devices is not None else None
        if self._copies is not None:
            self._count_multi()  # (a copied parameter is counted here)

    def list_data(self):
        """The copies of the data, one per device, in the order of the devices given to
        initialize() (MXNet's list_data)."""
        if self._copies is not None:
            return list(self._copies)
        return [self.data()]

    def list_grad(self):
        """The gradient buffers of the copies, in list_data()'s order."""
        if self._copies is not None:
            return [self.grad(d) for d in self._devices]
        return [self.grad()]

    def list_device(self):
        """The devices holding a copy (before initialization, the devices initialize() was
        given, the CPU if none)."""
        if self._devices is not None:
            return list(self._devices)
        if self._data is not None:
            return [self._data.device]
        from .. import device as _device
        return [self._device if self._device is not None else _device.cpu()]

    list_ctx = list_device

    def _set_devices(self, device):
        """Records the device(s) of MXNet's device / ctx argument (a device or a list)."""
        self._device, self._devices = _devices_of(device, self.name)
        self._count_multi()

    def _count_multi(self):
        """Keeps Parameter._multi the number of live parameters with several devices."""
        counted = _MULTI_DONE.get(id(self))
        if self._devices is not None and counted is None:
            Parameter._multi += 1
            _MULTI_DONE[id(self)] = weakref.finalize(self, _one_multi_less, id(self))
        elif self._devices is None and counted is not None:
            counted.detach()
            _one_multi_less(id(self))

    def reset_device(self, device):
        """Moves the data (and its gradient buffer) to `device`, or makes one copy on each
        device of a list (MXNet's reset_device / reset_ctx: several copies are averaged
        first)."""
        first, devices = _devices_of(device, self.name)
        if self._devices is None and devices is None:
            self._device = first
            if self._data is None or first is None or self._data.device == first:
                return
            data = _copy_to(self._data, first)
            if self.grad_req != "null" and self._dense_grad:
                data.attach_grad(grad_req=self.grad_req)
            self._data = data
            return
        if self._data is None:
            self._set_devices(device)
            return
        from .. import autograd
        with autograd.pause():
            value = self._reduce()
            self._set_devices(device)
            self._place(value)

    reset_ctx = reset_device

    def _place(self, value):
        """Makes the data from `value`: a copy on the device (each device) with a gradient
        buffer unless grad_req is 'null'."""
        if self._devices is None:
            if self._device is not None:
                data = _copy_to(value, self._device)
            else:
                data = value.copy()
            copies = [data]
        else:
            copies = [_copy_to(value, d) for d in self._devices]
        if self.grad_req != "null" and self._dense_grad:
            for c in copies:
                c.attach_grad(grad_req=self.grad_req)
        self._set_copies(copies)

    def _reduce(self):
        """The value to save: the data, or with several copies their average (MXNet's
        _reduce; copies a Trainer updates are equal, running statistics per device are
        not), on the first device."""
        if self._copies is None:
            return self._data if self._data is not None else Parameter.data(self)
        first = self._copies[0]
        dtype = str(first.dtype)
        if dtype != "bfloat16" and not _onp.issubdtype(_onp.dtype(dtype), _onp.inexact):
            return first  # (integers: no average to take)
        from .. import autograd
        with autograd.pause():
            total = first.copy()
            for c in self._copies[1:]:
                total += c.to_device(first.device)
            return (total / len(self._copies)).astype(dtype)

    def _shape_known(self):
        return self.shape is not None and all(d > 0 for d in self.shape)

    def initialize(self, init=None, device=None, default_init=None, force_reinit=False,
                   ctx=None):
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._set_devices(device if device is not None else ctx)
        # MXNet: `init` overrides the parameter's own init, which overrides default_init
        if init is None:
            init = self.init if self.init is not None else default_init
        chosen = _init.create(init)
        if not self._shape_known():
            if not self.allow_deferred_init:
                raise ValueError(f"[Parameter] {self.name}: shape {self.shape} is not known")
            self._deferred = chosen
            return
        self._create(chosen)

    def _create(self, initializer):
        data = initializer(self.shape, self.dtype, name=self.name)
        if self._devices is not None:
            # the same initial value on every device
            from .. import autograd
            with autograd.pause():
                copies = [data.to_device(d) for d in self._devices]
            if self.grad_req != "null" and self._dense_grad:
                for c in copies:
                    c.attach_grad(grad_req=self.grad_req)
            self._set_copies(copies)
            self._deferred = None
            for hook in self._on_create:
                hook(self)
            return
        if self._device is not None:
            data = data.to_device(self._device)
        if self.grad_req != "null" and self._dense_grad:
            data.attach_grad(grad_req=self.grad_req)
        self._data = data
        self._copies = None
        self._deferred = None
        for hook in self._on_create:
            hook(self)

    def _finish_deferred_init(self, shape=None):
        """Called by layers once the input shape tells the unknown dims (without `shape`,
        as MXNet calls it: the shape set on the parameter)."""
        if self._data is not None:
            return
        with _INIT_LOCK:  # (threads making the first call together: one creates it)
            if self._data is None:
                self._finish_deferred_init_locked(shape)

    def _finish_deferred_init_locked(self, shape):
        if shape is None:
            shape = self.shape
        if self._deferred is None:
            raise DeferredInitializationError(
                f"[Parameter] {self.name} has not been initialized: call initialize() first")
        if self.shape is not None:
            merged = tuple(s if s > 0 else t for s, t in zip(self.shape, shape))
            if any(s > 0 and s != t for s, t in zip(self.shape, shape)):
                raise ValueError(f"[Parameter] {self.name}: inferred shape {shape} conflicts with "
                                 f"declared shape {self.shape}")
            shape = merged
        self.shape = tuple(shape)
        self._create(self._deferred)

    def data(self, device=None, ctx=None):
        """The value. With one device, the one copy (device / MXNet 1.x's ctx are not
        checked). With several (initialize(ctx=[...])), the copy on `device` (ctx): a
        RuntimeError if there is none; with no device, the copy on the device of the
        inputs of the block call running (a layer's forward uses the copy where its input
        is), else outside a forward the current device's (MXNet's current_context()), else
        the first copy."""
        if Parameter._tracing:
            traced = _TRACING.params
            if traced is not None and self in traced:
                return traced[self]
        if self._data is None:
            if self._deferred is not None:
                raise DeferredInitializationError(
                    f"[Parameter] {self.name}: shape is inferred at the first forward pass")
            raise RuntimeError(f"[Parameter] {self.name} has not been initialized: call "
                               "initialize() first")
        if self._copies is None:
            return self._data
        return self._copy_on(device if device is not None else ctx)

    def _copy_on(self, device):
        """The copy on `device` (None: the block call's device, else the current one)."""
        strict = True
        if device is None:
            device = getattr(_CALL, "device", None)
            if device is None:
                from ..device import current_device
                device, strict = current_device(), False
        for d, c in zip(self._devices, self._copies):
            if d == device:
                return c
        if not strict:
            return self._copies[0]
        raise RuntimeError(f"Parameter '{self.name}' was not initialized on device {device}. "
                           f"It was only initialized on {list(self._devices)}.")

    def grad(self, device=None, ctx=None):
        """The gradient buffer (device / MXNet 1.x's ctx: as for data())."""
        if self._copies is None:
            g = self.data().grad
        else:
            self.data()  # (the errors of an uninitialized parameter)
            g = self._copy_on(device if device is not None else ctx).grad
        if g is None:
            raise RuntimeError(f"[Parameter] {self.name} has grad_req='null': no gradient")
        return g

    def set_data(self, data):
        """Sets the value (of every copy)."""
        data = np.array(data, dtype=self.dtype) if not isinstance(data, np.ndarray) else data
        if self.shape is not None and self._shape_known() and tuple(data.shape) != self.shape:
            raise ValueError(f"[Parameter] {self.name}: expected shape {self.shape}, got "
                             f"{tuple(data.shape)}")
        self.shape = tuple(data.shape)
        if self._data is None:
            self._place(data)
        elif self._copies is None:
            self._data[...] = data
        else:
            for c in self._copies:
                c[...] = data.to_device(c.device)
        self._value_set()

    def _value_set(self):
        for hook in self.__dict__.get("_on_set", ()):  # (an unpickled old one has none)
            hook(self)

    def _current_dtype(self):
        """The dtype's name ('float32', 'bfloat16', ...) of the data, or of the declared dtype
        before there is data (None when neither is known). Names, since NumPy has no
        bfloat16."""
        if self._data is not None:
            return str(self._data.dtype)
        if self.dtype is None:
            return None
        return "bfloat16" if str(self.dtype) == "bfloat16" else _onp.dtype(self.dtype).name

    def _replace_data(self, data):
        """Takes `data` (an ndarray) as the new value, its dtype and shape included."""
        self.dtype = str(data.dtype)
        self.shape = tuple(data.shape)
        self._place(data)
        self._deferred = None
        self._value_set()

    def cast(self, dtype):
        """Casts the data and the gradient to dtype (the declared dtype too, so a deferred
        initialization creates it in dtype)."""
        if self._data is None:
            self.dtype = dtype
            return
        copies = []
        for old in self._all_copies():
            data = old.astype(dtype)
            if data is old:
                data = old.copy()
            if self.grad_req != "null" and self._dense_grad:
                data.attach_grad(grad_req=self.grad_req)
                if old.grad is not None:
                    data.grad[...] = old.grad.astype(dtype)
            copies.append(data)
        self._set_copies(copies)
        self.dtype = str(copies[0].dtype)

    def var(self):
        """A symbol (mx.sym) for this parameter: a graph input named after it (MXNet's
        var())."""
        from .. import sym
        return sym.var(self.name)

    def zero_grad(self):
        """Sets the gradient (of every copy) to 0."""
        if self._data is None:
            return
        for c in self._all_copies():
            if c.grad is not None:
                c.grad[...] = 0


class _RowSparseParameter(Parameter):
    """A Parameter(stype='row_sparse') (MXNet's sparse weight, as contrib.nn.SparseEmbedding
    holds one): the whole weight stays with the Trainer's KVStore, which updates it from the
    row_sparse gradients pushed to it (lazily with lazy_update); a forward pass asks for the
    rows it needs, row_sparse_data(row_id), and its gradient reaches only those rows, so
    neither the pulled weight nor the gradient is the size of the whole table. data() and
    list_data() raise, as MXNet's do; the value saved (save_parameters) is the whole
    weight, the store's."""

    _dense_grad = False
    _trainer = None  # the Trainer whose store holds the weight (MXNet's param._trainer)
    _pulls = ()  # the RowSparseNDArrays pulled since the last step (their rows carry grads)
    _stepped = 0  # how many of _pulls the last step used (dropped at the next pull)

    def __getstate__(self):
        # (a copy, pickle or deepcopy, is no Trainer's: the whole weight goes, the rows
        # pulled and the Trainer stay)
        state = super().__getstate__()
        state["_data"] = self._reduce() if self._data is not None else None
        state["_trainer"], state["_pulls"], state["_stepped"] = None, (), 0
        return state

    def _set_devices(self, device):
        first, devices = _devices_of(device, self.name)
        if devices is not None:
            raise NotImplementedError(f"[Parameter] {self.name}: a row_sparse weight lives on "
                                      f"one device; got {devices}")
        super()._set_devices(device)

    def _check_trainer(self, trainer):
        if self._trainer is not None and self._trainer is not trainer:
            raise RuntimeError(f"Failed to set the trainer for Parameter '{self.name}' because "
                               "it was already set. More than one trainer for a row_sparse "
                               "Parameter is not supported.")

    def _set_trainer(self, trainer):
        self._check_trainer(trainer)
        self._trainer = trainer

    def _no_dense_copy(self, what):
        raise RuntimeError(f"Cannot return {what} of Parameter '{self.name}' because its "
                           "storage type is row_sparse. Please use row_sparse_data() instead.")

    def data(self, device=None, ctx=None):
        self._no_dense_copy("a copy via data()")

    def list_data(self):
        self._no_dense_copy("copies via list_data()")

    def _whole(self):
        """The whole weight: the Trainer's store's once it holds it (training updates that),
        else the parameter's own."""
        if self._trainer is not None:
            stored = self._trainer._stored_weight(self)
            if stored is not None:
                return stored
        return Parameter.data(self)  # (the errors of an uninitialized parameter)

    def _reduce(self):
        return self._whole()

    def _replaced(self):
        """The parameter's array was replaced (initialize, cast, reset_device, a load): the
        store takes it, and rows pulled before are dropped."""
        self._pulls, self._stepped = (), 0
        if self._trainer is not None:
            self._value_set()

    def _create(self, initializer):
        if self.grad_req == "add":
            self._grad_req_changed()  # (the same error as setting it)
        super()._create(initializer)
        self._replaced()

    def cast(self, dtype):
        super().cast(dtype)
        self._replaced()

    def reset_device(self, device):
        super().reset_device(device)
        self._replaced()

    reset_ctx = reset_device

    def row_sparse_data(self, row_id):
        """The rows listed in row_id (an integer array; repeats and any order allowed) as a
        RowSparseNDArray, pulled from the Trainer's store, whose rows record the gradient of
        what uses them. Several pulls before a step (one table used twice in a forward) all
        count: grad() sums their gradients."""
        from .. import _core, autograd
        from ..nd import sparse
        if not isinstance(row_id, np.ndarray):
            raise TypeError(f"[Parameter] {self.name}.row_sparse_data: row_id must be an "
                            f"ndx array, got {type(row_id).__name__}")
        whole = self._whole()
        trainer = self._trainer
        if trainer is None:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' when "
                               "no Trainer is created with it.")
        work = sparse.zeros("row_sparse", whole.shape, ctx=whole.device, dtype=whole.dtype)
        with autograd.pause():
            trainer._row_sparse_pull(self, work, row_id)
        pulls = list(self._pulls[self._stepped:])  # (the last step's are done with)
        if pulls and not autograd.is_recording():
            # outside a recorded forward, earlier pulls no backward has used are dropped
            # (an evaluation loop keeps one); inside one, every pull may be differentiated
            written = _core._autograd_fresh_grads([p._data for p in pulls], False)
            pulls = [p for p, w in zip(pulls, written) if w]
        if self.grad_req != "null":
            work._data.attach_grad()
        self._pulls, self._stepped = tuple(pulls) + (work,), 0
        return work

    def list_row_sparse_data(self, row_id):
        """row_sparse_data(row_id) of every device's copy (there is one device)."""
        return [self.row_sparse_data(row_id)]

    def _grad_req_changed(self):
        if self.grad_req == "add":
            raise NotImplementedError(f"[Parameter] {self.name}: grad_req='add' is not "
                                      "supported for a row_sparse weight (each pull makes new "
                                      "rows); use 'write'")
        for work in self._pulls:
            if self.grad_req != "null":
                work._data.attach_grad()
            else:
                work._data = work._data.detach()

    def grad(self, device=None, ctx=None):
        """The gradient of the rows pulled since the last step (of those the step used,
        until the next pull), as a RowSparseNDArray: the sum over the pulls, each row once
        (no rows before any pull)."""
        from ..nd import sparse
        whole = self._whole()
        if self.grad_req == "null":
            raise RuntimeError(f"[Parameter] {self.name} has grad_req='null': no gradient")
        parts = [sparse.RowSparseNDArray._make(whole.shape, w._data.dtype, data=w._data.grad,
                                               indices=w._indices)
                 for w in self._pulls if w._data.grad is not None]
        if not parts:
            return sparse.zeros("row_sparse", whole.shape, ctx=whole.device, dtype=whole.dtype)
        return parts[0] if len(parts) == 1 else sparse.add_n(parts)

    def list_grad(self):
        return [self.grad()]

    def zero_grad(self):
        for work in self._pulls:
            if work._data.grad is not None:
                work._data.grad[...] = 0

    def _watched(self):
        """The arrays whose gradients backward writes (the Trainer's stale-gradient check):
        the rows pulled since the last step."""
        return [w._data for w in self._pulls[self._stepped:]]

    def _step_done(self):
        """The Trainer pushed the gradient: the pulls so far are done with (grad() still
        reads them until the next pull)."""
        self._stepped = len(self._pulls)


def _constant_value(value):
    """`value` as a NumPy array: an array keeps its dtype, anything else (a list, a number)
    becomes float32, as MXNet 2.0's Constant makes it (mx.np.array(value, dtype=float32))."""
    if hasattr(value, "asnumpy"):
        return _onp.asarray(value.asnumpy())
    if isinstance(value, _onp.ndarray):
        return value
    return _onp.asarray(value, dtype="float32")


class Constant(Parameter):
    """MXNet 2.0's gluon.Constant(value): a parameter holding a fixed array, which autograd
    and Trainer leave alone (grad_req is always 'null'); set_data still changes it. MXNet
    1.x's Constant(name, value) works too."""

    def __init__(self, value, *value_1x):
        name = "const"
        if value_1x:
            if len(value_1x) > 1 or not isinstance(value, str):
                raise TypeError("[Constant] expected Constant(value) or MXNet 1.x's "
                                "Constant(name, value)")
            name, value = value, value_1x[0]
        value = _constant_value(value)
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape, dtype=str(value.dtype),
                         init=_init.Constant(value), differentiable=False)

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f"Constant parameter {self.name!r} does not support grad_req other "
                          f"than 'null'; {req!r} is ignored", stacklevel=2)


class ParameterDict(OrderedDict):
    """MXNet 1.x's ParameterDict: an ordered {name: Parameter} dict (what collect_params()
    returns and Block.params is) with the 1.x methods that act on every parameter:
    initialize, zero_grad, reset_ctx / reset_device, setattr, list_ctx, save / load, and
    get(name, **kwargs), which returns the parameter called `name` or creates it.

    Keys are ndx's structured names ('0.weight', 'weight'), not 1.x's prefixed ones
    ('dense0_weight'): a dict bound to a block (Block.params) registers the parameters get()
    creates on that block, so they are in collect_params() and passed to hybrid_forward by
    name. `shared`: a dict whose parameters get() returns before creating one."""

    def __init__(self, prefix="", shared=None, *, _block=None):
        super().__init__()
        self._prefix = prefix
        self._shared = shared
        self._block = _block

    @property
    def prefix(self):
        """The prefix given at construction (ndx's names carry none: keys are unchanged)."""
        return self._prefix

    def __repr__(self):
        body = "\n".join(f"  {v!r}" for v in self.values())
        return f"{type(self).__name__}(\n{body}\n)" if self else f"{type(self).__name__}()"

    def _lookup(self, name):
        if name in self:
            return super().__getitem__(name)
        if self._shared is not None and name in self._shared:
            param = self._shared[name]
            self._register(name, param)
            return param
        return None

    def _register(self, name, param):
        if self._block is not None:
            self._block._register_param(name, param)
        else:
            OrderedDict.__setitem__(self, name, param)

    def get(self, name, default=None, **kwargs):
        """The Parameter `name`, created with **kwargs (Parameter's arguments: shape, init,
        dtype, grad_req, ...) when neither this dict nor the shared one has it (MXNet 1.x).
        For an existing parameter, kwargs must agree with its attributes: a shape may fill
        in its unknown (0) dimensions, attributes still None are set, init is ignored (the
        parameter keeps its own).

        `default` keeps dict.get's form working: get(key, value) with no keyword arguments
        returns value for a missing key instead of creating a parameter."""
        if not isinstance(name, str):
            raise TypeError(f"[ParameterDict.get] name must be a str, got {type(name).__name__}")
        param = self._lookup(name)
        if param is None:
            if default is not None and not kwargs:
                return default
            # MXNet 1.x's parameter name carries the prefix ('dense0_weight'); the key not
            param = Parameter(self._prefix + name, **kwargs)
            self._register(name, param)
            return param
        for key, value in kwargs.items():
            current = getattr(param, key, None)
            if current is None:
                setattr(param, key, value)
            elif key == "init":
                continue  # (initializers have no equality; the parameter keeps its own)
            elif key == "shape":
                param.shape = _merged_shape(name, current, _checked_shape(name, value))
            elif key == "dtype":
                if _onp.dtype(value) != _onp.dtype(current):
                    raise ValueError(f"[ParameterDict.get] parameter {name!r} has dtype "
                                     f"{current}, not {value}")
            elif value is not None and value != current:
                raise ValueError(f"[ParameterDict.get] parameter {name!r} has {key}="
                                 f"{current!r}, not {value!r}")
        return param

    def get_constant(self, name, value=None):
        """A parameter `name` holding the constant `value` (grad_req 'null'), created if
        missing (MXNet 1.x's get_constant)."""
        param = self._lookup(name)
        if param is not None:
            return param
        if value is None:
            raise KeyError(f"[ParameterDict.get_constant] no constant {name!r}; pass its value "
                           "to create it")
        value = _onp.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value)
        if value.dtype == _onp.float64:
            value = value.astype("float32")
        param = Parameter(self._prefix + name, grad_req="null", shape=value.shape,
                          dtype=str(value.dtype), init=_init.Constant(value),
                          differentiable=False)
        self._register(name, param)
        return param

    def update(self, other=(), **kwargs):
        """Adds the parameters of `other`; a name already holding a different Parameter is
        an error (MXNet 1.x)."""
        items = other.items() if hasattr(other, "items") else other
        for name, param in list(items) + list(kwargs.items()):
            if name in self and super().__getitem__(name) is not param:
                raise ValueError(f"[ParameterDict.update] cannot update: parameter {name!r} "
                                 "is already present with a different value")
            OrderedDict.__setitem__(self, name, param)

    def _unique(self):
        seen, out = set(), []
        for p in self.values():
            if id(p) not in seen:
                seen.add(id(p))
                out.append(p)
        return out

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False, device=None):
        """Initializes every parameter (init: the default initializer, for parameters that
        have none of their own; ctx / device: where)."""
        for p in self._unique():
            p.initialize(default_init=init, device=device if device is not None else ctx,
                         force_reinit=force_reinit)

    def zero_grad(self):
        """Sets every gradient to 0."""
        for p in self._unique():
            p.zero_grad()

    def reset_device(self, device):
        for p in self._unique():
            p.reset_device(device)

    reset_ctx = reset_device

    def list_ctx(self):
        """The devices holding the parameters (each once)."""
        out = []
        for p in self._unique():
            for d in p.list_device():
                if d not in out:
                    out.append(d)
        return out

    list_device = list_ctx

    def setattr(self, name, value):
        """Sets attribute `name` of every parameter, e.g. setattr('grad_req', 'null')."""
        for p in self._unique():
            setattr(p, name, value)

    def select(self, pattern):
        """The parameters whose names match the regular expression (re.match)."""
        regex = re.compile(pattern)
        out = ParameterDict(self._prefix)
        OrderedDict.update(out, ((k, v) for k, v in self.items() if regex.match(k)))
        return out

    def save(self, filename, strip_prefix="", *, format="safetensors"):  # noqa: A002
        """Writes every parameter's data under its key (less strip_prefix, which every key
        must start with). format: as for Block.save_parameters ('mxnet' writes the NDArray
        file of mx.nd.save)."""
        from .serialization import save_tensors
        tensors = OrderedDict()
        for name, p in self.items():
            if not name.startswith(strip_prefix):
                raise ValueError(f"[ParameterDict.save] prefix {strip_prefix!r} is to be "
                                 f"stripped before saving, but parameter {name!r} does not "
                                 "start with it")
            tensors[name[len(strip_prefix):]] = p._reduce()
        save_tensors(filename, tensors, format, "ParameterDict.save")

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current", device=None):
        """Loads a file written by save() (or save_parameters, or MXNet's mx.nd.save of
        named arrays): each name, with restore_prefix put in front, sets that parameter.
        Checks as Block.load_parameters makes them, before any parameter changes."""
        from .block import _check_dtype_source, _load_into
        from .serialization import load_param_dict
        _check_dtype_source(dtype_source, "ParameterDict.load")
        loaded = {restore_prefix + k: v
                  for k, v in load_param_dict(filename, "ParameterDict.load").items()}
        _load_into(self, loaded, f"{filename}: ", "ParameterDict.load",
                   device if device is not None else ctx,
                   allow_missing, ignore_extra, cast_dtype, dtype_source)


def _merged_shape(name, current, wanted):
    """current with its unknown (0) dimensions taken from wanted; conflicts raise."""
    if len(current) != len(wanted) or any(a and b and a != b for a, b in zip(current, wanted)):
        raise ValueError(f"[ParameterDict.get] parameter {name!r} has shape {current}, which "
                         f"does not match {wanted}")
    return tuple(a or b for a, b in zip(current, wanted))
