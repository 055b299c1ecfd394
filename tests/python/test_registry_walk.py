"""Every registered op, `_backward_*` ops included, called with bad inputs: mismatched shapes,
zero-size and 0-d inputs, unusual dtypes, the wrong number of inputs, no params and plausible
params. Each call either succeeds or raises a typed error (ValueError, TypeError, IndexError,
NotImplementedError, MemoryError, ZeroDivisionError); anything else (RuntimeError, SystemError,
KeyError, a crash) is a bug in the op's validation.

The generated functions (nd.<registered name>) are called with bad Python arguments too.

The walk runs in a subprocess so that a crash names the op and the case instead of killing
pytest; `python test_registry_walk.py [-v] [op ...]` runs it by hand (-v prints the accepted
case each op's mutations start from)."""
import json
import os
import random
import re
import subprocess
import sys
import zlib

import numpy as onp
import pytest

ALLOWED = (ValueError, TypeError, IndexError, NotImplementedError, MemoryError, ZeroDivisionError)

# Plausible params for ops that require some (the walk also calls every op without params).
PARAMS = {
    "Custom": {"op_type": "no_such_custom_op"},
    "_npi_arange": {"start": 0.0, "stop": 3.0},
    "_npi_eye": {"N": 2},
    "_npi_full": {"shape": (2, 3), "fill_value": 1.0},
    "_npi_linspace": {"start": 0.0, "stop": 1.0, "num": 3},
    "_np_full_like": {"fill_value": 1.0},
    "_np_broadcast_to": {"shape": (2, 3)},
    "_np_expand_dims": {"axis": 0},
    "_np_reshape": {"newshape": (-1,)},
    "_np_swapaxes": {"axis1": 0, "axis2": -1},
    "_npi_astype": {"dtype": "float64"},
    "_npi_concatenate": {"num_args": 2, "axis": 0},
    "_npi_stack": {"num_args": 2, "axis": 0},
    "_backward_concatenate": {"num_args": 2, "axis": 0},
    "_backward_stack": {"num_args": 2, "axis": 0},
    "_npi_split": {"sections": 1},
    "_npx_activation": {"act_type": "relu"},
    "_npx_convolution": {"kernel": (1, 1), "num_filter": 2},
    "_backward_convolution": {"kernel": (1, 1), "num_filter": 2},
    "_npx_fully_connected": {"num_hidden": 2},
    "_backward_fully_connected": {"num_hidden": 2},
    "_npx_embedding": {"input_dim": 4, "output_dim": 3},
    "_backward_embedding": {"input_dim": 4, "output_dim": 3},
    "_npx_one_hot": {"depth": 3},
    "_npx_rnn": {"mode": "rnn_tanh", "state_size": 2, "num_layers": 1},
    "_backward_rnn": {"mode": "rnn_tanh", "state_size": 2, "num_layers": 1},
    "_npx_pooling": {"kernel": (1, 1)},
    "_contrib_quantized_pooling": {"kernel": (1, 1)},
    "_backward_pooling": {"kernel": (1, 1)},
    "_npx_slice": {"begin": (0,), "end": (1,)},
    "sgd_update": {"lr": 0.1},
    "sgd_mom_update": {"lr": 0.1, "momentum": 0.9},
    "adam_update": {"lr": 0.1},
    "preloaded_multi_sgd_update": {"num_weights": 1},
    "preloaded_multi_sgd_mom_update": {"num_weights": 1, "momentum": 0.9},
    "_multi_adam_update": {"num_weights": 1},
    "_multi_adamw_update": {"num_weights": 1},
    "_backward_npx_slice": {"begin": (0,), "end": (1,)},
}

