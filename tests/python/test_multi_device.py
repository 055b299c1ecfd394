"""Data parallelism in one process (MXNet's ctx=[gpu(0), gpu(1)] scripts), on cpu(0) / cpu(1):
one parameter copy per device, split_and_load, a forward per slice, Trainer.step summing the
copies' gradients. References: one-device training with the whole batch (another code
path: parameters with one copy), and hand computations in NumPy."""
import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, gluon, np
from ndx.gluon import nn

CTX = [mx.cpu(0), mx.cpu(1)]
TOL = dict(rtol=2e-5, atol=2e-6)


def mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dense(4))
    return net


def cnn():
    # BatchNorm first: its running statistics come from the raw input, which a test can
    # reproduce by hand; the second one normalizes the convolution's output.
    net = nn.HybridSequential()
    net.add(nn.BatchNorm(), nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Flatten(), nn.Dense(3))
    return net


def batches(kind, steps, n=8, seed=0):
    rng = onp.random.RandomState(seed)
    shape = (n, 6) if kind == "mlp" else (n, 2, 6, 6)
    classes = 4 if kind == "mlp" else 3
    return [(rng.normal(size=shape).astype("float32") * 2 + 0.5,
             rng.randint(0, classes, size=n).astype("float32")) for _ in range(steps)]


def built(kind, ctx, hybridize=False, seed=0):
    """A net initialized on ctx, its deferred shapes settled by one predict-mode pass."""
    mx.random.seed(seed)
    net = mlp() if kind == "mlp" else cnn()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    first = ctx[0] if isinstance(ctx, list) else ctx
    x = np.array(batches(kind, 1)[0][0], device=first)
    with autograd.predict_mode():
        net(x)
    if hybridize:
        net.hybridize()
    return net


def copy_params(src, dst):
    """dst's values set from src's first copies (by hand: set_data of NumPy values)."""
    for (k, p), (k2, q) in zip(src.collect_params().items(), dst.collect_params().items()):
        assert k == k2
        q.set_data(np.array(p.list_data()[0].asnumpy()))


def params_np(net, device=None):
    return {k: p.data(device).asnumpy() for k, p in net.collect_params().items()}


def train_multi(net, data, optimizer="sgd", opt_params=None, **trainer_kw):
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), optimizer,
                            opt_params or {"learning_rate": 0.1}, **trainer_kw)
    for x, y in data:
        xs = gluon.utils.split_and_load(np.array(x), CTX)
        ys = gluon.utils.split_and_load(np.array(y), CTX)
        with autograd.record():
            losses = [loss_fn(net(xi), yi) for xi, yi in zip(xs, ys)]
        for loss in losses:
            loss.backward()
        trainer.step(x.shape[0])
    return trainer


def train_single(net, data, optimizer="sgd", opt_params=None, per_slice=False):
    """One device. per_slice: a forward per half of the batch (BatchNorm normalizes each
    device's slice on its own, as MXNet's BatchNorm does), the losses summed."""
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), optimizer, opt_params or {"learning_rate": 0.1})
    for x, y in data:
        x, y = np.array(x), np.array(y)
        with autograd.record():
            if per_slice:
                h = x.shape[0] // 2
                loss = loss_fn(net(x[:h]), y[:h]).sum() + loss_fn(net(x[h:]), y[h:]).sum()
            else:
                loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])
    return trainer


def assert_copies_equal(net):
    for k, p in net.collect_params().items():
        if p.grad_req == "null":
            continue
        first, *rest = [c.asnumpy() for c in p.list_data()]
        for other in rest:
            onp.testing.assert_array_equal(first, other, err_msg=k)


