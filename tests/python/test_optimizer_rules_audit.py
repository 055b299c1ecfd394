"""Optimizers, LR schedulers and clip_global_norm from an MXNet user's audit: each update rule
written out in NumPy float64 from MXNet 2.0's documented formula (the optimizer's docstring, or
its step() where the docstring defers to it), compared over several steps with wd,
rescale_grad, clip_gradient, lr_mult / wd_mult, begin_num_update and schedulers; resuming
from saved states (Trainer.save_states / load_states, Updater.get_states / set_states) must
continue with the same numbers; bad hyperparameters are typed errors naming the argument."""
import math
import os
import pickle
import warnings

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, gluon, lr_scheduler, np, optimizer
from strict_checks import assert_almost_equal

# (learning_rate, wd, rescale_grad, clip_gradient)
SETTINGS = [(0.1, 0.0, 1.0, None), (0.05, 0.1, 0.5, None), (0.1, 0.2, 2.0, 0.7)]


def _prepared(g, w, o, decay=True):
    """clip(rescale_grad * grad, clip_gradient) (+ wd * weight)."""
    g = g * o["rescale_grad"]
    if o["clip_gradient"]:
        g = onp.clip(g, -o["clip_gradient"], o["clip_gradient"])
    return g + o["wd"] * w if decay else g


def ref_signum(w, g, s, t, o):
    """Signum's docstring (momentum > 0); signSGD (momentum 0) as MXNet's step() and its
    signsgd_update kernel: weight = (1 - lr * (wd + wd_lh)) * weight - lr * sign(grad)."""
    lr, mom, lh = o["lr"], o.get("momentum", 0.9), o.get("wd_lh", 0.0)
    if mom == 0:
        return (1 - lr * (o["wd"] + lh)) * w - lr * onp.sign(g), s
    s = mom * s + (1 - mom) * _prepared(g, w, o)
    return (1 - lr * lh) * w - lr * onp.sign(s), s


def ref_ftrl(w, g, s, t, o):
    """Ftrl's docstring."""
    g = _prepared(g, w, o, decay=False)
    z, n = s
    lr, l1, beta = o["lr"], o.get("lamda1", 0.01), o.get("beta", 1.0)
    z = z + g - (onp.sqrt(n + g * g) - onp.sqrt(n)) * w / lr
    n = n + g * g
    w = (onp.sign(z) * l1 - z) / ((beta + onp.sqrt(n)) / lr + o["wd"]) * (onp.abs(z) > l1)
    return w, (z, n)


def _run(name, kwargs, setting, ref, state0, steps=5):
    lr, wd, rescale, clip = setting
    rng = onp.random.default_rng(7)
    w0 = rng.normal(size=(3, 4))
    opt = optimizer.create(name, learning_rate=lr, wd=wd, rescale_grad=rescale,
                           clip_gradient=clip, **kwargs)
    w = np.array(w0, dtype="float64")
    state = opt.create_state(0, w)
    o = dict(kwargs, lr=lr, wd=wd, rescale_grad=rescale, clip_gradient=clip)
    ref_w, ref_s = w0.copy(), state0
    for t in range(1, steps + 1):
        g = rng.normal(scale=1.5, size=w0.shape)
        opt.update([0], [w], [np.array(g, dtype="float64")], [state])
        ref_w, ref_s = ref(ref_w, g, ref_s, t, o)
        assert_almost_equal(w, ref_w, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("setting", SETTINGS, ids=["plain", "wd-rescale", "wd-rescale-clip"])
@pytest.mark.parametrize("kwargs", [{"momentum": 0.0}, {"momentum": 0.0, "wd_lh": 0.05}])
def test_signsgd_decays_the_weight_outside_the_sign(kwargs, setting):
    # was: wd * weight added to the gradient inside sign(), a different step once wd > 0
    _run("signum", kwargs, setting, ref_signum, None)


@pytest.mark.parametrize("setting", SETTINGS, ids=["plain", "wd-rescale", "wd-rescale-clip"])
@pytest.mark.parametrize("kwargs", [{}, {"momentum": 0.5, "wd_lh": 0.05}])
def test_signum_with_momentum_matches_the_documented_rule(kwargs, setting):
    _run("signum", kwargs, setting, ref_signum, onp.zeros((3, 4)))


@pytest.mark.parametrize("setting", SETTINGS, ids=["plain", "wd-rescale", "wd-rescale-clip"])
@pytest.mark.parametrize("kwargs", [{}, {"lamda1": 0.3, "beta": 0.5}])
def test_ftrl_matches_the_documented_rule(kwargs, setting):
    z = onp.zeros((3, 4))
    _run("ftrl", kwargs, setting, ref_ftrl, (z, z))


def test_signsgd_through_trainer_uses_lr_and_wd_multipliers():
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.5))
    net.bias.set_data(np.array([0.5, -0.25]))
    net.weight.wd_mult, net.bias.lr_mult = 2.0, 0.5
    trainer = gluon.Trainer(net.collect_params(), "signum",
                            {"learning_rate": 0.1, "momentum": 0.0, "wd": 0.1})
    x = np.array([[1.0, -2.0, 3.0]])
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    gw, gb = net.weight.grad().asnumpy(), net.bias.grad().asnumpy()
    w0, b0 = net.weight.data().asnumpy(), net.bias.data().asnumpy()
    trainer.step(1)
    assert_almost_equal(net.weight.data(), (1 - 0.1 * 0.2) * w0 - 0.1 * onp.sign(gw),
                        rtol=1e-6, atol=1e-6)
    assert_almost_equal(net.bias.data(), (1 - 0.05 * 0.1) * b0 - 0.05 * onp.sign(gb),
                        rtol=1e-6, atol=1e-6)


