"""An NLP user's audit of gluon.rnn against NumPy float64 references of MXNet's documented
equations (LSTM gates i, f, g, o; GRU r, z, n with n = tanh(W_in x + b_in + r * (W_hn h +
b_hn))): BidirectionalCell with valid_length, the layers' sequence_length checks, the cells'
state checks, central-difference gradients through a 2-step LSTM cell, and truncated BPTT."""
import numpy as onp
import pytest

from ndx import autograd, gluon, np
from strict_checks import assert_almost_equal

NAMES = ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1}


# ---------------------------------------------------------------- NumPy float64 reference
def _sigmoid(v):
    return 1.0 / (1.0 + onp.exp(-v))


def _step(mode, x, states, w):
    """One step of MXNet's cell equations: x (N, C), states [h] or [h, c] -> new states."""
    xi = x @ w["i2h_weight"].T + w["i2h_bias"]
    hh = states[0] @ w["h2h_weight"].T + w["h2h_bias"]
    if mode == "rnn_tanh":
        return [onp.tanh(xi + hh)]
    if mode == "lstm":
        i, f, g, o = onp.split(xi + hh, 4, axis=1)
        c = _sigmoid(f) * states[1] + _sigmoid(i) * onp.tanh(g)
        return [_sigmoid(o) * onp.tanh(c), c]
    xr, xz, xn = onp.split(xi, 3, axis=1)
    hr, hz, hn = onp.split(hh, 3, axis=1)
    r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
    return [(1 - z) * onp.tanh(xn + r * hn) + z * states[0]]


def _run(mode, w, xs, states):
    """The cell over the steps xs (T, 1, C) of one sequence: (outputs (T, 1, H), states)."""
    outs = []
    for x in xs:
        states = _step(mode, x, states, w)
        outs.append(states[0])
    return outs, states


def _weights(rng, mode, n_in, hidden):
    g = GATES[mode] * hidden
    return {"i2h_weight": rng.normal(scale=0.6, size=(g, n_in)),
            "h2h_weight": rng.normal(scale=0.6, size=(g, hidden)),
            "i2h_bias": rng.normal(scale=0.3, size=g), "h2h_bias": rng.normal(scale=0.3, size=g)}


def _cell(mode, hidden, n_in, w):
    cell = {"lstm": gluon.rnn.LSTMCell, "gru": gluon.rnn.GRUCell}[mode](hidden, input_size=n_in)
    for p in cell.collect_params().values():
        p.dtype = "float64"
    cell.initialize()
    for name in NAMES:
        getattr(cell, name).set_data(np.array(w[name]))
    return cell


# ---------------------------------------------------------------- BidirectionalCell
@pytest.mark.parametrize("mode,layout,hybridize", [("lstm", "NTC", False), ("gru", "TNC", True)])
def test_bidirectional_cell_valid_length_matches_reference(mode, layout, hybridize):
    # MXNet's BidirectionalCell.unroll takes valid_length: the backward cell starts at each
    # sequence's last valid step, outputs past a length are 0, and the states are each
    # direction's state at its own last step (ndx raised NotImplementedError).
    rng = onp.random.default_rng(20)
    T, N, C, H = 5, 4, 3, 2
    lengths = [5, 2, 3, 1]
    wl, wr = _weights(rng, mode, C, H), _weights(rng, mode, C, H)
    x = rng.normal(size=(T, N, C))
    n_states = 2 if mode == "lstm" else 1
    begin = [rng.normal(size=(N, H)) for _ in range(2 * n_states)]
    cell = gluon.rnn.BidirectionalCell(_cell(mode, H, C, wl), _cell(mode, H, C, wr))
    if hybridize:
        cell.l_cell.hybridize()
        cell.r_cell.hybridize()
    xin = x if layout == "TNC" else x.transpose(1, 0, 2)
    out, states = cell.unroll(T, np.array(xin), begin_state=[np.array(b) for b in begin],
                              layout=layout, merge_outputs=True,
                              valid_length=np.array(onp.array(lengths, dtype=onp.float64)))
    got = out.asnumpy() if layout == "TNC" else out.asnumpy().transpose(1, 0, 2)
    assert got.shape == (T, N, 2 * H) and len(states) == 2 * n_states
    for n, ln in enumerate(lengths):
        seq = x[:ln, n:n + 1]
        lo, ls = _run(mode, wl, seq, [b[n:n + 1] for b in begin[:n_states]])
        ro, rs = _run(mode, wr, seq[::-1], [b[n:n + 1] for b in begin[n_states:]])
        want = onp.zeros((T, 1, 2 * H))
        want[:ln] = onp.concatenate([onp.stack(lo), onp.stack(ro[::-1])], axis=2)
        assert_almost_equal(got[:, n:n + 1], want, rtol=1e-10, atol=1e-12)
        for k, s in enumerate(ls + rs):
            assert_almost_equal(states[k].asnumpy()[n:n + 1], s, rtol=1e-10, atol=1e-12)


