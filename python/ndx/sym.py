"""Symbols: graphs built without values. Every registered op is a function here, generated from
the registry like ndx.np (`_np_x` as `sym.x`, `_npx_x` as `sym.npx_x`... and every op under its
registered name), taking symbols and params. Symbols save and load as graph JSON (the layout
HybridBlock.export writes), infer shapes and dtypes, and run on arrays with eval().

    x = sym.var("x"); w = sym.var("w")
    y = sym.tanh(sym.matmul(x, w)) * 2
    y.infer_shape(x=(4, 3), w=(3, 5))     # ([(4, 3), (3, 5)], [(4, 5)], []), as in MXNet
    y.eval(x=..., w=...)
    exe = y._bind(ndx.cpu(), {"x": ..., "w": ...}, args_grad={...})   # an Executor
    exe.forward(is_train=True); exe.backward(out_grads)

As in MXNet, arguments (list_arguments) exclude auxiliary states (list_auxiliary_states: the
running statistics batch_norm updates in place); list_inputs has both. ndx infers shapes and
dtypes forward only, so every input's shape must be given (MXNet can also infer some
parameter shapes backward from their consumers).
"""
import json as _json

import numpy as _onp

from . import _core
from . import numpy as _np
from ._registry import ops as _ops

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json"]

# Inputs of registered ops that are auxiliary states (updated in place, not differentiated).
_AUX_INPUTS = frozenset({"running_mean", "running_var", "moving_mean", "moving_var"})

_counter = [0]


def _name(op):
    _counter[0] += 1
    return f"{op.lstrip('_')}{_counter[0]}"


