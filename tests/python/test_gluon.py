"""Gluon against hand computations with NumPy: layers, losses, optimizer steps, Trainer,
parameter files (round trip, corrupted and truncated files), initializers and data loading."""
import os
import warnings

import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np, npx
from strict_checks import assert_almost_equal


def _dense(units, in_units, w, b, **kw):
    layer = gluon.nn.Dense(units, in_units=in_units, **kw)
    layer.initialize()
    layer.weight.set_data(w)
    if b is not None:
        layer.bias.set_data(b)
    return layer


def test_dense_forward_backward_and_deferred_shapes():
    rng = onp.random.default_rng(0)
    x = rng.normal(size=(4, 2, 3)).astype(onp.float32)
    w = rng.normal(size=(5, 6)).astype(onp.float32)
    b = rng.normal(size=(5,)).astype(onp.float32)
    layer = gluon.nn.Dense(5)  # in_units inferred from the first input
    layer.initialize()
    with pytest.raises(gluon.DeferredInitializationError):
        layer.weight.data()
    layer(np.array(x))
    assert layer.weight.shape == (5, 6)
    layer.weight.set_data(w)
    layer.bias.set_data(b)
    xa = np.array(x)
    with autograd.record():
        out = layer(xa)
        loss = (out * out).sum()
    loss.backward()
    ref = x.reshape(4, 6) @ w.T + b
    assert_almost_equal(out, ref, rtol=1e-5, atol=1e-5)
    assert_almost_equal(layer.weight.grad(), 2 * ref.T @ x.reshape(4, 6), rtol=1e-4, atol=1e-4)
    assert_almost_equal(layer.bias.grad(), 2 * ref.sum(axis=0), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError):
        gluon.nn.Dense(0)
    with pytest.raises(ValueError, match="activation"):
        gluon.nn.Dense(3, activation="swish")


def test_sequential_collects_structured_params_and_activations():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(3, activation="relu", in_units=2), gluon.nn.Dense(1, in_units=3))
    net.initialize(ndx.initializer.One())
    assert list(net.collect_params()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    x = onp.array([[1.0, -2.0], [0.5, 0.5]], dtype=onp.float32)
    h = onp.maximum(x @ onp.ones((3, 2)).T, 0)  # bias initialized to zeros by default
    assert_almost_equal(net(np.array(x)), h @ onp.ones((1, 3)).T)
    for act, f in [("sigmoid", lambda v: 1 / (1 + onp.exp(-v))), ("tanh", onp.tanh),
                   ("softrelu", lambda v: onp.log1p(onp.exp(v)))]:
        assert_almost_equal(gluon.nn.Activation(act)(np.array(x)), f(x), rtol=1e-5, atol=1e-6)


def test_losses_match_numpy():
    rng = onp.random.default_rng(1)
    pred = rng.normal(size=(4, 3)).astype(onp.float32)
    target = rng.normal(size=(4, 3)).astype(onp.float32)
    labels = onp.array([0, 2, 1, 2])
    assert_almost_equal(gluon.loss.L2Loss()(np.array(pred), np.array(target)),
                        (0.5 * (pred - target) ** 2).mean(axis=1), rtol=1e-5)
    assert_almost_equal(gluon.loss.L1Loss()(np.array(pred), np.array(target)),
                        onp.abs(pred - target).mean(axis=1), rtol=1e-5)
    logp = pred - pred.max(axis=1, keepdims=True)
    logp = logp - onp.log(onp.exp(logp).sum(axis=1, keepdims=True))
    ce = gluon.loss.SoftmaxCrossEntropyLoss()(np.array(pred), np.array(labels))
    assert_almost_equal(ce, -logp[onp.arange(4), labels], rtol=1e-5, atol=1e-6)
    z = (target > 0).astype(onp.float32)
    bce = onp.maximum(pred, 0) - pred * z + onp.log1p(onp.exp(-onp.abs(pred)))
    assert_almost_equal(gluon.loss.SigmoidBinaryCrossEntropyLoss()(np.array(pred), np.array(z)),
                        bce.mean(axis=1), rtol=1e-5, atol=1e-6)
    # The gradient of softmax cross entropy is softmax - onehot.
    p = np.array(pred)
    p.attach_grad()
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(p, np.array(labels)).sum()
    loss.backward()
    soft = onp.exp(logp)
    soft[onp.arange(4), labels] -= 1
    assert_almost_equal(p.grad, soft, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,params", [
    ("sgd", {"learning_rate": 0.1}), ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
    ("adam", {"learning_rate": 0.01}), ("adamw", {"learning_rate": 0.01, "wd": 0.1})])
