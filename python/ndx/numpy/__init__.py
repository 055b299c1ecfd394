"""ndx.numpy: NumPy's API over ndx arrays. Functions are generated from the registry
(``_np_*`` ops as they are); the few below hold logic NumPy's signatures need."""
import builtins as _builtins
import ctypes as _ctypes
import math as _math
import operator as _operator

import numpy as _onp

# ndx's dtypes are NumPy's scalar types: below NumPy's own, with the abstract ones (generic,
# number, integer, floating, ...) for issubdtype / isinstance checks and the C-type aliases
# (intp, int_, single, double, ...) of the dtypes ndx has.
from numpy import (  # noqa: F401
    bool_,
    byte,
    cdouble,
    complex64,
    complex128,
    complexfloating,
    csingle,
    double,
    float16,
    float32,
    float64,
    floating,
    generic,
    half,
    inexact,
    int8,
    int16,
    int32,
    int64,
    int_,
    intc,
    integer,
    intp,
    long,
    longlong,
    number,
    short,
    signedinteger,
    single,
    ubyte,
    uint,
    uint8,
    uint16,
    uint32,
    uint64,
    uintc,
    uintp,
    ulong,
    ulonglong,
    unsignedinteger,
    ushort,
)

from .. import _api_internal, _core
from .. import device as _device
from .._registry import NUMPY_POSITIONAL as _NUMPY_POSITIONAL
from .._registry import internal_function as _internal_function
from .._registry import ops as _ops
from .._registry import populate as _populate
from ._dtype_utils import (  # noqa: F401
    NAN,
    NINF,
    NZERO,
    PINF,
    PZERO,
    NaN,
    boolean_dtypes,
    can_cast,
    common_type,
    euler_gamma,
    finfo,
    floating_dtypes,
    iinfo,
    integer_dtypes,
    isdtype,
    issubdtype,
    min_scalar_type,
    numeric_dtypes,
    promote_types,
)

ndarray = _core.ndarray
dtype = _onp.dtype  # ndx's dtypes are NumPy's (MXNet's np.dtype is NumPy's too)
bfloat16 = "bfloat16"
result_type = _core.result_type
pi = _onp.pi
e = _onp.e
inf = _onp.inf
nan = _onp.nan
newaxis = None

_invoke = _core._invoke


def _handle(name):
    return _ops()[name].handle


def _default_float():
    return _core._default_float()


def _device_for(x):
    """The device= that makes a new array beside x: x's device for an ndarray off the CPU, else
    None (the creation functions' C fast path, which makes arrays on the CPU)."""
    if not isinstance(x, ndarray):
        return None
    d = x.device
    return None if d == "cpu(0)" else d


def _check_device(device, fn):
    """Refuses devices this build cannot place arrays on (everything but the CPU until the
    CUDA backend lands) rather than returning a CPU array the caller did not ask for."""
    if device is None:
        return
    try:
        _ffi_empty((0,), "bool", device)  # the FFI's device parsing and per-device kernels
    except NotImplementedError:
        raise NotImplementedError(
            f"[{fn}] device {device!r} is not available in this build (CPU only)") from None
    except ValueError as e:
        raise ValueError(f"[{fn}] {e}") from None


_HERE = object()  # device= of the creation functions' calls of their own: where it is made


def _array_py(object, dtype=None, copy=True, device=None, *, order="K", subok=False, ndmin=0,
              like=None, ctx=None):
    """An ndarray from a list, scalar, NumPy array or ndarray. Python floats become the default
    float dtype (float32) where NumPy would pick float64; NumPy arrays and scalars keep their
    dtype.
    copy: True always copies, None copies only when needed, False never (ValueError when a
    copy is needed: anything but an ndarray of the dtype asked for). ndmin prepends axes."""
    device = _ctx_alias(device, ctx, "array")
    if device is _HERE:  # a call of these functions' own: no scope's device applies
        device = None
    elif device is None:  # inside `with mx.gpu(0):`, that device (MXNet's current context)
        device = _device._scoped_default()
    _check_device(device, "array")
    if order not in ("K", "A", "C", "F", None):
        raise ValueError(f"[array] order must be one of 'K', 'A', 'C', 'F', got {order!r}")
    if order == "F":  # column-major: the values laid out as NumPy's order='F' lays them out
        out = _array_py(object, dtype=dtype, copy=copy, device=device or _HERE, ndmin=ndmin)
        return out if out.ndim < 2 or out.flags.f_contiguous else _in_order(out, "F")
    ndmin = _operator.index(ndmin)
    if device is not None:
        out = _array_py(object, dtype=dtype, copy=copy, device=_HERE,
                        ndmin=ndmin).to_device(device)
    elif isinstance(object, ndarray):
        same = dtype is None or object.dtype == dtype
        if copy is False and not same:
            raise ValueError(f"[array] Unable to avoid copy while creating an array as requested"
                             f" (copy=False, {object.dtype} -> {dtype})")
        if not same:
            out = object.astype(dtype)
        else:
            out = object.copy() if copy else object
    elif copy is False:  # shares a NumPy array's (any DLPack producer's) memory, or raises
        from ._interop import _shared_view
        out = _shared_view(object, dtype)
        if out is None:
            raise ValueError("[array] Unable to avoid copy while creating an array as requested "
                             f"(copy=False from {type(object).__name__})")
    else:
        out = _array_from_host(object, dtype)
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def _array_from_host(object, dtype):
    if isinstance(object, _onp.ndarray):
        src = object
    elif isinstance(object, _onp.generic) and _scalar_dtype_kept(object.dtype):
        # A NumPy scalar carries its dtype, as an array does (NumPy and MXNet both keep it);
        # only Python floats take the default float dtype.
        src = _onp.asarray(object)
    elif dtype is not None and dtype != bfloat16:
        src = _onp.asarray(object, dtype=dtype)  # NumPy's range checks (OverflowError)
    else:
        src = _onp.asarray(object)
        if dtype is None and src.dtype == _onp.float64:
            src = src.astype(_default_float())
        elif dtype is None and src.dtype == _onp.complex128 and _default_float() != "float64":
            src = src.astype(_onp.complex64)  # Python complex follows the default float too
    if src.dtype.kind == "O":
        raise TypeError(f"[array] cannot make an ndarray from objects of type {type(object)}")
    if dtype is not None and dtype != bfloat16:
        src = src.astype(dtype, copy=False)
    try:
        out = _core._from_buffer(src)
    except NotImplementedError:  # strides that are not whole elements: a field of a record
        out = _core._from_buffer(_onp.ascontiguousarray(src))
    if dtype == bfloat16:
        out = out.astype(bfloat16)
    return out


