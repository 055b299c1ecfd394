"""Converters of ndx's tensor ops (elementwise arithmetic, reductions, shape manipulation,
indexing, constants) to ONNX opset 17, and the table of converters by ndx op name.

A converter takes a NodeView (see _builder) and adds the ONNX nodes computing the ndx node's
outputs, the last of them writing n.out(i). Dtypes follow ndx's inference: where ONNX wants
operands of one type, they are cast to the type ndx computes in."""
import numpy as onp

OPSET = 17
CONVERTERS = {}

_INT64_MAX = 2 ** 63 - 1
_INT64_MIN = -(2 ** 63)


def converter(*ops):
    """Registers the decorated function as the converter of the given ndx ops."""
    def register(fn):
        for op in ops:
            CONVERTERS[op] = fn
        return fn
    return register


def _is_float(dtype):
    return onp.issubdtype(onp.dtype(dtype), onp.floating)


# ---- elementwise ------------------------------------------------------------------------------
_UNARY = {
    "_np_abs": "Abs", "_np_absolute": "Abs", "_np_fabs": "Abs", "_np_negative": "Neg",
    "_np_exp": "Exp", "_np_log": "Log", "_np_sqrt": "Sqrt", "_np_sin": "Sin", "_np_cos": "Cos",
    "_np_tan": "Tan", "_np_tanh": "Tanh", "_np_sinh": "Sinh", "_np_cosh": "Cosh",
    "_np_arcsin": "Asin", "_np_asin": "Asin", "_np_arccos": "Acos", "_np_acos": "Acos",
    "_np_arctan": "Atan", "_np_atan": "Atan", "_np_arcsinh": "Asinh", "_np_asinh": "Asinh",
    "_np_arccosh": "Acosh", "_np_acosh": "Acosh", "_np_arctanh": "Atanh", "_np_atanh": "Atanh",
    "_np_floor": "Floor", "_np_ceil": "Ceil", "_np_sign": "Sign", "_np_rint": "Round",
    "_np_reciprocal": "Reciprocal", "_npx_erf": "Erf", "_npx_relu": "Relu",
    "_npx_sigmoid": "Sigmoid", "_npx_softsign": "Softsign", "_np_positive": "Identity",
    "_npx_stop_gradient": "Identity",
}


@converter(*_UNARY)
def _unary(n):
    n.emit(_UNARY[n.op], [n.input_as(0, n.out_dtypes[0])])


@converter("_np_square")
def _square(n):
    x = n.input_as(0, n.out_dtypes[0])
    n.emit("Mul", [x, x])


@converter("_np_log2", "_np_log10")
def _log_base(n):
    base = 2.0 if n.op == "_np_log2" else 10.0
    n.emit("Div", [n.make("Log", [n.input_as(0, n.out_dtypes[0])]), n.const(onp.log(base))])


@converter("_np_log1p")
def _log1p(n):
    n.emit("Log", [n.make("Add", [n.input_as(0, n.out_dtypes[0]), n.const(1)])])


@converter("_np_expm1")
def _expm1(n):
    n.emit("Sub", [n.make("Exp", [n.input_as(0, n.out_dtypes[0])]), n.const(1)])


@converter("_np_round", "_np_round_", "_np_around")
def _round(n):
    if n.integer("decimals", 0) != 0:
        n.fail(f"decimals={n.param('decimals')} is not supported; expected 0")
    n.emit("Round", [n.input_as(0, n.out_dtypes[0])])


@converter("_np_logical_not")
def _logical_not(n):
    n.emit("Not", [n.input_as(0, onp.bool_)])


@converter("_np_isnan", "_np_isinf", "_np_isfinite")
def _float_class(n):
    x = n.inputs[0]
    if n.op == "_np_isfinite":
        bad = n.make("Or", [n.make("IsNaN", [x]), n.make("IsInf", [x])])
        n.emit("Not", [bad])
    else:
        n.emit("IsNaN" if n.op == "_np_isnan" else "IsInf", [x])


_BINARY = {
    "_np_add": "Add", "_np_subtract": "Sub", "_np_multiply": "Mul", "_np_true_divide": "Div",
    "_np_divide": "Div", "_np_power": "Pow", "_np_pow": "Pow", "_np_maximum": "Max",
    "_np_minimum": "Min",
}
_COMPARE = {
    "_np_equal": "Equal", "_np_greater": "Greater", "_np_greater_equal": "GreaterOrEqual",
    "_np_less": "Less", "_np_less_equal": "LessOrEqual", "_np_not_equal": "Equal",
}
_LOGICAL = {"_np_logical_and": "And", "_np_logical_or": "Or", "_np_logical_xor": "Xor"}


