"""ndx.distributed: data-parallel training across processes, on Open MPI.

Start the processes with the launcher (or with Open MPI's ``mpirun``, which it wraps)::

    python -m ndx.distributed.launch -n 2 train.py args...
    python -m ndx.distributed.launch -n 4 --hosts h1,h2 train.py args...

In each process, ``kvstore.create('dist_sync')`` or ``Trainer(..., kvstore='dist_sync')`` calls
`init()`; `rank()` and `world_size()` are known before that (from the launcher's environment),
so a script can shard its data first. A process started without the launcher is rank 0 of 1:
the collectives return at once and MPI is never loaded.

The collectives (`allreduce`, `broadcast`, `barrier`) work in place on ndx CPU arrays, in C++
(src/dist/mpi_comm.cc): a communication thread runs MPI while the caller waits with the
interpreter lock released. A collective that has not completed within the timeout
(``NDX_DIST_TIMEOUT`` seconds, 60 unless set, or ``init(timeout=...)``) raises
`DistributedTimeoutError`: another worker died, hangs, or is far behind. After that, or after an
MPI error (`DistributedError`), the process can only exit; the launcher then stops the others
and reports which rank failed and why.
"""
import atexit
import ctypes
import math
import os
import sys

from .. import _api_internal, _core
from .. import numpy as _np

__all__ = ["DistributedError", "DistributedTimeoutError", "init", "is_initialized",
           "is_launched", "rank", "world_size", "local_rank", "allreduce", "allreduce_async",
           "broadcast", "barrier", "shutdown", "default_timeout"]

DEFAULT_TIMEOUT = 60.0
DEFAULT_BUCKET_MB = 4.0
_LIBRARY = "libndx_dist_mpi.so"


class DistributedError(RuntimeError):
    """A collective failed (an MPI error), or the communicator is unusable after one."""


class DistributedTimeoutError(DistributedError, TimeoutError):
    """A collective did not complete within the timeout: another worker died or hangs."""


class _State:
    initialized = False
    mpi = False  # whether MPI runs (launched with more than one process)
    rank = 0
    size = 1
    timeout = DEFAULT_TIMEOUT
    report_hook_installed = False
    failed = False  # an uncaught exception is on its way out
    nccl_device = None  # the GPU of this worker's NCCL communicator, once joined


_state = _State()


def _env_int(name, low, high=None):
    raw = os.environ.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"[ndx.distributed] environment variable {name} must be an int, got "
                         f"{raw!r}") from None
    if value < low or (high is not None and value >= high):
        bound = f"in [{low}, {high})" if high is not None else f">= {low}"
        raise ValueError(f"[ndx.distributed] environment variable {name} must be {bound}, got "
                         f"{value}")
    return value


def is_launched():
    """Whether this process was started by the launcher or mpirun (with any world size)."""
    return "OMPI_COMM_WORLD_SIZE" in os.environ


def world_size():
    """The number of worker processes (1 without the launcher)."""
    if _state.initialized:
        return _state.size
    size = _env_int("OMPI_COMM_WORLD_SIZE", 1)
    return 1 if size is None else size


def rank():
    """This process's index among the workers, 0 .. world_size() - 1."""
    if _state.initialized:
        return _state.rank
    r = _env_int("OMPI_COMM_WORLD_RANK", 0, world_size())
    return 0 if r is None else r


def local_rank():
    """This process's index among the workers on its machine."""
    r = _env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0)
    return 0 if r is None else r


def _check_timeout(who, timeout):
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"[{who}] timeout must be a number of seconds, got "
                        f"{type(timeout).__name__}")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"[{who}] timeout must be a finite number of seconds > 0, got "
                         f"{timeout}")
    return float(timeout)


def default_timeout():
    """NDX_DIST_TIMEOUT (seconds) if set, else 60."""
    raw = os.environ.get("NDX_DIST_TIMEOUT")
    if raw is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("[ndx.distributed] environment variable NDX_DIST_TIMEOUT must be a "
                         f"number of seconds, got {raw!r}") from None
    return _check_timeout("ndx.distributed: NDX_DIST_TIMEOUT", value)


def _library_path():
    """libndx_dist_mpi.so beside libndx: in the wheel's package directory, or the build
    directory a source checkout's _core links to."""
    here = os.path.dirname(os.path.realpath(_core.__file__))
    path = os.path.join(here, _LIBRARY)
    if not os.path.exists(path):
        raise ImportError(f"[ndx.distributed] {_LIBRARY} is not beside ndx's extension in "
                          f"{here}: this ndx was built without MPI (cmake -DNDX_DIST=ON needs "
                          "Debian's libopenmpi-dev and openmpi-bin)")
    return path


