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
dtypes as MXNet does: from the inputs given, forward through the ops, and backward into
inputs the ops can work out (a layer's parameters from its data, a custom op's label), so
``fully_connected(x, num_hidden=10, name="fc").infer_shape(x=(4, 3))`` gives fc_weight's and
fc_bias's shapes. Inputs an op is called without become variables '<name>_<input>', as in
MXNet; they may also be given by name (``fully_connected(data=x, weight=w, ...)``).
"""
import builtins as _builtins  # (any, all, sum, ... are ops in this module)
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
        """Output i, or the output named i (as list_outputs names it: 'fc1_output')."""
        if isinstance(i, str):
            names = self.list_outputs()
            if i not in names:
                raise ValueError(f"[Symbol] no output named '{i}'; the outputs are "
                                 f"{names[:10]}{' ...' if len(names) > 10 else ''}")
            if names.count(i) > 1:
                raise ValueError(f"[Symbol] several outputs are named '{i}'")
            i = names.index(i)
        return Symbol(_core._sym_output(self._handle, i))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # copies and pickles go through the graph's JSON, as MXNet's Symbol does
    def __deepcopy__(self, memo):
        return Symbol(_load_graph(self.tojson()))

    def __copy__(self):
        return Symbol(_load_graph(self.tojson()))

    def __getstate__(self):
        return {"json": self.tojson()}

    def __setstate__(self, state):
        self._handle = _load_graph(state["json"])

    # ---- MXNet's graph navigation and attributes ----
    def get_internals(self):
        """A group of every input and every op output of the graph, inputs first (MXNet's:
        ``net.get_internals()['fc1_output']`` is the symbol of a layer's output)."""
        return Symbol(_core._sym_internals(self._handle))

    def get_children(self):
        """A group of the entries the output nodes read; None for an input."""
        children = Symbol(_core._sym_children(self._handle))
        return children if len(children) else None

    def _head_nodes(self):
        doc = _json.loads(self.tojson())
        return [doc["nodes"][h[0]] for h in doc["heads"]]

    def list_attr(self):
        """The attributes of the output node: an op's params, an input's attributes
        ('__shape__', '__lr_mult__', ...), as strings."""
        heads = self._head_nodes()
        if len(heads) != 1:
            raise ValueError("[Symbol] list_attr of a group: use attr_dict()")
        return dict(heads[0].get("attrs", {}))

    def attr(self, key):
        """One attribute of the output node as a str, None when it has none."""
        return self.list_attr().get(key)

    def attr_dict(self):
        """{node name: its attributes} of every node that has some."""
        doc = _json.loads(self.tojson())
        return {n["name"]: dict(n["attrs"]) for n in doc["nodes"]
                if n.get("attrs") and "__const__" not in n["attrs"]}

    def debug_str(self):
        """The graph as text: each op with its inputs and params."""
        doc = _json.loads(self.tojson())
        lines = []
        for n in doc["nodes"]:
            if n["op"] == "null":
                lines.append(f"Variable:{n['name']}")
                continue
            ins = ", ".join(doc["nodes"][e[0]]["name"] + (f"[{e[1]}]" if e[1] else "")
                            for e in n["inputs"])
            lines.append(f"Op:{n['op']}, Name={n['name']}\n  Inputs: {ins}\n  Attrs: "
                         f"{n.get('attrs', {})}")
        return "\n".join(lines)

    def _input_hints(self):
        """{input: shape} and {input: dtype} from the inputs' __shape__ / __dtype__
        attributes (shapes with an unknown dimension, 0 or -1, are not hints)."""
        shapes, dtypes = {}, {}
        for n in _json.loads(self.tojson())["nodes"]:
            attrs = n.get("attrs", {}) if n["op"] == "null" else {}
            if "__shape__" in attrs:
                dims = [int(d) for d in attrs["__shape__"].strip("()[] ").split(",") if d.strip()]
                if _builtins.all(d > 0 for d in dims):
                    shapes[n["name"]] = tuple(dims)
            if "__dtype__" in attrs:
                dtypes[n["name"]] = _DTYPE_CODES.get(attrs["__dtype__"], attrs["__dtype__"])
        return shapes, dtypes

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

    def _infer_partial(self, shapes, dtypes):
        """({input: shape}, {input: dtype}, [output shapes], [output dtypes]) from some
        inputs' shapes and dtypes, with what the ops work out for the others (MXNet's
        inference: fully_connected gives its weight's and bias's shapes from the data's, a
        custom op's prop its label's); None where nothing is known."""
        names = self.list_inputs()
        hint_s, hint_t = self._input_hints()  # (a variable's shape= / dtype=)
        shapes, dtypes = dict(hint_s, **shapes), dict(hint_t, **dtypes)
        in_s, in_t, out_s, out_t = _core._graph_infer_partial(
            self._handle, [shapes.get(n) for n in names], [dtypes.get(n) for n in names])
        return dict(zip(names, in_s)), dict(zip(names, in_t)), out_s, out_t

    def infer_shape(self, *args, **kwargs):
        """Shapes from some inputs' shapes, given by position (list_arguments order) or by
        name: (arg_shapes, out_shapes, aux_shapes), as MXNet returns them. The ops work out
        the shapes they can (a layer's parameters from its data, as MXNet); when some input's
        shape stays unknown this raises ValueError naming those inputs (MXNet warns and
        returns (None, None, None))."""
        shapes = self._named("infer_shape", args, kwargs)
        known, _, out_shapes, _ = self._infer_partial(shapes, {})
        missing = [n for n, s in known.items() if s is None]
        if missing:
            raise ValueError(f"[infer_shape] no shape for inputs {missing}: they cannot be "
                             f"decided from those given ({sorted(shapes)}); give them too")
        if _builtins.any(s is None for s in out_shapes):  # the op that cannot go on says why
            out_shapes, _ = self.infer(known, {})
        arg_shapes, aux_shapes = self._split([known[n] for n in self.list_inputs()])
        return arg_shapes, [tuple(s) for s in out_shapes], aux_shapes

    def infer_shape_partial(self, *args, **kwargs):
        """infer_shape that does not raise for shapes it cannot decide: those are None."""
        shapes = self._named("infer_shape_partial", args, kwargs)
        known, _, out_shapes, _ = self._infer_partial(shapes, {})
        arg_shapes, aux_shapes = self._split([known[n] for n in self.list_inputs()])
        return arg_shapes, list(out_shapes), aux_shapes

    def infer_type(self, *args, **kwargs):
        """dtypes from the input dtypes, given by position (list_arguments order) or by name:
        (arg_types, out_types, aux_types) as NumPy scalar types, as MXNet returns them. The
        ops work out the dtypes they can (a layer's parameters from its data's); inputs still
        unknown take the first given dtype (float32 when none is), which is what MXNet infers
        for the elementwise and linear ops such inputs usually feed."""
        given = self._named("infer_type", args, kwargs)
        names = self.list_inputs()
        _, known, _, _ = self._infer_partial({}, given)
        default = next(iter(given.values()), "float32")
        dtypes = {n: default if t is None else t for n, t in known.items()}
        _, _, _, out_types = self._infer_partial({}, dtypes)
        unknown = [i for i, t in enumerate(out_types) if t is None]  # (dtype == None is True)
        if unknown:
            raise ValueError(f"[infer_type] could not infer the dtypes of outputs {unknown}")
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
        _, inferred, _, _ = self._infer_partial({}, type_dict)  # (a float16 net's weights)
        dtype = {n: "float32" if inferred[n] is None else inferred[n]
                 for n in self.list_inputs()}
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

    # ---- MXNet's fluent methods ----
    def reshape(self, *shape, **kwargs):
        """Reshaped. MXNet's special values (0 copies a dimension, -2 the rest, -3 merges two,
        -4 splits one) are understood, as MXNet's Symbol.reshape (its shape= keyword too);
        -1 infers one dimension."""
        if "shape" in kwargs:
            shape = (kwargs.pop("shape"),)
        if kwargs.pop("reverse", False):
            raise NotImplementedError("[Symbol.reshape] reverse=True is not supported")
        if kwargs:
            raise TypeError(f"[Symbol.reshape] unexpected arguments {sorted(kwargs)}")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        newshape = _legacy_reshape_shape(str(tuple(int(d) for d in shape)))
        return _apply("_npx_reshape", [self], {"newshape": newshape})

    def flatten(self):
        """(N, d1, d2, ...) -> (N, d1 * d2 * ...), as MXNet's Flatten."""
        return _apply("_npx_reshape", [self], {"newshape": (-2, -1)})

    def astype(self, dtype):
        return _apply("_npi_astype", [self], {"dtype": _onp.dtype(dtype).name
                                              if str(dtype) != "bfloat16" else "bfloat16"})

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _apply("_np_transpose", [self], {"axes": tuple(axes) if axes else None})

    def expand_dims(self, axis):
        return _apply("_np_expand_dims", [self], {"axis": axis})

    def squeeze(self, axis=None):
        return _apply("_np_squeeze", [self], {"axis": axis})

    def clip(self, a_min, a_max):
        return _apply("_npi_clip", [self, _constant_like(a_min), _constant_like(a_max)], {})

    def __repr__(self):
        return f"<Symbol inputs={self.list_arguments()} outputs={len(self)}>"


def _reduction_method(op):
    def method(self, axis=None, keepdims=False):
        return _apply(op, [self], {"axis": axis, "keepdims": keepdims})
    method.__name__ = op.rsplit("_", 1)[-1]
    method.__doc__ = f"{method.__name__} over axis (every axis when None), as {op}."
    return method


def _unary_method(op):
    def method(self):
        return _apply(op, [self], {})
    method.__name__ = op.rsplit("_", 1)[-1]
    method.__doc__ = f"{op} of the symbol."
    return method


for _op in ("_np_sum", "_np_mean", "_np_max", "_np_min", "_np_prod"):
    setattr(Symbol, _op.rsplit("_", 1)[-1], _reduction_method(_op))
for _op in ("_np_exp", "_np_log", "_np_sqrt", "_np_square", "_np_abs", "_np_sin", "_np_cos",
            "_np_tanh", "_npx_sigmoid", "_npx_relu", "_np_sign"):
    setattr(Symbol, _op.rsplit("_", 1)[-1], _unary_method(_op))


def _softmax_method(op):
    def method(self, axis=-1):
        return _apply(op, [self], {"axis": axis})
    method.__name__ = op[len("_npx_"):]
    return method


Symbol.softmax = _softmax_method("_npx_softmax")
Symbol.log_softmax = _softmax_method("_npx_log_softmax")


def _constant_like(value):
    return value if isinstance(value, Symbol) else _constant(value)


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
        if s is not None and not isinstance(s, Symbol):
            raise TypeError(f"[sym.{op}] inputs must be Symbols, got {type(s).__name__}")
    params = {k: v for k, v in params.items() if v is not None}
    # An input left out (None, or missing at the end) becomes the variable '<name>_<input>'.
    return Symbol(_core._sym_op(op, [None if s is None else s._handle for s in inputs], params,
                                name or _name(op)))


# MXNet's dtype codes in a variable's __dtype__ attribute.
_DTYPE_CODES = {"0": "float32", "1": "float64", "2": "float16", "3": "uint8", "4": "int32",
                "5": "int8", "6": "int64", "7": "bool", "12": "bfloat16"}


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, **kwargs):
    """A symbol for the graph input `name`, with MXNet's symbol attributes: `attr` (a dict of
    strings), and shape / dtype (hints infer_shape and infer_type use when not told), lr_mult
    / wd_mult / init (kept as '__lr_mult__', ... for Symbol.attr)."""
    if not isinstance(name, str):
        raise TypeError(f"[sym.var] name must be a str, got {type(name).__name__}")
    if stype not in (None, "default"):
        raise NotImplementedError(f"[sym.var] sparse storage ({stype}) is not supported")
    attrs = {str(k): str(v) for k, v in (attr or {}).items()}
    for key, value in (("shape", shape), ("lr_mult", lr_mult), ("wd_mult", wd_mult),
                       ("dtype", None if dtype is None else _onp.dtype(dtype).name),
                       ("init", None if init is None or isinstance(init, str) else
                        init.dumps() if hasattr(init, "dumps") else str(init))):
        if value is not None:
            attrs[f"__{key}__"] = str(tuple(value)) if key == "shape" else str(value)
    if isinstance(init, str):
        attrs["__init__"] = init
    for k, v in kwargs.items():
        if not (k.startswith("__") and k.endswith("__")):
            raise TypeError(f"[sym.var] unexpected argument '{k}' (attributes are '__name__' "
                            f"keywords or attr=dict)")
        attrs[k] = str(v)
    return Symbol(_core._sym_var(name, attrs) if attrs else _core._sym_var(name))