def _asarray_py(a, dtype=None, device=None, *, copy=None, order=None, like=None, ctx=None):
    """`a` itself when it is already an ndarray of that dtype (and copy is not True), else
    array(a, dtype, copy). The third positional argument may be the order, as NumPy's."""
    device = _ctx_alias(device, ctx, "asarray")
    order, device = _order_device(device, None, order, "asarray")
    if device is _HERE:
        device = None
    elif device is None and not isinstance(a, ndarray):  # host data: the scope's device
        device = _device._scoped_default()
    _check_device(device, "asarray")
    if device is not None:
        return _asarray_py(a, dtype=dtype, copy=copy, device=_HERE).to_device(device)
    if copy is not True and isinstance(a, ndarray) and (dtype is None or a.dtype == dtype) \
            and (order != "F" or a.ndim < 2 or a.flags.f_contiguous):
        return a
    return _array_py(a, dtype=dtype, copy=copy, device=_HERE, order=order)


_ffi_zeros = _api_internal.zeros
_ffi_ones = _api_internal.ones
_ffi_empty = _api_internal.empty
_ffi_full = _api_internal.full
_ffi_arange = _api_internal.arange


_ORDERS = ("C", "F", "A", "K")


def _order_device(third, device, order, fn):
    """(order, device) of a creation call: NumPy's third positional argument is the memory
    order ('C' / 'F'), ndx's (and MXNet's ctx) a device; 'C', 'F', 'A' or 'K' there is an
    order (a device string such as 'cpu' is a device)."""
    if isinstance(third, str) and third in _ORDERS:
        if order is not None:
            raise TypeError(f"[{fn}] got the order twice (positionally and as order=)")
        order, third = third, None
    if third is not None:
        if device is not None:
            raise TypeError(f"[{fn}] got the device twice (positionally and as device=)")
        device = third
    if order is not None and order not in _ORDERS:
        raise ValueError(f"[{fn}] order must be one of 'C', 'F', 'A', 'K', got {order!r}")
    return order, device


def _ctx_alias(device, ctx, fn):
    """device= or MXNet 1.x's name for it, ctx= (not both)."""
    if ctx is None:
        return device
    if device is not None:
        raise TypeError(f"[{fn}] got both device= and ctx= (MXNet's name for device)")
    return ctx


def _in_order(a, order):
    """a itself for C order, an F-contiguous array of a's values for 'F'."""
    if order != "F" or a.ndim < 2:
        return a
    return transpose(transpose(a).copy())


def _zeros_py(shape, dtype=None, device=None, *, order=None, like=None, ctx=None):
    """A new array of zeros (float32 unless dtype says otherwise); order 'F' lays it out in
    column-major order (the third positional argument may be the order, as NumPy's)."""
    order, device = _order_device(_ctx_alias(device, ctx, "zeros"), None, order, "zeros")
    return _in_order(_ffi_zeros(shape, dtype, device), order)


def _ones_py(shape, dtype=None, device=None, *, order=None, like=None, ctx=None):
    """A new array of ones (float32 unless dtype says otherwise)."""
    order, device = _order_device(_ctx_alias(device, ctx, "ones"), None, order, "ones")
    return _in_order(_ffi_ones(shape, dtype, device), order)


def _empty_py(shape, dtype=None, device=None, *, order=None, like=None, ctx=None):
    """A new array whose contents are not initialized."""
    order, device = _order_device(_ctx_alias(device, ctx, "empty"), None, order, "empty")
    return _in_order(_ffi_empty(shape, dtype, device), order)


def _scalar_dtype_kept(t):
    """Whether a NumPy scalar of dtype t keeps it in array / full: the dtypes ndx has (not
    longdouble, strings, dates)."""
    return t.kind in "biu" or (t.kind == "f" and t.itemsize <= 8) or \
        (t.kind == "c" and t.itemsize <= 16)


def _full_py(shape, fill_value, dtype=None, device=None, *, order=None, like=None, ctx=None):
    order, device = _order_device(_ctx_alias(device, ctx, "full"), None, order, "full")
    return _in_order(_full_c_order(shape, fill_value, dtype, device), order)


def _dtype_kind(dtype):
    """NumPy's kind letter of a dtype argument ('f' for bfloat16, which NumPy lacks; None for
    None or names nobody knows)."""
    if dtype is None:
        return None
    try:
        return _onp.dtype(dtype).kind
    except TypeError:
        return "f" if str(dtype) == "bfloat16" or getattr(dtype, "__name__", "") == "bfloat16" \
            else None


def _is_integer_dtype(dtype):
    return _dtype_kind(dtype) in ("i", "u")


def _full_c_order(shape, fill_value, dtype=None, device=None):
    """A new array filled with fill_value. Without dtype: a NumPy scalar's own dtype, bool for a
    bool value, int64 for an int, the default float dtype otherwise. An array fill_value (0-d,
    or broadcastable to shape, as NumPy and MXNet take) is broadcast, and the result has its
    dtype unless dtype says otherwise; values cast as NumPy's copyto(casting='unsafe')."""
    if isinstance(fill_value, (ndarray, _onp.ndarray, list, tuple)):
        fill = fill_value if isinstance(fill_value, ndarray) else asarray(fill_value)
        shape = (shape,) if isinstance(shape, (int, _onp.integer)) else tuple(shape)
        # broadcastable to shape itself (NumPy's broadcast_shapes stops at 32 dimensions)
        ok = fill.ndim <= len(shape) and _builtins.all(
            f in (1, s) for f, s in zip(reversed(fill.shape), reversed(shape)))
        if not ok:
            raise ValueError(f"[full] fill_value of shape {fill.shape} cannot be broadcast to "
                             f"shape {shape}")
        # astype copies (a fresh, writable array) and is recorded, so autograd sees through
        out = _invoke(_handle("_np_broadcast_to"), (fill,), {"shape": shape})
        out = out.astype(fill.dtype if dtype is None else dtype)
        return out if device is None else out.to_device(device)
    if dtype is None:
        if isinstance(fill_value, _onp.generic) and _scalar_dtype_kept(fill_value.dtype):
            dtype = fill_value.dtype  # NumPy's, and MXNet's np.array(fill_value).dtype
        elif isinstance(fill_value, (bool, _onp.bool_)):
            dtype = "bool"
        elif isinstance(fill_value, (int, _onp.integer)):
            dtype = "int64"
    if isinstance(fill_value, (complex, _onp.complexfloating)):
        if _dtype_kind(dtype) == "b":  # the value's truth, as NumPy's copyto
            return _full_c_order(shape, bool(fill_value), dtype, device)
        if _dtype_kind(dtype) in ("i", "u", "f"):  # the real part, with NumPy's warning
            import warnings
            warnings.warn("Casting complex values to real discards the imaginary part",
                          _onp.exceptions.ComplexWarning, stacklevel=3)
            return _full_c_order(shape, fill_value.real, dtype, device)
        value = _array_py(complex(fill_value), dtype=dtype)
        return zeros(shape, value.dtype, device) + value
    if isinstance(fill_value, (float, _onp.floating)) and _is_integer_dtype(dtype):
        # a float cast to an integer dtype, as astype casts it (saturating), not checked as
        # a Python integer would be: full(3, -1.0, dtype=uint32) is 0
        value = _array_py(float(fill_value), dtype="float64").astype(dtype)
        return _full_c_order(shape, value, dtype, device)
    return _ffi_full(shape, fill_value, dtype, device)


