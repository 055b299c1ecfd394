"""A hybridized block under autograd is recorded as one node (MXNet's CachedOp): its gradients
equal the imperative ones and the op-by-op recording's (NDX_CACHED_OP=0, run in a
subprocess), for every input that needs one; grad_req 'add', retain_graph, blocks whose
inputs need no gradient, dropout, BatchNorm's running statistics, and the typed error for
gradients of gradients through a hybridized block."""
import os
import subprocess
import sys
import textwrap

import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np
from strict_checks import assert_almost_equal


def _net(dropout=0.0, batchnorm=False):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu"))
    if batchnorm:
        net.add(gluon.nn.BatchNorm())
    if dropout:
        net.add(gluon.nn.Dropout(dropout))
    net.add(gluon.nn.Dense(8, activation="tanh"), gluon.nn.Dense(3))
    net.initialize(ndx.initializer.Xavier())
    return net


def _step(net, x, y):
    x = x.copy()
    x.attach_grad()
    with autograd.record():
        out = net(x)
        loss = ((out - y) ** 2).sum() + (out * x[:, :3]).sum()
    loss.backward()
    grads = {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()
             if p.grad_req != "null"}
    return out.asnumpy(), x.grad.asnumpy(), grads


def _data(seed=0):
    rng = onp.random.default_rng(seed)
    return (np.array(rng.normal(size=(6, 5)).astype(onp.float32)),
            np.array(rng.normal(size=(6, 3)).astype(onp.float32)))


def test_gradients_equal_imperative_for_data_and_parameters():
    x, y = _data()
    net = _net()
    out_i, gx_i, g_i = _step(net, x, y)
    net.hybridize()
    out_h, gx_h, g_h = _step(net, x, y)
    assert_almost_equal(out_h, out_i, rtol=0, atol=0)
    assert_almost_equal(gx_h, gx_i, rtol=1e-6, atol=1e-7)
    for k in g_i:
        assert_almost_equal(g_h[k], g_i[k], rtol=1e-6, atol=1e-7)


def test_gradients_match_numpy_hand_computation():
    # y = tanh(x @ w.T + b); d(sum(y * c))/dw = ((1 - y^2) * c).T @ x
    rng = onp.random.default_rng(3)
    xn = rng.normal(size=(4, 3)).astype(onp.float64)
    cn = rng.normal(size=(4, 2)).astype(onp.float64)
    net = gluon.nn.Dense(2, activation="tanh", in_units=3, dtype="float64")
    net.initialize()
    net.hybridize()
    wn = net.weight.data().asnumpy()
    bn = net.bias.data().asnumpy()
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        loss = (net(x) * np.array(cn)).sum()
    loss.backward()
    yn = onp.tanh(xn @ wn.T + bn)
    d = (1 - yn**2) * cn
    assert_almost_equal(net.weight.grad().asnumpy(), d.T @ xn, rtol=1e-12, atol=1e-12)
    assert_almost_equal(net.bias.grad().asnumpy(), d.sum(0), rtol=1e-12, atol=1e-12)
    assert_almost_equal(x.grad.asnumpy(), d @ wn, rtol=1e-12, atol=1e-12)


def test_equal_to_op_by_op_recording_in_a_subprocess():
    script = textwrap.dedent("""
        import numpy as onp, ndx
        from ndx import autograd, gluon, np
        ndx.random_seed(0)
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(16, activation="relu"), gluon.nn.BatchNorm(),
                gluon.nn.Dropout(0.3), gluon.nn.Dense(3))
        net.initialize(ndx.initializer.Xavier())
        net.hybridize()
        x = np.array(onp.random.default_rng(0).normal(size=(6, 5)).astype(onp.float32))
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        for _ in range(3):
            with autograd.record():
                loss = (net(x) ** 2).sum()
            loss.backward()
            trainer.step(6)
        onp.save(__import__("sys").argv[1], onp.concatenate(
            [p.data().asnumpy().ravel() for p in net.collect_params().values()]))
    """)
    results = []
    for flag in ("1", "0"):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                            f"ndx_cached_{os.getpid()}_{flag}.npy")
        env = dict(os.environ, NDX_CACHED_OP=flag)
        subprocess.run([sys.executable, "-c", script, path], check=True, env=env)
        results.append(onp.load(path))
        os.remove(path)
    # Same ops in the same order: bit-identical parameters after three steps.
    assert onp.array_equal(results[0], results[1])