def _operands(n, dtype):
    return [n.input_as(i, dtype) for i in range(len(n.inputs))]


@converter(*_BINARY)
def _binary(n):
    n.emit(_BINARY[n.op], _operands(n, n.out_dtypes[0]))


@converter(*_COMPARE)
def _compare(n):
    operands = _operands(n, onp.result_type(*n.in_dtypes))
    if n.op == "_np_not_equal":
        n.emit("Not", [n.make("Equal", operands)])
    else:
        n.emit(_COMPARE[n.op], operands)


@converter(*_LOGICAL)
def _logical(n):
    n.emit(_LOGICAL[n.op], _operands(n, onp.bool_))


@converter("_np_mod", "_np_remainder")
def _mod(n):
    a, b = _operands(n, n.out_dtypes[0])
    if not _is_float(n.out_dtypes[0]):
        n.emit("Mod", [a, b], fmod=0)  # (the divisor's sign, as Python's and NumPy's %)
        return
    floor = n.make("Floor", [n.make("Div", [a, b])])
    n.emit("Sub", [a, n.make("Mul", [floor, b])])


@converter("_np_floor_divide")
def _floor_divide(n):
    a, b = _operands(n, n.out_dtypes[0])
    if _is_float(n.out_dtypes[0]):
        n.emit("Floor", [n.make("Div", [a, b])])
    else:  # a - a % b is a multiple of b: the integer division is exact
        n.emit("Div", [n.make("Sub", [a, n.make("Mod", [a, b], fmod=0)]), b])


@converter("_np_hypot")
def _hypot(n):
    a, b = _operands(n, n.out_dtypes[0])
    n.emit("Sqrt", [n.make("Add", [n.make("Mul", [a, a]), n.make("Mul", [b, b])])])


@converter("_npi_squared_difference")
def _squared_difference(n):
    d = n.make("Sub", _operands(n, n.out_dtypes[0]))
    n.emit("Mul", [d, d])


@converter("_np_where")
def _where(n):
    dtype = n.out_dtypes[0]
    n.emit("Where", [n.input_as(0, onp.bool_), n.input_as(1, dtype), n.input_as(2, dtype)])


@converter("_npi_clip")
def _clip(n):
    dtype = n.out_dtypes[0]
    x, lo, hi = _operands(n, dtype)
    if n.in_shapes[1] == () and n.in_shapes[2] == ():
        n.emit("Clip", [x, lo, hi])
    else:
        n.emit("Min", [n.make("Max", [x, lo]), hi])


@converter("_npi_astype", "_npi_amp_cast", "_npi_cast_like")
def _cast(n):
    n.emit("Cast", [n.inputs[0]], to=n.onnx_type(n.out_dtypes[0]))


@converter("_npi_weak_scalar_like")
def _weak_scalar(n):
    kind, text = n.integer("kind", 2), n.param("value")
    if text is None:
        n.fail("param value is required", ValueError)
    value = {0: lambda t: t in ("True", "true", "1"), 1: int, 2: float}.get(kind)
    if value is None:
        n.fail(f"param kind={kind}: expected 0 (bool), 1 (int) or 2 (float)", ValueError)
    n.emit_constant(onp.asarray(value(text), dtype=n.out_dtypes[0]))


# ---- creation ---------------------------------------------------------------------------------
@converter("_np_zeros_like", "_np_ones_like", "_np_full_like")
def _fill_like(n):
    value = {"_np_zeros_like": 0, "_np_ones_like": 1}.get(n.op)
    if value is None:
        value = n.number("fill_value")
    shape = n.make("Shape", [n.inputs[0]])
    n.emit("ConstantOfShape", [shape], value=n.tensor_attr([value], n.out_dtypes[0]))


@converter("_npi_zeros", "_npi_ones", "_npi_full", "_npi_arange")
def _creation(n):
    shape, dtype = n.out_shapes[0], n.out_dtypes[0]
    if n.op == "_npi_arange":
        start, stop = n.number("start"), n.param("stop")
        start, stop = (0.0, start) if stop is None else (start, float(stop))
        value = onp.arange(start, stop, n.number("step", 1.0)).astype(dtype)
    else:
        fill = {"_npi_zeros": 0.0, "_npi_ones": 1.0}.get(n.op)
        value = onp.full(shape, n.number("fill_value") if fill is None else fill, dtype)
    n.emit_constant(value.reshape(shape))


