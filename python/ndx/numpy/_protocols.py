"""NumPy's override protocols on ndx arrays: NEP 13 ``__array_ufunc__`` and NEP 18
``__array_function__``, as MXNet 2's numpy ndarray had them.

NumPy ufuncs and functions given ndx arrays run ndx's function of the same name (in ndx.np,
ndx.np.linalg or ndx.np.fft) and return ndx arrays, so ``numpy.add(numpy_array, ndx_array)``,
``numpy_array + ndx_array`` and ``numpy.concatenate([a, b])`` stay on the ndx side. What ndx
lacks (a function, a ufunc method, or a keyword its function does not take) runs NumPy on host
copies, warns once per function (NumpyFallbackWarning), and refuses while autograd records
(NumpyFallbackError), since a host result has no gradient.

Only NumPy's own entry points come here: ordinary ndx calls never pass through this module.
The name tables are built on first use and cached."""
import inspect
import math
import operator as _operator
import warnings

import numpy as _onp

from .. import _core
from .. import numpy as _np

__all__ = ["NumpyFallbackWarning", "NumpyFallbackError", "install"]


class NumpyFallbackWarning(UserWarning):
    """A NumPy function or ufunc ran NumPy's implementation on host copies of ndx arrays."""


class NumpyFallbackError(NotImplementedError, ValueError):
    """The NumPy fallback was asked for while autograd records. A NotImplementedError (ndx has
    no differentiable implementation of the call) that is also the ValueError MXNet raised in
    this case, so code written for either keeps catching it."""


# NumPy's module of a function -> the ndx namespace holding the function of the same name.
_NAMESPACES = {"numpy": _np, "numpy.linalg": _np.linalg, "numpy.fft": _np.fft,
               "numpy.lib.stride_tricks": _np.lib.stride_tricks, "numpy.lib.scimath": _np.emath}
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}
# NumPy's ufunc keywords that ndx ufuncs take (python/src/op_function.cc).
_UFUNC_KEYWORDS = frozenset(("where", "dtype", "casting", "order", "subok"))
# NumPy functions (and the ufunc method `at`) that write into their first argument.
_WRITES_FIRST = frozenset(("copyto", "place", "put", "putmask", "put_along_axis",
                           "fill_diagonal", "at"))
_PY_SCALARS = (bool, int, float, complex)
_UFUNC_DEFAULTS = {"dtype": None, "where": True, "keepdims": False, "casting": "same_kind",
                   "order": "K", "subok": True, "signature": None}
_P = inspect.Parameter
_POSITIONAL = (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)
_NAMED = (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)
_VARIADIC = (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)

_ndarray = _np.ndarray
_DIRECT = (_ndarray, _onp.ndarray, _onp.generic)  # operands ndx's functions take as they are
_targets = {}   # NumPy function -> _Target or None (no ndx function of that name)
_ufuncs = {}    # (ufunc name, method) -> _Target or None
_plain = {}     # ufunc -> the ndx function its calls without keywords run, or None
_warned = set()  # names of the functions whose fallback has warned


