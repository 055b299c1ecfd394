"""MXNet 1's symbolic control flow: mx.sym.contrib.foreach, while_loop and cond.

The functions are called once with symbols: placeholders for the loop's data slices and
states (or nothing, for cond's branches), and whatever symbols of the enclosing graph they
use. What they return is cut from the enclosing graph as MXNet's _cut_subgraph cuts it
(_core._sym_cut): the nodes that read a placeholder form the body's own graph; every other
entry it reads (the enclosing graph's layers and variables, loop invariants) becomes an input
of the node, computed once in the enclosing graph. The node is a custom operator (the one
npx's control flow runs in hybridized blocks) whose only parameter is a JSON text holding
the bodies' graphs, so a symbol with loops saves, loads and binds like any other.

The body's own nodes are those its function made (MXNet marks them with an attribute scope;
ndx collects their names), with everything that reads them or the placeholders.
"""
import json

from . import _core
from . import operator as _operator
from .numpy_extension import _control_flow as _cf

_OP_TYPES = {"foreach": "_ndx_sym_foreach", "while_loop": "_ndx_sym_while_loop",
             "cond": "_ndx_sym_cond"}


def _sym():
    from . import sym
    return sym


def _flatten(value, name, what):
    """(the symbols of a symbol or a nested list of them, in order; its structure)."""
    sym = _sym()
    if isinstance(value, sym.Symbol):
        return [value], None
    if isinstance(value, (list, tuple)):
        flat, fmt = [], []
        for item in value:
            leaves, sub = _flatten(item, name, what)
            flat += leaves
            fmt.append(sub)
        return flat, fmt
    raise TypeError(f"[sym.contrib.{name}] {what} must be a Symbol or a (nested) list of "
                    f"Symbols, got {type(value).__name__}")


def _regroup(flat, fmt):
    """flat's symbols put back into the structure fmt (consumed from the front)."""
    if fmt is None:
        return flat.pop(0)
    return [_regroup(flat, sub) for sub in fmt]


def _check_single(name, what, symbols):
    for s in symbols:
        if len(s) != 1:
            raise ValueError(f"[sym.contrib.{name}] each of {what} must have one output, got a "
                             f"symbol of {len(s)}")


class _Body:
    """Collects the names of the nodes made while a body function runs (sym._apply adds
    them): the body's own nodes, as MXNet marks them with its __subgraph_name__ scope."""

    def __enter__(self):
        self.names = set()
        self._token = _sym()._made_in_body.set(self.names)
        return self

    def __exit__(self, *exc):
        _sym()._made_in_body.reset(self._token)


def _call(fn, *args):
    with _Body() as body:
        return fn(*args), body.names


def _cut(outputs, own, made):
    """(the body's graph JSON, sources, the enclosing graph's symbols it reads): sources map
    each input of the body's graph, in order, to ['var', j] (the j-th name of `own`) or
    ['in', i] (the i-th cut symbol)."""
    sym = _sym()
    graph, entries = _core._sym_cut(sym.Group(outputs)._handle, list(own), sorted(made))
    sources = []
    for name in _core._graph_inputs(graph):
        if name in own:
            sources.append(["var", own.index(name)])
        else:  # cut<i>
            sources.append(["in", int(name[3:])])
    return _core._graph_json(graph), sources, [sym.Symbol(e) for e in entries]


def _node(kind, name, inputs, spec):
    sym = _sym()
    _register()
    out = sym.Custom(*inputs, op_type=_OP_TYPES[kind], name=name, spec=json.dumps(spec))
    return [out[i] for i in range(len(out))]


def _placeholders(name, what, symbols):
    sym = _sym()
    names = [f"{name}_{what}{i}" for i in range(len(symbols))]
    return names, [sym.var(n) for n in names]


