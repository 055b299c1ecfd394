"""MXNet 1.x's ``mx.contrib``: ``mx.contrib.nd`` / ``mx.contrib.ndarray`` (the contrib ops of
mx.nd) and ``mx.contrib.io.DataLoaderIter`` (a gluon DataLoader as a DataIter, for Module)."""
import importlib as _importlib

from .. import nd as _nd

ndarray = nd = _nd.contrib

__all__ = ["io", "nd", "ndarray"]


def __getattr__(name):
    # (io is imported on first use: it needs ndx.io, which ndx imports after this package)
    if name == "io":
        return _importlib.import_module(".io", __name__)
    raise AttributeError(f"module 'ndx.contrib' has no attribute {name!r}")
