"""MXNet's classic symbolic workflow: layers by their legacy names (mx.sym.FullyConnected,
Convolution, BatchNorm, ...) whose parameter inputs, when not given, become the variables
'<name>_<input>'; infer_shape working out those parameters' shapes from the data's (MXNet's
documented example: FullyConnected(num_hidden=10) on data (100, 100) gives fc1_weight
(10, 100) and fc1_bias (10,)); simple_bind and an Executor running forward / backward.
References: MXNet's symbol documentation and operator parameter docs, NumPy, and hand
computations."""
import numpy as onp
import pytest

import ndx
from ndx import np, sym


def test_mxnet_docs_mlp_argument_names_and_inferred_shapes():
    net = sym.Variable("data")
    net = sym.FullyConnected(data=net, name="fc1", num_hidden=128)
    net = sym.Activation(data=net, name="relu1", act_type="relu")
    net = sym.FullyConnected(data=net, name="fc2", num_hidden=64)
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    arg_shapes, out_shapes, aux_shapes = net.infer_shape(data=(100, 100))
    assert dict(zip(net.list_arguments(), arg_shapes)) == {
        "data": (100, 100), "fc1_weight": (128, 100), "fc1_bias": (128,),
        "fc2_weight": (64, 128), "fc2_bias": (64,)}
    assert out_shapes == [(100, 64)] and aux_shapes == []


def test_a_given_parameter_keeps_its_name_and_no_bias_drops_the_bias():
    w = sym.Variable("myweight")
    net = sym.FullyConnected(data=sym.Variable("data"), weight=w, name="fc1", num_hidden=8,
                             no_bias=True)
    assert net.list_arguments() == ["data", "myweight"]
    assert net.infer_shape(data=(2, 3, 5))[0] == [(2, 3, 5), (8, 15)]  # flattened to (2, 15)


def test_convnet_shapes_and_batch_norm_auxiliary_states():
    """Hand-computed: conv 3x3 pad 1 keeps 8x8, 2x2 pooling stride 2 halves it, Flatten gives
    4 * 4 * 4 = 64 features."""
    x = sym.Variable("data")
    h = sym.Convolution(data=x, kernel=(3, 3), pad=(1, 1), num_filter=4, name="conv")
    h = sym.BatchNorm(data=h, name="bn")
    h = sym.Activation(h, act_type="relu")
    h = sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
    h = sym.Flatten(h)
    h = sym.FullyConnected(h, num_hidden=10, name="out")
    assert h.list_arguments() == ["data", "conv_weight", "conv_bias", "bn_gamma", "bn_beta",
                                  "out_weight", "out_bias"]
    assert h.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    args, outs, aux = h.infer_shape(data=(2, 3, 8, 8))
    assert args == [(2, 3, 8, 8), (4, 3, 3, 3), (4,), (4,), (4,), (10, 64), (10,)]
    assert outs == [(2, 10)] and aux == [(4,), (4,)]


def test_automatic_names_follow_mxnets_pattern():
    a = sym.FullyConnected(sym.Variable("x"), num_hidden=2)
    b = sym.FullyConnected(sym.Variable("x"), num_hidden=2)
    na, nb = a.name, b.name
    assert na.startswith("fullyconnected") and nb.startswith("fullyconnected") and na != nb
    assert a.list_arguments() == ["x", f"{na}_weight", f"{na}_bias"]


def test_deconvolution_has_no_bias_by_default_and_embedding_weight_is_inferred():
    d = sym.Deconvolution(sym.Variable("x"), kernel=(2, 2), stride=(2, 2), num_filter=3,
                          name="up")
    assert d.list_arguments() == ["x", "up_weight"]
    # (in - 1) * stride + kernel = 8; weight (in channels, num_filter, *kernel)
    assert d.infer_shape(x=(1, 5, 4, 4)) == ([(1, 5, 4, 4), (5, 3, 2, 2)], [(1, 3, 8, 8)], [])
    e = sym.Embedding(sym.Variable("tokens"), input_dim=10, output_dim=4, name="emb")
    assert e.infer_shape(tokens=(2, 5)) == ([(2, 5), (10, 4)], [(2, 5, 4)], [])


def test_prelu_gamma_and_layer_norm_parameters_are_inferred():
    p = sym.LeakyReLU(sym.Variable("x"), act_type="prelu", name="act")
    assert p.infer_shape(x=(2, 6, 3))[0] == [(2, 6, 3), (6,)]
    ln = sym.LayerNorm(sym.Variable("x"), name="ln")
    assert ln.infer_shape(x=(2, 7))[0] == [(2, 7), (7,), (7,)]


def test_ndx_op_names_take_inputs_by_name_and_make_missing_ones_variables():
    s = sym.fully_connected(data=sym.var("x"), num_hidden=3, name="fc")
    assert s.list_arguments() == ["x", "fc_weight", "fc_bias"]
    s = sym.fully_connected(sym.var("x"), bias=sym.var("b"), num_hidden=3, name="fc")
    assert s.list_arguments() == ["x", "fc_weight", "b"]
    with pytest.raises(TypeError, match="wieght"):
        sym.fully_connected(sym.var("x"), wieght=sym.var("w"), num_hidden=3)
    with pytest.raises(TypeError, match="twice"):
        sym.fully_connected(sym.var("x"), data=sym.var("y"), num_hidden=3)


def test_shapes_that_cannot_be_decided_are_named_and_partial_inference_gives_none():
    a, b = sym.var("a"), sym.var("b")
    with pytest.raises(ValueError, match="'b'"):
        (a + b).infer_shape(a=(2, 3))
    args, outs, aux = (a + b).infer_shape_partial(a=(2, 3))
    assert args == [(2, 3), None] and outs == [None] and aux == []


def test_an_inconsistent_given_shape_still_raises():
    net = sym.FullyConnected(sym.var("x"), num_hidden=4, name="fc")
    with pytest.raises(ValueError, match="weight"):
        net.infer_shape(x=(2, 3), fc_weight=(4, 5))


def test_inference_repeats_until_a_parameter_filled_later_reaches_its_other_readers():
    """p is read first by p * 2 (which cannot work out p's shape) and then by a layer that
    can: a second pass gives p * 2 its shape."""
    x, p = sym.var("x"), sym.var("p")
    layer = sym.FullyConnected(x, weight=p, num_hidden=4, no_bias=True, name="fc")
    g = sym.Group([p * 2, layer])
    args, outs, _ = g.infer_shape(x=(2, 5))
    assert dict(zip(g.list_arguments(), args)) == {"x": (2, 5), "p": (4, 5)}
    assert outs == [(4, 5), (2, 4)]


def test_parameter_dtypes_follow_the_data():
    net = sym.FullyConnected(sym.var("x"), num_hidden=2, name="fc")
    arg_types, out_types, _ = net.infer_type(x="float16")
    assert arg_types == [onp.float16] * 3 and out_types == [onp.float16]
    exe = net._simple_bind(ndx.cpu(), x=(3, 4), type_dict={"x": "float16"})
    assert exe.arg_dict["fc_weight"].dtype == onp.float16