def foreach(body, data, init_states, name="foreach"):
    """for each slice d of data along axis 0: out, states = body(d, states); returns (the
    outputs of every step stacked along a new axis 0, the last states), each in the structure
    body gives. data is a Symbol or a list of them (body then gets a list of slices),
    init_states a Symbol or a (nested) list of them."""
    if not callable(body):
        raise TypeError(f"[sym.contrib.foreach] body must be callable, got "
                        f"{type(body).__name__}")
    name = _sym()._auto_name(None, hint="foreach") if name == "foreach" else name
    flat_data, data_fmt = _flatten(data, "foreach", "data")
    flat_states, state_fmt = _flatten(init_states, "foreach", "init_states")
    _check_single("foreach", "data and init_states", flat_data + flat_states)
    data_names, data_vars = _placeholders(name, "data", flat_data)
    state_names, state_vars = _placeholders(name, "state", flat_states)
    result, made = _call(body, _regroup(list(data_vars), data_fmt),
                         _regroup(list(state_vars), state_fmt))
    if not isinstance(result, (list, tuple)) or len(result) != 2:
        raise TypeError("[sym.contrib.foreach] body must return (outputs, states)")
    flat_out, out_fmt = _flatten(result[0], "foreach", "body's outputs")
    flat_new, new_fmt = _flatten(result[1], "foreach", "body's states")
    if new_fmt != state_fmt:
        raise ValueError("[sym.contrib.foreach] body must return states in the structure of "
                         f"init_states: got {new_fmt}, expected {state_fmt}")
    graph, sources, cuts = _cut(flat_out + flat_new, data_names + state_names, made)
    spec = {"kind": "foreach", "body": graph, "sources": sources, "n_data": len(flat_data),
            "n_states": len(flat_states), "n_out": len(flat_out),
            "n_in": len(flat_data) + len(flat_states) + len(cuts)}
    outs = _node("foreach", name, flat_data + flat_states + cuts, spec)
    steps, states = outs[:len(flat_out)], outs[len(flat_out):]
    return (_regroup(steps, out_fmt) if flat_out else [], _regroup(states, state_fmt))


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """while cond(*vars) is true and fewer than max_iterations steps have run: step_output,
    vars = func(*vars). Returns (each step output stacked along a new axis 0 of length
    max_iterations, zeros past the last step; the final vars). max_iterations is required:
    it fixes the outputs' shapes."""
    for what, f in (("cond", cond), ("func", func)):
        if not callable(f):
            raise TypeError(f"[sym.contrib.while_loop] {what} must be callable, got "
                            f"{type(f).__name__}")
    max_iterations = _cf.check_max_iterations("sym.contrib.while_loop", max_iterations)
    name = _sym()._auto_name(None, hint="while_loop") if name == "while_loop" else name
    flat_vars, var_fmt = _flatten(loop_vars, "while_loop", "loop_vars")
    _check_single("while_loop", "loop_vars", flat_vars)
    var_names, var_syms = _placeholders(name, "var", flat_vars)
    structured = _regroup(list(var_syms), var_fmt)
    args = structured if isinstance(structured, list) else [structured]
    condition, made_cond = _call(cond, *args)
    condition, _ = _flatten(condition, "while_loop", "cond's result")
    if len(condition) != 1:
        raise ValueError("[sym.contrib.while_loop] cond must return one symbol")
    result, made_func = _call(func, *args)
    if not isinstance(result, (list, tuple)) or len(result) != 2:
        raise TypeError("[sym.contrib.while_loop] func must return (step_output, "
                        "new_loop_vars)")
    step_out = [] if result[0] is None else result[0]
    flat_step, step_fmt = _flatten(step_out, "while_loop", "the step output")
    flat_new, new_fmt = _flatten(result[1], "while_loop", "new_loop_vars")
    if len(flat_new) != len(flat_vars):
        raise ValueError(f"[sym.contrib.while_loop] func returned {len(flat_new)} loop_vars, "
                         f"expected {len(flat_vars)}")
    cond_graph, cond_sources, cond_cuts = _cut(condition, var_names, made_cond)
    func_graph, func_sources, func_cuts = _cut(flat_step + flat_new, var_names, made_func)
    n_cond = len(cond_cuts)
    func_sources = [[k, j + n_cond if k == "in" else j] for k, j in func_sources]
    spec = {"kind": "while_loop", "cond": cond_graph, "cond_sources": cond_sources,
            "func": func_graph, "func_sources": func_sources, "n_vars": len(flat_vars),
            "n_step": len(flat_step), "max_iterations": max_iterations,
            "n_in": len(flat_vars) + n_cond + len(func_cuts)}
    outs = _node("while_loop", name, flat_vars + cond_cuts + func_cuts, spec)
    steps, final = outs[:len(flat_step)], outs[len(flat_step):]
    return (_regroup(steps, step_fmt) if flat_step else [], _regroup(final, var_fmt))


