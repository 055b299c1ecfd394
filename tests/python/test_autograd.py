"""Autograd from Python, following the seeds' test template: forward and backward against
NumPy and hand-derived gradients, scalar and zero-size shapes, second order, and misuse."""
import threading

import numpy as onp
import pytest

import ndx
from ndx import autograd, np, npx
from strict_checks import assert_almost_equal

SHAPES = [(), (3,), (2, 3), (0, 4)]

# op, numpy forward, derivative, input range
UNARY = [
    ("negative", onp.negative, lambda x: -onp.ones_like(x), (-2, 2)),
    ("abs", onp.abs, onp.sign, (0.2, 2)),
    ("sqrt", onp.sqrt, lambda x: 0.5 / onp.sqrt(x), (0.2, 3)),
    ("square", onp.square, lambda x: 2 * x, (-2, 2)),
    ("exp", onp.exp, onp.exp, (-1, 1)),
    ("log", onp.log, lambda x: 1 / x, (0.2, 3)),
    ("sin", onp.sin, onp.cos, (-3, 3)),
    ("cos", onp.cos, lambda x: -onp.sin(x), (-3, 3)),
    ("tanh", onp.tanh, lambda x: 1 - onp.tanh(x) ** 2, (-2, 2)),
    ("floor", onp.floor, onp.zeros_like, (0.1, 0.9)),
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name,ref,deriv,rng", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_forward_and_backward(name, ref, deriv, rng, shape, dtype):
    rtol, atol = (1e-4, 1e-5) if dtype == "float32" else (1e-10, 1e-12)
    xn = onp.random.default_rng(0).uniform(*rng, size=shape).astype(dtype)
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = getattr(np, name)(x)
    assert y.shape == shape
    assert_almost_equal(y, ref(xn), rtol=rtol, atol=atol)
    head = onp.random.default_rng(1).uniform(-1, 1, size=shape).astype(dtype)
    y.backward(np.array(head))
    assert x.grad.shape == shape and x.grad.dtype == onp.dtype(dtype)
    assert_almost_equal(x.grad, head * deriv(xn), rtol=rtol, atol=atol)


BINARY = [
    ("add", lambda a, b: (onp.ones_like(a), onp.ones_like(b))),
    ("subtract", lambda a, b: (onp.ones_like(a), -onp.ones_like(b))),
    ("multiply", lambda a, b: (b, a)),
    ("true_divide", lambda a, b: (1 / b, -a / b**2)),
    ("power", lambda a, b: (b * a ** (b - 1), a**b * onp.log(a))),
    ("maximum", lambda a, b: ((a >= b) * 1.0, (a < b) * 1.0)),
]


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((), (4,)), ((0, 3), (3,))],
                         ids=str)
@pytest.mark.parametrize("name,deriv", BINARY, ids=[b[0] for b in BINARY])
def test_binary_backward_with_broadcasting(name, deriv, shapes):
    gen = onp.random.default_rng(2)
    an = gen.uniform(0.5, 2, size=shapes[0])
    bn = gen.uniform(0.5, 2, size=shapes[1])
    a, b = np.array(an), np.array(bn)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = getattr(np, name)(a, b)
    y.backward()
    da, db = deriv(*onp.broadcast_arrays(an, bn))
    out_shape = onp.broadcast_shapes(shapes[0], shapes[1])
    collapse = ndx.test_utils.collapse_sum_like
    assert_almost_equal(a.grad, collapse(onp.broadcast_to(da, out_shape), shapes[0]))
    assert_almost_equal(b.grad, collapse(onp.broadcast_to(db, out_shape), shapes[1]))


def test_reductions_reshape_transpose_and_matmul_chain():
    xn = onp.arange(6, dtype=onp.float64).reshape(2, 3) / 3
    wn = onp.linspace(-1, 1, 12).reshape(3, 4)
    x, w = np.array(xn), np.array(wn)
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        h = np.tanh(x @ w)               # (2, 4)
        z = h.T.reshape(8).sum() + np.mean(h, axis=0).sum()
    z.backward()
    hn = onp.tanh(xn @ wn)
    dh = (1 + 1 / 2) * (1 - hn**2)
    assert_almost_equal(w.grad, xn.T @ dh, rtol=1e-10, atol=1e-12)
    assert_almost_equal(x.grad, dh @ wn.T, rtol=1e-10, atol=1e-12)