def test_simple_bind_forward_and_backward_match_numpy():
    """y = relu(x @ W.T + b); with head gradient G: dW = (G * (y > 0)).T @ x."""
    net = sym.Activation(sym.FullyConnected(sym.var("x"), num_hidden=3, name="fc"),
                         act_type="relu")
    exe = net._simple_bind(ndx.cpu(), x=(4, 5))
    assert sorted(exe.arg_dict) == ["fc_bias", "fc_weight", "x"]
    rng = onp.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype("float32")
    w = rng.standard_normal((3, 5)).astype("float32")
    b = rng.standard_normal(3).astype("float32")
    exe.arg_dict["x"][...] = np.array(x)
    exe.arg_dict["fc_weight"][...] = np.array(w)
    exe.arg_dict["fc_bias"][...] = np.array(b)
    y = exe.forward(is_train=True)[0].asnumpy()
    want = onp.maximum(x @ w.T + b, 0)
    onp.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    g = rng.standard_normal((4, 3)).astype("float32")
    exe.backward(np.array(g))
    masked = g * (want > 0)
    onp.testing.assert_allclose(exe.grad_dict["fc_weight"].asnumpy(), masked.T @ x, rtol=1e-5,
                                atol=1e-5)
    onp.testing.assert_allclose(exe.grad_dict["fc_bias"].asnumpy(), masked.sum(0), rtol=1e-5,
                                atol=1e-5)
    onp.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), masked @ w, rtol=1e-5,
                                atol=1e-5)


def test_legacy_batch_norm_defaults_are_mxnets():
    """BatchNorm's legacy defaults: eps 1e-3 and fix_gamma=True (gamma read as 1)."""
    net = sym.BatchNorm(sym.var("x"), name="bn")
    exe = net._simple_bind(ndx.cpu(), x=(4, 2))
    x = onp.array([[1, 2], [3, 0], [5, 2], [7, 4]], "float32")
    exe.arg_dict["x"][...] = np.array(x)
    exe.arg_dict["bn_gamma"][...] = 5.0  # ignored: fix_gamma
    exe.arg_dict["bn_beta"][...] = 0.5
    y = exe.forward(is_train=True)[0].asnumpy()
    want = (x - x.mean(0)) / onp.sqrt(x.var(0) + 1e-3) + 0.5
    onp.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_concat_and_flatten_follow_mxnet():
    a, b = sym.var("a"), sym.var("b")
    c = sym.Concat(a, b)  # dim=1 by default
    assert c.infer_shape(a=(2, 3), b=(2, 4))[1] == [(2, 7)]
    out = c.eval(a=np.ones((2, 3)), b=np.zeros((2, 4)))[0]
    onp.testing.assert_array_equal(out.asnumpy(), onp.concatenate([onp.ones((2, 3)),
                                                                   onp.zeros((2, 4))], 1))
    f = sym.Flatten(a)
    assert f.infer_shape(a=(2, 3, 4, 5))[1] == [(2, 60)]
    with pytest.raises(ValueError, match="num_args"):
        sym.Concat(a, b, num_args=3)


def test_symbol_block_from_symbols_infers_its_parameters_at_the_first_call():
    """MXNet's SymbolBlock(outputs, inputs): the graph's other inputs become parameters whose
    shapes come from the data's at the first call, initialized by name (bias and moving mean
    zeros, moving variance ones, where MXNet 2.0 would draw them from the global
    initializer); gradients flow to them."""
    from ndx import autograd, gluon
    data = sym.var("data")
    h = sym.FullyConnected(data, num_hidden=3, name="fc")
    h = sym.BatchNorm(h, name="bn", axis=1)
    blk = gluon.SymbolBlock(outputs=h, inputs=data)
    params = blk.collect_params()
    assert sorted(params) == ["bn_beta", "bn_gamma", "bn_moving_mean", "bn_moving_var",
                              "fc_bias", "fc_weight"]
    blk.initialize()
    x = onp.random.default_rng(1).standard_normal((6, 5)).astype("float32")
    xs = np.array(x)
    with autograd.record():
        y = blk(xs)
    y.backward(np.ones((6, 3)))
    assert params["fc_weight"].shape == (3, 5) and params["bn_moving_var"].shape == (3,)
    onp.testing.assert_array_equal(params["fc_bias"].data().asnumpy(), onp.zeros(3))
    w = params["fc_weight"].data().asnumpy()
    z = x @ w.T
    # moving statistics started at 0 and 1 and took one training step (momentum 0.9)
    onp.testing.assert_allclose(params["bn_moving_mean"].data().asnumpy(), 0.1 * z.mean(0),
                                rtol=1e-4, atol=1e-6)
    onp.testing.assert_allclose(params["bn_moving_var"].data().asnumpy(), 0.9 + 0.1 * z.var(0),
                                rtol=1e-4, atol=1e-6)
    want = (z - z.mean(0)) / onp.sqrt(z.var(0) + 1e-3)  # fix_gamma, beta 0
    onp.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-4)
    # the sum of a batch-normalized column does not depend on its inputs: zero gradient
    onp.testing.assert_allclose(params["fc_weight"].grad().asnumpy(), onp.zeros((3, 5)),
                                atol=1e-4)
    assert params["bn_moving_mean"].grad_req == "null"


def test_symbol_block_shares_given_parameters_and_checks_their_names():
    from ndx import gluon
    data = sym.var("data")
    h = sym.FullyConnected(data, num_hidden=2, name="fc", no_bias=True)
    w = gluon.Parameter("fc_weight", shape=(2, 4))
    w.initialize(init="ones")
    blk = gluon.SymbolBlock(h, [data], params={"fc_weight": w})
    assert blk.collect_params()["fc_weight"] is w
    onp.testing.assert_array_equal(blk(np.ones((1, 4))).asnumpy(), [[4.0, 4.0]])
    with pytest.raises(ValueError, match="fc_wieght"):
        gluon.SymbolBlock(h, [data], params={"fc_wieght": w})


# A graph as MXNet 1.x writes one (its documented JSON layout: "op": "null" variables with
# __shape__ / __lr_mult__ attrs, legacy layer names with params as strings, aux inputs of
# version 1, node_row_ptr, mxnet_version): a 1x1 Convolution (with cuDNN tuning params,
# ignored), BatchNorm with no params (MXNet's defaults: eps 1e-3, fix_gamma True), relu,
# 2x2 max Pooling, Flatten, FullyConnected, a legacy Reshape (0, -1) and elemwise_add.
_MXNET_JSON = """{
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "conv0_weight",
     "attrs": {"__shape__": "(3, 2, 1, 1)", "__lr_mult__": "1.0"}, "inputs": []},
    {"op": "null", "name": "conv0_bias", "attrs": {"__lr_mult__": "2.0"}, "inputs": []},
    {"op": "Convolution", "name": "conv0",
     "attrs": {"kernel": "(1, 1)", "num_filter": "3", "pad": "(0, 0)", "stride": "(1, 1)",
               "dilate": "(1, 1)", "num_group": "1", "no_bias": "False", "layout": "NCHW",
               "workspace": "1024", "cudnn_tune": "limited_workspace", "cudnn_off": "False"},
     "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "null", "name": "bn0_gamma", "inputs": []},
    {"op": "null", "name": "bn0_beta", "inputs": []},
    {"op": "null", "name": "bn0_moving_mean", "inputs": []},
    {"op": "null", "name": "bn0_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn0", "attrs": {},
     "inputs": [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 1], [7, 0, 1]]},
    {"op": "Activation", "name": "relu0", "attrs": {"act_type": "relu"}, "inputs": [[8, 0, 0]]},
    {"op": "Pooling", "name": "pool0",
     "attrs": {"kernel": "(2, 2)", "pool_type": "max", "stride": "(2, 2)",
               "global_pool": "False", "pooling_convention": "valid", "cudnn_off": "False"},
     "inputs": [[9, 0, 0]]},
    {"op": "Flatten", "name": "flatten0", "inputs": [[10, 0, 0]]},
    {"op": "null", "name": "fc0_weight", "inputs": []},
    {"op": "null", "name": "fc0_bias", "inputs": []},
    {"op": "FullyConnected", "name": "fc0",
     "attrs": {"num_hidden": "2", "no_bias": "False", "flatten": "True"},
     "inputs": [[11, 0, 0], [12, 0, 0], [13, 0, 0]]},
    {"op": "Reshape", "name": "reshape0", "attrs": {"shape": "(0, -1)"},
     "inputs": [[14, 0, 0]]},
    {"op": "elemwise_add", "name": "_plus0", "inputs": [[15, 0, 0], [15, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 2, 4, 5, 6, 7, 12, 13],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 17, 18, 19],
  "heads": [[16, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10600]}
}"""