def _load_library():
    try:
        # Global symbols: Open MPI's plugins resolve MPI's symbols against what is loaded.
        ctypes.CDLL(_library_path(), mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise ImportError(f"[ndx.distributed] cannot load {_LIBRARY}: {e} (Open MPI's runtime, "
                          "Debian's openmpi-bin and libopenmpi3, must be installed)") from None


def _raise_status(who, status):
    if status == 0:
        return
    message = f"[{who}] " + _api_internal.get("_dist.error")()
    if status == 1:
        raise DistributedTimeoutError(message)
    raise DistributedError(message)


def init(timeout=None, bucket_mb=None):
    """Joins the other workers (MPI_Init) once per process; later calls return at once.

    timeout: seconds a collective may take before it raises DistributedTimeoutError
    (NDX_DIST_TIMEOUT or 60). bucket_mb: allreduce fuses arrays into buckets of up to this
    many MB (NDX_DIST_BUCKET_MB or 4). Returns (rank, world_size)."""
    if _state.initialized:
        return _state.rank, _state.size
    timeout = default_timeout() if timeout is None else _check_timeout("init", timeout)
    if bucket_mb is None:
        raw = os.environ.get("NDX_DIST_BUCKET_MB", DEFAULT_BUCKET_MB)
        try:
            bucket_mb = float(raw)
        except ValueError:
            raise ValueError("[ndx.distributed] environment variable NDX_DIST_BUCKET_MB must "
                             f"be a number, got {raw!r}") from None
    if not (bucket_mb > 0 and math.isfinite(bucket_mb)):
        raise ValueError(f"[init] bucket_mb must be a finite number > 0, got {bucket_mb}")
    size, r = world_size(), rank()  # typed errors for a bad environment, before MPI starts
    if size > 1:
        _load_library()
        status = _api_internal.get("_dist.init")(timeout, max(1, int(bucket_mb * 2**20)))
        _raise_status("init", status)
        got_rank = _api_internal.get("_dist.rank")()
        got_size = _api_internal.get("_dist.size")()
        if (got_rank, got_size) != (r, size):
            raise DistributedError(f"[init] MPI says rank {got_rank} of {got_size}, the "
                                   f"environment rank {r} of {size}")
        _state.mpi = True
        atexit.register(shutdown)
    _state.rank, _state.size, _state.timeout = r, size, timeout
    _state.initialized = True
    _install_report_hook()
    return r, size


def is_initialized():
    return _state.initialized


def _install_report_hook():
    """An uncaught exception marks the process failed, so that exit skips MPI_Finalize (a
    barrier the other workers would never reach) and mpirun stops them at once; under the
    launcher it is also written to the launcher's report directory, so the launcher can say
    which rank failed and why."""
    if _state.report_hook_installed:
        return
    directory = os.environ.get("NDX_DIST_REPORT_DIR")
    previous = sys.excepthook

    def hook(kind, value, tb):
        _state.failed = True
        if directory:
            try:
                with open(os.path.join(directory, f"rank{_state.rank}.txt"), "w") as f:
                    f.write(f"{kind.__name__}: {value}")
            except OSError:
                pass
        previous(kind, value, tb)

    sys.excepthook = hook
    _state.report_hook_installed = True


def _arrays(who, arrays):
    if isinstance(arrays, _np.ndarray):
        arrays = [arrays]
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"[{who}] expects an ndx array or a list of them, got "
                        f"{type(arrays).__name__}")
    for i, a in enumerate(arrays):
        if not isinstance(a, _np.ndarray):
            raise TypeError(f"[{who}] item {i} must be an ndx array, got {type(a).__name__}")
    return list(arrays)


def _require_init(who):
    if not _state.initialized:
        raise DistributedError(f"[{who}] ndx.distributed is not initialized: call "
                               "ndx.distributed.init() (kvstore.create('dist_sync') does)")


class Work:
    """A queued collective: wait() blocks until it is done (or raises)."""

    def __init__(self, who, ticket, copies=()):
        self._who, self._ticket, self._copies = who, ticket, copies

    def wait(self, timeout=None):
        timeout = _state.timeout if timeout is None else _check_timeout(self._who, timeout)
        if self._ticket is not None:
            status = _api_internal.get("_dist.wait")(self._ticket, timeout)
            self._ticket = None
            _raise_status(self._who, status)
            for original, contiguous in self._copies:
                original[...] = contiguous
            self._copies = ()


def _contiguous(arrays):
    """Arrays MPI can work on in place, and the (original, copy) pairs to copy back."""
    work, copies = [], []
    for a in arrays:
        # (a itself when it is contiguous; a 0-d array, one element, always is)
        c = a if a.ndim == 0 else _np.ascontiguousarray(a)
        work.append(c)
        if c is not a:
            copies.append((a, c))
    return work, copies


def _gpu_device(who, arrays):
    """The GPU the arrays are on (NCCL's path), or None for CPU arrays (MPI's)."""
    kinds = {a.device.device_type for a in arrays}
    if kinds == {"gpu"}:
        ids = {a.device.device_id for a in arrays}
        if len(ids) == 1:
            return ids.pop()
    elif kinds <= {"cpu"}:
        return None
    raise ValueError(f"[{who}] the arrays must all be on the CPU or all on one GPU, got "
                     f"{sorted({str(a.device) for a in arrays})}")


