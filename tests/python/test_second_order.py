"""Gradients of gradients (autograd.grad with create_graph=True) through the backward ops of
power, maximum / minimum, mod, matmul, dot and fully_connected, against central differences of
the first gradient computed in float64: a gradient penalty through a Dense layer, x**2 and
np.power need them."""
import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np, npx


def _first_grads(f, arrays):
    """The first gradients of sum(f(*arrays) * head), as NumPy arrays."""
    xs = [np.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = f(*xs)
        loss = (y * np.array(_head(y.shape))).sum()
    loss.backward()
    return [x.grad.asnumpy() for x in xs]


def _head(shape):
    return onp.random.default_rng(11).uniform(0.5, 1.5, size=shape)


def _check_second_order(f, arrays, eps=1e-6, rtol=1e-6, atol=1e-8):
    """d/dx_k sum_j <w_j, grad_j(x)> from autograd (create_graph) equals its central
    difference, for fixed random weights w_j."""
    arrays = [onp.asarray(a, dtype=onp.float64) for a in arrays]
    rng = onp.random.default_rng(5)
    weights = [rng.uniform(-1, 1, size=a.shape) for a in arrays]

    def functional(vals):
        return sum(float((w * g).sum()) for w, g in zip(weights, _first_grads(f, vals)))

    xs = [np.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = f(*xs)
        loss = (y * np.array(_head(y.shape))).sum()
        grads = autograd.grad(loss, xs, create_graph=True)
        total = sum((g * np.array(w)).sum() for g, w in zip(grads, weights))
    total.backward()
    for k, a in enumerate(arrays):
        numeric = onp.zeros_like(a)
        for idx in onp.ndindex(a.shape):
            plus = [v.copy() for v in arrays]
            minus = [v.copy() for v in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            numeric[idx] = (functional(plus) - functional(minus)) / (2 * eps)
        onp.testing.assert_allclose(xs[k].grad.asnumpy(), numeric, rtol=rtol, atol=atol,
                                    err_msg=f"input {k}")


RNG = onp.random.default_rng(0)


def _pos(*shape):
    return RNG.uniform(0.5, 2.0, size=shape)


def _any(*shape):
    return RNG.uniform(-1.5, 1.5, size=shape)


@pytest.mark.parametrize("name,f,arrays", [
    ("square", lambda x: x ** 2, [_any(3)]),
    ("cube", lambda x: x ** 3, [_any(2, 3)]),
    ("sqrt-power", lambda x: x ** 0.5, [_pos(4)]),
    ("power-arrays", lambda a, b: np.power(a, b), [_pos(2, 3), _any(2, 3)]),
    ("power-broadcast", lambda a, b: np.power(a, b), [_pos(2, 3), _any(3)]),
    ("exp2", lambda x: 2.0 ** x, [_any(3)]),
    ("maximum", lambda a, b: np.maximum(a, b) * a * b, [_any(2, 3), _any(3)]),
    ("minimum", lambda a, b: np.minimum(a, b) * a * b, [_any(2, 3), _any(2, 3)]),
    ("mod", lambda a, b: np.mod(a, b) * a * b, [_pos(4) * 3, _pos(4)]),
    ("matmul", lambda a, b: np.matmul(a, b) ** 2, [_any(2, 3), _any(3, 4)]),
    ("matmul-batched", lambda a, b: np.matmul(a, b) ** 2, [_any(2, 2, 3), _any(3, 2)]),
    ("matmul-vector", lambda a, b: np.matmul(a, b) ** 2, [_any(3), _any(3, 2)]),
    ("dot", lambda a, b: np.dot(a, b) ** 2, [_any(2, 3), _any(3, 2)]),
    ("dot-nd", lambda a, b: np.dot(a, b) ** 2, [_any(2, 2, 3), _any(3)]),
    ("fully_connected", lambda x, w, b: np.tanh(npx.fully_connected(x, w, b, num_hidden=2)),
     [_any(3, 4), _any(2, 4), _any(2)]),
    ("fully_connected-nobias-noflatten",
     lambda x, w: np.tanh(npx.fully_connected(x, w, num_hidden=2, no_bias=True, flatten=False)),
     [_any(2, 3, 4), _any(2, 4)]),
    ("fully_connected-flatten",
     lambda x, w, b: npx.fully_connected(x, w, b, num_hidden=2) ** 2,
     [_any(2, 2, 3), _any(2, 6), _any(2)]),
])
def test_second_order_against_differences_of_the_first(name, f, arrays):
    _check_second_order(f, arrays)


def test_power_first_order_with_exponent_zero_at_zero():
    """d/da a**0 is 0 everywhere, at a == 0 too (0 * 0**-1 gave NaN), as PyTorch's."""
    a = np.array([0.0, 2.0])
    a.attach_grad()
    with autograd.record():
        y = np.power(a, np.array([0.0, 0.0]))
    y.backward()
    assert a.grad.tolist() == [0.0, 0.0]
def test_gradient_penalty_through_a_hybridized_dense_net():
    """WGAN-GP's penalty: sum((|d f / d x| - 1)^2) backpropagated into the weights, equal to a
    NumPy computation of its gradient for a tanh layer and a linear output."""
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(5, in_units=3, activation="tanh"), gluon.nn.Dense(1, in_units=5))
    net.initialize(ndx.initializer.Uniform(0.7))
    net.cast("float64")
    net.hybridize()
    xn = _any(4, 3)
    w1, b1 = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    w2 = net[1].weight.data().asnumpy()
    for _ in range(2):  # the capture, then the cached graph
        x = np.array(xn)
        x.attach_grad()
        with autograd.record():
            out = net(x)
            (gx,) = autograd.grad(out.sum(), [x], create_graph=True)
            penalty = ((np.sqrt((gx * gx).sum(axis=1)) - 1) ** 2).sum()
        penalty.backward()
        # NumPy: h = tanh(x W1^T + b1), gx = (w2 * (1 - h^2)) W1, penalty on |gx|
        h = onp.tanh(xn @ w1.T + b1)
        s = (1 - h ** 2) * w2  # (4, 5)
        gxn = s @ w1
        norm = onp.sqrt((gxn ** 2).sum(axis=1, keepdims=True))
        dgx = 2 * (norm - 1) * gxn / norm  # d penalty / d gx
        # gx = s W1 with s = w2 (1 - h^2): d/dW1 = s^T dgx + (d/ds contribution through h)
        ds = dgx @ w1.T
        dh = ds * w2 * (-2 * h)
        dpre = dh * (1 - h ** 2)
        dw1 = s.T @ dgx + dpre.T @ xn
        dw2 = (dgx @ w1.T * (1 - h ** 2)).sum(axis=0, keepdims=True)
        onp.testing.assert_allclose(net[0].weight.grad().asnumpy(), dw1, rtol=1e-9)
        onp.testing.assert_allclose(net[1].weight.grad().asnumpy(), dw2, rtol=1e-9)
        onp.testing.assert_allclose(net[0].bias.grad().asnumpy(), dpre.sum(axis=0), rtol=1e-9)


@pytest.mark.parametrize("layer", ["dropout", "batchnorm"])
def test_gradient_of_gradient_through_a_block_that_would_not_repeat_its_forward(layer):
    """A hybridized block's second-order gradient runs its forward again: with dropout's random
    mask, or batch_norm's running statistics updated in training, that would not be the same
    computation, so it is refused with a typed error; unhybridized, dropout works (batch_norm's
    backward has no gradient of its own yet)."""
    def make():
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(4, in_units=3),
                gluon.nn.Dropout(0.5) if layer == "dropout" else gluon.nn.BatchNorm(in_channels=4),
                gluon.nn.Dense(1, in_units=4))
        net.initialize()
        return net

    def penalty(net):
        x = np.array(_any(5, 3).astype(onp.float32))
        x.attach_grad()
        with autograd.record():
            (gx,) = autograd.grad(net(x).sum(), [x], create_graph=True)
            p = (gx * gx).sum()
        p.backward()
        return net[0].weight.grad()

    net = make()
    net.hybridize()
    with pytest.raises(NotImplementedError, match="without hybridize"):
        penalty(net)
    if layer == "dropout":
        assert onp.isfinite(penalty(make()).asnumpy()).all()


@pytest.mark.parametrize("n", [2, 3, 4])
def test_third_order_of_integer_powers_at_negative_and_zero_bases(n):
    """d3/dx3 x**n = n (n-1) (n-2) x**(n-3): finite at x < 0 and x == 0 (the exponent's log
    terms, NaN there, must not reach the next order through a 0 * NaN)."""
    xn = onp.array([-2.0, 0.0, 1.5])
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        (g1,) = autograd.grad((x ** n).sum(), [x], create_graph=True)
        (g2,) = autograd.grad(g1.sum(), [x], create_graph=True)
        s = g2.sum()
    s.backward()
    want = n * (n - 1) * (n - 2) * xn ** max(n - 3, 0) if n >= 3 else onp.zeros(3)
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-12)


