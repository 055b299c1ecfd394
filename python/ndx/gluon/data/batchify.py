"""Batchify functions as MXNet's gluon.data.batchify has them: a list of samples in, a batch
out. Stack (the default), Pad for samples of different lengths, Group for tuples, Append and
AsList; GluonNLP's names Tuple, List and Dict too."""
import numpy as _onp

from ... import numpy as np

__all__ = ["Stack", "Pad", "Group", "Append", "AsList", "Tuple", "List", "Dict",
           "default_batchify_fn"]


def _host(x):
    return x.asnumpy() if isinstance(x, np.ndarray) else _onp.asarray(x)


def stack_host(samples):
    """The batch as NumPy arrays (tuples of them for tuple samples): what worker processes
    send back, turned into ndx arrays by to_ndx in the main process."""
    first = samples[0]
    if isinstance(first, (tuple, list)) and not isinstance(first, _onp.ndarray):
        return tuple(stack_host([s[k] for s in samples]) for k in range(len(first)))
    if isinstance(first, dict):  # a dict of batches, as PyTorch's default collate makes
        return {k: stack_host([s[k] for s in samples]) for k in first}
    return _onp.stack([_host(s) for s in samples])


def to_ndx(batch):
    if isinstance(batch, tuple):
        return tuple(to_ndx(b) for b in batch)
    if isinstance(batch, list):
        return [to_ndx(b) for b in batch]
    if isinstance(batch, dict):
        return {k: to_ndx(b) for k, b in batch.items()}
    return np.array(batch) if isinstance(batch, _onp.ndarray) else batch


def default_batchify_fn(samples):
    """Stacks samples along a new first axis; tuple samples give a tuple of batches, dict
    samples a dict of them."""
    return to_ndx(stack_host(samples))


class Stack:
    """Stacks samples of one shape along a new first axis. use_shared_mem (MXNet's batches in
    shared memory for worker processes) is accepted: ndx's workers send NumPy batches back."""

    def __init__(self, use_shared_mem=False):
        self._use_shared_mem = use_shared_mem

    def __call__(self, samples):
        return default_batchify_fn(samples)


class Pad:
    """Pads samples of different shapes with `val` (default 0) and stacks them. As MXNet's:
    every axis is padded to the samples' largest size, rounded up to a multiple of round_to
    when given; dtype: the output's (default the samples'). With axis= (GluonNLP's Pad), only
    that axis is padded, the others must agree; ret_length=True also returns each sample's
    length along axis (0 by default), as int64."""

    def __init__(self, val=None, dtype=None, round_to=None, use_shared_mem=False, axis=None,
                 ret_length=False):
        if axis is not None and (isinstance(axis, bool) or not isinstance(axis, int)):
            raise TypeError(f"[Pad] axis must be an int, got {type(axis).__name__}")
        if round_to is not None and (isinstance(round_to, bool) or not isinstance(
                round_to, int) or round_to < 1):
            raise ValueError(f"[Pad] round_to must be a positive int, got {round_to!r}")
        self._axis, self._val = axis, 0 if val is None else val
        self._dtype, self._round_to, self._ret_length = dtype, round_to, ret_length
        self._use_shared_mem = use_shared_mem

    def _size(self, n):
        r = self._round_to
        return n if r is None else -(-n // r) * r

    def __call__(self, samples):
        if not isinstance(samples[0], (np.ndarray, _onp.ndarray, list, tuple)):
            raise NotImplementedError("[Pad] pads array-like samples; for samples of several "
                                      "items use Group(Pad(), Pad(), ...)")
        arrays = [_host(s) for s in samples]
        ndim = arrays[0].ndim
        if any(a.ndim != ndim for a in arrays):
            raise ValueError("[Pad] samples must have the same number of dimensions, got "
                             f"{sorted({a.ndim for a in arrays})}")
        axis = 0 if self._axis is None else self._axis
        if not -ndim <= axis < ndim:
            raise ValueError(f"[Pad] axis {axis} is out of range for {ndim}-d samples")
        axis %= ndim
        lengths = _onp.array([a.shape[axis] for a in arrays], dtype=_onp.int64)
        if self._axis is None:  # (MXNet: every axis to its largest size)
            shape = [self._size(max(a.shape[k] for a in arrays)) for k in range(ndim)]
        else:
            shape = list(arrays[0].shape)
            shape[axis] = self._size(int(lengths.max()))
            for i, a in enumerate(arrays):
                if a.shape[:axis] + a.shape[axis + 1:] != tuple(shape[:axis] + shape[axis + 1:]):
                    raise ValueError(f"[Pad] sample {i} has shape {a.shape}; only axis {axis} "
                                     "may differ between samples")
        out = _onp.full([len(arrays)] + shape, self._val,
                        dtype=self._dtype or arrays[0].dtype)
        for i, a in enumerate(arrays):
            out[(i,) + tuple(slice(0, d) for d in a.shape)] = a
        return (np.array(out), np.array(lengths)) if self._ret_length else np.array(out)


class Append:
    """The samples as a list of arrays, each with a new batch axis (expand=True) at
    batch_axis: for samples of shapes no batch op could stack (MXNet's Append)."""

    def __init__(self, expand=True, batch_axis=0, use_shared_mem=False):
        self._expand, self._batch_axis = expand, batch_axis
        self._use_shared_mem = use_shared_mem

    def __call__(self, samples):
        out = [s if isinstance(s, np.ndarray) else np.array(_host(s)) for s in samples]
        if self._expand:
            out = [np.expand_dims(x, axis=self._batch_axis) for x in out]
        return out


class AsList:
    """The samples, unchanged, as a list (e.g. the texts of (array, text) samples, in a
    Group(Stack(), AsList()))."""

    def __call__(self, samples):
        return list(samples)


class Group:
    """Applies the i-th function to the i-th elements of tuple samples."""

    def __init__(self, fn, *fns):
        if isinstance(fn, (list, tuple)) and fns:
            raise TypeError(f"[{type(self).__name__}] takes Group(a, b, ...) or Group([a, b, "
                            "...]), not a list and more functions")
        self._fns = (fn,) + fns if not isinstance(fn, (list, tuple)) else tuple(fn)
        for i, f in enumerate(self._fns):
            if not callable(f):
                raise TypeError(f"[{type(self).__name__}] batchify function {i} must be "
                                f"callable, got {type(f).__name__}")

    def __call__(self, samples):
        width = len(samples[0])
        if width != len(self._fns):
            raise ValueError(f"[Group] samples have {width} elements but {len(self._fns)} "
                             "batchify functions were given")
        return tuple(fn([s[k] for s in samples]) for k, fn in enumerate(self._fns))


class Tuple(Group):
    """Group's name in MXNet 1.x and GluonNLP: Tuple(Pad(), Stack()) applies the i-th function
    to the i-th elements of tuple samples."""


class List(AsList):
    """GluonNLP's name for AsList: the samples as a list."""


class Dict:
    """GluonNLP's Dict: for dict samples, {key: fn_dict[key](the samples' values of key)}."""

    def __init__(self, fn_dict):
        if not isinstance(fn_dict, dict):
            raise TypeError(f"[Dict] expects a dict of batchify functions, got "
                            f"{type(fn_dict).__name__}")
        self._fn_dict = fn_dict

    def __call__(self, samples):
        keys = set(samples[0])
        if keys != set(self._fn_dict):
            raise ValueError(f"[Dict] the samples' keys {sorted(keys)} are not the batchify "
                             f"functions' {sorted(self._fn_dict)}")
        return {k: fn([s[k] for s in samples]) for k, fn in self._fn_dict.items()}
