"""Review tests of the module API (mx.mod.Module / BucketingModule). Every reference is an
independent NumPy re-computation of the forward pass, of SoftmaxOutput's gradient
(softmax - one_hot, summed over the batch) and of MXNet's SGD rule (rescale_grad = 1 / bound
batch size; wd only on '*_weight')."""
import numpy as onp
import pytest

import ndx as mx
from ndx import np

LR = 0.5


def _net(hidden=3):
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, name="fc1", num_hidden=hidden)
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _data(n=10, d=5, classes=3, seed=0):
    rng = onp.random.default_rng(seed)
    return (rng.normal(size=(n, d)).astype("float32"),
            rng.integers(0, classes, n).astype("float32"))


def _softmax(p, x):
    z = x.astype("float64") @ p["fc1_weight"].T + p["fc1_bias"]
    e = onp.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _grads(p, x, y):
    """SoftmaxOutput's gradients of fc1 (summed over the batch)."""
    dz = _softmax(p, x)
    dz[onp.arange(len(y)), y.astype(int)] -= 1
    return {"fc1_weight": dz.T @ x.astype("float64"), "fc1_bias": dz.sum(0)}


def _params(mod):
    return {k: v.asnumpy().astype("float64") for k, v in mod.get_params()[0].items()}


def _bound(context=None, batch=10, **bind_kwargs):
    mod = mx.mod.Module(_net(), context=context or mx.cpu())
    mod.bind([("data", (batch, 5))], [("softmax_label", (batch,))], **bind_kwargs)
    mod.init_params(mx.init.Xavier())
    return mod


def _batch(x, y=None):
    return mx.io.DataBatch([np.array(x)], None if y is None else [np.array(y)])


# ---- 1. force_rebind dropped the updates made since the last get_params ----
def test_force_rebind_for_inference_keeps_the_trained_parameters():
    x, y = _data()
    mod = _bound()
    p = _params(mod)
    mod.init_optimizer(optimizer_params={"learning_rate": LR})
    mod.forward_backward(_batch(x, y))
    mod.update()
    g = _grads(p, x, y)
    p = {k: p[k] - LR * g[k] / 10 for k in p}
    # switch to inference (no get_params in between): the trained values must carry over
    mod.bind([("data", (10, 5))], None, for_training=False, force_rebind=True)
    out = mod.predict(mx.io.NDArrayIter(x, None, batch_size=10)).asnumpy()
    onp.testing.assert_allclose(out, _softmax(p, x), rtol=1e-5, atol=1e-6)
    got = _params(mod)
    for k in p:
        onp.testing.assert_allclose(got[k], p[k], rtol=1e-5, atol=1e-6)


def test_force_rebind_for_training_continues_from_the_trained_parameters():
    x, y = _data()
    mod = _bound()
    p = _params(mod)
    mod.init_optimizer(optimizer_params={"learning_rate": LR})
    for _ in range(2):
        mod.forward_backward(_batch(x, y))
        mod.update()
        g = _grads(p, x, y)
        p = {k: p[k] - LR * g[k] / 10 for k in p}
        mod.bind([("data", (10, 5))], [("softmax_label", (10,))], force_rebind=True)
    got = _params(mod)
    for k in p:
        onp.testing.assert_allclose(got[k], p[k], rtol=1e-5, atol=1e-6)


# ---- 2. the updater of a second CPU device crashed (rates made on cpu(0)) ----
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_updater_runs_on_a_second_cpu_device(momentum):
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=momentum, wd=0.0)
    upd = mx.optimizer.get_updater(opt)
    w = np.array(onp.ones((2, 3), "float32"), device=mx.cpu(1))
    g = np.array(onp.full((2, 3), 2.0, "float32"), device=mx.cpu(1))
    upd([0], [g], [w])
    onp.testing.assert_allclose(w.asnumpy(), onp.full((2, 3), 1 - 0.1 * 2.0), rtol=1e-6)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_two_devices_without_kvstore_each_update_their_own_copy(momentum):
    """kvstore=None on two devices (MXNet: no gradient aggregation): each device steps on
    the gradient of its half of the batch; get_params averages the copies."""
    x, y = _data()
    mod = _bound(context=[mx.cpu(0), mx.cpu(1)])
    p0 = _params(mod)
    mod.init_optimizer(kvstore=None, optimizer="sgd",
                       optimizer_params={"learning_rate": LR, "momentum": momentum})
    copies = []
    for half in (slice(0, 5), slice(5, 10)):
        p = dict(p0)
        mom = {k: onp.zeros_like(v) for k, v in p.items()}
        for _ in range(2):
            g = _grads(p, x[half], y[half])
            for k in p:
                mom[k] = momentum * mom[k] - LR * g[k] / 10
                p[k] = p[k] + mom[k]
        copies.append(p)
    for _ in range(2):
        mod.forward_backward(_batch(x, y))
        mod.update()
    got = _params(mod)
    for k in p0:
        onp.testing.assert_allclose(got[k], (copies[0][k] + copies[1][k]) / 2, rtol=1e-5,
                                    atol=1e-6)


