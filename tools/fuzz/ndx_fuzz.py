"""ndx's own fuzzer: generated calls over every registered op (ndx.nd, forward and backward),
ndx.np / npx functions, ndarray methods and operators, indexing, autograd, symbols and graph
JSON, and parameter files, with valid and hostile shapes, dtypes, params and huge values.

Why a generator of our own rather than hypothesis or atheris: what we hunt is crashes and
hangs of the process, so calls must run in a child that may die, with the parent restarting
it and carrying on; hypothesis runs in-process and spends its time shrinking, and atheris
needs a libFuzzer (clang) build of the extension and coverage feedback over a C ABI that is
not where the bugs were. Here every call is a pure function of (seed, index): any finding is
replayed exactly with --repro SEED:INDEX, and the search space is written down from the op
table (names, input counts, params and their types) so new ops are fuzzed without edits.

    python tools/fuzz/ndx_fuzz.py --seconds 1800 --seed 1      # parent: runs workers
    python tools/fuzz/ndx_fuzz.py --repro 1:12345              # one call, in this process

A call ends in one of: ok, a typed error (ValueError and its subclasses such as AxisError,
TypeError, IndexError, NotImplementedError, MemoryError, OverflowError, ZeroDivisionError),
or a finding: an untyped error (anything else: RuntimeError, SystemError, AttributeError,
KeyError, RecursionError...), a crash (the worker died: a signal, an abort, a fatal error) or
a hang (no progress for --timeout seconds). Findings are printed grouped by signature and
written to --report as JSON; the exit status is 1 when there is any.
"""
import argparse
import collections
import json
import mmap
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

# BufferError is the DLPack / buffer protocols' own typed error (from_dlpack, __dlpack__);
# FileNotFoundError is what npx.load / np.load of a missing file raise, as NumPy's does.
# (EOFError: np.load of an empty file raises it, as NumPy's does)
TYPED = (ValueError, TypeError, IndexError, NotImplementedError, MemoryError, OverflowError,
         ZeroDivisionError, BufferError, FileNotFoundError, EOFError)
HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------- values


class Gen:
    """Draws values from one call's random stream. `hostile` is how often a draw leaves the
    valid range (huge, negative, wrong type)."""

    DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
              "uint8", "uint16", "uint32", "uint64", "bool"]
    COMMON_DTYPES = ["float32", "float64", "int32", "int64", "bool"]
    SHAPES = [(), (0,), (1,), (3,), (5,), (2, 3), (3, 1), (1, 4), (2, 0, 3), (4, 4), (2, 3, 4),
              (1, 1, 1, 1), (3, 2), (2, 1, 3), (6,), (2, 2, 2, 2)]
    HUGE_INTS = [2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, -(2**63), -(2**63) - 1,
                 10**30, -(10**30), 2**100]
    ODD_VALUES = [None, "abc", "", "float32", b"x", "\ud800", "a\0b", 1j, [], [1, [2]], {},
                  {"a": 1}, object(),
                  float("nan"), float("inf"), -float("inf"), True, Ellipsis, slice(1, 2), (),
                  (1, "a"), [[1, 2], [3]], 1e308, -0.0, 5e-324]

    def __init__(self, rng, np, onp, hostile=0.2):
        self.r, self.np, self.onp, self.hostile = rng, np, onp, hostile

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    # -- scalars
    def small_int(self):
        return self.r.randint(-4, 5)

    def int_(self):
        if self.chance(self.hostile):
            return self.pick(self.HUGE_INTS)
        return self.small_int()

    def float_(self):
        if self.chance(self.hostile):
            return self.pick([float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 5e-324,
                              0.0, -0.0, 1e20])
        return round(self.r.uniform(-5, 5), 3)

    def scalar(self):
        k = self.r.randrange(4)
        return [self.int_, self.float_, lambda: self.chance(0.5), self.float_][k]()

    def odd(self):
        return self.pick(self.ODD_VALUES)

    # -- shapes, axes, dtypes
    def dim(self):
        if self.chance(self.hostile):
            return self.pick([-1, -2, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, 10**6, 0])
        return self.r.randint(0, 5)

    def shape(self):
        if self.chance(self.hostile * 0.5):
            return self.pick([5, -1, 2**63, None, "3", 2.5, (2.5,), (True, 2), [2, 3],
                              (1,) * 40, (2**32, 2**32), (0, 2**62, 2**62)])
        return tuple(self.dim() for _ in range(self.r.randint(0, 4)))

    def axis(self):
        if self.chance(self.hostile):
            return self.pick([None, 2**63, -(2**63), 2**64, 100, -100, (0, 0), (0, 1), (), 1.5,
                              "0", [0], (2**40,)])
        return self.r.randint(-3, 3) if self.chance(0.8) else None

    def dtype(self):
        if self.chance(self.hostile):
            return self.pick(["complex64", "foo", "", "float", "int", None, 3, float, int, bool,
                              self.onp.dtype("float32"), self.onp.float64, "object", "U3",
                              "<f4", ">f8"])
        return self.pick(self.DTYPES)

    # -- arrays
    def numpy_array(self, shape=None, dtype=None):
        shape = self.pick(self.SHAPES) if shape is None else shape
        dtype = self.pick(self.COMMON_DTYPES if self.chance(0.7) else self.DTYPES) \
            if dtype is None else dtype
        n = 1
        for d in shape:
            n *= d
        kind = self.r.randrange(6)
        if kind == 0:
            vals = [self.pick([0.0, 1.0, -1.0, float("nan"), float("inf"), -float("inf"), 1e30,
                               -1e-30, 65504.0, 2.0**63]) for _ in range(n)]
        elif kind == 1:
            vals = [float(self.r.randint(-3, 3)) for _ in range(n)]
        else:
            vals = [self.r.uniform(-4, 4) for _ in range(n)]
        a = self.onp.array(vals, dtype="float64").reshape(shape)
        if dtype == "bool":
            return a > 0
        if dtype == "bfloat16":
            return a.astype("float32")
        with self.onp.errstate(all="ignore"):
            if dtype.startswith(("int", "uint")):
                if kind == 0:  # the type's limits (INT_MIN / -1 traps where unguarded)
                    info = self.onp.iinfo(dtype)
                    limits = [int(info.min), int(info.max), int(info.min) + 1, 0, 1,
                              -1 if info.min < 0 else 2]
                    return self.onp.array([self.pick(limits) for _ in range(n)],
                                          dtype=dtype).reshape(shape)
                a = self.onp.nan_to_num(a, nan=0, posinf=0, neginf=0).clip(-100, 100)
            return a.astype(dtype)

    def array(self, shape=None, dtype=None):
        """An ndx array: usually fresh, sometimes a non-contiguous view or a bfloat16."""
        dtype = dtype or (self.pick(self.COMMON_DTYPES) if self.chance(0.7)
                          else self.pick(self.DTYPES))
        base = self.numpy_array(shape, dtype)
        make = (lambda b: self.np.array(b, dtype=dtype)) if dtype == "bfloat16" \
            else self.np.array
        # Sometimes a non-contiguous view of the same shape: reversed, or transposed twice.
        if base.ndim >= 1 and self.chance(0.1):
            return make(base[::-1].copy())[::-1]
        if base.ndim >= 2 and self.chance(0.1):
            return make(base.T.copy()).T
        return make(base)

    def operand(self):
        """Something an op could be handed: mostly arrays, then scalars, lists, NumPy arrays,
        and the odd hostile object."""
        k = self.r.random()
        if k < 0.7:
            return self.array()
        if k < 0.8:
            return self.scalar()
        if k < 0.86:
            return self.numpy_array()
        if k < 0.92:
            return [self.scalar() for _ in range(self.r.randint(0, 3))]
        return self.odd()

    def by_name(self, name):
        """A value for a parameter, chosen by what its name says it is."""
        n = name.lower()
        if self.chance(self.hostile * 0.5):
            return self.odd() if self.chance(0.5) else self.int_()
        if "axis" in n or n in ("axes", "source", "destination"):
            return self.axis()
        if "shape" in n or n in ("reps", "size", "newshape"):
            return self.shape()
        if "dtype" in n:
            return self.dtype()
        if n in ("keepdims", "endpoint", "copy", "retain_graph", "create_graph", "train_mode",
                 "no_bias", "flatten", "global_pool", "fix_gamma", "use_global_stats"):
            return self.chance(0.5)
        if n in ("out",):
            return self.array() if self.chance(0.5) else None
        if n in ("device", "ctx"):
            return self.pick(["cpu", "cpu(0)", "cpu(1)", "gpu(0)", "tpu", None, 0, "cpu(-1)"])
        if n in ("n", "m", "k", "num", "n_", "depth", "num_hidden", "num_filter", "input_dim",
                 "output_dim", "sections", "indices_or_sections", "num_args", "num_group", "N",
                 "M"):
            return self.int_()
        if n in ("kernel", "stride", "pad", "dilate", "begin", "end", "step", "indices"):
            return tuple(self.int_() for _ in range(self.r.randint(0, 3)))
        if n in ("p", "eps", "momentum", "fill_value", "on_value", "off_value", "start",
                 "stop", "initial", "value", "scalar"):
            return self.scalar()
        return self.operand()


