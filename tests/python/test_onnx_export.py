"""mx.onnx.export_model: ndx and MXNet graphs exported to ONNX, checked by onnx's checker and
run in onnxruntime (CPU) against ndx on the same inputs."""
import functools
import json
import os
import subprocess
import sys

import numpy as onp
import onnx
import onnxruntime as ort
import pytest

import ndx as mx
from ndx import np, npx
from ndx.gluon import nn
from ndx.gluon.model_zoo import vision
from ndx.gluon.model_zoo.vision.densenet import DenseNet

RTOL = ATOL = 1e-4


# ---- helpers ----------------------------------------------------------------------------------
def _randomize(net, seed=0):
    """Random weights, and random batch-norm statistics and affine params (the initial ones,
    0 and 1, would leave the normalization untested)."""
    rng = onp.random.default_rng(seed)
    for name, p in net.collect_params().items():
        shape = p.shape
        if name.endswith(("running_var", "gamma")):
            value = rng.uniform(0.5, 1.5, shape)
        elif name.endswith(("running_mean", "beta", "bias")):
            value = rng.uniform(-0.2, 0.2, shape)
        else:
            fan_in = max(int(onp.prod(shape[1:])), 1)
            value = rng.normal(0, (2.0 / fan_in) ** 0.5, shape)
        p.set_data(np.array(value.astype(p.dtype)))


def _ready(net, *inputs):
    """net initialized and hybridized, its parameters' shapes set by a first call."""
    net.initialize()
    net.hybridize()
    net(*inputs)
    return net


def _export_block(net, inputs, tmp_path, name="model", **kwargs):
    """(the ONNX path, ndx's outputs as NumPy arrays) of a block _ready made."""
    outs = net(*inputs)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    prefix = str(tmp_path / name)
    net.export(prefix)
    path = mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                                [x.shape for x in inputs], [x.dtype for x in inputs],
                                str(tmp_path / f"{name}.onnx"), **kwargs)
    return path, [o.asnumpy() for o in outs]


def _run(path, *arrays):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {i.name: onp.asarray(a) for i, a in zip(sess.get_inputs(), arrays)}
    return sess.run(None, feeds)


def _check(path, inputs, expected):
    """The model passes the checker, and runs to ndx's outputs; returns the max abs diff."""
    onnx.checker.check_model(onnx.load(path))
    got = _run(path, *[x.asnumpy() for x in inputs])
    assert len(got) == len(expected)
    diff = 0.0
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        onp.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)
        diff = max(diff, float(onp.abs(g.astype(onp.float64) - e).max()) if e.size else 0.0)
    return diff


def _images(shape, seed=0):
    return np.array(onp.random.default_rng(seed).uniform(-1, 1, shape).astype(onp.float32))


# ---- model zoo --------------------------------------------------------------------------------
ZOO = {
    "resnet18_v1": (lambda: vision.resnet18_v1(), 32),
    "resnet18_v2": (lambda: vision.resnet18_v2(), 32),
    "vgg11_bn": (lambda: vision.vgg11_bn(), 32),
    "alexnet": (lambda: vision.alexnet(), 64),
    "densenet": (lambda: DenseNet(16, 8, (2, 2, 2, 2)), 224),  # (densenet121's layers)
    "squeezenet1_1": (lambda: vision.squeezenet1_1(), 224),
    "mobilenet1_0": (lambda: vision.mobilenet0_25(), 32),
    "mobilenet_v2": (lambda: vision.mobilenet_v2_0_25(), 32),
    "inception_v3": (lambda: vision.inception_v3(), 299),
}


@pytest.mark.parametrize("name", sorted(ZOO))
def test_model_zoo(name, tmp_path):
    make, size = ZOO[name]
    x = _images((1, 3, size, size))
    net = _ready(make(), x)
    _randomize(net)
    path, expected = _export_block(net, [x], tmp_path, name)
    _check(path, [x], expected)


