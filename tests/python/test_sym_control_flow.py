"""mx.sym.contrib.foreach / while_loop / cond (MXNet 1's symbolic control flow): MXNet's
documented examples, values and executor gradients against NumPy (a hand-written loop and
central differences), the enclosing graph's layers cut out of a body and computed once, save
and load through the graph's JSON, nesting, and typed errors."""
import numpy as onp
import pytest

import ndx
from ndx import np, sym

R = onp.random.default_rng(5)


def _run(symbol, values, out_grads=None):
    """(outputs, {input: gradient}) of an executor bound to float64 values."""
    args = {k: np.array(v, dtype="float64") for k, v in values.items()}
    grads = {k: np.zeros(v.shape, dtype="float64") for k, v in values.items()}
    exe = symbol._bind(ndx.cpu(), args, args_grad=grads)
    outs = [o.asnumpy() for o in exe.forward(is_train=True)]
    if out_grads is not None:
        exe.backward([np.array(g, dtype="float64") for g in out_grads])
    return outs, {k: g.asnumpy() for k, g in grads.items()}


def _numeric(fn, values, weights, eps=1e-6):
    """d sum(w * fn(values)) / d each value, by central differences (fn: NumPy, float64)."""
    grads = {}
    for name, value in values.items():
        g = onp.zeros_like(value)
        for i in range(value.size):
            for sign in (1, -1):
                moved = dict(values, **{name: value.copy()})
                moved[name].reshape(-1)[i] += sign * eps
                g.reshape(-1)[i] += sign * sum((o * w).sum() for o, w in
                                               zip(fn(**moved), weights)) / (2 * eps)
        grads[name] = g
    return grads


def test_foreach_is_mxnets_example():
    outs, states = sym.contrib.foreach(lambda d, s: (d + s[0], [s[0] * 2]), sym.var("data"),
                                       [sym.var("state")])
    assert isinstance(outs, sym.Symbol) and isinstance(states, list) and len(states) == 1
    group = sym.Group([outs] + states)
    assert group.list_arguments() == ["data", "state"]
    assert group.infer_shape(data=(4, 3), state=(3,))[1] == [(4, 3), (3,)]
    data = onp.arange(12.0).reshape(4, 3)
    got, _ = _run(group, {"data": data, "state": onp.ones(3)})
    onp.testing.assert_array_equal(got[0], data + onp.array([1, 2, 4, 8])[:, None])
    onp.testing.assert_array_equal(got[1], [16, 16, 16])


def test_while_loop_is_mxnets_example():
    outputs, states = sym.contrib.while_loop(
        lambda i, s: i <= 5, lambda i, s: ([i + s], [i + 1, s + i]), (sym.var("i"), sym.var("s")),
        max_iterations=10)
    group = sym.Group(outputs + states)
    assert group.infer_shape(i=(1,), s=(1,))[1] == [(10, 1), (1,), (1,)]
    got = group.eval(i=np.array([0], dtype="int64"), s=np.array([1], dtype="int64"))
    assert got[0].dtype == onp.int64
    onp.testing.assert_array_equal(got[0].asnumpy().ravel(), [1, 2, 4, 7, 11, 16, 0, 0, 0, 0])
    assert [g.asnumpy().tolist() for g in got[1:]] == [[6], [16]]


def _rnn_numpy(x, h0, w, c):
    bias = onp.tanh(c)
    h, outs = h0, []
    for t in range(x.shape[0]):
        h = onp.tanh(x[t] + h @ w + bias)
        outs.append(h)
    return [onp.stack(outs), h]


def test_a_foreach_rnn_differentiates_into_its_data_states_weights_and_cut_layers():
    """The body uses a variable (w) and a layer of the enclosing graph (tanh(c)), which is
    cut out: an input of the node, computed once."""
    w, c = sym.var("w"), sym.var("c")
    bias = sym.tanh(c, name="bias")

    def step(xt, states):
        h = sym.tanh(xt + sym.dot(states[0], w) + bias)
        return h, [h]

    outs, (last,) = sym.contrib.foreach(step, sym.var("x"), [sym.var("h0")])
    group = sym.Group([outs, last])
    assert sorted(group.list_arguments()) == ["c", "h0", "w", "x"]
    ops = [n["op"] for n in __import__("json").loads(group.tojson())["nodes"]]
    assert ops.count("_np_tanh") == 1  # (the cut layer, outside the loop; the body's is inside)
    values = {"x": R.standard_normal((5, 2, 3)), "h0": R.standard_normal((2, 3)),
              "w": R.standard_normal((3, 3)) * 0.5, "c": R.standard_normal(3)}
    weights = [R.standard_normal((5, 2, 3)), R.standard_normal((2, 3))]
    got, grads = _run(group, values, weights)
    for g, want in zip(got, _rnn_numpy(**values)):
        onp.testing.assert_allclose(g, want, rtol=1e-12)
    want = _numeric(_rnn_numpy, values, weights)
    for name in values:
        onp.testing.assert_allclose(grads[name], want[name], rtol=1e-6, atol=1e-8)


