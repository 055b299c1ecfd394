"""NumPy's array-manipulation and simple creation routines (issue 12, first part), composed of
ndx's ops (transpose, reshape, slicing, concatenate, broadcast_to, where), so autograd and
hybridize see ordinary ops and the results are views wherever those ops give views."""
import math
import operator
import warnings

import numpy as _onp

import ndx.numpy as _np

from .. import _core
from .._registry import internal_function as _internal_function
from . import _composites
from ._composites import _as_array, _axis, _dev, _kind


def _index(value, what, name):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"[{name}] {what} must be an integer, got {type(value).__name__}") \
            from None


def _axis_list(axis, ndim, name):
    try:
        axes = [axis] if isinstance(axis, (int, _onp.integer)) else list(axis)
    except TypeError:
        raise TypeError(f"[{name}] axis must be an integer or a sequence of integers, got "
                        f"{type(axis).__name__}") from None
    out = []
    for a in axes:
        a = _index(a, "axis", name)
        if not -ndim <= a < ndim:
            raise _core.AxisError(f"[{name}] axis {a} is out of bounds for array of "
                                            f"dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"[{name}] repeated axis")
    return out


def _moved_axis(axis, ndim, name):
    """The one axis `axis` names where NumPy moves a new or chosen axis with
    moveaxis(x, 0, axis): an integer or a sequence of one (AxisError, ValueError, TypeError
    as moveaxis)."""
    axes = _axis_list(axis, ndim, name)
    if len(axes) != 1:
        raise ValueError(f"[{name}] axis must be one integer, got {axis!r}")
    return axes[0]


# ---------------------------------------------------------------- axes and dimensions
def ravel(a, order="C"):
    """The array flattened (a view where the layout allows), its elements read in `order`:
    'C' (last index fastest), 'F' (first index fastest), 'A' (F for an array that is
    F-contiguous and not C-contiguous, else C) or 'K' (the order in memory), as NumPy's."""
    a = _as_array(a)
    return (a if order == "C" else _read_in_order(a, order, "ravel", "CFAK")).reshape(-1)


def _flatten(a, order="C"):
    """ndarray.flatten with an order: a 1-d copy read in C / F / A / K order."""
    out = (a if order == "C" else _read_in_order(a, order, "flatten", "CFAK")).reshape(-1)
    return _np.copy(out) if _views(out, a) else out


def _contiguous_in(a, order):
    """Whether a's elements are dense in memory in C or F order (size-1 axes ignored)."""
    axes = range(a.ndim) if order == "F" else reversed(range(a.ndim))
    expected = a.itemsize
    for i in axes:
        if a.shape[i] != 1:
            if a.strides[i] != expected:
                return False
            expected *= a.shape[i]
    return True


def _read_in_order(a, order, name, allowed):
    """A view of a whose C-order reading is a's reading in `order` (NumPy's C / F / A / K)."""
    if order is None:  # NumPy's default, C
        return a
    if not isinstance(order, str):
        raise TypeError(f"[{name}] order must be str, not {type(order).__name__}")
    if order.upper() not in allowed:
        raise ValueError(f"[{name}] order must be one of {', '.join(map(repr, allowed))}, got "
                         f"{order!r}")
    order = order.upper()
    if order == "A":
        order = "F" if _contiguous_in(a, "F") and not _contiguous_in(a, "C") else "C"
    if order == "F":
        return transpose(a)
    if order == "K" and a.ndim > 1:  # largest |stride| first (each axis in its own direction)
        perm = sorted(range(a.ndim), key=lambda i: -abs(a.strides[i]))
        return transpose(a, perm)
    return a


def moveaxis(a, source, destination):
    """a with the axes `source` moved to `destination` (the others keep their order): a view."""
    a = _as_array(a)
    src = _axis_list(source, a.ndim, "moveaxis")
    dst = _axis_list(destination, a.ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError("[moveaxis] source and destination must have the same number of "
                         "elements")
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(tuple(order))


def rollaxis(a, axis, start=0):
    """Axis `axis` rolled back until it lies before position `start`."""
    a = _as_array(a)
    n = a.ndim
    axis = _axis(n, axis, "rollaxis")
    start = _index(start, "start", "rollaxis")
    if not -n <= start <= n:
        raise _core.AxisError(f"[rollaxis] start {start} is out of bounds for array "
                                        f"of dimension {n}")
    if start < 0:  # NumPy's rule: a negative start counts from n, not n + 1
        start += n
    if axis < start:
        start -= 1
    if axis == start:
        return a
    order = [i for i in range(n) if i != axis]
    order.insert(start, axis)
    return a.transpose(tuple(order))


def permute_dims(a, /, axes=None):
    """The Array API's transpose: a view with the axes permuted (reversed for None, as
    NumPy 2.4's default)."""
    a = _as_array(a)
    return a.transpose() if axes is None else a.transpose(tuple(axes))


def matrix_transpose(x, /):
    """The last two axes swapped (arrays of at least 2 dimensions)."""
    x = _as_array(x)
    if x.ndim < 2:
        raise ValueError(f"[matrix_transpose] input must have at least 2 dimensions, got "
                         f"{x.ndim}")
    return x.transpose(tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def transpose(a, axes=None):
    """a with its axes permuted (reversed by default): a view."""
    a = _as_array(a)
    if axes is None:
        return a.transpose()
    return a.transpose(tuple(_axis_list(axes, a.ndim, "transpose")) if a.ndim else ())


def swapaxes(a, axis1, axis2):
    """a with two axes interchanged: a view."""
    a = _as_array(a)
    n = a.ndim
    i, j = _index(axis1, "axis1", "swapaxes"), _index(axis2, "axis2", "swapaxes")
    if not (-n <= i < n and -n <= j < n):  # the common case costs no list building
        i, j = (_axis_list(x, n, "swapaxes")[0] for x in (i, j))
    i, j = i % n, j % n
    order = list(range(n))
    order[i], order[j] = order[j], order[i]
    return a.transpose(tuple(order))


def expand_dims(a, axis=0):
    """a with new axes of length 1 at the positions `axis` names (an int or a tuple, counted
    in the result; 0 by default, as the Array API has it): a view."""
    a = _as_array(a)
    axes = [axis] if isinstance(axis, (int, _onp.integer)) else list(axis)
    nd = a.ndim + len(axes)
    new = _axis_list(axes, nd, "expand_dims")
    return a[tuple(None if d in new else slice(None) for d in range(nd))]


def squeeze(a, axis=None):
    """a without the axes of length 1 (all, or those `axis` names): a view."""
    a = _as_array(a)
    if axis is None:
        drop = [d for d in range(a.ndim) if a.shape[d] == 1]
    elif a.ndim == 0 and isinstance(axis, (int, _onp.integer)) and axis in (0, -1):
        drop = []  # NumPy accepts an int axis 0 / -1 on a 0-d array (not a tuple) and returns it
    else:
        drop = _axis_list(axis, a.ndim, "squeeze")
        for d in drop:
            if a.shape[d] != 1:
                raise ValueError("[squeeze] cannot select an axis to squeeze out which has size "
                                 "not equal to one")
    if not drop:
        return a[...]
    return a[tuple(0 if d in drop else slice(None) for d in range(a.ndim))]


def reshape(a, /, newshape=None, order="C", *, shape=None, copy=None):
    """a with a new shape (one entry may be -1): a view when the layout allows. copy=True
    always copies; copy=False raises ValueError where a view is impossible."""
    if shape is None:
        shape = newshape
    elif newshape is not None:
        raise TypeError("[reshape] give shape or newshape, not both")
    if shape is None:
        raise TypeError("[reshape] missing the shape")
    a = _as_array(a)
    # ('K' is NumPy's ValueError too)
    src = a if order == "C" else _read_in_order(a, order, "reshape", "CFA")
    if src is a:
        out = a.reshape(shape)
    else:  # F: read and placed first index fastest
        shape = (shape,) if isinstance(shape, (int, _onp.integer)) else tuple(shape)
        out = transpose(src.reshape(shape[::-1]))
    if copy:
        return _np.copy(out) if _views(out, a) else out
    if copy is False and not _views(out, a) and a.size > 1:
        raise ValueError("[reshape] cannot reshape without copying the data (copy=False)")
    return out


def _views(b, a):
    """Whether b reaches bytes of a's buffer (their extents overlap): reshape's question of
    whether it made a view. The public np.shares_memory / may_share_memory are _interop's."""
    if not (isinstance(a, _np.ndarray) and isinstance(b, _np.ndarray)):
        return False
    sa, lo_a, hi_a = _np._core._memory_extent(a)
    sb, lo_b, hi_b = _np._core._memory_extent(b)
    return sa == sb and lo_a < hi_b and lo_b < hi_a


def _like(a, dtype, shape, device, order, name):
    a = _as_array(a)
    if order == "F":
        raise NotImplementedError(f"[{name}] order='F' is not supported")
    if order not in ("K", "C", "A"):
        raise ValueError(f"[{name}] order must be one of 'C', 'F', 'A', 'K', got {order!r}")
    return (a.shape if shape is None else shape, a.dtype if dtype is None else dtype,
            a.device if device is None else device)


_zeros_like_op = _internal_function("_np_zeros_like")
_ones_like_op = _internal_function("_np_ones_like")
_full_like_op = _internal_function("_np_full_like")


def _traced_like(a, shape, device, make):
    """While a block is traced, an array like `a` as an op that reads a's shape when the graph
    runs (`make(a)`), rather than a constant of this call's shape, which would tie an exported
    graph to one batch size; None elsewhere (or for another shape or device)."""
    if not _core._is_tracing() or shape is not None or not isinstance(a, _np.ndarray) or \
            (device is not None and _dev(device) != a.device):
        return None
    return make(a)


def _as_dtype(x, dtype):
    return x if dtype is None else x.astype(dtype)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Zeros of a's shape, dtype and device (or those given)."""
    args = _like(a, dtype, shape, device, order, "zeros_like")
    traced = _traced_like(a, shape, device, lambda x: _as_dtype(_zeros_like_op(x), dtype))
    return traced if traced is not None else _np.zeros(*args)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Ones of a's shape, dtype and device (or those given)."""
    args = _like(a, dtype, shape, device, order, "ones_like")
    traced = _traced_like(a, shape, device, lambda x: _as_dtype(_ones_like_op(x), dtype))
    return traced if traced is not None else _np.ones(*args)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """fill_value (cast to the dtype) in a's shape, dtype and device (or those given). A
    complex fill_value for a real dtype loses its imaginary part with NumPy's ComplexWarning
    (NumPy copies it in under casting='unsafe')."""
    s, t, d = _like(a, dtype, shape, device, order, "full_like")
    kind = _composites._dtype_kind(t)
    if kind == "b" and _is_complex_value(fill_value):  # (True where either part is nonzero)
        fill_value = _np.not_equal(fill_value, 0) if isinstance(fill_value, _np.ndarray) \
            else _onp.not_equal(fill_value, 0)
    elif kind != "c" and _is_complex_value(fill_value):
        warnings.warn("Casting complex values to real discards the imaginary part",
                      _onp.exceptions.ComplexWarning, stacklevel=2)
        fill_value = _np.real(fill_value) if isinstance(fill_value, _np.ndarray) else \
            _onp.real(fill_value)
    if isinstance(fill_value, (int, float)) and kind in "biuf":  # (a Python real number)
        traced = _traced_like(a, shape, device, lambda x: _full_like_op(
            _as_dtype(x, t), fill_value=float(fill_value)))
        if traced is not None:
            return traced
    return _np.full(s, fill_value, dtype=t, device=d)


def _is_complex_value(v):
    """Whether v is a complex number or an array (host or ndx) of a complex dtype."""
    if isinstance(v, _np.ndarray):
        return _kind(v) == "c"
    return isinstance(v, complex) or _onp.iscomplexobj(v)


def _atleast(arys, ndim, name):
    out = []
    for a in arys:
        a = _as_array(a)
        if a.ndim < ndim:
            if ndim == 1 or a.ndim == 0:
                shape = (1,) * (ndim - a.ndim) + a.shape
            elif ndim == 2:  # (N,) -> (1, N)
                shape = (1,) + a.shape
            else:  # 3: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)
                shape = ((1,) + a.shape + (1,)) if a.ndim == 1 else a.shape + (1,)
            a = a.reshape(shape)
        out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """Each input as an array of at least one dimension."""
    return _atleast(arys, 1, "atleast_1d")


def atleast_2d(*arys):
    """Each input with at least two dimensions ((N,) becomes (1, N))."""
    return _atleast(arys, 2, "atleast_2d")


def atleast_3d(*arys):
    """Each input with at least three dimensions ((N,) becomes (1, N, 1), (M, N) (M, N, 1))."""
    return _atleast(arys, 3, "atleast_3d")


def broadcast_shapes(*shapes):
    """The shape NumPy's broadcasting gives the shapes together (ValueError if none)."""
    return _onp.broadcast_shapes(*shapes)


_broadcast_to_op = _internal_function("_np_broadcast_to")


def _records():
    return _core._autograd_is_recording() or _core._is_tracing()


def broadcast_to(array, shape, subok=False, *, out=None):
    """array repeated along new leading axes and its length-1 axes to `shape`: a read-only
    view (no element is copied), as NumPy's; a copy while autograd records or hybridize
    traces (so gradients flow), or into `out`."""
    if out is not None or _records() or not isinstance(array, _np.ndarray):
        return _broadcast_to_op(_as_array(array), shape=shape, out=out)
    if isinstance(shape, (int, _onp.integer)):
        shape = (shape,)
    return array._broadcast_view(tuple(shape))


def broadcast_arrays(*args, subok=False):
    """The inputs broadcast against each other: read-only views where the shape changes (NumPy
    2.4 returns writeable views and warns on a write, which NumPy will refuse), the input
    itself where it does not."""
    arrays = [_as_array(a) for a in args]
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return tuple(a if a.shape == shape else broadcast_to(a, shape) for a in arrays)


# ---------------------------------------------------------------- joining and splitting
def _sequence(tup, name):
    if isinstance(tup, _np.ndarray) or not hasattr(tup, "__len__"):
        raise TypeError(f"[{name}] arrays to stack must be passed as a sequence")
    if len(tup) == 0:
        raise ValueError(f"[{name}] need at least one array to concatenate")
    return [_as_array(a) for a in tup]


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Arrays joined along the second axis (the first for 1-d arrays)."""
    arrs = [atleast_1d(a) for a in _sequence(tup, "hstack")]
    return _np.concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1, dtype=dtype,
                           casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Arrays joined along the first axis, 1-d ones as rows."""
    return _np.concatenate([atleast_2d(a) for a in _sequence(tup, "vstack")], axis=0,
                           dtype=dtype, casting=casting)


row_stack = vstack


def dstack(tup):
    """Arrays joined along the third axis (atleast_3d first)."""
    return _np.concatenate([atleast_3d(a) for a in _sequence(tup, "dstack")], axis=2)


def column_stack(tup):
    """1-d arrays as columns (2-d ones as they are), joined along the second axis."""
    arrs = [a if a.ndim >= 2 else _np.reshape(a, (-1, 1)) for a in _sequence(tup, "column_stack")]
    return _np.concatenate(arrs, axis=1)


def concat(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """NumPy 2's name for concatenate (the Array API's); axis=None joins the flattened
    arrays."""
    arrs = _sequence(arrays, "concat")
    if axis is None:
        arrs, axis = [_np.reshape(a, (-1,)) for a in arrs], 0
    return _np.concatenate(arrs, axis=axis, out=out, dtype=dtype, casting=casting)


def unstack(x, /, *, axis=0):
    """The sub-arrays along axis, as a tuple of views."""
    x = _as_array(x)
    if x.ndim == 0:
        raise ValueError("[unstack] input must have at least 1 dimension")
    axis = _moved_axis(axis, x.ndim, "unstack")  # (NumPy's moveaxis(x, axis, 0))
    lead = (slice(None),) * axis
    return tuple(x[lead + (i,)] for i in range(x.shape[axis]))


def array_split(ary, indices_or_sections, axis=0):
    """split that allows sections not dividing the axis (the first len % n parts get one
    more element), as views."""
    a = _as_array(ary)
    axis = _axis(a.ndim, axis, "array_split") if a.ndim else 0
    n = a.shape[axis]
    if isinstance(indices_or_sections, (int, _onp.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("[array_split] number sections must be larger than 0")
        if sections > max(n, 1 << 16):  # all but n of them empty: a list nobody can hold
            raise ValueError(f"[array_split] {sections} sections of an axis of length {n}: "
                             f"at most max(length, 65536) are supported")
        size, extra = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + size + (1 if i < extra else 0))
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    lead = (slice(None),) * axis
    return [a[lead + (slice(lo, hi),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


def _split_min_ndim(ary, indices_or_sections, axis, min_ndim, name):
    a = _as_array(ary)
    if a.ndim < min_ndim:
        raise ValueError(f"[{name}] only works on arrays of {min_ndim} or more dimensions")
    if isinstance(indices_or_sections, (int, _onp.integer)):
        n = a.shape[axis]
        if int(indices_or_sections) <= 0 or n % int(indices_or_sections):
            raise ValueError(f"[{name}] array split does not result in an equal division")
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """Split along the second axis (the first for 1-d arrays) into equal parts or at indices."""
    a = _as_array(ary)
    return _split_min_ndim(a, indices_or_sections, 1 if a.ndim > 1 else 0, 1, "hsplit")


def vsplit(ary, indices_or_sections):
    """Split along the first axis (arrays of at least 2 dimensions)."""
    return _split_min_ndim(ary, indices_or_sections, 0, 2, "vsplit")


def dsplit(ary, indices_or_sections):
    """Split along the third axis (arrays of at least 3 dimensions)."""
    return _split_min_ndim(ary, indices_or_sections, 2, 3, "dsplit")


def append(arr, values, axis=None):
    """values appended to arr along axis (both flattened for None): a new array."""
    arr = _as_array(arr)
    values = _as_array(values, arr)  # (Python floats beside float64 stay float64)
    if axis is None:
        return _np.concatenate([_np.reshape(arr, (-1,)), _np.reshape(values, (-1,))], axis=0)
    return _np.concatenate([arr, values], axis=axis)


# ---------------------------------------------------------------- reordering
def flip(m, axis=None):
    """m reversed along the given axes (all for None): a view."""
    m = _as_array(m)
    axes = range(m.ndim) if axis is None else _axis_list(axis, m.ndim, "flip")
    key = [slice(None)] * m.ndim
    for a in axes:
        key[a] = slice(None, None, -1)
    return m[tuple(key)]


def fliplr(m):
    """m reversed left to right (along axis 1; at least 2 dimensions)."""
    m = _as_array(m)
    if m.ndim < 2:
        raise ValueError("[fliplr] input must be >= 2-d")
    return flip(m, 1)


def flipud(m):
    """m reversed up to down (along axis 0; at least 1 dimension)."""
    m = _as_array(m)
    if m.ndim < 1:
        raise ValueError("[flipud] input must be >= 1-d")
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Elements shifted along axis (of the flattened array for None), wrapping around."""
    a = _as_array(a)
    if axis is None:
        return _np.reshape(roll(_np.reshape(a, (-1,)), shift, 0), a.shape)
    # A repeated axis adds its shifts, as NumPy's.
    axes = ([_axis_list(ax, a.ndim, "roll")[0] for ax in
             ([axis] if isinstance(axis, (int, _onp.integer)) else list(axis))]
            if a.ndim else [])
    shifts = [shift] if isinstance(shift, (int, _onp.integer)) else list(shift)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("[roll] shift and axis must have the same length")
    total = {}
    for ax, s in zip(axes, shifts):
        total[ax] = total.get(ax, 0) + _index(s, "shift", "roll")
    for ax, s in total.items():
        n = a.shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        lead = (slice(None),) * ax
        a = _np.concatenate([a[lead + (slice(n - s, None),)], a[lead + (slice(None, n - s),)]],
                            axis=ax)
    return a


def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of `axes` (from the first towards the
    second)."""
    m = _as_array(m)
    if len(axes) != 2:
        raise ValueError("[rot90] len(axes) must be 2")
    a0, a1 = _axis_list(axes, m.ndim, "rot90")
    k = _index(k, "k", "rot90") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    order = list(range(m.ndim))
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return flip(m, a1).transpose(tuple(order))
    return flip(m.transpose(tuple(order)), a1)


# ---------------------------------------------------------------- simple creation
def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """A new uninitialized array with prototype's shape and dtype (or those given)."""
    p = _as_array(prototype)
    return _np.empty(p.shape if shape is None else shape, dtype=dtype or p.dtype,
                     device=device or p.device)


def identity(n, dtype=None, *, device=None):
    """The n x n identity matrix."""
    return _np.eye(_index(n, "n", "identity"), dtype=dtype, device=device)


def copy(a, order="K", subok=False):
    """A copy of a (recorded by autograd as an ordinary op)."""
    a = _as_array(a)
    if _np._core._autograd_is_recording() and a.dtype != _np.bool_:
        return _np.positive(a)  # an op, so gradients flow through the copy
    return a.copy()


def ascontiguousarray(a, dtype=None, *, like=None):
    """a as a C-contiguous array of at least one dimension (a itself when it is one)."""
    a = _np.asarray(a, dtype=dtype)
    if a.ndim == 0:
        a = _np.reshape(a, (1,))
    return a if _np._is_c_contiguous(a) else a.copy()


def tri(N, M=None, k=0, dtype=None, *, device=None):
    """Ones at and below the k-th diagonal of an N x M array, zeros above (float32 unless
    dtype says otherwise)."""
    N = _index(N, "N", "tri")
    M = N if M is None else _index(M, "M", "tri")
    k = _index(k, "k", "tri")
    if N < 0 or M < 0:
        raise ValueError(f"[tri] negative dimensions are not allowed, got ({N}, {M})")
    rows = _np.reshape(_np.arange(N, device=device), (N, 1))
    cols = _np.reshape(_np.arange(M, device=device), (1, M))
    mask = _np.greater_equal(_np.add(rows, k), cols)
    return mask.astype(dtype or _np._default_float())


def _tri_mask(m, k, name):
    m = _as_array(m)
    if m.ndim == 0:
        raise ValueError(f"[{name}] input must be at least 1-d")
    rows, cols = (m.shape[-2], m.shape[-1]) if m.ndim >= 2 else (m.shape[0], m.shape[0])
    return m, tri(rows, cols, _index(k, "k", name), dtype="bool", device=_dev(m))


def tril(m, k=0):
    """m with the elements above the k-th diagonal zeroed (over the last two axes)."""
    m, mask = _tri_mask(m, k, "tril")
    return _np.where(mask, m, _np.zeros((), dtype=m.dtype, device=_dev(m)))


def triu(m, k=0):
    """m with the elements below the k-th diagonal zeroed (over the last two axes)."""
    m, mask = _tri_mask(m, _index(k, "k", "triu") - 1, "triu")
    return _np.where(mask, _np.zeros((), dtype=m.dtype, device=_dev(m)), m)


def diag(v, k=0):
    """The k-th diagonal of a 2-d array, or a 2-d array with the 1-d v on its k-th diagonal."""
    v = _as_array(v)
    k = _index(k, "k", "diag")
    if v.ndim == 2:
        return _np.diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("[diag] input must be 1-d or 2-d")
    n = v.shape[0] + abs(k)
    dev = _dev(v)
    padded = _np.concatenate([v, _np.zeros((abs(k),), dtype=v.dtype, device=dev)], axis=0)
    # Row i holds v[i] at column i + k (k >= 0); column j holds v[j] at row j - k (k < 0).
    spread = _np.reshape(padded, (n, 1) if k >= 0 else (1, n))
    mask = _np.eye(n, n, k, dtype="bool", device=dev)
    return _np.where(mask, _np.broadcast_to(spread, (n, n)),
                     _np.zeros((), dtype=v.dtype, device=dev))


def diagflat(v, k=0):
    """A 2-d array with the flattened v on its k-th diagonal."""
    return diag(_np.reshape(_as_array(v), (-1,)), k)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from coordinate vectors ('xy': Cartesian, the first two axes
    swapped; 'ij': matrix indexing); sparse keeps the broadcastable shapes."""
    if indexing not in ("xy", "ij"):
        raise ValueError("[meshgrid] valid values for `indexing` are 'xy' and 'ij'")
    xs = [_np.reshape(_as_array(x), (-1,)) for x in xi]
    n = len(xs)
    out = []
    for i, x in enumerate(xs):
        shape = [1] * n
        shape[i] = x.shape[0]
        if indexing == "xy" and n > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(_np.reshape(x, tuple(shape)))
    if not sparse:
        full = broadcast_shapes(*(o.shape for o in out))
        out = [_np.broadcast_to(o, full) for o in out]
        if copy:
            out = [o.copy() for o in out]
    return tuple(out)


def indices(dimensions, dtype=int, sparse=False):
    """The index grid of an array of shape `dimensions`: one array per axis (stacked into one
    unless sparse)."""
    dims = tuple(_index(d, "dimensions", "indices") for d in dimensions)
    dtype = "int64" if dtype is int else dtype
    grids = []
    for i, n in enumerate(dims):
        shape = [1] * len(dims)
        shape[i] = n
        grids.append(_np.reshape(_np.arange(n).astype(dtype), tuple(shape)))
    if sparse:
        return tuple(grids)
    if not dims:
        return _np.zeros((0,), dtype=dtype)
    return _np.stack([_np.broadcast_to(g, dims) for g in grids], axis=0)


def _linspace_dtype(*values):
    """The dtype linspace, logspace and geomspace give without one: float64 (complex128 with
    a complex value) when an endpoint (or logspace's base) is a float64 or complex128 array,
    else the default float (or complex64)."""
    wide = any(getattr(v, "dtype", None) in (_onp.float64, _onp.complex128) for v in values)
    if _has_complex(*values):
        return "complex128" if wide else "complex64"
    return "float64" if wide else _np._default_float()


def _complex_dtype(dtype):
    """Whether dtype (None, a name, a type) is a complex one; others are checked later."""
    try:
        return dtype is not None and _onp.dtype(dtype).kind == "c"
    except TypeError:
        return False


def _has_complex(*values):
    return any(_kind(v) == "c" if isinstance(v, _np.ndarray) else _onp.iscomplexobj(v)
               for v in values)


def _linspace_arrays(start, stop, num, endpoint, dtype, axis, device):
    """linspace of array endpoints, NumPy's algorithm in float64: (start + i * step) with the
    last sample exactly stop, the new axis moved to `axis`, integer dtypes floored."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"[linspace] Number of samples, {num}, must be non-negative.")
    s, e = _np.asarray(start), _np.asarray(stop)
    if dtype is None:
        dtype = _linspace_dtype(s, e)
    # NumPy's algorithm in double precision: complex128 for complex endpoints (or dtype)
    work = "complex128" if _has_complex(s, e) or _complex_dtype(dtype) else "float64"
    s, e = s.astype(work), e.astype(work)
    try:
        shape = _onp.broadcast_shapes(s.shape, e.shape)
    except ValueError:
        raise ValueError(f"[linspace] start of shape {s.shape} and stop of shape {e.shape} do "
                         f"not broadcast together") from None
    delta = _np.subtract(e, s)
    y = _np.arange(num, dtype="float64").reshape((-1,) + (1,) * len(shape))
    div = (num - 1) if endpoint else num
    if div > 0:
        step = _np.true_divide(delta, div)
        if bool(_np.any(_np.equal(step, 0))):  # NumPy's order there: y / div * delta
            y = _np.multiply(_np.true_divide(y, div), delta)
        else:
            y = _np.multiply(y, step)
        # NumPy's step is of the endpoints (float64 for real ones, whatever dtype= is), and
        # a scalar where they are scalars
        if work == "complex128" and not _has_complex(start, stop):
            step = _np.real(step)
        if not shape:
            step = complex(step) if _kind(step) == "c" else float(step)
    else:
        step = float("nan")  # (NumPy's undefined step: a float NaN, whatever the shapes)
        y = _np.multiply(y, delta)
    y = _np.add(y, s)
    if endpoint and num > 1:
        y[-1, ...] = e
    y = _np.moveaxis(y, 0, axis)
    if _np.issubdtype(dtype, _onp.integer):  # NumPy 2 rounds toward -inf
        if work == "complex128":
            raise TypeError(f"[linspace] complex samples cannot be floored into the integer "
                            f"dtype {_onp.dtype(dtype).name} (NumPy's floor refuses them too)")
        y = _np.floor(y)
    out = y.astype(dtype)
    return (out if device is None else out.to_device(device)), step


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num): num samples evenly spaced on a log scale. Array
    start / stop / base broadcast, the samples along `axis`, as in NumPy."""
    dtype = dtype or _linspace_dtype(start, stop, base)
    work = "complex128" if _has_complex(start, stop, base) else "float64"
    if _onp.ndim(base) == 0:
        if _onp.ndim(start) == 0 and _onp.ndim(stop) == 0:
            _moved_axis(axis, 1, "logspace")  # (else linspace checks it)
        base = complex(base) if work == "complex128" else float(base)
    else:
        # NumPy's: start, stop and base take the dimensions of their broadcast (a base of more
        # dimensions gives more sequences), and base a new axis where the samples go.
        arrays = [v if isinstance(v, _np.ndarray) else _np.array(_onp.asarray(v))
                  for v in (start, stop, base)]
        try:
            nd = len(_onp.broadcast_shapes(*(a.shape for a in arrays)))
        except ValueError:
            raise ValueError(f"[logspace] start, stop and base of shapes "
                             f"{[a.shape for a in arrays]} do not broadcast together") from None
        start, stop, base = (a.reshape((1,) * (nd - a.ndim) + a.shape) for a in arrays)
        base = _np.expand_dims(base.astype(work), axis)
    exps = _np.linspace(start, stop, num, endpoint=endpoint, dtype=work, axis=axis)
    return _np.power(base, exps).astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """num samples evenly spaced on a log scale with the endpoints themselves. Array start /
    stop broadcast, the samples along `axis`, as in NumPy: complex endpoints follow a
    logarithmic spiral, and so do real ones with a complex dtype= (NumPy computes in the
    dtype too); real ones of different signs give NaN between the endpoints."""
    s, e = _np.asarray(start), _np.asarray(stop)
    work = "complex128" if _has_complex(s, e) or _complex_dtype(dtype) else "float64"
    s, e = s.astype(work), e.astype(work)
    if bool(_np.any(_np.equal(s, 0))) or bool(_np.any(_np.equal(e, 0))):
        raise ValueError("[geomspace] geometric sequence cannot include zero")
    # NumPy's way: both divided by start's sign (x / |x| for complex), so start is positive
    # and the logarithms are of one branch; the sign is put back at the end.
    sign = _np.sign(s)
    s, e = _np.true_divide(s, sign), _np.true_divide(e, sign)
    out = _np.power(10.0, _np.linspace(_np.log10(s), _np.log10(e), num, endpoint=endpoint,
                                       dtype=work))
    if num > 0:  # the endpoints exactly (10 ** log10(x) need not be x)
        out[0] = s
        if endpoint and num > 1:
            out[-1] = e
    out = _np.moveaxis(_np.multiply(out, sign), 0, axis)
    return out.astype(dtype or _linspace_dtype(start, stop))


# ---------------------------------------------------------------- repetition
def tile(A, reps):
    """A repeated reps times along each axis (reps and A.ndim padded with leading 1s)."""
    A = _as_array(A)
    reps = (reps,) if isinstance(reps, (int, _onp.integer)) else tuple(reps)
    reps = tuple(_index(r, "reps", "tile") for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"[tile] reps must be non-negative, got {reps}")
    d = max(len(reps), A.ndim)
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - A.ndim) + A.shape
    if all(r == 1 for r in reps):
        return copy(A.reshape(shape))
    # (s0, s1, ...) -> (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...), then merged.
    inter = tuple(v for s in shape for v in (1, s))
    target = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    out = _broadcast_to_op(A.reshape(inter), shape=target)  # (a new array, as NumPy's)
    return _np.reshape(out, tuple(r * s for r, s in zip(reps, shape)))


# ---------------------------------------------------------------- index arithmetic
def _along_shape(shape, indices_shape, axis, name):
    """The shape of what take_along_axis picks: indices' along axis, elsewhere indices and
    arr broadcast (NumPy's IndexError when they do not, as its fancy indexing)."""
    try:
        return tuple(indices_shape[i] if i == axis else
                     _onp.broadcast_shapes((indices_shape[i],), (shape[i],))[0]
                     for i in range(len(shape)))
    except ValueError:
        raise IndexError(f"[{name}] shape mismatch: indexing arrays could not be broadcast "
                         f"together with shapes {tuple(shape)} {tuple(indices_shape)}") from None


def _flat_index_along(shape, indices, axis, name):
    """Flat positions in an array of `shape` of the elements take_along_axis picks."""
    if indices.ndim != len(shape):
        raise ValueError(f"[{name}] indices and arr must have the same number of dimensions, "
                         f"got {indices.ndim} and {len(shape)}")
    if _kind(indices) not in "iu":
        raise IndexError(f"[{name}] indices must be integers, got {indices.dtype}")
    out_shape = _along_shape(shape, indices.shape, axis, name)
    n = shape[axis]
    # Few passes over the indices (they are as large as the result): two reductions for the
    # bounds, the negative fix-up and the scaling only where needed.
    lo, hi = (int(_np.min(indices)), int(_np.max(indices))) if indices.size else (0, 0)
    if indices.size and (hi >= n or lo < -n):  # (no index: nothing out of bounds)
        raise IndexError(f"[{name}] index out of bounds for axis {axis} with size {n}")
    idx = indices if lo >= 0 else _np.where(indices < 0, _np.add(indices, n), indices)
    if idx.dtype != _onp.int64:
        idx = idx.astype("int64")
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    flat = _np.broadcast_to(idx, out_shape)
    if strides[axis] != 1:
        flat = _np.multiply(flat, strides[axis])
    base = None  # the other axes' offsets, summed while still small (one pass over flat)
    for i in range(len(shape)):
        if i != axis:
            grid = [1] * len(shape)
            grid[i] = shape[i]  # 1 where arr broadcasts along i: offset 0 throughout
            part = _np.multiply(_np.arange(shape[i], device=_dev(idx)).reshape(grid), strides[i])
            base = part if base is None else _np.add(base, part)
    return flat if base is None else _np.add(flat, base)


_take_along_op = _internal_function("_npi_take_along_axis")


def take_along_axis(arr, indices, axis=-1):
    """arr's elements at `indices` along axis, matched up in the other axes (NumPy's
    take_along_axis); differentiable for float arr."""
    arr = _as_array(arr)
    indices = _as_array(indices, arr)
    if axis is None:
        arr, axis = arr.reshape(-1), 0
    if arr.ndim == 0:
        raise ValueError("[take_along_axis] arr must have at least one dimension")
    axis = _axis(arr.ndim, axis, "take_along_axis")
    if (indices.dtype in (_onp.int64, _onp.int32) and indices.ndim == arr.ndim
            and arr.device.device_type == "cpu" and indices.device.device_type == "cpu"
            and all(i == axis or s == t for i, (s, t) in enumerate(zip(arr.shape, indices.shape)))):
        return _take_along_op(arr, indices, axis=axis)  # one pass (shape.cc), differentiable
    flat = _flat_index_along(arr.shape, indices, axis, "take_along_axis")
    if flat.size == 0:
        return _np.zeros(flat.shape, dtype=arr.dtype, device=_dev(arr))
    return _composites.take(_np.reshape(arr, (-1,)), flat)


# ---------------------------------------------------------------- bits
_packbits_op = _internal_function("_npi_packbits")
_unpackbits_op = _internal_function("_npi_unpackbits")


def _bits_axis(a, axis, bitorder, name):
    """a (flattened for axis=None, 1-d for a 0-d array, as NumPy) and the integer axis."""
    if bitorder not in ("big", "little"):
        raise ValueError(f"[{name}] bitorder must be either 'little' or 'big', got {bitorder!r}")
    if axis is None or a.ndim == 0:
        a = a.reshape(-1)
    if axis is None:
        return a, 0
    if isinstance(axis, (bool, _onp.bool_)):
        raise TypeError(f"[{name}] axis must be an integer, got bool")
    return a, _axis(a.ndim, axis, name)


def packbits(a, axis=None, bitorder="big"):
    """The truth of a's integer or bool elements packed into uint8 bytes along axis (all of
    a flattened for None), eight a byte, the last byte zero-padded (NumPy's packbits)."""
    a, axis = _bits_axis(_as_array(a), axis, bitorder, "packbits")
    return _packbits_op(a, axis=axis, bitorder=bitorder)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Each uint8 byte of a as eight 0 / 1 bytes along axis (a flattened for None); count
    keeps that many bits (zero-padded past the input's), or drops -count from the end."""
    a = _as_array(a)
    if a.dtype != _onp.uint8:  # (NumPy checks the dtype first)
        raise TypeError(f"[unpackbits] Expected an input array of unsigned byte data type, "
                        f"got {a.dtype}")
    a, axis = _bits_axis(a, axis, bitorder, "unpackbits")
    if count is not None:
        count = _index(count, "count", "unpackbits")
    return _unpackbits_op(a, axis=axis, count=count, bitorder=bitorder)


def put_along_axis(arr, indices, values, axis):
    """Writes values (broadcast to indices' shape) into arr at `indices` along axis, in
    place."""
    if not isinstance(arr, _np.ndarray):
        raise TypeError(f"[put_along_axis] arr must be an ndarray, got {type(arr).__name__}")
    indices = _as_array(indices, arr)
    if axis is None:
        shape, axis = (arr.size,), 0
    else:
        shape, axis = arr.shape, _axis(arr.ndim, axis, "put_along_axis")
    if indices.ndim != len(shape):
        raise ValueError(f"[put_along_axis] indices and arr must have the same number of "
                         f"dimensions, got {indices.ndim} and {len(shape)}")
    if _kind(indices) not in "iu":  # (NumPy's IndexError comes before the values' errors)
        raise IndexError(f"[put_along_axis] indices must be integers, got {indices.dtype}")
    out_shape = _along_shape(shape, indices.shape, axis, "put_along_axis")
    values = _composites._assigned_values(values, arr)  # (NumPy's: before the bounds)
    if values.ndim:  # values must broadcast to the indexing result (NumPy's ValueError)
        # As NumPy's assignment, leading axes of length one beyond the result's are dropped.
        lead = 0
        while values.ndim - lead > len(out_shape) and values.shape[lead] == 1:
            lead += 1
        try:
            fits = _onp.broadcast_shapes(values.shape[lead:], out_shape) == out_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"[put_along_axis] shape mismatch: value array of shape "
                             f"{tuple(values.shape)} could not be broadcast to indexing result "
                             f"of shape {out_shape}")
        if lead:
            values = values.reshape(values.shape[lead:])
    flat = _flat_index_along(shape, indices, axis, "put_along_axis")
    if flat.size == 0:
        return None
    vals = _np.broadcast_to(values, flat.shape)
    data = _np.reshape(arr.copy(), (-1,))  # written back whole: arr may be a strided view
    data[_np.reshape(flat, (-1,))] = _np.reshape(vals, (-1,))
    arr[...] = _np.reshape(data, arr.shape)
    return None


def unravel_index(indices, shape, order="C"):
    """The coordinates in an array of `shape` of flat indices (C or F order)."""
    if order not in ("C", "F"):
        raise ValueError("[unravel_index] order must be 'C' or 'F'")
    shape = (shape,) if isinstance(shape, (int, _onp.integer)) else tuple(shape)
    shape = tuple(_index(s, "shape", "unravel_index") for s in shape)
    idx = _as_array(indices)
    if _kind(idx) not in "iub":  # (NumPy casts bools, True as 1, as it may safely)
        raise TypeError(f"[unravel_index] indices must be integers, got {idx.dtype}")
    if not shape and idx.ndim:  # (a 0-d shape has no coordinates to give each index)
        raise ValueError("[unravel_index] multiple indices are not supported for 0d arrays")
    size = math.prod(shape)
    if size >= 2**63:
        raise ValueError("[unravel_index] dimensions are too large; arrays and shapes with a "
                         "total size greater than 'intp' are not supported.")
    if idx.size and (bool(_np.any(idx < 0)) or bool(_np.any(idx >= size))):
        raise ValueError(f"[unravel_index] index out of bounds for array with size {size}")
    idx = idx.astype("int64")
    dims = range(len(shape)) if order == "F" else range(len(shape) - 1, -1, -1)
    coords = [None] * len(shape)
    for i in dims:
        coords[i] = _np.mod(idx, shape[i]) if shape[i] else idx
        idx = _np.floor_divide(idx, shape[i]) if shape[i] else idx
    return tuple(coords)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinate arrays in an array of shape dims (mode raise / wrap /
    clip)."""
    if order not in ("C", "F"):
        raise ValueError("[ravel_multi_index] order must be 'C' or 'F'")
    dims = tuple(_index(d, "dims", "ravel_multi_index") for d in dims)
    if math.prod(dims) >= 2**63:
        raise ValueError("[ravel_multi_index] invalid dims: array size defined by dims is "
                         "larger than the maximum possible size.")
    coords = [_as_array(c) for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"[ravel_multi_index] parameter multi_index must be a sequence of "
                         f"length {len(dims)}")
    modes = [mode] * len(dims) if isinstance(mode, str) else list(mode)
    flat = None
    strides = ([math.prod(dims[i + 1:]) for i in range(len(dims))] if order == "C"
               else [math.prod(dims[:i]) for i in range(len(dims))])
    for c, n, m, st in zip(coords, dims, modes, strides):
        if _kind(c) not in "iu":
            raise TypeError(f"[ravel_multi_index] coordinates must be integers, got {c.dtype}")
        c = c.astype("int64")
        if m == "wrap":
            c = _np.mod(c, n)
        elif m == "clip":
            c = _np.clip(c, 0, n - 1)
        elif m != "raise":
            raise ValueError(f"[ravel_multi_index] clipmode must be 'raise', 'wrap' or 'clip', "
                             f"got {m!r}")
        elif c.size and (bool(_np.any(c < 0)) or bool(_np.any(c >= n))):
            raise ValueError("[ravel_multi_index] invalid entry in coordinates array")
        term = _np.multiply(c, st)
        flat = term if flat is None else _np.add(flat, term)
    return flat


def ix_(*args):
    """An open mesh from 1-d sequences (bool ones as their nonzero positions) for indexing."""
    out = []
    n = len(args)
    for k, seq in enumerate(args):
        a = _as_array(seq)
        if a.ndim != 1:
            raise ValueError("[ix_] cross index must be 1 dimensional")
        if a.dtype == _np.bool_:
            a = a._nonzero()[0]
        elif a.size == 0 and not isinstance(seq, (_np.ndarray, _onp.ndarray)):
            a = a.astype("int64")  # an empty list is an empty index (arrays keep their dtype)
        shape = [1] * n
        shape[k] = a.shape[0]
        out.append(a.reshape(tuple(shape)))
    return tuple(out)


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (at and below the k-th diagonal)."""
    return tri(n, m, k, dtype="bool")._nonzero()


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (at and above the k-th diagonal)."""
    return _np.logical_not(tri(n, m, _index(k, "k", "triu_indices") - 1, dtype="bool"))._nonzero()


def _square_2d(arr, name):
    arr = _as_array(arr)
    if arr.ndim != 2:
        raise ValueError(f"[{name}] input array must be 2-d")
    return arr


def tril_indices_from(arr, k=0):
    """tril_indices for arr's shape."""
    arr = _square_2d(arr, "tril_indices_from")
    return tril_indices(arr.shape[0], k, arr.shape[1])


def triu_indices_from(arr, k=0):
    """triu_indices for arr's shape."""
    arr = _square_2d(arr, "triu_indices_from")
    return triu_indices(arr.shape[0], k, arr.shape[1])


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an n x ... x n array: ndim copies of arange(n)."""
    idx = _np.arange(_index(n, "n", "diag_indices"))
    return (idx,) * _index(ndim, "ndim", "diag_indices")


def diag_indices_from(arr):
    """diag_indices for arr, whose dimensions must all be equal (at least 2)."""
    arr = _as_array(arr)
    if arr.ndim < 2:
        raise ValueError("[diag_indices_from] input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("[diag_indices_from] all dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], arr.ndim)


def fill_diagonal(a, val, wrap=False):
    """Writes val (a scalar, or values repeated as needed) along a's main diagonal, in place;
    for tall 2-d arrays wrap=True continues below the first square block."""
    if not isinstance(a, _np.ndarray):
        raise TypeError(f"[fill_diagonal] a must be an ndarray, got {type(a).__name__}")
    if a.ndim < 2:
        raise ValueError("[fill_diagonal] array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = None if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("[fill_diagonal] all dimensions of input must be of equal length")
        step = 1 + sum(math.prod(a.shape[:i]) for i in range(1, a.ndim))
        end = None
    positions = _onp.arange(a.size)[:end:step]
    if positions.size == 0:
        return None
    dev = _dev(a)
    v = _composites._assigned_values(val, a).reshape(-1)  # (NumPy's OverflowError, TypeError)
    if v.size == 0:
        return None
    v = _composites.take(v, _np.array(_onp.arange(positions.size) % v.size, dtype="int64",
                                      device=dev))
    a.flat[_np.array(positions, dtype="int64", device=dev)] = v
    return None


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-d x: columns x**(N-1) ... x**0 (or increasing). In
    NumPy's dtype, x's promoted with int64 (int64 for bool and integers, float64 for uint64
    and float16, complex128 for complex64), except that float32 (and bfloat16) input keeps
    its dtype (NumPy gives float64)."""
    x = _as_array(x)
    if x.ndim != 1:
        raise ValueError("[vander] x must be a one-dimensional array or sequence")
    N = x.shape[0] if N is None else _index(N, "N", "vander")
    if N < 0:
        raise ValueError("[vander] N must be non-negative")
    powers = _np.arange(N) if increasing else _np.arange(N - 1, -1, -1)
    if x.dtype in ("uint64", "float16", "complex64"):  # (NumPy's promote_types(x, int64))
        x = x.astype({"uint64": "float64", "float16": "float64"}.get(str(x.dtype), "complex128"))
    if _kind(x) in "iub":
        base = x.astype("int64")
    else:
        base = x
        powers = powers.astype(x.dtype)
    return _np.power(base.reshape((-1, 1)), powers.reshape((1, -1)))


def _window(M, name, formula):
    """formula(n, M - 1) over the symmetric points n = 1-M, 3-M, ..., M-1 (NumPy's form, so
    the ends come out exact), in float64 and returned in the default float dtype. A float M
    that is a whole number counts as that int (NumPy computes with it as it is)."""
    if isinstance(M, (float, _onp.floating)) and float(M).is_integer():
        M = int(M)
    M = _index(M, "M", name)
    if M < 1:
        return _np.zeros((0,), dtype=_np._default_float())
    if M == 1:
        return _np.ones((1,), dtype=_np._default_float())
    n = _np.arange(1 - M, M, 2).astype("float64")
    return formula(n, M - 1).astype(_np._default_float())


def _cos(n, d, k):
    return _np.cos(_np.multiply(n, k * math.pi / d))


def hanning(M):
    """The Hann window of M points (float32: ndx's default float)."""
    return _window(M, "hanning", lambda n, d: _np.add(0.5, _np.multiply(0.5, _cos(n, d, 1))))


def hamming(M):
    """The Hamming window of M points."""
    return _window(M, "hamming", lambda n, d: _np.add(0.54, _np.multiply(0.46, _cos(n, d, 1))))


def blackman(M):
    """The Blackman window of M points."""
    return _window(M, "blackman", lambda n, d: _np.add(
        _np.add(0.42, _np.multiply(0.5, _cos(n, d, 1))), _np.multiply(0.08, _cos(n, d, 2))))


def bartlett(M):
    """The Bartlett (triangular) window of M points."""
    return _window(M, "bartlett", lambda n, d: _np.where(
        _np.less_equal(n, 0), _np.add(1.0, _np.true_divide(n, d)),
        _np.subtract(1.0, _np.true_divide(n, d))))


def _i0_series(x):
    """I0 by its power series sum (x/2)^2k / (k!)^2 (|x| <= 30: 70 terms reach 1e-17)."""
    q = _np.multiply(_np.multiply(x, x), 0.25)
    term = _np.ones_like(x)
    total = _np.ones_like(x)
    for k in range(1, 70):
        term = _np.true_divide(_np.multiply(term, q), float(k * k))
        total = _np.add(total, term)
    return total


def _i0_asymptotic(x):
    """I0 for |x| > 30: e^x / sqrt(2 pi x) * sum a_k / x^k, a_k = ((2k-1)!!)^2 / (k! 8^k); ten
    terms leave a relative error under 1e-13 there."""
    coef, total, power = 1.0, _np.ones_like(x), _np.ones_like(x)
    inv = _np.true_divide(1.0, x)
    for k in range(1, 11):
        coef *= (2 * k - 1) ** 2 / (8.0 * k)
        power = _np.multiply(power, inv)
        total = _np.add(total, _np.multiply(power, coef))
    # sqrt(x) * sqrt(2 pi): 2 pi x overflows for the largest floats (inf / inf was NaN).
    root = _np.multiply(_np.sqrt(x), math.sqrt(2 * math.pi))
    return _np.multiply(_np.true_divide(_np.exp(x), root), total)


def i0(x):
    """The modified Bessel function of the first kind, order 0 (floats; integers as the
    default float)."""
    x = _as_array(x)
    if _kind(x) == "c":
        raise TypeError("[i0] i0 not supported for complex values")
    if _kind(x) not in "f":
        x = x.astype(_np._default_float())
    ax = _np.absolute(x)
    big = _np.greater(ax, 30.0)
    small = _np.where(big, 0.0, ax).astype(x.dtype)
    large = _np.where(big, ax, 31.0).astype(x.dtype)
    return _np.where(big, _i0_asymptotic(large), _i0_series(small))


def kaiser(M, beta):
    """The Kaiser window of M points: I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta), computed
    in float64 and returned in the default float dtype (NumPy: float64)."""
    m = _index(int(M) if isinstance(M, (float, _onp.floating)) and float(M).is_integer() else M,
               "M", "kaiser")
    if m < 1:
        return _np.zeros((0,), dtype=_np._default_float())
    if m == 1:
        return _np.ones((1,), dtype=_np._default_float())
    n = _np.arange(0, m, dtype="float64")
    alpha = (m - 1) / 2.0
    r = _np.true_divide(_np.subtract(n, alpha), alpha)
    arg = _np.multiply(float(beta), _np.sqrt(_np.clip(_np.subtract(1.0, _np.multiply(r, r)),
                                                      0.0, None)))
    w = _np.true_divide(i0(arg), i0(_np.array(float(beta), dtype="float64")))
    return w.astype(_np._default_float())


def insert(arr, obj, values, axis=None):
    """arr with values inserted before the index or indices obj along axis (of the flattened
    array for None): one gather from arr joined with values, so gradients reach both."""
    a = _as_array(arr)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis(a.ndim, axis, "insert")
    n = a.shape[axis]
    if isinstance(obj, slice):
        idx = _onp.arange(n)[obj]
    else:
        idx = _onp.asarray(obj.asnumpy() if isinstance(obj, _np.ndarray) else obj)
        if idx.dtype == bool:  # a mask: before each True position, as NumPy 2
            if idx.ndim != 1:
                raise ValueError("[insert] boolean array argument obj to insert must be one "
                                 f"dimensional, got {idx.ndim} dimensions")
            idx = _onp.flatnonzero(idx)
        if idx.ndim > 1:
            raise ValueError("[insert] index array argument obj to insert must be one "
                             "dimensional or scalar")
        if _kind(idx) not in "iu" and idx.size:  # (NumPy: one index as a slice bound)
            raise (TypeError if idx.size == 1 else IndexError)(
                f"[insert] index array argument obj to insert must be one dimensional or "
                f"scalar integers, got {idx.dtype}")
    idx = idx.astype(_onp.int64)
    if ((idx < -n) | (idx > n)).any():
        raise IndexError(f"[insert] index {int(idx[(idx < -n) | (idx > n)].reshape(-1)[0])} is "
                         f"out of bounds for axis {axis} with size {n}")
    idx = _onp.where(idx < 0, idx + n, idx)
    # NumPy's array(values, dtype=arr.dtype): host values a's dtype cannot hold raise (300 into
    # int8, NaN into int64, 1j into float64) rather than wrap; arrays are cast
    v = _composites._assigned_values(values, a)
    if v.ndim < a.ndim:
        v = v.reshape((1,) * (a.ndim - v.ndim) + tuple(v.shape))
    if idx.size == 1:
        # One slot, as NumPy: for a scalar obj values' first axis becomes the inserted run
        # along axis; for a one-element sequence the run is values' own extent along axis.
        if idx.ndim == 0:
            v = _np.moveaxis(v, 0, axis)
        count = v.shape[axis]
        slots = _onp.full(count, int(idx.reshape(-1)[0]))
        order = _onp.arange(count)
    else:
        count = idx.size
        order = _onp.argsort(idx, kind="stable")
        slots = idx
    shape = list(a.shape)
    shape[axis] = count
    try:
        v = _np.broadcast_to(v, tuple(shape))
    except ValueError:
        raise ValueError(f"[insert] values of shape {tuple(v.shape)} cannot be broadcast to "
                         f"{tuple(shape)}") from None
    # Where each inserted element lands (NumPy's rule: sorted slots shifted by their rank) and
    # which element of [a, v] each output position takes.
    landing = _onp.empty(count, dtype=_onp.int64)
    landing[order] = slots[order] + _onp.arange(count)
    source = _onp.empty(n + count, dtype=_onp.int64)
    taken = _onp.zeros(n + count, dtype=bool)
    source[landing] = n + _onp.arange(count)
    taken[landing] = True
    source[~taken] = _onp.arange(n)
    joined = _np.concatenate([a, v], axis=axis)
    return _composites.take(joined, _np.array(source, dtype="int64", device=_dev(a)),
                            axis=axis)


def trim_zeros(filt, trim="fb", axis=None):
    """filt without its leading ('f') and / or trailing ('b') zeros (a view)."""
    a = _as_array(filt)
    if not isinstance(trim, str):
        raise TypeError(f"[trim_zeros] trim must be a str of 'f' and / or 'b', got "
                        f"{type(trim).__name__}")
    trim = trim.lower()
    if not trim or any(c not in "fb" for c in trim):
        raise ValueError(f"[trim_zeros] unexpected character(s) in `trim`: {trim!r}")
    if a.ndim == 0:  # nothing to trim, as NumPy (an axis is out of bounds)
        if axis is not None:
            _axis_list(axis, 0, "trim_zeros")
        return a.copy()
    axes = range(a.ndim) if axis is None else _axis_list(axis, a.ndim, "trim_zeros")
    nz = a._nonzero()
    key = [slice(None)] * a.ndim
    for ax in axes:
        if nz[ax].size == 0:
            key[ax] = slice(0, 0)
            continue
        lo = int(_np.min(nz[ax])) if "f" in trim else 0
        hi = int(_np.max(nz[ax])) + 1 if "b" in trim else a.shape[ax]
        key[ax] = slice(lo, hi)
    return a[tuple(key)]


def delete(arr, obj, axis=None):
    """arr without the sub-arrays at `obj` (an int, a slice or integer / bool indices) along
    axis (of the flattened array for None)."""
    a = _as_array(arr)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis(a.ndim, axis, "delete")
    n = a.shape[axis]
    keep = _onp.ones(n, dtype=bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        o = _onp.asarray(obj.asnumpy() if isinstance(obj, _np.ndarray) else obj)
        if o.dtype == bool:
            if o.shape != (n,):
                raise ValueError(f"[delete] boolean array argument obj to delete must be one "
                                 f"dimensional and match the axis length of {n}")
            keep = ~o
        else:
            if _kind(o) not in "iu" and o.size:
                raise IndexError(f"[delete] arrays used as indices must be of integer (or "
                                 f"boolean) type, got {o.dtype}")
            o = o.astype(_onp.int64).reshape(-1)
            if ((o < -n) | (o >= n)).any():
                raise IndexError(f"[delete] index out of bounds for axis {axis} with size {n}")
            keep[o] = False
    idx = _np.array(_onp.flatnonzero(keep), dtype="int64", device=_dev(a))
    return _composites.take(a, idx, axis=axis)


def place(arr, mask, vals):
    """Writes the first values of vals (repeated as needed) where mask is true, in place."""
    if not isinstance(arr, _np.ndarray):
        raise TypeError(f"[place] arr must be an ndarray, got {type(arr).__name__}")
    m = _as_array(mask, arr).astype("bool")
    if m.size != arr.size:
        raise ValueError("[place] mask and data must be the same size")
    v = _composites._assigned_values(vals, arr, "place").reshape(-1)  # (checked first)
    count = int(_np.count_nonzero(m))
    if count == 0:
        return None
    if v.size == 0:
        raise ValueError("[place] cannot insert from an empty array")
    v = _composites.take(v, _np.array(_onp.arange(count) % v.size, dtype="int64",
                                      device=_dev(arr)))
    data = arr.copy().reshape(-1)
    data[m.reshape(-1)] = v
    arr[...] = data.reshape(arr.shape)
    return None


def putmask(a, mask, values):
    """a[mask] = values, where values repeat over a's flat positions (values[i % len] goes to
    position i), in place."""
    if not isinstance(a, _np.ndarray):
        raise TypeError(f"[putmask] a must be an ndarray, got {type(a).__name__}")
    m = _as_array(mask, a).astype("bool")
    if m.size != a.size:  # (NumPy's check: the size, the mask read in flat order)
        raise ValueError("[putmask] mask and data must be the same size")
    m = _np.reshape(m, a.shape)
    v = _composites._assigned_values(values, a, "putmask").reshape(-1)
    if v.size == 0 or a.size == 0:
        return None
    spread = _composites.take(v, _np.array(_onp.arange(a.size) % v.size, dtype="int64",
                                           device=_dev(a)))
    a[...] = _np.where(m, spread.reshape(a.shape), a)
    return None


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """function called with one coordinate array per axis of `shape`."""
    dtype = _np._default_float() if dtype is float else dtype
    return function(*indices(shape, dtype=dtype, sparse=False), **kwargs)


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    """A 1-d array of the bytes of buffer read as dtype (float64 by default, as NumPy: the bytes
    decide, not ndx's default float); a copy, read-only for good where NumPy's view would be
    (an immutable buffer such as bytes)."""
    try:
        data = _onp.frombuffer(buffer, dtype=_onp.float64 if dtype is float else dtype,
                               count=count, offset=offset)
    except BufferError as e:  # a buffer without a contiguous byte view
        raise ValueError(f"[frombuffer] {e}") from None
    out = _np.array(data)
    return out if data.flags.writeable else _read_only_for_good(out)


def _read_only_for_good(a):
    """a as a read-only view that cannot be made writeable (NumPy's read-only memory)."""
    return a._as_strided(a.shape, a.strides, False)


# ---------------------------------------------------------------- pad
_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum",
              "minimum", "mean", "median", "empty")
_PAD_STATS = ("maximum", "minimum", "mean", "median")


def _pairs(value, ndim, name, what, integer=True):
    """NumPy's per-axis (before, after) pairs from a scalar, a pair or one pair per axis."""
    arr = _onp.asarray(value.asnumpy() if isinstance(value, _np.ndarray) else value)
    if integer and _kind(arr) not in "iu":
        raise TypeError(f"[{name}] {what} must be integers, got {arr.dtype}")
    try:
        out = _onp.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(f"[{name}] {what} of shape {arr.shape} does not broadcast to "
                         f"({ndim}, 2)") from None
    if integer and (out < 0).any():
        raise ValueError(f"[{name}] index can't contain negative values")
    return [(int(b), int(a)) if integer else (b.item(), a.item()) for b, a in out]


def _slab(a, axis, start, stop, step=1):
    key = [slice(None)] * a.ndim
    key[axis] = slice(start, stop, step)
    return a[tuple(key)]


def _side(a, axis, width, value_or_slab):
    shape = list(a.shape)
    shape[axis] = width
    return _np.broadcast_to(value_or_slab, tuple(shape))


def _periodic(a, axis, before, after, mode):
    """reflect / symmetric / wrap padding as one gather: position i of the padded axis
    (counted from the original start) reads element i extended periodically (the same as
    NumPy's chunk-by-chunk mirroring for widths past the axis length)."""
    n = a.shape[axis]
    reach = n - 1 if mode == "reflect" else n
    if before <= reach and after <= reach:  # the common case: mirrored slabs, one concatenation
        if mode == "wrap":
            left, right = _slab(a, axis, n - before, n), _slab(a, axis, 0, after)
        elif mode == "reflect":
            left = _slab(a, axis, before, 0, -1)
            right = _slab(a, axis, n - 2, n - 2 - after if n - 2 - after >= 0 else None, -1)
        else:
            left = _slab(a, axis, before - 1, None, -1) if before else _slab(a, axis, 0, 0)
            right = _slab(a, axis, n - 1, n - 1 - after if n - 1 - after >= 0 else None, -1)
        return _np.concatenate([p for p in (left, a, right) if p.shape[axis]], axis=axis)
    i = _onp.arange(-before, n + after)
    if mode == "wrap":
        idx = i % n
    elif mode == "reflect":
        r = i % (2 * (n - 1))
        idx = _onp.where(r < n, r, 2 * (n - 1) - r)
    else:  # symmetric
        r = i % (2 * n)
        idx = _onp.where(r < n, r, 2 * n - 1 - r)
    return _composites.take(a, _np.array(idx, dtype="int64", device=_dev(a)), axis=axis)


def _reflect_odd(a, axis, before, after, mode):
    """reflect / symmetric with reflect_type='odd' along axis: NumPy's chunk-by-chunk
    mirroring, each chunk reflected through the current outermost element (2 * edge - x), so
    a width past the axis length continues from the values the last chunk made."""
    n = a.shape[axis]
    off = 1 if mode == "symmetric" else 0
    while before > 0 or after > 0:
        m = a.shape[axis]
        if off:  # whole periods of the original axis
            old = m // n * n
        else:  # whole periods of n - 1 steps, the edge itself excluded
            old = (m - 1) // (n - 1) * (n - 1)
        if before > 0:
            k = min(old, before)
            # a[k] .. a[1] (reflect) or a[k - 1] .. a[0] (symmetric)
            chunk = _slab(a, axis, k, 0, -1) if off == 0 else _slab(a, axis, k - 1, None, -1)
            chunk = _np.subtract(_np.multiply(2, _slab(a, axis, 0, 1)), chunk).astype(a.dtype)
            a = _np.concatenate([chunk, a], axis=axis)
            before -= k
        if after > 0:
            k = min(old, after)
            m = a.shape[axis]
            last = m - 1 - (1 - off)  # the first element read, going left
            stop = last - k
            chunk = _slab(a, axis, last, stop if stop >= 0 else None, -1)
            edge = _slab(a, axis, m - 1, m)
            chunk = _np.subtract(_np.multiply(2, edge), chunk).astype(a.dtype)
            a = _np.concatenate([a, chunk], axis=axis)
            after -= k
    return a


def _pad_stat(a, axis, before, after, mode, lengths):
    """The two fills of a statistic mode along axis: the statistic of the first / last
    `lengths` elements (the whole axis by default), rounded for integer arrays as NumPy's."""
    n = a.shape[axis]
    fn = {"maximum": _np.max, "minimum": _np.min, "mean": _np.mean,
          "median": _composites.median}[mode]
    parts = [a]
    for side, width in ((0, before), (1, after)):
        length = n if lengths is None else min(lengths[side], n)
        if width == 0:
            continue
        region = _slab(a, axis, 0, length) if side == 0 else _slab(a, axis, n - length, n)
        stat = fn(region, axis=axis, keepdims=True)
        if mode in ("mean", "median") and _kind(a) in "iu":  # (bool: any nonzero is True)
            stat = _np.round(stat)
        piece = _side(a, axis, width, stat.astype(a.dtype))
        parts.insert(0 if side == 0 else len(parts), piece)
    return _np.concatenate(parts, axis=axis)


def _pad_constant(a, widths, values):
    """Constant padding outside autograd: a copied into the middle of a new array, then each
    axis's borders filled (later axes' values win at the corners, as in NumPy)."""
    cv = _pairs(values, a.ndim, "pad", "constant_values", integer=False)
    shape = tuple(n + b + e for n, (b, e) in zip(a.shape, widths))
    out = _np.empty(shape, dtype=a.dtype, device=a.device)
    out[tuple(slice(b, b + n) for n, (b, _) in zip(a.shape, widths))] = a
    for axis, (before, after) in enumerate(widths):
        full = [slice(None)] * a.ndim
        for side, (start, stop) in enumerate(((0, before), (before + a.shape[axis], None))):
            if (stop if stop is not None else shape[axis]) > start:
                full[axis] = slice(start, stop)
                out[tuple(full)] = _np.array(cv[axis][side], device=_dev(a)).astype(a.dtype)
    return out


def _stop(i):
    """A descending slice's stop: None (run to the start) rather than -1 (the last element)."""
    return i if i >= 0 else None


def _pad_in_place(a, widths, mode):
    """edge / reflect / symmetric / wrap padding outside autograd, NumPy's way: a copied into
    a new array, then each axis's borders copied from inside it (so later axes mirror the
    borders earlier axes wrote, as NumPy's corners do); widths within the axis length."""
    shape = tuple(n + b + e for n, (b, e) in zip(a.shape, widths))
    out = _np.empty(shape, dtype=a.dtype, device=a.device)
    out[tuple(slice(b, b + n) for n, (b, _) in zip(a.shape, widths))] = a
    for axis, (before, after) in enumerate(widths):
        n = a.shape[axis]
        lo, hi = before, before + n  # the original extent along this axis
        if mode == "edge":
            sources = (slice(lo, lo + 1), slice(hi - 1, hi))
        elif mode == "wrap":
            sources = (slice(hi - before, hi), slice(lo, lo + after))
        elif mode == "reflect":
            sources = (slice(lo + before, lo, -1), slice(hi - 2, _stop(hi - 2 - after), -1))
        else:
            sources = (slice(lo + before - 1, _stop(lo - 1), -1),
                       slice(hi - 1, _stop(hi - 1 - after), -1))
        for (start, stop), src in zip(((0, before), (hi, hi + after)), sources):
            if stop > start:
                dst = [slice(None)] * a.ndim
                dst[axis] = slice(start, stop)
                key = [slice(None)] * a.ndim
                key[axis] = src
                out[tuple(dst)] = out[tuple(key)]
    return out


_pad_op = _internal_function("_npi_pad")
_PAD_OP_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_op_value(a, mode, constant_values):
    """The one fill _npi_pad takes: 0 outside constant mode; in it the constant when every
    side of every axis has the same real one that the array's dtype holds exactly (else None:
    the composition, which casts as NumPy does, handles it)."""
    if mode != "constant":
        return 0.0
    v = _onp.asarray(constant_values.asnumpy() if isinstance(constant_values, _np.ndarray)
                     else constant_values)
    if v.dtype.kind not in "biuf" or v.size == 0 or not (v == v.flat[0]).all():
        return None
    first = v.flat[0]
    if _kind(a) in "iub":
        info = _onp.iinfo(a.dtype) if _kind(a) != "b" else None
        lo, hi = (0, 1) if info is None else (info.min, info.max)
        if v.dtype.kind not in "biu" or not lo <= int(first) <= hi or abs(int(first)) > 2**53:
            return None
    return float(first)


def _dict_widths(pad_width, ndim):
    """NumPy 2.3's dict pad_width, {axis: width or (before, after)}: the axes not named get
    no padding."""
    seq = [(0, 0)] * ndim
    for axis, width in pad_width.items():
        axis = _axis_list(axis, ndim, "pad")[0]
        pair = (width, width) if not isinstance(width, (tuple, list)) else tuple(width)
        if len(pair) != 2 or not all(isinstance(w, (int, _onp.integer)) for w in pair):
            raise TypeError(f"[pad] pad_width[{axis}] must be an int or a pair of ints, got "
                            f"{width!r}")
        seq[axis] = pair
    return seq


def _check_constants(values, a):
    """NumPy writes each constant into the padded array as a NumPy scalar, so a value an
    integer dtype cannot hold raises there (NaN: ValueError; inf, 300 into int8:
    OverflowError) rather than wrap; the same write into a NumPy array of a's dtype decides."""
    if _kind(a) not in "iu":
        return
    arr = _onp.asarray(values.asnumpy() if isinstance(values, _np.ndarray) else values)
    probe = _onp.zeros(1, dtype=a.dtype)
    for v in _onp.broadcast_to(arr, (a.ndim, 2)).reshape(-1):  # (shape checked by _pairs)
        try:
            with warnings.catch_warnings():  # (NumPy's ComplexWarning: ndx warns nothing)
                warnings.simplefilter("ignore")
                probe[0:1] = v
        except (ValueError, OverflowError) as e:
            raise type(e)(f"[pad] constant_values: {e}") from None


def _pad_callable(a, pad_width, function, kwargs):
    """NumPy's pad with a function as the mode: the array in the middle of a zero border,
    then function(vector, (before, after), axis, kwargs) on every 1-d view along each axis in
    turn, writing the border of the vector in place (its return value is ignored)."""
    widths = _pairs(pad_width, a.ndim, "pad", "pad_width")
    padded = _np.zeros(tuple(n + b + e for n, (b, e) in zip(a.shape, widths)), dtype=a.dtype,
                       device=_dev(a))
    padded[tuple(slice(b, b + n) for n, (b, _) in zip(a.shape, widths))] = a
    for axis in range(a.ndim):
        view = _np.moveaxis(padded, axis, -1)
        for ind in _onp.ndindex(view.shape[:-1]):
            function(view[ind], widths[axis], axis, kwargs)
    return padded


def pad(array, pad_width, mode="constant", **kwargs):
    """NumPy's pad for the modes constant (constant_values), edge, reflect and symmetric
    (reflect_type), wrap, linear_ramp (end_values), maximum, minimum, mean and median
    (stat_length), and empty (zeros here); differentiable. A function as the mode pads as
    NumPy's does (vector by vector, in place; not differentiable).
    On the CPU the copying modes and a single constant run as one op (_npi_pad); the others are
    built from slices, broadcasts and concatenation."""
    a = _as_array(array)
    if isinstance(pad_width, dict):
        pad_width = _dict_widths(pad_width, a.ndim)
    if callable(mode):
        return _pad_callable(a, pad_width, mode, kwargs)
    if mode not in _PAD_MODES:
        raise ValueError(f"[pad] mode {mode!r} is not supported; expected one of "
                         f"{', '.join(_PAD_MODES)}")
    allowed = {"constant": {"constant_values"}, "linear_ramp": {"end_values"},
               **{m: {"stat_length"} for m in _PAD_STATS}}.get(mode, set())
    if mode in ("reflect", "symmetric"):
        allowed = {"reflect_type"}
    for k in kwargs:
        if k not in allowed:
            raise ValueError(f"[pad] unsupported keyword arguments for mode '{mode}': {k}")
    if mode == "empty":  # NumPy leaves the border undefined: zeros are one such value
        mode = "constant"
    odd = kwargs.get("reflect_type", "even")
    if odd not in ("even", "odd"):
        raise ValueError(f"[pad] reflect_type must be 'even' or 'odd', got {odd!r}")
    odd = odd == "odd"
    lengths = kwargs.get("stat_length")
    if lengths is not None:
        lengths = _pairs(lengths, a.ndim, "pad", "stat_length")
        if mode in ("maximum", "minimum") and any(0 in pair for pair in lengths):
            raise ValueError("[pad] stat_length of 0 yields no value for padding")
    widths = _pairs(pad_width, a.ndim, "pad", "pad_width")
    if mode == "constant":  # (after _pairs: a constant_values of a bad shape is its error)
        _pairs(kwargs.get("constant_values", 0), a.ndim, "pad", "constant_values", False)
        _check_constants(kwargs.get("constant_values", 0), a)
    total = math.prod(n + b + e for n, (b, e) in zip(a.shape, widths))
    if total > 1 << 40:  # before building index arrays of that length
        raise ValueError(f"[pad] the padded array would have {total} elements: array is too "
                         f"big")
    if mode in _PAD_OP_MODES and a.device.device_type == "cpu" and not odd:
        value = _pad_op_value(a, mode, kwargs.get("constant_values", 0))
        if value is not None:  # one pass (shape.cc), differentiable
            return _pad_op(a, pad_width=tuple(w for pair in widths for w in pair), mode=mode,
                           constant_value=value)
    if not _np._core._autograd_is_recording():
        if mode == "constant":
            return _pad_constant(a, widths, kwargs.get("constant_values", 0))
        if mode in ("reflect", "symmetric", "wrap", "edge") and a.size and not odd and all(
                max(w) <= (n - 1 if mode == "reflect" else n) or mode == "edge"
                for n, w in zip(a.shape, widths)):
            return _pad_in_place(a, widths, mode)
    for axis, (before, after) in enumerate(widths):
        if before == 0 and after == 0:
            continue
        n = a.shape[axis]
        if n == 0 and mode != "constant":
            raise ValueError(f"[pad] can't extend empty axis {axis} using modes other than "
                             f"'constant' or 'empty'")
        if mode == "constant":
            cv = _pairs(kwargs.get("constant_values", 0), a.ndim, "pad", "constant_values",
                        integer=False)[axis]
            parts = [_side(a, axis, before, _np.array(cv[0], device=_dev(a)).astype(a.dtype)),
                     a, _side(a, axis, after, _np.array(cv[1], device=_dev(a)).astype(a.dtype))]
        elif mode == "edge":
            parts = [_side(a, axis, before, _slab(a, axis, 0, 1)), a,
                     _side(a, axis, after, _slab(a, axis, n - 1, n))]
        elif mode in ("reflect", "symmetric") and odd and not (mode == "reflect" and n == 1):
            a = _reflect_odd(a, axis, before, after, mode)
            continue
        elif mode in ("reflect", "symmetric", "wrap"):
            if mode == "reflect" and n == 1:
                parts = [_side(a, axis, before, a), a, _side(a, axis, after, a)]
            else:
                a = _periodic(a, axis, before, after, mode)
                continue
        elif mode in _PAD_STATS:
            a = _pad_stat(a, axis, before, after, mode, None if lengths is None else
                          lengths[axis])
            continue
        else:  # linear_ramp: from end_value to the edge, the edge itself excluded
            ev = _pairs(kwargs.get("end_values", 0), a.ndim, "pad", "end_values",
                        integer=False)[axis]
            parts = [a]
            for side, width in ((0, before), (1, after)):
                if width == 0:
                    continue
                edge = _slab(a, axis, 0, 1) if side == 0 else _slab(a, axis, n - 1, n)
                # NumPy's linspace(end_value, edge, width, endpoint=False): start + i * step
                # with step = (edge - start) / width, in float64 (its end values are NumPy
                # scalars, which promote a float32 edge; complex128 keeps an imaginary part),
                # then cast to a's dtype.
                work = "complex128" if _kind(a) == "c" else "float64"
                shape = [1] * a.ndim
                shape[axis] = width
                i = _np.arange(width, dtype=work, device=_dev(a)).reshape(tuple(shape))
                if side == 1:
                    i = flip(i, axis)
                delta = _np.subtract(edge.astype(work), ev[side])
                step = _np.true_divide(delta, float(width))
                if bool(_np.any(_np.equal(step, 0))):  # NumPy's other form then, for all
                    ramp = _np.add(_np.multiply(_np.true_divide(i, float(width)), delta),
                                   ev[side])
                else:
                    ramp = _np.add(_np.multiply(i, step), ev[side])
                # NumPy's integer linspace floors (not bool's: any nonzero step is True).
                ramp = (_np.floor(ramp) if _kind(a) in "iu" else ramp).astype(a.dtype)
                parts.insert(0 if side == 0 else len(parts), ramp)
            a = _np.concatenate(parts, axis=axis)
            continue
        a = _np.concatenate([p for p in parts if p.shape[axis]], axis=axis)
    return a if any(b or e for b, e in widths) else copy(a)


# ---------------------------------------------------------- array facts, conversion, copying
def ndim(a):
    """The number of dimensions of a (of np.asarray(a) for host data)."""
    return a.ndim if isinstance(a, _np.ndarray) else _onp.ndim(a)


def shape(a):
    """The shape of a, a tuple (of np.asarray(a) for host data)."""
    return tuple(a.shape) if isinstance(a, _np.ndarray) else _onp.shape(a)


def size(a, axis=None):
    """The number of elements of a, or along the given axis or axes."""
    dims = shape(a)
    if axis is None:
        return math.prod(dims)
    axes = _axis_list(axis, len(dims), "size")  # (repeats are a ValueError there)
    return math.prod(dims[i] for i in axes)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """np.asarray (ndx has no ndarray subclasses to pass through)."""
    return _np.asarray(a, dtype=dtype, order=order, device=device, copy=copy, like=like)


def asarray_chkfinite(a, dtype=None, order=None):
    """np.asarray, and a ValueError if a floating or complex result holds an inf or NaN."""
    x = _np.asarray(a, dtype=dtype, order=order)
    if _kind(x) in "fc" and x.size and not bool(_np.all(_np.isfinite(x))):
        raise ValueError("[asarray_chkfinite] array must not contain infs or NaNs")
    return x


_KIND_ORDER = "biufc"  # NumPy's weak Python scalars take dst's dtype up to its kind


def _weak_scalar_dtype(value, dst_dtype):
    """The dtype NumPy checks a Python scalar's cast from: dst's own when the scalar's kind
    is not above dst's (an int into float32), else the scalar kind's widest (a float into an
    int array: float64, which same_kind refuses). None for anything else."""
    for kind, dt in ((bool, "bool"), (int, "int64"), (float, "float64"), (complex, "complex128")):
        if isinstance(value, kind):
            own = _onp.dtype(dt)
            if dst_dtype.kind == "b" and own.kind != "b":
                return own
            return dst_dtype if _KIND_ORDER.index(own.kind) <= _KIND_ORDER.index(
                dst_dtype.kind) else own
    return None


def _rules_dtype(a):
    """a's dtype for NumPy's casting rules (bfloat16, which NumPy lacks, as float32)."""
    return _onp.dtype("float32") if a.dtype == "bfloat16" else _onp.dtype(a.dtype)


def copyto(dst, src, casting="same_kind", where=True):
    """Copies src into dst (broadcast to dst's shape) where `where` is True, after checking
    that src's dtype casts to dst's under `casting` (NumPy's rules; Python scalars weakly)."""
    if not isinstance(dst, _np.ndarray):
        raise TypeError(f"[copyto] dst must be an ndx ndarray, got {type(dst).__name__}")
    if not dst._writeable():  # (before the dtypes, as NumPy checks)
        raise ValueError("[copyto] assignment destination is read-only")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError("[copyto] casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                         f"or 'unsafe', got {casting!r}")
    dst_dtype = _rules_dtype(dst)
    src_dtype = None
    if not isinstance(src, (_np.ndarray, _onp.ndarray, _onp.generic)):
        src_dtype = _weak_scalar_dtype(src, dst_dtype)
    if src_dtype is None:
        if not isinstance(src, _np.ndarray):  # host data keeps its own dtype (lists: float64)
            src = _np.array(_onp.asarray(src), device=dst.device)
        src_dtype = _rules_dtype(src)
    elif dst_dtype.kind in "iu" and not isinstance(src, bool) and isinstance(src, int):
        info = _onp.iinfo(dst_dtype)
        if not info.min <= src <= info.max:
            raise OverflowError(f"[copyto] Python integer {src} out of bounds for {dst_dtype}")
    if not _onp.can_cast(src_dtype, dst_dtype, casting):
        raise TypeError(f"[copyto] cannot cast array data from {src_dtype} to {dst_dtype} "
                        f"according to the rule {casting!r}")
    if where is True:
        dst[...] = src
        return
    mask = _as_array(where, dst)
    if mask.dtype != _onp.bool_:
        raise TypeError(f"[copyto] where must be a bool array, got {mask.dtype}")
    dst[...] = _np.where(mask, src, dst)


# ---------------------------------------------------------------------------- block, masks
def _block_depth(x, index):
    """The nesting depth of the lists in x (0 for an array), checked as NumPy checks it."""
    if type(x) is tuple:
        raise TypeError(f"[block] arrays{''.join(f'[{i}]' for i in index)} is a tuple: only "
                        "lists can be used to arrange blocks")
    if type(x) is not list:
        return 0
    if not x:
        raise ValueError(f"[block] lists cannot be empty (arrays"
                         f"{''.join(f'[{i}]' for i in index)} is)")
    depths = [_block_depth(item, index + [i]) for i, item in enumerate(x)]
    if any(d != depths[0] for d in depths):
        raise ValueError("[block] list depths are mismatched: every array must be nested in "
                         f"the same number of lists, got depths {sorted(set(depths))}")
    return depths[0] + 1


def _block_leaves(x):
    if type(x) is list:
        for item in x:
            yield from _block_leaves(item)
    else:
        yield x


def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists are joined along
    the last axis, the next ones along the second last, and so on; blocks get leading axes of
    length 1 up to the result's dimensions (max of the nesting depth and the blocks' ndim)."""
    depth = _block_depth(arrays, [])
    # (host blocks join the first ndx block's device)
    like = next((x for x in _block_leaves(arrays) if isinstance(x, _np.ndarray)), None)
    leaves = [_as_array(x, like) for x in _block_leaves(arrays)]
    ndim_out = max([depth] + [x.ndim for x in leaves])
    it = iter(leaves)

    def assemble(x, level):
        if type(x) is not list:
            a = next(it)
            return a.reshape((1,) * (ndim_out - a.ndim) + tuple(a.shape))
        parts = [assemble(item, level + 1) for item in x]
        return _np.concatenate(parts, axis=ndim_out - depth + level)

    out = assemble(arrays, 0)
    return _np.copy(out) if depth == 0 else out


def mask_indices(n, mask_func, k=0):
    """The indices of the nonzero entries of mask_func(ones((n, n)), k), e.g. np.triu."""
    n = _index(n, "n", "mask_indices")
    mask = mask_func(_np.ones((n, n), dtype="int64"), k)
    return _np.nonzero(_np.not_equal(mask, 0))
