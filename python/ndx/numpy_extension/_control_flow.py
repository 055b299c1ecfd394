"""MXNet 2's control flow: npx.foreach, npx.while_loop and npx.cond, run as Python loops over
ndx ops (so autograd differentiates through every step).

Inside a hybridized block foreach unrolls (its trip count is data's first dimension, fixed
for an input signature). while_loop and cond decide from array values, so there each becomes
one graph node holding subgraphs, as MXNet's _while_loop / _cond: the condition, the branches
and the loop body are traced into graphs of their own, and the node runs them through the
cached executor on every call (only the branch taken; only the steps the condition allows).
Arrays a function uses without taking them as arguments (the block's parameters, arrays of
the enclosing forward) become inputs of the node, so gradients reach them. The node is a
Python-called operator (ndx.operator's Custom), so a graph holding one cannot be exported.
"""
import functools
import itertools
import operator
import threading
import types
import weakref

from .. import _core


def _np():
    from .. import numpy as np
    return np


def _leaves(tree, name, what):
    """The arrays of an array or a nested list / tuple of them, in order."""
    np = _np()
    if isinstance(tree, np.ndarray):
        return [tree]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item, name, what)]
    raise TypeError(f"[{name}] {what} must be an ndarray or a (nested) list of them, got "
                    f"{type(tree).__name__}")


def _regroup(tree, leaves):
    """`leaves` put back into the structure of `tree` (consumed from the front)."""
    np = _np()
    if isinstance(tree, np.ndarray):
        return leaves.pop(0)
    return type(tree)(_regroup(item, leaves) for item in tree) if isinstance(tree, tuple) \
        else [_regroup(item, leaves) for item in tree]


def _stack_steps(name, steps):
    """The outputs of every step, each leaf stacked along a new axis 0, in the first step's
    structure; every step must give the same number of arrays."""
    np = _np()
    per_step = [_leaves(s, name, "the step's output") for s in steps]
    if any(len(p) != len(per_step[0]) for p in per_step):
        raise ValueError(f"[{name}] every step must output the same number of arrays, got "
                         f"{sorted({len(p) for p in per_step})}")
    stacked = [np.stack(list(column)) for column in zip(*per_step)]
    return _regroup(steps[0], stacked)


def foreach(body, data, init_states):
    """for i in range(len(data)): out, states = body(data[i], states), with the outputs of all
    steps stacked along axis 0 (MXNet's npx.foreach). data is an array or a list of arrays
    with one first dimension (then body gets a list of slices); init_states an array or a
    nested list of them. Returns (outputs, final states)."""
    np = _np()
    if not callable(body):
        raise TypeError(f"[foreach] body must be callable, got {type(body).__name__}")
    single = isinstance(data, np.ndarray)
    arrays = _leaves(data, "foreach", "data")
    if not arrays:
        raise ValueError("[foreach] data must hold at least one array")
    if any(a.ndim == 0 for a in arrays):
        raise ValueError("[foreach] data arrays must have at least 1 dimension (the steps)")
    steps = arrays[0].shape[0]
    if any(a.shape[0] != steps for a in arrays):
        raise ValueError(f"[foreach] the data arrays must have one first dimension (the steps), "
                         f"got {[a.shape[0] for a in arrays]}")
    if steps == 0:
        raise ValueError("[foreach] data has 0 steps: the outputs' shapes cannot be known")
    _leaves(init_states, "foreach", "init_states")
    states, outputs = init_states, []
    for i in range(steps):
        piece = arrays[0][i] if single else [a[i] for a in arrays]
        result = body(piece, states)
        if not isinstance(result, (list, tuple)) or len(result) != 2:
            raise TypeError("[foreach] body must return (outputs, states)")
        out, states = result
        outputs.append(out)
    return _stack_steps("foreach", outputs), states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """while cond(*vars) and fewer than max_iterations steps: out, vars = func(*vars)
    (MXNet's npx.while_loop). Returns (the outputs of each step stacked along axis 0 and
    padded with zeros to max_iterations rows, the final loop_vars as a list); no step at all
    gives an empty list of outputs, as MXNet's imperative version."""
    np = _np()
    for fname, f in (("cond", cond), ("func", func)):
        if not callable(f):
            raise TypeError(f"[while_loop] {fname} must be callable, got {type(f).__name__}")
    max_iterations = check_max_iterations("while_loop", max_iterations)
    variables = [loop_vars] if isinstance(loop_vars, np.ndarray) else list(loop_vars) \
        if isinstance(loop_vars, (list, tuple)) else None
    if not variables:
        raise ValueError("[while_loop] loop_vars must be an ndarray or a non-empty list of them")
    _leaves(variables, "while_loop", "loop_vars")
    if _core._is_tracing():
        return _traced_while_loop(cond, func, variables, max_iterations)
    steps = []
    while len(steps) < max_iterations and _truth("while_loop", cond(*variables)):
        result = func(*variables)
        if not isinstance(result, (list, tuple)) or len(result) != 2:
            raise TypeError("[while_loop] func must return (step_output, new_loop_vars)")
        out, new_vars = result
        new_vars = [new_vars] if isinstance(new_vars, np.ndarray) else list(new_vars)
        if len(new_vars) != len(variables):
            raise ValueError(f"[while_loop] func returned {len(new_vars)} loop_vars, expected "
                             f"{len(variables)}")
        steps.append([] if out is None else out)  # (None: no step output, as MXNet's)
        variables = new_vars
    if not steps:
        if _settling() and max_iterations > 0:  # (a trace to come runs func: its shapes)
            func(*variables)
        return [], variables
    stacked = _stack_steps("while_loop", steps)
    leaves = _leaves(stacked, "while_loop", "the step's output")
    padded = [a if a.shape[0] == max_iterations else np.concatenate(
        [a, np.zeros((max_iterations - a.shape[0],) + a.shape[1:], dtype=a.dtype,
                     device=a.device)]) for a in leaves]
    return _regroup(stacked, padded), variables


