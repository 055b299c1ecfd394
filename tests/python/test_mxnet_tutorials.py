"""MXNet 2.0 user code as the tutorials and API docs write it, run under ndx: each test
checks the documented behaviour against NumPy or a hand computation."""
import hashlib
import math
import os

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, gluon, init, np, npx
from ndx.gluon import nn


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    return net


def _dense_ref(x, weight, bias, relu=False):
    out = x @ weight.T + bias
    return onp.maximum(out, 0) if relu else out


# ---- saving and loading (MXNet 1.x's ctx= keyword, still used by 2.0 tutorials) ----

def test_load_parameters_and_imports_accept_ctx(tmp_path):
    net = _mlp()
    net.initialize()
    x = np.random.uniform(size=(2, 5))
    net.hybridize()
    y = net(x).asnumpy()
    f = str(tmp_path / "net.params")
    net.save_parameters(f)
    net2 = _mlp()
    net2.load_parameters(f, ctx=mx.cpu())
    assert net2[0].weight.data().device == mx.cpu()
    w0, b0 = net2[0].weight.data().asnumpy(), net2[0].bias.data().asnumpy()
    w1, b1 = net2[1].weight.data().asnumpy(), net2[1].bias.data().asnumpy()
    ref = _dense_ref(_dense_ref(x.asnumpy(), w0, b0, relu=True), w1, b1)
    onp.testing.assert_allclose(ref, y, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net2(x).asnumpy(), y, rtol=1e-6)
    sym_file, params_file = net.export(str(tmp_path / "model"), epoch=2)
    sb = gluon.nn.SymbolBlock.imports(sym_file, ["data"], params_file, ctx=mx.cpu())
    onp.testing.assert_allclose(sb(x).asnumpy(), y, rtol=1e-5, atol=1e-6)


# ---- custom blocks with Parameter(...) and infer_shape (the 2.0 custom-layer API) ----

class _MyDense(nn.HybridBlock):
    def __init__(self, units):
        super().__init__()
        self.units = units
        self.weight = gluon.Parameter("weight", shape=(units, -1),
                                      init=init.Constant(0.5), allow_deferred_init=True)
        self.bias = gluon.Parameter("bias", shape=(units,), init="zeros")

    def forward(self, x):
        return npx.relu(np.dot(x, self.weight.data().T) + self.bias.data())

    def infer_shape(self, x, *args):
        self.weight.shape = (self.units, x.shape[-1])


@pytest.mark.parametrize("hybridize", [False, True])
def test_custom_block_infer_shape(hybridize):
    net = _MyDense(4)
    net.initialize(init.Xavier())
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    x = np.array(onp.arange(6.0, dtype="float32").reshape(2, 3) - 2)
    y = net(x)
    assert net.weight.shape == (4, 3)
    ref = onp.maximum(x.asnumpy() @ onp.full((4, 3), 0.5).T, 0)
    onp.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-6)
    x.attach_grad()
    with autograd.record():
        out = net(x).sum()
    out.backward()
    # d/dW sum(relu(x W^T)) = sum over rows with positive output of x
    active = (ref > 0).astype("float32")
    onp.testing.assert_allclose(net.weight.grad().asnumpy(), active.T @ x.asnumpy(),
                                rtol=1e-6)


def test_infer_shape_must_set_the_shape():
    class Lazy(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.weight = gluon.Parameter("weight", shape=(2, 0))

        def forward(self, x):
            return np.dot(x, self.weight.data().T)

        def infer_shape(self, x):
            pass  # forgets to set the shape

    net = Lazy()
    net.initialize()
    with pytest.raises(gluon.parameter.DeferredInitializationError):
        net(np.ones((1, 3)))


# ---- fine-tuning: replacing a hybridized network's output layer ----

def test_replacing_output_layer_after_hybridize():
    class Net(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.features = nn.Dense(4, in_units=3, activation="relu")
            self.output = nn.Dense(5)

        def forward(self, x):
            return self.output(self.features(x))

    net = Net()
    net.initialize()
    net.hybridize()
    x = np.random.uniform(size=(2, 3))
    assert net(x).shape == (2, 5)
    net.output = nn.Dense(2)
    net.output.initialize(init.One())
    y = net(x)
    assert y.shape == (2, 2)
    f = net.features
    h = _dense_ref(x.asnumpy(), f.weight.data().asnumpy(), f.bias.data().asnumpy(), relu=True)
    ref = h @ onp.ones((2, 4)).T
    onp.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_sequential_slice_is_a_sequential():
    for cls in (nn.Sequential, nn.HybridSequential):
        net = cls()
        net.add(nn.Dense(3, in_units=4), nn.Dense(2, in_units=3))
        net.initialize()
        head = net[:1]
        assert type(head) is cls and len(head) == 1 and head[0] is net[0]
        x = np.ones((1, 4))
        w, b = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
        onp.testing.assert_allclose(head(x).asnumpy(), _dense_ref(x.asnumpy(), w, b),
                                    rtol=1e-6)


# ---- initializers ----

def test_initializer_subclass_with_init_weight():
    class Sevens(init.Initializer):
        def _init_weight(self, name, arr):
            arr[:] = 7.0

    net = nn.Dense(2, in_units=3)
    net.initialize(Sevens())
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), onp.full((2, 3), 7.0))
    onp.testing.assert_array_equal(net.bias.data().asnumpy(), onp.zeros(2))
    p = gluon.Parameter("gamma", shape=(3,), init=Sevens())
    p.initialize()
    onp.testing.assert_array_equal(p.data().asnumpy(), onp.ones(3))  # gamma starts at 1


