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

__all__ = ["alias_as_mxnet", "remove_alias", "AliasFinder", "SpellingFinder"]


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


class SpellingFinder(importlib.abc.MetaPathFinder):
    """Serves MXNet's spellings of ndx's modules under ndx itself: ``import ndx.ndarray``,
    ``from ndx.symbol import Symbol``, ``import ndx.ndarray.contrib`` (ndx.nd, ndx.sym, ...),
    for code ported by renaming ``mxnet`` to ``ndx``. Only the names in `spellings` (MXNet's
    name -> ndx's attribute) are served; ndx's own modules import as usual."""

    def __init__(self, package, spellings):
        self.package = package
        self.spellings = dict(spellings)

    def find_spec(self, fullname, path=None, target=None):
        parts = fullname.split(".")
        if len(parts) < 2 or parts[0] != self.package or parts[1] not in self.spellings:
            return None
        module = importlib.import_module(f"{self.package}.{self.spellings[parts[1]]}")
        for part in parts[2:]:
            attr = getattr(module, part, None)
            if isinstance(attr, types.ModuleType):
                module = attr
            else:
                try:
                    module = importlib.import_module(f"{module.__name__}.{part}")
                except ModuleNotFoundError:
                    return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=hasattr(module, "__path__"))


def serve_mxnet_spellings(package="ndx"):
    """Installs the SpellingFinder of `package` (idempotent); ndx does it on import."""
    if not any(isinstance(f, SpellingFinder) and f.package == package for f in sys.meta_path):
        # First in line: below ndx.ndarray the path finder would load second copies of
        # ndx.nd's submodules from the alias's __path__.
        sys.meta_path.insert(0, SpellingFinder(package, _MXNET_SPELLINGS))


# MXNet's module names that ndx spells differently (ndx's attributes of the same name exist).
_MXNET_SPELLINGS = {"ndarray": "nd", "symbol": "sym", "visualization": "viz",
                    "attribute": "sym", "kv": "kvstore", "mod": "module", "mon": "monitor",
                    "init": "initializer"}


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
