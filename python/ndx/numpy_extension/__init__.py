"""ndx.npx: operators beyond NumPy (registered as ``_npx_*``) and ndx's NumPy-mode switches."""
from .. import _core
from .._registry import populate
from ..context import Context, current_context  # noqa: F401  (MXNet 1.x names)
from ..device import (  # noqa: F401
    Device,
    cpu,
    current_device,
    empty_cache,
    gpu,
    gpu_host_fallbacks,
    gpu_memory_info,
    gpu_memory_stats,
    num_gpus,
    synchronize,
)


def waitall():
    """Waits for all queued device work (MXNet's npx.waitall)."""
    synchronize()


def set_np(shape=True, array=True, dtype=False):
    """Turns on NumPy semantics. With dtype=True, the default float dtype becomes float64 as in
    NumPy; otherwise it stays float32 (ndx's deep-learning default)."""
    _core._set_default_float("float64" if dtype else "float32")


def reset_np():
    """Back to ndx's defaults (float32 as the default float dtype)."""
    _core._set_default_float("float32")


def is_np_default_dtype():
    """True when the default float dtype is NumPy's float64."""
    return str(_core._default_float()) == "float64"


def set_num_threads(n):
    """Sets the threads ndx's kernels use (the calling thread counts as one); None restores the
    default: NDX_NUM_THREADS, else every core this process may run on. OpenBLAS gets the same
    count. Arrays under 32768 elements always run on the calling thread."""
    _core._set_num_threads(n)


def get_num_threads():
    """The threads ndx's kernels use."""
    return _core._get_num_threads()


def set_fusion(on=True):
    """Turns fusion in hybridized blocks (planned graphs) on or off and returns the previous
    setting. On by default unless NDX_FUSION=0: chains of elementwise ops run as one pass over
    memory, with results identical to the unfused graph, and a convolution runs with the
    batch_norm, add and relu after it (in inference through oneDNN: the batch_norm folded into
    the weights, which rounds differently, within float32 tolerance)."""
    return _core._set_fusion(bool(on))


def get_fusion():
    """Whether hybridized blocks fuse ops (elementwise chains, convolution epilogues)."""
    return _core._fusion_enabled()


def _weight_shape(op, weight):
    """The shape of an op's weight, read to default its params: the weight must be an array."""
    from ..numpy import ndarray
    if not isinstance(weight, ndarray):
        raise TypeError(f"[{op}] weight must be an ndarray, got {type(weight).__name__}")
    return weight.shape


def _shape_arg(v):
    """A tuple param of MXNet's that may be None (MXNet's default: not set)."""
    return () if v is None else tuple(v)


def fully_connected(x, weight, bias=None, num_hidden=None, no_bias=None, flatten=True, out=None,
                    name=None):
    """x @ weight.T + bias (x flattened to 2-d unless flatten=False); bias may be None. name
    (MXNet's symbol name, which its layers pass as name='fwd') is accepted and unused."""
    if num_hidden is None:
        num_hidden = _weight_shape("fully_connected", weight)[0]
    if no_bias is None:
        no_bias = bias is None
    inputs = (x, weight) if no_bias else (x, weight, bias)
    return _core._invoke("_npx_fully_connected", inputs,
                         {"num_hidden": num_hidden, "no_bias": no_bias, "flatten": flatten}, out)


def convolution(data, weight, bias=None, kernel=None, stride=(), dilate=(), pad=(),
                num_filter=None, num_group=1, no_bias=None, layout=None, out=None,
                workspace=1024, cudnn_tune=None, cudnn_off=False, name=None):
    """N-d convolution (NCW / NCHW); bias may be None. kernel and num_filter default to the
    weight's spatial shape and first dim; stride / dilate / pad may be None (MXNet's "not
    set"). workspace, cudnn_tune, cudnn_off and name (MXNet's backend and symbol options) are
    accepted and unused."""
    stride, dilate, pad = _shape_arg(stride), _shape_arg(dilate), _shape_arg(pad)
    if kernel is None:
        kernel = tuple(_weight_shape("convolution", weight)[2:])
    if num_filter is None:
        num_filter = _weight_shape("convolution", weight)[0]
    if no_bias is None:
        no_bias = bias is None
    inputs = (data, weight) if no_bias else (data, weight, bias)
    params = {"kernel": tuple(kernel), "stride": tuple(stride), "dilate": tuple(dilate),
              "pad": tuple(pad), "num_filter": num_filter, "num_group": num_group,
              "no_bias": no_bias, "layout": layout}
    return _core._invoke("_npx_convolution", inputs, params, out)