def _mxnet_json_reference(x, p):
    conv = onp.einsum("fc,nchw->nfhw", p["conv0_weight"][:, :, 0, 0], x) + \
        p["conv0_bias"][None, :, None, None]
    c = lambda v: v[None, :, None, None]  # noqa: E731
    bn = (conv - c(p["bn0_moving_mean"])) / onp.sqrt(c(p["bn0_moving_var"]) + 1e-3) + \
        c(p["bn0_beta"])  # fix_gamma: gamma read as 1
    r = onp.maximum(bn, 0)
    n, f, h, w = r.shape
    pooled = r.reshape(n, f, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    fc = pooled.reshape(n, -1) @ p["fc0_weight"].T + p["fc0_bias"]
    return fc + fc


def _mxnet_json_values():
    rng = onp.random.default_rng(3)
    f32 = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    return f32(2, 2, 4, 4), {
        "conv0_weight": f32(3, 2, 1, 1), "conv0_bias": f32(3), "bn0_gamma": f32(3) + 3,
        "bn0_beta": f32(3), "bn0_moving_mean": f32(3),
        "bn0_moving_var": rng.uniform(0.5, 2, 3).astype("float32"),
        "fc0_weight": f32(2, 12), "fc0_bias": f32(2)}


def test_a_graph_mxnet_wrote_loads_with_mxnets_op_semantics():
    s = sym.load_json(_MXNET_JSON)
    assert s.list_auxiliary_states() == ["bn0_moving_mean", "bn0_moving_var"]
    assert s.infer_shape(data=(2, 2, 4, 4))[1] == [(2, 2)]
    x, p = _mxnet_json_values()
    with ndx.autograd.predict_mode():
        got = s.eval(data=np.array(x), **{k: np.array(v) for k, v in p.items()})[0]
    onp.testing.assert_allclose(got.asnumpy(), _mxnet_json_reference(x, p), rtol=1e-4,
                                atol=1e-5)


def test_symbol_block_imports_mxnets_json_and_params(tmp_path):
    from ndx import gluon
    x, p = _mxnet_json_values()
    (tmp_path / "net-symbol.json").write_text(_MXNET_JSON)
    aux = ("bn0_moving_mean", "bn0_moving_var")
    ndx.nd.save(str(tmp_path / "net-0000.params"),
                {("aux:" if k in aux else "arg:") + k: ndx.nd.array(v) for k, v in p.items()})
    blk = gluon.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"],
                                    str(tmp_path / "net-0000.params"))
    onp.testing.assert_allclose(blk(np.array(x)).asnumpy(), _mxnet_json_reference(x, p),
                                rtol=1e-4, atol=1e-5)


def test_legacy_reshape_codes_translate_to_npx_reshape():
    """MXNet's Reshape: 0 copies a dim, -1 infers, -2 copies the rest, -3 merges two, -4
    splits one into the two sizes after it."""
    def reshaped(code, shape):
        doc = ('{"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "Reshape", '
               '"name": "r", "attrs": {"shape": "%s"}, "inputs": [[0, 0, 0]]}], '
               '"arg_nodes": [0], "heads": [[1, 0, 0]]}' % code)
        return sym.load_json(doc).infer_shape(x=shape)[1][0]
    assert reshaped("(0, -1)", (2, 3, 4)) == (2, 12)
    assert reshaped("(-2,)", (2, 3, 4)) == (2, 3, 4)
    assert reshaped("(0, -3)", (2, 3, 4)) == (2, 12)
    assert reshaped("(-4, 1, -1, 0, 0)", (2, 3, 4)) == (1, 2, 3, 4)
    assert reshaped("(-3, -2)", (2, 3, 4, 5)) == (6, 4, 5)


def _softmax(z, axis=-1):
    e = onp.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _softmax_output_grads(x, label, **params):
    """(forward, data gradient) of SoftmaxOutput through an Executor, with a head gradient
    that must not matter (out_grad=False)."""
    net = sym.SoftmaxOutput(sym.var("x"), name="softmax", **params)
    exe = net._bind(ndx.cpu(), {"x": np.array(x), "softmax_label": np.array(label)},
                    args_grad={"x": np.zeros(x.shape)})
    y = exe.forward(is_train=True)[0].asnumpy()
    exe.backward(np.full(x.shape, 7.0))
    return y, exe.grad_dict["x"].asnumpy()


def test_softmax_output_is_mxnets_classic_loss_head():
    """The MXNet docs' MLP ends in SoftmaxOutput(name='softmax'), whose label input is the
    variable 'softmax_label' of shape (batch,)."""
    net = sym.FullyConnected(sym.Variable("data"), name="fc1", num_hidden=10)
    net = sym.SoftmaxOutput(data=net, name="softmax")
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "softmax_label"]
    args, outs, _ = net.infer_shape(data=(100, 100))
    assert args[-1] == (100,) and outs == [(100, 10)]


def test_softmax_output_gradient_is_the_cross_entropy_gradient():
    rng = onp.random.default_rng(4)
    x = rng.standard_normal((4, 3))
    label = onp.array([0.0, 2.0, 1.0, 2.0])
    hot = onp.eye(3)[label.astype(int)]
    y, g = _softmax_output_grads(x, label)
    onp.testing.assert_allclose(y, _softmax(x), rtol=1e-6)
    onp.testing.assert_allclose(g, _softmax(x) - hot, rtol=1e-6, atol=1e-7)
    _, g = _softmax_output_grads(x, label, grad_scale=2.0, normalization="batch")
    onp.testing.assert_allclose(g, (_softmax(x) - hot) * 2 / 4, rtol=1e-6, atol=1e-7)
    # ignored rows get nothing; 'valid' divides by the rows kept (3)
    ign = onp.array([0.0, -1.0, 1.0, 2.0])
    _, g = _softmax_output_grads(x, ign, use_ignore=True, normalization="valid")
    want = (_softmax(x) - onp.eye(3)[[0, 0, 1, 2]]) / 3
    want[1] = 0
    onp.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)
    # label smoothing: target 1 - a at the label, a / (C - 1) elsewhere
    _, g = _softmax_output_grads(x, label, smooth_alpha=0.3)
    target = hot * 0.7 + (1 - hot) * 0.15
    onp.testing.assert_allclose(g, _softmax(x) - target, rtol=1e-6, atol=1e-7)


