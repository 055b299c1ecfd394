"""The op table for ndx's table-driven tests (PyTorch OpInfo style): one OpEntry per op.

Each entry names the ndx function and its NumPy reference, the dtypes it supports, how to make
sample inputs (always with shape () and a zero-size shape where the op allows them), the
tolerance per dtype, the expected result dtype (NumPy's, adjusted for ndx's documented
differences), whether it is differentiable (and how to check its gradient) and the bad inputs
with the exception class each must raise. test_ops.py turns the table into tests.

Inputs in samples are NumPy arrays (or Python scalars, or lists of arrays for concatenate and
stack); the tests convert them to ndx arrays with ndx.np.array, which keeps their dtype.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as onp
import scipy.special as sps

import ndx
from ndx import np

BOOL = ("bool",)
SIGNED = ("int8", "int16", "int32", "int64")
INTS = SIGNED + ("uint8",)
FLOATS = ("float16", "float32", "float64")
NUMERIC = INTS + FLOATS
ALL_DTYPES = BOOL + NUMERIC

# (rtol, atol) per result dtype; exact comparison for bool and integers.
ELEMWISE_TOLS = {"float16": (2e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-14),
                 "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-14)}
# Reductions and matmul accumulate in an order of their own.
ACCUM_TOLS = {"float16": (1e-2, 5e-2), "float32": (1e-5, 1e-5), "float64": (1e-11, 1e-12)}

# Shapes every elementwise op is tried on: 0-d, zero-size, 1-d, 2-d, 3-d.
ELEMWISE_SHAPES = ((), (0,), (0, 3), (7,), (3, 4), (2, 3, 4))
# Broadcasting pairs for binary ops.
BROADCAST_PAIRS = (((2, 3), (3,)), ((3,), (2, 3)), ((3, 1), (1, 4)), ((), (2, 2)), ((2, 2), ()),
                   ((4, 1, 3), (2, 1)), ((2, 0), (1,)), ((1,), (0,)), ((0, 1), (1, 3)))
# Mixed-dtype pairs for binary ops (promotion follows NumPy 2).
PROMOTION_PAIRS = (("int8", "uint8"), ("int8", "int16"), ("uint8", "int32"), ("bool", "int8"),
                   ("bool", "float16"), ("int16", "float16"), ("int32", "float32"),
                   ("int64", "float64"), ("uint8", "float16"), ("float16", "float32"),
                   ("float32", "float64"), ("int8", "float64"))


# ----------------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Domain:
    """Where sample values come from: uniform in [low, high) for floats, integers in
    [ceil(low), floor(high)] clipped to the dtype for ints, random for bool."""
    low: float = -5.0
    high: float = 5.0
    nonzero: bool = False


@dataclass
class Sample:
    args: tuple  # positional inputs: NumPy arrays, Python scalars, or lists of arrays
    kwargs: dict = field(default_factory=dict)
    name: str = ""


@dataclass
class ErrorInput:
    args: tuple
    kwargs: dict
    exc: type  # the class ndx must raise
    name: str
    # The class NumPy raises for the same call (a check that `exc` is the right choice);
    # None where NumPy accepts the call or has no such function.
    numpy_exc: type | None = None


@dataclass
class GradSample:
    inputs: tuple  # float64 NumPy arrays
    params: dict
    name: str


@dataclass
class OpEntry:
    name: str
    op: Callable
    ref: Callable
    kind: str  # unary, binary, reduction, shape, matmul, like, creation, search
    dtypes: tuple
    samples: Callable  # (dtype, rng, domains) -> [Sample]
    domains: tuple = (Domain(),)  # one per array input (unary/binary)
    tols: dict = field(default_factory=lambda: dict(ELEMWISE_TOLS))
    # (numpy result dtype, input arrays, sample kwargs, dtype under test) -> expected dtype
    expected_dtype: Callable | None = None
    differentiable: bool = False
    grad_op: str | None = None
    grad_samples: Callable[[onp.random.Generator], list] | None = None
    error_inputs: Callable[[], list] = list
    # Compare values only where both sides are finite (for nan/inf corner cases).
    equal_nan: bool = True
    # Binary ops: the dtypes the mixed-dtype promotion pairs are drawn from (None: every pair),
    # and whether the same-dtype broadcasting pairs apply (not for ldexp's (float, int) inputs).
    promotion_dtypes: tuple | None = None
    broadcast_pairs: bool = True


def alias(entry, name, op, ref, grad_op=None):
    """The same entry under another name (np.abs for np.absolute, ...)."""
    return dataclasses.replace(entry, name=name, op=op, ref=ref,
                               grad_op=grad_op if grad_op is not None else entry.grad_op)


# ----------------------------------------------------------------------------------- helpers
def make_arg(shape, dtype, rng, domain=Domain()):
    """A NumPy array of the given shape and dtype with values from `domain`."""
    dt = onp.dtype(dtype)
    if dt.kind == "b":
        x = rng.random(shape) < 0.5
        if domain.nonzero:
            x = onp.ones(shape, dtype=bool)
    elif dt.kind in "iu":
        info = onp.iinfo(dt)
        lo = max(math.ceil(domain.low), info.min)
        hi = min(math.floor(domain.high), info.max)
        x = rng.integers(lo, hi, size=shape, endpoint=True)
    else:
        x = rng.uniform(domain.low, domain.high, size=shape)
    x = onp.asarray(x).astype(dt)
    if domain.nonzero:
        x = onp.where(x == 0, onp.ones((), dtype=dt), x)
    return x


def default_expected_dtype(np_dtype, arrays, kwargs, dtype):
    """NumPy's result dtype, except where NumPy picks a float for non-float inputs (float math
    on ints and bool, true_divide, mean, creation without dtype): ndx gives its default float,
    float32, there. An explicit dtype= argument is always honoured."""
    np_dtype = onp.dtype(np_dtype)
    if kwargs.get("dtype") is not None:
        return np_dtype
    if np_dtype.kind == "f" and not any(onp.asarray(a).dtype.kind == "f" for a in arrays):
        return onp.dtype("float32")
    return np_dtype


def is_float(dtype):
    return onp.dtype(dtype).kind == "f"


# ----------------------------------------------------------------------------- sample makers
def unary_samples(special=()):
    """Every ELEMWISE_SHAPE, plus for float dtypes the special values given."""
    def make(dtype, rng, entry_domains):
        d = entry_domains[0]
        out = [Sample((make_arg(s, dtype, rng, d),), name=f"shape{s}") for s in ELEMWISE_SHAPES]
        if special and is_float(dtype):
            out.append(Sample((onp.array(special, dtype=dtype),), name="special"))
        return out
    return make


def binary_samples(extra=None, pyfloat=True):
    """Same-shape pairs over ELEMWISE_SHAPES and weak Python scalars on either side (no Python
    float for ops that take integers only)."""
    def make(dtype, rng, domains):
        da, db = domains
        out = [Sample((make_arg(s, dtype, rng, da), make_arg(s, dtype, rng, db)), name=f"shape{s}")
               for s in ELEMWISE_SHAPES]
        x = make_arg((3, 4), dtype, rng, da)
        y = make_arg((3, 4), dtype, rng, db)
        out.append(Sample((x, 2), name="array-pyint"))
        out.append(Sample((3, y), name="pyint-array"))
        if pyfloat:
            out.append(Sample((x, 2.5), name="array-pyfloat"))
        out.append(Sample((make_arg((), dtype, rng, da), 2), name="0d-pyint"))
        if extra is not None:
            out.extend(extra(dtype, rng))
        return out
    return make


def _div_by_zero(dtype, rng):
    """Integer division or modulo by zero gives 0 (as NumPy); floats give inf/nan."""
    x = make_arg((6,), dtype, rng, Domain(-5, 5))
    return [Sample((x, onp.zeros(6, dtype=dtype)), name="zero-divisor")]


def _nan_pair(dtype, rng):
    if not is_float(dtype):
        return []
    a = onp.array([onp.nan, 1.0, onp.nan, -onp.inf, 2.0], dtype=dtype)
    b = onp.array([1.0, onp.nan, onp.nan, 3.0, onp.inf], dtype=dtype)
    return [Sample((a, b), name="nan-inf")]


def _signed_mod_pairs(dtype, rng):
    """Signs of both operands mixed: Python-style floor semantics."""
    if onp.dtype(dtype).kind not in "if":
        return []
    a = onp.array([7, -7, 7, -7, 6, -6, 0], dtype=dtype)
    b = onp.array([3, 3, -3, -3, 3, -3, 5], dtype=dtype)
    return [Sample((a, b), name="mixed-signs")]


def reduction_samples(axis_tuple=True, dtype_kwarg=(), domain=Domain()):
    """Shapes (), (0, 3), (5,), (3, 4), (2, 3, 4) with axis/keepdims variants. Zero-size inputs
    only with the variants the op accepts (set per entry through `empty_ok`)."""
    def make(dtype, rng, domains, empty_axes=("all",)):
        out = []
        for shape in ((), (0, 3), (5,), (3, 4), (2, 3, 4)):
            x = make_arg(shape, dtype, rng, domain)
            variants = [{}, {"keepdims": True}]
            if len(shape) >= 1:
                variants += [{"axis": 0}, {"axis": -1}, {"axis": -1, "keepdims": True}]
            if len(shape) >= 2:
                variants += [{"axis": 1, "keepdims": True}]
                if axis_tuple:
                    variants += [{"axis": (0, 1)}, {"axis": (0, -1), "keepdims": True}]
            if axis_tuple:
                variants += [{"axis": ()}] if len(shape) == 0 else []
            for kw in variants:
                if 0 in shape and "all" not in empty_axes:
                    ax = kw.get("axis")
                    axes = (ax,) if isinstance(ax, int) else ax
                    # Only reductions over non-empty axes are allowed on zero-size arrays.
                    if axes is None or any(a % len(shape) == 0 for a in axes):
                        continue
                name = f"shape{shape}-" + (",".join(f"{k}={v}" for k, v in kw.items()) or "all")
                out.append(Sample((x,), kw, name))
        if is_float(dtype):
            x = make_arg((3, 4), dtype, rng, domain)
            x[1, 2] = onp.nan
            out.append(Sample((x,), {}, "nan"))
            out.append(Sample((x,), {"axis": 1}, "nan-axis=1"))
        for dt in dtype_kwarg:
            x = make_arg((3, 4), dtype, rng, domain)
            out.append(Sample((x,), {"dtype": dt}, f"dtype={dt}"))
            out.append(Sample((x,), {"axis": 1, "dtype": dt}, f"axis=1-dtype={dt}"))
        return out
    return make


# --------------------------------------------------------------------------------- gradients
def unary_grad(domain, shape=(2, 3)):
    def make(rng):
        return [GradSample((make_arg(shape, "float64", rng, domain),), {}, f"shape{shape}")]
    return make


def away_from_zero(rng, shape, lo=0.3, hi=2.0):
    """float64 values with |x| in [lo, hi): for ops with a kink at 0 (abs, sign)."""
    return rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def away_from_integers(rng, shape, lo=-3, hi=3):
    """float64 values at least 0.1 away from every integer (floor, ceil, floor_divide)."""
    return rng.integers(lo, hi, size=shape) + rng.uniform(0.1, 0.9, size=shape)


def binary_grad(da, db):
    def make(rng):
        out = []
        for sa, sb in (((2, 3), (2, 3)), ((2, 3), (3,)), ((3, 1), (1, 2)), ((), (2,))):
            out.append(GradSample((make_arg(sa, "float64", rng, da),
                                   make_arg(sb, "float64", rng, db)), {}, f"{sa}-{sb}"))
        return out
    return make


def distinct_pair_grad(rng):
    """Pairs whose elements differ by at least 0.3, so maximum/minimum are smooth there."""
    out = []
    for sa, sb in (((2, 3), (2, 3)), ((2, 3), (3,)), ((), (3,))):
        b = rng.uniform(-2, 2, size=sb)
        a = onp.broadcast_to(b, sa) if len(sa) >= len(sb) else onp.zeros(sa)
        if len(sa) < len(sb):  # a scalar against a vector: spread b away from it
            b = away_from_zero(rng, sb)
        a = a + away_from_zero(rng, sa)
        out.append(GradSample((onp.asarray(a), b), {}, f"{sa}-{sb}"))
    return out


def mod_grad(rng):
    """a mod b away from its jumps (a/b at least 0.1 away from an integer)."""
    b = rng.uniform(1.0, 2.0, size=(2, 3)) * rng.choice([-1.0, 1.0], size=(2, 3))
    a = away_from_integers(rng, (2, 3)) * b
    return [GradSample((a, b), {}, "(2, 3)-(2, 3)")]


def reduction_grad(domain=Domain(-2, 2), extra_params=()):
    def make(rng):
        x = make_arg((2, 3, 4), "float64", rng, domain)
        out = [GradSample((x,), {}, "all"),
               GradSample((x,), {"axis": (1,)}, "axis=1"),
               GradSample((x,), {"axis": (0, 2), "keepdims": True}, "axis=(0,2)-keepdims"),
               GradSample((make_arg((), "float64", rng, domain),), {}, "0d")]
        out += [GradSample((x,), dict(p), name) for name, p in extra_params]
        return out
    return make


def extremum_grad(rng):
    """A permutation of well separated values: a unique max/min along every axis."""
    x = rng.permutation(24).reshape(2, 3, 4).astype(onp.float64) * 0.5
    return [GradSample((x,), {}, "all"), GradSample((x,), {"axis": (1,)}, "axis=1"),
            GradSample((x,), {"axis": (0, 2), "keepdims": True}, "axis=(0,2)-keepdims")]


# ------------------------------------------------------------------------------ error inputs
def _f(shape, dtype="float32"):
    return onp.ones(shape, dtype=dtype)


AXIS_ERR = ndx.AxisError
NP_AXIS_ERR = onp.exceptions.AxisError


def bool_unary_error(name):
    return lambda: [ErrorInput((onp.array([True, False]),), {}, TypeError, "bool-input",
                               TypeError)]


def binary_errors(extra=(), out_of_range_scalar=True):
    def make():
        out = [ErrorInput((_f((2, 3)), _f((4,))), {}, ValueError, "broadcast-(2,3)-(4,)",
                          ValueError),
               ErrorInput((_f((2, 1, 3)), _f((4, 2))), {}, ValueError, "broadcast-(2,1,3)-(4,2)",
                          ValueError),
               ErrorInput((_f((0,)), _f((2,))), {}, ValueError, "broadcast-(0,)-(2,)",
                          ValueError)]
        if out_of_range_scalar:
            # NEP 50: a Python int that does not fit the array's integer dtype is an error.
            out.append(ErrorInput((onp.array([1, 2], dtype=onp.int8), 300), {}, OverflowError,
                                  "int8-pyint-out-of-range", OverflowError))
            out.append(ErrorInput((onp.array([1, 2], dtype=onp.uint8), -1), {}, OverflowError,
                                  "uint8-pyint-negative", OverflowError))
        return out + list(extra)
    return make


def reduction_errors(allow_tuple=True, empty_error=False):
    def make():
        x = _f((2, 3))
        out = [ErrorInput((x,), {"axis": 2}, AXIS_ERR, "axis=2-on-2d", NP_AXIS_ERR),
               ErrorInput((x,), {"axis": -3}, AXIS_ERR, "axis=-3-on-2d", NP_AXIS_ERR),
               ErrorInput((_f(()),), {"axis": 1}, AXIS_ERR, "axis=1-on-0d", NP_AXIS_ERR)]
        if allow_tuple:
            out.append(ErrorInput((x,), {"axis": (0, 0)}, ValueError, "duplicate-axis",
                                  ValueError))
            out.append(ErrorInput((x,), {"axis": (0, 2)}, AXIS_ERR, "axis=(0,2)-on-2d",
                                  NP_AXIS_ERR))
        else:
            out.append(ErrorInput((x,), {"axis": (0, 1)}, TypeError, "tuple-axis", TypeError))
        if empty_error:
            out.append(ErrorInput((_f((0, 3)),), {}, ValueError, "zero-size-all", ValueError))
            out.append(ErrorInput((_f((0, 3)),), {"axis": 0}, ValueError, "zero-size-axis0",
                                  ValueError))
            out.append(ErrorInput((_f((0,)),), {}, ValueError, "zero-size-1d", ValueError))
        return out
    return make


# ---------------------------------------------------------------------------------- entries
ENTRIES: list[OpEntry] = []


def add(entry):
    ENTRIES.append(entry)
    return entry


# Unary elementwise ------------------------------------------------------------------------
SPECIAL = (0.0, -0.0, 0.5, -1.5, 2.5, onp.inf, -onp.inf, onp.nan)

negative = add(OpEntry(
    "negative", np.negative, onp.negative, "unary", NUMERIC, unary_samples(SPECIAL),
    differentiable=True, grad_op="_np_negative", grad_samples=unary_grad(Domain(-2, 2)),
    error_inputs=bool_unary_error("negative")))
absolute = add(OpEntry(
    "absolute", np.absolute, onp.absolute, "unary", ALL_DTYPES, unary_samples(SPECIAL),
    differentiable=True, grad_op="_np_absolute",
    grad_samples=lambda rng: [GradSample((away_from_zero(rng, (2, 3)),), {}, "away-from-0")]))
add(alias(absolute, "abs", np.abs, onp.abs, "_np_abs"))
add(OpEntry(
    "sign", np.sign, onp.sign, "unary", NUMERIC, unary_samples(SPECIAL),
    differentiable=True, grad_op="_np_sign",
    grad_samples=lambda rng: [GradSample((away_from_zero(rng, (2, 3)),), {}, "away-from-0")],
    error_inputs=bool_unary_error("sign")))
add(OpEntry(
    "sqrt", np.sqrt, onp.sqrt, "unary", ALL_DTYPES, unary_samples(SPECIAL + (-1.0, 1e-30)),
    domains=(Domain(0, 10),), differentiable=True, grad_op="_np_sqrt",
    grad_samples=unary_grad(Domain(0.5, 4))))
add(OpEntry(
    "square", np.square, onp.square, "unary", ALL_DTYPES, unary_samples(SPECIAL),
    differentiable=True, grad_op="_np_square", grad_samples=unary_grad(Domain(-2, 2))))
add(OpEntry(
    "exp", np.exp, onp.exp, "unary", ALL_DTYPES, unary_samples(SPECIAL + (-100.0, 100.0)),
    domains=(Domain(-3, 3),), differentiable=True, grad_op="_np_exp",
    grad_samples=unary_grad(Domain(-2, 2))))
add(OpEntry(
    "log", np.log, onp.log, "unary", ALL_DTYPES, unary_samples(SPECIAL + (-1.0, 1e-3)),
    domains=(Domain(0.1, 10),), differentiable=True, grad_op="_np_log",
    grad_samples=unary_grad(Domain(0.5, 4))))
add(OpEntry(
    "expm1", np.expm1, onp.expm1, "unary", ALL_DTYPES,
    unary_samples(SPECIAL + (-100.0, 100.0, 1e-10, -1e-7)), domains=(Domain(-3, 3),),
    differentiable=True, grad_op="_np_expm1", grad_samples=unary_grad(Domain(-2, 2))))
add(OpEntry(
    "log1p", np.log1p, onp.log1p, "unary", ALL_DTYPES,
    unary_samples(SPECIAL + (-1.0, -2.0, 1e-10, -0.999)), domains=(Domain(-0.9, 10),),
    differentiable=True, grad_op="_np_log1p", grad_samples=unary_grad(Domain(-0.5, 4))))
for _name in ("log2", "log10"):
    add(OpEntry(
        _name, getattr(np, _name), getattr(onp, _name), "unary", ALL_DTYPES,
        unary_samples(SPECIAL + (-1.0, 1e-3, 1024.0)), domains=(Domain(0.1, 10),),
        differentiable=True, grad_op="_np_" + _name, grad_samples=unary_grad(Domain(0.5, 4))))
add(OpEntry(
    "sin", np.sin, onp.sin, "unary", ALL_DTYPES, unary_samples(SPECIAL + (onp.pi, 100.0)),
    differentiable=True, grad_op="_np_sin", grad_samples=unary_grad(Domain(-3, 3))))
add(OpEntry(
    "cos", np.cos, onp.cos, "unary", ALL_DTYPES, unary_samples(SPECIAL + (onp.pi / 2, 100.0)),
    differentiable=True, grad_op="_np_cos", grad_samples=unary_grad(Domain(-3, 3))))
add(OpEntry(
    "tanh", np.tanh, onp.tanh, "unary", ALL_DTYPES, unary_samples(SPECIAL + (30.0, -30.0)),
    differentiable=True, grad_op="_np_tanh", grad_samples=unary_grad(Domain(-2, 2))))
add(OpEntry(
    "floor", np.floor, onp.floor, "unary", ALL_DTYPES, unary_samples(SPECIAL + (-0.5, 3.0)),
    differentiable=True, grad_op="_np_floor",
    grad_samples=lambda rng: [GradSample((away_from_integers(rng, (2, 3)),), {}, "non-integer")]))
add(OpEntry(
    "ceil", np.ceil, onp.ceil, "unary", ALL_DTYPES, unary_samples(SPECIAL + (-0.5, 3.0)),
    differentiable=True, grad_op="_np_ceil",
    grad_samples=lambda rng: [GradSample((away_from_integers(rng, (2, 3)),), {}, "non-integer")]))
add(OpEntry(
    "logical_not", np.logical_not, onp.logical_not, "unary", ALL_DTYPES,
    unary_samples(SPECIAL)))

# Binary elementwise -----------------------------------------------------------------------
D = Domain()
NZ = Domain(-5, 5, nonzero=True)

add_entry = add(OpEntry(
    "add", np.add, onp.add, "binary", ALL_DTYPES, binary_samples(), domains=(D, D),
    differentiable=True, grad_op="_np_add", grad_samples=binary_grad(D, D),
    error_inputs=binary_errors()))
add(OpEntry(
    "subtract", np.subtract, onp.subtract, "binary", ALL_DTYPES[1:], binary_samples(),
    domains=(D, D), differentiable=True, grad_op="_np_subtract", grad_samples=binary_grad(D, D),
    error_inputs=binary_errors([
        ErrorInput((onp.array([True]), onp.array([False])), {}, TypeError, "bool-bool",
                   TypeError),
        ErrorInput((onp.array([True]), True), {}, TypeError, "bool-pybool", TypeError)])))
add(OpEntry(
    "multiply", np.multiply, onp.multiply, "binary", ALL_DTYPES, binary_samples(),
    domains=(D, D), differentiable=True, grad_op="_np_multiply", grad_samples=binary_grad(D, D),
    error_inputs=binary_errors()))


def _true_divide_extra(dtype, rng):
    """Integer arrays over Python ints outside their range: NumPy divides in float (no
    OverflowError, as the int is never cast to the array's dtype)."""
    out = _nan_pair(dtype, rng)
    if onp.dtype(dtype).kind in "iu":
        x = make_arg((5,), dtype, rng, D)
        out += [Sample((x, 1000), name="pyint-above-range"),
                Sample((-1000, x + onp.ones((), dtype)), name="pyint-below-range-lhs")]
    return out


true_divide = add(OpEntry(
    "true_divide", np.true_divide, onp.true_divide, "binary", ALL_DTYPES,
    binary_samples(_true_divide_extra), domains=(D, NZ), differentiable=True,
    grad_op="_np_true_divide", grad_samples=binary_grad(Domain(-2, 2), Domain(0.5, 2)),
    error_inputs=binary_errors(out_of_range_scalar=False)))
add(alias(true_divide, "divide", np.divide, onp.divide, "_np_divide"))
add(OpEntry(
    "floor_divide", np.floor_divide, onp.floor_divide, "binary", ALL_DTYPES,
    binary_samples(lambda dt, rng: _div_by_zero(dt, rng) + _signed_mod_pairs(dt, rng)),
    domains=(D, NZ), differentiable=True, grad_op="_np_floor_divide",
    grad_samples=lambda rng: [GradSample(
        (away_from_integers(rng, (2, 3)) * 1.5, onp.full((2, 3), 1.5)), {}, "non-integer")],
    error_inputs=binary_errors()))
mod = add(OpEntry(
    "mod", np.mod, onp.mod, "binary", ALL_DTYPES,
    binary_samples(lambda dt, rng: _div_by_zero(dt, rng) + _signed_mod_pairs(dt, rng)),
    domains=(D, NZ), differentiable=True, grad_op="_np_mod", grad_samples=mod_grad,
    error_inputs=binary_errors()))
add(alias(mod, "remainder", np.remainder, onp.remainder, "_np_remainder"))


def _power_samples(dtype, rng):
    out = []
    if onp.dtype(dtype).kind in "iu":
        # 0**0 == 1, x**0 == 1, 1**n == 1; (-2)**3 for signed ints.
        a = onp.array([0, 2, 1, 3, 0], dtype=dtype)
        b = onp.array([0, 0, 5, 2, 3], dtype=dtype)
        out.append(Sample((a, b), name="int-corners"))
        if onp.dtype(dtype).kind == "i":
            out.append(Sample((onp.array([-2, -1, -3], dtype=dtype),
                               onp.array([3, 4, 2], dtype=dtype)), name="negative-base"))
    if is_float(dtype):
        a = onp.array([-2.0, 0.0, 0.0, -1.0, 4.0, onp.inf], dtype=dtype)
        b = onp.array([3.0, 0.0, -1.0, 0.5, -0.5, -1.0], dtype=dtype)
        out.append(Sample((a, b), name="float-corners"))
    return out


power = add(OpEntry(
    "power", np.power, onp.power, "binary", ALL_DTYPES, binary_samples(_power_samples),
    domains=(Domain(0, 3), Domain(0, 3)), differentiable=True, grad_op="_np_power",
    grad_samples=binary_grad(Domain(0.5, 2), Domain(-2, 2)),
    error_inputs=binary_errors([
        ErrorInput((onp.array([2, 3], dtype=onp.int32), onp.array([1, -1], dtype=onp.int32)),
                   {}, ValueError, "int-negative-power", ValueError),
        ErrorInput((onp.array([2, 3], dtype=onp.int64), -2), {}, ValueError,
                   "int-negative-pyint-power", ValueError)])))
add(OpEntry(
    "maximum", np.maximum, onp.maximum, "binary", ALL_DTYPES, binary_samples(_nan_pair),
    domains=(D, D), differentiable=True, grad_op="_np_maximum", grad_samples=distinct_pair_grad,
    error_inputs=binary_errors()))
add(OpEntry(
    "minimum", np.minimum, onp.minimum, "binary", ALL_DTYPES, binary_samples(_nan_pair),
    domains=(D, D), differentiable=True, grad_op="_np_minimum", grad_samples=distinct_pair_grad,
    error_inputs=binary_errors()))

SMALL = Domain(-2, 2)  # small range: many equal pairs


def _comparison_extra(dtype, rng):
    """NumPy 2 compares integer arrays with Python ints outside the dtype's range exactly
    (no OverflowError, unlike arithmetic): int8 < 1000 is True."""
    out = _nan_pair(dtype, rng)
    if onp.dtype(dtype).kind in "iu":
        x = make_arg((5,), dtype, rng, SMALL)
        out += [Sample((x, 1000), name="pyint-above-range"),
                Sample((x, -1000), name="pyint-below-range"),
                Sample((-1000, x), name="pyint-below-range-lhs")]
    return out


for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "binary", ALL_DTYPES,
                binary_samples(_comparison_extra), domains=(SMALL, SMALL),
                error_inputs=binary_errors(out_of_range_scalar=False)))