def check_max_iterations(name, value):
    """max_iterations as an int >= 0 (required: it fixes the step outputs' shapes)."""
    if value is None:
        raise ValueError(f"[{name}] max_iterations should be specified")
    if isinstance(value, bool):
        raise TypeError(f"[{name}] max_iterations must be an int, got bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"[{name}] max_iterations must be an int, got "
                        f"{type(value).__name__}") from None
    if value < 0:
        raise ValueError(f"[{name}] max_iterations must be >= 0, got {value}")
    return value


def _truth(name, value):
    np = _np()
    value = value if isinstance(value, np.ndarray) else np.asarray(value)
    if value.size != 1:
        raise ValueError(f"[{name}] the condition must be one value, got an array of shape "
                         f"{value.shape}")
    return bool(value.reshape(()))


def cond(pred, then_func, else_func, inputs=None, name="cond"):
    """then_func(*inputs) if pred(*inputs) else else_func(*inputs) (MXNet 2's npx.cond); pred
    may also be an array of one value (MXNet 1's form, with functions of no arguments)."""
    np = _np()
    for fname, f in (("then_func", then_func), ("else_func", else_func)):
        if not callable(f):
            raise TypeError(f"[cond] {fname} must be callable, got {type(f).__name__}")
    args = [] if inputs is None else [inputs] if isinstance(inputs, np.ndarray) else \
        list(inputs) if isinstance(inputs, (list, tuple)) else None
    if args is None:
        raise TypeError(f"[cond] inputs must be an ndarray or a list of them, got "
                        f"{type(inputs).__name__}")
    if _core._is_tracing():
        return _traced_cond(pred, then_func, else_func, args)
    branch = _truth("cond", pred(*args) if callable(pred) else pred)
    if _settling():  # (a trace to come runs both branches: their parameters' shapes)
        (else_func if branch else then_func)(*args)
    return then_func(*args) if branch else else_func(*args)


# ---- inside a hybridized block: one graph node holding subgraphs ----------------------------

_SCOPE = threading.local()  # .arrays: name -> the traced array carrying that graph variable
_SPECS = weakref.WeakValueDictionary()  # key -> _Spec, held by the graph nodes' operators
_KEYS = itertools.count()


class trace_scope:
    """Names the variables of the trace being made (a hybridized block's inputs and
    parameters, or a subgraph's own inputs), so that a subgraph traced inside it can find the
    arrays its inputs stand for."""

    def __init__(self, arrays):
        self._arrays = arrays
        self._prev = None

    def __enter__(self):
        self._prev = getattr(_SCOPE, "arrays", None)
        _SCOPE.arrays = {**(self._prev or {}), **self._arrays}
        return self

    def __exit__(self, *exc):
        _SCOPE.arrays = self._prev


