"""NumPy's dtype utilities over ndx's dtypes (NumPy's dtypes plus bfloat16, spelled as the
string 'bfloat16'): finfo, iinfo, can_cast, promote_types, min_scalar_type, isdtype,
issubdtype, the dtype groups MXNet code imports from mxnet.numpy, and NumPy's constants."""
import numpy as _onp

from .. import _core

BFLOAT16 = "bfloat16"

integer_dtypes = tuple(_onp.dtype(t) for t in (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
floating_dtypes = tuple(_onp.dtype(t) for t in ("float16", "float32", "float64"))
boolean_dtypes = (_onp.dtype("bool"),)
numeric_dtypes = integer_dtypes + floating_dtypes

NINF = -_onp.inf
PINF = _onp.inf
NAN = NaN = _onp.nan
PZERO = 0.0
NZERO = -0.0
euler_gamma = _onp.euler_gamma


def _is_bfloat16(t):
    return isinstance(t, str) and t == BFLOAT16


def _dtype_arg(t, fn):
    """An ndx dtype (a NumPy dtype, or 'bfloat16') from a dtype spelling or an array."""
    if isinstance(t, _core.ndarray):
        t = t.dtype
    if _is_bfloat16(t):
        return BFLOAT16
    try:
        return _onp.dtype(t)
    except TypeError:
        raise TypeError(f"[{fn}] data type {t!r} not understood") from None


class _BFloat16Info:
    """finfo for bfloat16: 8 exponent bits as float32, 7 stored mantissa bits."""
    bits = 16
    dtype = BFLOAT16
    eps = 2.0 ** -7
    epsneg = 2.0 ** -8
    max = float.fromhex("0x1.fep127")
    min = -max
    tiny = smallest_normal = 2.0 ** -126
    smallest_subnormal = 2.0 ** -133
    resolution = 0.01
    precision = 2
    nmant = 7
    nexp = 8
    maxexp = 128
    minexp = -126

    def __repr__(self):
        return f"finfo(resolution={self.resolution}, min={self.min:.4e}, max={self.max:.4e}, " \
               "dtype=bfloat16)"


def finfo(dtype):
    """Machine limits of a float dtype (NumPy's finfo; bfloat16's own)."""
    t = _dtype_arg(dtype, "finfo")
    if t == BFLOAT16:
        return _BFloat16Info()
    if t.kind not in "fc":  # complex: its real and imaginary parts' float (the Array API)
        raise ValueError(f"[finfo] data type {t} not inexact")
    return _onp.finfo(t)


def iinfo(dtype):
    """Machine limits of an integer dtype."""
    t = _dtype_arg(dtype, "iinfo")
    if t == BFLOAT16 or t.kind not in "iu":
        raise ValueError(f"[iinfo] invalid integer data type {t!r}")
    return _onp.iinfo(t)


def promote_types(type1, type2):
    """The smallest dtype both cast to safely (ndx's promotion table, bfloat16 included)."""
    return result_type(_dtype_arg(type1, "promote_types"), _dtype_arg(type2, "promote_types"))


def result_type(*arrays_and_dtypes):
    return _core.result_type(*arrays_and_dtypes)


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def can_cast(from_, to, casting="safe"):
    """Whether from_ (a dtype or an array) casts to `to` under the casting rule."""
    if casting not in _CASTINGS:
        raise ValueError(f"[can_cast] casting must be one of {_CASTINGS}, got {casting!r}")
    if from_ is None or to is None:
        raise TypeError("[can_cast] did not understand one of the types; 'None' not accepted")
    a, b = _dtype_arg(from_, "can_cast"), _dtype_arg(to, "can_cast")
    if a != BFLOAT16 and b != BFLOAT16:
        return bool(_onp.can_cast(a, b, casting))
    if a == b or casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return False
    if a == BFLOAT16:  # to float32 / float64 exactly; to float16 only as a float
        return b.kind == "f" and (b.itemsize >= 4 or casting == "same_kind")
    # to bfloat16: bool and 8-bit integers exactly (its 8-bit significand); other floats
    # and integers as a kind-preserving or narrowing float cast.
    if a.kind == "b" or (a.kind in "iu" and a.itemsize == 1):
        return True
    return casting == "same_kind" and a.kind in "iuf"


def common_type(*arrays):
    """The scalar type of the inexact kind the arrays share (NumPy's common_type): float16,
    float32, float64 or their complex types, integers counting as float64."""
    if not arrays:
        raise TypeError("[common_type] at least one array is required")
    is_complex, precision = False, 0
    for a in arrays:
        t = _dtype_arg(a.dtype if hasattr(a, "dtype") else a, "common_type")
        if t == BFLOAT16:
            raise TypeError("[common_type] can't get common type for bfloat16")
        if t.kind in "iu":
            size = 8
        elif t.kind in "fc":
            size = t.itemsize // 2 if t.kind == "c" else t.itemsize
            is_complex |= t.kind == "c"
        else:
            raise TypeError(f"[common_type] can't get common type for non-numeric array "
                            f"of {t}")
        precision = max(precision, size)
    if is_complex:
        return {2: _onp.complex64, 4: _onp.complex64, 8: _onp.complex128}[precision]
    return {2: _onp.float16, 4: _onp.float32, 8: _onp.float64}[precision]


def min_scalar_type(a):
    """The smallest dtype that holds the value (NumPy's rule)."""
    if isinstance(a, _core.ndarray):
        a = a.asnumpy()
    return _onp.min_scalar_type(a)


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype, kind):
    """Whether dtype is of the kind: a dtype, a kind name of the Array API, or a tuple."""
    t = _dtype_arg(dtype, "isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(t, k) for k in kind)
    if isinstance(kind, str) and kind != BFLOAT16:
        if kind not in _KINDS:
            raise ValueError(f"[isdtype] unknown kind {kind!r}")
        return ("f" if t == BFLOAT16 else t.kind) in _KINDS[kind]
    return t == _dtype_arg(kind, "isdtype")


def issubdtype(arg1, arg2):
    """NumPy's issubdtype; bfloat16 is a floating type."""
    a = _dtype_arg(arg1, "issubdtype") if not isinstance(arg1, type) else arg1
    if isinstance(a, str):  # bfloat16
        if _is_bfloat16(arg2):
            return True
        return isinstance(arg2, type) and issubclass(_onp.floating, arg2)
    if _is_bfloat16(arg2):
        return False
    return bool(_onp.issubdtype(a, arg2))
