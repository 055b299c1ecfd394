"""MXNet 1.x symbolic scripts ported with ``import ndx as mx``: the "Symbol API" and "Training
with the Executor" tutorials, feature extraction and checkpoints. Each script is written the
way MXNet 1.x users wrote it (simple_bind, forward with keyword inputs, backward, an
optimizer's updater over exe.arg_dict / exe.grad_dict, mx.metric.Accuracy on exe.outputs) and
checked against independent references: NumPy forward / backward passes derived by hand,
central differences, and MXNet's documented behaviour (Executor.forward's TypeError for an
unknown name and ValueError for a shape mismatch, reshape's sharing and partial_shaping /
allow_up_sizing rules, copy_params_from's allow_extra_params, BatchNorm's momentum rule
moving = momentum * moving + (1 - momentum) * batch statistic, Xavier's uniform range
sqrt(magnitude / ((fan_in + fan_out) / 2)))."""
import numpy as onp
import pytest

import ndx as mx
from ndx import gluon

PARAMS_SKIP = ("data", "softmax_label")


# ---- NumPy references ----------------------------------------------------------------------
def _softmax(z):
    e = onp.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _mlp_reference(x, label, p):
    """Forward and hand-derived backward of FC(8) -> relu -> FC(C) -> SoftmaxOutput
    (normalization 'null': the gradient of the summed cross-entropy, softmax - one_hot)."""
    a = x @ p["fc1_weight"].T + p["fc1_bias"]
    h = onp.maximum(a, 0)
    z = h @ p["fc2_weight"].T + p["fc2_bias"]
    prob = _softmax(z)
    dz = prob - onp.eye(z.shape[1])[label.astype(int)]
    dh = (dz @ p["fc2_weight"]) * (a > 0)
    grads = {"fc2_weight": dz.T @ h, "fc2_bias": dz.sum(0), "fc1_weight": dh.T @ x,
             "fc1_bias": dh.sum(0), "data": dh @ p["fc1_weight"]}
    return prob, grads


def _mlp(num_classes=4, hidden=8):
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=hidden)
    net = mx.sym.Activation(data=net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(data=net, name="fc2", num_hidden=num_classes)
    return mx.sym.SoftmaxOutput(data=net, name="softmax")


def _clusters(n, rng, num_classes=4, dim=10):
    """Gaussian clusters around 3 * e_k (noise sigma 0.5): neighbouring centres are
    3 * sqrt(2) apart, 4.2 sigma to the midplane each side, so the nearest-centre rule errs
    with probability ~1e-5 per point: an MLP can reach (near) perfect accuracy."""
    label = rng.integers(0, num_classes, n)
    x = rng.normal(0, 0.5, (n, dim)) + 3 * onp.eye(dim)[label]
    return x.astype("float32"), label.astype("float32")


def _init_1x(exe, seed=0):
    """MXNet 1.x's initialization loop over the executor's arrays (inputs skipped)."""
    mx.random.seed(seed)
    init = mx.init.Xavier()
    for name, arr in exe.arg_dict.items():
        if name not in PARAMS_SKIP:
            init(mx.init.InitDesc(name), arr)
    for name, arr in exe.aux_dict.items():
        init(mx.init.InitDesc(name), arr)


def _train(net, exe, train_iter, epochs, lr=0.1):
    """The tutorial loop: forward with keyword inputs, backward, SGD updater, Accuracy."""
    params = [n for n in net.list_arguments() if n not in PARAMS_SKIP]
    opt = mx.optimizer.SGD(learning_rate=lr, momentum=0.9,
                           rescale_grad=1.0 / train_iter.batch_size)
    updater = mx.optimizer.get_updater(opt)
    metric = mx.metric.Accuracy()
    history = []
    for _ in range(epochs):
        train_iter.reset()
        metric.reset()
        for batch in train_iter:
            exe.forward(is_train=True, data=batch.data[0], softmax_label=batch.label[0])
            exe.backward()
            for i, name in enumerate(params):
                updater(i, exe.grad_dict[name], exe.arg_dict[name])
            metric.update(batch.label, exe.outputs)
        history.append(metric.get()[1])
    return history


def _predict(exe, x, batch_size):
    """Inference over x in batches of the executor's size, MXNet 1.x's way: the last, smaller
    batch runs on exe.reshape(...) (which shares the parameters)."""
    out = []
    for start in range(0, len(x), batch_size):
        chunk = x[start:start + batch_size]
        run = exe
        if len(chunk) != batch_size:
            run = exe.reshape(data=chunk.shape, softmax_label=(len(chunk),))
        out.append(run.forward(is_train=False, data=mx.nd.array(chunk))[0].asnumpy())
    return onp.concatenate(out)


# ---- 1. training an MLP and a LeNet-style convnet --------------------------------------------
def test_mlp_tutorial_training_loop_matches_numpy_and_learns():
    rng = onp.random.default_rng(0)
    x, y = _clusters(256, rng)
    xt, yt = _clusters(128, rng)
    net = _mlp()
    bs = 32
    exe = net.simple_bind(mx.cpu(), data=(bs, 10))
    assert exe.arg_dict["softmax_label"].shape == (bs,)
    _init_1x(exe)
    # the first batch: the executor's probabilities and gradients are NumPy's hand-derived
    p0 = {k: v.asnumpy().astype("float64") for k, v in exe.arg_dict.items()}
    probs = exe.forward(is_train=True, data=mx.nd.array(x[:bs]),
                        softmax_label=mx.nd.array(y[:bs]))
    want_prob, want_grad = _mlp_reference(x[:bs].astype("float64"), y[:bs], p0)
    onp.testing.assert_allclose(probs[0].asnumpy(), want_prob, rtol=1e-4, atol=1e-6)
    exe.backward()
    for name, g in want_grad.items():
        onp.testing.assert_allclose(exe.grad_dict[name].asnumpy(), g, rtol=1e-4, atol=1e-5,
                                    err_msg=name)
    onp.testing.assert_array_equal(exe.grad_dict["softmax_label"].asnumpy(), onp.zeros(bs))
    # one SGD step (momentum starts at 0): w - lr * rescale_grad * grad
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9,
                                                        rescale_grad=1.0 / bs))
    updater(0, exe.grad_dict["fc1_weight"], exe.arg_dict["fc1_weight"])
    onp.testing.assert_allclose(exe.arg_dict["fc1_weight"].asnumpy(),
                                p0["fc1_weight"] - 0.1 / bs * want_grad["fc1_weight"],
                                rtol=1e-5, atol=1e-6)
    # training: batches from NDArrayIter, inputs by keyword
    it = mx.io.NDArrayIter(x, y, batch_size=bs, shuffle=False)
    history = _train(net, exe, it, epochs=8)
    assert history[-1] >= 0.97 and history[-1] >= history[0]
    # held-out accuracy (128 points, the last batch smaller: reshape), and the executor's
    # probabilities equal NumPy's with the trained parameters
    prob = _predict(exe, xt[:100], bs)
    assert (prob.argmax(1) == yt[:100]).mean() >= 0.97
    trained = {k: v.asnumpy().astype("float64") for k, v in exe.arg_dict.items()}
    onp.testing.assert_allclose(prob, _mlp_reference(xt[:100].astype("float64"), yt[:100],
                                                     trained)[0], rtol=1e-4, atol=1e-5)


