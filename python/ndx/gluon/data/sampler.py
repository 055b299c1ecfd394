"""Samplers as MXNet's gluon.data.sampler has them: index orders for a DataLoader."""
import numpy as _onp

from ... import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "BatchSampler", "IntervalSampler",
           "FilterSampler"]


def check_count(owner, name, value, low):
    """value as an int >= low, or a TypeError / ValueError naming `owner` and the argument
    (the one check of gluon.data's counts: samplers, Dataset methods, DataLoader)."""
    if isinstance(value, bool) or not isinstance(value, (int, _onp.integer)):
        raise TypeError(f"[{owner}] {name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"[{owner}] {name} must be >= {low}, got {value}")
    return int(value)


class Sampler:
    """Base class: iterating yields indices (or, for BatchSampler, lists of them)."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """start, start + 1, ..., start + length - 1."""

    def __init__(self, length, start=0):
        self._length = check_count("SequentialSampler", "length", length, 0)
        self._start = check_count("SequentialSampler", "start", start, 0)

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A permutation of range(length), new each epoch, drawn from ndx's generator (so
    ndx.random.seed makes the order repeatable)."""

    def __init__(self, length):
        self._length = check_count("RandomSampler", "length", length, 0)

    def __iter__(self):
        return iter(np.random.permutation(self._length).asnumpy().tolist())

    def __len__(self):
        return self._length


class IntervalSampler(Sampler):
    """0, k, 2k, ... then (with rollover) 1, k + 1, ...: every index once, in strides of
    `interval`; without rollover only the first pass."""

    def __init__(self, length, interval, rollover=True):
        self._length = check_count("IntervalSampler", "length", length, 0)
        self._interval = check_count("IntervalSampler", "interval", interval, 1)
        if self._interval > max(self._length, 1):
            raise ValueError(f"[IntervalSampler] interval {interval} is larger than length "
                             f"{length}")
        self._rollover = bool(rollover)

    def __iter__(self):
        starts = range(self._interval) if self._rollover else range(1)
        for s in starts:
            yield from range(s, self._length, self._interval)

    def __len__(self):
        if self._rollover:
            return self._length
        return len(range(0, self._length, self._interval))


class FilterSampler(Sampler):
    """The indices of the samples of `dataset` for which fn(sample) is true."""

    def __init__(self, fn, dataset):
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class BatchSampler(Sampler):
    """Lists of batch_size indices from `sampler`. last_batch: 'keep' (a short last batch),
    'discard' (drop it) or 'rollover' (carry it into the next epoch's first batch)."""

    def __init__(self, sampler, batch_size, last_batch="keep"):
        self._sampler = sampler
        self._batch_size = check_count("BatchSampler", "batch_size", batch_size, 1)
        if last_batch not in ("keep", "discard", "rollover"):
            raise ValueError("[BatchSampler] last_batch must be 'keep', 'discard' or "
                             f"'rollover', got {last_batch!r}")
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        n = len(self._sampler)
        if self._last_batch == "keep":
            return (n + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return n // self._batch_size
        return (len(self._prev) + n) // self._batch_size