class _Target:
    """An ndx function with what it takes: its signature (None when it has none to read, then
    every call is tried) and the keyword names it takes beyond it."""

    __slots__ = ("fn", "name", "sig", "extra", "names", "positional", "n_positional", "required")

    def __init__(self, fn, name):
        self.fn, self.name = fn, name
        try:
            self.sig = inspect.signature(fn)
        except (TypeError, ValueError):
            self.sig = None
        self.extra = set()
        if isinstance(fn, _core.OpFunction):
            if _takes_ufunc_keywords(fn, self.sig):
                self.extra |= _UFUNC_KEYWORDS
            if getattr(fn, "_with_where", None) is not None:
                self.extra.add("where")
        ps = list(self.sig.parameters.values()) if self.sig is not None else []
        if self.sig is None or any(p.kind is p.VAR_KEYWORD for p in ps):
            self.names = None  # takes any keyword
        else:
            self.names = {p.name for p in ps if p.kind in _NAMED} | self.extra
        self.positional = [p.name for p in ps if p.kind in _POSITIONAL]
        self.n_positional = (float("inf") if any(p.kind is p.VAR_POSITIONAL for p in ps)
                             else len(self.positional))
        self.required = [(i, p.name) for i, p in enumerate(ps)
                         if p.default is p.empty and p.kind not in _VARIADIC]

    def missing_keywords(self, keywords):
        """The keyword names among `keywords` that this function does not take."""
        return [] if self.names is None else [k for k in keywords if k not in self.names]

    def mismatch(self, args, kwargs):
        """Why (args, kwargs) do not fit the signature (NumPy's and ndx's differ), or None:
        inspect.Signature.bind's checks, without its cost on this path."""
        if self.sig is None:
            return None
        n = len(args)
        if n > self.n_positional:
            return f"{self.name} takes {self.n_positional} positional arguments, not {n}"
        for k in kwargs:
            if self.names is not None and k not in self.names:
                return f"{self.name} does not take {k}="
            if k in self.positional[:n]:
                return f"{self.name} got {k} both by position and by name"
        for i, k in self.required:
            if i >= n and k not in kwargs:
                return f"{self.name} requires {k}"
        return None


_probe_operand = None


def _takes_ufunc_keywords(fn, sig):
    """Whether OpFunction fn is an ndx ufunc (takes where=/dtype=/casting=). Asked by passing
    casting=None: a ufunc refuses the value (TypeError), any other op the name (ValueError),
    both while parsing, before anything runs."""
    global _probe_operand
    if _probe_operand is None:
        _probe_operand = _np.zeros(())
    n_inputs = 0 if sig is None else sum(
        1 for p in sig.parameters.values()
        if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty)
    try:
        fn(*[_probe_operand] * n_inputs, casting=None)
    except TypeError as e:
        return "casting" in str(e)
    except Exception:  # noqa: BLE001 - an unknown parameter: not a ufunc
        return False
    return True


def _lookup(namespace, name):
    fn = getattr(namespace, name, None) if not name.startswith("_") else None
    if fn is None or isinstance(fn, type) or not callable(fn) or inspect.ismodule(fn):
        return None
    return fn


def _function_target(func):
    try:
        return _targets[func]
    except KeyError:
        pass
    namespace = _NAMESPACES.get(getattr(func, "__module__", None))
    fn = _lookup(namespace, func.__name__) if namespace is not None else None
    if fn is None and namespace is _np:
        fn = _METADATA.get(func.__name__)
    if fn is None:  # (NumPy's function runs; a module ndx does not mirror has no namespace)
        _targets[func] = None
        return None
    prefix = "ndx.np." + ("" if namespace is _np else namespace.__name__.rsplit(".", 1)[1] + ".")
    target = _targets[func] = _Target(fn, prefix + func.__name__)
    return target


def _ufunc_target(name, method):
    key = (name, method)
    try:
        return _ufuncs[key]
    except KeyError:
        pass
    if method in ("__call__", "outer"):
        public = name
    elif method == "reduce":
        public = _REDUCE.get(name)
    elif method == "accumulate":
        public = _ACCUMULATE.get(name)
    else:
        public = None
    fn = _lookup(_np, public) if public is not None else None
    target = _ufuncs[key] = _Target(fn, "ndx.np." + public) if fn is not None else None
    return target


# ---- conversions ----

def _device_of(objs):
    """The device of the first ndx array in objs (searched through lists, tuples, dicts)."""
    for x in objs:
        if isinstance(x, _ndarray):
            return x.device
        if isinstance(x, (list, tuple)):
            d = _device_of(x)
            if d is not None:
                return d
        elif isinstance(x, dict):
            d = _device_of(x.values())
            if d is not None:
                return d
    return None


def _on_device(a, device):
    return a if device is None or a.device == device else a.to_device(device)


