"""MXNet 2's control flow: npx.foreach, npx.while_loop and npx.cond, run as Python loops over
ndx ops (so autograd differentiates through every step).

foreach unrolls inside a hybridized block (its trip count is data's first dimension, fixed
for an input signature). while_loop and cond decide from array values, which a traced graph
cannot hold (ndx has no subgraph operators yet), so inside a hybridized block they raise
NotImplementedError rather than bake one branch into the graph."""
import operator

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


def _refuse_tracing(name):
    if _core._is_tracing():
        raise NotImplementedError(
            f"[{name}] inside a hybridized block: its branch or trip count depends on array "
            "values, which a traced graph cannot hold (ndx has no subgraph operators yet); "
            "call the block without hybridize()")


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
    _refuse_tracing("while_loop")
    for fname, f in (("cond", cond), ("func", func)):
        if not callable(f):
            raise TypeError(f"[while_loop] {fname} must be callable, got {type(f).__name__}")
    if max_iterations is None:
        raise ValueError("[while_loop] max_iterations should be specified")
    if isinstance(max_iterations, bool):
        raise TypeError("[while_loop] max_iterations must be an int, got bool")
    try:
        max_iterations = operator.index(max_iterations)
    except TypeError:
        raise TypeError(f"[while_loop] max_iterations must be an int, got "
                        f"{type(max_iterations).__name__}") from None
    if max_iterations < 0:
        raise ValueError(f"[while_loop] max_iterations must be >= 0, got {max_iterations}")
    variables = [loop_vars] if isinstance(loop_vars, np.ndarray) else list(loop_vars) \
        if isinstance(loop_vars, (list, tuple)) else None
    if not variables:
        raise ValueError("[while_loop] loop_vars must be an ndarray or a non-empty list of them")
    _leaves(variables, "while_loop", "loop_vars")
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
        steps.append(out)
        variables = new_vars
    if not steps:
        return [], variables
    stacked = _stack_steps("while_loop", steps)
    leaves = _leaves(stacked, "while_loop", "the step's output")
    padded = [a if a.shape[0] == max_iterations else np.concatenate(
        [a, np.zeros((max_iterations - a.shape[0],) + a.shape[1:], dtype=a.dtype,
                     device=a.device)]) for a in leaves]
    return _regroup(stacked, padded), variables


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
    _refuse_tracing("cond")
    for fname, f in (("then_func", then_func), ("else_func", else_func)):
        if not callable(f):
            raise TypeError(f"[cond] {fname} must be callable, got {type(f).__name__}")
    args = [] if inputs is None else [inputs] if isinstance(inputs, np.ndarray) else \
        list(inputs) if isinstance(inputs, (list, tuple)) else None
    if args is None:
        raise TypeError(f"[cond] inputs must be an ndarray or a list of them, got "
                        f"{type(inputs).__name__}")
    branch = _truth("cond", pred(*args) if callable(pred) else pred)
    return then_func(*args) if branch else else_func(*args)