# ---- several weights per step: counts, begin_num_update, multipliers ----------------------


def test_adam_counts_each_weight_from_begin_num_update_with_multipliers():
    """Two weights per update() call: bias correction uses each weight's own count (from
    begin_num_update), lr and wd take the per-parameter multipliers (by index and by name)."""
    rng = onp.random.default_rng(0)
    w0 = [rng.normal(size=(4,)), rng.normal(size=(2, 3))]
    opt = optimizer.create("adam", learning_rate=0.05, wd=0.1, begin_num_update=3,
                           param_idx2name={1: "dense_bias"})
    opt.set_lr_mult({0: 2.0})
    opt.set_wd_mult({"dense_bias": 0.0})
    ws = [np.array(w, dtype="float64") for w in w0]
    states = [opt.create_state(i, w) for i, w in enumerate(ws)]
    refs = [(w.copy(), onp.zeros_like(w), onp.zeros_like(w)) for w in w0]
    for t in range(4, 8):
        gs = [rng.normal(size=w.shape) for w in w0]
        opt.update([0, 1], ws, [np.array(g, dtype="float64") for g in gs], states)
        new = []
        for (w, m, v), g, lr, wd in zip(refs, gs, (0.1, 0.05), (0.1, 0.0)):
            g = g + wd * w
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            eta = lr * math.sqrt(1 - 0.999**t) / (1 - 0.9**t)
            new.append((w - eta * m / (onp.sqrt(v) + 1e-8), m, v))
        refs = new
        for w, (ref, _, _) in zip(ws, refs):
            assert_almost_equal(w, ref, rtol=1e-10, atol=1e-10)
    assert opt.num_update == 7 and opt._index_update_count == {0: 7, 1: 7}


# ---- schedulers: every step against the documented formula ------------------------------


def _warmup(n, steps, begin, final, mode):
    return begin + (final - begin) * n / steps if mode == "linear" else begin


@pytest.mark.parametrize("mode", ["linear", "constant"])
def test_cosine_and_poly_with_warmup_and_final_lr_at_every_step(mode):
    kw = dict(base_lr=1.0, final_lr=0.1, warmup_steps=4, warmup_begin_lr=0.2, warmup_mode=mode)
    cos_s = lr_scheduler.CosineScheduler(max_update=10, **kw)
    poly_s = lr_scheduler.PolyScheduler(max_update=10, pwr=3, **kw)
    for n in range(14):
        if n < 4:
            want_cos = want_poly = _warmup(n, 4, 0.2, 1.0, mode)
        else:
            frac = (min(n, 10) - 4) / 6
            want_cos = 0.1 + 0.9 * (1 + math.cos(math.pi * frac)) / 2
            want_poly = 0.1 + 0.9 * (1 - frac) ** 3
        assert cos_s(n) == pytest.approx(want_cos, rel=1e-12), n
        assert poly_s(n) == pytest.approx(want_poly, rel=1e-12), n


