"""Code as "Dive into Deep Learning" (d2l.ai, MXNet edition) writes it, on ndx: the MXNet 1.x
keywords its chapters use (params= sharing, Parameter.data(ctx=...)), Trainer.step with an
array batch size, 1.x block names and layer reprs. Expected values are hand computations
and MXNet's documented behaviour."""
import numpy as onp
import pytest

from ndx import autograd, gluon, init, np
from ndx.gluon import nn


# ---- d2l 5.2: nn.Dense(..., params=shared.params) shares the layer's parameters ----------
def test_dense_params_keyword_shares_weights():
    shared = nn.Dense(2, use_bias=False, in_units=2)
    net = nn.Sequential()
    net.add(shared, nn.Dense(2, use_bias=False, in_units=2, params=shared.params))
    assert net[1].weight is shared.weight
    net.initialize(init.One())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = np.array([[1.0, 1.0]])
    with autograd.record():
        y = net(x).sum()
    y.backward()
    # y = sum(W (W x)) with W = ones(2, 2), x = [1, 1]: each use contributes 2 per entry
    onp.testing.assert_allclose(shared.weight.grad().asnumpy(), onp.full((2, 2), 4.0))
    trainer.step(1)  # the shared weight is updated once: 1 - 0.1 * 4
    onp.testing.assert_allclose(net[1].weight.data().asnumpy(), onp.full((2, 2), 0.6),
                                rtol=1e-6)


def test_params_keyword_with_deferred_shapes_and_modification():
    # d2l's example: a change to one layer's weight shows in the other.
    net = nn.Sequential()
    shared = nn.Dense(8, activation="relu")
    net.add(nn.Dense(8, activation="relu"), shared,
            nn.Dense(8, activation="relu", params=shared.params), nn.Dense(10))
    net.initialize()
    net(np.ones((2, 20)))
    net[1].weight.data()[0, 0] = 100
    assert float(net[2].weight.data()[0, 0]) == 100
    assert net[2].bias is net[1].bias


def test_params_keyword_on_conv_and_prefix_keyword():
    a = nn.Conv2D(3, kernel_size=3, in_channels=2)
    b = nn.Conv2D(3, kernel_size=3, in_channels=2, params=a.params)
    assert b.weight is a.weight and b.bias is a.bias
    assert nn.Dense(3, prefix="out_").prefix == "out_"


def test_params_keyword_rejects_incompatible_shape():
    a = nn.Dense(4, in_units=3)
    with pytest.raises(ValueError):
        nn.Dense(5, in_units=3, params=a.params)


def test_layer_keywords_still_checked():
    with pytest.raises(TypeError):
        nn.Dense(3, no_such_keyword=1)


# ---- d2l 5.4: Parameter.data(ctx=...) / grad(ctx=...) (MXNet 1.x keyword) ----------------
def test_parameter_data_and_grad_take_ctx():
    class MyDense(nn.Block):
        def __init__(self, units, in_units, **kwargs):
            super().__init__(**kwargs)
            self.weight = gluon.Parameter("weight", shape=(in_units, units))
            self.bias = gluon.Parameter("bias", shape=(units,))

        def forward(self, x):
            return np.dot(x, self.weight.data(ctx=x.ctx)) + self.bias.data(ctx=x.ctx)

    layer = MyDense(3, in_units=2)
    layer.initialize(init.One())
    x = np.array([[1.0, 2.0]])
    with autograd.record():
        y = layer(x)
        total = y.sum()
    total.backward()
    # both parameters have no initializer of their own, so initialize(init.One()) sets them
    onp.testing.assert_allclose(y.asnumpy(), [[4.0, 4.0, 4.0]])  # 1 + 2 + bias 1
    onp.testing.assert_allclose(layer.weight.grad(ctx=x.ctx).asnumpy(),
                                [[1.0] * 3, [2.0] * 3])


# ---- d2l 9.7: trainer.step(num_tokens) with num_tokens an ndarray --------------------------
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_trainer_step_with_array_batch_size(optimizer):
    w = gluon.Parameter("w", shape=(1,), init=init.One())
    w.initialize()
    trainer = gluon.Trainer([w], optimizer, {"learning_rate": 0.1})
    with autograd.record():
        loss = (w.data() * 4.0).sum()
    loss.backward()
    num_tokens = np.array([1, 1]).sum()  # a 0-d integer array, as valid_len.sum() is
    trainer.step(num_tokens)
    # gradient 4 rescaled by 1/2 -> 2; SGD: 1 - 0.1 * 2; Adam's first step moves by lr
    expected = 0.8 if optimizer == "sgd" else 0.9
    assert abs(float(w.data()[0]) - expected) < 1e-5


# ---- d2l 6.6 / 7.x: layer names printed while walking a net (MXNet 1.x prefixes) ---------
def test_conv_and_pool_prefixes_use_mxnet_aliases():
    net = nn.Sequential()
    net.add(nn.Conv2D(2, kernel_size=3), nn.MaxPool2D(), nn.AvgPool2D(),
            nn.GlobalAvgPool2D(), nn.Conv2DTranspose(2, kernel_size=2), nn.Dense(2))
    names = [layer.name for layer in net]
    assert [n.rstrip("0123456789") for n in names] == ["conv", "pool", "pool", "pool",
                                                       "conv", "dense"]


def test_dense_repr_as_mxnet():
    assert repr(nn.Dense(10, in_units=4)) == "Dense(4 -> 10, linear)"
    assert repr(nn.Dense(10, activation="relu")) == "Dense(None -> 10, Activation(relu))"