# ---------------------------------------------------------------- the call space


class Space:
    """Everything the fuzzer can call, read from ndx at start-up."""

    def __init__(self):
        import numpy as onp

        import ndx
        from ndx import _core, nd, np, npx
        self.ndx, self.np, self.npx, self.nd, self.onp = ndx, np, npx, nd, onp
        self.core = _core
        self.ops = []  # (name, n_inputs, [(param, type, default)])
        self.undeclared = set()  # ops whose inputs nd.<name> cannot take (none are declared)
        for name, _doc, n_in, _aliases, arguments, params in _core._list_ops():
            if hasattr(nd, name):
                self.ops.append((name, n_in, [(p[0], p[1], p[2]) for p in params]))
                if n_in != 0 and not any(a[1].startswith("NDArray") for a in arguments):
                    self.undeclared.add(name)
        self.ops.sort()
        self.np_funcs = self._functions(np, skip={"ndarray", "result_type"})
        self.npx_funcs = self._functions(npx, skip={"populate"})
        self.methods = sorted(
            k for k in dir(np.ndarray)
            if not k.startswith("_") and callable(getattr(np.ndarray, k, None)))
        self.dunders = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                        "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__pow__",
                        "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__pos__",
                        "__abs__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                        "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__",
                        "__imatmul__", "__imod__", "__ifloordiv__", "__bool__", "__float__",
                        "__int__", "__index__", "__len__", "__iter__", "__repr__", "__str__",
                        "__array__", "__invert__", "__and__", "__or__", "__xor__", "__hash__",
                        "__format__", "__contains__", "__reversed__", "__copy__",
                        "__deepcopy__", "__dlpack__", "__setstate__", "__reduce__"]
        probe = np.ones((1,))  # on an instance: the class also sees type's own dunders
        self.dunders = [d for d in self.dunders if hasattr(probe, d)]
        self.state = (npx.is_np_default_dtype(), npx.get_num_threads())
        self.print_options = (np.get_printoptions(), onp.get_printoptions())
        self.accepted = {}

    def load_accepted(self, path=None):
        """Accepted cases from the file the parent wrote, or searched for here (--repro)."""
        if path and os.path.exists(path):
            with open(path) as f:
                self.accepted = json.load(f)
        else:  # through JSON, as the workers see them (tuples become lists)
            self.accepted = json.loads(json.dumps(find_accepted_cases(self)))

    @staticmethod
    def _functions(mod, skip):
        out = []
        for k in sorted(dir(mod)):
            f = getattr(mod, k)
            if k.startswith("_") or k in skip or isinstance(f, type) or not callable(f):
                continue
            out.append(k)
        return out

    def op_function(self, name):
        """nd.<name>, or a direct invoke for ops whose inputs are not declared (backward ops
        made for graphs), so their inputs can be passed all the same."""
        if name in self.undeclared:
            core = self.core
            return lambda *inputs, **params: core._invoke(name, list(inputs), params)
        return getattr(self.nd, name)

    def restore(self):
        """Undo global settings a call may have changed, so calls stay independent."""
        npx, ag = self.npx, self.ndx.autograd
        if npx.is_np_default_dtype() != self.state[0]:
            npx.reset_np()
        if npx.get_num_threads() != self.state[1]:
            npx.set_num_threads(self.state[1])
        if ag.is_recording():
            ag.set_recording(False)
        if ag.is_training():
            ag.set_training(False)
        # Print options too: after a fuzzed set_printoptions(legacy=[True]) (accepted with a
        # warning, as NumPy does) every repr raises, NumPy's and ndx's alike, and the next
        # calls' descriptions failed as "generator failed".
        for mod, options in zip((self.np, self.onp), self.print_options):
            try:
                changed = mod.get_printoptions() != options
            except Exception:  # (a broken legacy value makes get_printoptions raise)
                changed = True
            if changed:
                mod.set_printoptions(**options)