Variable = var


def Group(symbols):  # noqa: N802  (MXNet's name)
    return Symbol(_core._sym_group([s._handle for s in symbols]))


def load_json(text):
    """A symbol from graph JSON: ndx's, or MXNet's (its legacy layer names, FullyConnected,
    Convolution, BatchNorm, ..., read as ndx's ops with MXNet's defaults)."""
    return Symbol(_load_graph(text))


def load(fname):
    with open(fname) as f:
        return load_json(f.read())


def _place_named(op, syms, named, input_names):
    """syms with the Symbols given by input name put at their inputs' positions (None in the
    gaps, which become variables)."""
    syms = list(syms)
    for k, v in named.items():
        if k not in input_names:
            raise TypeError(f"[sym.{op}] no input named '{k}'; its inputs are {input_names}")
        i = input_names.index(k)
        if i < len(syms) and syms[i] is not None:
            raise TypeError(f"[sym.{op}] input '{k}' given twice")
        syms.extend([None] * (i + 1 - len(syms)))
        syms[i] = v
    return syms


def _make(op):
    info = _ops()[op]
    n_in = len(info.inputs)
    variadic = _builtins.any(t.endswith("[]") for _, t, _ in info.inputs)
    input_names = [n for n, _, _ in info.inputs]

    def f(*inputs, name=None, **params):
        syms = list(inputs)
        named = {k: v for k, v in params.items() if isinstance(v, Symbol)}
        params = {k: v for k, v in params.items() if k not in named}
        if named and not variadic:  # inputs by name, as MXNet: fully_connected(data=x, ...)
            syms = _place_named(op, syms, named, input_names)
        elif named:
            raise TypeError(f"[sym.{op}] takes its inputs by position, got {sorted(named)} "
                            f"by name")
        if op != "Custom" and n_in and not variadic and len(syms) > n_in:
            raise TypeError(f"sym.{op} takes {n_in} symbol inputs, got {len(syms)}")
        return _apply(op, syms, params, name)
    f.__name__ = op
    f.__doc__ = (f"Symbolic {op}: takes Symbols (by position or by input name) and params (as "
                 f"for the imperative function); inputs not given become variables named "
                 f"'<name>_<input>'.")
    return f