def _operand(x, device):
    """A ufunc operand for ndx: ndx arrays, Python scalars (weak, as NEP 50 says), NumPy arrays
    and NumPy scalars (strong, their dtype kept) as they are, as ndx's own operators take them;
    anything else (a list) as NumPy would see it (numpy.asarray: float64 for a list of floats),
    on the device of the ndx operands."""
    if isinstance(x, _DIRECT) or type(x) in _PY_SCALARS:
        return x
    return _on_device(_np.array(_onp.asarray(x)), device)


def _host(x):
    return x.asnumpy()


class _HostCall:
    """Host copies of the ndx arrays in a call's arguments (through lists, tuples and dicts),
    remembered so results that are those copies come back as the ndx arrays themselves."""

    def __init__(self):
        self.device = None
        self.copies = {}  # id(host copy) -> (host copy, ndx array)

    def to_host(self, x):
        if isinstance(x, _ndarray):
            if self.device is None:
                self.device = x.device
            h = _host(x)
            self.copies[id(h)] = (h, x)
            return h
        if isinstance(x, list):
            return [self.to_host(v) for v in x]
        if isinstance(x, tuple):
            items = [self.to_host(v) for v in x]
            return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
        if isinstance(x, dict):
            return {k: self.to_host(v) for k, v in x.items()}
        return x

    def write_back(self, x):
        """Copies the host copy x (when it is one) into its ndx array."""
        entry = self.copies.get(id(x))
        if entry is not None and entry[0] is x:
            entry[1][...] = _np.array(x)

    def to_ndx(self, r):
        entry = self.copies.get(id(r))
        if entry is not None and entry[0] is r:
            return entry[1]
        if isinstance(r, (_onp.ndarray, _onp.generic)) and r.dtype.kind in "biufc":
            return _on_device(_np.array(_onp.asarray(r)), self.device)
        if isinstance(r, list):
            return [self.to_ndx(v) for v in r]
        if isinstance(r, tuple):
            items = [self.to_ndx(v) for v in r]
            return type(r)(*items) if hasattr(r, "_fields") else tuple(items)
        return r


def _warn_once(name, reason):
    if name in _warned:
        return
    _warned.add(name)
    why = f" ({reason})" if reason else ""
    warnings.warn(f"ndx: {name} has no ndx implementation{why}; running NumPy on host copies",
                  NumpyFallbackWarning, stacklevel=4)


def _fallback(name, call, args, kwargs, out_keys=("out",), reason=None):
    """Runs call(*args, **kwargs) (a NumPy function) on host copies of the ndx arrays in the
    arguments; array results come back as ndx arrays on the arguments' device, and ndx arrays
    given as out= (or written in place) receive the values NumPy wrote."""
    why = f" ({reason})" if reason else ""
    if _core._autograd_is_recording():
        raise NumpyFallbackError(
            f"[{name}] has no ndx implementation{why}, and running NumPy on host copies while "
            "autograd is recording would give a result without a gradient; call it outside "
            "autograd.record() (or under autograd.pause()), or use ndx operations")
    if _core._is_tracing():
        raise NumpyFallbackError(
            f"[{name}] has no ndx implementation{why}, and a hybridized block's graph cannot "
            "hold a NumPy call on host copies (it would be a constant); use ndx operations in "
            "the block's forward")
    _warn_once(name, reason)
    return _run_on_host(call, args, kwargs, out_keys, name.rsplit(".", 1)[-1])


def _run_on_host(call, args, kwargs, out_keys, short_name, convert=True):
    hc = _HostCall()
    h_args = hc.to_host(args)
    h_kwargs = hc.to_host(kwargs)
    result = call(*h_args, **h_kwargs)
    for key in out_keys:
        outs = h_kwargs.get(key)
        for o in outs if isinstance(outs, tuple) else (outs,):
            hc.write_back(o)
    if short_name in _WRITES_FIRST and h_args:
        hc.write_back(h_args[0])
    return hc.to_ndx(result) if convert else _host_result(hc, result)


def _host_result(hc, r):
    """NumPy's result as it is, but for host copies, which become their ndx arrays again."""
    if isinstance(r, tuple):
        return tuple(_host_result(hc, v) for v in r)
    entry = hc.copies.get(id(r))
    return entry[1] if entry is not None and entry[0] is r else r


