"""MXNet's legacy ``mx.nd`` operators under their MXNet names and with their MXNet
signatures and defaults (``concat(*data, dim=1)``, ``split(data, num_outputs, axis=1)``,
``sum(data, axis, keepdims, exclude)``, ``reshape`` with 0 / -1 / -2 / -3 / -4,
``BatchNorm`` with ``fix_gamma=True``, ``argmax`` and ``topk`` indices as float32, ...),
composed of ndx.numpy / ndx.numpy_extension ops, so autograd and devices work as there.
Each returns NDArrays."""
import builtins

import numpy as onp

from .. import _core
from .. import numpy as _np
from .. import numpy_extension as _npx
from .ndarray import _on_plain, _SparseStorage, _wrap

# ---- shapes -----------------------------------------------------------------------------


def _tuple(v):
    if v is None:
        return None
    if isinstance(v, (int, onp.integer)):
        return (int(v),)
    return tuple(int(d) for d in v)


def _legacy_shape(src, spec, reverse=False):
    """The shape MXNet's legacy reshape makes of `src` from `spec` (special values 0: copy
    this dimension, -1: infer, -2: copy the rest, -3: merge two, -4 a b: split one)."""
    src, spec = list(src), list(_tuple(spec))
    if reverse:
        if -4 in spec:
            raise ValueError("[reshape] -4 cannot be combined with reverse=True")
        src.reverse()
        spec.reverse()
    out, i, j = [], 0, 0
    while j < len(spec):
        v = spec[j]
        if v > 0:
            out.append(v)
            i += 1
        elif v == 0:
            if i >= len(src):
                raise ValueError(f"[reshape] 0 at position {j} has no input dimension to copy "
                                 f"(input shape {tuple(src)})")
            out.append(src[i])
            i += 1
        elif v == -1:
            out.append(-1)
            i += 1
        elif v == -2:
            out.extend(src[i:])
            i = len(src)
        elif v == -3:
            if i + 1 >= len(src):
                raise ValueError("[reshape] -3 needs two input dimensions to merge")
            out.append(src[i] * src[i + 1])
            i += 2
        elif v == -4:
            if j + 2 >= len(spec):
                raise ValueError("[reshape] -4 must be followed by two dimensions")
            d1, d2 = spec[j + 1], spec[j + 2]
            if d1 == -1 and d2 == -1:
                raise ValueError("[reshape] only one of the two dimensions after -4 may be -1")
            if d1 == -1:
                d1 = src[i] // d2
            elif d2 == -1:
                d2 = src[i] // d1
            if d1 * d2 != src[i]:
                raise ValueError(f"[reshape] -4 splits dimension {src[i]} into {d1} x {d2}")
            out.extend([d1, d2])
            i += 1
            j += 2
        else:
            raise ValueError(f"[reshape] invalid dimension {v} in shape {tuple(spec)}")
        j += 1
    if reverse:
        out.reverse()
        if out.count(-1) == 1:
            known = 1
            for d in out:
                if d != -1:
                    known *= d
            total = 1
            for d in src:
                total *= d
            out[out.index(-1)] = total // known if known else 0
    return tuple(out)


# MXNet 1.x's reshape codes as npx.reshape's (MXNet 2's): 0 copies a dim, -2 the rest, -3
# merges two, -4 splits one.
_NPX_CODES = {0: -2, -1: -1, -2: -4, -3: -5, -4: -6}


def _npx_codes(spec):
    codes, spec, j = [], list(_tuple(spec)), 0
    while j < len(spec):
        codes.append(_NPX_CODES.get(spec[j], spec[j]) if spec[j] <= 0 else spec[j])
        if spec[j] == -4:  # (the two sizes after it as they are)
            codes += spec[j + 1:j + 3]
            j += 2
        j += 1
    return tuple(codes)


def reshape(data, shape=None, reverse=False, **kwargs):
    """MXNet's legacy reshape (0 / -1 / -2 / -3 / -4, ``reverse``)."""
    if shape is None:
        shape = kwargs.pop("newshape", None)
    if shape is None:
        raise TypeError("[reshape] shape is required")
    target = _legacy_shape(data.shape, shape, reverse)  # (checks the codes)
    if _core._is_tracing():  # the codes, so a traced graph serves other shapes (any batch)
        return _wrap(_npx.reshape(data, _npx_codes(shape), reverse=reverse))
    return _wrap(_np.reshape(data, target))


Reshape = reshape


def reshape_like(lhs, rhs, **kwargs):
    return _wrap(_npx.reshape_like(lhs, rhs, **kwargs))


def flatten(data):
    """(d0, d1 * d2 * ...): MXNet's Flatten keeps the first axis."""
    if data.ndim:
        return _wrap(_npx.batch_flatten(data))
    return _wrap(_np.reshape(data, (1, -1) if data.size else (1, 0)))


Flatten = flatten


def expand_dims(data, axis):
    return _wrap(_np.expand_dims(data, axis))


def squeeze(data, axis=None):
    return _wrap(_np.squeeze(data, axis=_tuple(axis) if axis is not None else None))


def broadcast_to(data, shape):
    """`data` broadcast to `shape`; 0 keeps the input's dimension, as in MXNet."""
    shape = _tuple(shape)
    lead = len(shape) - data.ndim
    shape = tuple(data.shape[k - lead] if d == 0 and k >= lead else d
                  for k, d in enumerate(shape))
    return _wrap(_np.broadcast_to(data, shape))


def broadcast_axis(data, axis=(), size=()):
    axis, size = _tuple(axis), _tuple(size)
    shape = list(data.shape)
    for a, s in zip(axis, size):
        shape[a] = s
    return _wrap(_np.broadcast_to(data, tuple(shape)))


broadcast_axes = broadcast_axis


def broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None):
    return _wrap(_npx.broadcast_like(lhs, rhs, lhs_axes=lhs_axes, rhs_axes=rhs_axes))


def transpose(data, axes=(), *more_axes):
    axes = _tuple(axes) + tuple(more_axes)  # more_axes: x.transpose(2, 0, 1), NumPy's way
    return _wrap(_np.transpose(data, axes if axes else None))


def swapaxes(data, dim1=0, dim2=0):
    return _wrap(_np.swapaxes(data, dim1, dim2))


SwapAxis = swapaxes


def tile(data, reps):
    return _wrap(_np.tile(data, _tuple(reps)))


def repeat(data, repeats, axis=None):
    return _wrap(_np.repeat(data, repeats, axis=axis))


def flip(data, axis):
    return _wrap(_np.flip(data, axis=_tuple(axis)))


reverse = flip


def slice(data, begin, end, step=()):  # noqa: A001  (MXNet's name)
    """data[begin:end:step] on the leading axes; None in begin / end / step: the default."""
    key = []
    begin, end = tuple(begin), tuple(end)
    step = tuple(step) if step else (None,) * len(begin)
    if not len(begin) == len(end) == len(step):
        raise ValueError(f"[slice] begin, end and step must have the same length, got "
                         f"{len(begin)}, {len(end)} and {len(step)}")
    if len(begin) > data.ndim:
        raise ValueError(f"[slice] begin has {len(begin)} entries, more than the data's "
                         f"{data.ndim} axes")
    for b, e, s in zip(begin, end, step):
        key.append(_pyslice(b, e, s))
    return _wrap(data[tuple(key)])


_pyslice = builtins.slice


def slice_axis(data, axis, begin, end):
    """data[begin:end] along `axis` (end None: to the end)."""
    key = [_pyslice(None)] * data.ndim
    key[axis] = _pyslice(begin, end)
    return _wrap(data[tuple(key)])


def slice_like(data, shape_like, axes=()):
    return _wrap(_npx.slice_like(data, shape_like, axes=_tuple(axes) or ()))


def take(a, indices, axis=0, mode="clip"):
    """a's slices at `indices` along `axis`; out-of-range indices clip (MXNet's default) or
    wrap (mode='wrap')."""
    idx = indices if isinstance(indices, _np.ndarray) else _np.array(indices)
    if idx.dtype.kind == "f":
        idx = idx.astype("int64")
    return _wrap(_np.take(a, idx, axis=axis, mode="raise" if mode == "raise" else mode))


def pick(data, index, axis=-1, keepdims=False, mode="clip"):
    return _wrap(_npx.pick(data, index, axis=axis, keepdims=keepdims, mode=mode))


