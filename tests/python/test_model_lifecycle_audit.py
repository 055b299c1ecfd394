"""A Gluon model's lifecycle as MXNet 2.0 documents it: parameters and initializers,
blocks (structure, hooks, hybridize, save / load / export) and the Trainer (states, learning
rate, stale gradients). References: MXNet 2.0's documented behaviour, NumPy, hand computation,
or the same model run another way."""
import json
import math

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, gluon, init, np
from ndx.gluon import nn


def _dense_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu", in_units=3), nn.Dense(2, in_units=4))
    net.initialize(init.Xavier())
    return net


def _train_steps(net, trainer, steps, seed=0):
    rng = onp.random.default_rng(seed)
    for _ in range(steps):
        x = np.array(rng.standard_normal((5, 3)).astype("float32"))
        y = np.array(rng.standard_normal((5, 2)).astype("float32"))
        with autograd.record():
            loss = ((net(x) - y) ** 2).sum()
        loss.backward()
        trainer.step(5)


def _values(net):
    return {k: p.data().asnumpy().copy() for k, p in net.collect_params().items()}


# ---------------------------------------------------------------- Parameter


def test_initialize_init_argument_overrides_the_parameters_own_init():
    # MXNet: "init: The initializer to use. Overrides Parameter.init and default_init."
    p = gluon.Parameter("weight", shape=(2, 3), init=init.Zero())
    p.initialize(init=init.One())
    onp.testing.assert_array_equal(p.data().asnumpy(), onp.ones((2, 3)))
    # default_init only applies when neither is given
    q = gluon.Parameter("weight", shape=(2,), init=init.Constant(3.0))
    q.initialize(default_init=init.One())
    onp.testing.assert_array_equal(q.data().asnumpy(), [3.0, 3.0])
    r = gluon.Parameter("weight", shape=(2,))
    r.initialize(default_init=init.Constant(5.0))
    onp.testing.assert_array_equal(r.data().asnumpy(), [5.0, 5.0])


def test_initialize_twice_warns_and_force_reinit_reinitializes():
    p = gluon.Parameter("weight", shape=(2, 2), init=init.One())
    p.initialize()
    p.set_data(np.zeros((2, 2)))
    with pytest.warns(UserWarning, match="already initialized"):
        p.initialize()
    onp.testing.assert_array_equal(p.data().asnumpy(), onp.zeros((2, 2)))
    p.initialize(force_reinit=True)
    onp.testing.assert_array_equal(p.data().asnumpy(), onp.ones((2, 2)))
    assert p.grad().shape == (2, 2)


def test_shape_setter_only_fills_unknown_dimensions():
    p = gluon.Parameter("weight", shape=(3, -1))
    assert p.shape == (3, 0)  # ndx marks unknown dims with 0 (README)
    p.shape = (3, 5)
    assert p.shape == (3, 5)
    for bad in [(4, 5), (3, 6), (3,), (3, 5, 1)]:
        with pytest.raises(ValueError, match="incompatible"):
            p.shape = bad
    assert p.shape == (3, 5)
    q = gluon.Parameter("weight", shape=(2, 0))
    q.initialize(init.One())
    with pytest.raises(ValueError, match="incompatible"):
        q.set_data(np.ones((3, 4)))  # row count conflicts with the declared 2
    q.set_data(np.full((2, 4), 2.0))
    assert q.shape == (2, 4)
    onp.testing.assert_array_equal(q.data().asnumpy(), onp.full((2, 4), 2.0))


def test_non_differentiable_parameter_keeps_grad_req_null():
    # MXNet: grad_req of a parameter with differentiable=False is always 'null'
    p = gluon.Parameter("running_mean", shape=(2,), differentiable=False)
    assert p.grad_req == "null"
    p.initialize()
    p.grad_req = "write"
    assert p.grad_req == "null" and p.data().grad is None