def _populate():
    g = globals()
    for op in _ops():
        if op.startswith("_backward"):
            continue
        g[op] = _make(op)
        for prefix in ("_np_", "_npx_", "_npi_"):  # (sym.stack for _npi_stack, ...)
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


# ---- MXNet's legacy layer symbols ------------------------------------------------------------
# The symbolic API MXNet 1.x scripts (and MXNet 2.0's mx.sym) build networks with: MXNet's
# names, defaults and automatic names ('fullyconnected0'), each parameter input not given
# becoming the variable '<name>_<input>' ('fc1_weight', 'bn_moving_mean'), over ndx's ops.
_legacy_counts = {}


def _legacy_name(hint):
    n = _legacy_counts.get(hint, 0)
    _legacy_counts[hint] = n + 1
    return f"{hint}{n}"


def _layer(mx_name, op, inputs, params, name):
    """Applies op to inputs ({input name: Symbol or None}, in the op's order); a None input
    becomes the variable '<name>_<input name>'."""
    name = name or _legacy_name(mx_name.lower())
    syms = [s if s is not None else var(f"{name}_{n}") for n, s in inputs.items()]
    return _apply(op, syms, params, name)


def _tuple(v):
    return () if v is None else (int(v),) if isinstance(v, int) else tuple(int(d) for d in v)


