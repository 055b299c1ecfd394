"""Gluon gaps against independent references: the optimizers SGLD, DCASGD, FTML, LANS,
AdaBelief and RAdam (NumPy implementations of the papers' / MXNet's documented rules), the
PCC and Torch metrics (hand computations), Block.load_dict / reset_device,
HybridBlock.infer_type / optimize_for, Trainer's stale-gradient check and the recurrent
layers' use_sequence_length (per-sequence runs of the plain layer)."""
import math

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, np
from ndx.gluon import nn, rnn

# ---------------------------------------------------------------- optimizer references


def _pre(grad, rescale, clip):
    g = grad * rescale
    if clip is not None:
        g = onp.clip(g, -clip, clip)
    return g


def _trust(num, den):
    r = num / den if den != 0 else float("inf")
    return r if math.isfinite(r) and r != 0 else 1.0


def ref_dcasgd(w, g, st, t, lr, wd, rescale, clip, momentum=0.9, lamda=0.04):
    g = _pre(g, rescale, clip) + wd * w
    mom, prev = st if st is not None else (onp.zeros_like(w), w.copy())
    d = g + lamda * g * g * (w - prev)
    mom = momentum * mom - lr * d
    return w + mom, (mom, w.copy())


def ref_ftml(w, g, st, t, lr, wd, rescale, clip, b1=0.6, b2=0.999, eps=1e-8):
    g = _pre(g, rescale, clip) + wd * w
    d, v, z = st if st is not None else (onp.zeros_like(w),) * 3
    v = b2 * v + (1 - b2) * g * g
    d_t = (1 - b1**t) / lr * (onp.sqrt(v / (1 - b2**t)) + eps)
    z = b1 * z + (1 - b1) * g - (d_t - b1 * d) * w
    return -z / d_t, (d_t, v, z)


def ref_lans(w, g, st, t, lr, wd, rescale, clip, b1=0.9, b2=0.999, eps=1e-6):
    g = g * rescale
    g = g / onp.linalg.norm(g)
    if clip is not None:
        g = onp.clip(g, -clip, clip)
    m, v = st if st is not None else (onp.zeros_like(w),) * 2
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    denom = onp.sqrt(v / (1 - b2**t)) + eps
    r = m / (1 - b1**t) / denom + wd * w
    c = g / denom + wd * w
    phi = onp.linalg.norm(w)
    new = w - lr * (b1 * _trust(phi, onp.linalg.norm(r)) * r
                    + (1 - b1) * _trust(phi, onp.linalg.norm(c)) * c)
    return new, (m, v)


def ref_adabelief(w, g, st, t, lr, wd, rescale, clip, b1=0.9, b2=0.999, eps=1e-6):
    g = g * rescale + wd * w
    if clip is not None:
        g = onp.clip(g, -clip, clip)
    m, s = st if st is not None else (onp.zeros_like(w),) * 2
    m = b1 * m + (1 - b1) * g
    s = b2 * s + (1 - b2) * (g - m) ** 2 + eps
    eta = lr * math.sqrt(1 - b2**t) / (1 - b1**t)
    return w - eta * m / (onp.sqrt(s) + eps), (m, s)


def ref_radam(w, g, st, t, lr, wd, rescale, clip, b1=0.9, b2=0.999, eps=1e-8):
    g = _pre(g, rescale, clip) + wd * w
    m, v = st if st is not None else (onp.zeros_like(w),) * 2
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat = m / (1 - b1**t)
    rho_inf = 2 / (1 - b2) - 1
    rho = rho_inf - 2 * t * b2**t / (1 - b2**t)
    if rho >= 5:
        r = math.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
        return w - lr * r * m_hat * math.sqrt(1 - b2**t) / (onp.sqrt(v) + eps), (m, v)
    return w - lr * m_hat, (m, v)