# More params sets for ops whose kernels branch on them.
MORE_PARAMS = {
    "_np_sum": [{"axis": (1,), "keepdims": True}],
    "_np_max": [{"axis": (0,)}],
    "_np_prod": [{"axis": (1,), "keepdims": True}],
    "_backward_sum": [{"axis": (1,), "keepdims": True}],
    "_backward_mean": [{"axis": (0,)}],
    "_backward_max": [{"axis": (1,), "keepdims": True}],
    "_backward_min": [{"axis": (0,)}],
    "_backward_prod": [{"axis": (1,), "keepdims": True}],
    "_npx_pick": [{"axis": 0, "keepdims": True, "mode": "wrap"}],
    "_backward_pick": [{"axis": 0, "keepdims": True, "mode": "wrap"}],
    "_npx_fully_connected": [{"num_hidden": 2, "no_bias": True, "flatten": False}],
    "_backward_fully_connected": [{"num_hidden": 2, "no_bias": True, "flatten": False}],
    "_npx_convolution": [{"kernel": (2,), "num_filter": 2, "no_bias": True, "pad": (1,)}],
    "_backward_convolution": [{"kernel": (2,), "num_filter": 2, "no_bias": True, "pad": (1,)}],
    "_npx_pooling": [{"kernel": (2, 2), "pool_type": "avg", "stride": (2, 2),
                      "pooling_convention": "full"}],
    "_backward_pooling": [{"kernel": (2, 2), "pool_type": "avg", "stride": (2, 2),
                           "pooling_convention": "full"}],
    "_npx_batch_norm": [{"axis": -1, "fix_gamma": True}],
    "_backward_batch_norm": [{"axis": -1, "fix_gamma": True}],
    "_npx_layer_norm": [{"axis": 0}],
    "_backward_layer_norm": [{"axis": 0}],
    "_npi_concatenate": [{"num_args": 2, "axis": None}],
    "_backward_concatenate": [{"num_args": 2, "axis": None}],
}

# Input shapes ops accept (the seeded search tries these first: the walk changes one input of
# an accepted case at a time, which is where missing checks hide).
HINTS = {
    "_contrib_quantized_pooling": [[(1, 2, 3, 3), (1,), (1,)]],
    "_contrib_quantized_act": [[(2, 3), (1,), (1,)]],
    "_contrib_quantized_flatten": [[(2, 3), (1,), (1,)]],
    "_contrib_dequantize": [[(2, 3), (1,), (1,)]],
    "_contrib_requantize": [[(2, 3), (1,), (1,)]],
    "_contrib_quantized_elemwise_add": [[(2, 3), (2, 3), (1,), (1,), (1,), (1,)]],
    "_contrib_quantized_batch_norm": [[(1, 2, 3, 3), (2,), (2,), (2,), (2,), (1,), (1,)]],
    "_npx_batch_norm": [[(1, 2, 3, 3), (2,), (2,), (2,), (2,)], [(2, 3), (3,), (3,), (3,), (3,)]],
    "_backward_batch_norm": [[(1, 2, 3, 3), (1, 2, 3, 3), (2,), (2,), (2,)],
                             [(1, 2, 3, 3), (1, 2, 3, 3), (3,), (3,), (3,)]],
    "_npx_layer_norm": [[(2, 3), (3,), (3,)], [(2, 3), (2,), (2,)]],
    "_backward_layer_norm": [[(2, 3), (2, 3), (3,), (2, 1), (2, 1)],
                             [(2, 3), (2, 3), (2,), (1, 3), (1, 3)]],
    "_backward_concatenate": [[(4, 3), (2, 3), (2, 3)], [(12,), (2, 3), (2, 3)]],
    "_backward_convolution": [[(1, 2, 3, 3), (1, 2, 3, 3), (2, 2, 1, 1), (2,)],
                              [(1, 2, 4), (1, 2, 3), (2, 2, 2)]],
    "_npx_convolution": [[(1, 2, 3, 3), (2, 2, 1, 1), (2,)], [(1, 2, 3), (2, 2, 2)]],
    "_backward_embedding": [[(2, 3, 3), (2, 3), (4, 3)]],
    "_npx_embedding": [[(2, 3), (4, 3)]],
    "_npx_rnn": [[(2, 3, 3), (14,), (1, 3, 2)]],
    "_backward_rnn": [[(2, 3, 2), (1, 3, 2), (2, 3, 3), (14,), (1, 3, 2), (24,)]],
    "_backward_fully_connected": [[(2, 2), (2, 3), (2, 3)], [(2, 2), (2, 3), (2, 3)]],
    "_npx_fully_connected": [[(2, 3), (2, 3), (2,)], [(2, 3), (2, 3)]],
    "_backward_pick": [[(2,), (2, 3), (2,)], [(1, 3), (2, 3), (1, 3)]],
    "_npx_pick": [[(2, 3), (2,)], [(2, 3), (1, 3)]],
    "_npx_ctc_loss": [[(5, 2, 4), (2, 2)]],
    "preloaded_multi_sgd_update": [[(2, 3), (2, 3), (1,), (1,)]],
    "preloaded_multi_sgd_mom_update": [[(2, 3), (2, 3), (2, 3), (1,), (1,)]],
    "_multi_adam_update": [[(2, 3), (2, 3), (2, 3), (2, 3), (1,), (1,)]],
    "_multi_adamw_update": [[(2, 3), (2, 3), (2, 3), (2, 3), (1,), (1,)]],
    "_backward_ctc_loss": [[(2,), (5, 2, 4), (2, 2)]],
    "_backward_pooling": [[(1, 2, 3, 3)] * 3, [(1, 2, 2, 2), (1, 2, 3, 3), (1, 2, 2, 2)]],
    "_npx_pooling": [[(1, 2, 3, 3)]],
    "_backward_dot": [[(2, 2), (2, 3), (3, 2)]],
    "_backward_matmul": [[(2, 2), (2, 3), (3, 2)], [(2, 2, 2), (2, 2, 3), (3, 2)]],
    "_backward_max": [[(), (2, 3), ()], [(2, 1), (2, 3), (2, 1)]],
    "_backward_min": [[(), (2, 3), ()], [(3,), (2, 3), (3,)]],
    "_backward_prod": [[(), (2, 3), ()], [(2, 1), (2, 3), (2, 1)]],
    "_backward_sum": [[(), (2, 3)], [(2, 1), (2, 3)]],
    "_backward_mean": [[(), (2, 3)], [(3,), (2, 3)]],
    "_backward_stack": [[(2, 2, 3), (2, 3), (2, 3)]],
    "_backward_npx_slice": [[(1, 3), (2, 3)]],
    "_backward_broadcast_to": [[(2, 3), (1, 3)]],
    "_backward_reshape": [[(6,), (2, 3)]],
    "_backward_power": [[(2, 3), (2, 3), (3,)]],
    "_backward_mod": [[(2, 3), (2, 1), (3,)]],
    "_backward_maximum": [[(2, 3), (2, 3), ()]],
    "_backward_minimum": [[(2, 3), (1, 3), (2, 1)]],
    "_npx_box_nms": [[(3, 6)], [(2, 4, 7)]],
    "_npx_multibox_detection": [[(1, 3, 2), (1, 8), (1, 2, 4)]],
    "_npx_multibox_target": [[(1, 3, 4), (2, 2, 5), (2, 2, 3)]],
    "_npx_box_encode": [[(2, 3), (2, 3), (2, 3, 4), (2, 3, 4), (4,), (4,)]],
    "_npx_box_decode": [[(2, 3, 4), (1, 3, 4)]],
    "_npx_constraint_check": [[(0, 3)]],  # random bools may hold a false; none do
}

