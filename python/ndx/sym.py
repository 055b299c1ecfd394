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
import contextvars as _contextvars
import functools as _functools
import inspect as _inspect
import json as _json

import numpy as _onp

from . import _core
from . import numpy as _np
from ._registry import ops as _ops

__all__ = ["Symbol", "AttrScope", "var", "Variable", "Group", "load", "load_json"]

# Inputs of registered ops that are auxiliary states (updated in place, not differentiated).
_AUX_INPUTS = frozenset({"running_mean", "running_var", "moving_mean", "moving_var"})

_counter = [0]


def _name(op):
    _counter[0] += 1
    return f"{op.lstrip('_')}{_counter[0]}"


def _auto_name(name, hint=None, op=None):
    """A node's name as MXNet's NameManager gives it: `name`, or the next automatic one
    (hint + count for the legacy symbols, ndx's op-based name for the others), with the
    prefix of an mx.name.Prefix in effect."""
    from .name import NameManager
    if hint is not None:
        return NameManager.current.get(name, hint)
    return NameManager.current.get(name or _name(op), None)


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
        """Output names as MXNet forms them: an input's own name, else '<node>_<the op's name
        of the output>': '<node>_output' for one output, '<node>_output<i>' for ops with
        several (split), or the op's own names ('bn_mean', 'rnn0_state_output')."""
        return list(_core._sym_output_names(self._handle))

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

    def __call__(self, *args, **kwargs):
        """A copy of this symbol with inputs replaced by symbols, by position (in
        list_arguments order) or by name: MXNet's composition, ``net2(data2=net1)``."""
        if args and kwargs:
            raise TypeError("[Symbol.__call__] give inputs either by position or by name")
        names = self.list_arguments()
        if len(args) > len(names):
            raise TypeError(f"[Symbol.__call__] the symbol has {len(names)} arguments "
                            f"{names}; got {len(args)}")
        mapping = dict(zip(names, args)) if args else dict(kwargs)
        inputs = set(self.list_inputs())
        for k, v in mapping.items():
            if k not in inputs:
                raise ValueError(f"[Symbol.__call__] the symbol has no input named '{k}'; its "
                                 f"inputs are {sorted(inputs)}")
            if not isinstance(v, Symbol):
                raise TypeError(f"[Symbol.__call__] input '{k}' must be a Symbol, got "
                                f"{type(v).__name__}")
        return Symbol(_core._sym_compose(self._handle, {k: v._handle
                                                        for k, v in mapping.items()}))

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
            if "__const__" in attrs:
                continue
            if "__shape__" in attrs:
                dims = _shape_hint(attrs["__shape__"])
                if dims:  # (MXNet 1.x: () and 0 dims are unknown)
                    shapes[n["name"]] = dims
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

    def _simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                     group2ctx=None, shared_arg_names=None, shared_exec=None,
                     shared_buffer=None, **kwargs):
        """An Executor with zero-filled arguments, auxiliary states and gradient buffers of the
        shapes given by name in kwargs (dtypes from type_dict, float32 by default).
        shared_buffer (MXNet's memory pool) is accepted and not needed; parameters shared
        with another executor (shared_exec / shared_arg_names) are Executor.reshape's."""
        from .executor import Executor
        for name, stype in (stype_dict or {}).items():  # (the arrays are dense)
            if stype not in _STORAGE_TYPE_IDS:
                raise ValueError(f"[simple_bind] stype_dict[{name!r}]: expected 'default', "
                                 f"'row_sparse' or 'csr', got {stype!r}")
        if group2ctx is not None:
            raise NotImplementedError("[simple_bind] group2ctx (model parallelism) is not "
                                      "supported")
        if shared_exec is not None or shared_arg_names is not None:
            raise NotImplementedError("[simple_bind] shared_exec / shared_arg_names are not "
                                      "supported; exe.reshape(data=...) makes an executor "
                                      "sharing the parameters")
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
        if isinstance(other, (bool, int, float)) and not isinstance(other, _onp.generic):
            # a Python scalar is weak (NEP 50), typed against this symbol's dtype at run time:
            # float16 data * 2 stays float16, as it does imperatively
            kind = 0 if isinstance(other, bool) else 1 if isinstance(other, int) else 2
            text = repr(float(other)) if kind == 2 else str(int(other))  # (ints exactly)
            other = _apply("_npi_weak_scalar_like", [self], {"value": text, "kind": kind})
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

    # Comparisons (bool symbols), as MXNet's Symbol has them for loop conditions (i < n);
    # == and != stay Python's identity tests, which code holding symbols in sets relies on.
    def __lt__(self, o):
        return self._binary("_np_less", o)

    def __le__(self, o):
        return self._binary("_np_less_equal", o)

    def __gt__(self, o):
        return self._binary("_np_greater", o)

    def __ge__(self, o):
        return self._binary("_np_greater_equal", o)

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
        return _apply("_npi_clip", [self, _constant_like(a_min, self),
                                    _constant_like(a_max, self)], {})

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


def _constant_like(value, data):
    """value as an operand of data's dtype (MXNet's DType(scalar): float16 data stays float16,
    integer data integer)."""
    if isinstance(value, Symbol):
        return value
    return _apply("_npi_cast_like", [_constant(value), data], {})


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
    """A constant operand (a Python scalar takes the default float dtype; in arithmetic,
    Symbol._binary types Python scalars against the other operand instead)."""
    if isinstance(value, (bool, int, float)):
        arr = _np.array(float(value), dtype=_core._default_float())
    else:
        arr = value if isinstance(value, _np.ndarray) else _np.array(value)
    return Symbol(_core._sym_const(arr))


# The names of the nodes made while sym.contrib's control flow calls a body: its own nodes.
_made_in_body = _contextvars.ContextVar("ndx_sym_body_nodes", default=None)


def _apply(op, inputs, params, name=None):
    for s in inputs:
        if s is not None and not isinstance(s, Symbol):
            raise TypeError(f"[sym.{op}] inputs must be Symbols, got {type(s).__name__}")
    params = {k: v for k, v in params.items() if v is not None}
    name = name if name else _auto_name(None, op=op)
    made = _made_in_body.get()
    if made is not None:
        made.add(name)
    # An input left out (None, or missing at the end) becomes the variable '<name>_<input>'.
    return Symbol(_core._sym_op(op, [None if s is None else s._handle for s in inputs], params,
                                name))


# MXNet's dtype codes in a variable's __dtype__ attribute.
_DTYPE_CODES = {"0": "float32", "1": "float64", "2": "float16", "3": "uint8", "4": "int32",
                "5": "int8", "6": "int64", "7": "bool", "8": "int16", "9": "uint16",
                "10": "uint32", "11": "uint64", "12": "bfloat16"}


def _shape_hint(text):
    """A __shape__ attribute as a tuple, None when it has an unknown dimension (0, -1, None)
    or cannot be read ('(2L, 3L)' from Python 2 is read)."""
    dims = []
    for d in str(text).strip("()[] ").split(","):
        d = d.strip().rstrip("Ll")
        if not d:
            continue
        try:
            dims.append(int(d))
        except ValueError:
            return None
    return tuple(dims) if dims and _builtins.all(d > 0 for d in dims) else None


def _dtype_name(dtype):
    return "bfloat16" if str(dtype) == "bfloat16" else _onp.dtype(dtype).name


# MXNet's op symbols take attr= and these keywords (as strings '__lr_mult__', ...): they go to
# the parameter variables the op creates ('fc1_weight'), where the optimizer reads
# __lr_mult__ / __wd_mult__ and the initializer __init__.
_HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
                "profiler_scope")


class AttrScope:
    """MXNet's attribute scope: the variables made inside ``with AttrScope(lr_mult='0.1',
    ctx_group='dev1'):`` (a layer's parameters included) get these attributes (strings; the
    keys lr_mult, wd_mult, ctx_group, ... are kept as '__lr_mult__', ...). A scope entered
    inside another adds to it."""

    _current = _contextvars.ContextVar("ndx_attr_scope", default=None)

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError(f"[AttrScope] Attributes need to be string; '{key}' is "
                                 f"{type(value).__name__}")
        self._attr = dict(kwargs)
        self._tokens = []

    def get(self, attr):
        """This scope's attributes updated with `attr` (a dict; may be None)."""
        merged = dict(self._attr)
        merged.update(attr or {})
        return merged

    def __enter__(self):
        outer = AttrScope._current.get()
        if outer is not None:
            self._attr = outer.get(self._attr)
        self._tokens.append(AttrScope._current.set(self))
        return self

    def __exit__(self, *exc):
        AttrScope._current.reset(self._tokens.pop())


def _attr_key(key):
    """MXNet's key for an attribute: the hidden keys (lr_mult, ...) as '__lr_mult__'."""
    key = str(key)
    return f"__{key}__" if key in _HIDDEN_KEYS else key


# MXNet's storage type codes in a variable's __storage_type__ attribute.
_STORAGE_TYPE_IDS = {"default": "0", "row_sparse": "1", "csr": "2"}


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, **kwargs):
    """A symbol for the graph input `name`, with MXNet's symbol attributes: `attr` (a dict of
    strings), and shape / dtype (hints infer_shape and infer_type use when not told), lr_mult
    / wd_mult / init (kept as '__lr_mult__', ... for Symbol.attr), and stype ('row_sparse' or
    'csr', kept as MXNet's '__storage_type__'): the graph computes on dense values (a CSR
    input's, a row_sparse weight's), and a Module updates a row_sparse weight's rows from
    its row_sparse gradient (lazily, with lazy_update), as MXNet's does."""
    if not isinstance(name, str):
        raise TypeError(f"[sym.var] name must be a str, got {type(name).__name__}")
    if stype not in _STORAGE_TYPE_IDS and stype is not None:
        raise ValueError(f"[sym.var] stype must be 'default', 'row_sparse' or 'csr', got "
                         f"{stype!r}")
    if attr is not None and not isinstance(attr, dict):
        raise TypeError(f"[sym.var] attr must be a dict of strings, got {type(attr).__name__}")
    scope = AttrScope._current.get()
    if scope is not None:
        attr = scope.get(attr)
    attrs = {_attr_key(k): str(v) for k, v in (attr or {}).items()}
    for key, value in (("shape", shape), ("lr_mult", lr_mult), ("wd_mult", wd_mult),
                       ("dtype", None if dtype is None else _dtype_name(dtype)),
                       ("init", None if init is None or isinstance(init, str) else
                        init.dumps() if hasattr(init, "dumps") else str(init))):
        if value is not None:
            attrs[f"__{key}__"] = str(tuple(value)) if key == "shape" else str(value)
    if isinstance(init, str):
        attrs["__init__"] = init
    if stype is not None:  # (MXNet's code; the graph computes densely either way)
        attrs["__storage_type__"] = _STORAGE_TYPE_IDS[stype]
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
        return _apply(op, syms, params, _auto_name(name, op=op))
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
        for prefix in ("_np_", "_npx_"):
            if op.startswith(prefix) and op[len(prefix):] not in g:
                g[op[len(prefix):]] = g[op]
    for op in _ops():  # then _npi_ ops (sym.stack), after _np_ / _npx_ (gamma is npx's)
        if op.startswith("_npi_") and op[len("_npi_"):] not in g:
            g[op[len("_npi_"):]] = g[op]


_populate()


def Custom(*inputs, op_type, name=None, **params):  # noqa: N802  (MXNet's name)
    """A symbolic Python custom operator (ndx.operator.register). As in MXNet, inputs may be
    given by the names in the prop's list_arguments() and list_auxiliary_states(), and those
    not given become variables named '<name>_<input>' (MXNet's example
    ``Custom(data=fc, name='softmax', op_type='softmax')`` gets the input 'softmax_label')."""
    named = {k: v for k, v in params.items() if isinstance(v, Symbol)}
    params = {k: v for k, v in params.items() if k not in named}
    names = _custom_input_names(op_type, params)
    name = _auto_name(name, op="Custom")
    if names is not None and (named or len(inputs) < len(names)):
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
def _legacy_name(hint, name=None):
    """`name` or the next '<hint><n>' of the NameManager in effect (prefixed by a Prefix)."""
    return _auto_name(name, hint)


# A layer symbol's attributes while it runs (see _with_attrs).
_layer_attrs = _contextvars.ContextVar("ndx_layer_attrs", default=None)


def _with_attrs(layer):
    """Lets a layer symbol take MXNet's attr={...}, lr_mult=, wd_mult=, ... and '__key__'
    keywords, which become attributes of the variables it creates."""
    @_functools.wraps(layer)
    def wrapper(*args, attr=None, **kwargs):
        if attr is not None and not isinstance(attr, dict):
            raise TypeError(f"[sym.{layer.__name__}] attr must be a dict of strings, got "
                            f"{type(attr).__name__}")
        attrs = {str(k): str(v) for k, v in (attr or {}).items()}
        for key in [k for k in kwargs if k in _HIDDEN_KEYS or
                    (k.startswith("__") and k.endswith("__") and len(k) > 4)]:
            value = kwargs.pop(key)
            if value is not None:  # (lr_mult=None: not given, as var's)
                attrs[key if key.startswith("__") else f"__{key}__"] = str(value)
        token = _layer_attrs.set(attrs or None)
        try:
            return layer(*args, **kwargs)
        finally:
            _layer_attrs.reset(token)
    return wrapper


def _layer(mx_name, op, inputs, params, name):
    """Applies op to inputs ({input name: Symbol or None}, in the op's order); a None input
    becomes the variable '<name>_<input name>' (with the layer's attributes)."""
    name = _legacy_name(mx_name.lower(), name)
    attrs = _layer_attrs.get()
    syms = [s if s is not None else var(f"{name}_{n}", attr=attrs) for n, s in inputs.items()]
    return _apply(op, syms, params, name)


def _tuple(v):
    return () if v is None else (int(v),) if isinstance(v, int) else tuple(int(d) for d in v)


@_with_attrs
def FullyConnected(data=None, weight=None, bias=None, num_hidden=None, no_bias=False,  # noqa: N802
                   flatten=True, name=None):
    """y = data @ weight.T + bias: weight (num_hidden, K), bias (num_hidden,)."""
    inputs = {"data": data, "weight": weight} if no_bias else \
        {"data": data, "weight": weight, "bias": bias}
    return _layer("FullyConnected", "_npx_fully_connected", inputs,
                  {"num_hidden": num_hidden, "no_bias": no_bias, "flatten": flatten}, name)


@_with_attrs
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


@_with_attrs
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


@_with_attrs
def Activation(data=None, act_type=None, name=None):  # noqa: N802
    return _layer("Activation", "_npx_activation", {"data": data}, {"act_type": act_type},
                  name)


@_with_attrs
def LeakyReLU(data=None, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,  # noqa
              upper_bound=0.334, name=None):
    """leaky / prelu (slopes from gamma, '<name>_gamma' when not given) / elu / selu / gelu."""
    inputs = {"data": data, "gamma": gamma} if act_type == "prelu" else {"data": data}
    return _layer("LeakyReLU", "_npx_leaky_relu", inputs,
                  {"act_type": act_type, "slope": slope}, name)


@_with_attrs
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


@_with_attrs
def LayerNorm(data=None, gamma=None, beta=None, axis=-1, eps=1e-5,  # noqa: N802
              output_mean_var=False, name=None):
    return _layer("LayerNorm", "_npx_layer_norm", {"data": data, "gamma": gamma, "beta": beta},
                  {"axis": axis, "eps": eps, "output_mean_var": output_mean_var}, name)


@_with_attrs
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


@_with_attrs
def Dropout(data=None, p=0.5, mode="training", axes=(), cudnn_off=False, name=None):  # noqa
    return _layer("Dropout", "_npx_dropout", {"data": data},
                  {"p": p, "mode": mode, "axes": _tuple(axes)}, name)


@_with_attrs
def Embedding(data=None, weight=None, input_dim=None, output_dim=None,  # noqa: N802
              dtype="float32", sparse_grad=False, name=None):
    """out[..., :] = weight[data[...], :], weight (input_dim, output_dim)."""
    if _onp.dtype(dtype) != _onp.float32:
        raise NotImplementedError(f"[sym.Embedding] dtype={dtype}: the weight is float32")
    return _layer("Embedding", "_npx_embedding", {"data": data, "weight": weight},
                  {"input_dim": input_dim, "output_dim": output_dim,
                   "sparse_grad": bool(sparse_grad) or None}, name)


@_with_attrs
def Flatten(data=None, name=None):  # noqa: N802
    """(N, d1, d2, ...) -> (N, d1 * d2 * ...)."""
    return _layer("Flatten", "_npx_reshape", {"data": data}, {"newshape": (-2, -1)}, name)


flatten = Flatten


@_with_attrs
def Concat(*data, dim=1, num_args=None, name=None):  # noqa: N802
    """Joins symbols along dim (1 by default, as MXNet's Concat)."""
    if num_args is not None and num_args != len(data):
        raise ValueError(f"[sym.Concat] num_args={num_args} but {len(data)} inputs given")
    name = _legacy_name("concat", name)
    return _apply("_npi_concatenate", list(data), {"num_args": len(data), "axis": dim}, name)


concat = Concat


@_with_attrs
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
                  _legacy_name("zeros", name))


def ones(shape, dtype=None, name=None):
    return _apply("_npi_ones", [], {"shape": _tuple(shape), "dtype": dtype},
                  _legacy_name("ones", name))


def full(shape, val, dtype=None, name=None):
    return _apply("_npi_full", [], {"shape": _tuple(shape), "dtype": dtype, "fill_value": val},
                  _legacy_name("full", name))


@_with_attrs
def Reshape(data=None, shape=None, reverse=False, name=None):  # noqa: N802
    """MXNet's legacy Reshape: 0 copies a dimension, -1 infers one, -2 copies the rest, -3
    merges two, -4 splits one into the two sizes after it."""
    if reverse:
        raise NotImplementedError("[sym.Reshape] reverse=True is not supported")
    return _apply("_npx_reshape", [data],
                  {"newshape": _legacy_reshape_shape(str(_tuple(shape)))},
                  _legacy_name("reshape", name))


_np_reshape_symbol = reshape  # noqa: F821  (NumPy's, made by _populate)


def reshape(data=None, shape=None, reverse=False, newshape=None, name=None, **kwargs):
    """mx.sym.reshape: MXNet's legacy reshape (the Reshape op's other name) with shape= and
    its 0 / -1 / -2 / -3 / -4 codes, or NumPy's reshape with newshape=."""
    if shape is not None:
        if newshape is not None:
            raise TypeError("[sym.reshape] give shape= (MXNet's codes) or newshape= (NumPy's), "
                            "not both")
        return Reshape(data, shape=shape, reverse=reverse, name=name, **kwargs)
    if newshape is None:
        raise TypeError("[sym.reshape] missing shape= (or NumPy's newshape=)")
    return _np_reshape_symbol(data, newshape=newshape, name=name)


@_with_attrs
def Cast(data=None, dtype=None, name=None):  # noqa: N802
    return _apply("_npi_astype", [data], {"dtype": _dtype_name(dtype)},
                  _legacy_name("cast", name))


