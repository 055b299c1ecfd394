"""MXNet's ``mxnet.numpy_op_signature``: makes the signatures of the operators built into
``np`` and ``npx`` read like NumPy's for ``inspect.signature`` and ``help()``.

ndx generates every operator function from the registry with its real signature already
(``_registry.make_function``); this module keeps MXNet's entry points and fills a signature
only where a function lacks one."""
import inspect

from . import _registry
from . import numpy as _np
from . import numpy_extension as _npx

__all__ = []


def _get_builtin_op(op_name):
    """The np / npx function of a registered ``_np_*`` / ``_npx_*`` op (None for other names);
    ValueError when the namespace lacks it."""
    for prefix, module in (("_np_", _np), ("_npx_", _npx)):
        if op_name.startswith(prefix):
            public = op_name[len(prefix):]
            op = getattr(module, public, None)
            if op is None:
                raise ValueError(f"[numpy_op_signature] no operator '{public}' in "
                                 f"{module.__name__}")
            return op
    return None


def _register_op_signatures():
    """Gives each np / npx operator function without a signature its registry signature."""
    for name, info in _registry.ops().items():
        try:
            op = _get_builtin_op(name)
        except ValueError:
            continue  # registered but wrapped under another name in Python
        if op is None:
            continue
        try:
            inspect.signature(op)
        except (TypeError, ValueError):
            try:
                op.__signature__ = info.signature()
            except (AttributeError, TypeError):
                pass  # a builtin that takes no attributes keeps what it has


_register_op_signatures()