def test_orthogonal_msra_bilinear_lstmbias_mixed():
    mx.random.seed(0)
    p = gluon.Parameter("weight", shape=(3, 5), init=init.Orthogonal(scale=2.0))
    p.initialize()
    w = p.data().asnumpy()
    onp.testing.assert_allclose(w @ w.T, 4.0 * onp.eye(3), atol=1e-4)

    p = gluon.Parameter("weight", shape=(200, 100), init=init.MSRAPrelu(slope=0.0))
    p.initialize()
    # He: gaussian with variance 2 / fan, fan = (100 + 200) / 2 ('avg')
    assert abs(p.data().asnumpy().std() - math.sqrt(2.0 / 150)) < 0.005

    p = gluon.Parameter("weight", shape=(1, 1, 4, 4), init=init.Bilinear())
    p.initialize()
    tri = onp.array([0.25, 0.75, 0.75, 0.25])
    onp.testing.assert_allclose(p.data().asnumpy()[0, 0], onp.outer(tri, tri))

    p = gluon.Parameter("bias", shape=(8,), init=init.LSTMBias(forget_bias=1.5))
    p.initialize()
    onp.testing.assert_array_equal(p.data().asnumpy(), [0, 0, 1.5, 1.5, 0, 0, 0, 0])

    mixed = init.Mixed(["bias", ".*"], [init.Constant(0.3), init.One()])
    for name, value in (("bias", 0.3), ("weight", 1.0)):
        p = gluon.Parameter(name, shape=(2,), init=mixed)
        p.initialize()
        onp.testing.assert_allclose(p.data().asnumpy(), [value, value])
    assert isinstance(init.create("msraprelu"), init.MSRAPrelu)


# ---- Parameter API ----

def test_parameter_lists_grad_req_and_lr_mult():
    net = nn.Dense(1, in_units=2, use_bias=False)
    net.initialize(init.One())
    w = net.weight
    assert w.list_ctx() == [mx.cpu()] and len(w.list_data()) == 1
    assert w.lr_mult == 1.0 and w.wd_mult == 1.0
    w.lr_mult = 0.5
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = np.array([[1.0, 2.0]])
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    onp.testing.assert_allclose(w.list_grad()[0].asnumpy(), [[1.0, 2.0]])
    trainer.step(1)
    # w -= lr * lr_mult * grad
    onp.testing.assert_allclose(w.data().asnumpy(), [[1 - 0.05, 1 - 0.1]], rtol=1e-6)
    net.setattr("grad_req", "null")
    assert w.data().grad is None
    net.setattr("grad_req", "write")
    assert w.grad().shape == (1, 2)


# ---- Trainer ----

def test_trainer_save_and_load_states_resumes(tmp_path):
    def make():
        net = nn.Dense(1, in_units=2)
        net.initialize(init.Constant(0.5))
        return net, gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.1})

    def step(net, trainer):
        with autograd.record():
            loss = (net(np.array([[1.0, 2.0]])) ** 2).sum()
        loss.backward()
        trainer.step(1)

    a, ta = make()
    for _ in range(3):
        step(a, ta)
    a.save_parameters(str(tmp_path / "p"))
    ta.save_states(str(tmp_path / "s"))
    step(a, ta)
    b, tb = make()
    b.load_parameters(str(tmp_path / "p"))
    tb.load_states(str(tmp_path / "s"))
    step(b, tb)
    onp.testing.assert_allclose(b.weight.data().asnumpy(), a.weight.data().asnumpy(),
                                rtol=1e-6)
    assert tb.optimizer.num_update == 4
    c, tc = make()  # without the states Adam restarts its moments: a different step
    c.load_parameters(str(tmp_path / "p"))
    step(c, tc)
    assert not onp.allclose(c.weight.data().asnumpy(), a.weight.data().asnumpy())