class _Subgraph:
    """A function traced into a graph; `sources` says where each graph input comes from:
    ('var', j) the j-th argument (a loop variable, a branch input), ('in', i) the node's
    i-th input (an array the function captured)."""

    def __init__(self, graph, sources, outputs):
        self.graph, self.sources = graph, sources
        self.shapes = [o.shape for o in outputs]
        self.dtypes = [o.dtype for o in outputs]

    def run(self, variables, node_inputs):
        ins = [variables[j] if kind == "var" else node_inputs[j] for kind, j in self.sources]
        return _core._graph_run(self.graph, ins)


def _trace_function(name, what, fn, args, tag, captured, call=None):
    """fn(*args) traced into a _Subgraph (call(fn, *args), which returns a flat list of
    arrays, when given). Arrays fn uses without taking them as arguments are added to
    `captured` (name -> outer array, in order of first use); returns (subgraph, outputs)."""
    own = {f"{tag}.{what}{i}": _traced_like(a, f"{tag}.{what}{i}") for i, a in enumerate(args)}
    position = {n: i for i, n in enumerate(own)}
    # Arrays fn holds (in its closure, its defaults, a partial's arguments, directly or in a
    # list / tuple: MXNet 1's cond(pred, lambda: h * 2, ...)) are cut out as inputs too, so
    # the subgraph does not compute them again from the block's inputs (drawing a dropout mask
    # again, updating running statistics twice). fn is rebuilt around graph inputs standing
    # for them; the user's function and its cells are left alone.
    closure = {}
    fn = _with_inputs_for_arrays(fn, f"{tag}.{what}.held", closure)
    with trace_scope(own):
        outputs = (call or (lambda f, *a: f(*a)))(fn, *own.values())
    outer = getattr(_SCOPE, "arrays", None) or {}
    graph = _core._graph_from_outputs(outputs)
    sources = []
    for input_name in _core._graph_inputs(graph):
        if input_name in position:
            sources.append(("var", position[input_name]))
            continue
        if input_name in closure:  # (one node input per array, whichever function uses it)
            key = f"closure{id(closure[input_name])}"
            captured.setdefault(key, closure[input_name])
            sources.append(("in", list(captured).index(key)))
            continue
        if input_name not in outer:
            raise NotImplementedError(
                f"[{name}] inside a hybridized block, {what} uses an array the graph cannot "
                f"take as an input ({input_name!r}): pass it in the inputs / loop_vars")
        captured.setdefault(input_name, outer[input_name])
        sources.append(("in", list(captured).index(input_name)))
    return _Subgraph(graph, sources, outputs), outputs


def _traced_like(array, name):
    """array as a named graph input, an mx.nd.NDArray when it is one (legacy methods)."""
    traced = _core._trace_input(array, name)
    if type(array) is not _np().ndarray:
        from ..nd.ndarray import _wrap
        return _wrap(traced)
    return traced


def _with_inputs_for_arrays(fn, prefix, held, depth=0):
    """fn rebuilt with every array it holds replaced by a graph input named prefix<k>
    (recorded in `held`: name -> the array). Plain functions get new cells and defaults;
    functools.partial objects new arguments; other callables are returned as they are."""
    np = _np()

    def swap(value):
        if isinstance(value, np.ndarray):
            name = f"{prefix}{len(held)}"
            held[name] = value
            return _traced_like(value, name)
        if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
            items = [swap(v) if isinstance(v, np.ndarray) else v for v in value]
            return items if isinstance(value, list) else type(value)(items) \
                if type(value) is tuple else value
        return value

    def swap_argument(value):  # (a function given to a partial: nd.contrib's legacy bodies)
        if isinstance(value, (types.FunctionType, functools.partial)) and depth < 4:
            return _with_inputs_for_arrays(value, prefix, held, depth + 1)
        return swap(value)

    if isinstance(fn, functools.partial) and depth < 4:
        inner = _with_inputs_for_arrays(fn.func, prefix, held, depth + 1)
        return functools.partial(inner, *[swap_argument(a) for a in fn.args],
                                 **{k: swap_argument(v) for k, v in fn.keywords.items()})
    if not isinstance(fn, types.FunctionType):
        return fn
    cells = fn.__closure__ or ()
    contents = [_cell_value(c) for c in cells]
    new_contents = [swap(v) for v in contents]
    defaults = fn.__defaults__ or ()
    new_defaults = tuple(swap(v) for v in defaults)
    kwdefaults = fn.__kwdefaults__ or {}
    new_kwdefaults = {k: swap(v) for k, v in kwdefaults.items()}
    if all(a is b for a, b in zip(new_contents, contents)) and \
            all(a is b for a, b in zip(new_defaults, defaults)) and \
            all(new_kwdefaults[k] is v for k, v in kwdefaults.items()):
        return fn
    closure = tuple(c if new is old else types.CellType(new)
                    for c, old, new in zip(cells, contents, new_contents)) or None
    rebuilt = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__,
                                 new_defaults or None, closure)
    rebuilt.__kwdefaults__ = new_kwdefaults or None
    return rebuilt


