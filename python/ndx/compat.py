"""Running MXNet code on ndx unchanged: ``import mxnet`` (and ``mxnet.<anything>``) served by
the already-imported ndx modules.

    import ndx.compat
    ndx.compat.alias_as_mxnet()
    import mxnet as mx                       # ndx
    from mxnet.gluon import nn               # ndx.gluon.nn
    from mxnet.test_utils import same        # ndx.test_utils
    from mxnet.ndarray.numpy import _internal as _npi   # ndx.nd.numpy._internal

A finder on ``sys.meta_path`` maps each ``mxnet.a.b`` to the ndx module reached from ``ndx`` by
the attributes ``a`` then ``b`` (so MXNet's module names that ndx spells differently, such as
``ndarray`` -> ``nd`` and ``symbol`` -> ``sym``, follow ndx's attributes), importing an ndx
submodule under its own name where no attribute holds it. The alias and the ndx module are the
same object: nothing is loaded twice, and ``mxnet.np is ndx.np``. Nothing happens unless
alias_as_mxnet() is called; a real ``mxnet`` already imported is left alone (ValueError).
"""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

__all__ = ["alias_as_mxnet", "remove_alias", "AliasFinder"]


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module):
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        # The import system stamps the alias's spec on the module; the module keeps its own.
        module.__spec__ = self._spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Serves the module names under `alias` with the modules under `target` (both top-level
    package names)."""

    def __init__(self, alias, target):
        self.alias = alias
        self.target = target

    def resolve(self, fullname):
        """The target module for an alias name (importing it if needed)."""
        parts = fullname.split(".")
        module = importlib.import_module(self.target)
        for part in parts[1:]:
            attr = getattr(module, part, None)
            if isinstance(attr, types.ModuleType):
                module = attr
            else:
                module = importlib.import_module(f"{module.__name__}.{part}")
        return module

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.alias and not fullname.startswith(self.alias + "."):
            return None
        try:
            module = self.resolve(fullname)
        except ModuleNotFoundError:
            return None
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=is_package)


def alias_as_mxnet(name="mxnet"):
    """Makes ``import mxnet`` / ``import mxnet.x.y`` give ndx's modules (idempotent). Returns
    the ndx package."""
    import ndx
    existing = sys.modules.get(name)
    if existing is not None and existing is not ndx:
        raise ValueError(f"[alias_as_mxnet] a module named '{name}' is already imported "
                         f"({getattr(existing, '__file__', existing)!r}); not replacing it")
    if not any(isinstance(f, AliasFinder) and f.alias == name for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder(name, "ndx"))
    return ndx


def remove_alias(name="mxnet"):
    """Undoes alias_as_mxnet(name): removes the finder and the alias entries of sys.modules."""
    sys.meta_path[:] = [f for f in sys.meta_path
                        if not (isinstance(f, AliasFinder) and f.alias == name)]
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]