def test_dynamic_batch(tmp_path):
    net = _ready(vision.resnet18_v1(classes=10), _images((1, 3, 32, 32)))
    _randomize(net)
    path, _ = _export_block(net, [_images((1, 3, 32, 32))], tmp_path, dynamic=True)
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert len(dims) == 4 and not dims[0].HasField("dim_value")
    for batch in (2, 5):
        x = _images((batch, 3, 32, 32), seed=batch)
        (got,) = _run(path, x.asnumpy())
        onp.testing.assert_allclose(got, net(x).asnumpy(), rtol=RTOL, atol=ATOL)


def test_dynamic_input_shapes(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(3))
    _ready(net, _images((2, 3, 8, 8)))
    path, _ = _export_block(net, [_images((2, 3, 8, 8))], tmp_path, dynamic=True,
                            dynamic_input_shapes=[(None, 3, None, None)])
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_value if d.HasField("dim_value") else None for d in dims] == [None, 3, None,
                                                                                  None]
    x = _images((3, 3, 12, 10), seed=1)
    onp.testing.assert_allclose(_run(path, x.asnumpy())[0], net(x).asnumpy(), rtol=RTOL,
                                atol=ATOL)


# ---- an MLP: params as a file, a dict, [arg, aux] ----------------------------------------------
def _mlp(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(32, activation="relu"), nn.Dense(16, activation="tanh"), nn.Dense(5))
    x = _images((4, 10))
    expected = _ready(net, x)(x).asnumpy()
    prefix = str(tmp_path / "mlp")
    net.export(prefix)
    return prefix, x, expected


def test_mlp_params_file(tmp_path):
    prefix, x, expected = _mlp(tmp_path)
    path = mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params", [(4, 10)],
                                onp.float32, str(tmp_path / "mlp.onnx"))
    assert path == str(tmp_path / "mlp.onnx")
    _check(path, [x], [expected])


@pytest.mark.parametrize("form", ["dict", "prefixed", "arg_aux"])
def test_mlp_params_dict(tmp_path, form):
    prefix, x, expected = _mlp(tmp_path)
    sym = mx.sym.load(prefix + "-symbol.json")
    loaded = mx.nd.load(prefix + "-0000.params")  # {'arg:name': array}
    plain = {k.split(":", 1)[1]: v for k, v in loaded.items()}
    params = {"dict": plain, "prefixed": loaded, "arg_aux": [plain, {}]}[form]
    path = mx.onnx.export_model(sym, params, [(4, 10)], onp.float32,
                                str(tmp_path / "mlp.onnx"), run_shape_inference=True)
    _check(path, [x], [expected])


def test_old_argument_names_and_large_model(tmp_path):
    prefix, x, expected = _mlp(tmp_path)
    path = mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                                onnx_file_path=str(tmp_path / "big.onnx"),
                                input_shape=[(4, 10)], input_type=onp.float32,
                                large_model=True)
    assert os.path.exists(path + ".data")
    onp.testing.assert_allclose(_run(path, x.asnumpy())[0], expected, rtol=RTOL, atol=ATOL)


