"""MXNet 1.x-style Gluon code under ndx: name_scope(), self.params.get(...), the
ParameterDict methods of collect_params(), hybrid_forward's F (mx.nd's legacy operators,
imperative and hybridized), metrics on mx.nd arrays and their global statistics,
ArrayDataset items of NDArrays and autograd.grad on NDArrays. Expected values come from
MXNet's documentation or from NumPy / hand computations."""
import math

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, gluon
from ndx.gluon import nn


def _rand(*shape, seed=0):
    return onp.random.RandomState(seed).uniform(-1, 1, shape).astype("float32")


# ---- 1. name_scope and prefixes --------------------------------------------------------
class _MLP(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense0 = nn.Dense(4)
            self.dense1 = nn.Dense(2)

    def hybrid_forward(self, F, x):
        return self.dense1(F.relu(self.dense0(x)))


def test_name_scope_prefixes_children_and_keeps_parameter_keys():
    net = _MLP(prefix="mlp_")
    assert net.prefix == "mlp_" and net.name == "mlp"
    # MXNet 1.x: a child made inside name_scope() is prefixed by its parent, counted per
    # class within that scope
    assert net.dense0.prefix == "mlp_dense0_" and net.dense1.prefix == "mlp_dense1_"
    assert net.dense1.name == "mlp_dense1"
    # ndx's structured names are unchanged by the scope
    assert list(net.collect_params()) == ["dense0.weight", "dense0.bias", "dense1.weight",
                                          "dense1.bias"]
    plain = nn.Dense(3)
    assert plain.prefix.startswith("dense") and plain.prefix.endswith("_")
    with net.name_scope() as scope:
        assert scope is not None
        inner = nn.Dense(1)
    assert inner.prefix == "mlp_dense2_"


def test_name_scope_model_runs_and_trains():
    net = _MLP()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(_rand(3, 5))
    y = net(x)
    assert y.shape == (3, 2)


# ---- 2. params.get and ParameterDict ---------------------------------------------------
class _Affine(gluon.HybridBlock):
    """The MXNet 1.x tutorial pattern: parameters made with self.params.get."""

    def __init__(self, units, in_units, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=mx.init.Xavier())
            self.bias = self.params.get("bias", shape=(units,), init=mx.init.Zero())

    def hybrid_forward(self, F, x, weight, bias):
        return F.FullyConnected(x, weight, bias, num_hidden=weight.shape[0])


def test_params_get_creates_registers_and_returns():
    blk = _Affine(3, 4, prefix="aff_")
    assert isinstance(blk.params, gluon.ParameterDict) and isinstance(blk.params, dict)
    assert list(blk.params) == ["weight", "bias"]
    assert list(blk.collect_params()) == ["weight", "bias"]
    # MXNet 1.x names a parameter by its block's prefix
    assert blk.weight.name == "aff_weight" and blk.weight.shape == (3, 4)
    # get() returns the same Parameter; a shape may fill in unknown dims only
    assert blk.params.get("weight") is blk.weight
    assert blk.params.get("weight", shape=(3, 4)) is blk.weight
    with pytest.raises(ValueError, match="shape"):
        blk.params.get("weight", shape=(5, 4))
    with pytest.raises(ValueError, match="grad_req"):
        blk.params.get("weight", grad_req="null")
    late = blk.params.get("late", shape=(2, 0))
    assert blk.params.get("late", shape=(2, 7)).shape == (2, 7) and late.shape == (2, 7)
    # dict.get's form with a default still answers like a dict
    assert blk.params.get("nothing", 5) == 5 and "nothing" not in blk.params


def test_params_get_block_forward_matches_numpy_imperative_and_hybridized():
    blk = _Affine(3, 4)
    blk.initialize()
    x = _rand(2, 4)
    w = blk.weight.data().asnumpy()
    expected = x @ w.T  # bias initialized to zero
    y_imp = blk(mx.nd.array(x))
    onp.testing.assert_allclose(y_imp.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    blk.hybridize()
    for _ in range(2):  # the tracing call and a replay
        y_hyb = blk(mx.nd.array(x))
        onp.testing.assert_allclose(y_hyb.asnumpy(), expected, rtol=1e-5, atol=1e-6)
        assert type(y_hyb) is type(y_imp) is mx.nd.NDArray


def test_params_get_kept_under_another_attribute_name():
    class Scale(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.s = self.params.get("scale", shape=(1,), init=mx.init.One())

        def hybrid_forward(self, F, x, s):
            return F.broadcast_mul(x, s)

    blk = Scale()
    assert list(blk.collect_params()) == ["s"]
    blk.initialize()
    onp.testing.assert_array_equal(blk(mx.nd.array([1.0, 2.0])).asnumpy(), [1.0, 2.0])


def test_params_argument_shares_parameters_through_get():
    a = _Affine(3, 4)
    b = _Affine(3, 4, params=a.params)
    assert b.weight is a.weight and b.bias is a.bias
    a.initialize()
    x = mx.nd.array(_rand(2, 4))
    onp.testing.assert_array_equal(a(x).asnumpy(), b(x).asnumpy())


def test_get_constant():
    blk = gluon.Block()
    c = blk.params.get_constant("const", [[1.0, 2.0]])
    assert c.grad_req == "null" and c.shape == (1, 2)
    c.initialize()
    onp.testing.assert_array_equal(c.data().asnumpy(), [[1.0, 2.0]])
    assert blk.params.get_constant("const") is c


def _seq():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=4))
    return net


def test_collect_params_is_a_parameter_dict_with_1x_methods(tmp_path):
    net = _seq()
    params = net.collect_params()
    assert isinstance(params, gluon.ParameterDict) and isinstance(params, dict)
    assert list(params) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    params.initialize(mx.init.One(), ctx=mx.cpu())
    onp.testing.assert_array_equal(params["0.weight"].data().asnumpy(), onp.ones((4, 3)))
    # a regular expression selects by name, as re.match does
    weights = net.collect_params(".*weight")
    assert list(weights) == ["0.weight", "1.weight"]
    weights.setattr("grad_req", "null")
    assert [p.grad_req for p in params.values()] == ["null", "write", "null", "write"]
    assert params.list_ctx() == [mx.cpu()]
    params.reset_ctx(mx.cpu())
    # gradients, zeroed through the dict
    x = mx.nd.array(_rand(5, 3))
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    assert onp.abs(params["1.bias"].grad().asnumpy()).sum() > 0
    params.zero_grad()
    assert onp.abs(params["1.bias"].grad().asnumpy()).sum() == 0
    # a Trainer takes the dict as before
    gluon.Trainer(params, "sgd", {"learning_rate": 0.1})


@pytest.mark.parametrize("fmt", ["safetensors", "mxnet"])
def test_parameter_dict_save_and_load(tmp_path, fmt):
    net = _seq()
    net.initialize(mx.init.Xavier())
    path = str(tmp_path / "p.params")
    net.collect_params().save(path, format=fmt)
    other = _seq()
    other.collect_params().load(path, ctx=mx.cpu())
    for (k, p), (k2, q) in zip(net.collect_params().items(), other.collect_params().items()):
        assert k == k2
        onp.testing.assert_array_equal(p.data().asnumpy(), q.data().asnumpy())
    # strip_prefix / restore_prefix
    net.collect_params("0\\.").save(path, strip_prefix="0.", format=fmt)
    part = _seq()
    part.collect_params("0\\.").load(path, restore_prefix="0.")
    onp.testing.assert_array_equal(part[0].weight.data().asnumpy(),
                                   net[0].weight.data().asnumpy())
    with pytest.raises(ValueError, match="missing"):
        _seq().collect_params().load(path)
    with pytest.raises(ValueError, match="strip"):
        net.collect_params().save(path, strip_prefix="0.")


# ---- 3. hybrid_forward's F -------------------------------------------------------------
class _LegacyOps(gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        self.weight = self.params.get("weight", shape=(4, 3), init=mx.init.Xavier())

    def hybrid_forward(self, F, x, weight):
        h = F.FullyConnected(x, weight, no_bias=True, num_hidden=4)
        h = F.Activation(h, act_type="relu") + F.relu(h)
        h = F.broadcast_add(h, F.ones((1, 4)))
        h = F.concat(h, F.dot(x, weight, transpose_b=True), dim=1)
        h = F.np.tanh(h) + F.npx.sigmoid(h)
        return F.softmax(h, axis=-1)


def _legacy_expected(x, w):
    h = x @ w.T
    h = 2 * onp.maximum(h, 0) + 1
    h = onp.concatenate([h, x @ w.T], axis=1)
    h = onp.tanh(h) + 1 / (1 + onp.exp(-h))
    e = onp.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_f_offers_legacy_ops_imperative_and_hybridized():
    blk = _LegacyOps()
    blk.initialize()
    x = _rand(2, 3)
    expected = _legacy_expected(x, blk.weight.data().asnumpy())
    imp = blk(mx.nd.array(x))
    onp.testing.assert_allclose(imp.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    blk.hybridize()
    for _ in range(2):
        hyb = blk(mx.nd.array(x))
        onp.testing.assert_allclose(hyb.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    # np inputs work too, and gradients flow through the replayed graph
    with autograd.record():
        out = blk(mx.np.array(x))
        loss = (out * mx.np.array(onp.arange(8, dtype="float32"))).sum()
    loss.backward()
    g_hyb = blk.weight.grad().asnumpy().copy()
    blk.hybridize(False)
    with autograd.record():
        loss = (blk(mx.np.array(x)) * mx.np.array(onp.arange(8, dtype="float32"))).sum()
    loss.backward()
    onp.testing.assert_allclose(g_hyb, blk.weight.grad().asnumpy(), rtol=1e-5, atol=1e-6)


def test_f_keeps_legacy_methods_of_nd_inputs_when_hybridized():
    class Flat(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.reshape((0, -1))  # MXNet's legacy reshape: 0 copies a dimension

    blk = Flat()
    x = mx.nd.array(_rand(2, 3, 4))
    assert blk(x).shape == (2, 12)
    blk.hybridize()
    assert blk(x).shape == (2, 12) and blk(x).shape == (2, 12)


def test_f_names_and_errors():
    from ndx.gluon.block import F
    assert F.np is mx.np and F.npx is mx.npx
    assert F.relu is mx.nd.relu and F.FullyConnected is mx.nd.FullyConnected
    with pytest.raises(AttributeError, match="no operator"):
        F.no_such_operator_anywhere


def test_hybrid_lambda_with_f():
    lam = nn.HybridLambda(lambda F, x: F.relu(x) * 2)
    x = mx.nd.array([-1.0, 3.0])
    onp.testing.assert_array_equal(lam(x).asnumpy(), [0.0, 6.0])


# ---- 4. metrics ------------------------------------------------------------------------
def test_f1_on_float_nd_labels():
    m = mx.metric.F1()
    m.update([mx.nd.array([0, 1])], [mx.nd.array([[0.3, 0.7], [0.2, 0.8]])])
    # both predicted positive: TP 1, FP 1, FN 0 -> P 1/2, R 1, F1 2/3
    assert m.get()[0] == "f1" and math.isclose(m.get()[1], 2 / 3)
    # MXNet's documented example, with mx.nd arrays
    preds = [mx.nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])]
    labels = [mx.nd.array([0, 1, 1])]
    for metric, value in ((mx.metric.F1(), 0.8), (mx.metric.Accuracy(), 2 / 3)):
        metric.update(labels, preds)
        assert math.isclose(metric.get()[1], value, rel_tol=1e-6), (metric.name, metric.get())
    # BinaryAccuracy: [0.2, 0.7, 0.4] > 0.5 is [0, 1, 0], two of three labels
    binary = mx.metric.BinaryAccuracy()
    binary.update(labels, [mx.nd.array([0.2, 0.7, 0.4])])
    assert math.isclose(binary.get()[1], 2 / 3)


def test_global_statistics():
    acc = mx.metric.Accuracy()
    preds = mx.nd.array([[0.3, 0.7], [0.2, 0.8]])
    acc.update([mx.nd.array([0, 1])], [preds])
    assert acc.get() == acc.get_global() == ("accuracy", 0.5)
    acc.reset_local()
    assert math.isnan(acc.get()[1]) and acc.get_global() == ("accuracy", 0.5)
    acc.update([mx.nd.array([1, 1])], [preds])
    assert acc.get() == ("accuracy", 1.0) and acc.get_global() == ("accuracy", 0.75)
    assert acc.global_num_inst == 4 and acc.global_sum_metric == 3
    assert acc.num_inst == 2 and acc.sum_metric == 2
    assert acc.get_global_name_value() == [("accuracy", 0.75)]
    acc.reset()
    assert math.isnan(acc.get_global()[1]) and acc.global_num_inst == 0

    # RMSE: the square root of the mean over everything since reset()
    rmse = mx.metric.RMSE()
    rmse.update([mx.nd.array([0.0, 0.0])], [mx.nd.array([3.0, 4.0])])
    rmse.reset_local()
    rmse.update([mx.nd.array([0.0])], [mx.nd.array([1.0])])
    assert math.isclose(rmse.get()[1], 1.0)
    assert math.isclose(rmse.get_global()[1], math.sqrt((9 + 16 + 1) / 3))

    # F1 from the counts of every update: TP 3, FP 1, FN 0 -> 6/7
    f1 = mx.metric.F1()
    f1.update([mx.nd.array([0, 1])], [preds])
    f1.reset_local()
    f1.update([mx.nd.array([1, 1])], [preds])
    assert math.isclose(f1.get()[1], 1.0) and math.isclose(f1.get_global()[1], 6 / 7)

    comp = mx.metric.CompositeEvalMetric([mx.metric.Accuracy(), mx.metric.F1()])
    comp.update([mx.nd.array([0, 1])], [preds])
    comp.reset_local()
    names, values = comp.get_global()
    assert names == ["accuracy", "f1"] and values[0] == 0.5
    assert math.isclose(values[1], 2 / 3)
    assert all(math.isnan(v) for v in comp.get()[1])


def test_custom_metric_global_stats_opt_in():
    class Plain(mx.metric.EvalMetric):
        def __init__(self):
            super().__init__("plain")

        def update(self, labels, preds):
            self.sum_metric += 1.0
            self.num_inst += 2

    m = Plain()
    m.update(None, None)
    assert m.get_global() == m.get() == ("plain", 0.5)
    m.reset_local()
    assert math.isnan(m.get_global()[1])  # no global statistics: get_global() is get()

    class Tracked(mx.metric.EvalMetric):
        def __init__(self):
            super().__init__("tracked", has_global_stats=True)

        def update(self, labels, preds):
            for attr in ("sum_metric", "global_sum_metric"):
                setattr(self, attr, getattr(self, attr) + 1.0)
            for attr in ("num_inst", "global_num_inst"):
                setattr(self, attr, getattr(self, attr) + 4)

    t = Tracked()
    t.update(None, None)
    t.reset_local()
    t.update(None, None)
    assert t.get() == ("tracked", 0.25) and t.get_global() == ("tracked", 0.25)
    assert t.global_num_inst == 8 and "has_global_stats" not in t.get_config()


# ---- 5. ArrayDataset of NDArrays ---------------------------------------------------------
def test_array_dataset_items_of_nd_arrays():
    from ndx.gluon.data.vision import transforms
    images = onp.arange(2 * 4 * 4 * 3).reshape(2, 4, 4, 3).astype("uint8")
    ds = gluon.data.ArrayDataset(mx.nd.array(images, dtype="uint8"), mx.nd.array([0, 1]))
    img, label = ds[1]
    assert isinstance(img, mx.nd.NDArray) and type(img) is mx.nd.NDArray
    assert img.dtype == onp.uint8 and img.shape == (4, 4, 3)
    onp.testing.assert_array_equal(img.asnumpy(), images[1])
    assert label == 1.0  # MXNet 1.x reads a 1-D NDArray as NumPy
    tensor = transforms.ToTensor()(img)
    onp.testing.assert_allclose(tensor.asnumpy(), images[1].transpose(2, 0, 1) / 255.0,
                                rtol=1e-6)
    loader = gluon.data.DataLoader(ds.transform_first(transforms.ToTensor()), batch_size=2)
    data, labels = next(iter(loader))
    assert data.shape == (2, 3, 4, 4)
    onp.testing.assert_array_equal(labels.asnumpy(), [0.0, 1.0])
    np_ds = gluon.data.ArrayDataset(mx.np.array(images))
    assert isinstance(np_ds[0], mx.np.ndarray) and np_ds[0].shape == (4, 4, 3)


# ---- 6. autograd.grad on NDArrays --------------------------------------------------------
def test_autograd_grad_returns_nd_arrays_for_nd_inputs():
    x = mx.nd.array([2.0])
    x.attach_grad()
    with autograd.record():
        y = x * x * x
    g = autograd.grad(y, x, create_graph=True)
    assert type(g) is mx.nd.NDArray and g.asscalar() == 12.0  # 3 x^2
    g.backward()
    assert x.grad.asscalar() == 12.0  # d(3 x^2)/dx = 6 x
    a = mx.np.array([1.0, 2.0])
    a.attach_grad()
    with autograd.record():
        b = (a * a).sum()
    (ga,) = autograd.grad(b, [a])
    assert type(ga) is mx.np.ndarray
    onp.testing.assert_array_equal(ga.asnumpy(), [2.0, 4.0])


# ---- built-in layers and losses on mx.nd arrays ------------------------------------------
def test_builtin_blocks_return_ndarrays_for_ndarray_inputs():
    # MXNet 1.x: a block called on NDArrays returns NDArrays, so the 1.x training loop's
    # loss.mean().asscalar() works; mx.np inputs keep mx.np outputs (MXNet 2.0)
    net = nn.Sequential()
    net.add(nn.Dense(4, activation="relu"), nn.Dense(3))
    net.initialize()
    x, y = _rand(5, 6), onp.array([0, 2, 1, 1, 0])
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for hybrid in (False, True):
        if hybrid:
            net.hybridize()
        with autograd.record():
            out = net(mx.nd.array(x))
            loss = loss_fn(out, mx.nd.array(y))
        loss.backward()
        assert type(out) is type(loss) is mx.nd.NDArray
        logits = out.asnumpy().astype(onp.float64)
        logp = logits - onp.log(onp.exp(logits).sum(axis=1, keepdims=True))
        want = -logp[onp.arange(5), y].mean()
        assert abs(loss.mean().asscalar() - want) < 1e-5
        assert type(net(mx.np.array(x))) is mx.np.ndarray