_EMPTY_CELL = object()


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # (an empty cell: a name assigned later in the enclosing function)
        return _EMPTY_CELL


def _flat_outputs(name, what, result):
    np = _np()
    return [] if result is None or (isinstance(result, (list, tuple)) and not result) else \
        _leaves(result, name, what) if not isinstance(result, np.ndarray) else [result]


def _check_condition(name, outputs):
    if len(outputs) != 1 or outputs[0].size != 1:
        shapes = [o.shape for o in outputs]
        raise ValueError(f"[{name}] the condition must be one value, got arrays of shapes "
                         f"{shapes}")


class _Spec:
    """What a control-flow node runs: its subgraphs and its outputs' shapes and dtypes."""


def traced_nodes():
    """How many control-flow nodes this thread's traces have made (a block compares the count
    before and after its trace)."""
    return getattr(_CALL, "nodes", 0)


def _node(op_type, spec, node_inputs):
    _CALL.nodes = traced_nodes() + 1
    key = next(_KEYS)
    _SPECS[key] = spec
    from .. import operator as _operator
    _register_ops()
    out = _operator.custom(*node_inputs, op_type=op_type, key=str(key))
    return [out] if isinstance(out, _np().ndarray) else list(out)


def _traced_cond(pred, then_func, else_func, args):
    np = _np()
    if not callable(pred) and not isinstance(pred, np.ndarray):  # a Python value: fixed
        return then_func(*args) if _truth("cond", pred) else else_func(*args)
    tag, captured, spec = f"_cond{next(_KEYS)}", {}, _Spec()
    spec.n_args, spec.pred = len(args), None
    if callable(pred):
        spec.pred, outs = _trace_function(
            "cond", "pred", pred, args, tag, captured,
            lambda f, *a: _flat_outputs("cond", "pred's result", f(*a)))
        _check_condition("cond", outs)
    else:
        _check_condition("cond", [pred])
    trees = {}

    def branch(which, fn):
        def flat(f, *a):
            trees[which] = f(*a)
            outs = _flat_outputs("cond", f"{which}'s result", trees[which])
            if not outs:
                raise ValueError(f"[cond] {which} must return at least one array")
            return outs
        return _trace_function("cond", which, fn, args, tag, captured, flat)[0]

    spec.then, spec.else_ = branch("then_func", then_func), branch("else_func", else_func)
    if (spec.then.shapes, spec.then.dtypes) != (spec.else_.shapes, spec.else_.dtypes):
        raise ValueError(
            "[cond] inside a hybridized block then_func and else_func must return arrays of the "
            f"same shapes and dtypes, got {list(zip(spec.then.shapes, spec.then.dtypes))} and "
            f"{list(zip(spec.else_.shapes, spec.else_.dtypes))}")
    spec.shapes, spec.dtypes = spec.then.shapes, spec.then.dtypes
    spec.n_pred = 0 if callable(pred) else 1
    node_inputs = ([] if callable(pred) else [pred]) + list(args) + list(captured.values())
    spec.n_in = len(node_inputs)
    outs = _node("_ndx_cond", spec, node_inputs)
    return _regroup(trees["then_func"], outs) if not isinstance(
        trees["then_func"], np.ndarray) else outs[0]