def _signature_params(f):
    import inspect
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return None
    return list(sig.parameters.values())


def _args_for(g, f, name):
    """Positional args and kwargs for f from its signature (random ones without one)."""
    import inspect
    params = _signature_params(f)
    if params is None or g.chance(0.1):
        return [g.operand() for _ in range(g.r.randint(0, 4))], {}
    args, kwargs = [], {}
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            args += [g.operand() for _ in range(g.r.randint(0, 3))]
        elif p.kind == p.VAR_KEYWORD:
            if g.chance(0.2):
                kwargs[g.pick(["foo", "axis", "dtype", "op_type"])] = g.operand()
        elif p.default is inspect.Parameter.empty:
            if g.chance(0.95):
                v = g.operand() if p.name in ("a", "x", "x1", "x2", "arr", "data") \
                    else g.by_name(p.name)
                if p.kind == p.KEYWORD_ONLY:
                    kwargs[p.name] = v
                else:
                    args.append(v)
        elif g.chance(0.4):
            kwargs[p.name] = g.by_name(p.name)
    if g.chance(0.05):
        args.append(g.operand())  # one too many
    return args, kwargs


def _param_value(g, ptype):
    if g.chance(g.hostile):
        return g.by_name("?") if g.chance(0.5) else g.odd()
    if ptype.startswith("{"):
        choices = re.findall(r"'([^']*)'", ptype)
        return g.pick(choices) if choices and g.chance(0.9) else g.pick(["nope", "\ud800"])
    if ptype.startswith("int"):
        return g.int_()
    if ptype.startswith("float"):
        return g.float_()
    if ptype.startswith("boolean"):
        return g.chance(0.5)
    if ptype.startswith("Shape"):
        return tuple(g.int_() if g.chance(0.3) else g.r.randint(0, 3)
                     for _ in range(g.r.randint(0, 3)))
    if ptype.startswith("dtype"):
        return g.dtype()
    if ptype.startswith("string") or ptype.startswith("str"):
        return g.pick(["", "x", "sum", "relu"])
    return g.scalar()


# ---------------------------------------------------------------- generators: each returns a
# description (str) and a thunk. Descriptions name arrays by shape and dtype.


def describe(v):
    import numpy as onp
    if hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, type):
        kind = "nd" if type(v).__module__.startswith("ndx") else "onp"
        return f"{kind}.array{tuple(v.shape)}:{v.dtype}"
    if isinstance(v, (list, tuple)) and len(v) > 8:
        return f"{type(v).__name__}(len={len(v)})"
    if isinstance(v, (list, tuple)):
        parts = ", ".join(describe(x) for x in v)
        return f"[{parts}]" if isinstance(v, list) else f"({parts}{',' if len(v) == 1 else ''})"
    if isinstance(v, onp.generic):
        return f"onp.{type(v).__name__}({v!r})"
    r = repr(v)
    return r if len(r) < 60 else r[:57] + "..."


def call_text(target, args, kwargs):
    parts = [describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()]
    return f"{target}({', '.join(parts)})"


def gen_op(s, g):
    name, n_in, params = g.pick(s.ops)
    n = n_in if n_in >= 0 else g.r.randint(0, 4)
    if g.chance(0.1):
        n = max(0, n + g.pick([-1, 1, 2]))
    if g.chance(0.5):  # one shape and dtype for all: past the shape checks, into kernels
        shape, dtype = g.pick(g.SHAPES), g.pick(g.COMMON_DTYPES)
        args = [g.array(shape, dtype) for _ in range(n)]
    else:
        args = [g.operand() if g.chance(0.2) else g.array() for _ in range(n)]
    kwargs = {}
    for pname, ptype, default in params:
        if default is None and g.chance(0.9) or g.chance(0.4):
            kwargs[pname] = _param_value(g, ptype)
    if g.chance(0.05):
        kwargs[g.pick(["foo", "op_type", "num_args"])] = g.scalar()
    if name == "Custom" or name == "_backward_Custom":
        kwargs["op_type"] = g.pick(["nope", "", 3])
    f = s.op_function(name)
    return call_text(f"nd.{name}", args, kwargs), lambda: f(*args, **kwargs)


