"""An MXNet 1.x user's classic Module scripts, run against ndx (``import ndx as mx``).

Every assertion compares with an independent reference: a NumPy recomputation from the
parameters, a hand computation, or MXNet 1.x's documented behaviour."""
import logging
import os

import numpy as np
import pytest

import ndx as mx


# ---------------------------------------------------------------- helpers
def _np(a):
    return a.asnumpy() if hasattr(a, "asnumpy") else np.asarray(a)


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def mnist_like(n, seed=0):
    """Synthetic data of MNIST's shapes: (n, 1, 28, 28) images, 10 separable classes."""
    rng = np.random.RandomState(seed)
    x = rng.rand(n, 1, 28, 28).astype("float32")
    y = rng.randint(0, 10, n)
    for c in range(10):
        x[y == c, 0, 2 * c:2 * c + 2, :] += 2.0
    return x, y.astype("float32")


def mlp_symbol():
    data = mx.sym.Variable("data")
    data = mx.sym.Flatten(data=data)
    fc1 = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=64)
    act1 = mx.sym.Activation(data=fc1, name="relu1", act_type="relu")
    fc2 = mx.sym.FullyConnected(data=act1, name="fc2", num_hidden=32)
    act2 = mx.sym.Activation(data=fc2, name="relu2", act_type="relu")
    fc3 = mx.sym.FullyConnected(data=act2, name="fc3", num_hidden=10)
    return mx.sym.SoftmaxOutput(data=fc3, name="softmax")


def mlp_forward_np(arg, x):
    p = {k: _np(v) for k, v in arg.items()}
    h = x.reshape(x.shape[0], -1)
    h = np.maximum(h @ p["fc1_weight"].T + p["fc1_bias"], 0)
    h2 = np.maximum(h @ p["fc2_weight"].T + p["fc2_bias"], 0)
    return h, h2, softmax(h2 @ p["fc3_weight"].T + p["fc3_bias"])


@pytest.fixture(autouse=True)
def _quiet(caplog):
    caplog.set_level(logging.INFO)
    yield


# ---------------------------------------------------------------- (a) MNIST MLP / LeNet
def test_a_mlp_fit_speedometer_predict_matches_numpy(caplog):
    x, y = mnist_like(1200)
    batch_size = 100
    train_iter = mx.io.NDArrayIter(x[:1000], y[:1000], batch_size, shuffle=True)
    val_iter = mx.io.NDArrayIter(x[1000:], y[1000:], batch_size)
    mlp = mlp_symbol()
    mlp_model = mx.mod.Module(symbol=mlp, context=mx.cpu())
    mlp_model.fit(train_iter, eval_data=val_iter, optimizer="sgd",
                  optimizer_params={"learning_rate": 0.1}, eval_metric="acc",
                  initializer=mx.init.Xavier(),
                  batch_end_callback=mx.callback.Speedometer(batch_size, 5), num_epoch=4)
    text = caplog.text
    # MXNet's log lines
    assert "Epoch[3] Train-accuracy=" in text
    assert "Epoch[3] Validation-accuracy=" in text
    assert "Epoch[0] Batch [0-5]\tSpeed:" in text and "samples/sec" in text
    test_iter = mx.io.NDArrayIter(x[1000:], None, batch_size)
    prob = mlp_model.predict(test_iter)
    assert prob.shape == (200, 10)
    arg, _ = mlp_model.get_params()
    _, _, ref = mlp_forward_np(arg, x[1000:])
    np.testing.assert_allclose(_np(prob), ref, rtol=1e-4, atol=1e-5)
    acc = mx.metric.Accuracy()
    mlp_model.score(val_iter, acc)
    assert acc.get()[1] == pytest.approx((ref.argmax(1) == y[1000:]).mean())
    assert acc.get()[1] > 0.95


def test_a_mlp_default_uniform_init_trains_longer():
    # the tutorial uses fit's default initializer (Uniform(0.01)); with enough updates
    # the net learns separable data.
    x, y = mnist_like(600, seed=1)
    it = mx.io.NDArrayIter(x, y, 50, shuffle=True)
    mod = mx.mod.Module(mlp_symbol())
    mod.fit(it, optimizer="sgd", optimizer_params={"learning_rate": 0.1},
            eval_metric="acc", num_epoch=25)
    score = dict(mod.score(it, "acc"))
    assert score["accuracy"] > 0.9


def lenet_symbol():
    data = mx.sym.var("data")
    conv1 = mx.sym.Convolution(data=data, kernel=(5, 5), num_filter=8)
    tanh1 = mx.sym.Activation(data=conv1, act_type="tanh")
    pool1 = mx.sym.Pooling(data=tanh1, pool_type="max", kernel=(2, 2), stride=(2, 2))
    conv2 = mx.sym.Convolution(data=pool1, kernel=(5, 5), num_filter=16)
    tanh2 = mx.sym.Activation(data=conv2, act_type="tanh")
    pool2 = mx.sym.Pooling(data=tanh2, pool_type="max", kernel=(2, 2), stride=(2, 2))
    flatten = mx.sym.flatten(data=pool2)
    fc1 = mx.sym.FullyConnected(data=flatten, num_hidden=64)
    tanh3 = mx.sym.Activation(data=fc1, act_type="tanh")
    fc2 = mx.sym.FullyConnected(data=tanh3, num_hidden=10)
    return mx.sym.SoftmaxOutput(data=fc2, name="softmax")


def test_a_lenet_fit():
    x, y = mnist_like(400, seed=2)
    train_iter = mx.io.NDArrayIter(x[:300], y[:300], 50, shuffle=True)
    val_iter = mx.io.NDArrayIter(x[300:], y[300:], 50)
    lenet_model = mx.mod.Module(symbol=lenet_symbol(), context=mx.cpu())
    lenet_model.fit(train_iter, eval_data=val_iter, optimizer="sgd",
                    optimizer_params={"learning_rate": 0.1}, eval_metric="acc",
                    initializer=mx.init.Xavier(), num_epoch=6)
    acc = mx.metric.Accuracy()
    lenet_model.score(val_iter, acc)
    assert acc.get()[1] > 0.9
    # output_shapes: conv 28->24, pool 12, conv 8, pool 4
    assert [tuple(s) for _, s in lenet_model.output_shapes] == [(50, 10)]
    arg, _ = lenet_model.get_params()
    shapes = {k: tuple(v.shape) for k, v in arg.items()}
    assert sorted(shapes.values()) == sorted([(8, 1, 5, 5), (8,), (16, 8, 5, 5), (16,),
                                              (64, 256), (64,), (10, 64), (10,)])