def _traced_while_loop(cond, func, variables, max_iterations):
    np = _np()
    tag, captured, spec = f"_while_loop{next(_KEYS)}", {}, _Spec()
    spec.cond, outs = _trace_function(
        "while_loop", "cond", cond, variables, tag, captured,
        lambda f, *v: _flat_outputs("while_loop", "cond's result", f(*v)))
    _check_condition("while_loop", outs)
    trees = {}

    def body(f, *v):
        result = f(*v)
        if not isinstance(result, (list, tuple)) or len(result) != 2:
            raise TypeError("[while_loop] func must return (step_output, new_loop_vars)")
        trees["out"], new_vars = result
        new_vars = [new_vars] if isinstance(new_vars, np.ndarray) else list(new_vars)
        if len(new_vars) != len(v):
            raise ValueError(f"[while_loop] func returned {len(new_vars)} loop_vars, expected "
                             f"{len(v)}")
        step = _flat_outputs("while_loop", "the step's output", trees["out"])
        spec.n_step = len(step)
        return step + new_vars

    spec.func = _trace_function("while_loop", "func", func, variables, tag, captured, body)[0]
    var_types = [(v.shape, v.dtype) for v in variables]
    new_types = list(zip(spec.func.shapes, spec.func.dtypes))[spec.n_step:]
    if new_types != var_types:
        raise ValueError("[while_loop] inside a hybridized block func must return loop_vars of "
                         f"the loop_vars' shapes and dtypes: got {new_types}, expected "
                         f"{var_types}")
    spec.max_iterations, spec.n_vars = max_iterations, len(variables)
    spec.shapes = [(max_iterations,) + s for s in spec.func.shapes[:spec.n_step]] + \
        [s for s, _ in var_types]
    spec.dtypes = list(spec.func.dtypes)
    node_inputs = list(variables) + list(captured.values())
    spec.n_in = len(node_inputs)
    outs = _node("_ndx_while_loop", spec, node_inputs)
    step_outs, final = outs[:spec.n_step], outs[spec.n_step:]
    tree = trees["out"]
    if tree is None or (isinstance(tree, (list, tuple)) and not tree):
        step_tree = []
    else:
        step_tree = step_outs[0] if isinstance(tree, np.ndarray) else _regroup(tree, step_outs)
    return step_tree, final


# ---- the nodes' operators (Python-called, as ndx.operator's Custom) -------------------------

def _run_cond(spec, node_inputs):
    """The outputs of the branch `node_inputs` select, and the sources of that branch."""
    args = node_inputs[spec.n_pred:spec.n_pred + spec.n_args]
    captured = node_inputs[spec.n_pred + spec.n_args:]
    value = node_inputs[0] if spec.pred is None else spec.pred.run(args, captured)[0]
    taken = spec.then if _truth("cond", value) else spec.else_
    return taken.run(args, captured)


def _run_while_loop(spec, node_inputs):
    np = _np()
    variables = list(node_inputs[:spec.n_vars])
    captured = node_inputs[spec.n_vars:]
    steps = []
    while len(steps) < spec.max_iterations and \
            _truth("while_loop", spec.cond.run(variables, captured)[0]):
        result = spec.func.run(variables, captured)
        steps.append(result[:spec.n_step])
        variables = result[spec.n_step:]
    stacked = []
    for j in range(spec.n_step):
        shape, dtype = spec.func.shapes[j], spec.func.dtypes[j]
        rows = [np.stack([s[j] for s in steps])] if steps else []
        if len(steps) < spec.max_iterations or not steps:  # (zeros; none at all for 0 steps)
            rows.append(np.zeros((spec.max_iterations - len(steps),) + shape, dtype=dtype,
                                 device=node_inputs[0].device))
        stacked.append(rows[0] if len(rows) == 1 else np.concatenate(rows))
    return stacked + list(variables)


def _address(array):
    try:
        return array.__array_interface__["data"][0]
    except AttributeError:  # (off the host)
        return getattr(array, "__cuda_array_interface__", {}).get("data", (None,))[0]


_RUNS = {"_ndx_cond": _run_cond, "_ndx_while_loop": _run_while_loop}
_REGISTERED = []
_OP_CLASS = []


