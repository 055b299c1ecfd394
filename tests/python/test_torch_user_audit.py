"""Training code as a PyTorch user writes it in Gluon: fine-tuning with frozen layers, a layer
used twice, dict samples and plain index lists in the DataLoader, initialize() run twice.
Every number is checked against a NumPy computation of the documented rule."""
import warnings

import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np
from ndx.gluon import nn


def _two_layers():
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net.initialize(ndx.initializer.Uniform(0.5))
    return net


def _step(net, trainer, x):
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(x.shape[0])


def _grads_of_sum(w0, b0, w1, x):
    """d sum(W1 (W0 x + b0) + b1) / d(W0, b0, W1, b1), batch summed: a linear net."""
    h = x @ w0.T + b0
    return (w1.T @ onp.ones((1, x.shape[0]))) @ x, w1[0] * x.shape[0], \
        onp.ones((1, x.shape[0])) @ h, onp.array([float(x.shape[0])])


def test_unfreezing_after_the_trainer_is_made_trains_the_layer():
    # Freeze the backbone, make the Trainer, unfreeze later (fine-tuning's second phase):
    # as in MXNet, each step updates the parameters not frozen at that time.
    net = _two_layers()
    net[0].collect_params().setattr("grad_req", "null")
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    net[0].collect_params().setattr("grad_req", "write")
    before = [p.data().asnumpy().astype(onp.float64) for p in net.collect_params().values()]
    x = onp.array([[1.0, 2.0], [-0.5, 0.25]], dtype=onp.float32)
    _step(net, trainer, np.array(x))
    grads = _grads_of_sum(before[0], before[1], before[2], x.astype(onp.float64))
    for p, w, g in zip(net.collect_params().values(), before, grads):
        onp.testing.assert_allclose(p.data().asnumpy(), w - 0.1 * g / 2, rtol=1e-6, atol=1e-6)


def test_freezing_after_the_trainer_is_made_skips_the_layer():
    net = _two_layers()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    net[1].weight.grad_req = "null"  # PyTorch's requires_grad_(False) after the optimizer
    before = [p.data().asnumpy().astype(onp.float64) for p in net.collect_params().values()]
    x = onp.array([[1.0, 2.0], [-0.5, 0.25]], dtype=onp.float32)
    _step(net, trainer, np.array(x))
    _step(net, trainer, np.array(x))  # (no stale-gradient error for the frozen one)
    onp.testing.assert_array_equal(net[1].weight.data().asnumpy(), before[2])
    w0, b0 = before[0], before[1]
    for _ in range(2):
        g0, gb0, _, _ = _grads_of_sum(w0, b0, before[2], x.astype(onp.float64))
        w0, b0 = w0 - 0.1 * g0 / 2, b0 - 0.1 * gb0 / 2
    onp.testing.assert_allclose(net[0].weight.data().asnumpy(), w0, rtol=1e-6, atol=1e-6)
    onp.testing.assert_allclose(net[0].bias.data().asnumpy(), b0, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("optimizer", ["adagrad", "rmsprop", "adam"])
def test_a_layer_used_twice_is_updated_once_per_step(optimizer):
    # collect_params() lists the layer under both of its names ('0.weight', '1.weight');
    # the Trainer must update the one parameter once, as MXNet's (and torch.optim's) do.
    layer = nn.Dense(2, in_units=2, use_bias=False)
    net = nn.HybridSequential()
    net.add(layer, layer)
    net.initialize(ndx.initializer.Constant(0.5))
    assert len(net.collect_params()) == 2
    trainer = gluon.Trainer(net.collect_params(), optimizer, {"learning_rate": 0.1})
    x = onp.array([1.0, -2.0])
    with autograd.record():
        loss = net(np.array(x[None], dtype="float32")).sum()
    loss.backward()
    trainer.step(1)
    w = onp.full((2, 2), 0.5)
    g = onp.outer(w.T @ onp.ones(2), x) + onp.outer(onp.ones(2), w @ x)  # d sum(W W x) / dW
    if optimizer == "adagrad":  # history = g^2; w -= lr g / (sqrt(history) + 1e-6)
        expected = w - 0.1 * g / (onp.abs(g) + 1e-6)
    elif optimizer == "rmsprop":  # var = 0.1 g^2; w -= lr g / (sqrt(var) + 1e-8)
        expected = w - 0.1 * g / (onp.sqrt(0.1 * g * g) + 1e-8)
    else:  # the first Adam step: lr * sqrt(1 - b2) / (1 - b1) * m / (sqrt(v) + eps)
        m, v = 0.1 * g, 0.001 * g * g
        expected = w - 0.1 * onp.sqrt(0.001) / 0.1 * m / (onp.sqrt(v) + 1e-8)
    onp.testing.assert_allclose(layer.weight.data().asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_shared_parameters_are_updated_once_per_step():
    class Siamese(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.a = nn.Dense(1, in_units=2, use_bias=False)
            self.b = nn.Dense(1, in_units=2, use_bias=False)
            self.b.share_parameters(self.a.params)

        def forward(self, x, y):
            return self.a(x) + self.b(y)

    net = Siamese()
    net.initialize(ndx.initializer.One())
    trainer = gluon.Trainer(net.collect_params(), "adagrad", {"learning_rate": 0.5})
    x, y = onp.array([[1.0, 2.0]]), onp.array([[3.0, -1.0]])
    with autograd.record():
        loss = net(np.array(x, dtype="float32"), np.array(y, dtype="float32")).sum()
    loss.backward()
    trainer.step(1)
    g = x + y
    onp.testing.assert_allclose(net.a.weight.data().asnumpy(),
                                1.0 - 0.5 * g / (onp.abs(g) + 1e-6), rtol=1e-6)


class _DictSamples(gluon.data.Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": onp.full((2,), i, dtype=onp.float32), "y": i * 10}


@pytest.mark.parametrize("num_workers", [0, 1])
def test_dataloader_stacks_dict_samples_into_a_dict_of_batches(num_workers):
    # PyTorch's default collate: a dict of batches for dict samples
    loader = gluon.data.DataLoader(_DictSamples(), batch_size=2, num_workers=num_workers)
    batches = list(loader)
    assert [sorted(b) for b in batches] == [["x", "y"]] * 3
    for k, b in enumerate(batches):
        idx = onp.arange(2 * k, min(2 * k + 2, 5))
        assert isinstance(b["x"], np.ndarray) and isinstance(b["y"], np.ndarray)
        onp.testing.assert_array_equal(b["x"].asnumpy(), onp.repeat(idx, 2).reshape(-1, 2))
        onp.testing.assert_array_equal(b["y"].asnumpy(), idx * 10)


def test_dataloader_takes_a_list_of_indices_as_sampler():
    # MXNet's BatchSampler and PyTorch's DataLoader take any sized iterable of indices
    ds = gluon.data.ArrayDataset(onp.arange(10, dtype=onp.float32), onp.arange(10))
    order = [7, 3, 9, 0, 4]
    got = [b[1].asnumpy().tolist() for b in gluon.data.DataLoader(ds, batch_size=2,
                                                                  sampler=order)]
    assert got == [[7, 3], [9, 0], [4]]
    with pytest.raises(TypeError, match="sampler"):
        gluon.data.DataLoader(ds, batch_size=2, sampler=3)


def test_initialize_twice_warns_and_keeps_the_values():
    net = nn.Dense(2, in_units=3)
    net.initialize()
    before = net.weight.data().asnumpy().copy()
    with pytest.warns(UserWarning, match="already initialized"):
        net.initialize(ndx.initializer.Constant(3.0))
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), before)
    net.initialize(ndx.initializer.Constant(3.0), force_reinit=True)
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), onp.full((2, 3), 3.0))
    # a layer used twice is one parameter: initialized once, no warning
    layer = nn.Dense(2, in_units=2)
    seq = nn.HybridSequential()
    seq.add(layer, layer)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seq.initialize()