add(alias(power, "pow", np.pow, onp.pow, "_np_pow"))

# NumPy's other ufuncs (issue 11) ------------------------------------------------------------
def _float_unary(name, domain=Domain(), special=(), grad_domain=None, grad_samples=None,
                 aliases=(), dtypes=ALL_DTYPES, tols=None):
    """A float-valued unary ufunc (ints and bool compute in float32) and its aliases."""
    entry = add(OpEntry(
        name, getattr(np, name), getattr(onp, name), "unary", dtypes,
        unary_samples(SPECIAL + tuple(special)), domains=(domain,),
        tols=dict(tols or ELEMWISE_TOLS),
        differentiable=grad_domain is not None or grad_samples is not None,
        grad_op="_np_" + name,
        grad_samples=grad_samples or (unary_grad(grad_domain) if grad_domain else None)))
    for a in aliases:
        add(alias(entry, a, getattr(np, a), getattr(onp, a, getattr(onp, name)), "_np_" + a))
    return entry


_float_unary("tan", Domain(-1.5, 1.5), (onp.pi / 2, 100.0), Domain(-1, 1))
_float_unary("sinh", Domain(-5, 5), (89.0, 89.5, -100.0, 1e-8), Domain(-2, 2))
_float_unary("cosh", Domain(-5, 5), (89.0, 89.5, -100.0), Domain(-2, 2))
_float_unary("arcsin", Domain(-1, 1), (1.0, -1.0, 2.0, 1e-8), Domain(-0.8, 0.8), aliases=("asin",))
_float_unary("arccos", Domain(-1, 1), (1.0, -1.0, 2.0), Domain(-0.8, 0.8), aliases=("acos",))
_float_unary("arctan", Domain(), (1e30, -1e30, 1e-8), Domain(-2, 2), aliases=("atan",))
_float_unary("arcsinh", Domain(), (1e30, -1e30, 1e-8), Domain(-2, 2), aliases=("asinh",))
_float_unary("arccosh", Domain(1, 10), (1.0, 0.9, 1e30), Domain(1.5, 4), aliases=("acosh",))
_float_unary("arctanh", Domain(-0.99, 0.99), (1.0, -1.0, 2.0, 1e-8), Domain(-0.8, 0.8),
             aliases=("atanh",))
_float_unary("exp2", Domain(-3, 3), (-200.0, 200.0, 128.0, -149.0), Domain(-2, 2))
_float_unary("cbrt", Domain(), (-8.0, 27.0, 1e-30),
             grad_samples=lambda rng: [GradSample((away_from_zero(rng, (2, 3), 0.5),), {},
                                                  "away-from-0")])
_float_unary("sinc", Domain(), (1.0, -2.0, 1e-8), Domain(-2, 2))
_float_unary("fabs", Domain(), (),
             grad_samples=lambda rng: [GradSample((away_from_zero(rng, (2, 3)),), {},
                                                  "away-from-0")])
_float_unary("rint", Domain(), (1.5, -0.5, 2.5 + 2**22),
             grad_samples=lambda rng: [GradSample((away_from_integers(rng, (2, 3)),), {},
                                                  "non-integer")])
_float_unary("deg2rad", Domain(-360, 360), (180.0,), Domain(-2, 2), aliases=("radians",))
_float_unary("rad2deg", Domain(), (onp.pi,), Domain(-2, 2), aliases=("degrees",))
trunc = add(OpEntry(
    "trunc", np.trunc, onp.trunc, "unary", ALL_DTYPES, unary_samples(SPECIAL + (-0.5, 3.0)),
    differentiable=True, grad_op="_np_trunc",
    grad_samples=lambda rng: [GradSample((away_from_integers(rng, (2, 3)),), {}, "non-integer")]))
add(alias(trunc, "fix", np.fix, onp.fix, "_np_fix"))
add(OpEntry(
    "positive", np.positive, onp.positive, "unary", NUMERIC, unary_samples(SPECIAL),
    differentiable=True, grad_op="_np_positive", grad_samples=unary_grad(Domain(-2, 2)),
    error_inputs=bool_unary_error("positive")))
add(OpEntry(
    "reciprocal", np.reciprocal, onp.reciprocal, "unary", ALL_DTYPES, unary_samples(SPECIAL),
    domains=(Domain(-5, 5, nonzero=True),), differentiable=True, grad_op="_np_reciprocal",
    grad_samples=lambda rng: [GradSample((away_from_zero(rng, (2, 3), 0.5),), {},
                                         "away-from-0")]))
for _name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "unary", ALL_DTYPES,
                unary_samples(SPECIAL + (1e30, -1e-30))))


def _int_only_unary_error(name):
    return lambda: [ErrorInput((onp.array([1.5, 2.0]),), {}, TypeError, "float-input",
                               TypeError)]


bitwise_not = add(OpEntry(
    "bitwise_not", np.bitwise_not, onp.bitwise_not, "unary", BOOL + INTS, unary_samples(),
    domains=(Domain(-100, 100),), error_inputs=_int_only_unary_error("bitwise_not")))
add(alias(bitwise_not, "invert", np.invert, onp.invert, "_np_invert"))
# (uint8 results for every integer dtype; the minimum of a signed dtype counts |x|'s bits)
add(OpEntry("bitwise_count", np.bitwise_count, onp.bitwise_count, "unary",
            BOOL + INTS + ("uint16", "uint32", "uint64"), unary_samples(),
            domains=(Domain(-2**62, 2**62),), error_inputs=_int_only_unary_error("bitwise_count")))
add(alias(bitwise_not, "bitwise_invert", np.bitwise_invert, onp.bitwise_invert,
          "_np_bitwise_invert"))


def _round_samples(dtype, rng, domains):
    out = unary_samples(SPECIAL + (0.5, 1.5, -2.5, 0.125))(dtype, rng, (Domain(-500, 500),))
    x = make_arg((3, 4), dtype, rng, Domain(-500, 500))
    # NumPy rejects bool with decimals and scales float16 by 10**5 in float16 (inf).
    for d in (1, 2, -1, -2) + ((-5,) if dtype != "float16" else ()):
        if dtype != "bool":
            out.append(Sample((x,), {"decimals": d}, f"decimals={d}"))
    if onp.dtype(dtype).kind in "iu":  # halves of the rounding unit go to even
        h = onp.array([15, 25, 5, 0, 35, 45] + ([-15, -25] if onp.dtype(dtype).kind == "i" else []),
                      dtype=dtype)
        out.append(Sample((h,), {"decimals": -1}, "int-halves"))
    return out


round_entry = add(OpEntry(
    "round", np.round, onp.round, "unary", ALL_DTYPES, _round_samples,
    differentiable=True, grad_op="_np_round",
    grad_samples=lambda rng: [GradSample((away_from_integers(rng, (2, 3)),), {}, "non-integer")]))
add(alias(round_entry, "around", np.around, onp.around, "_np_around"))
add(alias(round_entry, "round_", np.round_, onp.round, "_np_round_"))


def _nan_to_num_samples(dtype, rng, domains):
    out = unary_samples(SPECIAL)(dtype, rng, domains)
    if is_float(dtype):
        x = onp.array([onp.nan, onp.inf, -onp.inf, 1.5, -0.0], dtype=dtype)
        out += [Sample((x,), {"nan": 7.0}, "nan=7"),
                Sample((x,), {"posinf": 9.0, "neginf": -9.0}, "posinf-neginf"),
                Sample((x,), {"copy": False}, "copy=False")]
    return out


add(OpEntry(
    "nan_to_num", np.nan_to_num, onp.nan_to_num, "unary", ALL_DTYPES, _nan_to_num_samples,
    differentiable=True, grad_op="_npi_nan_to_num", grad_samples=unary_grad(Domain(-2, 2))))
add(OpEntry(
    "frexp", np.frexp, onp.frexp, "unary", ALL_DTYPES,
    unary_samples(SPECIAL + (1e-40, 1e30, 3.0, -0.75))))
add(OpEntry(
    "modf", np.modf, onp.modf, "unary", ALL_DTYPES, unary_samples(SPECIAL + (-2.0, 3.75))))


def _float_binary(name, da=D, db=D, extra=_nan_pair, grad=None, aliases=(), differentiable=True):
    entry = add(OpEntry(
        name, getattr(np, name), getattr(onp, name), "binary", ALL_DTYPES,
        binary_samples(extra), domains=(da, db), differentiable=differentiable,
        grad_op="_np_" + name, grad_samples=grad or binary_grad(da, db),
        error_inputs=binary_errors(out_of_range_scalar=False)))
    for a in aliases:
        add(alias(entry, a, getattr(np, a), getattr(onp, a), "_np_" + a))


def _atan2_corners(dtype, rng):
    if not is_float(dtype):
        return []
    a = onp.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, onp.inf, onp.inf, -onp.inf], dtype=dtype)
    b = onp.array([0.0, 0.0, -0.0, -0.0, 0.0, -0.0, onp.inf, -onp.inf, 1.0], dtype=dtype)
    return _nan_pair(dtype, rng) + [Sample((a, b), name="signed-zeros-infs")]


_float_binary("arctan2", extra=_atan2_corners, aliases=("atan2",),
              grad=binary_grad(Domain(0.5, 2), Domain(0.5, 2)))
_float_binary("hypot", grad=binary_grad(Domain(0.5, 2), Domain(-2, -0.5)))
add(OpEntry("squared_difference", ndx.nd._npi_squared_difference,
            lambda a, b: onp.square(onp.subtract(a, b)), "binary", FLOATS,
            binary_samples(_nan_pair), domains=(D, D), promotion_dtypes=FLOATS, differentiable=True,
            grad_op="_npi_squared_difference",
            grad_samples=binary_grad(D, D)))
_float_binary("logaddexp", extra=lambda dt, rng: _nan_pair(dt, rng) + _equal_infs(dt),
              grad=binary_grad(Domain(-2, 2), Domain(-2, 2)))
_float_binary("logaddexp2", extra=lambda dt, rng: _nan_pair(dt, rng) + _equal_infs(dt),
              grad=binary_grad(Domain(-2, 2), Domain(-2, 2)))
_float_binary("copysign", extra=_atan2_corners,
              grad=binary_grad(Domain(0.5, 2), Domain(-2, 2)))
_float_binary("nextafter", extra=_atan2_corners, differentiable=False)
_float_binary("heaviside", da=SMALL, extra=_atan2_corners, differentiable=False)


def _equal_infs(dtype):
    if not is_float(dtype):
        return []
    a = onp.array([onp.inf, -onp.inf, 3.0, -onp.inf], dtype=dtype)
    return [Sample((a, a.copy()), name="equal-operands")]


for _name in ("fmax", "fmin"):
    add(OpEntry(
        _name, getattr(np, _name), getattr(onp, _name), "binary", ALL_DTYPES,
        binary_samples(_nan_pair), domains=(D, D), differentiable=True, grad_op="_np_" + _name,
        grad_samples=distinct_pair_grad, error_inputs=binary_errors()))
add(OpEntry(
    "fmod", np.fmod, onp.fmod, "binary", ALL_DTYPES,
    binary_samples(lambda dt, rng: _div_by_zero(dt, rng) + _signed_mod_pairs(dt, rng)),
    domains=(D, NZ), differentiable=True, grad_op="_np_fmod", grad_samples=mod_grad,
    error_inputs=binary_errors()))
add(OpEntry(
    "float_power", np.float_power, onp.float_power, "binary", ALL_DTYPES,
    binary_samples(_power_samples), domains=(Domain(0, 3), Domain(0, 3)),
    expected_dtype=lambda np_dt, arrays, kwargs, dt: onp.dtype("float64"),
    differentiable=True, grad_op="_np_float_power",
    grad_samples=binary_grad(Domain(0.5, 2), Domain(-2, 2)),
    error_inputs=binary_errors(out_of_range_scalar=False)))


def _ldexp_samples(dtype, rng, domains):
    out = []
    for s in ELEMWISE_SHAPES:
        out.append(Sample((make_arg(s, dtype, rng), make_arg(s, "int32", rng, Domain(-10, 10))),
                          name=f"shape{s}"))
    x = make_arg((3, 4), dtype, rng)
    out.append(Sample((x, 3), name="array-pyint"))
    out.append(Sample((x, onp.array([-200, 200, 1000], dtype="int64")[:, None]),
                      name="int64-exponent-broadcast"))
    if is_float(dtype):
        out.append(Sample((onp.array([onp.inf, -onp.inf, onp.nan, -0.0], dtype=dtype),
                           onp.array([1, 2, 3, 4], dtype="int16")), name="special"))
    return out


# (Its gradient needs an integer exponent: test_ufuncs.py checks it.)
add(OpEntry(
    "ldexp", np.ldexp, onp.ldexp, "binary", FLOATS, _ldexp_samples, domains=(D, D),
    promotion_dtypes=(), broadcast_pairs=False,
    error_inputs=lambda: [ErrorInput((_f((2,)), _f((2,))), {}, TypeError, "float-exponent",
                                     TypeError)]))


def _int_binary_errors(bool_ok):
    def make():
        out = [ErrorInput((_f((2,)), onp.array([1, 2])), {}, TypeError, "float-int", TypeError),
               ErrorInput((onp.array([1, 2]), 1.5), {}, TypeError, "int-pyfloat", TypeError)]
        if not bool_ok:
            out.append(ErrorInput((onp.array([True]), onp.array([False])), {}, TypeError,
                                  "bool-bool", TypeError))
        return out
    return make


def _shift_counts(dtype, rng):
    if onp.dtype(dtype).kind not in "iu":
        return []
    a = onp.array([1, 3, 5, 1, 7, 2], dtype=dtype)
    width = onp.dtype(dtype).itemsize * 8
    b = onp.array([0, 1, width - 2, width, width + 3, 70], dtype=dtype)
    out = [Sample((a, b), name="counts-past-width")]
    if onp.dtype(dtype).kind == "i":
        out.append(Sample((-a, b), name="negative-past-width"))
    return out


for _name, _dtypes, _bool_ok, _extra, _aliases in (
        ("bitwise_and", BOOL + INTS, True, None, ()),
        ("bitwise_or", BOOL + INTS, True, None, ()),
        ("bitwise_xor", BOOL + INTS, True, None, ()),
        ("left_shift", BOOL + INTS, True, _shift_counts, ("bitwise_left_shift",)),
        ("right_shift", BOOL + INTS, True, _shift_counts, ("bitwise_right_shift",)),
        ("gcd", INTS, False, None, ()),
        ("lcm", INTS, False, None, ())):
    _e = add(OpEntry(
        _name, getattr(np, _name), getattr(onp, _name), "binary", _dtypes,
        binary_samples(_extra, pyfloat=False),
        domains=(Domain(-20, 20), Domain(0, 6) if "shift" in _name else Domain(-20, 20)),
        promotion_dtypes=_dtypes, error_inputs=_int_binary_errors(_bool_ok)))
    for _a in _aliases:
        add(alias(_e, _a, getattr(np, _a), getattr(onp, _a), "_np_" + _a))
for _name in ("logical_and", "logical_or", "logical_xor"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "binary", ALL_DTYPES,
                binary_samples(_nan_pair), domains=(SMALL, SMALL),
                error_inputs=binary_errors(out_of_range_scalar=False)))
add(OpEntry(
    "divmod", np.divmod, onp.divmod, "binary", ALL_DTYPES,
    binary_samples(lambda dt, rng: _div_by_zero(dt, rng) + _signed_mod_pairs(dt, rng)),
    domains=(D, NZ), error_inputs=binary_errors()))

# (NumPy's float16 spacing is positive for negative x, its float32 / float64 spacing negative;
# ndx follows the latter for all three, so float16 is checked in test_ufuncs.py.)
add(OpEntry("spacing", np.spacing, onp.spacing, "unary", FLOATS[1:],
            unary_samples(SPECIAL + (1e30, -1e-30, 65504.0, 1e-45))))
for _name in ("real", "imag", "conj", "conjugate"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "unary", ALL_DTYPES,
                unary_samples(SPECIAL)))


def _clip_samples(dtype, rng, domains):
    lo = 0 if dtype == "uint8" else -2
    out = []
    for s in ELEMWISE_SHAPES:
        out.append(Sample((make_arg(s, dtype, rng), lo, 3), name=f"shape{s}"))
    x = make_arg((3, 4), dtype, rng)
    out += [Sample((x, None, 1), name="max-only"), Sample((x, 0, None), name="min-only"),
            Sample((x, 3, lo), name="min-above-max"),
            Sample((x, make_arg((4,), dtype, rng), make_arg((3, 1), dtype, rng, Domain(4, 6))),
                   name="array-bounds")]
    if is_float(dtype):
        special = onp.array([onp.nan, onp.inf, -onp.inf, 0.5], dtype=dtype)
        out += [Sample((special, 0, 1), name="special"),
                Sample((special, onp.nan, 1), name="nan-bound"),
                Sample((special, -onp.inf, onp.inf), name="infinite-bounds")]
    return out


def _clip_grad(rng):
    """x at least 0.1 away from the bounds (lo below hi, broadcast against x): clip is smooth
    there, its gradient 1 between the bounds and each bound's where x passes it."""
    def away_from(bounds, shape):
        x = rng.uniform(-3, 3, size=shape)
        return onp.where(onp.abs(x - bounds) < 0.1, x + 0.2, x)
    lo, hi = rng.uniform(-1.5, -0.5, size=(4,)), rng.uniform(0.5, 1.5, size=(3, 1))
    x = away_from(hi, (3, 4))
    x = onp.where(onp.abs(x - lo) < 0.1, x - 0.25, x)
    return [GradSample((x, lo, hi), {}, "(3, 4)-(4,)-(3, 1)"),
            GradSample((x, onp.array(0.3), onp.array(-0.3)), {}, "lo-above-hi")]


add(OpEntry("clip", np.clip, onp.clip, "unary", NUMERIC, _clip_samples, differentiable=True,
            grad_op="_npi_clip", grad_samples=_clip_grad))

# Reductions -------------------------------------------------------------------------------
add(OpEntry(
    "sum", np.sum, onp.sum, "reduction", ALL_DTYPES,
    reduction_samples(dtype_kwarg=("int8", "int64", "float64", "float32")), tols=dict(ACCUM_TOLS),
    differentiable=True, grad_op="_np_sum", grad_samples=reduction_grad(),
    error_inputs=reduction_errors()))
add(OpEntry(
    "prod", np.prod, onp.prod, "reduction", ALL_DTYPES,
    reduction_samples(dtype_kwarg=("int64", "float64"), domain=Domain(-1.5, 1.5)),
    tols=dict(ACCUM_TOLS), differentiable=True, grad_op="_np_prod",
    grad_samples=lambda rng: [GradSample((away_from_zero(rng, (2, 3, 4), 0.5, 1.5),), p, n)
                              for n, p in (("all", {}), ("axis=1", {"axis": (1,)}),
                                           ("axis=(0,2)", {"axis": (0, 2), "keepdims": True}))],
    error_inputs=reduction_errors()))
add(OpEntry(
    "mean", np.mean, onp.mean, "reduction", ALL_DTYPES,
    reduction_samples(dtype_kwarg=("float64", "float32")), tols=dict(ACCUM_TOLS),
    differentiable=True, grad_op="_np_mean", grad_samples=reduction_grad(),
    error_inputs=reduction_errors()))
for _name, _ref, _grad in (("max", onp.max, "_np_max"), ("amax", onp.amax, "_np_amax"),
                           ("min", onp.min, "_np_min"), ("amin", onp.amin, "_np_amin")):
    add(OpEntry(
        _name, getattr(np, _name), _ref, "reduction", ALL_DTYPES,
        lambda dt, rng, doms: reduction_samples()(dt, rng, doms, empty_axes=()),
        tols=dict(ACCUM_TOLS), differentiable=True, grad_op=_grad, grad_samples=extremum_grad,
        error_inputs=reduction_errors(empty_error=True)))
for _name in ("argmax", "argmin"):
    add(OpEntry(
        _name, getattr(np, _name), getattr(onp, _name), "reduction", ALL_DTYPES,
        lambda dt, rng, doms: reduction_samples(axis_tuple=False)(dt, rng, doms, empty_axes=()),
        error_inputs=reduction_errors(allow_tuple=False, empty_error=True)))

for _name in ("all", "any", "count_nonzero"):
    add(OpEntry(
        _name, getattr(np, _name), getattr(onp, _name), "reduction", ALL_DTYPES,
        reduction_samples(domain=Domain(-1, 1)), error_inputs=reduction_errors()))


def _ddof_samples(dtype_kwarg=(), domain=Domain()):
    def make(dtype, rng, domains, empty_axes=()):
        out = reduction_samples(dtype_kwarg=dtype_kwarg, domain=domain)(dtype, rng, domains,
                                                                        empty_axes)
        x = make_arg((3, 4), dtype, rng, domain)
        out += [Sample((x,), {"ddof": 1}, "ddof=1"), Sample((x,), {"axis": 0, "ddof": 2},
                                                             "axis=0-ddof=2")]
        return out
    return make


# Composites of ops (python/ndx/numpy/_composites.py); their gradients come from the ops
# they are made of (test_ufuncs.py checks them through autograd).
# float32: the deviations are summed in another order than NumPy's (within 1e-4).
VAR_TOLS = dict(ACCUM_TOLS, float32=(1e-4, 1e-5))
# (NumPy's nanvar with dtype=float64 stores float32 input's deviations in float32; ndx keeps
# them in float64, so dtype= is compared for var and std only.)
for _name in ("var", "std", "nanvar", "nanstd"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "reduction", NUMERIC,
                _ddof_samples(dtype_kwarg=() if _name.startswith("nan") else ("float64",)),
                tols=VAR_TOLS,
                error_inputs=reduction_errors()))
for _name in ("ptp", "nanmax", "nanmin"):
    add(OpEntry(
        _name, getattr(np, _name), getattr(onp, _name), "reduction", NUMERIC,
        lambda dt, rng, doms: reduction_samples()(dt, rng, doms, empty_axes=()),
        error_inputs=reduction_errors(empty_error=True)))
for _name in ("nansum", "nanprod", "nanmean"):
    add(OpEntry(
        _name, getattr(np, _name), getattr(onp, _name), "reduction", NUMERIC,
        reduction_samples(domain=Domain(-1.5, 1.5)), tols=dict(ACCUM_TOLS),
        error_inputs=reduction_errors()))
for _name in ("nanargmax", "nanargmin"):
    add(OpEntry(
        _name, getattr(np, _name), getattr(onp, _name), "reduction", NUMERIC,
        lambda dt, rng, doms: reduction_samples(axis_tuple=False)(dt, rng, doms, empty_axes=()),
        error_inputs=reduction_errors(allow_tuple=False, empty_error=True)))


def _average_samples(dtype, rng, domains):
    # NumPy divides by the result's size: zero-size inputs with an empty result fail there.
    out = [s for s in reduction_samples(axis_tuple=False)(dtype, rng, domains)
           if s.args[0].size or s.kwargs.get("axis") in (None, 0)]
    x = make_arg((3, 4), dtype, rng)
    w = make_arg((3, 4), "float32", rng, Domain(0.5, 2))
    out += [Sample((x,), {"weights": w}, "weights"),
            Sample((x,), {"axis": 1, "weights": w[0]}, "1d-weights-axis=1"),
            Sample((x,), {"axis": 0, "weights": w, "returned": True}, "returned")]
    return out


add(OpEntry("average", np.average, onp.average, "reduction", NUMERIC, _average_samples,
            tols=dict(ACCUM_TOLS),
            # weights promote with the input as in NumPy, except that integer input makes
            # at least ndx's default float32 (NumPy's float64)
            expected_dtype=lambda np_dt, arrays, kw, dt: (
                onp.result_type(arrays[0].dtype, kw["weights"].dtype, onp.float32)
                if "weights" in kw and arrays[0].dtype.kind in "iub"
                else default_expected_dtype(np_dt, arrays, kw, dt)),
            error_inputs=lambda: [
                ErrorInput((_f((2, 3)),), {"weights": _f((3,))}, TypeError, "1d-weights-no-axis",
                           TypeError),
                ErrorInput((_f((2, 3)),), {"weights": onp.zeros((2, 3))}, ZeroDivisionError,
                           "zero-weights", ZeroDivisionError)]))


def _where_samples(dtype, rng, domains):
    out = []
    for s in ELEMWISE_SHAPES:
        c = make_arg(s, "bool", rng)
        out.append(Sample((c, make_arg(s, dtype, rng), make_arg(s, dtype, rng)), name=f"shape{s}"))
    x, y = make_arg((2, 3), dtype, rng), make_arg((3,), dtype, rng)
    out += [Sample((make_arg((3,), "bool", rng), x, y), name="broadcast"),
            Sample((make_arg((2, 1), "bool", rng), x, 0), name="pyint"),
            Sample((make_arg((2, 3), "int8", rng, Domain(-1, 1)), x, y), name="int-condition"),
            Sample((make_arg((2, 3), "float32", rng, Domain(-1, 1)), x, y),
                   name="float-condition")]
    return out


add(OpEntry("where", np.where, onp.where, "like", ALL_DTYPES, _where_samples,
            error_inputs=lambda: [
                ErrorInput((_f((2,)) > 0, _f((3,)), _f((2,))), {}, ValueError, "broadcast",
                           ValueError),
                ErrorInput((_f((2,)) > 0, _f((2,))), {}, ValueError, "only-x", ValueError)]))


def _sort_samples(dtype, rng, domains):
    out = []
    for shape in ((), (0,), (0, 3), (7,), (3, 4), (2, 3, 4)):
        x = make_arg(shape, dtype, rng, Domain(-3, 3))  # small range: many ties
        # NumPy's sort refuses a 0-d array unless axis=None; its argsort takes it
        out.append(Sample((x,), {"axis": None} if shape == () else {}, f"shape{shape}"))
        if len(shape) >= 1:
            out.append(Sample((x,), {"axis": 0}, f"shape{shape}-axis=0"))
            out.append(Sample((x,), {"axis": None}, f"shape{shape}-axis=None"))
        if len(shape) >= 2:
            out.append(Sample((x,), {"axis": 1, "kind": "stable"}, f"shape{shape}-axis=1"))
    if is_float(dtype):
        x = onp.array([3.0, onp.nan, -0.0, 0.0, onp.inf, -onp.inf, 1.0, onp.nan, -2.0],
                      dtype=dtype)
        out.append(Sample((x,), {}, "nan-inf-signed-zeros"))
    big = make_arg((2, 3000), dtype, rng, Domain(-1000, 1000))
    out.append(Sample((big,), {}, "long-lanes"))
    return out