def FullyConnected(data=None, weight=None, bias=None, num_hidden=None, no_bias=False,  # noqa: N802
                   flatten=True, name=None):
    """y = data @ weight.T + bias: weight (num_hidden, K), bias (num_hidden,)."""
    inputs = {"data": data, "weight": weight} if no_bias else \
        {"data": data, "weight": weight, "bias": bias}
    return _layer("FullyConnected", "_npx_fully_connected", inputs,
                  {"num_hidden": num_hidden, "no_bias": no_bias, "flatten": flatten}, name)


def Convolution(data=None, weight=None, bias=None, kernel=None, stride=(), dilate=(),  # noqa: N802
                pad=(), num_filter=None, num_group=1, workspace=1024, no_bias=False,
                cudnn_tune=None, cudnn_off=False, layout=None, name=None):
    """MXNet's Convolution (workspace and the cudnn options are accepted and ignored)."""
    inputs = {"data": data, "weight": weight} if no_bias else \
        {"data": data, "weight": weight, "bias": bias}
    return _layer("Convolution", "_npx_convolution", inputs,
                  {"kernel": _tuple(kernel), "stride": _tuple(stride),
                   "dilate": _tuple(dilate), "pad": _tuple(pad), "num_filter": num_filter,
                   "num_group": num_group, "no_bias": no_bias, "layout": layout}, name)