# ---- Parameter ----
def test_parameter_copies():
    p = gluon.Parameter("w", shape=(3, 2), init=mx.init.Uniform())
    p.initialize(ctx=CTX)
    assert p.list_ctx() == CTX and p.list_device() == CTX
    copies = p.list_data()
    assert [c.device for c in copies] == CTX
    onp.testing.assert_array_equal(copies[0].asnumpy(), copies[1].asnumpy())
    assert p.data(mx.cpu(1)) is copies[1] and p.data(ctx=mx.cpu(0)) is copies[0]
    assert [g.device for g in p.list_grad()] == CTX
    assert p.grad(mx.cpu(1)).device == mx.cpu(1)
    # set_data reaches every copy; zero_grad too
    p.set_data(np.ones((3, 2)))
    for c in p.list_data():
        onp.testing.assert_array_equal(c.asnumpy(), onp.ones((3, 2)))
    for g in p.list_grad():
        g[...] = 5
    p.zero_grad()
    for g in p.list_grad():
        assert float(g.sum()) == 0
    # cast: every copy, on its device
    p.cast("float64")
    assert [str(c.dtype) for c in p.list_data()] == ["float64"] * 2
    assert [c.device for c in p.list_data()] == CTX
    assert [str(g.dtype) for g in p.list_grad()] == ["float64"] * 2


def test_parameter_grad_req_null_and_back():
    p = gluon.Parameter("w", shape=(2,), init=mx.init.Zero())
    p.initialize(ctx=CTX)
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad(mx.cpu(1))
    p.grad_req = "write"
    assert [g.device for g in p.list_grad()] == CTX


def test_missing_device_errors():
    p = gluon.Parameter("fc_weight", shape=(2, 2), init=mx.init.One())
    p.initialize(ctx=CTX)
    with pytest.raises(RuntimeError, match=r"Parameter 'fc_weight' was not initialized on "
                                           r"device cpu\(2\)\. It was only initialized on "
                                           r"\[cpu\(0\), cpu\(1\)\]"):
        p.data(mx.cpu(2))
    with pytest.raises(RuntimeError, match="not initialized on device cpu"):
        p.grad(ctx=mx.cpu(3))
    with pytest.raises(ValueError, match="twice"):
        gluon.Parameter("v", shape=(1,)).initialize(ctx=[mx.cpu(0), mx.cpu(0)])


def test_deferred_initialization_makes_every_copy():
    net = nn.Dense(3)
    net.initialize(ctx=CTX)
    assert net.weight.list_ctx() == CTX  # (before the shape is known)
    x = np.ones((2, 5), device=mx.cpu(1))
    out = net(x)
    assert out.device == mx.cpu(1)
    w = net.weight.list_data()
    assert [c.device for c in w] == CTX and w[0].shape == (3, 5)
    onp.testing.assert_array_equal(w[0].asnumpy(), w[1].asnumpy())
    # the forward on cpu(1) used the copies there: same values, computed by hand
    want = onp.ones((2, 5)) @ w[0].asnumpy().T + net.bias.data(mx.cpu(0)).asnumpy()
    onp.testing.assert_allclose(out.asnumpy(), want, **TOL)


def test_forward_uses_the_copy_on_the_input_device():
    net = nn.Dense(2, in_units=2, use_bias=False)
    net.initialize(mx.init.One(), ctx=CTX)
    net.weight.data(mx.cpu(1))[...] = 2  # (copies made different on purpose)
    for hybridize in (False, True):
        net.hybridize(hybridize)
        for dev, scale in ((mx.cpu(0), 1), (mx.cpu(1), 2), (mx.cpu(0), 1)):
            out = net(np.ones((1, 2), device=dev))
            assert out.device == dev
            onp.testing.assert_array_equal(out.asnumpy(), [[2 * scale, 2 * scale]])


def test_input_on_a_device_without_copies_and_mixed_inputs():
    net = mlp()
    net.initialize(ctx=CTX)
    net(np.ones((2, 3), device=mx.cpu(0)))
    with pytest.raises(RuntimeError, match=r"not initialized on device cpu\(2\)"):
        net(np.ones((2, 3), device=mx.cpu(2)))

    class Two(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3, in_units=3)

        def forward(self, x, y):
            return self.dense(x) + y

    two = Two()
    two.initialize(ctx=CTX)
    for hybridize in (False, True):
        two.hybridize(hybridize)
        with pytest.raises(ValueError, match="several devices"):
            two(np.ones((2, 3), device=mx.cpu(0)), np.ones((2, 3), device=mx.cpu(1)))
        out = two(np.ones((2, 3), device=mx.cpu(1)), np.ones((2, 3), device=mx.cpu(1)))
        assert out.device == mx.cpu(1)