def op_class():
    """The custom operator a control-flow node runs: _Op(run, spec) calls run(spec, inputs)
    (also sym.contrib's nodes, whose specs hold symbols' graphs)."""
    if _OP_CLASS:
        return _OP_CLASS[0]
    from .. import autograd
    from .. import operator as _operator

    class _Op(_operator.CustomOp):
        """Runs the node's subgraphs. When a backward may follow, the run is recorded on
        views of the inputs, and kept (by the address of the first output, which the
        executor keeps for the backward) until that backward uses it."""

        def __init__(self, run, spec):
            self.run, self.spec = run, spec
            self.saved = {}

        def _recorded(self, in_data, is_train):
            inputs = list(in_data)  # (views of the node's inputs, which backward keeps)
            with autograd.record(train_mode=is_train):
                for a in inputs:
                    a.attach_grad()
                outputs = self.run(self.spec, inputs)
            return inputs, outputs

        def forward(self, is_train, req, in_data, out_data, aux):
            tracing = _core._set_tracing(False)
            try:
                # (the graph's caller records, which the graph hides from its operators)
                if is_train or getattr(_CALL, "recording", False) or autograd.is_recording():
                    inputs, outputs = self._recorded(in_data, is_train)
                    if len(self.saved) >= 16:  # (forwards no backward followed)
                        self.saved.pop(next(iter(self.saved)))
                    self.saved[_address(out_data[0])] = (inputs, outputs)
                else:
                    outputs = self.run(self.spec, list(in_data))
                with autograd.pause(train_mode=is_train):
                    for dst, r, src in zip(out_data, req, outputs):
                        self.assign(dst, r, src)
            finally:
                _core._set_tracing(tracing)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            tracing = _core._set_tracing(False)
            try:
                saved = self.saved.pop(_address(out_data[0]), None)
                inputs, outputs = saved or self._recorded(in_data, True)
                grads = _input_grads(inputs, outputs, out_grad)
                with autograd.pause():
                    for dst, r, g in zip(in_grad, req, grads):
                        self.assign(dst, r, 0 if g is None else g)
            finally:
                _core._set_tracing(tracing)

    _OP_CLASS.append(_Op)
    return _Op


def _register_ops():
    if _REGISTERED:
        return
    from .. import operator as _operator
    _Op = op_class()

    def prop_for(op_type):
        class _Prop(_operator.CustomOpProp):
            def __init__(self, key):
                super().__init__()
                self.spec = _SPECS[int(key)]

            def list_arguments(self):
                return [f"data{i}" for i in range(self.spec.n_in)]

            def list_outputs(self):
                return [f"output{i}" for i in range(len(self.spec.shapes))]

            def infer_shape(self, in_shape):
                return in_shape, list(self.spec.shapes), []

            def infer_type(self, in_type):
                return in_type, list(self.spec.dtypes), []

            def create_operator(self, ctx, shapes, dtypes):
                return _Op(_RUNS[op_type], self.spec)
        return _Prop

    for op_type in _RUNS:
        _operator.register(op_type)(prop_for(op_type))
    _REGISTERED.append(True)


def _input_grads(inputs, outputs, out_grads):
    """d(sum of outputs * out_grads) / d(each input); None where an input gets none."""
    from .. import autograd
    heads, head_grads = [], []
    direct = {}
    for o, g in zip(outputs, out_grads):
        same = next((k for k, a in enumerate(inputs) if o is a), None)
        if same is not None:  # (an input passed through unchanged)
            direct[same] = g if same not in direct else direct[same] + g
        elif not _core._autograd_has_live_history(o):  # a constant: no gradient to pass on
            continue
        else:
            heads.append(o)
            head_grads.append(g)
    grads = [None] * len(inputs)
    if heads:
        grads = list(autograd.grad(heads, inputs, head_grads=head_grads))
    for k, g in direct.items():
        grads[k] = g if grads[k] is None else grads[k] + g
    return grads


_CALL = threading.local()  # .recording (the graph call being run records), .settling, .nodes


def note_call(recording):
    """Tells the control-flow nodes of the graph about to run whether its caller records (the
    graph runs its operators with recording paused)."""
    _CALL.recording = recording


class settling:
    """A scope for the imperative pass that settles a block's deferred parameter shapes before
    it is traced: cond runs both branches and while_loop at least one step there, so that
    parameters used only in the branch or steps this input does not take get their shapes
    too (the trace runs every function once)."""

    def __enter__(self):
        self._prev = getattr(_CALL, "settling", False)
        _CALL.settling = True
        return self

    def __exit__(self, *exc):
        _CALL.settling = self._prev


def _settling():
    return getattr(_CALL, "settling", False)


def check_exportable(graph_json, block_name):
    """Refuses a graph holding control-flow nodes: their subgraphs live in this process (as
    Python-called operators), so a file could not carry them."""
    for op_type, name in (("_ndx_cond", "npx.cond"), ("_ndx_while_loop", "npx.while_loop")):
        if f'"{op_type}"' in graph_json:
            raise NotImplementedError(
                f"[export] {block_name}'s graph holds {name}, whose subgraphs ndx cannot write "
                "to a file yet; export a block without it, or save_parameters() and rebuild "
                "the block in code")