# ---------------------------------------------------------------- (b) intermediate API
def small_net():
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, name="fc1", num_hidden=8)
    act = mx.sym.Activation(fc1, name="relu1", act_type="relu")
    fc2 = mx.sym.FullyConnected(act, name="fc2", num_hidden=3)
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def small_net_np(p, x, y):
    """Forward + the gradients of SoftmaxOutput (p - onehot per example, MXNet's
    normalization='null')."""
    h_pre = x @ p["fc1_weight"].T + p["fc1_bias"]
    h = np.maximum(h_pre, 0)
    prob = softmax(h @ p["fc2_weight"].T + p["fc2_bias"])
    d2 = prob.copy()
    d2[np.arange(len(y)), y.astype(int)] -= 1
    g = {"fc2_weight": d2.T @ h, "fc2_bias": d2.sum(0)}
    dh = (d2 @ p["fc2_weight"]) * (h_pre > 0)
    g["fc1_weight"] = dh.T @ x
    g["fc1_bias"] = dh.sum(0)
    g["data"] = dh @ p["fc1_weight"]
    return prob, g


def test_b_intermediate_loop_one_sgd_step_matches_numpy():
    rng = np.random.RandomState(3)
    x = rng.randn(20, 5).astype("float32")
    y = rng.randint(0, 3, 20).astype("float32")
    train_iter = mx.io.NDArrayIter(x, y, 10)
    mod = mx.mod.Module(symbol=small_net(), context=mx.cpu(), data_names=["data"],
                        label_names=["softmax_label"])
    mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label,
             inputs_need_grad=True)
    mod.init_params(initializer=mx.init.Uniform(scale=.5))
    lr, wd = 0.1, 0.01
    mod.init_optimizer(optimizer="sgd", optimizer_params=(("learning_rate", lr), ("wd", wd)))
    arg0 = {k: _np(v).copy() for k, v in mod.get_params()[0].items()}
    batch = next(iter(train_iter))
    mod.forward(batch, is_train=True)
    prob, g = small_net_np(arg0, x[:10], y[:10])
    np.testing.assert_allclose(_np(mod.get_outputs()[0]), prob, rtol=1e-5, atol=1e-6)
    metric = mx.metric.create("acc")
    mod.update_metric(metric, batch.label)
    assert metric.get() == ("accuracy", pytest.approx((prob.argmax(1) == y[:10]).mean()))
    mod.backward()
    np.testing.assert_allclose(_np(mod.get_input_grads()[0]), g["data"], rtol=1e-4,
                               atol=1e-6)
    mod.update()
    arg1, _ = mod.get_params()
    for name in arg0:
        # MXNet: rescale_grad = 1/batch_size; wd only on *_weight (string optimizer)
        wd_n = wd if name.endswith("_weight") else 0.0
        ref = arg0[name] - lr * (g[name] / 10 + wd_n * arg0[name])
        np.testing.assert_allclose(_np(arg1[name]), ref, rtol=1e-5, atol=1e-6,
                                   err_msg=name)


def test_b_tutorial_loop_learns():
    rng = np.random.RandomState(4)
    x = rng.randn(200, 5).astype("float32")
    y = (x[:, 0] > 0).astype("float32") + (x[:, 1] > 0)
    train_iter = mx.io.NDArrayIter(x, y, 20, shuffle=True)
    mod = mx.mod.Module(symbol=small_net())
    mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
    mod.init_params(initializer=mx.init.Uniform(scale=.1))
    mod.init_optimizer(optimizer="sgd", optimizer_params=(("learning_rate", 0.5),))
    metric = mx.metric.create("acc")
    for _ in range(30):
        train_iter.reset()
        metric.reset()
        for batch in train_iter:
            mod.forward(batch, is_train=True)
            mod.update_metric(metric, batch.label)
            mod.backward()
            mod.update()
    assert metric.get()[1] > 0.9
    # forward_backward is forward(is_train=True) + backward
    train_iter.reset()
    batch = next(iter(train_iter))
    mod.forward_backward(batch)
    mod.update()


# ---------------------------------------------------------------- (c) checkpoints, predict
def _trained_mlp(tmp_path, num_epoch=2):
    x, y = mnist_like(300, seed=5)
    it = mx.io.NDArrayIter(x, y, 50, shuffle=True)
    mod = mx.mod.Module(mlp_symbol())
    prefix = str(tmp_path / "mx_mlp")
    mod.fit(it, optimizer="sgd", optimizer_params={"learning_rate": 0.1},
            initializer=mx.init.Xavier(), num_epoch=num_epoch,
            epoch_end_callback=mx.callback.do_checkpoint(prefix))
    return mod, prefix, x, y