def _sort_errors(numpy_checks_kind=True):
    x = _f((2, 3))
    return lambda: [
        ErrorInput((x,), {"axis": 2}, AXIS_ERR, "axis=2-on-2d", NP_AXIS_ERR),
        ErrorInput((x,), {"kind": "bubble"}, ValueError, "unknown-kind",
                   ValueError if numpy_checks_kind else None)]


def _distinct_values(rng):
    x = rng.permutation(24).reshape(2, 3, 4) * 0.5 + 0.01 * rng.uniform(size=(2, 3, 4))
    return [GradSample((x,), {}, "axis=-1"), GradSample((x,), {"axis": 0}, "axis=0"),
            GradSample((x,), {"axis": None}, "axis=None")]


add(OpEntry("sort", np.sort, onp.sort, "shape", ALL_DTYPES, _sort_samples,
            differentiable=True, grad_op="_np_sort", grad_samples=_distinct_values,
            error_inputs=_sort_errors()))
add(OpEntry("argsort", np.argsort, lambda a, kind=None, **kw: onp.argsort(a, kind="stable", **kw),
            "shape", ALL_DTYPES, _sort_samples, error_inputs=_sort_errors(False)))


def _scan_samples(dtype, rng, domains):
    out = []
    for shape in ((), (0,), (0, 3), (7,), (3, 4), (2, 3, 4)):
        x = make_arg(shape, dtype, rng, Domain(-2, 2))
        out.append(Sample((x,), {}, f"shape{shape}"))
        if len(shape) >= 1:
            out.append(Sample((x,), {"axis": 0}, f"shape{shape}-axis=0"))
            out.append(Sample((x,), {"axis": -1}, f"shape{shape}-axis=-1"))
    x = make_arg((3, 4), dtype, rng, Domain(-2, 2))
    out += [Sample((x,), {"axis": 1, "dtype": "float64"}, "dtype=float64"),
            Sample((x,), {"axis": 0, "dtype": "int64"}, "dtype=int64")]
    if is_float(dtype):
        y = make_arg((2, 5), dtype, rng)
        y[0, 2] = onp.nan
        y[1, 0] = 0
        out.append(Sample((y,), {"axis": 1}, "nan-and-zero"))
    return out


def _scan_grad(rng):
    x = rng.uniform(0.5, 1.5, (2, 3, 4)) * rng.choice([-1.0, 1.0], (2, 3, 4))
    z = x.copy()
    z[0, 1, 2] = 0.0  # cumprod's gradient stays exact at a zero
    z[1, 2, 0] = 0.0
    return [GradSample((x,), {"axis": 1}, "axis=1"), GradSample((x,), {}, "axis=None"),
            GradSample((z,), {"axis": 2}, "zeros-axis=2"), GradSample((z,), {"axis": 0},
                                                                       "zeros-axis=0")]


def _scan_errors():
    return [ErrorInput((_f((2, 3)),), {"axis": 2}, AXIS_ERR, "axis=2-on-2d", NP_AXIS_ERR),
            ErrorInput((_f(()),), {"axis": 1}, AXIS_ERR, "axis=1-on-0d", NP_AXIS_ERR)]


for _name in ("cumsum", "cumprod"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "shape", ALL_DTYPES,
                _scan_samples, tols=dict(ACCUM_TOLS), differentiable=True,
                grad_op="_np_" + _name, grad_samples=_scan_grad, error_inputs=_scan_errors))
for _name in ("nancumsum", "nancumprod"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "shape", ALL_DTYPES,
                _scan_samples, tols=dict(ACCUM_TOLS)))


def _cumulative_samples(dtype, rng, domains):
    x = make_arg((3, 4), dtype, rng, Domain(-2, 2))
    return [Sample((make_arg((5,), dtype, rng, Domain(-2, 2)),), {}, "1d"),
            Sample((make_arg((0,), dtype, rng),), {}, "empty"),
            Sample((make_arg((), dtype, rng, Domain(-2, 2)),), {}, "0d"),
            Sample((x,), {"axis": 1}, "axis=1"),
            Sample((x,), {"axis": 0, "include_initial": True}, "include_initial")]


for _name in ("cumulative_sum", "cumulative_prod"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "shape", ALL_DTYPES,
                _cumulative_samples, tols=dict(ACCUM_TOLS), error_inputs=lambda: [
                    ErrorInput((_f((2, 3)),), {}, ValueError, "2d-without-axis", ValueError)]))


# NumPy's 13 methods (Hyndman & Fan's nine and four of its own).
QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
                    "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "median_unbiased", "normal_unbiased")


def _quantile_samples(q_of):
    def make(dtype, rng, domains):
        out = []
        for shape, kw in (((7,), {}), ((3, 4), {}), ((3, 4), {"axis": 0}),
                          ((3, 4), {"axis": 1, "keepdims": True}),
                          ((2, 3, 4), {"axis": (0, 2)}), ((2, 3, 4), {"keepdims": True}),
                          ((), {}), ((0, 3), {"axis": 1})):
            x = make_arg(shape, dtype, rng, Domain(-5, 5))
            out.append(Sample((x,) + q_of(0), kw, f"shape{shape}-{kw}"))
        x = make_arg((4, 6), dtype, rng, Domain(-5, 5))
        for i in range(1, 3):
            out.append(Sample((x,) + q_of(i), {"axis": 1}, f"q{i}"))
        if q_of(0):
            for m in QUANTILE_METHODS:
                out.append(Sample((x,) + q_of(1), {"axis": 0, "method": m}, f"method={m}"))
                out.append(Sample((x,) + q_of(0), {"axis": 1, "method": m}, f"method={m}-q"))
        if is_float(dtype):
            y = x.copy()
            y[1, 3] = onp.nan
            out.append(Sample((y,) + q_of(0), {"axis": 1}, "nan-row"))
        return out
    return make


def _quantile_dtype(np_dt, arrays, kw, dt):
    """NumPy's: a picking method keeps the input dtype, the others give the input's float
    dtype promoted with q's (a float64 array q: float64); integers give ndx's float32 where
    NumPy's float64 comes only from its default."""
    if kw.get("method") in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation"):
        return onp.dtype(dt)
    q_f64 = any(isinstance(q, onp.ndarray) and q.dtype == onp.float64 for q in arrays[1:])
    if q_f64:
        return onp.dtype("float64")
    return onp.dtype(dt) if is_float(dt) else onp.dtype("float32")


_QS = ((0.5,), (onp.array([0.0, 0.25, 1.0]),), (0.3,))
add(OpEntry("quantile", np.quantile, onp.quantile, "reduction", NUMERIC,
            _quantile_samples(lambda i: _QS[i]), tols=dict(ACCUM_TOLS),
            expected_dtype=_quantile_dtype,
            error_inputs=lambda: [ErrorInput((_f((3,)), 1.5), {}, ValueError, "q>1", ValueError),
                                  ErrorInput((_f((3,)), 0.5), {"method": "bogus"}, ValueError,
                                             "unknown-method", ValueError)]))
add(OpEntry("percentile", np.percentile, onp.percentile, "reduction", NUMERIC,
            _quantile_samples(lambda i: tuple(v * 100 for v in _QS[i])), tols=dict(ACCUM_TOLS),
            expected_dtype=_quantile_dtype,
            error_inputs=lambda: [ErrorInput((_f((3,)), 150), {}, ValueError, "q>100",
                                             ValueError)]))
add(OpEntry("median", np.median, onp.median, "reduction", NUMERIC,
            _quantile_samples(lambda i: ()), tols=dict(ACCUM_TOLS),
            expected_dtype=_quantile_dtype))




def _nan_quantile_samples(q_of):
    plain = _quantile_samples(q_of)

    def make(dtype, rng, domains):
        out = plain(dtype, rng, domains)
        if is_float(dtype):
            y = make_arg((4, 6), dtype, rng, Domain(-5, 5))
            y[3, :] = onp.nan  # an all-NaN slice (not the first: NumPy's result dtype is then
            # the first slice's, float32 for a float64 q, as its apply_along_axis works)
            y[1, ::2] = onp.nan
            y[2, 5] = onp.nan
            out.append(Sample((y,) + q_of(1), {"axis": 1}, "nans-axis1"))
            out.append(Sample((y,) + q_of(0), {"axis": 0, "keepdims": True}, "nans-axis0"))
            out.append(Sample((y,) + q_of(2), {}, "nans-all"))
            if q_of(0):
                for m in QUANTILE_METHODS:
                    out.append(Sample((y,) + q_of(1), {"axis": 1, "method": m},
                                      f"nans-method={m}"))
        return out
    return make


for _name, _q_of in (("nanquantile", lambda i: _QS[i]),
                     ("nanpercentile", lambda i: tuple(v * 100 for v in _QS[i])),
                     ("nanmedian", lambda i: ())):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "reduction", NUMERIC,
                _nan_quantile_samples(_q_of), tols=dict(ACCUM_TOLS),
                expected_dtype=_quantile_dtype))

def _isclose_extra(dtype, rng):
    out = _nan_pair(dtype, rng)
    if is_float(dtype):
        a = onp.array([1.0, 1.0, 1e-9, onp.inf, -onp.inf, onp.inf, 0.0], dtype=dtype)
        b = onp.array([1.0 + 1e-6, 1.1, 0.0, onp.inf, onp.inf, 1e30, -0.0], dtype=dtype)
        out.append(Sample((a, b), name="near-and-infinite"))
        out.append(Sample((a, b), {"rtol": 0.2, "atol": 0.0}, name="rtol"))
        n = onp.array([onp.nan, 1.0], dtype=dtype)
        out.append(Sample((n, n), {"equal_nan": True}, name="equal_nan"))
    return out


add(OpEntry("isclose", np.isclose, onp.isclose, "binary", ALL_DTYPES,
            binary_samples(_isclose_extra), domains=(SMALL, SMALL),
            error_inputs=binary_errors(out_of_range_scalar=False)))



# Searching and sets: outputs whose shapes depend on the values ----------------------------
def _search_samples(dtype, rng, domains):
    out = []
    for shape in ((), (0,), (0, 3), (7,), (3, 4), (2, 3, 4)):
        out.append(Sample((make_arg(shape, dtype, rng, Domain(-2, 2)),), {}, f"shape{shape}"))
    if is_float(dtype):
        out.append(Sample((onp.array([onp.nan, 1.0, onp.nan, -0.0, 0.0, 1.0], dtype=dtype),), {},
                          "nan-zeros"))
    return out


def _no_0d(samples):
    def make(dtype, rng, domains):
        return [s for s in samples(dtype, rng, domains) if s.args[0].ndim]
    return make


# where with the condition alone is nonzero
add(OpEntry("where1", np.where, onp.where, "search", ALL_DTYPES, _no_0d(_search_samples)))
add(OpEntry("nonzero", np.nonzero, onp.nonzero, "search", ALL_DTYPES, _no_0d(_search_samples),
            error_inputs=lambda: [ErrorInput((_f(()),), {}, ValueError, "0d", ValueError)]))
for _name in ("argwhere", "flatnonzero"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "search", ALL_DTYPES,
                _search_samples))
# (NumPy 2.4's unique_values / counts / inverse / all may return the values unsorted; ndx's
# are sorted, so test_ufuncs.py compares them with np.unique.)


def _unique_samples(dtype, rng, domains):
    out = _search_samples(dtype, rng, domains)
    x = make_arg((4, 5), dtype, rng, Domain(-3, 3))
    out += [Sample((x,), {"return_index": True}, "return_index"),
            Sample((x,), {"return_inverse": True}, "return_inverse"),
            Sample((x,), {"return_counts": True, "return_index": True}, "counts-index"),
            Sample((x,), {"return_index": True, "return_inverse": True, "return_counts": True},
                   "all")]
    rows = make_arg((6, 3), dtype, rng, Domain(0, 2))  # few distinct values: repeated rows
    out += [Sample((rows,), {"axis": 0, "return_counts": True}, "axis0"),
            Sample((rows,), {"axis": -1, "return_inverse": True}, "axis-1")]
    if is_float(dtype):
        y = onp.array([onp.nan, 2.0, onp.nan, 1.0], dtype=dtype)
        out.append(Sample((y,), {"equal_nan": False}, "equal_nan=False"))
    return out


add(OpEntry("unique", np.unique, onp.unique, "search", ALL_DTYPES, _unique_samples,
            error_inputs=lambda: [ErrorInput((_f((2, 3)),), {"axis": 2}, ValueError, "axis",
                                             ValueError)]))


def _pair_samples(dtype, rng, domains):
    out = []
    for sa, sb in (((7,), (5,)), ((0,), (3,)), ((3, 4), (6,)), ((), (4,)), ((5,), (0,))):
        out.append(Sample((make_arg(sa, dtype, rng, Domain(-4, 4)),
                           make_arg(sb, dtype, rng, Domain(-4, 4))), {}, f"{sa}-{sb}"))
    x, y = make_arg((6,), dtype, rng, Domain(-4, 4)), make_arg((4,), dtype, rng, Domain(-4, 4))
    out.append(Sample((x, y), {"invert": True}, "invert"))
    return out


add(OpEntry("isin", np.isin, onp.isin, "search", ALL_DTYPES, _pair_samples))
add(OpEntry("in1d", np.in1d,
            lambda a, b, invert=False: onp.isin(onp.ravel(a), b, invert=invert),
            "search", ALL_DTYPES, _pair_samples))
def _set_op_samples(dtype, rng, domains):
    out = [s for s in _pair_samples(dtype, rng, domains) if not s.kwargs]
    if is_float(dtype):  # NaN in each input: NumPy keeps a NaN per input where NaN != NaN
        x, y = make_arg((5,), dtype, rng, Domain(-2, 2)), make_arg((4,), dtype, rng, Domain(-2, 2))
        x[1], y[2] = onp.nan, onp.nan
        out.append(Sample((x, y), {}, "nans"))
    # Mixed dtypes: the result has their common dtype.
    other = onp.array([1.5, 2.0, -1.0]) if dtype != "float64" else onp.array([1, 2], "int8")
    out.append(Sample((make_arg((6,), dtype, rng, Domain(-3, 3)), other), {}, "mixed-dtypes"))
    return out


for _name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "search", ALL_DTYPES,
                _set_op_samples))


def _searchsorted_samples(dtype, rng, domains):
    out = []
    for n, vshape in ((9, (5,)), (0, (3,)), (9, ()), (9, (2, 3)), (9, (0,))):
        a = onp.sort(make_arg((n,), dtype, rng, Domain(-4, 4)))
        v = make_arg(vshape, dtype, rng, Domain(-5, 5))
        out.append(Sample((a, v), {}, f"n{n}-v{vshape}"))
        out.append(Sample((a, v), {"side": "right"}, f"n{n}-v{vshape}-right"))
    a = make_arg((8,), dtype, rng, Domain(-4, 4))
    out.append(Sample((a, make_arg((4,), dtype, rng, Domain(-4, 4))),
                      {"sorter": onp.argsort(a, kind="stable")}, "sorter"))
    if is_float(dtype):
        a = onp.array([-onp.inf, -1.0, 0.0, 2.0, onp.inf, onp.nan], dtype=dtype)
        v = onp.array([onp.nan, -0.0, onp.inf, -onp.inf, 1.0], dtype=dtype)
        out.append(Sample((a, v), {}, "specials"))
        out.append(Sample((a, v), {"side": "right"}, "specials-right"))
    return out


add(OpEntry("searchsorted", np.searchsorted, onp.searchsorted, "search", ALL_DTYPES,
            _searchsorted_samples,
            error_inputs=lambda: [ErrorInput((_f((2, 3)), _f((2,))), {}, ValueError, "2d-a",
                                             ValueError),
                                  ErrorInput((_f((3,)), _f((2,))), {"side": "middle"},
                                             ValueError, "bad-side", ValueError)]))


def _take_samples(dtype, rng, domains):
    x = make_arg((3, 4), dtype, rng)
    return [Sample((x, onp.array([2, 0, 2])), {}, "flat"),
            Sample((x, onp.array([[1, 0], [2, 2]])), {"axis": 0}, "axis=0-2d-indices"),
            Sample((x, onp.array([3, -1])), {"axis": 1}, "axis=1-negative"),
            Sample((x, onp.array([5, -7])), {"axis": 1, "mode": "wrap"}, "wrap"),
            Sample((x, onp.array([5, -7])), {"axis": 1, "mode": "clip"}, "clip"),
            Sample((make_arg((0, 3), dtype, rng), onp.array([1])), {"axis": 1}, "zero-size"),
            Sample((make_arg((), dtype, rng), onp.array([0, 0])), {}, "0d")]


add(OpEntry("take", np.take, onp.take, "search", ALL_DTYPES, _take_samples,
            error_inputs=lambda: [
                ErrorInput((_f((3,)), onp.array([3])), {}, IndexError, "out-of-range",
                           IndexError),
                ErrorInput((_f((3,)), onp.array([1.0])), {}, TypeError, "float-indices",
                           TypeError)]))


def _compress_samples(dtype, rng, domains):
    x = make_arg((3, 4), dtype, rng)
    return [Sample((onp.array([True, False, True]), x), {"axis": 0}, "axis=0"),
            Sample((onp.array([False, True]), x), {"axis": 1}, "short-condition"),
            Sample((onp.array([1, 0, 0, 1, 1]), x), {}, "flat"),
            Sample((onp.array([True]), make_arg((1, 0), dtype, rng)), {"axis": 0}, "zero-size")]


add(OpEntry("compress", np.compress, onp.compress, "search", ALL_DTYPES, _compress_samples,
            error_inputs=lambda: [ErrorInput((onp.array([True] * 4), _f((3,))), {}, IndexError,
                                             "too-long", None)]))


def _extract_samples(dtype, rng, domains):
    x = make_arg((3, 4), dtype, rng)
    return [Sample((x > 0 if dtype != "bool" else x, x), {}, "mask"),
            Sample((onp.zeros((0,), dtype=bool), make_arg((0,), dtype, rng)), {}, "empty")]


add(OpEntry("extract", np.extract, onp.extract, "search", ALL_DTYPES, _extract_samples))



def _diff_samples(dtype, rng, domains):
    x = make_arg((3, 5), dtype, rng, Domain(-3, 3))
    return [Sample((make_arg((6,), dtype, rng, Domain(-3, 3)),), {}, "1d"),
            Sample((x,), {"axis": 0}, "axis=0"), Sample((x,), {"n": 2}, "n=2"),
            Sample((x,), {"n": 0}, "n=0"),
            Sample((make_arg((0, 3), dtype, rng),), {"axis": 0}, "zero-size"),
            Sample((x,), {"prepend": 1, "append": make_arg((3, 2), dtype, rng, Domain(0, 2))},
                   "prepend-append")]


add(OpEntry("diff", np.diff, onp.diff, "search", ALL_DTYPES, _diff_samples,
            error_inputs=lambda: [ErrorInput((_f(()),), {}, ValueError, "0d", ValueError),
                                  ErrorInput((_f((3,)),), {"n": -1}, ValueError, "n<0",
                                             ValueError)]))
# (NumPy refuses an int64 to_begin for uint8 input.)
add(OpEntry("ediff1d", np.ediff1d, onp.ediff1d, "search", SIGNED + FLOATS, lambda dt, rng, d: [
    Sample((make_arg((2, 3), dt, rng, Domain(-3, 3)),), {}, "2d"),
    Sample((make_arg((4,), dt, rng, Domain(-3, 3)),), {"to_begin": 1, "to_end": [2, 3]},
           "begin-end"),
    Sample((make_arg((0,), dt, rng),), {}, "empty")]))
add(OpEntry("trapezoid", np.trapezoid, onp.trapezoid, "search", FLOATS, lambda dt, rng, d: [
    Sample((make_arg((5,), dt, rng),), {}, "1d"),
    Sample((make_arg((3, 4), dt, rng),), {"axis": 0, "dx": 0.5}, "dx"),
    Sample((make_arg((3, 4), dt, rng), onp.sort(make_arg((4,), dt, rng))), {}, "x")],
    tols=dict(ACCUM_TOLS)))


def _bincount_samples(dtype, rng, domains):
    x = make_arg((20,), dtype, rng, Domain(0, 6))
    return [Sample((x,), {}, "counts"), Sample((x,), {"minlength": 10}, "minlength"),
            Sample((x,), {"weights": rng.uniform(-1, 1, 20)}, "weights"),
            Sample((make_arg((0,), dtype, rng),), {}, "empty")]


add(OpEntry("bincount", np.bincount, onp.bincount, "search", ("bool", "int8", "int32", "int64",
                                                                   "uint8"),
            _bincount_samples, tols=dict(ACCUM_TOLS),
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [
                ErrorInput((onp.array([1, -1]),), {}, ValueError, "negative", ValueError),
                ErrorInput((onp.array([[1]]),), {}, ValueError, "2d", ValueError),
                ErrorInput((_f((3,)),), {}, TypeError, "floats", TypeError)]))
def _bins(dtype):
    return onp.array([0, 1, 2, 4] if dtype == "uint8" else [-2, 0, 1, 3], dtype=dtype)


add(OpEntry("digitize", np.digitize, onp.digitize, "search", NUMERIC, lambda dt, rng, d: [
    Sample((make_arg((3, 4), dt, rng, Domain(-5, 5)), _bins(dt)), {}, "increasing"),
    Sample((make_arg((7,), dt, rng, Domain(-5, 5)), _bins(dt)[::-1].copy()), {"right": True},
           "decreasing-right"),
    Sample((make_arg((0,), dt, rng), onp.array([0, 1], dtype=dt)), {}, "empty")]))


def _histogram_samples(dtype, rng, domains):
    x = make_arg((50,), dtype, rng, Domain(-3, 3))
    return [Sample((x,), {}, "default"), Sample((x,), {"bins": 4, "range": (-1, 2)}, "range"),
            Sample((x,), {"bins": onp.array([-3.0, -1.0, 0.0, 2.5])}, "edges"),
            Sample((x,), {"bins": 5, "density": True}, "density"),
            Sample((x,), {"bins": 3, "weights": rng.uniform(0, 1, 50)}, "weights"),
            Sample((x,), {"bins": 3, "weights": rng.integers(0, 9, 50).astype(onp.int32)},
                   "int32-weights"),  # counts of the weights' dtype
            Sample((make_arg((0,), dtype, rng),), {"bins": 3}, "empty")] + [
        Sample((make_arg((57,), dtype, rng, Domain(-9, 9)),), {"bins": name, "range": rg},
               f"bins={name}-range={rg}")
        for name in ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")
        for rg in (None, (-2.0, 4.0))]


add(OpEntry("histogram", np.histogram, onp.histogram, "search", NUMERIC, _histogram_samples,
            tols=dict(ACCUM_TOLS),
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [
                ErrorInput((_f((5,)),), {"bins": "bogus"}, ValueError, "unknown-estimator",
                           ValueError),
                ErrorInput((_f((5,)),), {"bins": "auto", "weights": _f((5,))}, TypeError,
                           "weighted-estimator", TypeError)]))
def _bin_edges_samples(dtype, rng, domains):
    return [s for s in _histogram_samples(dtype, rng, domains) if "density" not in s.kwargs]


add(OpEntry("histogram_bin_edges", np.histogram_bin_edges, onp.histogram_bin_edges, "search",
            NUMERIC, _bin_edges_samples, tols=dict(ACCUM_TOLS),
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt)))


def _cov_samples(dtype, rng, domains):
    return [Sample((make_arg((3, 6), dtype, rng),), {}, "rows"),
            Sample((make_arg((6, 3), dtype, rng),), {"rowvar": False}, "columns"),
            Sample((make_arg((5,), dtype, rng), make_arg((5,), dtype, rng)), {}, "x-y"),
            Sample((make_arg((2, 5), dtype, rng),), {"bias": True}, "bias"),
            Sample((make_arg((3, 6), dtype, rng),), {"fweights": [1, 3, 0, 2, 1, 1]},
                   "fweights"),
            Sample((make_arg((3, 6), dtype, rng),), {"aweights": onp.linspace(0.2, 2.0, 6)},
                   "aweights"),
            Sample((make_arg((6, 2), dtype, rng),),
                   {"rowvar": False, "ddof": 2, "fweights": onp.array([2, 1, 1, 3, 1, 2]),
                    "aweights": [0.5, 1.0, 1.5, 0.25, 2.0, 1.0]}, "both-weights-ddof")]


add(OpEntry("cov", np.cov, onp.cov, "search", FLOATS[1:], _cov_samples, tols=dict(ACCUM_TOLS),
            error_inputs=lambda: [
                ErrorInput((_f((2, 4)),), {"fweights": [1.5, 1, 1, 1]}, TypeError,
                           "fractional-fweights", TypeError),
                ErrorInput((_f((2, 4)),), {"aweights": [1, -1, 1, 1]}, ValueError,
                           "negative-aweights", ValueError),
                # NumPy raises RuntimeError for a count that does not match: ndx ValueError
                ErrorInput((_f((2, 4)),), {"fweights": [1, 1, 1]}, ValueError,
                           "fweights-count")]))
add(OpEntry("corrcoef", np.corrcoef, onp.corrcoef, "search", FLOATS[1:],
            lambda dt, rng, d: [s for s in _cov_samples(dt, rng, d)
                                if "bias" not in s.kwargs and "weights" not in s.name],
            tols=dict(ACCUM_TOLS)))


def _conv_samples(dtype, rng, domains):
    a, v = make_arg((7,), dtype, rng, Domain(-3, 3)), make_arg((3,), dtype, rng, Domain(-3, 3))
    out = []
    for mode in ("valid", "same", "full"):
        out += [Sample((a, v), {"mode": mode}, f"{mode}"),
                Sample((v, a), {"mode": mode}, f"{mode}-swapped"),
                Sample((a, make_arg((4,), dtype, rng, Domain(-3, 3))), {"mode": mode},
                       f"{mode}-even")]
    return out


for _name in ("correlate", "convolve"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "search", NUMERIC,
                _conv_samples, tols=dict(ACCUM_TOLS)))
