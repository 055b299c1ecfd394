"""Graph JSON as MXNet writes it (Module.save_checkpoint / HybridBlock.export '-symbol.json', 1.x
and 2.0), loaded by sym.load_json and SymbolBlock.imports with MXNet's semantics: small networks
of the kinds users save (residual block, SqueezeNet fire module, depthwise separable block,
MXNet 2.0 _npi_ graphs, SliceChannel), the scalar ops (which become a binary op and a constant),
legacy reductions, shape ops, LRN, UpSampling, and every refusal. References are NumPy
computations written here (convolution from sliding windows and einsum) and MXNet's operator
definitions (elemwise_binary_scalar_op.h, broadcast_reduce_op.h, slice_channel-inl.h,
lrn-inl.h, upsampling-inl.h, matrix_op-inl.h, mshadow_op.h)."""
import json

import numpy as onp
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import ndx
from ndx import np, sym

RNG = onp.random.default_rng(11)


def f32(*shape):
    return RNG.standard_normal(shape).astype("float32")


def var(name, **attrs):
    node = {"op": "null", "name": name, "inputs": []}
    if attrs:
        node["attrs"] = {k: str(v) for k, v in attrs.items()}
    return node


def op(kind, name, inputs, **attrs):
    """An op node as MXNet writes it: string attrs, inputs [node, output, version]."""
    ins = [[e, 0, 0] if isinstance(e, int) else list(e) + [0] * (3 - len(e)) for e in inputs]
    return {"op": kind, "name": name, "attrs": {k: str(v) for k, v in attrs.items()},
            "inputs": ins}


def graph(nodes, heads, version=10600):
    """MXNet's document: arg_nodes, node_row_ptr (one output a node here) and mxnet_version."""
    heads = [[h, 0, 0] if isinstance(h, int) else list(h) + [0] * (3 - len(h)) for h in heads]
    return json.dumps({"nodes": nodes,
                       "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
                       "node_row_ptr": list(range(len(nodes) + 1)), "heads": heads,
                       "attrs": {"mxnet_version": ["int", version]}})


def run(text, **values):
    s = sym.load_json(text)
    with ndx.autograd.predict_mode():
        outs = s.eval(**{k: np.array(v) for k, v in values.items()})
    return [o.asnumpy() for o in outs]


def unary(kind, x, **attrs):
    """The single output of one MXNet op applied to the variable x."""
    return run(graph([var("x"), op(kind, "y", [0], **attrs)], [1]), x=x)[0]


def load_error(text, kind, match):
    with pytest.raises(kind, match=match):
        sym.load_json(text)