def test_second_order_gradients():
    xn = onp.array([0.3, -1.2, 2.0])
    for name, d2 in [("sin", lambda v: -onp.sin(v)), ("exp", onp.exp),
                     ("tanh", lambda v: -2 * onp.tanh(v) * (1 - onp.tanh(v) ** 2))]:
        x = np.array(xn)
        x.attach_grad()
        with autograd.record():
            y = getattr(np, name)(x)
            g = autograd.grad(y, x, create_graph=True)
        g.backward()
        assert_almost_equal(x.grad, d2(xn), rtol=1e-10, atol=1e-12)
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = (x * x * x).sum()
        (g,) = autograd.grad([y], [x], create_graph=True)
        gg = (g * g).sum()  # sum(9 x^4) -> 36 x^3
    gg.backward()
    assert_almost_equal(x.grad, 36 * xn**3, rtol=1e-10)


def test_grad_req_modes_and_retain_graph():
    x = np.array([1.0, 2.0])
    x.attach_grad(grad_req="add")
    with autograd.record():
        y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_almost_equal(x.grad, [4.0, 8.0])
    with pytest.raises(ValueError, match="retain_graph"):
        y.backward()
    z = np.array([3.0])
    z.attach_grad(grad_req="null")
    with autograd.record():
        (z * 2).backward()
    assert z.grad is None  # MXNet: grad_req='null' attaches no gradient buffer
    with pytest.raises(ValueError, match="grad_req"):
        x.attach_grad(grad_req="sometimes")


def test_record_pause_and_modes():
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
        with autograd.predict_mode():
            assert not autograd.is_training()
    with autograd.record(train_mode=False):
        assert autograd.is_recording() and not autograd.is_training()
    with autograd.train_mode():
        assert autograd.is_training()
    seen = []
    with autograd.record():
        t = threading.Thread(target=lambda: seen.append(autograd.is_recording()))
        t.start()
        t.join()
    assert seen == [False]  # recording is per thread


def test_detach_pause_and_misuse():
    x = np.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = (x * x.detach()).sum()
        with autograd.pause():
            _ = x * 100  # not recorded
    y.backward()
    assert x.grad.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="recorded"):
        np.array([1.0]).backward()
    with autograd.record():
        with pytest.raises(ValueError, match="attached gradient"):
            x[[0, 1]] = 5.0  # a leaf's data is what its gradient is of (as PyTorch refuses)
        with pytest.raises(NotImplementedError):
            x += 1
    assert x.tolist() == [1.0, 2.0]  # nothing was changed by the refused operations


def test_autograd_function_uses_the_python_backward():
    class Sigmoid(autograd.Function):
        def forward(self, x):
            y = 1 / (1 + np.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            (y,) = self.saved_tensors
            return dy * y * (1 - y)

    class Halve(autograd.Function):  # a deliberately "wrong" gradient, to see it is used
        def forward(self, x):
            return x * 1.0

        def backward(self, dy):
            return dy * 0.5

    xn = onp.array([-1.0, 0.0, 2.0])
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = Sigmoid()(x)
        z = (Halve()(y) * 3.0).sum()
    z.backward()
    s = 1 / (1 + onp.exp(-xn))
    assert_almost_equal(y, s)
    assert_almost_equal(x.grad, 3.0 * 0.5 * s * (1 - s))
    assert_almost_equal(Sigmoid()(np.array(xn)), s)  # outside record: plain forward


@pytest.mark.parametrize("key", [1, -1, (slice(None), 0), (Ellipsis, slice(None, None, 2)),
                                 (0, slice(1, None), None), (slice(None, None, -1), -2),
                                 (None, Ellipsis, 1), ()], ids=repr)
def test_basic_indexing_is_differentiable(key):
    xn = onp.arange(24.0).reshape(2, 3, 4) / 7
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = x[key]
        loss = (y * y).sum()
    loss.backward()
    assert y.shape == xn[key].shape
    assert_almost_equal(y, xn[key], rtol=0, atol=0)
    ref = onp.zeros_like(xn)
    ref[key] += 2 * xn[key]
    assert_almost_equal(x.grad, ref, rtol=1e-12, atol=0)
    # Second order through the slice's backward: d/dx sum(grad(y).^2) with grad = 2 x[key].
    x2 = np.array(xn)
    x2.attach_grad()
    with autograd.record():
        y2 = x2[key]
        (g,) = autograd.grad([(y2 * y2 * y2).sum()], [x2], create_graph=True)
    g.backward()
    ref2 = onp.zeros_like(xn)
    ref2[key] += 6 * xn[key]
    assert_almost_equal(x2.grad, ref2, rtol=1e-10, atol=1e-12)


def test_astype_is_differentiable():
    xn = onp.array([0.5, -1.5, 2.0], dtype=onp.float32)
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = x.astype("float64")
        loss = (y * y).sum()
    loss.backward()
    assert y.dtype == onp.float64 and x.grad.dtype == onp.float32
    assert_almost_equal(x.grad, 2 * xn)


def test_backward_writes_into_the_same_grad_array():
    """A leaf's .grad stays one array across backward passes (MXNet's gradient buffers): a
    reference taken before backward sees the new gradient, in write mode and in add mode."""
    x = np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    held = x.grad
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    onp.testing.assert_array_equal(held.asnumpy(), [2.0, 4.0, 6.0])
    with autograd.record():
        y = (x * 3).sum()
    y.backward()
    onp.testing.assert_array_equal(held.asnumpy(), [3.0, 3.0, 3.0])
    x.attach_grad(grad_req="add")
    held = x.grad
    for _ in range(2):
        with autograd.record():
            y = (x * 3).sum()
        y.backward()
    onp.testing.assert_array_equal(held.asnumpy(), [6.0, 6.0, 6.0])


def test_backward_reading_the_grad_array_itself_sees_its_old_values():
    """When the recorded computation or the head gradient reads a leaf's .grad, the new
    gradient must not be written there until the backward pass is done with the old values."""
    x = np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    x.grad[:] = np.array([10.0, 20.0, 30.0])
    with autograd.record():
        y = (x * x.grad).sum()  # d/dx = the old grad values, read by the multiply's backward
    y.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), [10.0, 20.0, 30.0])
    w = np.array([1.0, 1.0, 1.0])
    w.attach_grad()
    w.grad[:] = np.array([1.0, 2.0, 3.0])
    with autograd.record():
        z = w * 2 + 1
    z.backward(w.grad)  # head gradient: the old grad values
    onp.testing.assert_array_equal(w.grad.asnumpy(), [2.0, 4.0, 6.0])