def _bars(n, rng):
    """8x8 images with noise (sigma 0.3): class 0 a vertical bar, class 1 a horizontal one
    (amplitude 1). A 3x3 edge filter tells them apart with a margin of several sigmas."""
    label = rng.integers(0, 2, n)
    x = rng.normal(0, 0.3, (n, 1, 8, 8))
    x[label == 0, 0, :, 3:5] += 1.0
    x[label == 1, 0, 3:5, :] += 1.0
    return x.astype("float32"), label.astype("float32")


def _lenet():
    data = mx.sym.Variable("data")
    h = mx.sym.Convolution(data=data, kernel=(3, 3), num_filter=4, name="conv1")
    h = mx.sym.BatchNorm(data=h, name="bn1")
    h = mx.sym.Activation(data=h, act_type="relu", name="relu1")
    h = mx.sym.Pooling(data=h, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    h = mx.sym.Flatten(data=h, name="flatten")
    h = mx.sym.FullyConnected(data=h, num_hidden=2, name="fc1")
    return mx.sym.SoftmaxOutput(data=h, name="softmax")


def test_lenet_style_convnet_trains_to_high_accuracy():
    rng = onp.random.default_rng(1)
    x, y = _bars(160, rng)
    xt, yt = _bars(64, rng)
    net = _lenet()
    assert net.list_arguments() == ["data", "conv1_weight", "conv1_bias", "bn1_gamma",
                                    "bn1_beta", "fc1_weight", "fc1_bias", "softmax_label"]
    assert net.list_auxiliary_states() == ["bn1_moving_mean", "bn1_moving_var"]
    bs = 16
    # (8 - 3 + 1) = 6, pooled to 3: 4 * 3 * 3 = 36 features
    arg_shapes, out_shapes, aux_shapes = net.infer_shape(data=(bs, 1, 8, 8))
    assert dict(zip(net.list_arguments(), arg_shapes))["fc1_weight"] == (2, 36)
    assert out_shapes == [(bs, 2)] and aux_shapes == [(4,), (4,)]
    reqs = {n: "null" if n in PARAMS_SKIP else "write" for n in net.list_arguments()}
    exe = net.simple_bind(mx.cpu(), grad_req=reqs, data=(bs, 1, 8, 8))
    assert exe.grad_dict["data"] is None and exe.grad_dict["softmax_label"] is None
    _init_1x(exe, seed=1)
    it = mx.io.NDArrayIter(x, y, batch_size=bs, shuffle=False)
    history = _train(net, exe, it, epochs=5)
    assert history[-1] >= 0.95
    # fix_gamma (the legacy default): gamma's gradient is 0 and gamma stays 1
    onp.testing.assert_array_equal(exe.grad_dict["bn1_gamma"].asnumpy(), onp.zeros(4))
    onp.testing.assert_array_equal(exe.arg_dict["bn1_gamma"].asnumpy(), onp.ones(4))
    prob = _predict(exe, xt, bs)
    assert (prob.argmax(1) == yt).mean() >= 0.95


def test_convnet_gradients_match_central_differences():
    """dL/dparam from exe.backward() against (L(p + e) - L(p - e)) / 2e with
    L = -sum log prob[label] (SoftmaxOutput's gradient is that of the summed cross-entropy),
    in float64, BatchNorm in training mode (batch statistics) with a learnable gamma."""
    data = mx.sym.Variable("data")
    h = mx.sym.Convolution(data=data, kernel=(3, 3), num_filter=2, name="conv1")
    h = mx.sym.BatchNorm(data=h, name="bn1", fix_gamma=False)
    h = mx.sym.Activation(data=h, act_type="tanh")
    h = mx.sym.Pooling(data=h, kernel=(2, 2), stride=(2, 2), pool_type="avg")
    h = mx.sym.FullyConnected(data=mx.sym.Flatten(h), num_hidden=3, name="fc1")
    net = mx.sym.SoftmaxOutput(data=h, name="softmax")
    exe = net.simple_bind(mx.cpu(), data=(4, 1, 6, 6), type_dict={"data": "float64"})
    assert exe.arg_dict["conv1_weight"].dtype == onp.float64
    rng = onp.random.default_rng(2)
    for name, arr in exe.arg_dict.items():
        arr[:] = mx.nd.array(rng.normal(size=arr.shape), dtype="float64")
    label = onp.array([0.0, 2.0, 1.0, 2.0])
    exe.arg_dict["softmax_label"][:] = mx.nd.array(label, dtype="float64")

    def loss():
        prob = exe.forward(is_train=True)[0].asnumpy()
        return -onp.log(prob[onp.arange(4), label.astype(int)]).sum()

    loss()
    exe.backward()
    eps = 1e-6
    for name in ("conv1_weight", "conv1_bias", "bn1_gamma", "bn1_beta", "fc1_weight",
                 "data"):
        arr = exe.arg_dict[name]
        got = exe.grad_dict[name].asnumpy().copy()
        flat = arr.asnumpy().reshape(-1)
        for i in rng.choice(flat.size, size=min(4, flat.size), replace=False):
            base = flat.copy()
            for sign in (1, -1):
                base[i] = flat[i] + sign * eps
                arr[:] = mx.np.array(base.reshape(arr.shape))
                if sign == 1:
                    up = loss()
                else:
                    down = loss()
            arr[:] = mx.np.array(flat.reshape(arr.shape))
            onp.testing.assert_allclose(got.reshape(-1)[i], (up - down) / (2 * eps),
                                        rtol=1e-5, atol=1e-7, err_msg=f"{name}[{i}]")


# ---- 2. initialization the 1.x way, copy_params_from -----------------------------------------
def test_xavier_initializes_executor_arrays_by_name_and_copy_params_from():
    net = _lenet()
    exe = net.simple_bind(mx.cpu(), data=(8, 1, 8, 8))
    for arr in exe.arg_dict.values():
        arr[:] = 5.0
    for arr in exe.aux_dict.values():
        arr[:] = 5.0
    _init_1x(exe, seed=3)
    # Xavier (uniform, 'avg', magnitude 3): U(-s, s) with s = sqrt(3 / ((fan_in + fan_out) / 2))
    for name, fan_in, fan_out in (("conv1_weight", 1 * 9, 4 * 9), ("fc1_weight", 36, 2)):
        w = exe.arg_dict[name].asnumpy()
        s = onp.sqrt(3.0 / ((fan_in + fan_out) / 2))
        assert onp.abs(w).max() <= s and onp.abs(w).max() > 0.5 * s, name
        assert len(onp.unique(w)) == w.size, name  # random, not a constant fill
    for name in ("conv1_bias", "bn1_beta", "fc1_bias"):
        onp.testing.assert_array_equal(exe.arg_dict[name].asnumpy(), 0, err_msg=name)
    onp.testing.assert_array_equal(exe.arg_dict["bn1_gamma"].asnumpy(), onp.ones(4))
    onp.testing.assert_array_equal(exe.aux_dict["bn1_moving_mean"].asnumpy(), onp.zeros(4))
    onp.testing.assert_array_equal(exe.aux_dict["bn1_moving_var"].asnumpy(), onp.ones(4))
    # the inputs were skipped and keep their values
    onp.testing.assert_array_equal(exe.arg_dict["data"].asnumpy(), 5.0)
    # copy_params_from: another executor gets the same values (cast to its dtype), and runs
    # the same forward
    arg_params = {k: v.copy() for k, v in exe.arg_dict.items() if k not in PARAMS_SKIP}
    aux_params = {k: v.copy() for k, v in exe.aux_dict.items()}
    other = net.simple_bind(mx.cpu(), data=(8, 1, 8, 8), grad_req="null")
    other.copy_params_from(arg_params, aux_params)
    for name, value in {**arg_params, **aux_params}.items():
        mine = (other.aux_dict if name in aux_params else other.arg_dict)[name]
        onp.testing.assert_array_equal(mine.asnumpy(), value.asnumpy())
        assert mine is not value
    x = onp.random.default_rng(3).normal(size=(8, 1, 8, 8)).astype("float32")
    onp.testing.assert_array_equal(other.forward(data=mx.nd.array(x))[0].asnumpy(),
                                   exe.forward(data=mx.nd.array(x))[0].asnumpy())
    f64 = net.simple_bind(mx.cpu(), data=(8, 1, 8, 8), type_dict={"data": "float64"})
    f64.copy_params_from(arg_params, aux_params)
    assert f64.arg_dict["fc1_weight"].dtype == onp.float64
    onp.testing.assert_allclose(f64.arg_dict["fc1_weight"].asnumpy(),
                                arg_params["fc1_weight"].asnumpy(), rtol=1e-7)


# ---- 3. reshape, grad_req, outputs, BatchNorm's statistics -----------------------------------
def test_reshape_shares_parameters_for_a_smaller_last_batch():
    rng = onp.random.default_rng(4)
    net = _mlp(num_classes=3)
    exe = net.simple_bind(mx.cpu(), data=(6, 10))
    _init_1x(exe, seed=4)
    small = exe.reshape(data=(2, 10), softmax_label=(2,))
    for name in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"):
        assert small.arg_dict[name] is exe.arg_dict[name]        # the same arrays
        assert small.grad_dict[name] is exe.grad_dict[name]      # the same gradient buffers
    assert small.arg_dict["data"].shape == (2, 10)
    assert small.arg_dict["softmax_label"].shape == (2,)
    x, y = _clusters(8, rng, num_classes=3)
    p = {k: v.asnumpy().astype("float64") for k, v in exe.arg_dict.items()}
    # the last 2 of 8 examples through the small executor: NumPy's forward and backward
    out = small.forward(is_train=True, data=mx.nd.array(x[6:]),
                        softmax_label=mx.nd.array(y[6:]))
    want_prob, want_grad = _mlp_reference(x[6:].astype("float64"), y[6:], p)
    onp.testing.assert_allclose(out[0].asnumpy(), want_prob, rtol=1e-4, atol=1e-6)
    small.backward()
    for name in ("fc1_weight", "fc2_bias"):  # (written into the shared buffers)
        onp.testing.assert_allclose(exe.grad_dict[name].asnumpy(), want_grad[name],
                                    rtol=1e-4, atol=1e-5)
    # updating the parameters through one executor updates the other's
    exe.arg_dict["fc2_bias"][:] = exe.arg_dict["fc2_bias"] + 1.0
    onp.testing.assert_array_equal(small.arg_dict["fc2_bias"].asnumpy(),
                                   p["fc2_bias"].astype("float32") + 1.0)
    # the original executor still runs and differentiates its own batch correctly
    p = {k: v.asnumpy().astype("float64") for k, v in exe.arg_dict.items()}
    exe.forward(is_train=True, data=mx.nd.array(x[:6]), softmax_label=mx.nd.array(y[:6]))
    exe.backward()
    want_prob, want_grad = _mlp_reference(x[:6].astype("float64"), y[:6], p)
    onp.testing.assert_allclose(exe.outputs[0].asnumpy(), want_prob, rtol=1e-4, atol=1e-6)
    onp.testing.assert_allclose(exe.grad_dict["fc1_weight"].asnumpy(), want_grad["fc1_weight"],
                                rtol=1e-4, atol=1e-5)
    # MXNet's rules: an input whose shape changes without being given is an error unless
    # partial_shaping; growing needs allow_up_sizing; shapes the net cannot take are errors
    with pytest.raises(ValueError, match="softmax_label"):
        exe.reshape(data=(2, 10))
    part = exe.reshape(partial_shaping=True, data=(2, 10))
    assert part.arg_dict["softmax_label"].shape == (2,)
    assert part.arg_dict["fc1_weight"] is exe.arg_dict["fc1_weight"]
    with pytest.raises(ValueError, match="allow_up_sizing"):
        exe.reshape(data=(12, 10), softmax_label=(12,))
    big = exe.reshape(allow_up_sizing=True, data=(12, 10), softmax_label=(12,))
    assert big.arg_dict["data"].shape == (12, 10)
    assert big.arg_dict["fc2_weight"] is exe.arg_dict["fc2_weight"]
    xb, yb = _clusters(12, rng, num_classes=3)
    p = {k: v.asnumpy().astype("float64") for k, v in exe.arg_dict.items()}
    onp.testing.assert_allclose(
        big.forward(data=mx.nd.array(xb), softmax_label=mx.nd.array(yb))[0].asnumpy(),
        _mlp_reference(xb.astype("float64"), yb, p)[0], rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="weight"):  # 7 features for fc1_weight's 10
        exe.reshape(data=(2, 7), softmax_label=(2,))
    with pytest.raises(ValueError, match="'labels'"):
        exe.reshape(data=(2, 10), labels=(2,))


def test_reshape_keeps_batch_norm_states_shared():
    net = _lenet()
    exe = net.simple_bind(mx.cpu(), data=(8, 1, 8, 8))
    _init_1x(exe, seed=5)
    small = exe.reshape(data=(3, 1, 8, 8), softmax_label=(3,))
    assert small.aux_dict["bn1_moving_mean"] is exe.aux_dict["bn1_moving_mean"]
    x = onp.random.default_rng(5).normal(size=(3, 1, 8, 8)).astype("float32")
    small.forward(is_train=True, data=mx.nd.array(x))
    assert onp.abs(exe.aux_dict["bn1_moving_mean"].asnumpy()).sum() > 0  # moved, shared


def test_grad_req_dict_list_and_add_accumulation():
    """y = FC(x), head gradient G: dW = G.T @ x, db = G.sum(0)."""
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    rng = onp.random.default_rng(6)
    x1, x2 = rng.normal(size=(2, 4, 5)).astype("float32")
    g1, g2 = rng.normal(size=(2, 4, 3)).astype("float32")
    # a dict: names left out get 'null' (MXNet's rule)
    exe = net.simple_bind(mx.cpu(), grad_req={"fc_weight": "write", "fc_bias": "add"},
                          data=(4, 5))
    assert exe.grad_dict["data"] is None
    exe.forward(is_train=True, data=mx.nd.array(x1))
    exe.backward(mx.nd.array(g1))
    exe.forward(is_train=True, data=mx.nd.array(x2))
    exe.backward(mx.nd.array(g2))
    onp.testing.assert_allclose(exe.grad_dict["fc_weight"].asnumpy(), g2.T @ x2, rtol=1e-5,
                                atol=1e-5)  # written
    onp.testing.assert_allclose(exe.grad_dict["fc_bias"].asnumpy(), g1.sum(0) + g2.sum(0),
                                rtol=1e-5, atol=1e-5)  # accumulated
    # a list in list_arguments order
    exe = net.simple_bind(mx.cpu(), grad_req=["write", "null", "add"], data=(4, 5))
    assert exe.grad_dict["fc_weight"] is None
    w = rng.normal(size=(3, 5)).astype("float32")
    exe.arg_dict["fc_weight"][:] = mx.nd.array(w)
    exe.forward(is_train=True, data=mx.nd.array(x1))
    exe.backward(mx.nd.array(g1))
    onp.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), g1 @ w, rtol=1e-5, atol=1e-5)
    # 'add' across two backward calls after one forward (MXNet's graph executor allows a
    # second backward; ndx used to fail with "the graph was freed")
    exe = net.simple_bind(mx.cpu(), grad_req="add", data=(4, 5))
    exe.forward(is_train=True, data=mx.nd.array(x1))
    exe.backward(mx.nd.array(g1))
    exe.backward(mx.nd.array(g2))
    onp.testing.assert_allclose(exe.grad_dict["fc_weight"].asnumpy(), (g1 + g2).T @ x1,
                                rtol=1e-5, atol=1e-5)
    exe.grad_dict["fc_weight"][:] = 0  # the user zeroes 'add' buffers, as in MXNet
    exe.backward(mx.nd.array(g2))
    onp.testing.assert_allclose(exe.grad_dict["fc_weight"].asnumpy(), g2.T @ x1, rtol=1e-5,
                                atol=1e-5)