CASES = [
    ("dcasgd", {"momentum": 0.9, "lamda": 0.04}, ref_dcasgd, 10),
    ("ftml", {}, ref_ftml, 10),
    ("lans", {}, ref_lans, 10),
    ("adabelief", {}, ref_adabelief, 10),
    # rho_t >= 5 from step 6 on with beta2=0.999: both branches run
    ("radam", {}, ref_radam, 10),
]


@pytest.mark.parametrize("name,kwargs,ref,steps", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("clip", [None, 0.3])
def test_optimizer_matches_numpy_reference(name, kwargs, ref, steps, clip):
    rng = onp.random.RandomState(0)
    shapes = [(3, 4), (5,)]
    ws = [rng.randn(*s).astype("float32") for s in shapes]
    lr, wd, rescale = 0.05, 0.01, 0.5
    opt = mx.optimizer.create(name, learning_rate=lr, wd=wd, rescale_grad=rescale,
                              clip_gradient=clip, **kwargs)
    opt.set_lr_mult({1: 0.5})
    opt.set_wd_mult({1: 0.0})
    arrays = [np.array(w) for w in ws]
    states = [opt.create_state_multi_precision(i, a) for i, a in enumerate(arrays)]
    refs = [w.astype("float64") for w in ws]
    ref_states = [None, None]
    for t in range(1, steps + 1):
        grads = [rng.randn(*s).astype("float32") for s in shapes]
        opt.update([0, 1], arrays, [np.array(g) for g in grads], states)
        for i in range(2):
            lr_i = lr * (0.5 if i == 1 else 1.0)
            wd_i = wd * (0.0 if i == 1 else 1.0)
            refs[i], ref_states[i] = ref(refs[i], grads[i].astype("float64"), ref_states[i],
                                         t, lr_i, wd_i, rescale, clip)
        for a, r in zip(arrays, refs):
            onp.testing.assert_allclose(a.asnumpy(), r, rtol=2e-4, atol=2e-5)


def test_sgld_matches_reference_with_the_same_noise():
    rng = onp.random.RandomState(1)
    w0 = rng.randn(50).astype("float32")
    g = rng.randn(50).astype("float32")
    lr, wd, rescale, clip = 0.01, 0.1, 2.0, 1.5
    opt = mx.optimizer.create("sgld", learning_rate=lr, wd=wd, rescale_grad=rescale,
                              clip_gradient=clip)
    w = np.array(w0)
    np.random.seed(123)
    opt.update(0, w, np.array(g), opt.create_state(0, w))
    np.random.seed(123)
    noise = np.random.normal(0.0, math.sqrt(lr), size=(50,), dtype="float32").asnumpy()
    gg = onp.clip(g.astype("float64") * rescale, -clip, clip) + wd * w0
    expected = w0 - lr / 2 * gg + noise
    onp.testing.assert_allclose(w.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_sgld_noise_statistics():
    lr = 0.04
    opt = mx.optimizer.SGLD(learning_rate=lr)
    w = np.zeros((200000,))
    opt.update(0, w, np.zeros((200000,)), None)
    x = w.asnumpy()
    assert abs(x.mean()) < 0.003
    assert abs(x.std() - math.sqrt(lr)) < 0.003


@pytest.mark.parametrize("name,kwargs", [
    ("sgld", {"learning_rate": 0.005}), ("dcasgd", {"learning_rate": 0.1, "momentum": 0.5}),
    ("ftml", {"learning_rate": 0.1}), ("lans", {"learning_rate": 0.05}),
    ("adabelief", {"learning_rate": 0.1}), ("radam", {"learning_rate": 0.1})])
def test_optimizer_converges_on_a_quadratic(name, kwargs):
    target = onp.array([1.0, -2.0, 0.5, 3.0], dtype="float32")
    w = np.zeros((4,))
    w[...] = np.array([3.0, 1.0, -2.0, 0.0])
    opt = mx.optimizer.create(name, **kwargs)
    state = opt.create_state(0, w)
    start = float(((w.asnumpy() - target) ** 2).sum())
    # SGLD samples exp(-f): with f = 50 |w - target|^2 the samples' spread is 0.1
    scale = 100.0 if name == "sgld" else 1.0
    np.random.seed(0)
    tail = []
    for step in range(400):
        grad = (w - np.array(target)) * scale
        opt.update(0, w, grad, state)
        if step >= 300:
            tail.append(w.asnumpy())
    final = onp.mean(tail, axis=0) if name == "sgld" else w.asnumpy()
    assert float(((final - target) ** 2).sum()) < 0.02 * start, (name, final)


@pytest.mark.parametrize("name", ["sgld", "dcasgd", "ftml", "lans", "adabelief", "radam"])
def test_new_optimizers_through_trainer(name):
    net = nn.Dense(2, in_units=3)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), name, {"learning_rate": 0.01})
    assert type(trainer.optimizer).__name__.lower() == name
    before = net.weight.data().asnumpy().copy()
    x = np.ones((4, 3))
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    trainer.step(4)
    assert not onp.allclose(before, net.weight.data().asnumpy())