def find_accepted_cases(space, tries=300):
    """{op: (shapes, dtypes, kwargs)}: for each registered op, the first call of a fixed
    sequence of plausible ones that succeeds. Mutating one thing of an accepted call reaches
    the checks a random call stops short of (a backward op's shapes must agree with each
    other before any one of them can be wrong in an interesting way)."""
    cases = {}
    hints, hint_params = _walk_hints()
    for name, n_in, params in space.ops:
        if name in ("Custom", "_backward_Custom"):
            continue
        f = space.op_function(name)
        for shapes in hints.get(name, []):  # the registry walk's known-good shapes first
            kwargs = dict(hint_params.get(name, {}))
            try:
                rng = random.Random(f"ndx-fuzz-accept:{name}:hint")
                g = Gen(rng, space.np, space.onp, hostile=0)
                # Values in [0, 2): valid as indices too (embedding, pick) once truncated.
                arrays = [space.np.array(space.onp.asarray(rng.uniform(0, 1.9), "float32")
                                         * space.onp.ones(tuple(sh), "float32"))
                          for sh in shapes]
                _touch(f(*arrays, **kwargs))
            except Exception:  # noqa: BLE001 - looking for one that works
                continue
            finally:
                space.restore()
            cases[name] = ([list(sh) for sh in shapes], ["float32"] * len(shapes), kwargs)
            break
        for attempt in range(0 if name in cases else tries):
            rng = random.Random(f"ndx-fuzz-accept:{name}:{attempt}")
            g = Gen(rng, space.np, space.onp, hostile=0)
            n = n_in if n_in >= 0 else rng.randint(1, 3)
            nonempty = [sh for sh in g.SHAPES if 0 not in sh]
            if attempt % 2 == 0:
                shapes = [g.pick(nonempty)] * n
            else:
                shapes = [g.pick(nonempty) for _ in range(n)]
            dtypes = [g.pick(["float32", "float32", "float64", "int64"])] * n
            kwargs = {}
            for pname, ptype, default in params:
                if pname == "num_args":
                    kwargs[pname] = n
                elif default is None or g.chance(0.3):
                    kwargs[pname] = _param_value(g, ptype)
            try:
                arrays = [g.array(sh, dt) for sh, dt in zip(shapes, dtypes)]
                _touch(f(*arrays, **kwargs))
            except Exception:  # noqa: BLE001 - looking for one that works
                continue
            finally:
                space.restore()
            cases[name] = ([list(sh) for sh in shapes], dtypes, kwargs)
            break
    return cases


