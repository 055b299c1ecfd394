"""NumPy's top-level utilities over ndx arrays: type and scalar helpers (isscalar, typename,
sctypeDict, ufunc, ...), iteration (ndindex, ndenumerate, broadcast), memory-order helpers
(require, asfortranarray, isfortran), number formatting, the floating-point error state
(errstate, seterr, ...), Python-function ufuncs (vectorize, frompyfunc) and fromiter /
fromstring. Where the work is Python per element or text parsing, NumPy does it on host
values and the result becomes an ndx array of the dtype NumPy gives."""
import contextvars
import functools
import sys
import types

import numpy as _onp
import numpy.exceptions as _onp_exceptions

import ndx.numpy as _np

from .. import _core

# ---- scalars and types ----------------------------------------------------------------------

isscalar = _onp.isscalar  # 0-d ndx arrays are not scalars, as NumPy's 0-d arrays
class _UnknownTypeChar(KeyError, ValueError):
    """typename of an unknown character: NumPy's KeyError, and a ValueError as ndx's bad
    arguments are."""


class _UnknownRequirement(KeyError, ValueError):
    """require of an unknown requirement: NumPy's KeyError, and a ValueError as ndx's bad
    arguments are."""


class _NotAnArray(AttributeError, TypeError):
    """isfortran of a non-array: NumPy's AttributeError, and a TypeError as ndx's bad
    arguments are."""


def typename(char):
    """The description of a NumPy type character (NumPy's typename)."""
    try:
        return _onp.typename(char)
    except (KeyError, TypeError):
        raise _UnknownTypeChar(f"[typename] unknown type character {char!r}") from None


little_endian = _onp.little_endian
True_ = _onp.True_
False_ = _onp.False_
ndindex = _onp.ndindex  # shapes only; no array data involved


def iterable(y):
    """Whether iter(y) works (NumPy's iterable): not for a 0-d array, whose iterator fails
    only on its first element."""
    if isinstance(y, _np.ndarray):
        return y.ndim > 0
    return _onp.iterable(y)


def _kept(t):
    """Whether ndx arrays hold dtype t (NumPy's numeric dtypes up to 64-bit floats)."""
    return _np._scalar_dtype_kept(_onp.dtype(t))


def _ndx_typecodes():
    """NumPy's typecodes with only the characters of dtypes ndx arrays hold."""
    out = {}
    for group, chars in _onp.typecodes.items():
        out[group] = "".join(c for c in chars if _onp.dtype(c).kind not in "SUVOMm" and
                             _kept(c))
    return out


typecodes = _ndx_typecodes()
# NumPy's sctypeDict restricted to the scalar types of ndx's dtypes (no longdouble, strings,
# objects, datetimes); bfloat16 has no NumPy scalar type and is not listed.
sctypeDict = {k: v for k, v in _onp.sctypeDict.items()
              if _onp.dtype(v).kind not in "SUVOMm" and _kept(v)}
ScalarType = (int, float, complex, bool, bytes, str, memoryview) + tuple(
    sorted(set(sctypeDict.values()), key=lambda t: (t.__name__, id(t))))


def _host(x):
    """An ndx array as NumPy's: a 0-d one as a NumPy scalar of its dtype (bfloat16 as
    float32), anything else unchanged."""
    if isinstance(x, _np.ndarray):
        h = x.asnumpy()
        return h[()] if h.ndim == 0 else h
    return x


def base_repr(number, base=2, padding=0):
    """number as a string in the given base (NumPy's base_repr; a 0-d ndx array is its
    value)."""
    return _onp.base_repr(_host(number), base, padding)


def binary_repr(num, width=None):
    """num in binary; a negative num with width is its two's complement in width bits
    (NumPy's binary_repr)."""
    return _onp.binary_repr(_host(num), width)


def mintypecode(typechars, typeset="GDFgdf", default="d"):
    """The character of the smallest type in typeset that the types in typechars cast to
    safely (NumPy's mintypecode). ndx arrays count by their dtype (bfloat16 as 'f')."""
    chars = []
    for t in typechars:
        if isinstance(t, _np.ndarray):
            t = "f" if isinstance(t.dtype, str) else t.dtype.char
        chars.append(t)
    return _onp.mintypecode(chars, typeset, default)