def test_radam_multi_precision_float16():
    opt = mx.optimizer.create("radam", learning_rate=0.1, multi_precision=True)
    w = np.array([1.0, -1.0, 2.0], dtype="float16")
    state = opt.create_state_multi_precision(0, w)
    assert state[0].dtype == onp.float32
    ref, ref_state = onp.array([1.0, -1.0, 2.0]), None
    for t in range(1, 8):
        g = onp.array([0.5, -0.25, 1.0])
        opt.update_multi_precision(0, w, np.array(g, dtype="float16"), state)
        ref, ref_state = ref_radam(ref, g, ref_state, t, 0.1, 0.0, 1.0, None)
    assert w.dtype == onp.float16
    onp.testing.assert_allclose(state[0].asnumpy(), ref, rtol=1e-5)
    onp.testing.assert_allclose(w.asnumpy(), ref, rtol=2e-3)


# ---------------------------------------------------------------- metrics


def _pcc_by_hand(preds, labels, k):
    c = onp.zeros((k, k))
    for p, lab in zip(preds, labels):
        c[p, lab] += 1
    # Gorodkin's R_K: the correlation of the one-hot matrices X, Y (samples x classes), the
    # covariances summed over the classes, each class column centred on its own mean
    x = onp.eye(k)[preds]
    y = onp.eye(k)[labels]
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    return float((xc * yc).sum() / math.sqrt((xc ** 2).sum() * (yc ** 2).sum())), c


def test_pcc_documented_example():
    fp, fn, tp, tn = 1000, 1, 10000, 1
    preds = [np.array([[.3, .7]] * fp + [[.7, .3]] * tn + [[.7, .3]] * fn + [[.3, .7]] * tp)]
    labels = [np.array([0] * (fp + tn) + [1] * (fn + tp))]
    pcc = mx.gluon.metric.PCC()
    pcc.update(labels, preds)
    name, value = pcc.get()
    assert name == "pcc"
    # binary: MCC = (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))
    mcc = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert value == pytest.approx(mcc, rel=1e-12)
    assert value == pytest.approx(0.01917751877733392, rel=1e-12)


def test_pcc_multiclass_matches_the_one_hot_pearson_correlation():
    rng = onp.random.RandomState(3)
    labels = rng.randint(0, 4, size=60)
    preds = onp.where(rng.rand(60) < 0.6, labels, rng.randint(0, 4, size=60))
    scores = onp.eye(4)[preds] * 0.7 + rng.rand(60, 4) * 0.2
    pcc = mx.gluon.metric.create("pcc")
    pcc.update([np.array(labels[:25])], [np.array(scores[:25])])  # scores, argmax axis 1
    pcc.update(np.array(labels[25:]), np.array(preds[25:]))  # class indices
    expected, cmat = _pcc_by_hand(preds, labels, 4)
    # the documented confusion-matrix formula, by hand
    n, x, y = cmat.sum(), cmat.sum(axis=1), cmat.sum(axis=0)
    by_formula = (onp.diag(cmat) * n - x * y).sum() / math.sqrt(
        (x * (n - x)).sum() * (y * (n - y)).sum())
    assert by_formula == pytest.approx(expected, rel=1e-10)
    assert pcc.get()[1] == pytest.approx(expected, rel=1e-10)
    assert pcc.k == 4
    pcc.reset()
    assert math.isnan(pcc.get()[1])
    pcc.update(np.array([0, 0]), np.array([0, 0]))  # one class only: undefined
    assert math.isnan(pcc.get()[1])