class Symbol:
    """A graph: its inputs (list_arguments), outputs, JSON (tojson), and shape/dtype inference."""

    def __init__(self, handle):
        self._handle = handle

    # ---- inspection ----
    def list_inputs(self):
        """Every input of the graph, arguments and auxiliary states, in graph order."""
        return _core._graph_inputs(self._handle)

    def list_arguments(self):
        """The inputs that are not auxiliary states, in graph order (MXNet's arguments)."""
        aux = set(self.list_auxiliary_states())
        return [n for n in self.list_inputs() if n not in aux]

    def list_auxiliary_states(self):
        """Inputs an op updates in place rather than reads as data (batch_norm's running mean
        and variance, a custom op's declared auxiliary states), in graph order."""
        nodes = _json.loads(self.tojson())["nodes"]
        aux = set()
        for node in nodes:
            for i in _aux_positions(node):
                if i < len(node["inputs"]):
                    src = nodes[node["inputs"][i][0]]
                    if src["op"] == "null":
                        aux.add(src["name"])
        return [n for n in self.list_inputs() if n in aux]

    def list_outputs(self):
        """Output names as MXNet forms them: '<node>_output' ('<node>_output<i>' for an op
        with several outputs in the list), an input's own name for an input."""
        doc = _json.loads(self.tojson())
        nodes, heads = doc["nodes"], doc["heads"]
        multi = {h[0] for h in heads if h[1] != 0}
        names = []
        for node_id, index, _ in heads:
            node = nodes[node_id]
            if node["op"] == "null":
                names.append(node["name"])
            elif node_id in multi:
                names.append(f"{node['name']}_output{index}")
            else:
                names.append(f"{node['name']}_output")
        return names

    @property
    def name(self):
        """The name of the node of a single-output symbol (None for a group)."""
        doc = _json.loads(self.tojson())
        if len(doc["heads"]) != 1:
            return None
        return doc["nodes"][doc["heads"][0][0]]["name"]

    def as_np_ndarray(self):
        """This symbol (ndx symbols always have NumPy semantics)."""
        return self

    def as_nd_ndarray(self):
        return self

    def __len__(self):
        return _core._sym_num_outputs(self._handle)

    def __getitem__(self, i):
        return Symbol(_core._sym_output(self._handle, i))

    def tojson(self):
        return _core._graph_json(self._handle)

    def save(self, fname):
        with open(fname, "w") as f:
            f.write(self.tojson())

    def _named(self, what, args, kwargs):
        """{input name: value} from values given by position (list_arguments order) and by
        name (arguments or auxiliary states)."""
        arg_names = self.list_arguments()
        if args and kwargs:
            raise TypeError(f"[{what}] give values either by position or by name, not both")
        if len(args) > len(arg_names):
            raise ValueError(f"[{what}] the symbol has {len(arg_names)} arguments "
                             f"{arg_names}; got {len(args)} positional values")
        named = dict(zip(arg_names, args))
        inputs = set(self.list_inputs())
        for k, v in kwargs.items():
            if k not in inputs:
                raise ValueError(f"[{what}] the symbol has no input named '{k}'; its inputs "
                                 f"are {sorted(inputs)}")
            named[k] = v
        return {k: v for k, v in named.items() if v is not None}

    def _split(self, values):
        """(argument values, auxiliary values) of a per-input list, in MXNet's orders."""
        by_name = dict(zip(self.list_inputs(), values))
        return ([by_name[n] for n in self.list_arguments()],
                [by_name[n] for n in self.list_auxiliary_states()])

    def infer_shape(self, *args, **kwargs):
        """Shapes from the input shapes, given by position (list_arguments order) or by name:
        (arg_shapes, out_shapes, aux_shapes), as MXNet returns them. Every input's shape must
        be known (ndx infers forward only): a missing one raises ValueError naming it."""
        shapes = self._named("infer_shape", args, kwargs)
        out_shapes, _ = self.infer(shapes, {})
        names = self.list_inputs()
        arg_shapes, aux_shapes = self._split([tuple(shapes[n]) for n in names])
        return arg_shapes, [tuple(s) for s in out_shapes], aux_shapes

    def infer_shape_partial(self, *args, **kwargs):
        """infer_shape that does not raise for unknown inputs: their shapes, and the output
        shapes when any input is unknown, are None."""
        shapes = self._named("infer_shape_partial", args, kwargs)
        names = self.list_inputs()
        if not [n for n in names if n not in shapes]:  # (all/any are ops in this module)
            return self.infer_shape(**shapes)
        arg_shapes, aux_shapes = self._split(
            [tuple(shapes[n]) if n in shapes else None for n in names])
        return arg_shapes, [None] * len(self), aux_shapes

    def infer_type(self, *args, **kwargs):
        """dtypes from the input dtypes, given by position (list_arguments order) or by name:
        (arg_types, out_types, aux_types) as NumPy scalar types, as MXNet returns them. Inputs
        not given take the first given dtype (float32 when none is), which is what MXNet
        infers for the elementwise and linear ops such inputs usually feed."""
        given = self._named("infer_type", args, kwargs)
        names = self.list_inputs()
        default = next(iter(given.values()), "float32")
        dtypes = {n: given.get(n, default) for n in names}
        last = None
        for rank in range(5):  # dtypes do not depend on shapes: try small ones until one fits
            try:
                out_types = self.infer({n: (1,) * rank for n in names}, dtypes)[1]
                break
            except (ValueError, TypeError, IndexError) as e:
                last = e
        else:
            raise ValueError(f"[infer_type] could not infer dtypes without shapes ({last}); "
                             f"use Symbol.infer(shapes, dtypes)")
        arg_types, aux_types = self._split([_scalar_type(dtypes[n]) for n in names])
        return arg_types, [_scalar_type(t) for t in out_types], aux_types

    def infer(self, shapes, dtypes):
        """(output shapes, output dtypes) from {input: shape} and {input: dtype} (dtypes
        default to float32)."""
        names = self.list_inputs()
        missing = [n for n in names if n not in shapes]
        if missing:
            raise ValueError(f"[infer_shape] no shape for inputs {missing}")
        return _core._graph_infer(self._handle, [shapes[n] for n in names],
                                  [dtypes.get(n, "float32") for n in names])

    def eval(self, ctx=None, **inputs):
        """Runs the graph on arrays given by input name; returns the list of outputs. (ctx is
        MXNet's device argument: the arrays' own device is used.)"""
        names = self.list_inputs()
        missing = [n for n in names if n not in inputs]
        if missing:
            raise ValueError(f"[eval] no value for inputs {missing}")
        return _core._graph_run(self._handle, [inputs[n] for n in names])

    # ---- executors (MXNet's bind API) ----
    def _bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
              group2ctx=None, shared_exec=None):
        """An Executor running this symbol on `ctx` with argument values `args` (a list in
        list_arguments order, or a dict by name; copied), gradient buffers `args_grad` (list or
        dict; written by backward as `grad_req` says: 'write', 'add' or 'null', one for all or
        a dict by name) and auxiliary states `aux_states` (list or dict)."""
        from .executor import Executor
        if group2ctx is not None:
            raise NotImplementedError("[bind] group2ctx (model parallelism) is not supported")
        return Executor(self, ctx, args, args_grad, grad_req, aux_states)

    bind = _bind

    def _simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None, **kwargs):
        """An Executor with zero-filled arguments, auxiliary states and gradient buffers of the
        shapes given by name in kwargs (dtypes from type_dict, float32 by default)."""
        from .executor import Executor
        if stype_dict and [v for v in stype_dict.values() if v != "default"]:
            raise NotImplementedError("[simple_bind] sparse storage is not supported")
        type_dict = dict(type_dict or {})
        arg_shapes, _, aux_shapes = self.infer_shape(**kwargs)
        dtype = {n: type_dict.get(n, "float32") for n in self.list_inputs()}
        args = {n: _np.zeros(s, dtype=dtype[n], device=ctx)
                for n, s in zip(self.list_arguments(), arg_shapes)}
        aux = {n: _np.zeros(s, dtype=dtype[n], device=ctx)
               for n, s in zip(self.list_auxiliary_states(), aux_shapes)}
        reqs = grad_req if isinstance(grad_req, dict) else dict.fromkeys(args, grad_req)
        if isinstance(grad_req, (list, tuple)):
            reqs = dict(zip(self.list_arguments(), grad_req))
        grads = {n: _np.zeros(a.shape, dtype=a.dtype, device=ctx) for n, a in args.items()
                 if reqs.get(n, "null") != "null"}
        return Executor(self, ctx, args, grads, grad_req, aux)

    simple_bind = _simple_bind

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


