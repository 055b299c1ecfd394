"""An MXNet 2.0 user's audit of mixed precision (mx.amp) in ndx: scripts written as for
`import mxnet as mx`, checked against MXNet's documented behaviour (python/mxnet/amp/amp.py,
src/nnvm/low_precision_pass.cc, tests/python/amp/common.py, tests/python/gpu/test_amp.py) and
against independent references: NumPy on float16-rounded inputs, NumPy optimizer updates, and
the same network trained or run in float32.

The first group holds one test per finding; the second, end-to-end checks of the documented
workflows (training with dynamic loss scaling, clipping after unscale, float16 weights with
float32 master weights, converting and exporting models)."""
import json

import numpy as onp
import pytest

import ndx as mx
from ndx import amp, autograd, gluon, np
from ndx.gluon import nn, rnn


@pytest.fixture(autouse=True)
def _amp_off_after():
    # MXNet's amp.init() is once per process; ndx's private _reset lets each test start clean
    yield
    amp._reset()


def _f16(a):
    return onp.asarray(a, dtype=onp.float32).astype(onp.float16).astype(onp.float32)


def _dense_ref(x, w, b):
    """A float16 dense layer in NumPy: inputs rounded to float16, float32 accumulation, the
    result rounded to float16."""
    return _f16(_f16(x) @ _f16(w).T + _f16(b))


def _graph_nodes(block):
    return json.loads(mx._core._graph_json(block._graph))["nodes"]


def _mlp(seed=0):
    mx.random.seed(seed)
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


