"""Elementwise fusion in hybridized blocks: connected elementwise ops run as one
`_FusedElementwise` node. The fused graph runs fewer kernels and gives results bit-identical to
the same graph with fusion off (each op still computes in its own dtype, in the graph's
order) and equal to NumPy's; broadcasting, scalars, zero-dim and zero-size arrays, mixed
dtypes, in-place planning, errors raised inside a fused node, gradients through a fused
backward graph, npx.set_fusion and NDX_FUSION=0."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as onp
import pytest

import ndx
from ndx import _core, autograd, gluon, np, npx
from strict_checks import assert_almost_equal


class Fn(gluon.HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(np, *args)


def _stats(block):
    return _core._graph_stats(block._last_graph[0])


def _run(fn, *arrays, fusion=True):
    """fn hybridized: (output as NumPy, the run's stats), with fusion on or off."""
    prev = npx.set_fusion(fusion)
    try:
        block = Fn(fn)
        block.hybridize()
        block(*arrays)  # the first call traces
        out = block(*arrays)
        return out.asnumpy(), _stats(block)
    finally:
        npx.set_fusion(prev)


def _f32(shape, seed=0):
    return onp.asarray(onp.random.default_rng(seed).normal(size=shape), dtype=onp.float32)


CHAINS = [
    ("a*2+1", lambda m, a: a * 2 + 1, 2),
    ("tanh(a*2+1)*a-3", lambda m, a: m.tanh(a * 2 + 1) * a - 3, 5),
    ("exp(-a*a)*0.5+a", lambda m, a: m.exp(-(a * a)) * 0.5 + a, 5),
    ("1/(1+exp(-a))", lambda m, a: 1 / (1 + m.exp(-a)), 4),
    ("sqrt(abs(a))-sin(a)*cos(a)", lambda m, a: m.sqrt(m.abs(a)) - m.sin(a) * m.cos(a), 6),
]


@pytest.mark.parametrize("name,fn,ops", CHAINS, ids=[c[0] for c in CHAINS])
@pytest.mark.parametrize("shape", [(7, 5), (), (0, 3), (3, 9000), (50000,), (2, 3, 4, 5)])
def test_chains_are_one_kernel_identical_to_unfused_and_numpy(name, fn, ops, shape):
    xn = _f32(shape)
    x = np.array(xn)
    fused, st = _run(fn, x)
    plain, st_off = _run(fn, x, fusion=False)
    assert st["kernels"] == 1 and st["fused_nodes"] == 1 and st["fused_ops"] == ops
    assert st_off["kernels"] == ops and st_off["fused_nodes"] == 0
    assert fused.dtype == plain.dtype == onp.float32 and fused.shape == shape
    onp.testing.assert_array_equal(fused, plain)  # bit-identical, NaN positions included
    with onp.errstate(all="ignore"):
        ref = fn(onp, xn)
    assert_almost_equal(fused, ref, rtol=2e-6, atol=2e-6)


def test_broadcast_operands_of_every_layout():
    # A bias along the last axis, a column, a scalar array and a full array in one chain.
    a, b, c = _f32((64, 300)), _f32((300,), 1), _f32((64, 1), 2)
    s = onp.float32(0.25)
    fn = lambda m, a, b, c, s: m.exp(a - b) * c + s * a  # noqa: E731
    args = [np.array(v) for v in (a, b, c, s)]
    fused, st = _run(fn, *args)
    plain, _ = _run(fn, *args, fusion=False)
    assert st["kernels"] == 1 and st["fused_ops"] == 5
    onp.testing.assert_array_equal(fused, plain)
    assert_almost_equal(fused, onp.exp(a - b) * c + s * a, rtol=2e-6, atol=1e-6)


def test_an_intermediate_smaller_than_the_output():
    # b * b has b's shape; the chain broadcasts it against a only at the end.
    a, b = _f32((40, 3000)), _f32((3000,), 1)
    fn = lambda m, a, b: m.tanh(b * b + 1) * a  # noqa: E731
    fused, st = _run(fn, np.array(a), np.array(b))
    plain, _ = _run(fn, np.array(a), np.array(b), fusion=False)
    assert st["kernels"] == 1
    onp.testing.assert_array_equal(fused, plain)
    assert_almost_equal(fused, onp.tanh(b * b + 1) * a, rtol=2e-6, atol=1e-6)


def test_mixed_dtypes_keep_each_ops_own_dtype():
    # int32 arithmetic, a comparison to bool, bool times float32, and the cast to float32
    # the weak float scalar asks for: eight ops in one fused node.
    i = onp.arange(-600, 600, dtype=onp.int32).reshape(30, 40)
    f = _f32((30, 40))
    fn = lambda m, i, f: (i * 3 + 1 > 0) * f + (i // 7) * 0.5  # noqa: E731
    fused, st = _run(fn, np.array(i), np.array(f))
    plain, _ = _run(fn, np.array(i), np.array(f), fusion=False)
    assert st["kernels"] == 1 and st["fused_ops"] == 8
    assert fused.dtype == plain.dtype == onp.float32
    onp.testing.assert_array_equal(fused, plain)
    assert_almost_equal(fused, (i * 3 + 1 > 0) * f + (i // 7) * onp.float32(0.5), rtol=1e-6,
                        atol=1e-6)


def _vector_runs():
    return _core._fusion_runs()["vector"]


VECTOR_CHAINS = [
    # Two inputs and a scalar; a temp read twice; three temps alive at once; a maximum.
    ("a*b-a/b+1", lambda m, a, b: a * b - a / b + 1),
    ("t*t+t", lambda m, a, b: (lambda t: t * t + t)(m.tanh(a) * 2)),
    ("(a*2)*(b+1)-(a*3)*(b-1)", lambda m, a, b: (a * 2) * (b + 1) - (a * 3) * (b - 1)),
    ("exp(-a*a)+maximum(a,b)*0.5", lambda m, a, b: m.exp(-a * a) + m.maximum(a, b) * 0.5),
]


@pytest.mark.parametrize("name,fn", VECTOR_CHAINS, ids=[c[0] for c in VECTOR_CHAINS])
@pytest.mark.parametrize("dtype", [onp.float32, onp.float64])
@pytest.mark.parametrize("n", [1, 7, 1023, 1024, 1025, 4097, 100003])
def test_vector_program_block_edges_match_unfused_and_numpy(name, fn, dtype, n):
    # Contiguous same-dtype chains run as a vector program over small blocks: every size
    # around a block's edge (and a SIMD vector's) gives the unfused graph's bits.
    an, bn = _f32((n,)).astype(dtype), (_f32((n,), 1) + 3).astype(dtype)
    a, b = np.array(an), np.array(bn)
    before = _vector_runs()
    fused, st = _run(fn, a, b)
    assert _vector_runs() > before and st["kernels"] == 1
    plain, _ = _run(fn, a, b, fusion=False)
    assert fused.dtype == dtype
    onp.testing.assert_array_equal(fused, plain)
    assert_almost_equal(fused, fn(onp, an, bn), rtol=1e-5, atol=1e-5)


def test_vector_program_on_a_large_streamed_output_with_threads():
    # 9M float32 (36 MB): the output is written with non-temporal stores, blocks split over
    # the threads.
    an = _f32((3, 3_000_001))
    fn = lambda m, a: m.tanh(a * 2 + 1) * a - 3  # noqa: E731
    before = _vector_runs()
    fused, _ = _run(fn, np.array(an))
    assert _vector_runs() > before
    plain, _ = _run(fn, np.array(an), fusion=False)
    onp.testing.assert_array_equal(fused, plain)
    assert_almost_equal(fused, fn(onp, an), rtol=2e-6, atol=2e-6)


def test_chains_the_vector_program_does_not_take_run_on_blocks():
    # A broadcast operand, or a dtype change inside the chain, takes the op-by-op block path.
    a, b = np.array(_f32((64, 300))), np.array(_f32((300,), 1))
    runs = _core._fusion_runs()
    fused, _ = _run(lambda m, a, b: m.exp(a - b) * 2, a, b)
    plain, _ = _run(lambda m, a, b: m.exp(a - b) * 2, a, b, fusion=False)
    onp.testing.assert_array_equal(fused, plain)
    fused16, _ = _run(lambda m, a: (a * 2).astype("float16") + 1, a)
    assert fused16.dtype == onp.float16
    after = _core._fusion_runs()
    assert after["blocks"] >= runs["blocks"] + 2 and after["vector"] == runs["vector"]


def test_float64_and_float16_chains():
    for dt in (onp.float64, onp.float16):
        xn = _f32((33, 77)).astype(dt)
        fn = lambda m, a: m.exp(a * 0.5) - a * a  # noqa: E731
        fused, st = _run(fn, np.array(xn))
        plain, _ = _run(fn, np.array(xn), fusion=False)
        assert st["kernels"] == 1 and fused.dtype == dt
        onp.testing.assert_array_equal(fused, plain)


def test_non_elementwise_ops_split_the_chain_and_shared_results_stay_unfused():
    x = np.array(_f32((16, 32)))
    # sum is not elementwise: two fused groups around it.
    fused, st = _run(lambda m, a: m.exp(m.sum(a * 2 + 1, axis=1)) * 3 - 1, x)
    plain, st_off = _run(lambda m, a: m.exp(m.sum(a * 2 + 1, axis=1)) * 3 - 1, x, fusion=False)
    assert st["fused_nodes"] == 2 and st["kernels"] == 3 and st_off["kernels"] == 6
    onp.testing.assert_array_equal(fused, plain)

    # t is a graph output and read again: it stays its own node's result.
    def two_outputs(m, a):
        t = m.tanh(a)
        return t, t * 2 + 1

    block = Fn(two_outputs)
    block.hybridize()
    block(x)
    t, u = block(x)
    assert_almost_equal(u.asnumpy(), onp.tanh(x.asnumpy()) * 2 + 1, rtol=1e-6, atol=1e-6)
    assert_almost_equal(t.asnumpy(), onp.tanh(x.asnumpy()), rtol=1e-6, atol=1e-6)
    st = _stats(block)
    assert st["kernels"] == 2 and st["fused_nodes"] == 1 and st["fused_ops"] == 2


def test_the_fused_output_reuses_a_dying_input_buffer():
    # exp(a) dies at the fused node reading it, which may write over it (FInplaceOption).
    x = np.array(_f32((64, 64)))
    fn = lambda m, a: m.tanh(m.dot(a, a)) * 2 + 1  # noqa: E731
    fused, st = _run(fn, x)
    plain, _ = _run(fn, x, fusion=False)
    onp.testing.assert_array_equal(fused, plain)
    assert st["kernels"] == 2 and st["outputs_in_place"] == 1


def test_errors_inside_a_fused_node_keep_their_type():
    # An integer power with a negative exponent is a ValueError, fused or not.
    block = Fn(lambda m, a, b: (a + 1) ** b * 2)
    block.hybridize()
    a = np.array(onp.arange(6, dtype=onp.int64))
    assert block(a, np.array(onp.full(6, 2, dtype=onp.int64))).asnumpy().tolist() == \
        [2 * (v + 1) ** 2 for v in range(6)]
    with pytest.raises(ValueError, match="negative integer powers"):
        block(a, np.array(onp.array([1, 1, -1, 1, 1, 1], dtype=onp.int64)))


def test_fused_op_cannot_be_called_directly():
    with pytest.raises(NotImplementedError, match="_FusedElementwise"):
        _core._invoke("_FusedElementwise", [np.ones(2)], {})


def test_gradients_through_fused_forward_and_backward_graphs():
    # Under autograd the block is one recorded node; its forward and backward graphs are
    # planned, so both fuse. Gradients equal the unfused ones and the analytic derivative.
    xn = _f32((8, 50))
    grads = {}
    for on in (True, False):
        prev = npx.set_fusion(on)
        try:
            block = Fn(lambda m, a: m.tanh(a * 2 + 1) * a - a * a)
            block.hybridize()
            x = np.array(xn)
            x.attach_grad()
            for _ in range(2):
                with autograd.record():
                    y = block(x)
                y.backward()
            grads[on] = (y.asnumpy(), x.grad.asnumpy())
        finally:
            npx.set_fusion(prev)
    onp.testing.assert_array_equal(grads[True][0], grads[False][0])
    onp.testing.assert_array_equal(grads[True][1], grads[False][1])
    t = onp.tanh(xn * 2 + 1)
    assert_almost_equal(grads[True][1], (1 - t * t) * 2 * xn + t - 2 * xn, rtol=1e-5, atol=1e-5)


def test_training_a_hybridized_mlp_matches_unfused():
    def train(on):
        prev = npx.set_fusion(on)
        try:
            ndx.random_seed(0)
            net = gluon.nn.HybridSequential()
            net.add(gluon.nn.Dense(16, activation="tanh"), gluon.nn.Dense(4))
            net.initialize(ndx.initializer.Xavier())
            net.hybridize()
            trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
            loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
            x = np.array(_f32((32, 10)))
            y = np.array(onp.arange(32) % 4)
            for _ in range(5):
                with autograd.record():
                    loss = loss_fn(net(x), y)
                loss.backward()
                trainer.step(32)
            return net(x).asnumpy()
        finally:
            npx.set_fusion(prev)

    onp.testing.assert_array_equal(train(True), train(False))


def test_set_fusion_returns_the_previous_setting_and_the_env_var_turns_it_off():
    assert npx.get_fusion() is True
    assert npx.set_fusion(False) is True
    assert npx.get_fusion() is False
    assert npx.set_fusion(True) is False
    code = textwrap.dedent("""
        from ndx import _core, gluon, np, npx
        class B(gluon.HybridBlock):
            def forward(self, a):
                return a * 2 + 1
        b = B(); b.hybridize(); b(np.ones(3)); b(np.ones(3))
        print(npx.get_fusion(), _core._graph_stats(b._last_graph[0])["kernels"])
    """)
    env = dict(os.environ, NDX_FUSION="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "2"]


def test_a_large_fused_kernel_releases_the_interpreter_lock():
    # With a 10 s switch interval the spinning thread runs only while the main thread's kernel
    # has released the GIL: it ticks during the fused block's runs only if the fused kernel
    # releases it (fused, the chain is a single kernel).
    import threading

    block = Fn(lambda m, a: m.tanh(a * 2 + 1) * a - 3)
    block.hybridize()
    x = np.array(_f32((1 << 22,)))
    block(x)
    block(x)
    assert _stats(block)["kernels"] == 1
    ticks, started, stop = [0], threading.Event(), threading.Event()

    def spin():
        started.set()
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0)

    # One kernel thread leaves a core to the spinning thread, and the block runs until the
    # spinner has ticked (at most 40 runs, well inside the 10 s interval): on a loaded host the
    # spinner may get no core during a given run, which made three fixed runs flaky.
    interval, threads = sys.getswitchinterval(), npx.get_num_threads()
    sys.setswitchinterval(10.0)
    npx.set_num_threads(1)
    thread = threading.Thread(target=spin)
    try:
        thread.start()
        started.wait()
        before, runs = ticks[0], 0
        while ticks[0] == before and runs < 40:
            block(x).wait_to_read()
            runs += 1
        during = ticks[0] - before
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        npx.set_num_threads(threads)
        thread.join()
    assert during > 0


def test_a_relu_networks_backward_runs_as_a_vector_program():
    # relu's gradient is one float op (no bool mask), so a backward chain through relu stays
    # on the vector program; the gradients equal the unfused ones and the hand derivative.
    xn = _f32((16, 300))
    grads = {}
    for on in (True, False):
        prev = npx.set_fusion(on)
        try:
            block = Fn(lambda m, a: npx.relu(a * 2 - 1) * a)
            block.hybridize()
            x = np.array(xn)
            x.attach_grad()
            with autograd.record():
                y = block(x)
            before = _vector_runs()
            y.backward()
            grads[on] = (x.grad.asnumpy(), _vector_runs() - before)
        finally:
            npx.set_fusion(prev)
    assert grads[True][1] >= 1 and grads[False][1] == 0
    onp.testing.assert_array_equal(grads[True][0], grads[False][0])
    t = xn * 2 - 1
    assert_almost_equal(grads[True][0], (t > 0) * 2 * xn + onp.maximum(t, 0), rtol=1e-6,
                        atol=1e-6)


def test_planned_steps_call_their_kernels_without_invoke():
    # Shapes, dtypes and buffers are resolved once per input signature; each CPU step then
    # calls its kernel directly, with invoke's results (a strided input included).
    xn = _f32((16, 32))
    fn = lambda m, a: m.tanh(m.dot(a, a.T)) * 2 + m.sum(a)  # noqa: E731
    want = onp.tanh(xn @ xn.T) * 2 + xn.sum()
    for fusion in (True, False):
        out, st = _run(fn, np.array(xn), fusion=fusion)
        assert_almost_equal(out, want, rtol=1e-5, atol=1e-5)
        assert st["direct"] == st["kernels"] > (0 if fusion else 2)
    strided = np.array(_f32((16, 64)))[:, ::2]
    sn = strided.asnumpy()
    out, st = _run(lambda m, a: m.sort(m.dot(a, a.T), axis=-1) + a[:, :16], strided,
                   fusion=False)
    assert_almost_equal(out, onp.sort(sn @ sn.T, axis=-1) + sn[:, :16], rtol=1e-5, atol=1e-5)
