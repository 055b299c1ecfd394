"""Regressions from the GluonCV / GluonNLP (MXNet 2.0 numpy era) audit. References: hand
computations, NumPy, and MXNet's documented behaviour."""
import os

import numpy as onp
import pytest

import ndx.compat

ndx.compat.alias_as_mxnet()
import mxnet as mx  # noqa: E402
from mxnet import autograd, gluon, np  # noqa: E402
from mxnet.gluon import nn, rnn  # noqa: E402
from mxnet.gluon.data import batchify  # noqa: E402


def test_ndx_is_the_tested_package():
    assert os.path.dirname(ndx.__file__).endswith("ndx")


# ---- norm layers' initializer keywords (GluonCV's last_gamma / norm_kwargs) ----------------
def test_batchnorm_initializer_keywords():
    bn = nn.BatchNorm(gamma_initializer="zeros", beta_initializer=mx.init.Constant(2.0),
                      running_mean_initializer=mx.init.Constant(1.0),
                      running_variance_initializer=mx.init.Constant(4.0), in_channels=3)
    bn.initialize()
    assert bn.gamma.data().asnumpy().tolist() == [0, 0, 0]
    assert bn.beta.data().asnumpy().tolist() == [2, 2, 2]
    assert bn.running_mean.data().asnumpy().tolist() == [1, 1, 1]
    assert bn.running_var.data().asnumpy().tolist() == [4, 4, 4]
    # predict mode: gamma * (x - 1) / sqrt(4 + eps) + beta = 2 with gamma 0
    out = bn(np.ones((2, 3, 2, 2)) * 5)
    assert onp.allclose(out.asnumpy(), 2.0)
    with pytest.raises(ValueError, match="BatchNormReLU"):
        nn.BatchNorm(fuse_relu=True)


def test_layernorm_center_scale_and_initializers():
    ln = nn.LayerNorm(center=False, scale=False, gamma_initializer=mx.init.Constant(2.0),
                      beta_initializer=mx.init.Constant(1.0), in_channels=4)
    ln.initialize()
    assert ln.gamma.grad_req == "null" and ln.beta.grad_req == "null"
    x = onp.array([[1.0, 2.0, 3.0, 4.0]], dtype="float32")
    ref = 2.0 * (x - 2.5) / onp.sqrt(1.25 + 1e-5) + 1.0
    assert onp.allclose(ln(np.array(x)).asnumpy(), ref, atol=1e-5)


def test_embedding_sparse_grad_keyword():
    emb = nn.Embedding(5, 2, sparse_grad=True)
    emb.initialize(mx.init.One())
    x = np.array([1, 1, 3])
    with autograd.record():
        y = emb(x).sum()
    y.backward()
    g = emb.weight.grad().asnumpy()
    assert g[:, 0].tolist() == [0, 2, 0, 1, 0]


# ---- float16: BatchNorm keeps float32 parameters (MXNet's _BatchNorm.cast) ----------------
def _conv_bn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, in_channels=3), nn.BatchNorm(in_channels=4), nn.Flatten(),
            nn.Dense(2, in_units=4 * 3 * 3))
    net.initialize(mx.init.Xavier())
    return net


@pytest.mark.parametrize("hybridize", [False, True])
def test_cast_float16_keeps_batchnorm_float32(hybridize):
    net = _conv_bn()
    net.cast("float16")
    if hybridize:
        net.hybridize()
    assert net[0].weight.data().dtype == onp.float16
    for p in (net[1].gamma, net[1].beta, net[1].running_mean, net[1].running_var):
        assert p.data().dtype == onp.float32
    x = np.array(onp.random.RandomState(0).normal(size=(4, 3, 5, 5)), dtype="float16")
    with autograd.record():
        out = net(x)
        loss = out.astype("float32").sum()
    loss.backward()
    assert out.dtype == onp.float16
    assert net[1].gamma.grad().dtype == onp.float32
    assert float(np.abs(net[0].weight.grad()).sum()) > 0
    # batch statistics: BatchNorm's output has per-channel mean beta (0) over the batch
    h = net[1](net[0](x))
    assert h.dtype == onp.float16
    # running mean moved from 0 towards the batch mean, in float32
    rm = net[1].running_mean.data().asnumpy()
    conv = net[0](x).asnumpy().astype("float32")
    assert onp.allclose(rm, 0.1 * conv.mean(axis=(0, 2, 3)), atol=2e-3)