# The C versions serve the common calls (shapes of ints, lists of Python numbers, ndarrays and
# NumPy arrays) without a Python frame and defer to the functions above for everything else.
_core._set_creation_fallbacks(_zeros_py, _ones_py, _empty_py, _full_py, _array_py, _asarray_py)
zeros, ones, empty, full = _core.zeros, _core.ones, _core.empty, _core.full
array, asarray = _core.array, _core.asarray


def arange(start, stop=None, step=1, dtype=None, device=None, *, ctx=None):
    """Evenly spaced values in [start, stop). Integer arguments give int64 as in NumPy; float
    arguments give the default float dtype (float32), float64 where one of them is a float64
    NumPy scalar or 0-d array. step=None means 1, as in NumPy."""
    device = _ctx_alias(device, ctx, "arange")
    if step is None:
        step = 1
    if dtype is None and _builtins.all(
            (isinstance(v, (int, _onp.integer)) and not isinstance(v, bool))
            or (isinstance(v, ndarray) and v.ndim == 0 and v.dtype.kind in "iu")
            for v in (start, stop, step) if v is not None):
        dtype = "int64"
    elif dtype is None and _builtins.any(
            getattr(v, "dtype", None) == _onp.float64 and _onp.ndim(v) == 0
            for v in (start, stop, step)):
        dtype = "float64"  # a float64 NumPy scalar or 0-d array keeps its precision (NumPy's)
    try:
        bounds = float(start), None if stop is None else float(stop), float(step)
    except TypeError:
        for name, v in (("start", start), ("stop", stop), ("step", step)):
            if _onp.size(v) > 1:  # NumPy's ValueError (an array's ambiguous truth value)
                raise ValueError(f"[arange] {name} must be a scalar, got an array of shape "
                                 f"{_onp.shape(v)}") from None
        raise
    return _ffi_arange(*bounds, dtype, device)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None, ctx=None):
    """num evenly spaced samples from start to stop (NumPy's and MXNet's signature).
    Array-like start / stop broadcast against each other, the samples along `axis` of the
    result; retstep=True also returns the spacing (NaN when there is none)."""
    device = _ctx_alias(device, ctx, "linspace")
    if not isinstance(retstep, (bool, _onp.bool_, int)):  # (dtype was once 5th positional)
        raise TypeError(f"[linspace] retstep must be a bool, got {retstep!r}")
    if _onp.ndim(start) == 0 and _onp.ndim(stop) == 0 and not _onp.iscomplexobj(start) and \
            not _onp.iscomplexobj(stop) and not _manipulation._complex_dtype(dtype):
        _manipulation._moved_axis(axis, 1, "linspace")  # 0 or -1 (NumPy's moveaxis rules)
        params = {"start": float(start), "stop": float(stop), "num": num,
                  "endpoint": endpoint, "dtype": dtype}
        out = _invoke(_handle("_npi_linspace"), (), params, None, device)
        div = (num - 1) if endpoint else num
        step = (float(stop) - float(start)) / div if div > 0 else float("nan")
    else:
        out, step = _manipulation._linspace_arrays(start, stop, num, endpoint, dtype, axis,
                                                    device)
    return (out, step) if retstep else out


def eye(N, M=None, k=0, dtype=None, device=None, *, order=None, like=None, ctx=None):
    """A 2-d array with ones on the k-th diagonal (order 'F': column-major; the fifth
    positional argument may be the order, as NumPy's)."""
    order, device = _order_device(_ctx_alias(device, ctx, "eye"), None, order, "eye")
    return _in_order(_invoke(_handle("_npi_eye"), (), {"N": N, "M": M, "k": k, "dtype": dtype},
                             None, device), order)


concatenate = _core.concatenate  # C: attributes parsed once per (inputs, axis)
stack = _core.stack


def split(ary, indices_or_sections, axis=0):
    """Splits into equal sections (an int) or at the given indices (a sequence): views of ary,
    as NumPy's (copies while autograd records or hybridize traces, through the split op)."""
    if (isinstance(ary, ndarray) and ary.ndim and not _core._autograd_is_recording()
            and not _core._is_tracing()):
        views = _split_views(ary, indices_or_sections, axis)
        if views is not None:
            return views
    if isinstance(indices_or_sections, (int, _onp.integer)):
        params = {"sections": int(indices_or_sections), "axis": axis}
    else:
        params = {"indices": tuple(indices_or_sections), "axis": axis}
    out = _invoke(_handle("_npi_split"), (ary,), params)
    return list(out) if isinstance(out, tuple) else [out]