def test_grad_req_dict_with_a_name_the_symbol_lacks_is_an_error():
    """A misspelt name in a grad_req dict would leave the real parameter at 'null': never
    trained, silently."""
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    with pytest.raises(ValueError, match="fc_wieght"):
        net.simple_bind(mx.cpu(), grad_req={"fc_wieght": "write", "fc_bias": "write"},
                        data=(4, 5))
    with pytest.raises(ValueError, match="fc_wieght"):
        net.bind(mx.cpu(), {"data": mx.nd.ones((4, 5)), "fc_weight": mx.nd.ones((3, 5)),
                            "fc_bias": mx.nd.ones(3)}, grad_req={"fc_wieght": "write"})
    # auxiliary states may be named ('null' is all they get)
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn")
    exe = bn.simple_bind(mx.cpu(), grad_req={"bn_beta": "write", "bn_moving_mean": "null"},
                         data=(4, 2))
    assert exe.grad_dict["bn_beta"] is not None and exe.grad_dict["bn_gamma"] is None


def test_outputs_are_the_executors_arrays_updated_by_each_forward():
    """MXNet's exe.outputs are bound arrays: a reference taken after one forward shows the
    next forward's result (feature-extraction loops read them so)."""
    net = mx.sym.Activation(mx.sym.Variable("data"), act_type="relu", name="relu")
    exe = net.simple_bind(mx.cpu(), data=(2, 3))
    a = onp.array([[1.0, -2.0, 3.0], [-1.0, 0.5, 0.0]], "float32")
    outs = exe.forward(data=mx.nd.array(a))
    held = exe.outputs[0]
    assert outs[0] is held and list(exe.output_dict) == ["relu_output"]
    exe.forward(data=mx.nd.array(-a))
    onp.testing.assert_array_equal(held.asnumpy(), onp.maximum(-a, 0))
    assert exe.output_dict["relu_output"] is held