def test_bidirectional_cell_valid_length_past_the_steps_raises():
    # (sequence_reverse of a length past the steps repeats the last step: garbage)
    cell = gluon.rnn.BidirectionalCell(gluon.rnn.GRUCell(2), gluon.rnn.GRUCell(2))
    cell.initialize()
    x = np.ones((2, 4, 3))
    with pytest.raises(ValueError, match=r"\[BidirectionalCell\] valid_length"):
        cell.unroll(4, x, layout="NTC", valid_length=np.array([2, 5]))


# ---------------------------------------------------------------- the layers' checks
@pytest.mark.parametrize("hybridize", [False, True])
def test_layer_sequence_length_out_of_range_raises(hybridize):
    # A length past T (or negative, or fractional) made the step loop and sequence_reverse
    # return garbage for that sequence (the backward direction repeated one value).
    layer = gluon.rnn.GRU(3, bidirectional=True, use_sequence_length=True, input_size=2,
                          dtype="float64")
    layer.initialize()
    if hybridize:
        layer.hybridize()
    x = np.array(onp.random.default_rng(21).normal(size=(4, 3, 2)))
    assert layer(x, sequence_length=[4, 2, 1]).shape == (4, 3, 6)
    for bad in ([4, 2, 7], [4, -1, 2], [4, 1.5, 2]):
        with pytest.raises(ValueError, match=r"\[GRU\] sequence_length"):
            layer(x, sequence_length=np.array(bad))


def test_layer_input_size_mismatch_names_the_layer():
    # (npx.rnn's message named only its flat parameter vector: "'parameters' has shape ...")
    layer = gluon.rnn.GRU(3, input_size=5)
    layer.initialize()
    with pytest.raises(ValueError, match=r"\[GRU\] inputs have 2 features.*input_size"):
        layer(np.ones((4, 3, 2)))
    deferred = gluon.rnn.LSTM(3, num_layers=2)
    deferred.initialize()
    assert deferred(np.ones((4, 3, 4))).shape == (4, 3, 3)
    with pytest.raises(ValueError, match=r"\[LSTM\] inputs have 2 features"):
        deferred(np.ones((4, 3, 2)))


def test_layer_dropout_must_be_a_number():
    with pytest.raises(TypeError, match=r"\[LSTM\] dropout"):
        gluon.rnn.LSTM(3, dropout="0.5")


# ---------------------------------------------------------------- the cells' checks
@pytest.mark.parametrize("hybridize", [False, True])
def test_cell_states_and_inputs_are_checked(hybridize):
    lstm = gluon.rnn.LSTMCell(3, input_size=2)
    gru = gluon.rnn.GRUCell(3, input_size=2)
    lstmp = gluon.rnn.LSTMPCell(3, 2, input_size=2)
    for cell in (lstm, gru, lstmp):
        cell.initialize()
        if hybridize:
            cell.hybridize()
    x = np.ones((4, 2))
    # one state where LSTM needs [h, c] was an IndexError
    with pytest.raises(ValueError, match=r"\[LSTMCell\] expected 2 state"):
        lstm(x, [np.zeros((4, 3))])
    # a c of batch 1 broadcast silently over the batch of 4
    with pytest.raises(ValueError, match=r"\[LSTMCell\] states\[1\] must have shape \(4, 3\)"):
        lstm(x, [np.zeros((4, 3)), np.zeros((1, 3))])
    with pytest.raises(ValueError, match=r"\[GRUCell\] states\[0\]"):
        gru(x, [np.zeros((4, 4))])
    with pytest.raises(ValueError, match=r"\[GRUCell\] inputs have 5 features.*input_size"):
        gru(np.ones((4, 5)), [np.zeros((4, 3))])
    with pytest.raises(ValueError, match=r"\[LSTMPCell\] states\[0\] must have shape \(4, 2\)"):
        lstmp(x, [np.zeros((4, 3)), np.zeros((4, 3))])
    out, states = lstm(x, lstm.begin_state(batch_size=4))
    assert out.shape == (4, 3) and [s.shape for s in states] == [(4, 3), (4, 3)]


