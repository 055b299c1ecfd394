"""Python custom operators (ndx.operator): the seeds' softmax example, params as strings,
request types, autograd, hybridized blocks and graph export, and exceptions in callbacks."""
import json
import os
import subprocess
import sys

import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np
from strict_checks import assert_almost_equal


# ---- the seeds' softmax example (imports changed; np.int is gone from NumPy 2) ----
class Softmax(ndx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = onp.exp(x - x.max(axis=1).reshape((x.shape[0], 1)))
        y /= y.sum(axis=1).reshape((x.shape[0], 1))
        self.assign(out_data[0], req[0], ndx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label = in_data[1].asnumpy().ravel().astype(int)
        y = out_data[0].asnumpy()
        y[onp.arange(label.shape[0]), label] -= 1.0
        self.assign(in_grad[0], req[0], ndx.nd.array(y))


@ndx.operator.register("softmax")
class SoftmaxProp(ndx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        data_shape = in_shape[0]
        label_shape = (in_shape[0][0],)
        return [data_shape, label_shape], [data_shape], []

    def infer_type(self, in_type):
        dtype = in_type[0]
        return [dtype, dtype], [dtype], []

    def create_operator(self, ctx, shapes, dtypes):
        return Softmax()


def _softmax(x):
    e = onp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_seed_softmax_forward_and_backward():
    xn = onp.random.default_rng(0).normal(size=(5, 4)).astype(onp.float32)
    labels = onp.array([0, 3, 1, 1, 2], dtype=onp.float32)
    x, lab = np.array(xn), np.array(labels)
    assert_almost_equal(ndx.nd.Custom(x, lab, op_type="softmax"), _softmax(xn), rtol=1e-5)
    x.attach_grad()
    with autograd.record():
        y = ndx.npx.custom(x, lab, op_type="softmax")
    y.backward()
    want = _softmax(xn)
    want[onp.arange(5), labels.astype(int)] -= 1
    assert_almost_equal(x.grad, want, rtol=1e-5, atol=1e-6)


def test_seed_softmax_trains_inside_a_gluon_network():
    rng = onp.random.default_rng(1)
    centers = rng.normal(scale=3, size=(3, 5))
    labels = rng.integers(0, 3, size=120)
    xn = (centers[labels] + rng.normal(size=(120, 5))).astype(onp.float32)
    net = gluon.nn.Dense(3)
    net.initialize(ndx.initializer.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    x, lab = np.array(xn), np.array(labels.astype(onp.float32))
    for _ in range(30):
        with autograd.record():
            prob = ndx.nd.Custom(net(x), lab, op_type="softmax")
        prob.backward()
        trainer.step(120)
    accuracy = (prob.asnumpy().argmax(axis=1) == labels).mean()
    assert accuracy > 0.9


# ---- an op with a string param, a req of 'add', and a gradient that uses out_grad ----
class Scale(ndx.operator.CustomOp):
    def __init__(self, factor):
        self.factor = factor

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * self.factor)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.factor)


@ndx.operator.register("scale")
class ScaleProp(ndx.operator.CustomOpProp):
    def __init__(self, factor="1.0"):
        super().__init__()
        assert isinstance(factor, str)  # params arrive as strings, as in MXNet
        self.factor = float(factor)

    def create_operator(self, ctx, shapes, dtypes):
        return Scale(self.factor)


def test_params_as_strings_grad_req_add_and_second_use():
    x = np.array([1.0, -2.0, 3.0])
    assert_almost_equal(ndx.nd.Custom(x, op_type="scale", factor=2.5), [2.5, -5.0, 7.5])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = (ndx.nd.Custom(x, op_type="scale", factor=3) * np.array([1.0, 2.0, 3.0])).sum()
        y.backward()
    assert_almost_equal(x.grad, [6.0, 12.0, 18.0])  # 3 * head, accumulated twice


class ScaleBlock(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.npx.custom(F.np.sin(x), op_type="scale", factor="2")


def test_custom_ops_in_hybridized_blocks_and_exported_graphs(tmp_path):
    xn = onp.linspace(-1, 1, 6)
    blk = ScaleBlock()
    ref = blk(np.array(xn)).asnumpy()
    assert_almost_equal(ref, 2 * onp.sin(xn))
    blk.hybridize()
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = blk(x)
    y.backward()
    assert_almost_equal(y, ref, rtol=0, atol=0)
    assert_almost_equal(x.grad, 2 * onp.cos(xn))
    sym_file, _ = blk.export(str(tmp_path / "scale"))
    nodes = json.load(open(sym_file))["nodes"]
    custom = [n for n in nodes if n["op"] == "Custom"]
    assert custom and custom[0]["attrs"]["op_type"] == "scale"
    back = gluon.SymbolBlock.imports(sym_file, ["data"])
    assert_almost_equal(back(np.array(xn)), ref, rtol=0, atol=0)


class Broken(ndx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise KeyError("deliberate failure in forward")


_REQS = []  # the request types each backward call of "mul_reqs" saw


class _MulReqs(ndx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _REQS.append(list(req))
        self.assign(in_grad[0], req[0], out_grad[0] * in_data[1])
        self.assign(in_grad[1], req[1], out_grad[0] * in_data[0])


@ndx.operator.register("mul_reqs")
class _MulReqsProp(ndx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ["a", "b"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _MulReqs()


def test_backward_asks_no_gradient_of_an_input_that_needs_none():
    """MXNet's request types: the gradient of an input nothing asks for is 'null' (backward,
    autograd.grad and a hybridized block's backward graph), so an op skips computing it; a
    graph recorded for higher-order gradients (create_graph) gets every gradient."""
    class Block(gluon.HybridBlock):
        def forward(self, a, b):
            return ndx.nd.Custom(a, b, op_type="mul_reqs") * 2

    x, c = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    x.attach_grad()
    _REQS.clear()
    with autograd.record():
        y = ndx.nd.Custom(x, c, op_type="mul_reqs")
    y.backward()
    assert _REQS == [["write", "null"]]
    assert_almost_equal(x.grad, [3.0, 4.0], rtol=0, atol=0)
    for create_graph, want in ((False, ["write", "null"]), (True, ["write", "write"])):
        _REQS.clear()
        with autograd.record():
            y = ndx.nd.Custom(x, c, op_type="mul_reqs")
        (g,) = autograd.grad(y, [x], create_graph=create_graph)
        assert _REQS == [want] and onp.array_equal(g.asnumpy(), [3.0, 4.0])
    block = Block()
    block.hybridize()
    for _ in range(2):  # the capture, then the cached graph
        _REQS.clear()
        with autograd.record():
            y = block(x, c)
        y.backward()
        assert _REQS == [["write", "null"]]
        assert_almost_equal(x.grad, [6.0, 8.0], rtol=0, atol=0)
    c.attach_grad()  # both inputs need gradients now
    _REQS.clear()
    with autograd.record():
        y = ndx.nd.Custom(x, c, op_type="mul_reqs")
    y.backward()
    assert _REQS == [["write", "write"]]
    assert_almost_equal(c.grad, [1.0, 2.0], rtol=0, atol=0)


@ndx.operator.register("broken")
class BrokenProp(ndx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return Broken()


@ndx.operator.register("bad_shape")
class BadShapeProp(ndx.operator.CustomOpProp):
    def infer_shape(self, in_shape):
        return in_shape, [], []  # one output declared, none inferred


def test_errors_surface_and_the_engine_stays_usable():
    with pytest.raises(KeyError, match="deliberate"):
        ndx.nd.Custom(np.ones((2,)), op_type="broken")
    assert (np.ones((2,)) + 1).tolist() == [2.0, 2.0]  # still works
    with pytest.raises(ValueError, match="no custom operator"):
        ndx.nd.Custom(np.ones((2,)), op_type="never_registered")
    with pytest.raises(ValueError, match="infer_shape"):
        ndx.nd.Custom(np.ones((2,)), op_type="bad_shape")
    with pytest.raises(TypeError):
        ndx.operator.register("not_a_prop")(object)
    assert "softmax" in ndx.operator.get_all_registered_operators()


class Remember(ndx.operator.CustomOp):
    def __init__(self, shapes):
        self.shapes = shapes

    def forward(self, is_train, req, in_data, out_data, aux):
        assert tuple(in_data[0].shape) == tuple(self.shapes[0])  # created for these shapes
        self.assign(out_data[0], req[0], in_data[0] + 1)


@ndx.operator.register("remember")
class RememberProp(ndx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return Remember(shapes)


def test_operators_are_recreated_per_shape():
    for shape in [(2,), (3, 2), (2,)]:
        out = ndx.nd.Custom(np.zeros(shape), op_type="remember")
        assert out.shape == shape and (out.asnumpy() == 1).all()


def test_symbolic_custom_op():
    x = ndx.sym.var("x")
    y = ndx.sym.Custom(ndx.sym.sin(x), op_type="scale", factor="3")
    assert y.infer_shape(x=(2, 2))[1] == [(2, 2)]
    xn = onp.array([[0.1, 0.2], [0.3, 0.4]])
    assert_almost_equal(y.eval(x=np.array(xn))[0], 3 * onp.sin(xn))
    back = ndx.sym.load_json(y.tojson())
    assert_almost_equal(back.eval(x=np.array(xn))[0], 3 * onp.sin(xn))


# ---- state kept on self between forward and backward; autograd.Function not pinned ----
class _SavedSquare(ndx.operator.CustomOp):
    """y = x**2, whose backward reads the x its forward kept on self (no in_data)."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.x = in_data[0].copy()
        self.assign(out_data[0], req[0], self.x * self.x)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * self.x * out_grad[0])


@ndx.operator.register("saved_square")
class _SavedSquareProp(ndx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _SavedSquare()


class _TwoSavedSquares(gluon.HybridBlock):
    def forward(self, a, b):
        return ndx.npx.custom(a, op_type="saved_square") * 3 + \
            ndx.nd.Custom(b, op_type="saved_square")


def test_state_on_self_pairs_with_its_own_forward_when_two_calls_are_recorded():
    """As MXNet creates an operator per recorded call, each backward sees what its own forward
    kept on self. One operator shared by both calls gave x1 the gradient 2 * x2 * head."""
    x1n, x2n = onp.array([1.0, 2.0]), onp.array([10.0, -20.0])
    w1, w2 = onp.array([0.5, -1.0]), onp.array([2.0, 3.0])
    x1, x2 = np.array(x1n), np.array(x2n)
    x1.attach_grad()
    x2.attach_grad()
    with autograd.record():
        y1 = ndx.npx.custom(x1, op_type="saved_square")
        y2 = ndx.npx.custom(x2, op_type="saved_square")
        loss = (y1 * np.array(w1) + y2 * np.array(w2)).sum()
    loss.backward()
    assert_almost_equal(y1, x1n ** 2, rtol=0, atol=0)
    assert_almost_equal(y2, x2n ** 2, rtol=0, atol=0)
    assert_almost_equal(x1.grad, 2 * x1n * w1, rtol=0, atol=0)  # [1, -4]
    assert_almost_equal(x2.grad, 2 * x2n * w2, rtol=0, atol=0)  # [40, -120]
    # the same with two op calls in one hybridized block (a graph node each)
    block = _TwoSavedSquares()
    block.hybridize()
    for _ in range(2):  # the capture, then the cached graph
        with autograd.record():
            loss = block(x1, x2).sum()
        loss.backward()
        assert_almost_equal(loss, (3 * x1n ** 2 + x2n ** 2).sum(), rtol=0, atol=0)
        assert_almost_equal(x1.grad, 6 * x1n, rtol=0, atol=0)
        assert_almost_equal(x2.grad, 2 * x2n, rtol=0, atol=0)
    # unrecorded calls go on working
    assert_almost_equal(ndx.npx.custom(np.array([3.0]), op_type="saved_square"), [9.0])


class _OneSavedSquare(gluon.HybridBlock):
    def forward(self, a):
        return ndx.npx.custom(a, op_type="saved_square")


def _hybridized_saved_squares_twice():
    x1n, x2n = onp.array([1.0, 2.0]), onp.array([10.0, -20.0])
    x1, x2 = np.array(x1n), np.array(x2n)
    x1.attach_grad()
    x2.attach_grad()
    block = _OneSavedSquare()
    block.hybridize()
    for _ in range(3):  # the capture, then the cached graph
        with autograd.record():
            loss = (block(x1) * 0.5 + block(x2) * 2).sum()
        loss.backward()
        assert_almost_equal(x1.grad, 2 * x1n * 0.5, rtol=0, atol=0)
        assert_almost_equal(x2.grad, 2 * x2n * 2, rtol=0, atol=0)
    assert_almost_equal(block(np.array([3.0])), [9.0])


def test_a_hybridized_block_called_twice_before_backward_keeps_each_calls_state():
    """Each call of a hybridized block is a recorded use of its Custom node: the graph's one
    operator served both calls, and x1's gradient was 2 * x2 * head."""
    _hybridized_saved_squares_twice()


_CREATED = []


@ndx.operator.register("counted_saved_square")
class _CountedSavedSquareProp(ndx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        _CREATED.append(1)
        return _SavedSquare()


class _OneCountedSquare(gluon.HybridBlock):
    def forward(self, a):
        return ndx.npx.custom(a, op_type="counted_saved_square")


def test_a_hybridized_loop_reuses_operators_no_pending_backward_needs():
    """As MXNet's cached graph keeps one operator per node, a hybridized block reuses the
    operators of calls whose backward can no longer run; a call whose outputs are alive keeps
    its own (a loop, whose last loss is alive while the next step runs, cycles two)."""
    block = _OneCountedSquare()
    block.hybridize()
    rng = onp.random.default_rng(0)
    for step in range(10):
        xn = rng.standard_normal(3)
        x = np.array(xn)
        x.attach_grad()
        with autograd.record():
            loss = (block(x) * 3).sum()
        loss.backward()
        assert_almost_equal(x.grad, 6 * xn, rtol=0, atol=0)
        if step == 3:
            _CREATED.clear()
    assert _CREATED == []  # steps 4-9 ran on the two operators made before
    # Calls whose outputs stay alive: each keeps its own operator, whatever order the
    # backwards then run in.
    xs = [np.array(rng.standard_normal(3)) for _ in range(4)]
    losses = []
    for x in xs:
        x.attach_grad()
        with autograd.record():
            losses.append((block(x) * 3).sum())
    for x, loss in reversed(list(zip(xs, losses))):
        loss.backward()
        assert_almost_equal(x.grad, 6 * x.asnumpy(), rtol=0, atol=0)


def test_the_same_when_the_graph_is_recorded_op_by_op():
    """NDX_CACHED_OP=0 records a hybridized graph op by op (read once per process: a child
    process runs it)."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import sys; sys.path.insert(0, %r); import test_custom_op as t; "
            "t._hybridized_saved_squares_twice(); print('ok')" % here)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, NDX_CACHED_OP="0"), timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


class _Cube(autograd.Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x * x * x

    def backward(self, dy):
        (x,) = self.saved_tensors
        return 3 * x * x * dy


def test_autograd_function_calls_are_not_kept_after_they_finish():
    """A recorded autograd.Function call lives as long as its graph: once the outputs are gone,
    the Function and the arrays it saved are freed (a cache once kept the last 1024 alive)."""
    import gc
    import weakref
    refs = []
    for i in range(1, 4):
        x = np.array([float(i), -float(i)])
        x.attach_grad()
        f = _Cube()
        with autograd.record():
            y = f(x)
        y.backward()
        assert_almost_equal(y, [i ** 3, -i ** 3], rtol=0, atol=0)
        assert_almost_equal(x.grad, [3 * i * i, 3 * i * i], rtol=0, atol=0)  # its own x
        refs.append((weakref.ref(f), weakref.ref(f.saved_tensors[0])))
        del f, y, x
    gc.collect()
    assert [(r() is None, s() is None) for r, s in refs] == [(True, True)] * 3


class _Doubled(ndx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)


@ndx.operator.register("records_its_dtypes")
class _RecordsDtypesProp(ndx.operator.CustomOpProp):
    seen = []

    def create_operator(self, ctx, shapes, dtypes):
        type(self).seen.append((list(shapes), dtypes))
        return _Doubled()


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_create_operator_gets_the_dtypes_of_float64_inputs_too(dtype):
    """create_operator's dtypes, as MXNet passes them (a float64 dtype compares equal to
    None in NumPy, which once made float64 inputs look unknown and dtypes None)."""
    _RecordsDtypesProp.seen.clear()
    out = ndx.nd.Custom(np.ones((2, 3), dtype=dtype), op_type="records_its_dtypes")
    onp.testing.assert_array_equal(out.asnumpy(), onp.full((2, 3), 2, dtype=dtype))
    shapes, dtypes = _RecordsDtypesProp.seen[-1]
    assert shapes == [(2, 3), (2, 3)]
    assert dtypes is not None and [onp.dtype(t) for t in dtypes] == [onp.dtype(dtype)] * 2