def deconvolution(data, weight, bias=None, kernel=None, stride=(), dilate=(), pad=(), adj=(),
                  target_shape=(), num_filter=1, num_group=1, no_bias=None, layout=None,
                  out=None, workspace=1024, cudnn_tune=None, cudnn_off=False, name=None):
    """N-d transposed convolution (NCW / NCHW / NCDHW), MXNet's npx.deconvolution; bias may be
    None (then no_bias defaults to True). kernel defaults to the weight's spatial shape.
    workspace, cudnn_tune, cudnn_off and name are accepted and unused, as for convolution."""
    if kernel is None:
        kernel = tuple(_weight_shape("deconvolution", weight)[2:])
    if no_bias is None:
        no_bias = bias is None
    inputs = (data, weight) if no_bias else (data, weight, bias)
    params = {"kernel": tuple(kernel), "num_filter": num_filter, "num_group": num_group,
              "no_bias": no_bias, "layout": layout}
    for name, v in (("stride", stride), ("dilate", dilate), ("pad", pad), ("adj", adj),
                    ("target_shape", target_shape)):
        params[name] = () if v is None else tuple(v)  # None: MXNet's "not set"
    return _core._invoke("_npx_deconvolution", inputs, params, out)


def ctc_loss(data, label, data_lengths=None, label_lengths=None, use_data_lengths=False,
             use_label_lengths=False, blank_label="first", out=None):
    """CTC loss per sample (MXNet's npx.ctc_loss): data (T, N, C) activations, label (N, L)
    padded; data_lengths / label_lengths are used only with use_data_lengths /
    use_label_lengths (then they are required)."""
    inputs = [data, label]
    for use, lengths, name in ((use_data_lengths, data_lengths, "data_lengths"),
                               (use_label_lengths, label_lengths, "label_lengths")):
        if use:
            if lengths is None:
                raise ValueError(f"[ctc_loss] use_{name}=True needs the {name} array, got None")
            inputs.append(lengths)
    params = {"use_data_lengths": bool(use_data_lengths),
              "use_label_lengths": bool(use_label_lengths), "blank_label": blank_label}
    return _core._invoke("_npx_ctc_loss", tuple(inputs), params, out)


populate(globals(), "_npx_")
from ..numpy._composites import topk  # noqa: E402, F401
from ..numpy._interop import npx_from_dlpack as from_dlpack  # noqa: E402, F401
from ..numpy._interop import npx_from_numpy as from_numpy  # noqa: E402, F401
from ..numpy._interop import to_dlpack_for_read, to_dlpack_for_write  # noqa: E402, F401
from . import image, random  # noqa: E402, F401
from ._io import load, save, savez  # noqa: E402, F401  (MXNet 2.0's npx.save / savez / load)
from ._rnn import rnn  # noqa: E402, F401  (inputs depend on the mode)
from ._routines import (  # noqa: E402, F401
    batch_dot,
    boolean_mask,
    gather_nd,
    group_norm,
    index_add,
    index_update,
    instance_norm,
    leaky_relu,
    reshape,
    scatter_nd,
    slice_like,
)
from ._routines import mx_slice as slice  # noqa: E402, F401, A001  (None bounds, as MXNet)

_softmax_kernel, _log_softmax_kernel = softmax, log_softmax  # noqa: F821 (populate's)
_activation_op, _dropout_op, _embedding_op = activation, dropout, embedding  # noqa: F821
_batch_norm_op, _pooling_op, _layer_norm_op = batch_norm, pooling, layer_norm  # noqa: F821
_pick_op, _one_hot_op = pick, one_hot  # noqa: F821


# MXNet 2.0's public npx signatures over the registered ops: MXNet's defaults (None for "not
# set"), its argument order, and the arguments it takes for its backends (cudnn_off,
# workspace, calibration ranges) or its symbols (name='fwd', which MXNet's own Gluon layers
# pass), accepted and unused. Each keeps its op's documentation, with a note. Only the params
# that differ from the op's defaults are passed on: each given param costs the op call about
# 0.4 us to convert (batch_norm with all five given took 4.4 us against 2.3). ndx's own Gluon
# layers call the ops (_batch_norm_op, ...) directly.
def _op_doc(op, note):
    def decorate(fn):
        head, _, rest = (op.__doc__ or "").partition("\n\n")
        fn.__doc__ = f"{head} {note}" + (f"\n\n{rest}" if rest else "")
        return fn
    return decorate


@_op_doc(_activation_op, "act_type defaults to 'relu' (MXNet 2.0's signature); name "
                         "(MXNet's) is accepted and unused.")
def activation(data, act_type="relu", out=None, name=None):
    if act_type is None:
        return _activation_op(data, out=out)  # (the op's message for the missing act_type)
    return _activation_op(data, act_type=act_type, out=out)


@_op_doc(_dropout_op, "axes may be None (no shared axes); cudnn_off and name (MXNet's) are "
                      "accepted and unused.")
def dropout(data, p=0.5, mode="training", axes=None, cudnn_off=False, out=None, name=None):
    kw = {} if mode == "training" else {"mode": mode}
    if hasattr(axes, "__index__") and not hasattr(axes, "__len__"):
        axes = (axes,)  # (one axis given as an int, as the op and mx.nd.Dropout take it)
    if axes:
        kw["axes"] = tuple(axes)
    return _dropout_op(data, p=p, out=out, **kw)


@_op_doc(_embedding_op, "input_dim and output_dim default to weight's shape; dtype (MXNet's: "
                        "the weight's dtype) and name are accepted and unused; sparse_grad (a "
                        "row_sparse gradient in MXNet) is kept on the op (ndx's gradient is "
                        "dense, with the same values).")
def embedding(data, weight, input_dim=None, output_dim=None, dtype="float32",
              sparse_grad=False, out=None, name=None):
    if input_dim is None:
        input_dim = _weight_shape("embedding", weight)[0]
    if output_dim is None:
        output_dim = _weight_shape("embedding", weight)[1]
    if sparse_grad:  # (recorded on the node: a Module updates such a weight lazily)
        return _embedding_op(data, weight, input_dim=input_dim, output_dim=output_dim,
                             sparse_grad=True, out=out)
    return _embedding_op(data, weight, input_dim=input_dim, output_dim=output_dim, out=out)


@_op_doc(_batch_norm_op, "MXNet 2.0's argument order (..., eps, momentum, fix_gamma, "
                         "use_global_stats, output_mean_var, axis, ...); cudnn_off, "
                         "min_calib_range / max_calib_range (for MXNet's quantized graphs) and "
                         "name are accepted and unused; output_mean_var=True returns (out, "
                         "mean, inverse std), the statistics used, as MXNet's.")
def batch_norm(data, gamma, beta, running_mean, running_var, eps=1e-5, momentum=0.9,
               fix_gamma=False, use_global_stats=False, output_mean_var=False, axis=1,
               cudnn_off=False, min_calib_range=None, max_calib_range=None, out=None, name=None):
    kw = {}
    if output_mean_var:
        kw["output_mean_var"] = True
    if eps != 1e-5:
        kw["eps"] = eps
    if momentum != 0.9:
        kw["momentum"] = momentum
    if axis != 1:
        kw["axis"] = axis
    if fix_gamma:
        kw["fix_gamma"] = fix_gamma
    if use_global_stats:
        kw["use_global_stats"] = use_global_stats
    return _batch_norm_op(data, gamma, beta, running_mean, running_var, out=out, **kw)


@_op_doc(_pooling_op, "MXNet's argument order (data, kernel, stride, pad, pool_type, ...); "
                      "kernel / stride / pad may be None and count_include_pad None means "
                      "True. p_value is for MXNet's 'lp' pooling, which ndx lacks; cudnn_off "
                      "and name are accepted and unused.")
def pooling(data, kernel=(), stride=(), pad=(), pool_type="max", pooling_convention="valid",
            global_pool=False, cudnn_off=False, p_value=None, count_include_pad=None,
            layout=None, out=None, name=None):
    kw = {"pool_type": pool_type} if pool_type != "max" else {}
    if kernel:
        kw["kernel"] = kernel
    if stride:
        kw["stride"] = stride
    if pad:
        kw["pad"] = pad
    if global_pool:
        kw["global_pool"] = global_pool
    if pooling_convention != "valid":
        kw["pooling_convention"] = pooling_convention
    if count_include_pad is not None and not count_include_pad:
        kw["count_include_pad"] = count_include_pad
    if layout is not None:
        kw["layout"] = layout
    return _pooling_op(data, out=out, **kw)


@_op_doc(_layer_norm_op, "None for axis, eps or output_mean_var (MXNet's signature defaults) "
                         "means -1, 1e-5 and False.")
def layer_norm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False, out=None):
    kw = {}
    if axis is not None and axis != -1:
        kw["axis"] = axis
    if eps is not None and eps != 1e-5:
        kw["eps"] = eps
    if output_mean_var:
        kw["output_mean_var"] = True
    return _layer_norm_op(data, gamma, beta, out=out, **kw)


@_op_doc(_pick_op, "MXNet's argument order: (data, index, axis, mode, keepdims).")
def pick(data, index, axis=-1, mode="clip", keepdims=False, out=None):
    kw = {} if mode == "clip" else {"mode": mode}
    if keepdims:
        kw["keepdims"] = True
    return _pick_op(data, index, axis=axis, out=out, **kw)


@_op_doc(_one_hot_op, "MXNet names the indices `data`; `indices` is accepted too.")
def one_hot(data=None, depth=None, on_value=1.0, off_value=0.0, dtype="float32", out=None,
            indices=None):
    if data is None:
        data = indices
    elif indices is not None:
        raise TypeError("[one_hot] give the indices as data or as indices, not both")
    if data is None:
        raise TypeError("[one_hot] required argument 'data' (the indices) is missing")
    if depth is None:
        raise ValueError("[one_hot] required parameter 'depth' is missing")
    return _one_hot_op(data, depth, on_value=on_value, off_value=off_value, dtype=dtype,
                       out=out)


def softmax(data, axis=-1, length=None, temperature=None, use_length=False, dtype=None,
            out=None):
    """Softmax along an axis: exp(x - max) / sum(exp(x - max)) (MXNet 2's npx.softmax). With
    use_length, each row's first `length` entries only (length has data's shape without the
    axis), 0 past them; x is divided by temperature first; dtype casts the result."""
    if length is None and temperature is None and not use_length and dtype is None:
        return _softmax_kernel(data, axis=axis, out=out)
    result = _sequence.softmax_with_options(_softmax_kernel, "softmax", data, axis, length,
                                            temperature, use_length, dtype, log=False)
    return result if out is None else _write(out, result)


def log_softmax(data, axis=-1, length=None, temperature=None, use_length=False, dtype=None,
                out=None):
    """log(softmax(x)), computed stably (MXNet 2's npx.log_softmax); length, temperature and
    dtype as softmax's (0 past each row's length, as MXNet's kernel writes)."""
    if length is None and temperature is None and not use_length and dtype is None:
        return _log_softmax_kernel(data, axis=axis, out=out)
    result = _sequence.softmax_with_options(_log_softmax_kernel, "log_softmax", data, axis,
                                            length, temperature, use_length, dtype, log=True)
    return result if out is None else _write(out, result)


def _write(out, result):
    out[...] = result
    return out


from . import _sequence  # noqa: E402
from ._boxes import multibox_detection, multibox_prior, multibox_target  # noqa: E402, F401
from ._control_flow import cond, foreach, while_loop  # noqa: E402, F401
from ._sequence import (  # noqa: E402, F401
    add_n,
    arange_like,
    batch_flatten,
    box_iou,
    broadcast_like,
    cast,
    interleaved_matmul_encdec_qk,
    interleaved_matmul_encdec_valatt,
    interleaved_matmul_selfatt_qk,
    interleaved_matmul_selfatt_valatt,
    masked_log_softmax,
    masked_softmax,
    nonzero,
    reshape_like,
    sequence_last,
    sequence_mask,
    sequence_reverse,
    shape_array,
    smooth_l1,
)


def custom(*inputs, op_type, **params):
    """Runs a Python custom operator (ndx.operator.register); params are passed as strings."""
    from ..operator import custom as _custom
    return _custom(*inputs, op_type=op_type, **params)


# MXNet's NumPy-semantics switches (ndx.util keeps their state).
from ..util import (  # noqa: E402, F401, F811
    is_np_array,
    is_np_default_dtype,
    is_np_shape,
    np_array,
    np_shape,
    reset_np,
    set_np,
    set_np_default_dtype,
    use_np,
    use_np_array,
    use_np_shape,
)