def test_c_load_checkpoint_predict_and_score(tmp_path):
    mod, prefix, x, y = _trained_mlp(tmp_path)
    # do_checkpoint writes prefix-symbol.json and prefix-%04d.params for epoch + 1
    assert os.path.exists(prefix + "-symbol.json")
    assert os.path.exists(prefix + "-0001.params") and os.path.exists(prefix + "-0002.params")
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 2)
    assert sym.list_outputs() == ["softmax_output"]
    assert sorted(arg_params) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight",
                                  "fc3_bias", "fc3_weight"]
    assert aux_params == {}
    # the predict tutorial: label_names=None, bind for_training=False, one image
    pmod = mx.mod.Module(symbol=sym, context=mx.cpu(), label_names=None)
    pmod.bind(for_training=False, data_shapes=[("data", (1, 1, 28, 28))],
              label_shapes=pmod._label_shapes)
    pmod.set_params(arg_params, aux_params, allow_missing=True)
    from collections import namedtuple
    Batch = namedtuple("Batch", ["data"])
    pmod.forward(Batch([mx.nd.array(x[:1])]))
    prob = pmod.get_outputs()[0].asnumpy()
    _, _, ref = mlp_forward_np(arg_params, x)
    np.testing.assert_allclose(prob, ref[:1], rtol=1e-4, atol=1e-6)
    # label_names=None makes softmax_label a "parameter" (as in MXNet 1.x), so a module
    # bound for batch 1 cannot re-bind to 30 (MXNet: "Shape of unspecified array
    # arg:softmax_label changed"); ndx raises a ValueError naming it.
    it = mx.io.NDArrayIter(x[:70], None, 30)
    with pytest.raises(ValueError, match="softmax_label"):
        pmod.predict(it)
    # predict over an iterator of another batch size with the default label_names
    # (last batch padded: MXNet drops the pad)
    pmod = mx.mod.Module(symbol=sym, context=mx.cpu())
    pmod.bind(for_training=False, data_shapes=[("data", (1, 1, 28, 28))])
    pmod.set_params(arg_params, aux_params)
    out = pmod.predict(it)
    assert out.shape == (70, 10)
    np.testing.assert_allclose(_np(out), ref[:70], rtol=1e-4, atol=1e-6)
    # score with a labelled iterator, on a module bound with labels
    smod = mx.mod.Module(symbol=sym)
    it = mx.io.NDArrayIter(x, y, 50)
    smod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label,
              for_training=False)
    smod.set_params(arg_params, aux_params)
    (name, val), = smod.score(it, "acc")
    assert name == "accuracy" and val == pytest.approx((ref.argmax(1) == y).mean())
    # a numpy array to predict (MXNet: one forward, first output)
    out = smod.predict(x[:50])
    np.testing.assert_allclose(_np(out), ref[:50], rtol=1e-4, atol=1e-6)


def test_c_namedtuple_batch_of_new_shape(tmp_path):
    """The predict tutorial's Batch namedtuple (only .data) on a module bound for another
    batch size: MXNet's forward reshapes (it checks hasattr(batch, 'label'))."""
    mod, prefix, x, _ = _trained_mlp(tmp_path, num_epoch=1)
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 1)
    pmod = mx.mod.Module(symbol=sym, label_names=None)
    pmod.bind(for_training=False, data_shapes=[("data", (4, 1, 28, 28))])
    # (MXNet: softmax_label is then a parameter the checkpoint lacks)
    with pytest.raises(RuntimeError, match="softmax_label is not presented"):
        pmod.set_params(arg_params, aux_params)
    pmod.set_params(arg_params, aux_params, allow_missing=True)
    from collections import namedtuple
    Batch = namedtuple("Batch", ["data"])
    pmod.forward(Batch([mx.nd.array(x[:4])]))
    _, _, ref = mlp_forward_np(arg_params, x[:4])
    np.testing.assert_allclose(pmod.get_outputs()[0].asnumpy(), ref, rtol=1e-4, atol=1e-6)
    # the same on a module with the default label_names (softmax_label), for_training=False
    pmod2 = mx.mod.Module(symbol=sym)
    pmod2.bind(for_training=False, data_shapes=[("data", (1, 1, 28, 28))])
    pmod2.set_params(arg_params, aux_params)
    pmod2.forward(Batch([mx.nd.array(x[:4])]))
    np.testing.assert_allclose(pmod2.get_outputs()[0].asnumpy(), ref, rtol=1e-4, atol=1e-6)


def test_c_feature_extraction_get_internals(tmp_path):
    mod, prefix, x, _ = _trained_mlp(tmp_path, num_epoch=1)
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 1)
    all_layers = sym.get_internals()
    assert "fc2_output" in all_layers.list_outputs()
    fe_sym = all_layers["fc2_output"]
    fe_mod = mx.mod.Module(symbol=fe_sym, context=mx.cpu(), label_names=None)
    fe_mod.bind(for_training=False, data_shapes=[("data", (5, 1, 28, 28))])
    fe_mod.set_params(arg_params, aux_params)  # extra fc3_* ignored, as in MXNet
    fe_mod.forward(mx.io.DataBatch([mx.nd.array(x[:5])]))
    feat = fe_mod.get_outputs()[0].asnumpy()
    p = arg_params
    h1 = np.maximum(x[:5].reshape(5, -1) @ _np(p["fc1_weight"]).T + _np(p["fc1_bias"]), 0)
    ref = h1 @ _np(p["fc2_weight"]).T + _np(p["fc2_bias"])
    np.testing.assert_allclose(feat, ref, rtol=1e-4, atol=1e-5)


def test_c_fine_tune_fixed_param_names(tmp_path):
    mod, prefix, x, y = _trained_mlp(tmp_path, num_epoch=1)
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 1)
    # the fine-tune example: new last layer, the rest from the checkpoint, some frozen
    fc2_out = sym.get_internals()["relu2_output"]
    net = mx.sym.FullyConnected(data=fc2_out, num_hidden=10, name="fc_new")
    net = mx.sym.SoftmaxOutput(data=net, name="softmax")
    new_args = {k: v for k, v in arg_params.items() if "fc3" not in k}
    fixed = ["fc1_weight", "fc1_bias"]
    ft = mx.mod.Module(symbol=net, context=mx.cpu(), fixed_param_names=fixed)
    it = mx.io.NDArrayIter(x, y, 50, shuffle=True)
    ft.fit(it, num_epoch=2, arg_params=new_args, aux_params=aux_params,
           allow_missing=True, initializer=mx.init.Xavier(), optimizer="sgd",
           optimizer_params={"learning_rate": 0.1})
    after, _ = ft.get_params()
    for name in fixed:
        np.testing.assert_array_equal(_np(after[name]), _np(arg_params[name]))
    assert not np.allclose(_np(after["fc2_weight"]), _np(arg_params["fc2_weight"]))
    assert after["fc_new_weight"].shape == (10, 32)


