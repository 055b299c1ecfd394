"""Batchify functions as MXNet's gluon.data.batchify has them: a list of samples in, a batch
out. Stack (the default), Pad for samples of different lengths, Group for tuples."""
import numpy as _onp

from ... import numpy as np

__all__ = ["Stack", "Pad", "Group", "default_batchify_fn"]


def _host(x):
    return x.asnumpy() if isinstance(x, np.ndarray) else _onp.asarray(x)


def stack_host(samples):
    """The batch as NumPy arrays (tuples of them for tuple samples): what worker processes
    send back, turned into ndx arrays by to_ndx in the main process."""
    first = samples[0]
    if isinstance(first, (tuple, list)) and not isinstance(first, _onp.ndarray):
        return tuple(stack_host([s[k] for s in samples]) for k in range(len(first)))
    return _onp.stack([_host(s) for s in samples])


def to_ndx(batch):
    if isinstance(batch, tuple):
        return tuple(to_ndx(b) for b in batch)
    if isinstance(batch, list):
        return [to_ndx(b) for b in batch]
    return np.array(batch) if isinstance(batch, _onp.ndarray) else batch


def default_batchify_fn(samples):
    """Stacks samples along a new first axis; tuple samples give a tuple of batches."""
    return to_ndx(stack_host(samples))


class Stack:
    """Stacks samples of one shape along a new first axis."""

    def __call__(self, samples):
        return default_batchify_fn(samples)


class Pad:
    """Pads samples along `axis` to the longest one with `val` and stacks them; with
    ret_length=True also returns the original lengths (int64)."""

    def __init__(self, axis=0, val=0, dtype=None, ret_length=False):
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"[Pad] axis must be an int, got {type(axis).__name__}")
        self._axis, self._val, self._dtype, self._ret_length = axis, val, dtype, ret_length

    def __call__(self, samples):
        arrays = [_host(s) for s in samples]
        ndim = arrays[0].ndim
        if any(a.ndim != ndim for a in arrays):
            raise ValueError("[Pad] samples must have the same number of dimensions, got "
                             f"{sorted({a.ndim for a in arrays})}")
        if not -ndim <= self._axis < ndim:
            raise ValueError(f"[Pad] axis {self._axis} is out of range for {ndim}-d samples")
        axis = self._axis % ndim
        lengths = _onp.array([a.shape[axis] for a in arrays], dtype=_onp.int64)
        shape = list(arrays[0].shape)
        shape[axis] = int(lengths.max())
        out = _onp.full([len(arrays)] + shape, self._val,
                        dtype=self._dtype or arrays[0].dtype)
        for i, a in enumerate(arrays):
            if a.shape[:axis] + a.shape[axis + 1:] != tuple(shape[:axis] + shape[axis + 1:]):
                raise ValueError(f"[Pad] sample {i} has shape {a.shape}; only axis {axis} may "
                                 "differ between samples")
            index = [i] + [slice(None)] * ndim
            index[axis + 1] = slice(0, a.shape[axis])
            out[tuple(index)] = a
        return (np.array(out), np.array(lengths)) if self._ret_length else np.array(out)


class Group:
    """Applies the i-th function to the i-th elements of tuple samples."""

    def __init__(self, fn, *fns):
        self._fns = (fn,) + fns if not isinstance(fn, (list, tuple)) else tuple(fn)

    def __call__(self, samples):
        width = len(samples[0])
        if width != len(self._fns):
            raise ValueError(f"[Group] samples have {width} elements but {len(self._fns)} "
                             "batchify functions were given")
        return tuple(fn([s[k] for s in samples]) for k, fn in enumerate(self._fns))