def test_unfreezing_a_batchnorm_net_leaves_its_running_statistics_to_batchnorm():
    def run(toggle):
        net = nn.HybridSequential()
        net.add(nn.Dense(4, in_units=3), nn.BatchNorm(in_channels=4), nn.Dense(1, in_units=4))
        net.initialize(init.One())
        if toggle:  # freeze, then unfreeze: the running statistics must stay 'null'
            net.setattr("grad_req", "null")
            net.setattr("grad_req", "write")
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "wd": 0.5})
        x = np.array(onp.random.default_rng(0).standard_normal((6, 3)).astype("float32"))
        for _ in range(2):
            with autograd.record():
                loss = (net(x) ** 2).sum()
            loss.backward()
            trainer.step(6)
        return net[1]

    ref, toggled = run(False), run(True)
    assert toggled.running_mean.grad_req == "null" == toggled.running_var.grad_req
    # the Trainer (its weight decay) must not touch them: only BatchNorm's momentum rule
    for name in ("running_mean", "running_var", "gamma"):
        onp.testing.assert_allclose(getattr(toggled, name).data().asnumpy(),
                                    getattr(ref, name).data().asnumpy(), rtol=1e-6)


def test_gluon_constant():
    c = gluon.Constant([[1, 2], [3, 4]])
    assert c.grad_req == "null" and c.shape == (2, 2)
    c.initialize()
    onp.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    with pytest.warns(UserWarning, match="grad_req"):
        c.grad_req = "write"
    assert c.grad_req == "null"
    named = gluon.Constant("k", [1.0])  # MXNet 1.x's Constant(name, value)
    assert named.name == "k" and named.dtype == "float32"
    # MXNet 2.0: values that are no array become float32; an array keeps its dtype
    assert c.dtype == "float32" and gluon.Constant(3).dtype == "float32"
    assert gluon.Constant(onp.array([1.0, 2.0])).dtype == "float64"
    assert gluon.Constant(np.array([1, 2], dtype="int32")).dtype == "int32"

    class AddConst(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.const = gluon.Constant(onp.array([1.0, 2.0], dtype="float32"))
            self.w = gluon.Parameter("w", shape=(2,), init=init.One())

        def forward(self, x):
            return x * self.w.data() + self.const.data()

    net = AddConst()
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    x = np.array([1.0, 1.0])
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(1)
    onp.testing.assert_array_equal(net.const.data().asnumpy(), [1.0, 2.0])  # untouched
    onp.testing.assert_array_equal(net.w.data().asnumpy(), [0.0, 0.0])


def test_parameter_var_is_a_symbol_named_after_it():
    p = gluon.Parameter("fc_weight", shape=(2, 2))
    assert p.var().list_arguments() == ["fc_weight"]


def test_parameter_positional_arguments_follow_mxnet():
    # MXNet 2.0: Parameter(name, grad_req, shape, dtype, lr_mult, wd_mult, init, ...)
    p = gluon.Parameter("w", "add", (2,), "float32", 0.5, 0.0, init.One())
    assert (p.grad_req, p.shape, p.lr_mult, p.wd_mult) == ("add", (2,), 0.5, 0.0)
    p.initialize()
    onp.testing.assert_array_equal(p.data().asnumpy(), [1.0, 1.0])


def test_lr_mult_and_wd_mult_set_through_selected_params():
    net = nn.Dense(1, in_units=2)
    net.initialize(init.One())
    net.bias.set_data(np.ones(1))
    net.collect_params(".*bias").setattr("wd_mult", 0.0)
    net.collect_params(".*weight").setattr("lr_mult", 2.0)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "wd": 0.5})
    with autograd.record():
        net(np.array([[1.0, 2.0]])).sum().backward()
    trainer.step(1)
    # SGD: w -= lr * lr_mult * (grad + wd * wd_mult * w)
    onp.testing.assert_allclose(net.weight.data().asnumpy(),
                                [[1 - 0.2 * (1 + 0.5), 1 - 0.2 * (2 + 0.5)]], rtol=1e-6)
    onp.testing.assert_allclose(net.bias.data().asnumpy(), [1 - 0.1 * 1], rtol=1e-6)