add(OpEntry("select", np.select, onp.select, "search", NUMERIC, lambda dt, rng, d: [
    Sample(([onp.array([True, False, False, True]), onp.array([True, True, False, False])],
            [make_arg((4,), dt, rng), make_arg((4,), dt, rng)]), {}, "two"),
    Sample(([onp.array([[True, False]])], [make_arg((2, 2), dt, rng)]), {"default": 1},
           "broadcast-default")]))
add(OpEntry("choose", np.choose, onp.choose, "search", NUMERIC, lambda dt, rng, d: [
    Sample((onp.array([0, 2, 1, 0]), [make_arg((4,), dt, rng), make_arg((4,), dt, rng),
                                      make_arg((4,), dt, rng)]), {}, "three"),
    Sample((onp.array([[0], [1]]), [make_arg((3,), dt, rng), make_arg((3,), dt, rng)]), {},
           "broadcast"),
    Sample((onp.array([3, -1]), [make_arg((2,), dt, rng), make_arg((2,), dt, rng)]),
           {"mode": "clip"}, "clip")],
    error_inputs=lambda: [ErrorInput((onp.array([2]), [_f((1,)), _f((1,))]), {}, ValueError,
                                     "out-of-range", ValueError),
                          # (fuzz seed 55: a dict of choices was a KeyError)
                          ErrorInput((onp.zeros((2, 0, 3), onp.int32), {}), {}, TypeError,
                                     "dict-choices", TypeError),
                          ErrorInput((onp.zeros((2, 0, 3), onp.int32), []), {}, ValueError,
                                     "no-choices", ValueError)]))
add(OpEntry("lexsort", np.lexsort, onp.lexsort, "search", NUMERIC, lambda dt, rng, d: [
    Sample(([make_arg((9,), dt, rng, Domain(0, 2)), make_arg((9,), dt, rng, Domain(0, 2))],),
           {}, "two-keys"),
    Sample(([make_arg((0,), dt, rng)],), {}, "empty"),
    Sample(([make_arg((4, 5), dt, rng, Domain(0, 2)) for _ in range(3)],), {}, "2d-last-axis"),
    Sample(([make_arg((4, 5), dt, rng, Domain(0, 2)) for _ in range(2)],), {"axis": 0},
           "2d-axis0"),
    Sample((make_arg((2, 3, 4, 2), dt, rng, Domain(0, 2)),), {"axis": -2}, "array-of-keys"),
    Sample(([make_arg((3, 0), dt, rng)],), {"axis": 0}, "zero-size-2d"),
    Sample(([make_arg((), dt, rng)],), {}, "0d")],
    error_inputs=lambda: [ErrorInput(([_f((2,)), _f((3,))],), {}, ValueError, "shapes",
                                     ValueError),
                          ErrorInput(([_f((2, 3))],), {"axis": 2}, AXIS_ERR, "axis",
                                     NP_AXIS_ERR)]))


# Shape ops --------------------------------------------------------------------------------
def shape_samples(cases):
    """cases: [(name, input shapes (one, or a list for sequence ops), extra positional args,
    kwargs)]."""
    def make(dtype, rng, domains):
        out = []
        for name, shapes, extra, kw in cases:
            if isinstance(shapes, list):
                first = [make_arg(s, dtype, rng) for s in shapes]
            else:
                first = make_arg(shapes, dtype, rng)
            out.append(Sample((first,) + tuple(extra), dict(kw), name))
        return out
    return make


def shape_grad(cases):
    def make(rng):
        out = []
        for name, shapes, params in cases:
            out.append(GradSample(tuple(make_arg(s, "float64", rng) for s in shapes), params,
                                  name))
        return out
    return make


add(OpEntry(
    "reshape", np.reshape, onp.reshape, "shape", ALL_DTYPES, shape_samples([
        ("(2,3,4)->(6,4)", (2, 3, 4), [(6, 4)], {}),
        ("(2,3,4)->(-1,)", (2, 3, 4), [(-1,)], {}),
        ("(2,3,4)->(4,-1,2)", (2, 3, 4), [(4, -1, 2)], {}),
        ("()->(1,1)", (), [(1, 1)], {}),
        ("(1,)->()", (1,), [()], {}),
        ("(1,1)->()", (1, 1), [()], {}),
        ("(0,3)->(3,0)", (0, 3), [(3, 0)], {}),
        ("(0,3)->(-1,)", (0, 3), [(-1,)], {}),
        ("(0,3)->(3,0,1)", (0, 3), [(3, 0, 1)], {}),
        ("(6,)->(2,3)", (6,), [(2, 3)], {}),
    ]),
    differentiable=True, grad_op="_np_reshape",
    grad_samples=shape_grad([("(2,3)->(3,2)", [(2, 3)], {"newshape": (3, 2)}),
                             ("()->(1,)", [()], {"newshape": (1,)})]),
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), (4,)), {}, ValueError, "size-mismatch", ValueError),
        ErrorInput((_f((2, 3)), (-1, -1)), {}, ValueError, "two-unknowns", ValueError),
        ErrorInput((_f((2, 3)), (-1, 4)), {}, ValueError, "unknown-not-divisible", ValueError),
        ErrorInput((_f(()), (2,)), {}, ValueError, "0d-to-(2,)", ValueError)]))
add(OpEntry(
    "transpose", np.transpose, onp.transpose, "shape", ALL_DTYPES, shape_samples([
        ("(2,3,4)-default", (2, 3, 4), [], {}),
        ("(2,3,4)-(1,0,2)", (2, 3, 4), [(1, 0, 2)], {}),
        ("(2,3,4)-(-1,0,1)", (2, 3, 4), [(-1, 0, 1)], {}),
        ("(3,4)-(1,0)", (3, 4), [(1, 0)], {}),
        ("()", (), [], {}),
        ("()-()", (), [()], {}),
        ("(0,3)", (0, 3), [], {}),
        ("(5,)", (5,), [(0,)], {}),
    ]),
    differentiable=True, grad_op="_np_transpose",
    grad_samples=shape_grad([("(2,3,4)-(2,0,1)", [(2, 3, 4)], {"axes": (2, 0, 1)}),
                             ("(2,3)-default", [(2, 3)], {})]),
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), (0,)), {}, ValueError, "axes-too-short", ValueError),
        ErrorInput((_f((2, 3)), (0, 0)), {}, ValueError, "repeated-axis", ValueError),
        ErrorInput((_f((2, 3)), (0, 2)), {}, AXIS_ERR, "axis-out-of-range", NP_AXIS_ERR)]))
add(OpEntry(
    "expand_dims", np.expand_dims, onp.expand_dims, "shape", ALL_DTYPES, shape_samples([
        ("(2,3)-axis0", (2, 3), [0], {}),
        ("(2,3)-axis-1", (2, 3), [-1], {}),
        ("(2,3)-axis1", (2, 3), [1], {}),
        ("(2,3)-axis2", (2, 3), [2], {}),
        ("()-axis0", (), [0], {}),
        ("(0,3)-axis1", (0, 3), [1], {}),
    ]),
    differentiable=True, grad_op="_np_expand_dims",
    grad_samples=shape_grad([("(2,3)-axis1", [(2, 3)], {"axis": 1})]),
    error_inputs=lambda: [
        ErrorInput((_f((3,)), 2), {}, AXIS_ERR, "axis-too-big", NP_AXIS_ERR),
        ErrorInput((_f((3,)), -3), {}, AXIS_ERR, "axis-too-small", NP_AXIS_ERR)]))
add(OpEntry(
    "squeeze", np.squeeze, onp.squeeze, "shape", ALL_DTYPES, shape_samples([
        ("(1,3,1)-all", (1, 3, 1), [], {}),
        ("(1,3,1)-axis0", (1, 3, 1), [0], {}),
        ("(1,3,1)-axis(0,2)", (1, 3, 1), [(0, 2)], {}),
        ("(1,3,1)-axis-1", (1, 3, 1), [-1], {}),
        ("()-all", (), [], {}),
        ("(1,1)-all", (1, 1), [], {}),
        ("(0,1)-axis1", (0, 1), [1], {}),
        ("(0,3)-all", (0, 3), [], {}),
    ]),
    differentiable=True, grad_op="_np_squeeze",
    grad_samples=shape_grad([("(1,3,1)", [(1, 3, 1)], {})]),
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), 0), {}, ValueError, "axis-size-not-1", ValueError),
        ErrorInput((_f((1, 3)), 2), {}, AXIS_ERR, "axis-out-of-range", NP_AXIS_ERR)]))
add(OpEntry(
    "swapaxes", np.swapaxes, onp.swapaxes, "shape", ALL_DTYPES, shape_samples([
        ("(2,3,4)-0,2", (2, 3, 4), [0, 2], {}),
        ("(2,3,4)--1,0", (2, 3, 4), [-1, 0], {}),
        ("(2,3)-1,1", (2, 3), [1, 1], {}),
        ("(0,3)-0,1", (0, 3), [0, 1], {}),
    ]),
    differentiable=True, grad_op="_np_swapaxes",
    grad_samples=shape_grad([("(2,3,4)-0,2", [(2, 3, 4)], {"axis1": 0, "axis2": 2})]),
    error_inputs=lambda: [
        ErrorInput((_f(()), 0, 0), {}, AXIS_ERR, "0d", NP_AXIS_ERR),
        ErrorInput((_f((2, 3)), 0, 2), {}, AXIS_ERR, "axis-out-of-range", NP_AXIS_ERR)]))
add(OpEntry(
    "broadcast_to", np.broadcast_to, onp.broadcast_to, "shape", ALL_DTYPES, shape_samples([
        ("(3,)->(2,3)", (3,), [(2, 3)], {}),
        ("()->(2,2)", (), [(2, 2)], {}),
        ("()->()", (), [()], {}),
        ("(3,1)->(2,3,4)", (3, 1), [(2, 3, 4)], {}),
        ("(1,3)->(0,3)", (1, 3), [(0, 3)], {}),
        ("(0,3)->(2,0,3)", (0, 3), [(2, 0, 3)], {}),
    ]),
    differentiable=True, grad_op="_np_broadcast_to",
    grad_samples=shape_grad([("(3,1)->(2,3,4)", [(3, 1)], {"shape": (2, 3, 4)}),
                             ("()->(2,)", [()], {"shape": (2,)})]),
    error_inputs=lambda: [
        ErrorInput((_f((3,)), (4,)), {}, ValueError, "(3,)->(4,)", ValueError),
        ErrorInput((_f((2, 3)), (3,)), {}, ValueError, "fewer-dims", ValueError),
        ErrorInput((_f((3,)), (-1, 3)), {}, ValueError, "negative-dim", ValueError)]))


def _collapse_ref(x, like):
    return ndx.test_utils.collapse_sum_like(x, onp.shape(like)).astype(x.dtype)


def _broadcast_like_ref(x, like):
    return onp.broadcast_to(x, onp.shape(like))


def pair_samples(cases):
    """cases: [(name, x shape, like shape)] -> samples of two array arguments."""
    def make(dtype, rng, domains):
        return [Sample((make_arg(a, dtype, rng), make_arg(b, dtype, rng)), {}, name)
                for name, a, b in cases]
    return make


# The broadcasting pair used by gradients (each one's gradient is the other).
NUMERIC_DTYPES = tuple(d for d in ALL_DTYPES if d != "bool")
add(OpEntry(
    "astype", lambda a, dtype: ndx.nd._npi_astype(a, dtype=dtype),
    lambda a, dtype: a.astype(dtype), "shape", ALL_DTYPES, shape_samples([
        ("(2,3)->float64", (2, 3), ["float64"], {}),
        ("()->int32", (), ["int32"], {}),
        ("(0,3)->float16", (0, 3), ["float16"], {}),
    ]),
    expected_dtype=lambda result, *_: result,  # the dtype asked for, whatever the input
    differentiable=True, grad_op="_npi_astype",
    grad_samples=shape_grad([("(2,3)->float64", [(2, 3)], {"dtype": "float64"})]),
    error_inputs=lambda: [ErrorInput((_f((2,)), "U5"), {}, TypeError, "str-dtype", None)]))
add(OpEntry(
    "collapse_sum_like", ndx.nd._npi_collapse_sum_like, _collapse_ref, "shape", NUMERIC_DTYPES,
    pair_samples([
        ("(2,3)->(3,)", (2, 3), (3,)),
        ("(2,3,4)->(3,1)", (2, 3, 4), (3, 1)),
        ("(2,3)->()", (2, 3), ()),
        ("()->()", (), ()),
        ("(0,3)->(3,)", (0, 3), (3,)),
    ]),
    differentiable=True, grad_op="_npi_collapse_sum_like",
    grad_samples=shape_grad([("(2,3)->(1,3)", [(2, 3), (1, 3)], {})]),
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((4,))), {}, ValueError, "not-broadcastable", None)]))
add(OpEntry(
    "cast_like", ndx.nd._npi_cast_like, lambda x, like: x.astype(like.dtype), "shape", ALL_DTYPES,
    pair_samples([("(2,3)", (2, 3), (1,)), ("()", (), (4,)), ("(0,3)", (0, 3), (2,))]),
    expected_dtype=lambda result, *_: result))
_PY_SCALAR_KINDS = (bool, int, float)


def _weak_scalar_ref(like, value, kind):
    """NumPy's NEP 50 dtype of a Python scalar of `kind` (0 bool, 1 int, 2 float) meeting
    like's dtype, as a 0-d array holding the value."""
    scalar = bool(int(value)) if kind == 0 else _PY_SCALAR_KINDS[kind](value)
    return onp.array(scalar, dtype=onp.result_type(like.dtype, scalar))


add(OpEntry(
    "weak_scalar_like",
    lambda like, value, kind: ndx.nd._npi_weak_scalar_like(like, value=value, kind=kind),
    _weak_scalar_ref, "shape", ALL_DTYPES, shape_samples([
        ("(2,3)+int", (2, 3), ["1", 1], {}),
        ("()+float", (), ["2.5", 2], {}),
        ("(0,3)+bool", (0, 3), ["1", 0], {}),
    ]),
    error_inputs=lambda: [
        ErrorInput((_f((2,)), "1.0", 5), {}, ValueError, "kind", None),
        ErrorInput((_f((2,)), "relu", 2), {}, ValueError, "not-a-number", None),
        ErrorInput((onp.ones(2, "uint8"), "300", 1), {}, OverflowError, "uint8-300", None)]))
add(OpEntry(
    "broadcast_like", ndx.nd._npi_broadcast_like, _broadcast_like_ref, "shape", ALL_DTYPES,
    pair_samples([
        ("(3,)->(2,3)", (3,), (2, 3)),
        ("()->(2,2)", (), (2, 2)),
        ("(3,1)->(2,3,4)", (3, 1), (2, 3, 4)),
        ("(1,3)->(0,3)", (1, 3), (0, 3)),
    ]),
    differentiable=True, grad_op="_npi_broadcast_like",
    grad_samples=shape_grad([("(3,1)->(2,3,4)", [(3, 1), (2, 3, 4)], {})]),
    error_inputs=lambda: [
        ErrorInput((_f((3,)), _f((4,))), {}, ValueError, "(3,)->(4,)", None)]))
add(OpEntry(
    "concatenate", np.concatenate, onp.concatenate, "shape", ALL_DTYPES, shape_samples([
        ("2x(2,3)-axis0", [(2, 3), (2, 3)], [], {"axis": 0}),
        ("(2,3)+(2,1)-axis1", [(2, 3), (2, 1)], [], {"axis": 1}),
        ("3x(2,2)-axis-1", [(2, 2), (2, 2), (2, 2)], [], {"axis": -1}),
        ("(2,3)+(1,3)-axisNone", [(2, 3), (1, 3)], [], {"axis": None}),
        ("1d", [(3,), (4,)], [], {}),
        ("one-array", [(2, 3)], [], {}),
        ("(0,3)+(2,3)", [(0, 3), (2, 3)], [], {"axis": 0}),
        ("(2,0)+(2,0)-axis1", [(2, 0), (2, 0)], [], {"axis": 1}),
    ]),
    differentiable=True, grad_op="_npi_concatenate",
    grad_samples=shape_grad([("(2,3)+(2,1)-axis1", [(2, 3), (2, 1)],
                              {"num_args": 2, "axis": 1}),
                             ("(1,2)+(3,2)-axis0", [(1, 2), (3, 2)],
                              {"num_args": 2, "axis": 0})]),
    error_inputs=lambda: [
        ErrorInput(([_f((2, 3)), _f((3,))],), {}, ValueError, "mismatched-ndim", ValueError),
        ErrorInput(([_f((2, 3)), _f((2, 4))],), {"axis": 0}, ValueError, "mismatched-shape",
                   ValueError),
        ErrorInput(([_f((2, 3)), _f((2, 3))],), {"axis": 2}, AXIS_ERR, "axis-out-of-range",
                   NP_AXIS_ERR),
        ErrorInput(([_f(()), _f(())],), {}, ValueError, "0d-arrays", ValueError),
        ErrorInput(([],), {}, ValueError, "empty-sequence", ValueError)]))
add(OpEntry(
    "stack", np.stack, onp.stack, "shape", ALL_DTYPES, shape_samples([
        ("2x(2,3)-axis0", [(2, 3), (2, 3)], [], {"axis": 0}),
        ("2x(2,3)-axis1", [(2, 3), (2, 3)], [], {"axis": 1}),
        ("3x(2,3)-axis-1", [(2, 3)] * 3, [], {"axis": -1}),
        ("3x()", [(), (), ()], [], {}),
        ("2x(0,3)-axis1", [(0, 3), (0, 3)], [], {"axis": 1}),
        ("one-array", [(4,)], [], {}),
    ]),
    differentiable=True, grad_op="_npi_stack",
    grad_samples=shape_grad([("2x(2,3)-axis1", [(2, 3), (2, 3)], {"num_args": 2, "axis": 1})]),
    error_inputs=lambda: [
        ErrorInput(([_f((2, 3)), _f((3, 2))],), {}, ValueError, "mismatched-shape", ValueError),
        ErrorInput(([_f((2, 3)), _f((2, 3))],), {"axis": 3}, AXIS_ERR, "axis-out-of-range",
                   NP_AXIS_ERR),
        ErrorInput(([],), {}, ValueError, "empty-sequence", ValueError)]))
add(OpEntry(
    "split", np.split, onp.split, "shape", ALL_DTYPES, shape_samples([
        ("(6,4)-3-sections", (6, 4), [3], {}),
        ("(6,4)-2-sections-axis1", (6, 4), [2], {"axis": 1}),
        ("(6,4)-indices[1,3]-axis1", (6, 4), [[1, 3]], {"axis": 1}),
        ("(6,)-indices[2,10]", (6,), [[2, 10]], {}),
        ("(6,)-indices[4,2]", (6,), [[4, 2]], {}),
        ("(6,)-1-section", (6,), [1], {}),
        ("(0,3)-3-sections", (0, 3), [3], {}),
        ("(2,3)-axis-1", (2, 3), [3], {"axis": -1}),
    ]),
    error_inputs=lambda: [
        ErrorInput((_f((5,)), 2), {}, ValueError, "unequal-division", ValueError),
        ErrorInput((_f((6,)), 2), {"axis": 1}, AXIS_ERR, "axis-out-of-range", IndexError),
        ErrorInput((_f(()), 1), {}, ValueError, "0d", None)]))

# np.pad and np.take_along_axis run the one-pass _npi_pad / _npi_take_along_axis on the CPU
# (take_along_axis's gradient, whose indices are ints: test_manipulation.py).
add(OpEntry(
    "pad", np.pad, onp.pad, "shape", ALL_DTYPES, shape_samples([
        ("(3,4)-1", (3, 4), [1], {}),
        ("(2,3,4)-reflect", (2, 3, 4), [((1, 0), (2, 1), (3, 3))], {"mode": "reflect"}),
        ("(5,)-edge", (5,), [(2, 3)], {"mode": "edge"}),
        ("(3,4)-symmetric-wide", (3, 4), [((4, 0), (5, 9))], {"mode": "symmetric"}),
        ("(3,4)-wrap", (3, 4), [2], {"mode": "wrap"}),
        ("(3,4)-constant-3", (3, 4), [(1, 2)], {"constant_values": 3}),
        ("()-2", (), [2], {}),
        ("(0,3)-constant", (0, 3), [1], {}),
        ("(3,4)-reflect-odd-wide", (3, 4), [((2, 5), (1, 4))],
         {"mode": "reflect", "reflect_type": "odd"}),
        ("(5,)-symmetric-odd-wide", (5,), [(7, 2)], {"mode": "symmetric", "reflect_type": "odd"}),
        ("(3,4)-mean-stat_length", (3, 4), [(2, 1)],
         {"mode": "mean", "stat_length": ((1, 2), (3, 1))}),
        ("(4,5)-median-stat_length", (4, 5), [2], {"mode": "median", "stat_length": 2}),
        ("(3,4)-maximum-stat_length", (3, 4), [(1, 2)], {"mode": "maximum", "stat_length": (2, 1)}),
        ("(3,4)-minimum", (3, 4), [(2, 0)], {"mode": "minimum"}),
    ]),
    differentiable=True, grad_op="_npi_pad",
    grad_samples=shape_grad([
        ("(3,4)-reflect", [(3, 4)], {"pad_width": (2, 1, 3, 3), "mode": "reflect"}),
        ("(2,3)-wrap-wide", [(2, 3)], {"pad_width": (3, 0, 1, 7), "mode": "wrap"}),
        ("(4,)-edge", [(4,)], {"pad_width": (2, 3), "mode": "edge"}),
        ("(2,2,3)-symmetric", [(2, 2, 3)], {"pad_width": (1, 1, 0, 2, 4, 0),
                                             "mode": "symmetric"}),
        ("(3,2)-constant", [(3, 2)], {"pad_width": (1, 2, 2, 1), "constant_value": 5.0})]),
    error_inputs=lambda: [
        ErrorInput((_f((3,)), -1), {}, ValueError, "negative-width", ValueError),
        ErrorInput((_f((2, 0)), 1), {"mode": "edge"}, ValueError, "extend-empty", ValueError),
        ErrorInput((_f((3,)), 1), {"mode": "bogus"}, ValueError, "bad-mode", ValueError),
        ErrorInput((_f((3,)), 1), {"mode": "maximum", "stat_length": 0}, ValueError,
                   "zero-stat_length", ValueError),
        ErrorInput((_f((3,)), 1), {"mode": "reflect", "reflect_type": "bogus"}, ValueError,
                   "bad-reflect_type", None)]))
add(OpEntry(
    "take_along_axis", np.take_along_axis, onp.take_along_axis, "shape", ALL_DTYPES,
    shape_samples([
        ("(3,4)-axis1", (3, 4), [onp.array([[3, 0], [-1, 2], [1, 1]])], {"axis": 1}),
        ("(3,4)-axis0", (3, 4), [onp.array([[2, 0, 1, -3]], dtype=onp.int32)], {"axis": 0}),
        ("(2,3,4)-axis-1", (2, 3, 4), [onp.zeros((2, 3, 6), dtype=onp.int64)], {"axis": -1}),
        ("(3,4)-broadcast-axis1", (3, 4), [onp.array([[1], [2], [3]])], {"axis": 1}),
        ("(0,4)-axis1", (0, 4), [onp.zeros((0, 2), dtype=onp.int64)], {"axis": 1}),
    ]),
    error_inputs=lambda: [
        ErrorInput((_f((3, 4)), onp.array([[4]] * 3)), {"axis": 1}, IndexError, "out-of-range",
                   IndexError),
        ErrorInput((_f((3, 4)), onp.array([0])), {"axis": 1}, ValueError, "ndim-mismatch",
                   ValueError)]))

# MXNet's take (mode clip by default; NumPy's modes), the _npi_take kernel: rows copied along
# the axis, the indices' shape in its place; its gradient adds the rows back (repeats summed).
add(OpEntry(
    "npi_take", lambda a, idx, **kw: ndx.nd._npi_take(a, idx, **kw),
    lambda a, idx, axis=0, mode="clip": onp.take(a, idx, axis=axis, mode=mode), "shape",
    ALL_DTYPES, shape_samples([
        ("(3,4)-axis1-clip", (3, 4), [onp.array([[3, 0], [-1, 7]])], {"axis": 1}),
        ("(3,4)-axis0-wrap", (3, 4), [onp.array([5, -4, 1])], {"axis": 0, "mode": "wrap"}),
        ("(2,3,4)-axis-1-raise", (2, 3, 4), [onp.array([[0, -1, 2]])],
         {"axis": -1, "mode": "raise"}),
        ("(4,)-0d-indices", (4,), [onp.array(2)], {}),
        ("(3,4)-empty-indices", (3, 4), [onp.zeros((0,), dtype=onp.int64)], {"axis": 1}),
    ]),
    error_inputs=lambda: [  # (its gradient: test_manipulation.py)
        ErrorInput((_f((3, 4)), onp.array([4])), {"axis": 1, "mode": "raise"}, IndexError,
                   "out-of-range", IndexError),
        ErrorInput((_f(()), onp.array([0])), {}, ValueError, "0-d", None),
        ErrorInput((_f((3, 4)), onp.array([0])), {"mode": "nearest"}, ValueError, "mode",
                   ValueError)]))

# packbits / unpackbits: the _npi_packbits / _npi_unpackbits kernels (shape.cc), SIMD for bytes.
_BITS_CASES = [("()", (), {}), ("(0,)", (0,), {}), ("(13,)", (13,), {}),
               ("(3,20)-axis1", (3, 20), {"axis": 1}), ("(17,3)-axis0", (17, 3), {"axis": 0}),
               ("(2,9,3)-axis-2-little", (2, 9, 3), {"axis": -2, "bitorder": "little"}),
               ("(4,0)-axis0", (4, 0), {"axis": 0}), ("(5,136)", (5, 136), {"bitorder": "little"}),
               ("(3,1000)-axis-1", (3, 1000), {"axis": -1})]


def _unpackbits_samples(dtype, rng, domains):
    """Every byte value; count cuts, pads and drops (NumPy leaves the padding of an empty
    input uninitialized, so padding is tried on non-empty ones only)."""
    def byte(shape):
        return rng.integers(0, 256, size=shape).astype(onp.uint8)
    out = [Sample((byte(shape),), dict(kw), name) for name, shape, kw in _BITS_CASES]
    out += [Sample((byte((3, 4)),), {"axis": 1, "count": 5}, "count-cut"),
            Sample((byte((3, 4)),), {"axis": 0, "count": 30, "bitorder": "little"}, "count-pad"),
            Sample((byte((9,)),), {"count": -13}, "count-negative"),
            Sample((byte((2, 3)),), {"axis": -1, "count": 0}, "count-zero")]
    return out