def test_softmax_output_multi_output_uses_axis_one_and_mxnets_scaling():
    """MXNet's multi_output gradient (softmax_output-inl.h) is divided by the positions per
    example under 'null', by all labels under 'batch', by the labels not equal to
    ignore_label under 'valid' (counted even without use_ignore); its label is (N, d2 * ...)
    when inferred, and (N, d2, ...) or (N, 1, d2, ...) are accepted."""
    rng = onp.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4))
    label = rng.integers(0, 3, (2, 4)).astype("float64")
    y, g = _softmax_output_grads(x, label, multi_output=True)
    hot = onp.moveaxis(onp.eye(3)[label.astype(int)], -1, 1)
    onp.testing.assert_allclose(y, _softmax(x, axis=1), rtol=1e-6)
    onp.testing.assert_allclose(g, (_softmax(x, axis=1) - hot) / 4, rtol=1e-6, atol=1e-7)
    _, g = _softmax_output_grads(x, label, multi_output=True, normalization="batch")
    onp.testing.assert_allclose(g, (_softmax(x, axis=1) - hot) / 8, rtol=1e-6, atol=1e-7)
    label[0, 0] = -1.0  # the default ignore_label: not counted by 'valid'
    hot[0, :, 0] = 0
    _, g = _softmax_output_grads(x, label, multi_output=True, normalization="valid",
                                 use_ignore=True)
    want = (_softmax(x, axis=1) - hot) / 7
    want[0, :, 0] = 0
    onp.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)
    net = sym.SoftmaxOutput(sym.var("x"), multi_output=True, name="sm")
    assert net.infer_shape(x=(2, 3, 4, 5))[0] == [(2, 3, 4, 5), (2, 20)]
    for ok in ((2, 4, 5), (2, 1, 4, 5)):
        assert net.infer_shape(x=(2, 3, 4, 5), sm_label=ok)[1] == [(2, 3, 4, 5)]


def test_softmax_output_layouts_and_probability_labels():
    """Without multi_output: data of two axes is (N, C); more axes are softmaxed over each
    example's elements, or along the last axis with preserve_shape (labels data's shape
    without its last axis). A label of data's shape holds probabilities: the gradient is
    (softmax - label) * grad_scale."""
    rng = onp.random.default_rng(8)
    x = rng.standard_normal((2, 3, 4))
    flat = _softmax(x.reshape(2, 12)).reshape(2, 3, 4)
    net = sym.SoftmaxOutput(sym.var("x"), name="sm")
    onp.testing.assert_allclose(
        net.eval(x=np.array(x), sm_label=np.zeros((2, 3)))[0].asnumpy(), flat, rtol=1e-6)
    label = rng.integers(0, 4, (2, 3)).astype("float64")
    y, g = _softmax_output_grads(x, label, preserve_shape=True, normalization="batch")
    onp.testing.assert_allclose(y, _softmax(x), rtol=1e-6)
    want = (_softmax(x) - onp.eye(4)[label.astype(int)]) / 6  # 'batch': all 6 labels
    onp.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)
    with pytest.raises(NotImplementedError, match="preserve_shape"):
        _softmax_output_grads(x, label)
    x2 = rng.standard_normal((3, 4))
    prob = _softmax(rng.standard_normal((3, 4)))
    _, g = _softmax_output_grads(x2, prob, grad_scale=0.5, normalization="batch")
    onp.testing.assert_allclose(g, (_softmax(x2) - prob) * 0.5, rtol=1e-6, atol=1e-7)


def test_softmax_output_rejects_labels_out_of_range_and_bad_shapes():
    x = onp.zeros((2, 3))
    with pytest.raises(IndexError, match="label 3"):
        _softmax_output_grads(x, onp.array([0.0, 3.0]))
    with pytest.raises(ValueError, match="label"):
        sym.SoftmaxOutput(sym.var("x"), sym.var("y")).infer_shape(x=(2, 3), y=(3,))


def test_an_executor_trains_a_classic_symbolic_mlp():
    """MXNet 1.x's symbolic training loop: simple_bind, forward, backward, SGD on arg_dict.
    Two disjoint squares ([-3, -1]^2 and [1, 3]^2): the training accuracy reaches 1."""
    rng = onp.random.default_rng(6)
    n = 64
    labels = (onp.arange(n) % 2).astype("float32")
    feats = rng.uniform(-1, 1, (n, 2)).astype("float32") + 4 * labels[:, None] - 2
    net = sym.FullyConnected(sym.Variable("data"), name="fc1", num_hidden=8)
    net = sym.Activation(net, act_type="relu")
    net = sym.FullyConnected(net, name="fc2", num_hidden=2)
    net = sym.SoftmaxOutput(net, name="softmax", normalization="batch")
    exe = net._simple_bind(ndx.cpu(), data=(n, 2))
    for name, arr in exe.arg_dict.items():
        if name.endswith("weight"):
            arr[...] = np.array(rng.standard_normal(arr.shape).astype("float32") * 0.5)
    exe.arg_dict["data"][...] = np.array(feats)
    exe.arg_dict["softmax_label"][...] = np.array(labels)
    for _ in range(60):
        exe.forward(is_train=True)
        exe.backward()
        for name in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"):
            exe.arg_dict[name][...] = exe.arg_dict[name] - 0.5 * exe.grad_dict[name]
    prob = exe.forward(is_train=False)[0].asnumpy()
    assert (prob.argmax(1) == labels).mean() == 1.0


