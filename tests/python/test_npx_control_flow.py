"""npx.foreach / while_loop / cond (numpy_extension/_control_flow.py): MXNet's documented
examples, a NumPy loop as reference, gradients through the steps, hybridization (foreach
unrolls; while_loop and cond become graph nodes running subgraphs), and typed errors."""
import functools
import logging
import types

import numpy as onp
import pytest

from ndx import autograd, gluon, np, npx
from test_products import _numeric_grad_check

R = onp.random.default_rng(7)


def test_while_loop_is_mxnets_example():
    outputs, states = npx.while_loop(lambda i, s: i <= 5, lambda i, s: ([i + s], [i + 1, s + i]),
                                     (np.array([0], dtype="int64"),
                                      np.array([1], dtype="int64")), max_iterations=10)
    assert isinstance(outputs, list) and len(outputs) == 1
    assert outputs[0].dtype == onp.int64
    onp.testing.assert_array_equal(outputs[0].asnumpy(),
                                   [[1], [2], [4], [7], [11], [16], [0], [0], [0], [0]])
    assert [s.asnumpy().tolist() for s in states] == [[6], [16]]
    # max_iterations ends the loop first; a false condition at once gives no outputs
    outputs, states = npx.while_loop(lambda i: i < 100, lambda i: (i * 2, i + 1),
                                     np.array(0.0), max_iterations=3)
    onp.testing.assert_array_equal(outputs.asnumpy(), [0, 2, 4])
    assert float(states[0]) == 3
    outputs, states = npx.while_loop(lambda i: i < 0, lambda i: (i, i), np.array(5.0), 4)
    assert outputs == [] and float(states[0]) == 5


def test_cond_both_forms():
    a, b = np.array([1.0]), np.array([2.0])
    assert float(npx.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))) == 42
    then_f, else_f = (lambda x, y: (x + 5) * (y + 5)), (lambda x, y: (x - 5) * (y - 5))
    assert float(npx.cond(lambda x, y: x * y < 5, then_f, else_f, [a, b])) == 42
    assert float(npx.cond(lambda x, y: x * y > 5, then_f, else_f, [a, b])) == 12


def test_foreach_is_a_loop_over_axis_0():
    data = R.standard_normal((4, 3))
    init = R.standard_normal(3)
    outs, states = npx.foreach(lambda x, s: (x + s[0], [s[0] * 2]), np.array(data),
                               [np.array(init)])
    want, s = [], init
    for row in data:
        want.append(row + s)
        s = s * 2
    onp.testing.assert_allclose(outs.asnumpy(), onp.stack(want), rtol=1e-12)
    onp.testing.assert_allclose(states[0].asnumpy(), s, rtol=1e-12)
    # a list of data arrays (body gets a list of slices) and nested outputs
    outs, states = npx.foreach(lambda xs, s: ([xs[0] * xs[1], xs[0]], s + xs[1]),
                               [np.array(data), np.array(data[::-1])], np.zeros(3))
    onp.testing.assert_allclose(outs[0].asnumpy(), data * data[::-1], rtol=1e-12)
    onp.testing.assert_allclose(outs[1].asnumpy(), data, rtol=1e-12)
    onp.testing.assert_allclose(states.asnumpy(), data.sum(0), rtol=1e-12)


def _rnn_like(x, h0):
    outs, h = npx.foreach(lambda xt, h: (np.tanh(xt + h) * 0.5, np.tanh(xt + h)), x, h0)
    return np.concatenate([outs.reshape(-1), h])


def test_gradients_through_the_steps():
    _numeric_grad_check(_rnn_like, [R.standard_normal((3, 2)), R.standard_normal(2)])
    _numeric_grad_check(lambda v: npx.while_loop(lambda i, x: i < 3,
                                                 lambda i, x: (x * x, [i + 1, x * 1.5]),
                                                 [np.array(0.0), v], max_iterations=4)[0],
                        [R.standard_normal(2)])
    _numeric_grad_check(lambda v: npx.cond(lambda x: x.sum() > 100, lambda x: x * 2,
                                           lambda x: np.sin(x), [v]), [R.standard_normal(3)])


class _Loop(gluon.HybridBlock):
    def __init__(self, which):
        super().__init__()
        self.which = which

    def forward(self, x):
        if self.which == "foreach":
            return npx.foreach(lambda xt, h: (xt * h, h + xt), x, np.ones(x.shape[1:]))[0]
        if self.which == "cond":
            return npx.cond(lambda v: v.sum() > 0, lambda v: v, lambda v: -v, [x])
        return npx.while_loop(lambda v: v.sum() < 10, lambda v: (v, v * 2), x, 5)[0]