# ---- a transformer encoder block ----------------------------------------------------------------
class _Encoder(nn.HybridBlock):
    def __init__(self, vocab=50, units=16, heads=2, hidden=32):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, units)
        self.qkv = nn.Dense(3 * units, flatten=False)
        self.proj = nn.Dense(units, flatten=False)
        self.ffn1 = nn.Dense(hidden, flatten=False)
        self.ffn2 = nn.Dense(units, flatten=False)
        self.ln1, self.ln2 = nn.LayerNorm(), nn.LayerNorm()
        self.act, self.drop = nn.GELU(), nn.Dropout(0.1)

    def _heads(self, a, b, t):
        a = a.reshape(b, t, self.heads, -1).transpose(0, 2, 1, 3)
        return a.reshape(b * self.heads, t, -1)

    def forward(self, tokens):
        x = self.embed(tokens)
        b, t, u = x.shape
        q, k, v = (self._heads(a, b, t) for a in np.split(self.qkv(x), 3, axis=-1))
        att = npx.batch_dot(q, k, transpose_b=True) / (u // self.heads) ** 0.5
        att = self.drop(npx.softmax(att, axis=-1))
        o = np.matmul(att, v).reshape(b, self.heads, t, -1).transpose(0, 2, 1, 3)
        x = self.ln1(x + self.proj(o.reshape(b, t, u)))
        return self.ln2(x + self.drop(self.ffn2(self.act(self.ffn1(x)))))


def test_transformer_encoder(tmp_path):
    tokens = np.array(onp.random.default_rng(0).integers(0, 50, (2, 7)).astype(onp.int32))
    net = _ready(_Encoder(), tokens)
    _randomize(net)
    path, expected = _export_block(net, [tokens], tmp_path)
    _check(path, [tokens], expected)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {"LayerNormalization", "Gather", "Softmax", "MatMul", "Erf"} <= ops
    assert "Dropout" not in ops


# ---- elementwise and tensor ops ---------------------------------------------------------------
class _Tensors(nn.HybridBlock):
    def forward(self, x, y):
        a = 2 / (np.abs(1.0 - (x * 2 + 1 - y) / 3.0) + 1)
        p1, p2 = np.split(np.concatenate([a, x], axis=1), 2, axis=1)
        c = np.clip(p1, -0.5, 0.5) + npx.sigmoid(p2) * np.tanh(y)
        d = npx.leaky_relu(c, act_type="leaky", slope=0.1) - npx.leaky_relu(
            c, act_type="elu", slope=1.0)
        e = npx.log_softmax(d, axis=-1)
        m = np.where(x > 0, x, y).astype("float16").astype("float32")
        r = np.sum(m, axis=(1, 2), keepdims=True) + np.max(m, axis=-1, keepdims=True)
        s = np.stack([x, y], axis=1).mean(axis=(0, 1))
        g = np.squeeze(np.expand_dims(np.mean(e, axis=1), 1), axis=1)
        return npx.batch_flatten(e), g, r, s, x[:, 1:3, ::-2], np.maximum(x, y) ** 2


def test_elementwise_and_tensor_ops(tmp_path):
    x, y = _images((2, 4, 6)), _images((2, 4, 6), seed=1)
    path, expected = _export_block(_ready(_Tensors(), x, y), [x, y], tmp_path)
    _check(path, [x, y], expected)


def test_symbol_api_ops(tmp_path):
    """A graph built with mx.sym (expand_dims, squeeze, weak scalars, npx.reshape's codes,
    cast): its reshapes follow the input's runtime shape under dynamic=True."""
    data = mx.sym.var("data")
    a = (data.expand_dims(1) * 3 - 1).squeeze(1)
    b = mx.sym._npx_reshape(a, newshape=(-2, -5, -6, 2, -1))  # (N, 6, 2, 5) -> (N, 12, 2, 5)
    c = (b.astype("float64") + 1).astype("float32").clip(-2.0, 4.0)
    out = mx.sym.Group([c.softmax(axis=1), c.sum(axis=(2, 3)), c.max(axis=1)])
    path = mx.onnx.export_model(out, {}, [(2, 6, 2, 10)], onp.float32,
                                str(tmp_path / "sym.onnx"), dynamic=True)
    onnx.checker.check_model(onnx.load(path))
    for batch in (2, 3):
        x = _images((batch, 6, 2, 10), seed=batch)
        expected = [o.asnumpy() for o in out.eval(data=x)]
        for g, e in zip(_run(path, x.asnumpy()), expected):
            onp.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)


def test_batch_norm_fix_gamma(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3), nn.BatchNorm(scale=False), nn.Activation("sigmoid"))
    x = _images((2, 3, 8, 8))
    _randomize(_ready(net, x))  # (a gamma != 1 that fix_gamma ignores)
    path, expected = _export_block(net, [x], tmp_path)
    _check(path, [x], expected)
    names = {t.name for t in onnx.load(path).graph.initializer}
    assert not any(n.endswith("gamma") for n in names)