def _walk_hints():
    """HINTS (input shapes ops accept) and PARAMS (params they need) from the registry walk
    test, so both start from the same known-good calls; empty when the tests are absent."""
    import importlib.util
    path = os.path.join(HERE, "..", "..", "tests", "python", "test_registry_walk.py")
    try:
        spec = importlib.util.spec_from_file_location("_ndx_registry_walk", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.HINTS, mod.PARAMS
    except Exception:  # noqa: BLE001 - optional
        return {}, {}


def _mutated_shape(g, shape):
    shape = list(shape)
    k = g.r.randrange(7)
    if k == 0 and shape:
        shape[g.r.randrange(len(shape))] = g.pick([0, 1, 2, 7])
    elif k == 1:
        shape.insert(g.r.randrange(len(shape) + 1), g.pick([1, 2, 0]))
    elif k == 2 and shape:
        del shape[g.r.randrange(len(shape))]
    elif k == 3:
        shape = []
    elif k == 4 and shape:
        shape[g.r.randrange(len(shape))] += 1
    elif k == 5:
        shape = shape[::-1]
    else:
        shape = [0] + shape[1:]
    return tuple(shape)


def gen_op_mutant(s, g):
    """An accepted call of a registered op with one or two things changed."""
    if not s.accepted:
        return gen_op(s, g)
    name = g.pick(sorted(s.accepted))
    shapes, dtypes, kwargs = s.accepted[name]
    shapes, dtypes, kwargs = [tuple(sh) for sh in shapes], list(dtypes), dict(kwargs)
    ptypes = {p: t for n, _, ps in s.ops if n == name for p, t, _ in ps}
    views = set()
    changes = []
    for _ in range(g.r.randint(0, 2)):
        k = g.pick(["shape", "shape", "dtype", "param", "arity", "view"])
        i = g.r.randrange(len(shapes)) if shapes else None
        if k == "shape" and i is not None:
            shapes[i] = _mutated_shape(g, shapes[i])
        elif k == "dtype" and i is not None:
            dtypes[i] = g.pick(g.DTYPES)
        elif k == "param" and ptypes:
            p = g.pick(sorted(ptypes))
            if g.chance(0.2):
                kwargs.pop(p, None)
            else:
                g.hostile = 0.5
                kwargs[p] = _param_value(g, ptypes[p])
        elif k == "arity":
            if shapes and g.chance(0.5):
                shapes.pop()
                dtypes.pop()
            else:
                shapes.append(shapes[-1] if shapes else (2,))
                dtypes.append(dtypes[-1] if dtypes else "float32")
        elif k == "view" and i is not None:
            views.add(i)
        else:
            continue
        changes.append(k)
    args = []
    for i, (sh, dt) in enumerate(zip(shapes, dtypes)):
        a = g.array(sh, dt)
        if i in views and a.ndim >= 1:
            a = a.T if a.ndim >= 2 else a[::-1]
        args.append(a)
    f = s.op_function(name)
    return (call_text(f"nd.{name}", args, kwargs) + f" [accepted case, changed: {changes}]",
            lambda: f(*args, **kwargs))


def _gen_module_func(s, g, mod, names, prefix):
    name = g.pick(names)
    f = getattr(mod, name)
    args, kwargs = _args_for(g, f, name)
    if g.chance(0.4):  # arrays of one shape and dtype: the calls that reach the kernels
        shape, dtype = g.pick(g.SHAPES), g.pick(g.COMMON_DTYPES)
        args = [g.array(shape, dtype) if hasattr(a, "shape") else a for a in args]
    return call_text(f"{prefix}.{name}", args, kwargs), lambda: f(*args, **kwargs)


def gen_np(s, g):
    return _gen_module_func(s, g, s.np, s.np_funcs, "np")


def gen_npx(s, g):
    return _gen_module_func(s, g, s.npx, s.npx_funcs, "npx")


def gen_method(s, g):
    a = g.array()
    name = g.pick(s.methods if g.chance(0.5) else s.dunders)
    nargs = {"__neg__": 0, "__pos__": 0, "__abs__": 0, "__bool__": 0, "__float__": 0,
             "__int__": 0, "__index__": 0, "__len__": 0, "__iter__": 0, "__repr__": 0,
             "__str__": 0, "__invert__": 0, "__hash__": 0, "__copy__": 0,
             "__reversed__": 0}.get(name, g.r.randint(0, 3))
    args = [g.by_name(g.pick(["axis", "shape", "dtype", "x"])) if g.chance(0.5)
            else g.operand() for _ in range(nargs)]
    kwargs = {}
    if name in ("sum", "max", "min", "mean", "prod", "argmax", "argmin") and g.chance(0.5):
        kwargs = {k: g.by_name(k) for k in g.r.sample(["axis", "keepdims", "dtype", "out"], 2)}
    if name in ("reshape", "transpose", "squeeze", "swapaxes") and g.chance(0.5):
        args = [g.int_() for _ in range(g.r.randint(0, 4))]

    def run():
        out = getattr(a, name)(*args, **kwargs)
        if name == "__iter__":
            list(out)
        return out
    return call_text(f"{describe(a)}.{name}", args, kwargs), run


def _index_key(g, shape):
    def one():
        k = g.r.randrange(9)
        if k == 0:
            return g.int_() if g.chance(0.5) else g.r.randint(-3, 3)
        if k == 1:
            bound = [None, g.r.randint(-4, 4), g.pick(Gen.HUGE_INTS)]
            return slice(g.pick(bound), g.pick(bound), g.pick([None, 1, 2, -1, -2, 0] +
                                                              Gen.HUGE_INTS[:8]))
        if k == 2:
            return Ellipsis
        if k == 3:
            return None
        if k == 4:
            return g.np.array(g.numpy_array(shape=(g.r.randint(0, 4),), dtype="int64"))
        if k == 5:
            return g.numpy_array(shape=g.pick([shape, (g.r.randint(0, 4),)]), dtype="bool")
        if k == 6:
            return [g.r.randint(-3, 3) for _ in range(g.r.randint(0, 3))]
        if k == 7:
            return g.odd()
        return g.np.array(g.numpy_array(shape=(2,), dtype=g.pick(["float32", "int32", "uint8"])))
    if g.chance(0.4):
        return one()
    return tuple(one() for _ in range(g.r.randint(0, 4)))


def gen_index(s, g):
    a = g.array()
    key = _index_key(g, a.shape)
    if g.chance(0.6):
        return f"{describe(a)}[{describe(key)}]", lambda: a[key]
    value = g.operand()

    def store():
        a[key] = value
    return f"{describe(a)}[{describe(key)}] = {describe(value)}", store


UNARY_CHAIN = ["exp", "sin", "tanh", "square", "negative", "sqrt", "log", "abs", "sum", "mean",
               "max", "transpose"]
BINARY_CHAIN = ["add", "multiply", "subtract", "true_divide", "power", "maximum", "minimum",
                "matmul", "dot", "mod"]


def gen_autograd(s, g):
    x = g.array(dtype=g.pick(["float32", "float64", "float32", "float16", "int32"]))
    other = g.array(shape=g.pick([x.shape, (), (1,), (3,)]))
    steps = [(g.pick(UNARY_CHAIN), None) if g.chance(0.6) else (g.pick(BINARY_CHAIN), other)
             for _ in range(g.r.randint(1, 4))]
    head_grad = g.array(shape=g.pick([None, (), (3,), (2, 3)])) if g.chance(0.3) else None
    use_grad = g.chance(0.3)
    opts = {"retain_graph": g.chance(0.3)}
    if use_grad:
        opts["create_graph"] = g.chance(0.3)
    grad_req = g.pick(["write", "add", "null", "bogus"]) if g.chance(0.2) else "write"
    twice = g.chance(0.2)
    ag = s.ndx.autograd

    def run():
        x.attach_grad(grad_req=grad_req)
        with ag.record(train_mode=g.chance(0.5)):
            y = x
            for name, arg in steps:
                f = getattr(s.np, name)
                y = f(y) if arg is None else f(y, arg)
        for _ in range(2 if twice else 1):
            if use_grad:
                ag.grad(y, [x], head_grads=head_grad, **opts)
            else:
                y.backward(head_grad, retain_graph=opts["retain_graph"])
        return x.grad
    text = f"autograd: x={describe(x)} grad_req={grad_req!r}; y = " + " -> ".join(
        n if a is None else f"{n}(., {describe(a)})" for n, a in steps)
    return text + f"; {'grad' if use_grad else 'backward'}({describe(head_grad)}, {opts})" + \
        (" twice" if twice else ""), run


def gen_symbol(s, g):
    sym = s.ndx.sym
    names = [n for n, _, _ in s.ops if not n.startswith("_backward") and n != "Custom"]
    ops = [g.pick(names) for _ in range(g.r.randint(1, 3))]
    kwargs_list = []
    for op in ops:
        params = next(p for n, _, p in s.ops if n == op)
        kwargs_list.append({p: _param_value(g, t) for p, t, d in params
                            if d is None or g.chance(0.3)})
    inputs = {"x": g.array(), "y": g.array()}
    mutate = g.chance(0.5)
    edits = [(g.r.random(), g.pick(["digit", "delete", "dup", "swap", "huge", "type"]))
             for _ in range(g.r.randint(1, 4))]

    def run():
        cur = [sym.var("x"), sym.var("y")]
        for op, kw in zip(ops, kwargs_list):
            n_in = next(n for name, n, _ in s.ops if name == op)
            args = [cur[i % len(cur)] for i in range(max(n_in, 1) if n_in >= 0 else 2)]
            cur = [getattr(sym, op)(*args, **kw)] + cur
        text = cur[0].tojson()
        if mutate:
            text = _mutate_json(text, edits)
            loaded = sym.load_json(text)
        else:
            loaded = sym.load_json(text)
        args = {n: inputs[n] for n in loaded.list_arguments() if n in inputs}
        return loaded.eval(**args)
    return f"symbol: {ops} {kwargs_list} inputs={ {k: describe(v) for k, v in inputs.items()} }" \
        + (f" json-edits={edits}" if mutate else ""), run


def _mutate_json(text, edits):
    for where, how in edits:
        i = int(where * max(len(text) - 1, 1))
        if how == "digit":
            text = text[:i] + re.sub(r"\d", "7", text[i:i + 1]) + text[i + 1:]
        elif how == "delete":
            text = text[:i] + text[i + 1:]
        elif how == "dup":
            text = text[:i] + text[i:i + 8] + text[i:]
        elif how == "swap":
            text = text.replace('"inputs"', '"heads"', 1) if where < 0.5 else \
                text.replace("[0, 0, 0]", "[5, 0, 0]", 1)
        elif how == "huge":
            text = re.sub(r"\b\d+\b", str(2**70), text, count=1)
        else:
            text = text.replace('"op"', '"op": 3, "x"', 1)
    return text


def gen_params_file(s, g):
    from ndx.gluon import serialization
    tensors = {f"p{i}": g.numpy_array(dtype=g.pick(["float32", "float64", "int64", "bool"]))
               for i in range(g.r.randint(0, 3))}
    edits = [(g.r.random(), g.pick(["flip", "truncate", "insert", "header"]), g.r.randrange(256))
             for _ in range(g.r.randint(1, 3))]
    path = os.path.join(tempfile.gettempdir(), f"ndx-fuzz-{os.getpid()}.params")

    def run():
        serialization.save_safetensors(path, tensors)
        blob = bytearray(open(path, "rb").read())
        for where, how, byte in edits:
            i = int(where * len(blob))
            if how == "flip" and blob:
                blob[min(i, len(blob) - 1)] ^= byte or 1
            elif how == "truncate":
                blob = blob[:i]
            elif how == "insert":
                blob[i:i] = bytes([byte]) * (1 + byte % 9)
            else:
                n = int.from_bytes(blob[:8], "little") if len(blob) >= 8 else 0
                head = blob[8:8 + n].decode("utf-8", "replace")
                head = re.sub(r"\d+", lambda m: g.pick(["-1", "8.5", str(2**70), "true",
                                                        "[[[1]]]", m.group()]), head)
                blob[8:8 + n] = head.encode()
                blob[:8] = struct.pack("<Q", len(head.encode()))
        with open(path, "wb") as f:
            f.write(bytes(blob))
        out = serialization.load_safetensors(path)
        return {k: v.shape for k, v in out.items()}
    return (f"params file of { {k: describe(v) for k, v in tensors.items()} } "
            f"with edits {edits}"), run


def gen_gluon(s, g):
    nn = s.ndx.gluon.nn
    layer = g.pick(["Dense", "Conv2D", "BatchNorm", "Dropout", "Embedding", "LayerNorm",
                    "MaxPool2D", "Flatten", "Activation"])
    cls = getattr(nn, layer, None)
    if cls is None:
        return f"gluon.nn.{layer} (absent)", lambda: None
    args, kwargs = _args_for(g, cls, layer)
    x = g.array(shape=g.pick([(2, 3), (1, 2, 4, 4), (2,), (), (0, 3), (2, 3, 5)]))
    hybrid = g.chance(0.5)

    def run():
        net = cls(*args, **kwargs)
        net.initialize()
        if hybrid and hasattr(net, "hybridize"):
            net.hybridize()
        return net(x)
    return call_text(f"gluon.nn.{layer}", args, kwargs) + f"({describe(x)})" + \
        (" hybridized" if hybrid else ""), run


GENERATORS = [(gen_op, 20), (gen_op_mutant, 20), (gen_np, 25), (gen_npx, 8), (gen_method, 12),
              (gen_index, 10), (gen_autograd, 6), (gen_symbol, 4), (gen_params_file, 2),
              (gen_gluon, 3)]


def make_call(space, seed, index):
    """(description, thunk) of call `index` of run `seed`: the same on every machine."""
    rng = random.Random(f"ndx-fuzz:{seed}:{index}")
    g = Gen(rng, space.np, space.onp, hostile=rng.choice([0.05, 0.2, 0.5]))
    total = sum(w for _, w in GENERATORS)
    x, gen = rng.uniform(0, total), GENERATORS[-1][0]
    for f, w in GENERATORS:
        if x < w:
            gen = f
            break
        x -= w
    selftest = os.environ.get("NDX_FUZZ_SELFTEST")
    if selftest:
        planted = _planted(selftest, index)
        if planted:
            return planted
    return gen(space, g)


def _planted(spec, index):
    """Self-test: calls that crash, hang or raise an untyped error at chosen indexes
    (NDX_FUZZ_SELFTEST='crash@5,hang@9,untyped@12'), to prove the harness reports them."""
    for item in spec.split(","):
        kind, _, at = item.partition("@")
        if at and int(at) == index:
            if kind == "crash":
                import ctypes
                return "planted crash", lambda: ctypes.string_at(0)
            if kind == "abort":
                return "planted abort", os.abort
            if kind == "hang":
                return "planted hang", lambda: time.sleep(3600)
            if kind == "untyped":
                def boom():
                    raise RuntimeError("planted untyped error")
                return "planted untyped", boom
    return None


# ---------------------------------------------------------------- worker


def run_call(space, seed, index):
    """Runs one call; returns None (ok or typed error) or (exception type, message)."""
    try:
        desc, thunk = make_call(space, seed, index)
    except Exception as e:  # a bug in a generator: reported, not hidden
        return ("harness", f"generator failed: {type(e).__name__}: {e}"), "?"
    try:
        out = thunk()
        _touch(out)
        result = None
    except TYPED as e:
        result = ("typed", type(e).__name__)
    except Exception as e:
        result = (type(e).__name__, str(e)[:300])
    finally:
        space.restore()
    return result, desc


def _touch(out, depth=0):
    """Reads results, so lazily computed or corrupted ones are exercised too."""
    if depth > 2:
        return
    if isinstance(out, (list, tuple)):
        for o in out[:8]:
            _touch(o, depth + 1)
    elif hasattr(out, "asnumpy"):
        out.asnumpy()


def worker(seed, start, end, progress_path, accepted_path):
    """Runs calls [start, end), recording the current index in a shared file before each call
    (a crash leaves it pointing at the culprit) and printing one JSON line per untyped error
    and a tally every 200 calls."""
    limit_memory()
    space = Space()
    space.load_accepted(accepted_path)
    fd = os.open(progress_path, os.O_RDWR)
    progress = mmap.mmap(fd, 8)
    os.close(fd)
    os.chdir(tempfile.mkdtemp(prefix="ndx-fuzz-cwd-"))  # calls that write files write here
    tally = collections.Counter()
    out = sys.stdout
    for i in range(start, end):
        progress[:8] = struct.pack("<q", i)
        result, desc = run_call(space, seed, i)
        if result is None:
            tally["ok"] += 1
        elif result[0] == "typed":
            tally["typed:" + result[1]] += 1
        else:
            out.write(json.dumps({"index": i, "kind": "untyped", "type": result[0],
                                  "message": result[1], "call": desc}) + "\n")
        if (i + 1 - start) % 200 == 0 or i + 1 == end:
            out.write(json.dumps({"tally": tally, "next": i + 1}) + "\n")
            out.flush()
            tally = collections.Counter()
    progress[:8] = struct.pack("<q", end)


def limit_memory():
    """Caps the worker's address space, so a call asking for a huge buffer gets MemoryError
    at once instead of swapping the machine (not under ASan: its shadow memory needs a vast
    address space; its own allocator limit, set by the caller, does this job there)."""
    if os.environ.get("NDX_FUZZ_NO_RLIMIT"):
        return
    gb = float(os.environ.get("NDX_FUZZ_MEMORY_GB", "6"))
    want = int(gb * 2**30)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    resource.setrlimit(resource.RLIMIT_AS, (want, hard))


# ---------------------------------------------------------------- parent


class Run:
    def __init__(self, args):
        self.args = args
        self.calls = 0
        self.tally = collections.Counter()
        self.findings = []
        fd, self.progress_path = tempfile.mkstemp(prefix="ndx-fuzz-progress-")
        os.write(fd, b"\0" * 8)
        os.close(fd)
        self.accepted_path = self.progress_path + ".accepted.json"
        self.accepted_ops = 0
        # The children's temporary files (their working directories, the files calls write)
        # go in one directory, removed at the end, even of children that crashed.
        self.scratch = tempfile.mkdtemp(prefix="ndx-fuzz-")
        self.child_env = dict(os.environ, TMPDIR=self.scratch)

    def find_accepted(self):
        """Runs the accepted-case search in its own process: a crash there is a finding too."""
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--find-accepted",
                               self.accepted_path], capture_output=True, text=True,
                              timeout=max(self.args.timeout * 20, 600), env=self.child_env)
        if proc.returncode != 0:
            self.findings.append({"index": -1, "kind": "crash", "type": "crash",
                                  "message": f"accepted-case search exited with "
                                             f"{proc.returncode}",
                                  "call": "--find-accepted", "stderr": proc.stderr[-1500:]})
            with open(self.accepted_path, "w") as f:
                f.write("{}")
        with open(self.accepted_path) as f:
            self.accepted_ops = len(json.load(f))

    def progress(self):
        with open(self.progress_path, "rb") as f:
            return struct.unpack("<q", f.read(8))[0]

    def spawn(self, start, end):
        with open(self.progress_path, "r+b") as f:
            f.write(struct.pack("<q", start))
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(self.args.seed),
               str(start), str(end), self.progress_path, self.accepted_path]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                bufsize=1, env=self.child_env)
        lines, errs = [], collections.deque(maxlen=40)
        threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
        threading.Thread(target=lambda: errs.extend(proc.stderr), daemon=True).start()
        return proc, lines, errs

    def handle_lines(self, lines, consumed):
        for line in lines[consumed:]:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "tally" in msg:
                self.tally.update(msg["tally"])
            else:
                self.findings.append(msg)
        return len(lines)

    def go(self):
        a = self.args
        self.find_accepted()
        deadline = time.time() + a.seconds
        index = a.start
        stop_index = a.start + a.calls if a.calls else None
        while time.time() < deadline and (stop_index is None or index < stop_index):
            end = index + a.batch if stop_index is None else min(index + a.batch, stop_index)
            proc, lines, errs = self.spawn(index, end)
            consumed, last, last_change = 0, index, time.time()
            while True:
                try:
                    proc.wait(timeout=0.2)
                    break
                except subprocess.TimeoutExpired:
                    pass
                consumed = self.handle_lines(lines, consumed)
                now = self.progress()
                if now != last:
                    last, last_change = now, time.time()
                elif time.time() - last_change > a.timeout:
                    proc.kill()
                    proc.wait()
                    self.report_dead(last, "hang", f"no progress for {a.timeout} s", errs)
                    break
                if time.time() > deadline + a.timeout:
                    proc.kill()
                    proc.wait()
                    break
            time.sleep(0.05)  # let the reader threads drain
            consumed = self.handle_lines(lines, consumed)
            reached = self.progress()
            if proc.returncode not in (0, None, -signal.SIGKILL) or (
                    proc.returncode == 0 and reached < end):
                self.report_dead(reached, "crash", f"worker exited with {proc.returncode}",
                                 errs)
            if proc.returncode == -signal.SIGKILL and reached < end and time.time() < deadline:
                pass  # killed by us for a hang: reported above
            index = reached + 1 if reached < end else end
            self.calls = index - a.start
        return self.summary()

    def report_dead(self, index, kind, why, errs):
        desc = "?"
        try:
            desc = describe_call(self.args.seed, index)
        except Exception as e:  # noqa: BLE001 - the description is best effort
            desc = f"(could not describe: {e})"
        tail = "".join(errs)[-1500:]
        self.findings.append({"index": index, "kind": kind, "type": kind, "message": why,
                              "call": desc, "stderr": tail})
        print(f"[fuzz] {kind} at {self.args.seed}:{index}: {desc}\n{tail}", file=sys.stderr,
              flush=True)

    def summary(self):
        groups = collections.OrderedDict()
        for f in self.findings:
            sig = (f["kind"], f["type"], re.sub(r"\d+", "N", f["message"])[:120],
                   f["call"].split("(")[0][:60])
            groups.setdefault(sig, []).append(f)
        # Counted from the findings: a worker that died took its last tally with it.
        self.tally["untyped"] = sum(f["kind"] == "untyped" for f in self.findings)
        self.tally["crash"] = sum(f["kind"] == "crash" for f in self.findings)
        self.tally["hang"] = sum(f["kind"] == "hang" for f in self.findings)
        report = {"seed": self.args.seed, "start": self.args.start, "calls": self.calls,
                  "seconds": self.args.seconds, "tally": dict(self.tally),
                  "distinct_findings": len(groups),
                  "findings": [dict(g[0], count=len(g)) for g in groups.values()]}
        if self.args.report:
            with open(self.args.report, "w") as f:
                json.dump(report, f, indent=1)
        report["ops_with_accepted_case"] = self.accepted_ops
        os.unlink(self.progress_path)
        if os.path.exists(self.accepted_path):
            os.unlink(self.accepted_path)
        shutil.rmtree(self.scratch, ignore_errors=True)
        return report


