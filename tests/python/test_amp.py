"""Automatic mixed precision (mx.amp): the cast ops, the per-op dtype policy of amp.init,
dynamic loss scaling in the Trainer, and the graph conversions. References: NumPy on
float16-rounded inputs, the same network trained in float32, hand-computed scaler rules
(MXNet's documented LossScaler: start at 2**16, halve and skip on overflow, double after
scale_seq_len clean steps, at most 2**24)."""
import json

import numpy as onp
import pytest

import ndx
from ndx import amp, autograd, gluon, np, npx
from ndx.gluon import nn


@pytest.fixture
def amp_fp16():
    amp.init("float16")
    yield
    amp._reset()


@pytest.fixture
def amp_bf16():
    amp.init("bfloat16")
    yield
    amp._reset()


def _fc_ref(x, w, b, dtype):
    """A dense layer on inputs rounded to dtype, accumulated in float32, rounded to dtype."""
    xr, wr, br = (onp.asarray(a).astype(dtype).astype(onp.float32) for a in (x, w, b))
    return (xr @ wr.T + br).astype(dtype)


# ------------------------------------------------------------------------------ the cast ops
def test_amp_cast_converts_floats_and_leaves_other_dtypes():
    x = onp.array([1.0, 2.5e-3, 70000.0, -3.3], dtype=onp.float32)
    out = ndx.nd._npi_amp_cast(np.array(x), dtype="float16")
    assert out.dtype == onp.float16
    with onp.errstate(over="ignore"):
        onp.testing.assert_array_equal(out.asnumpy(), x.astype(onp.float16))  # 70000 -> inf
    for dt in ("int32", "uint8", "bool", "int64"):
        a = np.array(onp.array([1, 0, 1]).astype(dt))
        r = ndx.nd._npi_amp_cast(a, dtype="float16")
        assert r.dtype == onp.dtype(dt)
        onp.testing.assert_array_equal(r.asnumpy(), a.asnumpy())
    c = np.array(onp.array([1 + 2j], dtype=onp.complex64))
    assert ndx.nd._npi_amp_cast(c, dtype="float16").dtype == onp.complex64
    with pytest.raises(TypeError, match="floating-point"):
        ndx.nd._npi_amp_cast(np.ones(2), dtype="int8")


def test_amp_cast_gradient_returns_to_the_input_dtype():
    x = np.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = ndx.nd._npi_amp_cast(x, dtype="float16")
        loss = (y.astype("float32") * np.array([1.0, 2.0, 3.0])).sum()
    loss.backward()
    assert x.grad.dtype == onp.float32
    onp.testing.assert_array_equal(x.grad.asnumpy(), [1.0, 2.0, 3.0])