# =============================================================================== findings
class _Tagger(nn.HybridBlock):
    """Embedding -> LSTM -> Dense: a sequence tagger."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.lstm = rnn.LSTM(8, layout="NTC")
        self.out = nn.Dense(5, flatten=False)

    def forward(self, x):
        return self.out(self.lstm(self.emb(x)))


def _train_tagger(use_amp, steps=4):
    mx.random.seed(0)
    net = _Tagger()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    rng = onp.random.default_rng(0)
    x = np.array(rng.integers(0, 20, (4, 6)))
    y = np.array(rng.integers(0, 5, (4, 6)))
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    if use_amp:
        amp.init_trainer(trainer)
    loss_fn, losses = gluon.loss.SoftmaxCrossEntropyLoss(), []
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(x), y).mean()
            if use_amp:
                with amp.scale_loss(loss, trainer) as scaled:
                    autograd.backward(scaled)
            else:
                loss.backward()
        trainer.step(1)
        losses.append(float(loss))
    return losses, net, x


def test_gluon_lstm_trains_under_amp_init_float16():
    # MXNet: amp.init() (float16) keeps Gluon RNN layers usable (its RNN op runs in float16
    # on the GPU). ndx's default list put rnn in float16 while its rnn kernel refuses float16
    # data: "[rnn] argument 'data' must be float32 or float64, got float16".
    ref, _, _ = _train_tagger(False)
    amp.init()
    low, net, x = _train_tagger(True)
    onp.testing.assert_allclose(low, ref, rtol=2e-2)
    for p in net.collect_params().values():
        assert p.data().dtype == onp.float32  # the master weights
    # the inference conversion with the default float16 lists works on the tagger too
    amp._reset()
    converted = amp.convert_hybrid_block(net, x, "float16")
    onp.testing.assert_allclose(converted(x).asnumpy(), net(x).asnumpy(), rtol=0, atol=2e-2)


def test_convert_hybrid_block_answers_in_the_original_dtype():
    # MXNet's ReducePrecision pass returns every output AsOriginal: a float32 model converted
    # to float16 still answers in float32 (tests/python/amp/common.py counts the
    # 'net_output_cast'). ndx returned the last dense layer's float16.
    rng = onp.random.default_rng(1)
    x = np.array(rng.normal(size=(4, 5)).astype(onp.float32))
    net = _mlp()
    net(x)
    prm = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
    for offline in (False, True):
        low = amp.convert_hybrid_block(net, x, "float16", cast_params_offline=offline)
        out = low(x)
        assert out.dtype == onp.float32, offline
        h = onp.maximum(_dense_ref(x.asnumpy(), prm["0.weight"], prm["0.bias"]), 0)
        want = _dense_ref(h, prm["1.weight"], prm["1.bias"])
        onp.testing.assert_allclose(out.asnumpy(), want, rtol=2e-3, atol=2e-3)
    # convert_model: the same for a symbol whose last op runs in float16
    d = mx.sym.var("data")
    fc = mx.sym.FullyConnected(d, num_hidden=3, name="fc")
    args = {"fc_weight": np.array(prm["1.weight"][:, :5]), "fc_bias": np.array(prm["1.bias"])}
    sym, args16, _ = amp.convert_model(fc, args, {}, {"data": "float32"}, "float16",
                                       cast_params_offline=True)
    assert args16["fc_weight"].dtype == onp.float16
    res = sym.eval(data=x, **args16)[0]
    assert res.dtype == onp.float32
    onp.testing.assert_allclose(res.asnumpy(), _dense_ref(x.asnumpy(), prm["1.weight"][:, :5],
                                                          prm["1.bias"]), rtol=2e-3, atol=2e-3)


def test_offline_casting_with_custom_lists_runs_unlisted_deconvolution_low():
    # MXNet's test_amp_offline_casting / test_bf16_offline_casting: with
    # target_dtype_ops=['Convolution'] and fp32_ops=['FullyConnected'] the Conv2DTranspose
    # (in no list) follows its float16 input, its weights cast offline: every parameter but
    # the dense layer's is float16. ndx fed it float16 data with float32 weights and failed:
    # "[deconvolution] argument 'weight' has dtype float32, expected float16".
    class TestNet(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.lp16_op1 = nn.Conv2D(4, 3)
            self.lp16_op2 = nn.Conv2DTranspose(4, 3)
            self.fp32_op = nn.Dense(4)

        def forward(self, x):
            x = self.lp16_op1(x)
            x = self.lp16_op2(x)
            x = x.reshape(x.shape[0], -1)
            return self.fp32_op(x)

    mx.random.seed(2)
    net = TestNet()
    net.initialize()
    x = mx.np.random.uniform(-1, 1, (2, 3, 8, 8))
    ref = net(x).asnumpy()
    for dtype in ("float16", "bfloat16"):
        lp_net = amp.convert_hybrid_block(net, x, dtype, target_dtype_ops=["Convolution"],
                                          fp32_ops=["FullyConnected"], cast_params_offline=True)
        out = lp_net(x)
        for name, p in lp_net.collect_params().items():
            assert str(p.data().dtype) == ("float32" if "fp32_op" in name else dtype), name
        casts = [n["attrs"]["dtype"] for n in _graph_nodes(lp_net) if n["op"] == "_npi_amp_cast"]
        assert sorted(casts) == sorted([dtype, "float32"])  # the data, the dense layer's input
        tol = 2e-2 if dtype == "float16" else 6e-2
        onp.testing.assert_allclose(out.asnumpy(), ref, rtol=0,
                                    atol=tol * onp.abs(ref).max())


def test_converted_symbol_block_exports_and_reimports(tmp_path):
    # MXNet: a SymbolBlock holds its graph from the start (SymbolBlock.__init__ sets
    # _cached_graph), so the block convert_hybrid_block returns exports as it is; the
    # tutorial keeps the casts with remove_amp_cast=False. ndx raised "[export] call
    # hybridize() and run the block once before export()", even after hybridize() and a call.
    rng = onp.random.default_rng(3)
    x = np.array(rng.normal(size=(4, 5)).astype(onp.float32))
    net = _mlp()
    net(x)
    low = amp.convert_hybrid_block(net, x, "float16", cast_params_offline=True)
    want = low(x).asnumpy()
    sym_file, params_file = low.export(str(tmp_path / "amp"), remove_amp_cast=False)
    ops = [n["op"] for n in json.load(open(sym_file))["nodes"]]
    assert ops.count("_npi_amp_cast") == 2  # the data in, the answer back to float32
    back = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    assert {str(p.data().dtype) for p in back.collect_params().values()} == {"float16"}
    got = back(x)
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(got.asnumpy(), want)
    # a SymbolBlock loaded from files exports again, unchanged
    again_sym, again_params = back.export(str(tmp_path / "again"), remove_amp_cast=False)
    onp.testing.assert_array_equal(
        gluon.SymbolBlock.imports(again_sym, ["data"], again_params)(x).asnumpy(), want)


def test_convert_hybrid_block_accepts_an_imported_symbol_block(tmp_path):
    # MXNet's convert_hybrid_block takes "HybridBlock or SymbolBlock": the usual inference
    # path loads an exported float32 model and converts it. ndx failed with AttributeError:
    # 'SymbolBlock' object has no attribute '_last_graph'.
    rng = onp.random.default_rng(4)
    x = np.array(rng.normal(size=(4, 5)).astype(onp.float32))
    net = _mlp()
    net.hybridize()
    net(x)
    prm = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
    sym_file, params_file = net.export(str(tmp_path / "f32"))
    imported = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    low = amp.convert_hybrid_block(imported, x, "float16", cast_params_offline=True)
    assert {str(p.data().dtype) for p in low.collect_params().values()} == {"float16"}
    h = onp.maximum(_dense_ref(x.asnumpy(), prm["0.weight"], prm["0.bias"]), 0)
    onp.testing.assert_allclose(low(x).asnumpy(), _dense_ref(h, prm["1.weight"], prm["1.bias"]),
                                rtol=2e-3, atol=2e-3)


def test_bfloat16_lists_run_deconvolution_in_bfloat16():
    # MXNet 2.0's amp/lists/symbol_bf16.py: BF16_FUNCS = Convolution, Deconvolution,
    # FullyConnected. ndx listed deconvolution among the float32 ops for bfloat16.
    assert "_npx_deconvolution" in amp.list_lp16_ops("bfloat16")
    assert "_npx_deconvolution" not in amp.list_fp32_ops("bfloat16")
    mx.random.seed(5)
    layer = nn.Conv2DTranspose(3, 3, in_channels=2)
    layer.initialize()
    x = mx.np.random.uniform(-1, 1, (1, 2, 5, 5))
    # reference: the float32 layer on bfloat16-rounded data and weights, rounded to bfloat16
    w, b = layer.weight.data(), layer.bias.data()
    layer.weight.set_data(w.astype("bfloat16").astype("float32"))
    ref = layer(x.astype("bfloat16").astype("float32")).astype("bfloat16").astype("float32")
    layer.weight.set_data(w)
    layer.bias.set_data(b)
    amp.init("bfloat16")
    out = layer(x)
    assert str(out.dtype) == "bfloat16"
    onp.testing.assert_allclose(out.astype("float32").asnumpy(), ref.asnumpy(), rtol=2e-2,
                                atol=2e-2)


def test_conditional_fp32_rule_on_activation_reaches_gluon_activations():
    # MXNet's Gluon Activation('relu') runs the Activation op with act_type='relu', so
    # conditional_fp32_ops=[('Activation', 'act_type', ['relu'])] runs it in float32, in
    # amp.init() and in convert_hybrid_block. ndx's Gluon runs relu as its own op, which the
    # rule never reached: the layer stayed in float16.
    mx.random.seed(6)
    net = nn.HybridSequential()
    net.add(nn.Dense(6), nn.Activation("relu"), nn.Dense(2))
    net.initialize()
    x = mx.np.random.uniform(-1, 1, (3, 4))
    rule = [("Activation", "act_type", ["relu"])]
    low = amp.convert_hybrid_block(net, x, "float16", conditional_fp32_ops=rule)
    nodes = _graph_nodes(low)
    relu = next(i for i, n in enumerate(nodes) if n["op"] in ("_npx_relu", "_npx_activation"))
    src = nodes[nodes[relu]["inputs"][0][0]]
    assert src["op"] == "_npi_amp_cast" and src["attrs"]["dtype"] == "float32"
    amp.init("float16", conditional_fp32_ops=rule)
    h = np.array([[-1.0, 0.5, 2.0]], dtype="float16")
    assert nn.Activation("relu")(h).dtype == onp.float32
    assert nn.Activation("softrelu")(h).dtype == onp.float16  # (not in this list)


def test_convert_hybrid_block_takes_ctx_for_device():
    # MXNet's convert_hybrid_block is wrapped by util.wrap_ctx_to_device_func, so 1.x-style
    # scripts pass ctx=mx.cpu(); ndx raised TypeError: unexpected keyword argument 'ctx'.
    rng = onp.random.default_rng(11)
    x = np.array(rng.normal(size=(2, 5)).astype(onp.float32))
    net = _mlp()
    net(x)
    low = amp.convert_hybrid_block(net, x, "float16", ctx=mx.cpu())
    onp.testing.assert_array_equal(
        low(x).asnumpy(), amp.convert_hybrid_block(net, x, "float16", device=mx.cpu())(x).asnumpy())
    assert {p.data().device for p in low.collect_params().values()} == {mx.cpu()}


# ===================================================================== end-to-end checks
class _CNN(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.body = nn.HybridSequential()
        self.body.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                      nn.MaxPool2D(2), nn.Conv2D(8, 3, padding=1), nn.Activation("relu"),
                      nn.GlobalAvgPool2D(), nn.Dense(4))

    def forward(self, x):
        return self.body(x)


def _train_cnn(target, steps=12):
    mx.random.seed(0)
    net = _CNN()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    rng = onp.random.default_rng(0)
    x = np.array(rng.normal(size=(16, 3, 8, 8)).astype(onp.float32))
    y = np.array(rng.integers(0, 4, 16))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                          "momentum": 0.9})
    if target:
        amp.init(target)
        amp.init_trainer(trainer)
    loss_fn, losses, out = gluon.loss.SoftmaxCrossEntropyLoss(), [], None
    for _ in range(steps):
        with autograd.record():
            out = net(x)
            loss = loss_fn(out, y).mean()
            if target:
                with amp.scale_loss(loss, trainer) as scaled:
                    autograd.backward(scaled)
            else:
                loss.backward()
        trainer.step(1)
        losses.append(float(loss))
    return onp.array(losses), net, trainer, out


@pytest.mark.parametrize("target, tol", [("float16", 5e-3), ("bfloat16", 2e-2)])
def test_cnn_amp_training_tracks_float32(target, tol):
    ref, _, _, _ = _train_cnn(None)
    low, net, trainer, out = _train_cnn(target)
    assert str(out.dtype) == target  # the last dense layer ran in the target dtype
    assert ref[-1] < ref[0] * 0.9  # (it learns)
    onp.testing.assert_allclose(low, ref, rtol=tol)
    assert trainer.amp_loss_scale == 2.0 ** 16  # no overflow in 12 clean steps
    for p in net.collect_params().values():
        assert p.data().dtype == onp.float32  # master weights
        if p.grad_req != "null":
            assert p.grad().dtype == onp.float32


def test_overflow_skips_the_adam_update_then_training_resumes():
    amp.init()
    net = nn.Dense(3, in_units=4)
    net.initialize(mx.init.Xavier())
    rng = onp.random.default_rng(7)
    x = np.array(rng.normal(size=(8, 4)).astype(onp.float32))
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.1})
    amp.init_trainer(trainer)
    trainer._amp_loss_scaler._loss_scale = 2.0 ** 40  # float16 gradients overflow
    w0 = net.weight.data().asnumpy()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        with amp.scale_loss(loss_fn(net(x), y), trainer) as scaled:
            autograd.backward(scaled)
    assert not onp.isfinite(net.weight.grad().asnumpy()).all()
    trainer.step(8)
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), w0)
    assert trainer.amp_loss_scale == 2.0 ** 39
    assert trainer.optimizer.num_update == 0 and not trainer._states  # Adam never ran
    trainer._amp_loss_scaler._loss_scale = 256.0
    with autograd.record():
        with amp.scale_loss(loss_fn(net(x), y), trainer) as scaled:
            autograd.backward(scaled)
    g = net.weight.grad().asnumpy() / 256.0 / 8  # the unscaled, batch-averaged gradient
    trainer.step(8)
    # first Adam step in NumPy (bias-corrected: the step is lr * g / (|g| + eps))
    want = w0 - 0.1 * g / (onp.abs(g) + 1e-8)
    onp.testing.assert_allclose(net.weight.data().asnumpy(), want, rtol=1e-4, atol=1e-5)


def test_unscale_then_clip_global_norm_gives_the_numpy_update():
    amp.init()
    net = nn.Dense(3, in_units=4)
    net.initialize(mx.init.Xavier())
    rng = onp.random.default_rng(8)
    x = np.array(rng.normal(size=(8, 4)).astype(onp.float32))
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    amp.init_trainer(trainer)
    trainer._amp_loss_scaler._loss_scale = 1024.0  # (2**16 overflows this summed loss)
    w0, b0 = net.weight.data().asnumpy(), net.bias.data().asnumpy()
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), y)
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)
    scaled_g = [net.weight.grad().asnumpy(), net.bias.grad().asnumpy()]
    amp.unscale(trainer)
    g = [s / 1024.0 for s in scaled_g]
    for got, want in zip((net.weight.grad(), net.bias.grad()), g):
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    norm = gluon.utils.clip_global_norm([net.weight.grad(), net.bias.grad()], 1.0)
    want_norm = onp.sqrt(sum((a.astype(onp.float64) ** 2).sum() for a in g))
    onp.testing.assert_allclose(norm, want_norm, rtol=1e-5)
    ratio = min(1.0, 1.0 / want_norm)
    trainer.step(8)
    onp.testing.assert_allclose(net.weight.data().asnumpy(), w0 - 0.5 * g[0] * ratio / 8,
                                rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net.bias.data().asnumpy(), b0 - 0.5 * g[1] * ratio / 8,
                                rtol=1e-5, atol=1e-6)


def test_cast_float16_keeps_batchnorm_float32_and_multi_precision_sgd():
    mx.random.seed(9)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"), nn.Flatten(),
            nn.Dense(3))
    net.initialize(mx.init.Xavier())
    x = mx.np.random.normal(size=(2, 3, 5, 5))
    net(x)
    net.cast("float16")
    dtypes = {k: str(p.data().dtype) for k, p in net.collect_params().items()}
    assert {dtypes[k] for k in dtypes if k.startswith("1.")} == {"float32"}  # BatchNorm
    assert {dtypes[k] for k in dtypes if not k.startswith("1.")} == {"float16"}
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.05, "momentum": 0.9, "multi_precision": True})
    master = {k: p.data().asnumpy().astype(onp.float32) for k, p in net.collect_params().items()}
    mom = {k: onp.zeros_like(v) for k, v in master.items()}
    for _ in range(3):
        with autograd.record():
            loss = (net(x.astype("float16")).astype("float32") ** 2).mean()
        loss.backward()
        grads = {k: p.grad().asnumpy().astype(onp.float32)
                 for k, p in net.collect_params().items() if p.grad_req != "null"}
        trainer.step(1)
        for k, g in grads.items():  # MXNet's mp_sgd_mom_update on float32 master weights
            mom[k] = 0.9 * mom[k] - 0.05 * g
            master[k] = master[k] + mom[k]
    for k, p in net.collect_params().items():
        if k in mom and p.grad_req != "null":
            got = p.data().asnumpy()
            assert str(got.dtype) == dtypes[k]
            onp.testing.assert_allclose(got.astype(onp.float32),
                                        master[k].astype(got.dtype).astype(onp.float32),
                                        rtol=2e-3, atol=1e-4, err_msg=k)
    i = list(net.collect_params()).index("0.weight")  # the float16 conv weight
    state = trainer._states[i]
    assert state[0].dtype == onp.float32  # the master copy kept by the optimizer
    onp.testing.assert_allclose(state[0].asnumpy(), master["0.weight"], rtol=1e-4, atol=1e-6)


def test_convert_model_checkpoint_roundtrip(tmp_path):
    rng = onp.random.default_rng(10)
    x = np.array(rng.normal(size=(2, 3, 5, 5)).astype(onp.float32))
    mx.random.seed(10)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"), nn.Flatten(),
            nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    ref = net(x).asnumpy()
    prefix = str(tmp_path / "net")
    net.export(prefix)
    sym, args, auxs = mx.model.load_checkpoint(prefix, 0)
    lsym, largs, lauxs = amp.convert_model(sym, args, auxs, {"data": "float32"}, "float16",
                                           cast_params_offline=True)
    assert {k: str(v.dtype) for k, v in largs.items()} == {
        "0.weight": "float16", "0.bias": "float16", "1.gamma": "float32",
        "1.beta": "float32", "4.weight": "float16", "4.bias": "float16"}
    assert {str(v.dtype) for v in lauxs.values()} == {"float32"}
    out = lsym.eval(data=x, **largs, **lauxs)[0]
    onp.testing.assert_allclose(out.astype("float32").asnumpy(), ref, rtol=0,
                                atol=1e-2 * onp.abs(ref).max())
    mx.model.save_checkpoint(str(tmp_path / "amp"), 0, lsym, largs, lauxs,
                             remove_amp_cast=False)
    sym2, args2, auxs2 = mx.model.load_checkpoint(str(tmp_path / "amp"), 0)
    assert args2["0.weight"].dtype == onp.float16
    onp.testing.assert_array_equal(sym2.eval(data=x, **args2, **auxs2)[0].asnumpy(),
                                   out.asnumpy())