def test_cast_before_initialize_creates_in_the_new_dtype_and_zero_grad():
    p = gluon.Parameter("weight", shape=(2, 0), init=init.One(), grad_req="add")
    p.cast("float16")
    p.initialize()
    p.shape = (2, 2)
    p._finish_deferred_init()
    assert p.data().dtype == onp.float16 and p.grad().dtype == onp.float16
    x = np.ones((2, 2), dtype="float16")
    for _ in range(2):  # grad_req 'add' accumulates
        with autograd.record():
            (p.data() * x).sum().backward()
    onp.testing.assert_array_equal(p.grad().asnumpy(), onp.full((2, 2), 2.0))
    p.zero_grad()
    onp.testing.assert_array_equal(p.grad().asnumpy(), onp.zeros((2, 2)))


# ---------------------------------------------------------------- initializers


def test_initializer_dumps_and_create_round_trip():
    # MXNet's documented examples of Initializer.dumps
    assert json.loads(init.Normal(0.5).dumps()) == ["normal", {"sigma": 0.5}]
    assert json.loads(init.Xavier(factor_type="in", magnitude=2.34).dumps()) == \
        ["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.34}]
    assert json.loads(init.Zero().dumps()) == ["zero", {}]
    assert json.loads(init.MSRAPrelu(slope=0.1).dumps()) == \
        ["msraprelu", {"factor_type": "avg", "slope": 0.1}]
    for made in (init.Uniform(0.3), init.Orthogonal(2.0, "normal"), init.LSTMBias(0.5),
                 init.Constant(1.5), init.Xavier("gaussian", "out", 2.0)):
        again = init.create(made.dumps())
        assert type(again) is type(made) and again.dumps() == made.dumps()
    assert init.create("normal", sigma=0.2).sigma == 0.2
    # An array value dumps as nested lists (MXNet's Constant.dumps) and comes back equal.
    for value, shape in ((onp.array([[1.0, 2.0], [3.0, 4.0]]), (2, 2)),
                         (mx.np.array([0.5, -1.0]), (2,))):
        want = onp.asarray(value.tolist())
        text = init.Constant(value).dumps()
        assert json.loads(text) == ["constant", {"value": want.tolist()}]
        onp.testing.assert_array_equal(init.create(text)(shape).asnumpy(), want)
    with pytest.raises(ValueError, match="create"):
        init.create("[1, 2")


def test_initializer_statistics_follow_the_documented_formulas():
    mx.random.seed(1)
    # Xavier gaussian, factor 'in' on a conv weight: std sqrt(magnitude / (in * kh * kw))
    w = init.Xavier("gaussian", "in", 2.0)((64, 16, 3, 3)).asnumpy()
    assert abs(w.std() - math.sqrt(2.0 / (16 * 9))) < 0.01 * math.sqrt(2.0 / 144) * 5
    # Xavier uniform 'out': bound sqrt(3 / (out * kh * kw)), variance bound^2 / 3
    w = init.Xavier("uniform", "out", 3.0)((40, 30, 2, 2)).asnumpy()
    bound = math.sqrt(3.0 / (40 * 4))
    assert onp.abs(w).max() <= bound and abs(w.var() - bound ** 2 / 3) < 0.05 * bound ** 2 / 3
    # MSRAPrelu factor 'in': gaussian, variance 2 / ((1 + slope^2) * fan_in)
    w = init.MSRAPrelu("in", slope=0.5)((300, 200)).asnumpy()
    assert abs(w.var() / (2.0 / (1.25 * 200)) - 1) < 0.03
    u = init.Uniform(0.2)((100, 100)).asnumpy()
    assert onp.abs(u).max() <= 0.2 and abs(u.var() - 0.04 / 3) < 0.05 * 0.04 / 3
    n = init.Normal(0.3)((200, 100)).asnumpy()
    assert abs(n.std() - 0.3) < 0.01 and abs(n.mean()) < 0.01
    # Orthogonal on a conv weight: flattened rows orthonormal times scale
    o = init.Orthogonal(scale=1.5)((4, 2, 3, 3)).asnumpy().reshape(4, -1)
    onp.testing.assert_allclose(o @ o.T, 2.25 * onp.eye(4), atol=1e-5)


def test_constant_initializer_takes_an_array_value():
    # MXNet's documented example: Constant(np.identity(n)) on a Dense weight
    layer = nn.Dense(3, in_units=3, use_bias=False)
    layer.initialize(init.Constant(np.array(onp.eye(3, dtype="float32"))))
    onp.testing.assert_array_equal(layer.weight.data().asnumpy(), onp.eye(3))


# ---------------------------------------------------------------- blocks


def test_replacing_a_child_by_a_non_block_is_a_type_error():
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(2, in_units=3)
            self.w = gluon.Parameter("w", shape=(2,))

        def forward(self, x):
            return self.fc(x)

    net = Net()
    with pytest.raises(TypeError, match="'fc'"):
        net.fc = None
    with pytest.raises(TypeError, match="'w'"):
        net.w = np.zeros(2)
    assert sorted(net.collect_params()) == ["fc.bias", "fc.weight", "w"]
    net.fc = nn.Dense(5, in_units=3)  # a block may still replace a block
    assert net.collect_params()["fc.weight"].shape == (5, 3)


def test_sequential_add_of_a_non_block_is_a_type_error():
    for seq in (nn.Sequential(), nn.HybridSequential()):
        with pytest.raises(TypeError, match="Blocks"):
            seq.add(nn.Dense(2), "relu")
        with pytest.raises(TypeError, match="Blocks"):
            seq.add(lambda x: x)


def test_structural_names_indexing_and_slicing():
    net = nn.HybridSequential()
    features = nn.HybridSequential()
    features.add(nn.Dense(4, in_units=3), nn.Dense(4, in_units=4))
    net.add(features, nn.Dense(2, in_units=4))
    assert list(net.collect_params()) == ["0.0.weight", "0.0.bias", "0.1.weight",
                                          "0.1.bias", "1.weight", "1.bias"]
    assert list(net.collect_params(".*1.bias")) == ["0.1.bias", "1.bias"]
    assert len(net) == 2 and net[-1] is net._children["1"]
    head = net[:1]
    assert type(head) is nn.HybridSequential and len(head) == 1 and head[0] is features
    with pytest.raises(IndexError):
        net[2]


def test_hybridize_inactive_and_rehybridize_after_changing_a_child():
    net = _dense_net()
    x = np.array(onp.random.default_rng(0).standard_normal((2, 3)).astype("float32"))
    ref = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    onp.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-6)
    net.hybridize(active=False)
    onp.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-6)
    net.hybridize()
    net[1].weight.set_data(np.zeros((2, 4)))
    net[1].bias.set_data(np.ones(2))
    onp.testing.assert_array_equal(net(x).asnumpy(), onp.ones((2, 2)))