def test_hybridized_loops_follow_the_values_not_the_trace():
    """One graph per input signature, yet cond takes the branch and while_loop runs the steps
    each call's values ask for (a NumPy loop is the reference)."""
    pos, neg = onp.array([[1.0, 2.0], [0.5, 0.25]]), onp.array([[-1.0, 2.0], [-3.0, 0.5]])
    small = onp.full((2, 2), 0.01)

    def reference(which, v):
        if which == "cond":
            return v if v.sum() > 0 else -v
        if which == "foreach":
            h, outs = onp.ones(2), []
            for row in v:
                outs.append(row * h)
                h = h + row
            return onp.stack(outs)
        steps = []
        while len(steps) < 5 and v.sum() < 10:
            steps.append(v)
            v = v * 2
        return onp.concatenate([onp.stack(steps), onp.zeros((5 - len(steps),) + v.shape)]) \
            if steps else onp.zeros((5,) + v.shape)

    for which in ("foreach", "cond", "while_loop"):
        block = _Loop(which)
        block.hybridize()
        for v in (pos, neg, small, pos * 100):
            onp.testing.assert_allclose(block(np.array(v)).asnumpy(), reference(which, v),
                                        rtol=1e-6, err_msg=which)
        assert len(block._graphs) == 1


class _Gated(gluon.HybridBlock):
    """A branch and a loop using the block's parameters (captured, not passed)."""

    def __init__(self):
        super().__init__()
        self.dense = gluon.nn.Dense(3, in_units=3)
        self.scale = gluon.Parameter("scale", shape=(3,), init="ones")

    def forward(self, x):
        y = npx.cond(lambda v: v.sum() > 0, lambda v: self.dense(v) * 2,
                     lambda v: np.tanh(v) * self.scale.data(), [x])
        out, (z, i) = npx.while_loop(lambda z, i: i < 3,
                                     lambda z, i: (z * self.scale.data(),
                                                   [z * self.scale.data() + 1, i + 1]),
                                     [y, np.array(0.0)], max_iterations=4)
        return out.sum(axis=0) + z


def _grads(block, x):
    x = np.array(x, dtype="float32")
    x.attach_grad()
    with autograd.record():
        loss = (block(x) * np.array(onp.arange(1.0, 10.0).reshape(3, 3))).sum()
    loss.backward()
    return [loss.asnumpy()] + [x.grad.asnumpy()] + \
        [p.grad().asnumpy() for p in block.collect_params().values()]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_hybridized_gradients_reach_captured_parameters(sign):
    x = sign * onp.abs(R.standard_normal((3, 3))) + sign * 0.1
    block = _Gated()
    block.initialize()
    block.scale.set_data(np.array([0.5, 1.5, -1.0]))
    want = _grads(block, x)
    block.hybridize()
    for _ in range(2):  # (the call that traces and a replay)
        for got, w in zip(_grads(block, x), want):
            onp.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)
    # the input's gradient against central differences of the hybridized block
    eps, w = 1e-2, onp.arange(1.0, 10.0).reshape(3, 3)
    numeric = onp.zeros_like(x)
    for i in range(x.size):
        d = onp.zeros(x.size)
        d[i] = eps
        d = d.reshape(x.shape)
        numeric.reshape(-1)[i] = (
            (block(np.array(x + d, dtype="float32")).asnumpy() * w).sum() -
            (block(np.array(x - d, dtype="float32")).asnumpy() * w).sum()) / (2 * eps)
    onp.testing.assert_allclose(want[1], numeric, rtol=1e-2, atol=1e-2)


class _ClosureCond(gluon.HybridBlock):
    """MXNet 1's form: a predicate array and functions of no arguments using `h`."""

    def __init__(self):
        super().__init__()
        self.dense = gluon.nn.Dense(4, in_units=3)

    def forward(self, x):
        h = self.dense(x)
        return npx.cond(h.sum() > 0, lambda: h * 2, lambda: np.exp(h) - 1)


