"""MXNet's ``mxnet.util``: the NumPy-semantics switches and decorators, and small helpers.

ndx has no legacy (non-NumPy) mode: arrays are always ``ndx.numpy.ndarray`` with NumPy shapes
(``()`` is a scalar, 0 a zero-size dim). The switches exist so that MXNet 2.0 code runs
unchanged: they keep MXNet's state (per thread; NumPy shape and array semantics start *on* here,
because that is what ndx does), ``set_np(dtype=...)`` really switches the default float dtype,
and ``use_np`` decorates functions and classes as in MXNet.
"""
import functools
import inspect
import os
import shutil
import tempfile
import threading

import numpy as _onp

from . import _core

__all__ = ["use_np", "use_np_shape", "use_np_array", "use_np_default_dtype", "np_shape",
           "np_array", "set_np", "reset_np", "set_np_shape", "is_np_shape", "is_np_array",
           "is_np_default_dtype", "set_np_default_dtype", "np_ufunc_legal_option",
           "TemporaryDirectory", "getenv", "setenv", "get_gpu_count", "get_gpu_memory",
           "set_module", "wrap_ctx_to_device_func"]

_state = threading.local()


def _get(name):
    return getattr(_state, name, True)


def _set(name, value):
    prev = _get(name)
    setattr(_state, name, bool(value))
    return prev


def is_np_shape():
    """Whether NumPy shape semantics is on for this thread (on unless turned off)."""
    return _get("shape")


def is_np_array():
    """Whether NumPy array semantics is on for this thread (on unless turned off)."""
    return _get("array")


def set_np_shape(active):
    """Turns NumPy shape semantics on or off; returns the previous state. As in MXNet, turning
    it off while NumPy array semantics is on is refused."""
    if not active and is_np_array():
        raise ValueError("[set_np_shape] NumPy shape semantics cannot be turned off while NumPy "
                         "array semantics is on; call npx.reset_np() to turn off both")
    return _set("shape", active)


def _set_np_array(active):
    return _set("array", active)


def is_np_default_dtype():
    """True when the default float dtype is NumPy's float64 (set_np(dtype=True))."""
    return str(_core._default_float()) == "float64"


def set_np_default_dtype(is_np_default_dtype=True):  # noqa: FBT002  (MXNet's signature)
    """float64 as the default float dtype (True) or float32 (False); returns the previous
    state."""
    prev = globals()["is_np_default_dtype"]()
    _core._set_default_float("float64" if is_np_default_dtype else "float32")
    return prev


def set_np(shape=True, array=True, dtype=False):
    """Sets NumPy shape, array and default-dtype semantics together. shape=False with
    array=True is refused (ValueError), as in MXNet. dtype=True makes float64 the default float
    dtype (NumPy's); dtype=False keeps float32."""
    if not shape and array:
        raise ValueError("[set_np] NumPy shape semantics (shape=True) is required for NumPy "
                         "array semantics (array=True); got shape=False, array=True")
    _set_np_array(array)
    _set("shape", shape)
    set_np_default_dtype(dtype)


def reset_np():
    """Turns NumPy shape, array and default-dtype semantics off together (float32 becomes the
    default float dtype). ndx's arrays keep NumPy semantics regardless."""
    set_np(shape=False, array=False, dtype=False)


class _Scope:
    """A `with` scope setting one semantics flag for this thread, restored on exit."""

    def __init__(self, name, active):
        self._name = name
        self._active = active
        self._prev = None

    def __enter__(self):
        if self._active is not None:
            self._prev = _set(self._name, self._active)
        return self

    def __exit__(self, *exc):
        if self._active is not None:
            _set(self._name, self._prev)


class _DtypeScope:
    def __init__(self, active):
        self._active = active
        self._prev = None

    def __enter__(self):
        self._prev = set_np_default_dtype(self._active)
        return self

    def __exit__(self, *exc):
        set_np_default_dtype(self._prev)


def np_shape(active=True):
    """A `with` scope with NumPy shape semantics on (or off)."""
    return _Scope("shape", active)


def np_array(active=True):
    """A `with` scope with NumPy array semantics on (or off)."""
    return _Scope("array", active)


def np_default_dtype(active=True):
    """A `with` scope with float64 (active) or float32 as the default float dtype."""
    return _DtypeScope(active)