# ---------------------------------------------------------------- (d) regression, metrics
def test_d_linear_regression_tutorial():
    rng = np.random.RandomState(6)
    train_data = rng.uniform(0, 1, [100, 2]).astype("float32")
    train_label = train_data[:, 0] + 2 * train_data[:, 1]
    eval_data = rng.uniform(0, 1, [20, 2]).astype("float32")
    eval_label = eval_data[:, 0] + 2 * eval_data[:, 1]
    batch_size = 1
    train_iter = mx.io.NDArrayIter(train_data, train_label, batch_size, shuffle=True,
                                   label_name="lin_reg_label")
    eval_iter = mx.io.NDArrayIter(eval_data, eval_label, batch_size, shuffle=False)
    X = mx.sym.Variable("data")
    Y = mx.symbol.Variable("lin_reg_label")
    fully_connected_layer = mx.sym.FullyConnected(data=X, name="fc1", num_hidden=1)
    lro = mx.sym.LinearRegressionOutput(data=fully_connected_layer, label=Y, name="lro")
    model = mx.mod.Module(symbol=lro, data_names=["data"], label_names=["lin_reg_label"])
    model.fit(train_iter, eval_iter,
              optimizer_params={"learning_rate": 0.005, "momentum": 0.9},
              num_epoch=20, eval_metric="mse")
    arg, _ = model.get_params()
    np.testing.assert_allclose(_np(arg["fc1_weight"]).ravel(), [1, 2], atol=0.05)
    pred = _np(model.predict(eval_iter))
    ref = eval_data @ _np(arg["fc1_weight"]).T + _np(arg["fc1_bias"])
    np.testing.assert_allclose(pred, ref, rtol=1e-5, atol=1e-6)
    metric = mx.metric.MSE()
    model.score(eval_iter, metric)
    # batch_size 1: the mean over batches of the per-batch MSE = the plain MSE
    assert metric.get()[0] == "mse"
    assert metric.get()[1] == pytest.approx(((ref.ravel() - eval_label) ** 2).mean(),
                                            rel=1e-4)
    assert metric.get()[1] < 1e-3


def test_d_regression_output_gradient_scaling():
    """MXNet's RegressionOutput gradient: (out - label) * grad_scale / num_output, where
    num_output is the label's size per example."""
    rng = np.random.RandomState(7)
    x = rng.randn(4, 3).astype("float32")
    lab = rng.randn(4, 2).astype("float32")
    net = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"), name="lro")
    mod = mx.mod.Module(net, label_names=["lro_label"])
    mod.bind([("data", (4, 3))], [("lro_label", (4, 2))])
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 1.0})
    w0 = _np(mod.get_params()[0]["fc_weight"]).copy()
    b0 = _np(mod.get_params()[0]["fc_bias"]).copy()
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(lab)]))
    mod.update()
    out = x @ w0.T + b0
    d = (out - lab) / 2
    np.testing.assert_allclose(_np(mod.get_params()[0]["fc_weight"]), w0 - d.T @ x / 4,
                               rtol=1e-5, atol=1e-6)


def test_d_custom_and_composite_metrics():
    rng = np.random.RandomState(8)
    x = rng.randn(60, 5).astype("float32")
    y = rng.randint(0, 3, 60).astype("float32")
    it = mx.io.NDArrayIter(x, y, 20)
    mod = mx.mod.Module(small_net())
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Uniform(0.5))
    arg = {k: _np(v) for k, v in mod.get_params()[0].items()}
    prob, _ = small_net_np(arg, x, y)

    def top1_err(label, pred):
        return float((pred.argmax(axis=1) != label).mean())

    m_np = mx.metric.np(top1_err)
    m_custom = mx.metric.CustomMetric(top1_err, name="err")
    comp = mx.metric.create(["acc", "ce"])
    for m in (m_np, m_custom, comp):
        mod.score(it, m)
    err_per_batch = [(prob[i:i + 20].argmax(1) != y[i:i + 20]).mean() for i in (0, 20, 40)]
    assert m_np.get() == ("top1_err", pytest.approx(np.mean(err_per_batch)))
    assert m_custom.get() == ("err", pytest.approx(np.mean(err_per_batch)))
    names, values = comp.get()
    assert names == ["accuracy", "cross-entropy"]
    assert values[0] == pytest.approx((prob.argmax(1) == y).mean())
    ce = -np.log(prob[np.arange(60), y.astype(int)] + 1e-12).mean()
    assert values[1] == pytest.approx(ce, rel=1e-4)
    # fit with a list of metric names logs each (MXNet: 'Epoch[0] Train-accuracy=')
    mod2 = mx.mod.Module(small_net())
    it.reset()  # (score leaves it exhausted; MXNet's fit does not reset first either)
    mod2.fit(it, eval_metric=["acc", "ce"], num_epoch=1)
    # a lambda custom metric in fit
    mod2.fit(it, eval_metric=mx.metric.np(lambda label, pred: 0.0), num_epoch=1, force_init=False)