def _layer_norm_input_grad(x, gamma, head, axis, eps):
    """d sum(head * layer_norm(x)) / dx in NumPy float64 (the textbook formula)."""
    mu = x.mean(axis=axis, keepdims=True)
    rstd = 1 / onp.sqrt(((x - mu) ** 2).mean(axis=axis, keepdims=True) + eps)
    xhat = (x - mu) * rstd
    shape = [1] * x.ndim
    shape[axis] = -1
    d = head * gamma.reshape(shape)
    return rstd * (d - d.mean(axis=axis, keepdims=True) -
                   xhat * (d * xhat).mean(axis=axis, keepdims=True))


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("axis", [-1, 1, -2])
def test_gradient_penalty_through_layer_norm(axis, hybridize):
    """grad(create_graph=True) through layer_norm (a WGAN-GP critic with LayerNorm): the
    penalty sum(dL/dx ** 2) differentiated again, against central differences of the NumPy
    formula in x and gamma."""
    rng = onp.random.default_rng(7)
    x0 = rng.standard_normal((2, 4, 3))
    n = x0.shape[axis]
    g0, b0 = rng.standard_normal(n), rng.standard_normal(n)
    head = rng.standard_normal(x0.shape)
    eps = 1e-3

    def penalty(xv, gv):
        return (_layer_norm_input_grad(xv, gv, head, axis, eps) ** 2).sum()

    x, gamma, beta = (np.array(v, dtype="float64") for v in (x0, g0, b0))
    for a in (x, gamma):
        a.attach_grad()
    class Norm(gluon.HybridBlock):
        def forward(self, a, g, b):
            return npx.layer_norm(a, g, b, axis=axis, eps=eps)

    norm = Norm()
    if hybridize:  # (a hybridized block's graph: its node copies hold no values)
        norm.hybridize()
    if hybridize and axis >= 0:  # the rank is unknown there: the fused backward, refused
        with pytest.raises(NotImplementedError, match="_backward_layer_norm"):
            with autograd.record():
                (gx,) = autograd.grad((norm(x, gamma, beta) * np.array(head)).sum(), [x],
                                      create_graph=True)
                (gx ** 2).sum().backward()
        return
    with autograd.record():
        y = norm(x, gamma, beta)
        (gx,) = autograd.grad((y * np.array(head)).sum(), [x], create_graph=True)
        p = (gx ** 2).sum()
    p.backward()
    onp.testing.assert_allclose(gx.asnumpy(), _layer_norm_input_grad(x0, g0, head, axis, eps),
                                rtol=1e-10, atol=1e-12)
    h = 1e-6
    num_x = onp.zeros_like(x0)
    for i in onp.ndindex(*x0.shape):
        d = onp.zeros_like(x0)
        d[i] = h
        num_x[i] = (penalty(x0 + d, g0) - penalty(x0 - d, g0)) / (2 * h)
    num_g = onp.array([(penalty(x0, g0 + h * e) - penalty(x0, g0 - h * e)) / (2 * h)
                       for e in onp.eye(n)])
    onp.testing.assert_allclose(x.grad.asnumpy(), num_x, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(gamma.grad.asnumpy(), num_g, rtol=1e-5, atol=1e-6)


_SELU = (1.0507009873554804934, 1.6732632423543772848)


def _act_and_slope(act, x, slope):
    """(the activation, its derivative) in NumPy float64, from their definitions."""
    from scipy.special import erf
    pos = x > 0
    if act == "leaky":
        return onp.where(pos, x, slope * x), onp.where(pos, 1.0, slope)
    if act == "elu":
        return onp.where(pos, x, slope * onp.expm1(x)), onp.where(pos, 1.0, slope * onp.exp(x))
    if act == "selu":
        lam, alpha = _SELU
        return lam * onp.where(pos, x, alpha * onp.expm1(x)), lam * onp.where(pos, 1.0,
                                                                              alpha * onp.exp(x))
    if act == "gelu_erf":
        cdf = 0.5 * (1 + erf(x / onp.sqrt(2)))
        return x * cdf, cdf + x * onp.exp(-x * x / 2) / onp.sqrt(2 * onp.pi)
    c, k = onp.sqrt(2 / onp.pi), 0.044715  # gelu_tanh
    t = onp.tanh(c * (x + k * x ** 3))
    return 0.5 * x * (1 + t), 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * k * x * x)