def _split_views(a, indices_or_sections, axis):
    """split's pieces as slices of a, or None where the op decides (errors, float counts)."""
    if isinstance(axis, bool) or not isinstance(axis, (int, _onp.integer)):
        return None
    if not -a.ndim <= axis < a.ndim:
        return None
    if isinstance(indices_or_sections, (int, _onp.integer)):
        sections = int(indices_or_sections)
        if sections == 0:  # (NumPy's error, once the axis is known to be good)
            raise ZeroDivisionError("[split] integer modulo by zero: 0 sections")
        if sections < 0 or a.shape[axis] % sections:
            return None
    elif not (isinstance(indices_or_sections, (list, tuple)) and _builtins.all(
            isinstance(i, (int, _onp.integer)) and not isinstance(i, bool)
            for i in indices_or_sections)):
        return None
    return _manipulation.array_split(a, indices_or_sections, int(axis))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """x with NaN replaced by `nan` and infinities by `posinf` / `neginf` (by default the
    dtype's largest finite values); integers and bool unchanged. copy=False writes into x."""
    params = {"nan": nan, "posinf": posinf, "neginf": neginf}
    if not isinstance(x, ndarray):
        x = asarray(x)
    if _is_complex(x):  # each part on its own, as NumPy
        parts = [_invoke(_handle("_npi_nan_to_num"), (p,), params) for p in (real(x), imag(x))]
        r = parts[0] + parts[1] * 1j
        if not copy:
            x[...] = r
            return x
        return r
    if not copy:
        return _invoke(_handle("_npi_nan_to_num"), (x,), params, x)
    return _invoke(_handle("_npi_nan_to_num"), (x,), params)


def ldexp(x1, x2, out=None):
    """x1 * 2 ** x2 for integer exponents x2 (a Python int exponent is an integer here, not a
    weak scalar taking x1's float dtype)."""
    if isinstance(x2, (int, _onp.integer, _onp.bool_)):  # (bool too: True is 1, as NumPy's)
        x2 = array(int(x2), dtype="int64", device=_device_for(x1))
    return _invoke(_handle("_np_ldexp"), (x1, x2), {}, out)


_populate(globals(), "_np_", positional_orders=_NUMPY_POSITIONAL)
# Generated above (names the linter cannot see).
_maximum, _minimum, _zeros_like = (globals()[n] for n in ("maximum", "minimum", "zeros_like"))
_where_op = globals().pop("where")  # the ops; np.where / np.searchsorted wrap them below
_searchsorted_op = globals().pop("searchsorted")
from . import _composites, _manipulation, _where_reductions  # noqa: E402
from ._composites import (  # noqa: E402, F401
    allclose,
    alltrue,
    apply_along_axis,
    apply_over_axes,
    argpartition,
    argwhere,
    array_equal,
    array_equiv,
    average,
    bincount,
    choose,
    compress,
    convolve,
    corrcoef,
    correlate,
    cov,
    cumulative_prod,
    cumulative_sum,
    diagonal,
    diff,
    digitize,
    ediff1d,
    extract,
    flatnonzero,
    gradient,
    histogram,
    histogram2d,
    histogram_bin_edges,
    histogramdd,
    in1d,
    intersect1d,
    isclose,
    isin,
    lexsort,
    median,
    msort,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmedian,
    nanmin,
    nanpercentile,
    nanprod,
    nanquantile,
    nanstd,
    nansum,
    nanvar,
    nonzero,
    partition,
    percentile,
    piecewise,
    ptp,
    put,
    quantile,
    repeat,
    resize,
    searchsorted,
    select,
    setdiff1d,
    setxor1d,
    sort_complex,
    spacing,
    std,
    take,
    trace,
    trapezoid,
    trapz,
    union1d,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
    unwrap,
    var,
    where,
)
from ._manipulation import (  # noqa: E402, F401
    append,
    array_split,
    asanyarray,
    asarray_chkfinite,
    ascontiguousarray,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    bartlett,
    blackman,
    block,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    column_stack,
    concat,
    copyto,
    delete,
    diag,
    diag_indices,
    diag_indices_from,
    diagflat,
    dsplit,
    dstack,
    empty_like,
    expand_dims,
    fill_diagonal,
    flip,
    fliplr,
    flipud,
    frombuffer,
    fromfunction,
    full_like,
    geomspace,
    hamming,
    hanning,
    hsplit,
    hstack,
    i0,
    identity,
    indices,
    insert,
    ix_,
    kaiser,
    logspace,
    mask_indices,
    matrix_transpose,
    meshgrid,
    moveaxis,
    ndim,
    ones_like,
    packbits,
    pad,
    permute_dims,
    place,
    put_along_axis,
    putmask,
    ravel,
    ravel_multi_index,
    reshape,
    roll,
    rollaxis,
    rot90,
    row_stack,
    size,
    squeeze,
    swapaxes,
    take_along_axis,
    tile,
    transpose,
    tri,
    tril,
    tril_indices,
    tril_indices_from,
    trim_zeros,
    triu,
    triu_indices,
    triu_indices_from,
    unpackbits,
    unravel_index,
    unstack,
    vander,
    vsplit,
    vstack,
    zeros_like,
)
from ._manipulation import copy as _copy  # noqa: E402
from ._products import (  # noqa: E402, F401
    cross,
    einsum,
    einsum_path,
    inner,
    interp,
    kron,
    matvec,
    outer,
    poly,
    poly1d,
    polyadd,
    polyder,
    polydiv,
    polyfit,
    polyint,
    polymul,
    polysub,
    polyval,
    roots,
    tensordot,
    vdot,
    vecmat,
)

_where_reductions.install(globals())


_clip_op = _internal_function("_npi_clip")


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, dtype=None,
         where=True, casting="same_kind", order="K", subok=True):  # noqa: F811 (NumPy's name)
    """a limited to [a_min, a_max] (either bound may be None, or an array broadcast against a):
    minimum(maximum(a, a_min), a_max) as NumPy defines it, so NaN stays NaN and a_min > a_max
    gives a_max. min and max are the Array API's names for the bounds; dtype= (the compute
    dtype) and where= (with out=, positions left alone) are NumPy's ufunc keywords."""
    a_min, a_max = _composites._clip_bounds(a_min, a_max, min, max)
    a = a if isinstance(a, ndarray) else asarray(a)
    a_min, a_max = _composites._int_clip_bounds(a, a_min, a_max)
    if dtype is not None or where is not True:
        r = clip(a.astype(dtype) if dtype is not None else a, a_min, a_max)
        if out is None:  # (where= without out: NumPy leaves the other positions unset)
            return r
        copyto(out, r, casting=casting, where=where)
        return out
    if a_min is not None and a_max is not None and out is None:
        return _clip_op(a, a_min, a_max)  # one pass
    r = a
    if a_min is not None:
        r = _maximum(r, a_min)
    if a_max is not None:
        r = _minimum(r, a_max, out=out)
    elif out is not None:
        out[...] = r
        return out
    return r.copy() if r is a else r