# ---------------------------------------------------------------- (e) multi-output Group
def test_e_group_two_heads():
    rng = np.random.RandomState(9)
    x = rng.randn(200, 4).astype("float32")
    cls = (x[:, 0] > 0).astype("float32")
    reg = (x @ np.array([1.0, -1.0, 0.5, 2.0])).astype("float32")
    it = mx.io.NDArrayIter(x, {"softmax_label": cls, "lro_label": reg}, 20, shuffle=True)
    data = mx.sym.Variable("data")
    shared = mx.sym.FullyConnected(data, num_hidden=16, name="shared")
    act = mx.sym.Activation(shared, act_type="relu", name="act")
    head1 = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(act, num_hidden=2, name="cls"),
                                 name="softmax")
    head2 = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(data, num_hidden=1,
                                                                name="reg"), name="lro")
    feat = mx.sym.BlockGrad(act, name="feat")
    group = mx.sym.Group([head1, head2, feat])
    assert group.list_outputs() == ["softmax_output", "lro_output", "feat_output"]
    mod = mx.mod.Module(group, data_names=["data"], label_names=["softmax_label", "lro_label"])
    metric = mx.metric.CompositeEvalMetric()
    metric.add(mx.metric.Accuracy(output_names=["softmax_output"],
                                  label_names=["softmax_label"]))
    metric.add(mx.metric.MSE(output_names=["lro_output"], label_names=["lro_label"]))
    mod.fit(it, eval_metric=metric, optimizer="sgd",
            optimizer_params={"learning_rate": 0.05}, initializer=mx.init.Xavier(),
            num_epoch=30)
    assert [tuple(s) for _, s in mod.output_shapes] == [(20, 2), (20, 1), (20, 16)]
    mod.score(it, metric)
    names, values = metric.get()
    assert names == ["accuracy", "mse"]
    assert values[0] > 0.9 and values[1] < 0.05
    # outputs against NumPy
    outs = mod.predict(mx.io.NDArrayIter(x, None, 20), always_output_list=True)
    assert len(outs) == 3
    p = {k: _np(v) for k, v in mod.get_params()[0].items()}
    h = np.maximum(x @ p["shared_weight"].T + p["shared_bias"], 0)
    np.testing.assert_allclose(_np(outs[0]), softmax(h @ p["cls_weight"].T + p["cls_bias"]),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(outs[1]), x @ p["reg_weight"].T + p["reg_bias"],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(outs[2]), h, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- (f) BucketingModule
class BucketIter(mx.io.DataIter):
    """What a 1.x user writes (or mx.rnn.BucketSentenceIter gives): batches carrying
    bucket_key, provide_data and provide_label; the default bucket is the largest."""

    def __init__(self, seqs, labels, batch_size, buckets):
        super().__init__(batch_size)
        self.batches = []
        for b in buckets:
            idx = [i for i, s in enumerate(seqs) if len(s) == b]
            for k in range(0, len(idx) - batch_size + 1, batch_size):
                sel = idx[k:k + batch_size]
                self.batches.append((b, np.array([seqs[i] for i in sel], "float32"),
                                     labels[sel].astype("float32")))
        self.default_bucket_key = max(buckets)
        self.provide_data = [mx.io.DataDesc("data", (batch_size, self.default_bucket_key))]
        self.provide_label = [mx.io.DataDesc("softmax_label", (batch_size,))]
        self.cur = 0

    def reset(self):
        self.cur = 0

    def next(self):
        if self.cur == len(self.batches):
            raise StopIteration
        b, d, lab = self.batches[self.cur]
        self.cur += 1
        return mx.io.DataBatch([mx.nd.array(d)], [mx.nd.array(lab)], bucket_key=b,
                               provide_data=[mx.io.DataDesc("data", d.shape)],
                               provide_label=[mx.io.DataDesc("softmax_label", lab.shape)])


def _bucket_data(seed=10, vocab=10):
    rng = np.random.RandomState(seed)
    seqs, labels = [], []
    for _ in range(480):
        n = rng.choice([4, 8, 12])
        s = rng.randint(0, vocab, n)
        seqs.append(list(s))
        labels.append(float((s < vocab // 2).sum() * 2 > n))
    return seqs, np.array(labels)


def test_f_bucketing_embedding_mean():
    vocab, embed = 10, 8
    seqs, labels = _bucket_data()

    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        emb = mx.sym.Embedding(data=data, input_dim=vocab, output_dim=embed, name="embed")
        pooled = mx.sym.mean(emb, axis=1)
        fc = mx.sym.FullyConnected(pooled, num_hidden=2, name="pred")
        return mx.sym.SoftmaxOutput(fc, label=label, name="softmax"), ("data",), \
            ("softmax_label",)

    it = BucketIter(seqs, labels, 16, [4, 8, 12])
    model = mx.mod.BucketingModule(sym_gen=sym_gen,
                                   default_bucket_key=it.default_bucket_key,
                                   context=mx.cpu())
    model.fit(train_data=it, eval_data=it, eval_metric="acc",
              optimizer="sgd", optimizer_params={"learning_rate": 0.5},
              initializer=mx.init.Xavier(), num_epoch=15)
    score = dict(model.score(it, "acc"))
    assert score["accuracy"] > 0.9
    # every bucket uses the default bucket's parameters: NumPy from get_params
    arg, _ = model.get_params()
    E, W, b = (_np(arg[k]) for k in ("embed_weight", "pred_weight", "pred_bias"))
    it.reset()
    for batch in it:
        model.forward(batch, is_train=False)
        d = _np(batch.data[0]).astype(int)
        ref = softmax(E[d].mean(axis=1) @ W.T + b)
        np.testing.assert_allclose(_np(model.get_outputs()[0]), ref, rtol=1e-4, atol=1e-6)
    assert model.data_shapes[0].shape == (16, it.batches[-1][0])


def test_f_bucketing_fused_rnn():
    vocab = 10
    seqs, labels = _bucket_data(seed=11)
    bs, hidden = 16, 8

    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        emb = mx.sym.Embedding(data=data, input_dim=vocab, output_dim=4, name="embed")
        tnc = mx.sym.transpose(emb, axes=(1, 0, 2))
        rnn = mx.sym.RNN(data=tnc, state_size=hidden, num_layers=1, mode="rnn_tanh",
                         state=mx.sym.Variable("rnn_state"), name="rnn",
                         parameters=mx.sym.Variable("rnn_parameters",
                                                    init=mx.init.Uniform(0.1)))
        last = mx.sym.SequenceLast(rnn) if hasattr(mx.sym, "SequenceLast") else \
            mx.sym.mean(rnn, axis=0)
        fc = mx.sym.FullyConnected(last, num_hidden=2, name="pred")
        return mx.sym.SoftmaxOutput(fc, name="softmax"), ("data",), ("softmax_label",)

    it = BucketIter(seqs, labels, bs, [4, 8, 12])
    model = mx.mod.BucketingModule(sym_gen, default_bucket_key=12,
                                   state_names=["rnn_state"])
    # (no initializer knows the name 'rnn_parameters', in MXNet either: the variable's
    # own init attribute)
    init = mx.init.Xavier()
    model.fit(it, eval_metric="acc", optimizer="adam",
              optimizer_params={"learning_rate": 0.02}, initializer=init,
              num_epoch=10)
    # the begin state is an input (state_names), not a trained parameter
    arg, _ = model.get_params()
    assert "rnn_state" not in arg and "rnn_parameters" in arg
    assert dict(model.score(it, "acc"))["accuracy"] > 0.8


def test_h_mixed_initializer_in_module():
    """MXNet's Mixed hands (desc, arr) to the matching initializer, which dispatches on
    the name: biases zero, weights by Xavier / Normal."""
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=200, name="fc1")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(fc1, num_hidden=3, name="fc2"),
                               name="softmax")
    mod = mx.mod.Module(net)
    mod.bind([("data", (4, 300))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Mixed(["fc2.*", ".*"],
                                  [mx.init.Constant(0.5), mx.init.Xavier(magnitude=3)]))
    arg, _ = mod.get_params()
    np.testing.assert_array_equal(_np(arg["fc1_bias"]), np.zeros(200))
    np.testing.assert_array_equal(_np(arg["fc2_weight"]), np.full((3, 200), 0.5))
    # (Constant fills biases too? MXNet's Constant overrides _init_weight only: bias 0)
    np.testing.assert_array_equal(_np(arg["fc2_bias"]), np.zeros(3))
    w = _np(arg["fc1_weight"])
    bound = np.sqrt(3 / ((300 + 200) / 2))  # Xavier uniform, factor 'avg'
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound


# ---------------------------------------------------------------- (g) several devices
def test_g_two_cpu_contexts_match_one_device():
    rng = np.random.RandomState(12)
    x = rng.randn(40, 5).astype("float32")
    y = rng.randint(0, 3, 40).astype("float32")
    it = mx.io.NDArrayIter(x, y, 20)
    mods = []
    for ctx in (mx.cpu(), [mx.cpu(0), mx.cpu(1)]):
        mod = mx.mod.Module(small_net(), context=ctx)
        mod.bind(it.provide_data, it.provide_label)
        mods.append(mod)
    mods[0].init_params(mx.init.Uniform(0.5))
    arg0 = {k: _np(v).copy() for k, v in mods[0].get_params()[0].items()}
    mods[1].init_params(arg_params={k: mx.nd.array(v) for k, v in arg0.items()})
    for mod in mods:
        mod.init_optimizer(optimizer="sgd",
                           optimizer_params={"learning_rate": 0.3, "momentum": 0.9})
    for _ in range(2):
        it.reset()
        for batch in it:
            for mod in mods:
                mod.forward_backward(batch)
                mod.update()
    ref, _ = mods[0].get_params()
    got, _ = mods[1].get_params()
    for k in ref:
        np.testing.assert_allclose(_np(got[k]), _np(ref[k]), rtol=1e-4, atol=1e-6)
    # merged outputs, batch order kept
    it.reset()
    batch = next(iter(it))
    mods[1].forward(batch, is_train=False)
    prob, _ = small_net_np({k: _np(v) for k, v in ref.items()}, x[:20], y[:20])
    np.testing.assert_allclose(_np(mods[1].get_outputs()[0]), prob, rtol=1e-4, atol=1e-6)
    assert [tuple(s) for _, s in mods[1].output_shapes] == [(20, 3)]
    # fit over two devices
    mod = mx.mod.Module(small_net(), context=[mx.cpu(0), mx.cpu(1)])
    yy = (x[:, 0] > 0).astype("float32")
    it2 = mx.io.NDArrayIter(x, yy, 20, shuffle=True)
    mod.fit(it2, optimizer_params={"learning_rate": 0.5}, initializer=mx.init.Xavier(),
            num_epoch=30)
    assert dict(mod.score(it2, "acc"))["accuracy"] > 0.9


def test_g_batchnorm_two_devices_moving_mean():
    rng = np.random.RandomState(13)
    x = (rng.randn(8, 4) * 2 + 3).astype("float32")
    data = mx.sym.Variable("data")
    bn = mx.sym.BatchNorm(data, name="bn", fix_gamma=False)
    net = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(bn, num_hidden=1, name="fc"),
                                        name="lro")
    mod = mx.mod.Module(net, label_names=["lro_label"], context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([("data", (8, 4))], [("lro_label", (8, 1))])
    mod.init_params(mx.init.Xavier())
    aux = mod.get_params()[1]
    assert sorted(aux) == ["bn_moving_mean", "bn_moving_var"]
    np.testing.assert_array_equal(_np(aux["bn_moving_mean"]), np.zeros(4))
    np.testing.assert_array_equal(_np(aux["bn_moving_var"]), np.ones(4))
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.zeros((8, 1))]), is_train=True)
    # MXNet: moving = 0.9 moving + 0.1 batch mean, per device; get_params averages them
    halves = [x[:4].mean(0), x[4:].mean(0)]
    ref = np.mean([0.1 * h for h in halves], axis=0)
    np.testing.assert_allclose(_np(mod.get_params()[1]["bn_moving_mean"]), ref, rtol=1e-5)


