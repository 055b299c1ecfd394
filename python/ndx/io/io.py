"""The iterators of ``mx.io`` written for ndx arrays; behaviour as MXNet's (see the package
docstring)."""
import threading
from collections import OrderedDict, namedtuple

import numpy as onp

from .. import numpy as _np
from ..nd import ndarray as _nd

__all__ = ["DataBatch", "DataDesc", "DataIter", "NDArrayIter", "PrefetchingIter", "ResizeIter"]

_LAST_BATCH = ("pad", "discard", "roll_over")


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one input or label (a (name, shape) tuple with two
    attributes more, as MXNet's)."""

    def __new__(cls, name, shape, dtype=onp.float32, layout="NCHW"):
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        """The axis of N in layout (0 when layout is None; -1 when it has no N)."""
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from (name, shape) pairs and, optionally, (name, dtype) pairs."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        type_of = dict(types)
        return [DataDesc(name, shape, type_of[name]) for name, shape in shapes]


class DataBatch:
    """One batch: lists of data and label arrays, the count of padding examples at its end,
    and optionally example indices, a bucket key and the batch's DataDescs."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        for what, v in (("data", data), ("label", label)):
            if v is not None and not isinstance(v, (list, tuple)):
                raise TypeError(f"[DataBatch] {what} must be a list of arrays, got "
                                f"{type(v).__name__}")
        self.data, self.label, self.pad, self.index = data, label, pad, index
        self.bucket_key = bucket_key
        self.provide_data, self.provide_label = provide_data, provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [x.shape for x in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """The iterator protocol: next() returns a DataBatch from iter_next / getdata / getlabel /
    getpad / getindex and raises StopIteration at the end; reset() starts again."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Back to the first batch."""

    def next(self):
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Moves to the next batch; whether there was one."""
        return False

    def getdata(self):
        return None

    def getlabel(self):
        return None

    def getindex(self):
        return None

    def getpad(self):
        return 0


def _is_csr(value):
    return getattr(value, "stype", None) == "csr"


def _as_array(name, value):
    if isinstance(value, _np.ndarray) or _is_csr(value):
        return value
    if isinstance(value, _nd._SparseStorage):
        raise TypeError(f"[NDArrayIter] {name!r}: of the sparse storage types only csr is "
                        f"supported (MXNet's), got {value.stype}")
    if hasattr(value, "tocsr") and hasattr(value, "nnz"):  # a SciPy sparse matrix: CSR
        from ..nd import sparse
        return sparse.csr_matrix(value)
    try:
        # as MXNet's NDArrayIter: NumPy arrays (and lists) become float32 NDArrays, ndx
        # arrays keep their dtype
        return _nd.array(value, dtype="float32")
    except (TypeError, ValueError) as e:
        raise TypeError(f"[NDArrayIter] invalid type {type(value).__name__} for {name!r}: "
                        f"expected an ndx or NumPy array") from e


def _named_arrays(data, allow_empty, default_name):
    """[(name, array)] sorted by name, as MXNet's: one array takes default_name, a list of
    several '_<i>_<default_name>', a dict its own names."""
    if data is None:
        if not allow_empty:
            raise ValueError("[NDArrayIter] data must not be None")
        data = []
    if isinstance(data, (_np.ndarray, onp.ndarray, _nd._SparseStorage)) or hasattr(data, "tocsr"):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise ValueError("[NDArrayIter] data must hold at least one array")
        data = OrderedDict([(default_name, data[0])] if len(data) == 1 else
                           [(f"_{i}_{default_name}", d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError(f"[NDArrayIter] input must be an array, a list of arrays or a dict of "
                        f"name to array, got {type(data).__name__}")
    items = [(str(k), _as_array(k, v)) for k, v in data.items()]
    for k, v in items:
        if v.ndim == 0:
            raise ValueError(f"[NDArrayIter] {k!r} must have a batch axis, got a 0-d array")
    return sorted(items)


def _joined(a, b):
    """a and b along axis 0, an NDArray when a is one (as the other batches are); CSR
    matrices stay CSR."""
    if _is_csr(a):
        from ..nd import sparse
        return sparse.concat(a, b, dim=0)
    out = _np.concatenate([a, b], axis=0)
    return _nd._wrap(out) if isinstance(a, _nd.NDArray) else out


class NDArrayIter(DataIter):
    """Batches of in-memory arrays (MXNet's NDArrayIter).

    data / label: an array, a list of arrays or a dict of name to array, all with the same
    length along axis 0. shuffle reorders them (NumPy's global random state, as MXNet's) at
    construction and at each reset(). last_batch_handle: 'pad' fills the last batch from the
    start (DataBatch.pad says how many), 'discard' drops it, 'roll_over' carries it into the
    first batch after reset()."""

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label"):
        super().__init__(batch_size)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"[NDArrayIter] batch_size must be an int >= 1, got {batch_size!r}")
        if last_batch_handle not in _LAST_BATCH:
            raise ValueError(f"[NDArrayIter] last_batch_handle must be one of {_LAST_BATCH}, "
                             f"got {last_batch_handle!r}")
        self.data = _named_arrays(data, False, data_name)
        self.label = _named_arrays(label, True, label_name)
        self.num_data = self.data[0][1].shape[0]
        for k, v in self.data + self.label:
            if v.shape[0] != self.num_data:
                raise ValueError(f"[NDArrayIter] every array needs {self.num_data} examples "
                                 f"along axis 0; {k!r} has {v.shape[0]}")
        self.idx = onp.arange(self.num_data)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.cursor = -batch_size
        self._cache_data = self._cache_label = None
        self.reset()
        self.data_list = [v for _, v in self.data] + [v for _, v in self.label]
        self.num_source = len(self.data_list)

    @property
    def provide_data(self):
        return [DataDesc(k, (self.batch_size,) + tuple(v.shape[1:]), v.dtype)
                for k, v in self.data]

    @property
    def provide_label(self):
        return [DataDesc(k, (self.batch_size,) + tuple(v.shape[1:]), v.dtype)
                for k, v in self.label]

    def hard_reset(self):
        """Back to the start, dropping any rolled-over examples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = self._cache_label = None

    def reset(self):
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            # the examples left over start the next epoch's first batch
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data, label = self.getdata(), self.getlabel()
        if data[0].shape[0] != self.batch_size:  # an incomplete last batch: kept for roll_over
            self._cache_data, self._cache_label = data, label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _slice(self, source, start=0, end=None):
        end = self.num_data if end is None else end
        return [v[start:end] for _, v in source]

    def _batchify(self, source, cache):  # (a padded / rolled-over batch: see _joined)
        if self.cursor >= self.num_data:
            raise StopIteration
        bs = self.batch_size
        if self.last_batch_handle == "roll_over" and -bs < self.cursor < 0:
            rest = self._slice(source, end=self.cursor + bs)
            if cache is None:
                return rest
            return [_joined(a, b) for a, b in zip(cache, rest)]
        if self.last_batch_handle == "pad" and self.cursor + bs > self.num_data:
            pad = bs - self.num_data + self.cursor
            return [_joined(a, b) for a, b in
                    zip(self._slice(source, start=self.cursor), self._slice(source, end=pad))]
        return self._slice(source, self.cursor, min(self.cursor + bs, self.num_data))

    def getdata(self):
        out = self._batchify(self.data, self._cache_data)
        if self.last_batch_handle == "roll_over" and self.cursor < 0:
            self._cache_data = None
        return out

    def getlabel(self):
        out = self._batchify(self.label, self._cache_label)
        if self.last_batch_handle == "roll_over" and self.cursor < 0:
            self._cache_label = None
        return out

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        onp.random.shuffle(self.idx)
        self.data = [(k, _rows(v, self.idx)) for k, v in self.data]
        self.label = [(k, _rows(v, self.idx)) for k, v in self.label]
        self.data_list = [v for _, v in self.data] + [v for _, v in self.label]


def _rows(v, idx):
    """v's rows in the order idx gives (a CSR matrix stays one)."""
    if _is_csr(v):
        from ..nd import sparse
        return sparse.take(v, _np.array(idx, device=v.context))
    return _nd.array(v.asnumpy()[idx], dtype=v.dtype, device=v.device)


class _WrappingIter(DataIter):
    """An iterator whose batches come whole from others: the accessors read current_batch."""

    current_batch = None

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_WrappingIter):
    """data_iter stretched or cut to `size` batches an epoch (it restarts when it runs out)."""

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"[ResizeIter] size must be an int >= 0, got {size!r}")
        self.data_iter, self.size, self.reset_internal = data_iter, size, reset_internal
        self.cur, self.current_batch = 0, None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True