add(OpEntry(
    "packbits", np.packbits, onp.packbits, "shape", BOOL + INTS + ("uint16", "uint64"),
    lambda dt, rng, d: [Sample((make_arg(shape, dt, rng, Domain(-2, 2)),), dict(kw), name)
                        for name, shape, kw in _BITS_CASES],
    error_inputs=lambda: [
        ErrorInput((_f((3,)),), {}, TypeError, "float", TypeError),
        ErrorInput((onp.ones(3, "int32"),), {"bitorder": "middle"}, ValueError, "bad-bitorder",
                   ValueError),
        ErrorInput((onp.ones((2, 3), "int32"),), {"axis": 2}, AXIS_ERR, "axis-out-of-range",
                   NP_AXIS_ERR),
        ErrorInput((onp.ones(3, "int32"),), {"axis": 0.0}, TypeError, "float-axis", TypeError)]))
add(OpEntry(
    "unpackbits", np.unpackbits, onp.unpackbits, "shape", ("uint8",), _unpackbits_samples,
    error_inputs=lambda: [
        ErrorInput((onp.ones(3, "int8"),), {}, TypeError, "int8", TypeError),
        ErrorInput((onp.ones(2, "uint8"),), {"count": -17}, ValueError, "count-below-zero",
                   ValueError),
        ErrorInput((onp.ones(2, "uint8"),), {"count": 2.5}, TypeError, "float-count", TypeError),
        ErrorInput((onp.ones(2, "uint8"),), {"bitorder": "BIG"}, ValueError, "bad-bitorder",
                   ValueError)]))

# matmul / dot -------------------------------------------------------------------------------
MM_DOMAIN = Domain(-3, 3)


def mm_samples(cases):
    def make(dtype, rng, domains):
        return [Sample((make_arg(a, dtype, rng, MM_DOMAIN), make_arg(b, dtype, rng, MM_DOMAIN)),
                       name=f"{a}@{b}") for a, b in cases]
    return make


add(OpEntry(
    "matmul", np.matmul, onp.matmul, "matmul", ALL_DTYPES, mm_samples([
        ((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 2, 3), (3, 4)),
        ((2, 1, 2, 3), (3, 3, 2)), ((3, 2, 3), (3, 3, 2)), ((0, 3), (3, 4)), ((2, 0), (0, 3)),
        ((0,), (0,)), ((1, 1), (1, 1)), ((5, 7), (7, 6))]),
    tols=dict(ACCUM_TOLS), differentiable=True, grad_op="_np_matmul",
    grad_samples=lambda rng: [
        GradSample((make_arg(a, "float64", rng), make_arg(b, "float64", rng)), {}, f"{a}@{b}")
        for a, b in (((2, 3), (3, 2)), ((3,), (3, 2)), ((2, 2, 3), (3,)), ((2, 1, 2, 3),
                                                                          (2, 3, 2)))],
    error_inputs=lambda: [
        ErrorInput((_f(()), _f((3,))), {}, ValueError, "0d-lhs", ValueError),
        ErrorInput((_f((3,)), _f(())), {}, ValueError, "0d-rhs", ValueError),
        ErrorInput((_f((2, 3)), _f((4, 2))), {}, ValueError, "core-mismatch", ValueError),
        ErrorInput((_f((2, 2, 3)), _f((3, 3, 4))), {}, ValueError, "batch-mismatch",
                   ValueError)]))
add(OpEntry(
    "dot", np.dot, onp.dot, "matmul", ALL_DTYPES, mm_samples([
        ((2, 3), (3, 4)), ((3,), (3,)), ((), (3,)), ((3, 2), ()), ((), ()), ((2, 3), (3,)),
        ((3,), (3, 2)), ((2, 3, 4), (4, 2)), ((2, 3, 4), (2, 4, 3)), ((0, 3), (3, 2)),
        ((2, 0), (0, 3)), ((0,), (0,))]),
    tols=dict(ACCUM_TOLS), differentiable=True, grad_op="_np_dot",
    grad_samples=lambda rng: [
        GradSample((make_arg(a, "float64", rng), make_arg(b, "float64", rng)), {}, f"{a}.{b}")
        for a, b in (((2, 3), (3, 2)), ((3,), (3,)), ((), (3,)), ((2, 3, 2), (2, 2)))],
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((2, 3))), {}, ValueError, "not-aligned", ValueError),
        ErrorInput((_f((3,)), _f((4,))), {}, ValueError, "1d-not-aligned", ValueError)]))

# *_like -------------------------------------------------------------------------------------
for _name in ("zeros_like", "ones_like"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "like", ALL_DTYPES,
                unary_samples(), differentiable=True, grad_op="_np_" + _name,
                grad_samples=unary_grad(Domain(-1, 1))))



def _full_like_samples(dtype, rng, domains):
    return [Sample(s.args, {"fill_value": v}, f"{s.name}-fill{v}")
            for s in unary_samples()(dtype, rng, domains) for v in (3.0, 2.5)]


add(OpEntry("full_like", np.full_like, onp.full_like, "like", ALL_DTYPES, _full_like_samples,
            differentiable=True, grad_op="_np_full_like",
            grad_samples=lambda rng: [GradSample((rng.uniform(-1, 1, (2, 3)),),
                                                 {"fill_value": 2.0}, "shape(2,3)")]))

# Creation ---------------------------------------------------------------------------------
CREATION_DTYPES = (None,) + ALL_DTYPES


def creation_samples(cases):
    """cases: [(name, args, kwargs, dtypes it applies to or None for all)]."""
    def make(dtype, rng, domains):
        return [Sample(tuple(args), dict(kw), name) for name, args, kw, only in cases
                if only is None or dtype in only]
    return make


SHAPES_CASES = [("shape()", [()], {}, None), ("shape(0,3)", [(0, 3)], {}, None),
                ("shape5", [5], {}, None), ("shape(2,3)", [(2, 3)], {}, None)]
NEG_SHAPE = "negative-shape"

for _name in ("zeros", "ones", "empty"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "creation", CREATION_DTYPES,
                creation_samples(SHAPES_CASES),
                error_inputs=lambda n=_name: [
                    ErrorInput(((-1,),), {}, ValueError, NEG_SHAPE, ValueError),
                    ErrorInput(((2, -3),), {}, ValueError, NEG_SHAPE + "-2d", ValueError)]))


def _full_cases():
    cases = []
    for name, args, _, _ in SHAPES_CASES:
        cases.append((name + "-fill7", args + [7], {}, None))
    cases += [("fill2.5", [(2, 3), 2.5], {}, (None,) + FLOATS),
              ("fillTrue", [(2,), True], {}, None),
              ("fill-3", [(2,), -3], {}, (None,) + SIGNED + FLOATS)]
    return cases


add(OpEntry("full", np.full, onp.full, "creation", CREATION_DTYPES,
            creation_samples(_full_cases()),
            error_inputs=lambda: [
                ErrorInput(((-1,), 1.0), {}, ValueError, NEG_SHAPE, ValueError),
                ErrorInput(((2,), -1), {"dtype": "uint8"}, OverflowError,
                           "negative-fill-for-uint8", OverflowError)]))
NO_BOOL = (None,) + NUMERIC
add(OpEntry("arange", np.arange, onp.arange, "creation", NO_BOOL, creation_samples([
    ("5", [5], {}, None),
    ("2,10,3", [2, 10, 3], {}, None),
    ("5,1,-1", [5, 1, -1], {}, SIGNED + FLOATS + (None,)),
    ("3,3-empty", [3, 3], {}, None),
    ("0", [0], {}, None),
    ("0.,1.,.1", [0.0, 1.0, 0.1], {}, (None,) + FLOATS),
    ("-1.5,2.5,0.5", [-1.5, 2.5, 0.5], {}, (None,) + FLOATS),
    ("2.5", [2.5], {}, (None,) + FLOATS)]),
    error_inputs=lambda: [ErrorInput((0, 5, 0), {}, ZeroDivisionError, "step-0",
                                     ZeroDivisionError)]))
add(OpEntry("linspace", np.linspace, onp.linspace, "creation", CREATION_DTYPES,
            creation_samples([
                ("0,1,5", [0, 1, 5], {}, FLOATS + (None,)),
                ("0,10,6", [0, 10, 6], {}, None),
                # Integer dtypes round toward -inf (NumPy 2); negative values only for
                # signed results (float -> uint8 of a negative value is undefined).
                ("-3,5,7", [-3, 5, 7], {}, (None,) + SIGNED + FLOATS),
                ("2,-4,4-endpoint=False", [2, -4, 4], {"endpoint": False},
                 (None,) + SIGNED + FLOATS),
                ("1,6,4", [1, 6, 4], {}, NO_BOOL),
                ("num=0", [0, 1, 0], {}, None),
                ("num=1", [3, 5, 1], {}, NO_BOOL),
                ("0,1,2-bool", [0, 1, 2], {}, None)]),
            error_inputs=lambda: [ErrorInput((0, 1, -1), {}, ValueError, "negative-num",
                                             ValueError)]))
add(OpEntry("eye", np.eye, onp.eye, "creation", CREATION_DTYPES, creation_samples([
    ("3", [3], {}, None), ("3,4,k=1", [3, 4], {"k": 1}, None), ("4,3,k=-2", [4, 3, -2], {}, None),
    ("2,k=5", [2], {"k": 5}, None), ("0", [0], {}, None), ("3,0", [3, 0], {}, None)]),
    error_inputs=lambda: [ErrorInput((-1,), {}, ValueError, "negative-N", ValueError),
                          ErrorInput((3, -1), {}, ValueError, "negative-M", ValueError)]))

# ===================================================================== npx: neural network
# The ops of ndx.npx (registered as _npx_*). Elementwise activations use kind "unary" (0-d and
# zero-size samples included); the others use kind "shape" so that test_ops runs their forward
# and non-contiguous checks (test_ops has no kind of its own for them). References compute in
# float64 and cast to the input dtype.
from ndx import npx  # noqa: E402


def _f64(fn):
    """A reference computed in float64 and cast back to the first array argument's dtype."""
    def ref(x, *args, **kwargs):
        x = onp.asarray(x)
        return onp.asarray(fn(x.astype(onp.float64), *args, **kwargs)).astype(x.dtype)
    return ref


def _erf_ref(x):
    """math.erf in float64; ints and bool give the default float (as np.exp does)."""
    x = onp.asarray(x)
    out = onp.vectorize(math.erf, otypes=[onp.float64])(x.astype(onp.float64))
    return out.astype(x.dtype if x.dtype.kind == "f" else onp.float32)


def _sigmoid_ref(x):
    return 1.0 / (1.0 + onp.exp(-x))


_ACT_REFS = {
    "relu": lambda x: onp.maximum(x, 0),
    "sigmoid": _sigmoid_ref,
    "tanh": onp.tanh,
    "softrelu": lambda x: onp.logaddexp(0, x),
    "log_sigmoid": lambda x: -onp.logaddexp(0, -x),
}


def _activation_ref(x, act_type):
    return _f64(_ACT_REFS[act_type])(x)


def _activation_samples(dtype, rng, domains):
    out = []
    for act in _ACT_REFS:
        for s in ELEMWISE_SHAPES:
            out.append(Sample((make_arg(s, dtype, rng, Domain(-4, 4)),), {"act_type": act},
                              f"{act}-shape{s}"))
    return out


def _float_grad(shape=(2, 3)):
    """float64 values away from 0 (relu's kink)."""
    return lambda rng: [GradSample((away_from_zero(rng, shape, 0.2, 2.0),), {}, f"shape{shape}")]


add(OpEntry(
    "npx.relu", npx.relu, lambda x: onp.maximum(x, onp.zeros((), x.dtype)), "unary", NUMERIC,
    unary_samples(SPECIAL), differentiable=True, grad_op="_npx_relu", grad_samples=_float_grad(),
    error_inputs=lambda: [ErrorInput((onp.array([True, False]),), {}, TypeError, "bool-input")]))
add(OpEntry(
    "npx.sigmoid", npx.sigmoid, _f64(_sigmoid_ref), "unary", FLOATS, unary_samples(SPECIAL),
    differentiable=True, grad_op="_npx_sigmoid", grad_samples=unary_grad(Domain(-3, 3)),
    error_inputs=lambda: [
        ErrorInput((onp.array([1, 2], dtype=onp.int32),), {}, TypeError, "int-input")]))
add(OpEntry(
    "npx.erf", npx.erf, _erf_ref, "unary", ALL_DTYPES,
    unary_samples(SPECIAL + (1.3, -3.9, 4.0, 1e-30)), differentiable=True, grad_op="_npx_erf",
    grad_samples=unary_grad(Domain(-2, 2))))
add(OpEntry(
    "npx.activation", npx.activation, _activation_ref, "unary", FLOATS, _activation_samples,
    differentiable=True, grad_op="_npx_activation",
    grad_samples=lambda rng: [
        GradSample((away_from_zero(rng, (2, 3), 0.2, 2.0),), {"act_type": a}, a)
        for a in _ACT_REFS],
    error_inputs=lambda: [
        # (no act_type: MXNet 2.0's default, relu; test_core_changes_review.py checks it)
        ErrorInput((_f((2,)),), {"act_type": "gelu"}, ValueError, "unknown-act_type"),
        ErrorInput((onp.array([1, 2], dtype=onp.int32),), {"act_type": "tanh"}, TypeError,
                   "int-input-tanh")]))


# npx.leaky_relu (MXNet's LeakyReLU family; rrelu is random in training and composed in
# Python, so the table checks its predict-mode value, the mean slope).
_SELU_L, _SELU_A = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
_GELU_C = math.sqrt(2 / math.pi)
_LEAKY_REFS = {
    "leaky": lambda x, slope: onp.where(x > 0, x, slope * x),
    "elu": lambda x, slope: onp.where(x > 0, x, slope * onp.expm1(x)),
    "selu": lambda x, slope: _SELU_L * onp.where(x > 0, x, _SELU_A * onp.expm1(x)),
    "gelu_erf": lambda x, slope: 0.5 * x * (1 + sps.erf(x / math.sqrt(2))),
    "gelu_tanh": lambda x, slope: 0.5 * x * (1 + onp.tanh(_GELU_C * (x + 0.044715 * x ** 3))),
}
_LEAKY_CASES = (("leaky", {}), ("leaky", {"slope": 0.1}), ("elu", {"slope": 1.0}),
                ("elu", {"slope": 0.5}), ("selu", {}), ("gelu_erf", {}), ("gelu", {}),
                ("gelu_tanh", {}), ("rrelu", {}))


def _leaky_relu_ref(x, act_type="leaky", slope=0.25, lower_bound=0.125, upper_bound=0.334):
    if act_type == "rrelu":
        act_type, slope = "leaky", (lower_bound + upper_bound) / 2
    fn = _LEAKY_REFS["gelu_erf" if act_type == "gelu" else act_type]
    return _f64(lambda v: fn(v, slope))(x)


def _leaky_relu_samples(dtype, rng, domains):
    out = []
    for act, kw in _LEAKY_CASES:
        for s in ELEMWISE_SHAPES:
            out.append(Sample((make_arg(s, dtype, rng, Domain(-4, 4)),),
                              dict(kw, act_type=act), f"{act}{kw}-shape{s}"))
        out.append(Sample((onp.array(SPECIAL, dtype=dtype),), dict(kw, act_type=act),
                          f"{act}{kw}-special"))
    return out


add(OpEntry(
    "npx.leaky_relu", npx.leaky_relu, _leaky_relu_ref, "unary", FLOATS, _leaky_relu_samples,
    differentiable=True, grad_op="_npx_leaky_relu",
    grad_samples=lambda rng: [
        GradSample((away_from_zero(rng, (2, 3), 0.2, 2.0),), dict(kw, act_type=act),
                   f"{act}{kw}") for act, kw in _LEAKY_CASES if act != "rrelu"],
    error_inputs=lambda: [
        ErrorInput((_f((2,)),), {"act_type": "swish"}, ValueError, "unknown-act_type"),
        ErrorInput((onp.array([1, 2], dtype=onp.int32),), {}, TypeError, "int-input"),
        ErrorInput((_f((2,)),), {"act_type": "prelu"}, ValueError, "prelu-without-gamma"),
        ErrorInput((_f((2,)),), {"act_type": "rrelu", "lower_bound": 0.5, "upper_bound": 0.1},
                   ValueError, "rrelu-bounds")]))


def _prelu_ref(x, gamma, act_type="prelu"):
    shape = [1] * x.ndim
    if x.ndim and gamma.shape[0] != 1:
        shape[1 if x.ndim >= 2 else 0] = -1
    g = gamma.astype(onp.float64).reshape(shape) if x.ndim else gamma.astype(onp.float64)[0]
    xf = x.astype(onp.float64)
    return onp.where(xf > 0, xf, xf * g).astype(x.dtype)


def _prelu_samples(dtype, rng, domains):
    cases = (("(2,3,4)-per-channel", (2, 3, 4), 3), ("(2,3,4)-one", (2, 3, 4), 1),
             ("(4,5)-per-channel", (4, 5), 5), ("(5,)-1d", (5,), 5), ("()-0d", (), 1),
             ("(0,3)-empty", (0, 3), 3), ("(2,1,3)-one-channel", (2, 1, 3), 1))
    return [Sample((make_arg(shape, dtype, rng, Domain(-3, 3)),
                    make_arg((c,), dtype, rng, Domain(0.05, 0.5))), {"act_type": "prelu"}, name)
            for name, shape, c in cases]


add(OpEntry(
    "npx.leaky_relu-prelu", npx.leaky_relu, _prelu_ref, "shape", FLOATS, _prelu_samples,
    differentiable=True, grad_op="_npx_leaky_relu",
    grad_samples=lambda rng: [
        GradSample((away_from_zero(rng, shape, 0.2, 2.0), rng.uniform(0.1, 0.5, size=(c,))),
                   {"act_type": "prelu"}, name)
        for name, shape, c in (("per-channel", (2, 3, 4), 3), ("one", (2, 3, 4), 1),
                               ("2d", (4, 2), 2), ("1d", (3,), 3), ("0d", (), 1))],
    error_inputs=lambda: [
        ErrorInput((_f((2, 3, 4)), _f((4,))), {"act_type": "prelu"}, ValueError,
                   "gamma-length"),
        ErrorInput((_f((2, 3)), _f((1, 3))), {"act_type": "prelu"}, ValueError, "gamma-2d"),
        ErrorInput((_f((2, 3)), _f((3,), "float64")), {"act_type": "prelu"}, TypeError,
                   "gamma-dtype")]))


# The npx activations and special functions; SciPy's special functions are the references.
def _float_ref(fn):
    """fn in float64, cast back to a float input's dtype (float32 for ints and bool)."""
    def ref(x):
        x = onp.asarray(x)
        with onp.errstate(all="ignore"):
            out = onp.asarray(fn(x.astype(onp.float64)))
        return out.astype(x.dtype if x.dtype.kind == "f" else onp.float32)
    return ref


def _npx_unary(name, ref, domain=Domain(), special=(), grad_domain=Domain(-2, 2),
               dtypes=ALL_DTYPES, tols=None):
    add(OpEntry(f"npx.{name}", getattr(npx, name), ref, "unary", dtypes,
                unary_samples(SPECIAL + tuple(special)), domains=(domain,),
                tols=dict(tols or ELEMWISE_TOLS), differentiable=grad_domain is not None,
                grad_op=f"_npx_{name}",
                grad_samples=unary_grad(grad_domain) if grad_domain else None))


_npx_unary("relu6", lambda x: onp.clip(x, 0, 6), Domain(-3, 9), (6.0, 7.5),
           Domain(0.5, 5.5), dtypes=NUMERIC)
_npx_unary("softsign", _float_ref(lambda x: x / (1 + onp.abs(x))))
_npx_unary("silu", _float_ref(lambda x: x * sps.expit(x)), special=(100.0, -100.0))
_npx_unary("gelu", _float_ref(lambda x: 0.5 * x * (1 + sps.erf(x / math.sqrt(2)))),
           special=(10.0, -10.0))
_npx_unary("mish", _float_ref(lambda x: x * onp.tanh(onp.logaddexp(x, 0))),
           special=(30.0, -30.0))
_npx_unary("log_sigmoid", _float_ref(lambda x: -onp.logaddexp(0, -x)), special=(100.0, -100.0),
           dtypes=FLOATS)
_npx_unary("gammaln", _float_ref(sps.gammaln), Domain(0.1, 10), (1.0, 2.0, -1.5, 170.0),
           Domain(0.5, 4), tols=dict(ELEMWISE_TOLS, float32=(2e-5, 1e-6)))
_npx_unary("gamma", _float_ref(sps.gamma), Domain(0.1, 6), (1.0, 5.0, -1.5, -2.0),
           Domain(0.5, 3), tols=dict(ELEMWISE_TOLS, float32=(2e-5, 1e-6)))
_npx_unary("digamma", _float_ref(sps.digamma), Domain(0.1, 10), (1.0, -1.0, -1.5, 0.5, 1e5),
           Domain(0.5, 4), tols=dict(ELEMWISE_TOLS, float64=(1e-10, 1e-13)))
_npx_unary("erfinv", _float_ref(sps.erfinv), Domain(-0.99, 0.99), (1.0, -1.0, 0.999, 2.0),
           Domain(-0.8, 0.8), tols=dict(ELEMWISE_TOLS, float64=(1e-11, 1e-13)))


def _softmax_ref(x, axis=-1):
    x = x.astype(onp.float64)
    e = onp.exp(x - onp.max(x, axis=axis, keepdims=True)) if x.size else x
    return e / onp.sum(e, axis=axis, keepdims=True) if x.size else x


def _log_softmax_ref(x, axis=-1):
    x = x.astype(onp.float64)
    if not x.size:
        return x
    m = onp.max(x, axis=axis, keepdims=True)
    return x - m - onp.log(onp.sum(onp.exp(x - m), axis=axis, keepdims=True))


def _axis_samples(cases, domain=Domain(-3, 3)):
    """cases: [(name, shape, kwargs)] -> one-array samples."""
    def make(dtype, rng, domains):
        return [Sample((make_arg(shape, dtype, rng, domain),), dict(kw), name)
                for name, shape, kw in cases]
    return make


SOFTMAX_CASES = [("(3,4)", (3, 4), {}), ("(3,4)-axis0", (3, 4), {"axis": 0}),
                 ("(2,3,4)-axis1", (2, 3, 4), {"axis": 1}), ("(5,)", (5,), {}),
                 ("(2,3,4)-axis-2", (2, 3, 4), {"axis": -2}), ("(0,3)", (0, 3), {}),
                 ("(3,0)-axis0", (3, 0), {"axis": 0})]


def _softmax_errors():
    return [ErrorInput((_f(()),), {}, AXIS_ERR, "0d"),
            ErrorInput((_f((2, 3)),), {"axis": 2}, AXIS_ERR, "axis-out-of-range"),
            ErrorInput((onp.ones((2, 3), dtype=onp.int32),), {}, TypeError, "int-input")]


def _softmax_grad(rng):
    x = make_arg((2, 3, 4), "float64", rng, Domain(-2, 2))
    return [GradSample((x,), {}, "axis-1"), GradSample((x,), {"axis": 0}, "axis0"),
            GradSample((x,), {"axis": 1}, "axis1")]


for _name, _ref in (("softmax", _softmax_ref), ("log_softmax", _log_softmax_ref)):
    add(OpEntry(
        "npx." + _name, getattr(npx, _name), _f64(_ref), "shape", FLOATS,
        _axis_samples(SOFTMAX_CASES), tols=dict(ACCUM_TOLS), differentiable=True,
        grad_op="_npx_" + _name, grad_samples=_softmax_grad, error_inputs=_softmax_errors))


def _fully_connected(data, weight, bias=None, **kwargs):
    """npx.fully_connected, with no_bias=True when called without a bias (the generated
    function always takes three arrays)."""
    if bias is None:
        from ndx._registry import ops
        return ndx._core._invoke(ops()["_npx_fully_connected"].handle, (data, weight),
                                 dict(kwargs, no_bias=True))
    return npx.fully_connected(data, weight, bias, **kwargs)


def _fc_ref(data, weight, bias=None, num_hidden=None, flatten=True, no_bias=False):
    x = data.astype(onp.float64)
    x = x.reshape(x.shape[0], int(onp.prod(x.shape[1:]))) if flatten else x
    y = x @ weight.astype(onp.float64).T
    if bias is not None:
        y = y + bias
    return y.astype(data.dtype)


def _fc_samples(dtype, rng, domains):
    out = []
    for name, ds, h, kw, bias in (("(2,3,2)-h4", (2, 3, 2), 4, {}, True),
                                  ("(5,3)-h2-no_bias", (5, 3), 2, {}, False),
                                  ("(2,3,5)-h4-flatten=False", (2, 3, 5), 4, {"flatten": False},
                                   True),
                                  ("(4,)-h3", (4,), 3, {}, True),
                                  ("(0,3)-h2", (0, 3), 2, {}, True)):
        x = make_arg(ds, dtype, rng, Domain(-1, 1))
        k = ds[-1] if kw.get("flatten") is False else int(onp.prod(ds[1:]))
        args = (x, make_arg((h, k), dtype, rng, Domain(-1, 1)))
        if bias:
            args += (make_arg((h,), dtype, rng, Domain(-1, 1)),)
        out.append(Sample(args, dict(kw, num_hidden=h), name))
    return out


add(OpEntry(
    "npx.fully_connected", _fully_connected, _fc_ref, "shape", FLOATS, _fc_samples,
    tols=dict(ACCUM_TOLS), differentiable=True, grad_op="_npx_fully_connected",
    grad_samples=lambda rng: [
        GradSample((make_arg((2, 3, 2), "float64", rng), make_arg((4, 6), "float64", rng),
                    make_arg((4,), "float64", rng)), {"num_hidden": 4}, "flatten"),
        GradSample((make_arg((3, 5), "float64", rng), make_arg((2, 5), "float64", rng)),
                   {"num_hidden": 2, "no_bias": True}, "no_bias"),
        GradSample((make_arg((2, 2, 3), "float64", rng), make_arg((4, 3), "float64", rng),
                    make_arg((4,), "float64", rng)), {"num_hidden": 4, "flatten": False},
                   "flatten=False")],
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((4, 2)), _f((4,))), {"num_hidden": 4}, ValueError,
                   "weight-shape"),
        ErrorInput((_f((2, 3)), _f((4, 3)), _f((3,))), {"num_hidden": 4}, ValueError,
                   "bias-shape"),
        ErrorInput((_f(()), _f((4, 1)), _f((4,))), {"num_hidden": 4}, ValueError, "0d-data"),
        ErrorInput((onp.ones((2, 3), dtype=onp.int32), _f((4, 3)), _f((4,))),
                   {"num_hidden": 4}, TypeError, "int-data"),
        ErrorInput((_f((2, 3)), _f((4, 3), "float64"), _f((4,))), {"num_hidden": 4},
                   TypeError, "weight-dtype")]))


