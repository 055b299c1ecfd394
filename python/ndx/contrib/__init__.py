"""MXNet's ``mx.contrib``: ``mx.contrib.nd`` / ``mx.contrib.ndarray`` (the contrib ops of
mx.nd), ``mx.contrib.io.DataLoaderIter`` (a gluon DataLoader as a DataIter, for Module) and
``mx.contrib.quantization`` (INT8 post-training quantization: quantize_net, quantize_model; also
``mx.contrib.quant``, MXNet's alias of it) and ``mx.contrib.text`` (vocabularies and token
embeddings)."""
import importlib as _importlib

from .. import nd as _nd

ndarray = nd = _nd.contrib

__all__ = ["io", "nd", "ndarray", "quant", "quantization", "text"]


def __getattr__(name):
    # (io and quantization are imported on first use: they need ndx.io and ndx.gluon, which
    # ndx imports after this package)
    if name in ("io", "quantization", "text"):
        return _importlib.import_module(f".{name}", __name__)
    if name == "quant":  # (MXNet's `from . import quantization as quant`)
        return _importlib.import_module(".quantization", __name__)
    raise AttributeError(f"module 'ndx.contrib' has no attribute {name!r}")
