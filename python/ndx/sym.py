"""Symbols: graphs built without values. Every registered op is a function here, generated from
the registry like ndx.np (`_np_x` as `sym.x`, `_npx_x` as `sym.npx_x`... and every op under its
registered name), taking symbols and params. Symbols save and load as graph JSON (the layout
HybridBlock.export writes), infer shapes and dtypes, and run on arrays with eval().

    x = sym.var("x"); w = sym.var("w")
    y = sym.tanh(sym.matmul(x, w)) * 2
    y.infer_shape(x=(4, 3), w=(3, 5))     # [(4, 5)]
    y.eval(x=..., w=...)
"""
from . import _core
from . import numpy as _np
from ._registry import ops as _ops

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json"]

_counter = [0]


def _name(op):
    _counter[0] += 1
    return f"{op.lstrip('_')}{_counter[0]}"


class Symbol:
    """A graph: its inputs (list_arguments), outputs, JSON (tojson), and shape/dtype inference."""

    def __init__(self, handle):
        self._handle = handle

    # ---- inspection ----
    def list_arguments(self):
        return _core._graph_inputs(self._handle)

    def __len__(self):
        return _core._sym_num_outputs(self._handle)

    def __getitem__(self, i):
        return Symbol(_core._sym_output(self._handle, i))

    def tojson(self):
        return _core._graph_json(self._handle)

    def save(self, fname):
        with open(fname, "w") as f:
            f.write(self.tojson())

    def infer_shape(self, **shapes):
        """Output shapes from input shapes given by name (dtypes default to float32)."""
        return self.infer(shapes, {})[0]

    def infer_type(self, **dtypes):
        """Output dtypes from input dtypes given by name (shapes must be inferable: pass them
        with infer())."""
        return self.infer({n: () for n in self.list_arguments()}, dtypes)[1]

    def infer(self, shapes, dtypes):
        names = self.list_arguments()
        missing = [n for n in names if n not in shapes]
        if missing:
            raise ValueError(f"[infer_shape] no shape for inputs {missing}")
        return _core._graph_infer(self._handle, [shapes[n] for n in names],
                                  [dtypes.get(n, "float32") for n in names])

    def eval(self, **inputs):
        """Runs the graph on arrays given by input name; returns the list of outputs."""
        names = self.list_arguments()
        missing = [n for n in names if n not in inputs]
        if missing:
            raise ValueError(f"[eval] no value for inputs {missing}")
        return _core._graph_run(self._handle, [inputs[n] for n in names])

    def gradient(self, wrt):
        """The symbol of d(sum_i outputs_i * head_grad_i)/d(input) for each input named in wrt:
        a graph built by the gradient pass from the ops' registered gradients. Its inputs are
        this symbol's (those the gradients use) plus head_grad0, head_grad1, ..."""
        if isinstance(wrt, str):
            wrt = [wrt]
        return Symbol(_core._sym_gradient(self._handle, list(wrt)))

    # ---- arithmetic, as the np functions ----
    def _binary(self, op, other, reflected=False):
        other = other if isinstance(other, Symbol) else _constant(other)
        a, b = (other, self) if reflected else (self, other)
        return _apply(op, [a, b], {})

    def __add__(self, o):
        return self._binary("_np_add", o)

    def __radd__(self, o):
        return self._binary("_np_add", o, True)

    def __sub__(self, o):
        return self._binary("_np_subtract", o)

    def __rsub__(self, o):
        return self._binary("_np_subtract", o, True)

    def __mul__(self, o):
        return self._binary("_np_multiply", o)

    def __rmul__(self, o):
        return self._binary("_np_multiply", o, True)

    def __truediv__(self, o):
        return self._binary("_np_true_divide", o)

    def __rtruediv__(self, o):
        return self._binary("_np_true_divide", o, True)

    def __pow__(self, o):
        return self._binary("_np_power", o)

    def __matmul__(self, o):
        return self._binary("_np_matmul", o)

    def __neg__(self):
        return _apply("_np_negative", [self], {})

    def __repr__(self):
        return f"<Symbol inputs={self.list_arguments()} outputs={len(self)}>"


def _constant(value):
    """A constant operand. Symbols carry no dtype, so Python scalars take the default float
    dtype (float32): `sym_x * 2` stays float32 for float32 inputs."""
    if isinstance(value, (bool, int, float)):
        arr = _np.array(float(value), dtype=_core._default_float())
    else:
        arr = value if isinstance(value, _np.ndarray) else _np.array(value)
    return Symbol(_core._sym_const(arr))


def _apply(op, inputs, params, name=None):
    for s in inputs:
        if not isinstance(s, Symbol):
            raise TypeError(f"[sym.{op}] inputs must be Symbols, got {type(s).__name__}")
    params = {k: v for k, v in params.items() if v is not None}
    return Symbol(_core._sym_op(op, [s._handle for s in inputs], params, name or _name(op)))


def var(name):
    """A symbol for the graph input `name`."""
    return Symbol(_core._sym_var(name))


Variable = var


def Group(symbols):  # noqa: N802  (MXNet's name)
    return Symbol(_core._sym_group([s._handle for s in symbols]))


def load_json(text):
    return Symbol(_core._graph_load(text))


def load(fname):
    with open(fname) as f:
        return load_json(f.read())


def _make(op):
    n_in = len(_ops()[op].inputs)

    def f(*inputs, name=None, **params):
        syms = list(inputs)
        if op != "Custom" and n_in and len(syms) > n_in:
            raise TypeError(f"sym.{op} takes {n_in} symbol inputs, got {len(syms)}")
        return _apply(op, syms, params, name)
    f.__name__ = op
    f.__doc__ = f"Symbolic {op}: takes Symbols and params (as for the imperative function)."
    return f


def _populate():
    g = globals()
    for op in _ops():
        if op.startswith("_backward"):
            continue
        g[op] = _make(op)
        for prefix in ("_np_", "_npx_"):
            if op.startswith(prefix) and op[len(prefix):] not in g:
                g[op[len(prefix):]] = g[op]


_populate()


def Custom(*inputs, op_type, name=None, **params):  # noqa: N802  (MXNet's name)
    """A symbolic Python custom operator (ndx.operator.register)."""
    return _apply("Custom", list(inputs), dict(params, op_type=op_type), name)
