"""Block and HybridBlock. A block's forward is either `forward(self, x, ...)` or, as in the
seeds' templates, `hybrid_forward(self, F, x, ..., **params)` with F the ndx module
(F.np, F.npx) and the block's parameters passed by name."""
from collections import OrderedDict

import numpy as _onp

from .. import _core, autograd
from .. import numpy as np
from .. import numpy_extension as _npx  # noqa: F401  (F.npx)
from .parameter import DeferredInitializationError, Parameter
from .serialization import load_safetensors, save_safetensors

__all__ = ["Block", "HybridBlock", "SymbolBlock"]


class Block:
    def __init__(self, prefix=None, params=None):
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())

    def __setattr__(self, name, value):
        if isinstance(value, Block):
            self._children[name] = value
        elif isinstance(value, Parameter):
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def register_child(self, block, name=None):
        name = name if name is not None else str(len(self._children))
        self._children[name] = block
        return block

    def collect_params(self, select=None):
        """{structured name: Parameter} of this block and its children ('0.weight', ...)."""
        out = OrderedDict()
        for name, p in self._reg_params.items():
            out[name] = p
        for cname, child in self._children.items():
            for name, p in child.collect_params().items():
                out[f"{cname}.{name}"] = p
        if select is not None:
            import re
            pattern = re.compile(select)
            out = OrderedDict((k, v) for k, v in out.items() if pattern.search(k))
        return out

    def initialize(self, init=None, device=None, verbose=False, force_reinit=False, ctx=None):
        """Initializes every parameter (on `device`, MXNet 1.x's `ctx`, the CPU by default)."""
        for p in self.collect_params().values():
            p.initialize(default_init=init, device=device if device is not None else ctx,
                         force_reinit=force_reinit)

    def hybridize(self, active=True, static_alloc=False, static_shape=False, **kwargs):
        """Blocks are plain Python; HybridBlocks capture their forward into a graph on the next
        call and replay it through the cached executor (see HybridBlock)."""
        for child in self._children.values():
            child.hybridize(active, static_alloc=static_alloc, static_shape=static_shape)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must implement forward")

    def save_parameters(self, filename):
        """Writes every parameter in the safetensors layout, atomically (temp file, rename)."""
        tensors = OrderedDict((name, p.data()) for name, p in self.collect_params().items())
        save_safetensors(filename, tensors)

    def load_parameters(self, filename, device=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Reads a file written by save_parameters. Every check happens before any parameter
        changes, so a bad file leaves the block as it was.

        As in MXNet, a parameter whose saved dtype differs from its own is an error unless
        cast_dtype=True; then dtype_source='current' casts the saved values to the
        parameter's dtype and dtype_source='saved' makes the parameter take the saved dtype.
        A saved shape must match the parameter's (dimensions still unknown, 0, are taken from
        the file)."""
        if dtype_source not in ("current", "saved"):
            raise ValueError(f"[load_parameters] dtype_source must be 'current' or 'saved', "
                             f"got {dtype_source!r}")
        loaded = load_safetensors(filename)
        params = self.collect_params()
        missing = [n for n in params if n not in loaded]
        extra = [n for n in loaded if n not in params]
        if missing and not allow_missing:
            raise ValueError(f"[load_parameters] {filename}: parameters missing from the file: "
                             f"{missing[:5]}{' ...' if len(missing) > 5 else ''}")
        if extra and not ignore_extra:
            raise ValueError(f"[load_parameters] {filename}: the file has parameters the block "
                             f"lacks: {extra[:5]}{' ...' if len(extra) > 5 else ''}")
        updates = []
        for name, p in params.items():
            if name not in loaded:
                continue
            data = loaded[name]
            saved_shape = tuple(data.shape)
            if p.shape is not None and (
                    len(p.shape) != len(saved_shape)
                    or any(d > 0 and d != s for d, s in zip(p.shape, saved_shape))):
                raise ValueError(f"[load_parameters] {filename}: parameter {name!r} has shape "
                                 f"{saved_shape} in the file, the block expects {p.shape}")
            current = p._current_dtype()
            saved = _onp.dtype(str(data.dtype))
            retype = False
            if current is not None and saved != current:
                if not cast_dtype:
                    raise ValueError(f"[load_parameters] {filename}: parameter {name!r} is "
                                     f"{saved} in the file, the block's is {current}; pass "
                                     "cast_dtype=True to cast it (dtype_source='current' "
                                     "keeps the block's dtype, 'saved' takes the file's)")
                if dtype_source == "current":
                    data = data.astype(str(current))
                else:
                    retype = True
            updates.append((p, data, retype))
        for p, data, retype in updates:
            if retype:
                p._replace_data(data)
            else:
                p.set_data(data)
        if any(retype for _, _, retype in updates):
            _forget_graphs(self)  # graphs captured for the old dtypes no longer apply

    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for name, child in self._children.items():
            lines.append(f"  ({name}): " + repr(child).replace("\n", "\n  "))
        lines.append(")")
        return "\n".join(lines) if self._children else f"{type(self).__name__}()"


def _forget_graphs(block):
    """Drops the graphs a block tree captured, so the next call traces again."""
    if isinstance(block, HybridBlock):
        object.__setattr__(block, "_graphs", {})
        if "_last_graph" in block.__dict__:
            object.__delattr__(block, "_last_graph")
    for child in block._children.values():
        _forget_graphs(child)


class HybridBlock(Block):
    """A block whose forward can be captured as a graph. After hybridize(), each call looks up
    a graph for its input signature (shapes, dtypes, training mode), tracing the forward once
    when there is none, and replays it through the C++ executor: no Python runs per op, and
    under autograd.record() the replayed ops are recorded, so gradients flow as before."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix, params)
        object.__setattr__(self, "_active", False)
        object.__setattr__(self, "_graphs", {})

    def hybridize(self, active=True, static_alloc=False, static_shape=False, **kwargs):
        object.__setattr__(self, "_active", active)
        object.__setattr__(self, "_graphs", {})
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape)

    def __call__(self, *args):
        if self._active and not _core._is_tracing():
            return self._call_graph(*args)
        return self.forward(*args)

    def forward(self, x, *args):
        if type(self).hybrid_forward is HybridBlock.hybrid_forward:
            raise NotImplementedError(f"{type(self).__name__} must implement forward or "
                                      "hybrid_forward")
        import ndx
        self._infer_params(x, *args)
        params = {name: p.data() for name, p in self._reg_params.items()}
        return self.hybrid_forward(ndx, x, *args, **params)

    def _infer_params(self, x, *args):
        """Layers with deferred parameters finish them here from the input's shape."""

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    # ---- graph capture ----
    def _signature(self, args):
        for a in args:
            if not isinstance(a, np.ndarray):
                raise TypeError(f"[hybridize] {type(self).__name__} inputs must be ndarrays, got "
                                f"{type(a).__name__}")
        return tuple((a.shape, str(a.dtype)) for a in args) + (autograd.is_training(),)

    def _trace(self, args):
        params = self.collect_params()
        try:
            for p in params.values():
                p.data()
        except DeferredInitializationError:
            with autograd.pause(train_mode=autograd.is_training()):
                self.forward(*args)  # one imperative pass settles the deferred shapes
        traced_args = [_core._trace_input(a, f"data{i}") for i, a in enumerate(args)]
        Parameter._traced = {p: _core._trace_input(p.data(), name) for name, p in params.items()}
        prev_tracing = _core._set_tracing(True)
        try:
            with autograd.pause(train_mode=autograd.is_training()):
                out = self.forward(*traced_args)
        finally:
            _core._set_tracing(prev_tracing)
            Parameter._traced = None
        single = not isinstance(out, (list, tuple))
        graph = _core._graph_from_outputs([out] if single else list(out))
        return graph, _core._graph_inputs(graph), single

    def _call_graph(self, *args):
        key = self._signature(args)
        cached = self._graphs.get(key)
        if cached is None:
            cached = self._trace(args)
            self._graphs[key] = cached
            object.__setattr__(self, "_last_graph", cached)
        graph, names, single = cached
        return _run_graph(graph, names, single, args, self.collect_params())

    def export(self, path, epoch=0):
        """Writes the last captured graph to `path`-symbol.json and the parameters it uses to
        `path`-NNNN.params.safetensors; returns both file names."""
        cached = getattr(self, "_last_graph", None)
        if cached is None:
            raise RuntimeError("[export] call hybridize() and run the block once before export()")
        graph, names, _ = cached
        params = self.collect_params()
        sym_file = f"{path}-symbol.json"
        params_file = f"{path}-{epoch:04d}.params.safetensors"
        with open(sym_file, "w") as f:
            f.write(_core._graph_json(graph))
        save_safetensors(params_file, {n: params[n].data() for n in names if n in params})
        return sym_file, params_file