def test_adding_a_child_to_a_hybridized_net_traces_again():
    # MXNet's register_child clears the cached graph: the new layer takes part
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=2))
    net.initialize(init.One())
    net.hybridize()
    x = np.ones((1, 2))
    onp.testing.assert_array_equal(net(x).asnumpy(), [[2.0, 2.0]])
    net.add(nn.Dense(1, in_units=2))
    net[1].initialize(init.Constant(3.0))
    onp.testing.assert_array_equal(net(x).asnumpy(), [[12.0]])  # 3 * 2 + 3 * 2

    class Outer(gluon.HybridBlock):  # a child added deeper down, below a hybridized parent
        def __init__(self):
            super().__init__()
            self.body = nn.HybridSequential()
            self.body.add(nn.Dense(2, in_units=2))

        def forward(self, x):
            return self.body(x)

    outer = Outer()
    outer.initialize(init.One())
    outer.hybridize()
    onp.testing.assert_array_equal(outer(x).asnumpy(), [[2.0, 2.0]])
    outer.body.add(nn.Activation("sigmoid"))  # no parameters
    onp.testing.assert_allclose(outer(x).asnumpy(), [[1 / (1 + math.exp(-2))] * 2],
                                rtol=1e-6)


def test_hooks_run_in_order_and_detach():
    net = _dense_net()
    calls = []
    h1 = net.register_forward_pre_hook(lambda b, inp: calls.append(("pre", inp[0].shape)))
    h2 = net.register_forward_hook(lambda b, inp, out: calls.append(("post", out.shape)))
    net(np.ones((1, 3)))
    assert calls == [("pre", (1, 3)), ("post", (1, 2))]
    h1.detach()
    h2.detach()
    h2.detach()  # a second detach does nothing
    net(np.ones((1, 3)))
    assert len(calls) == 2