def _scalar_type(dtype):
    """MXNet's form of a dtype: the NumPy scalar type (bfloat16 stays a str)."""
    try:
        return _onp.dtype(dtype).type
    except TypeError:
        return dtype


def _aux_positions(node):
    """Positions of the inputs of a JSON graph node that are auxiliary states."""
    if node["op"] == "null":
        return []
    if node["op"] == "Custom":
        from .operator import _REGISTRY
        attrs = dict(node.get("attrs", {}))
        cls = _REGISTRY.get(attrs.pop("op_type", None))
        if cls is None:
            return []
        n_aux = len(cls(**attrs).list_auxiliary_states())
        n_in = len(node["inputs"])
        return list(range(n_in - n_aux, n_in))
    info = _ops().get(node["op"])
    if info is None:
        return []
    return [i for i, (name, _, _) in enumerate(info.inputs) if name in _AUX_INPUTS]


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
    """A symbolic Python custom operator (ndx.operator.register). As in MXNet, inputs may be
    given by the names in the prop's list_arguments() and list_auxiliary_states(), and those
    not given become variables named '<name>_<input>' (MXNet's example
    ``Custom(data=fc, name='softmax', op_type='softmax')`` gets the input 'softmax_label')."""
    named = {k: v for k, v in params.items() if isinstance(v, Symbol)}
    params = {k: v for k, v in params.items() if k not in named}
    names = _custom_input_names(op_type, params)
    if names is not None and (named or len(inputs) < len(names)):
        name = name or _name("Custom")
        inputs = list(inputs) + [named.pop(n) if n in named else var(f"{name}_{n}")
                                 for n in names[len(inputs):]]
    if named and names is not None:  # (an op_type not registered: the op's error says so)
        raise TypeError(f"[sym.Custom] {op_type}: no input (or one given twice) named "
                        f"{sorted(named)}; its inputs are {names}")
    return _apply("Custom", list(inputs), dict(params, op_type=op_type), name)


def _custom_input_names(op_type, params):
    """The input names of the custom op registered as op_type (arguments, then auxiliary
    states), from its prop made with these params; None for an op_type not registered (the
    op's own error names it)."""
    from . import operator
    cls = operator._REGISTRY.get(op_type)
    if cls is None:
        return None
    prop = cls(**{k: str(v) for k, v in params.items() if v is not None})
    return list(prop.list_arguments()) + list(prop.list_auxiliary_states())
