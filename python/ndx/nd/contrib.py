"""Pieces of MXNet's legacy ``mx.nd.contrib`` over ndx's ops: ``foreach``, ``while_loop``,
``cond`` (npx's control flow), ``arange_like``, ``box_nms`` / ``box_iou`` / ``box_encode`` /
``box_decode``, ``ROIAlign``, ``div_sqrt_dim``, ``interleaved_matmul_*``, ``index_copy``,
``boolean_mask``, ``BilinearResize2D``, the SSD ops ``MultiBoxPrior`` / ``MultiBoxTarget`` /
``MultiBoxDetection``, ``SparseEmbedding``, ``isinf`` / ``isnan`` / ``isfinite`` (1.0 / 0.0 in
the data's dtype) and ``quadratic`` (the operator tutorial's a x^2 + b x + c)."""
import functools as _functools
import operator as _operator

import numpy as _onp

from .. import numpy as _np
from .. import numpy_extension as _npx
from ._op import _plain_inputs
from .ndarray import _plain, _wrap

__all__ = ["foreach", "while_loop", "cond", "arange_like", "box_nms", "box_iou",
           "box_encode", "box_decode", "ROIAlign", "div_sqrt_dim", "index_copy",
           "boolean_mask", "interleaved_matmul_selfatt_qk",
           "interleaved_matmul_selfatt_valatt", "interleaved_matmul_encdec_qk",
           "interleaved_matmul_encdec_valatt", "BilinearResize2D", "quantize", "quantize_v2",
           "dequantize", "requantize", "quantized_fully_connected", "quantized_conv",
           "quantized_pooling", "quantized_act", "quantized_flatten", "quantized_elemwise_add",
           "quantized_concat", "quantized_batch_norm", "MultiBoxPrior", "MultiBoxTarget",
           "MultiBoxDetection", "SparseEmbedding", "isinf", "isnan", "isfinite", "quadratic"]


def _plain_tree(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_plain_tree(v) for v in value)
    return _plain(value)


def _call_legacy(fn, *args):
    return _plain_tree(fn(*_wrap(args)))


def _legacy(fn):
    """fn called with NDArrays, as MXNet 1 calls a loop body (which may use the legacy
    methods: reshape((0, -1)), asscalar()), its arrays handed back plain to npx's loop. A
    partial, so that a hybridized block's trace still finds the arrays fn holds."""
    return _functools.partial(_call_legacy, fn) if callable(fn) else fn


def foreach(body, data, init_states):
    return _wrap(_npx.foreach(_legacy(body), data, init_states))


def while_loop(cond, func, loop_vars, max_iterations=None):
    return _wrap(_npx.while_loop(_legacy(cond), _legacy(func), loop_vars,
                                 max_iterations=max_iterations))


def cond(pred, then_func, else_func):
    return _wrap(_npx.cond(_legacy(pred), _legacy(then_func), _legacy(else_func)))


def _passthrough(name):
    fn = getattr(_npx, name)

    def op(*args, **kwargs):
        return _wrap(fn(*args, **kwargs))

    op.__name__ = name
    op.__doc__ = fn.__doc__
    return op


arange_like = _passthrough("arange_like")
box_nms = _passthrough("box_nms")
box_non_maximum_suppression = box_nms
box_iou = _passthrough("box_iou")
box_encode = _passthrough("box_encode")
box_decode = _passthrough("box_decode")
ROIAlign = _passthrough("roi_align")
interleaved_matmul_selfatt_qk = _passthrough("interleaved_matmul_selfatt_qk")
interleaved_matmul_selfatt_valatt = _passthrough("interleaved_matmul_selfatt_valatt")
interleaved_matmul_encdec_qk = _passthrough("interleaved_matmul_encdec_qk")
interleaved_matmul_encdec_valatt = _passthrough("interleaved_matmul_encdec_valatt")
MultiBoxPrior = _passthrough("multibox_prior")
MultiBoxTarget = _passthrough("multibox_target")
MultiBoxDetection = _passthrough("multibox_detection")