def _power_loop_numpy(x, a):
    i, v, outs = 0, x, []
    while i < 3:
        outs.append(v * a)
        i, v = i + 1, v * a
    return [onp.stack(outs + [onp.zeros_like(x)]), v]


def test_while_loop_gradients_reach_its_vars_and_the_enclosing_graph():
    a = sym.exp(sym.var("b"), name="a")  # (cut: computed outside the loop)
    outputs, (_, v) = sym.contrib.while_loop(
        lambda i, v: i < 3, lambda i, v: (v * a, [i + 1, v * a]),
        [sym.var("i"), sym.var("x")], max_iterations=4)
    group = sym.Group([outputs, v])
    values = {"x": R.standard_normal((2, 2)), "b": R.standard_normal((2, 2)) * 0.3}
    weights = [R.standard_normal((4, 2, 2)), R.standard_normal((2, 2))]
    args = {"i": np.array(0.0, dtype="float64"),
            **{k: np.array(v, dtype="float64") for k, v in values.items()}}
    grads = {k: np.zeros(v.shape, dtype="float64") for k, v in values.items()}
    exe = group._bind(ndx.cpu(), args, args_grad=dict(grads, i=np.zeros((), dtype="float64")))
    got = [o.asnumpy() for o in exe.forward(is_train=True)]
    exe.backward([np.array(w_, dtype="float64") for w_ in weights])
    reference = lambda x, b: _power_loop_numpy(x, onp.exp(b))  # noqa: E731
    for g, want in zip(got, reference(**values)):
        onp.testing.assert_allclose(g, want, rtol=1e-12)
    want = _numeric(reference, values, weights)
    for name in values:
        onp.testing.assert_allclose(grads[name].asnumpy(), want[name], rtol=1e-6, atol=1e-8)


def test_cond_runs_and_differentiates_the_branch_taken():
    a, b = sym.var("a"), sym.var("b")
    made = []

    def then_func():
        made.append("then")
        return [a * b, sym.exp(a)]

    out = sym.contrib.cond(sym.sum(a) > sym.sum(b), then_func, lambda: [sym.tanh(b), b * 3])
    group = sym.Group(out)
    assert made == ["then"] and len(out) == 2
    for av, bv in ((onp.array([2.0, 1.0]), onp.array([0.5, -1.0])),
                   (onp.array([-2.0, 1.0]), onp.array([0.5, 1.0]))):
        take_then = av.sum() > bv.sum()
        wa, wb = R.standard_normal(2), R.standard_normal(2)
        got, grads = _run(group, {"a": av, "b": bv}, [wa, wb])
        if take_then:
            want = [av * bv, onp.exp(av)]
            ga, gb = wa * bv + wb * onp.exp(av), wa * av
        else:
            want = [onp.tanh(bv), bv * 3]
            ga, gb = onp.zeros(2), wa * (1 - onp.tanh(bv) ** 2) + 3 * wb
        for g, w_ in zip(got, want):
            onp.testing.assert_allclose(g, w_, rtol=1e-12)
        onp.testing.assert_allclose(grads["a"], ga, rtol=1e-12)
        onp.testing.assert_allclose(grads["b"], gb, rtol=1e-12)


def test_only_the_branch_taken_runs():
    """A branch's own nodes live in the node (a division by zero in the branch not taken
    leaves no trace in the output; an outer layer a branch reads is computed outside)."""
    a = sym.var("a")
    out = sym.contrib.cond(sym.sum(a) > 0, lambda: sym.sqrt(a), lambda: sym.sqrt(-a))
    with onp.errstate(all="raise"):
        got = out.eval(a=np.array([4.0, 9.0]))[0].asnumpy()
    onp.testing.assert_array_equal(got, [2.0, 3.0])
    import json
    ops = [n["op"] for n in json.loads(out.tojson())["nodes"]]
    assert "_np_sqrt" not in ops  # (inside the node's spec)