# ---- reductions -------------------------------------------------------------------------------
def _reduce_axes(n):
    """The reduced axes (non-negative, sorted), None for all."""
    axes = n.ints("axis")
    if axes is None:
        return None
    return sorted({n.axis(a) for a in axes})


def _reduce(n, onnx_op, x, axes, keepdims, output=None):
    """An ONNX reduction of x over axes (None: all; (): none); ReduceSum takes its axes as an
    input in opset 13+, the others as an attribute up to opset 17."""
    outputs = None if output is None else [output]
    keep = int(keepdims)
    if axes is not None and not axes:
        return n.make("Identity", [x], outputs=outputs)
    if axes is None:
        return n.make(onnx_op, [x], outputs=outputs, keepdims=keep)
    if onnx_op == "ReduceSum":
        return n.make(onnx_op, [x, n.int64s(axes)], outputs=outputs, keepdims=keep)
    return n.make(onnx_op, [x], outputs=outputs, axes=list(axes), keepdims=keep)


_REDUCE = {"_np_sum": ("ReduceSum", "Add"), "_np_mean": ("ReduceMean", None),
           "_np_prod": ("ReduceProd", "Mul"), "_np_max": ("ReduceMax", "Max"),
           "_np_amax": ("ReduceMax", "Max"), "_np_min": ("ReduceMin", "Min"),
           "_np_amin": ("ReduceMin", "Min")}


@converter(*_REDUCE)
def _reduction(n):
    onnx_op, combine = _REDUCE[n.op]
    x = n.input_as(0, n.out_dtypes[0])
    initial = n.param("initial")
    keepdims = n.flag("keepdims")
    if initial is None:
        _reduce(n, onnx_op, x, _reduce_axes(n), keepdims, n.out(0))
        return
    if combine is None:
        n.fail(f"initial={initial} is not supported (NumPy's mean takes none)")
    reduced = _reduce(n, onnx_op, x, _reduce_axes(n), keepdims)
    n.emit(combine, [reduced, n.const(float(initial))])


@converter("_np_any", "_np_all")
def _any_all(n):
    # (ReduceMax / ReduceMin take bool from opset 20: reduce 0 / 1 as int32)
    x = n.cast(n.input_as(0, onp.bool_), onp.bool_, onp.int32)
    onnx_op = "ReduceMax" if n.op == "_np_any" else "ReduceMin"
    reduced = _reduce(n, onnx_op, x, _reduce_axes(n), n.flag("keepdims"))
    n.emit("Cast", [reduced], to=n.onnx_type(onp.bool_))


@converter("_np_argmax", "_np_argmin")
def _arg_reduce(n):
    onnx_op = "ArgMax" if n.op == "_np_argmax" else "ArgMin"
    axis, keepdims = n.param("axis"), n.flag("keepdims")
    x = n.inputs[0]
    if axis is None:
        x = n.make("Reshape", [x, n.int64s([-1])])
        index = n.make(onnx_op, [x], axis=0, keepdims=0)
        if keepdims:
            index = n.make("Reshape", [index, n.int64s([1] * n.rank())])
    else:
        index = n.make(onnx_op, [x], axis=n.axis(n.integer("axis")), keepdims=int(keepdims))
    n.emit("Cast", [index], to=n.onnx_type(n.out_dtypes[0]))


# ---- shapes -----------------------------------------------------------------------------------
@converter("_np_reshape")
def _np_reshape(n):
    shape = n.ints("newshape")
    if shape is None:
        n.fail("param newshape is required", ValueError)
    n.emit("Reshape", [n.inputs[0], n.int64s(shape)], allowzero=int(0 in shape))


def _npx_reshape_dims(n, codes):
    """npx.reshape's codes as output dims: ('in', j) input dim j, ('size', v), ('infer',),
    ('merge', j) input dims j and j + 1 multiplied, ('split', j, a, b) input dim j split into
    sizes a and b (one may be -1)."""
    rank, dims, i, k = n.rank(), [], 0, 0
    while k < len(codes):
        code = codes[k]
        if code >= 0 or code == -1:
            dims.append(("size", code) if code >= 0 else ("infer",))
            i += 1
        elif code == -2:
            dims.append(("in", i))
            i += 1
        elif code == -3:
            i += 1
        elif code == -4:
            dims.extend(("in", j) for j in range(i, rank))
            i = rank
        elif code == -5:
            dims.append(("merge", i))
            i += 2
        elif code == -6 and k + 2 < len(codes):
            a, b = codes[k + 1:k + 3]
            dims.extend([("split", i, a, b, 0), ("split", i, a, b, 1)])
            i, k = i + 1, k + 2
        else:
            n.fail(f"newshape={codes}: code {code} is not one of -1 .. -6", ValueError)
        k += 1
    return dims