@_with_attrs
def BlockGrad(data=None, name=None):  # noqa: N802
    """The data, with no gradient flowing back through it."""
    return _apply("_npx_stop_gradient", [data], {}, _legacy_name("blockgrad", name))


@_with_attrs
def MakeLoss(data=None, grad_scale=1.0, valid_thresh=0.0, normalization="null",  # noqa: N802
             name=None):
    """MXNet's MakeLoss: the data as a loss head whose gradient is grad_scale whatever the head
    gradient ('batch' divides by the batch size, 'valid' by the elements above
    valid_thresh)."""
    return _apply("MakeLoss", [data], {"grad_scale": grad_scale, "valid_thresh": valid_thresh,
                                       "normalization": normalization},
                  _legacy_name("makeloss", name))


@_with_attrs
def Crop(*data, offset=(0, 0), h_w=(0, 0), center_crop=False, num_args=None,  # noqa: N802
         name=None):
    """MXNet's Crop of NCHW data: data[:, :, y:y + h, x:x + w], (y, x) = offset, (h, w) =
    h_w or the last two sizes of a second input (``Crop(upscore, data, offset=(19, 19))``).
    center_crop is not supported."""
    if num_args is not None and num_args != len(data):
        raise ValueError(f"[sym.Crop] num_args={num_args} but {len(data)} inputs given")
    if len(data) not in (1, 2):
        raise ValueError(f"[sym.Crop] takes 1 or 2 inputs, got {len(data)}")
    if center_crop:
        raise NotImplementedError("[sym.Crop] center_crop=True is not supported; give offset")
    name = _legacy_name("crop", name)
    oy, ox = _tuple(offset)
    if oy < 0 or ox < 0:  # (crop-inl.h: offsets are >= 0)
        raise ValueError(f"[sym.Crop] offset must be >= 0, got {offset}")
    if len(data) == 1:
        h, w = _tuple(h_w)
        if h <= 0 or w <= 0:
            raise ValueError(f"[sym.Crop] one input needs h_w, the crop's size; got {h_w}")
        # takes of the rows / columns oy .. oy + h - 1 (mode raise: a crop past the data's
        # end is an error, as MXNet's, not a silently smaller slice)
        out = data[0]
        for axis, off, size in ((2, oy, h), (3, ox, w)):
            idx = _constant(_onp.arange(off, off + size, dtype="int64"))
            out = _apply("_npi_take", [out, idx], {"axis": axis, "mode": "raise"},
                         name if axis == 3 else f"{name}_take{axis}")
        return out
    out, like = data
    for axis, off in ((2, oy), (3, ox)):
        # the positions 0 .. like.shape[axis] - 1 (a cumulative sum of ones), plus the offset
        col = _apply("_npx_slice", [_apply("_npx_reshape", [_apply(
            "_np_swapaxes", [like], {"axis1": axis, "axis2": 0}, f"{name}_front{axis}")],
            {"newshape": (-2, -1)}, f"{name}_2d{axis}")], {"begin": (_NONE, 0),
                                                          "end": (_NONE, 1)}, f"{name}_col{axis}")
        ones = _apply("_npi_astype", [_apply("_np_ones_like", [col], {}, f"{name}_1f{axis}")],
                      {"dtype": "int64"}, f"{name}_ones{axis}")
        count = _apply("_np_cumsum", [ones], {"axis": 0}, f"{name}_count{axis}")
        pos = _apply("_npx_reshape", [count], {"newshape": (-1,)}, f"{name}_pos{axis}") + \
            (off - 1)
        out = _apply("_npi_take", [out, pos], {"axis": axis, "mode": "raise"},
                     name if axis == 3 else f"{name}_take{axis}")
    return out


@_with_attrs
def SliceChannel(data=None, num_outputs=None, axis=1, squeeze_axis=False,  # noqa: N802
                 name=None):
    """num_outputs equal parts along axis (as a group of symbols), the axis dropped from each
    with squeeze_axis."""
    if not isinstance(num_outputs, int) or num_outputs < 1:
        raise ValueError(f"[sym.SliceChannel] num_outputs must be an int >= 1, got "
                         f"{num_outputs!r}")
    name = _legacy_name("slicechannel", name)
    parts = _apply("_npi_split", [data], {"sections": num_outputs, "axis": axis}, name)
    if not squeeze_axis:
        return parts
    return Group([_apply("_np_squeeze", [parts[i]], {"axis": axis}, f"{name}_squeeze{i}")
                  for i in range(num_outputs)])


split = SliceChannel


def clip(data=None, a_min=None, a_max=None, name=None):
    """MXNet's legacy clip: a_min and a_max are scalars."""
    return _apply("_npi_clip", [data, _constant_like(a_min, data), _constant_like(a_max, data)],
                  {},
                  _legacy_name("clip", name))


# MXNet's legacy samplers: mx.sym.random.uniform(low, high, shape=..., dtype=...) and the
# mx.sym.uniform / normal / random_* names, over ndx's samplers (shape= is their size=;
# NumPy's size= works too). MXNet's gamma(alpha, beta) is NumPy's gamma(shape, scale).
_SAMPLERS = {"uniform": ("_npi_uniform", ("low", "high"), {}),
             "normal": ("_npi_normal", ("loc", "scale"), {}),
             "randint": ("_npi_randint", ("low", "high"), {}),
             "poisson": ("_npi_poisson", ("lam",), {}),
             "exponential": ("_npi_exponential", ("scale",), {}),
             "gamma": ("_npi_gamma", ("alpha", "beta"), {"alpha": "shape", "beta": "scale"}),
             "negative_binomial": ("_npi_negative_binomial", ("k", "p"), {"k": "n"})}
# MXNet's defaults of parameters ndx's ops require (gamma(alpha=1, beta=1), ...)
_SAMPLER_DEFAULTS = {"uniform": {"low": 0.0, "high": 1.0}, "normal": {"loc": 0.0, "scale": 1.0},
                     "poisson": {"lam": 1.0}, "exponential": {"scale": 1.0},
                     "gamma": {"alpha": 1.0, "beta": 1.0},
                     "negative_binomial": {"k": 1, "p": 1.0}}


def _legacy_sampler(kind):
    op, positional, renames = _SAMPLERS[kind]

    def sampler(*args, shape=None, dtype=None, ctx=None, name=None, **kwargs):
        if len(args) > len(positional):
            raise TypeError(f"[sym.random.{kind}] takes at most {len(positional)} positional "
                            f"arguments ({', '.join(positional)}), got {len(args)}")
        if kind == "exponential" and "lam" in kwargs:  # (MXNet's keyword: the rate)
            lam = kwargs.pop("lam")
            kwargs["scale"] = None if lam is None else 1.0 / lam
        kwargs.update(zip(positional, args))
        for k, v in _SAMPLER_DEFAULTS.get(kind, {}).items():
            if kwargs.get(k) is None:
                kwargs[k] = v
        if _builtins.any(isinstance(v, Symbol) for v in kwargs.values()):
            # MXNet's form with Symbol parameters: shape (m, n) draws m x n samples for
            # each parameter entry, an output of shape param.shape + (m, n)
            extra = _tuple(shape) if shape is not None else ()
            params = [kwargs.pop(k) for k in positional if k in kwargs]
            if kwargs:
                raise TypeError(f"[sym.random.{kind}] unexpected arguments {sorted(kwargs)}")
            params = [p if isinstance(p, Symbol) else _constant(float(p)) for p in params]
            if extra:
                zeros = _constant(_np.zeros(extra, dtype=_core._default_float()))
                for _ in extra:
                    params = [_apply("_np_expand_dims", [p], {"axis": -1}, None)
                              for p in params]
                params = [p + zeros for p in params]
            return _apply(op, params, {"num_args": len(params),
                                       "dtype": None if dtype is None else _dtype_name(dtype)},
                          _auto_name(name, op=op))
        params = {renames.get(k, k): v for k, v in kwargs.items() if v is not None}
        if shape is not None and shape != ():
            params["size"] = _tuple(shape)
        if dtype is not None:
            params["dtype"] = _dtype_name(dtype)
        return _apply(op, [], params, _auto_name(name, op=op))
    sampler.__name__ = kind
    sampler.__doc__ = (f"MXNet's {kind} sampler ({', '.join(positional)}, shape=, dtype=) as a "
                       f"symbol: a new draw at each forward.")
    return sampler


class _ContribSymbols:
    """mx.sym.contrib: MXNet's contrib ops as symbols (the detection ops, under their MXNet
    names, with MXNet's params; the INT8 quantization ops: quantize_v2, dequantize, ...)."""

    def __init__(self):
        for mx_name, op in (("MultiBoxPrior", "_npx_multibox_prior"),
                            ("MultiBoxTarget", "_npx_multibox_target"),
                            ("MultiBoxDetection", "_npx_multibox_detection"),
                            ("box_nms", "_npx_box_nms"),
                            ("box_non_maximum_suppression", "_npx_box_nms"),
                            ("ROIAlign", "_npx_roi_align")):
            setattr(self, mx_name, globals()[op])
        for name in ("quantize", "quantize_v2", "dequantize", "requantize", "quantized_conv",
                     "quantized_fully_connected", "quantized_pooling", "quantized_act",
                     "quantized_flatten", "quantized_elemwise_add", "quantized_concat",
                     "quantized_batch_norm"):
            setattr(self, name, globals()[f"_contrib_{name}"])

    @staticmethod
    def SparseEmbedding(data=None, weight=None, input_dim=None, output_dim=None,  # noqa: N802
                        dtype="float32", deterministic=False, name=None):
        """MXNet's contrib.SparseEmbedding: Embedding with a row_sparse gradient."""
        return Embedding(data=data, weight=weight, input_dim=input_dim, output_dim=output_dim,
                         dtype=dtype, sparse_grad=True, name=name)


contrib = _ContribSymbols()
from . import _sym_control_flow  # noqa: E402  (it reads this module's _made_in_body)

contrib.foreach = _sym_control_flow.foreach
contrib.while_loop = _sym_control_flow.while_loop
contrib.cond = _sym_control_flow.cond


class _SparseSymbols:
    """mx.sym.sparse: MXNet's sparse-storage ops as symbols. A graph computes on dense
    values, so each is its dense op with the same values (a storage type asked for, by
    forward_stype or cast_storage, changes nothing computed); the other names are mx.sym's."""

    @staticmethod
    def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None, name=None):
        """MXNet's dot of 1-D / 2-D operands (transpose_a / transpose_b transpose them)."""
        if forward_stype not in (None, *_STORAGE_TYPE_IDS):
            raise ValueError(f"[sym.sparse.dot] forward_stype must be None, 'default', "
                             f"'row_sparse' or 'csr', got {forward_stype!r}")
        a = _apply("_np_transpose", [lhs], {}) if transpose_a else lhs
        b = _apply("_np_transpose", [rhs], {}) if transpose_b else rhs
        return _apply("_np_dot", [a, b], {}, _auto_name(name, op="_np_dot"))

    @staticmethod
    def cast_storage(data, stype, name=None):
        """data's values (the storage type is the graph's concern: dense)."""
        if stype not in _STORAGE_TYPE_IDS:
            raise ValueError(f"[sym.sparse.cast_storage] stype must be 'default', "
                             f"'row_sparse' or 'csr', got {stype!r}")
        return _apply("_npx_reshape", [data], {"newshape": (-4,)},
                      _auto_name(name, op="cast_storage"))

    @staticmethod
    def square_sum(data, axis=None, keepdims=False, name=None):
        return _apply("_np_sum", [_apply("_np_square", [data], {})],
                      {"axis": None if axis is None else _tuple_axes(axis),
                       "keepdims": bool(keepdims)}, _auto_name(name, op="square_sum"))

    @staticmethod
    def Embedding(data=None, weight=None, input_dim=None, output_dim=None,  # noqa: N802
                  dtype="float32", sparse_grad=False, name=None):
        return Embedding(data=data, weight=weight, input_dim=input_dim,
                         output_dim=output_dim, dtype=dtype, sparse_grad=sparse_grad,
                         name=name)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return globals()[name]
        except KeyError:
            raise AttributeError(f"mx.sym.sparse has no {name!r}") from None


def _tuple_axes(axis):
    return (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)


sparse = _SparseSymbols()
ROIPooling = globals()["_npx_roi_pooling"]


class _RandomSymbols:
    """mx.sym.random: MXNet's samplers as symbols."""

    def __init__(self):
        for kind in _SAMPLERS:
            setattr(self, kind, _legacy_sampler(kind))


random = _RandomSymbols()
uniform = random_uniform = random.uniform
normal = random_normal = random.normal
random_randint, random_poisson = random.randint, random.poisson
random_exponential, random_gamma = random.exponential, random.gamma
random_negative_binomial = random.negative_binomial


# MXNet's legacy arithmetic names (broadcasting, as ndx's ops always are).
elemwise_add = broadcast_add = broadcast_plus = _make("_np_add")
elemwise_sub = broadcast_sub = broadcast_minus = _make("_np_subtract")
elemwise_mul = broadcast_mul = _make("_np_multiply")
elemwise_div = broadcast_div = _make("_np_true_divide")
broadcast_maximum, broadcast_minimum = _make("_np_maximum"), _make("_np_minimum")
broadcast_power = _make("_np_power")


@_with_attrs
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
    head = _with_attrs(head)
    head.__name__ = mx_name
    head.__doc__ = (f"MXNet's {mx_name}: a loss head whose gradient ignores the head gradient; "
                    f"the label, when not given, is the variable '<name>_label' of the data's "
                    f"shape ((N,) for data (N, 1)).")
    return head


LinearRegressionOutput = _regression_output("LinearRegressionOutput")
LogisticRegressionOutput = _regression_output("LogisticRegressionOutput")
MAERegressionOutput = _regression_output("MAERegressionOutput")