def test_amp_multicast_widest_and_narrowest():
    a = np.array([1.0, 2.0], dtype="float16")
    b = np.array([3.0, 4.0], dtype="float32")
    i = np.array([5, 6], dtype="int32")
    wide = ndx.nd._npi_amp_multicast(a, b, i, num_outputs=3)
    assert [o.dtype for o in wide] == [onp.float32, onp.float32, onp.int32]
    narrow = ndx.nd._npi_amp_multicast(a, b, i, num_outputs=3, cast_narrow=True)
    assert [o.dtype for o in narrow] == [onp.float16, onp.float16, onp.int32]
    onp.testing.assert_array_equal(narrow[1].asnumpy(), [3.0, 4.0])
    bf = np.array([1.0], dtype="bfloat16")
    h = np.array([1.0], dtype="float16")
    assert ndx.nd._npi_amp_multicast(bf, h, num_outputs=2)[0].dtype == onp.float32
    with pytest.raises(TypeError, match="narrowest"):
        ndx.nd._npi_amp_multicast(bf, h, num_outputs=2, cast_narrow=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_all_finite_flags_inf_and_nan(dtype):
    base = onp.linspace(-3, 3, 24).reshape(4, 6)
    x = np.array(base, dtype=dtype)
    assert float(ndx.nd._npi_all_finite(x)[0]) == 1.0
    for bad in (onp.inf, -onp.inf, onp.nan):
        y = base.copy()
        y[2, 5] = bad
        assert float(ndx.nd._npi_all_finite(np.array(y, dtype=dtype))[0]) == 0.0
        # a strided view that skips the bad element, and one that holds it
        v = np.array(y, dtype=dtype)
        assert float(ndx.nd._npi_all_finite(v[:, ::5][:, :1])[0]) == 1.0
        assert float(ndx.nd._npi_all_finite(v[:, ::5])[0]) == 0.0


def test_all_finite_of_integers_empty_and_complex():
    assert float(ndx.nd._npi_all_finite(np.array([1, 2], dtype="int64"))[0]) == 1.0
    assert float(ndx.nd._npi_all_finite(np.zeros((0, 3)))[0]) == 1.0
    c = onp.array([1 + 1j, 2 + onp.nan * 1j], dtype=onp.complex64)
    assert float(ndx.nd._npi_all_finite(np.array(c))[0]) == 0.0
    assert float(ndx.nd._npi_all_finite(np.array(c[:1]))[0]) == 1.0


def test_multi_all_finite_and_init_output():
    good = [np.ones((3,)), np.zeros((2, 2), dtype="float16")]
    bad = np.array([1.0, onp.inf])
    assert float(ndx.nd._npi_multi_all_finite(*good, num_arrays=2)[0]) == 1.0
    assert float(ndx.nd._npi_multi_all_finite(good[0], bad, num_arrays=2)[0]) == 0.0
    # init_output=False ANDs into out: a 0 found earlier stays, a 1 stays only when finite
    flag = np.zeros((1,))
    ndx.nd._npi_multi_all_finite(*good, num_arrays=2, init_output=False, out=flag)
    assert float(flag[0]) == 0.0
    flag = np.ones((1,))
    ndx.nd._npi_multi_all_finite(*good, num_arrays=2, init_output=False, out=flag)
    assert float(flag[0]) == 1.0
    ndx.nd._npi_multi_all_finite(bad, num_arrays=1, init_output=False, out=flag)
    assert float(flag[0]) == 0.0


# ------------------------------------------------------------------------- amp.init's policy
def test_init_runs_dense_layers_in_float16_and_exp_in_float32(amp_fp16):
    rng = onp.random.default_rng(0)
    x, w, b = (rng.normal(size=s).astype(onp.float32) for s in ((4, 5), (3, 5), (3,)))
    out = npx.fully_connected(np.array(x), np.array(w), np.array(b), num_hidden=3)
    assert out.dtype == onp.float16
    onp.testing.assert_allclose(out.asnumpy().astype(onp.float32),
                                _fc_ref(x, w, b, onp.float16).astype(onp.float32),
                                rtol=2e-3, atol=2e-3)
    h = np.array([1.0, 2.0], dtype="float16")
    e = np.exp(h)
    assert e.dtype == onp.float32  # float32 list
    onp.testing.assert_allclose(e.asnumpy(), onp.exp([1.0, 2.0]), rtol=1e-6)
    assert np.tanh(h).dtype == onp.float16  # neutral: runs on what it gets
    assert (h + np.array([1.0, 1.0])).dtype == onp.float32  # NumPy's promotion
    assert npx.softmax(h).dtype == onp.float32
    # conditional: softrelu in float32, relu on what it gets
    assert npx.activation(h, act_type="softrelu").dtype == onp.float32
    assert npx.activation(h, act_type="relu").dtype == onp.float16
    # float64 is asked for on purpose: left alone
    assert npx.fully_connected(np.array(x, dtype="float64"), np.array(w, dtype="float64"),
                               np.array(b, dtype="float64"), num_hidden=3).dtype == onp.float64


def test_init_bfloat16_lists(amp_bf16):
    x = np.ones((2, 4))
    w = np.ones((3, 4))
    assert str(npx.fully_connected(x, w, no_bias=True, num_hidden=3).dtype) == "bfloat16"
    y = np.ones((2, 4), dtype="bfloat16")
    assert np.log(y).dtype == onp.float32


def test_reset_turns_the_policy_off():
    amp.init("float16")
    amp._reset()
    out = npx.fully_connected(np.ones((2, 3)), np.ones((4, 3)), no_bias=True, num_hidden=4)
    assert out.dtype == onp.float32


def test_init_validates_its_lists():
    with pytest.raises(ValueError, match="float16"):
        amp.init("int8")
    with pytest.raises(ValueError, match="NoSuchOp"):
        amp.init("float16", target_precision_ops=["NoSuchOp"])
    with pytest.raises(ValueError, match="both"):
        amp.init("float16", target_precision_ops=["_np_exp"], fp32_ops=["_np_exp"])
    with pytest.raises(ValueError, match="conditional"):
        amp.init("float16", conditional_fp32_ops=[("Activation", "act_type")])
    # nothing was turned on by the failed calls
    out = npx.fully_connected(np.ones((2, 3)), np.ones((4, 3)), no_bias=True, num_hidden=4)
    assert out.dtype == onp.float32


def test_lists_name_registered_ops_and_accept_mxnet_names():
    from ndx._registry import ops
    registered = set(ops())
    for t in ("float16", "bfloat16"):
        names = (amp.list_lp16_ops(t) + amp.list_fp32_ops(t) + amp.list_lp16_fp32_ops(t)
                 + [c[0] for c in amp.list_conditional_fp32_ops(t)]
                 + amp.list_widest_type_cast(t))
        assert not set(names) - registered, set(names) - registered
    amp.init("float16", target_precision_ops=["FullyConnected"], fp32_ops=["exp"],
             conditional_fp32_ops=[])
    try:
        assert npx.fully_connected(np.ones((2, 3)), np.ones((4, 3)), no_bias=True,
                                   num_hidden=4).dtype == onp.float16
        assert npx.convolution(np.ones((1, 1, 3, 3)), np.ones((1, 1, 1, 1)), kernel=(1, 1),
                               num_filter=1, no_bias=True).dtype == onp.float32
    finally:
        amp._reset()


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dense(3))
    net.initialize(ndx.init.Xavier())
    return net