def conv2d(x, w, b=None, stride=1, pad=0, groups=1):
    """NCHW convolution (MXNet's Convolution: weight (F, C / groups, kh, kw))."""
    xp = onp.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = sliding_window_view(xp, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    cg, fg = w.shape[1], w.shape[0] // groups
    y = onp.concatenate([onp.einsum("ncijab,fcab->nfij", win[:, g * cg:(g + 1) * cg],
                                    w[g * fg:(g + 1) * fg]) for g in range(groups)], axis=1)
    return y if b is None else y + b[None, :, None, None]


def batch_norm(x, p, prefix, eps, fix_gamma=False):
    """Inference BatchNorm over axis 1 with the moving statistics."""
    c = lambda v: v[None, :, None, None]  # noqa: E731
    gamma = 1.0 if fix_gamma else c(p[prefix + "_gamma"])
    return (x - c(p[prefix + "_moving_mean"])) / onp.sqrt(c(p[prefix + "_moving_var"]) + eps) * \
        gamma + c(p[prefix + "_beta"])


def bn_params(prefix, n):
    return {prefix + "_gamma": f32(n) + 1.5, prefix + "_beta": f32(n),
            prefix + "_moving_mean": f32(n),
            prefix + "_moving_var": RNG.uniform(0.5, 2.0, n).astype("float32")}


# ---- small networks as MXNet writes them ------------------------------------------------------

# A ResNet basic block (MXNet 1.x symbol API, saved by Module.save_checkpoint): the input scaled
# from [0, 255] to [-1, 1] by _mul_scalar / _plus_scalar, conv-bn-relu-conv-bn, the normalized
# input added back by elemwise_add, relu. BatchNorm has three outputs in MXNet (node_row_ptr
# counts them); its moving statistics are aux inputs (version 1).
_RESIDUAL_JSON = """{
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "_mul_scalar", "name": "_mulscalar0", "attrs": {"scalar": "0.0078431372549"},
     "inputs": [[0, 0, 0]]},
    {"op": "_plus_scalar", "name": "_plusscalar0", "attrs": {"scalar": "-1.0"},
     "inputs": [[1, 0, 0]]},
    {"op": "null", "name": "conv1_weight",
     "attrs": {"__shape__": "(4, 4, 3, 3)", "__lr_mult__": "1.0"}, "inputs": []},
    {"op": "null", "name": "conv1_bias", "attrs": {"__lr_mult__": "2.0"}, "inputs": []},
    {"op": "Convolution", "name": "conv1",
     "attrs": {"kernel": "(3, 3)", "num_filter": "4", "pad": "(1, 1)", "stride": "(1, 1)",
               "no_bias": "False", "workspace": "256", "cudnn_tune": "fastest"},
     "inputs": [[2, 0, 0], [3, 0, 0], [4, 0, 0]]},
    {"op": "null", "name": "bn1_gamma", "inputs": []},
    {"op": "null", "name": "bn1_beta", "inputs": []},
    {"op": "null", "name": "bn1_moving_mean", "attrs": {"__init__": "[\\"zero\\", {}]"},
     "inputs": []},
    {"op": "null", "name": "bn1_moving_var", "attrs": {"__init__": "[\\"one\\", {}]"},
     "inputs": []},
    {"op": "BatchNorm", "name": "bn1",
     "attrs": {"eps": "2e-05", "fix_gamma": "False", "momentum": "0.9",
               "use_global_stats": "False"},
     "inputs": [[5, 0, 0], [6, 0, 0], [7, 0, 0], [8, 0, 1], [9, 0, 1]]},
    {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"}, "inputs": [[10, 0, 0]]},
    {"op": "null", "name": "conv2_weight", "inputs": []},
    {"op": "Convolution", "name": "conv2",
     "attrs": {"kernel": "(3, 3)", "num_filter": "4", "pad": "(1, 1)", "no_bias": "True"},
     "inputs": [[11, 0, 0], [12, 0, 0]]},
    {"op": "null", "name": "bn2_gamma", "inputs": []},
    {"op": "null", "name": "bn2_beta", "inputs": []},
    {"op": "null", "name": "bn2_moving_mean", "inputs": []},
    {"op": "null", "name": "bn2_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn2", "attrs": {"eps": "2e-05", "fix_gamma": "False"},
     "inputs": [[13, 0, 0], [14, 0, 0], [15, 0, 0], [16, 0, 1], [17, 0, 1]]},
    {"op": "elemwise_add", "name": "_plus0", "inputs": [[18, 0, 0], [2, 0, 0]]},
    {"op": "Activation", "name": "relu2", "attrs": {"act_type": "relu"}, "inputs": [[19, 0, 0]]}
  ],
  "arg_nodes": [0, 3, 4, 6, 7, 8, 9, 12, 14, 15, 16, 17],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16, 17, 18, 19, 20, 23, 24,
                   25],
  "heads": [[20, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10600]}
}"""


def _residual_values():
    x = RNG.integers(0, 256, (2, 4, 5, 5)).astype("float32")
    p = {"conv1_weight": f32(4, 4, 3, 3) * 0.3, "conv1_bias": f32(4),
         "conv2_weight": f32(4, 4, 3, 3) * 0.3, **bn_params("bn1", 4), **bn_params("bn2", 4)}
    return x, p


def _residual_reference(x, p):
    z = x * onp.float32(0.0078431372549) + onp.float32(-1.0)
    h = onp.maximum(batch_norm(conv2d(z, p["conv1_weight"], p["conv1_bias"], pad=1), p, "bn1",
                               2e-5), 0)
    h = batch_norm(conv2d(h, p["conv2_weight"], pad=1), p, "bn2", 2e-5)
    return onp.maximum(h + z, 0)


def test_residual_block_with_scalar_input_normalization():
    s = sym.load_json(_RESIDUAL_JSON)
    assert s.list_arguments() == ["data", "conv1_weight", "conv1_bias", "bn1_gamma", "bn1_beta",
                                  "conv2_weight", "bn2_gamma", "bn2_beta"]
    assert s.list_auxiliary_states() == ["bn1_moving_mean", "bn1_moving_var",
                                         "bn2_moving_mean", "bn2_moving_var"]
    assert s.list_outputs() == ["relu2_output"]
    assert s.infer_shape(data=(2, 4, 5, 5))[1] == [(2, 4, 5, 5)]
    # the scalars' constants take the data's dtype: float32 stays float32
    assert s.infer_type(data="float32")[1] == [onp.float32]
    x, p = _residual_values()
    got = run(_RESIDUAL_JSON, data=x, **p)[0]
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got, _residual_reference(x, p), rtol=1e-4, atol=1e-4)


def test_symbol_block_imports_the_residual_checkpoint(tmp_path):
    from ndx import gluon
    x, p = _residual_values()
    (tmp_path / "resblock-symbol.json").write_text(_RESIDUAL_JSON)
    ndx.nd.save(str(tmp_path / "resblock-0000.params"),
                {("aux:" if "moving" in k else "arg:") + k: ndx.nd.array(v) for k, v in p.items()})
    blk = gluon.SymbolBlock.imports(str(tmp_path / "resblock-symbol.json"), ["data"],
                                    str(tmp_path / "resblock-0000.params"))
    assert sorted(blk.collect_params()) == sorted(p)
    onp.testing.assert_allclose(blk(np.array(x)).asnumpy(), _residual_reference(x, p),
                                rtol=1e-4, atol=1e-4)


def test_translation_renumbers_inputs_heads_and_arg_nodes():
    """Each scalar op becomes a constant, a cast and the binary op: the nodes after it move, and
    every reference (inputs, heads, arg_nodes) follows them; node_row_ptr is dropped."""
    doc = sym._translate_graph(json.loads(_RESIDUAL_JSON))
    nodes = doc["nodes"]
    assert "node_row_ptr" not in doc
    assert [nodes[i]["name"] for i in doc["arg_nodes"]] == [
        "data", "conv1_weight", "conv1_bias", "bn1_gamma", "bn1_beta", "bn1_moving_mean",
        "bn1_moving_var", "conv2_weight", "bn2_gamma", "bn2_beta", "bn2_moving_mean",
        "bn2_moving_var"]
    assert [nodes[h[0]]["name"] for h in doc["heads"]] == ["relu2"]
    by_name = {n["name"]: i for i, n in enumerate(nodes)}
    add = nodes[by_name["_plus0"]]
    assert add["op"] == "_np_add"
    assert [nodes[e[0]]["name"] for e in add["inputs"]] == ["bn2", "_plusscalar0"]
    assert [e[2] for e in nodes[by_name["bn1"]]["inputs"]] == [0, 0, 0, 1, 1]
    for i, n in enumerate(nodes):
        assert all(e[0] < i for e in n["inputs"])
    consts = [n for n in nodes if n["op"] == "null" and "__const__" in n.get("attrs", {})]
    assert [c["attrs"]["__data__"] for c in consts] == [[0.0078431372549], [-1.0]]