@functools.wraps(_onp.format_float_positional)
def format_float_positional(x, *args, **kwargs):
    return _onp.format_float_positional(_host(x), *args, **kwargs)


@functools.wraps(_onp.format_float_scientific)
def format_float_scientific(x, *args, **kwargs):
    return _onp.format_float_scientific(_host(x), *args, **kwargs)


format_float_positional.__doc__ = "NumPy's format_float_positional (a 0-d ndx array is its " \
    "value, formatted in its own dtype)."
format_float_scientific.__doc__ = "NumPy's format_float_scientific (a 0-d ndx array is its " \
    "value, formatted in its own dtype)."


# ---- ufunc ----------------------------------------------------------------------------------

class _UfuncMeta(type):
    def __instancecheck__(cls, obj):
        if isinstance(obj, (_onp.ufunc, _PyUfunc)):
            return True
        name = getattr(obj, "__name__", None)
        from ._ufunc_methods import _BINARY, _UNARY
        return name in _BINARY + _UNARY and getattr(_np, name, None) is obj


class ufunc(metaclass=_UfuncMeta):
    """The type check of NumPy's ufuncs: isinstance(f, np.ufunc) is true for ndx's ufuncs
    (np.add, np.sqrt, ... with reduce / accumulate / outer / at), for frompyfunc's results and
    for NumPy's own ufuncs (which run ndx arrays through ndx). ndx's ufuncs are op functions,
    not instances of this class, which cannot be instantiated."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("[ufunc] cannot create 'ufunc' instances; use np.frompyfunc")


# ---- exceptions -----------------------------------------------------------------------------

def _exceptions_module():
    """numpy.exceptions with AxisError replaced by the one ndx raises (a subclass of NumPy's,
    so `except numpy.exceptions.AxisError` catches it too)."""
    mod = types.ModuleType("ndx.numpy.exceptions", "NumPy's exceptions and warnings; "
                           "AxisError is the class ndx raises.")
    names = [n for n in dir(_onp_exceptions) if not n.startswith("_") and
             isinstance(getattr(_onp_exceptions, n), type)]  # RankWarning is not in __all__
    for name in names:
        setattr(mod, name, getattr(_onp_exceptions, name))
    mod.AxisError = _core.AxisError
    mod.__all__ = names
    return mod


exceptions = _exceptions_module()
sys.modules.setdefault(exceptions.__name__, exceptions)


# ---- floating-point error state -------------------------------------------------------------

_ERR_KEYS = ("divide", "over", "under", "invalid")
_ERR_MODES = ("ignore", "warn", "raise", "call", "print", "log")
_ERR_REFUSED = ("raise", "call", "log")
_ERR_DEFAULT = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
# (modes, callback): a context variable, as NumPy's, so threads and tasks each have their own.
_err_state = contextvars.ContextVar("ndx_numpy_errstate", default=(_ERR_DEFAULT, None))
_UNSPECIFIED = object()


def _new_modes(fn, all=None, divide=None, over=None, under=None, invalid=None):
    """The current modes updated as NumPy's seterr does (all first, then each key). 'raise',
    'call' and 'log' raise NotImplementedError: ndx never detects floating-point errors, so
    code that relies on FloatingPointError or a callback would be silently wrong."""
    given = {"all": all, "divide": divide, "over": over, "under": under, "invalid": invalid}
    for key, mode in given.items():
        if mode is None:
            continue
        if not isinstance(mode, str) or mode not in _ERR_MODES:
            raise ValueError(f"[{fn}] invalid error mode {mode!r} for {key}; expected one of "
                             f"{_ERR_MODES}")
        if mode in _ERR_REFUSED:
            raise NotImplementedError(
                f"[{fn}] {key}={mode!r} is not supported: ndx does not check floating-point "
                "errors (results are inf / nan silently, as NumPy with 'ignore'); use "
                "'ignore', 'warn' or 'print'")
    modes = dict(_err_state.get()[0])
    if all is not None:
        modes = dict.fromkeys(_ERR_KEYS, all)
    for key in _ERR_KEYS:
        if given[key] is not None:
            modes[key] = given[key]
    return modes


def _check_call(func, fn):
    if func is not None and not callable(func) and not callable(getattr(func, "write", None)):
        raise TypeError(f"[{fn}] func must be callable or have a callable write method, got "
                        f"{type(func).__name__}")
    return func


def seterr(all=None, divide=None, over=None, under=None, invalid=None):
    """Sets how floating-point errors are to be handled and returns the old settings (NumPy's
    seterr). ndx never emits floating-point warnings or prints: the settings are kept for code
    that reads them back; 'raise', 'call' and 'log' raise NotImplementedError."""
    modes = _new_modes("seterr", all, divide, over, under, invalid)
    old, call = _err_state.get()
    _err_state.set((modes, call))
    return dict(old)


def geterr():
    """The current floating-point error settings (a new dict; NumPy's defaults at start)."""
    return dict(_err_state.get()[0])


def seterrcall(func):
    """Sets the floating-point error callback (a callable or an object with a write method,
    or None) and returns the old one. ndx never calls it: 'call' and 'log' modes are not
    supported."""
    _check_call(func, "seterrcall")
    modes, old = _err_state.get()
    _err_state.set((modes, func))
    return old


def geterrcall():
    """The current floating-point error callback (None unless seterrcall set one)."""
    return _err_state.get()[1]


class errstate:
    """Context manager and decorator for the floating-point error settings (NumPy's errstate):
    the settings apply inside and are restored on exit. Validation happens on entry, as in
    NumPy; an instance may be entered once. See seterr for what ndx does with them."""

    def __init__(self, *, call=_UNSPECIFIED, all=None, divide=None, over=None, under=None,
                 invalid=None):
        self._token = None
        self._call = call
        self._modes = {"all": all, "divide": divide, "over": over, "under": under,
                       "invalid": invalid}

    def _state(self):
        modes = _new_modes("errstate", **self._modes)
        call = _err_state.get()[1] if self._call is _UNSPECIFIED else \
            _check_call(self._call, "errstate")
        return modes, call

    def __enter__(self):
        if self._token is not None:
            raise TypeError("[errstate] cannot enter the same errstate twice")
        self._token = _err_state.set(self._state())

    def __exit__(self, *exc_info):
        _err_state.reset(self._token)

    def __call__(self, func):
        @functools.wraps(func)
        def inner(*args, **kwargs):
            token = _err_state.set(self._state())
            try:
                return func(*args, **kwargs)
            finally:
                _err_state.reset(token)
        return inner


# ---- conversions of NumPy results -----------------------------------------------------------

def _to_ndx(value, fn, device=None):
    """A NumPy result as an ndx array of its dtype (TypeError for dtypes ndx arrays cannot
    hold: objects, strings, ...)."""
    host = _onp.asarray(value)
    if host.dtype.kind in "SUVOMm" or not _np._scalar_dtype_kept(host.dtype):
        raise TypeError(f"[{fn}] the result has dtype {host.dtype}, which ndx arrays cannot "
                        "hold")
    out = _np.asarray(host)
    return out if device is None else out.to_device(device)


def _device_of(values):
    """The device= for results beside the first ndx array among values (None: the CPU)."""
    for v in values:
        if isinstance(v, _np.ndarray):
            return _np._device_for(v)
    return None


def fromiter(iter, dtype, count=-1, *, like=None):
    """A 1-d array of the values of an iterable, in dtype (NumPy's fromiter: dtype=float is
    float64 here too, since it is explicit). count=-1 reads them all."""
    return _to_ndx(_onp.fromiter(iter, dtype, count), "fromiter")


def fromstring(string, dtype=float, count=-1, *, sep="", like=None):
    """A 1-d array of the numbers in a text, separated by sep (NumPy's fromstring; the
    binary mode, sep='', is NumPy 2's ValueError: use frombuffer)."""
    return _to_ndx(_onp.fromstring(string, dtype, count, sep=sep), "fromstring")


# ---- vectorize / frompyfunc -----------------------------------------------------------------

class vectorize:
    """NumPy's vectorize over ndx arrays: pyfunc runs in Python once per element, on NumPy
    scalars (ndx array arguments are copied to the host), and the results come back as ndx
    arrays of the dtype NumPy gives (otypes, or the first result's), on the first ndx
    argument's device. Results of dtypes ndx arrays cannot hold (object, str) raise
    TypeError. Usable as a decorator, with or without arguments."""

    def __init__(self, pyfunc=_onp._NoValue, otypes=None, doc=None, excluded=None,
                 cache=False, signature=None):
        self._options = {"otypes": otypes, "doc": doc, "excluded": excluded, "cache": cache,
                         "signature": signature}
        self._host = None
        if pyfunc is not _onp._NoValue:
            self._init(pyfunc)

    def _init(self, pyfunc):
        if not callable(pyfunc):
            raise TypeError(f"[vectorize] pyfunc must be callable, got {type(pyfunc).__name__}")
        self._host = _onp.vectorize(pyfunc, **self._options)
        self.__doc__ = self._host.__doc__
        self.__name__ = getattr(pyfunc, "__name__", type(self).__name__)

    def __getattr__(self, name):
        if name.startswith("_") or self.__dict__.get("_host") is None:
            raise AttributeError(name)
        return getattr(self._host, name)  # pyfunc, otypes, excluded, signature, cache

    def __call__(self, *args, **kwargs):
        if self._host is None:  # @vectorize(otypes=...): the decorated function comes now
            self._init(*args, **kwargs)
            return self
        excluded = self._host.excluded
        device = _device_of(list(args) + list(kwargs.values()))
        args = [a if i in excluded else _host_array(a) for i, a in enumerate(args)]
        kwargs = {k: v if k in excluded else _host_array(v) for k, v in kwargs.items()}
        out = self._host(*args, **kwargs)
        if isinstance(out, tuple):
            return tuple(_to_ndx(o, "vectorize", device) for o in out)
        return _to_ndx(out, "vectorize", device)


def _host_array(x):
    return x.asnumpy() if isinstance(x, _np.ndarray) else x


class _PyUfunc:
    """frompyfunc's result: a ufunc running a Python function per element on host values.
    NumPy's gives object arrays, which ndx arrays cannot hold: the results become the
    dtype NumPy infers from them (bool, int64, float64, complex128), and TypeError is raised
    when it infers none of ndx's (strings, other objects). With scalar arguments only, the
    function's own result comes back, as in NumPy."""

    def __init__(self, host):
        self._ufunc = host
        self.__name__ = host.__name__
        self.__doc__ = host.__doc__

    nin = property(lambda self: self._ufunc.nin)
    nout = property(lambda self: self._ufunc.nout)
    nargs = property(lambda self: self._ufunc.nargs)
    identity = property(lambda self: self._ufunc.identity)

    def __repr__(self):
        return f"<ndx ufunc {self.__name__!r}>"

    def _run(self, method, args, kwargs):
        device = _device_of(list(args) + list(kwargs.values()))
        out = getattr(self._ufunc, method)(*[_host_array(a) for a in args],
                                           **{k: _host_array(v) for k, v in kwargs.items()})
        if isinstance(out, tuple):
            return tuple(self._result(o, device) for o in out)
        return self._result(out, device)

    def _result(self, out, device):
        if not isinstance(out, _onp.ndarray):
            return out
        inferred = _onp.array(out.tolist()) if out.ndim else _onp.asarray(out[()])
        if inferred.shape != out.shape or inferred.dtype.kind not in "biufc":
            kinds = sorted({type(v).__name__ for v in out.reshape(-1).tolist()})
            raise TypeError(f"[frompyfunc] {self.__name__} returned values of type "
                            f"{', '.join(kinds)}, which ndx arrays cannot hold (NumPy gives an "
                            "object array)")
        return _to_ndx(inferred, "frompyfunc", device)

    def __call__(self, *args, **kwargs):
        if "out" in kwargs:
            raise NotImplementedError("[frompyfunc] out= is not supported")
        return self._run("__call__", args, kwargs)

    def reduce(self, *args, **kwargs):
        """ufunc.reduce on host values (see the class)."""
        return self._run("reduce", args, kwargs)

    def accumulate(self, *args, **kwargs):
        """ufunc.accumulate on host values (see the class)."""
        return self._run("accumulate", args, kwargs)

    def reduceat(self, *args, **kwargs):
        """ufunc.reduceat on host values (see the class)."""
        return self._run("reduceat", args, kwargs)

    def outer(self, *args, **kwargs):
        """ufunc.outer on host values (see the class)."""
        return self._run("outer", args, kwargs)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ufunc that applies the Python function func (nin arguments, nout results) per
    element, broadcasting its arguments (NumPy's frompyfunc; see _PyUfunc for the dtypes)."""
    if not callable(func):
        raise TypeError(f"[frompyfunc] func must be callable, got {type(func).__name__}")
    return _PyUfunc(_onp.frompyfunc(func, nin, nout, identity=identity))


class ndenumerate(_onp.ndenumerate):
    """Iterates over (index, value) pairs of an array in C order (NumPy's ndenumerate). The
    array is copied to the host once and the values are NumPy scalars of its dtype (bfloat16
    as float32), as NumPy yields: `for i, v in ndenumerate(a): b[i] = v * 2` works on ndx
    arrays, and fast. Non-arrays become arrays as np.asarray makes them."""

    def __init__(self, arr):
        super().__init__((arr if isinstance(arr, _np.ndarray) else _np.asarray(arr)).asnumpy())


# ---- nditer ---------------------------------------------------------------------------------

_WRITE_FLAGS = ("readwrite", "writeonly")


def _iter_operand(x, flags):
    """What NumPy's nditer iterates for an ndx operand: a NumPy view of its host memory (writes
    reach the ndx array), or, for an array NumPy cannot view (bfloat16, a GPU array), a host
    copy when the iterator only reads it."""
    if not isinstance(x, _np.ndarray):
        return x
    try:
        return x.__array__(copy=False)
    except ValueError:  # no view of this memory
        if any(f in _WRITE_FLAGS for f in flags):
            raise NotImplementedError(
                f"[nditer] an operand of dtype {x.dtype} on {x.device} has no NumPy view, so "
                "it can only be read (op_flags 'readonly'); copy it first") from None
        return x.asnumpy()


class nditer:
    """NumPy's nditer over ndx arrays: the iteration itself is NumPy's, over views of the
    arrays' host memory, so `x[...] = ...` on an item writes the ndx array (op_flags
    'readwrite' / 'writeonly'; a read-only array refuses with NumPy's ValueError). Items are
    NumPy arrays (0-d, or 1-d with 'external_loop') viewing that memory; `operands` gives the
    ndx arrays, allocated outputs included. Every other attribute is NumPy's iterator's."""

    def __init__(self, op, flags=None, op_flags=None, op_dtypes=None, order="K",
                 casting="safe", op_axes=None, itershape=None, buffersize=0):
        several = isinstance(op, (list, tuple))
        ops = list(op) if several else [op]
        if op_flags is None:
            per_op = [()] * len(ops)
        elif op_flags and all(isinstance(f, str) for f in op_flags):
            per_op = [tuple(op_flags)] * len(ops)
        else:
            per_op = [tuple(f) for f in op_flags]
        if len(per_op) != len(ops):
            raise ValueError(f"[nditer] op_flags has {len(per_op)} entries for {len(ops)} "
                             "operands")
        self._given = ops
        host = [_iter_operand(x, f) for x, f in zip(ops, per_op)]
        self._it = _onp.nditer(host if several else host[0], flags, op_flags, op_dtypes, order,
                               casting, op_axes, itershape, buffersize)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)

    def __enter__(self):
        self._it.__enter__()
        return self

    def __exit__(self, *exc):
        return self._it.__exit__(*exc)

    def __len__(self):
        return len(self._it)

    def __getitem__(self, i):
        return self._it[i]

    def __getattr__(self, name):
        return getattr(self._it, name)

    def __copy__(self):
        dup = object.__new__(nditer)
        dup._given, dup._it = self._given, self._it.copy()
        return dup

    copy = __copy__

    @property
    def operands(self):
        """The operands as ndx arrays: those given, and the outputs the iterator allocated."""
        return tuple(given if isinstance(given, _np.ndarray) else _to_ndx(host, "nditer")
                     for given, host in zip(self._given, self._it.operands))


# ---- broadcast ------------------------------------------------------------------------------

def _placeholder(x):
    """A NumPy array of x's shape and dtype over one element (strides 0): broadcast's
    metadata without copying x's data."""
    dtype = "float32" if isinstance(x.dtype, str) else x.dtype
    return _onp.lib.stride_tricks.as_strided(_onp.zeros(1, dtype), x.shape, (0,) * x.ndim,
                                             writeable=False)


class broadcast:
    """NumPy's broadcast of its arguments (ndx arrays, NumPy arrays, scalars, broadcast
    objects): shape, ndim / nd, size, numiter, index, iters, reset(), and iteration over
    tuples of the broadcast elements as NumPy scalars. ndx arrays are copied to the host only
    when the elements are iterated (iteration or iters)."""

    def __init__(self, *args):
        self._args = []
        for a in args:  # a broadcast object contributes its arguments, as in NumPy
            self._args.extend(a._args if isinstance(a, broadcast) else [a])
        self._meta = _onp.broadcast(*[_placeholder(a) if isinstance(a, _np.ndarray) else a
                                      for a in self._args])
        self._data = None

    def _elements(self):
        if self._data is None:
            self._data = _onp.broadcast(*[_host_array(a) for a in self._args])
        return self._data

    shape = property(lambda self: self._meta.shape)
    ndim = property(lambda self: self._meta.ndim)
    nd = ndim
    size = property(lambda self: self._meta.size)
    numiter = property(lambda self: self._meta.numiter)
    index = property(lambda self: 0 if self._data is None else self._data.index)
    iters = property(lambda self: self._elements().iters)

    def reset(self):
        """Back to the first element."""
        if self._data is not None:
            self._data.reset()

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._elements())