# ---- one converter at a time, on graphs built with mx.sym --------------------------------------
@functools.lru_cache(maxsize=1)
def _op_cases():
    """{case: (symbol, inputs, params, extra values ndx's eval needs (labels))}."""
    rng = onp.random.default_rng(0)

    def rand(*shape, dtype=onp.float32):
        return rng.normal(size=shape).astype(dtype)

    S, d, e, w = mx.sym, mx.sym.var("data"), mx.sym.var("e"), mx.sym.var("w")
    x4, x2, y2 = rand(2, 3, 9, 9), rand(4, 6), rand(4, 6)
    i2 = rng.integers(-9, 9, (4, 6)).astype(onp.int32)
    j2 = (rng.integers(1, 5, (4, 6)) * rng.choice([-1, 1], (4, 6))).astype(onp.int32)
    stats = {k: rng.uniform(0.5, 1.5, 9).astype(onp.float32) for k in "gbmv"}
    g, b, m, v = (S.var(k) for k in "gbmv")
    pool = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    return {
        "deconvolution": (S._npx_deconvolution(d, w, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                               adj=(1, 1), num_filter=4, no_bias=True),
                          {"data": x4}, {"w": rand(3, 4, 3, 3)}, {}),
        "deconvolution_target": (S._npx_deconvolution(d, w, kernel=(3, 3), stride=(2, 2),
                                                       target_shape=(18, 18), num_filter=4,
                                                       no_bias=True),
                                 {"data": x4}, {"w": rand(3, 4, 3, 3)}, {}),
        "conv_group_dilate": (S._npx_convolution(d, w, kernel=(3, 3), dilate=(2, 2),
                                                 pad=(2, 1), stride=(1, 2), num_filter=6,
                                                 num_group=3, no_bias=True),
                              {"data": x4}, {"w": rand(6, 1, 3, 3)}, {}),
        "conv1d": (S._npx_convolution(d, w, kernel=(3,), num_filter=2, no_bias=True),
                   {"data": rand(2, 3, 7)}, {"w": rand(2, 3, 3)}, {}),
        "avg_pool_full": (S._npx_pooling(d, pool_type="avg", pooling_convention="full",
                                         count_include_pad=False, **pool), {"data": x4}, {}, {}),
        "sum_pool": (S._npx_pooling(d, pool_type="sum", **pool), {"data": x4}, {}, {}),
        "global_max_pool": (S._npx_pooling(d, global_pool=True), {"data": x4}, {}, {}),
        "global_sum_pool": (S._npx_pooling(d, pool_type="sum", global_pool=True),
                            {"data": x4}, {}, {}),
        "selu": (S._npx_leaky_relu(d, act_type="selu"), {"data": x4}, {}, {}),
        "gelu_tanh": (S._npx_leaky_relu(d, act_type="gelu_tanh"), {"data": x4}, {}, {}),
        "prelu": (S._npx_leaky_relu(d, w, act_type="prelu"), {"data": x4},
                  {"w": rng.uniform(0, 0.5, 3).astype(onp.float32)}, {}),
        "softrelu": (S._npx_activation(d, act_type="softrelu"), {"data": x4}, {}, {}),
        "log_sigmoid": (S._npx_activation(d, act_type="log_sigmoid"), {"data": x4}, {}, {}),
        "mish": (S._npx_activation(d, act_type="mish"), {"data": x4}, {}, {}),
        "silu_relu6": (S._npx_silu(d) + S._npx_relu6(d * 4), {"data": x4}, {}, {}),
        "log1p_rint": (S._np_log1p(S._np_abs(d)) + S._np_rint(d * 3), {"data": x4}, {}, {}),
        "isfinite": (S._np_isfinite(S._np_log(d)), {"data": x4}, {}, {}),
        "mod_float": (S._np_mod(d, e), {"data": x2, "e": y2}, {}, {}),
        "mod_int": (S._np_mod(d, e), {"data": i2, "e": j2}, {}, {}),
        "floor_divide_int": (S._np_floor_divide(d, e), {"data": i2, "e": j2}, {}, {}),
        "true_divide_int": (S._np_true_divide(d, e), {"data": i2, "e": j2}, {}, {}),
        "hypot": (S._np_hypot(d, e), {"data": x2, "e": y2}, {}, {}),
        "compare_logical": (S._np_logical_xor(S._np_not_equal(d, e), S._np_less(d, d * e)),
                            {"data": x2, "e": y2}, {}, {}),
        "int_plus_float": (S._np_add(d, e), {"data": i2, "e": y2}, {}, {}),
        "weak_scalars_int": ((d + 3) * 2 - 1, {"data": i2}, {}, {}),
        "prod_keepdims": (S._np_prod(d, axis=1, keepdims=True), {"data": x2}, {}, {}),
        "any_all": (S._np_logical_and(S._np_any(S._np_greater(d, e), axis=0),
                                      S._np_all(S._np_greater(d + 3, e), axis=0)),
                    {"data": x2, "e": y2}, {}, {}),
        "argmax": (S._np_argmax(d, keepdims=True), {"data": x2}, {}, {}),
        "max_initial": (S._np_max(d, axis=0, initial=0.5), {"data": x2}, {}, {}),
        "mean_int": (S._np_mean(d, axis=0), {"data": i2}, {}, {}),
        "layer_norm_axis1": (S._npx_layer_norm(d, g, b, axis=1), {"data": x4},
                             {"g": rand(3), "b": rand(3)}, {}),
        "batch_norm_last_axis": (S._npx_batch_norm(d, g, b, m, v, axis=-1), {"data": x4},
                                 stats, {}),
        "softmax_output_4d": (S.SoftmaxOutput(d, name="sm"), {"data": x4}, {},
                              {"sm_label": onp.zeros((2, 3, 9), onp.float32)}),
        "softmax_output_multi": (S.SoftmaxOutput(d, multi_output=True, name="sm"),
                                 {"data": x4}, {}, {"sm_label": onp.zeros((2, 9, 9))}),
        "logistic_output": (S.LogisticRegressionOutput(d, name="lr"), {"data": x2}, {},
                            {"lr_label": x2}),
        "dot": (S._np_dot(d, w), {"data": x4}, {"w": rand(9, 5)}, {}),
        "broadcast_to": (S._np_broadcast_to(S._np_reshape(d, newshape=(4, 1, 6)),
                                            shape=(4, 3, 6)), {"data": x2}, {}, {}),
        "fill_like": (S._np_zeros_like(d) + S._np_full_like(d, fill_value=2.5),
                      {"data": x2}, {}, {}),
        "arange": (S._npi_arange(start=1, stop=7, step=1.5, dtype="float32") * d,
                   {"data": rand(4)}, {}, {}),
        "swapaxes_transpose": (S._np_transpose(S._np_swapaxes(d, axis1=0, axis2=2)),
                               {"data": x4}, {}, {}),
        "split_indices": (S.Group(list(S._npi_split(d, indices=(1, 4), axis=1))),
                          {"data": x2}, {}, {}),
        "slice_negative_step": (S._npx_slice(d, begin=(-2 ** 63, -1, 1),
                                             end=(-2 ** 63, -2 ** 63, 8), step=(1, -1, 3)),
                                {"data": x4}, {}, {}),
        "take_clip_wrap": (S._npi_take(d, e, axis=1, mode="clip")
                           + S._npi_take(d, e, axis=1, mode="wrap"),
                           {"data": x2, "e": onp.array([[0, 7], [-3, 2]], onp.int32)}, {}, {}),
        "one_hot": (S._npx_one_hot(d, depth=5), {"data": onp.array([[0, 4], [-1, 2]])}, {},
                    {}),
        "embedding_float_index": (S._npx_embedding(d, w, input_dim=6, output_dim=3),
                                  {"data": onp.array([[0, 5], [1, 2]], onp.float32)},
                                  {"w": rand(6, 3)}, {}),
        "npx_reshape_drop_rest": (S._npx_reshape(d, newshape=(-2, -3, -4)),
                                  {"data": rand(2, 1, 3, 4)}, {}, {}),
        "npx_reshape_split": (S._npx_reshape(d, newshape=(-6, -1, 2, -4)),
                              {"data": rand(4, 3, 5)}, {}, {}),
        "where_float_condition": (S._np_where(S._npx_relu(d), d, e), {"data": x2, "e": y2},
                                  {}, {}),
        "astype_bool": (S._npi_astype(d, dtype="bool"), {"data": x2}, {}, {}),
        "matmul_int": (S._np_matmul(d, e), {"data": i2, "e": j2.T.copy()}, {}, {}),
        "dense_no_flatten_no_bias": (S._npx_fully_connected(d, w, num_hidden=5, no_bias=True,
                                                            flatten=False),
                                     {"data": x4}, {"w": rand(5, 9)}, {}),
    }