def test_functions_using_arrays_of_the_forward_hybridize():
    block = _ClosureCond()
    block.initialize()
    xs = [onp.abs(R.standard_normal((2, 3))), -onp.abs(R.standard_normal((2, 3)))]
    w, b = block.dense.weight.data().asnumpy(), block.dense.bias.data().asnumpy()
    wants = []
    for x in xs:  # NumPy's forward and hand-derived gradients of (out * weights).sum()
        h = x @ w.T + b
        up = onp.arange(1.0, 9.0).reshape(2, 4)
        dh = up * 2 if h.sum() > 0 else up * onp.exp(h)
        wants.append((h * 2 if h.sum() > 0 else onp.exp(h) - 1, dh.T @ x, dh @ w))
    block.hybridize()
    for x, (out, dw, dx) in zip(xs * 2, wants * 2):
        xa = np.array(x, dtype="float32")
        xa.attach_grad()
        with autograd.record():
            y = block(xa)
            loss = (y * np.array(onp.arange(1.0, 9.0).reshape(2, 4))).sum()
        loss.backward()
        onp.testing.assert_allclose(y.asnumpy(), out, rtol=1e-5, atol=1e-6)
        onp.testing.assert_allclose(block.dense.weight.grad().asnumpy(), dw, rtol=1e-5,
                                    atol=1e-5)
        onp.testing.assert_allclose(xa.grad.asnumpy(), dx, rtol=1e-5, atol=1e-5)
    assert len(block._graphs) == 1


def test_two_forwards_before_one_backward_take_their_own_branches():
    block = _Gated()
    block.initialize()
    a, b = onp.abs(R.standard_normal((3, 3))), -onp.abs(R.standard_normal((3, 3)))

    def run():
        xa, xb = np.array(a, dtype="float32"), np.array(b, dtype="float32")
        xa.attach_grad()
        xb.attach_grad()
        with autograd.record():
            loss = (block(xa) * block(xb)).sum()
        loss.backward()
        return xa.grad.asnumpy(), xb.grad.asnumpy(), block.dense.weight.grad().asnumpy()

    want = run()
    block.hybridize()
    for got, w in zip(run(), want):
        onp.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


class _DropBranch(gluon.HybridBlock):
    def forward(self, x):
        return npx.cond(lambda v: v.sum() > 0, lambda v: npx.dropout(v, p=0.5) * 3,
                        lambda v: v, [x])


def test_a_random_branch_differentiates_the_mask_its_forward_drew():
    block = _DropBranch()
    block.hybridize()
    x = np.ones((64,))
    x.attach_grad()
    with autograd.record():
        y = block(x)
    y.backward()
    y = y.asnumpy()
    assert 0 < (y == 0).sum() < 64  # (a mask was drawn)
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.where(y == 0, 0.0, 6.0))


def test_nested_control_flow_and_errors_inside_a_graph():
    class Nested(gluon.HybridBlock):
        def forward(self, x):
            return npx.while_loop(
                lambda v: v.sum() < 20,
                lambda v: (v, npx.cond(lambda u: u.max() > 2, lambda u: u + 10,
                                       lambda u: u * 2, [v])), x, max_iterations=6)[1][0]

    block = Nested()
    block.hybridize()
    for start in ([0.5, 0.25], [3.0, 1.0], [30.0, 0.0]):
        v = onp.array(start)
        for _ in range(6):
            if v.sum() >= 20:
                break
            v = v + 10 if v.max() > 2 else v * 2
        onp.testing.assert_allclose(block(np.array(start)).asnumpy(), v)

    class Mismatch(gluon.HybridBlock):
        def forward(self, x):
            return npx.cond(lambda v: v.sum() > 0, lambda v: v, lambda v: v.sum(), [x])

    block = Mismatch()
    block(np.ones(2))  # imperative: each call has one branch
    block.hybridize()
    with pytest.raises(ValueError, match="same shapes and dtypes"):
        block(np.ones(2))

    class Grows(gluon.HybridBlock):
        def forward(self, x):
            return npx.while_loop(lambda v: v.sum() < 3, lambda v: (v, np.concatenate([v, v])),
                                  x, max_iterations=3)[0]

    block = Grows()
    block.hybridize()
    with pytest.raises(ValueError, match="loop_vars' shapes and dtypes"):
        block(np.ones(1))


def _run_both(make, call):
    """call(block) for the block imperative and hybridized (fresh blocks, same parameters)."""
    results = []
    for hybridize in (False, True):
        block = make()
        if hybridize:
            block.hybridize()
        results.append(call(block))
    return results


def _x_grad(block, x, **record):
    x = np.array(x, dtype="float32")
    x.attach_grad()
    with autograd.record(**record):
        y = block(x)
    y.backward()
    return y.asnumpy(), x.grad.asnumpy()