class PrefetchingIter(_WrappingIter):
    """Reads the next batch of each iterator in a background thread while the current one is
    used; the batches of several iterators are joined (their data lists, then labels).
    rename_data / rename_label: one {old name: new name} dict per iterator."""

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        iters = iters if isinstance(iters, list) else [iters]
        if not iters:
            raise ValueError("[PrefetchingIter] needs at least one iterator")
        self.iters, self.n_iter = iters, len(iters)
        self.rename_data, self.rename_label = rename_data, rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in iters]
        self.data_taken = [threading.Event() for _ in iters]
        for e in self.data_taken:
            e.set()
        self.started = True
        self.current_batch = None
        self.next_batch = [None] * self.n_iter
        self._errors = [None] * self.n_iter
        self.prefetch_threads = [threading.Thread(target=self._prefetch, args=(i,), daemon=True)
                                 for i in range(self.n_iter)]
        for t in self.prefetch_threads:
            t.start()

    def _prefetch(self, i):
        while True:
            self.data_taken[i].wait()
            if not self.started:
                break
            try:
                self.next_batch[i] = self.iters[i].next()
            except StopIteration:
                self.next_batch[i] = None
            except Exception as e:  # noqa: BLE001  (re-raised in the caller's thread)
                self.next_batch[i], self._errors[i] = None, e
            self.data_taken[i].clear()
            self.data_ready[i].set()

    def close(self):
        """Stops the prefetching threads."""
        if getattr(self, "started", False):
            self.started = False
            for e in self.data_taken:
                e.set()
            for t in self.prefetch_threads:
                t.join()

    def __del__(self):
        self.close()

    @staticmethod
    def _renamed(descs, renames):
        if renames is None:
            return [d for ds in descs for d in ds]
        return [DataDesc(r[d.name], d.shape, d.dtype) if isinstance(d, DataDesc)
                else DataDesc(r[d[0]], d[1]) for r, ds in zip(renames, descs) for d in ds]

    @property
    def provide_data(self):
        return self._renamed([i.provide_data for i in self.iters], self.rename_data)

    @property
    def provide_label(self):
        return self._renamed([i.provide_label for i in self.iters], self.rename_label)

    def reset(self):
        for e in self.data_ready:
            e.wait()
        for it in self.iters:
            it.reset()
        for e in self.data_ready:
            e.clear()
        for e in self.data_taken:
            e.set()

    def iter_next(self):
        for e in self.data_ready:
            e.wait()
        for err in self._errors:
            if err is not None:
                self._errors = [None] * self.n_iter
                raise err
        if self.next_batch[0] is None:
            if any(b is not None for b in self.next_batch):
                raise ValueError("[PrefetchingIter] the iterators ran out after different "
                                 "numbers of batches")
            return False
        if any(b is None or b.pad != self.next_batch[0].pad for b in self.next_batch):
            raise ValueError("[PrefetchingIter] the iterators' batches do not line up")
        self.current_batch = DataBatch(
            sum([b.data for b in self.next_batch], []),
            sum([b.label for b in self.next_batch], []),
            self.next_batch[0].pad, self.next_batch[0].index,
            provide_data=self.provide_data, provide_label=self.provide_label)
        for e in self.data_ready:
            e.clear()
        for e in self.data_taken:
            e.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration
