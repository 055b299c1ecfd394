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
    """Turns elementwise fusion in hybridized blocks (planned graphs) on or off and returns the
    previous setting. On by default unless NDX_FUSION=0: chains of elementwise ops run as one
    pass over memory, with results identical to the unfused graph."""
    return _core._set_fusion(bool(on))


def get_fusion():
    """Whether hybridized blocks fuse elementwise ops."""
    return _core._fusion_enabled()


def _weight_shape(op, weight):
    """The shape of an op's weight, read to default its params: the weight must be an array."""
    from ..numpy import ndarray
    if not isinstance(weight, ndarray):
        raise TypeError(f"[{op}] weight must be an ndarray, got {type(weight).__name__}")
    return weight.shape


def fully_connected(x, weight, bias=None, num_hidden=None, no_bias=None, flatten=True, out=None):
    """x @ weight.T + bias (x flattened to 2-d unless flatten=False); bias may be None."""
    if num_hidden is None:
        num_hidden = _weight_shape("fully_connected", weight)[0]
    if no_bias is None:
        no_bias = bias is None
    inputs = (x, weight) if no_bias else (x, weight, bias)
    return _core._invoke("_npx_fully_connected", inputs,
                         {"num_hidden": num_hidden, "no_bias": no_bias, "flatten": flatten}, out)


def convolution(data, weight, bias=None, kernel=None, stride=(), dilate=(), pad=(),
                num_filter=None, num_group=1, no_bias=None, layout=None, out=None):
    """N-d convolution (NCW / NCHW); bias may be None. kernel and num_filter default to the
    weight's spatial shape and first dim."""
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
                  out=None):
    """N-d transposed convolution (NCW / NCHW / NCDHW), MXNet's npx.deconvolution; bias may be
    None (then no_bias defaults to True). kernel defaults to the weight's spatial shape."""
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