def SparseEmbedding(data, weight, input_dim=None, output_dim=None, dtype="float32",  # noqa: N802
                    deterministic=False):
    """MXNet's contrib.SparseEmbedding: Embedding with a row_sparse gradient (a row_sparse
    weight is read from its stored rows, see nd.sparse.Embedding)."""
    from . import sparse
    return sparse.Embedding(data, weight, input_dim=input_dim, output_dim=output_dim,
                            dtype=dtype, sparse_grad=True)


def isinf(data):
    """1 where data is +-inf, else 0, in data's dtype (MXNet's contrib.isinf)."""
    return _wrap(_np.isinf(data).astype(data.dtype))


def isnan(data):
    """1 where data is NaN, else 0, in data's dtype (MXNet's contrib.isnan)."""
    return _wrap(_np.isnan(data).astype(data.dtype))


def isfinite(data):
    """1 where data is finite, else 0, in data's dtype (MXNet's contrib.isfinite)."""
    return _wrap(_np.isfinite(data).astype(data.dtype))


def quadratic(data, a=0.0, b=0.0, c=0.0):
    """a * data^2 + b * data + c, element-wise (the op of MXNet's operator tutorial), with
    its gradient 2 a data + b."""
    return _wrap(data * data * a + data * b + c)


def div_sqrt_dim(data):
    """data / sqrt(data.shape[-1])."""
    return _wrap(data / (data.shape[-1] ** 0.5))


def index_copy(old_tensor, index_vector, new_tensor):
    """A copy of old_tensor with rows index_vector replaced by new_tensor's rows."""
    out = _np.array(old_tensor, copy=True)
    out[index_vector.astype("int64")] = new_tensor
    return _wrap(out)


def boolean_mask(data, index, axis=0):
    """The slices of data along axis where index is nonzero."""
    keep = _np.nonzero(index)[0]
    return _wrap(_np.take(data, keep, axis=axis))


_RESIZE_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
                 "to_odd_up")


def _resize_extent(name, value):
    if isinstance(value, bool):
        raise TypeError(f"[BilinearResize2D] {name} must be an int, got bool")
    try:
        value = _operator.index(value)
    except TypeError:
        raise TypeError(f"[BilinearResize2D] {name} must be an int, got "
                        f"{type(value).__name__}") from None
    if not 1 <= value <= 10000:
        raise ValueError(f"[BilinearResize2D] {name} must be in [1, 10000], got {value}")
    return value


def _resize_scale(name, value, mode):
    if value is None:
        if mode == "odd_scale":
            raise ValueError(f"[BilinearResize2D] mode 'odd_scale' needs {name}, got None")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, _onp.number)):
        raise TypeError(f"[BilinearResize2D] {name} must be a number, got "
                        f"{type(value).__name__}")
    if not 0 < value < float("inf"):
        raise ValueError(f"[BilinearResize2D] {name} must be positive and finite, got {value}")
    return _onp.float32(value)


def _resized_extent(n, mode, size, scale, like_n):
    """The output's extent along one axis for an input extent n (MXNet's rule per mode)."""
    if mode == "size":
        return size if scale is None else int(scale * _onp.float32(n))
    if mode == "odd_scale":
        return int(scale * _onp.float32(n)) if n % 2 == 0 else \
            int(scale * _onp.float32(n - 1)) + 1
    if mode == "like":
        return like_n
    odd = n % 2 == 1
    step = {"to_even_down": -odd, "to_even_up": odd, "to_odd_down": -(not odd),
            "to_odd_up": not odd}[mode]
    return n + int(step)


def _resize_taps(n_in, n_out, align_corners):
    """(first source index, second source index, weight of the second) per output position,
    in float32 as MXNet computes them: with align_corners the corner pixels map onto the
    corner pixels (scale (in - 1) / (out - 1)), else pixel centres onto pixel centres (scale
    in / out)."""
    out = _onp.arange(n_out, dtype=_onp.float32)
    if align_corners:
        scale = _onp.float32((n_in - 1) / (n_out - 1)) if n_out > 1 else _onp.float32(0)
        src = scale * out
    else:
        scale = _onp.float32(n_in / n_out)
        src = _onp.maximum(scale * (out + _onp.float32(0.5)) - _onp.float32(0.5),
                           _onp.float32(0))
    first = _onp.minimum(src.astype(_onp.int64), n_in - 1)
    second = _onp.minimum(first + 1, n_in - 1)
    # The weights in float64 (exact: src is a float32), each rounded once to data's dtype.
    return first, second, src.astype(_onp.float64) - first