def one_hot(indices, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    return _wrap(_npx.one_hot(indices, depth, on_value=on_value, off_value=off_value,
                              dtype=dtype))


def where(condition, x, y):
    """x where condition is nonzero, else y. As MXNet's, a 1-D condition beside N-d x and y
    (of as many rows) picks whole rows: x[i] where condition[i] is nonzero, else y[i]."""
    cond = condition != 0
    if isinstance(cond, _np.ndarray) and cond.ndim == 1 and isinstance(x, _np.ndarray) and \
            x.ndim > 1:
        if cond.shape[0] != x.shape[0]:
            raise ValueError(f"[where] a 1-D condition picks rows: its length {cond.shape[0]} "
                             f"must equal x's first dimension {x.shape[0]}")
        cond = _np.reshape(cond, cond.shape + (1,) * (x.ndim - 1))
    return _wrap(_np.where(cond, x, y))


def clip(data, a_min, a_max):
    return _wrap(_np.clip(data, a_min, a_max))


def cast(data, dtype):
    return _wrap(data.astype(dtype))


Cast = cast


def gather_nd(data, indices):
    # float indices (mx.nd.array's float32 default) are read as integers, as MXNet's
    if isinstance(indices, _np.ndarray) and indices.dtype.kind == "f":
        indices = indices.astype("int64")
    return _wrap(_npx.gather_nd(data, indices))


def scatter_nd(data, indices, shape):
    return _wrap(_npx.scatter_nd(data, indices, _tuple(shape)))


def diag(data, k=0, axis1=0, axis2=1):
    if data.ndim == 1:
        return _wrap(_np.diag(data, k))
    return _wrap(_np.diagonal(data, k, axis1, axis2))


def shape_array(data):
    return _wrap(_np.array(data.shape, dtype="int64", device=data.device))


def size_array(data):
    return _wrap(_np.array([data.size], dtype="int64", device=data.device))


def zeros_like(data, dtype=None):
    return _wrap(_np.zeros_like(data, dtype=dtype))


def ones_like(data, dtype=None):
    return _wrap(_np.ones_like(data, dtype=dtype))


def full_like(data, fill_value, dtype=None):
    return _wrap(_np.full_like(data, fill_value, dtype=dtype))


def identity(data):
    return _wrap(_np.copy(data))  # (a recorded op: gradients pass, as through MXNet's _copy)


_copy = identity


def stop_gradient(data):
    return _wrap(_npx.stop_gradient(data))


BlockGrad = stop_gradient

# ---- joining and splitting ----------------------------------------------------------------


def concat(*data, dim=1, num_args=None):
    """The arrays joined along `dim` (1 by default, as MXNet's Concat)."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    return _wrap(_np.concatenate(list(data), axis=dim))


Concat = concat


def stack(*data, axis=0, num_args=None):
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    return _wrap(_np.stack(list(data), axis=axis))


def split(data, num_outputs, axis=1, squeeze_axis=False):
    """`data` cut into `num_outputs` equal parts along `axis` (1 by default); a list, or the
    one array when num_outputs is 1, as MXNet returns."""
    if data.shape[axis] % num_outputs:
        raise ValueError(f"[split] axis {axis} of size {data.shape[axis]} does not split into "
                         f"{num_outputs} equal parts")
    parts = _np.split(data, num_outputs, axis=axis)
    if squeeze_axis:
        parts = [_np.squeeze(p, axis=axis) for p in parts]
    parts = [_wrap(p) for p in parts]
    return parts[0] if num_outputs == 1 else parts


SliceChannel = split


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    parts = _np.split(ary, indices_or_sections, axis=axis)
    if squeeze_axis:
        parts = [_np.squeeze(p, axis=axis) for p in parts]
    return [_wrap(p) for p in parts]


def add_n(*args):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return _wrap(_npx.add_n(*args))


ElementWiseSum = add_n

# ---- reductions and sorting ---------------------------------------------------------------


def _axes(data, axis, exclude):
    if axis is None or (isinstance(axis, (tuple, list)) and len(axis) == 0):
        return None
    axes = tuple(a % data.ndim for a in _tuple(axis))
    if exclude:
        return tuple(a for a in range(data.ndim) if a not in axes)
    return axes


def _reduction(fn):
    def reduce(data, axis=None, keepdims=False, exclude=False):
        return _wrap(fn(data, axis=_axes(data, axis, exclude), keepdims=keepdims))

    reduce.__name__ = fn.__name__
    reduce.__doc__ = (f"MXNet's legacy {fn.__name__}: over `axis` (all axes by default, the "
                      f"other axes with exclude=True), keepdims as NumPy's.")
    return reduce


sum = _reduction(_np.sum)  # noqa: A001  (MXNet's names)
mean = _reduction(_np.mean)
max = _reduction(_np.max)  # noqa: A001
min = _reduction(_np.min)  # noqa: A001
prod = _reduction(_np.prod)
nansum = _reduction(_np.nansum)
nanprod = _reduction(_np.nanprod)
sum_axis = sum
max_axis = max
min_axis = min


def norm(data, ord=2, axis=None, keepdims=False, out_dtype=None):  # noqa: A002
    """The L2 (ord=2) or L1 (ord=1) norm of all elements or along `axis`."""
    a = _axes(data, axis, False)
    if ord == 2:
        out = _np.sqrt(_np.sum(data * data, axis=a, keepdims=keepdims))
    elif ord == 1:
        out = _np.sum(_np.abs(data), axis=a, keepdims=keepdims)
    else:
        raise ValueError(f"[norm] ord must be 1 or 2, got {ord!r}")
    return _wrap(out if out_dtype is None else out.astype(out_dtype))


def _arg(fn):
    def arg(data, axis=None, keepdims=False):
        out = fn(data, axis=axis, keepdims=keepdims) if axis is not None else fn(data)
        return _wrap(out.astype("float32"))  # MXNet's legacy indices are float32

    arg.__name__ = fn.__name__
    arg.__doc__ = f"MXNet's legacy {fn.__name__}: the indices as float32."
    return arg


argmax = _arg(_np.argmax)
argmin = _arg(_np.argmin)


def argmax_channel(data):
    return argmax(data, axis=-1)


def sort(data, axis=-1, is_ascend=True):
    out = _np.sort(data, axis=axis)
    return _wrap(out if is_ascend else _np.flip(out, axis=axis))


def argsort(data, axis=-1, is_ascend=True, dtype="float32"):
    out = _np.argsort(data if is_ascend else -data, axis=axis)
    return _wrap(out.astype(dtype))


def topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    return _wrap(_npx.topk(data, axis=axis, k=k, ret_typ=ret_typ, is_ascend=is_ascend,
                           dtype=dtype))


def cumsum(a, axis=None, dtype=None):
    return _wrap(_np.cumsum(a, axis=axis, dtype=dtype))

# ---- element-wise -------------------------------------------------------------------------


def _unary(fn, name):
    def op(data):
        return _wrap(fn(data))

    op.__name__ = name
    op.__doc__ = f"MXNet's {name}, element-wise."
    return op


for _name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "square",
              "abs", "sign", "floor", "ceil", "rint", "fix", "trunc", "sin", "cos", "tan",
              "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
              "arctanh", "degrees", "radians", "negative", "reciprocal", "logical_not"):
    globals()[_name] = _unary(getattr(_np, _name), _name)
for _name in ("relu", "sigmoid", "softsign", "erf", "erfinv", "gamma", "gammaln", "gelu"):
    globals()[_name] = _unary(getattr(_npx, _name), _name)
del _name


def round(data):  # noqa: A001  (MXNet's name: halves away from zero)
    return _wrap(_np.sign(data) * _np.floor(_np.abs(data) + 0.5))


def rsqrt(data):
    return _wrap(1.0 / _np.sqrt(data))


def rcbrt(data):
    return _wrap(1.0 / _np.cbrt(data))


def log_sigmoid(data):
    return _wrap(_npx.log_sigmoid(data))


def _binary(fn, name, compare=False):
    def op(lhs, rhs):
        out = fn(lhs, rhs)
        if compare:
            ref = lhs if isinstance(lhs, _np.ndarray) else rhs
            out = out.astype(ref.dtype)  # legacy comparisons: 0 / 1 in the operands' dtype
        return _wrap(out)

    op.__name__ = name
    op.__doc__ = f"MXNet's {name}, with broadcasting."
    return op


_BINARY = {
    "add": _np.add, "subtract": _np.subtract, "multiply": _np.multiply,
    "divide": _np.divide, "true_divide": _np.divide, "modulo": _np.mod, "power": _np.power,
    "maximum": _np.maximum, "minimum": _np.minimum, "hypot": _np.hypot,
}
_COMPARE = {
    "equal": _np.equal, "not_equal": _np.not_equal, "greater": _np.greater,
    "greater_equal": _np.greater_equal, "lesser": _np.less, "lesser_equal": _np.less_equal,
    "logical_and": _np.logical_and, "logical_or": _np.logical_or,
    "logical_xor": _np.logical_xor,
}
for _name, _fn in _BINARY.items():
    globals()[_name] = _binary(_fn, _name)
    if _name != "true_divide":
        _short = {"subtract": "sub", "multiply": "mul", "divide": "div",
                  "modulo": "mod"}.get(_name, _name)
        globals()["broadcast_" + _short] = _binary(_fn, "broadcast_" + _short)
for _name, _fn in _COMPARE.items():
    globals()[_name] = _binary(_fn, _name, compare=True)
    globals()["broadcast_" + _name] = _binary(_fn, "broadcast_" + _name, compare=True)
for _name in ("add", "sub", "mul", "div"):
    globals()["elemwise_" + _name] = globals()["broadcast_" + _name]
broadcast_plus = globals()["broadcast_add"]
broadcast_minus = globals()["broadcast_sub"]
del _name, _fn


def squared_difference(lhs, rhs):
    return _wrap(_np.square(lhs - rhs))


def smooth_l1(data, scalar=1.0):
    return _wrap(_npx.smooth_l1(data, scalar))

# ---- linear algebra ----------------------------------------------------------------------


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """MXNet's legacy dot: for N-d arrays, the last axis of lhs with the first of rhs (lhs
    transposed / rhs transposed first when asked). Sparse operands or a sparse forward_stype
    go to ``nd.sparse.dot`` (its storage rules)."""
    if forward_stype not in (None, "default") or isinstance(lhs, _SparseStorage) or \
            isinstance(rhs, _SparseStorage):
        from . import sparse
        return sparse.dot(lhs, rhs, transpose_a, transpose_b, forward_stype)
    if lhs.ndim <= 2 and rhs.ndim <= 2:
        return _wrap(_np.dot(_np.transpose(lhs) if transpose_a else lhs,
                             _np.transpose(rhs) if transpose_b else rhs))
    # N-d: MXNet contracts lhs's first axis (transpose_a) or last, with rhs's last axis
    # (transpose_b) or first; the other axes keep their order (lhs's, then rhs's).
    out = _np.tensordot(lhs, rhs, axes=([0 if transpose_a else lhs.ndim - 1],
                                        [rhs.ndim - 1 if transpose_b else 0]))
    return _wrap(out)


def batch_dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    return _wrap(_npx.batch_dot(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b))

# ---- neural network -----------------------------------------------------------------------


def Activation(data, act_type):  # noqa: N802  (MXNet's names)
    """relu, sigmoid, tanh, softrelu (log(1 + e^x)), softsign or log_sigmoid / mish."""
    return _wrap(_npx.activation(data, act_type=act_type))


def LeakyReLU(data, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,  # noqa: N802
              upper_bound=0.334):
    kwargs = {"act_type": act_type, "slope": slope, "lower_bound": lower_bound,
              "upper_bound": upper_bound}
    if gamma is not None:
        kwargs["gamma"] = gamma
    return _wrap(_npx.leaky_relu(data, **kwargs))


def softmax(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False):
    return _wrap(_npx.softmax(data, axis=axis, length=length, temperature=temperature,
                              use_length=use_length, dtype=dtype))


def log_softmax(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False):
    return _wrap(_npx.log_softmax(data, axis=axis, length=length, temperature=temperature,
                                  use_length=use_length, dtype=dtype))


def softmin(data, axis=-1, temperature=None, dtype=None):
    return _wrap(_npx.softmax(-data, axis=axis, temperature=temperature, dtype=dtype))


def SoftmaxActivation(data, mode="instance"):  # noqa: N802
    """Softmax over the last axis of (N, C) data (mode 'instance'), or over axis 1 of
    (N, C, ...) data (mode 'channel')."""
    if mode == "channel":
        return _wrap(_npx.softmax(data, axis=1))
    return _wrap(_npx.softmax(_np.reshape(data, (data.shape[0], -1)), axis=-1)
                 .reshape(data.shape))


def FullyConnected(data, weight, bias=None, num_hidden=None, no_bias=False,  # noqa: N802
                   flatten=True):
    if num_hidden is None:
        num_hidden = weight.shape[0]
    if bias is None:
        no_bias = True
    return _wrap(_npx.fully_connected(data, weight, None if no_bias else bias,
                                      num_hidden=num_hidden, no_bias=no_bias,
                                      flatten=flatten))


def Convolution(data, weight, bias=None, kernel=None, stride=(), dilate=(), pad=(),  # noqa
                num_filter=None, num_group=1, workspace=1024, no_bias=False,
                cudnn_tune=None, cudnn_off=False, layout=None):
    if kernel is None:
        kernel = weight.shape[2:]
    if num_filter is None:
        num_filter = weight.shape[0]
    if bias is None:
        no_bias = True
    return _wrap(_npx.convolution(data, weight, None if no_bias else bias,
                                  kernel=_tuple(kernel), stride=_tuple(stride),
                                  dilate=_tuple(dilate), pad=_tuple(pad),
                                  num_filter=num_filter, num_group=num_group,
                                  no_bias=no_bias, layout=layout))


def Deconvolution(data, weight, bias=None, kernel=None, stride=(), dilate=(), pad=(),  # noqa
                  adj=(), target_shape=(), num_filter=None, num_group=1, workspace=512,
                  no_bias=True, cudnn_tune=None, cudnn_off=False, layout=None):
    if kernel is None:
        kernel = weight.shape[2:]
    if num_filter is None:
        num_filter = weight.shape[1] * num_group
    if bias is None:
        no_bias = True
    return _wrap(_npx.deconvolution(data, weight, None if no_bias else bias,
                                    kernel=_tuple(kernel), stride=_tuple(stride),
                                    dilate=_tuple(dilate), pad=_tuple(pad), adj=_tuple(adj),
                                    target_shape=_tuple(target_shape),
                                    num_filter=num_filter, num_group=num_group,
                                    no_bias=no_bias, layout=layout))


def Pooling(data, kernel=(), pool_type="max", global_pool=False, cudnn_off=False,  # noqa
            pooling_convention="valid", stride=(), pad=(), p_value=None,
            count_include_pad=True, layout=None):
    return _wrap(_npx.pooling(data, kernel=_tuple(kernel), pool_type=pool_type,
                              global_pool=global_pool,
                              pooling_convention=pooling_convention, stride=_tuple(stride),
                              pad=_tuple(pad), count_include_pad=count_include_pad,
                              layout=layout))


def BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,  # noqa
              fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
              cudnn_off=False):
    """MXNet's legacy BatchNorm: eps 1e-3 and fix_gamma=True (gamma read as 1) by default;
    output_mean_var=True returns [out, mean, inverse std] (the statistics used)."""
    out = _npx.batch_norm(data, gamma, beta, moving_mean, moving_var, eps=eps,
                          momentum=momentum, axis=axis, fix_gamma=fix_gamma,
                          use_global_stats=use_global_stats, output_mean_var=output_mean_var)
    return [_wrap(o) for o in out] if output_mean_var else _wrap(out)


def LayerNorm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):  # noqa: N802
    return _wrap(_npx.layer_norm(data, gamma, beta, axis=axis, eps=eps,
                                 output_mean_var=output_mean_var))


def Dropout(data, p=0.5, mode="training", axes=(), cudnn_off=False):  # noqa: N802
    """Zeroes elements with probability p and scales the rest by 1 / (1 - p) while training
    (inside autograd.record(train_mode=True)) or always with mode='always'."""
    axes = () if axes is None else tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
    return _wrap(_npx.dropout(data, p=p, mode=mode, axes=axes))


def Embedding(data, weight, input_dim=None, output_dim=None, dtype="float32",  # noqa: N802
              sparse_grad=False):
    if input_dim is None:
        input_dim = weight.shape[0]
    if output_dim is None:
        output_dim = weight.shape[1]
    return _wrap(_npx.embedding(data, weight, input_dim=input_dim, output_dim=output_dim))


def SoftmaxOutput(data, label, grad_scale=1.0, ignore_label=-1.0, multi_output=False,  # noqa
                  use_ignore=False, preserve_shape=False, normalization="null",
                  out_grad=False, smooth_alpha=0.0):
    """The softmax of data over its last axis (axis 1 with multi_output). Its gradient, as
    MXNet's, is (softmax - one_hot(label)) * grad_scale whatever the head gradient is (times
    it with out_grad; rows whose label is ignore_label get 0 with use_ignore; normalization
    'batch' divides by the batch size, 'valid' by the labels kept; smooth_alpha smooths the
    target). The registered op SoftmaxOutput (src/operator/nn.cc)."""
    from .. import _core
    from .._registry import ops
    params = {"grad_scale": grad_scale, "ignore_label": ignore_label,
              "multi_output": multi_output, "use_ignore": use_ignore,
              "preserve_shape": preserve_shape, "normalization": normalization,
              "out_grad": out_grad, "smooth_alpha": smooth_alpha}
    return _wrap(_core._invoke(ops()["SoftmaxOutput"].handle,
                               (data, label), params))


def SequenceMask(data, sequence_length=None, use_sequence_length=False, value=0.0,  # noqa
                 axis=0):
    return _wrap(_npx.sequence_mask(data, sequence_length,
                                    use_sequence_length=use_sequence_length, value=value,
                                    axis=axis))


def SequenceLast(data, sequence_length=None, use_sequence_length=False, axis=0):  # noqa: N802
    """Each sequence's last step (the one at sequence_length - 1 with use_sequence_length)."""
    return _wrap(_npx.sequence_last(data, sequence_length,
                                    use_sequence_length=use_sequence_length, axis=axis))