@_with_attrs
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
# ndx's op's, and params renamed. Ops that take more than a rename (scalar ops, legacy
# reductions, SliceChannel, ...) are in _EXPANSIONS below: they become a few ndx nodes.
_IGNORED = ("workspace", "cudnn_tune", "cudnn_off", "min_calib_range", "max_calib_range")
_MXNET_OPS = {
    "FullyConnected": ("_npx_fully_connected", (), {}, {}),
    "Convolution": ("_npx_convolution", (), {}, {}),
    "Convolution_v1": ("_npx_convolution", (), {}, {}),  # (MXNet 0.x's, kept by 1.x)
    "Deconvolution": ("_npx_deconvolution", (), {"no_bias": "True"}, {}),
    "Activation": ("_npx_activation", (), {}, {}),
    "LeakyReLU": ("_npx_leaky_relu", ("lower_bound", "upper_bound"), {}, {}),
    "BatchNorm": ("_npx_batch_norm", ("output_mean_var",), {"eps": "0.001", "fix_gamma": "True"},
                  {}),
    "BatchNorm_v1": ("_npx_batch_norm", ("output_mean_var",),
                     {"eps": "0.001", "fix_gamma": "True"}, {}),
    "LayerNorm": ("_npx_layer_norm", (), {}, {}),
    "Pooling": ("_npx_pooling", ("p_value",), {}, {}),
    "Pooling_v1": ("_npx_pooling", (), {}, {}),
    "Dropout": ("_npx_dropout", (), {}, {}),
    "Embedding": ("_npx_embedding", ("dtype",), {}, {}),
    "_contrib_SparseEmbedding": ("_npx_embedding", ("dtype", "deterministic"),
                                 {"sparse_grad": "True"}, {}),
    "take": ("_npi_take", (), {}, {}),  # (MXNet's defaults: axis 0, mode clip)
    # detection ops: ndx's take MXNet's params and defaults
    "_contrib_MultiBoxPrior": ("_npx_multibox_prior", (), {}, {}),
    "_contrib_MultiBoxTarget": ("_npx_multibox_target", (), {}, {}),
    "_contrib_MultiBoxDetection": ("_npx_multibox_detection", (), {}, {}),
    "_contrib_box_nms": ("_npx_box_nms", (), {}, {}),
    "_contrib_box_non_maximum_suppression": ("_npx_box_nms", (), {}, {}),
    "_contrib_ROIAlign": ("_npx_roi_align", (), {}, {}),
    "ROIPooling": ("_npx_roi_pooling", (), {}, {}),
    "Flatten": ("_npx_reshape", (), {"newshape": "(-2, -1)"}, {}),
    "Concat": ("_npi_concatenate", (), {"dim": "1"}, {"dim": "axis"}),
    "stack": ("_npi_stack", (), {"axis": "0"}, {}),
    "SwapAxis": ("_np_swapaxes", (), {"dim1": "0", "dim2": "0"},
                 {"dim1": "axis1", "dim2": "axis2"}),
    "relu": ("_npx_relu", (), {}, {}),
    "sigmoid": ("_npx_sigmoid", (), {}, {}),
    "BlockGrad": ("_npx_stop_gradient", (), {}, {}),
    "Cast": ("_npi_astype", (), {}, {}),
    "elemwise_add": ("_np_add", (), {}, {}),
    "elemwise_sub": ("_np_subtract", (), {}, {}),
    "elemwise_mul": ("_np_multiply", (), {}, {}),
    "_grad_add": ("_np_add", (), {}, {}),
    "broadcast_add": ("_np_add", (), {}, {}),
    "broadcast_sub": ("_np_subtract", (), {}, {}),
    "broadcast_mul": ("_np_multiply", (), {}, {}),
    # (MXNet's elementwise ops take operands of one dtype, so NumPy's promotion keeps it)
    "_maximum": ("_np_maximum", (), {}, {}),
    "_minimum": ("_np_minimum", (), {}, {}),
    "_power": ("_np_power", (), {}, {}),
    "broadcast_maximum": ("_np_maximum", (), {}, {}),
    "broadcast_minimum": ("_np_minimum", (), {}, {}),
    "broadcast_power": ("_np_power", (), {}, {}),
    "Softmax": ("SoftmaxOutput", (), {}, {}),  # (MXNet 1.x's deprecated name)
    "Reshape": ("_npx_reshape", ("target_shape", "keep_highest"), {}, {"shape": "newshape"}),
    "CTCLoss": ("_npx_ctc_loss", (), {}, {}),
    "_contrib_CTCLoss": ("_npx_ctc_loss", (), {}, {}),
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
    """Renames an op of _MXNET_OPS to ndx's, its params with it (in place)."""
    op = node.get("op")
    entry = _MXNET_OPS.get(op)
    if entry is None:
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
    if op in ("Concat", "stack"):
        attrs.setdefault("num_args", str(len(node.get("inputs", []))))
    node["op"] = ndx_op
    node["attrs"] = attrs
    node.pop("param", None)


# Legacy ops whose ndx namesake (the op the generic fallback below would pick) computes
# something else: refused rather than loaded with NumPy's semantics.
_DIFFERENT = {
    "round": "MXNet rounds halves away from zero, NumPy's round to even",
    "rint": "MXNet's rint rounds halves down (2.5 -> 2, -2.5 -> -3), NumPy's to even",
    "dot": "MXNet's dot contracts the first axis of an N-d rhs, NumPy's its second to last",
    "argmax": "MXNet's argmax gives float indices, of shape (1,) without an axis",
    "argmin": "MXNet's argmin gives float indices, of shape (1,) without an axis",
    "argsort": "MXNet's argsort gives float32 indices by default",
}
# Ops whose output is bool (for MXNet 2.0's scalar ops, which compute on bool data as int64).
_BOOL_OPS = frozenset({
    "_np_equal", "_np_not_equal", "_np_greater", "_np_greater_equal", "_np_less",
    "_np_less_equal", "_np_logical_and", "_np_logical_or", "_np_logical_xor", "_np_logical_not",
    "_np_isnan", "_np_isinf", "_np_isfinite", "_np_isposinf", "_np_isneginf", "_np_signbit"})
_NONE = -(2 ** 63)  # _npx_slice's "omitted" bound


# The mx.sym function whose node is being expanded (see _node_symbol): its errors name it.
_building = _contextvars.ContextVar("ndx_sym_building", default=None)


def _fail(node, what, kind=NotImplementedError):
    where = _building.get()
    raise kind(f"[sym.{where}] {what}" if where else
               f"[load] {node.get('op')} '{node.get('name')}': {what}")


def _known(node, attrs, names):
    """Refuses params the translation does not know (they could change the op's meaning)."""
    extra = sorted(k for k in attrs if k not in names and k not in _IGNORED)
    if extra:
        _fail(node, f"parameter(s) {extra} not supported")


def _arity(node, ins, n):
    if len(ins) != n:
        _fail(node, f"takes {n} input(s), got {len(ins)}", ValueError)
    return ins


def _flag(node, attrs, key, default):
    v = attrs.get(key, "None")
    if v == "None":
        return default
    if v in ("True", "true", "1"):
        return True
    if v in ("False", "false", "0"):
        return False
    _fail(node, f"{key}={v!r} is not a boolean", ValueError)


def _number(node, attrs, key, default=None):
    v = attrs.get(key, "None")
    if v == "None":
        if default is None:
            _fail(node, f"parameter {key} is required", ValueError)
        return default
    try:
        return float(v)
    except ValueError:
        _fail(node, f"{key}={v!r} is not a number", ValueError)


def _integer(node, attrs, key, default=None):
    v = _number(node, attrs, key, default)
    if not _onp.isfinite(v) or v != int(v):
        _fail(node, f"{key}={attrs.get(key)!r} is not an integer", ValueError)
    return int(v)


def _int_tuple(node, attrs, key, none_ok=False):
    """A tuple param ('(2, 3)', '[2, 3]', '2'; nested tuples flattened; None entries kept
    where none_ok) as ints; None for 'None' or a param not given."""
    text = attrs.get(key, "None").strip()
    if text == "None":
        return None
    out = []
    for part in text.translate(str.maketrans("()[]", "    ")).split(","):
        part = part.strip().rstrip("L")  # ('3L': a Python 2 long)
        if part == "None" and none_ok:
            out.append(None)
        elif part:
            try:
                out.append(int(part))
            except ValueError:
                _fail(node, f"{key}={text!r} is not a tuple of integers", ValueError)
    return tuple(out)


class _Graph:
    """A translated node list, built in order (every node after its inputs)."""

    def __init__(self):
        self.nodes = []
        self.bools = set()  # nodes whose output 0 is known to be bool

    def append(self, node):
        self.nodes.append(node)
        op = node.get("op") if isinstance(node, dict) else None
        if op in _BOOL_OPS or (op == "_npi_astype" and isinstance(node.get("attrs"), dict)
                               and node["attrs"].get("dtype") == "bool"):
            self.bools.add(len(self.nodes) - 1)
        return [len(self.nodes) - 1, 0, 0]

    def add(self, op, name, inputs, attrs=None):
        return self.append({"op": op, "name": name, "inputs": [list(e) for e in inputs],
                            "attrs": {k: str(v) for k, v in (attrs or {}).items()}})

    def const(self, value, name, dtype="float64", shape=()):
        """A constant node (ndx's layout: a null node with __const__), value a number or, with
        shape, a flat list."""
        values = [float(v) for v in value] if shape else [float(value)]
        if _builtins.all(_onp.isfinite(v) for v in values):
            return self.append({"op": "null", "name": name, "inputs": [], "attrs": {
                "__const__": "1", "__data__": values, "__dtype__": dtype,
                "__shape__": str(tuple(shape))}})
        # JSON has no inf or NaN: 1 / 0, -1 / 0 and 0 / 0 make them
        v = values[0]
        num = self.const(0.0 if v != v else float(_onp.copysign(1.0, v)), name + "_num", dtype)
        return self.add("_np_true_divide", name, [num, self.const(0.0, name + "_den", dtype)])

    def like(self, entry, like, name):
        """entry converted to the dtype of like."""
        return self.add("_npi_cast_like", name, [entry, like])

    def is_bool(self, entry):
        return entry[0] in self.bools and entry[1] == 0

    def named(self, entry, name):
        """entry, its node given the name of the MXNet node it stands for."""
        self.nodes[entry[0]]["name"] = name
        return entry


# MXNet's scalar ops, 1.x's and 2.0's names: (ndx's binary op, scalar first, kind). MXNet
# applies OP(x, DType(scalar)) in the data's dtype (elemwise_binary_scalar_op.h: 1.x's
# ElemwiseType, and 2.0's NumpyBinaryScalarType for an integer scalar, is_int=True, the
# default; MXNet 2.0 casts integer or bool data to float64 first for a float scalar, and
# bool data to int64 for an integer one); 1.x's comparisons give 0 / 1 in the data's dtype,
# 2.0's bool (ComputeLogic); 2.0's true_divide gives float32 for integer data (TrueDivideType).
# mshadow_op::mod returns 0 where the divisor is 0 (NumPy: NaN for floats).
_SCALAR_TABLE = (
    (("_plus_scalar", "_npi_add_scalar"), "_np_add", False, "arith"),
    (("_minus_scalar", "_npi_subtract_scalar"), "_np_subtract", False, "arith"),
    (("_rminus_scalar", "_npi_rsubtract_scalar"), "_np_subtract", True, "arith"),
    (("_mul_scalar", "_npi_multiply_scalar"), "_np_multiply", False, "arith"),
    (("_div_scalar", "_npi_true_divide_scalar"), "_np_true_divide", False, "div"),
    (("_rdiv_scalar", "_npi_rtrue_divide_scalar"), "_np_true_divide", True, "div"),
    (("_mod_scalar", "_npi_mod_scalar"), "_np_mod", False, "arith"),
    (("_rmod_scalar", "_npi_rmod_scalar"), "_np_mod", True, "arith"),
    (("_power_scalar", "_npi_power_scalar"), "_np_power", False, "arith"),
    (("_rpower_scalar", "_npi_rpower_scalar"), "_np_power", True, "arith"),
    (("_maximum_scalar", "_npi_maximum_scalar"), "_np_maximum", False, "arith"),
    (("_minimum_scalar", "_npi_minimum_scalar"), "_np_minimum", False, "arith"),
    (("_equal_scalar", "_npi_equal_scalar"), "_np_equal", False, "cmp"),
    (("_not_equal_scalar", "_npi_not_equal_scalar"), "_np_not_equal", False, "cmp"),
    (("_greater_scalar", "_npi_greater_scalar"), "_np_greater", False, "cmp"),
    (("_greater_equal_scalar", "_npi_greater_equal_scalar"), "_np_greater_equal", False, "cmp"),
    (("_lesser_scalar", "_npi_less_scalar"), "_np_less", False, "cmp"),
    (("_lesser_equal_scalar", "_npi_less_equal_scalar"), "_np_less_equal", False, "cmp"),
    (("_logical_and_scalar", "_npi_logical_and_scalar"), "_np_logical_and", False, "cmp"),
    (("_logical_or_scalar", "_npi_logical_or_scalar"), "_np_logical_or", False, "cmp"),
    (("_logical_xor_scalar", "_npi_logical_xor_scalar"), "_np_logical_xor", False, "cmp"),
)
_SCALAR_OPS = {name: (np_op, reflected, kind, legacy)
               for names, np_op, reflected, kind in _SCALAR_TABLE
               for name, legacy in zip(names, (True, False))}


def _x_scalar(g, node, attrs, ins):
    np_op, reflected, kind, legacy = _SCALAR_OPS[node["op"]]
    name = node["name"]
    _known(node, attrs, ("scalar", "is_int"))
    (x,) = _arity(node, ins, 1)
    alpha = _number(node, attrs, "scalar", 1.0)
    is_int = _flag(node, attrs, "is_int", True)
    k = g.const(alpha, name + "_scalar")
    if is_int and g.is_bool(x) and (kind == "arith" or legacy and kind == "div"):
        x = g.add("_npi_astype", name + "_int64", [x], {"dtype": "int64"})
    if is_int and (legacy or kind != "div"):
        t = x  # the dtype the op computes in: the data's
    else:  # a float data's dtype, float32 for integer data: the dtype of the scalar in the
        # data's dtype divided by itself (MXNet 2.0's true_divide type; for a float scalar
        # on integer data MXNet 2.0's other ops take float64, ndx float32: a known difference)
        probe = g.like(k, x, name + "_probe")
        t = g.add("_np_true_divide", name + "_dtype", [probe, probe])
    if kind == "div" and not legacy:  # (int32 data over a float32 scalar: float32, not 64)
        x = g.like(x, t, name + "_data_as")
    if np_op == "_np_mod" and not reflected and alpha == 0:  # x % 0 is 0 in MXNet
        y = g.add("_np_zeros_like", name + "_zeros", [x])
        y = y if t is x else g.like(y, t, name + "_as")
        return [g.named(y, name)]
    kt = g.like(k, t, name + "_cast")
    y = g.add(np_op, name + "_op", [kt, x] if reflected else [x, kt])
    if np_op == "_np_mod" and reflected:  # MXNet: a % 0 is 0
        zero = g.like(g.const(0.0, name + "_zero"), t, name + "_zero_cast")
        y = g.add("_np_where", name + "_where",
                  [g.add("_np_equal", name + "_is_zero", [x, zero]), zero, y])
    if legacy and kind in ("div", "cmp"):  # MXNet 1.x: in the data's dtype
        y = g.like(y, t, name + "_as_data")
    return [g.named(y, name)]


# Legacy binary ops whose result MXNet gives in the operands' dtype where NumPy's does not:
# integer division (true division, cast back: C's truncation) and 0 / 1 comparisons.
_LEGACY_BINARY = {
    "elemwise_div": "_np_true_divide", "broadcast_div": "_np_true_divide",
    "_equal": "_np_equal", "_not_equal": "_np_not_equal", "_greater": "_np_greater",
    "_greater_equal": "_np_greater_equal", "_lesser": "_np_less",
    "_lesser_equal": "_np_less_equal", "broadcast_equal": "_np_equal",
    "broadcast_not_equal": "_np_not_equal", "broadcast_greater": "_np_greater",
    "broadcast_greater_equal": "_np_greater_equal", "broadcast_lesser": "_np_less",
    "broadcast_lesser_equal": "_np_less_equal", "broadcast_logical_and": "_np_logical_and",
    "broadcast_logical_or": "_np_logical_or", "broadcast_logical_xor": "_np_logical_xor",
}


def _x_binary(g, node, attrs, ins):
    _known(node, attrs, ())
    a, b = _arity(node, ins, 2)
    y = g.add(_LEGACY_BINARY[node["op"]], node["name"] + "_op", [a, b])
    return [g.like(y, a, node["name"])]


def _x_unary_as_data(g, node, attrs, ins):
    """logical_not: 0 / 1 in the data's dtype (MXNet 1.x)."""
    _known(node, attrs, ())
    (x,) = _arity(node, ins, 1)
    y = g.add("_np_logical_not", node["name"] + "_op", [x])
    return [g.like(y, x, node["name"])]


def _x_reciprocal_root(g, node, attrs, ins):
    """rsqrt / rcbrt: 1 / sqrt(x), 1 / cbrt(x) (mshadow_op: 1.0f / math::sqrt(a))."""
    _known(node, attrs, ())
    (x,) = _arity(node, ins, 1)
    root = "_np_sqrt" if node["op"] == "rsqrt" else "_np_cbrt"
    y = g.add(root, node["name"] + "_root", [x])
    return [g.add("_np_reciprocal", node["name"], [y])]


# MXNet's reductions: the axes listed (all for None or ()), keepdims; the result keeps the
# data's dtype and, without keepdims, at least one axis: (1,) for a full reduction
# (broadcast_reduce_op.h: ReduceAxesShapeImpl; ElemwiseType).
_REDUCE = {"sum": "_np_sum", "mean": "_np_mean", "prod": "_np_prod", "max": "_np_max",
           "min": "_np_min"}


def _at_least_1d(g, y, name):
    """y, of shape (1,) where it is 0-d: y * ones((1,)) (exact, NaN and -0.0 included)."""
    one = g.like(g.const([1.0], name + "_one", shape=(1,)), y, name + "_one_cast")
    return g.add("_np_multiply", name + "_1d", [y, one])


def _x_reduce(g, node, attrs, ins):
    name = node["name"]
    _known(node, attrs, ("axis", "keepdims", "exclude"))
    (x,) = _arity(node, ins, 1)
    if _flag(node, attrs, "exclude", False):
        _fail(node, "exclude=True (reducing the axes not listed) is not supported")
    axis = _int_tuple(node, attrs, "axis")
    keepdims = _flag(node, attrs, "keepdims", False)
    np_op = _REDUCE[node["op"]]
    params = {"keepdims": keepdims}
    if axis:
        params["axis"] = axis
    y = g.add(np_op, name + "_op", [x], params)
    if np_op in ("_np_sum", "_np_mean", "_np_prod"):  # (NumPy: int64 / float sums of ints)
        y = g.like(y, x, name + "_as_data")
    if not keepdims:
        y = g.add("_npx_reshape", name + "_1d", [y], {"newshape": (1,)}) if not axis else \
            _at_least_1d(g, y, name)
    return [g.named(y, name)]


def _x_squeeze(g, node, attrs, ins):
    """MXNet's squeeze: the result keeps one axis ((1,) where all would go; matrix_op-inl.h)."""
    _known(node, attrs, ("axis",))
    (x,) = _arity(node, ins, 1)
    axis = _int_tuple(node, attrs, "axis")
    y = g.add("_np_squeeze", node["name"] + "_op", [x], {} if axis is None else {"axis": axis})
    return [g.named(_at_least_1d(g, y, node["name"]), node["name"])]


def _x_transpose(g, node, attrs, ins):
    """transpose: axes () (MXNet's default) reverses them, as NumPy's None."""
    _known(node, attrs, ("axes",))
    (x,) = _arity(node, ins, 1)
    axes = _int_tuple(node, attrs, "axes")
    return [g.add("_np_transpose", node["name"], [x], {"axes": axes} if axes else {})]


def _x_identity(g, node, attrs, ins):
    """_copy (identity), MXNet 2.0's _np_copy: the data itself (a graph never writes it)."""
    _known(node, attrs, ())
    (x,) = _arity(node, ins, 1)
    return [g.add("_npx_reshape", node["name"], [x], {"newshape": (-4,)})]


def _x_clip(g, node, attrs, ins):
    """clip(x, a_min, a_max): MXNet's kernel is `x > a_max ? a_max : x < a_min ? a_min : x`
    with float32 bounds (ClipParam's real_t) in the data's dtype; for a_min <= a_max that is
    _npi_clip's minimum(maximum(x, lo), hi), NaN kept."""
    name = node["name"]
    _known(node, attrs, ("a_min", "a_max"))
    (x,) = _arity(node, ins, 1)
    with _onp.errstate(over="ignore"):
        lo, hi = (float(_onp.float32(_number(node, attrs, k))) for k in ("a_min", "a_max"))
    if lo != lo or hi != hi:
        _fail(node, "a NaN bound is not supported")
    if lo > hi:
        _fail(node, f"a_min > a_max ({lo} > {hi}) is not supported: MXNet gives a_max above "
                    f"a_max and a_min elsewhere")
    # (an infinite bound clips nothing: the other alone, with maximum / minimum)
    lo_e, hi_e = (None if v == inf else g.like(g.const(v, f"{name}_{k}", "float32"), x,
                                                 f"{name}_{k}_cast")
                  for k, v, inf in (("lo", lo, -float("inf")), ("hi", hi, float("inf"))))
    if lo_e is not None and hi_e is not None:
        return [g.add("_npi_clip", name, [x, lo_e, hi_e])]
    if hi_e is not None:
        return [g.add("_np_minimum", name, [x, hi_e])]
    if lo_e is not None:
        return [g.add("_np_maximum", name, [x, lo_e])]
    return [g.add("_npx_reshape", name, [x], {"newshape": (-4,)})]


def _split(g, node, x, params, n, axis, squeeze):
    """_npi_split's n outputs, each with the split axis removed where squeeze."""
    name = node["name"]
    s = g.add("_npi_split", name + "_split", [x], dict(params, axis=axis))
    outs = [[s[0], k, 0] for k in range(n)]
    if not squeeze:
        g.named(s, name)
        return outs
    return [g.add("_np_squeeze", f"{name}_output{k}", [e], {"axis": (axis,)})
            for k, e in enumerate(outs)]


def _x_slice_channel(g, node, attrs, ins):
    """SliceChannel (split): num_outputs equal parts along axis (1 by default); squeeze_axis
    removes that axis from each (slice_channel-inl.h)."""
    _known(node, attrs, ("num_outputs", "axis", "squeeze_axis", "indices"))
    (x,) = _arity(node, ins, 1)
    if attrs.get("indices", "None") not in ("None", "()", "[]"):
        _fail(node, "indices is not supported (give num_outputs)")
    n = _integer(node, attrs, "num_outputs")
    return _split(g, node, x, {"sections": n}, n, _integer(node, attrs, "axis", 1),
                  _flag(node, attrs, "squeeze_axis", False))


def _x_split_v2(g, node, attrs, ins):
    """MXNet's _split_v2 (1.x's split_v2) and MXNet 2.0's _npi_split: indices start with 0
    (the Python side passes [0] + indices), or sections > 0 equal parts."""
    _known(node, attrs, ("indices", "axis", "squeeze_axis", "sections"))
    (x,) = _arity(node, ins, 1)
    sections = _integer(node, attrs, "sections", 0)
    indices = _int_tuple(node, attrs, "indices") or ()
    if sections > 0:
        params, n = {"sections": sections}, sections
    elif indices and indices[0] == 0:
        params, n = {"indices": indices[1:]}, len(indices)
    else:
        _fail(node, f"indices {indices} do not start with 0", ValueError)
    return _split(g, node, x, params, n, _integer(node, attrs, "axis", 0),
                  _flag(node, attrs, "squeeze_axis", False))


def _x_pad(g, node, attrs, ins):
    """Pad: pad_width (before, after) per axis, flat; modes constant, edge, reflect (NumPy's
    reflect: the edge not repeated)."""
    _known(node, attrs, ("mode", "pad_width", "constant_value"))
    (x,) = _arity(node, ins, 1)
    mode = attrs.get("mode", "constant")
    if mode not in ("constant", "edge", "reflect"):
        _fail(node, f"mode={mode!r} is not one of MXNet's", ValueError)
    width = _int_tuple(node, attrs, "pad_width")
    if not width:
        _fail(node, "parameter pad_width is required", ValueError)
    return [g.add("_npi_pad", node["name"], [x], {
        "pad_width": width, "mode": mode,
        "constant_value": repr(_number(node, attrs, "constant_value", 0.0))})]


_NP_PAD_MODES = {"0": "constant", "1": "edge", "2": "reflect", "3": "symmetric"}


def _x_np_pad(g, node, attrs, ins):
    """MXNet 2.0's _npi_pad (np.pad): pad_width as ((before, after), ...) for every axis;
    mode by name (or its enum number in early 2.0); reflect_type 'even' is NumPy's default."""
    _known(node, attrs, ("pad_width", "mode", "constant_value", "reflect_type"))
    (x,) = _arity(node, ins, 1)
    mode = _NP_PAD_MODES.get(attrs.get("mode", "constant"), attrs.get("mode", "constant"))
    if mode not in ("constant", "edge", "reflect", "symmetric"):
        _fail(node, f"mode={mode!r} is not supported")
    if attrs.get("reflect_type", "even") != "even":
        _fail(node, f"reflect_type={attrs['reflect_type']!r} is not supported")
    text = attrs.get("pad_width", "").replace(" ", "")
    width = _int_tuple(node, attrs, "pad_width") or ()
    # (MXNet's shortcuts, one pair or one width for every axis, need the data's rank)
    if not text.startswith("((") or len(width) < 4 or len(width) % 2 or \
            text.count("(") != len(width) // 2 + 1:
        _fail(node, f"pad_width={text!r}: only a (before, after) pair for each of two or more "
                    f"axes is supported")
    return [g.add("_npi_pad", node["name"], [x], {
        "pad_width": width, "mode": mode,
        "constant_value": repr(_number(node, attrs, "constant_value", 0.0))})]


def _x_slice(g, node, attrs, ins):
    """slice: begin / end / step per leading axis, None for omitted: Python's slicing."""
    _known(node, attrs, ("begin", "end", "step"))
    (x,) = _arity(node, ins, 1)
    begin, end, step = (_int_tuple(node, attrs, k, none_ok=True) for k in ("begin", "end", "step"))
    if begin is None or end is None:
        _fail(node, "parameters begin and end are required", ValueError)
    return [g.add("_npx_slice", node["name"], [x], {
        "begin": tuple(_NONE if v is None else v for v in begin),
        "end": tuple(_NONE if v is None else v for v in end),
        "step": tuple(1 if v is None else v for v in step or ())})]


def _x_slice_axis(g, node, attrs, ins):
    """slice_axis: begin:end (end None: to the end) along one axis; a negative axis is swapped
    to the front and back."""
    name = node["name"]
    _known(node, attrs, ("axis", "begin", "end"))
    (x,) = _arity(node, ins, 1)
    axis, begin = _integer(node, attrs, "axis"), _integer(node, attrs, "begin")
    end = _NONE if attrs.get("end", "None") == "None" else _integer(node, attrs, "end")
    at = axis if axis >= 0 else 0  # (max is an op in this module)
    if axis < 0:
        x = g.add("_np_swapaxes", name + "_front", [x], {"axis1": axis, "axis2": 0})
    y = g.add("_npx_slice", name + "_op", [x], {"begin": (_NONE,) * at + (begin,),
                                                "end": (_NONE,) * at + (end,)})
    if axis < 0:
        y = g.add("_np_swapaxes", name + "_back", [y], {"axis1": 0, "axis2": axis})
    return [g.named(y, name)]


def _x_softmax(g, node, attrs, ins):
    """softmax / log_softmax: temperature T is softmax(x / T) (MXNet computes exp((x - max) / T)
    over the sum: the same function); dtype is the result's (computed from the data cast to
    it); use_length (a second input of lengths) is not supported."""
    name = node["name"]
    _known(node, attrs, ("axis", "temperature", "dtype", "use_length"))
    if _flag(node, attrs, "use_length", False):
        _fail(node, "use_length=True is not supported")
    (x,) = _arity(node, ins, 1)
    if attrs.get("dtype", "None") != "None":
        x = g.add("_npi_astype", name + "_astype", [x], {"dtype": attrs["dtype"]})
    temperature = _number(node, attrs, "temperature", 1.0)
    if temperature != 1.0:
        t = g.like(g.const(temperature, name + "_temperature"), x, name + "_temperature_cast")
        x = g.add("_np_true_divide", name + "_scaled", [x, t])
    op = "_npx_softmax" if node["op"] == "softmax" else "_npx_log_softmax"
    return [g.add(op, name, [x], {"axis": _integer(node, attrs, "axis", -1)})]


def _x_softmax_activation(g, node, attrs, ins):
    _known(node, attrs, ("mode",))
    (x,) = _arity(node, ins, 1)
    if attrs.get("mode", "instance") != "channel":
        _fail(node, "mode='instance' (softmax over each example's flattened values) is not "
                    "supported; mode='channel' is")
    return [g.add("_npx_softmax", node["name"], [x], {"axis": 1})]


def _x_lrn(g, node, attrs, ins):
    """LRN (lrn-inl.h): norm = knorm + alpha / nsize * (sum of x^2 over the nsize channels
    around each, zero-padded); out = x * norm^-beta, params float32. The channel sum is a
    sum pooling of x^2 with the channels as a third spatial axis; MXNet's second output is
    norm."""
    name = node["name"]
    _known(node, attrs, ("alpha", "beta", "knorm", "nsize"))
    (x,) = _arity(node, ins, 1)
    n = _integer(node, attrs, "nsize")
    if n < 1 or n % 2 == 0:
        _fail(node, f"nsize={n}: LRN takes an odd window", ValueError)
    f32 = _onp.float32
    alpha, beta, knorm = (f32(_number(node, attrs, k, d))
                          for k, d in (("alpha", 1e-4), ("beta", 0.75), ("knorm", 2.0)))
    sq = g.add("_npx_pooling", name + "_window", [
        g.add("_np_expand_dims", name + "_channels", [g.add("_np_square", name + "_sq", [x])],
              {"axis": 1})],
        {"kernel": (n, 1, 1), "stride": (1, 1, 1), "pad": (n // 2, 0, 0), "pool_type": "sum"})
    sq = g.add("_np_squeeze", name + "_sum", [sq], {"axis": (1,)})
    scale = g.like(g.const(float(alpha / f32(n)), name + "_salpha", "float32"), x,
                   name + "_salpha_cast")
    k = g.like(g.const(float(knorm), name + "_knorm", "float32"), x, name + "_knorm_cast")
    norm = g.add("_np_add", name + "_norm", [g.add("_np_multiply", name + "_scaled", [sq, scale]),
                                             k])
    p = g.like(g.const(float(-beta), name + "_beta", "float32"), x, name + "_beta_cast")
    y = g.add("_np_multiply", name, [x, g.add("_np_power", name + "_pow", [norm, p])])
    return [y, norm]


def _x_upsampling(g, node, attrs, ins):
    """UpSampling (upsampling-inl.h): nearest repeats each pixel scale x scale times (one
    input); bilinear is a grouped Deconvolution of the data with its weight input, kernel
    2s - s % 2, stride s, pad ceil((s - 1) / 2), num_group = num_filter, no bias."""
    name = node["name"]
    _known(node, attrs, ("scale", "num_filter", "sample_type", "multi_input_mode", "num_args"))
    scale = _int_tuple(node, attrs, "scale")
    if not scale or len(scale) not in (1, 2, 4):
        _fail(node, f"scale={attrs.get('scale')!r} is not supported", ValueError)
    sh, sw = (scale[0], scale[0]) if len(scale) == 1 else scale[-2:]
    kind = attrs.get("sample_type", "nearest")
    if kind == "nearest":
        if len(ins) != 1:
            _fail(node, f"{len(ins)} inputs (several upsampled together) are not supported")
        # x[:, :, :, None, :, None] * ones((sh, 1, sw)), then the pairs of axes merged
        x = g.add("_np_expand_dims", name + "_h", [ins[0]], {"axis": 3})
        x = g.add("_np_expand_dims", name + "_w", [x], {"axis": 5})
        ones = g.like(g.const([1.0] * (sh * sw), name + "_ones", shape=(sh, 1, sw)), x,
                      name + "_ones_cast")
        y = g.add("_np_multiply", name + "_repeat", [x, ones])
        return [g.add("_npx_reshape", name, [y], {"newshape": (-2, -2, -5, -5)})]
    if kind != "bilinear":
        _fail(node, f"sample_type={kind!r} is not one of MXNet's", ValueError)
    data, weight = _arity(node, ins, 2)
    if sh != sw:
        _fail(node, f"bilinear scale {scale} differs per axis", ValueError)
    n = _integer(node, attrs, "num_filter", 0)
    return [g.add("_npx_deconvolution", name, [data, weight], {  # (s // 2 is ceil((s - 1) / 2))
        "kernel": (2 * sh - sh % 2,) * 2, "stride": (sh, sh), "pad": (sh // 2,) * 2,
        "num_filter": n, "num_group": n, "no_bias": True})]


def _x_add_n(g, node, attrs, ins):
    """add_n (ElementWiseSum): the inputs added in order."""
    _known(node, attrs, ("num_args",))
    if not ins or attrs.get("num_args", str(len(ins))) != str(len(ins)):
        _fail(node, f"num_args={attrs.get('num_args')} but {len(ins)} inputs", ValueError)
    y = g.add("_npx_reshape", node["name"] + "_0", [ins[0]], {"newshape": (-4,)}) \
        if len(ins) == 1 else ins[0]
    for i, e in enumerate(ins[1:], 1):
        y = g.add("_np_add", f"{node['name']}_{i}", [y, e])
    return [g.named(y, node["name"])]


def _x_broadcast_to(g, node, attrs, ins):
    _known(node, attrs, ("shape",))
    (x,) = _arity(node, ins, 1)
    shape = _int_tuple(node, attrs, "shape")
    if shape is None or 0 in shape:
        _fail(node, f"shape={attrs.get('shape')!r}: 0 (keep the data's size) is not supported")
    return [g.add("_np_broadcast_to", node["name"], [x], {"shape": shape})]


def _x_broadcast_like(g, node, attrs, ins):
    _known(node, attrs, ("lhs_axes", "rhs_axes"))
    if _builtins.any(attrs.get(k, "None") != "None" for k in ("lhs_axes", "rhs_axes")):
        _fail(node, "lhs_axes / rhs_axes are not supported")
    return [g.add("_npi_broadcast_like", node["name"], _arity(node, ins, 2))]


# ---- indexing, sequence and normalization ops (GluonNLP / GluonCV exports) --------------------
# A graph records no shapes, so these work for any rank: an axis is moved to the front with
# swapaxes, and a (B,)- or (T, B)-shaped tensor meets the data's leading axes by reversing the
# data's axes (transpose without axes), which puts them last, where NumPy broadcasts.

def _ones_column(g, x, axis, name):
    """int64 ones of shape (x.shape[axis], 1): one column of x (its other axes merged), axis
    first, filled with ones."""
    if axis != 0:
        x = g.add("_np_swapaxes", name + "_front", [x], {"axis1": axis, "axis2": 0})
    col = g.add("_npx_slice", name + "_col", [
        g.add("_npx_reshape", name + "_2d", [x], {"newshape": (-2, -1)})],
        {"begin": (_NONE, 0), "end": (_NONE, 1)})
    return g.add("_npi_astype", name + "_ones",
                 [g.add("_np_ones_like", name + "_ones_f", [col])], {"dtype": "int64"})


def _positions(g, x, axis, name):
    """0 .. x.shape[axis] - 1 as int64 (1-d): a cumulative sum of ones down one column of x
    (its other axes merged)."""
    ones = _ones_column(g, x, axis, name)
    count = g.add("_npx_reshape", name + "_count", [
        g.add("_np_cumsum", name + "_cumsum", [ones], {"axis": 0})], {"newshape": (-1,)})
    return g.add("_np_subtract", name + "_positions", [count, g.const(1, name + "_one", "int64")])


def _reversed(g, x, name):
    return g.add("_np_transpose", name, [x])


def _index_like(g, x, idx, name):
    """idx (x's leading axis, or (T, B) for two) broadcast to x's shape as int64: zeros like x
    with their axes reversed, plus idx reversed, reversed back."""
    zeros = g.add("_npi_astype", name + "_zeros", [g.add("_np_zeros_like", name + "_z", [x])],
                  {"dtype": "int64"})
    return _reversed(g, g.add("_np_add", name + "_sum", [
        _reversed(g, zeros, name + "_zeros_t"), _reversed(g, idx, name + "_idx_t")]),
        name + "_index")


def _lengths(g, node, attrs, ins):
    """A Sequence* op's data and its lengths truncated to int64 (MXNet reads them as int), or
    None without use_sequence_length."""
    name = node["name"]
    _known(node, attrs, ("use_sequence_length", "axis", "value"))
    if not _flag(node, attrs, "use_sequence_length", False):
        return ins[0], None
    data, length = _arity(node, ins, 2)
    return data, g.add("_npi_astype", name + "_lengths", [length], {"dtype": "int64"})


def _sequence_axis(node, attrs, allowed=(0, 1)):
    axis = _integer(node, attrs, "axis", 0)
    if axis not in allowed:
        _fail(node, f"axis={axis} is not supported (MXNet takes {' or '.join(map(str, allowed))})",
              ValueError)
    return axis


def _x_batch_dot(g, node, attrs, ins):
    """batch_dot: a matmul of the (batched) matrices, transpose_a / transpose_b swapping the
    last two axes of an operand first."""
    name = node["name"]
    _known(node, attrs, ("transpose_a", "transpose_b", "forward_stype"))
    a, b = _arity(node, ins, 2)  # (any forward_stype: the result's values are the same)
    for key, k in (("transpose_a", 0), ("transpose_b", 1)):
        if _flag(node, attrs, key, False):
            e = g.add("_np_swapaxes", f"{name}_{key}", [(a, b)[k]], {"axis1": -1, "axis2": -2})
            a, b = (e, b) if k == 0 else (a, e)
    return [g.add("_np_matmul", name, [a, b])]


def _x_where(g, node, attrs, ins):
    """where(condition, x, y): x where condition != 0; a 1-d condition selects whole slices
    along x's first axis: with the axes reversed it meets x's first axis, now the last."""
    name = node["name"]
    _known(node, attrs, ())
    c, x, y = (_reversed(g, e, f"{name}_{k}_t")
               for k, e in zip(("condition", "x", "y"), _arity(node, ins, 3)))
    return [_reversed(g, g.add("_np_where", name + "_t", [c, x, y]), name)]


_TOPK_RETURNS = ("indices", "value", "both", "mask")


def _x_topk(g, node, attrs, ins):
    """topk: a stable ascending argsort along the axis (moved to the front), read backwards for
    the largest; its first k (all for k < 1); indices in dtype (float32 by default), values
    gathered, mask 1 in the data's dtype where an element's rank is below k; 'both' is
    [value, indices]. (Ties: MXNet's std::sort leaves their order unspecified.)"""
    name = node["name"]
    _known(node, attrs, ("axis", "k", "ret_typ", "is_ascend", "dtype"))
    (x,) = _arity(node, ins, 1)
    ret = attrs.get("ret_typ", "indices")
    if ret not in _TOPK_RETURNS:
        _fail(node, f"ret_typ={ret!r} is not one of {_TOPK_RETURNS}", ValueError)
    k = _integer(node, attrs, "k", 1)
    if attrs.get("axis", "-1") == "None":
        if ret == "mask":
            _fail(node, "axis=None with ret_typ='mask' (a mask of the data's shape) is not "
                        "supported")
        x, axis = g.add("_npx_reshape", name + "_flat", [x], {"newshape": (-1,)}), 0
    else:
        axis = _integer(node, attrs, "axis", -1)
    front = x if axis == 0 else g.add("_np_swapaxes", name + "_front", [x],
                                      {"axis1": axis, "axis2": 0})

    def back(e, suffix):
        return e if axis == 0 else g.add("_np_swapaxes", name + suffix, [e],
                                         {"axis1": 0, "axis2": axis})

    order = g.add("_np_argsort", name + "_argsort", [front], {"axis": 0})
    if not _flag(node, attrs, "is_ascend", False):
        order = g.add("_npx_slice", name + "_descending", [order],
                      {"begin": (_NONE,), "end": (_NONE,), "step": (-1,)})
    if ret == "mask":
        rank = g.add("_np_argsort", name + "_rank", [order], {"axis": 0})
        inside = g.add("_np_less", name + "_inside", [rank, g.const(k, name + "_k", "int64")]) \
            if k >= 1 else g.add("_np_ones_like", name + "_all", [rank])
        return [g.named(back(g.like(inside, x, name + "_mask"), "_back"), name)]
    top = order if k < 1 else g.add("_npx_slice", name + "_top", [order],
                                    {"begin": (0,), "end": (k,)})
    outs = []
    if ret in ("value", "both"):
        outs.append(back(g.add("_npi_take_along_axis", name + "_value", [front, top],
                               {"axis": 0}), "_value_back"))
    if ret in ("indices", "both"):
        dtype = attrs.get("dtype", "float32")
        outs.append(back(g.add("_npi_astype", name + "_indices", [top], {"dtype": dtype}),
                         "_indices_back"))
    g.named(outs[0], name)
    return outs


def _x_sequence_mask(g, node, attrs, ins):
    """SequenceMask: with use_sequence_length, the steps t >= int(length[b]) of each sequence
    (axis 0: (T, B, ...), axis 1: (B, T, ...)) set to value (float32, then the data's dtype)."""
    name = node["name"]
    data, length = _lengths(g, node, attrs, ins)
    axis = _sequence_axis(node, attrs)
    if length is None:
        return [g.add("_npx_reshape", name, [data], {"newshape": (-4,)})]
    t = _positions(g, data, axis, name)
    keep = g.add("_np_less", name + "_keep", [g.add("_np_expand_dims", name + "_t", [t],
                                                    {"axis": 1}), length] if axis == 0 else
                 [t, g.add("_np_expand_dims", name + "_len", [length], {"axis": 1})])
    value = float(_onp.float32(_number(node, attrs, "value", 0.0)))
    v = g.like(g.const(value, name + "_value", "float32"), data, name + "_value_cast")
    y = g.add("_np_where", name + "_t_out", [_reversed(g, keep, name + "_keep_t"),
                                             _reversed(g, data, name + "_data_t"), v])
    return [_reversed(g, y, name)]


def _x_sequence_last(g, node, attrs, ins):
    """SequenceLast: each sequence's step int(length[b]) - 1 (the last step without
    use_sequence_length), the time axis removed."""
    name = node["name"]
    data, length = _lengths(g, node, attrs, ins)
    axis = _sequence_axis(node, attrs)
    lead = (_NONE,) * axis
    if length is None:
        y = g.add("_npx_slice", name + "_last", [data], {"begin": lead + (-1,),
                                                         "end": lead + (_NONE,)})
    else:
        step = g.add("_npx_slice", name + "_step", [data], {"begin": lead + (0,),
                                                            "end": lead + (1,)})
        last = g.add("_np_subtract", name + "_pos", [length, g.const(1, name + "_one", "int64")])
        if axis == 0:  # (1, B, ...): the index (1, B) meets its leading axes
            last = g.add("_np_expand_dims", name + "_pos_row", [last], {"axis": 0})
        y = g.add("_npi_take_along_axis", name + "_take", [
            data, _index_like(g, step, last, name)], {"axis": axis})
    return [g.add("_np_squeeze", name, [y], {"axis": (axis,)})]


def _x_sequence_reverse(g, node, attrs, ins):
    """SequenceReverse (time axis 0): the first int(length[b]) steps of each sequence in
    reverse order, the rest where they are (all steps without use_sequence_length)."""
    name = node["name"]
    data, length = _lengths(g, node, attrs, ins)
    _sequence_axis(node, attrs, (0,))
    if length is None:
        return [g.add("_npx_slice", name, [data], {"begin": (_NONE,), "end": (_NONE,),
                                                   "step": (-1,)})]
    t = g.add("_np_expand_dims", name + "_t", [_positions(g, data, 0, name)], {"axis": 1})
    flipped = g.add("_np_subtract", name + "_flipped", [
        g.add("_np_subtract", name + "_last", [length, g.const(1, name + "_one", "int64")]), t])
    src = g.add("_np_where", name + "_src", [g.add("_np_less", name + "_inside", [t, length]),
                                              flipped, t])
    return [g.add("_npi_take_along_axis", name, [data, _index_like(g, data, src, name)],
                  {"axis": 0})]


def _scaled_range(g, node, attrs, i, dtype, name):
    """MXNet's range values start + (i / repeat) * step, computed in dtype (range_fwd), from
    int64 positions i."""
    repeat = _integer(node, attrs, "repeat", 1)
    if repeat < 1:
        _fail(node, f"repeat={repeat} must be positive", ValueError)
    if repeat > 1:
        i = g.add("_np_floor_divide", name + "_repeat", [i, g.const(repeat, name + "_r", "int64")])
    t = _onp.dtype(dtype).type
    start, step = (float(t(_number(node, attrs, k, d))) for k, d in (("start", 0.0), ("step", 1.0)))
    y = g.add("_npi_astype", name + "_as", [i], {"dtype": dtype})
    y = g.add("_np_multiply", name + "_times", [y, g.const(step, name + "_step", dtype)])
    return g.add("_np_add", name + "_plus", [y, g.const(start, name + "_start", dtype)])


def _x_arange(g, node, attrs, ins):
    """_arange: ceil((stop - start) / step) values (stop None: [0, start)), each repeated
    repeat times, in dtype (float32 by default)."""
    name = node["name"]
    _known(node, attrs, ("start", "stop", "step", "repeat", "infer_range", "ctx", "dtype"))
    _arity(node, ins, 0)
    if _flag(node, attrs, "infer_range", False):
        _fail(node, "infer_range=True (the stop inferred from the output's shape) is not "
                    "supported")
    start, step = _number(node, attrs, "start"), _number(node, attrs, "step", 1.0)
    stop = _number(node, attrs, "stop", start) if attrs.get("stop", "None") != "None" else None
    if stop is None:
        start, stop = 0.0, start
    if step == 0 or (stop - start) / step <= 0:
        _fail(node, f"invalid range (start, stop, step) = ({start}, {stop}, {step})", ValueError)
    repeat = _integer(node, attrs, "repeat", 1)
    n = int(_onp.ceil((stop - start) / step)) * _builtins.max(repeat, 1)
    i = g.add("_npi_arange", name + "_i", [], {"start": 0, "stop": n, "dtype": "int64"})
    dtype = attrs.get("dtype", "float32")
    attrs = dict(attrs, start=repr(start), step=repr(step))
    return [g.named(_scaled_range(g, node, attrs, i, dtype, name), name)]


def _x_arange_like(g, node, attrs, ins):
    """_contrib_arange_like with an axis: the range over data.shape[axis], in dtype (float32
    by default; InitType)."""
    name = node["name"]
    _known(node, attrs, ("start", "step", "repeat", "ctx", "dtype", "axis"))
    (x,) = _arity(node, ins, 1)
    if attrs.get("axis", "None") == "None":
        _fail(node, "axis=None (a range of the data's shape) is not supported; give an axis")
    i = _positions(g, x, _integer(node, attrs, "axis"), name)
    dtype = attrs.get("dtype", "float32")
    return [g.named(_scaled_range(g, node, attrs, i, dtype, name), name)]


def _x_div_sqrt_dim(g, node, attrs, ins):
    """_contrib_div_sqrt_dim: data / DType(sqrt(double(data.shape[-1]))); the size counted
    in int64, its root taken in float64."""
    name = node["name"]
    _known(node, attrs, ())
    (x,) = _arity(node, ins, 1)
    ones = g.add("_npi_astype", name + "_ones", [g.add("_np_ones_like", name + "_o", [x])],
                 {"dtype": "int64"})
    size = g.add("_np_sum", name + "_size", [ones], {"axis": (-1,), "keepdims": True})
    root = g.add("_np_sqrt", name + "_root", [
        g.add("_npi_astype", name + "_size_f", [size], {"dtype": "float64"})])
    return [g.add("_np_true_divide", name, [x, g.like(root, x, name + "_root_as")])]


def _x_slice_like(g, node, attrs, ins):
    """slice_like with axes: data[:like.shape[a]] along each axis a listed, a gather of the
    positions 0 .. like.shape[a] - 1 (axes () and negative axes, which depend on the inputs'
    ranks, are not supported)."""
    name = node["name"]
    _known(node, attrs, ("axes",))
    data, like = _arity(node, ins, 2)
    axes = _int_tuple(node, attrs, "axes") or ()
    if not axes or _builtins.min(axes) < 0:
        _fail(node, f"axes={attrs.get('axes', '()')!r}: only non-negative axes listed are "
                    f"supported")
    for a in axes:
        at = f"{name}_axis{a}"
        front = data if a == 0 else g.add("_np_swapaxes", at + "_front", [data],
                                          {"axis1": a, "axis2": 0})
        first = g.add("_npx_slice", at + "_first", [front], {"begin": (0,), "end": (1,)})
        pos = _positions(g, like, a, at)
        idx = g.add("_np_add", at + "_idx_t", [
            _reversed(g, g.add("_npi_astype", at + "_z", [
                g.add("_np_zeros_like", at + "_zeros", [first])], {"dtype": "int64"}),
                at + "_z_t"),
            pos])
        data = g.add("_npi_take_along_axis", at + "_take", [front, _reversed(g, idx, at + "_idx")],
                     {"axis": 0})
        if a != 0:
            data = g.add("_np_swapaxes", at + "_back", [data], {"axis1": 0, "axis2": a})
    return [g.named(data, name)]


def _x_crop(g, node, attrs, ins):
    """Crop (crop-inl.h, NCHW): data[:, :, y:y + h, x:x + w], (y, x) = offset and (h, w) =
    h_w, or with a second input its last two sizes (FCN's crop-like form: positions of that
    input plus the offset, taken along each axis). center_crop, whose offsets come from the
    sizes, is not supported."""
    name = node["name"]
    _known(node, attrs, ("num_args", "offset", "h_w", "center_crop"))
    if _flag(node, attrs, "center_crop", False):
        _fail(node, "center_crop=True is not supported; give offset")
    n = _integer(node, attrs, "num_args", len(ins))
    if n not in (1, 2) or n != len(ins):
        _fail(node, f"num_args={n} with {len(ins)} inputs (Crop takes 1 or 2)", ValueError)
    oy, ox = _int_tuple(node, attrs, "offset") or (0, 0)
    if oy < 0 or ox < 0:  # (crop-inl.h: offsets are >= 0)
        _fail(node, f"offset={attrs.get('offset')!r} must be >= 0", ValueError)
    if n == 1:
        h, w = _int_tuple(node, attrs, "h_w") or (0, 0)
        if h <= 0 or w <= 0:
            _fail(node, f"h_w={attrs.get('h_w')!r}: one input needs the crop's size",
                  ValueError)
        # takes of rows oy .. oy + h - 1 and columns ox .. ox + w - 1 (mode raise: a crop
        # past the data's end is an error, as MXNet's, not a smaller slice)
        data = ins[0]
        for axis, off, size in ((2, oy, h), (3, ox, w)):
            at = f"{name}_axis{axis}"
            idx = g.const(list(range(off, off + size)), at + "_idx", "int64", (size,))
            data = g.add("_npi_take", at + "_take", [data, idx], {"axis": axis,
                                                                   "mode": "raise"})
        return [g.named(data, name)]
    data, like = ins
    for axis, offset in ((2, oy), (3, ox)):
        at = f"{name}_axis{axis}"
        pos = _positions(g, like, axis, at)
        if offset:
            pos = g.add("_np_add", at + "_offset", [pos, g.const(offset, at + "_off", "int64")])
        data = g.add("_npi_take", at + "_take", [data, pos], {"axis": axis, "mode": "raise"})
    return [g.named(data, name)]


def _x_l2_normalization(g, node, attrs, ins):
    """L2Normalization: data / sqrt(sum(data^2) + eps) over each example ('instance'), each
    position's channels ('channel', axis 1) or each channel's positions ('spatial')."""
    name = node["name"]
    _known(node, attrs, ("eps", "mode"))
    (x,) = _arity(node, ins, 1)
    mode = attrs.get("mode", "instance")
    eps = g.like(g.const(float(_onp.float32(_number(node, attrs, "eps", 1e-10))), name + "_eps",
                         "float32"), x, name + "_eps_cast")
    if mode == "channel":
        sq = g.add("_np_sum", name + "_sum", [g.add("_np_square", name + "_sq", [x])],
                   {"axis": (1,), "keepdims": True})
    elif mode in ("instance", "spatial"):
        merged = (-2, -1) if mode == "instance" else (-2, -2, -1)
        flat = g.add("_npx_reshape", name + "_flat", [x], {"newshape": merged})
        sq = g.add("_np_sum", name + "_sum", [g.add("_np_square", name + "_sq", [flat])],
                   {"axis": (len(merged) - 1,)})
    else:
        _fail(node, f"mode={mode!r} is not one of MXNet's", ValueError)
    norm = g.add("_np_sqrt", name + "_norm", [g.add("_np_add", name + "_eps_add", [sq, eps])])
    if mode == "channel":
        return [g.add("_np_true_divide", name, [x, norm])]
    y = g.add("_np_true_divide", name + "_t", [_reversed(g, x, name + "_x_t"),
                                               _reversed(g, norm, name + "_norm_t")])
    return [_reversed(g, y, name)]


def _normalized(g, node, attrs, x, default_eps, name):
    """(x - mean) / sqrt(var + eps) of x (N, G, ...), mean and (biased) var over each
    example's group's values (axes 2 ...); with the mean and the std, both (N, G). (Against
    the reversed axes of x, (N, G) meets the first two, now the last two.)"""
    flat = g.add("_npx_reshape", name + "_flat", [x], {"newshape": (-2, -2, -1)})
    mean = g.add("_np_mean", name + "_mean", [flat], {"axis": (2,), "keepdims": True})
    dev = g.add("_np_subtract", name + "_dev", [flat, mean])
    var = g.add("_np_mean", name + "_var", [g.add("_np_square", name + "_dev2", [dev])],
                {"axis": (2,)})
    eps = float(_onp.float32(_number(node, attrs, "eps", default_eps)))
    if eps < 0:
        _fail(node, f"eps={attrs['eps']!r} must be >= 0", ValueError)
    eps = g.like(g.const(eps, name + "_eps", "float32"), x, name + "_eps_cast")
    std = g.add("_np_sqrt", name + "_std", [g.add("_np_add", name + "_var_eps", [var, eps])])
    mean = g.add("_np_squeeze", name + "_mean_2d", [mean], {"axis": (2,)})
    y = g.add("_np_true_divide", name + "_norm_t", [
        g.add("_np_subtract", name + "_centered", [_reversed(g, x, name + "_x_t"),
                                                   _reversed(g, mean, name + "_mean_t")]),
        _reversed(g, std, name + "_std_t")])
    return _reversed(g, y, name + "_normalized"), mean, std


def _scale_shift(g, y, gamma, beta, name):
    """y * gamma + beta, gamma and beta along y's axis 1: a batch_norm with the statistics 0
    and 1 and eps 0 (so that, as MXNet's, gamma's and beta's shapes are inferred from y's)."""
    stats = [g.add("_np_zeros_like", name + "_zero_mean", [gamma]),
             g.add("_np_ones_like", name + "_unit_var", [gamma])]
    return g.add("_npx_batch_norm", name, [y, gamma, beta, *stats], {
        "eps": 0.0, "axis": 1, "fix_gamma": False, "use_global_stats": True})


def _x_instance_norm(g, node, attrs, ins):
    """InstanceNorm: (x - mean) / sqrt(var + eps) * gamma + beta, mean and (biased) var over
    each example's channel's positions, gamma and beta per channel."""
    name = node["name"]
    _known(node, attrs, ("eps",))
    x, gamma, beta = _arity(node, ins, 3)
    y, _, _ = _normalized(g, node, attrs, x, 1e-3, name)
    return [_scale_shift(g, y, gamma, beta, name)]


def _x_group_norm(g, node, attrs, ins):
    """GroupNorm (MXNet 1.x's group_norm-inl.h): the channels of x (N, C, ...) in num_groups
    groups, each example's group normalized over its values; then gamma and beta, one value a
    group (num_groups,); outputs the result, and the mean and the std sqrt(var + eps), both
    (N, num_groups) (visible with output_mean_var)."""
    name = node["name"]
    _known(node, attrs, ("num_groups", "eps", "output_mean_var"))
    x, gamma, beta = _arity(node, ins, 3)
    groups = _integer(node, attrs, "num_groups", 1)
    if groups < 1:
        _fail(node, f"num_groups={groups} must be >= 1", ValueError)
    _flag(node, attrs, "output_mean_var", False)
    x = g.add("_npx_reshape", name + "_groups", [x], {"newshape": (-2, -6, groups, -1, -4)})
    y, mean, std = _normalized(g, node, attrs, x, 1e-5, name)
    y = _scale_shift(g, y, gamma, beta, name + "_scaled")
    return [g.add("_npx_reshape", name, [y], {"newshape": (-2, -5, -4)}), mean, std]


def _x_smooth_l1(g, node, attrs, ins):
    """smooth_l1 (mshadow_op::smooth_l1_loss, sigma = scalar, s2 = sigma^2): |x| - 0.5 / s2
    where |x| > 1 / s2, else 0.5 * x * x * s2; constants float32, cast to the data's dtype."""
    name = node["name"]
    _known(node, attrs, ("scalar",))
    (x,) = _arity(node, ins, 1)
    f32 = _onp.float32
    sigma = f32(_number(node, attrs, "scalar", 1.0))
    s2 = sigma * sigma

    def k(v, suffix):
        return g.like(g.const(float(v), name + suffix, "float32"), x, name + suffix + "_cast")

    ax = g.add("_np_abs", name + "_abs", [x])
    outer = g.add("_np_subtract", name + "_outer", [ax, k(f32(0.5) / s2, "_half")])
    inner = g.add("_np_multiply", name + "_halfx", [k(0.5, "_c05"), x])
    inner = g.add("_np_multiply", name + "_inner", [
        g.add("_np_multiply", name + "_halfxx", [inner, x]), k(s2, "_s2")])
    far = g.add("_np_greater", name + "_far", [ax, k(f32(1) / s2, "_bound")])
    return [g.add("_np_where", name, [far, outer, inner])]


# ---- MXNet 1.x's vision and indexing ops (spatial transformers, FlowNet, ...) ----------------
# Their params are known when the graph is built, their inputs' shapes are not: sizes the
# computation needs (a map's height, its channel count) are read off the inputs in the graph.

def _extent(g, x, axis, name):
    """x.shape[axis] as an int64 array of shape (1,): a sum of ones down one column of x."""
    return g.add("_np_sum", name + "_size", [_ones_column(g, x, axis, name)], {"axis": (0,)})


def _channel(g, x, c, name):
    """x[:, c] (the channel axis removed)."""
    part = g.add("_npx_slice", name + "_slice", [x], {"begin": (_NONE, c), "end": (_NONE, c + 1)})
    return g.add("_np_squeeze", name, [part], {"axis": (1,)})


def _int_const(g, value, name):
    return g.const(value, name, "int64")


def _positive(node, attrs, key, default=None, low=1, odd=False):
    """An int param >= low (odd where asked)."""
    v = _integer(node, attrs, key, default)
    if v < low or (odd and v % 2 == 0):
        _fail(node, f"{key}={v} must be {'an odd int' if odd else 'an int'} >= {low}",
              ValueError)
    return v


def _target_shape(node, attrs):
    shape = _int_tuple(node, attrs, "target_shape") or (0, 0)
    if len(shape) != 2 or _builtins.min(shape) < 2:
        _fail(node, f"target_shape={attrs.get('target_shape', '(0, 0)')!r}: (H, W), each >= 2 "
                    f"(the grid is spaced 2 / (size - 1))", ValueError)
    return shape


def _affine_grid(g, theta, th, tw, name):
    """The grid (N, 2, th, tw) of the affine matrices theta (N, 6) (each row a (2, 3) matrix)
    applied to the target's (x, y, 1), x and y from -1 to 1 (grid_generator-inl.h); the target
    grid is made in float64 and converted to theta's dtype."""
    axes = []
    for size, tag in ((tw, "x"), (th, "y")):
        i = g.add("_npi_arange", f"{name}_{tag}_i", [], {"start": 0, "stop": size,
                                                          "dtype": "float64"})
        step = g.add("_np_multiply", f"{name}_{tag}_step", [
            i, g.const(2.0 / (size - 1), f"{name}_{tag}_spacing")])
        axes.append(g.add("_np_add", f"{name}_{tag}_axis", [
            g.const(-1.0, f"{name}_{tag}_start"), step]))
    xs, ys = axes
    col = {"axis": 1}
    dst_x = g.add("_np_add", name + "_dst_x", [
        g.add("_np_expand_dims", name + "_zero_col", [g.add("_np_zeros_like", name + "_zy",
                                                            [ys])], col), xs])
    dst_y = g.add("_np_add", name + "_dst_y", [
        g.add("_np_expand_dims", name + "_y_col", [ys], col),
        g.add("_np_zeros_like", name + "_zx", [xs])])
    dst = g.add("_npi_stack", name + "_dst_3d", [
        dst_x, dst_y, g.add("_np_ones_like", name + "_dst_1", [dst_x])], {"num_args": 3})
    dst = g.like(g.add("_npx_reshape", name + "_dst", [dst], {"newshape": (3, -1)}), theta,
                 name + "_dst_cast")
    m = g.add("_npx_reshape", name + "_theta", [theta], {"newshape": (-2, 2, 3)})
    grid = g.add("_np_matmul", name + "_points", [m, dst])
    return g.add("_npx_reshape", name + "_grid", [grid], {"newshape": (-2, -2, th, tw)})


def _bilinear_sample(g, data, grid, name):
    """data (N, C, H, W) read at grid (N, 2, Ho, Wo) (source x, y normalized to [-1, 1]) by
    bilinear interpolation, zero outside the data (bilinear_sampler-inl.h): each of the four
    neighbours gathered from the data as rows (N * H * W, C), weighted."""
    def one(v, tag):
        return g.like(g.const(v, f"{name}_{tag}"), data, f"{name}_{tag}_cast")

    size = {}
    for axis, tag in ((2, "h"), (3, "w")):
        n = _extent(g, data, axis, f"{name}_{tag}")
        last = g.add("_np_subtract", f"{name}_{tag}_last", [n, _int_const(g, 1, f"{name}_{tag}_1")])
        half = g.like(g.add("_np_multiply", f"{name}_{tag}_half64", [
            g.add("_npi_astype", f"{name}_{tag}_last64", [last], {"dtype": "float64"}),
            g.const(0.5, f"{name}_{tag}_05")]), data, f"{name}_{tag}_half")
        size[tag] = n, last, half
    coords = {}
    for c, tag in ((0, "x"), (1, "y")):
        _, _, half = size["w" if tag == "x" else "h"]
        pos = g.add("_np_multiply", f"{name}_{tag}", [
            g.add("_np_add", f"{name}_{tag}_plus1", [_channel(g, grid, c, f"{name}_grid_{tag}"),
                                                      one(1.0, f"{tag}_one")]), half])
        low = g.add("_np_floor", f"{name}_{tag}0", [
            g.add("_npx_stop_gradient", f"{name}_{tag}_nograd", [pos])])
        w1 = g.add("_np_subtract", f"{name}_{tag}_w1", [pos, low])
        w0 = g.add("_np_subtract", f"{name}_{tag}_w0", [one(1.0, f"{tag}_w_one"), w1])
        coords[tag] = (g.add("_npi_astype", f"{name}_{tag}_i", [low], {"dtype": "int64"}),
                       w0, w1)
    (h, h_last, _), (w, w_last, _) = size["h"], size["w"]
    # rows of (N, H, W, C): (N * H) x W merged, then (N * H * W) x C
    table = g.add("_np_transpose", name + "_nhwc", [data], {"axes": (0, 2, 3, 1)})
    table = g.add("_npx_reshape", name + "_nh_w_c", [table], {"newshape": (-5, -2, -2)})
    table = g.add("_npx_reshape", name + "_table", [table], {"newshape": (-5, -2)})
    base = g.add("_np_multiply", name + "_base_1d", [_positions(g, data, 0, name + "_n"),
                                                     g.add("_np_multiply", name + "_hw", [h, w])])
    base = g.add("_np_expand_dims", name + "_base", [
        g.add("_np_expand_dims", name + "_base_2d", [base], {"axis": 1})], {"axis": 2})
    zero = _int_const(g, 0, name + "_zero")
    out = None
    for dy in (0, 1):
        for dx in (0, 1):
            at = f"{name}_{dy}{dx}"
            cy, cx = ((coords[t][0] if d == 0 else g.add("_np_add", f"{at}_{t}", [
                coords[t][0], _int_const(g, 1, f"{at}_{t}_1")])) for t, d in (("y", dy),
                                                                               ("x", dx)))
            inside = None
            for v, hi, tag in ((cx, w_last, "x"), (cy, h_last, "y")):
                ok = g.add("_np_logical_and", f"{at}_{tag}_in", [
                    g.add("_np_greater_equal", f"{at}_{tag}_ge", [v, zero]),
                    g.add("_np_less_equal", f"{at}_{tag}_le", [v, hi])])
                inside = ok if inside is None else g.add("_np_logical_and", f"{at}_in",
                                                         [inside, ok])

            def clipped(v, hi, tag):
                return g.add("_np_minimum", f"{at}_{tag}_hi", [
                    g.add("_np_maximum", f"{at}_{tag}_lo", [v, zero]), hi])

            flat = g.add("_np_add", f"{at}_flat", [
                g.add("_np_add", f"{at}_row", [base, g.add("_np_multiply", f"{at}_row_off", [
                    clipped(cy, h_last, "cy"), w])]), clipped(cx, w_last, "cx")])
            v = g.add("_npi_take", f"{at}_value", [table, flat], {"axis": 0, "mode": "clip"})
            weight = g.add("_np_multiply", f"{at}_weight", [
                g.add("_np_multiply", f"{at}_wyx", [coords["y"][1 + dy], coords["x"][1 + dx]]),
                g.like(inside, data, f"{at}_inside")])
            term = g.add("_np_multiply", f"{at}_term", [
                v, g.add("_np_expand_dims", f"{at}_weight_c", [weight], {"axis": -1})])
            out = term if out is None else g.add("_np_add", f"{at}_sum", [out, term])
    return g.add("_np_transpose", name + "_nchw", [out], {"axes": (0, 3, 1, 2)})


def _x_grid_generator(g, node, attrs, ins):
    """GridGenerator: 'affine' (data (N, 6): the grid of target_shape those matrices give) or
    'warp' (data (N, 2, H, W) an optical flow in pixels: (x + flow_x) / ((W - 1) / 2) - 1, and
    y alike). MXNet's second output, the target grid, is not given."""
    name = node["name"]
    _known(node, attrs, ("transform_type", "target_shape"))
    (x,) = _arity(node, ins, 1)
    kind = attrs.get("transform_type", "affine")
    if kind == "affine":
        th, tw = _target_shape(node, attrs)
        return [g.named(_affine_grid(g, x, th, tw, name), name)]
    if kind != "warp":
        _fail(node, f"transform_type={kind!r} is not 'affine' or 'warp'", ValueError)
    parts = []
    for c, axis, tag in ((0, 3, "x"), (1, 2, "y")):
        at = f"{name}_{tag}"
        pos = _positions(g, x, axis, at)
        if tag == "y":
            pos = g.add("_np_expand_dims", at + "_pos_col", [pos], {"axis": 1})
        last = g.add("_np_subtract", at + "_last", [_extent(g, x, axis, at + "_n"),
                                                    _int_const(g, 1, at + "_1")])
        half = g.like(g.add("_np_multiply", at + "_half64", [
            g.add("_npi_astype", at + "_last64", [last], {"dtype": "float64"}),
            g.const(0.5, at + "_05")]), x, at + "_half")
        flow = g.add("_npx_slice", at + "_flow", [x], {"begin": (_NONE, c), "end": (_NONE, c + 1)})
        moved = g.add("_np_add", at + "_moved", [flow, g.like(pos, x, at + "_pos")])
        parts.append(g.add("_np_subtract", at + "_grid", [
            g.add("_np_true_divide", at + "_scaled", [moved, half]),
            g.like(g.const(1.0, at + "_one"), x, at + "_one_cast")]))
    return [g.add("_npi_concatenate", name, parts, {"num_args": 2, "axis": 1})]


def _x_bilinear_sampler(g, node, attrs, ins):
    """BilinearSampler: data (N, C, H, W) at grid (N, 2, Ho, Wo) -> (N, C, Ho, Wo)."""
    _known(node, attrs, ("cudnn_off",))
    data, grid = _arity(node, ins, 2)
    return [g.named(_bilinear_sample(g, data, grid, node["name"]), node["name"])]


def _x_spatial_transformer(g, node, attrs, ins):
    """SpatialTransformer: data sampled bilinearly at the affine grid of target_shape that loc
    (N, 6) gives (MXNet's only transform and sampler)."""
    name = node["name"]
    _known(node, attrs, ("target_shape", "transform_type", "sampler_type", "cudnn_off"))
    data, loc = _arity(node, ins, 2)
    for key, only in (("transform_type", "affine"), ("sampler_type", "bilinear")):
        if attrs.get(key, only) != only:
            _fail(node, f"{key}={attrs[key]!r}: MXNet's only one is {only!r}", ValueError)
    th, tw = _target_shape(node, attrs)
    grid = _affine_grid(g, loc, th, tw, name + "_loc")
    return [g.named(_bilinear_sample(g, data, grid, name), name)]


def _x_correlation(g, node, attrs, ins):
    """Correlation (FlowNet; correlation-inl.h): both maps zero-padded by pad_size; for each
    displacement (dy, dx) of data2 (multiples of stride2 within max_displacement, dy major:
    one output channel each) the channel sum of data1 * shifted data2 (|difference| unless
    is_multiply), summed over kernel_size^2 windows taken every stride1 positions, over
    kernel_size^2 * C. The rows / columns used are sliced relative to both ends, so the graph
    serves any size."""
    name = node["name"]
    _known(node, attrs, ("kernel_size", "max_displacement", "stride1", "stride2", "pad_size",
                         "is_multiply"))
    a, b = _arity(node, ins, 2)
    k = _positive(node, attrs, "kernel_size", 1, odd=True)
    md = _positive(node, attrs, "max_displacement", 1, low=0)
    s1, s2 = (_positive(node, attrs, key, 1) for key in ("stride1", "stride2"))
    pad = _positive(node, attrs, "pad_size", 0, low=0)
    multiply = _flag(node, attrs, "is_multiply", True)
    if pad:
        a, b = (g.add("_npi_pad", f"{name}_pad{i}", [e], {
            "pad_width": (0, 0, 0, 0, pad, pad, pad, pad), "mode": "constant",
            "constant_value": 0.0}) for i, e in enumerate((a, b)))

    def shifted(x, dy, dx, tag):
        """x[:, :, md + dy:H - md + dy, md + dx:W - md + dx] (an end of 0: to the end)."""
        return g.add("_npx_slice", f"{name}_{tag}", [x], {
            "begin": (_NONE, _NONE, md + dy, md + dx),
            "end": (_NONE, _NONE, -(md - dy) or _NONE, -(md - dx) or _NONE)})

    center = shifted(a, 0, 0, "center")
    radius = md // s2
    maps = []
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            at = f"d{dy + radius}_{dx + radius}"
            other = shifted(b, dy * s2, dx * s2, at + "_shift")
            prod = g.add("_np_multiply", f"{name}_{at}_prod", [center, other]) if multiply else \
                g.add("_np_abs", f"{name}_{at}_absdiff", [
                    g.add("_np_subtract", f"{name}_{at}_diff", [center, other])])
            maps.append(g.add("_np_sum", f"{name}_{at}", [prod], {"axis": (1,)}))
    pm = g.add("_npi_stack", name + "_maps", maps, {"num_args": len(maps), "axis": 1})
    out = None
    for i in range(k):
        for j in range(k):
            end_i, end_j = -(k - 1 - i) or _NONE, -(k - 1 - j) or _NONE
            part = g.add("_npx_slice", f"{name}_k{i}_{j}", [pm], {
                "begin": (_NONE, _NONE, i, j), "end": (_NONE, _NONE, end_i, end_j),
                "step": (1, 1, s1, s1)})
            out = part if out is None else g.add("_np_add", f"{name}_ksum{i}_{j}", [out, part])
    count = g.add("_np_multiply", name + "_count", [_extent(g, a, 1, name + "_c"),
                                                     _int_const(g, k * k, name + "_kk")])
    return [g.add("_np_true_divide", name, [out, g.like(count, out, name + "_count_cast")])]


def _x_khatri_rao(g, node, attrs, ins):
    """khatri_rao (contrib/krprod.h): the column-wise Kronecker product of matrices (M_i, K),
    (M_1 * ... * M_n, K), the first matrix's row index varying slowest."""
    name = node["name"]
    _known(node, attrs, ("num_args",))
    n = _integer(node, attrs, "num_args", len(ins))
    if not ins or n != len(ins):
        _fail(node, f"num_args={n} with {len(ins)} inputs", ValueError)
    out = ins[0]
    if n == 1:
        return [g.add("_npx_reshape", name, [out], {"newshape": (-4,)})]
    for i, m in enumerate(ins[1:], 1):
        prod = g.add("_np_multiply", f"{name}_outer{i}", [
            g.add("_np_expand_dims", f"{name}_rows{i}", [out], {"axis": 1}),
            g.add("_np_expand_dims", f"{name}_m{i}", [m], {"axis": 0})])
        out = g.add("_npx_reshape", f"{name}_{i}", [prod], {"newshape": (-5, -2)})
    return [g.named(out, name)]


def _float_pair(node, attrs, key):
    text = attrs.get(key, "None").strip()
    if text == "None":
        return None
    parts = [p.strip() for p in text.strip("()[] ").split(",") if p.strip()]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2:
        _fail(node, f"{key}={text!r} is not a pair of numbers", ValueError)
    return values


def _x_histogram(g, node, attrs, ins):
    """_histogram (histogram-inl.h): (counts (int64), bin edges (the data's dtype)) of the data's
    values, in bin_cnt equal bins over range (lo, hi) or between the edges of a second input
    (bins); each bin [left, right) but the last [left, right]; values outside (and NaN) not
    counted."""
    name = node["name"]
    _known(node, attrs, ("bin_cnt", "range"))
    if len(ins) == 2:
        if attrs.get("bin_cnt", "None") != "None":
            _fail(node, "give bin_cnt or the bins input, not both", ValueError)
        data, bins = ins
        edges = g.like(bins, data, name + "_edges")
    else:
        (data,) = _arity(node, ins, 1)
        n = _integer(node, attrs, "bin_cnt")
        if n < 1:
            _fail(node, f"bin_cnt={n} must be >= 1", ValueError)
        lohi = _float_pair(node, attrs, "range")
        if lohi is None:
            _fail(node, "range=(lo, hi) is required with bin_cnt (the data's minimum and "
                        "maximum are not known to a graph)", ValueError)
        lo, hi = lohi
        if not (_onp.isfinite(lo) and _onp.isfinite(hi)) or lo > hi:
            _fail(node, f"range={lohi}: lo <= hi, both finite", ValueError)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        steps = _onp.arange(n + 1, dtype="float64")
        values = (hi * steps + (n - steps) * lo) / n
        edges = g.like(g.const(values.tolist(), name + "_edges64", shape=(n + 1,)), data,
                       name + "_edges")
    flat = g.add("_npx_reshape", name + "_flat", [data], {"newshape": (-1,)})
    bin_ids = g.add("_npx_slice", name + "_bin_ids", [_positions(g, edges, 0, name + "_e")],
                    {"begin": (0,), "end": (-1,)})
    last_bin = g.add("_npx_slice", name + "_last_bin", [bin_ids], {"begin": (-1,),
                                                                     "end": (_NONE,)})
    idx = g.add("_np_subtract", name + "_right", [
        g.add("_np_searchsorted", name + "_search", [edges, flat], {"side": "right"}),
        _int_const(g, 1, name + "_one")])
    idx = g.add("_np_minimum", name + "_idx", [idx, last_bin])
    first = g.add("_npx_slice", name + "_lo", [edges], {"begin": (0,), "end": (1,)})
    last = g.add("_npx_slice", name + "_hi", [edges], {"begin": (-1,), "end": (_NONE,)})
    inside = g.add("_np_logical_and", name + "_inside", [
        g.add("_np_greater_equal", name + "_ge", [flat, first]),
        g.add("_np_less_equal", name + "_le", [flat, last])])
    idx = g.add("_np_where", name + "_counted", [inside, idx, _int_const(g, -1, name + "_out")])
    hits = g.add("_np_equal", name + "_hits", [
        g.add("_np_expand_dims", name + "_idx_col", [idx], {"axis": 1}), bin_ids])
    counts = g.add("_npi_astype", name, [
        g.add("_np_sum", name + "_sum", [hits], {"axis": (0,)})], {"dtype": "int64"})
    return [counts, edges]


def _ravel_shape(node, attrs):
    shape = _int_tuple(node, attrs, "shape")
    if not shape or (shape[0] < 1 and shape[0] != -1) or \
            _builtins.any(d < 1 for d in shape[1:]):
        _fail(node, f"shape={attrs.get('shape')!r}: dimensions >= 1 (the first may be -1)",
              ValueError)
    return shape


def _x_ravel_multi_index(g, node, attrs, ins):
    """_ravel_multi_index (tensor/ravel.h): the flat indices of the multi-indices in the
    columns of data (ndim, N) into an array of `shape`, in data's dtype (indices truncated to
    int64 first; not range-checked, as MXNet's)."""
    name = node["name"]
    _known(node, attrs, ("shape",))
    (data,) = _arity(node, ins, 1)
    shape = _ravel_shape(node, attrs)
    idx = g.add("_npi_astype", name + "_int64", [data], {"dtype": "int64"})

    def row(j):
        return g.add("_np_squeeze", f"{name}_row{j}", [g.add("_npx_slice", f"{name}_r{j}", [idx], {
            "begin": (j,), "end": (j + 1,)})], {"axis": (0,)})

    out = row(0)
    for j in range(1, len(shape)):
        out = g.add("_np_add", f"{name}_{j}", [g.add("_np_multiply", f"{name}_scale{j}", [
            out, _int_const(g, shape[j], f"{name}_dim{j}")]), row(j)])
    return [g.like(out, data, name)]


def _x_unravel_index(g, node, attrs, ins):
    """_unravel_index: the multi-indices (len(shape),) + data.shape of the flat indices in data
    into an array of `shape`, in data's dtype (C's division: a negative index gives negative
    remainders)."""
    name = node["name"]
    _known(node, attrs, ("shape",))
    (data,) = _arity(node, ins, 1)
    shape = _ravel_shape(node, attrs)
    idx = g.add("_npi_astype", name + "_int64", [data], {"dtype": "int64"})
    parts = [None] * len(shape)
    zero = _int_const(g, 0, name + "_zero")
    for j in range(len(shape) - 1, 0, -1):
        at = f"{name}_{j}"
        size = _int_const(g, shape[j], at + "_dim")
        q = g.add("_np_floor_divide", at + "_floor", [idx, size])
        back = g.add("_np_multiply", at + "_back", [q, size])
        toward_zero = g.add("_np_logical_and", at + "_fix", [
            g.add("_np_less", at + "_neg", [idx, zero]),
            g.add("_np_not_equal", at + "_inexact", [back, idx])])
        q = g.add("_np_where", at + "_q", [toward_zero, g.add("_np_add", at + "_q1", [
            q, _int_const(g, 1, at + "_one")]), q])
        parts[j] = g.add("_np_subtract", at + "_rem", [
            idx, g.add("_np_multiply", at + "_whole", [q, size])])
        idx = q
    parts[0] = idx
    out = g.add("_npi_stack", name + "_stack", parts, {"num_args": len(parts), "axis": 0})
    return [g.like(out, data, name)]


def _x_fill_element_0index(g, node, attrs, ins):
    """fill_element_0index: lhs (N, M) with lhs[i, rhs[i]] = mhs[i] (rhs truncated to int64;
    a row whose index is outside 0 .. M - 1 is left as it is)."""
    name = node["name"]
    _known(node, attrs, ())
    lhs, mhs, rhs = _arity(node, ins, 3)
    # (built so the graph meets lhs, mhs, rhs in this order: its arguments are listed so, as
    # MXNet lists the node's inputs; mhs enters the index as zeros)
    cols = _positions(g, lhs, 1, name + "_cols")
    zero = g.add("_npi_astype", name + "_zero", [g.add("_np_zeros_like", name + "_mz", [mhs])],
                 {"dtype": "int64"})
    idx = g.add("_np_add", name + "_idx_flat", [
        zero, g.add("_npi_astype", name + "_int64", [rhs], {"dtype": "int64"})])
    idx = g.add("_np_expand_dims", name + "_idx", [idx], {"axis": 1})
    mask = g.add("_np_equal", name + "_mask", [cols, idx])
    value = g.add("_np_expand_dims", name + "_value", [g.like(mhs, lhs, name + "_mhs")],
                  {"axis": 1})
    return [g.add("_np_where", name, [mask, value, lhs])]


def _x_depth_to_space(g, node, attrs, ins):
    """depth_to_space (DCR): (N, C, H, W) -> (N, C / b^2, H * b, W * b): reshape to
    (N, b, b, C / b^2, H, W), axes (0, 3, 4, 1, 5, 2), merge."""
    name = node["name"]
    _known(node, attrs, ("block_size",))
    (x,) = _arity(node, ins, 1)
    b = _positive(node, attrs, "block_size")
    x = g.add("_npx_reshape", name + "_split1", [x], {"newshape": (-2, -6, b, -1, -4)})
    x = g.add("_npx_reshape", name + "_split2", [x], {"newshape": (-2, -2, -6, b, -1, -4)})
    x = g.add("_np_transpose", name + "_moved", [x], {"axes": (0, 3, 4, 1, 5, 2)})
    return [g.add("_npx_reshape", name, [x], {"newshape": (-2, -2, -5, -5)})]


def _x_space_to_depth(g, node, attrs, ins):
    """space_to_depth, depth_to_space's inverse: (N, C, H, W) -> (N, C * b^2, H / b, W / b):
    reshape to (N, C, H / b, b, W / b, b), axes (0, 3, 5, 1, 2, 4), merge."""
    name = node["name"]
    _known(node, attrs, ("block_size",))
    (x,) = _arity(node, ins, 1)
    b = _positive(node, attrs, "block_size")
    x = g.add("_npx_reshape", name + "_split", [x], {"newshape": (-2, -2, -6, -1, b, -6, -1, b)})
    x = g.add("_np_transpose", name + "_moved", [x], {"axes": (0, 3, 5, 1, 2, 4)})
    x = g.add("_npx_reshape", name + "_merge1", [x], {"newshape": (-2, -5, -4)})
    return [g.add("_npx_reshape", name, [x], {"newshape": (-2, -5, -4)})]


# ---- more of MXNet 1.x's legacy ops (reductions, activations, losses) ------------------------

def _x_hard_sigmoid(g, node, attrs, ins):
    """hard_sigmoid: max(0, min(1, alpha * x + beta)), alpha and beta float32 (real_t)."""
    name = node["name"]
    _known(node, attrs, ("alpha", "beta"))
    (x,) = _arity(node, ins, 1)

    def k(key, v):
        return g.like(g.const(float(_onp.float32(v)), f"{name}_{key}", "float32"), x,
                      f"{name}_{key}_cast")

    y = g.add("_np_add", name + "_affine", [
        g.add("_np_multiply", name + "_scaled", [x, k("alpha", _number(node, attrs, "alpha",
                                                                        0.2))]),
        k("beta", _number(node, attrs, "beta", 0.5))])
    return [g.add("_npi_clip", name, [y, k("zero", 0.0), k("one", 1.0)])]


def _x_softmin(g, node, attrs, ins):
    """softmin: softmax of -x (temperature, dtype as softmax's)."""
    (x,) = _arity(node, ins, 1)
    neg = g.add("_np_negative", node["name"] + "_neg", [x])
    return _x_softmax(g, dict(node, op="softmax"), attrs, [neg])


def _x_reverse(g, node, attrs, ins):
    """reverse (flip): the order along each axis listed reversed (a negative axis swapped to
    the front and back)."""
    name = node["name"]
    _known(node, attrs, ("axis",))
    (x,) = _arity(node, ins, 1)
    axes = _int_tuple(node, attrs, "axis")
    if not axes:
        _fail(node, "parameter axis is required", ValueError)
    for i, a in enumerate(axes):
        at = f"{name}_{i}"
        front = x if a >= 0 else g.add("_np_swapaxes", at + "_front", [x],
                                       {"axis1": a, "axis2": 0})
        k = a if a >= 0 else 0
        x = g.add("_npx_slice", at + "_flip", [front], {
            "begin": (_NONE,) * (k + 1), "end": (_NONE,) * (k + 1), "step": (1,) * k + (-1,)})
        if a < 0:
            x = g.add("_np_swapaxes", at + "_back", [x], {"axis1": 0, "axis2": a})
    return [g.named(x, name)]


def _x_nan_reduce(g, node, attrs, ins):
    """nansum / nanprod: NaN read as 0 (1), then MXNet's sum (prod)."""
    name = node["name"]
    (x,) = _arity(node, ins, 1)
    plain = node["op"][3:]
    fill = g.like(g.const(0.0 if plain == "sum" else 1.0, name + "_fill"), x, name + "_fill_cast")
    x = g.add("_np_where", name + "_no_nan", [g.add("_np_isnan", name + "_isnan", [x]), fill, x])
    return _x_reduce(g, dict(node, op=plain), attrs, [x])


def _x_broadcast_axis(g, node, attrs, ins):
    """broadcast_axis (broadcast_axes): each axis listed, of size 1, repeated size times (the
    axis moved to the front, against reversed axes a (size,) array of ones meets it)."""
    name = node["name"]
    _known(node, attrs, ("axis", "size"))
    (x,) = _arity(node, ins, 1)
    axes, sizes = (_int_tuple(node, attrs, k) or () for k in ("axis", "size"))
    if len(axes) != len(sizes) or _builtins.any(s < 1 for s in sizes):
        _fail(node, f"axis={axes} and size={sizes}: one size >= 1 for each axis", ValueError)
    for i, (a, s) in enumerate(zip(axes, sizes)):
        at = f"{name}_{i}"
        front = x if a == 0 else g.add("_np_swapaxes", at + "_front", [x],
                                       {"axis1": a, "axis2": 0})
        ones = g.like(g.const([1.0] * s, at + "_ones", shape=(s,)), x, at + "_ones_cast")
        y = _reversed(g, g.add("_np_multiply", at + "_repeat", [
            _reversed(g, front, at + "_t"), ones]), at + "_back_t")
        x = y if a == 0 else g.add("_np_swapaxes", at + "_back", [y], {"axis1": 0, "axis2": a})
    return [g.named(x, name)]


def _x_argmax_channel(g, node, attrs, ins):
    """argmax_channel: the argmax along the last axis, as float32 (MXNet's legacy indices)."""
    _known(node, attrs, ())
    (x,) = _arity(node, ins, 1)
    i = g.add("_np_argmax", node["name"] + "_op", [x], {"axis": -1})
    return [g.add("_npi_astype", node["name"], [i], {"dtype": "float32"})]


def _x_batch_take(g, node, attrs, ins):
    """batch_take: a[i, indices[i]] for each row i (indices clipped, as pick's mode clip)."""
    _known(node, attrs, ())
    return [g.add("_npx_pick", node["name"], _arity(node, ins, 2), {"axis": -1,
                                                                    "mode": "clip"})]


def _x_moments(g, node, attrs, ins):
    """moments: the mean and the (biased) variance over axes (all by default), keepdims; at
    least one axis is kept, as MXNet's reductions."""
    name = node["name"]
    _known(node, attrs, ("axes", "keepdims"))
    (x,) = _arity(node, ins, 1)
    axes = _int_tuple(node, attrs, "axes")
    keepdims = _flag(node, attrs, "keepdims", False)
    where = {"axis": axes} if axes else {}
    mean = g.add("_np_mean", name + "_mean_k", [x], dict(where, keepdims=True))
    dev2 = g.add("_np_square", name + "_dev2", [g.add("_np_subtract", name + "_dev", [x, mean])])
    var = g.add("_np_mean", name + "_var", [dev2], dict(where, keepdims=keepdims))
    if keepdims:
        return [g.named(mean, name), var]
    mean = g.add("_np_squeeze", name + "_mean", [mean], where) if axes else \
        g.add("_npx_reshape", name + "_mean", [mean], {"newshape": (1,)})
    return [g.named(mean, name), _at_least_1d(g, var, name + "_var")]


def _x_norm(g, node, attrs, ins):
    """norm: the L2 (ord 2) or L1 (ord 1) norm over axis (all axes by default), keepdims, in
    out_dtype (the data's by default); at least one axis is kept, as MXNet's reductions."""
    name = node["name"]
    _known(node, attrs, ("ord", "axis", "keepdims", "out_dtype"))
    (x,) = _arity(node, ins, 1)
    order = _integer(node, attrs, "ord", 2)
    if order not in (1, 2):
        _fail(node, f"ord={order} is not 1 or 2", ValueError)
    axis = _int_tuple(node, attrs, "axis")
    keepdims = _flag(node, attrs, "keepdims", False)
    params = dict({"axis": axis} if axis else {}, keepdims=keepdims)
    if order == 2:
        y = g.add("_np_sqrt", name + "_op", [g.add("_np_sum", name + "_sum", [
            g.add("_np_multiply", name + "_sq", [x, x])], params)])
    else:
        y = g.add("_np_sum", name + "_op", [g.add("_np_abs", name + "_abs", [x])], params)
    y = g.like(y, x, name + "_as_data")
    if not keepdims:
        y = _at_least_1d(g, y, name)
    if attrs.get("out_dtype", "None") != "None":
        y = g.add("_npi_astype", name + "_out", [y], {"dtype": attrs["out_dtype"]})
    return [g.named(y, name)]


def _x_softmax_cross_entropy(g, node, attrs, ins):
    """softmax_cross_entropy: -sum(log_softmax(data)[i, label[i]]) over the batch, (1,)."""
    name = node["name"]
    _known(node, attrs, ())
    data, label = _arity(node, ins, 2)
    logp = g.add("_npx_log_softmax", name + "_logp", [data], {"axis": -1})
    picked = g.add("_npx_pick", name + "_picked", [logp, label], {"axis": -1})
    total = g.add("_np_negative", name + "_neg", [g.add("_np_sum", name + "_sum", [picked])])
    return [g.add("_npx_reshape", name, [total], {"newshape": (1,)})]


def _x_size_array(g, node, attrs, ins):
    """size_array: the data's number of elements as an int64 array (1,)."""
    name = node["name"]
    _known(node, attrs, ())
    (x,) = _arity(node, ins, 1)
    ones = g.add("_npi_astype", name + "_ones", [g.add("_np_ones_like", name + "_o", [x])],
                 {"dtype": "int64"})
    return [g.add("_npx_reshape", name, [g.add("_np_sum", name + "_sum", [ones])],
                  {"newshape": (1,)})]


def _x_cast_storage(g, node, attrs, ins):
    """cast_storage: the data itself (a graph computes on dense values, whatever the
    storage type)."""
    _known(node, attrs, ("stype",))
    (x,) = _arity(node, ins, 1)
    if attrs.get("stype", "default") not in _STORAGE_TYPE_IDS:
        _fail(node, f"stype={attrs['stype']!r}: expected 'default', 'row_sparse' or 'csr'",
              ValueError)
    return [g.add("_npx_reshape", node["name"], [x], {"newshape": (-4,)})]


_EXPANSIONS = dict(
    {name: _x_scalar for name in _SCALAR_OPS},
    **{name: _x_binary for name in _LEGACY_BINARY},
    sum=_x_reduce, mean=_x_reduce, prod=_x_reduce, max=_x_reduce, min=_x_reduce,
    squeeze=_x_squeeze, transpose=_x_transpose, clip=_x_clip, SliceChannel=_x_slice_channel,
    _split_v2=_x_split_v2, Pad=_x_pad, slice=_x_slice, slice_axis=_x_slice_axis,
    softmax=_x_softmax, log_softmax=_x_softmax, SoftmaxActivation=_x_softmax_activation,
    LRN=_x_lrn, UpSampling=_x_upsampling, add_n=_x_add_n, broadcast_to=_x_broadcast_to,
    broadcast_like=_x_broadcast_like, logical_not=_x_unary_as_data, rsqrt=_x_reciprocal_root,
    rcbrt=_x_reciprocal_root, _copy=_x_identity, _np_copy=_x_identity, batch_dot=_x_batch_dot,
    where=_x_where, topk=_x_topk, SequenceMask=_x_sequence_mask, SequenceLast=_x_sequence_last,
    SequenceReverse=_x_sequence_reverse, _arange=_x_arange, _contrib_arange_like=_x_arange_like,
    _contrib_div_sqrt_dim=_x_div_sqrt_dim, slice_like=_x_slice_like, Crop=_x_crop,
    L2Normalization=_x_l2_normalization, InstanceNorm=_x_instance_norm,
    smooth_l1=_x_smooth_l1, GroupNorm=_x_group_norm, GridGenerator=_x_grid_generator,
    BilinearSampler=_x_bilinear_sampler, SpatialTransformer=_x_spatial_transformer,
    khatri_rao=_x_khatri_rao, _histogram=_x_histogram,
    _ravel_multi_index=_x_ravel_multi_index, _unravel_index=_x_unravel_index,
    fill_element_0index=_x_fill_element_0index, depth_to_space=_x_depth_to_space,
    space_to_depth=_x_space_to_depth, hard_sigmoid=_x_hard_sigmoid, softmin=_x_softmin,
    reverse=_x_reverse, nansum=_x_nan_reduce, nanprod=_x_nan_reduce,
    broadcast_axis=_x_broadcast_axis, broadcast_axes=_x_broadcast_axis,
    argmax_channel=_x_argmax_channel, batch_take=_x_batch_take, moments=_x_moments,
    norm=_x_norm, softmax_cross_entropy=_x_softmax_cross_entropy,
    cast_storage=_x_cast_storage, size_array=_x_size_array, Correlation=_x_correlation)


def _mxnet_form(op, attrs):
    """The expansion of an op ndx registers under MXNet's name with other params, when these
    attrs are MXNet's (None: ndx's own)."""
    if op == "_npi_split" and "squeeze_axis" in attrs:
        return _x_split_v2
    if op == "_npi_pad" and ("reflect_type" in attrs or "((" in attrs.get("pad_width", "")):
        return _x_np_pad
    return None


def _translate(g, node):
    """The entries (one per output) of MXNet node `node` (its inputs already renumbered)
    translated into g; None to keep the node as it is (renamed in place where its op is
    MXNet's name for an ndx op)."""
    op, name, ins = node.get("op"), node.get("name"), node.get("inputs", [])
    if not isinstance(op, str) or op == "null" or not isinstance(name, str) or \
            not isinstance(ins, list) or not _builtins.all(_is_entry(e) for e in ins):
        return None  # (the graph loader says what is wrong)
    merged = {}
    for key in ("param", "attr", "attrs"):  # (MXNet before 1.0 wrote 'param' / 'attr')
        if isinstance(node.get(key), dict):
            merged.update(node[key])
    if not _builtins.all(isinstance(v, str) for v in merged.values()) or \
            (node.get("attrs") is not None and not isinstance(node["attrs"], dict)):
        return None  # (the graph loader says what is wrong)
    # MXNet's hidden keys (__profiler_scope__, __lr_mult__, ...) are no op params
    attrs = {k: v for k, v in merged.items() if not k.startswith("__")}
    if op in _DIFFERENT:
        _fail(node, _DIFFERENT[op])
    expand = _EXPANSIONS.get(op) or _mxnet_form(op, attrs)
    if expand is not None:
        return expand(g, node, attrs, ins)
    for key in ("param", "attr"):
        node.pop(key, None)
    node["attrs"] = attrs
    if op in _MXNET_OPS:
        _translate_node(node)
        return None
    if op in ("_np_reshape", "_npx_reshape") and "order" in attrs:
        if attrs["order"] != "C":
            _fail(node, f"order={attrs['order']!r} is not supported")
        del attrs["order"]
    if _ops().get(op) is not None:
        return None
    # An op ndx registers with a prefix: MXNet 2.0's _npi_foo as ndx's _np_foo (or _npx_foo),
    # a legacy foo (exp, sqrt, tanh, ...) as _np_foo / _npx_foo, when foo's params are its.
    base = op[5:] if op.startswith("_npi_") else None if op.startswith("_") else op
    for candidate in () if base is None else ("_np_" + base, "_npx_" + base):
        info = _ops().get(candidate)
        if info is not None:
            params = {p[0] for p in info.params}
            extra = sorted(k for k in attrs if k not in params)
            if extra:
                _fail(node, f"read as ndx's {candidate}, which has no parameter(s) {extra}")
            node["op"] = candidate
            return None
    return None  # (the graph loader names the op it does not know)


def _is_mxnets(doc):
    """Whether graph JSON needs translating: MXNet wrote it (mxnet_version), or it has an op
    ndx does not register under that name, or MXNet's hidden keys on an op."""
    attrs = doc.get("attrs")
    if isinstance(attrs, dict) and "mxnet_version" in attrs:
        return True
    for node in doc["nodes"]:
        op = node.get("op") if isinstance(node, dict) else None
        if not isinstance(op, str) or op == "null":
            continue
        if op in _MXNET_OPS or op in _EXPANSIONS or op in _DIFFERENT or _ops().get(op) is None:
            return True
        if isinstance(node.get("attrs"), dict) and \
                _builtins.any(str(k).startswith("__") for k in node["attrs"]):
            return True
    return False


def _is_entry(e):
    return isinstance(e, list) and 2 <= len(e) <= 3 and type(e[0]) is int and type(e[1]) is int


def _moved(entry, where):
    """An [node, output(, version)] entry of the old graph in the new one. where[i]: node i's
    new index (kept as it is) or its new output entries."""
    w = where[entry[0]]
    if isinstance(w, int):
        return [w, *entry[1:]]
    out = w[entry[1]] if 0 <= entry[1] < len(w) else [w[0][0], entry[1]]  # (invalid stays so)
    return [out[0], out[1], *entry[2:]]


def _translate_graph(doc):
    """doc, a graph MXNet wrote, with its ops as ndx's: node indices (inputs, heads,
    arg_nodes) renumbered around the nodes added; node_row_ptr (the loader does not read it)
    dropped."""
    g, where = _Graph(), []
    for i, node in enumerate(doc["nodes"]):
        if isinstance(node, dict):
            node = dict(node)
            ins = node.get("inputs")
            if isinstance(ins, list):
                for k, e in enumerate(ins):
                    if _is_entry(e) and e[0] >= i:
                        raise ValueError(
                            f"[graph_from_json] node {i} ('{node.get('name')}'): inputs[{k}] "
                            f"refers to node {e[0]}, which is not defined before it (nodes are "
                            f"listed inputs first, so a graph has no cycles)")
                node["inputs"] = [_moved(e, where) if _is_entry(e) and e[0] >= 0 else e
                                  for e in ins]
        outs = _translate(g, node) if isinstance(node, dict) else None
        where.append(g.append(node)[0] if outs is None else outs)
    doc = dict(doc, nodes=g.nodes)
    doc.pop("node_row_ptr", None)
    if isinstance(doc.get("heads"), list):
        heads = []
        for k, e in enumerate(doc["heads"]):
            if _is_entry(e) and e[0] >= len(where):
                raise ValueError(f"[graph_from_json] document: heads[{k}] = [{e[0]}, {e[1]}] "
                                 f"does not name a node output")
            heads.append(_moved(e, where) if _is_entry(e) and e[0] >= 0 else e)
        doc["heads"] = heads
    if isinstance(doc.get("arg_nodes"), list):
        doc["arg_nodes"] = [where[i] if type(i) is int and 0 <= i < len(where) and
                            isinstance(where[i], int) else i for i in doc["arg_nodes"]]
    return doc


def _load_graph(text):
    """A graph capsule from graph JSON, ndx's or MXNet's (its ops translated to ndx's)."""
    try:
        doc = _json.loads(text)
    except (ValueError, RecursionError):  # (the C++ parser says what is wrong)
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("nodes"), list) and _is_mxnets(doc):
        text = _json.dumps(_translate_graph(doc))
    return _core._graph_load(text)


# ---- MXNet's legacy ops that graph JSON expands, as symbols ---------------------------------
# mx.sym.LRN(...), mx.sym.SpatialTransformer(...), ...: the MXNet graph node these calls make
# (MXNet's op name, its params as MXNet's JSON writes them, the given symbols as inputs) run
# through the translation load_json gives MXNet's graphs, so a symbol built here and an MXNet
# JSON file with the same node are one implementation. Inputs not given become the variables
# '<name>_<input>' (with the layer's attributes), as MXNet's.

def _mxnet_text(op, key, value):
    """A param as MXNet's graph JSON writes it: str(value) ('True', '(2, 2)', '0.0001')."""
    def number(v):
        return isinstance(v, (int, float, _onp.integer, _onp.floating)) and \
            not isinstance(v, (bool, _onp.bool_))

    if isinstance(value, (bool, _onp.bool_)):
        return str(bool(value))
    if number(value):
        return str(value.item() if isinstance(value, _onp.generic) else value)
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)) and _builtins.all(number(v) for v in value):
        return str(tuple(v.item() if isinstance(v, _onp.generic) else v for v in value))
    if isinstance(value, (type, _onp.dtype)):
        return _dtype_name(value)
    raise TypeError(f"[sym.{op}] {key} must be a number, a bool, a str or a tuple of numbers, "
                    f"got {type(value).__name__}")


def _node_symbol(op, mx_op, inputs, params, name, outputs=1):
    """mx.sym.<op>: MXNet's node mx_op on inputs ([(input name, Symbol or None)]; None becomes
    the variable '<name>_<input>') with params (None: not given), translated as load_json
    translates it; its first `outputs` outputs."""
    name = _legacy_name(op.lower(), name)
    attrs = {k: _mxnet_text(op, k, v) for k, v in params.items() if v is not None}
    g, given = _Graph(), {}
    for key, s in inputs:  # (each input a variable of the node's graph, then composed)
        if s is None:
            s = var(f"{name}_{key}", attr=_layer_attrs.get())
        elif not isinstance(s, Symbol):
            raise TypeError(f"[sym.{op}] input '{key}' must be a Symbol, got "
                            f"{type(s).__name__}")
        given[f"{name}_{key}"] = s
    entries = [g.append({"op": "null", "name": k, "inputs": []}) for k in given]
    node = {"op": mx_op, "name": name, "attrs": attrs, "inputs": entries}
    token = _building.set(op)
    try:
        outs = _translate(g, node)
    finally:
        _building.reset(token)
    if outs is None:  # (an op of _MXNET_OPS: renamed in place)
        outs = [g.append(node)]
    args = [i for i, n in enumerate(g.nodes)
            if n["op"] == "null" and "__const__" not in n.get("attrs", {})]
    s = Symbol(_core._graph_load(_json.dumps(
        {"nodes": g.nodes, "arg_nodes": args, "heads": [list(e) for e in outs[:outputs]]})))
    present = set(s.list_inputs())
    return s(**{k: v for k, v in given.items() if k in present})


def _node_op(op, mx_op, inputs, params, outputs=1, doc=None):
    """The function mx.sym.<op>(inputs..., params..., name=None), inputs and params by position
    or keyword (MXNet's order and defaults); inputs a tuple of names, or a function of the
    params giving those the node takes; outputs a count or a function of the params."""
    names = inputs if isinstance(inputs, tuple) else inputs(None)
    p = _inspect.Parameter
    sig = _inspect.Signature(
        [p(n, p.POSITIONAL_OR_KEYWORD, default=None) for n in names] +
        [p(k, p.POSITIONAL_OR_KEYWORD, default=v) for k, v in params.items()] +
        [p("name", p.POSITIONAL_OR_KEYWORD, default=None)])

    def f(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs).arguments
        except TypeError as e:
            raise TypeError(f"[sym.{op}] {e}") from None
        values = dict(params, **{k: v for k, v in bound.items() if k in params})
        used = names if isinstance(inputs, tuple) else inputs(values)
        extra = [n for n in names if n not in used and bound.get(n) is not None]
        if extra:
            raise ValueError(f"[sym.{op}] input(s) {extra} given, but with these params the op "
                             f"takes only {list(used)}")
        return _node_symbol(op, mx_op, [(n, bound.get(n)) for n in used],
                            {k: v for k, v in bound.items() if k in params}, bound.get("name"),
                            outputs if isinstance(outputs, int) else outputs(values))
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc or (f"MXNet's {op} as a symbol, computed as load_json reads MXNet's "
                        f"{mx_op} node.")
    f.__signature__ = sig
    return _with_attrs(f)


def _with_lengths(values):
    if values is None or values.get("use_sequence_length"):
        return ("data", "sequence_length")
    return ("data",)


LRN = _node_op("LRN", "LRN", ("data",),
               {"alpha": 1e-4, "beta": 0.75, "knorm": 2.0, "nsize": None},
               doc="Local response normalization across the channels of (N, C, H, W) data: "
                   "data * (knorm + alpha / nsize * s) ** -beta, s the sum of data^2 over the "
                   "nsize (odd) channels around each.")
InstanceNorm = _node_op("InstanceNorm", "InstanceNorm", ("data", "gamma", "beta"),
                        {"eps": 1e-3},
                        doc="Each example's channels normalized over their positions, then * "
                            "gamma + beta (per channel; '<name>_gamma' / '<name>_beta' when not "
                            "given, their shapes inferred from the data's).")
GroupNorm = _node_op("GroupNorm", "GroupNorm", ("data", "gamma", "beta"),
                     {"num_groups": 1, "eps": 1e-5, "output_mean_var": False},
                     lambda v: 3 if v["output_mean_var"] else 1,
                     doc="MXNet 1.x's GroupNorm: each example's channels in num_groups groups, "
                         "each group normalized, then * gamma + beta, one value a group "
                         "(num_groups,); output_mean_var adds the mean and std (N, num_groups).")
L2Normalization = _node_op("L2Normalization", "L2Normalization", ("data",),
                           {"eps": 1e-10, "mode": "instance"},
                           doc="data / sqrt(sum(data^2) + eps) over each example ('instance'), "
                               "each position's channels ('channel') or each channel's "
                               "positions ('spatial').")
GridGenerator = _node_op("GridGenerator", "GridGenerator", ("data",),
                         {"transform_type": "affine", "target_shape": (0, 0)},
                         doc="The sampling grid (N, 2, H, W) of normalized source (x, y) that "
                             "BilinearSampler reads: of affine matrices data (N, 6) over "
                             "target_shape, or of an optical flow data (N, 2, H, W) ('warp').")
BilinearSampler = _node_op("BilinearSampler", "BilinearSampler", ("data", "grid"),
                           {"cudnn_off": None},
                           doc="data (N, C, H, W) read bilinearly at grid (N, 2, Ho, Wo) (x, y "
                               "in [-1, 1]), zero outside: (N, C, Ho, Wo).")
SpatialTransformer = _node_op(
    "SpatialTransformer", "SpatialTransformer", ("data", "loc"),
    {"target_shape": (0, 0), "transform_type": "affine", "sampler_type": "bilinear",
     "cudnn_off": None},
    doc="data sampled bilinearly at the affine grid of target_shape that loc (N, 6) gives: "
        "BilinearSampler(data, GridGenerator(loc, target_shape=...)).")
Correlation = _node_op("Correlation", "Correlation", ("data1", "data2"),
                       {"kernel_size": 1, "max_displacement": 1, "stride1": 1, "stride2": 1,
                        "pad_size": 0, "is_multiply": True},
                       doc="FlowNet's correlation of two (N, C, H, W) maps: one output channel "
                           "per displacement of data2 within max_displacement.")
depth_to_space = _node_op("depth_to_space", "depth_to_space", ("data",), {"block_size": None},
                          doc="(N, C, H, W) -> (N, C / b^2, H * b, W * b), blocks of depth "
                              "moved to space (DCR).")
space_to_depth = _node_op("space_to_depth", "space_to_depth", ("data",), {"block_size": None},
                          doc="(N, C, H, W) -> (N, C * b^2, H / b, W / b), depth_to_space's "
                              "inverse.")
ravel_multi_index = _node_op("ravel_multi_index", "_ravel_multi_index", ("data",),
                             {"shape": None},
                             doc="Flat indices (N,) of the multi-indices in the columns of "
                                 "data (ndim, N) into an array of shape.")
unravel_index = _node_op("unravel_index", "_unravel_index", ("data",), {"shape": None},
                         doc="The multi-indices (len(shape),) + data.shape of the flat indices "
                             "in data into an array of shape.")
fill_element_0index = _node_op("fill_element_0index", "fill_element_0index",
                               ("lhs", "mhs", "rhs"), {},
                               doc="lhs (N, M) with lhs[i, rhs[i]] = mhs[i] for each row i.")
smooth_l1 = _node_op("smooth_l1", "smooth_l1", ("data",), {"scalar": 1.0})
rsqrt = _node_op("rsqrt", "rsqrt", ("data",), {})
rcbrt = _node_op("rcbrt", "rcbrt", ("data",), {})
identity = _node_op("identity", "_copy", ("data",), {})
SwapAxis = _node_op("SwapAxis", "SwapAxis", ("data",), {"dim1": 0, "dim2": 0})
slice_axis = _node_op("slice_axis", "slice_axis", ("data",),
                      {"axis": None, "begin": None, "end": None})
slice_like = _node_op("slice_like", "slice_like", ("data", "shape_like"), {"axes": ()})
batch_dot = _node_op("batch_dot", "batch_dot", ("lhs", "rhs"),
                     {"transpose_a": False, "transpose_b": False, "forward_stype": None})
topk = _node_op("topk", "topk", ("data",),
                {"axis": -1, "k": 1, "ret_typ": "indices", "is_ascend": False,
                 "dtype": "float32"}, lambda v: 2 if v["ret_typ"] == "both" else 1)
Pad = _node_op("Pad", "Pad", ("data",),
               {"mode": "constant", "pad_width": None, "constant_value": 0.0})
SequenceMask = _node_op("SequenceMask", "SequenceMask", _with_lengths,
                        {"use_sequence_length": False, "value": 0.0, "axis": 0})
SequenceLast = _node_op("SequenceLast", "SequenceLast", _with_lengths,
                        {"use_sequence_length": False, "axis": 0})
SequenceReverse = _node_op("SequenceReverse", "SequenceReverse", _with_lengths,
                           {"use_sequence_length": False, "axis": 0})
sum_axis = _node_op("sum_axis", "sum", ("data",),
                    {"axis": None, "keepdims": False, "exclude": False})
max_axis = _node_op("max_axis", "max", ("data",),
                    {"axis": None, "keepdims": False, "exclude": False})
min_axis = _node_op("min_axis", "min", ("data",),
                    {"axis": None, "keepdims": False, "exclude": False})
hard_sigmoid = _node_op("hard_sigmoid", "hard_sigmoid", ("data",), {"alpha": 0.2, "beta": 0.5})
softmin = _node_op("softmin", "softmin", ("data",),
                   {"axis": -1, "temperature": None, "dtype": None})
reverse = flip = _node_op("reverse", "reverse", ("data",), {"axis": None})
nansum = _node_op("nansum", "nansum", ("data",), {"axis": None, "keepdims": False,
                                                  "exclude": False})
nanprod = _node_op("nanprod", "nanprod", ("data",), {"axis": None, "keepdims": False,
                                                     "exclude": False})
broadcast_axis = broadcast_axes = _node_op("broadcast_axis", "broadcast_axis", ("data",),
                                           {"axis": (), "size": ()})
argmax_channel = _node_op("argmax_channel", "argmax_channel", ("data",), {})
batch_take = _node_op("batch_take", "batch_take", ("a", "indices"), {})
moments = _node_op("moments", "moments", ("data",), {"axes": None, "keepdims": False}, 2)
norm = _node_op("norm", "norm", ("data",),
                {"ord": 2, "axis": None, "keepdims": False, "out_dtype": None})
softmax_cross_entropy = _node_op("softmax_cross_entropy", "softmax_cross_entropy",
                                 ("data", "label"), {})
cast_storage = _node_op("cast_storage", "cast_storage", ("data",), {"stype": None})
size_array = _node_op("size_array", "size_array", ("data",), {})


def _ctc_inputs(values):
    names = ("data", "label")
    if values is None or values.get("use_data_lengths"):
        names += ("data_lengths",)
    if values is None or values.get("use_label_lengths"):
        names += ("label_lengths",)
    return names


CTCLoss = _node_op("CTCLoss", "CTCLoss", _ctc_inputs,
                   {"use_data_lengths": False, "use_label_lengths": False,
                    "blank_label": "first"},
                   doc="The connectionist temporal classification loss of (time, batch, "
                       "alphabet) activations, one value per sequence.")
cast = Cast


def _variadic(op, data, num_args):
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    if num_args is not None and num_args != len(data):
        raise ValueError(f"[sym.{op}] num_args={num_args!r} but {len(data)} inputs given")
    return data


@_with_attrs
def UpSampling(*data, weight=None, scale=1, sample_type="nearest", num_filter=0,  # noqa: N802
               multi_input_mode="concat", num_args=None, workspace=512, name=None):
    """MXNet's UpSampling of NCHW data: 'nearest' repeats each pixel scale x scale times (one
    input); 'bilinear' is a grouped deconvolution of the data with a weight (num_filter, 1, k,
    k), k = 2 * scale - scale % 2 ('<name>_weight' when not given)."""
    data = _variadic("UpSampling", data, num_args)
    params = {"scale": scale, "sample_type": sample_type, "num_filter": num_filter,
              "multi_input_mode": multi_input_mode, "num_args": num_args}
    if sample_type == "bilinear":
        if len(data) > 2 or (len(data) == 2 and weight is not None):
            raise ValueError("[sym.UpSampling] bilinear takes the data and a weight")
        data = list(data) + [None] * (2 - len(data))
        inputs = [("data", data[0]), ("weight", weight if weight is not None else data[1])]
    else:
        if weight is not None:
            raise ValueError(f"[sym.UpSampling] weight is for sample_type='bilinear', not "
                             f"{sample_type!r}")
        inputs = [(f"arg{i}", s) for i, s in enumerate(data or [None])]
    params["num_args"] = len(inputs) if sample_type != "bilinear" else 2
    return _node_symbol("UpSampling", "UpSampling", inputs, params, name)


def _variadic_node(op, args, num_args, name, what):
    """MXNet's node `op` over any number (at least one) of inputs."""
    args = _variadic(op, args, num_args)
    if not args:
        raise ValueError(f"[sym.{op}] needs at least one {what}")
    return _node_symbol(op, op, [(f"arg{i}", s) for i, s in enumerate(args)],
                        {"num_args": len(args)}, name)


@_with_attrs
def add_n(*args, num_args=None, name=None):
    """The inputs added elementwise."""
    return _variadic_node("add_n", args, num_args, name, "input")


ElementWiseSum = add_n


@_with_attrs
def khatri_rao(*args, num_args=None, name=None):
    """The column-wise Khatri-Rao product of matrices (M_i, K): (M_1 * ... * M_n, K)."""
    return _variadic_node("khatri_rao", args, num_args, name, "input matrix")


@_with_attrs
def split_v2(ary=None, indices_or_sections=None, axis=0, squeeze_axis=False, name=None):
    """ary split along axis into indices_or_sections equal parts (an int) or at the indices
    given (a tuple), as a group of symbols."""
    if isinstance(indices_or_sections, (bool, _onp.bool_)) or indices_or_sections is None:
        raise TypeError(f"[sym.split_v2] indices_or_sections must be an int or a tuple of ints, "
                        f"got {indices_or_sections!r}")
    if isinstance(indices_or_sections, (int, _onp.integer)):
        n, params = int(indices_or_sections), {"sections": int(indices_or_sections)}
        if n < 1:
            raise ValueError(f"[sym.split_v2] sections must be >= 1, got {n}")
    else:
        indices = (0,) + _tuple(indices_or_sections)
        n, params = len(indices), {"indices": indices}
    params.update(axis=axis, squeeze_axis=squeeze_axis)
    return _node_symbol("split_v2", "_split_v2", [("data", ary)], params, name, n)


@_with_attrs
def histogram(a=None, bins=10, range=None, name=None):  # noqa: A002  (MXNet's name)
    """(counts, bin edges) of a's values: bins an int with range=(lo, hi) (required for a
    symbol, as MXNet's), or a Symbol of increasing bin edges."""
    if isinstance(bins, Symbol):
        if range is not None:
            raise ValueError("[sym.histogram] range is for an int number of bins")
        return _node_symbol("histogram", "_histogram", [("data", a), ("bins", bins)], {}, name, 2)
    if isinstance(bins, (bool, _onp.bool_)) or not isinstance(bins, (int, _onp.integer)):
        raise TypeError(f"[sym.histogram] bins must be an int or a Symbol of bin edges, got "
                        f"{type(bins).__name__}")
    if range is None:
        raise ValueError("[sym.histogram] range=(lo, hi) is required with an int number of "
                         "bins (a symbol does not know its data's minimum and maximum)")
    return _node_symbol("histogram", "_histogram", [("data", a)],
                        {"bin_cnt": bins, "range": range}, name, 2)