def test_trainer_refuses_what_is_not_a_parameter():
    net = nn.Dense(2, in_units=2)
    net.initialize()
    with pytest.raises(ValueError, match="Parameters"):
        gluon.Trainer([net.weight, net.weight.data()], "sgd")


@pytest.mark.parametrize("make", [
    lambda: ndx.lr_scheduler.CosineScheduler(10, base_lr=1.0, final_lr=0.1),
    lambda: ndx.lr_scheduler.PolyScheduler(10, base_lr=1.0, pwr=2, final_lr=0.1),
])
def test_schedules_hold_final_lr_past_max_update(make):
    # whether the schedule was called at max_update first or not (a resumed run, a step count
    # that jumps): the curve ends at final_lr, cos(pi) / (1 - 1) ** pwr
    sched = make()
    assert sched(15) == pytest.approx(0.1)
    sched = make()
    sched(3)
    assert sched(12) == pytest.approx(0.1)
    assert sched(10) == pytest.approx(0.1)


def test_clip_global_norm_names_the_wrong_array_type():
    with pytest.raises(TypeError, match="numpy.ndarray"):
        gluon.utils.clip_global_norm([onp.ones(2)], 1.0)


@pytest.mark.parametrize("act", ["softrelu", "softsign", "log_sigmoid", "mish"])
def test_activation_layers_take_mxnets_act_types_without_overflow(act):
    """nn.Activation / Dense(activation=) take npx.activation's types; softrelu of 100 is 100
    (log(1 + exp(x)) overflowed to inf in float32)."""
    x = onp.array([-100.0, -1.0, 0.0, 2.0, 100.0], dtype=onp.float32)
    xd = x.astype(onp.float64)
    ref = {"softrelu": onp.logaddexp(0, xd), "softsign": xd / (1 + onp.abs(xd)),
           "log_sigmoid": -onp.logaddexp(0, -xd),
           "mish": xd * onp.tanh(onp.logaddexp(0, xd))}[act]
    got = nn.Activation(act)(np.array(x)).asnumpy()
    onp.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-30)
    assert onp.isfinite(got).all()