# SqueezeNet's fire module (squeeze 1x1, expand 1x1 and 3x3, joined by Concat), after the input
# preprocessing MXNet's image scripts fold into the graph: (x - 117) / 58 with _minus_scalar and
# _div_scalar.
_FIRE_JSON = json.dumps({
    "nodes": [
        var("data"),
        op("_minus_scalar", "_minusscalar0", [0], scalar="117.0"),
        op("_div_scalar", "_divscalar0", [1], scalar="58.0"),
        var("fire2_squeeze1x1_weight"), var("fire2_squeeze1x1_bias"),
        op("Convolution", "fire2_squeeze1x1", [2, 3, 4], kernel="(1, 1)", num_filter=2,
           pad="(0, 0)", stride="(1, 1)", no_bias="False"),
        op("Activation", "fire2_relu_squeeze1x1", [5], act_type="relu"),
        var("fire2_expand1x1_weight"), var("fire2_expand1x1_bias"),
        op("Convolution", "fire2_expand1x1", [6, 7, 8], kernel="(1, 1)", num_filter=3),
        op("Activation", "fire2_relu_expand1x1", [9], act_type="relu"),
        var("fire2_expand3x3_weight"), var("fire2_expand3x3_bias"),
        op("Convolution", "fire2_expand3x3", [6, 11, 12], kernel="(3, 3)", pad="(1, 1)",
           num_filter=3),
        op("Activation", "fire2_relu_expand3x3", [13], act_type="relu"),
        op("Concat", "fire2_concat", [10, 14], dim=1, num_args=2)],
    "arg_nodes": [0, 3, 4, 7, 8, 11, 12],
    "node_row_ptr": list(range(17)), "heads": [[15, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10500]}})


def test_squeezenet_fire_module():
    x = RNG.integers(0, 256, (2, 3, 6, 6)).astype("float32")
    p = {"fire2_squeeze1x1_weight": f32(2, 3, 1, 1), "fire2_squeeze1x1_bias": f32(2),
         "fire2_expand1x1_weight": f32(3, 2, 1, 1), "fire2_expand1x1_bias": f32(3),
         "fire2_expand3x3_weight": f32(3, 2, 3, 3), "fire2_expand3x3_bias": f32(3)}
    z = (x - onp.float32(117)) / onp.float32(58)
    sq = onp.maximum(conv2d(z, p["fire2_squeeze1x1_weight"], p["fire2_squeeze1x1_bias"]), 0)
    e1 = onp.maximum(conv2d(sq, p["fire2_expand1x1_weight"], p["fire2_expand1x1_bias"]), 0)
    e3 = onp.maximum(conv2d(sq, p["fire2_expand3x3_weight"], p["fire2_expand3x3_bias"], pad=1),
                     0)
    got = run(_FIRE_JSON, data=x, **p)[0]
    assert got.shape == (2, 6, 6, 6)
    onp.testing.assert_allclose(got, onp.concatenate([e1, e3], axis=1), rtol=1e-4, atol=1e-4)


def test_depthwise_separable_block_with_relu6_clip_and_global_pooling():
    """MobileNet's block: a depthwise 3x3 convolution (num_group = channels, stride 2), BatchNorm,
    relu6 written as clip(0, 6), a pointwise 1x1, global average Pooling, Flatten, a classifier."""
    nodes = [
        var("data"), var("dw_weight", __shape__="(4, 1, 3, 3)"),
        op("Convolution", "dw", [0, 1], kernel="(3, 3)", stride="(2, 2)", pad="(1, 1)",
           num_filter=4, num_group=4, no_bias="True", layout="NCHW"),
        var("dw_bn_gamma"), var("dw_bn_beta"), var("dw_bn_moving_mean"), var("dw_bn_moving_var"),
        op("BatchNorm", "dw_bn", [2, 3, 4, (5, 0, 1), (6, 0, 1)], eps="1e-05",
           fix_gamma="False"),
        op("clip", "relu6_0", [7], a_min="0", a_max="6"),
        var("pw_weight"), op("Convolution", "pw", [8, 9], kernel="(1, 1)", num_filter=5,
                             no_bias="True"),
        op("clip", "relu6_1", [10], a_min="0.0", a_max="6.0"),
        op("Pooling", "pool", [11], kernel="(1, 1)", global_pool="True", pool_type="avg"),
        op("Flatten", "flatten", [12]),
        var("fc_weight"), var("fc_bias"),
        op("FullyConnected", "fc", [13, 14, 15], num_hidden=3)]
    p = {"dw_weight": f32(4, 1, 3, 3), "pw_weight": f32(5, 4, 1, 1) * 2, "fc_weight": f32(3, 5),
         "fc_bias": f32(3), **bn_params("dw_bn", 4)}
    p["dw_bn_beta"] += 3  # (some values above 6)
    x = f32(2, 4, 7, 7) * 3
    h = onp.clip(batch_norm(conv2d(x, p["dw_weight"], stride=2, pad=1, groups=4), p, "dw_bn",
                            1e-5), 0, 6)
    h = onp.clip(conv2d(h, p["pw_weight"]), 0, 6)
    want = h.mean(axis=(2, 3)) @ p["fc_weight"].T + p["fc_bias"]
    assert h.max() == 6 and h.min() == 0
    got = run(graph(nodes, [16]), data=x, **p)[0]
    onp.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_mxnet2_export_with_npi_ops_and_profiler_scopes():
    """MXNet 2.0's HybridBlock.export: np ops as _npi_ / _np_ names, scalar ops with is_int,
    every op node carrying __profiler_scope__."""
    scope = {"__profiler_scope__": "mlp0:"}
    nodes = [
        var("data", __dtype__="0", __storage_type__="0"),
        op("_npi_multiply_scalar", "_npi_multiply_scalar0", [0], scalar="0.5", is_int="False",
           **scope),
        var("shift"),
        op("_npi_add", "_npi_add0", [1, 2], **scope),
        var("dense0.weight"), var("dense0.bias"),
        op("FullyConnected", "dense0_fwd", [3, 4, 5], num_hidden=4, no_bias="False",
           flatten="True", **scope),
        op("Activation", "dense0_relu", [6], act_type="relu", **scope),
        op("_npi_subtract_scalar", "_npi_subtract_scalar0", [7], scalar="1", is_int="True",
           **scope),
        op("_npi_rtrue_divide_scalar", "_npi_rtrue_divide_scalar0", [8], scalar="2.0",
           is_int="False", **scope),
        op("_np_sum", "_np_sum0", [9], axis="(1,)", keepdims="False", dtype="None",
           initial="None", **scope)]
    text = graph(nodes, [9, 10], version=20000)
    x, shift, w, b = f32(3, 2, 3), f32(2, 3), f32(4, 6), f32(4)
    h = onp.maximum((x * onp.float32(0.5) + shift).reshape(3, 6) @ w.T + b, 0) - onp.float32(1)
    got = run(text, data=x, shift=shift, **{"dense0.weight": w, "dense0.bias": b})
    onp.testing.assert_allclose(got[0], onp.float32(2) / h, rtol=1e-5)
    onp.testing.assert_allclose(got[1], (onp.float32(2) / h).sum(axis=1), rtol=1e-5)
    assert sym.load_json(text).list_outputs() == ["_npi_rtrue_divide_scalar0_output",
                                                  "_np_sum0_output"]