def Deconvolution(data=None, weight=None, bias=None, kernel=None, stride=(),  # noqa: N802
                  dilate=(), pad=(), adj=(), target_shape=(), num_filter=None, num_group=1,
                  workspace=512, no_bias=True, cudnn_tune=None, cudnn_off=False, layout=None,
                  name=None):
    """MXNet's Deconvolution (no bias by default, as there)."""
    inputs = {"data": data, "weight": weight} if no_bias else \
        {"data": data, "weight": weight, "bias": bias}
    return _layer("Deconvolution", "_npx_deconvolution", inputs,
                  {"kernel": _tuple(kernel), "stride": _tuple(stride),
                   "dilate": _tuple(dilate), "pad": _tuple(pad), "adj": _tuple(adj),
                   "target_shape": _tuple(target_shape), "num_filter": num_filter,
                   "num_group": num_group, "no_bias": no_bias, "layout": layout}, name)


def Activation(data=None, act_type=None, name=None):  # noqa: N802
    return _layer("Activation", "_npx_activation", {"data": data}, {"act_type": act_type},
                  name)


def LeakyReLU(data=None, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,  # noqa
              upper_bound=0.334, name=None):
    """leaky / prelu (slopes from gamma, '<name>_gamma' when not given) / elu / selu / gelu."""
    inputs = {"data": data, "gamma": gamma} if act_type == "prelu" else {"data": data}
    return _layer("LeakyReLU", "_npx_leaky_relu", inputs,
                  {"act_type": act_type, "slope": slope}, name)


def BatchNorm(data=None, gamma=None, beta=None, moving_mean=None, moving_var=None,  # noqa
              eps=1e-3, momentum=0.9, fix_gamma=True, use_global_stats=False,
              output_mean_var=False, axis=1, cudnn_off=False, name=None):
    """MXNet's legacy BatchNorm: eps 1e-3 and fix_gamma=True by default; the running
    statistics are the auxiliary states '<name>_moving_mean' / '<name>_moving_var'."""
    if output_mean_var:
        raise NotImplementedError("[sym.BatchNorm] output_mean_var=True is not supported")
    return _layer("BatchNorm", "_npx_batch_norm",
                  {"data": data, "gamma": gamma, "beta": beta, "moving_mean": moving_mean,
                   "moving_var": moving_var},
                  {"eps": eps, "momentum": momentum, "fix_gamma": fix_gamma,
                   "use_global_stats": use_global_stats, "axis": axis}, name)


def LayerNorm(data=None, gamma=None, beta=None, axis=-1, eps=1e-5,  # noqa: N802
              output_mean_var=False, name=None):
    return _layer("LayerNorm", "_npx_layer_norm", {"data": data, "gamma": gamma, "beta": beta},
                  {"axis": axis, "eps": eps, "output_mean_var": output_mean_var}, name)


def Pooling(data=None, kernel=(), pool_type="max", global_pool=False, cudnn_off=False,  # noqa
            pooling_convention="valid", stride=(), pad=(), p_value=None,
            count_include_pad=True, layout=None, name=None):
    if pool_type == "lp":
        raise NotImplementedError("[sym.Pooling] pool_type='lp' is not supported")
    return _layer("Pooling", "_npx_pooling", {"data": data},
                  {"kernel": _tuple(kernel), "pool_type": pool_type, "global_pool": global_pool,
                   "pooling_convention": pooling_convention, "stride": _tuple(stride),
                   "pad": _tuple(pad), "count_include_pad": count_include_pad,
                   "layout": layout}, name)


def Dropout(data=None, p=0.5, mode="training", axes=(), cudnn_off=False, name=None):  # noqa
    return _layer("Dropout", "_npx_dropout", {"data": data},
                  {"p": p, "mode": mode, "axes": _tuple(axes)}, name)


def Embedding(data=None, weight=None, input_dim=None, output_dim=None,  # noqa: N802
              dtype="float32", sparse_grad=False, name=None):
    """out[..., :] = weight[data[...], :], weight (input_dim, output_dim)."""
    if _onp.dtype(dtype) != _onp.float32:
        raise NotImplementedError(f"[sym.Embedding] dtype={dtype}: the weight is float32")
    return _layer("Embedding", "_npx_embedding", {"data": data, "weight": weight},
                  {"input_dim": input_dim, "output_dim": output_dim}, name)


def Flatten(data=None, name=None):  # noqa: N802
    """(N, d1, d2, ...) -> (N, d1 * d2 * ...)."""
    return _layer("Flatten", "_npx_reshape", {"data": data}, {"newshape": (-2, -1)}, name)


flatten = Flatten


def Concat(*data, dim=1, num_args=None, name=None):  # noqa: N802
    """Joins symbols along dim (1 by default, as MXNet's Concat)."""
    if num_args is not None and num_args != len(data):
        raise ValueError(f"[sym.Concat] num_args={num_args} but {len(data)} inputs given")
    name = name or _legacy_name("concat")
    return _apply("_npi_concatenate", list(data), {"num_args": len(data), "axis": dim}, name)


