"""Datasets and a DataLoader that batches, shuffles and handles the last batch."""
import numpy as _onp

from .. import numpy as np

__all__ = ["ArrayDataset", "DataLoader"]


class ArrayDataset:
    """Samples i of several equally long arrays."""

    def __init__(self, *arrays):
        if not arrays:
            raise ValueError("[ArrayDataset] needs at least one array")
        self._arrays = [a.asnumpy() if isinstance(a, np.ndarray) else _onp.asarray(a)
                        for a in arrays]
        n = len(self._arrays[0])
        for i, a in enumerate(self._arrays):
            if len(a) != n:
                raise ValueError(f"[ArrayDataset] array {i} has length {len(a)}, expected {n}")

    def __len__(self):
        return len(self._arrays[0])

    def __getitem__(self, i):
        items = tuple(a[i] for a in self._arrays)
        return items if len(items) > 1 else items[0]


class DataLoader:
    """Batches of a dataset as ndarrays. last_batch: 'keep', 'discard' or 'rollover'."""

    def __init__(self, dataset, batch_size, shuffle=False, last_batch="keep"):
        if batch_size <= 0:
            raise ValueError(f"[DataLoader] batch_size must be > 0, got {batch_size}")
        if last_batch not in ("keep", "discard", "rollover"):
            raise ValueError(f"[DataLoader] last_batch must be 'keep', 'discard' or 'rollover', "
                             f"got {last_batch!r}")
        self._data, self._bs, self._shuffle, self._last = dataset, batch_size, shuffle, last_batch
        self._carry = _onp.zeros(0, dtype=_onp.int64)

    def __len__(self):
        n = len(self._data)
        if self._last == "keep":
            return (n + self._bs - 1) // self._bs
        return (n + (len(self._carry) if self._last == "rollover" else 0)) // self._bs

    def _batch(self, idx):
        samples = [self._data[int(i)] for i in idx]
        if isinstance(samples[0], tuple):
            return tuple(np.array(_onp.stack([s[k] for s in samples]))
                         for k in range(len(samples[0])))
        return np.array(_onp.stack(samples))

    def __iter__(self):
        if self._shuffle:  # ndx's generator: ndx.random.seed makes the order repeatable
            order = np.random.permutation(len(self._data)).asnumpy()
        else:
            order = _onp.arange(len(self._data))
        if self._last == "rollover":
            order = _onp.concatenate([self._carry, order])
        full = len(order) // self._bs * self._bs
        for start in range(0, full, self._bs):
            yield self._batch(order[start:start + self._bs])
        rest = order[full:]
        if self._last == "keep" and len(rest):
            yield self._batch(rest)
        self._carry = rest if self._last == "rollover" else _onp.zeros(0, dtype=_onp.int64)