def cond(pred, then_func, else_func, name="cond"):
    """then_func() if pred (a symbol of one value) is nonzero, else else_func(); the two must
    return symbols of the same shapes and dtypes, in the same structure."""
    sym = _sym()
    if not isinstance(pred, sym.Symbol) or len(pred) != 1:
        raise TypeError("[sym.contrib.cond] pred must be a Symbol of one output, got "
                        f"{type(pred).__name__}")
    for what, f in (("then_func", then_func), ("else_func", else_func)):
        if not callable(f):
            raise TypeError(f"[sym.contrib.cond] {what} must be callable, got "
                            f"{type(f).__name__}")
    name = sym._auto_name(None, hint="cond") if name == "cond" else name
    then_out, made_then = _call(then_func)
    else_out, made_else = _call(else_func)
    then_out, then_fmt = _flatten(then_out, "cond", "then_func's result")
    else_out, else_fmt = _flatten(else_out, "cond", "else_func's result")
    if then_fmt != else_fmt or not then_out:
        raise ValueError("[sym.contrib.cond] then_func and else_func must return the same "
                         f"structure of at least one symbol, got {then_fmt} and {else_fmt}")
    # (only the branch taken runs: its nodes are those the function made)
    then_graph, then_sources, then_cuts = _cut(then_out, [], made_then)
    else_graph, else_sources, else_cuts = _cut(else_out, [], made_else)
    n_then = len(then_cuts)
    else_sources = [[k, j + n_then] for k, j in else_sources]
    spec = {"kind": "cond", "then": then_graph, "then_sources": then_sources,
            "else": else_graph, "else_sources": else_sources, "n_out": len(then_out),
            "n_in": 1 + n_then + len(else_cuts)}
    outs = _node("cond", name, [pred] + then_cuts + else_cuts, spec)
    return _regroup(outs, then_fmt)


# ---- the nodes' operators --------------------------------------------------------------------

class _Graph:
    """A body's graph and where each of its inputs comes from: _control_flow's subgraph
    interface (run(variables, captured)), with inference."""

    def __init__(self, text, sources):
        self.graph = _core._graph_load(text)
        self.sources = [(kind, j) for kind, j in sources]
        self.shapes = self.dtypes = None  # (its outputs': set by create_operator)

    def _pick(self, variables, captured):
        return [variables[j] if kind == "var" else captured[j] for kind, j in self.sources]

    def run(self, variables, captured):
        return _core._graph_run(self.graph, self._pick(variables, captured))

    def infer(self, var_shapes, cap_shapes, var_types, cap_types):
        """(output shapes, output dtypes); None where the inputs do not tell."""
        _, _, shapes, dtypes = _core._graph_infer_partial(
            self.graph, self._pick(var_shapes, cap_shapes), self._pick(var_types, cap_types))
        return shapes, dtypes