def test_optimizer_steps_match_hand_computation(name, params):
    w0 = onp.array([1.0, -2.0, 0.5])
    grads = [onp.array([0.4, -0.2, 1.0]), onp.array([0.1, 0.3, -0.5])]
    p = gluon.Parameter("w", shape=(3,), dtype="float64")
    p.initialize()
    p.set_data(w0)
    trainer = gluon.Trainer([p], name, params)
    w, m, v = w0.copy(), onp.zeros(3), onp.zeros(3)
    lr, wd = params["learning_rate"], params.get("wd", 0.0)
    for t, g in enumerate(grads, start=1):
        p.data().grad[...] = g * 2  # Trainer.step(2) divides by the batch size
        trainer.step(2)
        if name == "sgd":
            gg = g + wd * w
            if params.get("momentum"):
                m = params["momentum"] * m - lr * gg
                w = w + m
            else:
                w = w - lr * gg
        else:
            gg = g + (wd * w if name == "adam" else 0)
            m = 0.9 * m + 0.1 * gg
            v = 0.999 * v + 0.001 * gg * gg
            step = lr * (1 - 0.999**t) ** 0.5 / (1 - 0.9**t)
            if name == "adamw":  # MXNet 2.0: eps 1e-6, decay scaled by the corrected lr
                w = w - step * (m / (onp.sqrt(v) + 1e-6) + wd * w)
            else:
                w = w - step * m / (onp.sqrt(v) + 1e-8)
        assert_almost_equal(p.data(), w, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="unknown optimizer"):
        gluon.Trainer([p], "nosuchoptimizer")


def _small_net():
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Dense(4, in_units=3), gluon.nn.Dense(2, in_units=4))
    net.initialize(ndx.initializer.Normal(0.5))
    return net


def test_save_load_round_trip_and_atomic_write(tmp_path):
    net = _small_net()
    path = str(tmp_path / "p.safetensors")
    net.save_parameters(path)
    assert [f for f in os.listdir(tmp_path) if f.startswith(".ndx-params-")] == []
    other = _small_net()
    other.load_parameters(path)
    x = np.array(onp.ones((2, 3), dtype=onp.float32))
    assert_almost_equal(other(x), net(x), rtol=0, atol=0)
    # The layout is safetensors: 8-byte header length, JSON header, data.
    blob = open(path, "rb").read()
    n = int.from_bytes(blob[:8], "little")
    assert blob[8:8 + n].decode().startswith("{") and b'"0.weight"' in blob[8:8 + n]


@pytest.mark.parametrize("damage", ["truncated", "short", "bad-json", "bad-offsets", "empty"])
def test_corrupted_parameter_files_raise_and_change_nothing(tmp_path, damage):
    net = _small_net()
    path = str(tmp_path / "p.safetensors")
    net.save_parameters(path)
    blob = bytearray(open(path, "rb").read())
    n = int.from_bytes(blob[:8], "little")
    if damage == "truncated":
        blob = blob[:-5]
    elif damage == "short":
        blob = blob[:4]
    elif damage == "bad-json":
        blob[8] = ord("x")
    elif damage == "bad-offsets":
        header = blob[8:8 + n].decode().replace('"data_offsets":[0,', '"data_offsets":[1,', 1)
        blob[8:8 + n] = header.encode()
    else:
        blob = bytearray()
    open(path, "wb").write(bytes(blob))
    target = _small_net()
    before = {k: p.data().asnumpy().copy() for k, p in target.collect_params().items()}
    with pytest.raises(ValueError, match="not a valid parameter file"):
        target.load_parameters(path)
    for k, p in target.collect_params().items():
        onp.testing.assert_array_equal(p.data().asnumpy(), before[k])


def test_load_checks_names_and_shapes(tmp_path):
    path = str(tmp_path / "p.safetensors")
    _small_net().save_parameters(path)
    bigger = gluon.nn.Sequential()
    bigger.add(gluon.nn.Dense(5, in_units=3), gluon.nn.Dense(2, in_units=5))
    bigger.initialize()
    with pytest.raises(ValueError, match="shape"):
        bigger.load_parameters(path)
    deeper = _small_net()
    deeper.add(gluon.nn.Dense(1, in_units=2))
    deeper.initialize()
    with pytest.raises(ValueError, match="missing"):
        deeper.load_parameters(path)
    deeper.load_parameters(path, allow_missing=True)


def test_initializers():
    assert (ndx.initializer.Constant(2.5)((2, 2)).asnumpy() == 2.5).all()
    assert (ndx.initializer.Zero()((3,)).asnumpy() == 0).all()
    w = ndx.initializer.Xavier(magnitude=3)((40, 60)).asnumpy()
    bound = (3 / 50) ** 0.5
    assert onp.abs(w).max() <= bound and onp.abs(w).max() > 0.5 * bound
    with pytest.raises(ValueError):
        ndx.initializer.create("nope")
    with pytest.raises(ValueError):
        ndx.initializer.Xavier()((3,))


