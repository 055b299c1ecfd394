"""A review's repros for the session's late additions: DataLoaderIter padding, Crop's range
checks, the legacy samplers' MXNet parameters and symbol parameters, FeedForward's label
and eval_data forms. References: NumPy and MXNet 1.x's documented semantics."""
import json
import logging

import numpy as onp
import pytest

import ndx as mx
from ndx import np, sym

logging.getLogger().setLevel(logging.WARNING)


def _run(s, **values):
    with mx.autograd.predict_mode():
        return [o.asnumpy() for o in s.eval(**{k: np.array(v) for k, v in values.items()})]


def _json_crop(x, **attrs):
    nodes = [{"op": "null", "name": "x0", "inputs": []},
             {"op": "Crop", "name": "y", "attrs": {k: str(v) for k, v in attrs.items()},
              "inputs": [[0, 0, 0]]}]
    text = json.dumps({"nodes": nodes, "arg_nodes": [0], "node_row_ptr": [0, 1, 2],
                       "heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 10600]}})
    return _run(sym.load_json(text), x0=x)[0]


# ---- contrib.io.DataLoaderIter: a pad larger than the last batch ----------------------------
def test_dataloaderiter_pads_last_batch_to_batch_size():
    from ndx.gluon.data import ArrayDataset, DataLoader
    X = onp.arange(10, dtype="float32").reshape(5, 2)
    Y = onp.arange(5, dtype="float32")
    it = mx.contrib.io.DataLoaderIter(DataLoader(ArrayDataset(X, Y), batch_size=4))
    batches = list(it)
    assert [b.pad for b in batches] == [0, 3]
    last = batches[1]
    assert last.data[0].shape == (4, 2) and last.label[0].shape == (4,)
    onp.testing.assert_array_equal(last.data[0].asnumpy()[:1], X[4:])  # the real row first


# ---- sym.Crop: MXNet checks offset + size against the data (crop-inl.h) -------------------
def test_crop_h_w_past_the_end_is_an_error_not_a_smaller_crop():
    x = onp.arange(25, dtype="float32").reshape(1, 1, 5, 5)
    s = sym.Crop(sym.var("x"), offset=(3, 3), h_w=(4, 4))
    with pytest.raises(IndexError):
        _run(s, x=x)
    with pytest.raises(IndexError):
        _json_crop(x, offset="(3, 3)", h_w="(4, 4)")


def test_crop_negative_offset_is_refused():
    with pytest.raises(ValueError):
        sym.Crop(sym.var("x"), offset=(-1, 0), h_w=(2, 2))
    x = onp.arange(25, dtype="float32").reshape(1, 1, 5, 5)
    with pytest.raises(ValueError):
        _json_crop(x, offset="(-1, 0)", h_w="(2, 2)")


def test_crop_h_w_values_and_gradient():
    x = onp.arange(2 * 3 * 6 * 7, dtype="float32").reshape(2, 3, 6, 7)
    s = sym.Crop(sym.var("x"), offset=(1, 2), h_w=(3, 4))
    onp.testing.assert_array_equal(_run(s, x=x)[0], x[:, :, 1:4, 2:6])
    onp.testing.assert_array_equal(_json_crop(x, offset="(1, 2)", h_w="(3, 4)"),
                                   x[:, :, 1:4, 2:6])
    xa = mx.nd.array(x)
    gx = mx.nd.zeros(x.shape)
    ex = s.bind(mx.cpu(), {"x": xa}, args_grad={"x": gx})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 3, 3, 4)))
    want = onp.zeros(x.shape, "float32")
    want[:, :, 1:4, 2:6] = 1
    onp.testing.assert_array_equal(gx.asnumpy(), want)


# ---- sym.random: MXNet's parameter names and defaults --------------------------------------
def _draw(s):
    return s.bind(mx.cpu(), {}).forward()[0].asnumpy()


def test_random_exponential_takes_mxnets_lam_rate():
    # MXNet: exponential(lam=..) is parametrised by the rate; mean 1 / lam
    v = _draw(sym.random.exponential(lam=4.0, shape=(20000,)))
    assert abs(v.mean() - 0.25) < 0.02


def test_random_gamma_and_negative_binomial_have_mxnets_defaults():
    # MXNet: gamma(alpha=1, beta=1): mean 1; negative_binomial(k=1, p=1): always 0
    v = _draw(sym.random.gamma(shape=(20000,)))
    assert v.shape == (20000,) and abs(v.mean() - 1.0) < 0.05
    assert (_draw(sym.random.negative_binomial(shape=(10,))) == 0).all()


def test_random_symbol_params_draw_shape_per_entry():
    # MXNet: params Symbols of shape (x, y) and shape=(m, n): output (x, y, m, n)
    lo, hi = sym.var("lo"), sym.var("hi")
    s = sym.random.uniform(lo, hi, shape=(4, 5))
    low = onp.array([[0.0, 10.0], [20.0, 30.0], [40.0, 50.0]], "float32")
    out = s.bind(mx.cpu(), {"lo": mx.nd.array(low), "hi": mx.nd.array(low + 1)}
                 ).forward()[0].asnumpy()
    assert out.shape == (3, 2, 4, 5)
    assert ((out >= low[..., None, None]) & (out < low[..., None, None] + 1)).all()
    n = sym.random.normal(loc=lo, scale=0.001)
    out = n.bind(mx.cpu(), {"lo": mx.nd.array([5.0, 7.0])}).forward()[0].asnumpy()
    onp.testing.assert_allclose(out, [5.0, 7.0], atol=0.02)


# ---- FeedForward: MXNet's _init_iter / _init_eval_iter -------------------------------------
def _net():
    fc = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc")
    return sym.SoftmaxOutput(fc, name="softmax")


def _xy():
    rng = onp.random.RandomState(0)
    X = rng.randn(40, 4).astype("float32")
    return X, (X[:, 0] > 0).astype("float32")


def test_feedforward_fit_flattens_column_labels():
    X, Y = _xy()
    m = mx.model.FeedForward(_net(), num_epoch=1, learning_rate=0.1, numpy_batch_size=16)
    m.fit(X, Y.reshape(-1, 1))  # MXNet: y of shape (N, 1) is flattened
    assert m.predict(X).shape == (40, 2)


def test_feedforward_eval_data_may_be_a_list_pair():
    X, Y = _xy()
    m = mx.model.FeedForward(_net(), num_epoch=1, learning_rate=0.1, numpy_batch_size=16)
    m.fit(X, Y, eval_data=[X, Y])  # MXNet: tuple or list of length 2
    assert m.arg_params["fc_weight"].shape == (2, 4)
