"""ndx.sym: symbols built from the registry's ops, inference, JSON round trips, evaluation
against the imperative functions, and errors."""
import numpy as onp
import pytest

import ndx
from ndx import np, npx, sym
from strict_checks import assert_almost_equal


def test_build_infer_eval_and_round_trip():
    x, w = sym.var("x"), sym.var("w")
    y = sym.tanh(sym.matmul(x, w)) * 2 + 1.0
    assert y.list_arguments() == ["x", "w"]
    # MXNet's form: (argument shapes, output shapes, auxiliary-state shapes).
    assert y.infer_shape(x=(4, 3), w=(3, 5)) == ([(4, 3), (3, 5)], [(4, 5)], [])
    assert y.infer_shape((4, 3), (3, 5)) == ([(4, 3), (3, 5)], [(4, 5)], [])
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
    assert g.infer_shape(x=(2, 3))[1] == [(2, 1), (2, 3)]
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


def test_mxnet_inspection_names_and_inference():
    x, g, b, rm, rv = (sym.var(n) for n in ("x", "gamma", "beta", "mean", "var"))
    bn = sym.batch_norm(x, g, b, rm, rv, name="bn0")
    # MXNet: running statistics are auxiliary states, not arguments.
    assert bn.list_arguments() == ["x", "gamma", "beta"]
    assert bn.list_auxiliary_states() == ["mean", "var"]
    assert bn.list_inputs() == ["x", "gamma", "beta", "mean", "var"]
    assert bn.list_outputs() == ["bn0_output"] and bn.name == "bn0"
    shapes = bn.infer_shape(x=(4, 3), gamma=(3,), beta=(3,), mean=(3,), var=(3,))
    assert shapes == ([(4, 3), (3,), (3,)], [(4, 3)], [(3,), (3,)])
    two = sym.Group([sym.sin(x, name="s"), sym.cos(x, name="c")])
    assert two.list_outputs() == ["s_output", "c_output"] and two.name is None
    assert x.list_outputs() == ["x"]
    w = sym.var("w")
    y = sym.matmul(x, w)
    arg_t, out_t, aux_t = y.infer_type(x="float64")
    assert arg_t == [onp.float64, onp.float64] and out_t == [onp.float64] and aux_t == []
    assert y.infer_type(onp.float16, onp.float16)[1] == [onp.float16]
    assert y.infer_shape_partial(x=(2, 3)) == ([(2, 3), None], [None], [])
    assert y.infer_shape_partial(x=(2, 3), w=(3, 4))[1] == [(2, 4)]
    with pytest.raises(ValueError, match="no input named 'z'"):
        y.infer_shape(z=(1,))
    with pytest.raises(TypeError, match="not both"):
        y.infer_shape((2, 3), w=(3, 4))
    with pytest.raises(ValueError, match="2 arguments"):
        y.infer_shape((2, 3), (3, 4), (1,))