@pytest.mark.parametrize("last_batch,sizes", [("keep", [4, 4, 2]), ("discard", [4, 4])])
def test_dataloader_batches(last_batch, sizes):
    x = onp.arange(20, dtype=onp.float32).reshape(10, 2)
    y = onp.arange(10)
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), 4, shuffle=True,
                                   last_batch=last_batch)
    batches = list(loader)
    assert [b[0].shape[0] for b in batches] == sizes and len(loader) == len(sizes)
    seen = onp.concatenate([b[1].asnumpy() for b in batches])
    assert len(set(seen.tolist())) == len(seen)  # no sample twice
    for bx, by in batches:
        onp.testing.assert_array_equal(bx.asnumpy(), x[by.asnumpy()])
    roll = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), 4, last_batch="rollover")
    assert [b[0].shape[0] for b in roll] == [4, 4]
    assert [b[0].shape[0] for b in roll] == [4, 4, 4]  # the 2 left over come first
    with pytest.raises(ValueError):
        gluon.data.ArrayDataset(x, y[:3])


def test_training_reduces_loss_and_hybridize_keeps_results():
    rng = onp.random.default_rng(3)
    x = rng.normal(size=(64, 4)).astype(onp.float32)
    y = (x @ onp.array([1.0, -2.0, 0.5, 3.0], dtype=onp.float32))[:, None]
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation="tanh"), gluon.nn.Dense(1))
    net.initialize(ndx.initializer.Xavier())
    before = net(np.array(x)).asnumpy()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        net.hybridize()
    assert_almost_equal(net(np.array(x)), before, rtol=0, atol=0)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    loss_fn = gluon.loss.L2Loss()
    losses = []
    for _ in range(60):
        with autograd.record():
            loss = loss_fn(net(np.array(x)), np.array(y))
        loss.backward()
        trainer.step(64)
        losses.append(float(loss.mean()))
    assert losses[-1] < 0.05 * losses[0]