def test_batch_norm_moving_statistics_follow_is_train():
    """MXNet: training uses the batch's mean and (biased) variance and moves the auxiliary
    states by moving = momentum * moving + (1 - momentum) * batch; inference uses the moving
    statistics and leaves them alone."""
    net = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn", momentum=0.8, fix_gamma=False,
                           eps=1e-3)
    exe = net.simple_bind(mx.cpu(), data=(6, 3, 2, 2))
    _init_1x(exe)
    gamma = onp.array([1.5, 0.5, 2.0], "float32")
    beta = onp.array([0.1, -0.2, 0.3], "float32")
    exe.arg_dict["bn_gamma"][:] = mx.nd.array(gamma)
    exe.arg_dict["bn_beta"][:] = mx.nd.array(beta)
    mm = onp.array([0.5, -1.0, 2.0], "float32")
    mv = onp.array([2.0, 0.5, 1.0], "float32")
    exe.aux_dict["bn_moving_mean"][:] = mx.nd.array(mm)
    exe.aux_dict["bn_moving_var"][:] = mx.nd.array(mv)
    x = onp.random.default_rng(7).normal(1.0, 2.0, (6, 3, 2, 2)).astype("float32")
    c = lambda v: v[None, :, None, None]  # noqa: E731
    # inference: moving statistics, unchanged
    y = exe.forward(is_train=False, data=mx.nd.array(x))[0].asnumpy()
    onp.testing.assert_allclose(y, (x - c(mm)) / onp.sqrt(c(mv) + 1e-3) * c(gamma) + c(beta),
                                rtol=1e-4, atol=1e-5)
    onp.testing.assert_array_equal(exe.aux_dict["bn_moving_mean"].asnumpy(), mm)
    onp.testing.assert_array_equal(exe.aux_dict["bn_moving_var"].asnumpy(), mv)
    # training: batch statistics, states moved
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    y = exe.forward(is_train=True)[0].asnumpy()
    onp.testing.assert_allclose(y, (x - c(mean)) / onp.sqrt(c(var) + 1e-3) * c(gamma) +
                                c(beta), rtol=1e-4, atol=1e-4)
    onp.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(),
                                0.8 * mm + 0.2 * mean, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(exe.aux_dict["bn_moving_var"].asnumpy(),
                                0.8 * mv + 0.2 * var, rtol=1e-5, atol=1e-6)


