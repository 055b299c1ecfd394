"""Datasets as MXNet's gluon.data has them: Dataset with transform / transform_first / filter /
shard / take / sample, SimpleDataset and ArrayDataset."""
import numpy as _onp

from ... import numpy as np
from .sampler import check_count

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Abstract dataset: subclasses define __getitem__(idx) and __len__()."""

    def __getitem__(self, idx):
        raise NotImplementedError(f"[{type(self).__name__}] defines no __getitem__")

    def __len__(self):
        raise NotImplementedError(f"[{type(self).__name__}] defines no __len__")

    def transform(self, fn, lazy=True):
        """A dataset whose sample i is fn(*self[i]) (fn(self[i]) for a single item). lazy=False
        applies fn to every sample now and keeps the results."""
        trans = _LazyTransformDataset(self, fn)
        return trans if lazy else SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn, lazy=True):
        """As transform, but fn only sees and replaces the first element of each sample (the
        data, leaving the label alone)."""
        return self.transform(_TransformFirst(fn), lazy)

    def filter(self, fn):
        """The samples for which fn(sample) is true."""
        return _SubsetDataset(self, [i for i in range(len(self)) if fn(self[i])])

    def shard(self, num_shards, index):
        """Part `index` of `num_shards` contiguous parts (the first len % num_shards parts one
        sample longer), as MXNet's shard splits a dataset between workers."""
        check_count("Dataset.shard", "num_shards", num_shards, 1)
        check_count("Dataset.shard", "index", index, 0)
        if index >= num_shards:
            raise ValueError(f"[Dataset.shard] index must be < num_shards={num_shards}, got "
                             f"{index}")
        n = len(self)
        base, extra = divmod(n, num_shards)
        start = index * base + min(index, extra)
        return _SubsetDataset(self, range(start, start + base + (index < extra)))

    def take(self, count):
        """The first `count` samples (all of them for None)."""
        n = len(self)
        if count is None:
            count = n
        check_count("Dataset.take", "count", count, 0)
        return _SubsetDataset(self, range(min(count, n)))

    def sample(self, sampler):
        """The samples at the indices a Sampler yields, in its order."""
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise TypeError(f"[Dataset.sample] sampler must be a gluon.data.Sampler, got "
                            f"{type(sampler).__name__}")
        return _SubsetDataset(self, list(sampler))


class SimpleDataset(Dataset):
    """A dataset over anything with len() and indexing (a list, a NumPy or ndx array)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class ArrayDataset(Dataset):
    """Sample i of several equally long arrays (or lists), as a tuple; one array gives its
    items themselves.

    As in MXNet 1.x, an ndx array (mx.nd.NDArray or mx.np.ndarray) of two or more
    dimensions gives items of its own type (so transforms such as ToTensor take them); a
    1-D one is read as a NumPy array, its items NumPy scalars; NumPy arrays and lists give
    their own items."""

    def __init__(self, *arrays):
        if not arrays:
            raise ValueError("[ArrayDataset] needs at least one array")
        self._arrays = [_indexable(a, i) for i, a in enumerate(arrays)]
        n = len(self._arrays[0])
        for i, a in enumerate(self._arrays):
            if len(a) != n:
                raise ValueError(f"[ArrayDataset] array {i} has length {len(a)}, expected {n}")

    def __len__(self):
        return len(self._arrays[0])

    def __getitem__(self, idx):
        items = tuple(a[idx] for a in self._arrays)
        return items if len(items) > 1 else items[0]


def _indexable(a, i):
    """Argument i of ArrayDataset as it is indexed: a 1-D ndx array as NumPy, any other
    sized, indexable sequence (a list, a tuple of arrays of different shapes, a Dataset) as
    it is, as MXNet keeps it."""
    kind = type(a).__name__
    if isinstance(a, np.ndarray):
        if a.ndim > 1:
            return a
        a = a.asnumpy()
    elif not (hasattr(a, "__len__") and hasattr(a, "__getitem__")) and hasattr(a, "__array__"):
        a = _onp.asarray(a)  # (an array-like that is not itself a sequence)
    if getattr(a, "ndim", 1) == 0:
        raise TypeError(f"[ArrayDataset] array {i} must have a first axis, got a 0-d {kind}")
    if not (hasattr(a, "__len__") and hasattr(a, "__getitem__")):
        raise TypeError(f"[ArrayDataset] array {i} must be an array, list or other sized "
                        f"sequence, got {kind}")
    return a


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data, self._fn = data, fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        return self._fn(*item) if isinstance(item, tuple) else self._fn(item)


class _TransformFirst:
    """fn applied to the first element (a class, not a closure, so worker processes started
    with spawn can pickle it)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *rest):
        return (self._fn(x),) + rest if rest else self._fn(x)


class _SubsetDataset(Dataset):
    def __init__(self, data, indices):
        self._data, self._indices = data, indices

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._data[self._indices[idx]]


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (filename, with its index at the same path ending in
    .idx) as raw bytes, in the index's order (MXNet's RecordFileDataset)."""

    def __init__(self, filename):
        import os

        from ...recordio import MXIndexedRecordIO
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        for path in (filename, self.idx_file):
            if not os.path.isfile(path):
                raise FileNotFoundError(f"[{type(self).__name__}] {path} not found")
        self._record = MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)