concat = Concat


def RNN(data=None, parameters=None, state=None, state_cell=None, state_size=None,  # noqa: N802
        num_layers=None, bidirectional=False, mode=None, p=0.0, state_outputs=False,
        projection_size=None, lstm_state_clip_min=None, lstm_state_clip_max=None,
        lstm_state_clip_nan=False, use_sequence_length=False, sequence_length=None,
        name=None):
    """MXNet's fused RNN symbol (TNC data): the flat parameters and the initial states, when
    not given, are the variables '<name>_parameters', '<name>_state' (and
    '<name>_state_cell' for LSTM), their shapes inferred from the data's."""
    if use_sequence_length or sequence_length is not None:
        raise NotImplementedError("[sym.RNN] sequence_length is not supported")
    inputs = {"data": data, "parameters": parameters, "state": state}
    if mode == "lstm":
        inputs["state_cell"] = state_cell
    return _layer("RNN", "_npx_rnn", inputs,
                  {"state_size": state_size, "num_layers": num_layers,
                   "bidirectional": bidirectional, "mode": mode, "p": p,
                   "state_outputs": state_outputs, "projection_size": projection_size,
                   "lstm_state_clip_min": lstm_state_clip_min,
                   "lstm_state_clip_max": lstm_state_clip_max,
                   "lstm_state_clip_nan": lstm_state_clip_nan}, name)


def zeros(shape, dtype=None, name=None):
    """A constant-shaped array of zeros in the graph (float32 by default)."""
    return _apply("_npi_zeros", [], {"shape": _tuple(shape), "dtype": dtype},
                  name or _legacy_name("zeros"))


def ones(shape, dtype=None, name=None):
    return _apply("_npi_ones", [], {"shape": _tuple(shape), "dtype": dtype},
                  name or _legacy_name("ones"))


def full(shape, val, dtype=None, name=None):
    return _apply("_npi_full", [], {"shape": _tuple(shape), "dtype": dtype, "fill_value": val},
                  name or _legacy_name("full"))


def Reshape(data=None, shape=None, reverse=False, name=None):  # noqa: N802
    """MXNet's legacy Reshape: 0 copies a dimension, -1 infers one, -2 copies the rest, -3
    merges two, -4 splits one into the two sizes after it."""
    if reverse:
        raise NotImplementedError("[sym.Reshape] reverse=True is not supported")
    return _apply("_npx_reshape", [data],
                  {"newshape": _legacy_reshape_shape(str(_tuple(shape)))},
                  name or _legacy_name("reshape"))


def Cast(data=None, dtype=None, name=None):  # noqa: N802
    return _apply("_npi_astype", [data], {"dtype": _onp.dtype(dtype).name},
                  name or _legacy_name("cast"))


def BlockGrad(data=None, name=None):  # noqa: N802
    """The data, with no gradient flowing back through it."""
    return _apply("_npx_stop_gradient", [data], {}, name or _legacy_name("blockgrad"))


def MakeLoss(data=None, grad_scale=1.0, valid_thresh=0.0, normalization="null",  # noqa: N802
             name=None):
    """MXNet's MakeLoss: the data as a loss head whose gradient is grad_scale (times the head
    gradient, ones by default); 'batch' / 'valid' normalization is not supported."""
    if normalization != "null":
        raise NotImplementedError(f"[sym.MakeLoss] normalization='{normalization}' is not "
                                  f"supported")
    held = BlockGrad(data)
    return _apply("_np_add", [held, (data - held) * float(grad_scale)], {},
                  name or _legacy_name("makeloss"))


def SliceChannel(data=None, num_outputs=None, axis=1, squeeze_axis=False,  # noqa: N802
                 name=None):
    """num_outputs equal parts along axis (as a group of symbols), the axis dropped from each
    with squeeze_axis."""
    if not isinstance(num_outputs, int) or num_outputs < 1:
        raise ValueError(f"[sym.SliceChannel] num_outputs must be an int >= 1, got "
                         f"{num_outputs!r}")
    name = name or _legacy_name("slicechannel")
    parts = _apply("_npi_split", [data], {"sections": num_outputs, "axis": axis}, name)
    if not squeeze_axis:
        return parts
    return Group([_apply("_np_squeeze", [parts[i]], {"axis": axis}, f"{name}_squeeze{i}")
                  for i in range(num_outputs)])