# ---- 4. checkpoints --------------------------------------------------------------------------
def _mlp_bn():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=8)
    net = mx.sym.BatchNorm(data=net, name="bn1")
    net = mx.sym.Activation(data=net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(data=net, name="fc2", num_hidden=4)
    return mx.sym.SoftmaxOutput(data=net, name="softmax")


def test_checkpoint_round_trip_gives_identical_predictions(tmp_path):
    rng = onp.random.default_rng(8)
    x, y = _clusters(128, rng)
    xt, _ = _clusters(20, rng)
    net = _mlp_bn()
    exe = net.simple_bind(mx.cpu(), data=(16, 10))
    _init_1x(exe, seed=8)
    _train(net, exe, mx.io.NDArrayIter(x, y, batch_size=16), epochs=3)
    want = _predict(exe, xt, 16)
    arg_params = {k: v for k, v in exe.arg_dict.items() if k not in PARAMS_SKIP}
    aux_params = exe.aux_dict
    prefix = str(tmp_path / "mlp")
    mx.model.save_checkpoint(prefix, 3, net, arg_params, aux_params)
    assert (tmp_path / "mlp-symbol.json").exists() and (tmp_path / "mlp-0003.params").exists()
    sym, arg2, aux2 = mx.model.load_checkpoint(prefix, 3)
    assert sym.list_arguments() == net.list_arguments()
    assert sorted(arg2) == sorted(arg_params) and sorted(aux2) == ["bn1_moving_mean",
                                                                   "bn1_moving_var"]
    # inference by simple_bind + copy_params_from
    inf = sym.simple_bind(mx.cpu(), data=(20, 10), grad_req="null")
    inf.copy_params_from(arg2, aux2)
    got = inf.forward(is_train=False, data=mx.nd.array(xt))[0].asnumpy()
    onp.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    # by gluon.SymbolBlock.imports: as in MXNet, the loss head's label is a graph input the
    # file lacks, so it must be named as an input (or the head cut off, below)
    with pytest.raises(ValueError, match="softmax_label"):
        gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0003.params")
    blk = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data", "softmax_label"],
                                    prefix + "-0003.params")
    got = blk(mx.np.array(xt), mx.np.zeros(20)).asnumpy()
    onp.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    # deployment: the logits (the head cut off with get_internals) saved and imported
    logits = sym.get_internals()["fc2_output"]
    mx.model.save_checkpoint(prefix + "-deploy", 0, logits, arg2, aux2)
    blk = gluon.SymbolBlock.imports(prefix + "-deploy-symbol.json", ["data"],
                                    prefix + "-deploy-0000.params")
    onp.testing.assert_allclose(_softmax(blk(mx.np.array(xt)).asnumpy()), want, rtol=1e-5,
                                atol=1e-6)