# ---- memory order ---------------------------------------------------------------------------

def _fortran_copy(a):
    """An F-contiguous copy of a (the transpose of a C-contiguous copy of a's transpose)."""
    return _np.transpose(_np.transpose(a).copy())


def asfortranarray(a, dtype=None, *, like=None):
    """a as an F-contiguous (column-major) array of at least one dimension (a itself when it
    is one). ndx arrays take any strides; ndx's ops give C-contiguous results."""
    a = _np.asarray(a, dtype=dtype)
    if a.ndim == 0:
        a = _np.reshape(a, (1,))
    return a if a.flags.f_contiguous else _fortran_copy(a)


def isfortran(a):
    """Whether a is F-contiguous and not C-contiguous (NumPy's isfortran)."""
    if not isinstance(a, (_np.ndarray, _onp.ndarray)):
        raise _NotAnArray(f"[isfortran] a must be an ndarray (it has no flags), got "
                          f"{type(a).__name__}")
    return bool(a.flags.fnc)


_REQUIREMENTS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F",
                 "F_CONTIGUOUS": "F", "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W",
                 "WRITEABLE": "W", "O": "O", "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def require(a, dtype=None, requirements=None, *, like=None):
    """a as an ndx array of dtype meeting the requirements (NumPy's require): 'C' / 'F'
    contiguous (a copy in that order when it is not), 'W' writeable (a copy of a read-only
    array), 'A' aligned and 'E' a base-class array (ndx arrays always are), 'O' owning its
    data (a copy of a view)."""
    if not requirements:
        return _np.asarray(a, dtype=dtype)
    reqs = set()
    for r in requirements:
        key = r.upper() if isinstance(r, str) else r
        if key not in _REQUIREMENTS:
            raise _UnknownRequirement(f"[require] requirements must be among "
                                      f"{sorted(_REQUIREMENTS)}, got {r!r}")
        reqs.add(_REQUIREMENTS[key])
    if {"C", "F"} <= reqs:
        raise ValueError('[require] Cannot specify both "C" and "F" order')
    arr = _np.asarray(a, dtype=dtype)
    owned = isinstance(a, _np.ndarray) and arr is not a  # astype made a new array
    if "C" in reqs and not arr.flags.c_contiguous:
        arr, owned = arr.copy(), True
    elif "F" in reqs and not arr.flags.f_contiguous:
        arr, owned = _fortran_copy(arr), True
    if "W" in reqs and not arr.flags.writeable and not owned:
        arr, owned = (_fortran_copy(arr) if "F" in reqs else arr.copy()), True
    if "O" in reqs and not owned and not arr.flags.owndata:
        arr = _fortran_copy(arr) if "F" in reqs else arr.copy()
    return arr


__all__ = ["False_", "ScalarType", "True_", "asfortranarray", "base_repr", "binary_repr",
           "broadcast", "errstate", "exceptions", "format_float_positional",
           "format_float_scientific", "frompyfunc", "fromiter", "fromstring", "geterr",
           "geterrcall", "isfortran", "isscalar", "iterable", "little_endian", "mintypecode",
           "ndenumerate", "ndindex", "nditer", "require", "sctypeDict", "seterr", "seterrcall",
           "typecodes", "typename", "ufunc", "vectorize"]