_real_op, _imag_op, _conj_op, _angle_op = (globals()[n] for n in (
    "real", "imag", "conjugate", "angle"))  # the ops; the functions below wrap them


def _is_complex(x):
    return x.dtype in (complex64, complex128)


def real(val):
    """The real part of complex val (a view of its memory, as val.real; a copy while autograd
    records); val itself for real dtypes, as NumPy."""
    val = val if isinstance(val, ndarray) else asarray(val)
    if not _is_complex(val):
        return val
    if _core._autograd_is_recording() or _core._is_tracing():
        return _real_op(val)
    return val._complex_part(False)


def imag(val):
    """The imaginary part of complex val (a view, as val.imag); read-only zeros of val's shape
    and dtype for real dtypes, as NumPy's."""
    val = val if isinstance(val, ndarray) else asarray(val)
    if _is_complex(val):
        if _core._autograd_is_recording() or _core._is_tracing():
            return _imag_op(val)
        return val._complex_part(True)
    zeros = _zeros_like(val)
    return zeros._as_strided(zeros.shape, zeros.strides, False)


def conjugate(x, out=None, *, where=True, casting="same_kind", order="K", dtype=None,  # noqa: F811
              subok=True):
    """The complex conjugate; a copy of x for real dtypes (bool becomes int8, as NumPy's).
    dtype= (x cast to it first), where= and casting= are NumPy's ufunc keywords."""
    x = x if isinstance(x, ndarray) else asarray(x)
    if dtype is not None or where is not True:
        if dtype is not None and not can_cast(x.dtype, dtype, casting):
            raise TypeError(f"[conjugate] cannot cast input from {x.dtype} to {dtype} with "
                            f"casting rule {casting!r}")
        r = conjugate(x.astype(dtype) if dtype is not None else x)
        if out is None:
            return r
        copyto(out, r, casting=casting, where=where)
        return out
    if _is_complex(x):
        return _conj_op(x, out=out)
    if out is None:
        return x.astype("int8") if x.dtype == bool_ else x.copy()
    out[...] = x
    return out


conj = conjugate


def angle(z, deg=False):
    """The counterclockwise angle from the positive real axis, in radians (degrees with
    deg=True); 0 or pi for real input."""
    z = z if isinstance(z, ndarray) else asarray(z)
    # Integers and bool: 0 or pi in the default float (bfloat16's dtype is a str, 'bfloat16').
    if not isinstance(z.dtype, str) and z.dtype.kind in "biu":
        z = z.astype(_default_float())
    a = _angle_op(z)
    return a * (180.0 / _onp.pi) if deg else a


def iscomplexobj(x):
    """Whether x has a complex dtype (whatever its values)."""
    return _onp.dtype(getattr(x, "dtype", None) or asarray(x).dtype).kind == "c"


def isrealobj(x):
    """Whether x does not have a complex dtype."""
    return not iscomplexobj(x)


def iscomplex(x):
    """Elementwise: whether the imaginary part is nonzero (False for real dtypes)."""
    x = x if isinstance(x, ndarray) else asarray(x)
    return imag(x) != 0


def isreal(x):
    """Elementwise: whether the imaginary part is zero (True for real dtypes)."""
    x = x if isinstance(x, ndarray) else asarray(x)
    return imag(x) == 0


def real_if_close(a, tol=100):
    """The real part when every imaginary part is within tol machine epsilons of 0."""
    a = a if isinstance(a, ndarray) else asarray(a)
    if not _is_complex(a):
        return a
    eps = _onp.finfo(_onp.float32 if a.dtype == complex64 else _onp.float64).eps
    limit = tol * eps if tol > 1 else tol
    return real(a) if bool((abs(imag(a)) <= limit).all()) else a


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


for _name in ("sum", "mean", "prod", "max", "min", "argmax", "argmin", "squeeze", "swapaxes",
              "dot", "all", "any", "std", "var", "clip", "round", "conj", "conjugate", "cumsum",
              "cumprod", "nonzero", "take", "searchsorted", "argpartition", "diagonal", "trace",
              "repeat", "put"):
    setattr(ndarray, _name, _method(globals()[_name]))
del _name


def _ravel(self, order="C"):
    """The array flattened (a view where the layout allows), read in `order` (np.ravel's)."""
    return self.reshape(-1) if order == "C" else _manipulation.ravel(self, order)


def _fill(self, value):
    """Sets every element to value, in place."""
    self[...] = value


def _tobytes(self, order="C"):
    """The raw bytes of the array's elements in C order."""
    return self.asnumpy().tobytes(order)


def _byteswap(self, inplace=False):
    """The elements with their bytes in reverse order (each part of a complex number on its
    own), as NumPy's byteswap; inplace=True writes them into the array and returns it."""
    parts = 2 if _is_complex(self) else 1
    width = self.itemsize // parts
    if width == 1:
        swapped = self.copy()
    else:
        raw = self.copy().view("uint8").reshape(self.shape + (parts, width))
        swapped = raw[..., ::-1].copy().reshape(self.shape + (self.itemsize,)).view(
            self.dtype).reshape(self.shape)
    if inplace:
        self[...] = swapped
        return self
    return swapped


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    for i in range(self.shape[0]):
        yield self[i]


def _contains(self, value):
    found = self == value  # a plain bool when value cannot be compared (NotImplemented)
    return bool(found.any()) if isinstance(found, ndarray) else bool(found)


def _deepcopy(self, memo):
    return self.copy()


def _complex(self):
    return complex(self.item()) if self.size == 1 else complex(float(self))


def _round_builtin(self, ndigits=None):
    """round(x) / round(x, n) of a 0-d array, as of the NumPy scalar it stands for (ndx's
    reductions and indexing give 0-d arrays where NumPy gives scalars): round(x) is a Python
    int, round(x, n) the 0-d array rounded to n decimals. NumPy's n-d arrays define no
    __round__, so neither do ndx's (TypeError)."""
    if self.ndim != 0:
        raise TypeError("type ndx.numpy.ndarray doesn't define __round__ method")
    kind = getattr(self.dtype, "kind", "f")  # (bfloat16 has no kind: a real float)
    if kind in "bc":  # (NumPy's bool and complex scalars define no __round__)
        raise TypeError(f"type {self.dtype} doesn't define __round__ method")
    if ndigits is None:
        return _builtins.round(self.item())  # (half to even, as NumPy's)
    return globals()["round"](self, _operator.index(ndigits))