def test_executor_forward_backward_and_grad_reqs():
    a, b = sym.var("a"), sym.var("b")
    c = 2 * a + b * b  # dc/da = 2, dc/db = 2b
    an, bn = onp.array([1.0, 2.0]), onp.array([2.0, 3.0])
    ga, gb = np.array([10.0, 10.0]), np.array([10.0, 10.0])
    exe = c._bind(ndx.cpu(), {"a": np.array(an), "b": np.array(bn)}, args_grad={"a": ga, "b": gb},
                  grad_req={"a": "write", "b": "add"})
    out = exe.forward(is_train=True)
    assert_almost_equal(out[0], 2 * an + bn * bn)
    head = onp.array([1.0, -3.0])
    exe.backward(np.array(head))
    assert_almost_equal(ga, 2 * head)              # written
    assert_almost_equal(gb, 10 + 2 * bn * head)    # added to the 10s
    assert exe.grad_dict["a"] is ga and exe.grad_arrays[1] is gb
    # New inputs by name are copied into the bound arrays; the caller's arrays stay.
    user_a = np.array(an)
    exe2 = c._bind(ndx.cpu(), [user_a, np.array(bn)], grad_req="null")
    exe2.forward(a=onp.array([5.0, 6.0]))
    assert_almost_equal(exe2.outputs[0], [2 * 5 + 4, 2 * 6 + 9])
    assert_almost_equal(user_a, an) and exe2.arg_dict["a"] is not user_a
    assert exe2.grad_dict == {"a": None, "b": None}
    exe2.backward()  # nothing to do for grad_req 'null'
    # Several outputs, out_grads by output name; ones when out_grads is None.
    g = sym.Group([sym.sin(a, name="s"), sym.exp(a, name="e")])
    ex = g._simple_bind(ndx.cpu(), a=(2,))
    ex.arg_dict["a"][...] = np.array(an)
    ex.forward(is_train=True)
    ex.backward({"s_output": np.array([1.0, 1.0]), "e_output": np.array([2.0, 0.0])})
    assert_almost_equal(ex.grad_dict["a"], onp.cos(an) + onp.array([2.0, 0.0]) * onp.exp(an))
    ex.forward(is_train=True)
    ex.backward()
    assert_almost_equal(ex.grad_dict["a"], onp.cos(an) + onp.exp(an))
    assert set(ex.output_dict) == {"s_output", "e_output"}
    ex.copy_params_from({"a": np.array([0.0, 0.0])})
    assert_almost_equal(ex.forward()[1], [1.0, 1.0])
    with pytest.raises(ValueError, match="not among the arguments"):
        ex.copy_params_from({"zz": np.array([0.0])})
    with pytest.raises(ValueError, match="grad_req for 'a'"):
        c._bind(ndx.cpu(), [np.array(an), np.array(bn)], grad_req="sometimes")
    with pytest.raises(ValueError, match="args has 1 entries; the symbol has 2"):
        c._bind(ndx.cpu(), [np.array(an)])
    with pytest.raises(ValueError, match=r"no value for inputs \['b'\]"):
        c._bind(ndx.cpu(), {"a": np.array(an)}).forward()
    with pytest.raises(ValueError, match="1 out_grads for 2 outputs"):
        ex.backward([np.ones(2)])


def test_executor_auxiliary_states_follow_train_mode():
    x = sym.var("x")
    bn = sym.batch_norm(x, sym.var("g"), sym.var("b"), sym.var("m"), sym.var("v"),
                        momentum=0.9)
    exe = bn._simple_bind(ndx.cpu(), x=(5, 2), g=(2,), b=(2,), m=(2,), v=(2,))
    exe.arg_dict["g"][...] = 1
    exe.aux_dict["v"][...] = 1
    xn = onp.random.default_rng(3).normal(size=(5, 2)).astype(onp.float32)
    out = exe.forward(is_train=True, x=xn)[0]
    want = (xn - xn.mean(0)) / onp.sqrt(xn.var(0) + 1e-5)
    assert_almost_equal(out, want, rtol=1e-4, atol=1e-5)
    # Running statistics move by (1 - momentum) towards the batch's in training only.
    assert_almost_equal(exe.aux_arrays[0], 0.1 * xn.mean(0), rtol=1e-5, atol=1e-6)
    before = exe.aux_dict["m"].asnumpy().copy()
    exe.forward(is_train=False)
    assert_almost_equal(exe.aux_dict["m"], before, rtol=0, atol=0)


def test_symbol_numeric_gradient_checks():
    from ndx.test_utils import (
        check_numeric_gradient,
        check_symbolic_backward,
        check_symbolic_forward,
    )
    x, w = sym.var("x"), sym.var("w")
    y = sym.tanh(sym.matmul(x, w))
    rng = onp.random.default_rng(4)
    xn, wn = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    check_numeric_gradient(y, [xn, wn], dtype=onp.float64, rtol=1e-5, atol=1e-7)
    check_numeric_gradient(y, {"x": xn, "w": wn}, grad_nodes=["w"], numeric_eps=1e-3)
    check_symbolic_forward(y, [xn, wn], [onp.tanh(xn @ wn)], dtype=onp.float64)
    head = rng.normal(size=(2, 2))
    d = head * (1 - onp.tanh(xn @ wn) ** 2)
    check_symbolic_backward(y, [xn, wn], [head], [d @ wn.T, xn.T @ d], dtype=onp.float64)
    check_symbolic_backward(y, [xn, wn], [head], {"x": d @ wn.T, "w": xn.T @ d},
                            grad_req="add", dtype=onp.float64)
    # A wrong gradient is caught: |x| has gradient sign(x), not 1.
    with pytest.raises(AssertionError, match="BACKWARD_x"):
        check_symbolic_backward(sym.abs(x), [-onp.ones((2, 3))], [onp.ones((2, 3))],
                                [onp.ones((2, 3))])
    with pytest.raises(AssertionError, match="FORWARD"):
        check_symbolic_forward(y, [xn, wn], [onp.tanh(xn @ wn) + 0.1], dtype=onp.float64)