SHAPE_SETS = {
    "same": [(2, 3)] * 6,
    "mismatched": [(2, 3), (3, 2), (4,), (1, 5), (2, 3, 4), (7,)],
    "zero_size": [(0, 3), (0, 3), (0,), (3, 0), (0, 3), (0,)],
    "zero_dim": [()] * 6,
    "mixed_0d": [(2, 3), (), (3,), (), (2, 3), ()],
    "4d": [(1, 2, 3, 3), (2, 2, 1, 1), (2,), (2,), (2,), (2,)],
    "4d_bad": [(1, 2, 3, 3), (2, 3, 1, 1), (5,), (1, 1), (), (3,)],
    "big_rank": [(1,) * 9, (1,) * 9, (1,) * 9, (1,) * 9, (1,) * 9, (1,) * 9],
}
DTYPES = ["float32", "float64", "float16", "bool", "int8", "uint8", "int32", "int64"]


def _array(np, shape, dtype, rng):
    a = rng.uniform(-0.5, 2.5, size=shape)  # truncates to valid indices too
    if dtype == "bool":
        a = a > 0
    return np.array(onp.asarray(a).astype(dtype), dtype=dtype)


SHAPE_POOL = [(), (0,), (1,), (2,), (3,), (2, 3), (3, 2), (1, 3), (2, 1), (0, 3), (3, 0),
              (1, 2, 3, 3), (2, 2, 1, 1), (2, 3, 1, 1), (1, 2, 3), (2, 2, 3), (4, 3), (2, 0, 3)]


def _counts(n):
    return sorted({n, max(n - 1, 0), n + 1, 0})


def expected_inputs(core, handle, params, declared):
    """The op's input count for these params (from invoke's own check), or None when the
    params do not parse."""
    try:
        core._invoke(handle, [], params)
        return 0
    except ALLOWED as e:
        m = re.search(r"expected (\d+) inputs?, got 0", str(e))
        if m:
            return int(m.group(1))
        if "param" in str(e) or "argument" in str(e):
            return None
        return declared if declared >= 0 else 2
    except BaseException:  # noqa: BLE001 (reported by the walk itself)
        return declared if declared >= 0 else 2