@pytest.mark.xfail(strict=True, raises=NotImplementedError,
                   reason="gluon.rnn.LSTM(projection_size=...) raises NotImplementedError "
                          "(npx.rnn has no projection; the layer would need a stepped path)")
def test_lstm_layer_projection_matches_lstmp_reference():
    # MXNet 2.0: per layer and direction l0_h2r_weight (P, H), h2h_weight (4H, P); states
    # [h (L*D, N, P), c (L*D, N, H)]; r_t = W_hr (o * tanh(c_t)) is the output and next h.
    rng = onp.random.default_rng(24)
    T, N, C, H, P = 3, 2, 3, 4, 2
    layer = gluon.rnn.LSTM(H, projection_size=P, input_size=C, dtype="float64")
    layer.initialize()
    w = {n: rng.normal(scale=0.5, size=getattr(layer, "l0_" + n).shape)
         for n in NAMES + ("h2r_weight",)}
    for n, v in w.items():
        getattr(layer, "l0_" + n).set_data(np.array(v))
    x, r, c = rng.normal(size=(T, N, C)), rng.normal(size=(N, P)), rng.normal(size=(N, H))
    out, (hy, cy) = layer(np.array(x), [np.array(r[None]), np.array(c[None])])
    want = []
    for t in range(T):
        h, c = _step("lstm", x[t], [r, c], w)
        r = h @ w["h2r_weight"].T
        want.append(r)
    assert_almost_equal(out.asnumpy(), onp.stack(want), rtol=1e-10, atol=1e-12)
    assert_almost_equal(hy.asnumpy()[0], r, rtol=1e-10, atol=1e-12)
    assert_almost_equal(cy.asnumpy()[0], c, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- gradients and TBPTT
@pytest.mark.parametrize("hybridize", [False, True])
def test_lstm_cell_two_steps_central_differences(hybridize):
    rng = onp.random.default_rng(22)
    N, C, H = 2, 3, 2
    w = _weights(rng, "lstm", C, H)
    x, h0, c0 = rng.normal(size=(2, N, C)), rng.normal(size=(N, H)), rng.normal(size=(N, H))

    def loss_ref():
        outs, (h, c) = _run("lstm", w, x, [h0, c0])
        return (onp.stack(outs) ** 2).sum() + (h ** 3).sum() + 2 * c.sum()

    def numeric(a, eps=1e-6):
        g = onp.zeros_like(a)
        for i in onp.ndindex(a.shape):
            a[i] += eps
            up = loss_ref()
            a[i] -= 2 * eps
            g[i] = (up - loss_ref()) / (2 * eps)
            a[i] += eps
        return g

    cell = _cell("lstm", H, C, w)
    if hybridize:
        cell.hybridize()
    X, H0, C0 = np.array(x), np.array(h0), np.array(c0)
    for a in (X, H0, C0):
        a.attach_grad()
    with autograd.record():
        out, (h, c) = cell.unroll(2, X, [H0, C0], layout="TNC", merge_outputs=True)
        loss = (out ** 2).sum() + (h ** 3).sum() + 2 * c.sum()
    loss.backward()
    assert abs(loss.item() - loss_ref()) < 1e-12
    for got, ref in ((X, x), (H0, h0), (C0, c0)):
        assert_almost_equal(got.grad.asnumpy(), numeric(ref), rtol=1e-6, atol=1e-8)
    for name in NAMES:
        assert_almost_equal(getattr(cell, name).grad().asnumpy(), numeric(w[name]), rtol=1e-6,
                            atol=1e-8)


def test_truncated_bptt_detached_states_cut_the_graph():
    # The usual language-model loop: states carried between batches, detached. The second
    # batch's gradients must be those of a fresh run from the (constant) carried states.
    rng = onp.random.default_rng(23)
    layer = gluon.rnn.LSTM(3, num_layers=2, input_size=2, dtype="float64")
    layer.initialize()
    x1, x2 = (np.array(rng.normal(size=(4, 2, 2))) for _ in range(2))
    x1.attach_grad()
    with autograd.record():
        _, states = layer(x1, layer.begin_state(batch_size=2, dtype="float64"))
    states = [s.detach() for s in states]
    with autograd.record():
        out, _ = layer(x2, states)
        (out ** 2).sum().backward()
    got = layer.l0_h2h_weight.grad().asnumpy().copy()
    assert x1.grad is None or not x1.grad.asnumpy().any()
    const = [np.array(s.asnumpy()) for s in states]
    with autograd.record():
        out, _ = layer(x2, const)
        (out ** 2).sum().backward()
    assert_almost_equal(got, layer.l0_h2h_weight.grad().asnumpy(), rtol=1e-12, atol=1e-14)
