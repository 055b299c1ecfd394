"""DataLoader as MXNet's gluon.data has it: batches of a dataset from a sampler, batchified,
loaded by worker processes (or threads) ahead of use when num_workers > 0."""
import collections
import multiprocessing
import multiprocessing.pool
import pickle
import threading
from multiprocessing.reduction import ForkingPickler

from ... import _core, profiler
from ... import numpy as _np
from ...device import num_gpus
from ...numpy import ndarray
from .batchify import default_batchify_fn, stack_host, to_ndx
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, check_count

__all__ = ["DataLoader"]

# State of a worker process, set by _worker_init. Workers are forked, so the dataset and the
# batchify function reach them without pickling (lambdas and local classes work, as in MXNet).
_worker_dataset = None
_worker_batchify = None
_END = object()

# Every pool a DataLoader made and has not yet terminated. Held here so that a pool is never
# freed by the cyclic collector: its own finalizer (a weakref callback) would then run
# terminate in whichever thread the collection ran in, and in the pool's own worker-handler
# thread that waits forever for itself, with the collector's "collecting" flag set, so no
# later gc.collect() in the process collects anything. A DataLoader in a reference cycle (a
# traceback holding it, say) is exactly that case.
_live_pools = set()


def _terminate(pool):
    pool.terminate()
    _live_pools.discard(pool)


def _terminate_from_any_thread(pool):
    """Terminates pool now on the main thread; elsewhere (a finalizer runs in whichever
    thread the collector does, a pool's own handler thread included) in a thread of its own."""
    if threading.current_thread() is threading.main_thread():
        _terminate(pool)
        return
    try:
        threading.Thread(target=_terminate, args=(pool,), name="DataLoader pool shutdown",
                         daemon=True).start()
    except RuntimeError:  # no new threads at interpreter shutdown: atexit ends the pool
        pass


def _pinned(batch):
    """The batch with its ndx arrays in page-locked memory (tuples, lists and dicts walked)."""
    if isinstance(batch, ndarray):
        return batch.pin_memory()
    if isinstance(batch, list):
        return [_pinned(b) for b in batch]
    if isinstance(batch, tuple):
        return tuple(_pinned(b) for b in batch)
    if isinstance(batch, dict):
        return {k: _pinned(v) for k, v in batch.items()}
    return batch


def _worker_init(dataset, batchify_fn, counter):
    global _worker_dataset, _worker_batchify
    _worker_dataset, _worker_batchify = dataset, batchify_fn
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    _seed_worker(index)


def _seed_worker(index):
    """Gives worker `index` a random stream of its own. A forked worker inherits the parent's
    generator, so without this every worker drew the same numbers (the same random crops and
    flips for the batches they load side by side). The seed comes from the parent's state,
    read and not drawn from, so the main process's draws (the shuffle) are the same with or
    without workers and ndx.random.seed repeats the workers' streams. (A loader made again
    with the parent's generator untouched in between repeats them too; shuffle=True, or one
    loader kept across epochs, moves on.)"""
    key, pos = _core._random_position()
    words = [(v >> shift) & 0xFFFFFFFF for v in (key, pos) for shift in (0, 32)]
    _np.random.seed(words + [index])


def _rebuilt_exception(cls, args, state):
    """An exception of class cls with these args and attributes, made without calling
    cls.__init__ (whose parameters need not be its args)."""
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


def _reduce_exception(exc):
    return _rebuilt_exception, (type(exc), exc.args, dict(getattr(exc, "__dict__", {})))