# ---------------------------------------------------------------- (h) lr_scheduler, Xavier
def test_h_factor_scheduler_in_optimizer_params():
    net = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1, no_bias=True,
                              name="fc"), name="lro")
    it = mx.io.NDArrayIter(np.ones((5, 1), "float32"), np.zeros((5,), "float32"), 1,
                           label_name="lro_label")
    mod = mx.mod.Module(net, label_names=["lro_label"])
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5)
    mod.fit(it, num_epoch=1, optimizer="sgd", eval_metric="mse",
            arg_params={"fc_weight": mx.nd.array([[1.0]])},
            optimizer_params={"learning_rate": 0.1, "lr_scheduler": sched})
    # MXNet: the optimizer's learning_rate becomes the scheduler's base_lr; update k
    # (num_update = k) uses base * factor ** #{steps passed}: 0.1, 0.1, 0.05, 0.05, 0.025
    w = 1.0
    for lr in (0.1, 0.1, 0.05, 0.05, 0.025):
        w -= lr * w  # gradient of 0.5 (w*1 - 0)^2
    assert _np(mod.get_params()[0]["fc_weight"]).item() == pytest.approx(w, rel=1e-5)


def test_h_xavier_gaussian_in_magnitude2():
    data = mx.sym.Variable("data")
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=64, name="conv")
    fc = mx.sym.FullyConnected(conv, num_hidden=10, name="fc")
    net = mx.sym.SoftmaxOutput(fc, name="softmax")
    mod = mx.mod.Module(net)
    mod.bind([("data", (2, 32, 10, 10))], [("softmax_label", (2,))])
    mx.random.seed(0)
    mod.init_params(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2))
    arg, _ = mod.get_params()
    w = _np(arg["conv_weight"])
    # fan_in = 32 * 3 * 3; std = sqrt(magnitude / fan_in)
    assert w.std() == pytest.approx(np.sqrt(2 / 288), rel=0.03)
    assert abs(w.mean()) < 0.003
    assert w.std() != pytest.approx(np.sqrt(2 / (64 * 9)), rel=0.1)  # not fan_out
    fw = _np(arg["fc_weight"])
    assert fw.std() == pytest.approx(np.sqrt(2 / (64 * 8 * 8)), rel=0.05)
    np.testing.assert_array_equal(_np(arg["conv_bias"]), np.zeros(64))