# ---- __array_ufunc__ ----

def _foreign(x):
    """An operand of a type that overrides ufuncs itself (NEP 13): we leave it to its type."""
    return (not isinstance(x, (_ndarray, _onp.ndarray, _onp.generic))
            and getattr(type(x), "__array_ufunc__", None) is not None)


def _ufunc_name(ufunc, method):
    return f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NEP 13: a NumPy ufunc (or its reduce / accumulate / outer) given ndx arrays runs ndx's
    function of the same name (sum, prod, max, min, all, any for reduce; cumsum, cumprod for
    accumulate) and returns ndx arrays. out= may hold ndx arrays; with a NumPy array in out=
    (``numpy_array += ndx_array``) NumPy computes into it on host copies, as MXNet did. Other
    methods, ufuncs ndx lacks and keywords its function does not take fall back to NumPy."""
    if not kwargs and method == "__call__":  # the common case (numpy_array + ndx_array)
        fn = _plain.get(ufunc, _plain)
        if fn is _plain:
            target = _ufunc_target(ufunc.__name__, method)
            fn = _plain[ufunc] = target.fn if target is not None else None
        if fn is not None:
            for x in inputs:
                if not (isinstance(x, _DIRECT) or type(x) in _PY_SCALARS):
                    break
            else:
                try:
                    return fn(*inputs)
                except NotImplementedError:
                    pass  # the general path below falls back to NumPy
    outs = kwargs.get("out", ())
    if not isinstance(outs, tuple):
        outs = (outs,)
    for x in inputs + outs:
        if _foreign(x):
            return NotImplemented
    name = _ufunc_name(ufunc, method)
    if any(isinstance(o, _onp.ndarray) for o in outs):
        return _run_on_host(getattr(ufunc, method), inputs, kwargs, ("out",), method,
                            convert=False)
    for o in outs:
        if o is not None and not isinstance(o, _ndarray):
            raise TypeError(f"[{name}] out must hold ndarrays (ndx or NumPy), got "
                            f"{type(o).__name__}")
    target = _ufunc_target(ufunc.__name__, method)
    reason = None
    if target is not None:
        kw = {k: v for k, v in kwargs.items() if k != "out"}
        missing = target.missing_keywords(kw)
        if missing:  # NumPy's defaults (axis, dtype, out given by position) ask for nothing
            for k in [k for k in missing
                      if k in _UFUNC_DEFAULTS and _same_value(kw[k], _UFUNC_DEFAULTS[k])]:
                del kw[k]
                missing.remove(k)
        if outs and target.names is not None and "out" not in target.names:
            missing.append("out")
        if not missing:
            device = _device_of(inputs + outs)
            try:
                return _METHODS[method](target, ufunc, inputs, kw, outs, device)
            except NotImplementedError as e:
                reason = str(e)
        else:
            reason = f"{target.name} does not take " + ", ".join(f"{k}=" for k in missing)
    return _fallback(name, getattr(ufunc, method), inputs, kwargs, reason=reason)


def _call(target, ufunc, inputs, kw, outs, device):
    args = [_operand(x, device) for x in inputs]
    if not outs or all(o is None for o in outs):
        return target.fn(*args, **kw)
    if len(outs) == 1:
        return target.fn(*args, out=outs[0], **kw)
    if all(o is not None for o in outs):
        return target.fn(*args, out=outs, **kw)
    # Some outputs given, some not (out=(None, b)): compute, then fill the given ones.
    results = target.fn(*args, **kw)
    for o, r in zip(outs, results):
        if o is not None:
            o[...] = r
    return tuple(r if o is None else o for o, r in zip(outs, results))


def _reduction(target, ufunc, inputs, kw, outs, device, default_axis=0):
    if len(inputs) != 1:
        raise TypeError(f"[numpy.{ufunc.__name__}.reduce] takes 1 array, got {len(inputs)}")
    kw = dict(kw)
    kw.setdefault("axis", default_axis)  # ufunc.reduce reduces axis 0 unless told
    if outs and outs[0] is not None:
        kw["out"] = outs[0]
    return target.fn(_operand(inputs[0], device), **kw)


def _outer(target, ufunc, inputs, kw, outs, device):
    if len(inputs) != 2:
        raise ValueError(f"[numpy.{ufunc.__name__}.outer] only supported for binary functions")
    a, b = (_np.asarray(x) if type(x) in _PY_SCALARS else _operand(x, device) for x in inputs)
    a = a.reshape(tuple(a.shape) + (1,) * b.ndim)  # every (i, j) pair by broadcasting
    return _call(target, ufunc, (a, b), kw, outs, device)


_METHODS = {"__call__": _call, "reduce": _reduction, "accumulate": _reduction, "outer": _outer}


# ---- __array_function__ ----

def array_function(self, func, types, args, kwargs):
    """NEP 18: a NumPy function given ndx arrays runs ndx's function of the same name (numpy.x
    -> ndx.np.x, numpy.linalg.x -> ndx.np.linalg.x, numpy.fft.x -> ndx.np.fft.x). A function
    ndx lacks, a call its signature does not take, or one it reports NotImplementedError for
    runs NumPy on host copies (one NumpyFallbackWarning per function; NumpyFallbackError while
    autograd records). Types other than ndx and NumPy arrays get NotImplemented."""
    for t in types:
        if not issubclass(t, (_ndarray, _onp.ndarray)):
            return NotImplemented
    target = _function_target(func)
    reason = None
    if target is None and func.__name__ in _ON_HOST and func.__module__ == "numpy":
        return _run_on_host(func, args, kwargs, (), func.__name__)
    if target is not None:
        reason = target.mismatch(args, kwargs)
        if reason is not None and kwargs:
            # NumPy's own defaults, passed on by NumPy (numpy.ones(3, like=a) gives order='C'),
            # ask for nothing: leave out those ndx's function does not take and try again.
            trimmed = _without_numpy_defaults(func, target, kwargs)
            if len(trimmed) < len(kwargs) and target.mismatch(args, trimmed) is None:
                reason, kwargs = None, trimmed
        if reason is None:
            try:
                return target.fn(*args, **kwargs)
            except NotImplementedError as e:
                reason = str(e)
    return _fallback(f"{func.__module__}.{func.__name__}", func, args, kwargs, reason=reason)


_numpy_defaults = {}  # NumPy function -> {parameter: default} for its plain defaults


def _without_numpy_defaults(func, target, kwargs):
    defaults = _numpy_defaults.get(func)
    if defaults is None:
        try:
            ps = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            ps = ()
        defaults = _numpy_defaults[func] = {
            p.name: p.default for p in ps
            if p.default is None or type(p.default) in (bool, int, float, str)}
    names = target.names or ()
    return {k: v for k, v in kwargs.items()
            if k in names or k not in defaults or not _same_value(v, defaults[k])}


def _same_value(v, d):
    return v is d if d is None else type(v) is type(d) and v == d


def _ndim(a):
    """numpy.ndim of an ndx array: read from the array, no copy."""
    return a.ndim


def _shape(a):
    """numpy.shape of an ndx array."""
    return tuple(a.shape)


def _size(a, axis=None):
    """numpy.size of an ndx array: all elements, or those along axis (an int or a tuple)."""
    if axis is None:
        return a.size
    axes = axis if isinstance(axis, tuple) else (axis,)
    return math.prod(a.shape[_operator.index(i)] for i in axes)


# NumPy functions ndx.np lacks that read only an array's metadata: answered from the array.
_METADATA = {"ndim": _ndim, "shape": _shape, "size": _size}
# NumPy functions that print or save an array's values, which only NumPy does: they run on
# host copies with no warning, and while autograd records (their results carry no gradient).
_ON_HOST = frozenset(("array2string", "array_repr", "array_str", "save", "savetxt", "savez",
                      "savez_compressed", "common_type"))


def install(ndarray):
    """Gives ndarray the two protocols."""
    ndarray.__array_ufunc__ = array_ufunc
    ndarray.__array_function__ = array_function