def test_factor_and_multifactor_with_warmup_at_every_step():
    fs = lr_scheduler.FactorScheduler(step=3, factor=0.5, stop_factor_lr=0.2, base_lr=1.0,
                                      warmup_steps=2, warmup_begin_lr=0.4)
    want = [0.4, 0.7] + [max(0.5 ** ((n - 1) // 3), 0.2) for n in range(2, 14)]
    assert [fs(n) for n in range(14)] == pytest.approx(want, rel=1e-12)
    ms = lr_scheduler.MultiFactorScheduler(step=[3, 7], factor=0.1, base_lr=1.0,
                                           warmup_steps=2, warmup_mode="constant",
                                           warmup_begin_lr=0.3)
    want = [0.3, 0.3, 1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.01, 0.01]
    assert [ms(n) for n in range(10)] == pytest.approx(want, rel=1e-12)


def test_scheduler_drives_every_weight_of_a_step_by_num_update():
    """lr_scheduler= in an optimizer: step k (num_update k, both weights counted) uses
    scheduler(k) for both weights; SGD's step is then exactly -lr * grad."""
    sched = lr_scheduler.CosineScheduler(max_update=6, base_lr=0.4, final_lr=0.0,
                                         warmup_steps=2, warmup_begin_lr=0.1)
    opt = optimizer.create("sgd", learning_rate=None, lr_scheduler=sched)
    ws = [np.zeros((2,), dtype="float64"), np.zeros((3,), dtype="float64")]
    expect = 0.0
    for k in range(1, 9):
        opt.update([0, 1], ws, [np.ones((2,), dtype="float64"),
                                np.ones((3,), dtype="float64")], [None, None])
        lr = 0.1 + 0.3 * k / 2 if k < 2 else 0.2 * (1 + math.cos(math.pi * min(k - 2, 4) / 4))
        expect -= lr
        for w in ws:
            assert_almost_equal(w, onp.full(w.shape, expect), rtol=1e-12, atol=1e-12)


# ---- resuming from saved states ------------------------------------------------------------


def _train(net, trainer, xs):
    for x in xs:
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        trainer.step(x.shape[0])


@pytest.mark.parametrize("name,params", [
    ("adam", {}), ("nadam", {}), ("ftml", {}), ("signum", {}),
    ("sgd", {"momentum": 0.9, "lr_scheduler": "factor"})])
def test_trainer_save_load_states_continues_identically(name, params, tmp_path):
    rng = onp.random.default_rng(1)
    xs = [np.array(rng.normal(size=(4, 3)).astype("float32")) for _ in range(6)]

    def make():
        net = gluon.nn.Dense(2, in_units=3)
        net.initialize(mx.init.Constant(0.3))
        p = dict(params, learning_rate=0.05)
        if p.get("lr_scheduler"):
            p["lr_scheduler"] = lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.05)
        return net, gluon.Trainer(net.collect_params(), name, p)

    net, trainer = make()
    _train(net, trainer, xs[:3])
    trainer.save_states(os.fspath(tmp_path / "t.states"))
    net.save_parameters(os.fspath(tmp_path / "t.params"))
    _train(net, trainer, xs[3:])
    net2, trainer2 = make()
    net2.load_parameters(os.fspath(tmp_path / "t.params"))
    trainer2.load_states(os.fspath(tmp_path / "t.states"))
    _train(net2, trainer2, xs[3:])
    assert_almost_equal(net2.weight.data(), net.weight.data(), rtol=0, atol=0)
    assert trainer2.learning_rate == trainer.learning_rate


@pytest.mark.parametrize("dump_optimizer", [True, False])
def test_updater_get_states_set_states_continues_identically(dump_optimizer):
    """MXNet's Updater.get_states / set_states (bytes): was missing (AttributeError)."""
    rng = onp.random.default_rng(2)
    w0 = [rng.normal(size=(3,)), rng.normal(size=(2, 2))]
    grads = [[rng.normal(size=w.shape) for w in w0] for _ in range(6)]

    def make():
        sched = lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.1)
        return optimizer.get_updater(optimizer.create("adam", learning_rate=0.1, wd=0.01,
                                                      lr_scheduler=sched))

    def steps(updater, ws, gs):
        for g in gs:
            updater([0, 1], [np.array(x, dtype="float64") for x in g], ws)

    straight, resumed = make(), make()
    ws_a = [np.array(w, dtype="float64") for w in w0]
    ws_b = [np.array(w, dtype="float64") for w in w0]
    steps(straight, ws_a, grads)
    steps(resumed, ws_b, grads[:3])
    blob = resumed.get_states(dump_optimizer=dump_optimizer)
    assert isinstance(blob, bytes)
    fresh = make()
    if not dump_optimizer:  # the states only: the optimizer's counts and scheduler are ours
        fresh.optimizer = resumed.optimizer
    fresh.set_states(blob)
    steps(fresh, ws_b, grads[3:])
    for a, b in zip(ws_a, ws_b):
        assert_almost_equal(b, a, rtol=0, atol=0)
    assert fresh.optimizer.num_update == 6


def test_updater_set_states_typed_errors():
    updater = optimizer.get_updater(optimizer.create("sgd", momentum=0.9))
    with pytest.raises(TypeError, match="set_states"):
        updater.set_states({0: None})
    with pytest.raises(ValueError, match="set_states"):
        updater.set_states(b"not a pickle")
    with pytest.raises(ValueError, match="set_states"):
        updater.set_states(pickle.dumps([1, 2]))


# ---- typed errors and clip_global_norm ---------------------------------------------------


@pytest.mark.parametrize("name,kwargs,arg", [
    ("adam", {"beta1": "0.9"}, "beta1"), ("adam", {"epsilon": None}, "epsilon"),
    ("adamw", {"beta2": None}, "beta2"), ("rmsprop", {"rho": "x"}, "rho"),
    ("rmsprop", {"centered": True, "momentum": None}, "momentum"),
    ("adagrad", {"epsilon": None}, "epsilon"), ("adadelta", {"rho": None}, "rho"),
    ("adamax", {"beta1": None}, "beta1"), ("nadam", {"schedule_decay": None}, "schedule_decay"),
    ("lamb", {"beta1": "q"}, "beta1"), ("lars", {"eta": None}, "eta"),
    ("ftml", {"beta1": None}, "beta1"), ("lans", {"epsilon": None}, "epsilon"),
    ("adabelief", {"epsilon": None}, "epsilon"), ("radam", {"beta2": None}, "beta2")])
def test_bad_hyperparameter_is_a_typed_error_when_made(name, kwargs, arg):
    # was: accepted, then an unrelated error (or an ndx array error) inside the first update
    with pytest.raises(TypeError, match=rf"{arg} must be a real number"):
        optimizer.create(name, **kwargs)


def test_hyperparameters_accept_numpy_scalars():
    opt = optimizer.create("adam", beta1=onp.float32(0.5), epsilon=onp.float64(1e-3))
    w = np.array([1.0], dtype="float64")
    opt.update([0], [w], [np.array([2.0], dtype="float64")], [opt.create_state(0, w)])
    eta = 0.001 * math.sqrt(1 - 0.999) / (1 - 0.5)
    assert_almost_equal(w, [1.0 - eta * 1.0 / (math.sqrt(0.004) + 1e-3)], rtol=1e-6, atol=0)


@pytest.mark.parametrize("max_norm", [onp.float32(6.5), onp.int64(6), onp.float64(6.5)])
def test_clip_global_norm_takes_a_numpy_scalar_max_norm(max_norm):
    # was: ValueError "max_norm must be a number > 0" for numpy.float32 / int64
    a, b = np.array([3.0, 4.0], dtype="float32"), np.array([[12.0]], dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = gluon.utils.clip_global_norm([a, b], max_norm)
    assert isinstance(total, float) and total == pytest.approx(13.0)
    scale = float(max_norm) / (13.0 + 1e-8)
    assert_almost_equal(a, [3.0 * scale, 4.0 * scale], rtol=1e-6, atol=0)
    assert_almost_equal(b, [[12.0 * scale]], rtol=1e-6, atol=0)
