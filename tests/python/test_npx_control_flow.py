"""npx.foreach / while_loop / cond (numpy_extension/_control_flow.py): MXNet's documented
examples, a NumPy loop as reference, gradients through the steps, hybridization (foreach
unrolls; while_loop and cond refuse), and typed errors."""
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


def test_foreach_hybridizes_and_the_value_dependent_ones_refuse():
    x = np.array(R.standard_normal((3, 2)))
    block = _Loop("foreach")
    want = block(x).asnumpy()
    block.hybridize()
    onp.testing.assert_allclose(block(x).asnumpy(), want, rtol=1e-6)
    for which in ("cond", "while_loop"):
        block = _Loop(which)
        block(x)  # imperative: fine
        block.hybridize()
        with pytest.raises(NotImplementedError, match=f"{which}.*hybridized"):
            block(x)


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