def test_split_and_load_puts_each_slice_on_its_device():
    x = np.arange(12).reshape(6, 2)
    parts = gluon.utils.split_and_load(x, CTX)
    assert [p.device for p in parts] == CTX
    onp.testing.assert_array_equal(parts[1].asnumpy(), onp.arange(6, 12).reshape(3, 2))
    parts = gluon.utils.split_and_load(onp.ones((5, 1)), CTX, even_split=False)
    assert [p.shape[0] for p in parts] == [2, 3] and [p.device for p in parts] == CTX


# ---- training: several devices against one device with the whole batch ----
@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("optimizer,opt_params", [
    ("sgd", {"learning_rate": 0.1}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}),
    ("adam", {"learning_rate": 0.01}),
])
def test_mlp_matches_one_device(hybridize, optimizer, opt_params):
    data = batches("mlp", 4)
    multi = built("mlp", CTX, hybridize)
    single = built("mlp", mx.cpu(0), hybridize, seed=1)
    copy_params(multi, single)
    train_multi(multi, data, optimizer, opt_params)
    train_single(single, data, optimizer, opt_params)
    want = params_np(single)
    for dev in CTX:
        got = params_np(multi, dev)
        for k in want:
            onp.testing.assert_allclose(got[k], want[k], err_msg=k, **TOL)
    assert_copies_equal(multi)


@pytest.mark.parametrize("kvstore,update_on_kvstore", [
    ("device", True), ("local", None), ("store_instance", None), ("store_instance", False)])
def test_mlp_through_a_store(kvstore, update_on_kvstore):
    data = batches("mlp", 3)
    multi = built("mlp", CTX)
    single = built("mlp", mx.cpu(0), seed=1)
    copy_params(multi, single)
    kv = mx.kv.create("local") if kvstore == "store_instance" else kvstore
    opt = {"learning_rate": 0.1, "momentum": 0.9}
    trainer = train_multi(multi, data, "sgd", opt, kvstore=kv,
                          update_on_kvstore=update_on_kvstore)
    if update_on_kvstore or (kvstore == "store_instance" and update_on_kvstore is None):
        assert trainer._update_on_kvstore
    train_single(single, data, "sgd", opt)
    want = params_np(single)
    got = params_np(multi, mx.cpu(1))
    for k in want:
        onp.testing.assert_allclose(got[k], want[k], err_msg=k, **TOL)
    assert_copies_equal(multi)


def test_gradient_sum_equals_full_batch_gradient():
    x, y = batches("mlp", 1)[0]
    multi = built("mlp", CTX)
    single = built("mlp", mx.cpu(0), seed=1)
    copy_params(multi, single)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    xs = gluon.utils.split_and_load(np.array(x), CTX)
    ys = gluon.utils.split_and_load(np.array(y), CTX)
    with autograd.record():
        losses = [loss_fn(multi(xi), yi) for xi, yi in zip(xs, ys)]
    for loss in losses:
        loss.backward()
    with autograd.record():
        loss = loss_fn(single(np.array(x)), np.array(y))
    loss.backward()
    trainer = gluon.Trainer(multi.collect_params(), "sgd", {"learning_rate": 0.1})
    # before the reduce each copy holds its half's gradient
    w0 = multi[1].weight
    half_sum = w0.grad(mx.cpu(0)).asnumpy() + w0.grad(mx.cpu(1)).asnumpy()
    trainer.allreduce_grads()
    for k, p in multi.collect_params().items():
        want = single.collect_params()[k].grad().asnumpy()
        for g in p.list_grad():
            assert g.device in CTX
            onp.testing.assert_allclose(g.asnumpy(), want, err_msg=k, **TOL)
    onp.testing.assert_allclose(half_sum, w0.grad(mx.cpu(1)).asnumpy(), **TOL)
    # manual work between allreduce_grads and update (GluonNLP's clipping)
    before = w0.data(mx.cpu(0)).asnumpy()
    gluon.utils.clip_global_norm([p.grad(mx.cpu(0)) for p in multi.collect_params().values()], 1e-3)
    gluon.utils.clip_global_norm([p.grad(mx.cpu(1)) for p in multi.collect_params().values()], 1e-3)
    trainer.update(x.shape[0])
    step = before - w0.data(mx.cpu(1)).asnumpy()
    assert 0 < onp.abs(step).max() <= 0.1 * 1e-3 / x.shape[0] * 1.01
    assert_copies_equal(multi)


