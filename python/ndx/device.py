"""Devices: ``cpu(i)`` and ``gpu(i)``, MXNet's contexts and the Array API's devices.

A Device is the string ndx uses for it ("cpu(0)", "gpu(1)"), so it goes wherever a device
string does (``device=``, ``ctx=``, ``to_device``) and compares equal to one."""
import threading

from . import _core


class Device(str):
    """A device: ``Device("gpu", 1)`` or ``Device("gpu(1)")``."""

    def __new__(cls, device_type="cpu", device_id=0):
        if isinstance(device_type, Device):
            return device_type
        text = str(device_type)
        if "(" in text:
            kind, _, rest = text.partition("(")
            device_id = int(rest.rstrip(")"))
        else:
            kind = text
        if kind == "cuda":
            kind = "gpu"
        if kind not in ("cpu", "gpu"):
            raise ValueError(f"[Device] device_type must be 'cpu' or 'gpu', got {device_type!r}")
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise ValueError(f"[Device] device_id must be a non-negative int, got {device_id!r}")
        self = super().__new__(cls, f"{kind}({device_id})")
        self._type = kind
        self._id = device_id
        return self

    @property
    def device_type(self):
        return self._type

    @property
    def device_id(self):
        return self._id

    def __repr__(self):
        return str(self)

    def __hash__(self):
        return str.__hash__(self)

    def __eq__(self, other):
        return str(self) == str(other) if isinstance(other, str) else NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __enter__(self):
        """``with mx.gpu(0):``: the block's default device (MXNet's default-context scope)."""
        stack = _scope_stack()
        stack.append(self)
        _core._set_scope_device(self)  # zero-input ops (creation, random) create here
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        stack = _scope_stack()
        if stack and stack[-1] is self:
            stack.pop()
        elif self in stack:  # exited out of order: drop the innermost entry for this device
            del stack[len(stack) - 1 - stack[::-1].index(self)]
        _core._set_scope_device(stack[-1] if stack else None)
        return False

    def empty_cache(self):
        """Frees the cached GPU blocks of this device (MXNet's ``Context.empty_cache``)."""
        if self._type == "gpu":
            empty_cache(self._id)


Context = Device


def cpu(device_id=0):
    """The CPU device."""
    return Device("cpu", device_id)


def gpu(device_id=0):
    """GPU number ``device_id``."""
    return Device("gpu", device_id)


def num_gpus():
    """GPUs this process can use (0 without CUDA, a driver or a device)."""
    return _core._num_gpus()


def gpu_unavailable_reason():
    """Why num_gpus() is 0 ("" when it is not)."""
    return _core._gpu_unavailable_reason()


def gpu_memory_info(device_id=0):
    """(free, total) bytes of GPU ``device_id``, as MXNet's ``gpu_memory_info``."""
    free, total, _, _ = _core._gpu_memory_info(device_id)
    return free, total


def gpu_memory_stats(device_id=0):
    """The allocator's view: {'free', 'total', 'in_use', 'cached'} bytes."""
    free, total, in_use, cached = _core._gpu_memory_info(device_id)
    return {"free": free, "total": total, "in_use": in_use, "cached": cached}


def empty_cache(device_id=0):
    """Frees the GPU blocks ndx's caching allocator keeps for reuse."""
    _core._gpu_empty_cache(device_id)


def synchronize(device=None):
    """Waits until the work this thread queued on ``device`` (every GPU by default) is done."""
    if device is None:
        for i in range(num_gpus()):
            _core._synchronize(gpu(i))
        return
    _core._synchronize(Device(device))


def gpu_host_fallbacks():
    """{op name: calls} for GPU ops that ran their CPU kernel on host copies because their
    family has no GPU kernel yet."""
    return _core._gpu_host_fallbacks()


# The process-wide default (test_utils.set_default_device writes it) and, per thread, the
# devices of the enclosing ``with device:`` blocks, innermost last.
_current = [cpu()]
_scopes = threading.local()


def _scope_stack():
    stack = getattr(_scopes, "stack", None)
    if stack is None:
        stack = _scopes.stack = []
    return stack


def _scoped_default():
    """current_device() where it is not cpu(0), else None: the device a creation call with no
    device argument moves host data to."""
    device = current_device()
    return None if device == cpu() else device


def current_device():
    """The default device: the innermost ``with device:`` block's in this thread, else the
    process default (cpu(0) unless test_utils.set_default_device changed it).

    Creation functions given no device (np.zeros, np.array of host data, np.random.*, mx.nd's)
    place arrays there, as MXNet's current_context()."""
    stack = getattr(_scopes, "stack", None)
    return stack[-1] if stack else _current[0]