def describe_call(seed, index):
    """The description of one call, made in a fresh process (the worker that made it may be
    dead)."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--describe",
                          f"{seed}:{index}"], capture_output=True, text=True, timeout=120)
    return out.stdout.strip() or out.stderr.strip()[-300:]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--calls", type=int, default=0, help="stop after this many calls")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--start", type=int, default=0, help="first call index")
    p.add_argument("--batch", type=int, default=20000, help="calls per worker process")
    p.add_argument("--timeout", type=float, default=30, help="seconds without progress = hang")
    p.add_argument("--report", help="write the findings as JSON here")
    p.add_argument("--repro", metavar="SEED:INDEX", help="run one call here and show it")
    p.add_argument("--describe", metavar="SEED:INDEX", help=argparse.SUPPRESS)
    p.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    p.add_argument("--find-accepted", metavar="PATH", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker:
        seed, start, end, path, accepted = a.worker
        worker(int(seed), int(start), int(end), path, accepted)
        return 0
    if a.find_accepted:
        limit_memory()
        cases = find_accepted_cases(Space())
        with open(a.find_accepted, "w") as f:
            json.dump(cases, f)
        return 0
    if a.describe or a.repro:
        seed, index = (int(v) for v in (a.describe or a.repro).split(":"))
        space = Space()
        space.load_accepted()
        desc, thunk = make_call(space, seed, index)
        print(desc, flush=True)
        if a.repro:
            try:
                _touch(thunk())
                print("ok")
            except TYPED as e:
                print(f"typed: {type(e).__name__}: {e}")
            except Exception:
                traceback.print_exc()
                return 1
        return 0
    t0 = time.time()
    report = Run(a).go()
    t = report["tally"]
    rate = report["calls"] / max(time.time() - t0, 1e-9)
    typed = {k: v for k, v in t.items() if k.startswith("typed:")}
    print(f"[fuzz] seed {a.seed}: {report['calls']} calls in {time.time() - t0:.0f} s "
          f"({rate:.0f}/s): {t.get('ok', 0)} ok, {sum(typed.values())} typed errors, "
          f"{t.get('untyped', 0)} untyped errors, {t['crash']} crashes, {t['hang']} hangs")
    print("[fuzz] typed errors: " + ", ".join(f"{k[6:]} {v}" for k, v in sorted(typed.items())))
    print(f"[fuzz] {report['ops_with_accepted_case']} registered ops have an accepted case "
          "that mutated calls start from")
    for f in report["findings"]:
        print(f"[fuzz] {f['kind']} x{f['count']} {f['type']}: {f['message'][:200]}\n"
              f"       first at --repro {a.seed}:{f['index']}: {f['call'][:300]}")
    return 1 if report["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