def test_pcc_perfect_and_inverse():
    pcc = mx.gluon.metric.PCC()
    pcc.update(np.array([0, 1, 2, 2]), np.array([0, 1, 2, 2]))
    assert pcc.get()[1] == pytest.approx(1.0)
    pcc = mx.gluon.metric.PCC()
    pcc.update(np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]))
    assert pcc.get()[1] == pytest.approx(-1.0)


def test_torch_metric_is_a_loss_mean():
    m = mx.gluon.metric.create("torch")
    m.update(None, [np.array([1.0, 2.0]), np.array([3.0])])
    assert m.get() == ("torch", pytest.approx(2.0))


# ---------------------------------------------------------------- Block APIs


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=4))
    net.initialize()
    return net


def test_load_dict():
    src, dst = _mlp(), _mlp()
    values = {k: p.data() for k, p in src.collect_params().items()}
    dst.load_dict(values)
    for k, p in dst.collect_params().items():
        onp.testing.assert_array_equal(p.data().asnumpy(), values[k].asnumpy())
    # NumPy values, 'arg:' prefixes
    dst2 = _mlp()
    dst2.load_dict({"arg:" + k: v.asnumpy() for k, v in values.items()})
    onp.testing.assert_array_equal(dst2[0].weight.data().asnumpy(),
                                   values["0.weight"].asnumpy())
    partial = {k: v for k, v in values.items() if k != "1.bias"}
    with pytest.raises(ValueError, match="missing"):
        _mlp().load_dict(partial)
    _mlp().load_dict(partial, allow_missing=True)
    extra = dict(values, **{"2.weight": np.zeros((2,))})
    with pytest.raises(ValueError, match="lacks"):
        _mlp().load_dict(extra)
    _mlp().load_dict(extra, ignore_extra=True)
    f64 = {k: v.astype("float64") for k, v in values.items()}
    with pytest.raises(ValueError, match="cast_dtype"):
        _mlp().load_dict(f64)
    net = _mlp()
    net.load_dict(f64, cast_dtype=True)
    assert net[0].weight.data().dtype == onp.float32
    net.load_dict(f64, cast_dtype=True, dtype_source="saved")
    assert net[0].weight.data().dtype == onp.float64
    bad = dict(values, **{"0.weight": np.zeros((5, 3))})
    with pytest.raises(ValueError, match="shape"):
        _mlp().load_dict(bad)


def test_load_dict_deferred_parameters():
    src = _mlp()
    net = nn.HybridSequential()
    net.add(nn.Dense(4), nn.Dense(2))
    net.initialize()
    net.load_dict({k: p.data() for k, p in src.collect_params().items()})
    x = np.ones((2, 3))
    onp.testing.assert_allclose(net(x).asnumpy(), src(x).asnumpy(), rtol=1e-6)


def test_infer_type_settles_deferred_parameters_without_side_effects():
    net = nn.HybridSequential()
    net.add(nn.Dense(4), nn.BatchNorm())
    net.initialize()
    net.infer_type(np.ones((2, 3)))
    assert net[0].weight.data().shape == (4, 3)
    assert net[0].weight.data().dtype == onp.float32
    onp.testing.assert_array_equal(net[1].running_mean.data().asnumpy(), onp.zeros(4))