def test_trainer_allreduce_grads_then_update():
    net = nn.Dense(1, in_units=1, use_bias=False)
    net.initialize(init.One())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    with autograd.record():
        loss = (net(np.array([[3.0]]))).sum()
    loss.backward()
    trainer.allreduce_grads()
    trainer.update(1)
    onp.testing.assert_allclose(net.weight.data().asnumpy(), [[1.0 - 3.0]])


# ---- metrics ----

def test_mcc_nll_pairwise_distance_cosine():
    mcc = gluon.metric.MCC()
    labels, scores = [0, 1, 1, 0, 1], [0.1, 0.8, 0.3, 0.6, 0.9]
    mcc.update([np.array(labels)], [np.array(scores)])
    pred = [int(s > 0.5) for s in scores]
    tp = sum(p == 1 and t == 1 for p, t in zip(pred, labels))
    tn = sum(p == 0 and t == 0 for p, t in zip(pred, labels))
    fp = sum(p == 1 and t == 0 for p, t in zip(pred, labels))
    fn = sum(p == 0 and t == 1 for p, t in zip(pred, labels))
    ref = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert mcc.get()[0] == "mcc" and abs(mcc.get()[1] - ref) < 1e-12
    assert isinstance(gluon.metric.create("mcc"), gluon.metric.MCC)

    nll = gluon.metric.create("nll_loss")
    nll.update([np.array([1, 0])], [np.array([[0.2, 0.8], [0.4, 0.6]])])
    assert abs(nll.get()[1] - (-math.log(0.8) - math.log(0.4)) / 2) < 1e-6

    mpd = gluon.metric.MeanPairwiseDistance()
    mpd.update([np.array([[0.0, 0.0], [1.0, 1.0]])], [np.array([[3.0, 4.0], [1.0, 2.0]])])
    assert abs(mpd.get()[1] - 3.0) < 1e-6

    cos = gluon.metric.MeanCosineSimilarity()
    cos.update([np.array([[1.0, 0.0], [1.0, 1.0]])], [np.array([[0.0, 1.0], [2.0, 2.0]])])
    assert abs(cos.get()[1] - 0.5) < 1e-6


# ---- gluon.utils ----

def test_check_sha1_and_download_from_file_url(tmp_path):
    src = tmp_path / "data.bin"
    payload = b"ndx tutorial data\n" * 100
    src.write_bytes(payload)
    digest = hashlib.sha1(payload).hexdigest()
    assert gluon.utils.check_sha1(str(src), digest)
    assert not gluon.utils.check_sha1(str(src), "0" * 40)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    fname = gluon.utils.download(src.as_uri(), path=str(out_dir), sha1_hash=digest)
    assert fname == os.path.join(str(out_dir), "data.bin")
    with open(fname, "rb") as f:
        assert f.read() == payload
    with pytest.raises(UserWarning):
        gluon.utils.download(src.as_uri(), path=str(tmp_path / "bad.bin"), sha1_hash="1" * 40,
                             retries=0)
    assert not os.path.exists(tmp_path / "bad.bin")


# ---- optimizers by name, as Trainer(..., 'ftrl' / 'signum', {...}) ----

def _one_weight_steps(name, params, x, steps):
    net = nn.Dense(1, in_units=1, use_bias=False)
    net.initialize(init.One())
    trainer = gluon.Trainer(net.collect_params(), name, params)
    for _ in range(steps):
        with autograd.record():
            loss = net(np.array([[x]])).sum()  # d loss / d w = x
        loss.backward()
        trainer.step(1)
    return net.weight.data().item()


def test_ftrl_one_step_by_hand():
    w = _one_weight_steps("ftrl", {"learning_rate": 0.1, "lamda1": 0.01, "beta": 1.0}, 2.0, 1)
    # n = 4; z = 2 - (sqrt(4) - 0) * 1 / 0.1 = -18
    # w = (sign(z) * 0.01 - z) / ((1 + sqrt(4)) / 0.1) = 17.99 / 30
    assert abs(w - 17.99 / 30) < 1e-6


def test_signum_and_signsgd_by_hand():
    w = _one_weight_steps("signum", {"learning_rate": 0.1, "momentum": 0.9}, 2.0, 2)
    assert abs(w - (1.0 - 0.1 - 0.1)) < 1e-6  # the momentum stays positive: two -lr steps
    w = _one_weight_steps("signum", {"learning_rate": 0.1, "momentum": 0.0}, -3.0, 1)
    assert abs(w - 1.1) < 1e-6
    w = _one_weight_steps("signum", {"learning_rate": 0.1, "momentum": 0.9, "wd_lh": 0.1},
                          2.0, 1)
    assert abs(w - ((1.0 - 0.1 * 0.1) * 1.0 - 0.1)) < 1e-6