def test_dropout_layernorm_embedding_batchnorm_layers():
    x = np.array(onp.ones((200, 50), dtype=onp.float32))
    drop = gluon.nn.Dropout(0.5)
    assert_almost_equal(drop(x), onp.ones((200, 50)))  # predict mode: identity
    with autograd.record():
        y = drop(x).asnumpy()
    kept = y != 0
    assert 0.4 < kept.mean() < 0.6
    assert_almost_equal(y[kept], onp.full(kept.sum(), 2.0))  # survivors scaled by 1/(1-p)

    xn = onp.random.default_rng(4).normal(size=(3, 5)).astype(onp.float32)
    ln = gluon.nn.LayerNorm()
    ln.initialize()
    ref = (xn - xn.mean(axis=1, keepdims=True)) / onp.sqrt(xn.var(axis=1, keepdims=True) + 1e-5)
    assert_almost_equal(ln(np.array(xn)), ref, rtol=1e-4, atol=1e-5)

    emb = gluon.nn.Embedding(4, 3)
    emb.initialize()
    w = emb.weight.data().asnumpy()
    assert_almost_equal(emb(np.array([2, 0, 2])), w[[2, 0, 2]], rtol=0, atol=0)

    bn = gluon.nn.BatchNorm(in_channels=5)
    bn.initialize()
    xb = np.array(xn)
    with autograd.record():
        out = bn(xb)
    mean, var = xn.mean(axis=0), xn.var(axis=0)
    assert_almost_equal(out, (xn - mean) / onp.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    assert_almost_equal(bn.running_mean.data(), 0.1 * mean, rtol=1e-4, atol=1e-6)
    pred = bn(xb)  # predict mode: the running statistics
    rm, rv = bn.running_mean.data().asnumpy(), bn.running_var.data().asnumpy()
    assert_almost_equal(pred, (xn - rm) / onp.sqrt(rv + 1e-5), rtol=1e-4, atol=1e-5)


def test_dropout_axes_share_one_mask_value_along_them():
    # MXNet's Dropout(rate, axes): the mask has length 1 on `axes` and is broadcast, so every
    # slice along them is dropped (or kept and scaled) alike.
    x = np.array(onp.ones((64, 7, 32), dtype=onp.float32))
    x.attach_grad()
    drop = gluon.nn.Dropout(0.5, axes=(1,))
    with autograd.record():
        y = drop(x)
    y.backward()
    yn = y.asnumpy()
    assert (yn == yn[:, :1, :]).all()  # shared along axis 1
    assert set(onp.unique(yn).tolist()) == {0.0, 2.0}
    assert 0.4 < (yn[:, 0, :] != 0).mean() < 0.6
    assert_almost_equal(x.grad, yn, rtol=0, atol=0)  # d(x * mask)/dx = mask
    assert_almost_equal(drop(x), onp.ones((64, 7, 32)))  # predict mode: identity
    # the low-level op and the legacy name take axes too; bad axes are typed errors
    with autograd.record():
        z = npx.dropout(x, p=0.5, axes=(0, -1)).asnumpy()
    assert (z == z[:1, :, :1]).all()
    with pytest.raises(IndexError):  # AxisError
        npx.dropout(x, p=0.5, axes=(3,))
    with pytest.raises(ValueError):
        npx.dropout(x, p=0.5, axes=(1, -2))


def test_dropout_axes_none_means_no_shared_axes():
    for drop in (gluon.nn.Dropout(0.5, axes=None), gluon.rnn.DropoutCell(0.5, axes=None)):
        with autograd.record():
            y = drop(np.ones((40, 50))) if isinstance(drop, gluon.nn.Dropout) else \
                drop(np.ones((40, 50)), [])[0]
        kept = y.asnumpy() != 0
        assert 0.4 < kept.mean() < 0.6 and not (kept == kept[:1]).all()


def test_random_draws_in_a_hybridized_block_differ_between_calls():
    # a draw with no inputs is a graph node drawn on each run (it was traced as a constant)
    class Noisy(gluon.HybridBlock):
        def forward(self, x):
            return x + np.random.uniform(size=x.shape)

    net = Noisy()
    net.hybridize()
    x = np.zeros(1000)
    a, b = net(x).asnumpy(), net(x).asnumpy()
    assert not onp.array_equal(a, b)
    for v in (a, b):
        assert 0 <= v.min() and v.max() < 1 and 0.4 < v.mean() < 0.6


def _conv2d_ref(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    xp = onp.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = onp.zeros((n, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = onp.einsum("nchw,fchw->nf", patch, w)
    return out + b.reshape(1, -1, 1, 1)


def test_conv_and_pool_layers_match_direct_loops():
    rng = onp.random.default_rng(5)
    xn = rng.normal(size=(2, 3, 6, 6)).astype(onp.float32)
    conv = gluon.nn.Conv2D(4, 3, strides=2, padding=1)
    conv.initialize(ndx.initializer.Normal(0.5))
    x = np.array(xn)
    y = conv(x)  # deferred: in_channels from the input
    w, b = conv.weight.data().asnumpy(), conv.bias.data().asnumpy()
    assert conv.weight.shape == (4, 3, 3, 3)
    assert_almost_equal(y, _conv2d_ref(xn, w, b, 2, 1), rtol=1e-5, atol=1e-6)
    pooled = gluon.nn.MaxPool2D(2)(np.array(xn)).asnumpy()
    assert_almost_equal(pooled, xn.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))
    avg = gluon.nn.AvgPool2D(2)(np.array(xn)).asnumpy()
    assert_almost_equal(avg, xn.reshape(2, 3, 3, 2, 3, 2).mean(axis=(3, 5)))
    gap = gluon.nn.GlobalAvgPool2D()(np.array(xn))
    assert gap.shape == (2, 3, 1, 1)
    assert_almost_equal(gap.reshape(2, 3), xn.mean(axis=(2, 3)))
    # A small CNN trains, hybridized, with gradients equal to the imperative ones.
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, padding=1, activation="relu"), gluon.nn.MaxPool2D(2),
            gluon.nn.GlobalAvgPool2D(), gluon.nn.Dense(2))
    net.initialize(ndx.initializer.Xavier())
    with autograd.record():
        (net(x) ** 2).sum().backward()
    g_imp = net.collect_params()["0.weight"].grad().asnumpy().copy()
    net.hybridize()
    with autograd.record():
        (net(x) ** 2).sum().backward()
    assert_almost_equal(net.collect_params()["0.weight"].grad(), g_imp, rtol=1e-6, atol=1e-7)


def _train_with_seed(seed):
    """Three SGD steps of a small net with dropout over a shuffled DataLoader: every random
    choice (initial weights, dropout masks, batch order) comes from ndx's one generator."""
    ndx.random.seed(seed)
    x = onp.arange(48, dtype=onp.float32).reshape(12, 4) / 48
    y = (onp.arange(12) % 3).astype(onp.int64)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.Dropout(0.3), gluon.nn.Dense(3))
    net.initialize(ndx.initializer.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), 4, shuffle=True)
    losses = []
    for bx, by in loader:
        with autograd.record():
            loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(bx), by)
        loss.backward()
        trainer.step(4)
        losses.append(loss.asnumpy())
    return onp.concatenate(losses), [p.data().asnumpy() for p in net.collect_params().values()]


def test_one_seed_makes_training_repeatable():
    l1, p1 = _train_with_seed(11)
    l2, p2 = _train_with_seed(11)
    onp.testing.assert_array_equal(l1, l2)
    for a, b in zip(p1, p2):
        onp.testing.assert_array_equal(a, b)
    l3, _ = _train_with_seed(12)
    assert not onp.array_equal(l1, l3)