def SequenceReverse(data, sequence_length=None, use_sequence_length=False,  # noqa: N802
                    axis=0):
    """Each sequence's first sequence_length steps reversed (all steps without
    use_sequence_length)."""
    return _wrap(_npx.sequence_reverse(data, sequence_length,
                                       use_sequence_length=use_sequence_length, axis=axis))


def L2Normalization(data, eps=1e-10, mode="instance"):  # noqa: N802
    if mode == "instance":
        axes = tuple(range(1, data.ndim))
    elif mode == "channel":
        axes = (1,)
    elif mode == "spatial":
        axes = tuple(range(2, data.ndim))
    else:
        raise ValueError(f"[L2Normalization] mode must be instance, channel or spatial, "
                         f"got {mode!r}")
    return _wrap(data / _np.sqrt(_np.sum(data * data, axis=axes, keepdims=True) + eps))


def Pad(data, mode="constant", pad_width=(), constant_value=0.0):  # noqa: N802
    """Pads as MXNet's Pad: pad_width holds (before, after) for every axis, flattened."""
    pw = _tuple(pad_width)
    pairs = [(pw[2 * k], pw[2 * k + 1]) for k in range(len(pw) // 2)]
    if mode == "constant":
        return _wrap(_np.pad(data, pairs, mode="constant", constant_values=constant_value))
    return _wrap(_np.pad(data, pairs, mode=mode))


pad = Pad


def UpSampling(*data, scale=1, sample_type="nearest", num_filter=0,  # noqa: N802
               multi_input_mode="concat", num_args=None, workspace=512):
    """MXNet's UpSampling of NCHW data. 'nearest': each input repeated along H and W to the
    first input's size times `scale`, then concatenated along the channels
    (multi_input_mode 'concat') or summed ('sum'). 'bilinear': data and a weight
    (num_filter, 1, k, k), k = 2 * scale - scale % 2, applied as MXNet does: a grouped
    deconvolution with stride scale and pad ceil((scale - 1) / 2)."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    scale = int(scale)
    if sample_type == "bilinear":
        if len(data) != 2:
            raise ValueError("[UpSampling] bilinear takes the data and a weight")
        x, weight = data
        kernel = 2 * scale - scale % 2
        pad = -(-(scale - 1) // 2)
        nf = int(num_filter) or x.shape[1]
        return _wrap(_npx.deconvolution(x, weight, None, kernel=(kernel, kernel),
                                        stride=(scale, scale), pad=(pad, pad),
                                        num_filter=nf, num_group=nf, no_bias=True))
    if sample_type != "nearest":
        raise ValueError(f"[UpSampling] sample_type must be 'nearest' or 'bilinear', got "
                         f"{sample_type!r}")
    out_h = data[0].shape[2] * scale
    parts = []
    for x in data:
        s = out_h // x.shape[2]
        if x.shape[2] * s != out_h or x.shape[3] * s != data[0].shape[3] * scale:
            raise ValueError(f"[UpSampling] input of shape {x.shape} cannot be scaled to "
                             f"the first input's size times {scale}")
        parts.append(_np.repeat(_np.repeat(x, s, axis=2), s, axis=3) if s != 1 else x)
    if len(parts) == 1:
        return _wrap(parts[0])
    if multi_input_mode == "sum":
        out = parts[0]
        for p in parts[1:]:
            out = out + p
        return _wrap(out)
    return _wrap(_np.concatenate(parts, axis=1))


def moments(data, axes=None, keepdims=False):
    """(mean, variance) of data over `axes` (all axes by default)."""
    a = _axes(data, axes, False)
    mean = _np.mean(data, axis=a, keepdims=True)
    var = _np.mean(_np.square(data - mean), axis=a, keepdims=keepdims)
    if not keepdims:
        mean = _np.squeeze(mean, axis=a) if a is not None else _np.reshape(mean, ())
    return [_wrap(mean), _wrap(var)]


def cast_storage(data, stype):
    """`data` in storage type `stype` ('default', 'csr' or 'row_sparse'), as
    ``nd.sparse.cast_storage``."""
    from .sparse import cast_storage as cast
    return cast(data, stype)


def InstanceNorm(data, gamma, beta, eps=1e-3):  # noqa: N802
    """Normalization over each instance's spatial axes, per channel (MXNet's InstanceNorm)."""
    return _wrap(_npx.instance_norm(data, gamma, beta, eps=eps))


def GroupNorm(data, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False):  # noqa: N802
    """Normalization over groups of channels (MXNet's GroupNorm); output_mean_var=True also
    returns each group's mean and standard deviation."""
    out = _npx.group_norm(data, gamma, beta, num_groups=num_groups, eps=eps,
                          output_mean_var=output_mean_var)
    return [_wrap(o) for o in out] if output_mean_var else _wrap(out)


def CTCLoss(data, label, data_lengths=None, label_lengths=None,  # noqa: N802
            use_data_lengths=False, use_label_lengths=False, blank_label="first"):
    """Connectionist temporal classification loss of (time, batch, alphabet) activations, one
    value per sequence (MXNet's CTCLoss)."""
    return _wrap(_npx.ctc_loss(data, label, data_lengths, label_lengths,
                               use_data_lengths=use_data_lengths,
                               use_label_lengths=use_label_lengths, blank_label=blank_label))


ctc_loss = CTCLoss


def ROIPooling(data, rois, pooled_size, spatial_scale):  # noqa: N802
    """Max pooling of each region [batch, x1, y1, x2, y2] to pooled_size (MXNet's ROIPooling)."""
    return _wrap(_npx.roi_pooling(data, rois, pooled_size=tuple(pooled_size),
                                  spatial_scale=spatial_scale))


def hard_sigmoid(data, alpha=0.2, beta=0.5):
    """max(0, min(1, alpha * data + beta)) (MXNet's hard_sigmoid)."""
    return _wrap(_np.clip(data * alpha + beta, 0, 1))


def softmax_cross_entropy(data, label):
    """The cross entropy of softmax(data) along the last axis against integer labels, summed
    over the batch, as a (1,) array (MXNet's softmax_cross_entropy)."""
    logp = _npx.log_softmax(data, axis=-1)
    picked = _npx.pick(logp, label, axis=-1)
    return _wrap(_np.reshape(-_np.sum(picked), (1,)))


def _block_size(who, data, block_size):
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"[{who}] block_size must be a positive int, got {block_size!r}")
    if data.ndim != 4:
        raise ValueError(f"[{who}] data must be 4-d (N, C, H, W), got shape {data.shape}")
    return block_size


def depth_to_space(data, block_size):
    """(N, C, H, W) -> (N, C / b^2, H * b, W * b): blocks of depth moved to space (MXNet's
    depth_to_space, DCR order)."""
    b = _block_size("depth_to_space", data, block_size)
    n, c, h, w = data.shape
    if c % (b * b):
        raise ValueError(f"[depth_to_space] the {c} channels are not divisible by "
                         f"block_size^2 = {b * b}")
    x = _np.reshape(data, (n, b, b, c // (b * b), h, w))
    x = _np.transpose(x, (0, 3, 4, 1, 5, 2))
    return _wrap(_np.reshape(x, (n, c // (b * b), h * b, w * b)))


def space_to_depth(data, block_size):
    """(N, C, H, W) -> (N, C * b^2, H / b, W / b), the inverse of depth_to_space (MXNet's)."""
    b = _block_size("space_to_depth", data, block_size)
    n, c, h, w = data.shape
    if h % b or w % b:
        raise ValueError(f"[space_to_depth] height {h} and width {w} must be divisible by "
                         f"block_size {b}")
    x = _np.reshape(data, (n, c, h // b, b, w // b, b))
    x = _np.transpose(x, (0, 3, 5, 1, 2, 4))
    return _wrap(_np.reshape(x, (n, c * b * b, h // b, w // b)))


def batch_take(a, indices):
    """a[i, indices[i]] for each row i of a 2-d a (MXNet's batch_take)."""
    if a.ndim != 2 or indices.ndim != 1 or indices.shape[0] != a.shape[0]:
        raise ValueError(f"[batch_take] a must be 2-d and indices 1-d of a's length, got "
                         f"shapes {a.shape} and {indices.shape}")
    return _wrap(_npx.pick(a, indices, axis=-1, mode="clip"))

# ---- MXNet 1.x's vision, indexing and recurrent operators ---------------------------------
# (lrn-inl.h, histogram-inl.h, tensor/ravel.h, crop-inl.h, grid_generator-inl.h,
# bilinear_sampler-inl.h, spatial_transformer-inl.h, contrib/krprod.h, correlation-inl.h,
# the legacy fill_element_0index and rnn-inl.h), composed of np / npx ops.


def _is_int(v):
    return isinstance(v, (int, onp.integer)) and not isinstance(v, (bool, onp.bool_))


def _is_real(v):
    return isinstance(v, (int, float, onp.integer, onp.floating)) and \
        not isinstance(v, (bool, onp.bool_))


def _is_float_dtype(dtype):
    return str(dtype) == "bfloat16" or getattr(dtype, "kind", None) == "f"


def _need_array(op, name, value, ndim=None, floating=False):
    """`value` checked to be an array (of `ndim` axes, of a floating-point dtype)."""
    if not isinstance(value, _np.ndarray):
        raise TypeError(f"[{op}] {name} must be an NDArray, got {type(value).__name__}")
    if ndim is not None and value.ndim != ndim:
        raise ValueError(f"[{op}] {name} must be {ndim}-d, got shape {value.shape}")
    if floating and not _is_float_dtype(value.dtype):
        raise TypeError(f"[{op}] {name} must have a floating-point dtype, got {value.dtype}")
    return value


def _int_param(op, name, value, low=None, odd=False):
    """`value` checked to be an int (>= low, odd)."""
    if value is None:
        raise TypeError(f"[{op}] argument '{name}' is required")
    what = "an odd int" if odd else "an int"
    if low is not None:
        what += f" >= {low}"
    if not _is_int(value):
        raise TypeError(f"[{op}] {name} must be {what}, got {value!r}")
    if (low is not None and value < low) or (odd and value % 2 == 0):
        raise ValueError(f"[{op}] {name} must be {what}, got {value}")
    return int(value)


def _int_pair(op, name, value, low=None):
    """`value` checked to be a tuple of two ints (>= low)."""
    if not isinstance(value, (tuple, list, onp.ndarray)) or len(value) != 2 or \
            not all(_is_int(v) for v in value):
        raise TypeError(f"[{op}] {name} must be a tuple of two ints, got {value!r}")
    if low is not None and builtins.min(value) < low:
        raise ValueError(f"[{op}] {name} must be two ints >= {low}, got {tuple(value)}")
    return int(value[0]), int(value[1])


def _const(values, like):
    """A constant NumPy array as an array of like's dtype on like's device."""
    return _np.array(onp.asarray(values), dtype=like.dtype, device=like.device)


def LRN(data, alpha=1e-4, beta=0.75, knorm=2.0, nsize=None):  # noqa: N802  (MXNet's names)
    """Local response normalization across channels of (N, C, H, W) data (MXNet's LRN):
    out = data * (knorm + alpha / nsize * s) ** -beta, s the sum of data^2 over the nsize
    channels centred on each (zero beyond the first and last channel); nsize is odd."""
    _need_array("LRN", "data", data, floating=True)
    if data.ndim != 4:
        raise ValueError(f"[LRN] data must be 4-d (batch, channel, y, x), got shape "
                         f"{data.shape}")
    if nsize is None:
        raise TypeError("[LRN] argument 'nsize' (the window's width in channels) is required")
    if not _is_int(nsize) or nsize < 1 or nsize % 2 == 0:
        raise ValueError(f"[LRN] nsize must be a positive odd int, got {nsize!r}")
    for name, value in (("alpha", alpha), ("beta", beta), ("knorm", knorm)):
        if not _is_real(value):
            raise TypeError(f"[LRN] {name} must be a real number, got {value!r}")
    nsize = int(nsize)
    # A window wider than 2 * channels - 1 covers every channel from every position, as that
    # one does (only alpha / nsize sees the width): a huge nsize costs no more.
    channels = data.shape[1]
    half = builtins.min(nsize // 2, builtins.max(channels - 1, 0))
    sq = data * data
    padded = _np.pad(sq, ((0, 0), (half, half), (0, 0), (0, 0))) if half else sq
    window = padded[:, 0:channels]
    for k in range(1, 2 * half + 1):
        window = window + padded[:, k:k + channels]
    # (float32 params, as MXNet's: salpha = alpha / nsize in float32)
    salpha = float(onp.float32(alpha) / onp.float32(nsize))
    norm = window * salpha + float(onp.float32(knorm))
    return _wrap(data * norm ** float(-onp.float32(beta)))


def _histogram_counts(flat, edges):
    """Counts of flat's values in the bins between consecutive edges (the last bin closed,
    values outside the edges and NaN not counted), as int64."""
    nb = edges.shape[0] - 1
    idx = _np.searchsorted(edges, flat, side="right") - 1
    idx = _np.minimum(idx, nb - 1)
    inside = (flat >= edges[0]) & (flat <= edges[nb])
    idx = _np.where(inside, idx, nb)
    return _np.bincount(idx.astype("int64"), minlength=nb + 1)[:nb].astype("int64")


def histogram(a, bins=10, range=None):  # noqa: A002  (MXNet's name)
    """(counts, bin_edges) of a's values, as MXNet's nd.histogram. bins an int with range
    (lo, hi): counts (int64) of bins equal wide from lo to hi, bin_edges (bins + 1,) in a's
    dtype. bins an int without range: NumPy's histogram of a, both returned as float32 (MXNet
    returns np.histogram's result through nd.array). bins an array (or sequence) of
    increasing edges: counts (int64) and the edges in a's dtype. Every bin is [left, right)
    but the last, [left, right]; values outside are not counted."""
    _need_array("histogram", "a", a)
    if isinstance(bins, (bool, onp.bool_)):
        raise TypeError(f"[histogram] bins must be an int or an array of bin edges, got "
                        f"{bins!r}")
    flat = _np.reshape(a, (-1,))
    if _is_int(bins):
        if not 1 <= bins < 2 ** 31:  # (MXNet's bin_cnt is an int)
            raise ValueError(f"[histogram] bins must be >= 1 (and < 2**31), got {bins}")
        bins = int(bins)
        if range is None:
            host = a.asnumpy().reshape(-1).astype("float64")
            if host.size and not onp.isfinite(host).all():
                raise ValueError("[histogram] without range the bins span a's minimum to "
                                 "maximum, which must be finite; a has NaN or inf (give "
                                 "range=(lo, hi))")
            counts, edges = onp.histogram(host, bins=bins)
            return (_wrap(_np.array(counts, dtype="float32", device=a.device)),
                    _wrap(_np.array(edges, dtype="float32", device=a.device)))
        if not isinstance(range, (tuple, list)) or len(range) != 2 or \
                not all(_is_real(v) for v in range):
            raise TypeError(f"[histogram] range must be (lo, hi), two numbers, got {range!r}")
        lo, hi = float(range[0]), float(range[1])
        if not (onp.isfinite(lo) and onp.isfinite(hi)) or lo > hi:
            raise ValueError(f"[histogram] range must be finite with lo <= hi, got {range!r}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        steps = onp.arange(bins + 1, dtype="float64")
        edges = _const((hi * steps + (bins - steps) * lo) / bins, a)
        return [_wrap(_histogram_counts(flat, edges)), _wrap(edges)]
    if range is not None:
        raise ValueError("[histogram] range is for an int number of bins; with bin edges "
                         "given, range must be None")
    if isinstance(bins, _np.ndarray):
        host = bins.asnumpy()
    elif isinstance(bins, (tuple, list, onp.ndarray)):
        host = onp.asarray(bins)
        if host.dtype.kind not in "iuf":
            raise TypeError(f"[histogram] bins must be an int or an array of bin edges, got "
                            f"{bins!r}")
    else:
        raise TypeError(f"[histogram] bins must be an int or an array of bin edges, got "
                        f"{type(bins).__name__}")
    if host.ndim != 1 or host.shape[0] < 2:
        raise ValueError(f"[histogram] bins (the bin edges) must be 1-d with at least 2 "
                         f"edges, got shape {host.shape}")
    if (onp.diff(host.astype("float64")) < 0).any() or onp.isnan(host.astype("float64")).any():
        raise ValueError("[histogram] the bin edges must increase monotonically")
    edges = bins.astype(a.dtype) if isinstance(bins, _np.ndarray) else _const(host, a)
    return [_wrap(_histogram_counts(flat, edges)), _wrap(edges)]


def _ravel_shape(op, shape):
    if shape is None:
        raise TypeError(f"[{op}] argument 'shape' is required")
    if not isinstance(shape, (tuple, list)) or not shape or not all(_is_int(d) for d in shape):
        raise TypeError(f"[{op}] shape must be a non-empty tuple of ints, got {shape!r}")
    shape = tuple(int(d) for d in shape)
    if shape[0] < 1 and shape[0] != -1 or any(d < 1 for d in shape[1:]):
        raise ValueError(f"[{op}] shape's dimensions must be >= 1 (the first may be -1, "
                         f"left unspecified), got {shape}")
    return shape


def _as_index(data):
    # (an index in a float array is truncated, as MXNet's cast to index_t)
    return data if data.dtype == onp.int64 else data.astype("int64")


def ravel_multi_index(data, shape=None):
    """Flat indices (N,) of the multi-indices in the columns of data (ndim, N) into an array
    of `shape` (MXNet's ravel_multi_index; shape's first dimension may be -1). The result has
    data's dtype. As MXNet's, indices are not range-checked."""
    _need_array("ravel_multi_index", "data", data)
    shape = _ravel_shape("ravel_multi_index", shape)
    if data.ndim != 2 or data.shape[0] != len(shape):
        raise ValueError(f"[ravel_multi_index] data must be 2-d, one row per dimension of "
                         f"shape {shape}: ({len(shape)}, N), got shape {data.shape}")
    idx = _as_index(data)
    out = idx[0]
    for j in builtins.range(1, len(shape)):
        out = out * shape[j] + idx[j]
    return _wrap(out.astype(data.dtype))


def unravel_index(data, shape=None):
    """The multi-indices (len(shape),) + data.shape of the flat indices in data into an array
    of `shape` (MXNet's unravel_index; shape's first dimension may be -1). The result has
    data's dtype. As MXNet's, indices are not range-checked (C division: a negative index
    gives negative remainders)."""
    _need_array("unravel_index", "data", data)
    shape = _ravel_shape("unravel_index", shape)
    idx = _as_index(data)
    parts = [None] * len(shape)
    for j in builtins.range(len(shape) - 1, 0, -1):
        q = idx // shape[j]
        q = _np.where((idx < 0) & (q * shape[j] != idx), q + 1, q)  # (toward zero, as C's)
        parts[j] = idx - q * shape[j]
        idx = q
    parts[0] = idx
    return _wrap(_np.stack(parts, axis=0).astype(data.dtype))


def Crop(*data, offset=(0, 0), h_w=(0, 0), center_crop=False, num_args=None):  # noqa: N802
    """MXNet's Crop of (N, C, H, W) data: data[:, :, y:y + h, x:x + w], (h, w) = h_w (one
    input) or the last two sizes of the second input (crop_like); (y, x) = offset, or the
    centre with center_crop=True. The crop must lie inside the data."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    if len(data) not in (1, 2):
        raise ValueError(f"[Crop] takes 1 input (with h_w) or 2 (data, crop_like), got "
                         f"{len(data)}")
    if num_args is not None and num_args != len(data):
        raise ValueError(f"[Crop] num_args={num_args!r} but {len(data)} inputs were given")
    x = _need_array("Crop", "data", data[0], ndim=4)
    oy, ox = _int_pair("Crop", "offset", offset, low=0)
    if not isinstance(center_crop, (bool, onp.bool_)):
        raise TypeError(f"[Crop] center_crop must be a bool, got {center_crop!r}")
    big_h, big_w = x.shape[2], x.shape[3]
    if len(data) == 1:
        h, w = _int_pair("Crop", "h_w", h_w)
        if not (1 <= h <= big_h and 1 <= w <= big_w):
            raise ValueError(f"[Crop] with one input, h_w (the crop's height and width) must "
                             f"be between (1, 1) and the data's {(big_h, big_w)}, got {h_w}")
    else:
        like = _need_array("Crop", "crop_like", data[1], ndim=4)
        h, w = like.shape[2], like.shape[3]
        if h > big_h or w > big_w:
            raise ValueError(f"[Crop] crop_like's height and width {(h, w)} exceed the "
                             f"data's {(big_h, big_w)}")
    if center_crop:
        oy, ox = (big_h - h) // 2, (big_w - w) // 2
    elif oy > big_h - h or ox > big_w - w:
        raise ValueError(f"[Crop] offset {(oy, ox)} puts the {(h, w)} crop outside the "
                         f"data's {(big_h, big_w)}: offset must be <= {(big_h - h, big_w - w)}")
    return _wrap(x[:, :, oy:oy + h, ox:ox + w])


def _target_shape(op, target_shape):
    th, tw = _int_pair(op, "target_shape", target_shape)
    if th < 2 or tw < 2:
        raise ValueError(f"[{op}] target_shape (H, W) must be at least (2, 2) (MXNet spaces "
                         f"the grid 2 / (size - 1) apart, so a size of 1 or 0 has no grid), "
                         f"got {tuple(target_shape)}")
    return th, tw


def _batch_reshape(x, shape):
    """x reshaped to `shape`, whose first dim is the batch: traced, that dim is left for the
    graph to infer (-1), so an exported graph serves every batch size."""
    if _core._is_tracing() and all(shape[1:]):
        shape = (-1,) + tuple(shape[1:])
    return _np.reshape(x, shape)


def _batch_positions(x, step):
    """0, step, 2 * step, ... along x's first axis, shaped (N, 1, ..., 1) like x (int64): from
    x's own length when traced (a cumulative sum of ones), so the graph serves any batch."""
    n = x.shape[0]
    if not _core._is_tracing():
        pos = _np.arange(n, dtype="int64", device=x.device) * step
        return _np.reshape(pos, (n,) + (1,) * (x.ndim - 1))
    ones = _np.ones_like(x[(_pyslice(None),) + (_pyslice(0, 1),) * (x.ndim - 1)],
                         dtype="int64")
    return (_np.cumsum(ones, axis=0) - 1) * step


def _affine_grid(theta, th, tw):
    """grid (N, 2, th, tw): theta (N, 2, 3) applied to the target's normalized (x, y, 1)."""
    xs = -1.0 + onp.arange(tw, dtype="float64") * (2.0 / (tw - 1))
    ys = -1.0 + onp.arange(th, dtype="float64") * (2.0 / (th - 1))
    dst = onp.stack([onp.tile(xs, th), onp.repeat(ys, tw), onp.ones(th * tw)])
    out = _np.matmul(theta, _const(dst, theta))
    return _batch_reshape(out, (theta.shape[0], 2, th, tw))


def GridGenerator(data, transform_type="affine", target_shape=(0, 0)):  # noqa: N802
    """The sampling grid (N, 2, H, W) of normalized source coordinates (x, y in [-1, 1] over
    the source) that BilinearSampler reads (MXNet's GridGenerator). 'affine': data (N, 6),
    each row an affine matrix (2, 3) applied to the target grid (x, y, 1) of target_shape
    (H, W). 'warp': data (N, 2, H, W), an optical flow in pixels added to each pixel's
    position, then normalized ((x + flow_x) / ((W - 1) / 2) - 1, and y alike)."""
    if transform_type == "affine":
        _need_array("GridGenerator", "data", data, ndim=2, floating=True)
        if data.shape[1] != 6:
            raise ValueError(f"[GridGenerator] for 'affine', data must be (batch, 6), the "
                             f"affine matrices, got shape {data.shape}")
        th, tw = _target_shape("GridGenerator", target_shape)
        theta = _batch_reshape(data, (data.shape[0], 2, 3))
        return _wrap(_affine_grid(theta, th, tw))
    if transform_type == "warp":
        _need_array("GridGenerator", "data", data, ndim=4, floating=True)
        n, c, h, w = data.shape
        if c != 2:
            raise ValueError(f"[GridGenerator] for 'warp', data must be an optical flow "
                             f"(batch, 2, H, W), got shape {data.shape}")
        if h < 2 or w < 2:
            raise ValueError(f"[GridGenerator] for 'warp', the flow's H and W must be >= 2 "
                             f"(positions are normalized by (size - 1) / 2), got {(h, w)}")
        pos = onp.stack([onp.tile(onp.arange(w, dtype="float64"), (h, 1)),
                         onp.tile(onp.arange(h, dtype="float64")[:, None], (1, w))])
        scale = onp.array([(w - 1) / 2.0, (h - 1) / 2.0]).reshape(2, 1, 1)
        return _wrap((data + _const(pos, data)) / _const(scale, data) - 1.0)
    raise ValueError(f"[GridGenerator] transform_type must be 'affine' or 'warp', got "
                     f"{transform_type!r}")


def _bilinear_sample(data, grid):
    """data (N, C, H, W) read at grid (N, 2, Ho, Wo) (x, y in [-1, 1]) bilinearly, points
    outside the data read as 0 (MXNet's BilinearSampler)."""
    n, c, h, w = data.shape
    ho, wo = grid.shape[2], grid.shape[3]
    x = (grid[:, 0] + 1.0) * ((w - 1) / 2.0)
    y = (grid[:, 1] + 1.0) * ((h - 1) / 2.0)
    x0 = _np.floor(_npx.stop_gradient(x))
    y0 = _np.floor(_npx.stop_gradient(y))
    wx1, wy1 = x - x0, y - y0
    wx0, wy0 = 1.0 - wx1, 1.0 - wy1
    xi = x0.astype("int64")
    yi = y0.astype("int64")
    table = _batch_reshape(_np.transpose(data, (0, 2, 3, 1)), (n * h * w, c))
    base = _batch_positions(x, h * w)
    out = None
    for dy, wy in ((0, wy0), (1, wy1)):
        for dx, wx in ((0, wx0), (1, wx1)):
            cx, cy = xi + dx, yi + dy
            inside = (cx >= 0) & (cx <= w - 1) & (cy >= 0) & (cy <= h - 1)
            flat = base + _np.clip(cy, 0, h - 1) * w + _np.clip(cx, 0, w - 1)
            v = _batch_reshape(_np.take(table, _np.reshape(flat, (-1,)), axis=0),
                               (n, ho, wo, c))
            weight = wy * wx * inside.astype(data.dtype)
            term = v * _np.expand_dims(weight, -1)
            out = term if out is None else out + term
    return _np.transpose(out, (0, 3, 1, 2))


def BilinearSampler(data, grid, cudnn_off=None):  # noqa: N802
    """data (N, C, H, W) sampled at grid (N, 2, Ho, Wo) -> (N, C, Ho, Wo) (MXNet's
    BilinearSampler): grid[:, 0] and grid[:, 1] are the source x and y normalized to
    [-1, 1] (-1 the first pixel, 1 the last), read by bilinear interpolation with zeros
    outside the data. cudnn_off is accepted and ignored."""
    _sampler_inputs("BilinearSampler", data, "grid", grid, 4, 2, "(batch, 2, H, W)")
    return _wrap(_bilinear_sample(data, grid))


def _sampler_inputs(op, data, name, other, ndim, width, layout):
    """Checks data (N, C, H, W) and the grid or affine parameters `other` (ndim axes, the
    first two data's batch and `width`) that sample it."""
    _need_array(op, "data", data, ndim=4, floating=True)
    _need_array(op, name, other, ndim=ndim, floating=True)
    if other.shape[:2] != (data.shape[0], width):
        raise ValueError(f"[{op}] {name} must be {layout} with data's batch {data.shape[0]}, "
                         f"got shape {other.shape}")
    if data.dtype != other.dtype:
        raise TypeError(f"[{op}] data and {name} must have the same dtype, got {data.dtype} "
                        f"and {other.dtype}")
    if data.shape[2] < 1 or data.shape[3] < 1:
        raise ValueError(f"[{op}] data's height and width must be >= 1, got shape "
                         f"{data.shape}")


def SpatialTransformer(data, loc, target_shape=(0, 0), transform_type="affine",  # noqa: N802
                       sampler_type="bilinear", cudnn_off=None):
    """MXNet's SpatialTransformer: data (N, C, H, W) sampled bilinearly (zeros outside) at the
    affine grid of target_shape (H', W') that loc (N, 6) (each row a (2, 3) matrix) gives:
    BilinearSampler(data, GridGenerator(loc, 'affine', target_shape)). cudnn_off is
    accepted and ignored."""
    if transform_type != "affine":
        raise ValueError(f"[SpatialTransformer] transform_type must be 'affine' (MXNet's only "
                         f"one), got {transform_type!r}")
    if sampler_type != "bilinear":
        raise ValueError(f"[SpatialTransformer] sampler_type must be 'bilinear' (MXNet's only "
                         f"one), got {sampler_type!r}")
    _sampler_inputs("SpatialTransformer", data, "loc", loc, 2, 6, "(batch, 6)")
    th, tw = _target_shape("SpatialTransformer", target_shape)
    grid = _affine_grid(_batch_reshape(loc, (loc.shape[0], 2, 3)), th, tw)
    return _wrap(_bilinear_sample(data, grid))


def khatri_rao(*args, num_args=None):
    """The column-wise Khatri-Rao product of matrices (M_i, K): (M_1 * ... * M_n, K), column
    k the Kronecker product of the matrices' k-th columns (the first matrix's index varies
    slowest), as MXNet's khatri_rao."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if not args:
        raise ValueError("[khatri_rao] needs at least one input matrix")
    if num_args is not None and num_args != len(args):
        raise ValueError(f"[khatri_rao] num_args={num_args!r} but {len(args)} inputs were "
                         f"given")
    for i, m in enumerate(args):
        _need_array("khatri_rao", f"input {i}", m, ndim=2)
    cols = args[0].shape[1]
    for i, m in enumerate(args):
        if m.shape[1] != cols:
            raise ValueError(f"[khatri_rao] every matrix must have {cols} columns (as input "
                             f"0), input {i} has shape {m.shape}")
        if m.dtype != args[0].dtype:
            raise TypeError(f"[khatri_rao] every matrix must have input 0's dtype "
                            f"{args[0].dtype}, input {i} has {m.dtype}")
    out = args[0]
    for m in args[1:]:
        out = _np.reshape(_np.expand_dims(out, 1) * _np.expand_dims(m, 0),
                          (out.shape[0] * m.shape[0], cols))
    return _wrap(out if len(args) > 1 else _np.array(out, copy=True))


def Correlation(data1, data2, kernel_size=1, max_displacement=1, stride1=1,  # noqa: N802
                stride2=1, pad_size=0, is_multiply=True):
    """FlowNet's correlation of two (N, C, H, W) maps (MXNet's Correlation): for each
    displacement (dy, dx) of data2 (multiples of stride2 up to max_displacement, dy major,
    one output channel each, ((2 * (max_displacement // stride2)) + 1)^2 in all) and each
    position (every stride1-th, after zero-padding both by pad_size), the sum over channels
    and a kernel_size x kernel_size window of data1 * shifted data2 (|data1 - shifted data2|
    with is_multiply=False), divided by kernel_size^2 * C."""
    op = "Correlation"
    _need_array(op, "data1", data1, ndim=4, floating=True)
    _need_array(op, "data2", data2, ndim=4, floating=True)
    if data1.shape != data2.shape or data1.dtype != data2.dtype:
        raise ValueError(f"[Correlation] data1 and data2 must have the same shape and dtype, "
                         f"got {data1.shape} {data1.dtype} and {data2.shape} {data2.dtype}")
    k = _int_param(op, "kernel_size", kernel_size, low=1, odd=True)
    md = _int_param(op, "max_displacement", max_displacement, low=0)
    s1 = _int_param(op, "stride1", stride1, low=1)
    s2 = _int_param(op, "stride2", stride2, low=1)
    pad = _int_param(op, "pad_size", pad_size, low=0)
    if not isinstance(is_multiply, (bool, onp.bool_)):
        raise TypeError(f"[Correlation] is_multiply must be a bool, got {is_multiply!r}")
    n, c, h, w = data1.shape
    border = md + (k - 1) // 2
    top_h = -(-(h + 2 * pad - 2 * border) // s1)
    top_w = -(-(w + 2 * pad - 2 * border) // s1)
    if top_h < 1 or top_w < 1:
        raise ValueError(f"[Correlation] the {(h, w)} maps padded by {pad} are too small for "
                         f"max_displacement {md} and kernel_size {k}: (size + 2 * pad_size - "
                         f"2 * (max_displacement + kernel_size // 2)) must be >= 1")
    a, b = data1, data2
    if pad:
        pads = ((0, 0), (0, 0), (pad, pad), (pad, pad))
        a, b = _np.pad(a, pads), _np.pad(b, pads)
    rh, rw = (top_h - 1) * s1 + k, (top_w - 1) * s1 + k  # rows / columns the windows cover
    a = a[:, :, md:md + rh, md:md + rw]
    radius = md // s2
    maps = []
    for dy in builtins.range(-radius, radius + 1):
        for dx in builtins.range(-radius, radius + 1):
            y0, x0 = md + dy * s2, md + dx * s2
            shifted = b[:, :, y0:y0 + rh, x0:x0 + rw]
            prod = a * shifted if is_multiply else _np.abs(a - shifted)
            maps.append(_np.sum(prod, axis=1))
    pm = _np.stack(maps, axis=1)
    out = None
    for i in builtins.range(k):
        for j in builtins.range(k):
            part = pm[:, :, i:i + (top_h - 1) * s1 + 1:s1, j:j + (top_w - 1) * s1 + 1:s1]
            out = part if out is None else out + part
    return _wrap(out / float(k * k * c))


def fill_element_0index(lhs, mhs, rhs):
    """lhs (N, M) with lhs[i, rhs[i]] = mhs[i] for every row i (MXNet's fill_element_0index);
    rhs holds 0-based column indices (float ones are truncated)."""
    op = "fill_element_0index"
    _need_array(op, "lhs", lhs, ndim=2)
    _need_array(op, "mhs", mhs, ndim=1)
    _need_array(op, "rhs", rhs, ndim=1)
    rows, cols = lhs.shape
    if mhs.shape[0] != rows or rhs.shape[0] != rows:
        raise ValueError(f"[fill_element_0index] mhs and rhs must have lhs's {rows} rows, got "
                         f"shapes {mhs.shape} and {rhs.shape}")
    idx = _as_index(rhs)
    host = idx.asnumpy()
    bad = host[(host < 0) | (host >= cols)]
    if bad.size:
        raise ValueError(f"[fill_element_0index] rhs's indices must be in [0, {cols}) (lhs's "
                         f"columns), got {bad[0]}")
    mask = _npx.one_hot(idx, cols) != 0
    return _wrap(_np.where(mask, _np.expand_dims(mhs.astype(lhs.dtype), 1), lhs))


_RNN_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def RNN(data, parameters, state, state_cell=None, sequence_length=None,  # noqa: N802
        state_size=None, num_layers=None, bidirectional=False, mode=None, p=0.0,
        state_outputs=False, projection_size=None, lstm_state_clip_min=None,
        lstm_state_clip_max=None, lstm_state_clip_nan=False, use_sequence_length=False):
    """MXNet's fused RNN over data (T, N, C) (npx.rnn): mode 'rnn_relu', 'rnn_tanh', 'lstm'
    or 'gru'; parameters the flat vector of every layer's and direction's weights, then
    every bias (cuDNN's packing); state (and state_cell for LSTM) (num_layers * directions,
    N, state_size). Returns out (T, N, directions * state_size), or with state_outputs=True
    the list [out, hy] ([out, hy, cy] for LSTM). Variable-length sequences, the LSTM
    projection and state clipping are not supported (NotImplementedError)."""
    op = "RNN"
    if mode not in _RNN_GATES:
        raise ValueError(f"[RNN] mode must be one of {list(_RNN_GATES)}, got {mode!r}")
    hidden = _int_param(op, "state_size", state_size, low=1)
    layers = _int_param(op, "num_layers", num_layers, low=1)
    for name, value in (("bidirectional", bidirectional), ("state_outputs", state_outputs),
                        ("use_sequence_length", use_sequence_length),
                        ("lstm_state_clip_nan", lstm_state_clip_nan)):
        if not isinstance(value, (bool, onp.bool_)):
            raise TypeError(f"[RNN] {name} must be a bool, got {value!r}")
    if not _is_real(p) or not 0.0 <= p < 1.0:
        raise ValueError(f"[RNN] p (the dropout rate between layers) must be in [0, 1), got "
                         f"{p!r}")
    if use_sequence_length or sequence_length is not None:
        raise NotImplementedError("[RNN] sequence_length / use_sequence_length (variable-"
                                  "length sequences) is not supported")
    if projection_size is not None:
        raise NotImplementedError("[RNN] projection_size (LSTM with projection) is not "
                                  "supported")
    if lstm_state_clip_min is not None or lstm_state_clip_max is not None:
        raise NotImplementedError("[RNN] lstm_state_clip_min / lstm_state_clip_max (LSTM "
                                  "state clipping) is not supported")
    _need_array(op, "data", data, ndim=3, floating=True)
    _need_array(op, "parameters", parameters, ndim=1, floating=True)
    _need_array(op, "state", state, ndim=3, floating=True)
    dirs = 2 if bidirectional else 1
    seq, batch, width = data.shape
    want = (layers * dirs, batch, hidden)
    if state.shape != want:
        raise ValueError(f"[RNN] state must be (num_layers * directions, batch, state_size) "
                         f"= {want}, got {state.shape}")
    if mode == "lstm":
        if state_cell is None:
            raise TypeError("[RNN] mode='lstm' needs state_cell, the initial cell state")
        _need_array(op, "state_cell", state_cell, ndim=3, floating=True)
        if state_cell.shape != want:
            raise ValueError(f"[RNN] state_cell must be (num_layers * directions, batch, "
                             f"state_size) = {want}, got {state_cell.shape}")
    elif state_cell is not None:
        raise TypeError(f"[RNN] state_cell is for mode='lstm' only, got mode={mode!r}")
    gates = _RNN_GATES[mode]
    size = 0
    for layer in builtins.range(layers):
        inputs = width if layer == 0 else dirs * hidden
        size += dirs * gates * hidden * (inputs + hidden + 2)
    if parameters.shape[0] != size:
        raise ValueError(f"[RNN] parameters must hold {size} values for mode={mode!r}, "
                         f"{layers} layer(s), {dirs} direction(s), state_size {hidden} and "
                         f"{width} input features, got {parameters.shape[0]}")
    out = _npx.rnn(data, parameters, state, state_cell, mode=mode, state_size=hidden,
                   num_layers=layers, bidirectional=bool(bidirectional),
                   state_outputs=bool(state_outputs), p=float(p),
                   lstm_state_clip_nan=bool(lstm_state_clip_nan))
    if state_outputs:
        return [_wrap(o) for o in out]
    return _wrap(out)


_TAKE_SPARSE = ("dot", "cast_storage")  # (they apply MXNet's storage rules themselves)


def _plain_inputs(namespace):
    # Every public operator takes NDArrays as plain arrays (see ndarray._on_plain); aliases
    # stay the same function.
    done = {}
    for name, fn in list(namespace.items()):
        if (not name.startswith("_") or name == "_copy") and callable(fn) and \
                getattr(fn, "__module__", None) == namespace["__name__"]:
            if id(fn) not in done:
                done[id(fn)] = _on_plain(fn, keep_sparse=name in _TAKE_SPARSE)
            namespace[name] = done[id(fn)]


_plain_inputs(globals())