def _data(n=32):
    rng = onp.random.default_rng(1)
    x = rng.normal(size=(n, 8)).astype(onp.float32)
    y = (x[:, 0] > 0).astype(onp.int64) + (x[:, 1] > 0)
    return np.array(x), np.array(y)


def _grads(net, x, y):
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        loss = loss_fn(net(x), y).mean()
    loss.backward()
    return {k: p.grad().asnumpy() for k, p in net.collect_params().items()}, loss


def test_amp_gradients_match_float32_training(amp_fp16):
    x, y = _data()
    net = _mlp()
    net(x)
    params = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
    amp._reset()
    ref_grads, ref_loss = _grads(net, x, y)  # float32 throughout
    amp.init("float16")
    grads, loss = _grads(net, x, y)
    for k, p in net.collect_params().items():
        assert p.data().dtype == onp.float32  # master weights stay float32
        onp.testing.assert_array_equal(p.data().asnumpy(), params[k])
        assert grads[k].dtype == onp.float32
        scale = onp.abs(ref_grads[k]).max()
        onp.testing.assert_allclose(grads[k], ref_grads[k], rtol=0, atol=2e-2 * scale)
    assert loss.dtype == onp.float32
    onp.testing.assert_allclose(float(loss), float(ref_loss), rtol=5e-3)


def test_hybridized_amp_graph_holds_the_casts(amp_fp16, tmp_path):
    x, _ = _data(4)
    net = _mlp()
    imperative = net(x)
    assert imperative.dtype == onp.float16
    net.hybridize()
    hybrid = net(x)
    onp.testing.assert_array_equal(hybrid.asnumpy(), imperative.asnumpy())
    sym_file, _ = net.export(str(tmp_path / "kept"), remove_amp_cast=False)
    ops_kept = [n["op"] for n in json.load(open(sym_file))["nodes"]]
    assert ops_kept.count("_npi_amp_cast") >= 4  # data and two weights, two biases
    sym_file, params_file = net.export(str(tmp_path / "clean"))
    ops_clean = [n["op"] for n in json.load(open(sym_file))["nodes"]]
    assert "_npi_amp_cast" not in ops_clean
    assert ops_clean.count("_npx_fully_connected") == 2
    amp._reset()  # the exported float32 graph runs in float32
    back = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    out = back(x)
    assert out.dtype == onp.float32
    onp.testing.assert_allclose(out.asnumpy(), imperative.asnumpy().astype(onp.float32),
                                rtol=2e-2, atol=2e-2)


# --------------------------------------------------------------------- dynamic loss scaling
def test_init_trainer_needs_init_and_a_trainer():
    net = _mlp()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with pytest.raises(RuntimeError, match="amp.init"):
        amp.init_trainer(trainer)
    amp.init("float16")
    try:
        with pytest.raises(TypeError, match="Trainer"):
            amp.init_trainer(ndx.optimizer.SGD())
        with pytest.raises(TypeError, match="Trainer"):
            amp.init_trainer("sgd")
        with pytest.raises(RuntimeError, match="init_trainer"):
            with amp.scale_loss(np.ones(()), trainer):
                pass
    finally:
        amp._reset()


def _twin_nets():
    a, b = _mlp(), _mlp()
    x, _ = _data()
    a(x), b(x)
    for (_, pa), (_, pb) in zip(a.collect_params().items(), b.collect_params().items()):
        pb.set_data(pa.data().copy())
    return a, b