def test_loops_save_load_and_nest():
    inner = lambda x, s: (x * 2, [s[0] + x])  # noqa: E731

    def outer(row, states):
        outs, (total,) = sym.contrib.foreach(inner, row, [states[0]])
        return outs, [total]

    outs, (total,) = sym.contrib.foreach(outer, sym.var("data"), [sym.var("s0")])
    group = sym.load_json(sym.Group([outs, total]).tojson())
    data = R.standard_normal((3, 4, 2))
    got = group.eval(data=np.array(data), s0=np.zeros(2))
    onp.testing.assert_allclose(got[0].asnumpy(), data * 2, rtol=1e-6)
    onp.testing.assert_allclose(got[1].asnumpy(), data.sum(axis=(0, 1)), rtol=1e-5)


def test_a_linear_recurrence_under_make_loss_has_numpys_gradient():
    """A foreach whose initial state is a float32 zeros layer of the enclosing graph (cut),
    under MakeLoss: the weight's gradient against NumPy's hand-derived backward pass."""
    w = sym.var("w")
    outs, (last,) = sym.contrib.foreach(lambda xt, s: (s[0] * w + xt, [s[0] * w + xt]),
                                        sym.var("data"), [sym.zeros((4, 1))])
    loss = sym.MakeLoss(sym.sum(sym.square(last - sym.var("label"))))
    values = {"data": R.standard_normal((3, 4, 1)), "w": onp.array([[0.3]]),
              "label": R.standard_normal((4, 1))}
    _, grads = _run(loss, values, [onp.ones(())])
    x, wv, y = values["data"], values["w"][0, 0], values["label"]
    h = [onp.zeros((4, 1))]
    for t in range(3):
        h.append(h[-1] * wv + x[t])
    dh, dw = 2 * (h[-1] - y), 0.0
    for t in range(3, 0, -1):
        dw += (dh * h[t - 1]).sum()
        dh = dh * wv
    onp.testing.assert_allclose(grads["w"], [[dw]], rtol=1e-6)  # (the float32 zeros)


@pytest.mark.parametrize("call,error,match", [
    (lambda: sym.contrib.foreach(None, sym.var("d"), [sym.var("s")]), TypeError, "callable"),
    (lambda: sym.contrib.foreach(lambda d, s: d, sym.var("d"), [sym.var("s")]), TypeError,
     "outputs, states"),
    (lambda: sym.contrib.foreach(lambda d, s: (d, [s[0], s[0]]), sym.var("d"), [sym.var("s")]),
     ValueError, "structure"),
    (lambda: sym.contrib.foreach(lambda d, s: (d, s), "d", [sym.var("s")]), TypeError,
     "Symbol"),
    (lambda: sym.contrib.while_loop(lambda i: i < 1, lambda i: ([], [i]), [sym.var("i")]),
     ValueError, "max_iterations"),
    (lambda: sym.contrib.while_loop(lambda i: i < 1, lambda i: ([], [i]), [sym.var("i")], -1),
     ValueError, "max_iterations"),
    (lambda: sym.contrib.while_loop(lambda i: i < 1, lambda i: i, [sym.var("i")], 3), TypeError,
     "step_output, new_loop_vars"),
    (lambda: sym.contrib.while_loop(lambda i: i < 1, lambda i: ([], [i, i]), [sym.var("i")], 3),
     ValueError, "loop_vars"),
    (lambda: sym.contrib.cond(1, lambda: sym.var("a"), lambda: sym.var("b")), TypeError,
     "pred"),
    (lambda: sym.contrib.cond(sym.var("p"), lambda: sym.var("a"), 3), TypeError, "else_func"),
    (lambda: sym.contrib.cond(sym.var("p"), lambda: [sym.var("a")], lambda: sym.var("b")),
     ValueError, "structure"),
])
def test_bad_arguments_raise_typed_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_shapes_that_do_not_fit_raise_at_inference():
    outs, _ = sym.contrib.foreach(lambda d, s: (d[0] + d[1], [s[0]]),
                                  [sym.var("a"), sym.var("b")], [sym.var("s")])
    with pytest.raises(ValueError, match="one first dimension"):
        outs.infer_shape(a=(3, 2), b=(4, 2), s=(2,))
    with pytest.raises(ValueError, match="0 steps"):
        outs.infer_shape(a=(0, 2), b=(0, 2), s=(2,))
    out = sym.contrib.cond(sym.var("p"), lambda: sym.var("a"), lambda: sym.var("b"))
    with pytest.raises(ValueError, match="same shapes"):
        out.infer_shape(p=(1,), a=(2,), b=(3,))