def _softmax_output(data, label, **kwargs):
    """The registered SoftmaxOutput op (mx.nd.SoftmaxOutput wraps it with MXNet's signature)."""
    from ndx._registry import ops
    return ndx._core._invoke(ops()["SoftmaxOutput"].handle, (data, label), kwargs)


def _softmax_output_ref(data, label, multi_output=False, preserve_shape=False, **_):
    """MXNet's: along axis 1 with multi_output, the last axis with preserve_shape or two
    axes, else over each example's elements."""
    if multi_output:
        return _softmax_ref(data, axis=1)
    if preserve_shape or data.ndim <= 2:
        return _softmax_ref(data, axis=-1)
    return _softmax_ref(data.reshape(data.shape[0], -1), axis=-1).reshape(data.shape)


def _softmax_output_samples(dtype, rng, domains):
    out = []
    for name, ds, kw in (("(3,4)", (3, 4), {}), ("(2,3,4)-flattened", (2, 3, 4), {}),
                         ("(2,3,4)-preserve", (2, 3, 4), {"preserve_shape": True}),
                         ("(2,3,4)-multi", (2, 3, 4), {"multi_output": True}),
                         ("(0,4)", (0, 4), {})):
        ax = 1 if kw.get("multi_output") else len(ds) - 1
        lshape = tuple(d for i, d in enumerate(ds) if i != ax)
        out.append(Sample((make_arg(ds, dtype, rng), rng.integers(0, ds[ax], lshape)
                           .astype(dtype)), kw, name))
    return out


add(OpEntry(
    "SoftmaxOutput", _softmax_output, _f64(_softmax_output_ref), "shape", FLOATS,
    _softmax_output_samples, tols=dict(ACCUM_TOLS),
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((3,))), {}, ValueError, "label-shape"),
        ErrorInput((_f(()), _f(())), {}, ValueError, "0d"),
        ErrorInput((_f((2, 3)), _f((2,))), {"multi_output": True, "normalization": "all"},
                   ValueError, "bad-normalization"),
        ErrorInput((onp.ones((2, 3), dtype=onp.int32), _f((2,))), {}, TypeError, "int-data")]))


def _regression_samples(dtype, rng, domains):
    return [Sample((make_arg(ds, dtype, rng), make_arg(ls, dtype, rng)), {}, name)
            for name, ds, ls in (("(3,4)", (3, 4), (3, 4)), ("(5,1)-1d-label", (5, 1), (5,)),
                                 ("(2,3,4)", (2, 3, 4), (2, 3, 4)), ("(0,2)", (0, 2), (0, 2)))]


def _registered(name):
    """The registered op `name` as a function of arrays and params (no generated wrapper)."""
    from ndx._registry import ops
    handle = ops()[name].handle
    return lambda *arrays, **params: ndx._core._invoke(handle, arrays, params)


for _mx_name, _fwd in (("LinearRegressionOutput", lambda x: x),
                       ("LogisticRegressionOutput", lambda x: 1 / (1 + onp.exp(-x))),
                       ("MAERegressionOutput", lambda x: x)):
    add(OpEntry(
        _mx_name, _registered(_mx_name), _f64(lambda data, label, _f=_fwd, **_: _f(data)),
        "shape", FLOATS, _regression_samples,
        error_inputs=lambda: [
            ErrorInput((_f((2, 3)), _f((3, 2))), {}, ValueError, "label-shape"),
            ErrorInput((_f(()), _f(())), {}, ValueError, "0d"),
            ErrorInput((onp.ones((2, 3), dtype=onp.int32), _f((2, 3))), {}, TypeError,
                       "int-data")]))


def _pick_ref(data, index, axis=-1, keepdims=False, mode="clip"):
    n = data.shape[axis]
    idx = onp.trunc(onp.asarray(index, dtype=onp.float64)).astype(onp.int64)
    idx = onp.mod(idx, n) if mode == "wrap" else onp.clip(idx, 0, n - 1)
    ax = axis % data.ndim
    if idx.ndim < data.ndim:
        idx = onp.expand_dims(idx, ax)
    out = onp.take_along_axis(data, idx, axis=ax)
    return out if keepdims else onp.squeeze(out, axis=ax)


def _pick_samples(dtype, rng, domains):
    out = []
    for name, ds, kw in (("(3,4)", (3, 4), {}), ("(3,4)-axis0", (3, 4), {"axis": 0}),
                         ("(2,3,4)-axis1-keepdims", (2, 3, 4), {"axis": 1, "keepdims": True}),
                         ("(5,)", (5,), {}), ("(3,4)-wrap", (3, 4), {"mode": "wrap"}),
                         ("(0,4)", (0, 4), {})):
        data = make_arg(ds, dtype, rng)
        ax = kw.get("axis", -1) % len(ds)
        ishape = tuple(1 if (d == ax and kw.get("keepdims")) else s
                       for d, s in enumerate(ds) if d != ax or kw.get("keepdims"))
        index = rng.integers(-2, ds[ax] + 2, size=ishape).astype(onp.int32)
        out.append(Sample((data, index), kw, name))
    out.append(Sample((make_arg((3, 4), dtype, rng), onp.array([0.5, 3.9, 2.2])), {},
                      "float-index"))
    return out


add(OpEntry(
    "npx.pick", npx.pick, _pick_ref, "shape", FLOATS + SIGNED, _pick_samples,
    differentiable=True, grad_op="_npx_pick",
    grad_samples=lambda rng: [  # indices at .5: central differences never cross an integer
        GradSample((make_arg((3, 4), "float64", rng), onp.array([3.5, 0.5, 2.5])), {}, "axis-1"),
        GradSample((make_arg((3, 4), "float64", rng), onp.array([[1.5, 0.5, 2.5, 2.5]])),
                   {"axis": 0, "keepdims": True}, "axis0-keepdims")],
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((3,))), {}, ValueError, "index-shape"),
        ErrorInput((_f((2, 3)), _f((2,))), {"axis": 2}, AXIS_ERR, "axis-out-of-range"),
        ErrorInput((_f(()), _f(())), {}, AXIS_ERR, "0d"),
        ErrorInput((_f((2, 3)), onp.array([True, False])), {}, TypeError, "bool-index"),
        ErrorInput((_f((2, 3)), _f((2,))), {"mode": "raise"}, ValueError, "bad-mode")]))


def _one_hot_ref(indices, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    idx = onp.trunc(onp.asarray(indices, dtype=onp.float64))
    hit = idx[..., None] == onp.arange(depth)
    return onp.where(hit, on_value, off_value).astype(dtype)


def _one_hot_samples(dtype, rng, domains):
    out = []
    for name, shape, kw in (("(4,)-d3", (4,), {}), ("(2,3)-d5", (2, 3), {}),
                            ("()-d4", (), {}), ("(0,)-d3", (0,), {}),
                            ("(5,)-on/off-int32", (5,), {"on_value": 7, "off_value": -2,
                                                         "dtype": "int32"})):
        depth = {"(4,)-d3": 3, "(2,3)-d5": 5, "()-d4": 4, "(0,)-d3": 3}.get(name, 4)
        idx = rng.integers(-1, depth + 1, size=shape).astype(dtype)
        out.append(Sample((idx, depth), kw, name))
    return out


add(OpEntry(
    "npx.one_hot", npx.one_hot, _one_hot_ref, "shape", SIGNED + ("uint8", "float32"),
    _one_hot_samples, expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
    error_inputs=lambda: [
        ErrorInput((onp.array([0, 1]),), {}, ValueError, "depth-missing"),
        ErrorInput((onp.array([0, 1]), -1), {}, ValueError, "negative-depth"),
        ErrorInput((onp.array([True]), 2), {}, TypeError, "bool-indices")]))


def _embedding_ref(data, weight, input_dim, output_dim):
    return weight[onp.trunc(onp.asarray(data, dtype=onp.float64)).astype(onp.int64)]


def _embedding_samples(dtype, rng, domains):
    w = make_arg((5, 3), dtype, rng)
    kw = {"input_dim": 5, "output_dim": 3}
    return [Sample((rng.integers(0, 5, size=(2, 4)).astype(onp.int32), w), kw, "(2,4)-int32"),
            Sample((rng.integers(0, 5, size=(6,)).astype(onp.float32), w), kw, "(6,)-float32"),
            Sample((onp.array(3, dtype=onp.int64), w), kw, "0d"),
            Sample((onp.zeros((0, 2), dtype=onp.int32), w), kw, "zero-size")]


add(OpEntry(
    "npx.embedding", npx.embedding, _embedding_ref, "shape", FLOATS, _embedding_samples,
    expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(dt), differentiable=True,
    grad_op="_npx_embedding",
    grad_samples=lambda rng: [GradSample((onp.array([1.5, 3.5, 1.5, 0.5]),
                                          make_arg((4, 3), "float64", rng)),
                                         {"input_dim": 4, "output_dim": 3}, "repeated")],
    error_inputs=lambda: [
        ErrorInput((onp.array([5]), _f((5, 3))), {"input_dim": 5, "output_dim": 3}, IndexError,
                   "index-too-big"),
        ErrorInput((onp.array([-1]), _f((5, 3))), {"input_dim": 5, "output_dim": 3},
                   IndexError, "negative-index"),
        ErrorInput((onp.array([0]), _f((4, 3))), {"input_dim": 5, "output_dim": 3},
                   ValueError, "weight-shape")]))

# dropout in predict mode (the tests do not record) is the identity. Its gradient (ograd *
# the hidden mask output) and layer_norm's / batch_norm's read hidden outputs, and
# test_utils.check_numeric_gradient passes head gradients for visible outputs only: their
# gradients are checked through autograd (which supplies every output's) in
# tests/cpp/test_nn.cc instead.
add(OpEntry(
    "npx.dropout", npx.dropout, lambda x, **kw: x, "unary", FLOATS, unary_samples(SPECIAL),
    error_inputs=lambda: [
        ErrorInput((_f((2,)),), {"p": 1.5}, ValueError, "p-above-1"),
        ErrorInput((onp.array([1, 2], dtype=onp.int32),), {}, TypeError, "int-input")]))


def _layer_norm_ref(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):
    x = data.astype(onp.float64)
    shape = [1] * x.ndim
    shape[axis] = -1
    m = x.mean(axis=axis, keepdims=True)
    sd = onp.sqrt(x.var(axis=axis, keepdims=True) + eps)
    y = ((x - m) / sd * gamma.reshape(shape) + beta.reshape(shape)).astype(data.dtype)
    return (y, m.astype(data.dtype), sd.astype(data.dtype)) if output_mean_var else y


def _norm_samples(cases, n_stats):
    """cases: [(name, data shape, kwargs, channel axis)] -> (data, gamma, beta[, stats...])."""
    def make(dtype, rng, domains):
        out = []
        for name, shape, kw, axis in cases:
            c = shape[axis]
            args = (make_arg(shape, dtype, rng, Domain(-2, 2)),
                    make_arg((c,), dtype, rng, Domain(0.5, 1.5)),
                    make_arg((c,), dtype, rng, Domain(-1, 1)))
            if n_stats:
                args += (make_arg((c,), dtype, rng, Domain(-1, 1)),
                         make_arg((c,), dtype, rng, Domain(0.5, 2)))
            out.append(Sample(args, dict(kw), name))
        return out
    return make


add(OpEntry(
    "npx.layer_norm", npx.layer_norm, _layer_norm_ref, "shape", FLOATS, _norm_samples([
        ("(3,4)", (3, 4), {}, -1), ("(3,4)-axis0", (3, 4), {"axis": 0}, 0),
        ("(2,3,4)-axis1", (2, 3, 4), {"axis": 1}, 1), ("(5,)", (5,), {}, -1),
        ("(0,3)", (0, 3), {}, -1), ("(3,4)-mean-var", (3, 4), {"output_mean_var": True}, -1)],
        0), tols=dict(ACCUM_TOLS),
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((2,)), _f((3,))), {}, ValueError, "gamma-shape"),
        ErrorInput((_f((2, 3)), _f((3,)), _f((2,))), {}, ValueError, "beta-shape"),
        ErrorInput((_f(()), _f((1,)), _f((1,))), {}, AXIS_ERR, "0d"),
        ErrorInput((_f((2, 3)), _f((3,), "float64"), _f((3,))), {}, TypeError,
                   "gamma-dtype")]))


def _batch_norm_ref(data, gamma, beta, running_mean, running_var, eps=1e-5, momentum=0.9,
                    axis=1, fix_gamma=False, use_global_stats=False):
    """Predict mode (the table tests do not record): the running statistics."""
    shape = [1] * data.ndim
    shape[axis] = -1
    x = data.astype(onp.float64)
    g = onp.ones_like(gamma) if fix_gamma else gamma
    y = ((x - running_mean.reshape(shape)) / onp.sqrt(running_var.reshape(shape) + eps)
         * g.reshape(shape) + beta.reshape(shape))
    return y.astype(data.dtype)


add(OpEntry(
    "npx.batch_norm", npx.batch_norm, _batch_norm_ref, "shape", FLOATS, _norm_samples([
        ("(4,3)", (4, 3), {}, 1), ("(2,3,4)", (2, 3, 4), {}, 1),
        ("(2,3,4)-axis-1", (2, 3, 4), {"axis": -1}, -1),
        ("(2,3)-fix_gamma", (2, 3), {"fix_gamma": True}, 1), ("(0,3)", (0, 3), {}, 1)], 2),
    tols=dict(ACCUM_TOLS),
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((2,)), _f((3,)), _f((3,)), _f((3,))), {}, ValueError,
                   "gamma-shape"),
        ErrorInput((_f((2, 3)), _f((3,)), _f((3,)), _f((3,)), _f((3,))), {"axis": 2},
                   AXIS_ERR, "axis-out-of-range")]))

# ============================================================ optimizer updates
# MXNet's sgd_update / sgd_mom_update (src/operator/optimizer.cc) against the rule in float64
# NumPy; the momentum's in-place update is checked in test_optimizers.py.
def _sgd_term(weight, grad, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, **_):
    g = grad.astype(onp.float64) * rescale_grad
    if clip_gradient > 0:
        g = onp.clip(g, -clip_gradient, clip_gradient)
    return g + wd * weight.astype(onp.float64)


def _sgd_ref(weight, grad, lr, **kw):
    return (weight - lr * _sgd_term(weight, grad, **kw)).astype(weight.dtype)


def _sgd_mom_ref(weight, grad, mom, lr, momentum=0.0, **kw):
    return (weight + momentum * mom.astype(onp.float64)
            - lr * _sgd_term(weight, grad, **kw)).astype(weight.dtype)


def _sgd_samples(n_inputs):
    settings = [("plain", {"lr": 0.1}),
                ("wd-rescale-clip", {"lr": 0.05, "wd": 0.01, "rescale_grad": 0.5,
                                     "clip_gradient": 0.7}),
                ("no-clip", {"lr": 0.2, "clip_gradient": -1.0})]

    def make(dtype, rng, domains):
        out = []
        for shape in [(3, 4), (7,), (), (0, 3)]:
            for name, kw in settings:
                args = tuple(make_arg(shape, dtype, rng, Domain(-2, 2)) for _ in range(n_inputs))
                if n_inputs == 3:
                    kw = dict(kw, momentum=0.9)
                out.append(Sample(args, dict(kw), f"{shape}-{name}"))
        return out
    return make


def _adam_ref(weight, grad, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
              rescale_grad=1.0, clip_gradient=-1.0, **_):
    # MXNet's adam_update kernel adds the decay before clipping (SGD's after)
    t = grad.astype(onp.float64) * rescale_grad + wd * weight.astype(onp.float64)
    if clip_gradient > 0:
        t = onp.clip(t, -clip_gradient, clip_gradient)
    m = beta1 * mean.astype(onp.float64) + (1 - beta1) * t
    v = beta2 * var.astype(onp.float64) + (1 - beta2) * t * t
    return (weight - lr * m / (onp.sqrt(v) + epsilon)).astype(weight.dtype)


def _adam_samples(dtype, rng, domains):
    out = []
    for sample in _sgd_samples(4)(dtype, rng, domains):
        w, g, m, v = sample.args
        out.append(Sample((w, g, m, onp.abs(v).astype(v.dtype)),
                          dict(sample.kwargs, beta1=0.8, epsilon=1e-3), sample.name))
    return out


_nd = ndx.nd
add(OpEntry(
    "nd.sgd_update", _nd.sgd_update, _sgd_ref, "shape", FLOATS, _sgd_samples(2),
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((3,))), {"lr": 0.1}, ValueError, "grad-shape"),
        ErrorInput((_f((2,)), _f((2,), "float64")), {"lr": 0.1}, TypeError, "grad-dtype"),
        ErrorInput((onp.ones(2, onp.int32), onp.ones(2, onp.int32)), {"lr": 0.1}, TypeError,
                   "int-weight"),
        ErrorInput((_f((2,)), _f((2,))), {"lr": -0.1}, ValueError, "negative-lr"),
        ErrorInput((_f((2,)), _f((2,))), {}, ValueError, "no-lr")]))
add(OpEntry(
    "nd.sgd_mom_update", _nd.sgd_mom_update, _sgd_mom_ref, "shape", FLOATS, _sgd_samples(3),
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((2, 3)), _f((3,))), {"lr": 0.1}, ValueError, "mom-shape"),
        ErrorInput((_f((2,)), _f((2,)), _f((2,), "float16")), {"lr": 0.1}, TypeError,
                   "mom-dtype"),
        ErrorInput((_f((2,)), _f((2,)), _f((2,))), {"lr": 0.1, "momentum": -1}, ValueError,
                   "negative-momentum")]))
add(OpEntry(
    "nd.adam_update", _nd.adam_update, _adam_ref, "shape", FLOATS, _adam_samples,
    error_inputs=lambda: [
        ErrorInput((_f((2, 3)), _f((2, 3)), _f((2, 3)), _f((3,))), {"lr": 0.1}, ValueError,
                   "var-shape"),
        ErrorInput((_f((2,)), _f((2,)), _f((2,), "float64"), _f((2,))), {"lr": 0.1},
                   TypeError, "mean-dtype"),
        ErrorInput((_f((2,)),) * 4, {"lr": 0.1, "beta2": 1.5}, ValueError, "beta2-range"),
        ErrorInput((_f((2,)),) * 4, {"lr": 0.1, "epsilon": -1.0}, ValueError,
                   "negative-epsilon")]))

# ============================================================ npx: convolution and pooling
# npx.convolution / npx.pooling (src/operator/conv.cc) against direct NumPy loops in float64:
# MXNet semantics, 1-d (N, C, W) and 2-d (N, C, H, W) data. Max-pooling gradients use
# permutations (distinct values), so central differences never cross a tie.
def _convolution(data, weight, bias=None, **kwargs):
    """npx.convolution, with no_bias=True when called without a bias (the generated function
    always takes three arrays)."""
    if bias is None:
        from ndx._registry import ops
        return ndx._core._invoke(ops()["_npx_convolution"].handle, (data, weight),
                                 dict(kwargs, no_bias=True))
    return npx.convolution(data, weight, bias, **kwargs)


def _per_dim(values, nsp, default):
    """A stride/pad/dilate param as one value per spatial dim (() gives `default`)."""
    return tuple(values) if values else (default,) * nsp


def _taps(kernel):
    """Every kernel tap (offset tuple) of an n-d kernel."""
    import itertools
    return itertools.product(*[range(k) for k in kernel])


def _conv_ref(data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(), num_filter=None,
              num_group=1, no_bias=False, layout=None):
    """n-d cross-correlation, one kernel tap at a time (a strided slice of the padded data)."""
    nsp = len(kernel)
    s, d, p = _per_dim(stride, nsp, 1), _per_dim(dilate, nsp, 1), _per_dim(pad, nsp, 0)
    x = onp.pad(data.astype(onp.float64), ((0, 0), (0, 0)) + tuple((q, q) for q in p))
    w = weight.astype(onp.float64)
    k = w.shape[2:]
    osz = [(x.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nsp)]
    n, c, f = x.shape[0], x.shape[1], w.shape[0]
    cg, fg = c // num_group, f // num_group
    out = onp.zeros((n, f) + tuple(osz))
    for g in range(num_group):
        xg = x[:, g * cg:(g + 1) * cg]
        for tap in _taps(k):
            sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (osz[i] - 1) + 1, s[i])
                       for i in range(nsp))
            out[:, g * fg:(g + 1) * fg] += onp.einsum(
                "nc...,fc->nf...", xg[(slice(None), slice(None)) + sl],
                w[(slice(g * fg, (g + 1) * fg), slice(None)) + tap])
    if bias is not None:
        out += bias.astype(onp.float64).reshape((1, f) + (1,) * nsp)
    return out.astype(data.dtype)


# (name, data shape, kernel, extra kwargs, num_filter, bias)
CONV_CASES = [
    ("2d-(2,3,5,5)-k3", (2, 3, 5, 5), (3, 3), {}, 4, True),
    ("2d-stride-pad", (1, 2, 6, 7), (3, 2), {"stride": (2, 1), "pad": (1, 0)}, 3, True),
    ("2d-dilate-groups", (2, 4, 7, 6), (3, 3),
     {"stride": (1, 2), "pad": (2, 1), "dilate": (2, 1), "num_group": 2}, 6, True),
    ("2d-depthwise-no_bias", (1, 3, 4, 4), (2, 2), {"num_group": 3, "pad": (1, 1)}, 3, False),
    ("1d-(2,3,8)-k3", (2, 3, 8), (3,), {}, 4, True),
    ("1d-stride-pad-dilate", (1, 4, 9), (3,),
     {"stride": (2,), "pad": (1,), "dilate": (2,), "num_group": 2}, 2, True),
    ("1d-no_bias-layout", (3, 2, 5), (2,), {"stride": (3,), "pad": (2,), "layout": "NCW"}, 3,
     False),
    ("2d-zero-batch", (0, 2, 4, 4), (3, 3), {}, 2, True),
    ("1d-zero-channels", (2, 0, 4), (2,), {}, 3, True),
    ("3d-(1,2,3,4,4)-k2", (1, 2, 3, 4, 4), (2, 3, 2), {}, 3, True),
    ("3d-stride-pad-dilate-groups", (1, 4, 4, 5, 3), (2, 2, 2),
     {"stride": (2, 1, 1), "pad": (1, 0, 1), "dilate": (1, 2, 1), "num_group": 2}, 2, True),
    ("3d-no_bias-layout", (2, 2, 3, 3, 3), (2, 2, 2), {"layout": "NCDHW"}, 2, False),
    ("3d-zero-batch", (0, 2, 3, 3, 3), (2, 2, 2), {}, 2, True),
]