@pytest.mark.parametrize("squeeze", [False, True])
def test_slice_channel_outputs_feed_two_consumers(squeeze):
    """SliceChannel (MXNet's split; axis 1 by default): outputs 0 and 2 added, 1 and 2
    multiplied, output 1 also a head; with squeeze_axis the split axis goes."""
    nodes = [var("data"), op("_mul_scalar", "scaled", [0], scalar="2"),
             op("SliceChannel", "split0", [1], num_outputs=3, squeeze_axis=int(squeeze)),
             op("elemwise_add", "sum02", [(2, 0), (2, 2)]),
             op("elemwise_mul", "prod12", [(2, 1), (2, 2)])]
    x = f32(2, 3, 4)
    parts = [x[:, i:i + 1] * 2 for i in range(3)]
    if squeeze:
        parts = [q[:, 0] for q in parts]
    got = run(graph(nodes, [3, 4, (2, 1)]), data=x)
    for g, want in zip(got, [parts[0] + parts[2], parts[1] * parts[2], parts[1]]):
        onp.testing.assert_allclose(g, want, rtol=1e-6)


def test_split_v2_and_mxnet2_split_take_indices_after_a_leading_zero():
    x = f32(2, 7)
    for kind, attrs in (("_split_v2", {}), ("_npi_split", {"sections": 0})):
        nodes = [var("x"), op(kind, "s", [0], indices="(0, 2, 5)", axis=1, squeeze_axis="False",
                              **attrs)]
        got = run(graph(nodes, [(1, 0), (1, 1), (1, 2)]), x=x)
        for g, want in zip(got, onp.split(x, [2, 5], axis=1)):
            onp.testing.assert_array_equal(g, want)
    nodes = [var("x"), op("_npi_split", "s", [0], indices="()", axis=0, squeeze_axis="True",
                          sections=2)]
    got = run(graph(nodes, [(1, 0), (1, 1)]), x=x)
    onp.testing.assert_array_equal(got[1], x[1])


# ---- scalar ops -------------------------------------------------------------------------------
# MXNet applies OP(x, DType(scalar)); 1.x's comparisons give 0 / 1 in the data's dtype, and
# mshadow_op::mod gives 0 for a zero divisor (elemwise_binary_scalar_op.h, mshadow_op.h).

def _mx_mod(a, b):
    with onp.errstate(divide="ignore", invalid="ignore"):
        return onp.where(b == 0, onp.zeros_like(a * b), onp.mod(a, b))


_SCALAR_REFERENCE = {
    "plus": (lambda x, s: x + s), "minus": (lambda x, s: x - s),
    "rminus": (lambda x, s: s - x), "mul": (lambda x, s: x * s), "div": (lambda x, s: x / s),
    "rdiv": (lambda x, s: s / x), "mod": _mx_mod, "rmod": (lambda x, s: _mx_mod(s, x)),
    "power": (lambda x, s: x ** s), "rpower": (lambda x, s: s ** x),
    "maximum": onp.maximum, "minimum": onp.minimum,
    "equal": (lambda x, s: x == s), "not_equal": (lambda x, s: x != s),
    "greater": (lambda x, s: x > s), "greater_equal": (lambda x, s: x >= s),
    "lesser": (lambda x, s: x < s), "lesser_equal": (lambda x, s: x <= s),
    "logical_and": (lambda x, s: (x != 0) & (s != 0)),
    "logical_or": (lambda x, s: (x != 0) | (s != 0)),
    "logical_xor": (lambda x, s: (x != 0) ^ (s != 0)),
}
_SCALARS = {"power": 2.0, "rpower": 1.5, "mod": -2.5, "rmod": 3.0, "logical_and": 0.0}
_NPI_NAMES = {"plus": "add", "minus": "subtract", "rminus": "rsubtract", "mul": "multiply",
              "div": "true_divide", "rdiv": "rtrue_divide", "lesser": "less",
              "lesser_equal": "less_equal"}