@pytest.mark.parametrize("act", ["leaky", "elu", "selu", "gelu_erf", "gelu_tanh"])
def test_gradient_penalty_through_leaky_relu_family(act):
    """A WGAN-GP critic's activations: the penalty sum((dL/dx)^2) through leaky_relu,
    differentiated again, against central differences of the NumPy derivative."""
    x0 = onp.array([-2.0, -0.7, -0.1, 0.3, 1.2, 2.5])
    head = onp.array([0.5, -1.0, 2.0, 1.5, -0.25, 3.0])

    def penalty(v):
        return ((head * _act_and_slope(act, v, 0.2)[1]) ** 2).sum()

    x = np.array(x0, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = npx.leaky_relu(x, act_type=act, slope=0.2)
        (g,) = autograd.grad((y * np.array(head)).sum(), [x], create_graph=True)
        p = (g ** 2).sum()
    p.backward()
    onp.testing.assert_allclose(y.asnumpy(), _act_and_slope(act, x0, 0.2)[0], rtol=1e-12)
    onp.testing.assert_allclose(g.asnumpy(), head * _act_and_slope(act, x0, 0.2)[1], rtol=1e-12)
    h = 1e-6
    num = onp.array([(penalty(x0 + h * e) - penalty(x0 - h * e)) / (2 * h) for e in onp.eye(6)])
    onp.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-6, atol=1e-8)