def _interpolate(data, axis, n_out, align_corners):
    """data linearly interpolated to n_out positions along axis (a recorded, differentiable
    composition of take_along_axis, multiply and add)."""
    first, second, weight = _resize_taps(data.shape[axis], n_out, align_corners)
    shape = [1] * data.ndim
    shape[axis] = n_out
    w_second = _np.array(weight.reshape(shape), dtype=data.dtype, device=data.device)
    w_first = _np.array((1 - weight).reshape(shape), dtype=data.dtype, device=data.device)
    out_shape = data.shape[:axis] + (n_out,) + data.shape[axis + 1:]

    def pick(index):  # take_along_axis: integer-array indexing does not trace in hybridize
        index = _np.array(index.reshape(shape), device=data.device)
        return _np.take_along_axis(data, _np.broadcast_to(index, out_shape), axis=axis)

    return w_first * pick(first) + w_second * pick(second)


def BilinearResize2D(data, like=None, height=1, width=1, scale_height=None,  # noqa: N802
                     scale_width=None, mode="size", align_corners=True):
    """MXNet's contrib.BilinearResize2D: (N, C, H, W) data resized to (N, C, h, w) by bilinear
    interpolation, differentiable. mode 'size': h = height, or int(H * scale_height) when
    scale_height is given, and likewise w; 'odd_scale': an odd H gives (H - 1) * scale_height
    + 1; 'like': like's last two extents; 'to_even_down' / 'to_even_up' / 'to_odd_down' /
    'to_odd_up': the nearest even or odd extent below or above. align_corners (MXNet's default
    True) maps corner pixels onto corner pixels; False maps pixel centres onto pixel centres,
    as PyTorch's interpolate(mode='bilinear', align_corners=False)."""
    if mode not in _RESIZE_MODES:
        raise ValueError(f"[BilinearResize2D] mode must be one of {_RESIZE_MODES}, got {mode!r}")
    if not isinstance(data, _np.ndarray):
        raise TypeError(f"[BilinearResize2D] data must be an array, got {type(data).__name__}")
    if data.ndim != 4:
        raise ValueError(f"[BilinearResize2D] data must be 4-d (N, C, H, W), got shape "
                         f"{data.shape}")
    if data.dtype.kind != "f":
        raise TypeError(f"[BilinearResize2D] data must be a float array, got {data.dtype}")
    like_hw = (None, None)
    if mode == "like":
        if not isinstance(like, _np.ndarray) or like.ndim != 4:
            raise ValueError("[BilinearResize2D] mode 'like' needs like, a 4-d array, got "
                             f"{getattr(like, 'shape', type(like).__name__)}")
        like_hw = like.shape[2:]
    sizes = (_resize_extent("height", height), _resize_extent("width", width))
    scales = (_resize_scale("scale_height", scale_height, mode),
              _resize_scale("scale_width", scale_width, mode))
    out_hw = tuple(_resized_extent(n, mode, size, scale, like_n) for n, size, scale, like_n
                   in zip(data.shape[2:], sizes, scales, like_hw))
    if min(out_hw) < 1 or min(data.shape[2:]) < 1:
        raise ValueError(f"[BilinearResize2D] data of shape {data.shape} would be resized to "
                         f"{out_hw}: every extent must be at least 1")
    if out_hw == data.shape[2:]:
        return _wrap(_np.copy(data))
    # Width first, then height: MXNet's h0 * (w0 * a + w1 * b) + h1 * (...), in that order.
    return _wrap(_interpolate(_interpolate(data, 3, out_hw[1], align_corners), 2, out_hw[0],
                              align_corners))


