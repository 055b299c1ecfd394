"""np.lib.stride_tricks: views of an array's memory with other shapes and strides, as NumPy's
(read-only ones refuse writes with ValueError; neither is recorded by autograd)."""
import operator as _operator

from ... import _core
from .. import _manipulation

broadcast_arrays = _manipulation.broadcast_arrays
broadcast_shapes = _manipulation.broadcast_shapes


def _np():
    from ... import numpy as np
    return np


def broadcast_to(array, shape, subok=False):
    """np.broadcast_to: a read-only view of array repeated to shape."""
    return _np().broadcast_to(array, shape)


def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """A view of x's memory with the given shape and strides (bytes), read-only with
    writeable=False, as NumPy's. Unlike NumPy's, every element the view reaches must lie
    inside x's memory (ValueError otherwise), so a wrong stride cannot read another
    allocation."""
    np = _np()
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    shape = x.shape if shape is None else tuple(shape)
    if strides is None:
        strides = x.strides if len(shape) == x.ndim else _contiguous_strides(shape, x.itemsize)
    return x._as_strided(shape, tuple(strides), bool(writeable))


def _contiguous_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """Every window of window_shape over x (along `axis`, by default all axes), as a view
    with the window axes last, as NumPy's: read-only unless writeable=True (a write then
    reaches every window that holds the element)."""
    np = _np()
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    window = (tuple(window_shape) if hasattr(window_shape, "__iter__")
              else (window_shape,))
    window = tuple(_operator.index(w) for w in window)
    if any(w < 0 for w in window):
        raise ValueError("[sliding_window_view] window_shape cannot contain negative values")
    if axis is None:
        if len(window) != x.ndim:
            raise ValueError(f"[sliding_window_view] since axis is None, window_shape must "
                             f"have one entry per dimension of x: x has {x.ndim}, "
                             f"window_shape {len(window)}")
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(axis) if hasattr(axis, "__iter__") else (axis,)
        if len(window) != len(axes):
            raise ValueError(f"[sliding_window_view] window_shape and axis must have the "
                             f"same length: {len(window)} and {len(axes)}")
        axes = tuple(_normalize(_operator.index(a), x.ndim) for a in axes)
    shape = list(x.shape)
    for ax, w in zip(axes, window):
        if shape[ax] < w:
            raise ValueError(f"[sliding_window_view] window shape {window} cannot be larger "
                             f"than the input array's shape {x.shape} along axis {ax}")
        shape[ax] -= w - 1
    strides = x.strides
    return x._as_strided(tuple(shape) + window,
                         tuple(strides) + tuple(strides[a] for a in axes), bool(writeable))


def _normalize(axis, ndim):
    if not -ndim <= axis < ndim:
        raise _core.AxisError(f"[sliding_window_view] axis {axis} is out of bounds for array "
                              f"of dimension {ndim}")
    return axis % ndim
