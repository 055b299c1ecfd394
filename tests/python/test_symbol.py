"""ndx.sym: symbols built from the registry's ops, inference, JSON round trips, evaluation
against the imperative functions, and errors."""
import numpy as onp
import pytest

import ndx
from ndx import np, npx, sym
from ndx.test_utils import assert_almost_equal


def test_build_infer_eval_and_round_trip():
    x, w = sym.var("x"), sym.var("w")
    y = sym.tanh(sym.matmul(x, w)) * 2 + 1.0
    assert y.list_arguments() == ["x", "w"]
    assert y.infer_shape(x=(4, 3), w=(3, 5)) == [(4, 5)]
    assert [str(t) for t in y.infer(dict(x=(4, 3), w=(3, 5)), dict(x="float64", w="float64"))[1]] \
        == ["float64"]
    xn = onp.random.default_rng(0).normal(size=(4, 3)).astype(onp.float32)
    wn = onp.random.default_rng(1).normal(size=(3, 5)).astype(onp.float32)
    out = y.eval(x=np.array(xn), w=np.array(wn))[0]
    assert out.dtype == onp.float32
    assert_almost_equal(out, onp.tanh(xn @ wn) * 2 + 1, rtol=1e-5, atol=1e-6)
    back = sym.load_json(y.tojson())
    assert back.tojson() == y.tojson()
    assert_almost_equal(back.eval(x=np.array(xn), w=np.array(wn))[0], out, rtol=0, atol=0)


def test_params_npx_ops_groups_and_outputs():
    x = sym.var("x")
    s = sym.sum(sym.relu(x), axis=1, keepdims=True)
    p = sym.softmax(x, axis=-1)
    g = sym.Group([s, p])
    assert len(g) == 2
    assert g.infer_shape(x=(2, 3)) == [(2, 1), (2, 3)]
    xn = onp.array([[1.0, -2.0, 3.0], [-1.0, 0.5, 0.0]], dtype=onp.float32)
    s_val, p_val = g.eval(x=np.array(xn))
    assert_almost_equal(s_val, onp.maximum(xn, 0).sum(axis=1, keepdims=True))
    assert_almost_equal(p_val, npx.softmax(np.array(xn), axis=-1))
    assert_almost_equal(g[1].eval(x=np.array(xn))[0], p_val, rtol=0, atol=0)


def test_symbol_errors():
    x = sym.var("x")
    with pytest.raises(ValueError, match="no shape"):
        (x + 1).infer_shape()
    with pytest.raises(ValueError):
        sym.matmul(x, sym.var("w")).infer_shape(x=(2, 3), w=(4, 5))
    with pytest.raises(ValueError, match="'axis'"):
        sym.sum(x, axis="bad")
    with pytest.raises(TypeError):
        sym.add(x, 2)  # functions take symbols; use operators for Python scalars
    with pytest.raises(ValueError, match="no value"):
        (x * 2).eval()
    with pytest.raises(IndexError):
        x[3]
    assert isinstance(ndx.sym.exp(x), sym.Symbol)


def test_symbolic_gradient_pass():
    x, w = sym.var("x"), sym.var("w")
    y = sym.tanh(sym.matmul(x, w))
    g = y.gradient(["x", "w"])
    assert len(g) == 2
    assert sorted(g.list_arguments()) == sorted(["x", "w", "head_grad0"])
    rng = onp.random.default_rng(2)
    xn = rng.normal(size=(3, 4))
    wn = rng.normal(size=(4, 2))
    hg = rng.normal(size=(3, 2))
    dx, dw = g.eval(x=np.array(xn), w=np.array(wn), head_grad0=np.array(hg))
    d = hg * (1 - onp.tanh(xn @ wn) ** 2)
    assert_almost_equal(dx, d @ wn.T, rtol=1e-10, atol=1e-12)
    assert_almost_equal(dw, xn.T @ d, rtol=1e-10, atol=1e-12)
    # Second order: the gradient graph has a gradient too.
    s = sym.sum(sym.exp(x) * x)
    gx = s.gradient("x")  # (1 + x) e^x
    ggx = sym.sum(gx * 1.0).gradient("x")  # (2 + x) e^x
    xv = onp.array([0.5, -1.0])
    one = np.array(onp.ones((), dtype=onp.float64))
    got = ggx.eval(x=np.array(xv), head_grad0=one)[0]
    assert_almost_equal(got, (2 + xv) * onp.exp(xv), rtol=1e-10)
    with pytest.raises(ValueError, match="no input named"):
        y.gradient("z")