def test_nd_softmax_output_honours_smooth_alpha_and_out_grad():
    """mx.nd.SoftmaxOutput took smooth_alpha and out_grad and ignored them; it is the op now."""
    from ndx import autograd
    x = onp.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]], "float32")
    hot = onp.eye(3, dtype="float32")[[2, 0]]
    head = onp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32")
    for params, want in (({"smooth_alpha": 0.2}, _softmax(x) - (hot * 0.8 + (1 - hot) * 0.1)),
                         ({"out_grad": True}, (_softmax(x) - hot) * head)):
        data = ndx.nd.array(x)
        data.attach_grad()
        with autograd.record():
            out = ndx.nd.SoftmaxOutput(data, ndx.nd.array([2, 0]), **params)
        out.backward(ndx.nd.array(head))
        onp.testing.assert_allclose(data.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


# ---- MXNet's Symbol API: internals, children, attributes, fluent methods, checkpoints ----
def _mlp():
    data = sym.Variable("data")
    net = sym.FullyConnected(data, num_hidden=4, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    return data, sym.FullyConnected(net, num_hidden=2, name="fc2")


def test_get_internals_names_every_entry_and_feeds_feature_extraction():
    """MXNet's feature extraction: net.get_internals()['relu1_output'] as a SymbolBlock."""
    from ndx import gluon
    data, net = _mlp()
    internals = net.get_internals()
    assert internals.list_outputs() == ["data", "fc1_weight", "fc1_bias", "fc1_output",
                                        "relu1_output", "fc2_weight", "fc2_bias",
                                        "fc2_output"]
    feat = internals["relu1_output"]
    assert feat.infer_shape(data=(3, 5))[1] == [(3, 4)]
    blk = gluon.SymbolBlock(feat, data)
    blk.initialize()
    x = onp.random.default_rng(2).standard_normal((3, 5)).astype("float32")
    got = blk(np.array(x)).asnumpy()
    w = blk.collect_params()["fc1_weight"].data().asnumpy()
    onp.testing.assert_allclose(got, onp.maximum(x @ w.T, 0), rtol=1e-5, atol=1e-6)  # bias 0
    with pytest.raises(ValueError, match="fc3_output"):
        internals["fc3_output"]
    assert net.get_children().list_outputs() == ["relu1_output", "fc2_weight", "fc2_bias"]
    assert data.get_children() is None


def test_attributes_of_ops_and_variables_and_shape_hints():
    """An op's params as strings; a variable's shape= / dtype= / lr_mult= as MXNet's
    '__shape__' / '__dtype__' / '__lr_mult__' attributes, shape and dtype serving as hints
    for inference, kept through JSON."""
    _, net = _mlp()
    assert net.attr("num_hidden") == "2" and net.attr("nothing") is None
    assert net.list_attr() == {"flatten": "True", "no_bias": "False", "num_hidden": "2"}
    d = sym.Variable("d", shape=(4, 5), dtype="float16", lr_mult=2.0)
    assert d.list_attr() == {"__shape__": "(4, 5)", "__dtype__": "float16",
                             "__lr_mult__": "2.0"}
    fc = sym.FullyConnected(d, num_hidden=3, name="fc")
    assert fc.infer_shape() == ([(4, 5), (3, 5), (3,)], [(4, 3)], [])
    assert fc.infer_type()[1] == [onp.float16]
    back = sym.load_json(fc.tojson())
    assert back.get_internals()["d"].list_attr()["__shape__"] == "(4, 5)"
    assert "fc" in back.attr_dict() and back.attr_dict()["d"]["__lr_mult__"] == "2.0"
    with pytest.raises(TypeError, match="colour"):
        sym.Variable("x", colour="red")


def test_mxnet_symbol_attributes_on_op_nodes_are_ignored_when_loading():
    """MXNet writes attributes such as __profiler_scope__ / __lr_mult__ on op nodes too; they
    are not op params. Its dtype codes in __dtype__ ('2': float16) are read as dtypes."""
    doc = ('{"nodes": [{"op": "null", "name": "x", "attrs": {"__dtype__": "2", '
           '"__shape__": "(2, 3)"}, "inputs": []}, {"op": "_np_exp", "name": "e", '
           '"attrs": {"__profiler_scope__": "net:", "__lr_mult__": "1"}, '
           '"inputs": [[0, 0, 0]]}], "arg_nodes": [0], "heads": [[1, 0, 0]]}')
    s = sym.load_json(doc)
    assert s.infer_shape() == ([(2, 3)], [(2, 3)], [])
    assert s.infer_type()[1] == [onp.float16]


def test_fluent_methods_match_numpy():
    x = sym.var("x")
    a = onp.arange(24, dtype="float32").reshape(2, 3, 4) - 10
    run = lambda s: s.eval(x=np.array(a))[0].asnumpy()  # noqa: E731
    onp.testing.assert_array_equal(run(x.reshape((0, -1))), a.reshape(2, 12))
    onp.testing.assert_array_equal(run(x.reshape(shape=(-3, 0))), a.reshape(6, 4))
    onp.testing.assert_array_equal(run(x.flatten()), a.reshape(2, 12))
    onp.testing.assert_array_equal(run(x.sum(axis=1)), a.sum(axis=1))
    onp.testing.assert_array_equal(run(x.max(axis=(0, 2), keepdims=True)),
                                   a.max(axis=(0, 2), keepdims=True))
    onp.testing.assert_array_equal(run(x.transpose((2, 0, 1))), a.transpose(2, 0, 1))
    onp.testing.assert_array_equal(run(x.clip(-2, 3)), onp.clip(a, -2, 3))
    onp.testing.assert_array_equal(run(x.relu()), onp.maximum(a, 0))
    assert run(x.astype("float16")).dtype == onp.float16
    onp.testing.assert_allclose(run(x.softmax(axis=1)), _softmax(a, axis=1), rtol=1e-6)


def test_model_checkpoints_round_trip_and_read_mxnets_files(tmp_path):
    """mx.model.save_checkpoint / load_checkpoint: prefix-symbol.json and prefix-0003.params
    with 'arg:' / 'aux:' names; a checkpoint laid out as MXNet writes it (legacy op names)
    runs through simple_bind with its parameters."""
    x, p = _mxnet_json_values()
    aux = ("bn0_moving_mean", "bn0_moving_var")
    (tmp_path / "mx-symbol.json").write_text(_MXNET_JSON)
    ndx.nd.save(str(tmp_path / "mx-0003.params"),
                {("aux:" if k in aux else "arg:") + k: ndx.nd.array(v) for k, v in p.items()})
    net, arg_params, aux_params = ndx.model.load_checkpoint(str(tmp_path / "mx"), 3)
    assert sorted(aux_params) == list(aux) and "conv0_weight" in arg_params
    exe = net._simple_bind(ndx.cpu(), data=x.shape, grad_req="null")
    for name, value in {**arg_params, **aux_params}.items():
        (exe.aux_dict if name in aux else exe.arg_dict)[name][...] = value
    exe.arg_dict["data"][...] = np.array(x)
    got = exe.forward(is_train=False)[0].asnumpy()
    onp.testing.assert_allclose(got, _mxnet_json_reference(x, p), rtol=1e-4, atol=1e-5)
    ndx.model.save_checkpoint(str(tmp_path / "again"), 7, net, arg_params, aux_params)
    net2, arg2, aux2 = ndx.model.load_checkpoint(str(tmp_path / "again"), 7)
    assert net2.list_arguments() == net.list_arguments()
    onp.testing.assert_array_equal(arg2["fc0_weight"].asnumpy(), p["fc0_weight"])
    with pytest.raises(ValueError, match="epoch"):
        ndx.model.load_checkpoint(str(tmp_path / "again"), -1)


def test_fused_rnn_symbol_infers_its_parameter_vector_and_states():
    """MXNet's RNN: the flat parameter vector holds, per layer and direction, gates x H x
    (I + H) weights and 2 x gates x H biases (hand-computed: LSTM 4 gates, GRU 3)."""
    lstm = sym.RNN(sym.var("x"), state_size=4, num_layers=1, mode="lstm", name="rnn")
    assert lstm.list_arguments() == ["x", "rnn_parameters", "rnn_state", "rnn_state_cell"]
    assert lstm.infer_shape(x=(5, 2, 3)) == (
        [(5, 2, 3), (4 * 4 * (3 + 4 + 2),), (1, 2, 4), (1, 2, 4)], [(5, 2, 4)], [])
    gru = sym.RNN(sym.var("x"), state_size=4, num_layers=2, mode="gru", bidirectional=True,
                  name="g")
    # layer 1 reads 3 features, layer 2 the 2 x 4 of both directions; 2 directions each
    want = 2 * 3 * 4 * (3 + 4 + 2) + 2 * 3 * 4 * (8 + 4 + 2)
    assert gru.infer_shape(x=(5, 2, 3))[0] == [(5, 2, 3), (want,), (4, 2, 4)]
    with pytest.raises(NotImplementedError, match="sequence_length"):
        sym.RNN(sym.var("x"), state_size=4, num_layers=1, mode="gru", use_sequence_length=True)


def test_constant_creation_symbols():
    onp.testing.assert_array_equal(sym.zeros((2, 3)).eval()[0].asnumpy(), onp.zeros((2, 3)))
    onp.testing.assert_array_equal(sym.full((2,), 3.5).eval()[0].asnumpy(), [3.5, 3.5])
    s = sym.var("a") + sym.ones((2, 3))
    onp.testing.assert_array_equal(s.eval(a=np.zeros((2, 3)))[0].asnumpy(), onp.ones((2, 3)))


def test_more_legacy_symbols_match_numpy():
    """Reshape / Cast / BlockGrad / MakeLoss / SliceChannel / clip / broadcast_* as MXNet's."""
    x, y = sym.var("x"), sym.var("y")
    a = onp.arange(24, dtype="float32").reshape(2, 3, 4)
    run = lambda s, **kw: [o.asnumpy() for o in s.eval(x=np.array(a), **kw)]  # noqa: E731
    onp.testing.assert_array_equal(run(sym.Reshape(x, shape=(0, -1)))[0], a.reshape(2, 12))
    assert run(sym.Cast(x, dtype="int32"))[0].dtype == onp.int32
    parts = run(sym.SliceChannel(x, num_outputs=3, axis=1, squeeze_axis=True))
    for i, p in enumerate(parts):
        onp.testing.assert_array_equal(p, a[:, i, :])
    assert [p.shape for p in run(sym.split(x, num_outputs=2, axis=2))] == [(2, 3, 2)] * 2
    onp.testing.assert_array_equal(run(sym.clip(x, 3, 7))[0], onp.clip(a, 3, 7))
    b = onp.ones((1, 3, 1), "float32")
    onp.testing.assert_array_equal(run(sym.broadcast_add(x, y), y=np.array(b))[0], a + b)
    onp.testing.assert_array_equal(run(sym.elemwise_mul(x, y), y=np.array(b))[0], a * b)
    # BlockGrad passes no gradient; MakeLoss's gradient is grad_scale whatever the head
    # gradient (MXNet's make_loss-inl.h), divided by the batch ('batch') or by the elements
    # above valid_thresh ('valid'); its forward is the data, inf included
    w = sym.var("w")
    net = sym.Group([sym.MakeLoss(w * 3, grad_scale=0.5), sym.BlockGrad(w * 2)])
    exe = net._bind(ndx.cpu(), {"w": np.ones((2,))}, args_grad={"w": np.zeros((2,))})
    outs = exe.forward(is_train=True)
    onp.testing.assert_array_equal(outs[0].asnumpy(), [3.0, 3.0])
    exe.backward([np.full((2,), 7.0), np.ones((2,))])
    onp.testing.assert_array_equal(exe.grad_dict["w"].asnumpy(), [1.5, 1.5])  # 3 * 0.5
    loss = onp.array([[1.0, -2.0], [onp.inf, 0.5]], "float32")
    for params, want in (({"normalization": "batch", "grad_scale": 4.0}, 2.0),
                         ({"normalization": "valid", "valid_thresh": 0.7}, 1 / 2)):
        e = sym.MakeLoss(sym.var("l"), **params)._bind(
            ndx.cpu(), {"l": np.array(loss)}, args_grad={"l": np.zeros((2, 2))})
        onp.testing.assert_array_equal(e.forward(is_train=True)[0].asnumpy(), loss)
        e.backward(np.full((2, 2), 3.0))
        onp.testing.assert_array_equal(e.grad_dict["l"].asnumpy(), onp.full((2, 2), want))
    with pytest.raises(ValueError, match="num_outputs"):
        sym.SliceChannel(x, num_outputs=0)


def test_symbols_deepcopy_and_pickle_through_json():
    import copy
    import pickle
    _, net = _mlp()
    for other in (copy.deepcopy(net), copy.copy(net), pickle.loads(pickle.dumps(net))):
        assert other.tojson() == net.tojson()
        assert other.infer_shape(data=(2, 5)) == net.infer_shape(data=(2, 5))


def test_regression_output_heads_follow_mxnets_gradients():
    """MXNet's regression heads: forward data (sigmoid for the logistic one), backward
    grad_scale / num_output * (out - label) (sign of it for MAE) whatever the head gradient,
    num_output the label's elements per example; a 1-d label for data (N, 1)."""
    rng = onp.random.default_rng(9)
    x = rng.standard_normal((4, 3)).astype("float32")
    label = rng.standard_normal((4, 3)).astype("float32")
    sig = 1 / (1 + onp.exp(-x))
    for head, out, grad in (
            (sym.LinearRegressionOutput, x, (x - label) * 2 / 3),
            (sym.LogisticRegressionOutput, sig, (sig - label) * 2 / 3),
            (sym.MAERegressionOutput, x, onp.sign(x - label) * 2 / 3)):
        net = head(sym.var("x"), grad_scale=2.0, name="reg")
        assert net.list_arguments() == ["x", "reg_label"]
        exe = net._bind(ndx.cpu(), {"x": np.array(x), "reg_label": np.array(label)},
                        args_grad={"x": np.zeros(x.shape)})
        onp.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), out, rtol=1e-6)
        exe.backward(np.full(x.shape, 5.0))
        onp.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), grad, rtol=1e-5, atol=1e-7)
    net = sym.LinearRegressionOutput(sym.FullyConnected(sym.var("data"), num_hidden=1,
                                                        name="fc"), name="lro")
    assert net.infer_shape(data=(8, 2))[0][-1] == (8,)
    with pytest.raises(ValueError, match="label"):
        net.infer_shape(data=(8, 2), lro_label=(7,))