class _Const(gluon.HybridBlock):
    """Outputs that do not depend on the inputs: a constant branch, a loop that never runs
    (zero padding only), and a loop of max_iterations=0."""

    def forward(self, x):
        c = npx.cond(lambda v: v.sum() > 0, lambda v: np.ones(v.shape) * 3, lambda v: v * 2, [x])
        never, w = npx.while_loop(lambda v: v.sum() > 1e9, lambda v: (v * 5, v * 5), x, 3)
        none, z = npx.while_loop(lambda v: v.sum() < 1e9, lambda v: (v, v + 1), x, 0)
        # (imperatively a loop without steps gives [], in a graph its zero padding)
        pads = [o.sum(axis=0) for o in (never, none) if isinstance(o, np.ndarray)]
        return c + sum(pads) + w[0] + z[0]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_outputs_that_do_not_depend_on_the_inputs_back_propagate(sign):
    x = sign * onp.array([1.0, 2.0])
    (y0, g0), (y1, g1) = _run_both(_Const, lambda b: _x_grad(b, x))
    onp.testing.assert_allclose(y1, y0)
    onp.testing.assert_allclose(g1, g0)
    onp.testing.assert_allclose(g0, [2.0, 2.0] if sign > 0 else [4.0, 4.0])  # (c, w, z)