_SCALAR_DATA = onp.array([[1.5, -2.5, 3.0, 0.0], [7.0, -7.0, 2.0, 0.5]], "float32")


@pytest.mark.parametrize("name", sorted(_SCALAR_REFERENCE))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_legacy_scalar_ops_keep_the_datas_dtype(name, dtype):
    x = _SCALAR_DATA.astype(dtype)
    s = _SCALARS.get(name, 2.0)
    got = unary(f"_{name}_scalar", x, scalar=s)
    with onp.errstate(divide="ignore", invalid="ignore"):
        want = onp.asarray(_SCALAR_REFERENCE[name](x, x.dtype.type(s))).astype(dtype)
    assert got.dtype == onp.dtype(dtype)
    onp.testing.assert_allclose(got, want, rtol=1e-3 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("name", sorted(_SCALAR_REFERENCE))
def test_mxnet2_scalar_ops_with_a_float_scalar(name):
    x = _SCALAR_DATA
    s = _SCALARS.get(name, 2.0)
    got = unary(f"_npi_{_NPI_NAMES.get(name, name)}_scalar", x, scalar=s, is_int="False")
    with onp.errstate(divide="ignore", invalid="ignore"):
        want = onp.asarray(_SCALAR_REFERENCE[name](x, onp.float32(s)))
    assert got.dtype == want.dtype  # (MXNet 2.0's comparisons give bool)
    onp.testing.assert_allclose(got, want, rtol=1e-6)


def test_legacy_scalar_ops_on_integer_data_compute_in_its_dtype():
    """DType(scalar) truncates 2.7 to 2; integer division truncates; comparisons give 0 / 1."""
    x = [7, -7, 3, 0]
    for kind, scalar, data, want in (
            ("_plus_scalar", 2.7, x, [9, -5, 5, 2]), ("_div_scalar", 2, x, [3, -3, 1, 0]),
            ("_rdiv_scalar", 7, [7, -7, 3, 5], [1, -1, 2, 1]),
            ("_mul_scalar", 3, x, [21, -21, 9, 0]), ("_greater_scalar", 0, x, [1, 0, 1, 0]),
            ("_mod_scalar", 0, x, [0, 0, 0, 0])):
        got = unary(kind, onp.array(data, "int32"), scalar=scalar)
        assert got.dtype == onp.int32, kind
        onp.testing.assert_array_equal(got, want, err_msg=kind)


def test_mxnet2_scalar_ops_follow_is_int():
    """MXNet 2.0 (NumpyBinaryScalarType): an integer scalar keeps integer data's dtype, a float
    one computes in float; true_divide gives float for integer data; comparisons give bool."""
    x = onp.array([7, -7, 3], "int32")
    got = unary("_npi_add_scalar", x, scalar=2, is_int="True")
    assert got.dtype == onp.int32 and got.tolist() == [9, -5, 5]
    got = unary("_npi_multiply_scalar", x, scalar=0.5, is_int="False")
    assert got.dtype.kind == "f" and got.tolist() == [3.5, -3.5, 1.5]
    got = unary("_npi_true_divide_scalar", x, scalar=2, is_int="True")
    assert got.dtype.kind == "f" and got.tolist() == [3.5, -3.5, 1.5]
    got = unary("_npi_less_scalar", x, scalar=3.5, is_int="False")
    assert got.dtype == onp.bool_ and got.tolist() == [False, True, True]
    u8 = onp.array([0, 51, 255], "uint8")  # (an image / 255.0)
    got = unary("_npi_true_divide_scalar", u8, scalar=255.0, is_int="False")
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got, u8 / onp.float32(255), rtol=1e-7)


def test_mxnet2_integer_scalar_on_a_bool_mask_computes_in_int64():
    """1 - (x > 0): MXNet 2.0 takes bool data to int64 for an integer scalar."""
    x = onp.array([[-1.0, 2.0], [0.0, 3.0]], "float32")
    nodes = [var("x"), op("_npi_greater_scalar", "mask", [0], scalar="0", is_int="True"),
             op("_npi_rsubtract_scalar", "inv", [1], scalar="1", is_int="True"),
             op("_npi_multiply_scalar", "twice", [1], scalar="2", is_int="True")]
    inv, twice = run(graph(nodes, [2, 3], version=20000), x=x)
    assert inv.dtype == onp.int64 and inv.tolist() == [[1, 0], [1, 0]]
    assert twice.dtype == onp.int64 and twice.tolist() == [[0, 2], [0, 2]]


def test_scalars_that_json_cannot_hold():
    """inf and NaN scalars (MXNet writes 'inf', 'nan') become 1 / 0 and 0 / 0 constants."""
    x = _SCALAR_DATA
    onp.testing.assert_array_equal(unary("_maximum_scalar", x, scalar="-inf"), x)
    onp.testing.assert_array_equal(unary("_minimum_scalar", x, scalar="inf"), x)
    assert onp.isnan(unary("_plus_scalar", x, scalar="nan")).all()


# ---- layer-graph ops --------------------------------------------------------------------------

@pytest.mark.parametrize("name,ref", [
    ("exp", onp.exp), ("log", onp.log), ("sqrt", onp.sqrt), ("square", onp.square),
    ("tanh", onp.tanh), ("abs", onp.abs), ("negative", onp.negative), ("floor", onp.floor),
    ("log1p", onp.log1p), ("expm1", onp.expm1), ("softsign", lambda v: v / (1 + onp.abs(v))),
    ("rsqrt", lambda v: 1 / onp.sqrt(v)), ("rcbrt", lambda v: 1 / onp.cbrt(v)),
    ("sign", onp.sign), ("fix", onp.fix)])
