"""Parameters: arrays a Block learns, with deferred shape inference (0 marks an unknown dim;
-1, MXNet 2.0's mark, is taken as 0)."""
import numpy as _onp

from .. import initializer as _init
from .. import numpy as np

__all__ = ["Parameter", "DeferredInitializationError"]


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


def _one_device(device, name):
    """A single device from MXNet's device / ctx argument (a device or a list of one)."""
    if isinstance(device, (list, tuple)):
        if len(device) > 1:
            raise NotImplementedError(
                f"[Parameter] {name}: one copy per device ({len(device)} devices) is data-"
                "parallel training, which ndx does not do yet; pass a single device")
        device = device[0] if device else None
    return device


class Parameter:
    # While a HybridBlock traces its forward, data() returns these traced stand-ins.
    _traced = None

    def __init__(self, name="weight", grad_req="write", shape=None, dtype="float32", init=None,
                 allow_deferred_init=True, differentiable=True, lr_mult=1.0, wd_mult=1.0,
                 stype="default", grad_stype="default"):
        if stype != "default" or grad_stype != "default":
            raise NotImplementedError(f"[Parameter] {name}: sparse storage (stype "
                                      f"{stype!r}, grad_stype {grad_stype!r}) is not supported")
        self.name = name
        self._data = None
        self.grad_req = grad_req
        # Multipliers of the optimizer's learning rate and weight decay (Trainer reads them).
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.shape = None if shape is None else _checked_shape(name, shape)
        self.dtype = dtype
        self.init = init
        self.allow_deferred_init = allow_deferred_init
        # False for state no gradient ever flows to (BatchNorm's running statistics), which
        # MXNet calls auxiliary: export names it 'aux:...' rather than 'arg:...'.
        self.differentiable = differentiable
        self._deferred = None  # the initializer waiting for the shape
        self._device = None  # where initialize() put (or will put) the data; None: the CPU
        # Called with the parameter once its data exists (a distributed Trainer broadcasts
        # rank 0's value of a deferred parameter there, before forward uses it).
        self._on_create = []

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

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
        old = getattr(self, "_grad_req", None)
        self._grad_req = req
        if self._data is None or req == old:
            return
        if req == "null":
            self._data = self._data.detach() if hasattr(self._data, "detach") else \
                self._data.copy()
        else:
            self._data.attach_grad(grad_req=req)

    def list_data(self):
        """[data()]: ndx keeps one copy, on one device."""
        return [self.data()]

    def list_grad(self):
        """[grad()]."""
        return [self.grad()]

    def list_device(self):
        """The devices holding a copy: [data().device] (before initialization, the device
        initialize() was given, the CPU if none)."""
        if self._data is not None:
            return [self._data.device]
        from .. import device as _device
        return [self._device if self._device is not None else _device.cpu()]

    list_ctx = list_device

    def reset_device(self, device):
        """Moves the data (and its gradient buffer) to `device` (MXNet's reset_device)."""
        device = _one_device(device, self.name)
        self._device = device
        if self._data is None or device is None or self._data.device == device:
            return
        data = self._data.to_device(device)
        if data is self._data:
            data = data.copy()
        if self.grad_req != "null":
            data.attach_grad(grad_req=self.grad_req)
        self._data = data

    reset_ctx = reset_device

    def _shape_known(self):
        return self.shape is not None and all(d > 0 for d in self.shape)

    def initialize(self, init=None, device=None, default_init=None, force_reinit=False,
                   ctx=None):
        if self._data is not None and not force_reinit:
            return
        self._device = _one_device(device if device is not None else ctx, self.name)
        chosen = _init.create(self.init if self.init is not None else (init or default_init))
        if not self._shape_known():
            if not self.allow_deferred_init:
                raise ValueError(f"[Parameter] {self.name}: shape {self.shape} is not known")
            self._deferred = chosen
            return
        self._create(chosen)

    def _create(self, initializer):
        data = initializer(self.shape, self.dtype, name=self.name)
        if self._device is not None:
            data = data.to_device(self._device)
        if self.grad_req != "null":
            data.attach_grad(grad_req=self.grad_req)
        self._data = data
        self._deferred = None
        for hook in self._on_create:
            hook(self)

    def _finish_deferred_init(self, shape=None):
        """Called by layers once the input shape tells the unknown dims (without `shape`,
        as MXNet calls it: the shape set on the parameter)."""
        if self._data is not None:
            return
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

    def data(self, device=None):
        if Parameter._traced is not None and self in Parameter._traced:
            return Parameter._traced[self]
        if self._data is None:
            if self._deferred is not None:
                raise DeferredInitializationError(
                    f"[Parameter] {self.name}: shape is inferred at the first forward pass")
            raise RuntimeError(f"[Parameter] {self.name} has not been initialized: call "
                               "initialize() first")
        return self._data

    def grad(self, device=None):
        g = self.data().grad
        if g is None:
            raise RuntimeError(f"[Parameter] {self.name} has grad_req='null': no gradient")
        return g

    def set_data(self, data):
        data = np.array(data, dtype=self.dtype) if not isinstance(data, np.ndarray) else data
        if self.shape is not None and self._shape_known() and tuple(data.shape) != self.shape:
            raise ValueError(f"[Parameter] {self.name}: expected shape {self.shape}, got "
                             f"{tuple(data.shape)}")
        self.shape = tuple(data.shape)
        if self._data is None:
            self._data = data.copy() if self._device is None else data.to_device(self._device)
            if self._data is data:
                self._data = data.copy()
            if self.grad_req != "null":
                self._data.attach_grad(grad_req=self.grad_req)
        else:
            self._data[...] = data

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
        data = data.copy()
        if self.grad_req != "null":
            data.attach_grad(grad_req=self.grad_req)
        self.dtype = str(data.dtype)
        self.shape = tuple(data.shape)
        self._data = data
        self._deferred = None

    def cast(self, dtype):
        """Casts the data and the gradient to dtype (the declared dtype too, so a deferred
        initialization creates it in dtype)."""
        if self._data is None:
            self.dtype = dtype
            return
        old = self._data
        data = old.astype(dtype)
        if data is old:
            data = old.copy()
        if self.grad_req != "null":
            data.attach_grad(grad_req=self.grad_req)
            if old.grad is not None:
                data.grad[...] = old.grad.astype(dtype)
        self._data = data
        self.dtype = str(data.dtype)

    def zero_grad(self):
        if self._data is not None and self._data.grad is not None:
            self._data.grad[...] = 0