# ---- INT8 quantization ops (src/operator/quantization.cc; mx.contrib.quantization uses them)
# MXNet's backend-only params, accepted and not passed on.
_BACKEND_PARAMS = ("workspace", "cudnn_tune", "cudnn_off", "name")


def _quantized(op, inputs, params, out=None, outputs=3):
    """Invokes `op` on the inputs given (None entries left out: the bias trio of no_bias) with
    the params that are set; the outputs as a list of NDArrays (one NDArray for a single
    output), as MXNet's mx.nd.contrib wrappers return them. A Python number given for a
    range (min_data, max_range, ...) is taken as a float32 array of one value (passed as it
    is, NumPy's promotion of Python scalars would cast the int8 data to float32)."""
    import numbers

    from .. import _core
    from .. import numpy as _np
    arrays = tuple(_np.array([x], dtype="float32")
                   if isinstance(x, numbers.Real) and not isinstance(x, bool) else x
                   for x in inputs if x is not None)
    kwargs = {k: v for k, v in params.items() if v is not None and k not in _BACKEND_PARAMS}
    res = _core._invoke(op, arrays, kwargs, out)
    if outputs == 1:
        return _wrap(res[0] if isinstance(res, (list, tuple)) else res)
    return _wrap(list(res))


def quantize_v2(data, out_type="int8", min_calib_range=None, max_calib_range=None, out=None,
                **kwargs):
    """[quantized data, min_range, max_range]: data quantized symmetrically to out_type
    ('int8', 'uint8' or 'auto'), in the calibrated range when one is given, else in the
    data's own."""
    return _quantized("_contrib_quantize_v2", (data,),
                      dict(kwargs, out_type=out_type, min_calib_range=min_calib_range,
                           max_calib_range=max_calib_range), out)


def quantize(data, min_range, max_range, out_type="uint8", out=None, **kwargs):
    """[quantized data, min_range, max_range] (MXNet's first quantize): int8 symmetric over
    max(|min_range|, |max_range|), or uint8 affine with min_range at 0."""
    return _quantized("_contrib_quantize", (data, min_range, max_range),
                      dict(kwargs, out_type=out_type), out)


def dequantize(data, min_range, max_range, out_type="float32", out=None, **kwargs):
    """int8 / uint8 / int32 data in range [min_range, max_range] as float32: int8 and int32
    symmetric (q * max(|min|, |max|) / levels), uint8 affine (min + q * (max - min) / 255,
    which is q * max / 255 for the ranges from 0 that quantize_v2 gives)."""
    return _quantized("_contrib_dequantize", (data, min_range, max_range),
                      dict(kwargs, out_type=out_type), out, outputs=1)


def requantize(data, min_range, max_range, out_type="int8", min_calib_range=None,
               max_calib_range=None, out=None, **kwargs):
    """[int8 / uint8 data, min, max] of int32 data in range [min_range, max_range]."""
    return _quantized("_contrib_requantize", (data, min_range, max_range),
                      dict(kwargs, out_type=out_type, min_calib_range=min_calib_range,
                           max_calib_range=max_calib_range), out)


def quantized_fully_connected(data, weight, bias=None, min_data=None, max_data=None,
                              min_weight=None, max_weight=None, min_bias=None, max_bias=None,
                              num_hidden=None, no_bias=False, flatten=True, out=None,
                              **kwargs):
    """[out, min_out, max_out] of a fully_connected layer on int8 / uint8 data with int8
    weights (bias, min_bias and max_bias left out when no_bias)."""
    if num_hidden is None:
        num_hidden = weight.shape[0]
    if no_bias:
        bias = min_bias = max_bias = None
    return _quantized("_contrib_quantized_fully_connected",
                      (data, weight, bias, min_data, max_data, min_weight, max_weight,
                       min_bias, max_bias),
                      dict(kwargs, num_hidden=num_hidden, no_bias=no_bias, flatten=flatten),
                      out)