def test_legacy_unary_names_read_as_ndx_ops(name, ref):
    x = onp.abs(f32(2, 5)) + 0.1
    onp.testing.assert_allclose(unary(name, x), ref(x), rtol=1e-5, atol=1e-6)


def test_transpose_expand_dims_swapaxis_and_identity():
    x = f32(2, 3, 4)
    onp.testing.assert_array_equal(unary("transpose", x, axes="()"), x.transpose())
    onp.testing.assert_array_equal(unary("transpose", x, axes="(1, 0, 2)"), x.transpose(1, 0, 2))
    assert unary("expand_dims", x, axis=-1).shape == (2, 3, 4, 1)
    onp.testing.assert_array_equal(unary("SwapAxis", x, dim1=0, dim2=2), x.swapaxes(0, 2))
    for kind in ("_copy", "_np_copy"):
        onp.testing.assert_array_equal(unary(kind, x), x)


def test_legacy_reductions_keep_at_least_one_axis_and_the_datas_dtype():
    """broadcast_reduce_op.h: no axis (or ()) reduces everything to shape (1,); reducing every
    listed axis leaves (1,) too; the result keeps the data's dtype (an int32 mean truncates)."""
    x = f32(2, 3, 4)
    for kind, ref in (("sum", onp.sum), ("mean", onp.mean), ("max", onp.max), ("min", onp.min),
                      ("prod", onp.prod)):
        got = unary(kind, x)
        assert got.shape == (1,), kind
        onp.testing.assert_allclose(got, [ref(x)], rtol=1e-5, err_msg=kind)
        onp.testing.assert_allclose(unary(kind, x, axis="(0, 2)"), ref(x, axis=(0, 2)),
                                    rtol=1e-5, err_msg=kind)
        got = unary(kind, x, axis=1, keepdims="True")
        onp.testing.assert_allclose(got, ref(x, axis=1, keepdims=True), rtol=1e-5, err_msg=kind)
    assert unary("sum", x, axis="()").shape == (1,)
    assert unary("max", x, axis="(0, 1, 2)").shape == (1,)
    i = onp.array([[1, 2], [4, 4]], "int32")
    got = unary("mean", i, axis=1)
    assert got.dtype == onp.int32 and got.tolist() == [1, 4]
    assert unary("sum", i).dtype == onp.int32


def test_squeeze_keeps_one_axis():
    """matrix_op-inl.h: squeezing every axis of (1, 1) gives (1,), not ()."""
    assert unary("squeeze", onp.ones((1, 1), "float32")).shape == (1,)
    assert unary("squeeze", f32(2, 1, 3)).shape == (2, 3)
    assert unary("squeeze", f32(1, 2, 1), axis="(2,)").shape == (1, 2)


def test_clip_bounds_in_the_datas_dtype():
    x = f32(3, 4) * 4
    onp.testing.assert_array_equal(unary("clip", x, a_min=-1.5, a_max=2), onp.clip(x, -1.5, 2))
    onp.testing.assert_array_equal(unary("clip", x, a_min=0, a_max="inf"), onp.maximum(x, 0))
    onp.testing.assert_array_equal(unary("clip", x, a_min="-inf", a_max=1), onp.minimum(x, 1))
    onp.testing.assert_array_equal(unary("clip", x, a_min="-inf", a_max="inf"), x)
    h = x.astype("float16")
    got = unary("clip", h, a_min=-1, a_max=1)
    assert got.dtype == onp.float16
    onp.testing.assert_array_equal(got, onp.clip(h, -1, 1))
    nan = onp.array([onp.nan, 5.0], "float32")
    assert onp.isnan(unary("clip", nan, a_min=0, a_max=1)[0])


def test_pad_modes_and_mxnet2_np_pad():
    x = f32(1, 2, 3, 4)
    width = ((0, 0), (0, 0), (1, 2), (2, 1))
    flat = "(0, 0, 0, 0, 1, 2, 2, 1)"
    onp.testing.assert_array_equal(unary("Pad", x, mode="constant", pad_width=flat,
                                         constant_value=1.5),
                                   onp.pad(x, width, constant_values=1.5))
    for mode in ("edge", "reflect"):
        onp.testing.assert_array_equal(unary("Pad", x, mode=mode, pad_width=flat),
                                       onp.pad(x, width, mode=mode))
    got = unary("_npi_pad", x, pad_width=str(width), mode="symmetric", reflect_type="even",
                constant_value=0)
    onp.testing.assert_array_equal(got, onp.pad(x, width, mode="symmetric"))


def test_slice_and_slice_axis_follow_pythons_slicing():
    x = f32(3, 5, 4)
    onp.testing.assert_array_equal(unary("slice", x, begin="(None, 1)", end="(None, -1)"),
                                   x[:, 1:-1])
    onp.testing.assert_array_equal(unary("slice", x, begin="(2, None, 1)", end="(0, 4, None)",
                                         step="(-1, 2, None)"), x[2:0:-1, :4:2, 1:])
    onp.testing.assert_array_equal(unary("slice_axis", x, axis=1, begin=1, end=3), x[:, 1:3])
    onp.testing.assert_array_equal(unary("slice_axis", x, axis=-1, begin=-3, end="None"),
                                   x[..., -3:])


def _softmax(z, axis=-1):
    e = onp.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_temperature_dtype_and_activation_channel():
    x = f32(2, 3, 4)
    onp.testing.assert_allclose(unary("softmax", x, axis=1, temperature=2.5),
                                _softmax(x / onp.float32(2.5), axis=1), rtol=1e-5)
    onp.testing.assert_allclose(unary("log_softmax", x, temperature="0.5"),
                                onp.log(_softmax(x / onp.float32(0.5))), rtol=1e-5, atol=1e-6)
    got = unary("softmax", x.astype("float16"), dtype="float32")
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got, _softmax(x.astype("float16").astype("float32")), rtol=1e-5)
    onp.testing.assert_allclose(unary("softmax", x, temperature="None"), _softmax(x), rtol=1e-5)
    onp.testing.assert_allclose(unary("SoftmaxActivation", x, mode="channel"),
                                _softmax(x, axis=1), rtol=1e-5)