def test_an_executor_fits_a_linear_regression():
    """The MXNet 1.x linear-regression tutorial: y = 2 x1 - 3.4 x2 + 4.2 (+ small noise),
    FullyConnected(num_hidden=1) + LinearRegressionOutput trained by SGD on the executor; the
    weights reach the least-squares solution NumPy computes."""
    rng = onp.random.default_rng(10)
    feats = rng.standard_normal((200, 2)).astype("float32")
    labels = (feats @ onp.array([2.0, -3.4]) + 4.2 + 0.01 * rng.standard_normal(200))
    net = sym.LinearRegressionOutput(sym.FullyConnected(sym.var("data"), num_hidden=1,
                                                        name="fc"), name="lro")
    exe = net._simple_bind(ndx.cpu(), data=(200, 2))
    exe.arg_dict["data"][...] = np.array(feats)
    exe.arg_dict["lro_label"][...] = np.array(labels.astype("float32"))
    for _ in range(300):
        exe.forward(is_train=True)
        exe.backward()
        for name in ("fc_weight", "fc_bias"):
            exe.arg_dict[name][...] = exe.arg_dict[name] - 0.5 * exe.grad_dict[name] / 200
    design = onp.hstack([feats, onp.ones((200, 1), "float32")]).astype("float64")
    best = onp.linalg.lstsq(design, labels, rcond=None)[0]
    onp.testing.assert_allclose(exe.arg_dict["fc_weight"].asnumpy().ravel(), best[:2],
                                atol=1e-3)
    onp.testing.assert_allclose(exe.arg_dict["fc_bias"].asnumpy(), best[2:], atol=1e-3)


def test_symbol_call_composes_graphs():
    """MXNet's composition: net2(data2=net1) reads net1 where net2 read data2."""
    data = sym.var("data")
    net1 = sym.FullyConnected(data, num_hidden=10, name="fc1")
    net2 = sym.FullyConnected(sym.var("data2"), num_hidden=3, name="fc2")
    composed = net2(data2=net1)
    assert composed.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight",
                                         "fc2_bias"]
    assert composed.infer_shape(data=(4, 5))[1] == [(4, 3)]
    assert net2.list_arguments() == ["data2", "fc2_weight", "fc2_bias"]  # unchanged
    by_position = net2(net1)
    assert by_position.list_arguments() == composed.list_arguments()
    rng = onp.random.default_rng(11)
    vals = {n: rng.standard_normal(s) for n, s in
            zip(composed.list_arguments(), composed.infer_shape(data=(4, 5))[0])}
    got = composed.eval(**{k: np.array(v) for k, v in vals.items()})[0].asnumpy()
    h = vals["data"] @ vals["fc1_weight"].T + vals["fc1_bias"]
    onp.testing.assert_allclose(got, h @ vals["fc2_weight"].T + vals["fc2_bias"], rtol=1e-10)
    with pytest.raises(ValueError, match="data3"):
        net2(data3=net1)
    with pytest.raises(TypeError, match="Symbol"):
        net2(data2=3)


def test_simple_bind_takes_mxnets_sharing_keywords():
    _, net = _mlp()
    exe = net._simple_bind(ndx.cpu(), data=(2, 5), shared_buffer={})
    assert exe.arg_dict["data"].shape == (2, 5)
    with pytest.raises(NotImplementedError, match="reshape"):
        net._simple_bind(ndx.cpu(), data=(2, 5), shared_exec=exe)
    with pytest.raises(NotImplementedError, match="group2ctx"):
        net._simple_bind(ndx.cpu(), data=(2, 5), group2ctx={"dev1": ndx.cpu()})