def _run_graph(graph, names, single, args, params):
    inputs = []
    for name in names:
        if name.startswith("data") and name[4:].isdigit() and int(name[4:]) < len(args):
            inputs.append(args[int(name[4:])])
        elif name in params:
            inputs.append(params[name].data())
        else:
            raise ValueError(f"[graph] no value for graph input '{name}'")
    out = _core._graph_run(graph, inputs)
    return out[0] if single else tuple(out)


class SymbolBlock(HybridBlock):
    """A block made from an exported graph and its parameters."""

    def __init__(self, graph, input_names, params):
        super().__init__()
        object.__setattr__(self, "_graph", graph)
        object.__setattr__(self, "_input_names", list(input_names))
        names = _core._graph_inputs(graph)
        for n in names:
            if n in self._input_names:
                continue
            if n not in params:
                raise ValueError(f"[SymbolBlock] the graph needs parameter '{n}', which the "
                                 "parameter file does not have")
            p = Parameter(n, shape=tuple(params[n].shape), dtype=str(params[n].dtype))
            p.set_data(params[n])
            self._reg_params[n] = p

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, device=None):
        """Loads a block written by HybridBlock.export()."""
        if isinstance(input_names, str):
            input_names = [input_names]
        with open(symbol_file) as f:
            graph = _core._graph_load(f.read())
        params = load_safetensors(param_file) if param_file else {}
        return SymbolBlock(graph, input_names, params)

    def forward(self, *args):
        if len(args) != len(self._input_names):
            raise ValueError(f"[SymbolBlock] expected {len(self._input_names)} inputs "
                             f"({self._input_names}), got {len(args)}")
        names = _core._graph_inputs(self._graph)
        values = dict(zip(self._input_names, args))
        inputs = [values[n] if n in values else self._reg_params[n].data() for n in names]
        out = _core._graph_run(self._graph, inputs)
        return out[0] if len(out) == 1 else tuple(out)

    __call__ = forward