@pytest.mark.parametrize("hybridize", [False, True])
def test_cnn_with_batchnorm(hybridize):
    """BatchNorm normalizes each device's slice on its own (MXNet: 'Standard BN ...
    only normalize the data within each device'; SyncBatchNorm is the cross-device one),
    so the reference forwards each half on its own; the running statistics are kept per
    copy, each updated from its device's slices only."""
    data = batches("cnn", 3)
    multi = built("cnn", CTX, hybridize)
    single = built("cnn", mx.cpu(0), hybridize, seed=1)
    copy_params(multi, single)
    train_multi(multi, data)
    train_single(single, data, per_slice=True)
    want = params_np(single)
    for dev in CTX:
        got = params_np(multi, dev)
        for k, p in multi.collect_params().items():
            if p.grad_req != "null":
                onp.testing.assert_allclose(got[k], want[k], err_msg=k, rtol=1e-4, atol=1e-5)
    assert_copies_equal(multi)
    # the first BatchNorm's statistics, by hand: momentum 0.9, biased batch variance, from
    # the built() pass (predict mode: no change) and then each step's slice on that device
    bn = multi[0]
    for k, dev in enumerate(CTX):
        mean, var = onp.zeros(2), onp.ones(2)
        for x, _ in data:
            part = x[4 * k:4 * (k + 1)]
            mean = 0.9 * mean + 0.1 * part.mean(axis=(0, 2, 3))
            var = 0.9 * var + 0.1 * part.var(axis=(0, 2, 3))
        onp.testing.assert_allclose(bn.running_mean.data(dev).asnumpy(), mean, rtol=1e-5,
                                    atol=1e-6)
        onp.testing.assert_allclose(bn.running_var.data(dev).asnumpy(), var, rtol=1e-5,
                                    atol=1e-6)
    assert not onp.allclose(bn.running_mean.data(mx.cpu(0)).asnumpy(),
                            bn.running_mean.data(mx.cpu(1)).asnumpy())