def _invoke_ok(core, np, handle, params, specs, rng):
    try:
        out = core._invoke(handle, [_array(np, s, dt, rng) for s, dt in specs], params)
        for o in out if isinstance(out, tuple) else (out,):
            o.asnumpy()
        return True
    except ALLOWED:
        return False


# Input dtypes a valid case is looked for with: float32 first, then integers (bitwise ops,
# gcd), a float with an integer (ldexp), bool (constraint_check) and the INT8 ops' patterns.
BASE_DTYPES = (("float32",), ("int32",), ("float32", "int32"), ("bool",),
               # the INT8 ops: quantized data, then float32 ranges
               ("int8", "float32", "float32"), ("int32", "float32", "float32"),
               ("int8", "int8", "float32", "float32", "float32", "float32"),
               ("int8",) + ("float32",) * 6)


def valid_case(core, np, name, handle, params, n, rng):
    """[(shape, dtype)] per input that the op accepts: shapes from HINTS, the shape sets or a
    seeded search, with the dtypes of BASE_DTYPES."""
    candidates = list(HINTS.get(name, []))
    candidates += [[shapes[i % 6] for i in range(n)] for shapes in SHAPE_SETS.values()]
    search = random.Random(name)
    candidates += [[search.choice(SHAPE_POOL) for _ in range(n)] for _ in range(400)]
    for dtypes in BASE_DTYPES:
        for shapes in candidates:
            specs = [(s, dtypes[i % len(dtypes)]) for i, s in enumerate(shapes)]
            if len(shapes) == n and _invoke_ok(core, np, handle, params, specs, rng):
                return specs
    return None


def cases(name, n_main, base=None):
    """(label, [(shape, dtype)]) for every case the walk runs for an op taking n_main inputs:
    the wrong input counts, shape sets, dtypes and, from a valid case, each input changed to
    every shape of SHAPE_POOL and every dtype of DTYPES (one at a time)."""
    out = [(f"n{count}", [((2, 3), "float32")] * count) for count in _counts(n_main)]
    if n_main == 0:
        return out
    for slabel, shapes in SHAPE_SETS.items():
        out.append((slabel, [(shapes[i % len(shapes)], "float32") for i in range(n_main)]))
    for dt in DTYPES[1:]:
        out.append((dt, [((2, 3), dt)] * n_main))
        out.append((f"{dt}_0d", [((), dt)] * n_main))
    rng = random.Random(name)  # shapes and dtypes drawn independently per input
    for k in range(40):
        specs = [(rng.choice(SHAPE_POOL), rng.choice(DTYPES)) for _ in range(n_main)]
        out.append((f"random{k}:{specs}", specs))
    if base is None:
        return out
    valid = [(tuple(s), dt) for s, dt in base]
    for dt in DTYPES[1:]:
        out.append((f"all_{dt}{valid}", [(s, dt) for s, _ in valid]))
    for i in range(n_main):
        for s in SHAPE_POOL:
            specs = list(valid)
            specs[i] = (s, valid[i][1])
            out.append((f"input{i}={s}{valid}", specs))
        for dt in DTYPES[1:]:
            specs = list(valid)
            specs[i] = (valid[i][0], dt)
            out.append((f"input{i}:{dt}{valid}", specs))
    return out


def walk(names=None, verbose=False):
    """Runs every case; prints one JSON line per case whose error is not a typed one."""
    from ndx import _core, np
    ops = {o[0]: o[2] for o in _core._list_ops()}
    print(json.dumps({"registered": sorted(ops)}), flush=True)
    for name in sorted(ops):
        if names and name not in names:
            continue
        # Values drawn per op from its name: an op's cases do not change when others are
        # registered (a shared stream once shifted an optimizer's learning rate below 0).
        rng = onp.random.default_rng(zlib.crc32(name.encode()))
        handle = _core._op_handle(name)
        params_sets = [("noparams", {})]
        if name in PARAMS:
            params_sets.append(("params", PARAMS[name]))
        for k, more in enumerate(MORE_PARAMS.get(name, [])):
            params_sets.append((f"params{k + 2}", more))
        for plabel, params in params_sets:
            n = expected_inputs(_core, handle, params, ops[name])
            if n is None:
                todo = [(f"n{c}", [((2, 3), "float32")] * c) for c in (0, 1, 2, 3)]
            else:
                base = valid_case(_core, np, name, handle, params, n, rng) if n else None
                if verbose:
                    print(json.dumps({"op": name, "params": plabel, "n": n, "base": base}))
                todo = cases(name, n, base)
            for label, specs in todo:
                label = f"{plabel}/{label}"
                # a crash leaves this line as the last one written
                print(json.dumps({"start": name, "case": label}), flush=True)
                inputs = [_array(np, s, dt, rng) for s, dt in specs]
                try:
                    out = _core._invoke(handle, inputs, params)
                    for o in out if isinstance(out, tuple) else (out,):
                        o.asnumpy()
                except ALLOWED:
                    pass
                except BaseException as e:  # noqa: BLE001 (the point of the walk)
                    print(json.dumps({"bad": name, "case": label, "type": type(e).__name__,
                                      "msg": str(e)[:300]}), flush=True)
    walk_nd(names)
    print(json.dumps({"done": len(ops)}), flush=True)