split = SliceChannel


def clip(data=None, a_min=None, a_max=None, name=None):
    """MXNet's legacy clip: a_min and a_max are scalars."""
    return _apply("_npi_clip", [data, _constant_like(a_min), _constant_like(a_max)], {},
                  name or _legacy_name("clip"))


# MXNet's legacy arithmetic names (broadcasting, as ndx's ops always are).
elemwise_add = broadcast_add = broadcast_plus = _make("_np_add")
elemwise_sub = broadcast_sub = broadcast_minus = _make("_np_subtract")
elemwise_mul = broadcast_mul = _make("_np_multiply")
elemwise_div = broadcast_div = _make("_np_true_divide")
broadcast_maximum, broadcast_minimum = _make("_np_maximum"), _make("_np_minimum")
broadcast_power = _make("_np_power")


def SoftmaxOutput(data=None, label=None, grad_scale=1.0, ignore_label=-1.0,  # noqa: N802
                  multi_output=False, use_ignore=False, preserve_shape=False,
                  normalization="null", out_grad=False, smooth_alpha=0.0, name=None):
    """MXNet's softmax loss head: forward the softmax of data (last axis; axis 1 with
    multi_output), backward (softmax - one_hot(label)) * grad_scale; the label, when not
    given, is the variable '<name>_label' ('softmax_label' for name='softmax')."""
    return _layer("SoftmaxOutput", "SoftmaxOutput", {"data": data, "label": label},
                  {"grad_scale": grad_scale, "ignore_label": ignore_label,
                   "multi_output": multi_output, "use_ignore": use_ignore,
                   "preserve_shape": preserve_shape, "normalization": normalization,
                   "out_grad": out_grad, "smooth_alpha": smooth_alpha}, name)


def _regression_output(mx_name):
    def head(data=None, label=None, grad_scale=1.0, name=None):
        return _layer(mx_name, mx_name, {"data": data, "label": label},
                      {"grad_scale": grad_scale}, name)
    head.__name__ = mx_name
    head.__doc__ = (f"MXNet's {mx_name}: a loss head whose gradient ignores the head gradient; "
                    f"the label, when not given, is the variable '<name>_label' of the data's "
                    f"shape ((N,) for data (N, 1)).")
    return head


LinearRegressionOutput = _regression_output("LinearRegressionOutput")
LogisticRegressionOutput = _regression_output("LogisticRegressionOutput")
MAERegressionOutput = _regression_output("MAERegressionOutput")


def SoftmaxActivation(data=None, mode="instance", name=None):  # noqa: N802
    """Softmax over axis 1: of (N, C) data (mode 'instance') or of (N, C, ...) data (mode
    'channel'); 'instance' with more than two axes is not supported symbolically."""
    return _layer("SoftmaxActivation", "_npx_softmax", {"data": data},
                  {"axis": 1 if mode == "channel" else -1}, name)


# ---- graphs MXNet wrote ----------------------------------------------------------------------
# MXNet's graph JSON names its layer ops by their legacy names (FullyConnected, Convolution,
# BatchNorm, ...: MXNet 2.0 registers _npx_fully_connected & co. as aliases of those), with
# params ndx's ops spell differently or not at all (workspace, cudnn_tune: accepted and
# ignored there). Each entry: ndx's op, the params to drop, MXNet's defaults that differ from
# ndx's op's, and params renamed.
_IGNORED = ("workspace", "cudnn_tune", "cudnn_off", "min_calib_range", "max_calib_range")
_MXNET_OPS = {
    "FullyConnected": ("_npx_fully_connected", (), {}, {}),
    "Convolution": ("_npx_convolution", (), {}, {}),
    "Deconvolution": ("_npx_deconvolution", (), {"no_bias": "True"}, {}),
    "Activation": ("_npx_activation", (), {}, {}),
    "LeakyReLU": ("_npx_leaky_relu", ("lower_bound", "upper_bound"), {}, {}),
    "BatchNorm": ("_npx_batch_norm", ("output_mean_var",), {"eps": "0.001", "fix_gamma": "True"},
                  {}),
    "LayerNorm": ("_npx_layer_norm", (), {}, {}),
    "Pooling": ("_npx_pooling", ("p_value",), {}, {}),
    "Dropout": ("_npx_dropout", (), {}, {}),
    "Embedding": ("_npx_embedding", ("dtype", "sparse_grad"), {}, {}),
    "Flatten": ("_npx_reshape", (), {"newshape": "(-2, -1)"}, {}),
    "Concat": ("_npi_concatenate", (), {"dim": "1"}, {"dim": "axis"}),
    "softmax": ("_npx_softmax", (), {}, {}),
    "log_softmax": ("_npx_log_softmax", (), {}, {}),
    "relu": ("_npx_relu", (), {}, {}),
    "sigmoid": ("_npx_sigmoid", (), {}, {}),
    "BlockGrad": ("_npx_stop_gradient", (), {}, {}),
    "Cast": ("_npi_astype", (), {}, {}),
    "elemwise_add": ("_np_add", (), {}, {}),
    "elemwise_sub": ("_np_subtract", (), {}, {}),
    "elemwise_mul": ("_np_multiply", (), {}, {}),
    "elemwise_div": ("_np_divide", (), {}, {}),
    "broadcast_add": ("_np_add", (), {}, {}),
    "broadcast_sub": ("_np_subtract", (), {}, {}),
    "broadcast_mul": ("_np_multiply", (), {}, {}),
    "broadcast_div": ("_np_divide", (), {}, {}),
    "Softmax": ("SoftmaxOutput", (), {}, {}),  # (MXNet 1.x's deprecated name)
    "Reshape": ("_npx_reshape", ("target_shape", "keep_highest"), {}, {"shape": "newshape"}),
}
# MXNet's legacy Reshape codes as npx.reshape's: 0 copy -> -2, -2 copy the rest -> -4,
# -3 merge two -> -5, -4 split one -> -6 (-1 infers in both).
_RESHAPE_CODES = {0: -2, -1: -1, -2: -4, -3: -5, -4: -6}


