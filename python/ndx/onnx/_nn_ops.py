"""Converters of ndx's neural-network ops (convolution, pooling, normalization, dense layers,
activations, softmax, embedding, loss heads) to ONNX opset 17, for inference: dropout is the
identity, batch norm uses the running statistics, loss heads give their forward output."""
import math

import numpy as onp

from ._ops import converter

_LAYOUTS = (None, "NCW", "NCHW", "NCDHW")


# ---- convolution and pooling ------------------------------------------------------------------
def _check_layout(n):
    layout = n.param("layout")
    if layout not in _LAYOUTS:
        n.fail(f"layout={layout} is not supported; expected NCW, NCHW or NCDHW (channels "
               f"first)")


def _spatial(n, key, default, nd):
    """A per-spatial-dim param as a list of nd values (default where not given)."""
    values = n.ints(key) or ()
    if not values:
        return [default] * nd
    if len(values) != nd:
        n.fail(f"param {key}={n.param(key)}: expected {nd} values, one per spatial "
               f"dimension", ValueError)
    return list(values)


def _window(n, nd):
    """ONNX's kernel_shape, strides and pads of a convolution or pooling."""
    kernel = _spatial(n, "kernel", None, nd)
    if None in kernel:
        n.fail("param kernel is required", ValueError)
    pad = _spatial(n, "pad", 0, nd)
    return {"kernel_shape": kernel, "strides": _spatial(n, "stride", 1, nd),
            "pads": pad + pad}


def _bias_inputs(n):
    """data and weight, and the bias when the node has one."""
    has_bias = not n.flag("no_bias") and len(n.inputs) > 2
    return n.inputs[:3] if has_bias else n.inputs[:2]


@converter("_npx_convolution")
def _convolution(n):
    _check_layout(n)
    nd = n.rank() - 2
    attrs = _window(n, nd)
    n.emit("Conv", _bias_inputs(n), dilations=_spatial(n, "dilate", 1, nd),
           group=n.integer("num_group", 1), **attrs)


def _deconv_padding(n, attrs, nd):
    """pads and output_padding (from adj, or worked out from target_shape as MXNet does)."""
    pad, adj = attrs["pads"][:nd], _spatial(n, "adj", 0, nd)
    target = _spatial(n, "target_shape", 0, nd)
    dilate = _spatial(n, "dilate", 1, nd)
    for d in range(nd):
        if target[d] <= 0:
            continue
        kernel = dilate[d] * (attrs["kernel_shape"][d] - 1) + 1
        total = attrs["strides"][d] * (n.in_shapes[0][2 + d] - 1) + kernel - target[d]
        pad[d], adj[d] = (total + 1) // 2, total % 2
    return pad + pad, adj


@converter("_npx_deconvolution")
def _deconvolution(n):
    _check_layout(n)
    nd = n.rank() - 2
    attrs = _window(n, nd)
    attrs["pads"], adj = _deconv_padding(n, attrs, nd)
    n.emit("ConvTranspose", _bias_inputs(n), dilations=_spatial(n, "dilate", 1, nd),
           group=n.integer("num_group", 1), output_padding=adj, **attrs)