class _Spec:
    """A node's spec text, read: its graphs and counts."""

    def __init__(self, text):
        doc = json.loads(text)
        self.kind = doc["kind"]
        for key, value in doc.items():
            if key not in ("body", "cond", "func", "then", "else") and not key.endswith(
                    "_sources") and key != "sources":
                setattr(self, key, value)
        if self.kind == "foreach":
            self.body = _Graph(doc["body"], doc["sources"])
        elif self.kind == "while_loop":
            self.cond = _Graph(doc["cond"], doc["cond_sources"])
            self.func = _Graph(doc["func"], doc["func_sources"])
        else:
            self.then = _Graph(doc["then"], doc["then_sources"])
            self.else_ = _Graph(doc["else"], doc["else_sources"])
            self.n_pred, self.n_args, self.pred = 1, 0, None

    @property
    def n_outputs(self):
        return {"foreach": lambda: self.n_out + self.n_states,
                "while_loop": lambda: self.n_step + self.n_vars,
                "cond": lambda: self.n_out}[self.kind]()

    def infer(self, shapes, dtypes):
        """Output (shapes, dtypes) from the node's input ones (None: unknown)."""
        if self.kind == "foreach":
            return self._infer_foreach(shapes, dtypes)
        if self.kind == "while_loop":
            n = self.n_vars
            step_shapes, step_types = self.func.infer(shapes[:n], shapes[n:], dtypes[:n],
                                                      dtypes[n:])
            out_shapes = [None if s is None else (self.max_iterations,) + tuple(s)
                          for s in step_shapes[:self.n_step]] + list(shapes[:n])
            return out_shapes, list(step_types[:self.n_step]) + list(dtypes[:n])
        then = self.then.infer([], shapes[1:], [], dtypes[1:])
        other = self.else_.infer([], shapes[1:], [], dtypes[1:])
        if None not in then[0] + other[0] and [tuple(s) for s in then[0]] != \
                [tuple(s) for s in other[0]]:
            raise ValueError("[sym.contrib.cond] then_func and else_func must return symbols "
                             f"of the same shapes, got {then[0]} and {other[0]}")
        return then

    def _infer_foreach(self, shapes, dtypes):
        n_data, n_states = self.n_data, self.n_states
        steps = {s[0] for s in shapes[:n_data] if s is not None and len(s)}
        if any(s is not None and not len(s) for s in shapes[:n_data]):
            raise ValueError("[sym.contrib.foreach] data must have at least 1 dimension")
        if len(steps) > 1:
            raise ValueError("[sym.contrib.foreach] every data array must have one first "
                             f"dimension, got {sorted(steps)}")
        if steps == {0}:
            raise ValueError("[sym.contrib.foreach] data has 0 steps")
        variables = [None if s is None else tuple(s[1:]) for s in shapes[:n_data]] + \
            list(shapes[n_data:n_data + n_states])
        cap = n_data + n_states
        out_shapes, out_types = self.body.infer(variables, shapes[cap:], dtypes[:cap],
                                                dtypes[cap:])
        length = next(iter(steps)) if steps else None
        stacked = [None if s is None or length is None else (length,) + tuple(s)
                   for s in out_shapes[:self.n_out]]
        return stacked + list(shapes[n_data:cap]), list(out_types[:self.n_out]) + \
            list(dtypes[n_data:cap])


def _run_foreach(spec, inputs):
    from . import numpy as np
    n_data, cap = spec.n_data, spec.n_data + spec.n_states
    data, states, captured = inputs[:n_data], list(inputs[n_data:cap]), inputs[cap:]
    steps = []
    for t in range(data[0].shape[0]):
        result = spec.body.run([d[t] for d in data] + states, captured)
        steps.append(result[:spec.n_out])
        states = result[spec.n_out:]
    return [np.stack([s[j] for s in steps]) for j in range(spec.n_out)] + list(states)


_RUNS = {"foreach": _run_foreach, "while_loop": _cf._run_while_loop, "cond": _cf._run_cond}
_PARSED = {}  # spec text -> _Spec (a graph loaded once however many nodes use it)
_REGISTERED = []


def _parsed(text):
    spec = _PARSED.get(text)
    if spec is None:
        if len(_PARSED) >= 256:
            _PARSED.pop(next(iter(_PARSED)))
        spec = _PARSED[text] = _Spec(text)
    return spec


class _Prop(_operator.CustomOpProp):
    _unknown_as_none = True  # (a 0-d input's shape () is not "unknown")

    def __init__(self, spec):
        super().__init__()
        self.spec = _parsed(spec)
        self.in_shapes = None

    def list_arguments(self):
        return [f"data{i}" for i in range(self.spec.n_in)]

    def list_outputs(self):
        return [f"output{i}" for i in range(self.spec.n_outputs)]

    def infer_shape(self, in_shape):
        self.in_shapes = [None if s is None else tuple(s) for s in in_shape]
        shapes, _ = self.spec.infer(self.in_shapes, [None] * len(in_shape))
        return in_shape, shapes, []

    def infer_type(self, in_type):
        _, dtypes = self.spec.infer(self.in_shapes or [None] * len(in_type), list(in_type))
        return in_type, dtypes, []

    def create_operator(self, ctx, shapes, dtypes):
        spec, n_in = _Spec.__new__(_Spec), self.spec.n_in
        spec.__dict__.update(self.spec.__dict__)
        if spec.kind == "while_loop":  # (the zero rows past the last step: their shapes)
            spec.func = _Graph.__new__(_Graph)
            spec.func.__dict__.update(self.spec.func.__dict__)
            spec.func.shapes = [tuple(s)[1:] for s in shapes[n_in:n_in + spec.n_step]]
            spec.func.dtypes = list(dtypes[n_in:n_in + spec.n_step])
        return _cf.op_class()(_RUNS[spec.kind], spec)


def _register():
    if not _REGISTERED:
        for op_type in _OP_TYPES.values():
            _operator.register(op_type)(_Prop)
        _REGISTERED.append(True)