# ---------------------------------------------------------------- (i) saving / loading
def test_i_module_load_resume_matches_uninterrupted(tmp_path):
    rng = np.random.RandomState(14)
    x = rng.randn(60, 5).astype("float32")
    y = rng.randint(0, 3, 60).astype("float32")
    prefix = str(tmp_path / "ckpt")
    opt = {"learning_rate": 0.1, "momentum": 0.9}
    it = mx.io.NDArrayIter(x, y, 20)
    a = mx.mod.Module(small_net())
    mx.random.seed(1)
    a.fit(it, num_epoch=1, optimizer="sgd", optimizer_params=opt,
          initializer=mx.init.Xavier(),
          epoch_end_callback=mx.callback.module_checkpoint(a, prefix,
                                                           save_optimizer_states=True))
    assert os.path.exists(prefix + "-0001.states")
    a.fit(it, num_epoch=2, begin_epoch=1, optimizer="sgd", optimizer_params=opt)
    b = mx.mod.Module.load(prefix, 1, load_optimizer_states=True, data_names=["data"],
                           label_names=["softmax_label"])
    b.fit(it, num_epoch=2, begin_epoch=1, optimizer="sgd", optimizer_params=opt)
    pa, pb = a.get_params()[0], b.get_params()[0]
    for k in pa:
        np.testing.assert_allclose(_np(pb[k]), _np(pa[k]), rtol=1e-5, atol=1e-6)
    # without the optimizer states (momentum restarts) the result differs
    c = mx.mod.Module.load(prefix, 1)
    c.fit(it, num_epoch=2, begin_epoch=1, optimizer="sgd", optimizer_params=opt)
    assert not np.allclose(_np(c.get_params()[0]["fc1_weight"]), _np(pa["fc1_weight"]))


def test_i_save_params_load_params_format(tmp_path):
    mod = mx.mod.Module(small_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Uniform(1.0))
    fname = str(tmp_path / "net.params")
    mod.save_params(fname)
    saved = mx.nd.load(fname)
    # MXNet's .params: 'arg:<name>' / 'aux:<name>'
    assert sorted(saved) == ["arg:fc1_bias", "arg:fc1_weight", "arg:fc2_bias", "arg:fc2_weight"]
    arg = {k: _np(v).copy() for k, v in mod.get_params()[0].items()}
    mod2 = mx.mod.Module(small_net())
    mod2.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod2.load_params(fname)
    for k in arg:
        np.testing.assert_array_equal(_np(mod2.get_params()[0][k]), arg[k])
    # a checkpoint of the symbol + params, loaded by mx.model.load_checkpoint
    mod.save_checkpoint(str(tmp_path / "m"), 7)
    sym, a2, _ = mx.model.load_checkpoint(str(tmp_path / "m"), 7)
    assert os.path.exists(str(tmp_path / "m-0007.params"))
    assert sym.list_arguments() == small_net().list_arguments()
    for k in arg:
        np.testing.assert_array_equal(_np(a2[k]), arg[k])


def test_i_callbacks_log_and_checkpoint(tmp_path, caplog):
    rng = np.random.RandomState(15)
    x = rng.randn(40, 5).astype("float32")
    y = rng.randint(0, 3, 40).astype("float32")
    it = mx.io.NDArrayIter(x, y, 10)
    prefix = str(tmp_path / "cb")
    mod = mx.mod.Module(small_net())
    mod.fit(it, num_epoch=4, eval_metric="acc",
            batch_end_callback=[mx.callback.log_train_metric(2),
                                mx.callback.ProgressBar(total=4)],
            epoch_end_callback=mx.callback.do_checkpoint(prefix, period=2))
    text = caplog.text
    assert "Iter[0] Batch[0] Train-accuracy=" in text
    assert "Iter[3] Batch[2] Train-accuracy=" in text
    assert "Iter[0] Batch[1]" not in text
    # ProgressBar(total=4, length 80) at nbatch 2: 40 '=' then 40 '-', 50%
    assert "[" + "=" * 40 + "-" * 40 + "] 50%" in text
    # period 2: epochs 2 and 4 only
    assert sorted(f for f in os.listdir(tmp_path)) == ["cb-0002.params", "cb-0004.params",
                                                       "cb-symbol.json"]