class _DropOrBN(gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        self.drop = gluon.nn.Dropout(0.5)
        self.bn = gluon.nn.BatchNorm(in_channels=2)

    def forward(self, x):
        return npx.cond(lambda v: v.sum() > 0, lambda v: self.bn(self.drop(v)), lambda v: v * 2,
                        [x])


def test_a_predict_mode_recording_differentiates_in_predict_mode():
    x = onp.array([[1.0, 2.0], [3.0, 5.0]])

    def call(block):
        block.initialize()
        y, g = _x_grad(block, x, train_mode=False)
        return y, g, block.bn.running_mean.data().asnumpy()

    for y, g, mean in _run_both(_DropOrBN, call):
        # predict mode: no dropout, BatchNorm with its running statistics (0 mean, 1 var)
        onp.testing.assert_allclose(y, x / onp.sqrt(1 + 1e-5), rtol=1e-5)
        onp.testing.assert_allclose(g, onp.full((2, 2), 1 / onp.sqrt(1 + 1e-5)), rtol=1e-5)
        onp.testing.assert_array_equal(mean, [0.0, 0.0])


class _Held(gluon.HybridBlock):
    """The forward's arrays reached through a list in the closure, a default argument and a
    functools.partial: the node takes them as inputs, so the dropout mask is drawn once and
    the running statistics move once per call."""

    def __init__(self):
        super().__init__()
        self.bn = gluon.nn.BatchNorm(in_channels=2)

    def forward(self, x):
        h = npx.dropout(self.bn(x), p=0.5)
        hs = [h]
        a = npx.cond(h.sum() > -1e9, lambda: hs[0] * 2, lambda: hs[0] * 3)
        b = npx.cond(h.sum() > -1e9, lambda h=h: h * 2, lambda h=h: h * 3)
        c = npx.cond(h.sum() > -1e9, functools.partial(np.multiply, h, 2),
                     functools.partial(np.multiply, h, 3))
        return a, b, c, h


def test_arrays_held_in_lists_defaults_and_partials_are_node_inputs():
    x = np.array(onp.arange(1.0, 17.0).reshape(8, 2), dtype="float32")

    def call(block):
        block.initialize()
        with autograd.record():
            outs = [o.asnumpy() for o in block(x)]
        return outs, block.bn.running_mean.data().asnumpy()

    for (a, b, c, h), mean in _run_both(_Held, call):
        for out in (a, b, c):
            onp.testing.assert_allclose(out, 2 * h, rtol=1e-6)
        # one update: momentum 0.9 of the batch mean (8.0, 9.0)
        onp.testing.assert_allclose(mean, [0.8, 0.9], rtol=1e-6)


class _Lazy(gluon.HybridBlock):
    """A deferred-shape layer used only in the branch (or loop body) the first call skips."""

    def __init__(self):
        super().__init__()
        self.dense = gluon.nn.Dense(4)
        self.loop = gluon.nn.Dense(3)

    def forward(self, x):
        y = npx.cond(lambda v: v.sum() > 0, lambda v: self.dense(v),
                     lambda v: np.zeros((v.shape[0], 4)) + v.sum(), [x])
        (z,) = npx.while_loop(lambda v: v.sum() > 0,
                              lambda v: ([], [v - 100 + self.loop(v).sum()]), [x], 2)[1]
        return y, z


def test_deferred_parameters_of_a_branch_not_taken_are_settled():
    x = -np.ones((2, 5))

    def call(block):
        block.initialize()
        shapes = [o.shape for o in block(x)] + [o.shape for o in block(-x)]
        return shapes, block.dense.weight.shape, block.loop.weight.shape

    for shapes, dense, loop in _run_both(_Lazy, call):
        assert shapes == [(2, 4), (2, 5), (2, 4), (2, 5)]
        assert dense == (4, 5) and loop == (3, 5)


def test_a_step_output_of_none_is_no_output():
    for block in _run_both(lambda: _NoneStep(), lambda b: b(np.array([1.0, 2.0]))):
        onp.testing.assert_allclose(block.asnumpy(), [4.0, 5.0])


class _NoneStep(gluon.HybridBlock):
    def forward(self, x):
        outs, (v,) = npx.while_loop(lambda v: v.sum() < 8, lambda v: (None, [v + 1]), [x], 5)
        assert outs == []
        return v


def test_a_graph_with_control_flow_is_not_exported(tmp_path):
    block = _Loop("cond")
    block.hybridize()
    block(np.ones(2))
    with pytest.raises(NotImplementedError, match="cond"):
        block.export(str(tmp_path / "m"))
    # nor does the Estimator's checkpoint write it (it logs why)
    from ndx.gluon.contrib.estimator.event_handler import CheckpointHandler
    estimator = types.SimpleNamespace(net=block, logger=logging.getLogger("test"))
    CheckpointHandler(str(tmp_path), model_prefix="m").batch_end(estimator)
    assert not (tmp_path / "m-symbol.json").exists()


@pytest.mark.parametrize("call, error, match", [
    (lambda: npx.while_loop(lambda i: i < 1, lambda i: (i, i), np.zeros(1)), ValueError,
     "max_iterations should be specified"),
    (lambda: npx.while_loop(lambda i: i < 1, lambda i: (i, i), np.zeros(1), -1), ValueError,
     ">= 0"),
    (lambda: npx.while_loop(lambda i: i < 1, lambda i: (i, i), np.zeros(1), 2.5), TypeError,
     "int"),
    (lambda: npx.while_loop(lambda i: i < 1, lambda i: (i, i), [], 3), ValueError, "non-empty"),
    (lambda: npx.while_loop(lambda i: i < 1, lambda i: (i, [i, i]), np.zeros(1), 3), ValueError,
     "2 loop_vars, expected 1"),
    (lambda: npx.while_loop(lambda i: np.ones(2), lambda i: (i, i), np.zeros(1), 3), ValueError,
     "one value"),
    (lambda: npx.while_loop(lambda i: i < 1, lambda i: i, np.zeros(1), 3), TypeError,
     "step_output, new_loop_vars"),
    (lambda: npx.cond(np.ones(2), lambda: 1, lambda: 2), ValueError, "one value"),
    (lambda: npx.cond(True, 1, lambda: 2), TypeError, "then_func"),
    (lambda: npx.cond(True, lambda: 1, lambda: 2, inputs=3), TypeError, "inputs"),
    (lambda: npx.foreach(lambda x, s: (x, s), [np.ones((2, 1)), np.ones((3, 1))], np.ones(1)),
     ValueError, "one first dimension"),
    (lambda: npx.foreach(lambda x, s: (x, s), np.ones((0, 2)), np.ones(1)), ValueError,
     "0 steps"),
    (lambda: npx.foreach(lambda x, s: (x, s), np.array(1.0), np.ones(1)), ValueError,
     "at least 1 dimension"),
    (lambda: npx.foreach(lambda x, s: x, np.ones((2, 1)), np.ones(1)), TypeError,
     "outputs, states"),
    (lambda: npx.foreach(lambda x, s: (x, s), np.ones((2, 1)), "s"), TypeError, "init_states"),
    (lambda: npx.foreach(None, np.ones((2, 1)), np.ones(1)), TypeError, "callable"),
])
def test_bad_arguments_raise_typed_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_autograd_records_through_while_loop():
    x = np.array([1.5, -0.5])
    x.attach_grad()
    with autograd.record():
        outputs, (i, v) = npx.while_loop(lambda i, v: i < 2, lambda i, v: (v, [i + 1, v * v]),
                                         [np.array(0.0), x], max_iterations=3)
        loss = v.sum()
    loss.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), 4 * onp.array([1.5, -0.5]) ** 3, rtol=1e-6)


