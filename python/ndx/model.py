"""MXNet's checkpoint files: ``prefix-symbol.json`` (the graph) and ``prefix-NNNN.params`` (its
arguments as 'arg:<name>' and auxiliary states as 'aux:<name>' in MXNet's NDArray-list
layout), as MXNet's ``mx.model.save_checkpoint`` / ``load_checkpoint`` write and read them.
Files MXNet wrote load here, MXNet's legacy op names included (see ndx.sym.load)."""
import operator

from . import nd, sym

__all__ = ["save_checkpoint", "load_checkpoint", "load_params"]  # (and BatchEndParam)


def _params_file(prefix, epoch):
    try:
        number = operator.index(epoch) if not isinstance(epoch, bool) else -1
    except TypeError:
        number = -1
    if number < 0:
        raise ValueError(f"[model] epoch must be an int >= 0, got {epoch!r}")
    epoch = number
    return f"{prefix}-{epoch:04d}.params"


def save_params_file(fname, arg_params, aux_params):
    """Writes arg_params / aux_params as MXNet's 'arg:<name>' / 'aux:<name>' .params file."""
    data = {f"arg:{k}": v for k, v in (arg_params or {}).items()}
    data.update({f"aux:{k}": v for k, v in (aux_params or {}).items()})
    nd.save(fname, data)


def load_params_file(fname, who="model.load_params"):
    """(arg_params, aux_params) of a .params file; unnamed arrays, or names without an
    'arg:' / 'aux:' prefix, are a ValueError naming them."""
    arg_params, aux_params = {}, {}
    loaded = nd.load(fname)
    if not isinstance(loaded, dict):
        raise ValueError(f"[{who}] {fname} holds unnamed arrays; a checkpoint names them "
                         f"'arg:<name>' / 'aux:<name>'")
    for key, value in loaded.items():
        kind, _, name = key.partition(":")
        if kind == "arg" and name:
            arg_params[name] = value
        elif kind == "aux" and name:
            aux_params[name] = value
        else:
            raise ValueError(f"[{who}] '{key}' in {fname} is neither 'arg:<name>' nor "
                             f"'aux:<name>'")
    return arg_params, aux_params


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Writes prefix-symbol.json and prefix-%04d.params (epoch). remove_amp_cast is MXNet's
    argument; ndx's graphs hold no AMP casts to remove."""
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json")
    save_params_file(_params_file(prefix, epoch), arg_params, aux_params)


def load_params(prefix, epoch):
    """(arg_params, aux_params) from prefix-%04d.params."""
    return load_params_file(_params_file(prefix, epoch))


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) from prefix-symbol.json and prefix-%04d.params."""
    symbol = sym.load(f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


def __getattr__(name):
    # mx.model.BatchEndParam and FeedForward are built on the module package, which imports
    # this one: imported at first use
    if name == "BatchEndParam":
        from .module.base_module import BatchEndParam
        return BatchEndParam
    if name == "FeedForward":
        from .feedforward import FeedForward
        return FeedForward
    raise AttributeError(f"module 'ndx.model' has no attribute {name!r}")