def test_hybridized_and_imperative_agree():
    data = batches("cnn", 2)
    imp = built("cnn", CTX)
    hyb = built("cnn", CTX, hybridize=True, seed=1)
    copy_params(imp, hyb)
    for net in (imp, hyb):  # (running statistics too: copy_params set every copy)
        train_multi(net, data, "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    for dev in CTX:
        a, b = params_np(imp, dev), params_np(hyb, dev)
        for k in a:
            onp.testing.assert_allclose(a[k], b[k], err_msg=k, rtol=1e-4, atol=1e-5)
    # one graph per device, each fed with that device's copies
    devices = {key[-2] for key in hyb._graphs if isinstance(key, tuple)}
    assert devices >= {"cpu(0)", "cpu(1)"}
    x = np.array(data[0][0])
    with autograd.predict_mode():
        for dev in CTX:
            onp.testing.assert_allclose(hyb(x.to_device(dev)).asnumpy(),
                                        imp(x.to_device(dev)).asnumpy(), rtol=1e-4, atol=1e-5)


def test_stale_gradient_check_sees_every_copy():
    multi = built("mlp", CTX)
    trainer = gluon.Trainer(multi.collect_params(), "sgd", {"learning_rate": 0.1})
    x = np.ones((2, 6), device=mx.cpu(1))
    with autograd.record():
        loss = multi(x).sum()
    loss.backward()  # only cpu(1)'s copies got gradients: still fresh
    trainer.step(2)
    assert_copies_equal(multi)
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        trainer.step(2)


# ---- save / load, reset_ctx ----
def test_save_load_round_trip(tmp_path):
    net = built("cnn", CTX)
    train_multi(net, batches("cnn", 2))
    f = str(tmp_path / "net.params")
    net.save_parameters(f)
    # trained weights: the copies are equal, and what is saved; running statistics: their
    # average over the copies (MXNet's Parameter._reduce)
    bn = net[0]
    avg = (bn.running_mean.data(mx.cpu(0)).asnumpy()
           + bn.running_mean.data(mx.cpu(1)).asnumpy()) / 2
    other = cnn()
    other.load_parameters(f, ctx=CTX)
    for k, p in net.collect_params().items():
        q = other.collect_params()[k]
        assert q.list_ctx() == CTX
        a, b = q.list_data()
        onp.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
        if p.grad_req != "null":
            onp.testing.assert_array_equal(a.asnumpy(), p.data(mx.cpu(1)).asnumpy())
    onp.testing.assert_allclose(other[0].running_mean.data(mx.cpu(1)).asnumpy(), avg,
                                rtol=1e-6)
    # into one device, and into an initialized multi-device net (every copy set)
    one = cnn()
    one.load_parameters(f, ctx=mx.cpu(0))
    two = built("cnn", CTX, seed=3)
    two.load_parameters(f)
    x = np.array(batches("cnn", 1)[0][0])
    with autograd.predict_mode():
        want = one(x).asnumpy()
        for net_ in (other, two):
            for dev in CTX:
                onp.testing.assert_allclose(net_(x.to_device(dev)).asnumpy(), want, rtol=1e-5,
                                            atol=1e-6)
    # ParameterDict.save / load
    g = str(tmp_path / "dict.params")
    net.collect_params().save(g)
    three = cnn()
    three.collect_params().load(g, ctx=CTX)
    assert three[1].weight.list_ctx() == CTX


def test_reset_ctx():
    net = built("mlp", mx.cpu(0))
    w = net[0].weight.data().asnumpy()
    net.collect_params().reset_ctx(CTX)
    assert net[0].weight.list_ctx() == CTX
    for c in net[0].weight.list_data():
        onp.testing.assert_array_equal(c.asnumpy(), w)
    out1 = net(np.ones((2, 6), device=mx.cpu(1)))
    assert out1.device == mx.cpu(1)
    net.reset_ctx(mx.cpu(1))  # back to one copy, on cpu(1)
    assert net[0].weight.list_ctx() == [mx.cpu(1)]
    onp.testing.assert_array_equal(net[0].weight.data().asnumpy(), w)
    onp.testing.assert_allclose(net(np.ones((2, 6), device=mx.cpu(1))).asnumpy(),
                                out1.asnumpy(), **TOL)
    net.reset_device(CTX)
    assert [c.device for c in net[1].bias.list_data()] == CTX


def test_trainer_states_and_learning_rate_are_shared():
    data = batches("mlp", 2)
    multi = built("mlp", CTX)
    trainer = train_multi(multi, data, "adam", {"learning_rate": 0.01})
    # one optimizer state per parameter (the first copy's), one update count per step
    assert trainer.optimizer.num_update == 2
    assert len(trainer._states) == len(multi.collect_params())


def test_rnn_layer_on_two_devices():
    layer = gluon.rnn.LSTM(5, input_size=3)
    layer.initialize(ctx=CTX)
    x = np.random.uniform(size=(4, 2, 3))
    for hybridize in (False, True):
        layer.hybridize(hybridize)
        outs = [layer(x.to_device(d)) for d in CTX]
        assert [o.device for o in outs] == CTX
        onp.testing.assert_allclose(outs[0].asnumpy(), outs[1].asnumpy(), **TOL)


def test_deepcopy_keeps_copies():
    import copy
    net = nn.Dense(2, in_units=3)
    net.initialize(mx.init.One(), ctx=CTX)
    dup = copy.deepcopy(net)
    del net
    out = dup(np.ones((1, 3), device=mx.cpu(1)))
    assert out.device == mx.cpu(1)
    onp.testing.assert_array_equal(out.asnumpy(), [[3, 3]])