def _conv_args(rng, dtype, shape, kernel, kw, num_filter, bias):
    groups = kw.get("num_group", 1)
    args = (make_arg(shape, dtype, rng, Domain(-1, 1)),
            make_arg((num_filter, shape[1] // groups) + tuple(kernel), dtype, rng, Domain(-1, 1)))
    if bias:
        args += (make_arg((num_filter,), dtype, rng, Domain(-1, 1)),)
    return args


def _conv_samples(dtype, rng, domains):
    return [Sample(_conv_args(rng, dtype, shape, kernel, kw, f, bias),
                   dict(kw, kernel=kernel, num_filter=f), name)
            for name, shape, kernel, kw, f, bias in CONV_CASES]


def _conv_grad(rng):
    out = []
    for name, shape, kernel, kw, f, bias in CONV_CASES:
        if 0 in shape or int(onp.prod(shape)) > 100:  # keep the central differences cheap
            continue
        params = dict(kw, kernel=kernel, num_filter=f)
        if not bias:
            params["no_bias"] = True
        out.append(GradSample(_conv_args(rng, "float64", shape, kernel, kw, f, bias), params,
                              name))
    return out


def _conv_err(data, weight, bias, name, exc=ValueError, **kw):
    kw.setdefault("kernel", (3, 3))
    kw.setdefault("num_filter", 4)
    args = (_f(data), weight if isinstance(weight, onp.ndarray) else _f(weight))
    args += (bias if isinstance(bias, onp.ndarray) else _f(bias),)
    return ErrorInput(args, kw, exc, name)


add(OpEntry(
    "npx.convolution", _convolution, _conv_ref, "shape", FLOATS, _conv_samples,
    tols=dict(ACCUM_TOLS), differentiable=True, grad_op="_npx_convolution",
    grad_samples=_conv_grad,
    error_inputs=lambda: [
        _conv_err((1, 2, 2, 5), (4, 2, 3, 3), (4,), "kernel-exceeds-padded-input"),
        _conv_err((1, 2, 3, 3), (4, 2, 3, 3), (4,), "dilated-kernel-exceeds-input",
                  dilate=(2, 2)),
        _conv_err((1, 3, 5, 5), (4, 1, 3, 3), (4,), "channels-not-divisible-by-groups",
                  num_group=2),
        _conv_err((1, 4, 5, 5), (3, 2, 3, 3), (3,), "filters-not-divisible-by-groups",
                  num_group=2, num_filter=3),
        _conv_err((2, 5, 5), (4, 2, 3, 3), (4,), "2d-kernel-on-1d-data"),
        _conv_err((5, 5), (4, 2, 3, 3), (4,), "2d-data"),
        _conv_err((1, 2, 5, 5, 5, 5), (4, 2, 3, 3, 3, 3), (4,), "6d-data",
                  kernel=(3, 3, 3, 3)),
        _conv_err((1, 2, 2, 5, 5), (4, 2, 3, 3, 3), (4,), "3d-kernel-exceeds-input",
                  kernel=(3, 3, 3)),
        _conv_err((1, 2, 5, 5), (4, 2, 3, 3, 3), (4,), "3d-kernel-on-2d-data",
                  kernel=(3, 3, 3)),
        _conv_err((1, 2, 5, 5), (4, 2, 3, 2), (4,), "weight-shape"),
        _conv_err((1, 2, 5, 5), (4, 2, 3, 3), (3,), "bias-shape"),
        _conv_err((1, 2, 5, 5), (4, 2, 3, 3), (4,), "stride-length", stride=(1,)),
        _conv_err((1, 2, 5, 5), (4, 2, 3, 3), (4,), "zero-stride", stride=(0, 1)),
        _conv_err((1, 2, 5, 5), (4, 2, 3, 3), (4,), "layout-mismatch", layout="NCW"),
        _conv_err((1, 2, 5, 5), (4, 2, 3, 3), (4,), "unknown-layout", layout="NHWC"),
        _conv_err((1, 2, 5, 5), onp.ones((4, 2, 3, 3), dtype=onp.float64), (4,),
                  "weight-dtype", TypeError),
        ErrorInput((onp.ones((1, 2, 5, 5), dtype=onp.int32), onp.ones((4, 2, 3, 3), onp.int32),
                    onp.ones((4,), onp.int32)), {"kernel": (3, 3), "num_filter": 4}, TypeError,
                   "int-data")]))


# npx.deconvolution: against a scatter written here (input position i with kernel tap t lands at
# i * stride + t * dilate of the untrimmed output, then pad is trimmed from both ends).
def _deconvolution(data, weight, bias=None, **kwargs):
    """npx.deconvolution by handle, with no_bias=True when called without a bias."""
    from ndx._registry import ops
    inputs = (data, weight) if bias is None else (data, weight, bias)
    return ndx._core._invoke(ops()["_npx_deconvolution"].handle, inputs,
                             dict(kwargs, no_bias=bias is None))


def _deconv_ref(data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(), adj=(),
                target_shape=(), num_filter=None, num_group=1, no_bias=False, layout=None):
    nsp = len(kernel)
    s, d, p = _per_dim(stride, nsp, 1), _per_dim(dilate, nsp, 1), _per_dim(pad, nsp, 0)
    a = _per_dim(adj, nsp, 0)
    x, w = data.astype(onp.float64), weight.astype(onp.float64)
    n, c = x.shape[:2]
    cg, fg = c // num_group, w.shape[1]
    ins, k = x.shape[2:], w.shape[2:]
    full = [s[i] * (ins[i] - 1) + d[i] * (k[i] - 1) + 1 for i in range(nsp)]
    if target_shape:
        tot = [full[i] - target_shape[i] for i in range(nsp)]
        p, a = [(t + 1) // 2 for t in tot], [t % 2 for t in tot]
    buf = onp.zeros((n, fg * num_group) + tuple(full[i] + a[i] for i in range(nsp)))
    for g in range(num_group):
        for tap in _taps(k):
            sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (ins[i] - 1) + 1, s[i])
                       for i in range(nsp))
            buf[(slice(None), slice(g * fg, (g + 1) * fg)) + sl] += onp.einsum(
                "nc...,cf->nf...", x[:, g * cg:(g + 1) * cg],
                w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap])
    out = buf[(slice(None), slice(None)) + tuple(slice(p[i], full[i] + a[i] - p[i])
                                                 for i in range(nsp))]
    if bias is not None:
        out = out + bias.astype(onp.float64).reshape((1, -1) + (1,) * nsp)
    return out.astype(data.dtype)


# (name, data shape, kernel, extra kwargs, num_filter, bias)
DECONV_CASES = [
    ("1d-k3", (2, 3, 5), (3,), {}, 2, True),
    ("1d-stride-pad-adj", (1, 2, 4), (3,), {"stride": (2,), "pad": (1,), "adj": (1,)}, 3, True),
    ("1d-dilate-groups-no_bias", (2, 4, 3), (2,),
     {"stride": (3,), "dilate": (2,), "num_group": 2, "adj": (2,)}, 4, False),
    ("2d-k3x2", (2, 3, 4, 3), (3, 2), {}, 2, True),
    ("2d-stride-pad-adj-layout", (1, 2, 3, 4), (3, 3),
     {"stride": (2, 3), "pad": (1, 1), "adj": (1, 2), "layout": "NCHW"}, 3, True),
    ("2d-depthwise-dilate", (1, 3, 3, 3), (2, 3),
     {"dilate": (2, 1), "num_group": 3, "stride": (2, 1)}, 3, True),
    ("2d-target_shape", (1, 2, 3, 4), (3, 2), {"stride": (2, 2), "target_shape": (5, 8)}, 2,
     True),
    ("3d-k2", (1, 2, 2, 3, 2), (2, 2, 2), {}, 3, True),
    ("3d-stride-pad-adj-groups", (1, 4, 2, 2, 3), (3, 2, 2),
     {"stride": (2, 1, 2), "pad": (1, 0, 1), "adj": (1, 0, 1), "num_group": 2}, 2, False),
    ("2d-zero-batch", (0, 2, 3, 3), (2, 2), {}, 2, True),
    ("1d-zero-channels", (2, 0, 3), (2,), {}, 2, True),
]


def _deconv_args(rng, dtype, shape, kernel, kw, num_filter, bias):
    groups = kw.get("num_group", 1)
    args = (make_arg(shape, dtype, rng, Domain(-1, 1)),
            make_arg((shape[1], num_filter // groups) + tuple(kernel), dtype, rng,
                     Domain(-1, 1)))
    if bias:
        args += (make_arg((num_filter,), dtype, rng, Domain(-1, 1)),)
    return args


def _deconv_samples(dtype, rng, domains):
    return [Sample(_deconv_args(rng, dtype, shape, kernel, kw, f, bias),
                   dict(kw, kernel=kernel, num_filter=f), name)
            for name, shape, kernel, kw, f, bias in DECONV_CASES]


def _deconv_grad(rng):
    out = []
    for name, shape, kernel, kw, f, bias in DECONV_CASES:
        if 0 in shape or int(onp.prod(shape)) > 100:
            continue
        params = dict(kw, kernel=kernel, num_filter=f)
        if not bias:
            params["no_bias"] = True
        out.append(GradSample(_deconv_args(rng, "float64", shape, kernel, kw, f, bias), params,
                              name))
    return out


def _deconv_err(data, weight, bias, name, exc=ValueError, **kw):
    kw.setdefault("kernel", (3, 3))
    kw.setdefault("num_filter", 2)
    return ErrorInput((_f(data), _f(weight), _f(bias)), kw, exc, name)


add(OpEntry(
    "npx.deconvolution", _deconvolution, _deconv_ref, "shape", FLOATS, _deconv_samples,
    tols=dict(ACCUM_TOLS), differentiable=True, grad_op="_npx_deconvolution",
    grad_samples=_deconv_grad,
    error_inputs=lambda: [
        _deconv_err((1, 2, 3, 3), (2, 2, 3, 3), (2,), "adj-not-below-stride", adj=(1, 0)),
        _deconv_err((1, 2, 3, 3), (2, 2, 3, 3), (2,), "target_shape-too-big",
                    target_shape=(9, 9)),
        _deconv_err((1, 2, 2, 2), (2, 2, 3, 3), (2,), "pad-leaves-no-output", pad=(2, 2)),
        _deconv_err((1, 3, 3, 3), (3, 1, 3, 3), (2,), "channels-not-divisible-by-groups",
                    num_group=2),
        _deconv_err((1, 4, 3, 3), (4, 1, 3, 3), (3,), "filters-not-divisible-by-groups",
                    num_group=2, num_filter=3),
        _deconv_err((1, 2, 3, 3), (2, 3, 3, 3), (2,), "weight-shape"),
        _deconv_err((1, 2, 3, 3), (2, 2, 3, 3), (3,), "bias-shape"),
        _deconv_err((1, 2, 3), (2, 2, 3, 3), (2,), "2d-kernel-on-1d-data"),
        _deconv_err((1, 2, 3, 3, 3, 3), (2, 2, 3, 3, 3, 3), (2,), "6d-data",
                    kernel=(3, 3, 3, 3)),
        _deconv_err((1, 2, 3, 3), (2, 2, 3, 3), (2,), "layout-mismatch", layout="NCW"),
        _deconv_err((1, 2, 3, 3), (2, 2, 3, 3), (2,), "unknown-layout", layout="NHWC"),
        _deconv_err((1, 2, 3, 3), (2, 2, 3, 3), (2,), "zero-stride", stride=(0, 1)),
        ErrorInput((onp.ones((1, 2, 3, 3), dtype=onp.int32), onp.ones((2, 2, 3, 3), onp.int32),
                    onp.ones((2,), onp.int32)), {"kernel": (3, 3), "num_filter": 2}, TypeError,
                   "int-data")]))


def _pool_ref(data, kernel=(), pool_type="max", global_pool=False, pooling_convention="valid",
              stride=(), pad=(), count_include_pad=True, layout=None):
    """n-d pooling by a loop over output positions (windows clipped at in + pad)."""
    import itertools
    x = data.astype(onp.float64)
    nsp = x.ndim - 2
    ins = x.shape[2:]
    if global_pool:
        kernel, s, p = ins, (1,) * nsp, (0,) * nsp
        osz = (1,) * nsp
    else:
        s, p = _per_dim(stride, nsp, 1), _per_dim(pad, nsp, 0)

        def osize(i):
            span = ins[i] + 2 * p[i] - kernel[i]
            return 1 + (-(-span // s[i]) if pooling_convention == "full" else span // s[i])
        osz = tuple(osize(i) for i in range(nsp))
    out = onp.zeros(x.shape[:2] + osz)
    axes = tuple(range(2, 2 + nsp))
    for pos in itertools.product(*[range(o) for o in osz]):
        st = [pos[i] * s[i] - p[i] for i in range(nsp)]
        en = [min(st[i] + kernel[i], ins[i] + p[i]) for i in range(nsp)]
        lo, hi = [max(v, 0) for v in st], [min(en[i], ins[i]) for i in range(nsp)]
        win = x[(slice(None), slice(None)) + tuple(slice(lo[i], hi[i]) for i in range(nsp))]
        at = (slice(None), slice(None)) + pos
        if pool_type == "max":
            out[at] = win.max(axis=axes)
        else:
            total = win.sum(axis=axes)
            count = math.prod(en[i] - st[i] if count_include_pad else hi[i] - lo[i]
                              for i in range(nsp))
            out[at] = total / count if pool_type == "avg" else total
    return out.astype(data.dtype)


# (name, data shape, kwargs); each runs as max, avg and sum.
POOL_CASES = [
    ("2d-k2-s2", (2, 3, 6, 6), {"kernel": (2, 2), "stride": (2, 2)}),
    ("2d-k3-default-stride", (1, 2, 5, 7), {"kernel": (3, 3)}),
    ("2d-stride-pad", (1, 2, 5, 7), {"kernel": (3, 2), "stride": (2, 3), "pad": (1, 1)}),
    ("2d-full", (2, 1, 7, 5), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 0),
                                "pooling_convention": "full"}),
    ("2d-no-count-pad", (1, 2, 5, 5), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1),
                                       "count_include_pad": False}),
    ("2d-global", (2, 3, 4, 5), {"global_pool": True}),
    ("1d-k3-s2", (2, 3, 9), {"kernel": (3,), "stride": (2,)}),
    ("1d-full-pad", (1, 2, 8), {"kernel": (3,), "stride": (2,), "pad": (1,),
                                "pooling_convention": "full"}),
    ("1d-global-layout", (2, 2, 6), {"global_pool": True, "layout": "NCW"}),
    ("2d-zero-batch", (0, 2, 4, 4), {"kernel": (2, 2)}),
    ("3d-k2-s2", (1, 2, 4, 4, 5), {"kernel": (2, 2, 2), "stride": (2, 2, 2)}),
    ("3d-stride-pad-full", (1, 1, 5, 4, 5), {"kernel": (3, 2, 3), "stride": (2, 2, 2),
                                             "pad": (1, 0, 1), "pooling_convention": "full"}),
    ("3d-no-count-pad", (1, 2, 3, 4, 3), {"kernel": (2, 3, 2), "pad": (1, 1, 1),
                                          "count_include_pad": False}),
    ("3d-global-layout", (2, 2, 3, 2, 3), {"global_pool": True, "layout": "NCDHW"}),
]


def _pool_samples(dtype, rng, domains):
    return [Sample((make_arg(shape, dtype, rng, Domain(-3, 3)),), dict(kw, pool_type=t),
                   f"{t}-{name}")
            for name, shape, kw in POOL_CASES for t in ("max", "avg", "sum")]


def _pool_grad(rng):
    out = []
    for name, shape, kw in POOL_CASES:
        size = int(onp.prod(shape))
        if size == 0 or size > 80:
            continue
        x = rng.permutation(size).reshape(shape).astype(onp.float64) * 0.1
        for t in ("max", "avg", "sum"):
            out.append(GradSample((x,), dict(kw, pool_type=t), f"{t}-{name}"))
    return out


add(OpEntry(
    "npx.pooling", npx.pooling, _pool_ref, "shape", FLOATS, _pool_samples,
    tols=dict(ACCUM_TOLS), differentiable=True, grad_op="_npx_pooling", grad_samples=_pool_grad,
    error_inputs=lambda: [
        ErrorInput((_f((1, 2, 4, 4)),), {"kernel": (5, 2)}, ValueError,
                   "kernel-exceeds-input"),
        ErrorInput((_f((1, 2, 3)),), {"kernel": (6,), "pad": (1,)}, ValueError,
                   "kernel-exceeds-padded-input"),
        ErrorInput((_f((4, 4)),), {"kernel": (2, 2)}, ValueError, "2d-data"),
        ErrorInput((_f((1, 1, 2, 2, 2, 2)),), {"global_pool": True}, ValueError, "6d-data"),
        ErrorInput((_f((1, 2, 2, 4, 4)),), {"kernel": (3, 2, 2)}, ValueError,
                   "3d-kernel-exceeds-input"),
        ErrorInput((_f((1, 2, 4, 4, 4)),), {"kernel": (2, 2), "layout": "NCHW"}, ValueError,
                   "layout-mismatch"),
        ErrorInput((_f((1, 2, 4, 4)),), {"kernel": (2,)}, ValueError, "1d-kernel-on-2d-data"),
        ErrorInput((_f((1, 2, 4, 4)),), {}, ValueError, "kernel-missing"),
        ErrorInput((_f((1, 2, 4, 4)),), {"kernel": (2, 2), "stride": (0, 1)}, ValueError,
                   "zero-stride"),
        ErrorInput((_f((1, 2, 4, 4)),), {"kernel": (2, 2), "pool_type": "lp"}, ValueError,
                   "unknown-pool_type"),
        ErrorInput((_f((1, 2, 4, 4)),), {"kernel": (2, 2), "pooling_convention": "same"},
                   ValueError, "unknown-convention"),
        ErrorInput((onp.ones((1, 2, 4, 4), dtype=onp.int32),), {"kernel": (2, 2)}, TypeError,
                   "int-data")]))

