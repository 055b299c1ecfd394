"""The convolutional recurrent cells (gluon.rnn.Conv{1,2,3}D{RNN,LSTM,GRU}Cell, MXNet 1.x's
gluon.contrib.rnn) against NumPy: a direct convolution and the LSTM / GRU / RNN step rules
MXNet's cells document."""
import itertools

import numpy as onp
import pytest

from ndx import autograd, gluon, np


def _conv(x, w, b, pad, dilate):
    """Cross-correlation (MXNet's convolution) of x (N, C, *S) with w (F, C, *K), stride 1."""
    dims = x.ndim - 2
    x = onp.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    kernel = w.shape[2:]
    out_shape = [x.shape[2 + i] - dilate[i] * (kernel[i] - 1) for i in range(dims)]
    out = onp.zeros((x.shape[0], w.shape[0], *out_shape))
    for at in itertools.product(*[range(n) for n in out_shape]):
        for k in itertools.product(*[range(n) for n in kernel]):
            idx = tuple(a + kk * d for a, kk, d in zip(at, k, dilate))
            patch = x[(slice(None), slice(None)) + idx]  # (N, C)
            out[(slice(None), slice(None)) + at] += patch @ w[(slice(None), slice(None)) + k].T
    return out + b.reshape((1, -1) + (1,) * dims)


def _sigmoid(x):
    return 1 / (1 + onp.exp(-x))