def _nccl(device_id):
    """Joins the NCCL communicator of the GPU workers once (rank 0's unique id goes to the
    others over MPI); even one worker runs NCCL, so a one-GPU run exercises it."""
    if _state.nccl_device is not None:
        if _state.nccl_device != device_id:
            raise ValueError(f"[nccl] this worker's collectives run on gpu({_state.nccl_device})"
                             f", got arrays on gpu({device_id})")
        return
    if not _state.mpi:
        _load_library()
    if _core._get_api("_dist.nccl_init") is None:
        raise DistributedError("[nccl] this ndx was built without CUDA, so without NCCL")
    unique_id = _api_internal.get("_dist.nccl_unique_id")() if _state.rank == 0 else \
        _np.zeros(128, dtype="uint8")
    broadcast(unique_id, root=0)
    _api_internal.get("_dist.nccl_init")(unique_id, _state.rank, _state.size, device_id)
    _state.nccl_device = device_id


def _raise_nccl(who, status):
    if status == 1:
        raise DistributedTimeoutError(f"[{who}] " + _api_internal.get("_dist.nccl_error")())
    if status != 0:
        raise DistributedError(f"[{who}] " + _api_internal.get("_dist.nccl_error")())


def allreduce_async(arrays):
    """Queues an in-place sum of each array over the workers; returns a Work to wait on.
    Every worker must queue the same arrays (shapes and dtypes) in the same order. CPU
    arrays go over MPI; GPU arrays (all on this worker's GPU) over NCCL, and are reduced
    before this returns."""
    arrays = _arrays("allreduce", arrays)
    _require_init("allreduce")
    device_id = _gpu_device("allreduce", arrays)
    if device_id is not None:
        _nccl(device_id)
        work, copies = _contiguous(arrays)
        _raise_nccl("allreduce", _api_internal.get("_dist.nccl_allreduce")(work, _state.timeout))
        return Work("allreduce", None, copies)
    if not _state.mpi:
        return Work("allreduce", None)
    work, copies = _contiguous(arrays)
    return Work("allreduce", _api_internal.get("_dist.allreduce")(work), copies)


def allreduce(arrays, timeout=None):
    """Sums each array over the workers, in place (bool: logical or)."""
    if type(arrays) is _np.ndarray:
        arrays = [arrays]
    if _state.mpi and type(arrays) is list and all(type(a) is _np.ndarray for a in arrays):
        # A training step's gradients: one C++ call queues and waits (-1: an array is not a
        # contiguous CPU array, nothing was queued, and the general path below handles it).
        wait = _state.timeout if timeout is None else _check_timeout("allreduce", timeout)
        status = _api_internal.get("_dist.allreduce_now")(arrays, wait)
        if status >= 0:
            _raise_status("allreduce", status)
            return
    allreduce_async(arrays).wait(timeout)


def broadcast(arrays, root=0, timeout=None):
    """Copies rank `root`'s arrays into every worker's, in place."""
    arrays = _arrays("broadcast", arrays)
    _require_init("broadcast")
    if isinstance(root, bool) or not isinstance(root, int):
        raise TypeError(f"[broadcast] root must be an int, got {type(root).__name__}")
    if not 0 <= root < _state.size:
        raise IndexError(f"[broadcast] root must be a rank in [0, {_state.size}), got {root}")
    device_id = _gpu_device("broadcast", arrays)
    if device_id is not None:
        _nccl(device_id)
        work, copies = _contiguous(arrays)
        timeout = _state.timeout if timeout is None else _check_timeout("broadcast", timeout)
        _raise_nccl("broadcast", _api_internal.get("_dist.nccl_broadcast")(work, root, timeout))
        Work("broadcast", None, copies).wait()
        return
    if not _state.mpi:
        return
    work, copies = _contiguous(arrays)
    Work("broadcast", _api_internal.get("_dist.broadcast")(work, root), copies).wait(timeout)


def barrier(timeout=None):
    """Returns once every worker has called barrier()."""
    _require_init("barrier")
    if _state.mpi:
        Work("barrier", _api_internal.get("_dist.barrier")()).wait(timeout)


def shutdown():
    """Leaves MPI (MPI_Finalize, which waits for every worker to get there) after a clean run;
    registered to run at exit. After a failure (a collective's error, or an uncaught
    exception) it does nothing: the process exits and mpirun stops the others."""
    if not _state.mpi or _state.failed or not _api_internal.get("_dist.usable")():
        return
    _state.mpi = False
    ticket = _api_internal.get("_dist.finalize")()
    # No deadline: another worker may still be working (evaluating, saving) before it exits.
    _api_internal.get("_dist.wait")(ticket, 1e9)