_OP_CASES = ["deconvolution", "deconvolution_target", "conv_group_dilate", "conv1d",
             "avg_pool_full", "sum_pool", "global_max_pool", "global_sum_pool", "selu",
             "gelu_tanh", "prelu", "softrelu", "log_sigmoid", "mish", "silu_relu6",
             "log1p_rint", "isfinite", "mod_float", "mod_int", "floor_divide_int",
             "true_divide_int", "hypot", "compare_logical", "int_plus_float",
             "weak_scalars_int", "prod_keepdims", "any_all", "argmax", "max_initial",
             "mean_int", "layer_norm_axis1", "batch_norm_last_axis", "softmax_output_4d",
             "softmax_output_multi", "logistic_output", "dot", "broadcast_to", "fill_like",
             "arange", "swapaxes_transpose", "split_indices", "slice_negative_step",
             "take_clip_wrap", "one_hot", "embedding_float_index", "npx_reshape_drop_rest",
             "npx_reshape_split", "where_float_condition", "astype_bool", "matmul_int",
             "dense_no_flatten_no_bias"]


@pytest.mark.parametrize("case", _OP_CASES)
def test_op_converter(case, tmp_path):
    out, inputs, params, extra = _op_cases()[case]
    path = mx.onnx.export_model(out, params, [a.shape for a in inputs.values()],
                                [a.dtype for a in inputs.values()], str(tmp_path / "op.onnx"))
    onnx.checker.check_model(onnx.load(path))
    values = {k: np.array(a) for k, a in {**inputs, **params, **extra}.items()}
    expected = [o.asnumpy() for o in out.eval(**values)]
    got = _run(path, *inputs.values())
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        onp.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)