def test_optimize_for():
    net = _mlp()
    x = np.array(onp.random.RandomState(0).randn(2, 3).astype("float32"))
    expected = net(x).asnumpy()
    assert net.optimize_for(x) is None
    assert net._active
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6)
    # MXNet's oneDNN backend: ndx runs its kernels (without the subgraph fusions)
    assert net.optimize_for(x, backend="ONEDNN") is None
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6)
    net.hybridize(backend="MKLDNN")
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6)
    for call in (lambda: net.optimize_for(x, backend="TensorRT"),
                 lambda: net.hybridize(backend="TensorRT")):
        with pytest.raises(NotImplementedError, match="backend"):
            call()


def test_reset_device():
    net = _mlp()
    net.reset_device(mx.cpu())
    net.reset_ctx(mx.cpu())
    assert net[0].weight.data().device == mx.cpu()
    x = np.ones((1, 3))
    with autograd.record():
        y = net(x).sum()
    y.backward()
    assert net[0].weight.grad() is not None


# ---------------------------------------------------------------- stale gradients


def _backward(net_or_block, x):
    with autograd.record():
        loss = net_or_block(x).sum()
    loss.backward()


def test_trainer_stale_gradient_check():
    net = _mlp()
    x = np.ones((4, 3))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    _backward(net, x)
    trainer.step(4)
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        trainer.step(4)  # no backward since the last step
    _backward(net[0], x)  # only the first layer
    with pytest.raises(UserWarning, match=r"`1\.weight`"):
        trainer.step(4)
    w0 = net[0].weight.data().asnumpy().copy()
    w1 = net[1].weight.data().asnumpy().copy()
    trainer.step(4, ignore_stale_grad=True)  # updates layer 0 only
    assert not onp.allclose(net[0].weight.data().asnumpy(), w0)
    onp.testing.assert_array_equal(net[1].weight.data().asnumpy(), w1)
    # hybridized, and two trainers sharing autograd's hook
    net.hybridize()
    other = _mlp()
    trainer2 = mx.gluon.Trainer(other.collect_params(), "sgd", {"learning_rate": 0.1})
    for _ in range(2):
        _backward(net, x)
        _backward(other, x)
        trainer.step(4)
        trainer2.step(4)
    _backward(net, x)
    trainer.step(4)
    with pytest.raises(UserWarning):
        trainer2.step(4)


def test_trainer_stale_check_skips_replaced_arrays():
    net = _mlp()
    x = np.ones((4, 3))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    _backward(net, x)
    trainer.step(4)
    net.cast("float64")  # new arrays: nothing observed about them, so they count as fresh
    trainer.step(4)


# ---------------------------------------------------------------- use_sequence_length


def _copy_params(src, dst):
    dst.load_dict({k: p.data() for k, p in src.collect_params().items()})


