"""The FFI's registered C++ functions: ``_api_internal.zeros`` is the function registered as
"_npi.zeros" (``NDX_REGISTER_API``); any registered name works through ``get(name)``."""
from . import _core


def get(name):
    """The registered function `name` as a callable (positional, typed arguments)."""
    f = _core._get_api(name)
    if f is None:
        raise AttributeError(f"no FFI function named '{name}' is registered")
    return f


def list_functions():
    """Names of all registered FFI functions."""
    return _core._list_api()


def __getattr__(name):
    for full in (f"_npi.{name}", name):
        f = _core._get_api(full)
        if f is not None:
            globals()[name] = f
            return f
    raise AttributeError(f"no FFI function named '_npi.{name}' or '{name}' is registered")