def test_lrn_matches_mxnets_formula():
    """lrn-inl.h: out = x * (knorm + alpha / nsize * sum of x^2 over the nsize channels around,
    zero-padded)^-beta."""
    x = f32(2, 6, 3, 3) * 4
    n, alpha, beta, knorm = 5, 1e-2, 0.75, 2.0
    sq = onp.pad(x ** 2, ((0, 0), (2, 2), (0, 0), (0, 0)))
    window = sum(sq[:, i:i + 6] for i in range(n))
    want = x * (knorm + alpha / n * window) ** -beta
    got = unary("LRN", x, nsize=n, alpha=alpha, beta=beta, knorm=knorm)
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_upsampling_nearest_and_bilinear():
    x = f32(2, 3, 2, 3)
    got = unary("UpSampling", x, scale=2, sample_type="nearest", num_args=1)
    onp.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(2, axis=3))
    got = unary("UpSampling", x, scale="(3, 2)", sample_type="nearest", num_args=1)
    onp.testing.assert_array_equal(got, x.repeat(3, axis=2).repeat(2, axis=3))
    # bilinear: a depthwise transposed convolution, kernel 2s - s % 2, stride s, pad ceil(...)
    s, w = 2, f32(3, 1, 4, 4)
    nodes = [var("x"), var("up_weight"),
             op("UpSampling", "up", [0, 1], scale=s, sample_type="bilinear", num_filter=3,
                num_args=2)]
    full = onp.zeros((2, 3, 2 * s + 2, 3 * s + 2), "float32")
    for i in range(2):
        for j in range(3):
            full[:, :, i * s:i * s + 4, j * s:j * s + 4] += x[:, :, i, j, None, None] * w[:, 0]
    got = run(graph(nodes, [2]), x=x, up_weight=w)[0]
    onp.testing.assert_allclose(got, full[:, :, 1:-1, 1:-1], rtol=1e-5, atol=1e-6)


def test_add_n_stack_broadcasts_and_legacy_binary_ops():
    a, b, c = f32(2, 3), f32(2, 3), f32(2, 3)
    nodes = [var("a"), var("b"), var("c"), op("add_n", "sum", [0, 1, 2], num_args=3),
             op("stack", "st", [0, 1], axis=1, num_args=2),
             op("broadcast_greater", "gt", [0, 1]), op("_maximum", "mx", [0, 1]),
             op("broadcast_like", "bl", [5, 4])]
    got = run(graph(nodes, [3, 4, 5, 6, 7]), a=a, b=b, c=c)
    onp.testing.assert_allclose(got[0], a + b + c, rtol=1e-6)
    onp.testing.assert_array_equal(got[1], onp.stack([a, b], axis=1))
    assert got[2].dtype == onp.float32  # (0 / 1 in the operands' dtype, MXNet 1.x)
    onp.testing.assert_array_equal(got[2], (a > b).astype("float32"))
    onp.testing.assert_array_equal(got[3], onp.maximum(a, b))
    onp.testing.assert_array_equal(unary("broadcast_to", f32(1, 3), shape="(4, 3)").shape,
                                   (4, 3))
    i = onp.array([7, -7, 9], "int32")
    nodes = [var("a"), var("b"), op("elemwise_div", "d", [0, 1]), op("logical_not", "n", [0])]
    d, n = run(graph(nodes, [2, 3]), a=i, b=onp.array([2, 2, 9], "int32"))
    assert d.dtype == onp.int32 and d.tolist() == [3, -3, 1]
    assert n.dtype == onp.int32 and n.tolist() == [0, 0, 0]


def test_v1_layers_of_old_model_files():
    """Convolution_v1 / Pooling_v1 / BatchNorm_v1 (MXNet 0.x, still read by 1.x)."""
    nodes = [var("data"), var("c_weight"), var("c_bias"),
             op("Convolution_v1", "c", [0, 1, 2], kernel="(1, 1)", num_filter=2),
             var("bn_gamma"), var("bn_beta"), var("bn_moving_mean"), var("bn_moving_var"),
             op("BatchNorm_v1", "bn", [3, 4, 5, (6, 0, 1), (7, 0, 1)]),
             op("Pooling_v1", "p", [8], kernel="(2, 2)", stride="(2, 2)", pool_type="max")]
    x = f32(1, 3, 4, 4)
    p = {"c_weight": f32(2, 3, 1, 1), "c_bias": f32(2), **bn_params("bn", 2)}
    h = batch_norm(conv2d(x, p["c_weight"], p["c_bias"]), p, "bn", 1e-3, fix_gamma=True)
    want = h.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5))
    onp.testing.assert_allclose(run(graph(nodes, [9]), data=x, **p)[0], want, rtol=1e-4,
                                atol=1e-5)


def test_mxnet2_reshape_order_c_is_accepted():
    x = f32(2, 6)
    got = unary("_np_reshape", x, newshape="(3, 4)", order="C")
    onp.testing.assert_array_equal(got, x.reshape(3, 4))
    load_error(graph([var("x"), op("_np_reshape", "r", [0], newshape="(3, 4)", order="F")], [1]),
               NotImplementedError, r"_np_reshape 'r'.*order='F'")


# ---- refusals: ops ndx cannot reproduce faithfully --------------------------------------------