class _TwoParams(gluon.HybridBlock):
    """Gradients a backward graph does not make with a step of its own: the output gradient
    itself (x + a), one entry for two parameters (a + b), and one made by a step (relu)."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.a = gluon.Parameter("a", shape=(3, 4), init=ndx.initializer.Constant(0.5))
        self.b = gluon.Parameter("b", shape=(3, 4), init=ndx.initializer.Constant(-0.25))

    def forward(self, x):
        a, b = self.a.data(), self.b.data()
        if self.kind == "ograd":
            return x + a
        if self.kind == "shared":
            return x * 2 + (a + b)
        return np.maximum(x * a, 0) * b


@pytest.mark.parametrize("kind", ["ograd", "shared", "step"])
def test_gradients_written_into_grad_arrays_match_hand_computation(kind):
    # The backward graph writes the gradients it makes straight into the .grad arrays; those
    # it does not make (an input of the graph, one entry serving two parameters) are copied.
    xn = (onp.arange(12, dtype=onp.float32).reshape(3, 4) - 5) / 7
    cn = onp.linspace(-1, 1, 12, dtype=onp.float32).reshape(3, 4)
    net = _TwoParams(kind)
    net.initialize()
    net.hybridize()
    grads = [net.a.grad(), net.b.grad()]
    for _ in range(2):  # the second step runs the cached plans
        with autograd.record():
            loss = (net(np.array(xn)) * np.array(cn)).sum()
        loss.backward()
    if kind == "ograd":
        want = [cn, onp.zeros_like(cn)]
    elif kind == "shared":
        want = [cn, cn]
    else:
        on = xn * 0.5 > 0
        want = [cn * -0.25 * on * xn, cn * onp.maximum(xn * 0.5, 0)]
    for ref, array in zip(want, grads):  # (the arrays held from before the steps)
        assert_almost_equal(array.asnumpy(), ref, rtol=1e-6, atol=1e-7)


def test_grad_req_add_and_retain_graph():
    x, y = _data(1)
    net = _net()
    net.hybridize()
    for p in net.collect_params().values():
        p.grad_req = "add"
        p.zero_grad()
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward(retain_graph=True)
    first = net[0].weight.grad().asnumpy().copy()
    loss.backward()
    assert_almost_equal(net[0].weight.grad().asnumpy(), 2 * first, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="freed"):
        loss.backward()


def test_input_without_gradient_and_frozen_parameters():
    x, y = _data(2)
    ref = _net()
    ref.hybridize()
    net = _net()
    net.hybridize()
    ref(x), net(x)  # settle the deferred shapes
    for a, b in zip(ref.collect_params().values(), net.collect_params().values()):
        b.set_data(a.data())
    net[0].weight.grad_req = "null"
    with autograd.record():
        loss_r = (ref(x) ** 2).sum()
        loss_n = (net(x) ** 2).sum()
    loss_r.backward()
    loss_n.backward()
    for name in ("1.weight", "2.bias"):
        assert_almost_equal(net.collect_params()[name].grad(),
                            ref.collect_params()[name].grad(), rtol=0, atol=0)


def test_batchnorm_running_statistics_update_once_per_step():
    rng = onp.random.default_rng(4)
    xn = rng.normal(2.0, 3.0, size=(8, 4)).astype(onp.float32)
    bn = gluon.nn.BatchNorm(momentum=0.5, in_channels=4)
    bn.initialize()
    bn.hybridize()
    with autograd.record():
        out = bn(np.array(xn))
    out.backward()
    assert_almost_equal(bn.running_mean.data().asnumpy(), 0.5 * xn.mean(0), rtol=1e-5,
                        atol=1e-6)
    mean = xn.mean(0)
    assert_almost_equal(out.asnumpy(), (xn - mean) / onp.sqrt(xn.var(0) + 1e-5), rtol=1e-4,
                        atol=1e-4)


def test_gradient_of_gradient_through_a_hybridized_block_equals_the_unhybridized_one():
    """With create_graph the block's gradient is built from its graph's ops (test_second_order
    checks the values against NumPy): the same as without hybridize()."""
    grads = []
    for hybridize in (False, True):
        net = gluon.nn.Dense(2, activation="tanh", in_units=3)
        net.initialize(ndx.initializer.Constant(0.3))
        if hybridize:
            net.hybridize()
        x = np.array(onp.linspace(-1, 1, 6, dtype=onp.float32).reshape(2, 3))
        x.attach_grad()
        with autograd.record():
            y = net(x).sum()
            (gx,) = autograd.grad([y], [x], create_graph=True)
            z = (gx * gx).sum()
        z.backward()
        grads.append((x.grad.asnumpy(), net.weight.grad().asnumpy()))
    for a, b in zip(*grads):
        onp.testing.assert_allclose(a, b, rtol=1e-6)


def test_cached_op_is_not_callable_directly():
    from ndx import _core
    with pytest.raises(NotImplementedError, match="hybridized"):
        _core._invoke("_CachedOp", [np.ones(2)], {})


@pytest.mark.parametrize("order", ["same-first", "broadcast-first"])
def test_backward_graph_is_per_input_signature(order):
    """The backward graph drops the sum of a gradient to its operand's shape where the operand
    was not broadcast, so it is built per input signature: one graph run under autograd with
    an operand that does broadcast in one call and not in another gets its own backward graph
    for each, and every gradient is NumPy's."""
    a_sym, b_sym = ndx.sym.var("a"), ndx.sym.var("b")
    graph = (a_sym + b_sym) * a_sym
    rng = onp.random.default_rng(5)
    an = rng.normal(size=(4, 3))
    shapes = [(4, 3), (1, 3), (3,), (4, 3)]
    if order == "broadcast-first":
        shapes = shapes[1:] + shapes[:1]
    for shape in shapes:
        bn = rng.normal(size=shape)
        a, b = np.array(an), np.array(bn)
        a.attach_grad()
        b.attach_grad()
        with autograd.record():
            (y,) = graph.eval(a=a, b=b)
        y.backward()
        # y = (a + b) a: dy/da = 2a + b, dy/db = a (summed over b's broadcast axes)
        assert_almost_equal(a.grad, 2 * an + bn, rtol=1e-6, atol=1e-6)
        want_b = an.sum(axis=0).reshape(shape) if shape != (4, 3) else an
        assert b.grad.shape == shape
        assert_almost_equal(b.grad, want_b, rtol=1e-6, atol=1e-6)