def test_batchnorm_float16_data_float32_params():
    bn = nn.BatchNorm(in_channels=2)
    bn.initialize()
    x = onp.array([[[[1.0, 3.0]], [[2.0, 6.0]]]], dtype="float16")  # (1, 2, 1, 2)
    with autograd.record():
        out = bn(np.array(x))
    assert out.dtype == onp.float16
    xf = x.astype("float64")
    mean = xf.mean(axis=(0, 2, 3), keepdims=True)
    var = xf.var(axis=(0, 2, 3), keepdims=True)
    assert onp.allclose(out.asnumpy(), (xf - mean) / onp.sqrt(var + 1e-5), atol=2e-3)


def test_block_cast_calls_child_cast():
    calls = []

    class Child(nn.HybridBlock):
        def cast(self, dtype):
            calls.append(dtype)
            super().cast(dtype)

        def forward(self, x):
            return x

    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=2), Child())
    net.cast("float64")
    assert calls == ["float64"]


# ---- batchify (MXNet 2.0's gluon.data.batchify; GluonNLP's names) --------------------------
def test_pad_mxnet_signature_and_all_axes():
    out = batchify.Pad(-1)([[1, 2, 3], [4]])  # val is the first argument
    assert out.asnumpy().tolist() == [[1, 2, 3], [4, -1, -1]]
    out = batchify.Pad(val=0, dtype="float32")([onp.ones((1, 2)), onp.ones((2, 1))])
    assert out.dtype == onp.float32 and out.shape == (2, 2, 2)
    assert out.asnumpy().tolist() == [[[1, 1], [0, 0]], [[1, 0], [1, 0]]]
    assert batchify.Pad(round_to=4)([[1, 2, 3, 4, 5], [1]]).shape == (2, 8)
    assert batchify.Pad(axis=0, round_to=3)([onp.ones((4, 2))]).shape == (1, 6, 2)
    with pytest.raises(ValueError, match="round_to"):
        batchify.Pad(round_to=0)


def test_tuple_dict_list_append_aslist():
    samples = [([1, 2, 3], 0, "a"), ([4], 1, "b")]
    toks, labels, texts = batchify.Tuple(batchify.Pad(val=0), batchify.Stack(),
                                         batchify.AsList())(samples)
    assert toks.asnumpy().tolist() == [[1, 2, 3], [4, 0, 0]]
    assert labels.asnumpy().tolist() == [0, 1] and texts == ["a", "b"]
    assert batchify.List()([[1], [2, 3]]) == [[1], [2, 3]]
    d = batchify.Dict({"x": batchify.Pad(val=9), "y": batchify.Stack()})(
        [{"x": [1, 2], "y": 3}, {"x": [5], "y": 4}])
    assert d["x"].asnumpy().tolist() == [[1, 2], [5, 9]] and d["y"].asnumpy().tolist() == [3, 4]
    app = batchify.Append()([onp.ones(2), onp.ones(3)])
    assert [a.shape for a in app] == [(1, 2), (1, 3)]
    app = batchify.Append(expand=False)([onp.ones(2)])
    assert app[0].shape == (2,)
    assert batchify.Stack(use_shared_mem=True)([onp.ones(2), onp.zeros(2)]).shape == (2, 2)