def _one(kind, n_inputs=1, **attrs):
    nodes = [var(f"x{i}") for i in range(n_inputs)]
    return graph(nodes + [op(kind, "node7", list(range(n_inputs)), **attrs)], [n_inputs])


@pytest.mark.parametrize("kind,n,attrs,error,match", [
    ("round", 1, {}, NotImplementedError, "halves away from zero"),
    ("rint", 1, {}, NotImplementedError, "rounds halves down"),
    ("dot", 2, {}, NotImplementedError, "first axis of an N-d rhs"),
    ("argmax", 1, {"axis": 1}, NotImplementedError, "float indices"),
    ("argsort", 1, {}, NotImplementedError, "float32 indices"),
    ("sort", 1, {"is_ascend": "False"}, NotImplementedError,
     r"read as ndx's _np_sort, which has no parameter\(s\) \['is_ascend'\]"),
    ("_plus_scalar", 1, {"scalar": "1", "bogus": "2"}, NotImplementedError,
     r"parameter\(s\) \['bogus'\] not supported"),
    ("_plus_scalar", 1, {"scalar": "one"}, ValueError, "scalar='one' is not a number"),
    ("_npi_add_scalar", 1, {"scalar": "1", "is_int": "maybe"}, ValueError,
     "is_int='maybe' is not a boolean"),
    ("_mul_scalar", 2, {"scalar": "2"}, ValueError, r"takes 1 input\(s\), got 2"),
    ("sum", 1, {"axis": "1", "exclude": "True"}, NotImplementedError, "exclude=True"),
    ("mean", 1, {"axis": "(1, x)"}, ValueError, "is not a tuple of integers"),
    ("clip", 1, {"a_min": "2", "a_max": "1"}, NotImplementedError, "a_min > a_max"),
    ("clip", 1, {"a_min": "nan", "a_max": "1"}, NotImplementedError, "NaN bound"),
    ("clip", 1, {"a_max": "1"}, ValueError, "parameter a_min is required"),
    ("SliceChannel", 1, {"num_outputs": "2", "indices": "(0, 1)"}, NotImplementedError,
     "indices is not supported"),
    ("SliceChannel", 1, {"num_outputs": "1.5"}, ValueError, "num_outputs='1.5' is not an int"),
    ("_split_v2", 1, {"indices": "(2, 4)"}, ValueError, "do not start with 0"),
    ("Pad", 1, {"mode": "symmetric", "pad_width": "(0, 0, 1, 1)"}, ValueError,
     "mode='symmetric' is not one of MXNet's"),
    ("Pad", 1, {"mode": "constant"}, ValueError, "pad_width is required"),
    ("_npi_pad", 1, {"pad_width": "((1, 1), (2, 2))", "mode": "maximum",
                     "reflect_type": "even"}, NotImplementedError, "mode='maximum'"),
    ("_npi_pad", 1, {"pad_width": "((1, 1), (2, 2))", "mode": "reflect",
                     "reflect_type": "odd"}, NotImplementedError, "reflect_type='odd'"),
    ("_npi_pad", 1, {"pad_width": "((1, 1),)", "mode": "constant", "reflect_type": "even"},
     NotImplementedError, "a \\(before, after\\) pair for each"),
    ("slice", 1, {"begin": "(0,)"}, ValueError, "begin and end are required"),
    ("slice_axis", 1, {"axis": "0", "begin": "1", "end": "2", "step": "2"}, NotImplementedError,
     r"\['step'\]"),
    ("softmax", 2, {"use_length": "True"}, NotImplementedError, "use_length=True"),
    ("SoftmaxActivation", 1, {}, NotImplementedError, "mode='instance'"),
    ("LRN", 1, {"nsize": "4"}, ValueError, "odd window"),
    ("UpSampling", 2, {"scale": "2", "sample_type": "nearest", "num_args": "2"},
     NotImplementedError, "several upsampled together"),
    ("UpSampling", 1, {"scale": "(1, 2, 3)", "sample_type": "nearest"}, ValueError,
     "scale='\\(1, 2, 3\\)' is not supported"),
    ("UpSampling", 1, {"scale": "2", "sample_type": "bicubic"}, ValueError,
     "sample_type='bicubic'"),
    ("UpSampling", 2, {"scale": "(2, 3)", "sample_type": "bilinear", "num_filter": "1"},
     ValueError, "differs per axis"),
    ("add_n", 2, {"num_args": "3"}, ValueError, "num_args=3 but 2 inputs"),
    ("broadcast_to", 1, {"shape": "(0, 3)"}, NotImplementedError, "0 \\(keep the data's size"),
    ("broadcast_like", 2, {"lhs_axes": "(0,)", "rhs_axes": "(1,)"}, NotImplementedError,
     "lhs_axes / rhs_axes"),
])
def test_ops_that_cannot_be_translated_faithfully_are_refused(kind, n, attrs, error, match):
    load_error(_one(kind, n, **attrs), error, rf"\[load\] {kind} 'node7': .*{match}")


def test_broken_references_in_a_translated_graph_keep_the_loaders_words():
    nodes = [var("x"), op("_plus_scalar", "p", [0], scalar="1"), op("_np_exp", "e", [3])]
    load_error(graph(nodes, [2]), ValueError,
               r"node 2 \('e'\): inputs\[0\] refers to node 3, which is not defined before it")
    load_error(graph(nodes[:2], [5]), ValueError, r"heads\[0\] = \[5, 0\] does not name")
    # an op neither ndx nor the translation knows: the loader names it
    load_error(graph([var("x"), op("_plus_scalar", "p", [0], scalar="1"),
                      op("IdentityAttachKLSparseReg", "kl", [1])], [2]), ValueError,
               r"node \d+ \('kl'\): no operator named 'IdentityAttachKLSparseReg' is "
               r"registered")