def _sendable(exc):
    """exc, made to survive the trip to the main process. Pickle rebuilds an exception as
    cls(*args), which fails for a class whose __init__ takes other parameters; that failure,
    in the pool's result thread, killed the thread and left the DataLoader waiting until its
    timeout. Such classes are rebuilt without __init__; an exception that cannot travel at
    all becomes a RuntimeError with its class name and message."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        pass
    ForkingPickler.register(type(exc), _reduce_exception)  # (in this worker process only)
    try:
        ForkingPickler.loads(ForkingPickler.dumps(exc))
        return exc
    except Exception:
        return RuntimeError(f"[DataLoader] a worker raised {type(exc).__name__}: {exc}")


def _worker_fn(indices):
    try:
        samples = [_worker_dataset[i] for i in indices]
        # the default batch travels back as NumPy arrays; the main process makes ndx arrays
        return stack_host(samples) if _worker_batchify is None else _worker_batchify(samples)
    except Exception as exc:
        raise _sendable(exc)  # (the pool sends the worker's traceback along)


class DataLoader:
    """Batches of `dataset`.

    batch_size with shuffle (a RandomSampler) or a `sampler`, and last_batch ('keep',
    'discard', 'rollover'); or a `batch_sampler` yielding lists of indices. batchify_fn turns a
    list of samples into a batch (default: stack into ndx arrays). num_workers > 0 loads
    batches in that many forked worker processes (threads with thread_pool=True), keeping
    `prefetch` batches (default 2 * num_workers) in flight; a batch that takes longer than
    `timeout` seconds raises RuntimeError. Each worker process draws random numbers from a
    stream of its own, seeded from ndx's generator (so ndx.random.seed repeats them).
    pin_memory=True puts each batch's arrays in page-locked host memory when a GPU is present
    (ndarray.pin_memory), so their copies to the GPU run without waiting; without a GPU the
    batches are ordinary CPU arrays, as PyTorch's are. pin_device_id is accepted for MXNet's
    signature (pinned memory serves every GPU).
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120):
        self._dataset = dataset
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("[DataLoader] batch_size must be given when batch_sampler is "
                                 "not")
            check_count("DataLoader", "batch_size", batch_size, 1)
            if sampler is None:
                sampler = RandomSampler(len(dataset)) if shuffle else \
                    SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError("[DataLoader] shuffle must be False when a sampler is given")
            elif not (isinstance(sampler, Sampler) or (hasattr(sampler, "__iter__") and
                                                       hasattr(sampler, "__len__"))):
                # any sized iterable of indices, as MXNet's and PyTorch's (a list of them)
                raise TypeError("[DataLoader] sampler must be a gluon.data.Sampler or a sized "
                                f"iterable of indices, got {type(sampler).__name__}")
            batch_sampler = BatchSampler(sampler, batch_size,
                                         "keep" if last_batch is None else last_batch)
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("[DataLoader] batch_size, shuffle, sampler and last_batch must not "
                             "be given with batch_sampler")
        self._batch_sampler = batch_sampler
        self._batchify_fn = batchify_fn
        self._num_workers = check_count("DataLoader", "num_workers", num_workers, 0)
        default_prefetch = 2 * self._num_workers
        self._prefetch = check_count("DataLoader", "prefetch",
                                     default_prefetch if prefetch is None else prefetch, 0)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"[DataLoader] timeout must be a positive number, got {timeout!r}")
        self._timeout = timeout
        self._thread_pool = bool(thread_pool)
        self._pin_memory = bool(pin_memory) and num_gpus() > 0
        self._pin_device_id = pin_device_id
        self._pool = None
        if self._num_workers > 0:
            if self._thread_pool:
                self._pool = multiprocessing.pool.ThreadPool(self._num_workers)
            else:
                context = multiprocessing.get_context("fork")
                self._pool = context.Pool(self._num_workers, initializer=_worker_init,
                                          initargs=(dataset, batchify_fn, context.Value("i")))
            _live_pools.add(self._pool)

    def __len__(self):
        return len(self._batch_sampler)

    def _load(self, indices):
        samples = [self._dataset[i] for i in indices]
        return default_batchify_fn(samples) if self._batchify_fn is None else \
            self._batchify_fn(samples)

    def _submit(self, indices):
        if self._thread_pool:
            return self._pool.apply_async(self._load, (indices,))
        return self._pool.apply_async(_worker_fn, (indices,))

    def __iter__(self):
        for batch in self._batches():
            yield batch

    def _batches(self):
        # each batch's wait is a "data" span when the profiler records
        it = self._unprofiled()
        while True:
            if not profiler.is_recording():
                batch = next(it, _END)
            else:
                start = profiler.now_ns()
                batch = next(it, _END)
                if batch is not _END:
                    profiler.record("DataLoader batch", "data", start, profiler.now_ns())
            if batch is _END:
                return
            yield _pinned(batch) if self._pin_memory else batch

    def _unprofiled(self):
        if self._pool is None:
            for indices in self._batch_sampler:
                yield self._load(indices)
            return
        batches = iter(self._batch_sampler)
        pending = collections.deque()

        def submit_next():
            indices = next(batches, None)
            if indices is not None:
                pending.append(self._submit(indices))

        for _ in range(max(self._prefetch, 1)):
            submit_next()
        while pending:
            result = pending.popleft()
            try:
                batch = result.get(self._timeout)
            except multiprocessing.TimeoutError:
                raise RuntimeError(f"[DataLoader] a worker took more than timeout="
                                   f"{self._timeout} s for a batch (or died)") from None
            submit_next()
            yield batch if self._thread_pool or self._batchify_fn is not None else to_ndx(batch)

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            self._pool = None
            _terminate_from_any_thread(pool)