# ---- MXNet 1.x's graph JSON ---------------------------------------------------------------------
_LEGACY = {
    "nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "fc1_weight", "attrs": {"num_hidden": "16"}, "inputs": []},
        {"op": "null", "name": "fc1_bias", "attrs": {"num_hidden": "16"}, "inputs": []},
        {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "16"},
         "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
        {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"},
         "inputs": [[3, 0, 0]]},
        {"op": "null", "name": "fc2_weight", "attrs": {"num_hidden": "4"}, "inputs": []},
        {"op": "null", "name": "fc2_bias", "attrs": {"num_hidden": "4"}, "inputs": []},
        {"op": "FullyConnected", "name": "fc2", "attrs": {"num_hidden": "4"},
         "inputs": [[4, 0, 0], [5, 0, 0], [6, 0, 0]]},
        {"op": "null", "name": "softmax_label", "inputs": []},
        {"op": "SoftmaxOutput", "name": "softmax", "inputs": [[7, 0, 0], [8, 0, 0]]},
    ],
    "arg_nodes": [0, 1, 2, 5, 6, 8],
    "node_row_ptr": list(range(11)),
    "heads": [[9, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10901]},
}


def test_mxnet_legacy_json(tmp_path):
    rng = onp.random.default_rng(0)
    w1, b1 = rng.normal(size=(16, 8)), rng.normal(size=16)
    w2, b2 = rng.normal(size=(4, 16)), rng.normal(size=4)
    params = {f"arg:{k}": mx.nd.array(v.astype(onp.float32))
              for k, v in dict(fc1_weight=w1, fc1_bias=b1, fc2_weight=w2, fc2_bias=b2).items()}
    sym_file = tmp_path / "legacy-symbol.json"
    sym_file.write_text(json.dumps(_LEGACY))
    path = mx.onnx.export_model(str(sym_file), params, [(3, 8)], onp.float32,
                                str(tmp_path / "legacy.onnx"))
    model = onnx.load(path)
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["data"]  # (the label is left out)
    x = rng.normal(size=(3, 8)).astype(onp.float32)
    logits = onp.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    expected = onp.exp(logits - logits.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    onp.testing.assert_allclose(_run(path, x)[0], expected, rtol=RTOL, atol=ATOL)


def _node(op, name, inputs=(), **attrs):
    return {"op": op, "name": name, "attrs": {k: str(v) for k, v in attrs.items()},
            "inputs": [[i, j, 0] for i, j in inputs]}


def _legacy_cnn():
    """An MXNet 1.x style CNN graph: legacy layers, scalar ops, SliceChannel, Reshape codes."""
    nodes = [_node("null", n) for n in ("data", "conv0_weight", "conv0_bias")]
    nodes.append(_node("Convolution", "conv0", [(0, 0), (1, 0), (2, 0)], kernel=(3, 3),
                       pad=(1, 1), num_filter=4, workspace=1024))
    nodes += [_node("null", f"bn0_{n}") for n in ("gamma", "beta", "moving_mean", "moving_var")]
    nodes += [
        _node("BatchNorm", "bn0", [(3, 0), (4, 0), (5, 0), (6, 0), (7, 0)], eps=2e-5),
        _node("Activation", "relu0", [(8, 0)], act_type="relu"),
        _node("_plus_scalar", "plus0", [(9, 0)], scalar=1.5),
        _node("_mul_scalar", "mul0", [(10, 0)], scalar=0.5),
        _node("elemwise_add", "add0", [(11, 0), (9, 0)]),
        _node("Pooling", "pool0", [(12, 0)], kernel=(2, 2), stride=(2, 2), pool_type="max"),
        _node("SliceChannel", "split0", [(13, 0)], num_outputs=2, axis=1),
        _node("Concat", "concat0", [(14, 1), (14, 0)], dim=1),
        _node("LeakyReLU", "lrelu0", [(15, 0)], act_type="leaky", slope=0.2),
        _node("Dropout", "drop0", [(16, 0)], p=0.5),
        _node("Reshape", "reshape0", [(17, 0)], shape=(0, -3, -2)),
        _node("transpose", "tr0", [(18, 0)], axes=(0, 2, 1)),
        _node("Flatten", "flat0", [(19, 0)]),
        _node("null", "fc_weight"), _node("null", "fc_bias"),
        _node("FullyConnected", "fc", [(20, 0), (21, 0), (22, 0)], num_hidden=5),
        _node("null", "softmax_label"),
        _node("SoftmaxOutput", "softmax", [(23, 0), (24, 0)]),
    ]
    shapes = {"conv0_weight": (4, 3, 3, 3), "conv0_bias": (4,), "bn0_gamma": (4,),
              "bn0_beta": (4,), "bn0_moving_mean": (4,), "bn0_moving_var": (4,),
              "fc_weight": (5, 64), "fc_bias": (5,)}
    return {"nodes": nodes, "heads": [[25, 0, 0]],
            "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
            "attrs": {"mxnet_version": ["int", 10901]}}, shapes


def test_mxnet_legacy_cnn_json(tmp_path, caplog):
    graph, shapes = _legacy_cnn()
    rng = onp.random.default_rng(0)
    params = {("aux:" if "moving" in k else "arg:") + k:
              mx.nd.array(rng.uniform(0.5, 1.5, s).astype(onp.float32))
              for k, s in shapes.items()}
    (tmp_path / "cnn-symbol.json").write_text(json.dumps(graph))
    mx.nd.save(str(tmp_path / "cnn-0000.params"), params)
    with caplog.at_level("INFO", logger="ndx.onnx"):
        path = mx.onnx.export_model(str(tmp_path / "cnn-symbol.json"),
                                    str(tmp_path / "cnn-0000.params"), [(2, 3, 8, 8)],
                                    onnx_file_path=str(tmp_path / "cnn.onnx"), verbose=True)
    assert "name conv0" in caplog.text
    x = rng.normal(size=(2, 3, 8, 8)).astype(onp.float32)
    sym = mx.sym.load(str(tmp_path / "cnn-symbol.json"))
    values = {k[4:]: np.array(v.asnumpy()) for k, v in params.items()}
    expected = sym.eval(data=np.array(x), softmax_label=np.zeros(2), **values)[0].asnumpy()
    onp.testing.assert_allclose(_run(path, x)[0], expected, rtol=RTOL, atol=ATOL)


# ---- errors -----------------------------------------------------------------------------------
def test_unsupported_op(tmp_path):
    out = mx.sym.cumsum(mx.sym.var("data"), axis=0, name="running_total")
    with pytest.raises(NotImplementedError, match=r"_np_cumsum.*running_total"):
        mx.onnx.export_model(out, {}, [(3, 4)], onp.float32, str(tmp_path / "x.onnx"))
    assert not (tmp_path / "x.onnx").exists()


def _bad_calls(tmp_path):
    data = mx.sym.var("data")
    sym = mx.sym._npx_fully_connected(data, num_hidden=3, name="fc")
    params = {"fc_weight": onp.ones((3, 4), onp.float32), "fc_bias": onp.zeros(3, onp.float32)}
    out = str(tmp_path / "bad.onnx")
    return {
        "sym type": (TypeError, dict(sym=42, params=params, in_shapes=[(2, 4)])),
        "params type": (TypeError, dict(sym=sym, params=42, in_shapes=[(2, 4)])),
        "no in_shapes": (ValueError, dict(sym=sym, params=params)),
        "flat in_shapes": (TypeError, dict(sym=sym, params=params, in_shapes=(2, 4))),
        "shape count": (ValueError, dict(sym=sym, params=params, in_shapes=[(2, 4), (2, 4)])),
        "bad dims": (ValueError, dict(sym=sym, params=params, in_shapes=[(2, "4")])),
        "missing param": (ValueError, dict(sym=sym, params={}, in_shapes=[(2, 4)])),
        "in_types": (TypeError, dict(sym=sym, params=params, in_shapes=[(2, 4)],
                                     in_types="no-such-type")),
        "in_types count": (ValueError, dict(sym=sym, params=params, in_shapes=[(2, 4)],
                                            in_types=[onp.float32] * 2)),
        "dynamic shapes alone": (ValueError, dict(sym=sym, params=params, in_shapes=[(2, 4)],
                                                  dynamic_input_shapes=[(None, 4)])),
        "dynamic rank": (ValueError, dict(sym=sym, params=params, in_shapes=[(2, 4)],
                                          dynamic=True, dynamic_input_shapes=[(None,)])),
        "path type": (TypeError, dict(sym=sym, params=params, in_shapes=[(2, 4)],
                                      onnx_file_path=3)),
        "no file": (FileNotFoundError, dict(sym=str(tmp_path / "none-symbol.json"),
                                            params=params, in_shapes=[(2, 4)])),
    }, out


@pytest.mark.parametrize("case", ["sym type", "params type", "no in_shapes", "flat in_shapes",
                                  "shape count", "bad dims", "missing param", "in_types",
                                  "in_types count", "dynamic shapes alone", "dynamic rank",
                                  "path type", "no file"])
def test_bad_arguments(tmp_path, case):
    calls, out = _bad_calls(tmp_path)
    error, kwargs = calls[case]
    kwargs.setdefault("onnx_file_path", out)
    with pytest.raises(error, match=r"export_model|No such file"):
        mx.onnx.export_model(**kwargs)


def test_missing_onnx_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # (import onnx raises ImportError)
    with pytest.raises(ImportError, match="pip install onnx"):
        mx.onnx.export_model(mx.sym.var("data"), {}, [(1,)])


def test_import_ndx_leaves_onnx_unimported():
    code = ("import sys, ndx; assert 'onnx' not in sys.modules; "
            "assert callable(ndx.onnx.export_model); assert 'onnx' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))


def test_get_operator_support():
    ops = mx.onnx.get_operator_support()
    assert ops == sorted(ops)
    assert {"_npx_convolution", "_npx_batch_norm", "_npx_layer_norm", "_np_add",
            "_npi_weak_scalar_like", "Convolution", "FullyConnected", "SoftmaxOutput"} <= set(ops)
    assert "_np_cumsum" not in ops
    assert mx.onnx.get_operator_support(18) == ops
    with pytest.raises(ValueError, match="opset 17"):
        mx.onnx.get_operator_support(11)