def _scoped(scope_factory, what):
    """A decorator running a function, or every method and property of a class, inside
    scope_factory(). Classes are changed in place and returned, as MXNet does."""
    def decorate(func):
        if inspect.isclass(func):
            members = inspect.getmembers(
                func, predicate=lambda f: inspect.isfunction(f) or inspect.ismethod(f)
                or isinstance(f, property))
            for name, member in members:
                if isinstance(member, property):
                    setattr(func, name, property(decorate(member.fget) if member.fget else None,
                                                 member.fset, member.fdel, member.__doc__))
                elif name in func.__dict__ and isinstance(func.__dict__[name], staticmethod):
                    setattr(func, name, staticmethod(decorate(member)))
                elif inspect.ismethod(member):  # a classmethod, bound to the class
                    setattr(func, name, classmethod(decorate(member.__func__)))
                else:
                    setattr(func, name, decorate(member))
            return func
        if callable(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                with scope_factory():
                    return func(*args, **kwargs)
            return wrapper
        raise TypeError(f"[{what}] can decorate classes and callables only, got "
                        f"{type(func).__name__}")
    return decorate


use_np_shape = _scoped(lambda: np_shape(True), "use_np_shape")
use_np_shape.__doc__ = "Runs a function, or every method of a class, with NumPy shape semantics."
use_np_array = _scoped(lambda: np_array(True), "use_np_array")
use_np_array.__doc__ = "Runs a function, or every method of a class, with NumPy array semantics."
use_np_default_dtype = _scoped(lambda: np_default_dtype(True), "use_np_default_dtype")
use_np_default_dtype.__doc__ = ("Runs a function, or every method of a class, with float64 as "
                                "the default float dtype.")


def use_np(func):
    """Runs a function, or every method and property of a class (changed in place and returned),
    with NumPy shape and array semantics: MXNet 2.0's ``@use_np`` for tests and HybridBlocks."""
    if not callable(func):
        raise TypeError(f"[use_np] can decorate classes and callables only, got "
                        f"{type(func).__name__}")
    return use_np_shape(use_np_array(func))


_UFUNC_DTYPES = {_onp.dtype(t) for t in ("int8", "uint8", "int32", "int64", "float16", "float32",
                                         "float64")}


def np_ufunc_legal_option(key, value):
    """Whether `key=value` is a legal NumPy ufunc keyword argument (as MXNet checks them):
    where: anything; casting: one of NumPy's casting rules; order: a str; dtype: one of int8,
    uint8, int32, int64, float16, float32, float64; subok: a bool. Other keys: False."""
    if key == "where":
        return True
    if key == "casting":
        return value in ("no", "equiv", "safe", "same_kind", "unsafe")
    if key == "order":
        return isinstance(value, str)
    if key == "dtype":
        try:
            return _onp.dtype(value) in _UFUNC_DTYPES
        except TypeError:
            return False
    if key == "subok":
        return isinstance(value, bool)
    return False


class TemporaryDirectory:
    """A temporary directory removed on exit, as MXNet's util.TemporaryDirectory (which works
    around Windows file locks): ``with TemporaryDirectory() as d: ...``."""

    def __init__(self, suffix=None, prefix=None, dir=None):  # noqa: A002  (tempfile's name)
        self.name = tempfile.mkdtemp(suffix=suffix, prefix=prefix, dir=dir)

    def __enter__(self):
        return self.name

    def __exit__(self, *exc):
        self.cleanup()

    def cleanup(self):
        shutil.rmtree(self.name, ignore_errors=True)


def getenv(name):
    """The value of environment variable `name` (None when unset)."""
    return os.environ.get(name)


def setenv(name, value):
    """Sets environment variable `name` (None unsets it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def get_gpu_count():
    """GPUs this process can use."""
    return _core._num_gpus()


def get_gpu_memory(gpu_dev_id):
    """(free, total) bytes of GPU gpu_dev_id."""
    from .device import gpu_memory_info
    return gpu_memory_info(gpu_dev_id)


def set_module(module):
    """Decorator setting a function's or class's __module__."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


def wrap_ctx_to_device_func(func):
    """Accepts MXNet 1.x's ctx= keyword as device=."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if "ctx" in kwargs:
            device = kwargs.pop("ctx")
            if device is not None:
                kwargs["device"] = device
        return func(*args, **kwargs)
    return wrapper
