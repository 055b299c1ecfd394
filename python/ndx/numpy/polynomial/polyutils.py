"""NumPy's numpy.polynomial.polyutils over ndx arrays: the helpers the series modules share.

Coefficient series are 1-d ndx arrays, lowest degree first. As in NumPy, Python lists and
scalars are read as NumPy reads them (floats are float64, not ndx's default float32), and
as_series gives every series NumPy's common_type (integers and bools become float64)."""
import operator

import numpy as _onp

import ndx.numpy as _np

__all__ = ["as_series", "trimseq", "trimcoef", "getdomain", "mapdomain", "mapparms",
           "format_float"]

_SCALARS = (int, float, complex)


def _to_nd(a):
    """a as an ndx array; anything else is read as NumPy reads it (float64 for floats)."""
    if isinstance(a, _np.ndarray):
        return a
    if isinstance(a, (list, tuple)) and any(isinstance(v, _np.ndarray) for v in a):
        return _np.stack([_to_nd(v) for v in a])
    return _np.asarray(_onp.asarray(a))


def _kind(a):
    return _onp.dtype(str(a.dtype)).kind if str(a.dtype) != "bfloat16" else "f"


def _inexact(a):
    """a with integers and bools as float64 (NumPy's `c + 0.0` on them)."""
    return a.astype("float64") if _kind(a) in "biu" else a


def _series(c, copy=False):
    """c as an ndx array of at least one dimension, integers as float64."""
    c = _inexact(_to_nd(c))
    if c.ndim == 0:
        c = _np.reshape(c, (1,))
    return _np.copy(c) if copy else c


def _as_int(x, desc, name):
    try:
        return operator.index(x)
    except TypeError as e:
        raise TypeError(f"[{name}] {desc} must be an integer, received {x}") from e


def _host_dtype(a):
    d = str(a.dtype)
    return _onp.dtype("float32" if d == "bfloat16" else d)


def trimseq(seq):
    """seq without its trailing zeros (one element is kept)."""
    if len(seq) == 0 or not bool(seq[-1] == 0):
        return seq
    nz = _np.flatnonzero(seq)
    last = int(nz[-1]) if nz.shape[0] else 0
    return seq[:last + 1]


def as_series(alist, trim=True):
    """The arrays of alist as 1-d ndx series of one common (inexact) dtype, copied."""
    arrays = []
    for a in alist:
        a = _to_nd(a)
        if a.ndim == 0:
            a = _np.reshape(a, (1,))
        arrays.append(a)
    for a in arrays:
        if a.size == 0:
            raise ValueError("[as_series] Coefficient array is empty")
        if a.ndim != 1:
            raise ValueError("[as_series] Coefficient array is not 1-d")
    if trim:
        arrays = [trimseq(a) for a in arrays]
    try:
        dtype = _onp.common_type(*[_onp.empty(0, dtype=_host_dtype(a)) for a in arrays])
    except TypeError as e:
        raise ValueError("[as_series] Coefficient arrays have no common type") from e
    dtype = _onp.dtype(dtype).name
    return [a.astype(dtype) if str(a.dtype) != dtype else _np.copy(a) for a in arrays]


def trimcoef(c, tol=0):
    """c without its trailing coefficients of magnitude at most tol (one is kept, as 0)."""
    if tol < 0:
        raise ValueError("[trimcoef] tol must be non-negative")
    [c] = as_series([c])
    ind = _np.flatnonzero(_np.abs(c) > tol)
    if ind.shape[0] == 0:
        return c[:1] * 0
    return _np.copy(c[:int(ind[-1]) + 1])


def getdomain(x):
    """The smallest interval (a rectangle for complex x) that holds the points x."""
    [x] = as_series([x], trim=False)
    if _kind(x) == "c":
        re, im = _np.real(x), _np.imag(x)
        lo = [complex(float(re.min()), float(im.min())),
              complex(float(re.max()), float(im.max()))]
        return _np.asarray(_onp.asarray(lo, dtype=str(x.dtype)))
    return _np.stack([x.min(), x.max()])


def mapparms(old, new):
    """(off, scl) of the linear map off + scl*x that takes the interval old onto new."""
    oldlen = old[1] - old[0]
    newlen = new[1] - new[0]
    off = (old[1] * new[0] - old[0] * new[1]) / oldlen
    scl = newlen / oldlen
    return off, scl


def mapdomain(x, old, new):
    """The points x mapped linearly from the interval old onto new."""
    if not isinstance(x, _SCALARS) and not hasattr(x, "coef"):
        x = _to_nd(x)
    off, scl = mapparms(old, new)
    return off + scl * x


def format_float(x, parens=False):
    """x as text under the print options (numpy.polynomial's float format)."""
    from numpy._core.multiarray import dragon4_positional, dragon4_scientific
    if isinstance(x, _np.ndarray):
        x = x.asnumpy()[()]
    if not _onp.issubdtype(type(x), _onp.floating):
        return str(x)
    opts = _np.get_printoptions()
    if _onp.isnan(x):
        return opts["nanstr"]
    if _onp.isinf(x):
        return opts["infstr"]
    exp_format = False
    if x != 0:
        a = _onp.abs(x)
        if a >= 1.e8 or a < 10 ** min(0, -(opts["precision"] - 1) // 2):
            exp_format = True
    trim, unique = "0", True
    if opts["floatmode"] == "fixed":
        trim, unique = "k", False
    if exp_format:
        s = dragon4_scientific(x, precision=opts["precision"], unique=unique, trim=trim,
                               sign=opts["sign"] == "+")
        if parens:
            s = "(" + s + ")"
    else:
        s = dragon4_positional(x, precision=opts["precision"], fractional=True, unique=unique,
                               trim=trim, sign=opts["sign"] == "+")
    return s