def test_two_leaves_sharing_one_gradient_entry_each_get_it():
    """a + b gives both leaves the same gradient entry: each .grad gets the values, and the
    two arrays stay distinct."""
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = a + b
    y.backward(np.array([5.0, 7.0]))
    onp.testing.assert_array_equal(a.grad.asnumpy(), [5.0, 7.0])
    onp.testing.assert_array_equal(b.grad.asnumpy(), [5.0, 7.0])
    a.grad[:] = 0
    onp.testing.assert_array_equal(b.grad.asnumpy(), [5.0, 7.0])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_gradients_and_their_gradients(name, axis):
    """The softmax backward ops (a row kernel along the last axis, engine passes along others)
    against the hand formulas in float64, and their own gradients (create_graph) against
    central differences of the first gradient."""
    from ndx import npx
    rng = onp.random.default_rng(7)
    xn, wn, vn = (rng.normal(size=(3, 5)) for _ in range(3))

    def softmax(v):
        e = onp.exp(v - v.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def first(v):  # d/dx sum(w * f(x)), by hand
        y = softmax(v)
        if name == "softmax":
            return y * (wn - (wn * y).sum(axis=axis, keepdims=True))
        return wn - y * wn.sum(axis=axis, keepdims=True)

    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = getattr(npx, name)(x, axis=axis)
        (g,) = autograd.grad([(y * np.array(wn)).sum()], [x], create_graph=True)
        gv = (g * np.array(vn)).sum()
    assert_almost_equal(g, first(xn), rtol=1e-10, atol=1e-12)
    gv.backward()
    eps, numeric = 1e-6, onp.zeros_like(xn)
    for i in onp.ndindex(xn.shape):
        d = onp.zeros_like(xn)
        d[i] = eps
        numeric[i] = ((first(xn + d) - first(xn - d)) * vn).sum() / (2 * eps)
    assert_almost_equal(x.grad, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,axis", [((0, 3), -1), ((3, 0), 0), ((3, 0), -1)])
def test_softmax_gradients_of_zero_size_arrays(name, shape, axis):
    from ndx import npx
    x = np.array(onp.ones(shape))
    x.attach_grad()
    with autograd.record():
        y = getattr(npx, name)(x, axis=axis)
    y.backward()
    assert x.grad.shape == shape


@pytest.mark.parametrize("args,kwargs,exc,text", [
    (((2, 3), (2, 4)), {}, ValueError, "'ograd' has shape (2, 3)"),
    (((2, 3), (2, 3)), {"axis": 5}, ValueError, "axis 5"),
    (((2, 3), (2, 3), "int32"), {}, TypeError, "'ograd' must have a float dtype"),
])
def test_softmax_backward_op_rejects_bad_inputs(args, kwargs, exc, text):
    """The backward ops check their inputs against the forward's shape rules before computing."""
    from ndx import _core
    from ndx._registry import ops
    dtype = args[2] if len(args) > 2 else "float64"
    arrays = [np.array(onp.ones(s, dtype=dtype)) for s in args[:2]]
    for op in ("_backward_softmax", "_backward_log_softmax"):
        with pytest.raises(exc, match=text.replace("(", r"\(").replace(")", r"\)")):
            _core._invoke(ops()[op].handle, tuple(arrays), kwargs)


ACTIVATIONS = [  # name, the call, f, f'
    ("relu", lambda npx, x: npx.relu(x), lambda v: onp.maximum(v, 0), lambda v: (v > 0) * 1.0),
    ("activation-relu", lambda npx, x: npx.activation(x, act_type="relu"),
     lambda v: onp.maximum(v, 0), lambda v: (v > 0) * 1.0),
    ("sigmoid", lambda npx, x: npx.sigmoid(x), lambda v: 1 / (1 + onp.exp(-v)),
     lambda v: onp.exp(-v) / (1 + onp.exp(-v)) ** 2),
    ("activation-sigmoid", lambda npx, x: npx.activation(x, act_type="sigmoid"),
     lambda v: 1 / (1 + onp.exp(-v)), lambda v: onp.exp(-v) / (1 + onp.exp(-v)) ** 2),
    ("activation-tanh", lambda npx, x: npx.activation(x, act_type="tanh"), onp.tanh,
     lambda v: 1 / onp.cosh(v) ** 2),
]


@pytest.mark.parametrize("name,call,f,df", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_backward_ops_and_their_gradients(name, call, f, df):
    """relu, sigmoid and tanh differentiate through one backward op each: the first gradient
    against the hand derivative in float64, its own gradient (create_graph) against central
    differences of that derivative."""
    from ndx import npx
    rng = onp.random.default_rng(11)
    xn = rng.uniform(-2, 2, size=(4, 5))
    xn[onp.abs(xn) < 0.05] = 0.5  # central differences stay off relu's kink
    wn, vn = rng.normal(size=xn.shape), rng.normal(size=xn.shape)
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = call(npx, x)
        (g,) = autograd.grad([(y * np.array(wn)).sum()], [x], create_graph=True)
        gv = (g * np.array(vn)).sum()
    assert_almost_equal(y, f(xn), rtol=1e-12, atol=1e-12)
    assert_almost_equal(g, wn * df(xn), rtol=1e-12, atol=1e-12)
    gv.backward()
    eps, numeric = 1e-6, onp.zeros_like(xn)
    for i in onp.ndindex(xn.shape):
        d = onp.zeros_like(xn)
        d[i] = eps
        numeric[i] = ((wn * df(xn + d) - wn * df(xn - d)) * vn).sum() / (2 * eps)
    assert_almost_equal(x.grad, numeric, rtol=1e-6, atol=1e-8)


def test_relu_backward_op_is_the_composed_formula_bit_for_bit():
    """_backward_relu(g, x) = g * (x > 0) with NumPy's special values: -0 from a negative g,
    NaN from inf * 0, NaN x counted as not positive; the dtypes must agree."""
    from ndx import _core
    g = onp.array([-1.0, 2.0, onp.inf, onp.nan, -3.0, 5.0, -onp.inf], dtype=onp.float32)
    x = onp.array([-1.0, 0.0, -2.0, 1.0, onp.nan, -0.0, 3.0], dtype=onp.float32)
    got = _core._invoke("_backward_relu", [np.array(g), np.array(x)], {}).asnumpy()
    want = g * (x > 0)
    onp.testing.assert_array_equal(got, want)
    onp.testing.assert_array_equal(onp.signbit(got), onp.signbit(want))
    gi, xi = onp.array([3, -4, 5], dtype=onp.int32), onp.array([1, 2, -1], dtype=onp.int32)
    got = _core._invoke("_backward_relu", [np.array(gi), np.array(xi)], {}).asnumpy()
    assert got.dtype == onp.int32
    onp.testing.assert_array_equal(got, gi * (xi > 0))
    with pytest.raises(TypeError, match="_backward_relu"):
        _core._invoke("_backward_relu", [np.array(g), np.array(x.astype(onp.float64))], {})
    with pytest.raises(ValueError):
        _core._invoke("_backward_relu", [np.array(g), np.array(x[:3])], {})


ACT_BACKWARD_FORMULAS = [  # op, its second input's meaning, NumPy's formula of (g, v)
    ("_backward_relu", lambda g, x: g * (x > 0)),
    ("_backward_sigmoid", lambda g, y: g * y * (1 - y)),
    ("_backward_tanh", lambda g, y: g * (1 - y * y)),
]


@pytest.mark.parametrize("op,formula", ACT_BACKWARD_FORMULAS, ids=[f[0] for f in
                                                                  ACT_BACKWARD_FORMULAS])
@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (0, 4, 2)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_backward_ops_take_zero_dim_and_zero_size(op, formula, shape, dtype):
    """The three activation backward ops keep a 0-d or zero-size shape and dtype, and a 0-d
    value is NumPy's formula (sigmoid and tanh take the forward's output)."""
    from ndx import _core
    g = onp.full(shape, -1.5, dtype=dtype)
    v = onp.full(shape, 0.25, dtype=dtype)
    got = _core._invoke(op, [np.array(g), np.array(v)], {})
    assert got.shape == shape and got.dtype == onp.dtype(dtype)
    onp.testing.assert_allclose(got.asnumpy(), formula(g, v), rtol=1e-6)


def test_an_array_whose_graph_backward_freed_is_a_constant_afterwards():
    # MXNet's rule (d2l's RNN training keeps the last batch's state without detaching it):
    # after backward frees a graph, its arrays enter later recordings as constants
    w = np.array([2.0])
    w.attach_grad()
    with autograd.record():
        h = w * 3
        loss = (h * h).sum()
    loss.backward()
    assert_almost_equal(w.grad, onp.array([36.0]))  # d(9 w^2)/dw = 18 w
    with autograd.record():
        loss2 = (h * w).sum()  # h = 6 is a constant now
    loss2.backward()
    assert_almost_equal(w.grad, onp.array([6.0]))
    with pytest.raises(ValueError, match="retain_graph"):
        loss.backward()  # the freed graph itself still cannot run again

    # the same through a hybridized block (one cached node per call)
    net = ndx.gluon.nn.Dense(1, in_units=1, use_bias=False)
    net.initialize(ndx.init.Constant(0.5))
    net.hybridize()
    x = np.array([[1.0]])
    with autograd.record():
        state = net(x)  # 0.5
        net(state).sum().backward()
    with autograd.record():
        out = net(state).sum()  # state is a constant: d(0.5 * weight)/dweight = 0.5
    out.backward()
    assert_almost_equal(net.weight.grad(), onp.array([[0.5]]))


def test_mark_variables_writes_into_the_given_buffers():
    """MXNet's autograd.mark_variables: the given arrays are the gradient buffers; 'add'
    accumulates into what they hold; mismatched buffers are refused before anything changes."""
    x, g = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    autograd.mark_variables([x], [g])
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    assert g.tolist() == [2.0, 4.0, 6.0]  # 2 x, in the buffer itself
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    a, ga = np.array([1.0, 2.0]), np.ones(2)
    autograd.mark_variables(a, ga, "add")
    with autograd.record():
        (a * 3).sum().backward()
    assert ga.tolist() == [4.0, 4.0]  # 1 + 3
    with pytest.raises(ValueError, match="shape"):
        autograd.mark_variables([x], [np.zeros(2)])
    with pytest.raises(TypeError, match="dtype"):
        autograd.mark_variables([x], [np.zeros(3, dtype="float64")])
    with pytest.raises(ValueError, match="2 gradients"):
        autograd.mark_variables([x], [g, g])
    with pytest.raises(ValueError, match="grad_req"):
        autograd.mark_variables([x], [g], "sometimes")


def test_mixed_dtype_products_send_gradients_in_the_operands_dtype():
    # float32 softmax / sigmoid / relu outputs times float64 weights: the float64 gradient
    # reaches each op's backward as its output's float32 (PyTorch's rule), and x.grad is
    # d/dx sum(f(x) * w) by the formulas below.
    x = onp.array([1.0, 2.0, 3.0], dtype="float32")
    w = onp.array([1.0, -2.0, 3.0])
    s = onp.exp(x - x.max()) / onp.exp(x - x.max()).sum()
    sig = 1 / (1 + onp.exp(-x))
    cases = {
        npx.softmax: s * (w - (s * w).sum()),
        npx.log_softmax: w - s * w.sum(),
        npx.sigmoid: sig * (1 - sig) * w,
        npx.relu: w,
    }
    for fn, expected in cases.items():
        a = np.array(x)
        a.attach_grad()
        with autograd.record():
            total = (fn(a) * np.array(w)).sum()
        assert total.dtype == onp.float64
        total.backward()
        assert a.grad.dtype == onp.float32
        onp.testing.assert_allclose(a.grad.asnumpy(), expected, rtol=1e-5, err_msg=fn.__name__)