# ---------------------------------------------------------------- (j) the rest of the API
def test_j_properties_rebind_reshape_iter_predict():
    rng = np.random.RandomState(16)
    x = rng.randn(30, 5).astype("float32")
    y = rng.randint(0, 3, 30).astype("float32")
    it = mx.io.NDArrayIter(x, y, 10)
    mod = mx.mod.Module(small_net())
    assert mod.data_names == ["data"] and mod.label_names == ["softmax_label"]
    assert mod.output_names == ["softmax_output"]
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    name, shape = mod.data_shapes[0]  # DataDesc unpacks as (name, shape)
    assert (name, tuple(shape)) == ("data", (10, 5))
    assert mod.data_shapes[0].name == "data"
    assert [(d.name, tuple(d.shape)) for d in mod.label_shapes] == [("softmax_label", (10,))]
    assert [(n, tuple(s)) for n, s in mod.output_shapes] == [("softmax_output", (10, 3))]
    mod.init_params(mx.init.Uniform(0.5))
    arg = {k: v.asnumpy().copy() for k, v in mod.get_params()[0].items()}
    batch = mx.io.DataBatch(data=[mx.nd.array(x[:10])], label=[mx.nd.array(y[:10])])
    mod.forward(batch, is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                               small_net_np(arg, x[:10], y[:10])[0], rtol=1e-5, atol=1e-6)
    # iter_predict, as in the docs
    n = 0
    for preds, i_batch, b in mod.iter_predict(it):
        pred_label = preds[0].asnumpy().argmax(axis=1)
        label = b.label[0].asnumpy().astype("int32")
        sl = slice(i_batch * 10, (i_batch + 1) * 10)
        ref = small_net_np(arg, x[sl], y[sl])[0].argmax(1)
        np.testing.assert_array_equal(pred_label, ref)
        assert label.shape == (10,)
        n += 1
    assert n == 3
    per_batch = mod.predict(it, merge_batches=False)
    assert len(per_batch) == 3 and per_batch[0][0].shape == (10, 3)
    # force_rebind to another batch size keeps the parameters
    mod.bind(data_shapes=[("data", (6, 5))], label_shapes=[("softmax_label", (6,))],
             force_rebind=True)
    assert tuple(mod.data_shapes[0].shape) == (6, 5)
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(v.asnumpy(), arg[k])
    mod.forward(mx.io.DataBatch([mx.nd.array(x[:6])], [mx.nd.array(y[:6])]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                               small_net_np(arg, x[:6], y[:6])[0], rtol=1e-5, atol=1e-6)
    # reshape
    mod.reshape(data_shapes=[("data", (7, 5))], label_shapes=[("softmax_label", (7,))])
    assert [(n_, tuple(s)) for n_, s in mod.output_shapes] == [("softmax_output", (7, 3))]
    mod.forward(mx.io.DataBatch([mx.nd.array(x[:7])], [mx.nd.array(y[:7])]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                               small_net_np(arg, x[:7], y[:7])[0], rtol=1e-5, atol=1e-6)
    # score with a list of metrics
    res = dict(mod.score(it, ["acc", "ce"]))
    prob = small_net_np(arg, x, y)[0]
    assert res["accuracy"] == pytest.approx((prob.argmax(1) == y).mean())
    # init_params(force_init=True) re-draws
    mod.init_params(mx.init.Uniform(0.5), force_init=True)
    assert not np.allclose(mod.get_params()[0]["fc1_weight"].asnumpy(), arg["fc1_weight"])
    # install_monitor takes an mx.mon.Monitor (test_module.py checks what it reports)
    with pytest.raises(TypeError, match="Monitor"):
        mod.install_monitor(object())


# ---------------------------------------------------------------- misuse
def test_misuse_errors_are_typed_and_clear():
    net = small_net()
    # wrong data name (MXNet: ValueError naming the symbol's inputs)
    with pytest.raises(ValueError, match="img"):
        mx.mod.Module(net, data_names=["img"])
    # forgetting bind / init_params / init_optimizer
    mod = mx.mod.Module(net)
    with pytest.raises(RuntimeError, match="bind"):
        mod.init_params()
    with pytest.raises(RuntimeError):
        mod.forward(mx.io.DataBatch([mx.nd.zeros((4, 5))], [mx.nd.zeros((4,))]))
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    with pytest.raises(RuntimeError, match="init_params"):
        mod.forward(mx.io.DataBatch([mx.nd.zeros((4, 5))], [mx.nd.zeros((4,))]))
    with pytest.raises(RuntimeError, match="init_params"):
        mod.get_params()
    mod.init_params()
    mod.forward_backward(mx.io.DataBatch([mx.nd.zeros((4, 5))], [mx.nd.zeros((4,))]))
    with pytest.raises(RuntimeError, match="init_optimizer"):
        mod.update()
    # fit without num_epoch
    with pytest.raises(ValueError, match="num_epoch"):
        mx.mod.Module(net).fit(mx.io.NDArrayIter(np.zeros((4, 5)), np.zeros(4), 2))
    # an iterator whose data name is not the module's ('x' vs 'data')
    it = mx.io.NDArrayIter({"x": np.zeros((4, 5), "float32")}, np.zeros(4), 2)
    with pytest.raises(ValueError, match="data_names"):
        mx.mod.Module(net).fit(it, num_epoch=1)
    # labels of the wrong shape ((N, 2) for SoftmaxOutput's (N,) or (N, 3); MXNet's
    # SoftmaxOutput takes (N,) class indices or (N, 3) probabilities)
    it = mx.io.NDArrayIter(np.zeros((4, 5), "float32"), np.zeros((4, 2), "float32"), 2)
    with pytest.raises((ValueError, mx.MXNetError)) as err:
        mx.mod.Module(net).fit(it, num_epoch=1)
    assert "label" in str(err.value) and "(2, 2)" in str(err.value)
    # data of the wrong width on a bound module
    mod2 = mx.mod.Module(net)
    mod2.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod2.init_params()
    with pytest.raises((ValueError, mx.MXNetError)):
        mod2.forward(mx.io.DataBatch([mx.nd.zeros((4, 6))], [mx.nd.zeros((4,))]))
    # is_train=True / backward on a module bound for inference
    mod3 = mx.mod.Module(net)
    mod3.bind([("data", (4, 5))], [("softmax_label", (4,))], for_training=False)
    mod3.init_params()
    with pytest.raises(RuntimeError, match="for_training"):
        mod3.forward(mx.io.DataBatch([mx.nd.zeros((4, 5))], [mx.nd.zeros((4,))]),
                     is_train=True)
    # the regression tutorial without label_names: the label becomes a "parameter"
    # that no initializer knows (MXNet: ValueError 'Unknown initialization pattern')
    lro = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1),
        label=mx.sym.Variable("lin_reg_label"), name="lro")
    it = mx.io.NDArrayIter(np.zeros((4, 2), "float32"), np.zeros(4, "float32"), 2,
                           label_name="lin_reg_label")
    with pytest.raises(ValueError, match="lin_reg_label"):
        mx.mod.Module(lro).fit(it, num_epoch=1)