def _simple_target(dims):
    """An ONNX Reshape target for dims when each is a copy of the input dim at its own
    position (0), a positive size or the inferred one (-1); None otherwise."""
    target = []
    for pos, dim in enumerate(dims):
        if dim[0] == "in" and dim[1] == pos:
            target.append(0)
        elif dim[0] == "size" and dim[1] > 0:
            target.append(dim[1])
        elif dim[0] == "infer":
            target.append(-1)
        else:
            return None
    return target


def _shape_dim(n, shape, dim):
    """The int64 [1] tensor of one output dim computed from the input's Shape."""
    def at(j):
        return n.make("Slice", [shape, n.int64s([j]), n.int64s([j + 1])])
    if dim[0] == "in":
        return at(dim[1])
    if dim[0] in ("size", "infer"):
        return n.int64s([dim[1] if dim[0] == "size" else -1])
    if dim[0] == "merge":
        return n.make("Mul", [at(dim[1]), at(dim[1] + 1)])
    _, j, a, b, part = dim
    size = (a, b)[part]
    if size != -1:
        return n.int64s([size])
    return n.make("Div", [at(j), n.int64s([(a, b)[1 - part]])])


@converter("_npx_reshape")
def _npx_reshape(n):
    if n.flag("reverse"):
        n.fail("reverse=True is not supported")
    codes = n.ints("newshape")
    if codes is None:
        n.fail("param newshape is required", ValueError)
    dims = _npx_reshape_dims(n, codes)
    target = _simple_target(dims)
    if target is not None:
        n.emit("Reshape", [n.inputs[0], n.int64s(target)])
        return
    shape = n.make("Shape", [n.inputs[0]])  # (dims from the input's runtime shape)
    parts = [_shape_dim(n, shape, d) for d in dims]
    n.emit("Reshape", [n.inputs[0], n.make("Concat", parts, axis=0)], allowzero=1)


@converter("_np_transpose")
def _transpose(n):
    axes = n.ints("axes")
    if not axes:
        n.emit("Transpose", [n.inputs[0]])
    else:
        n.emit("Transpose", [n.inputs[0]], perm=[n.axis(a) for a in axes])


@converter("_np_swapaxes")
def _swapaxes(n):
    perm = list(range(n.rank()))
    a, b = n.axis(n.integer("axis1")), n.axis(n.integer("axis2"))
    perm[a], perm[b] = perm[b], perm[a]
    n.emit("Transpose", [n.inputs[0]], perm=perm)


@converter("_np_expand_dims")
def _expand_dims(n):
    axes = n.ints("axis")
    if axes is None:
        n.fail("param axis is required", ValueError)
    rank = len(n.out_shapes[0])
    n.emit("Unsqueeze", [n.inputs[0], n.int64s(sorted(n.axis(a, rank) for a in axes))])


@converter("_np_squeeze")
def _squeeze(n):
    axes = n.ints("axis")
    if axes is None:
        n.emit("Squeeze", [n.inputs[0]])
    else:
        n.emit("Squeeze", [n.inputs[0], n.int64s(sorted(n.axis(a) for a in axes))])


def _slice_bounds(start, stop, step):
    """One axis' ONNX Slice start and end (None: omitted, ndx's INT64_MIN too)."""
    if start is None or start == _INT64_MIN:
        start = 0 if step > 0 else _INT64_MAX
    if stop is None or stop == _INT64_MIN:
        stop = _INT64_MAX if step > 0 else _INT64_MIN
    return start, stop


