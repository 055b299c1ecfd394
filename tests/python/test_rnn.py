"""npx.rnn and gluon.rnn against a NumPy implementation of MXNet's documented equations (vanilla
RNN, LSTM, cuDNN's GRU; cuDNN's parameter packing), numeric gradients of that reference, the
layers against the unrolled cells, dropout between layers, hybridize, and typed errors."""
import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np, npx
from strict_checks import assert_almost_equal

MODES = ["rnn_relu", "rnn_tanh", "lstm", "gru"]
GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


# ---------------------------------------------------------------- NumPy reference
def _sigmoid(x):
    return 1.0 / (1.0 + onp.exp(-x))


def _unpack(params, mode, n_in, H, L, D):
    """{(layer, dir): (Wi, Wh, bi, bh)} from cuDNN's packing: every weight (layer by layer,
    direction by direction, i2h then h2h), then every bias in the same order."""
    G = GATES[mode]
    out, off = {}, 0
    for layer in range(L):
        ni = n_in if layer == 0 else D * H
        for d in range(D):
            wi = params[off:off + G * H * ni].reshape(G * H, ni)
            off += G * H * ni
            wh = params[off:off + G * H * H].reshape(G * H, H)
            off += G * H * H
            out[layer, d] = [wi, wh]
    for layer in range(L):
        for d in range(D):
            out[layer, d].append(params[off:off + G * H])
            out[layer, d].append(params[off + G * H:off + 2 * G * H])
            off += 2 * G * H
    assert off == params.size
    return out


def _param_size(mode, n_in, H, L, D):
    G = GATES[mode]
    return sum(D * G * H * ((n_in if k == 0 else D * H) + H + 2) for k in range(L))