def _sort_in_place(self, axis=-1, kind=None, order=None, *, stable=None):
    """Sorts the array in place along axis (stable); order= names fields of a structured
    dtype, which ndx arrays never have (None only, as sort's)."""
    if order is not None:  # (NumPy's error for an array without fields)
        raise ValueError("[sort] Cannot specify order when the array has no fields.")
    self[...] = _sort(self, axis=axis, kind=kind, stable=stable)


def _partition_in_place(self, kth, axis=-1, kind="introselect", order=None):
    """Partitions the array in place along axis (see np.partition)."""
    self[...] = partition(self, kth, axis=axis, kind=kind, order=order)


def _resize_in_place(self, *new_shape, refcheck=True):
    """Resizes the array in place: the first elements in C order kept, new ones zero (unlike
    np.resize, which repeats). Other arrays viewing the old data keep the old data."""
    if len(new_shape) == 1 and not isinstance(new_shape[0], (int, _onp.integer)):
        new_shape = tuple(new_shape[0])
    shape = _composites._shape_tuple(new_shape, "resize")
    flags = self.flags
    if not (flags.c_contiguous or flags.f_contiguous):
        raise ValueError("[resize] resize only works on single-segment arrays")
    if _math.prod(shape) == self.size and flags.c_contiguous:
        self.shape = shape  # the same memory, as NumPy's (views of it see the new layout's data)
        return
    if not flags.owndata:
        raise ValueError("[resize] cannot resize this array: it does not own its data (a view; "
                         "use np.resize, which makes a new array)")
    new = zeros(shape, dtype=self.dtype)
    n = _builtins.min(self.size, new.size)
    if n:
        new.reshape(-1)[:n] = self.reshape(-1)[:n]
    if not self._writeable():  # (a resized read-only array stays read-only, as NumPy's)
        new._set_writeable(False)
    self._become(new)


def _is_c_contiguous(a):
    return _is_contiguous(a.shape, a.strides, a.itemsize)


def _is_contiguous(shape, strides, itemsize):
    """Whether shape / strides (last axis fastest) lay the elements out densely, as NumPy's
    flags see it (axes of length 1 have any stride; an empty array is contiguous)."""
    if 0 in shape:
        return True
    expected = itemsize
    for n, stride in zip(reversed(shape), reversed(strides)):
        if n != 1 and stride != expected:
            return False
        expected *= n
    return True


class flagsobj:
    """a.flags, as NumPy's: the memory layout (C_CONTIGUOUS, F_CONTIGUOUS; FORTRAN (F), FNC,
    FORC, CARRAY, FARRAY, BEHAVED derived from them), WRITEABLE (settable, as setflags(write=)),
    OWNDATA (the array allocated its memory: not a view, not memory another library wrapped),
    ALIGNED (always true for ndx arrays) and WRITEBACKIFCOPY (always false)."""

    _NAMES = {"C": "C_CONTIGUOUS", "CONTIGUOUS": "C_CONTIGUOUS", "F": "F_CONTIGUOUS",
              "W": "WRITEABLE", "A": "ALIGNED", "X": "WRITEBACKIFCOPY",
              "O": "OWNDATA"}

    def __init__(self, a):
        self._array = a
        self._values = {}
        self._read(a)

    def _read(self, a):
        c = _is_contiguous(a.shape, a.strides, a.itemsize)
        f = _is_contiguous(a.shape[::-1], a.strides[::-1], a.itemsize)
        w = a._writeable()
        # (NumPy 2.4's FARRAY is "not C-contiguous", F-contiguous, behaved or not.)
        self._values = {"C_CONTIGUOUS": c, "F_CONTIGUOUS": f, "WRITEABLE": w,
                        "OWNDATA": a._owns_data(),
                        "ALIGNED": True, "WRITEBACKIFCOPY": False, "FORTRAN": f,
                        "FNC": f and not c, "FORC": f or c, "BEHAVED": w, "CARRAY": c and w,
                        "FARRAY": not c}

    def __getitem__(self, key):
        name = self._NAMES.get(key, key) if isinstance(key, str) else key
        if name not in self._values:
            raise KeyError(f"Unknown flag {key!r}")
        return self._values[name]

    def __setitem__(self, key, value):
        name = self._NAMES.get(key, key) if isinstance(key, str) else key
        if name == "WRITEABLE":
            self._array._set_writeable(bool(value))
            self._read(self._array)
            return
        if name == "ALIGNED" and value:
            return
        if name in ("ALIGNED", "WRITEBACKIFCOPY"):
            raise NotImplementedError(f"[flags] ndx arrays cannot set {name} to {value!r}")
        raise KeyError(f"Unknown flag {key!r}")

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name.upper()]
        except KeyError:
            raise AttributeError(f"'flagsobj' object has no attribute {name!r}") from None

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        elif name.upper() in ("WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY"):
            self[name.upper()] = value
        else:  # (NumPy's: the layout flags are not writable attributes)
            raise AttributeError(f"[flags] attribute {name!r} of 'flagsobj' objects is not "
                                 f"writable")

    def __eq__(self, other):
        return isinstance(other, flagsobj) and self._values == other._values

    def __repr__(self):
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
                 "WRITEBACKIFCOPY")
        return "\n".join(f"  {n} : {self._values[n]}" for n in names) + "\n"