def test_cast_float16_forward_matches_float32():
    net = _dense_net()
    x = np.array(onp.random.default_rng(1).standard_normal((3, 3)).astype("float32"))
    ref = net(x).asnumpy()
    net.cast("float16")
    out = net(x.astype("float16"))
    assert out.dtype == onp.float16
    onp.testing.assert_allclose(out.asnumpy().astype("float32"), ref, rtol=2e-2, atol=2e-2)


def test_load_parameters_structural_mismatch_names_the_keys(tmp_path):
    net = _dense_net()
    f = str(tmp_path / "net.params")
    net.save_parameters(f)
    bigger = nn.HybridSequential()
    bigger.add(nn.Dense(4, activation="relu", in_units=3), nn.Dense(2, in_units=4),
               nn.Dense(1, in_units=2))
    bigger.initialize()
    with pytest.raises(ValueError, match=r"2\.weight"):
        bigger.load_parameters(f)
    bigger.load_parameters(f, allow_missing=True)
    onp.testing.assert_array_equal(bigger[1].weight.data().asnumpy(),
                                   net[1].weight.data().asnumpy())
    smaller = nn.HybridSequential()
    smaller.add(nn.Dense(4, activation="relu", in_units=3))
    smaller.initialize()
    with pytest.raises(ValueError, match=r"1\.bias"):
        smaller.load_parameters(f)
    smaller.load_parameters(f, ignore_extra=True)
    onp.testing.assert_array_equal(smaller[0].weight.data().asnumpy(),
                                   net[0].weight.data().asnumpy())


def test_export_imports_same_outputs_and_trains_like_the_original(tmp_path):
    net = _dense_net()
    net.hybridize()
    x = np.array(onp.random.default_rng(2).standard_normal((4, 3)).astype("float32"))
    net(x)
    sym_file, params_file = net.export(str(tmp_path / "m"))
    imported = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    onp.testing.assert_allclose(imported(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)
    ta = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
    tb = gluon.Trainer(imported.collect_params(), "sgd", {"learning_rate": 0.05})
    _train_steps(net, ta, 3)
    _train_steps(imported, tb, 3)
    onp.testing.assert_allclose(imported(x).asnumpy(), net(x).asnumpy(), rtol=1e-5,
                                atol=1e-6)


def test_imported_batchnorm_statistics_are_not_trained(tmp_path):
    # MXNet's SymbolBlock gives the graph's auxiliary states grad_req 'null'
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3), nn.BatchNorm(in_channels=4), nn.Dense(1, in_units=4))
    net.initialize(init.One())
    net.hybridize()
    x = np.array(onp.random.default_rng(0).standard_normal((6, 3)).astype("float32"))
    net(x)
    imported = gluon.SymbolBlock.imports(*net.export(str(tmp_path / "bn"))[:1], ["data"],
                                         str(tmp_path / "bn-0000.params"))
    params = imported.collect_params()
    assert params["1.running_var"].grad_req == "null" and params["1.gamma"].grad_req == "write"
    for block in (net, imported):
        trainer = gluon.Trainer(block.collect_params(), "sgd", {"learning_rate": 0.1,
                                                                "wd": 0.5})
        for _ in range(2):
            with autograd.record():
                loss = (block(x) ** 2).sum()
            loss.backward()
            trainer.step(6)
    onp.testing.assert_allclose(params["1.running_var"].data().asnumpy(),
                                net[1].running_var.data().asnumpy(), rtol=1e-6)
    onp.testing.assert_allclose(imported(x).asnumpy(), net(x).asnumpy(), rtol=1e-5)


# ---------------------------------------------------------------- Trainer