# ----------------------------------------------------------------------- npx.ctc_loss
def _ctc_ref(data, label, data_lengths=None, label_lengths=None, use_data_lengths=False,
             use_label_lengths=False, blank_label="first"):
    """-log p(label | data) by the CTC forward recursion in probability space, rescaled at
    every step (Rabiner's scaling; ndx's kernel works in log space)."""
    x = onp.asarray(data, dtype=onp.float64)
    steps, batch, classes = x.shape
    blank = 0 if blank_label == "first" else classes - 1
    pad = 0 if blank_label == "first" else -1
    labels = onp.trunc(onp.asarray(label, dtype=onp.float64)).astype(onp.int64)
    out = onp.zeros(batch)
    for b in range(batch):
        t_len = int(data_lengths[b]) if use_data_lengths else steps
        row = list(labels[b])
        if use_label_lengths:
            row = row[:int(label_lengths[b])]
        elif pad in row:
            row = row[:row.index(pad)]
        ext = [blank]
        for s in row:
            ext += [s, blank]
        probs = onp.exp(x[:t_len, b] - x[:t_len, b].max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        alpha = onp.zeros(len(ext))
        alpha[0] = probs[0, ext[0]] if t_len else 1.0
        if len(ext) > 1 and t_len:
            alpha[1] = probs[0, ext[1]]
        log_scale = 0.0
        for t in range(1, t_len):
            prev = alpha.copy()
            for j in range(len(ext)):
                a = prev[j] + (prev[j - 1] if j >= 1 else 0.0)
                if j >= 2 and ext[j] != blank and ext[j] != ext[j - 2]:
                    a += prev[j - 2]
                alpha[j] = a * probs[t, ext[j]]
            total = alpha.sum()
            alpha /= total
            log_scale += onp.log(total)
        end = alpha[-1] + (alpha[-2] if len(ext) > 1 else 0.0)
        out[b] = -(onp.log(end) + log_scale)
    return out.astype(onp.asarray(data).dtype)


def _ctc_label(rng, lengths, width, blank_label, classes):
    """Padded labels, with a repeated symbol in the longer rows."""
    lo, hi = (1, classes - 1) if blank_label == "first" else (0, classes - 2)
    pad = 0 if blank_label == "first" else -1
    out = onp.full((len(lengths), width), pad, dtype=onp.int32)
    for b, n in enumerate(lengths):
        out[b, :n] = rng.integers(lo, hi + 1, size=n)
        if n >= 3:
            out[b, 2] = out[b, 1]
    return out


def _ctc_samples(dtype, rng, domains):
    out = []
    for name, (steps, batch, classes), lengths, width, kw in (
            ("first", (6, 3, 4), (2, 3, 0), 4, {}),
            ("last", (5, 2, 5), (3, 1), 3, {"blank_label": "last"}),
            ("one-class-step", (1, 2, 2), (1, 0), 1, {}),
            ("zero-batch", (4, 0, 3), (), 2, {})):
        data = make_arg((steps, batch, classes), dtype, rng, Domain(-2, 2))
        label = _ctc_label(rng, lengths, width, kw.get("blank_label", "first"), classes)
        out.append(Sample((data, label), kw, name))
    data = make_arg((7, 3, 4), dtype, rng, Domain(-2, 2))
    label = onp.array([[3, 1, 1, 2], [2, 0, 0, 0], [1, 3, 0, 0]], dtype=onp.int64)
    # label[0, 3] lies beyond label_lengths[0]: ignored
    out.append(Sample((data, label, onp.array([7, 3, 0]), onp.array([3, 1, 0])),
                      {"use_data_lengths": True, "use_label_lengths": True}, "lengths"))
    out.append(Sample((data, label, onp.array([6.0, 2.0, 5.0], dtype=onp.float32)),
                      {"use_data_lengths": True}, "data-lengths-float"))
    return out


def _ctc_grad(rng):
    # Labels and lengths sit at .5: central differences never cross an integer.
    data = make_arg((5, 2, 4), "float64", rng, Domain(-1, 1))
    return [GradSample((data, onp.array([[1.5, 2.5, 2.5], [3.5, 0.5, 0.5]])), {}, "first"),
            GradSample((data, onp.array([[0.5, 1.5, 0.5], [2.5, 1.5, 0.5]]),
                        onp.array([5.5, 3.5]), onp.array([3.5, 2.5])),
                       {"use_data_lengths": True, "use_label_lengths": True,
                        "blank_label": "last"}, "last-lengths")]


add(OpEntry(
    "npx.ctc_loss", npx.ctc_loss, _ctc_ref, "shape", FLOATS, _ctc_samples,
    tols=dict(ACCUM_TOLS), differentiable=True, grad_op="_npx_ctc_loss",
    grad_samples=_ctc_grad,
    error_inputs=lambda: [
        ErrorInput((_f((3, 2, 4)), onp.ones((2, 4), dtype=onp.int32)), {}, ValueError,
                   "label-longer-than-data"),
        ErrorInput((_f((2, 2, 4)), onp.array([[1, 1], [2, 0]])), {}, ValueError,
                   "repeats-need-more-steps"),
        ErrorInput((_f((4, 2, 4)), onp.array([[1, 2], [1, 0]]), onp.array([1, 1])),
                   {"use_data_lengths": True}, ValueError, "data-length-too-short"),
        ErrorInput((_f((3, 2, 4)), onp.array([[1, 2], [1, 0]]), onp.array([4, 1])),
                   {"use_data_lengths": True}, ValueError, "data-length-past-data"),
        ErrorInput((_f((3, 2, 4)), onp.array([[1, 2], [1, 0]]), None, onp.array([3, 1])),
                   {"use_label_lengths": True}, ValueError, "label-length-past-label"),
        ErrorInput((_f((3, 2, 4)), onp.array([[1, 4], [1, 0]])), {}, IndexError,
                   "label-outside-alphabet"),
        ErrorInput((_f((3, 2, 4)), onp.array([[1, 3], [1, 0]])), {"blank_label": "last"},
                   IndexError, "blank-as-label"),
        ErrorInput((_f((3, 4)), onp.array([[1], [1], [1]])), {}, ValueError, "2d-data"),
        ErrorInput((_f((3, 2, 4)), onp.array([1, 2])), {}, ValueError, "1d-label"),
        ErrorInput((_f((3, 2, 4)), onp.ones((3, 2), dtype=onp.int32)), {}, ValueError,
                   "label-batch"),
        ErrorInput((_f((3, 2, 4)), onp.ones((2, 2), dtype=onp.int32), onp.array([3, 3, 3])),
                   {"use_data_lengths": True}, ValueError, "data-lengths-shape"),
        ErrorInput((onp.ones((3, 2, 4), dtype=onp.int32), onp.ones((2, 2), dtype=onp.int32)),
                   {}, TypeError, "int-data"),
        ErrorInput((_f((3, 2, 4)), onp.ones((2, 2), dtype=bool)), {}, TypeError, "bool-label"),
        ErrorInput((_f((3, 2, 4)), onp.ones((2, 2), dtype=onp.int32)),
                   {"use_data_lengths": True}, ValueError, "data-lengths-missing"),
        ErrorInput((_f((3, 2, 4)), onp.ones((2, 2), dtype=onp.int32)),
                   {"blank_label": "middle"}, ValueError, "bad-blank_label")]))

# ------------------------------------------------------------------ np.linalg (issue 13)
# Values, batching and the factorizations' gradients are checked in test_linalg.py (their
# outputs are unique only up to signs and order, which the forward table cannot express);
# here: the typed errors, and the numeric gradients of the ops whose outputs are unique.
LINALG_DTYPES = ("float32", "float64")
_SINGULAR = onp.array([[1.0, 2.0], [2.0, 4.0]])


def _well_conditioned(rng, shape):
    return rng.standard_normal(shape) + 3 * onp.eye(shape[-1])


def _linalg_errors(name):
    fn = getattr(np.linalg, name)
    rhs = (onp.ones(3),) if name in ("solve", "lstsq") else ()
    errors = [ErrorInput((onp.ones(3),) + rhs, {}, ValueError, "1-d", onp.linalg.LinAlgError),
              ErrorInput((onp.ones((2, 2), dtype=onp.float16),)
                         + ((onp.ones(2),) if name in ("solve", "lstsq") else ()),
                         {}, TypeError, "float16")]
    if name in ("inv", "solve"):
        errors.append(ErrorInput((_SINGULAR,) + ((onp.ones(2),) if name == "solve" else ()), {},
                                 np.linalg.LinAlgError, "singular", onp.linalg.LinAlgError))
    if name == "cholesky":
        errors.append(ErrorInput((-onp.eye(2),), {}, np.linalg.LinAlgError, "not-pd",
                                 onp.linalg.LinAlgError))
    if name in ("eigh", "eig", "svd"):  # NumPy's eigh returns NaNs; ndx refuses, as eig does
        errors.append(ErrorInput((onp.array([[onp.nan, 0.0], [0.0, 1.0]]),), {},
                                 np.linalg.LinAlgError, "nan",
                                 None if name == "eigh" else onp.linalg.LinAlgError))
    assert callable(fn)
    return errors


def _linalg_grads(name):
    def samples(rng):
        if name == "solve":
            return [GradSample((_well_conditioned(rng, (2, 3, 3)),
                                rng.standard_normal((2, 3, 2))), {}, "batched")]
        return [GradSample((_well_conditioned(rng, (2, 3, 3)),), {}, "batched")]
    return samples


for _name in ("inv", "det", "slogdet", "solve", "cholesky", "qr", "eigh", "eig", "svd",
              "lstsq"):
    _diff = _name in ("inv", "det", "solve")  # slogdet's two outputs: test_linalg.py
    add(OpEntry(_name, getattr(np.linalg, _name), getattr(onp.linalg, _name), "linalg",
                LINALG_DTYPES, lambda dt, rng, d: [], differentiable=_diff,
                grad_op="_npi_" + _name if _diff else None,
                grad_samples=_linalg_grads(_name) if _diff else None,
                error_inputs=lambda n=_name: _linalg_errors(n)))

# ----------------------------------------------------------------- np.random (issue 13)
# Values are checked statistically (Kolmogorov-Smirnov / chi-square) in test_random.py; here:
# the typed errors, and the reparameterized gradients of the location-scale, scale, uniform and
# lognormal distributions with array parameters (a fixed seed makes the numeric gradient's
# repeated calls draw the same z / u).
_RANDOM = {  # op name: (ndx function, NumPy function, a bad parameter set)
    "uniform": (np.random.uniform, onp.random.uniform, (0.0, onp.inf)),
    "normal": (np.random.normal, onp.random.normal, (0.0, -1.0)),
    "lognormal": (np.random.lognormal, onp.random.lognormal, (0.0, -1.0)),
    "gamma": (np.random.gamma, onp.random.gamma, (-1.0,)),
    "beta": (np.random.beta, onp.random.beta, (0.0, 1.0)),
    "chisquare": (np.random.chisquare, onp.random.chisquare, (0.0,)),
    "f": (np.random.f, onp.random.f, (1.0, 0.0)),
    "exponential": (np.random.exponential, onp.random.exponential, (-1.0,)),
    "gumbel": (np.random.gumbel, onp.random.gumbel, (0.0, -1.0)),
    "laplace": (np.random.laplace, onp.random.laplace, (0.0, -1.0)),
    "logistic": (np.random.logistic, onp.random.logistic, (0.0, -1.0)),
    "pareto": (np.random.pareto, onp.random.pareto, (0.0,)),
    "powerd": (np.random.power, onp.random.power, (0.0,)),
    "rayleigh": (np.random.rayleigh, onp.random.rayleigh, (-1.0,)),
    "weibull": (np.random.weibull, onp.random.weibull, (-1.0,)),
    "bernoulli": (npx.random.bernoulli, lambda p, size=None: onp.random.binomial(1, p, size),
                  (1.5,)),
    "randint": (np.random.randint, onp.random.randint, (5, 3)),
    "permutation": (np.random.permutation, onp.random.permutation, (1.5,)),  # (a 0-d x)
    # the counts and the later distributions (values: test_random_distributions.py)
    "poisson": (np.random.poisson, onp.random.poisson, (-1.0,)),
    "binomial": (np.random.binomial, onp.random.binomial, (5, 1.5)),
    "geometric": (np.random.geometric, onp.random.geometric, (0.0,)),
    "negative_binomial": (np.random.negative_binomial, onp.random.negative_binomial, (0, 0.5)),
    "wald": (np.random.wald, onp.random.wald, (0.0, 1.0)),
    "vonmises": (np.random.vonmises, onp.random.vonmises, (0.0, -1.0)),
    "zipf": (np.random.zipf, onp.random.zipf, (1.0,)),
    "logseries": (np.random.logseries, onp.random.logseries, (1.0,)),
    "noncentral_chisquare": (np.random.noncentral_chisquare, onp.random.noncentral_chisquare,
                             (0.0, 1.0)),
    "hypergeometric": (np.random.hypergeometric, onp.random.hypergeometric, (5, 5, 11)),
}


_REPARAMETERIZED = ("normal", "uniform", "lognormal", "gumbel", "laplace", "logistic",
                    "exponential", "rayleigh")


def _random_grads(name):
    def samples(rng):
        a = rng.standard_normal((3, 4))
        b = (a + 1 + rng.random((3, 4))) if name == "uniform" else 0.5 + rng.random((3, 4))
        if name in ("exponential", "rayleigh"):  # (one parameter: the scale)
            p = {"num_args": 1, "dtype": "float64"}
            return [GradSample((b,), {**p, "seed": 7}, "array-param"),
                    GradSample((b[:1],), {**p, "seed": 8, "size": (3, 4)}, "broadcast-param")]
        p = {"num_args": 2, "dtype": "float64"}
        return [GradSample((a, b), {**p, "seed": 7}, "array-params"),
                GradSample((a[:1], b), {**p, "seed": 8}, "broadcast-param")]
    return samples


for _name, (_fn, _ref, _bad) in _RANDOM.items():
    _diff = _name in _REPARAMETERIZED
    add(OpEntry(_name, _fn, _ref, "random", ("float32",), lambda dt, rng, d: [],
                differentiable=_diff, grad_op="_npi_" + _name if _diff else None,
                grad_samples=_random_grads(_name) if _diff else None,
                error_inputs=lambda n=_name, b=_bad: [
                    # NumPy's uniform says OverflowError for an infinite range; ndx a ValueError.
                    # permutation of a 0-d x: NumPy's IndexError, ndx's AxisError (both).
                    ErrorInput(b, {}, ValueError, "bad-parameter",
                               None if n == "uniform" else
                               IndexError if n == "permutation" else ValueError)]))

# ------------------------------------------------------------- complex dtypes (issue 13)
# Complex arithmetic and math through the existing ops are checked in test_complex.py (with
# the Wirtinger gradients); here: the complex-part ops and the gradients' product helpers.
COMPLEX = ("complex64", "complex128")


def complex_arg(shape, dtype, rng, domain=Domain()):
    """make_arg for complex dtypes: independent real and imaginary parts from `domain`."""
    dt = onp.dtype(dtype)
    if dt.kind != "c":
        return make_arg(shape, dtype, rng, domain)
    part = "float32" if dt == onp.complex64 else "float64"
    return onp.asarray(make_arg(shape, part, rng, domain)
                       + 1j * make_arg(shape, part, rng, domain)).astype(dt)


def complex_samples(arity):
    def make(dtype, rng, domains):
        return [Sample(tuple(complex_arg(s, dtype, rng, domains[0]) for _ in range(arity)),
                       name=f"shape{s}") for s in ELEMWISE_SHAPES]
    return make


def _numpy_dtype(np_dtype, arrays, kwargs, dtype):
    """NumPy's result dtype as it is (real parts of complex input keep their precision)."""
    return onp.dtype(np_dtype)


def _imag_unit_times(g, like):
    from ndx._registry import internal_function
    return internal_function("_npi_imag_unit_times")(g, like)


def _ref_imag_unit_times(g, like):
    return 1j * g.astype(like.dtype) if like.dtype.kind == "c" else onp.zeros_like(g, like.dtype)


def _float_grads(arity):
    def samples(rng):
        return [GradSample(tuple(rng.standard_normal((2, 3)) for _ in range(arity)), {}, "2x3")]
    return samples


for _name, _fn, _ref in (("real", np.real, onp.real), ("imag", np.imag, onp.imag),
                         ("conjugate", np.conjugate, onp.conjugate),
                         ("angle", np.angle, onp.angle)):
    # real / imag / conjugate on real dtypes: their "unary" entries above.
    add(OpEntry(_name if _name == "angle" else f"{_name}-complex", _fn, _ref, "complex",
                COMPLEX + ("float32", "float64"),
                complex_samples(1), differentiable=True, grad_op="_np_" + _name,
                grad_samples=_float_grads(1), expected_dtype=_numpy_dtype))
add(OpEntry("multiply_conj", lambda a, b: ndx._registry.internal_function(
                "_npi_multiply_conj")(a, b), lambda a, b: a * onp.conj(b), "complex",
            COMPLEX + ("float32", "float64"), complex_samples(2), differentiable=True,
            grad_op="_npi_multiply_conj", grad_samples=_float_grads(2)))
add(OpEntry("divide_conj", lambda a, b: ndx._registry.internal_function(
                "_npi_divide_conj")(a, b), lambda a, b: a / onp.conj(b), "complex",
            COMPLEX + ("float32", "float64"), complex_samples(2), domains=(Domain(0.5, 3.0),),
            differentiable=True, grad_op="_npi_divide_conj", grad_samples=_float_grads(2)))
add(OpEntry("imag_unit_times", _imag_unit_times, _ref_imag_unit_times, "complex",
            COMPLEX + ("float32", "float64"), complex_samples(2),
            expected_dtype=lambda r, arrays, kw, dt: onp.dtype(dt)))

# ----------------------------------------------------------------------- np.fft (issue 13)
# Forward values against NumPy's pocketfft here; the n-dimensional and Hermitian functions and
# the Wirtinger gradients in test_fft.py (the numeric gradient of test_ops is real-valued).
FFT_TOLS = {"complex64": (1e-4, 2e-4), "complex128": (1e-10, 1e-10), "float32": (1e-4, 2e-4),
            "float64": (1e-10, 1e-10)}


def _fft_dtype(np_dtype, arrays, kwargs, dtype):
    """NumPy 2 keeps single precision; ndx's default float (float32) stands in for float64
    where the input is an integer."""
    wide = onp.dtype(dtype) in (onp.float64, onp.complex128)
    if onp.dtype(np_dtype).kind == "c":
        return onp.dtype(onp.complex128 if wide else onp.complex64)
    return onp.dtype(onp.float64 if wide else onp.float32)


def fft_samples(real_only=False, inverse_real=False):
    def make(dtype, rng, domains):
        if real_only and onp.dtype(dtype).kind == "c":
            return []
        arg = lambda shape: complex_arg(shape, dtype, rng)  # noqa: E731
        out = [Sample((arg((8,)),), name="8"), Sample((arg((5,)),), name="odd-5"),
               Sample((arg((1,)),), {"n": 1} if inverse_real else {}, name="1"),
               Sample((arg((3, 12)),), {"axis": 0}, name="axis0"),
               Sample((arg((2, 7, 4)),), {"axis": 1}, name="3d-axis1"),
               Sample((arg((6,)),), {"n": 10}, name="pad"),
               Sample((arg((9,)),), {"n": 4}, name="crop"),
               Sample((arg((0, 6)),), name="empty-batch")]
        for norm in ("backward", "ortho", "forward"):
            out.append(Sample((arg((2, 6)),), {"norm": norm}, name=norm))
        if inverse_real:
            out.append(Sample((arg((7,)),), {"n": 11}, name="odd-n"))
        else:
            out.append(Sample((arg((1024,)),), name="1024"))
        return out
    return make


def _fft_errors(name):
    fn = getattr(np.fft, name)
    ref = getattr(onp.fft, name)
    assert callable(fn) and callable(ref)
    errors = [ErrorInput((onp.ones(4),), {"n": 0}, ValueError, "n-0", ValueError),
              ErrorInput((onp.ones(4),), {"norm": "bad"}, ValueError, "bad-norm", ValueError),
              ErrorInput((onp.ones(4),), {"axis": 1}, IndexError, "axis", IndexError)]
    if name == "rfft":
        errors.append(ErrorInput((onp.ones(4, dtype=onp.complex64),), {}, TypeError, "complex",
                                 TypeError))
    return errors


for _name in ("fft", "rfft", "irfft"):
    add(OpEntry(_name, getattr(np.fft, _name), getattr(onp.fft, _name), "fft",
                COMPLEX + ("float32", "float64") if _name != "rfft" else ("float32", "float64"),
                fft_samples(_name == "rfft", _name == "irfft"), tols=dict(FFT_TOLS),
                expected_dtype=_fft_dtype, error_inputs=lambda n=_name: _fft_errors(n)))

# ------------------------------------------------ session 53: the rest of NumPy's functions
def _block_samples(dtype, rng, domains):
    a, b, c, d = (make_arg(sh, dtype, rng) for sh in [(2, 2), (2, 3), (1, 2), (1, 3)])
    return [Sample(([[a, b], [c, d]],), {}, "2x2"),
            Sample(([a[0], b[0]],), {}, "1d"),
            Sample(([[[a]], [[a]]],), {}, "depth-3"),
            Sample(([make_arg((2, 0), dtype, rng), a],), {}, "zero-size"),
            Sample((a,), {}, "no-lists")]


add(OpEntry("block", np.block, onp.block, "search", NUMERIC, _block_samples,
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [
                ErrorInput(([(_f((2,)), _f((2,)))],), {}, TypeError, "tuple", TypeError),
                ErrorInput(([],), {}, ValueError, "empty-list", ValueError),
                ErrorInput(([[_f((2,))], _f((2,))],), {}, ValueError, "depths", ValueError)]))
add(OpEntry("mask_indices", lambda n, k=0: np.mask_indices(n, np.triu, k),
            lambda n, k=0: onp.mask_indices(n, onp.triu, k), "search", ("int64",),
            lambda dt, rng, d: [Sample((4,), {}, "triu"), Sample((4,), {"k": 1}, "k=1"),
                                Sample((0,), {}, "n=0")],
            error_inputs=lambda: [ErrorInput((2.5,), {}, TypeError, "float-n", TypeError)]))
add(OpEntry("asanyarray", np.asanyarray, onp.asanyarray, "search", ALL_DTYPES,
            lambda dt, rng, d: [Sample((make_arg((2, 3), dt, rng),), {}, "2d"),
                                Sample((make_arg((), dt, rng),), {}, "0d")]))
add(OpEntry("asarray_chkfinite", np.asarray_chkfinite, onp.asarray_chkfinite, "search",
            NUMERIC, lambda dt, rng, d: [Sample((make_arg((2, 3), dt, rng),), {}, "2d"),
                                         Sample((make_arg((0,), dt, rng),), {}, "empty")],
            error_inputs=lambda: [
                ErrorInput((onp.array([1.0, onp.nan]),), {}, ValueError, "nan", ValueError),
                ErrorInput((onp.array([onp.inf], onp.float32),), {}, ValueError, "inf",
                           ValueError)]))


def _gradient_samples(dtype, rng, domains):
    f1, f2 = make_arg((7,), dtype, rng), make_arg((4, 5), dtype, rng)
    coords = onp.cumsum(rng.uniform(0.5, 1.5, 5)).astype(dtype)
    return [Sample((f1,), {}, "1d"), Sample((f2,), {}, "2d"),
            Sample((f2, 0.5), {}, "spacing"),
            Sample((f2, 2.0, coords), {}, "coordinates"),
            Sample((f2, 2.0, coords), {"edge_order": 2}, "edge-order-2"),
            Sample((f2, 2.0, coords.astype("float64")), {}, "float64-coordinates"),
            Sample((f1,), {"edge_order": 2}, "1d-edge-order-2"),
            Sample((f2,), {"axis": -1}, "axis")]


add(OpEntry("gradient", np.gradient, onp.gradient, "search", FLOATS + ("int32", "int64"),
            _gradient_samples, tols=dict(ACCUM_TOLS),
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [
                ErrorInput((_f((5,)),), {"edge_order": 3}, ValueError, "edge-order", ValueError),
                ErrorInput((_f((2,)),), {"edge_order": 2}, ValueError, "too-short", ValueError),
                ErrorInput((_f((3, 3)), 1.0, 2.0, 3.0), {}, TypeError, "spacing-count",
                           TypeError),
                ErrorInput((_f((3,)), onp.ones(4)), {}, ValueError, "coords-length",
                           ValueError),
                ErrorInput((onp.array([True, False, True]),), {}, TypeError, "bool",
                           TypeError)]))


def _unwrap_samples(dtype, rng, domains):
    if is_float(dtype):
        phase = onp.cumsum(rng.uniform(-3, 3, (3, 12)), axis=1)
        w = onp.mod(phase, 2 * onp.pi).astype(dtype)
        return [Sample((w,), {}, "rows"), Sample((w.T.copy(),), {"axis": 0}, "axis0"),
                Sample((w,), {"discont": 4.0}, "discont"),
                Sample((w[0],), {"period": 3.0}, "period"),
                Sample((w[:, :0],), {}, "empty")]
    x = make_arg((10,), dtype, rng, Domain(0, 8))
    return [Sample((x,), {"period": 8}, "int-period"), Sample((x,), {"period": 7}, "odd-period"),
            Sample((x,), {}, "int-default"), Sample((x[:0],), {}, "empty-int")]


add(OpEntry("unwrap", np.unwrap, onp.unwrap, "search", ("float32", "float64", "int32", "int64"),
            _unwrap_samples, tols=dict(ACCUM_TOLS),
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [ErrorInput((onp.float64(1.0),), {}, ValueError, "0d",
                                             ValueError)]))
add(OpEntry("sort_complex", np.sort_complex, onp.sort_complex, "search",
            NUMERIC + ("complex64", "complex128"), lambda dt, rng, d: [
                Sample((make_arg((9,), dt, rng, Domain(-3, 3)),), {}, "1d"),
                Sample((make_arg((3, 4), dt, rng, Domain(-3, 3)),), {}, "2d"),
                Sample((make_arg((0,), dt, rng),), {}, "empty")],
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [ErrorInput((onp.float64(1.0),), {}, ValueError, "0d",
                                             ValueError)]))


def _histdd_flat(fn):
    """histogramdd's (H, [edges]) as one flat tuple, for the table's comparison."""
    def run(*args, **kwargs):
        hist, edges = fn(*args, **kwargs)
        return (hist, *edges)
    return run


def _histdd_samples(dtype, rng, domains):
    x = make_arg((40, 3), dtype, rng, Domain(-4, 4))
    w = rng.uniform(0, 1, 40)
    edges = onp.array([-4, -1, 0, 2, 4.0])
    return [Sample((x,), {}, "default"), Sample((x,), {"bins": 4}, "bins"),
            Sample((x,), {"bins": [2, 3, edges]}, "per-axis-bins"),
            Sample((x,), {"bins": [[-4, 0.1, 4], 2, 3]}, "edge-list"),
            Sample((x,), {"range": [(-2, 2), (-3, 3), (0, 4)]}, "range"),
            Sample((x,), {"density": True, "bins": 3}, "density"),
            Sample((x,), {"weights": w}, "weights"),
            Sample((x[:, 0],), {"bins": 5}, "1d-sample"),
            Sample((make_arg((0, 2), dtype, rng),), {}, "empty")]


add(OpEntry("histogramdd", _histdd_flat(np.histogramdd), _histdd_flat(onp.histogramdd),
            "search", NUMERIC, _histdd_samples, tols=dict(ACCUM_TOLS),
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [
                ErrorInput((_f((5, 2)),), {"bins": [2, 3, 4]}, ValueError, "bins-dims",
                           ValueError),
                ErrorInput((_f((5, 2)),), {"bins": 0}, ValueError, "bins-0", ValueError),
                ErrorInput((_f((5, 2)),), {"range": [(0, 1)]}, ValueError, "range-dims",
                           ValueError),
                # NumPy checks len(range) (then indexes a dict: KeyError); ndx names the type.
                ErrorInput((_f((5, 2)),), {"range": {"a": 1}}, TypeError, "range-dict", ValueError),
                ErrorInput((_f((5, 2)),), {"bins": [onp.array([2.0, 1.0]), 2]}, ValueError,
                           "decreasing-edges", ValueError)]))


def _hist2d_samples(dtype, rng, domains):
    x, y = make_arg((30,), dtype, rng, Domain(-4, 4)), make_arg((30,), dtype, rng, Domain(-4, 4))
    return [Sample((x, y), {}, "default"), Sample((x, y), {"bins": [3, 5]}, "pair"),
            Sample((x, y), {"bins": onp.array([-4, 0, 1, 4.0])}, "edges"),
            Sample((x, y), {"density": True, "bins": 4}, "density")]


add(OpEntry("histogram2d", np.histogram2d, onp.histogram2d, "search", NUMERIC, _hist2d_samples,
            tols=dict(ACCUM_TOLS), expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [ErrorInput((_f((3,)), _f((4,))), {}, ValueError, "lengths",
                                             ValueError)]))
add(OpEntry("matvec", np.matvec, onp.matvec, "search", FLOATS + ("int32", "int64"),
            lambda dt, rng, d: [
                Sample((make_arg((3, 4), dt, rng), make_arg((4,), dt, rng)), {}, "2d-1d"),
                Sample((make_arg((2, 1, 3, 4), dt, rng), make_arg((5, 4), dt, rng)), {},
                       "batch-broadcast"),
                Sample((make_arg((0, 4), dt, rng), make_arg((4,), dt, rng)), {}, "zero-rows")],
            tols=dict(ACCUM_TOLS),
            error_inputs=lambda: [
                ErrorInput((_f((4,)), _f((4,))), {}, ValueError, "1d-matrix", ValueError),
                ErrorInput((_f((3, 4)), _f((3,))), {}, ValueError, "mismatch", ValueError)]))
add(OpEntry("vecmat", np.vecmat, onp.vecmat, "search",
            FLOATS + ("int32", "int64", "complex64", "complex128"),
            lambda dt, rng, d: [
                Sample((make_arg((4,), dt, rng), make_arg((4, 3), dt, rng)), {}, "1d-2d"),
                Sample((make_arg((5, 1, 4), dt, rng), make_arg((2, 4, 3), dt, rng)), {},
                       "batch-broadcast")],
            tols=dict(ACCUM_TOLS, complex64=(1e-5, 1e-5), complex128=(1e-11, 1e-12)),
            error_inputs=lambda: [
                ErrorInput((_f((4,)), _f((4,))), {}, ValueError, "1d-matrix", ValueError),
                ErrorInput((_f((3,)), _f((4, 2))), {}, ValueError, "mismatch", ValueError)]))


def _poly_pair_samples(dtype, rng, domains):
    a, b = make_arg((4,), dtype, rng, Domain(-3, 3)), make_arg((2,), dtype, rng, Domain(-3, 3))
    return [Sample((a, b), {}, "4-2"), Sample((b, a), {}, "2-4"),
            Sample((a, make_arg((), dtype, rng, Domain(-3, 3))), {}, "0d")]


for _name in ("polyadd", "polysub", "polymul"):
    add(OpEntry(_name, getattr(np, _name), getattr(onp, _name), "search", NUMERIC,
                _poly_pair_samples, tols=dict(ACCUM_TOLS),
                expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt)))
add(OpEntry("polyder", np.polyder, onp.polyder, "search", NUMERIC, lambda dt, rng, d: [
    Sample((make_arg((5,), dt, rng, Domain(-3, 3)),), {}, "first"),
    Sample((make_arg((5,), dt, rng, Domain(-3, 3)),), {"m": 3}, "third"),
    Sample((make_arg((3,), dt, rng, Domain(-3, 3)),), {"m": 0}, "zeroth"),
    Sample((make_arg((1,), dt, rng, Domain(-3, 3)),), {}, "constant")],
    expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
    error_inputs=lambda: [ErrorInput((_f((3,)),), {"m": -1}, ValueError, "m<0", ValueError)]))
add(OpEntry("polyint", np.polyint, onp.polyint, "search", NUMERIC, lambda dt, rng, d: [
    Sample((make_arg((4,), dt, rng, Domain(-3, 3)),), {}, "first"),
    Sample((make_arg((4,), dt, rng, Domain(-3, 3)),), {"m": 2, "k": [1.5, -2.0]}, "constants"),
    Sample((make_arg((4,), dt, rng, Domain(-3, 3)),), {"m": 3, "k": 2.0}, "scalar-constant"),
    Sample((make_arg((4,), dt, rng, Domain(-3, 3)),), {"m": 70, "k": 0.5}, "many")],
    tols=dict(ACCUM_TOLS), expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
    error_inputs=lambda: [
        ErrorInput((_f((3,)),), {"m": -1}, ValueError, "m<0", ValueError),
        ErrorInput((_f((3,)),), {"m": 3, "k": [1.0, 2.0]}, ValueError, "short-k", ValueError)]))
add(OpEntry("polydiv", np.polydiv, onp.polydiv, "search", SIGNED + FLOATS, lambda dt, rng, d: [
    Sample((onp.array([1, -3, 2, 4], dtype=dt), onp.array([1, 2], dtype=dt)), {}, "by-linear"),
    Sample((onp.array([2, 3], dtype=dt), onp.array([1, 1, 1], dtype=dt)), {}, "lower-degree"),
    Sample((onp.array([1, -3, 2], dtype=dt), onp.array([1, -1], dtype=dt)), {}, "exact"),
    # a zero leading coefficient: NumPy's inf and NaN
    Sample((onp.array([1, -3, 2], dtype=dt), onp.array([0, 2], dtype=dt)), {}, "zero-leading")],
    tols=dict(ACCUM_TOLS), expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt)))
add(OpEntry("poly", np.poly, onp.poly, "search", ("float16", "float32", "float64", "int32"),
            lambda dt, rng, d: [
    Sample((onp.array([1, 2, 3], dtype=dt),), {}, "roots")] + ([
    # (NumPy's eigvals refuses float16 and answers integers in float64; ndx's in float32)
    Sample((onp.array([[2, 1], [1, 3]], dtype=dt),), {}, "matrix")] if is_float(dt) and
                                                               dt != "float16" else []),
    tols=dict(ACCUM_TOLS), expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
    error_inputs=lambda: [ErrorInput((_f((2, 3)),), {}, ValueError, "not-square", ValueError)]))
add(OpEntry("roots", lambda p: np.sort_complex(np.roots(p)),
            lambda p: onp.sort_complex(onp.roots(p)), "search", ("float64",),
            lambda dt, rng, d: [
                Sample((onp.array([1, -6, 11, -6], dtype=dt),), {}, "three-real"),
                Sample((onp.array([0, 2, 0, 2, 0, 0], dtype=dt),), {}, "zeros-both-ends"),
                Sample((onp.array([1, 0, 4], dtype=dt),), {}, "complex-pair")],
            # (float32 roots come out of sort_complex as complex128: test_products checks them)
            tols={"complex128": (1e-10, 1e-12)},
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [ErrorInput((_f((2, 2)),), {}, ValueError, "2d", ValueError)]))


def _polyfit_samples(dtype, rng, domains):
    x = onp.linspace(-1, 1, 12).astype(dtype)
    y = (2 * x ** 2 - x + 0.5 + rng.normal(0, 0.05, 12)).astype(dtype)
    return [Sample((x, y, 2), {}, "quadratic"), Sample((x, y, 1), {}, "line"),
            Sample((x, y, 2), {"w": onp.linspace(1, 2, 12)}, "weights"),
            Sample((x, onp.stack([y, 3 * y], 1), 1), {}, "two-series")]


add(OpEntry("polyfit", np.polyfit, onp.polyfit, "search", ("float32", "float64"),
            _polyfit_samples, tols={"float64": (1e-6, 1e-9)},
            expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
            error_inputs=lambda: [
                ErrorInput((_f((4,)), _f((4,)), -1), {}, ValueError, "deg<0", ValueError),
                ErrorInput((_f((4,)), _f((3,)), 1), {}, TypeError, "lengths", TypeError),
                ErrorInput((_f((2, 2)), _f((2,)), 1), {}, TypeError, "2d-x", TypeError)]))


# ------------------------------------------------------------------ mixed precision (mx.amp)
def _amp_cast_ref(a, dtype):
    return a.astype(dtype) if a.dtype.kind == "f" else a


def _multicast_ref(xs, cast_narrow=False):
    floats = [x.dtype for x in xs if x.dtype.kind == "f"]
    if not floats:
        return list(xs)
    t = min(floats, key=lambda d: d.itemsize) if cast_narrow else onp.result_type(*floats)
    return [x.astype(t) if x.dtype.kind == "f" else x for x in xs]


def _multicast(xs, **kw):
    r = ndx.nd._npi_amp_multicast(*xs, num_outputs=len(xs), **kw)
    return list(r) if isinstance(r, (list, tuple)) else [r]


def _finite_flag(*xs):
    return onp.array([float(all(onp.isfinite(x).all() for x in xs))], dtype=onp.float32)


def _all_finite_samples(multi):
    def make(dtype, rng, domains):
        def case(shape, name, bad=None):
            x = make_arg(shape, dtype, rng)
            if bad is not None:
                x.flat[x.size - 1] = bad
            arrays = [make_arg((3,), dtype, rng), x] if multi else [x]
            return Sample(tuple(arrays), {}, name)
        out = [case((2, 3), "(2,3)"), case((), "()"), case((0, 3), "(0,3)")]
        if is_float(dtype):
            out += [case((2, 3), f"with-{v}", v) for v in (onp.inf, -onp.inf, onp.nan)]
        return out
    return make


add(OpEntry(
    "amp_cast", lambda a, dtype: ndx.nd._npi_amp_cast(a, dtype=dtype), _amp_cast_ref, "shape",
    ALL_DTYPES, shape_samples([
        ("(2,3)->float16", (2, 3), ["float16"], {}),
        ("()->float32", (), ["float32"], {}),
        ("(0,3)->float64", (0, 3), ["float64"], {}),
    ]),
    expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt),
    differentiable=True, grad_op="_npi_amp_cast",
    grad_samples=shape_grad([("(2,3)->float64", [(2, 3)], {"dtype": "float64"})]),
    error_inputs=lambda: [
        ErrorInput((_f((2,)), "int32"), {}, TypeError, "integer-target", None)]))
add(OpEntry(
    "amp_multicast", _multicast, _multicast_ref, "shape", ALL_DTYPES, shape_samples([
        ("2x(2,3)", [(2, 3), (2, 3)], [], {}),
        ("(3,)+()-narrow", [(3,), ()], [], {"cast_narrow": True}),
        ("(0,3)", [(0, 3)], [], {}),
    ]),
    expected_dtype=lambda np_dt, arrays, kw, dt: onp.dtype(np_dt)))
add(OpEntry(
    "all_finite", lambda a: ndx.nd._npi_all_finite(a), _finite_flag, "shape", ALL_DTYPES,
    _all_finite_samples(multi=False), expected_dtype=lambda *_: onp.dtype("float32")))
add(OpEntry(
    "multi_all_finite", lambda *xs: ndx.nd._npi_multi_all_finite(*xs, num_arrays=len(xs)),
    _finite_flag, "shape", ALL_DTYPES, _all_finite_samples(multi=True),
    expected_dtype=lambda *_: onp.dtype("float32")))


# -------------------------------------------------------------------------------------- index
ENTRY_BY_NAME = {e.name: e for e in ENTRIES}
assert len(ENTRY_BY_NAME) == len(ENTRIES), "duplicate entry names"


def entries(*kinds):
    return [e for e in ENTRIES if not kinds or e.kind in kinds]