def quantized_conv(data, weight, bias=None, min_data=None, max_data=None, min_weight=None,
                   max_weight=None, min_bias=None, max_bias=None, kernel=None, stride=None,
                   dilate=None, pad=None, num_filter=None, num_group=1, no_bias=False,
                   layout=None, out=None, **kwargs):
    """[out, min_out, max_out] of a convolution on int8 / uint8 data with int8 weights
    (bias, min_bias and max_bias left out when no_bias)."""
    if kernel is None:
        kernel = tuple(weight.shape[2:])
    if num_filter is None:
        num_filter = weight.shape[0]
    if no_bias:
        bias = min_bias = max_bias = None
    return _quantized("_contrib_quantized_conv",
                      (data, weight, bias, min_data, max_data, min_weight, max_weight,
                       min_bias, max_bias),
                      dict(kwargs, kernel=kernel, stride=stride, dilate=dilate, pad=pad,
                           num_filter=num_filter, num_group=num_group, no_bias=no_bias,
                           layout=layout), out)


def quantized_pooling(data, min_data, max_data, kernel=None, pool_type="max",
                      global_pool=False, stride=None, pad=None, pooling_convention=None,
                      count_include_pad=None, out=None, **kwargs):
    """[out, min, max]: max / avg pooling of int8 / uint8 data (the range passes through)."""
    return _quantized("_contrib_quantized_pooling", (data, min_data, max_data),
                      dict(kwargs, kernel=kernel, pool_type=pool_type,
                           global_pool=global_pool, stride=stride, pad=pad,
                           pooling_convention=pooling_convention,
                           count_include_pad=count_include_pad), out)


def quantized_act(data, min_data, max_data, act_type="relu", out=None, **kwargs):
    """[out, min, max]: relu of int8 / uint8 data (the range passes through)."""
    return _quantized("_contrib_quantized_act", (data, min_data, max_data),
                      dict(kwargs, act_type=act_type), out)


def quantized_flatten(data, min_data, max_data, out=None, **kwargs):
    """[out, min, max]: int8 / uint8 data reshaped to (N, -1)."""
    return _quantized("_contrib_quantized_flatten", (data, min_data, max_data), kwargs, out)


def quantized_elemwise_add(lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max,
                           min_calib_range=None, max_calib_range=None, out=None, **kwargs):
    """[out, min, max]: the sum of int8 / uint8 lhs and rhs of one shape (each with its
    range), in int32 with the range of the largest possible sum, or in int8 in the
    calibrated range when min_calib_range / max_calib_range are given."""
    return _quantized("_contrib_quantized_elemwise_add",
                      (lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max),
                      dict(kwargs, min_calib_range=min_calib_range,
                           max_calib_range=max_calib_range), out)


def quantized_concat(*data, num_args=None, dim=1, min_calib_range=None, max_calib_range=None,
                     out=None, **kwargs):
    """[out, min, max]: int8 / uint8 arrays joined along dim, each requantized onto the
    output's range (the calibrated one, else the widest input range). data is the num_args
    arrays, then each one's min and max (MXNet's order)."""
    if num_args is None:
        if len(data) % 3:
            raise ValueError(f"[quantized_concat] takes num_args arrays and a min and max for "
                             f"each, {len(data)} inputs given")
        num_args = len(data) // 3
    return _quantized("_contrib_quantized_concat", tuple(data),
                      dict(kwargs, num_args=num_args, dim=dim, min_calib_range=min_calib_range,
                           max_calib_range=max_calib_range), out)


def quantized_batch_norm(data, gamma, beta, moving_mean, moving_var, min_data, max_data,
                         eps=1e-3, fix_gamma=True, axis=1, min_calib_range=None,
                         max_calib_range=None, out=None, **kwargs):
    """[out, min, max]: inference batch normalization of int8 / uint8 data with the moving
    statistics (MXNet's defaults: eps 1e-3, fix_gamma True); int8 in the calibrated range,
    else int32."""
    return _quantized("_contrib_quantized_batch_norm",
                      (data, gamma, beta, moving_mean, moving_var, min_data, max_data),
                      dict(kwargs, eps=eps, fix_gamma=fix_gamma, axis=axis,
                           min_calib_range=min_calib_range, max_calib_range=max_calib_range),
                      out)


_plain_inputs(globals())