def _step(mode, x, h, c, wi, wh, bi, bh):
    xi, hh = x @ wi.T + bi, h @ wh.T + bh
    if mode == "rnn_relu":
        return onp.maximum(xi + hh, 0), c
    if mode == "rnn_tanh":
        return onp.tanh(xi + hh), c
    if mode == "lstm":
        i, f, g, o = onp.split(xi + hh, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * onp.tanh(g)
        return _sigmoid(o) * onp.tanh(c), c
    xr, xz, xn = onp.split(xi, 3, axis=1)
    hr, hz, hn = onp.split(hh, 3, axis=1)
    r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
    n = onp.tanh(xn + r * hn)
    return (1 - z) * n + z * h, c


def ref_rnn(mode, x, params, h0, c0, H, L, bidirectional, masks=None):
    """out (T, N, D*H), hy, cy; masks[l] multiplies layer l's output before layer l + 1."""
    T, N, n_in = x.shape
    D = 2 if bidirectional else 1
    w = _unpack(params, mode, n_in, H, L, D)
    layer_in, hy, cy = x, [], []
    for layer in range(L):
        outs = []
        for d in range(D):
            h = h0[layer * D + d]
            c = c0[layer * D + d] if c0 is not None else None
            ys = [None] * T
            for t in (range(T) if d == 0 else reversed(range(T))):
                h, c = _step(mode, layer_in[t], h, c, *w[layer, d])
                ys[t] = h
            outs.append(onp.stack(ys) if T else onp.zeros((0, N, H)))
            hy.append(h)
            cy.append(c)
        layer_in = onp.concatenate(outs, axis=2)
        if masks is not None and layer < L - 1:
            layer_in = layer_in * masks[layer]
    return layer_in, onp.stack(hy), (onp.stack(cy) if c0 is not None else None)


def _inputs(mode, T=4, N=3, n_in=5, H=4, L=2, bidirectional=True, seed=0, dtype=onp.float64):
    rng = onp.random.default_rng(seed)
    D = 2 if bidirectional else 1
    x = rng.normal(size=(T, N, n_in))
    params = rng.normal(scale=0.5, size=_param_size(mode, n_in, H, L, D))
    h0 = rng.normal(size=(L * D, N, H))
    c0 = rng.normal(size=(L * D, N, H)) if mode == "lstm" else None
    def cast(a):
        return None if a is None else a.astype(dtype)

    return cast(x), cast(params), cast(h0), cast(c0)


def _npx_rnn(mode, x, params, h0, c0, H, L, bidirectional, **kw):
    args = dict(mode=mode, state_size=H, num_layers=L, bidirectional=bidirectional,
                state_outputs=True, **kw)
    if c0 is not None:
        args["state_cell"] = np.array(c0)
    return npx.rnn(np.array(x), np.array(params), np.array(h0), **args)


# ---------------------------------------------------------------- the op's forward
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("L,bidirectional", [(1, False), (2, False), (2, True), (3, True)])
def test_npx_rnn_forward_matches_reference(mode, L, bidirectional):
    x, params, h0, c0 = _inputs(mode, L=L, bidirectional=bidirectional)
    want = ref_rnn(mode, x, params, h0, c0, 4, L, bidirectional)
    got = _npx_rnn(mode, x, params, h0, c0, 4, L, bidirectional)
    assert len(got) == (3 if mode == "lstm" else 2)
    for g, w in zip(got, want):
        assert g.dtype == onp.float64
        assert_almost_equal(g.asnumpy(), w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_npx_rnn_float32_and_single_output(mode):
    x, params, h0, c0 = _inputs(mode, dtype=onp.float32)
    want = ref_rnn(mode, x.astype(onp.float64), params.astype(onp.float64),
                   h0.astype(onp.float64), None if c0 is None else c0.astype(onp.float64),
                   4, 2, True)
    args = dict(mode=mode, state_size=4, num_layers=2, bidirectional=True)
    if c0 is not None:
        args["state_cell"] = np.array(c0)
    out = npx.rnn(np.array(x), np.array(params), np.array(h0), **args)  # state_outputs False
    assert isinstance(out, np.ndarray) and out.dtype == onp.float32
    assert_almost_equal(out.asnumpy(), want[0].astype(onp.float32), rtol=1e-4, atol=1e-5)


def test_npx_rnn_empty_sequence_keeps_the_states():
    x, params, h0, c0 = _inputs("lstm", T=0)
    out, hy, cy = _npx_rnn("lstm", x, params, h0, c0, 4, 2, True)
    assert out.shape == (0, 3, 8)
    assert_almost_equal(hy.asnumpy(), h0)
    assert_almost_equal(cy.asnumpy(), c0)


# ---------------------------------------------------------------- gradients
def _numeric_grad(f, arrays, eps=1e-6):
    grads = []
    for a in arrays:
        g = onp.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            up = f()
            flat[i] = old - eps
            down = f()
            flat[i] = old
            gflat[i] = (up - down) / (2 * eps)
        grads.append(g)
    return grads


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("L,bidirectional", [(1, False), (2, True)])
def test_npx_rnn_gradients_match_numeric(mode, L, bidirectional):
    T, N, n_in, H = 3, 2, 3, 2
    x, params, h0, c0 = _inputs(mode, T=T, N=N, n_in=n_in, H=H, L=L, bidirectional=bidirectional,
                                seed=1)
    rng = onp.random.default_rng(2)
    D = 2 if bidirectional else 1
    w_out = rng.normal(size=(T, N, D * H))
    w_h = rng.normal(size=(L * D, N, H))
    w_c = rng.normal(size=(L * D, N, H))

    def loss_ref():
        out, hy, cy = ref_rnn(mode, x, params, h0, c0, H, L, bidirectional)
        total = (out * w_out).sum() + (hy * w_h).sum()
        return total + ((cy * w_c).sum() if cy is not None else 0.0)

    arrays = [x, params, h0] + ([c0] if c0 is not None else [])
    want = _numeric_grad(loss_ref, arrays)
    nd_arrays = [np.array(a) for a in arrays]
    for a in nd_arrays:
        a.attach_grad()
    with autograd.record():
        res = npx.rnn(*nd_arrays, mode=mode, state_size=H, num_layers=L,
                      bidirectional=bidirectional, state_outputs=True)
        loss = (res[0] * np.array(w_out)).sum() + (res[1] * np.array(w_h)).sum()
        if mode == "lstm":
            loss = loss + (res[2] * np.array(w_c)).sum()
    loss.backward()
    for name, a, g in zip(["data", "parameters", "state", "state_cell"], nd_arrays, want):
        assert_almost_equal(a.grad.asnumpy(), g, rtol=1e-5, atol=1e-7)


def test_npx_rnn_gradient_of_output_alone():
    """Without state outputs (their ograds are zeros) the gradient still flows to the states."""
    x, params, h0, c0 = _inputs("gru", T=3, N=2, n_in=2, H=2, L=2, bidirectional=False, seed=3)

    def loss_ref():
        return ref_rnn("gru", x, params, h0, None, 2, 2, False)[0].sum()

    want = _numeric_grad(loss_ref, [x, params, h0])
    arrays = [np.array(a) for a in (x, params, h0)]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        out = npx.rnn(*arrays, mode="gru", state_size=2, num_layers=2)
    out.backward()
    for a, g in zip(arrays, want):
        assert_almost_equal(a.grad.asnumpy(), g, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- dropout between layers
def test_dropout_zero_is_deterministic_in_training():
    x, params, h0, c0 = _inputs("lstm")
    with autograd.record():
        a = _npx_rnn("lstm", x, params, h0, c0, 4, 2, True, p=0.0)[0]
        b = _npx_rnn("lstm", x, params, h0, c0, 4, 2, True, p=0.0)[0]
    assert onp.array_equal(a.asnumpy(), b.asnumpy())


def test_dropout_train_vs_inference():
    x, params, h0, c0 = _inputs("gru", T=6, N=4, H=8, L=2, bidirectional=False)
    ref = ref_rnn("gru", x, params, h0, c0, 8, 2, False)[0]
    # Inference: no dropout at all.
    out = _npx_rnn("gru", x, params, h0, c0, 8, 2, False, p=0.5)[0]
    assert_almost_equal(out.asnumpy(), ref, rtol=1e-10, atol=1e-12)
    with autograd.record():
        a = _npx_rnn("gru", x, params, h0, c0, 8, 2, False, p=0.5)[0].asnumpy()
        b = _npx_rnn("gru", x, params, h0, c0, 8, 2, False, p=0.5)[0].asnumpy()
    assert not onp.allclose(a, ref) and not onp.allclose(a, b)
    # One layer: nothing lies between layers, so p changes nothing even in training.
    x1, p1, h1, _ = _inputs("gru", L=1, bidirectional=False)
    with autograd.record():
        one = _npx_rnn("gru", x1, p1, h1, None, 4, 1, False, p=0.5)[0]
    assert_almost_equal(one.asnumpy(), ref_rnn("gru", x1, p1, h1, None, 4, 1, False)[0],
                        rtol=1e-10, atol=1e-12)


def test_dropout_gradient_matches_numeric_with_the_same_masks():
    """With the generator reseeded before each call every forward draws the same masks, so the
    training-mode loss is a smooth function whose numeric gradient the backward must match."""
    T, N, n_in, H = 3, 2, 2, 3
    x, params, h0, _ = _inputs("rnn_tanh", T=T, N=N, n_in=n_in, H=H, L=3, bidirectional=True,
                               seed=4)

    def loss_nd(xv):
        ndx.random.seed(7)
        with autograd.train_mode():
            return float(npx.rnn(np.array(xv), np.array(params), np.array(h0),
                                 mode="rnn_tanh", state_size=H, num_layers=3,
                                 bidirectional=True, p=0.4).sum())

    want = _numeric_grad(lambda: loss_nd(x), [x])[0]
    xa = np.array(x)
    xa.attach_grad()
    ndx.random.seed(7)
    with autograd.record():
        out = npx.rnn(xa, np.array(params), np.array(h0), mode="rnn_tanh", state_size=H,
                      num_layers=3, bidirectional=True, p=0.4)
    out.backward()
    assert_almost_equal(xa.grad.asnumpy(), want, rtol=1e-5, atol=1e-7)
    # and the masks really dropped something: the gradient differs from p=0's
    xb = np.array(x)
    xb.attach_grad()
    with autograd.record():
        npx.rnn(xb, np.array(params), np.array(h0), mode="rnn_tanh", state_size=H,
                num_layers=3, bidirectional=True).backward()
    assert not onp.allclose(xb.grad.asnumpy(), want)


# ---------------------------------------------------------------- gluon layers
def _mxnet_names(L, D):
    return [f"{d}{i}_{g}_{t}" for i in range(L) for d in "lr"[:D]
            for g, t in (("i2h", "weight"), ("h2h", "weight"), ("i2h", "bias"), ("h2h", "bias"))]


def _layer(mode, H, L, bidirectional, layout="TNC", dtype="float64", **kw):
    cls = {"rnn_relu": gluon.rnn.RNN, "rnn_tanh": gluon.rnn.RNN, "lstm": gluon.rnn.LSTM,
           "gru": gluon.rnn.GRU}[mode]
    if mode.startswith("rnn_"):
        kw["activation"] = mode[4:]
    layer = cls(H, num_layers=L, bidirectional=bidirectional, layout=layout, dtype=dtype, **kw)
    layer.initialize()
    return layer


def _load_packed(layer, params, mode, n_in, H, L, D):
    w = _unpack(params, mode, n_in, H, L, D)
    for (i, d), (wi, wh, bi, bh) in w.items():
        j = "lr"[d]
        for name, value in (("i2h_weight", wi), ("h2h_weight", wh), ("i2h_bias", bi),
                            ("h2h_bias", bh)):
            getattr(layer, f"{j}{i}_{name}").set_data(np.array(value))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", ["TNC", "NTC"])
def test_layer_matches_reference(mode, layout):
    x, params, h0, c0 = _inputs(mode)
    layer = _layer(mode, 4, 2, True, layout=layout)
    assert list(layer.collect_params()) == _mxnet_names(2, 2)
    xin = x if layout == "TNC" else x.transpose(1, 0, 2)
    layer(np.array(xin))  # the first call settles the deferred input size
    assert layer.l0_i2h_weight.shape == (GATES[mode] * 4, 5)
    assert layer.l1_i2h_weight.shape == (GATES[mode] * 4, 8)
    _load_packed(layer, params, mode, 5, 4, 2, 2)
    want_out, want_h, want_c = ref_rnn(mode, x, params, h0, c0, 4, 2, True)
    if layout == "NTC":
        want_out = want_out.transpose(1, 0, 2)
    states = [np.array(h0)] + ([np.array(c0)] if c0 is not None else [])
    out, new_states = layer(np.array(xin), states if mode == "lstm" else states[0])
    assert isinstance(new_states, list) and len(new_states) == len(states)
    assert_almost_equal(out.asnumpy(), want_out, rtol=1e-10, atol=1e-12)
    assert_almost_equal(new_states[0].asnumpy(), want_h, rtol=1e-10, atol=1e-12)
    if mode == "lstm":
        assert_almost_equal(new_states[1].asnumpy(), want_c, rtol=1e-10, atol=1e-12)
    # Without states: zeros, and the output alone comes back.
    zeros = onp.zeros_like(h0)
    only = layer(np.array(xin))
    want0 = ref_rnn(mode, x, params, zeros, None if c0 is None else zeros, 4, 2, True)[0]
    assert isinstance(only, np.ndarray)
    assert_almost_equal(only.asnumpy(), want0 if layout == "TNC" else want0.transpose(1, 0, 2),
                        rtol=1e-10, atol=1e-12)


def test_layer_begin_state_and_repr():
    layer = gluon.rnn.LSTM(6, num_layers=3, bidirectional=True, input_size=4)
    states = layer.begin_state(batch_size=5)
    assert [s.shape for s in states] == [(6, 5, 6), (6, 5, 6)]
    assert states[0].dtype == onp.float32 and float(abs(states[0]).sum()) == 0.0
    assert repr(layer) == "LSTM(4 -> 6, TNC, num_layers=3, bidirectional)"
    assert gluon.rnn.GRU(3).state_info(2)[0]["shape"] == (1, 2, 3)


def test_layer_gradients_reach_every_parameter():
    x, params, h0, _ = _inputs("gru", T=3, N=2, n_in=3, H=2, L=2, bidirectional=True, seed=5)
    layer = _layer("gru", 2, 2, True)
    layer(np.array(x))
    _load_packed(layer, params, "gru", 3, 2, 2, 2)

    def loss_ref():
        return (ref_rnn("gru", x, params, h0, None, 2, 2, True)[0] ** 2).sum()

    want_params = _numeric_grad(loss_ref, [params])[0]
    with autograd.record():
        out, _ = layer(np.array(x), np.array(h0))
        loss = (out ** 2).sum()
    loss.backward()
    grads = {n: p.grad().asnumpy() for n, p in layer.collect_params().items()}
    got = {}  # the numeric gradient, unpacked the same way as the parameters
    for (i, d), arrays in _unpack(want_params, "gru", 3, 2, 2, 2).items():
        for name, g in zip(("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"), arrays):
            got[f"{'lr'[d]}{i}_{name}"] = g
    assert set(got) == set(grads)
    for name in got:
        assert_almost_equal(grads[name], got[name], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_layer_hybridized_matches_imperative(mode):
    x, params, h0, c0 = _inputs(mode)
    xin = np.array(x.transpose(1, 0, 2))
    layer = _layer(mode, 4, 2, True, layout="NTC")
    layer(xin)
    _load_packed(layer, params, mode, 5, 4, 2, 2)
    states = [np.array(h0)] + ([np.array(c0)] if c0 is not None else [])
    ref_out = layer(xin).asnumpy()
    ref_full, ref_states = layer(xin, states)
    xa = np.array(xin)
    xa.attach_grad()
    with autograd.record():
        loss = (layer(xa) ** 2).sum()
    loss.backward()
    ref_grad = xa.grad.asnumpy()
    ref_pgrad = layer.l1_h2h_weight.grad().asnumpy()

    layer.hybridize()
    assert_almost_equal(layer(xin).asnumpy(), ref_out, rtol=1e-12, atol=1e-12)
    out, new_states = layer(xin, states)
    assert_almost_equal(out.asnumpy(), ref_full.asnumpy(), rtol=1e-12, atol=1e-12)
    for a, b in zip(new_states, ref_states):
        assert_almost_equal(a.asnumpy(), b.asnumpy(), rtol=1e-12, atol=1e-12)
    xb = np.array(xin)
    xb.attach_grad()
    with autograd.record():
        loss = (layer(xb) ** 2).sum()
    loss.backward()
    assert_almost_equal(xb.grad.asnumpy(), ref_grad, rtol=1e-10, atol=1e-12)
    assert_almost_equal(layer.l1_h2h_weight.grad().asnumpy(), ref_pgrad, rtol=1e-10,
                        atol=1e-12)


def test_layer_dropout_only_in_training():
    x, _, _, _ = _inputs("lstm", dtype=onp.float32)
    layer = gluon.rnn.LSTM(8, num_layers=2, dropout=0.5)
    layer.initialize()
    infer_a = layer(np.array(x)).asnumpy()
    infer_b = layer(np.array(x)).asnumpy()
    assert onp.array_equal(infer_a, infer_b)
    with autograd.record():
        train = layer(np.array(x)).asnumpy()
    assert not onp.allclose(train, infer_a)


def test_layer_parameters_round_trip(tmp_path):
    x, params, h0, c0 = _inputs("lstm", dtype=onp.float32)
    layer = gluon.rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=5)
    layer.initialize()
    _load_packed(layer, params.astype(onp.float32), "lstm", 5, 4, 2, 2)
    path = str(tmp_path / "lstm.params")
    layer.save_parameters(path)
    other = gluon.rnn.LSTM(4, num_layers=2, bidirectional=True)
    other.load_parameters(path)
    assert_almost_equal(other(np.array(x)).asnumpy(), layer(np.array(x)).asnumpy())


# ---------------------------------------------------------------- cells
def _copy_cell(cell, layer, name):
    for g in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"):
        getattr(cell, g).set_data(getattr(layer, f"{name}_{g}").data())


@pytest.mark.parametrize("mode", MODES)
def test_layer_matches_unrolled_cells(mode):
    x, params, h0, c0 = _inputs(mode)
    layer = _layer(mode, 4, 2, True)
    layer(np.array(x))
    _load_packed(layer, params, mode, 5, 4, 2, 2)

    def make():
        if mode == "lstm":
            return gluon.rnn.LSTMCell(4)
        if mode == "gru":
            return gluon.rnn.GRUCell(4)
        return gluon.rnn.RNNCell(4, activation=mode[4:])

    stack = gluon.rnn.SequentialRNNCell()
    for _ in range(2):
        stack.add(gluon.rnn.BidirectionalCell(make(), make()))
    for p in stack.collect_params().values():  # cells take no dtype (as in MXNet)
        p.dtype = "float64"
    stack.initialize()
    # cells' states: per layer [l_cell's..., r_cell's...], each (N, H)
    begin = []
    for i in range(2):
        for d in range(2):
            begin.append(np.array(h0[2 * i + d]))
            if mode == "lstm":
                begin.append(np.array(c0[2 * i + d]))
    stack.unroll(4, np.array(x), begin_state=begin, layout="TNC", merge_outputs=True)
    for i in range(2):
        _copy_cell(stack[i].l_cell, layer, f"l{i}")
        _copy_cell(stack[i].r_cell, layer, f"r{i}")
    out, states = stack.unroll(4, np.array(x), begin_state=begin, layout="TNC",
                               merge_outputs=True)
    want_out, want_h, want_c = ref_rnn(mode, x, params, h0, c0, 4, 2, True)
    assert_almost_equal(out.asnumpy(), want_out, rtol=1e-10, atol=1e-12)
    layer_states = [np.array(h0)] + ([np.array(c0)] if c0 is not None else [])
    lout, lstates = layer(np.array(x), layer_states)
    assert_almost_equal(out.asnumpy(), lout.asnumpy(), rtol=1e-10, atol=1e-12)
    per = 2 if mode == "lstm" else 1
    for k in range(4):
        assert_almost_equal(states[k * per].asnumpy(), want_h[k], rtol=1e-10, atol=1e-12)
        if mode == "lstm":
            assert_almost_equal(states[k * per + 1].asnumpy(), want_c[k], rtol=1e-10,
                                atol=1e-12)


def test_cell_names_and_list_unroll():
    stack = gluon.rnn.SequentialRNNCell()
    stack.add(gluon.rnn.LSTMCell(3, input_size=2))
    stack.add(gluon.rnn.BidirectionalCell(gluon.rnn.GRUCell(3), gluon.rnn.GRUCell(3)))
    assert list(stack.collect_params()) == [
        "0.i2h_weight", "0.h2h_weight", "0.i2h_bias", "0.h2h_bias",
        "1.l_cell.i2h_weight", "1.l_cell.h2h_weight", "1.l_cell.i2h_bias",
        "1.l_cell.h2h_bias", "1.r_cell.i2h_weight", "1.r_cell.h2h_weight",
        "1.r_cell.i2h_bias", "1.r_cell.h2h_bias"]
    stack.initialize()
    steps = [np.ones((4, 2)) for _ in range(5)]
    outs, states = stack.unroll(5, steps, merge_outputs=False)
    assert isinstance(outs, list) and len(outs) == 5 and outs[0].shape == (4, 6)
    assert [s.shape for s in states] == [(4, 3)] * 4
    merged, _ = stack.unroll(5, np.ones((4, 5, 2)), layout="NTC", merge_outputs=True)
    assert merged.shape == (4, 5, 6)
    assert_almost_equal(merged.asnumpy()[:, 2], outs[2].asnumpy())


def test_rnn_cell_step_against_numpy():
    rng = onp.random.default_rng(6)
    cell = gluon.rnn.RNNCell(3, activation="relu", input_size=2)
    cell.initialize()
    w = {g: rng.normal(size=getattr(cell, g).shape) for g in
         ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")}
    for g, v in w.items():
        getattr(cell, g).set_data(np.array(v.astype(onp.float32)))
    x, h = rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    out, states = cell(np.array(x.astype(onp.float32)), [np.array(h.astype(onp.float32))])
    want = onp.maximum(x @ w["i2h_weight"].T + w["i2h_bias"] + h @ w["h2h_weight"].T
                       + w["h2h_bias"], 0)
    assert_almost_equal(out.asnumpy(), want.astype(onp.float32), rtol=1e-5, atol=1e-5)
    assert states[0] is out


def test_cell_hybridized_step_matches_imperative():
    cell = gluon.rnn.LSTMCell(4, input_size=3)
    cell.initialize()
    x = np.array(onp.random.default_rng(8).normal(size=(2, 5, 3)).astype(onp.float32))
    want, want_states = cell.unroll(5, x, layout="NTC", merge_outputs=True)
    cell.hybridize()
    got, got_states = cell.unroll(5, x, layout="NTC", merge_outputs=True)
    assert_almost_equal(got.asnumpy(), want.asnumpy())
    for a, b in zip(got_states, want_states):
        assert_almost_equal(a.asnumpy(), b.asnumpy())
    xa = np.array(x)
    xa.attach_grad()
    with autograd.record():
        out, _ = cell.unroll(5, xa, layout="NTC", merge_outputs=True)
        (out ** 2).sum().backward()
    assert float(abs(xa.grad).sum()) > 0


def test_unroll_valid_length_masks_outputs_and_keeps_last_state():
    cell = gluon.rnn.GRUCell(3, input_size=2)
    cell.initialize()
    x = np.array(onp.random.default_rng(9).normal(size=(3, 4, 2)).astype(onp.float32))
    full, _ = cell.unroll(4, x, layout="NTC", merge_outputs=True)
    vl = np.array(onp.array([4, 2, 1], dtype=onp.float32))
    out, states = cell.unroll(4, x, layout="NTC", merge_outputs=True, valid_length=vl)
    f, o = full.asnumpy(), out.asnumpy()
    for n, length in enumerate((4, 2, 1)):
        assert_almost_equal(o[n, :length], f[n, :length])
        assert not o[n, length:].any()
        assert_almost_equal(states[0].asnumpy()[n], f[n, length - 1])


def test_modifier_and_dropout_cells():
    base = gluon.rnn.RNNCell(3, input_size=3)
    res = gluon.rnn.ResidualCell(base)
    res.initialize()
    x = np.array(onp.random.default_rng(10).normal(size=(2, 4, 3)).astype(onp.float32))
    out, _ = res.unroll(4, x, layout="NTC", merge_outputs=True)
    base._modified = False
    plain, _ = base.unroll(4, x, layout="NTC", merge_outputs=True)
    base._modified = True
    assert_almost_equal(out.asnumpy(), plain.asnumpy() + x.asnumpy())
    with pytest.raises(RuntimeError):
        base.begin_state(batch_size=2)
    with pytest.raises(ValueError):
        gluon.rnn.ZoneoutCell(base)  # already modified

    zone = gluon.rnn.ZoneoutCell(gluon.rnn.GRUCell(3, input_size=3), zoneout_outputs=0.5,
                                 zoneout_states=0.5)
    zone.initialize()
    inf_out, _ = zone.unroll(4, x, layout="NTC", merge_outputs=True)
    zone.base_cell._modified = False
    ref, _ = zone.base_cell.unroll(4, x, layout="NTC", merge_outputs=True)
    zone.base_cell._modified = True
    assert_almost_equal(inf_out.asnumpy(), ref.asnumpy())  # no zoneout in inference
    with autograd.record():
        train_out, _ = zone.unroll(4, x, layout="NTC", merge_outputs=True)
    assert not onp.allclose(train_out.asnumpy(), ref.asnumpy())

    drop = gluon.rnn.DropoutCell(0.5)
    assert drop.state_info() == []
    same, _ = drop.unroll(4, x, layout="NTC", merge_outputs=True)
    assert_almost_equal(same.asnumpy(), x.asnumpy())
    with autograd.record():
        dropped, _ = drop.unroll(4, x, layout="NTC", merge_outputs=True)
    kept = dropped.asnumpy() != 0
    assert 0 < kept.mean() < 1
    assert_almost_equal(dropped.asnumpy()[kept], 2 * x.asnumpy()[kept])


def test_lstmp_cell_step_against_numpy():
    rng = onp.random.default_rng(11)
    cell = gluon.rnn.LSTMPCell(4, 3, input_size=2)
    assert list(cell.collect_params()) == ["i2h_weight", "h2h_weight", "h2r_weight", "i2h_bias",
                                           "h2h_bias"]
    cell.initialize()
    w = {n: rng.normal(size=p.shape) for n, p in cell.collect_params().items()}
    for n, v in w.items():
        getattr(cell, n).set_data(np.array(v.astype(onp.float32)))
    x, r, c = rng.normal(size=(5, 2)), rng.normal(size=(5, 3)), rng.normal(size=(5, 4))
    out, (r1, c1) = cell(np.array(x.astype(onp.float32)),
                         [np.array(r.astype(onp.float32)), np.array(c.astype(onp.float32))])
    gi, gf, gg, go = onp.split(x @ w["i2h_weight"].T + w["i2h_bias"] + r @ w["h2h_weight"].T
                               + w["h2h_bias"], 4, axis=1)
    want_c = _sigmoid(gf) * c + _sigmoid(gi) * onp.tanh(gg)
    want_r = (_sigmoid(go) * onp.tanh(want_c)) @ w["h2r_weight"].T
    assert_almost_equal(c1.asnumpy(), want_c.astype(onp.float32), rtol=1e-4, atol=1e-5)
    assert_almost_equal(out.asnumpy(), want_r.astype(onp.float32), rtol=1e-4, atol=1e-5)
    assert r1 is out and cell.state_info(5)[0]["shape"] == (5, 3)


@pytest.mark.parametrize("drop_states", [0.0, 0.5])
def test_variational_dropout_shares_masks_over_time(drop_states):
    x = np.array(onp.random.default_rng(12).normal(size=(3, 6, 4)).astype(onp.float32))
    cell = gluon.rnn.VariationalDropoutCell(gluon.rnn.RNNCell(8, input_size=4), drop_inputs=0.3,
                                            drop_states=drop_states, drop_outputs=0.5)
    cell.initialize()
    infer, _ = cell.unroll(6, x, layout="NTC", merge_outputs=True)
    cell.base_cell._modified = False
    plain, _ = cell.base_cell.unroll(6, x, layout="NTC", merge_outputs=True)
    cell.base_cell._modified = True
    assert_almost_equal(infer.asnumpy(), plain.asnumpy())  # inference: no dropout
    with autograd.record():
        train, _ = cell.unroll(6, x, layout="NTC", merge_outputs=True)
    zero = train.asnumpy() == 0
    assert 0 < zero.mean() < 1
    assert (zero == zero[:, :1]).all()  # the same output units dropped at every step


# ---------------------------------------------------------------- errors
def test_npx_rnn_typed_errors():
    x, params, h0, c0 = _inputs("lstm")
    X, P, H0, C0 = (np.array(a) for a in (x, params, h0, c0))
    kw = dict(mode="lstm", state_size=4, num_layers=2, bidirectional=True)
    with pytest.raises(ValueError, match="parameters"):
        npx.rnn(X, P[:-1], H0, C0, **kw)
    with pytest.raises(ValueError, match="data"):
        npx.rnn(X[0], P, H0, C0, **kw)
    with pytest.raises(ValueError, match="state"):
        npx.rnn(X, P, H0[:2], C0, **kw)
    with pytest.raises(ValueError, match="state_cell"):
        npx.rnn(X, P, H0, C0[:, :1], **kw)
    with pytest.raises(ValueError, match="mode"):
        npx.rnn(X, P, H0, C0, mode="elman", state_size=4, num_layers=2)
    with pytest.raises(TypeError, match="state_cell"):
        npx.rnn(X, P, H0, **kw)
    with pytest.raises(TypeError, match="state_cell"):
        npx.rnn(X, P, H0, C0, mode="gru", state_size=4, num_layers=2)
    with pytest.raises(TypeError, match="float32 or float64"):
        npx.rnn(X.astype("float16"), P.astype("float16"), H0.astype("float16"),
                C0.astype("float16"), **kw)
    with pytest.raises(TypeError):
        npx.rnn(X, P.astype("float32"), H0, C0, **kw)
    with pytest.raises(NotImplementedError, match="projection_size"):
        npx.rnn(X, P, H0, C0, projection_size=2, **kw)
    with pytest.raises(NotImplementedError, match="clip"):
        npx.rnn(X, P, H0, C0, lstm_state_clip_min=-1.0, lstm_state_clip_max=1.0, **kw)
    with pytest.raises(NotImplementedError, match="sequence_length"):
        npx.rnn(X, P, H0, C0, use_sequence_length=True, **kw)
    with pytest.raises(ValueError):
        npx.rnn(X, P, H0, C0, p=1.5, **kw)
    with pytest.raises(ValueError):
        npx.rnn(X, P, H0, C0, mode="lstm", state_size=0, num_layers=2)
    with pytest.raises(ValueError, match="too large"):
        npx.rnn(X, P, H0, C0, mode="lstm", state_size=2**40, num_layers=2**20)


def test_layer_typed_errors():
    with pytest.raises(ValueError, match="layout"):
        gluon.rnn.LSTM(4, layout="TCN")
    with pytest.raises(ValueError, match="hidden_size"):
        gluon.rnn.GRU(0)
    with pytest.raises(ValueError, match="activation"):
        gluon.rnn.RNN(4, activation="sigmoid")
    with pytest.raises(ValueError, match="dropout"):
        gluon.rnn.LSTM(4, dropout=1.0)
    with pytest.raises(NotImplementedError, match="projection_size"):
        gluon.rnn.LSTM(4, projection_size=2)
    layer = gluon.rnn.LSTM(4, num_layers=2)
    layer.initialize()
    x = np.ones((3, 2, 5))
    with pytest.raises(ValueError, match="state shape"):
        layer(x, [np.zeros((2, 3, 4)), np.zeros((2, 2, 4))])
    with pytest.raises(ValueError, match="state"):
        layer(x, [np.zeros((2, 2, 4))])
    with pytest.raises(ValueError, match="3-d"):
        layer(np.ones((3, 5)))
    with pytest.raises(NotImplementedError):
        layer(x, sequence_length=np.ones((2,)))
    with pytest.raises(NotImplementedError):
        gluon.rnn.BidirectionalCell(gluon.rnn.RNNCell(2), gluon.rnn.RNNCell(2))(
            np.ones((2, 3)), [])
    with pytest.raises(ValueError, match="length"):
        gluon.rnn.RNNCell(2).unroll(4, np.ones((2, 3, 1)), layout="NTC")
    with pytest.raises(ValueError, match="rate"):
        gluon.rnn.DropoutCell(1.0)


def test_backward_op_checks_shapes_and_has_no_second_order():
    from ndx import _core
    p, h = np.ones((4,)), np.zeros((1, 1, 1))
    # the backward op checks its inputs against the forward's shapes (ograd of out here)
    with pytest.raises(ValueError, match="ograd"):
        _core._invoke(_core._op_handle("_backward_rnn"),
                      (np.ones((2, 1, 1)), np.ones((1, 1, 1)), np.ones((3, 1, 1)), p, h,
                       np.ones((3,))), {"mode": "rnn_tanh", "state_size": 1, "num_layers": 1})
    x = np.ones((2, 1, 1))
    x.attach_grad()
    with autograd.record():
        y = npx.rnn(x, p, h, mode="rnn_tanh", state_size=1, num_layers=1).sum()
        z = autograd.grad(y, [x], create_graph=True)[0].sum()
    with pytest.raises(NotImplementedError, match="_backward_rnn"):
        z.backward()


def test_dropout_cell_axes_share_the_mask():
    # DropoutCell(rate, axes): on a merged (N, T, C) input, axes=(1,) drops the same features at
    # every time step (MXNet's variational dropout on the inputs).
    cell = gluon.rnn.DropoutCell(0.5, axes=(1,))
    x = np.array(onp.ones((32, 6, 16), dtype=onp.float32))
    with autograd.record():
        out, states = cell.unroll(6, x, layout="NTC", merge_outputs=True)
    o = out.asnumpy()
    assert states == [] or len(states) == 0
    assert (o == o[:, :1, :]).all()
    assert set(onp.unique(o).tolist()) == {0.0, 2.0}