def test_dataloader_with_tuple_batchify():
    ds = gluon.data.SimpleDataset([([1, 2, 3], 1), ([4], 0), ([5, 6], 1)])
    fn = batchify.Tuple(batchify.Pad(val=0), batchify.Stack())
    sampler = gluon.data.BatchSampler(gluon.data.SequentialSampler(3), 2, "keep")
    batches = list(gluon.data.DataLoader(ds, batch_sampler=sampler, batchify_fn=fn))
    assert batches[0][0].asnumpy().tolist() == [[1, 2, 3], [4, 0, 0]]
    assert batches[1][0].asnumpy().tolist() == [[5, 6]]


# ---- hybridized blocks with nested (list) inputs and outputs, as RNN language models -------
class _LM(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.rnn = rnn.LSTM(5, num_layers=1, layout="NTC", input_size=4)
        self.out = nn.Dense(6, flatten=False, in_units=5)

    def forward(self, x, states):
        h, states = self.rnn(self.emb(x), states)
        return self.out(h), states


def test_hybridize_list_of_states_in_and_out():
    net = _LM()
    net.initialize(mx.init.Xavier())
    x = np.array([[1, 2, 3], [4, 5, 0]], dtype="int32")
    states = net.rnn.begin_state(batch_size=2, func=np.zeros)
    ref_out, ref_states = net(x, states)
    net.hybridize()
    out, new_states = net(x, states)
    assert isinstance(new_states, list) and len(new_states) == 2
    assert onp.allclose(out.asnumpy(), ref_out.asnumpy(), atol=1e-6)
    for a, b in zip(new_states, ref_states):
        assert onp.allclose(a.asnumpy(), b.asnumpy(), atol=1e-6)
    out2, _ = net(x, states)  # the cached graph
    assert onp.allclose(out2.asnumpy(), ref_out.asnumpy(), atol=1e-6)
    # gradients through the replayed graph
    net.emb.weight.zero_grad()
    with autograd.record():
        o, s = net(x, [st.detach() for st in new_states])
        loss = o.sum() + s[0].sum()
    loss.backward()
    assert float(np.abs(net.emb.weight.grad()).sum()) > 0


def test_hybridize_nested_tuple_and_none_inputs():
    class Net(nn.HybridBlock):
        def forward(self, x, pair, maybe):
            a, (b, c) = pair
            y = x + a * b - c
            return y if maybe is None else y * maybe

    net = Net()
    net.hybridize()
    x, a, b, c = (np.array([1.0, 2.0]) * k for k in (1, 2, 3, 4))
    out = net(x, (a, (b, c)), None)
    assert out.asnumpy().tolist() == [3.0, 18.0]  # x + 6x^2 - 4x at x = 1, 2
    out = net(x, (a, (b, c)), np.array([2.0, 2.0]))
    assert out.asnumpy().tolist() == [6.0, 36.0]
    with pytest.raises(TypeError, match="ndarrays"):
        net(x, (a, (b, "c")), None)


def test_symbol_block_cast_float16_keeps_batch_norm_parameters_float32(tmp_path):
    # MXNet's SymbolBlock.cast('float16') leaves BatchNorm's gamma / beta / statistics float32
    # (its op takes float16 data with float32 parameters); the imported float16 net then
    # computes what the original float16 net does
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Flatten(), nn.Dense(2))
    net.initialize()
    net.cast("float16")
    net.hybridize()
    x = mx.np.ones((1, 3, 5, 5), dtype="float16")
    want = net(x).asnumpy()
    assert net[1].gamma.data().dtype == "float32"
    net.export(str(tmp_path / "m"))
    sb = gluon.SymbolBlock.imports(str(tmp_path / "m-symbol.json"), ["data"],
                                   str(tmp_path / "m-0000.params"))
    sb.cast("float16")
    got = sb(x)
    assert got.dtype == "float16"
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-3, atol=1e-3)
    kept = [n for n, p in sb.collect_params().items() if str(p.data().dtype) == "float32"]
    assert len(kept) == 4  # gamma, beta, running_mean, running_var