def _ceil_sizes_match(n, attrs):
    """Whether ONNX's ceil_mode output sizes (which drop a last window starting in the end
    padding) are those ndx's 'full' convention gives."""
    for d, size in enumerate(n.in_shapes[0][2:]):
        k, s, p = attrs["kernel_shape"][d], attrs["strides"][d], attrs["pads"][d]
        out = -(-(size + 2 * p - k) // s) + 1
        if (out - 1) * s >= size + p:
            out -= 1
        if out != n.out_shapes[0][2 + d]:
            return False
    return True


def _global_pool(n, pool_type):
    if pool_type == "max":
        n.emit("GlobalMaxPool", [n.inputs[0]])
    elif pool_type == "avg":
        n.emit("GlobalAveragePool", [n.inputs[0]])
    else:
        axes = list(range(2, n.rank()))
        n.emit("ReduceSum", [n.inputs[0], n.int64s(axes)], keepdims=1)


@converter("_npx_pooling")
def _pooling(n):
    _check_layout(n)
    pool_type = n.param("pool_type", "max")
    if pool_type not in ("max", "avg", "sum"):
        n.fail(f"pool_type={pool_type!r}: expected 'max', 'avg' or 'sum'")
    if n.flag("global_pool"):
        _global_pool(n, pool_type)
        return
    attrs = _window(n, n.rank() - 2)
    convention = n.param("pooling_convention", "valid")
    if convention not in ("valid", "full"):
        n.fail(f"pooling_convention={convention!r} is not supported; expected 'valid' or "
               f"'full'")
    attrs["ceil_mode"] = int(convention == "full")
    if attrs["ceil_mode"] and not _ceil_sizes_match(n, attrs):
        n.fail("pooling_convention='full' with a last window starting in the padding has no "
               "ONNX equivalent")
    if pool_type == "max":
        n.emit("MaxPool", [n.inputs[0]], **attrs)
        return
    include_pad = int(n.flag("count_include_pad", True) or pool_type == "sum")
    if pool_type == "avg":
        n.emit("AveragePool", [n.inputs[0]], count_include_pad=include_pad, **attrs)
        return
    mean = n.make("AveragePool", [n.inputs[0]], count_include_pad=1, **attrs)
    n.emit("Mul", [mean, n.const(math.prod(attrs["kernel_shape"]))])


# ---- dense layers and normalization -----------------------------------------------------------
@converter("_npx_fully_connected")
def _fully_connected(n):
    inputs = _bias_inputs(n)
    x, weight = inputs[:2]
    if n.flag("flatten", True):
        if n.rank() != 2:
            x = n.make("Flatten", [x], axis=1)
        n.emit("Gemm", [x, weight] + inputs[2:], transB=1)
        return
    product = [n.out(0)] if len(inputs) == 2 else None
    y = n.make("MatMul", [x, n.make("Transpose", [weight], perm=[1, 0])], outputs=product)
    if len(inputs) == 3:
        n.emit("Add", [y, inputs[2]])


def _channel_shape(n, axis):
    """The shape a per-channel vector takes to broadcast along axis of input 0."""
    shape = [1] * n.rank()
    shape[axis] = -1
    return n.int64s(shape)


@converter("_npx_batch_norm")
def _batch_norm(n):
    x, gamma, beta, mean, var = n.inputs[:5]
    axis, eps = n.axis(n.integer("axis", 1)), n.number("eps", 1e-5)
    if n.flag("fix_gamma"):
        gamma = n.const(onp.ones(n.in_shapes[1]), n.in_dtypes[1])
    if axis == 1 and n.rank() >= 2:
        n.emit("BatchNormalization", [x, gamma, beta, mean, var], epsilon=eps,
               momentum=n.number("momentum", 0.9))
        return
    # another channel axis: x * scale + shift, the per-channel vectors broadcast along it
    std = n.make("Sqrt", [n.make("Add", [var, n.const(eps, n.in_dtypes[4])])])
    scale = n.make("Div", [gamma, std])
    shift = n.make("Sub", [beta, n.make("Mul", [mean, scale])])
    shape = _channel_shape(n, axis)
    scaled = n.make("Mul", [x, n.make("Reshape", [scale, shape])])
    n.emit("Add", [scaled, n.make("Reshape", [shift, shape])])


@converter("_npx_layer_norm")
def _layer_norm(n):
    if n.flag("output_mean_var"):
        n.fail("output_mean_var=True is not supported")
    x, gamma, beta = n.inputs[:3]
    axis, eps = n.axis(n.integer("axis", -1)), n.number("eps", 1e-5)
    if axis == n.rank() - 1:
        n.emit("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)
        return
    # a middle axis: LayerNormalization normalizes over axis..last, so spell it out
    centered = n.make("Sub", [x, n.make("ReduceMean", [x], axes=[axis], keepdims=1)])
    var = n.make("ReduceMean", [n.make("Mul", [centered, centered])], axes=[axis], keepdims=1)
    normed = n.make("Div", [centered, n.make("Sqrt", [n.make("Add", [var, n.const(eps)])])])
    shape = _channel_shape(n, axis)
    scaled = n.make("Mul", [normed, n.make("Reshape", [gamma, shape])])
    n.emit("Add", [scaled, n.make("Reshape", [beta, shape])])


@converter("_npx_embedding")
def _embedding(n):
    n.emit("Gather", [n.inputs[1], n.input_as(0, onp.int64)], axis=0)


@converter("_npx_one_hot")
def _one_hot(n):
    depth = n.integer("depth")
    index = n.input_as(0, onp.int64)
    # ONNX counts negative indices from the end; ndx gives them rows of off_value
    negative = n.make("Less", [index, n.const(0, onp.int64)])
    index = n.make("Where", [negative, n.const(depth, onp.int64), index])
    values = n.const([n.number("off_value", 0.0), n.number("on_value", 1.0)])
    n.emit("OneHot", [index, n.const([depth], onp.int64), values], axis=-1)


# ---- activations ------------------------------------------------------------------------------
def _gelu(n, approximate):
    x = n.inputs[0]
    half_x = n.make("Mul", [x, n.const(0.5)])
    if approximate:  # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        cube = n.make("Mul", [n.make("Mul", [x, x]), x])
        inner = n.make("Add", [x, n.make("Mul", [cube, n.const(0.044715)])])
        core = n.make("Tanh", [n.make("Mul", [inner, n.const(math.sqrt(2 / math.pi))])])
    else:  # 0.5 x (1 + erf(x / sqrt(2)))
        core = n.make("Erf", [n.make("Mul", [x, n.const(1 / math.sqrt(2))])])
    n.emit("Mul", [half_x, n.make("Add", [core, n.const(1.0)])])


def _mish(n):
    x = n.inputs[0]
    n.emit("Mul", [x, n.make("Tanh", [n.make("Softplus", [x])])])


def _log_sigmoid(n):
    n.emit("Neg", [n.make("Softplus", [n.make("Neg", [n.inputs[0]])])])


_ACTIVATIONS = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
                "softsign": "Softsign"}


@converter("_npx_activation")
def _activation(n):
    act = n.param("act_type")
    if act in _ACTIVATIONS:
        n.emit(_ACTIVATIONS[act], [n.inputs[0]])
    elif act == "log_sigmoid":
        _log_sigmoid(n)
    elif act == "mish":
        _mish(n)
    else:
        n.fail(f"act_type={act!r}: expected one of {sorted(_ACTIVATIONS)}, 'log_sigmoid' "
               f"or 'mish'")


def _prelu(n):
    x, gamma = n.inputs[:2]
    if n.rank() > 2 and math.prod(n.in_shapes[1]) > 1:  # one slope per channel (axis 1)
        gamma = n.make("Reshape", [gamma, n.int64s([-1] + [1] * (n.rank() - 2))])
    n.emit("PRelu", [x, gamma])


@converter("_npx_leaky_relu")
def _leaky_relu(n):
    act, slope = n.param("act_type", "leaky"), n.number("slope", 0.25)
    if act == "leaky":
        n.emit("LeakyRelu", [n.inputs[0]], alpha=slope)
    elif act == "elu":
        n.emit("Elu", [n.inputs[0]], alpha=slope)
    elif act == "selu":  # (ONNX's default alpha and gamma are MXNet's constants)
        n.emit("Selu", [n.inputs[0]])
    elif act in ("gelu", "gelu_erf", "gelu_tanh"):
        _gelu(n, approximate=act == "gelu_tanh")
    elif act == "prelu":
        _prelu(n)
    else:
        n.fail(f"act_type={act!r}: expected leaky, prelu, elu, selu, gelu_erf or gelu_tanh")


@converter("_npx_gelu")
def _exact_gelu(n):
    _gelu(n, approximate=False)


@converter("_npx_silu")
def _silu(n):
    n.emit("Mul", [n.inputs[0], n.make("Sigmoid", [n.inputs[0]])])


@converter("_npx_relu6")
def _relu6(n):
    n.emit("Clip", [n.inputs[0], n.const(0.0), n.const(6.0)])


converter("_npx_mish")(_mish)
converter("_npx_log_sigmoid")(_log_sigmoid)


# ---- softmax, dropout and loss heads (inference) ----------------------------------------------
@converter("_npx_softmax", "_npx_log_softmax")
def _softmax(n):
    onnx_op = "Softmax" if n.op == "_npx_softmax" else "LogSoftmax"
    n.emit(onnx_op, [n.inputs[0]], axis=n.axis(n.integer("axis", -1)))


@converter("SoftmaxOutput")
def _softmax_output(n):
    """MXNet's softmax head: over axis 1 (multi_output), the last axis (preserve_shape or 2-d
    data), else over all axes but the first."""
    x = n.inputs[0]
    if n.flag("multi_output"):
        n.emit("Softmax", [x], axis=1)
    elif n.flag("preserve_shape") or n.rank() <= 2:
        n.emit("Softmax", [x], axis=-1)
    else:
        flat = n.make("Softmax", [n.make("Flatten", [x], axis=1)], axis=1)
        n.emit("Reshape", [flat, n.make("Shape", [x])])


@converter("_npx_dropout", "MakeLoss", "LinearRegressionOutput", "MAERegressionOutput")
def _identity(n):
    n.emit("Identity", [n.inputs[0]])


@converter("LogisticRegressionOutput")
def _logistic_output(n):
    n.emit("Sigmoid", [n.inputs[0]])


# The loss heads' label inputs: not inputs of the exported (inference) graph.
LABEL_INPUTS = {"SoftmaxOutput": 1, "LinearRegressionOutput": 1,
                "LogisticRegressionOutput": 1, "MAERegressionOutput": 1}