def _params(cell):
    return {k: cell.__getattribute__(k).data().asnumpy().astype(onp.float64)
            for k in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")}


def _projections(cell, p, x, h):
    i2h = _conv(x, p["i2h_weight"], p["i2h_bias"], cell._i2h_pad, cell._i2h_dilate)
    h2h = _conv(h, p["h2h_weight"], p["h2h_bias"], cell._h2h_pad, cell._h2h_dilate)
    return i2h, h2h


@pytest.fixture
def rng():
    return onp.random.default_rng(4)


def _init(cell, rng):
    cell.initialize()
    for name in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"):
        param = getattr(cell, name)
        param.set_data(np.array(rng.standard_normal(param.shape) * 0.3, dtype="float32"))


def test_conv2d_lstm_cell_step_is_the_lstm_rule_on_convolutions(rng):
    cell = gluon.rnn.Conv2DLSTMCell((3, 5, 4), 2, i2h_kernel=(3, 3), h2h_kernel=(3, 1),
                                    i2h_pad=(1, 0), h2h_dilate=(2, 1))
    _init(cell, rng)
    x = rng.standard_normal((2, 3, 5, 4))
    assert cell.state_info(2)[0]["shape"] == (2, 2, 5, 2)  # (4 - 3 + 1) columns
    h, c = rng.standard_normal((2, 2, 5, 2)), rng.standard_normal((2, 2, 5, 2))
    out, (h1, c1) = cell(np.array(x, dtype="float32"),
                         [np.array(h, dtype="float32"), np.array(c, dtype="float32")])
    i2h, h2h = _projections(cell, _params(cell), x, h)
    gi, gf, gg, go = onp.split(i2h + h2h, 4, axis=1)
    want_c = _sigmoid(gf) * c + _sigmoid(gi) * onp.tanh(gg)
    want_h = _sigmoid(go) * onp.tanh(want_c)
    onp.testing.assert_allclose(c1.asnumpy(), want_c, rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(out.asnumpy(), want_h, rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(h1.asnumpy(), want_h, rtol=1e-4, atol=1e-5)


def test_conv1d_gru_and_conv3d_rnn_cells(rng):
    gru = gluon.rnn.Conv1DGRUCell((2, 6), 3, i2h_kernel=3, h2h_kernel=3, i2h_dilate=2,
                                  activation="relu")
    _init(gru, rng)
    x, h = rng.standard_normal((2, 2, 6)), rng.standard_normal((2, 3, 2))
    out, _ = gru(np.array(x, dtype="float32"), [np.array(h, dtype="float32")])
    i2h, h2h = _projections(gru, _params(gru), x, h)
    (ir, iz, i_n), (hr, hz, hn) = onp.split(i2h, 3, axis=1), onp.split(h2h, 3, axis=1)
    r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
    want = (1 - z) * onp.maximum(i_n + r * hn, 0) + z * h
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-5)

    rnn = gluon.contrib.rnn.Conv3DRNNCell((1, 3, 3, 3), 2, i2h_kernel=(1, 3, 3),
                                          h2h_kernel=(1, 1, 3), i2h_pad=(0, 1, 1))
    _init(rnn, rng)
    x, h = rng.standard_normal((1, 1, 3, 3, 3)), rng.standard_normal((1, 2, 3, 3, 3))
    out, states = rnn(np.array(x, dtype="float32"), [np.array(h, dtype="float32")])
    i2h, h2h = _projections(rnn, _params(rnn), x, h)
    onp.testing.assert_allclose(out.asnumpy(), onp.tanh(i2h + h2h), rtol=1e-4, atol=1e-5)
    assert len(states) == 1


def test_conv_cells_unroll_hybridize_and_train(rng):
    cell = gluon.rnn.Conv1DLSTMCell((2, 5), 3, i2h_kernel=3, h2h_kernel=3, i2h_pad=1)
    _init(cell, rng)
    seq = np.array(rng.standard_normal((2, 4, 2, 5)), dtype="float32")  # NTC: 4 steps
    outs, states = cell.unroll(4, seq, layout="NTC", merge_outputs=True)
    assert outs.shape == (2, 4, 3, 5) and states[1].shape == (2, 3, 5)
    step_h = cell.begin_state(2)
    for t in range(4):  # the same as stepping by hand
        out, step_h = cell(seq[:, t], step_h)
    onp.testing.assert_allclose(outs.asnumpy()[:, 3], out.asnumpy(), rtol=1e-6)
    cell.hybridize()
    again, _ = cell.unroll(4, seq, layout="NTC", merge_outputs=True)
    onp.testing.assert_allclose(again.asnumpy(), outs.asnumpy(), rtol=1e-5, atol=1e-6)
    # the i2h weight's gradient against a central difference of the summed outputs
    w = cell.i2h_weight.data()
    with autograd.record():
        loss = cell.unroll(4, seq, layout="NTC", merge_outputs=True)[0].sum()
    loss.backward()
    grad = cell.i2h_weight.grad().asnumpy()[1, 0, 2]
    base = w.asnumpy().copy()
    eps, values = 1e-2, []
    for sign in (1, -1):
        moved = base.copy()
        moved[1, 0, 2] += sign * eps
        cell.i2h_weight.set_data(np.array(moved))
        values.append(float(cell.unroll(4, seq, layout="NTC", merge_outputs=True)[0].sum()))
    assert abs((values[0] - values[1]) / (2 * eps) - grad) < 1e-2 * max(1.0, abs(grad))


def test_dynamic_unroll_masks_steps_past_the_valid_length(rng):
    cell = gluon.rnn.Conv1DRNNCell((1, 4), 2, i2h_kernel=1, h2h_kernel=1)
    _init(cell, rng)
    seq = np.array(rng.standard_normal((3, 2, 1, 4)), dtype="float32")  # TNC: 3 steps
    length = np.array([3, 1])
    outs, states = gluon.contrib.rnn.dynamic_unroll(cell, seq, cell.begin_state(2),
                                                    valid_length=length)
    full, _ = cell.unroll(3, seq, layout="TNC", merge_outputs=True)
    onp.testing.assert_allclose(outs.asnumpy()[:, 0], full.asnumpy()[:, 0], rtol=1e-6)
    onp.testing.assert_array_equal(outs.asnumpy()[1:, 1], 0)  # past sequence 1's length
    onp.testing.assert_allclose(states[0].asnumpy()[1], full.asnumpy()[0, 1], rtol=1e-6)


def test_conv_cell_arguments_are_checked():
    with pytest.raises(ValueError, match="odd"):
        gluon.rnn.Conv2DRNNCell((1, 4, 4), 2, (3, 3), (2, 3))
    with pytest.raises(NotImplementedError, match="channel-first"):
        gluon.rnn.Conv2DLSTMCell((4, 4, 1), 2, (3, 3), (3, 3), conv_layout="NHWC")
    with pytest.raises(ValueError, match="does not fit"):
        gluon.rnn.Conv1DGRUCell((1, 2), 2, 3, 3)
    with pytest.raises(ValueError, match="input_shape"):
        gluon.rnn.Conv2DGRUCell((1, 4), 2, (3, 3), (3, 3))
    cell = gluon.rnn.Conv1DRNNCell((2, 5), 3, 3, 3)
    cell.initialize()
    with pytest.raises(ValueError, match="inputs of one step"):
        cell(np.zeros((1, 3, 5)), cell.begin_state(1))
    with pytest.raises(ValueError, match="states"):
        cell(np.zeros((1, 2, 5)), [np.zeros((1, 3, 5))])
    assert gluon.contrib.rnn.Conv2DLSTMCell is gluon.rnn.Conv2DLSTMCell
    assert gluon.contrib.rnn.VariationalDropoutCell is gluon.rnn.VariationalDropoutCell


def test_a_residual_conv_cell_masks_padded_steps(rng):
    # ResidualCell adds the inputs; with valid_length, padded steps' inputs and outputs are 0
    base = gluon.rnn.Conv1DRNNCell((2, 5), 2, i2h_kernel=3, h2h_kernel=3, i2h_pad=1)
    _init(base, rng)
    seq = np.array(rng.standard_normal((2, 3, 2, 5)), dtype="float32")  # NTC
    plain, _ = base.unroll(3, seq, layout="NTC", merge_outputs=True)
    cell = gluon.rnn.ResidualCell(base)
    outs, _ = cell.unroll(3, seq, layout="NTC", merge_outputs=True,
                          valid_length=np.array([3, 2]))
    want = plain.asnumpy() + seq.asnumpy()
    want[1, 2] = 0
    onp.testing.assert_allclose(outs.asnumpy(), want, rtol=1e-5, atol=1e-6)