def test_print_summary_counts_parameters_by_hand(capsys):
    """conv 3x3, 3 -> 8 channels: 8 * 3 * 3 * 3 + 8 = 224; fc on 8 x 4 x 4: 10 * 128 + 10 =
    1290; outputs without the batch axis, as MXNet's print_summary."""
    d = sym.var("data")
    n = sym.Convolution(d, kernel=(3, 3), num_filter=8, name="conv1")
    n = sym.Pooling(sym.Activation(n, act_type="relu", name="relu1"), kernel=(2, 2),
                    stride=(2, 2), name="pool1")
    n = sym.FullyConnected(n, num_hidden=10, name="fc1")
    ndx.viz.print_summary(n, shape={"data": (1, 3, 10, 10)})
    lines = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()
             if line and line[0] not in "_="}
    assert lines["conv1(_npx_convolution)"][1:] == ["8x8x8", "224", "data"]
    assert lines["pool1(_npx_pooling)"][1:] == ["8x4x4", "0", "relu1"]
    assert lines["fc1(_npx_fully_connected)"][1:] == ["10", "1290", "pool1"]
    assert lines["Total"] == ["Total", "params:", str(224 + 1290)]


# ---- found by a review of this file's features ----
def test_a_reshaped_executor_does_not_cut_its_parent_out_of_the_gradient():
    """Executor.reshape shares the parameters: running the child's forward between the
    parent's forward and backward must leave the parent's gradient intact (X^T G by hand)."""
    net = sym.FullyConnected(sym.var("data"), num_hidden=3, no_bias=True, name="fc")
    exe = net._simple_bind(ndx.cpu(), data=(4, 5))
    exe.arg_dict["data"][...] = 1.0
    exe.arg_dict["fc_weight"][...] = 1.0
    child = exe.reshape(data=(2, 5))
    exe.forward(is_train=True)
    child.forward(is_train=True)
    exe.backward(np.ones((4, 3)))
    onp.testing.assert_array_equal(exe.grad_dict["fc_weight"].asnumpy(), onp.full((3, 5), 4.0))


def test_initializer_uses_a_variables_own_init_attribute():
    """MXNet: InitDesc(name, {'__init__': init.dumps()}) is filled by that init as a weight."""
    arr = ndx.nd.full((2, 3), 5.0)
    ndx.init.Xavier()(ndx.init.InitDesc("fc_weight", {"__init__": ndx.init.Zero().dumps()}),
                      arr)
    onp.testing.assert_array_equal(arr.asnumpy(), onp.zeros((2, 3)))
    ndx.init.Xavier()(ndx.init.InitDesc("foo", {"__init__": ndx.init.Constant(3).dumps()}),
                      arr)
    onp.testing.assert_array_equal(arr.asnumpy(), onp.full((2, 3), 3.0))


def test_mxnet2_true_divide_scalar_on_integer_data_is_float32():
    """MXNet 2.0: _npi_true_divide_scalar of int32 data is float32 (the default float), so a
    FullyConnected with float32 weights reads it."""
    doc = ('{"nodes": [{"op": "null", "name": "data", "inputs": []}, '
           '{"op": "_npi_true_divide_scalar", "name": "div", "attrs": {"scalar": "255.0", '
           '"is_int": "False"}, "inputs": [[0, 0, 0]]}], "arg_nodes": [0], '
           '"heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 20000]}}')
    s = sym.load_json(doc)
    got = s.eval(data=np.array([0, 51, 255], dtype="int32"))[0]
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), [0.0, 0.2, 1.0], rtol=1e-6)


def test_clip_keeps_the_datas_dtype():
    """MXNet's clip casts its bounds to the data's dtype (DType(a_min))."""
    x = sym.var("x")
    got = sym.clip(x, 0.5, 2.5).eval(x=np.array([0, 1, 3], dtype="int32"))[0]
    assert got.dtype == onp.int32 and got.asnumpy().tolist() == [0, 1, 2]
    assert x.clip(0, 6).eval(x=np.ones((2,), dtype="float16"))[0].dtype == onp.float16
    fc = sym.FullyConnected(sym.clip(x, 0, 6), num_hidden=2, name="fc")
    assert fc.infer_type(x="float16")[0] == [onp.float16] * 3


def test_mae_gradient_at_a_tie_is_minus_one():
    """MXNet's MAERegressionOutput uses minus_sign: a - b > 0 ? 1 : -1."""
    exe = sym.MAERegressionOutput(sym.var("x"), name="m")._bind(
        ndx.cpu(), {"x": np.array([[0.0], [1.0], [2.0]]), "m_label": np.array([0.0, 1.0, 3.0])},
        args_grad={"x": np.zeros((3, 1))})
    exe.forward(is_train=True)
    exe.backward()
    onp.testing.assert_array_equal(exe.grad_dict["x"].asnumpy().ravel(), [-1.0, -1.0, -1.0])


def test_names_hints_and_children_details():
    # sym.gamma is the gamma function (npx), not the random sampler
    onp.testing.assert_allclose(sym.gamma(sym.var("x")).eval(x=np.array([4.0]))[0].asnumpy(),
                                [6.0], rtol=1e-6)
    # a constant is not an input: no shape hint from it, not among internals or children
    net = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc") * 2.0
    assert "constant" not in net.get_internals().list_outputs()
    assert net.get_children().list_outputs() == ["fc_output"]
    parts = sym.SliceChannel(sym.var("x"), num_outputs=3, name="sc")
    assert parts.get_children().list_outputs() == ["x"]
    # MXNet 1.x __shape__ forms: '(2L, 3L)' read, '()' and 0 dims unknown; dtype code 8
    for text, want in (("(2L, 3L)", (2, 3)), ("()", None), ("(0, 3)", None)):
        v = sym.Variable("v", attr={"__shape__": text, "__dtype__": "8"})
        assert v.infer_shape_partial()[0] == [want]
        assert v.infer_type()[0] == [onp.int16]
    assert sym.Variable("b", dtype="bfloat16").attr("__dtype__") == "bfloat16"


def test_checkpoint_epochs_take_numpy_integers(tmp_path):
    _, net = _mlp()
    ndx.model.save_checkpoint(str(tmp_path / "m"), onp.int64(2), net, {}, {})
    assert (tmp_path / "m-0002.params").exists()
    with pytest.raises(ValueError, match="epoch"):
        ndx.model.save_checkpoint(str(tmp_path / "m"), True, net, {}, {})


def test_executor_outputs_exist_after_bind_as_in_mxnet():
    """MXNet's bind allocates the outputs: exe.outputs[0] has the inferred shape before any
    forward, and forward updates that same array."""
    _, net = _mlp()
    exe = net._simple_bind(ndx.cpu(), data=(3, 5))
    first = exe.outputs[0]
    assert first.shape == (3, 2) and first.dtype == onp.float32
    exe.arg_dict["data"][...] = 1.0
    exe.arg_dict["fc2_bias"][...] = 0.5
    exe.forward()
    assert exe.outputs[0] is first
    onp.testing.assert_array_equal(first.asnumpy(), onp.full((3, 2), 0.5))  # weights 0