def test_two_devices_without_kvstore_resume_from_checkpoint_exactly(tmp_path):
    x, y = _data(40)
    ctx = [mx.cpu(0), mx.cpu(1)]
    op = {"learning_rate": 0.1, "momentum": 0.9}
    it = mx.io.NDArrayIter(x, y, batch_size=10)
    mod = mx.mod.Module(_net(), context=ctx)
    mod.fit(it, num_epoch=1, optimizer_params=op, initializer=mx.init.Xavier(), kvstore=None)
    mod.save_checkpoint(str(tmp_path / "m"), 1, save_optimizer_states=True)
    mod.fit(it, num_epoch=3, begin_epoch=1, optimizer_params=op, kvstore=None)
    resumed = mx.mod.Module.load(str(tmp_path / "m"), 1, load_optimizer_states=True,
                                 context=ctx)
    resumed.fit(it, num_epoch=3, begin_epoch=1, optimizer_params=op, kvstore=None)
    ref, got = _params(mod), _params(resumed)
    for k in ref:
        onp.testing.assert_allclose(got[k], ref[k], rtol=1e-6, atol=1e-7)


# ---- 3. BucketingModule.save_checkpoint wrote stale parameters ----
def _sym_gen(key):
    return _net(), ("data",), ("softmax_label",)


def test_bucketing_save_checkpoint_after_training_on_another_bucket(tmp_path):
    x, y = _data()
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=10)
    mod.bind([("data", (10, 5))], [("softmax_label", (10,))])
    mod.init_params(mx.init.Xavier())
    p = _params(mod)
    mod.init_optimizer(optimizer_params={"learning_rate": LR})
    batch = mx.io.DataBatch([np.array(x[:4])], [np.array(y[:4])], bucket_key=4,
                            provide_data=[mx.io.DataDesc("data", (4, 5))],
                            provide_label=[mx.io.DataDesc("softmax_label", (4,))])
    mod.forward_backward(batch)
    mod.update()
    g = _grads(p, x[:4], y[:4])
    p = {k: p[k] - LR * g[k] / 10 for k in p}  # (rescale_grad: the default bucket's 1/10)
    mod.save_checkpoint(str(tmp_path / "b"), 1)
    _, args, _ = mx.model.load_checkpoint(str(tmp_path / "b"), 1)
    for k in p:
        onp.testing.assert_allclose(args[k].asnumpy(), p[k], rtol=1e-5, atol=1e-6)


def test_module_checkpoint_callback_of_a_bucketing_module(tmp_path):
    x, y = _data()
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=10)
    mod.bind([("data", (10, 5))], [("softmax_label", (10,))])
    mod.init_params(mx.init.Xavier())
    p = _params(mod)
    mod.init_optimizer(optimizer_params={"learning_rate": LR})
    batch = mx.io.DataBatch([np.array(x[:4])], [np.array(y[:4])], bucket_key=4,
                            provide_data=[mx.io.DataDesc("data", (4, 5))],
                            provide_label=[mx.io.DataDesc("softmax_label", (4,))])
    mod.forward_backward(batch)
    mod.update()
    g = _grads(p, x[:4], y[:4])
    p = {k: p[k] - LR * g[k] / 10 for k in p}
    mx.callback.module_checkpoint(mod, str(tmp_path / "c"))(0)
    args, _ = mx.model.load_params(str(tmp_path / "c"), 1)
    for k in p:
        onp.testing.assert_allclose(args[k].asnumpy(), p[k], rtol=1e-5, atol=1e-6)