def test_scaled_loss_gives_the_unscaled_update(amp_fp16):
    x, y = _data()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    scaled_net, plain_net = _twin_nets()
    scaled = gluon.Trainer(scaled_net.collect_params(), "sgd", {"learning_rate": 0.5})
    plain = gluon.Trainer(plain_net.collect_params(), "sgd", {"learning_rate": 0.5})
    amp.init_trainer(scaled)
    assert scaled.amp_loss_scale == 2.0 ** 16
    with autograd.record():
        loss = loss_fn(scaled_net(x), y).mean()
        with amp.scale_loss(loss, scaled) as scaled_loss:
            onp.testing.assert_allclose(float(scaled_loss), float(loss) * 2.0 ** 16, rtol=1e-6)
            autograd.backward(scaled_loss)
    scaled.step(1)
    with autograd.record():
        loss = loss_fn(plain_net(x), y).mean()
    loss.backward()
    plain.step(1)
    for (k, pa), (_, pb) in zip(scaled_net.collect_params().items(),
                                plain_net.collect_params().items()):
        # scaling by a power of two is exact away from float16's limits
        onp.testing.assert_allclose(pa.data().asnumpy(), pb.data().asnumpy(), rtol=1e-5,
                                    atol=1e-6, err_msg=k)
    assert scaled.amp_loss_scale == 2.0 ** 16  # a clean step keeps the scale


def test_overflow_skips_the_step_and_halves_the_scale(amp_fp16):
    x, y = _data()
    net = _mlp()
    net(x)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    amp.init_trainer(trainer)
    trainer._amp_loss_scaler._loss_scale = 2.0 ** 40  # float16 gradients overflow
    before = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), y)
        with amp.scale_loss(loss, trainer) as scaled_loss:
            autograd.backward(scaled_loss)
    grads = [p.grad().asnumpy() for p in net.collect_params().values()]
    assert not all(onp.isfinite(g).all() for g in grads)  # the overflow is real
    trainer.step(x.shape[0])
    for k, p in net.collect_params().items():
        onp.testing.assert_array_equal(p.data().asnumpy(), before[k])
    assert trainer.amp_loss_scale == 2.0 ** 39


def test_scale_doubles_after_clean_steps_up_to_the_cap(amp_fp16):
    net = _mlp()
    x, y = _data()
    net(x)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    amp.init_trainer(trainer)
    scaler = trainer._amp_loss_scaler
    scaler._scale_seq_len = 3
    scaler._loss_scale = 1024.0
    for step in range(7):
        with autograd.record():
            loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), y)
            with amp.scale_loss(loss, trainer) as scaled_loss:
                autograd.backward(scaled_loss)
        trainer.step(x.shape[0])
        expected = 1024.0 * 2 ** ((step + 1) // 3)
        assert trainer.amp_loss_scale == expected, step
    scaler._loss_scale = 2.0 ** 24
    scaler._unskipped = 2
    assert scaler.has_overflow(list(net.collect_params().values())) is False  # (finite grads)
    assert trainer.amp_loss_scale == 2.0 ** 24  # the cap


def test_unscale_divides_the_gradients_once(amp_fp16):
    net = _mlp()
    x, y = _data()
    net(x)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer)
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), y)
        with amp.scale_loss(loss, trainer) as scaled_loss:
            autograd.backward(scaled_loss)
    scaled = {k: p.grad().asnumpy() for k, p in net.collect_params().items()}
    amp.unscale(trainer)
    assert trainer._scale == 1.0
    for k, p in net.collect_params().items():
        onp.testing.assert_allclose(p.grad().asnumpy(), scaled[k] / 2.0 ** 16, rtol=1e-6)
    with pytest.raises(TypeError, match="Trainer"):
        amp.unscale(ndx.optimizer.SGD())


# ------------------------------------------------------------------------ graph conversions
def _graph_ops(block):
    return [n["op"] for n in json.loads(ndx._core._graph_json(block._graph))["nodes"]]


