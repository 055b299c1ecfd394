"""Pieces of MXNet's legacy ``mx.nd.contrib`` over ndx's ops: ``foreach``, ``while_loop``,
``cond`` (npx's control flow), ``arange_like``, ``box_nms`` / ``box_iou`` / ``box_encode`` /
``box_decode``, ``ROIAlign``, ``div_sqrt_dim``, ``interleaved_matmul_*``, ``index_copy``,
``boolean_mask``."""
from .. import numpy as _np
from .. import numpy_extension as _npx
from ._op import _plain_inputs
from .ndarray import _wrap

__all__ = ["foreach", "while_loop", "cond", "arange_like", "box_nms", "box_iou",
           "box_encode", "box_decode", "ROIAlign", "div_sqrt_dim", "index_copy",
           "boolean_mask", "interleaved_matmul_selfatt_qk",
           "interleaved_matmul_selfatt_valatt", "interleaved_matmul_encdec_qk",
           "interleaved_matmul_encdec_valatt"]


def foreach(body, data, init_states):
    return _wrap(_npx.foreach(body, data, init_states))


def while_loop(cond, func, loop_vars, max_iterations=None):
    return _wrap(_npx.while_loop(cond, func, loop_vars, max_iterations=max_iterations))


def cond(pred, then_func, else_func):
    return _wrap(_npx.cond(pred, then_func, else_func))


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


_plain_inputs(globals())