# (dtype, expression, the result dtype): NumPy's (NEP 50), except that ndx's default float
# (float32) takes the place of NumPy's float64 where integers turn float (ndx's documented
# policy, as its imperative path); int data * a float scalar gives float64 in a symbol (the
# graph's binary op cannot see that the scalar was weak: NumPy's own answer, not ndx's
# imperative float32).
_WEAK_CASES = [
    ("float16", lambda v: v * 2, "float16"), ("float16", lambda v: v * 2.5, "float16"),
    ("float16", lambda v: 3 - v, "float16"), ("float16", lambda v: v / 2, "float16"),
    ("float16", lambda v: v ** 2, "float16"), ("float32", lambda v: v + True, "float32"),
    ("float64", lambda v: v * 2.5, "float64"), ("uint8", lambda v: v + 1, "uint8"),
    ("uint8", lambda v: 200 - v, "uint8"), ("uint8", lambda v: v * 2.5, "float32"),
    ("int32", lambda v: v * 2, "int32"), ("int32", lambda v: v / 2, "float32"),
    ("int32", lambda v: v * 2.5, "float64"), ("bool", lambda v: v + 1, "int64"),
]


@pytest.mark.parametrize("case", range(len(_WEAK_CASES)))
def test_python_scalars_in_symbol_arithmetic_are_weak(case):
    """float16 data * 2.5 stays float16 and uint8 data + 1 stays uint8, as in NumPy (before,
    every scalar was a float32 constant and float16 data became float32); values are
    NumPy's."""
    dtype, f, want_dtype = _WEAK_CASES[case]
    data = onp.arange(1, 5).astype(dtype)
    got = f(sym.Variable("x")).eval(x=np.array(data))[0]
    assert got.dtype == want_dtype
    onp.testing.assert_allclose(got.asnumpy().astype("float64"), f(data.astype("float64")),
                                rtol=1e-3)


def test_a_python_integer_out_of_the_data_dtype_range_raises_overflow_error_as_numpy():
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        (300 - sym.Variable("x")).eval(x=np.ones(3, dtype="uint8"))


def test_the_scalar_of_symbol_arithmetic_is_no_child_and_passes_no_gradient():
    x = sym.Variable("x")
    net = sym.FullyConnected(x, num_hidden=2, name="fc") * 2
    assert net.get_children().list_outputs() == ["fc_output"]
    assert net.get_internals().list_outputs()[-2:] == ["fc_output", net.list_outputs()[0]]
    exe = (x * 3 + 1)._simple_bind(ndx.cpu(), x=(4,), type_dict={"x": "float16"})
    exe.forward(is_train=True, x=np.arange(4, dtype="float16"))
    exe.backward(np.ones(4, dtype="float16"))
    assert exe.outputs[0].dtype == onp.float16
    onp.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), onp.full(4, 3, "float16"))


def test_sym_reshape_takes_mxnets_shape_codes_and_numpys_newshape():
    """mx.sym.reshape is the Reshape op's other name in MXNet (shape= with its codes: 0
    copies, -1 infers, -3 merges); NumPy's newshape= works too. Shapes by hand."""
    x = sym.Variable("x")
    assert sym.reshape(x, shape=(0, -1, 1)).infer_shape(x=(4, 3))[1] == [(4, 3, 1)]
    assert sym.reshape(data=x, shape=(-3,)).infer_shape(x=(4, 3))[1] == [(12,)]
    assert sym.reshape(x, newshape=(2, -1)).infer_shape(x=(4, 3))[1] == [(2, 6)]
    with pytest.raises(TypeError, match="shape"):
        sym.reshape(x)


def test_name_prefix_and_name_manager_as_mxnets():
    """mx.name (MXNet's name.py): Prefix puts its prefix before every op symbol's name made
    inside it, given names too, and so before the parameters a layer creates; variables
    keep theirs; a NameManager entered with `with` counts from 0."""
    x = sym.Variable("data")
    with ndx.name.Prefix("stage1_"):
        fc = sym.FullyConnected(x, num_hidden=3, name="fc1")
        fc2 = sym.FullyConnected(fc, num_hidden=3)
        scaled = fc2 * 2
    assert fc.name == "stage1_fc1" and fc2.name == "stage1_fullyconnected0"
    assert scaled.list_arguments() == ["data", "stage1_fc1_weight", "stage1_fc1_bias",
                                       "stage1_fullyconnected0_weight",
                                       "stage1_fullyconnected0_bias"]
    assert scaled.name.startswith("stage1_")
    with ndx.name.NameManager():
        names = [sym.Activation(x, act_type="relu").name for _ in range(2)]
        assert ndx.name.NameManager.current.get(None, "conv") == "conv0"
        assert ndx.name.NameManager.current.get("given", "conv") == "given"
    assert names == ["activation0", "activation1"]
    with pytest.raises(TypeError, match="prefix"):
        ndx.name.Prefix(3)


def test_legacy_samplers_take_shape_and_mxnets_parameter_names():
    """mx.sym.random.uniform(low, high, shape=, dtype=) and the other samplers (MXNet's
    names: gamma(alpha, beta) is NumPy's gamma(shape, scale)); moments of 40000 draws
    against the distributions' (4.5 standard errors)."""
    n = 40000
    u = sym.random.uniform(-1, 1, shape=(n,)).eval()[0].asnumpy()
    assert u.dtype == onp.float32 and u.min() >= -1 and u.max() < 1
    assert abs(u.mean()) < 4.5 * (2 / onp.sqrt(12)) / onp.sqrt(n)
    v = sym.normal(loc=5, scale=0.5, shape=(n,), dtype="float64").eval()[0].asnumpy()
    assert v.dtype == onp.float64 and abs(v.mean() - 5) < 4.5 * 0.5 / onp.sqrt(n)
    g = sym.random.gamma(alpha=2.0, beta=3.0, shape=(n,)).eval()[0].asnumpy()
    assert abs(g.mean() - 6.0) < 4.5 * onp.sqrt(2.0 * 9.0) / onp.sqrt(n)
    r = sym.random_randint(0, 5, shape=(2, 3)).eval()[0].asnumpy()
    assert r.shape == (2, 3) and r.dtype == onp.int64 and set(r.ravel()) <= set(range(5))
    assert sym.uniform(size=(2,)).infer_shape()[1] == [(2,)]  # (NumPy's size= too)
    with pytest.raises(TypeError, match="positional"):
        sym.random.poisson(1.0, 2.0)


def test_crop_symbol_by_size_and_like_another_input_with_its_gradient():
    """MXNet's Crop: data[:, :, y:y + h, x:x + w] (offset (y, x); h_w, or the last two sizes
    of a second input); the gradient is ones inside the crop, zeros outside."""
    x = onp.random.default_rng(9).normal(size=(2, 3, 7, 8)).astype("float32")
    a, b = sym.Variable("a"), sym.Variable("b")
    c = sym.Crop(a, b, offset=(2, 1), name="score")
    assert c.list_outputs() == ["score_output"] and c.list_arguments() == ["a", "b"]
    got = c.eval(a=np.array(x), b=np.zeros((2, 1, 3, 6)))[0].asnumpy()
    onp.testing.assert_array_equal(got, x[:, :, 2:5, 1:7])
    by_size = sym.Crop(a, offset=(1, 2), h_w=(4, 5)).eval(a=np.array(x))[0].asnumpy()
    onp.testing.assert_array_equal(by_size, x[:, :, 1:5, 2:7])
    exe = c._simple_bind(ndx.cpu(), a=(2, 3, 7, 8), b=(2, 1, 3, 6), grad_req={"a": "write"})
    exe.forward(is_train=True, a=np.array(x))
    exe.backward(np.ones((2, 3, 3, 6)))
    want = onp.zeros_like(x)
    want[:, :, 2:5, 1:7] = 1
    onp.testing.assert_array_equal(exe.grad_dict["a"].asnumpy(), want)
    with pytest.raises(NotImplementedError, match="center_crop"):
        sym.Crop(a, h_w=(2, 2), center_crop=True)
    with pytest.raises(ValueError, match="h_w"):
        sym.Crop(a)