@pytest.mark.parametrize("opt,params", [
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}),
    ("adam", {"learning_rate": 0.01}),
])
def test_save_load_states_continues_like_an_uninterrupted_run(tmp_path, opt, params):
    def make():
        net = _dense_net()
        return net, gluon.Trainer(net.collect_params(), opt, dict(params))

    mx.random.seed(3)
    a, ta = make()
    start = _values(a)
    _train_steps(a, ta, 3, seed=0)
    ta.save_states(str(tmp_path / "t.states"))
    mid = _values(a)
    _train_steps(a, ta, 3, seed=1)

    b, tb = make()
    b.load_dict({k: np.array(v) for k, v in mid.items()})
    tb.load_states(str(tmp_path / "t.states"))
    _train_steps(b, tb, 3, seed=1)
    for k, v in _values(a).items():
        onp.testing.assert_allclose(_values(b)[k], v, rtol=1e-5, atol=1e-7)
    assert tb.optimizer.num_update == ta.optimizer.num_update == 6
    assert any(not onp.allclose(start[k], mid[k]) for k in start)


def test_learning_rate_follows_the_scheduler_and_set_learning_rate():
    net = _dense_net()
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    # (SGD's default learning_rate, 0.1, would overwrite base_lr, as in MXNet)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 1.0, "lr_scheduler": sched})
    seen = []
    for _ in range(5):
        seen.append(trainer.learning_rate)
        _train_steps(net, trainer, 1)
    # FactorScheduler: lr = base_lr * factor ** floor((num_update - 1) / step) (MXNet)
    assert seen == [1.0, 1.0, 1.0, 0.5, 0.5]
    with pytest.raises(UserWarning, match="LRScheduler"):
        trainer.set_learning_rate(0.1)
    plain = gluon.Trainer(_dense_net().collect_params(), "sgd", {"learning_rate": 0.3})
    plain.set_learning_rate(0.05)
    assert plain.learning_rate == 0.05


def test_allreduce_then_update_equals_step_and_stale_grads():
    a, b = _dense_net(), _dense_net()
    b.load_dict({k: np.array(v) for k, v in _values(a).items()})
    ta = gluon.Trainer(a.collect_params(), "sgd", {"learning_rate": 0.1})
    tb = gluon.Trainer(b.collect_params(), "sgd", {"learning_rate": 0.1})
    x = np.ones((2, 3))
    for net in (a, b):
        with autograd.record():
            net(x).sum().backward()
    ta.step(2)
    tb.allreduce_grads()
    tb.update(2)
    for k, v in _values(a).items():
        onp.testing.assert_array_equal(_values(b)[k], v)
    # only the first layer gets a new gradient: the second's is stale
    with autograd.record():
        a[0](x).sum().backward()
    with pytest.raises(UserWarning, match="stale|not been updated"):
        ta.step(2)
    before = _values(a)
    ta.step(2, ignore_stale_grad=True)
    after = _values(a)
    assert not onp.array_equal(after["0.weight"], before["0.weight"])
    onp.testing.assert_array_equal(after["1.weight"], before["1.weight"])


def test_a_parameter_unused_by_the_first_backward_is_stale():
    # MXNet checks every parameter at every step, the first one included
    a, b = nn.Dense(1, in_units=1), nn.Dense(1, in_units=1)
    a.initialize(init.One())
    b.initialize(init.One())
    params = {"a.weight": a.weight, "a.bias": a.bias, "b.weight": b.weight, "b.bias": b.bias}
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.1, "wd": 0.5})
    with autograd.record():
        a(np.ones((1, 1))).sum().backward()
    with pytest.raises(UserWarning, match="b.weight"):
        trainer.step(1)
    trainer.step(1, ignore_stale_grad=True)
    onp.testing.assert_array_equal(b.weight.data().asnumpy(), [[1.0]])  # not decayed
    onp.testing.assert_allclose(a.weight.data().asnumpy(), [[1 - 0.1 * (1 + 0.5)]], rtol=1e-6)


def test_load_states_of_a_damaged_file_is_a_value_error(tmp_path):
    net = _dense_net()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    f = tmp_path / "t.states"
    trainer.save_states(str(f))
    f.write_bytes(f.read_bytes()[:20])
    with pytest.raises(ValueError, match="load_states"):
        trainer.load_states(str(f))