def test_convert_hybrid_block_runs_dense_layers_in_float16():
    x, _ = _data(4)
    net = _mlp()
    ref = net(x).asnumpy()
    params = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
    low = amp.convert_hybrid_block(net, x, "float16")
    out = low(x)
    # MXNet's conversion casts each output back to its original dtype (its net_output_cast)
    assert out.dtype == onp.float32
    # a NumPy forward pass with each dense layer's inputs rounded to float16
    h = onp.maximum(_fc_ref(x.asnumpy(), params["0.weight"], params["0.bias"], onp.float16), 0)
    want = _fc_ref(h, params["1.weight"], params["1.bias"], onp.float16)
    onp.testing.assert_allclose(out.asnumpy().astype(onp.float32), want.astype(onp.float32),
                                rtol=2e-3, atol=2e-3)
    onp.testing.assert_allclose(out.asnumpy().astype(onp.float32), ref, rtol=2e-2, atol=2e-2)
    # the data, two weights and two biases are cast, and the output back to float32; relu's
    # float16 output is not cast again
    assert _graph_ops(low).count("_npi_amp_cast") == 6
    offline = amp.convert_hybrid_block(net, x, "float16", cast_params_offline=True)
    assert {str(p.data().dtype) for p in offline.collect_params().values()} == {"float16"}
    assert _graph_ops(offline).count("_npi_amp_cast") == 2  # the data, and the output back
    onp.testing.assert_array_equal(offline(x).asnumpy(), out.asnumpy())
    for k, p in net.collect_params().items():  # the source block is unchanged
        assert p.data().dtype == onp.float32
        onp.testing.assert_array_equal(p.data().asnumpy(), params[k])


def test_convert_model_and_excluded_nodes():
    rng = onp.random.default_rng(3)
    x = rng.normal(size=(2, 4)).astype(onp.float32)
    wv = (rng.normal(size=(3, 4)) / 4).astype(onp.float32)
    d, w = ndx.sym.var("data"), ndx.sym.var("w")
    fc = ndx.sym._npx_fully_connected(d, w, no_bias=True, num_hidden=3, name="fc")
    out = ndx.sym._np_exp(fc, name="e")
    sym, args, aux = amp.convert_model(out, {"w": np.array(wv)}, {}, {"data": "float32"},
                                       "float16", cast_params_offline=True)
    assert args["w"].dtype == onp.float16 and aux == {}
    ops = [n["op"] for n in json.loads(sym.tojson())["nodes"]]
    assert ops.count("_npi_amp_cast") == 2  # the data to float16, fc's output to float32
    res = sym.eval(data=np.array(x), w=args["w"])[0]
    assert res.dtype == onp.float32
    want = onp.exp(_fc_ref(x, wv, onp.zeros(3, onp.float32), onp.float16).astype(onp.float32))
    onp.testing.assert_allclose(res.asnumpy(), want, rtol=1e-6)
    # fc excluded: it runs in float32 like the rest, so no cast is needed anywhere
    plain = amp.convert_symbol(out, {"data": "float32"}, {"w": "float32"}, "float16",
                               excluded_sym_names=["fc"])
    assert "_npi_amp_cast" not in [n["op"] for n in json.loads(plain.tojson())["nodes"]]
    res = plain.eval(data=np.array(x), w=np.array(wv))[0]
    onp.testing.assert_allclose(res.asnumpy(), onp.exp(x @ wv.T), rtol=1e-5)


def test_conversions_reject_bad_arguments():
    x, _ = _data(2)
    with pytest.raises(TypeError, match="HybridBlock"):
        amp.convert_hybrid_block(nn.Block(), x, "float16")
    with pytest.raises(TypeError, match="ndarrays"):
        amp.convert_hybrid_block(_mlp(), onp.ones((2, 8)), "float16")
    with pytest.raises(ValueError, match="float16"):
        amp.convert_hybrid_block(_mlp(), x, "int8")
    d = ndx.sym.var("data")
    with pytest.raises(TypeError, match="dict"):
        amp.convert_model(d, [], {}, {"data": "float32"}, "float16")
    with pytest.raises(TypeError, match="Symbol"):
        amp.convert_symbol("graph", {}, {}, "float16")


def test_unscale_divides_every_device_copy(amp_fp16):
    # a parameter initialized on two devices has a gradient per copy: unscale divides each
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dense(3))
    devices = [ndx.cpu(0), ndx.cpu(1)]
    net.initialize(ndx.init.Xavier(), ctx=devices)
    x, y = _data()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer)
    xs, ys = gluon.utils.split_and_load(x, devices), gluon.utils.split_and_load(y, devices)
    with autograd.record():
        losses = [gluon.loss.SoftmaxCrossEntropyLoss()(net(a), b) for a, b in zip(xs, ys)]
        with amp.scale_loss(losses, trainer) as scaled:
            autograd.backward(scaled)
    before = {k: [g.asnumpy() for g in p.list_grad()] for k, p in net.collect_params().items()}
    amp.unscale(trainer)
    for k, p in net.collect_params().items():
        for got, want in zip(p.list_grad(), before[k]):
            onp.testing.assert_allclose(got.asnumpy(), want / 2.0 ** 16, rtol=1e-6)