# ---- 5. feature extraction -------------------------------------------------------------------
def test_feature_extraction_with_get_internals(tmp_path):
    rng = onp.random.default_rng(9)
    net = _mlp(num_classes=3)
    exe = net.simple_bind(mx.cpu(), data=(5, 10))
    _init_1x(exe, seed=9)
    arg_params = {k: v.copy() for k, v in exe.arg_dict.items() if k not in PARAMS_SKIP}
    internals = net.get_internals()
    assert "relu1_output" in internals.list_outputs()
    feat_sym = internals["relu1_output"]
    assert feat_sym.list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    x = rng.normal(size=(5, 10)).astype("float32")
    p = {k: v.asnumpy() for k, v in arg_params.items()}
    want = onp.maximum(x @ p["fc1_weight"].T + p["fc1_bias"], 0)
    # an executor over the internal output: the full net's params need allow_extra_params
    fexe = feat_sym.simple_bind(mx.cpu(), data=(5, 10), grad_req="null")
    with pytest.raises(ValueError, match="fc2_"):
        fexe.copy_params_from(arg_params)
    fexe.copy_params_from(arg_params, allow_extra_params=True)
    onp.testing.assert_allclose(fexe.forward(data=mx.nd.array(x))[0].asnumpy(), want,
                                rtol=1e-5, atol=1e-6)
    # a SymbolBlock over it, parameters loaded from a checkpoint (extra ones ignored)
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 1, net, arg_params, {})
    blk = gluon.SymbolBlock(feat_sym, mx.sym.var("data"))
    blk.collect_params().load(prefix + "-0001.params", ignore_extra=True)
    onp.testing.assert_allclose(blk(mx.np.array(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    # several internal outputs at once
    group = mx.sym.Group([internals["fc1_output"], internals["relu1_output"]])
    gexe = group.simple_bind(mx.cpu(), data=(5, 10), grad_req="null")
    gexe.copy_params_from(arg_params, allow_extra_params=True)
    fc1, relu1 = gexe.forward(data=mx.nd.array(x))
    onp.testing.assert_allclose(fc1.asnumpy(), x @ p["fc1_weight"].T + p["fc1_bias"],
                                rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(relu1.asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert sorted(gexe.output_dict) == ["fc1_output", "relu1_output"]


# ---- 6. bad input ----------------------------------------------------------------------------
def test_forward_rejects_unknown_names_and_wrong_shapes():
    exe = _mlp().simple_bind(mx.cpu(), data=(4, 10))
    _init_1x(exe)
    good = onp.ones((4, 10), "float32")
    # a misspelt input would otherwise run on stale data: MXNet's TypeError
    with pytest.raises(TypeError, match="'dat'"):
        exe.forward(is_train=True, dat=mx.nd.array(good))
    # a batch of another size: MXNet's ValueError, never a broadcast
    with pytest.raises(ValueError, match=r"'data'.*\(4, 10\).*\(1, 10\)"):
        exe.forward(data=mx.nd.ones((1, 10)))
    with pytest.raises(ValueError, match=r"'data'.*\(3, 10\)"):
        exe.forward(data=mx.nd.ones((3, 10)))
    with pytest.raises(ValueError, match="softmax_label"):
        exe.forward(data=mx.nd.array(good), softmax_label=mx.nd.ones((4, 1)))
    # nothing was copied by the failed calls (all names are checked first)
    onp.testing.assert_array_equal(exe.arg_dict["data"].asnumpy(), 0)
    exe.forward(data=mx.nd.array(good))
    onp.testing.assert_array_equal(exe.arg_dict["data"].asnumpy(), good)


def test_backward_needs_a_forward_and_matching_head_gradients():
    exe = _mlp().simple_bind(mx.cpu(), data=(4, 10))
    with pytest.raises(ValueError, match="forward"):
        exe.backward()
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    exe = net.simple_bind(mx.cpu(), data=(4, 5))
    exe.forward(is_train=True)
    with pytest.raises(ValueError, match=r"\(1, 3\).*\(4, 3\)"):
        exe.backward(mx.nd.ones((1, 3)))


def test_copy_params_from_names_and_shapes():
    exe = _mlp().simple_bind(mx.cpu(), data=(4, 10))
    _init_1x(exe)
    w = exe.arg_dict["fc1_weight"].asnumpy()
    b2 = exe.arg_dict["fc2_bias"].asnumpy()
    # an extra name: ValueError naming it, nothing copied
    with pytest.raises(ValueError, match="'fc3_weight'"):
        exe.copy_params_from({"fc1_weight": mx.nd.zeros((8, 10)),
                              "fc3_weight": mx.nd.zeros((2, 2))})
    onp.testing.assert_array_equal(exe.arg_dict["fc1_weight"].asnumpy(), w)
    with pytest.raises(ValueError, match="'bn_moving_mean'"):
        exe.copy_params_from({}, {"bn_moving_mean": mx.nd.zeros(8)})
    # allow_extra_params skips it; names left out keep their values (MXNet's behaviour)
    exe.copy_params_from({"fc1_weight": mx.nd.zeros((8, 10)),
                          "fc3_weight": mx.nd.zeros((2, 2))}, allow_extra_params=True)
    onp.testing.assert_array_equal(exe.arg_dict["fc1_weight"].asnumpy(), 0)
    onp.testing.assert_array_equal(exe.arg_dict["fc2_bias"].asnumpy(), b2)
    # a wrong shape is an error naming the parameter, not a broadcast
    with pytest.raises(ValueError, match=r"'fc2_bias'.*\(1,\).*\(4,\)"):
        exe.copy_params_from({"fc2_bias": mx.nd.ones((1,))})
    with pytest.raises(ValueError, match="'fc1_weight'"):
        exe.copy_params_from({"fc1_weight": mx.nd.ones((8, 9))})
    onp.testing.assert_array_equal(exe.arg_dict["fc2_bias"].asnumpy(), b2)


def test_padded_and_rolled_over_batches_are_ndarrays_like_the_others():
    data, label = onp.zeros((10, 3), "float32"), onp.arange(10.0)
    for handle in ("pad", "roll_over"):
        it = mx.io.NDArrayIter(data, label, batch_size=4, last_batch_handle=handle)
        for _ in range(2):  # (roll_over's second epoch starts with the rolled-over rows)
            batches = list(it)
            kinds = {type(a).__name__ for b in batches for a in (b.data[0], b.label[0])}
            it.reset()
            assert kinds == {"NDArray"}, (handle, kinds)


def test_initializer_refuses_names_of_no_known_pattern():
    """MXNet's Initializer.__call__(desc, arr): 'data' matches no pattern -> ValueError."""
    arr = mx.nd.full((4, 5), 5.0)
    with pytest.raises(ValueError, match="data"):
        mx.init.Xavier()(mx.init.InitDesc("data"), arr)
    onp.testing.assert_array_equal(arr.asnumpy(), onp.full((4, 5), 5.0))
    mx.init.Xavier()(mx.init.InitDesc("fc_bias"), arr)
    onp.testing.assert_array_equal(arr.asnumpy(), onp.zeros((4, 5)))