def _conv2d(x, w, b, stride, pad):
    """Cross-correlation of x (N, C, H, W) with w (F, C, kh, kw) in NumPy float64."""
    x = onp.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, hh, ww = x.shape
    f, _, kh, kw = w.shape
    oh, ow = (hh - kh) // stride + 1, (ww - kw) // stride + 1
    out = onp.zeros((n, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = onp.einsum("nchw,fchw->nf", patch, w)
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


@pytest.mark.parametrize("bias", [False, True])
def test_gradient_penalty_through_convolution(bias):
    """WGAN-GP through a conv layer: P = sum((d sum(head * tanh(conv(x))) / dx)^2),
    differentiated again in x, the weight and the bias, against central differences of P
    computed in NumPy (its first gradient by the chain rule, conv's adjoint by differences)."""
    rng = onp.random.default_rng(11)
    x0 = rng.standard_normal((2, 2, 4, 4))
    w0 = rng.standard_normal((3, 2, 3, 3)) * 0.5
    b0 = rng.standard_normal(3) if bias else None
    stride, pad = 1, 1
    head = rng.standard_normal(_conv2d(x0, w0, b0, stride, pad).shape)

    def first_grad(xv, wv, bv):
        # d/dx sum(head * tanh(conv(x))) = conv^T(head * (1 - tanh^2)): conv is linear in x,
        # so its adjoint applied to u is the gradient of <u, conv(x)> in x (exact here by
        # linearity: one difference per input element)
        u = head * (1 - onp.tanh(_conv2d(xv, wv, bv, stride, pad)) ** 2)
        base = (u * _conv2d(onp.zeros_like(xv), wv, None, stride, pad)).sum()
        g = onp.zeros_like(xv)
        for i in onp.ndindex(*xv.shape):
            e = onp.zeros_like(xv)
            e[i] = 1.0
            g[i] = (u * _conv2d(e, wv, None, stride, pad)).sum() - base
        return g

    def penalty(xv, wv, bv):
        return (first_grad(xv, wv, bv) ** 2).sum()

    x, w = np.array(x0, dtype="float64"), np.array(w0, dtype="float64")
    params = [x, w]
    b = None
    if bias:
        b = np.array(b0, dtype="float64")
        params.append(b)
    for a in params:
        a.attach_grad()
    with autograd.record():
        y = npx.convolution(x, w, b, kernel=(3, 3), pad=(pad, pad), num_filter=3,
                            no_bias=not bias)
        (gx,) = autograd.grad((np.tanh(y) * np.array(head)).sum(), [x], create_graph=True)
        p = (gx ** 2).sum()
    p.backward()
    onp.testing.assert_allclose(gx.asnumpy(), first_grad(x0, w0, b0), rtol=1e-9, atol=1e-12)
    h = 1e-5
    checks = [(x, x0, lambda v: penalty(v, w0, b0)), (w, w0, lambda v: penalty(x0, v, b0))]
    if bias:
        checks.append((b, b0, lambda v: penalty(x0, w0, v)))
    for arr, v0, fn in checks:
        picks = list(onp.ndindex(*v0.shape))[::5]  # (a sample of elements: P is costly here)
        for i in picks:
            e = onp.zeros_like(v0)
            e[i] = h
            num = (fn(v0 + e) - fn(v0 - e)) / (2 * h)
            onp.testing.assert_allclose(arr.grad.asnumpy()[i], num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kind,cip", [("avg", True), ("avg", False), ("sum", True)])
def test_second_order_through_avg_and_sum_pooling(kind, cip):
    """Pooling's backward is linear in ograd and independent of the data for avg / sum: the
    gradient of sum(g^2) for g = d sum(head * pool(x)^2) / dx, against central differences of
    NumPy's pooling written as a matrix (read off column by column)."""
    x0 = onp.random.default_rng(5).standard_normal((1, 1, 5, 5))

    def pool(v):
        return npx.pooling(np.array(v), kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=kind,
                           count_include_pad=cip).asnumpy()

    out0 = pool(x0)
    a = onp.stack([pool(e.reshape(x0.shape)).reshape(-1) for e in onp.eye(25)], axis=1)
    head = onp.random.default_rng(6).standard_normal(out0.shape).reshape(-1)
    # f = sum(head * (A x)^2): g = 2 A^T (head * A x); sum(g^2) has the gradient 8 A^T (head *
    # (A A^T (head * A x)))
    ax = a @ x0.reshape(-1)
    g_want = 2 * a.T @ (head * ax)
    x = np.array(x0, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = npx.pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=kind,
                        count_include_pad=cip)
        (g,) = autograd.grad((np.array(head.reshape(out0.shape)) * y ** 2).sum(), [x],
                             create_graph=True)
        (g ** 2).sum().backward()
    onp.testing.assert_allclose(g.asnumpy().reshape(-1), g_want, rtol=1e-10, atol=1e-12)
    onp.testing.assert_allclose(x.grad.asnumpy().reshape(-1),
                                8 * a.T @ (head * (a @ (a.T @ (head * ax)))), rtol=1e-9,
                                atol=1e-12)
    with pytest.raises(NotImplementedError, match="overlapping windows"):
        with autograd.record():
            (g,) = autograd.grad((npx.pooling(x, kernel=(2, 2), pool_type="max") ** 2).sum(),
                                 [x], create_graph=True)
            g.sum().backward()


@pytest.mark.parametrize("kw", [dict(kernel=(2, 2), stride=(2, 2)),
                                dict(kernel=(2, 3), stride=(3, 3), pooling_convention="full"),
                                dict(global_pool=True)])
def test_second_order_through_max_pooling_with_disjoint_windows(kw):
    """MaxPool2D(2) and global max pooling: each window's maximum is one input element, so
    f = sum(head * pool(x)^3) / 3 has g = onehot * head * m^2 and sum(g^2) the gradient
    onehot * 4 head^2 m^3, with m the window's maximum spread back to its argmax (a NumPy
    reference read off the pooling's windows by hand)."""
    rng = onp.random.default_rng(8)
    x0 = rng.permutation(49).reshape(1, 1, 7, 7).astype(onp.float64) / 7 - 3  # no ties
    if kw.get("global_pool"):
        windows = [(slice(0, 7), slice(0, 7))]
    else:
        (kh, kw_), (sh, sw) = kw["kernel"], kw["stride"]
        full = kw.get("pooling_convention") == "full"
        oh = -(-(7 - kh) // sh) + 1 if full else (7 - kh) // sh + 1
        ow = -(-(7 - kw_) // sw) + 1 if full else (7 - kw_) // sw + 1
        windows = [(slice(i * sh, min(i * sh + kh, 7)), slice(j * sw, min(j * sw + kw_, 7)))
                   for i in range(oh) for j in range(ow)]
    head = rng.standard_normal(len(windows))
    g_want, p_want = onp.zeros_like(x0), onp.zeros_like(x0)
    for (r, c), hd in zip(windows, head):
        win = x0[0, 0, r, c]
        i, j = onp.unravel_index(onp.argmax(win), win.shape)
        m = win[i, j]
        g_want[0, 0, r.start + i, c.start + j] = hd * m * m
        p_want[0, 0, r.start + i, c.start + j] = 4 * hd * hd * m ** 3
    x = np.array(x0)
    x.attach_grad()
    with autograd.record():
        y = npx.pooling(x, pool_type="max", **kw)
        (g,) = autograd.grad((np.array(head.reshape(y.shape)) * y ** 3).sum() / 3, [x],
                             create_graph=True)
        (g ** 2).sum().backward()
    onp.testing.assert_allclose(g.asnumpy(), g_want, rtol=1e-12)
    onp.testing.assert_allclose(x.grad.asnumpy(), p_want, rtol=1e-12)


@pytest.mark.parametrize("act,dtype,big", [("elu", "float32", 90.0), ("selu", "float32", 90.0),
                                           ("elu", "float16", 20.0), ("gelu_tanh", "float16",
                                                                      300.0)])
def test_leaky_family_penalty_stays_finite_at_large_inputs(act, dtype, big):
    """exp(x) of the branch where() leaves out (elu, selu), or x^2 in float16 (gelu_tanh),
    overflowed to inf and made the penalty's gradient nan: elu'(x) = 1 for x > 0, so the
    penalty sum(elu'(x)^2) has the gradient 0 there; gelu_tanh' is 1 (0) far right (left)."""
    x0 = onp.array([big, -big, -1.0, 0.5])
    x = np.array(x0, dtype=dtype)
    x.attach_grad()
    with autograd.record():
        y = npx.leaky_relu(x, act_type=act, slope=0.25)
        (g,) = autograd.grad(y.sum(), [x], create_graph=True)
        (g * g).sum().backward()
    want = _act_and_slope(act, x0.astype(dtype).astype(onp.float64), 0.25)[1]
    tol = 1e-2 if dtype == "float16" else 1e-5
    onp.testing.assert_allclose(g.asnumpy().astype(onp.float64), want, rtol=tol, atol=tol)
    grad = x.grad.asnumpy().astype(onp.float64)
    assert onp.isfinite(grad).all()
    onp.testing.assert_allclose(grad[:2], [0.0, 0.0], atol=tol)  # flat far from 0