# ---- 4. after a label-less forward of another size, a training batch's labels were ignored
def test_training_after_predict_of_an_array_uses_the_batch_labels():
    x, y = _data()
    mod = _bound()
    p = _params(mod)
    mod.init_optimizer(optimizer_params={"learning_rate": LR})
    pred = mod.predict(x[:7]).asnumpy()  # (one label-less forward of 7 rows)
    onp.testing.assert_allclose(pred, _softmax(p, x[:7]), rtol=1e-5, atol=1e-6)
    mod.forward_backward(_batch(x[:7], y[:7]))
    mod.update()
    g = _grads(p, x[:7], y[:7])
    p = {k: p[k] - LR * g[k] / 10 for k in p}
    got = _params(mod)
    for k in p:
        onp.testing.assert_allclose(got[k], p[k], rtol=1e-5, atol=1e-6)


def test_training_after_explicit_reshape_without_labels_uses_the_batch_labels():
    x, y = _data()
    mod = _bound()
    p = _params(mod)
    mod.init_optimizer(optimizer_params={"learning_rate": LR})
    mod.reshape([("data", (6, 5))])  # (MXNet's reshape for prediction: no label shapes)
    mod.forward_backward(_batch(x[:6], y[:6]))
    mod.update()
    g = _grads(p, x[:6], y[:6])
    p = {k: p[k] - LR * g[k] / 10 for k in p}
    got = _params(mod)
    for k in p:
        onp.testing.assert_allclose(got[k], p[k], rtol=1e-5, atol=1e-6)


# ---- checked and fine (kept as regression tests) ----
@pytest.mark.parametrize("ctx", [[mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]])
def test_smaller_batches_reshape_and_train_as_numpy(ctx):
    x, y = _data(31)
    mod = _bound(context=ctx)
    p = _params(mod)
    mod.init_optimizer(optimizer_params={"learning_rate": LR})
    for part in (slice(0, 10), slice(10, 17), slice(17, 27), slice(27, 31)):
        mod.forward_backward(_batch(x[part], y[part]))
        onp.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), _softmax(p, x[part]),
                                    rtol=1e-5, atol=1e-6)
        mod.update()
        g = _grads(p, x[part], y[part])
        p = {k: p[k] - LR * g[k] / 10 for k in p}
    got = _params(mod)
    for k in p:
        onp.testing.assert_allclose(got[k], p[k], rtol=1e-5, atol=1e-6)


def test_lr_mult_wd_mult_from_attr_scope_on_two_devices():
    data = mx.sym.Variable("data")
    with mx.AttrScope(lr_mult="0.5"):
        fc = mx.sym.FullyConnected(data, name="fc1", num_hidden=3)
    w2 = mx.sym.Variable("fc2_weight", wd_mult=3.0)
    # (lr_mult on the layer reaches only the variables it creates: fc2_bias, as in MXNet)
    fc2 = mx.sym.FullyConnected(fc, weight=w2, name="fc2", num_hidden=3, lr_mult=0)
    net = mx.sym.SoftmaxOutput(fc2, name="softmax")
    x, y = _data()
    for ctx, kv in (([mx.cpu(0)], "local"), ([mx.cpu(0), mx.cpu(1)], "local"),
                    ([mx.cpu(0), mx.cpu(1)], "device")):
        mod = mx.mod.Module(net, context=ctx)
        mod.bind([("data", (10, 5))], [("softmax_label", (10,))])
        mod.init_params(mx.init.Xavier())
        P = _params(mod)
        mod.init_optimizer(kvstore=kv, optimizer_params={"learning_rate": 0.1, "wd": 0.1})
        mod.forward_backward(_batch(x, y))
        mod.update()
        h = x @ P["fc1_weight"].T + P["fc1_bias"]
        z = h @ P["fc2_weight"].T + P["fc2_bias"]
        pr = onp.exp(z - z.max(1, keepdims=True))
        pr /= pr.sum(1, keepdims=True)
        pr[onp.arange(10), y.astype(int)] -= 1
        g = {"fc2_weight": pr.T @ h, "fc2_bias": pr.sum(0)}
        dh = pr @ P["fc2_weight"]
        g.update({"fc1_weight": dh.T @ x, "fc1_bias": dh.sum(0)})
        lrm = {"fc1_weight": 0.5, "fc1_bias": 0.5, "fc2_weight": 1.0, "fc2_bias": 0.0}
        wdm = {"fc1_weight": 1.0, "fc1_bias": 0.0, "fc2_weight": 3.0, "fc2_bias": 0.0}
        got = _params(mod)
        for k in P:
            ref = P[k] - 0.1 * lrm[k] * (g[k] / 10 + 0.1 * wdm[k] * P[k])
            onp.testing.assert_allclose(got[k], ref, rtol=1e-5, atol=1e-6)