@converter("_npx_slice")
def _slice(n):
    begin, end = n.ints("begin", none_ok=True), n.ints("end", none_ok=True)
    if begin is None or end is None or len(begin) != len(end):
        n.fail(f"begin={n.param('begin')} and end={n.param('end')}: expected two tuples "
               f"of one length", ValueError)
    step = n.ints("step", none_ok=True) or ()
    step = tuple(1 if s is None else s for s in step) + (1,) * (len(begin) - len(step))
    starts, ends, axes, steps = [], [], [], []
    for axis, (b, e, s) in enumerate(zip(begin, end, step)):
        if s == 0:
            n.fail(f"step 0 on axis {axis}: expected a nonzero step", ValueError)
        omitted = (b is None or b == _INT64_MIN) and (e is None or e == _INT64_MIN)
        if omitted and s == 1:
            continue
        start, stop = _slice_bounds(b, e, s)
        starts.append(start)
        ends.append(stop)
        axes.append(axis)
        steps.append(s)
    if not axes:
        n.emit("Identity", [n.inputs[0]])
        return
    n.emit("Slice", [n.inputs[0], n.int64s(starts), n.int64s(ends), n.int64s(axes),
                     n.int64s(steps)])


@converter("_npi_concatenate")
def _concatenate(n):
    axis = n.axis(n.integer("axis", 0))
    n.emit("Concat", _operands(n, n.out_dtypes[0]), axis=axis)


@converter("_npi_stack")
def _stack(n):
    axis = n.axis(n.integer("axis", 0), len(n.out_shapes[0]))
    axes = n.int64s([axis])
    parts = [n.make("Unsqueeze", [x, axes]) for x in _operands(n, n.out_dtypes[0])]
    n.emit("Concat", parts, axis=axis)


def _split_bounds(n, size):
    """The (start, stop) of each piece numpy.split makes of an axis of the given size."""
    sections, indices = n.integer("sections", 0), n.ints("indices", ())
    if sections > 0:
        if size % sections:
            n.fail(f"sections={sections} does not divide the axis of size {size}", ValueError)
        step = size // sections
        return [(k * step, (k + 1) * step) for k in range(sections)]
    if not indices:
        n.fail("expected sections > 0 or indices", ValueError)
    cuts = [0] + [min(max(i if i >= 0 else i + size, 0), size) for i in indices] + [size]
    return list(zip(cuts[:-1], cuts[1:]))


@converter("_npi_split")
def _split(n):
    axis = n.axis(n.integer("axis", 0))
    bounds = _split_bounds(n, n.in_shapes[0][axis])
    if all(a <= b for a, b in bounds):  # (contiguous pieces: one Split)
        outputs = [n.out(i) for i in range(len(bounds))]
        n.make("Split", [n.inputs[0], n.int64s([b - a for a, b in bounds])], outputs=outputs,
              axis=axis)
        return
    for i, (a, b) in enumerate(bounds):  # (decreasing indices: pieces overlap or are empty)
        n.make("Slice", [n.inputs[0], n.int64s([a]), n.int64s([max(a, b)]), n.int64s([axis])],
              outputs=[n.out(i)])


@converter("_np_broadcast_to")
def _broadcast_to(n):
    n.emit("Expand", [n.inputs[0], n.int64s(n.out_shapes[0])])


@converter("_npi_broadcast_like")
def _broadcast_like(n):
    n.emit("Expand", [n.inputs[0], n.make("Shape", [n.inputs[1]])])


# ---- indexing and products --------------------------------------------------------------------
@converter("_npi_take")
def _take(n):
    axis = n.axis(n.integer("axis", 0))
    mode, size = n.param("mode", "clip"), n.in_shapes[0][axis]
    index = n.input_as(1, onp.int64)
    if mode == "clip":
        index = n.make("Clip", [index, n.const(0, onp.int64), n.const(size - 1, onp.int64)])
    elif mode == "wrap":
        index = n.make("Mod", [index, n.const(size, onp.int64)], fmod=0)
    elif mode != "raise":
        n.fail(f"mode={mode!r}: expected 'clip', 'wrap' or 'raise'", ValueError)
    n.emit("Gather", [n.inputs[0], index], axis=axis)


@converter("_np_matmul")
def _matmul(n):
    n.emit("MatMul", _operands(n, n.out_dtypes[0]))


@converter("_np_dot")
def _dot(n):
    a, b = _operands(n, n.out_dtypes[0])
    if n.rank(0) == 0 or n.rank(1) == 0:
        n.emit("Mul", [a, b])
    elif n.rank(1) <= 2:  # (then NumPy's dot is its matmul)
        n.emit("MatMul", [a, b])
    else:
        n.fail(f"dot of ranks {n.rank(0)} and {n.rank(1)} is not supported; expected a "
               f"second operand of rank <= 2 (or use matmul)")