class flatiter:
    """a.flat: a 1-d view of a for indexing, assignment and iteration in C order."""

    _index = 0  # the next element's flat index (NumPy's index)
    _flat = None  # the 1-d view iterated over

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return self

    def __next__(self):
        i = self._index
        if i >= self.base.size:
            raise StopIteration
        if self._flat is None:
            self._flat = self.base.reshape(-1)
        self._index = i + 1
        return self._flat[i]

    @property
    def index(self):
        """The flat index of the next element."""
        return self._index

    @property
    def coords(self):
        """The N-d coordinates of the next element (the first runs past its length at the
        end, as NumPy's)."""
        i, coords = self._index, []
        for n in reversed(self.base.shape[1:]):
            i, c = (i // n, i % n) if n else (i, 0)
            coords.append(c)
        return (i, *reversed(coords)) if self.base.ndim else ()

    def _key(self, key):
        """key for the 1-d view (NumPy's IndexError for None or more than one index);
        indexing resets the iteration, as NumPy's does."""
        self._index, self._flat = 0, None
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if isinstance(key, tuple) and len(key) > 1:
            raise IndexError(f"too many indices for flat iterator: flat iterator is "
                             f"1-dimensional, but {len(key)} were indexed")
        if key is None:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`) and integer or "
                             "boolean arrays are valid indices")
        return key

    def __getitem__(self, key):
        if self._index or isinstance(key, tuple) or key is None:
            key = self._key(key)
        return self.base.reshape(-1)[key]

    def __setitem__(self, key, value):
        if isinstance(key, tuple) and not key:
            raise IndexError("Assigning to a flat iterator with a 0-D index is not supported")
        key = self._key(key)
        flat = self.base.reshape(-1)  # a view where the layout allows, else a copy
        if isinstance(value, (list, tuple, _onp.ndarray)) or \
                isinstance(value, ndarray) and value.ndim:
            # NumPy repeats the values (flattened, in C order) over the positions, not
            # broadcasting them; no values write nothing
            if not isinstance(value, ndarray):
                value = _composites._assigned_values(value, self.base)
            if not value.size:
                return
            shape = key.shape if isinstance(key, ndarray) and _composites._kind(key) in "iu" else \
                flat[key].shape  # (an index array: no need to gather)
            if not shape and value.ndim:
                raise ValueError("Error setting single item of array.")
            if value.shape != shape:
                value = _composites.resize(value, shape)
        flat[key] = value
        # While autograd records, reshape gives a recorded copy even of a C-contiguous array:
        # the write must go back through base's own (recorded) assignment.
        if not _is_c_contiguous(self.base) or _core._autograd_is_recording():
            self.base[...] = flat.reshape(self.base.shape)

    def __array__(self, dtype=None, copy=None):
        return self.base.reshape(-1).__array__(dtype)

    def copy(self):
        return self.base.reshape(-1).copy()


def _reduce(self):
    """Pickles as (dtype name, NumPy copy of the data, device)."""
    data = self.asnumpy() if self.dtype != bfloat16 else self.astype("float32").asnumpy()
    return (_empty_for_unpickling, (), (str(self.dtype), data, str(self.device)))


def _empty_for_unpickling():
    return empty((0,))


def _setstate(self, state):
    dtype, data, device = state
    new = array(data, dtype=dtype)
    if device != str(new.device):
        new = new.to_device(device)
    self._become(new)


_sort = globals()["sort"]
ndarray.sort = _sort_in_place
ndarray.argsort = _method(globals()["argsort"])
ndarray.compress = lambda self, condition, axis=None, out=None: compress(condition, self, axis,
                                                                        out)
ndarray.choose = lambda self, choices, out=None, mode="raise": choose(self, choices, out, mode)
ndarray.ravel = _ravel
ndarray.fill = _fill
ndarray.tobytes = _tobytes
ndarray.byteswap = _byteswap
ndarray.__iter__ = _iter
ndarray.__contains__ = _contains
_unrecorded_copy, _unrecorded_view = ndarray.copy, ndarray.view
_positive_op = globals()["positive"]


def _recorded_copy(a):
    """A copy of a made by an op, so autograd differentiates it and hybridize traces it (the
    C++ copy is neither: its result would be a constant, the traced call's values)."""
    return a.astype(a.dtype) if a.dtype == bool_ else _positive_op(a)


def _copy_method(self, order="C"):
    """a.copy(order): while autograd records or hybridize traces, an op (in C order), as
    np.copy and MXNet's copy (its recorded _copyto)."""
    if _core._autograd_is_recording() or _core._is_tracing():
        if order not in ("C", "F", "A", "K", None):
            raise ValueError(f"[copy] order must be one of 'C', 'F', 'A', 'K', got {order!r}")
        return _recorded_copy(self)
    return _unrecorded_copy(self, order)


def _same_dtype(a, dtype):
    """Whether the dtype argument names a's dtype (None does); False for what is no dtype."""
    if dtype is None:
        return True
    if str(dtype) == bfloat16 or a.dtype == bfloat16:
        return str(dtype) == str(a.dtype)
    try:
        return _onp.dtype(dtype) == a.dtype
    except TypeError:
        return False  # (the view itself reports it)


def _view_method(self, dtype=None, type=None):  # noqa: A002 (NumPy's argument name)
    """a.view(): a view of the same memory. A view keeping the dtype of an array autograd
    tracks, while it records, or of any array while hybridize traces, is a recorded copy (as
    basic slices of such arrays are), so gradients flow through it and a traced graph does
    not keep the traced call's values; a plain array's view shares memory as NumPy's."""
    if type is None and _same_dtype(self, dtype) and (_core._is_tracing() or (
            _core._autograd_is_recording() and _core._autograd_has_live_history(self))):
        return _recorded_copy(self)
    return _unrecorded_view(self, dtype, type)


ndarray.copy = _copy_method
ndarray.view = _view_method
ndarray.__copy__ = ndarray.copy
ndarray.__deepcopy__ = _deepcopy
ndarray.__complex__ = _complex
ndarray.__round__ = _round_builtin
def _real_view(self):
    """a.real: for a complex array a view of its real parts (the op's copy while autograd
    records or hybridize traces, so gradients flow), for a real one the array itself, as
    NumPy's."""
    if _is_complex(self) and not (_core._autograd_is_recording() or _core._is_tracing()):
        return self._complex_part(False)
    return real(self)


def _imag_view(self):
    """a.imag: for a complex array a view of its imaginary parts (a copy while autograd
    records); zeros for a real one."""
    if _is_complex(self) and not (_core._autograd_is_recording() or _core._is_tracing()):
        return self._complex_part(True)
    return imag(self)


def _set_real(self, value):
    if _is_complex(self):
        self._complex_part(False)[...] = value
    else:
        self[...] = value


def _set_imag(self, value):
    if not _is_complex(self):
        raise TypeError("array does not have imaginary part to set")
    self._complex_part(True)[...] = value


def _conj_method(self):
    """a.conj() / a.conjugate(): the conjugate of a complex array; a real array itself (bool
    stays bool), as NumPy's method (np.conjugate makes bool int8)."""
    return conjugate(self) if _is_complex(self) else self


ndarray.conj = ndarray.conjugate = _conj_method
ndarray.real = property(_real_view, _set_real,
                        doc="The real part: a view for complex arrays, the array itself for "
                            "real ones (assignable, as NumPy's).")
ndarray.imag = property(_imag_view, _set_imag,
                        doc="The imaginary part: a view for complex arrays, zeros for real ones.")
ndarray.__array_priority__ = 1000.0  # NumPy defers binary operators to ndx arrays
# MXNet 2.0's mx.np.ndarray inherits NDArray's storage type, always 'default' for it (MXNet 1.x
# code checks x.stype on optimizer states and gradients)
ndarray.stype = property(lambda self: "default", doc="Storage type: 'default' (dense).")
ndarray.partition = _partition_in_place
ndarray.resize = _resize_in_place
ndarray.flat = property(flatiter, lambda self, value: flatiter(self).__setitem__(..., value),
                       doc="A flat iterator over the array (C order); a.flat = v writes v, "
                           "repeated as needed, into every element.")
ndarray.flags = property(flagsobj, doc="Information about the memory layout (see flagsobj).")


class _ctypes_view:
    """a.ctypes, as NumPy's: the host memory's address and the shape and strides as ctypes
    arrays, for passing an array to C code through ctypes. It holds the array, so the memory
    lives as long as this object."""

    def __init__(self, array):
        self._array = array
        self._interface = array.__array_interface__  # AttributeError off the host / bfloat16

    @property
    def data(self):
        return self._interface["data"][0]

    @property
    def shape(self):
        return self.shape_as(_ctypes.c_ssize_t)

    @property
    def strides(self):
        return self.strides_as(_ctypes.c_ssize_t)

    @property
    def _as_parameter_(self):
        return _ctypes.c_void_p(self.data)

    def data_as(self, obj):
        """The address cast to a ctypes pointer type, e.g. ctypes.POINTER(ctypes.c_float)."""
        return _ctypes.cast(self.data, obj)

    def shape_as(self, obj):
        return (obj * self._array.ndim)(*self._array.shape)

    def strides_as(self, obj):
        return (obj * self._array.ndim)(*self._array.strides)



ndarray.ctypes = property(_ctypes_view, doc="The array's memory for ctypes (see _ctypes_view).")
ndarray.data = property(memoryview, doc="A memoryview of the array's host memory.")


def _setflags(self, write=None, align=None, uic=None):
    """NumPy's setflags: write=False makes the array read-only (writes raise ValueError);
    write=True undoes that, except for a view of a read-only array (ValueError). ndx arrays are
    always aligned (align=False raises NotImplementedError) and never WRITEBACKIFCOPY (uic=True
    raises ValueError, as NumPy's does for an array that is not)."""
    if align is not None and not align:
        raise NotImplementedError("[setflags] ndx arrays are always aligned")
    if uic:
        raise ValueError("[setflags] cannot set WRITEBACKIFCOPY flag to True")
    if write is not None:
        self._set_writeable(bool(write))


ndarray.setflags = _setflags
ndarray.__divmod__ = lambda self, other: divmod(self, other)
ndarray.__rdivmod__ = lambda self, other: divmod(other, self)
ndarray.__reduce__ = _reduce
ndarray.__setstate__ = _setstate
ndarray.squeeze = lambda self, axis=None: squeeze(self, axis)
ndarray.swapaxes = lambda self, axis1, axis2: swapaxes(self, axis1, axis2)
ndarray.mT = property(lambda self: self.swapaxes(-1, -2), doc="The last two axes swapped.")
# MXNet 2.0's fluent ndarray.broadcast_to(shape) (np.broadcast_to with this array)
ndarray.broadcast_to = lambda self, shape: broadcast_to(self, shape)


def _pin_memory(self):
    """A copy of this CPU array in page-locked host memory (the array itself if it is there
    already), as PyTorch's Tensor.pin_memory: its copies to a GPU (to_device, as_in_ctx,
    copyto) return without waiting for the transfer, which overlaps with the GPU's work. The
    memory is not reused, and ndx's ops do not write into it, before such copies are done;
    a write through a NumPy view of it is the caller's to order (npx.synchronize()).
    Needs a GPU: ValueError without one."""
    return _core._pin_memory(self)


ndarray.pin_memory = _pin_memory
ndarray.is_pinned = lambda self: _core._is_pinned(self)

from . import fft, lib, linalg, random  # noqa: E402, F401
from ._array_api import (  # noqa: E402, F401
    __array_api_version__,
    __array_namespace_info__,
    __getattr__,
    argsort,
    astype,
    sort,
    vecdot,
)
from ._array_api import result_type as _result_type  # noqa: E402

result_type = _result_type  # Python scalars too; rebinds the C one of the top (ruff F811)
ndarray.argsort = _method(argsort)  # (the Array API's argsort, with order= and descending=)
from . import emath, polynomial, testing  # noqa: E402, F401
from ._file_io import (  # noqa: E402, F401
    fromfile,
    genfromtxt,
    load,
    loadtxt,
    save,
    savetxt,
    savez,
    savez_compressed,
)
from ._index_tricks import c_, index_exp, mgrid, ogrid, r_, s_  # noqa: E402, F401
from ._interop import from_dlpack, may_share_memory, shares_memory  # noqa: E402, F401
from ._printing import (  # noqa: E402, F401
    array2string,
    array_repr,
    array_str,
    get_printoptions,
    printoptions,
    set_printoptions,
)
from ._utilities import (  # noqa: E402, F401
    False_,
    ScalarType,
    True_,
    asfortranarray,
    base_repr,
    binary_repr,
    broadcast,
    errstate,
    exceptions,
    format_float_positional,
    format_float_scientific,
    fromiter,
    frompyfunc,
    fromstring,
    geterr,
    geterrcall,
    isfortran,
    isscalar,
    iterable,
    little_endian,
    mintypecode,
    ndenumerate,
    ndindex,
    nditer,
    require,
    sctypeDict,
    seterr,
    seterrcall,
    typecodes,
    typename,
    ufunc,
    vectorize,
)

copy = _copy  # bound here: parameters named copy above would shadow an import (ruff F811)
shape = _manipulation.shape  # (the same for shape)

__all__ = [n for n in globals() if not n.startswith("_") and n not in ("builtins",)]

# NEP 13 / NEP 18: NumPy's ufuncs and functions given ndx arrays run ndx's.
from . import _protocols  # noqa: E402

_protocols.install(ndarray)

# tofile / dump / dumps.
from . import _file_io  # noqa: E402

_file_io.attach(ndarray)

# ufunc.reduce / accumulate / reduceat / outer / at, nin / nout / nargs / identity.
from . import _ufunc_methods  # noqa: E402

_ufunc_methods.attach()
