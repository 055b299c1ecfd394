"""NumPy's index tricks over ndx arrays: mgrid / ogrid (grids from slices) and r_ / c_
(concatenation from slices, sequences and scalars). s_ and index_exp build plain Python
slices and are NumPy's own objects."""
import numpy as _onp

import ndx.numpy as _np

from .. import _core

s_ = _onp.s_
index_exp = _onp.index_exp


def _checked(items, who, open_stop=False):
    """The slices, each with a stop, numeric bounds and a nonzero step, as NumPy's
    index_tricks need them (a complex step is a number of points, stop included). With
    open_stop (a lone slice, as NumPy's arange(start, None, step)) a slice without a stop
    and with a real step stands for range(0, start, step)."""
    for item in items:
        if item.stop is None and not (open_stop and not isinstance(item.step, complex)):
            raise ValueError(f"[{who}] a slice needs a stop, got {item!r}")
        for v in (item.start, item.stop, item.step):
            if v is not None and (isinstance(v, bool) or
                                  not isinstance(v, (int, float, complex, _onp.number))):
                raise TypeError(f"[{who}] slice bounds must be numbers, got {item!r}")
        if item.step is not None and item.step == 0:
            raise ValueError(f"[{who}] a slice step must not be zero, got {item!r}")
    return items


def _ndx(values):
    """NumPy's int64 / float64 grid values as an ndx array: int64, or the default float."""
    dtype = _onp.int64 if values.dtype.kind in "iu" else _core._default_float()
    return _np.array(values, dtype=dtype)


class _Grid:
    """mgrid (dense: one array, the grids stacked on a first axis) or ogrid (sparse: a tuple
    of arrays, each varying along its own axis)."""

    def __init__(self, sparse):
        self._sparse = sparse
        self._name = "ogrid" if sparse else "mgrid"

    def __getitem__(self, key):
        single = isinstance(key, slice)
        items = (key,) if single else tuple(key) if isinstance(key, tuple) else None
        if items is None or not all(isinstance(k, slice) for k in items):
            raise TypeError(f"[{self._name}] expects slices, got {key!r}")
        _checked(items, self._name, open_stop=single)
        # The axes' values are tiny: NumPy's own ogrid makes them (arange, linspace for a
        # complex step), so they are its values exactly; the grid is built here.
        if single:
            return _ndx(_onp.ogrid[key])
        vectors = [_ndx(v) for v in _onp.ogrid[items]]  # one dtype for all axes
        if self._sparse:
            return tuple(vectors)
        if not vectors:
            return _np.zeros((0,), dtype="int64")
        shape = tuple(v.shape[i] for i, v in enumerate(vectors))
        return _np.stack([_np.broadcast_to(v, shape) for v in vectors])


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


def _at_least(a, ndmin):
    """a with leading axes of length one up to ndmin dimensions."""
    return a.reshape((1,) * (ndmin - a.ndim) + a.shape) if a.ndim < ndmin else a


class _Concatenator:
    """r_ (axis 0, ndmin 1) and c_ (axis -1, ndmin 2, 1-d items as columns): the items of
    the key, slices made ranges, joined along an axis. A leading string "axis[,ndmin[,
    trans1d]]" overrides the three; NumPy's 'r' / 'c' (matrix results) are not supported."""

    def __init__(self, name, axis, ndmin, trans1d):
        self._name, self._axis, self._ndmin, self._trans1d = name, axis, ndmin, trans1d

    def _directive(self, text):
        if text in ("r", "c"):
            raise NotImplementedError(f"[{self._name}] the {text!r} directive makes a NumPy "
                                      "matrix, which ndx does not have")
        try:
            parts = [int(p) for p in text.split(",")]
        except ValueError:
            raise ValueError(f"[{self._name}] unknown special directive {text!r}") from None
        if not 1 <= len(parts) <= 3:
            raise ValueError(f"[{self._name}] unknown special directive {text!r}")
        axis, ndmin, trans1d = parts + [self._ndmin, self._trans1d][len(parts) - 1:]
        return axis, ndmin, trans1d

    def _item(self, item, ndmin, trans1d):
        """An item as an ndx array of at least ndmin dimensions, its own axes moved to trans1d
        (NumPy's rule) when it had fewer."""
        if isinstance(item, slice):
            a = _at_least(_ndx(_onp.ogrid[_checked((item,), self._name, True)[0]]), ndmin)
            return a.swapaxes(-1, trans1d) if ndmin > 1 and trans1d != -1 else a
        a = item if isinstance(item, _np.ndarray) else _np.asarray(item)
        own = a.ndim
        a = _at_least(a, ndmin)
        if trans1d != -1 and own < ndmin:
            k2, k1 = ndmin - own, trans1d
            if k1 < 0:
                k1 += k2 + 1
            axes = list(range(ndmin))
            a = a.transpose(axes[:k1] + axes[k2:] + axes[k1:k2])
        return a

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self._axis, self._ndmin, self._trans1d
        arrays, kinds = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError(f"[{self._name}] special directives must be the first "
                                     f"entry, got {item!r} at {k}")
                axis, ndmin, trans1d = self._directive(item)
                continue
            scalar = isinstance(item, (int, float, complex, bool, _onp.generic))
            arrays.append(self._item(item, ndmin, trans1d))
            kinds.append(item if scalar else arrays[-1])  # scalars stay weak in the promotion
        if not arrays:
            raise ValueError(f"[{self._name}] need at least one array to concatenate")
        dtype = _np.result_type(*kinds)
        bounds = _np.iinfo(dtype) if _np.issubdtype(dtype, _np.integer) else None
        for item in kinds:  # a Python integer must fit an integer result (NumPy 2's rule)
            if (bounds is not None and isinstance(item, int) and not isinstance(item, bool)
                    and not bounds.min <= item <= bounds.max):
                raise OverflowError(f"[{self._name}] Python integer {item} out of bounds for "
                                    f"{dtype}")
        arrays = [a if a.dtype == dtype else a.astype(dtype) for a in arrays]
        return _np.concatenate(arrays, axis=axis)

    def __len__(self):
        return 0


r_ = _Concatenator("r_", axis=0, ndmin=1, trans1d=-1)
c_ = _Concatenator("c_", axis=-1, ndmin=2, trans1d=0)

__all__ = ["c_", "index_exp", "mgrid", "ogrid", "r_", "s_"]