@pytest.mark.parametrize("cls", [rnn.LSTM, rnn.GRU, rnn.RNN])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("layout", ["TNC", "NTC"])
def test_sequence_length_matches_per_sequence_runs(cls, bidirectional, layout):
    rng = onp.random.RandomState(5)
    T, N, C, H = 5, 3, 3, 4
    lengths = [5, 2, 3]
    layer = cls(H, num_layers=2, bidirectional=bidirectional, layout=layout,
                use_sequence_length=True, input_size=C)
    layer.initialize(mx.init.Uniform(0.5))
    ref = cls(H, num_layers=2, bidirectional=bidirectional, input_size=C)
    ref.initialize()
    _copy_params(layer, ref)
    x_tnc = rng.randn(T, N, C).astype("float32")
    x = np.array(x_tnc if layout == "TNC" else x_tnc.transpose(1, 0, 2))
    states = [np.array(rng.randn(*s.shape).astype("float32")) for s in layer.begin_state(N)]
    for a in [x] + states:
        a.attach_grad()
    seq_len = np.array(lengths, dtype="int32")
    w_out = rng.randn(T, N, H * (2 if bidirectional else 1)).astype("float32")
    with autograd.record():
        out, new_states = layer(x, states, seq_len)
        out_tnc = out if layout == "TNC" else np.swapaxes(out, 0, 1)
        loss = (out_tnc * np.array(w_out)).sum() + sum((s * s).sum() for s in new_states)
    loss.backward()
    got_grads = {k: p.grad().asnumpy().copy() for k, p in layer.collect_params().items()}
    out_np = out_tnc.asnumpy()
    ref_grads = {k: 0.0 for k in got_grads}
    for b, n in enumerate(lengths):
        xb = np.array(x_tnc[:n, b:b + 1])
        sb = [np.array(s.asnumpy()[:, b:b + 1]) for s in states]
        for a in [xb] + sb:
            a.attach_grad()
        with autograd.record():
            o, s_out = ref(xb, sb)
            lb = (o * np.array(w_out[:n, b:b + 1])).sum() + sum((s * s).sum() for s in s_out)
        lb.backward()
        onp.testing.assert_allclose(out_np[:n, b:b + 1], o.asnumpy(), rtol=1e-4, atol=1e-5)
        assert not out_np[n:, b].any()  # zero past the length
        for got, want in zip(new_states, s_out):
            onp.testing.assert_allclose(got.asnumpy()[:, b:b + 1], want.asnumpy(), rtol=1e-4,
                                        atol=1e-5)
        gx = x.grad.asnumpy() if layout == "TNC" else x.grad.asnumpy().transpose(1, 0, 2)
        onp.testing.assert_allclose(gx[:n, b:b + 1], xb.grad.asnumpy(), rtol=1e-4, atol=1e-5)
        assert not gx[n:, b].any()
        for s, s_ref in zip(states, sb):
            onp.testing.assert_allclose(s.grad.asnumpy()[:, b:b + 1], s_ref.grad.asnumpy(),
                                        rtol=1e-4, atol=1e-5)
        for k, p in ref.collect_params().items():
            ref_grads[k] = ref_grads[k] + p.grad().asnumpy()
    for k in got_grads:
        onp.testing.assert_allclose(got_grads[k], ref_grads[k], rtol=1e-4, atol=1e-5)


def test_sequence_length_numeric_gradient():
    rng = onp.random.RandomState(7)
    layer = rnn.GRU(3, use_sequence_length=True, input_size=2)
    layer.initialize(mx.init.Uniform(0.5))
    x0 = rng.randn(4, 2, 2)
    lengths = np.array([4, 2])

    def f(xv):
        out = layer(np.array(xv.astype("float32")), sequence_length=lengths)
        return float(out.astype("float64").sum())

    x = np.array(x0.astype("float32"))
    x.attach_grad()
    with autograd.record():
        y = layer(x, sequence_length=lengths).sum()
    y.backward()
    eps, num = 1e-2, onp.zeros_like(x0)
    for idx in onp.ndindex(*x0.shape):
        hi, lo = x0.copy(), x0.copy()
        hi[idx] += eps
        lo[idx] -= eps
        num[idx] = (f(hi) - f(lo)) / (2 * eps)
    onp.testing.assert_allclose(x.grad.asnumpy(), num, rtol=2e-2, atol=2e-3)


def test_sequence_length_hybridized_and_errors():
    layer = rnn.LSTM(3, use_sequence_length=True, input_size=2)
    layer.initialize()
    x = np.array(onp.random.RandomState(0).randn(4, 2, 2).astype("float32"))
    lengths = np.array([3, 1])
    expected = layer(x, sequence_length=lengths).asnumpy()
    layer.hybridize()
    onp.testing.assert_allclose(layer(x, sequence_length=lengths).asnumpy(), expected,
                                rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(layer(x, sequence_length=lengths).asnumpy(), expected,
                                rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="sequence_length"):
        layer(x)
    with pytest.raises(NotImplementedError, match="use_sequence_length=False"):
        plain = rnn.LSTM(3, input_size=2)
        plain.initialize()
        plain(x, sequence_length=lengths)
