"""Samplers as MXNet's gluon.data.sampler has them: index orders for a DataLoader."""
import numpy as _onp

from ... import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "BatchSampler", "IntervalSampler",
           "FilterSampler", "SplitSampler", "DistributedSampler"]


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


def _check_part(owner, num_parts, part_index):
    num_parts = check_count(owner, "num_parts", num_parts, 1)
    part_index = check_count(owner, "part_index", part_index, 0)
    if part_index >= num_parts:
        raise ValueError(f"[{owner}] part_index must be < num_parts ({num_parts}), got "
                         f"{part_index}")
    return num_parts, part_index


class SplitSampler(Sampler):
    """Part `part_index` of `num_parts` contiguous, equal parts of range(length) (the
    length % num_parts samples at the end are in no part, so every part has the same
    length and every worker the same number of batches), as MXNet's distributed examples
    split a data set; shuffle: a new order within the part each epoch."""

    def __init__(self, length, num_parts=1, part_index=0, shuffle=False):
        length = check_count("SplitSampler", "length", length, 0)
        num_parts, part_index = _check_part("SplitSampler", num_parts, part_index)
        self._part_len = length // num_parts
        self._start = self._part_len * part_index
        self._shuffle = bool(shuffle)

    def __iter__(self):
        if not self._shuffle:
            return iter(range(self._start, self._start + self._part_len))
        order = np.random.permutation(self._part_len).asnumpy()
        return iter((order + self._start).tolist())

    def __len__(self):
        return self._part_len


class DistributedSampler(Sampler):
    """This worker's share of range(length) for data-parallel training: each epoch the
    indices are shuffled with a generator seeded by seed + epoch (the same order on every
    worker, whatever their other random state), then worker k takes every num_parts-th index
    from k. Every worker gets the same count: the order is padded by repeating its start
    (drop_last=False, as PyTorch's DistributedSampler) or cut (drop_last=True), so the
    workers' collectives stay in step.

    num_parts and part_index default to ndx.distributed's world size and rank. The epoch
    advances by itself after each pass; set_epoch(e) sets it (for resuming)."""

    def __init__(self, length, num_parts=None, part_index=None, shuffle=True, seed=0,
                 drop_last=False):
        from ... import distributed
        self._length = check_count("DistributedSampler", "length", length, 0)
        self._num_parts, self._part_index = _check_part(
            "DistributedSampler",
            distributed.world_size() if num_parts is None else num_parts,
            distributed.rank() if part_index is None else part_index)
        self._shuffle = bool(shuffle)
        self._seed = check_count("DistributedSampler", "seed", seed, 0)
        self._drop_last = bool(drop_last)
        self._epoch = 0

    def set_epoch(self, epoch):
        self._epoch = check_count("DistributedSampler", "epoch", epoch, 0)

    def __len__(self):
        if self._drop_last:
            return self._length // self._num_parts
        return -(-self._length // self._num_parts)

    def __iter__(self):
        if self._shuffle:
            order = _onp.random.RandomState((self._seed + self._epoch) % 2**32).permutation(
                self._length)
        else:
            order = _onp.arange(self._length)
        self._epoch += 1
        total = len(self) * self._num_parts
        if total > self._length:  # pad with the order's start (repeated if need be)
            order = _onp.resize(order, total) if self._length else order
        order = order[:total]
        return iter(order[self._part_index::self._num_parts].tolist())