def test_legacy_nd_contrib_bodies_get_ndarrays():
    """mx.nd.contrib's loops hand the body MXNet 1's NDArray, whose legacy methods
    (reshape's 0 = "keep this dimension", asscalar) the bodies of MXNet 1 code use."""
    import ndx as mx

    seen = []

    def cond(i, s):
        seen.append(type(i))
        return i.asscalar() <= 5

    outputs, states = mx.nd.contrib.while_loop(
        cond, lambda i, s: ([i + s], [i + 1, s + i]),
        (mx.nd.array([0], dtype="int64"), mx.nd.array([1], dtype="int64")), max_iterations=10)
    assert set(seen) == {mx.nd.NDArray} and type(outputs[0]) is mx.nd.NDArray
    onp.testing.assert_array_equal(outputs[0].asnumpy()[:6].ravel(), [1, 2, 4, 7, 11, 16])
    assert [s.asnumpy().tolist() for s in states] == [[6], [16]]

    def body(x, states):  # x: one (3, 4) step of (2, 3, 4)
        y = x.reshape((0, -1)) * 2
        return y, [states[0] + y.sum(axis=1).reshape((0,))]

    data = onp.arange(24.0).reshape(2, 3, 4)
    out, (total,) = mx.nd.contrib.foreach(body, mx.nd.array(data), [mx.nd.zeros((3,))])
    onp.testing.assert_allclose(out.asnumpy(), data * 2)
    onp.testing.assert_allclose(total.asnumpy(), (data * 2).sum(axis=(0, 2)))
    picked = mx.nd.contrib.cond(mx.nd.array([1]), lambda: mx.nd.ones((2, 3)).reshape((0, -1)),
                                lambda: mx.nd.zeros((2, 3)))
    assert type(picked) is mx.nd.NDArray
    onp.testing.assert_array_equal(picked.asnumpy(), onp.ones((2, 3)))


class _LegacyLoop(gluon.HybridBlock):
    """A legacy while_loop in a hybridized block, its body using an array of the forward (a
    dropout draw, so a body that drew again would disagree with the h returned)."""

    def __init__(self):
        super().__init__()
        self.dense = gluon.nn.Dense(3, in_units=3)

    def forward(self, x):
        import ndx as mx

        h = npx.dropout(self.dense(x), p=0.5)
        _, (i, v) = mx.nd.contrib.while_loop(
            lambda i, v: i < 3, lambda i, v: ([], [i + 1, v * 0.5 + h]),
            [mx.nd.array([0.0]), x], max_iterations=5)
        return v, h


def test_legacy_loops_hybridize_with_the_arrays_their_bodies_hold():
    """v3 = x/8 + 1.75 h after three steps of v <- v/2 + h, h = dropout(dense(x)): against
    NumPy's forward and hand-derived gradients (given the mask drawn), imperative and
    hybridized (one graph)."""
    block = _LegacyLoop()
    block.initialize()
    x = onp.abs(R.standard_normal((4, 3))) + 0.5
    up = onp.arange(1.0, 13.0).reshape(4, 3)
    w, b = block.dense.weight.data().asnumpy(), block.dense.bias.data().asnumpy()
    for hybridize in (False, True, True):
        if hybridize:
            block.hybridize()
        xa = np.array(x, dtype="float32")
        xa.attach_grad()
        with autograd.record():
            v, h = block(xa)
            loss = (v * np.array(up, dtype="float32")).sum()
        loss.backward()
        kept = (h.asnumpy() != 0) * 2.0  # the mask drawn, scaled by 1 / (1 - p)
        dense = x @ w.T + b
        onp.testing.assert_allclose(h.asnumpy(), dense * kept, rtol=1e-5, atol=1e-6)
        onp.testing.assert_allclose(v.asnumpy(), x / 8 + 1.75 * dense * kept, rtol=1e-5,
                                    atol=1e-6)
        dh = 1.75 * up * kept
        onp.testing.assert_allclose(block.dense.weight.grad().asnumpy(), dh.T @ x, rtol=1e-5,
                                    atol=1e-5)
        onp.testing.assert_allclose(xa.grad.asnumpy(), up / 8 + dh @ w, rtol=1e-5, atol=1e-5)
    assert len(block._graphs) == 1