def _legacy_reshape_shape(text):
    dims = [int(d) for d in text.strip("()[] ").replace(" ", "").split(",") if d]
    out, i = [], 0
    while i < len(dims):
        d = dims[i]
        if d < -4:
            raise ValueError(f"[load] Reshape: invalid dimension {d} in shape {text}")
        out.append(_RESHAPE_CODES.get(d, d) if d <= 0 else d)
        if d == -4:  # the two sizes after -4 are copied as they are (-1 infers one)
            out.extend(dims[i + 1:i + 3])
            i += 2
        i += 1
    return str(tuple(out))


def _translate_node(node):
    op = node.get("op")
    entry = _MXNET_OPS.get(op)
    if entry is None:
        if op and op.startswith("_npi_") and _ops().get(op) is None and \
                _ops().get("_np_" + op[5:]) is not None:
            node["op"] = "_np_" + op[5:]  # MXNet 2.0's _npi_add is ndx's _np_add
        return
    ndx_op, drop, defaults, rename = entry
    attrs = dict(defaults, **node.get("attrs", node.get("param", {})))
    for k in list(attrs):
        if k in drop or k in _IGNORED or k.startswith("__"):
            if k == "output_mean_var" and attrs[k] in ("True", "1", "true"):
                raise NotImplementedError(f"[load] {op} '{node.get('name')}': "
                                          f"output_mean_var=True is not supported")
            del attrs[k]
    for old, new in rename.items():
        if old in attrs:
            attrs[new] = attrs.pop(old)
    if op == "Reshape":
        given = node.get("attrs", node.get("param", {}))
        if "shape" not in given and given.get("target_shape", "()") not in ("()", "[]", "0"):
            raise NotImplementedError(f"[load] Reshape '{node.get('name')}': the deprecated "
                                      f"target_shape is not supported; use shape")
        if attrs.get("reverse") in ("True", "1", "true"):
            raise NotImplementedError(f"[load] Reshape '{node.get('name')}': reverse=True "
                                      f"is not supported")
        attrs["newshape"] = _legacy_reshape_shape(attrs.get("newshape", "()"))
    if op == "Concat":
        attrs.setdefault("num_args", str(len(node.get("inputs", []))))
    node["op"] = ndx_op
    node["attrs"] = attrs
    node.pop("param", None)


def _load_graph(text):
    """A graph capsule from graph JSON, ndx's or MXNet's (its legacy op names translated)."""
    try:
        doc = _json.loads(text)
    except (ValueError, RecursionError):  # (the C++ parser says what is wrong)
        doc = None
    nodes = doc.get("nodes") if isinstance(doc, dict) else None
    ops = [n.get("op") for n in nodes if isinstance(n, dict)] if isinstance(nodes, list) else []
    if _builtins.any(op in _MXNET_OPS or str(op).startswith("_npi_") for op in ops):
        for node in nodes:
            if isinstance(node, dict):
                _translate_node(node)
        text = _json.dumps(doc)
    return _core._graph_load(text)