def walk_nd(names=None):
    """The generated functions (nd.<registered name>) with bad Python arguments."""
    from ndx import nd, np
    x = np.ones((2, 3))
    bad_calls = {
        "no_args": ((), {}),
        "too_many": ((x,) * 20, {}),
        "str": (("abc",), {}),
        "none": ((None,), {}),
        "nested_list": (([[1, 2], [3]],), {}),
        "huge_int": ((2**100,), {}),
        "unknown_kw": ((x, x, x), {"no_such_param": 1}),
        "bad_out": ((x,), {"out": 3}),
        "small_out": ((x, x), {"out": np.ones((0,))}),
        "param_type": ((x,), {"axis": "banana"}),
    }
    from ndx import _core
    registered = {o[0] for o in _core._list_ops()}  # MXNet's unprefixed ops (sgd_update) too
    for name in sorted(dir(nd)):
        f = getattr(nd, name)
        if (not name.startswith("_") and name not in registered) or not callable(f) or (
                names and name not in names):
            continue
        for label, (args, kwargs) in bad_calls.items():
            print(json.dumps({"start": f"nd.{name}", "case": label}), flush=True)
            try:
                f(*args, **kwargs)
            except (*ALLOWED, OverflowError):  # a Python int past int64, as NumPy 2
                pass
            except BaseException as e:  # noqa: BLE001
                print(json.dumps({"bad": f"nd.{name}", "case": label, "type": type(e).__name__,
                                  "msg": str(e)[:300]}), flush=True)


def run_walk(names=()):
    # The child imports the ndx this process imported (the installed package in CI, the
    # sanitizer build under make sanitize-python), not whatever the source tree holds.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "-v", *names], env=env,
                          capture_output=True, text=True, timeout=600)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc, lines


@pytest.fixture(scope="module")
def walk_lines():
    proc, lines = run_walk()
    last = lines[-1] if lines else {}
    assert proc.returncode == 0 and "done" in last, (
        f"the walk crashed (exit {proc.returncode}) in {last}:\n{proc.stderr[-2000:]}")
    return lines


def test_every_registered_op_raises_only_typed_errors(walk_lines):
    bad = [f"{x['bad']} [{x['case']}]: {x['type']}: {x['msg']}" for x in walk_lines if "bad" in x]
    assert not bad, f"{len(bad)} untyped errors:\n" + "\n".join(bad[:60])


# (op, params label) pairs that accept no inputs the walk can build.
# _CachedOp and its backward are made by the executor for a hybridized block under autograd
# (their params hold the block's plan) and refuse every call from outside with
# NotImplementedError; so do _FusedElementwise and _FusedConvolution, made by the executor's
# fusion passes.
NO_VALID_CASE = {("Custom", "params"), ("_npx_pooling", "noparams"),
                 ("_contrib_quantized_pooling", "noparams"),
                 ("_backward_pooling", "noparams"), ("_CachedOp", "noparams"),
                 ("_backward_CachedOp", "noparams"), ("_FusedElementwise", "noparams"),
                 ("_FusedConvolution", "noparams")}


def test_the_walk_covers_every_op_and_its_backward_ops(walk_lines):
    # The walk's process loads no operator library: its registry is the built-in ops.
    names = {n for x in walk_lines if "registered" in x for n in x["registered"]}
    assert len(names) > 80 and sum(n.startswith("_backward_") for n in names) > 20
    walked = {x["start"] for x in walk_lines if "start" in x}
    assert names <= walked, f"not walked: {sorted(names - walked)}"
    assert {f"nd.{n}" for n in names if n != "Custom"} <= walked
    # Every op with inputs starts its one-input-at-a-time changes from a case it accepts.
    no_base = {(x["op"], x["params"]) for x in walk_lines
               if "op" in x and x["n"] and x["base"] is None}
    assert no_base == NO_VALID_CASE


if __name__ == "__main__":
    args = sys.argv[1:]
    verbose = "-v" in args
    walk({a for a in args if a != "-v"} or None, verbose)
