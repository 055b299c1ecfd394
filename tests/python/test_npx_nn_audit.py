"""Differential audit of the npx neural-network operators against independent float64 NumPy
references written here (convolution, deconvolution, pooling, the normalizations, softmax
and activations, pick / topk, rnn, ctc_loss, roi_align, ...), gradients against central
differences of those references, and typed errors for bad arguments."""
import itertools

import numpy as onp
import pytest

from ndx import autograd, np, npx

R = onp.random.default_rng(2024)


def _close(got, want, tol):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    onp.testing.assert_allclose(onp.asarray(got, dtype=onp.float64), want, rtol=tol, atol=tol)


def _numgrad(f, x, eps=1e-6):
    x = x.copy()
    g = onp.zeros_like(x)
    for i in itertools.product(*[range(n) for n in x.shape]):
        old = x[i]
        x[i] = old + eps
        fp = f(x)
        x[i] = old - eps
        fm = f(x)
        x[i] = old
        g[i] = (fp - fm) / (2 * eps)
    return g


def _run(fn, arrays, head, dtype="float64", train_mode=True):
    """fn(*nd_arrays) under record; backward with `head`; returns (out, grads)."""
    nds = [np.array(a, dtype=dtype) for a in arrays]
    for a in nds:
        a.attach_grad()
    with autograd.record(train_mode=train_mode):
        y = fn(*nds)
    y.backward(np.array(head, dtype=dtype))
    return y, [a.grad.asnumpy() for a in nds]


# ---- references ---------------------------------------------------------------------------

def _conv_ref(x, w, b, stride, dilate, pad, groups):
    nd = x.ndim - 2
    n, c = x.shape[:2]
    f, k = w.shape[0], w.shape[2:]
    xp = onp.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    osz = [(xp.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    out = onp.zeros((n, f, *osz))
    cg, fg = c // groups, f // groups
    for g in range(groups):
        for kk in itertools.product(*[range(v) for v in k]):
            sl = tuple(slice(kk[i] * dilate[i], kk[i] * dilate[i] + stride[i] * (osz[i] - 1) + 1,
                             stride[i]) for i in range(nd))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            wk = w[(slice(g * fg, (g + 1) * fg), slice(None)) + kk]
            out[:, g * fg:(g + 1) * fg] += onp.einsum("nc...,fc->nf...", patch, wk)
    if b is not None:
        out += b.reshape((1, f) + (1,) * nd)
    return out


def _deconv_ref(x, w, b, stride, dilate, pad, adj, groups):
    nd = x.ndim - 2
    n, c = x.shape[:2]
    k, fg = w.shape[2:], w.shape[1]
    cg = c // groups
    full = [stride[i] * (x.shape[2 + i] - 1) + dilate[i] * (k[i] - 1) + 1 + adj[i]
            for i in range(nd)]
    out = onp.zeros((n, fg * groups, *full))
    for g in range(groups):
        for kk in itertools.product(*[range(v) for v in k]):
            sl = tuple(slice(kk[i] * dilate[i],
                             kk[i] * dilate[i] + stride[i] * (x.shape[2 + i] - 1) + 1, stride[i])
                       for i in range(nd))
            wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]
            out[(slice(None), slice(g * fg, (g + 1) * fg)) + sl] += onp.einsum(
                "nc...,cf->nf...", x[:, g * cg:(g + 1) * cg], wk)
    out = out[(slice(None), slice(None)) +
              tuple(slice(pad[i], full[i] - pad[i]) for i in range(nd))]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * nd)
    return out


def _pool_ref(x, kernel, stride, pad, kind, convention="valid", count_include_pad=True):
    nd = x.ndim - 2
    size = x.shape[2:]
    osz = []
    for i in range(nd):
        span = size[i] + 2 * pad[i] - kernel[i]
        osz.append((span // stride[i] if convention == "valid" else -(-span // stride[i])) + 1)
    out = onp.zeros(x.shape[:2] + tuple(osz))
    for o in itertools.product(*[range(v) for v in osz]):
        lo = [o[i] * stride[i] - pad[i] for i in range(nd)]
        hi = [lo[i] + kernel[i] for i in range(nd)]
        clo = [max(v, 0) for v in lo]
        chi = [min(hi[i], size[i]) for i in range(nd)]
        win = x[(Ellipsis,) + tuple(slice(clo[i], chi[i]) for i in range(nd))]
        win = win.reshape(x.shape[:2] + (-1,))
        if kind == "max":
            v = win.max(-1)
        elif kind == "sum":
            v = win.sum(-1)
        else:
            if count_include_pad:  # the window clipped to the padded input
                cnt = onp.prod([min(hi[i], size[i] + pad[i]) - lo[i] for i in range(nd)])
            else:
                cnt = onp.prod([chi[i] - clo[i] for i in range(nd)])
            v = win.sum(-1) / cnt
        out[(Ellipsis,) + o] = v
    return out


# ---- convolution / deconvolution / pooling --------------------------------------------------

CONV_CASES = [  # N, C, spatial, F, kernel, stride, dilate, pad, groups, bias
    (2, 3, (7,), 4, (3,), (1,), (1,), (0,), 1, True),
    (1, 4, (9,), 6, (3,), (2,), (2,), (1,), 2, False),
    (2, 3, (5, 6), 4, (3, 2), (1, 1), (1, 1), (0, 0), 1, True),
    (1, 4, (7, 5), 4, (3, 3), (2, 1), (1, 2), (1, 2), 4, True),
    (1, 2, (4, 5, 3), 3, (2, 3, 2), (1, 2, 1), (1, 1, 2), (1, 0, 1), 1, True),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_convolution_forward_and_grads(case):
    n, c, sp, f, k, st, di, pd, g, bias = case
    x, w, b = R.standard_normal((n, c) + sp), R.standard_normal((f, c // g) + k), \
        R.standard_normal(f)
    ref = _conv_ref(x, w, b if bias else None, st, di, pd, g)
    head = R.standard_normal(ref.shape)
    arrays = [x, w, b] if bias else [x, w]
    y, grads = _run(lambda *a: npx.convolution(*a[:2], a[2] if bias else None, kernel=k,
                                               stride=st, dilate=di, pad=pd, num_filter=f,
                                               num_group=g), arrays, head)
    _close(y, ref, 1e-9)
    _close(grads[0], _numgrad(lambda v: (_conv_ref(v, w, b if bias else None, st, di, pd, g)
                                         * head).sum(), x), 1e-5)
    _close(grads[1], _numgrad(lambda v: (_conv_ref(x, v, b if bias else None, st, di, pd, g)
                                         * head).sum(), w), 1e-5)
    if bias:
        _close(grads[2], head.sum(axis=tuple(i for i in range(head.ndim) if i != 1)), 1e-9)
    y32 = npx.convolution(np.array(x, dtype="float32"), np.array(w, dtype="float32"),
                          np.array(b, dtype="float32") if bias else None, kernel=k, stride=st,
                          dilate=di, pad=pd, num_filter=f, num_group=g)
    assert y32.dtype == onp.float32
    _close(y32, ref, 1e-4)


def test_convolution_float16_and_zero_batch():
    x, w, b = R.standard_normal((2, 3, 6, 6)), R.standard_normal((4, 3, 3, 3)), \
        R.standard_normal(4)
    y = npx.convolution(np.array(x, dtype="float16"), np.array(w, dtype="float16"),
                        np.array(b, dtype="float16"), kernel=(3, 3), num_filter=4)
    assert y.dtype == onp.float16
    _close(y, _conv_ref(x, w, b, (1, 1), (1, 1), (0, 0), 1), 5e-2)
    assert npx.convolution(np.zeros((0, 3, 6, 6)), np.array(w, dtype="float32"), None,
                           kernel=(3, 3), num_filter=4).shape == (0, 4, 4, 4)


DECONV_CASES = [  # N, C, spatial, F, kernel, stride, dilate, pad, adj, groups, bias
    (2, 3, (5,), 4, (3,), (1,), (1,), (0,), (0,), 1, True),
    (1, 4, (4,), 6, (3,), (2,), (2,), (1,), (1,), 2, False),
    (2, 2, (3, 4), 3, (3, 2), (2, 1), (1, 1), (1, 0), (1, 0), 1, True),
    (1, 2, (2, 3, 2), 2, (2, 2, 3), (2, 1, 2), (1, 2, 1), (1, 0, 1), (1, 0, 0), 1, True),
]


@pytest.mark.parametrize("case", DECONV_CASES)
def test_deconvolution_forward_and_grads(case):
    n, c, sp, f, k, st, di, pd, adj, g, bias = case
    x, w, b = R.standard_normal((n, c) + sp), R.standard_normal((c, f // g) + k), \
        R.standard_normal(f)
    bb = b if bias else None
    ref = _deconv_ref(x, w, bb, st, di, pd, adj, g)
    head = R.standard_normal(ref.shape)
    arrays = [x, w, b] if bias else [x, w]
    y, grads = _run(lambda *a: npx.deconvolution(*a[:2], a[2] if bias else None, kernel=k,
                                                 stride=st, dilate=di, pad=pd, adj=adj,
                                                 num_filter=f, num_group=g), arrays, head)
    _close(y, ref, 1e-9)
    _close(grads[0], _numgrad(lambda v: (_deconv_ref(v, w, bb, st, di, pd, adj, g)
                                         * head).sum(), x), 1e-5)
    _close(grads[1], _numgrad(lambda v: (_deconv_ref(x, v, bb, st, di, pd, adj, g)
                                         * head).sum(), w), 1e-5)


@pytest.mark.parametrize("target", [(8, 8), (9, 9), (7, 8)])
def test_deconvolution_target_shape(target):
    # MXNet: pad = ceil((full - target) / 2), adj = (full - target) % 2
    x, w = R.standard_normal((1, 2, 4, 4)), R.standard_normal((2, 3, 3, 3))
    full = 2 * 3 + 3
    pad = [-(-(full - t) // 2) for t in target]
    adj = [(full - t) % 2 for t in target]
    y = npx.deconvolution(np.array(x), np.array(w), None, kernel=(3, 3), stride=(2, 2),
                          target_shape=target, num_filter=3)
    assert y.shape == (1, 3) + target
    _close(y, _deconv_ref(x, w, None, (2, 2), (1, 1), pad, adj, 1), 1e-4)


POOL_CASES = [((2, 3, 7), (3,), (2,), (1,)), ((1, 2, 6, 7), (3, 2), (2, 2), (1, 0)),
              ((1, 2, 5, 6), (3, 3), (2, 3), (1, 1)), ((1, 1, 4, 5, 3), (2, 3, 2), (2, 2, 1),
                                                       (1, 1, 0))]


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("kind,cip", [("max", True), ("sum", True), ("avg", True),
                                      ("avg", False)])
@pytest.mark.parametrize("convention", ["valid", "full"])
def test_pooling_forward_and_grad(case, kind, cip, convention):
    shape, k, s, p = case
    x = R.standard_normal(shape)
    ref = _pool_ref(x, k, s, p, kind, convention, cip)
    head = R.standard_normal(ref.shape)
    y, (gx,) = _run(lambda a: npx.pooling(a, kernel=k, stride=s, pad=p, pool_type=kind,
                                          pooling_convention=convention,
                                          count_include_pad=cip), [x], head)
    _close(y, ref, 1e-9)
    _close(gx, _numgrad(lambda v: (_pool_ref(v, k, s, p, kind, convention, cip) * head).sum(),
                        x), 1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 2, 4, 5), (1, 2, 2, 3, 4)])
def test_global_pooling(shape):
    x = R.standard_normal(shape)
    ax = tuple(range(2, len(shape)))
    for kind, want in (("max", x.max(ax, keepdims=True)), ("avg", x.mean(ax, keepdims=True)),
                       ("sum", x.sum(ax, keepdims=True))):
        _close(npx.pooling(np.array(x), pool_type=kind, global_pool=True), want, 1e-5)


# ---- normalizations -------------------------------------------------------------------------

def _bn_ref(x, g, b, mean, var, eps, axis):
    sh = [1] * x.ndim
    sh[axis] = -1
    return (x - mean.reshape(sh)) / onp.sqrt(var.reshape(sh) + eps) * g.reshape(sh) + \
        b.reshape(sh)


@pytest.mark.parametrize("shape,axis", [((4, 3), 1), ((3, 2, 4, 5), 1), ((2, 4, 3), -1),
                                        ((5, 2, 3), 0), ((1, 3, 2, 2), 1)])
@pytest.mark.parametrize("fix_gamma", [False, True])
def test_batch_norm_training(shape, axis, fix_gamma):
    x = R.standard_normal(shape)
    c = shape[axis]
    g, b = R.standard_normal(c), R.standard_normal(c)
    rm, rv = R.standard_normal(c), R.uniform(0.5, 2, c)
    red = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    geff = onp.ones(c) if fix_gamma else g
    head = R.standard_normal(shape)
    RM, RV = np.array(rm, dtype="float64"), np.array(rv, dtype="float64")
    y, (gx, gg, gb) = _run(lambda a, ga, be: npx.batch_norm(
        a, ga, be, RM, RV, eps=1e-3, momentum=0.7, axis=axis, fix_gamma=fix_gamma), [x, g, b],
        head)
    _close(y, _bn_ref(x, geff, b, x.mean(red), x.var(red), 1e-3, axis), 1e-8)
    _close(RM, 0.7 * rm + 0.3 * x.mean(red), 1e-10)
    _close(RV, 0.7 * rv + 0.3 * x.var(red), 1e-10)
    _close(gx, _numgrad(lambda v: (_bn_ref(v, geff, b, v.mean(red), v.var(red), 1e-3, axis)
                                   * head).sum(), x), 1e-5)
    want_gg = onp.zeros(c) if fix_gamma else _numgrad(
        lambda v: (_bn_ref(x, v, b, x.mean(red), x.var(red), 1e-3, axis) * head).sum(), g)
    _close(gg, want_gg, 1e-5)
    _close(gb, head.sum(red), 1e-8)


@pytest.mark.parametrize("train_mode,ugs", [(True, True), (False, True)])
def test_batch_norm_global_stats_forward_and_grad(train_mode, ugs):
    x = R.standard_normal((3, 4, 2))
    g, b = R.standard_normal(4), R.standard_normal(4)
    rm, rv = R.standard_normal(4), R.uniform(0.5, 2, 4)
    head = R.standard_normal(x.shape)
    RM, RV = np.array(rm, dtype="float64"), np.array(rv, dtype="float64")
    y, (gx, _, _) = _run(lambda a, ga, be: npx.batch_norm(a, ga, be, RM, RV, eps=1e-3,
                                                          use_global_stats=ugs),
                         [x, g, b], head, train_mode=train_mode)
    _close(y, _bn_ref(x, g, b, rm, rv, 1e-3, 1), 1e-9)
    _close(RM, rm, 0)
    _close(RV, rv, 0)
    _close(gx, head * (g / onp.sqrt(rv + 1e-3)).reshape(1, 4, 1), 1e-9)


def test_batch_norm_predict_forward():
    x = R.standard_normal((3, 4))
    g, b, rm, rv = R.standard_normal(4), R.standard_normal(4), R.standard_normal(4), \
        R.uniform(0.5, 2, 4)
    RM, RV = np.array(rm, dtype="float64"), np.array(rv, dtype="float64")
    y = npx.batch_norm(np.array(x, dtype="float64"), np.array(g, dtype="float64"),
                       np.array(b, dtype="float64"), RM, RV, eps=1e-3)
    _close(y, _bn_ref(x, g, b, rm, rv, 1e-3, 1), 1e-9)
    _close(RM, rm, 0)
    _close(RV, rv, 0)


def test_batch_norm_predict_mode_grad_uses_running_stats():
    """A forward recorded in predict mode normalizes with the running statistics; its
    gradient treats them as constants even though backward runs in training mode (MXNet took
    the mode from the backward call and gave the batch-statistics gradient, issue 9580)."""
    x = R.standard_normal((4, 3))
    g, b, rm, rv = onp.array([1.0, 2, 3]), onp.zeros(3), onp.array([0.1, 0.2, 0.3]), \
        onp.array([1.0, 2, 4])
    head = onp.ones(x.shape)
    RM, RV = np.array(rm, dtype="float64"), np.array(rv, dtype="float64")
    _, (gx, _, _) = _run(lambda a, ga, be: npx.batch_norm(a, ga, be, RM, RV, eps=1e-3),
                         [x, g, b], head, train_mode=False)
    _close(gx, head * g / onp.sqrt(rv + 1e-3), 1e-9)


@pytest.mark.parametrize("hybridize", [False, True])
def test_batch_norm_layer_gradient_follows_the_forwards_mode(hybridize):
    """gluon.nn.BatchNorm under record(train_mode=False) then record(): the input gradient
    is gamma / sqrt(running_var + eps) in predict mode and the batch formula in training,
    hybridized or not (the cached graph keeps a plan per mode)."""
    from ndx import autograd, gluon
    layer = gluon.nn.BatchNorm(in_channels=3, epsilon=1e-3)
    layer.initialize()
    layer.cast("float64")
    layer.gamma.set_data(np.array([1.0, 2.0, 3.0], dtype="float64"))
    layer.running_var.set_data(np.array([1.0, 2.0, 4.0], dtype="float64"))
    if hybridize:
        layer.hybridize()
    xn = R.standard_normal((4, 3))
    for train in (False, True, False):
        x = np.array(xn)
        x.attach_grad()
        with autograd.record(train_mode=train):
            y = layer(x)
        y.backward(np.array(onp.arange(12.0).reshape(4, 3)))
        head = onp.arange(12.0).reshape(4, 3)
        gamma = onp.array([1.0, 2.0, 3.0])
        if train:  # the batch statistics' gradient
            v = xn.var(0)
            xhat = (xn - xn.mean(0)) / onp.sqrt(v + 1e-3)
            want = gamma / onp.sqrt(v + 1e-3) * (head - head.mean(0) - xhat * (head * xhat).mean(0))
        else:
            want = head * gamma / onp.sqrt(layer.running_var.data().asnumpy() + 1e-3)
        _close(x.grad.asnumpy(), want, 1e-9)


def _ln_ref(x, g, b, axis, eps=1e-5):
    sh = [1] * x.ndim
    sh[axis] = -1
    m, v = x.mean(axis, keepdims=True), x.var(axis, keepdims=True)
    return (x - m) / onp.sqrt(v + eps) * g.reshape(sh) + b.reshape(sh), m, onp.sqrt(v + eps)


@pytest.mark.parametrize("shape,axis", [((4, 5), -1), ((2, 3, 4), 1), ((2, 3, 4), 0),
                                        ((1, 7), -1)])
def test_layer_norm(shape, axis):
    x = R.standard_normal(shape)
    g, b = R.standard_normal(shape[axis]), R.standard_normal(shape[axis])
    head = R.standard_normal(shape)
    y, (gx, gg, gb) = _run(lambda a, ga, be: npx.layer_norm(a, ga, be, axis=axis), [x, g, b],
                           head)
    ref, m, s = _ln_ref(x, g, b, axis)
    _close(y, ref, 1e-9)
    _close(gx, _numgrad(lambda v: (_ln_ref(v, g, b, axis)[0] * head).sum(), x), 1e-5)
    _close(gg, _numgrad(lambda v: (_ln_ref(x, v, b, axis)[0] * head).sum(), g), 1e-5)
    _close(gb, _numgrad(lambda v: (_ln_ref(x, g, v, axis)[0] * head).sum(), b), 1e-5)
    _, mean, std = npx.layer_norm(np.array(x), np.array(g), np.array(b), axis=axis,
                                  output_mean_var=True)
    _close(mean, m, 1e-5)
    _close(std, s, 1e-5)


def _gn_ref(x, g, b, groups, eps):
    n, c = x.shape[:2]
    xr = x.reshape(n, groups, -1)
    xh = ((xr - xr.mean(-1, keepdims=True)) / onp.sqrt(xr.var(-1, keepdims=True) + eps))
    sh = (1, c) + (1,) * (x.ndim - 2)
    return xh.reshape(x.shape) * g.reshape(sh) + b.reshape(sh)


@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((1, 6, 2, 3), 3), ((3, 4), 4)])
def test_group_and_instance_norm(shape, groups):
    x = R.standard_normal(shape)
    c = shape[1]
    g, b = R.standard_normal(c), R.standard_normal(c)
    head = R.standard_normal(shape)
    y, (gx, gg, _) = _run(lambda a, ga, be: npx.group_norm(a, ga, be, num_groups=groups),
                          [x, g, b], head)
    _close(y, _gn_ref(x, g, b, groups, 1e-5), 1e-9)
    _close(gx, _numgrad(lambda v: (_gn_ref(v, g, b, groups, 1e-5) * head).sum(), x), 1e-5)
    _close(gg, _numgrad(lambda v: (_gn_ref(x, v, b, groups, 1e-5) * head).sum(), g), 1e-5)
    if x.ndim >= 3:
        y, (gx, _, _) = _run(npx.instance_norm, [x, g, b], head)
        _close(y, _gn_ref(x, g, b, c, 1e-3), 1e-9)
        _close(gx, _numgrad(lambda v: (_gn_ref(v, g, b, c, 1e-3) * head).sum(), x), 1e-5)


# ---- softmax family, activations ------------------------------------------------------------

def _softmax(x, axis, t=1.0, log=False):
    z = x / t
    z = z - z.max(axis, keepdims=True)
    ls = z - onp.log(onp.exp(z).sum(axis, keepdims=True))
    return ls if log else onp.exp(ls)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("temperature", [None, 0.5])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_and_log_softmax(axis, temperature, log):
    x = R.standard_normal((2, 3, 4))
    head = R.standard_normal(x.shape)
    op = npx.log_softmax if log else npx.softmax
    y, (gx,) = _run(lambda a: op(a, axis=axis, temperature=temperature), [x], head)
    t = temperature or 1.0
    _close(y, _softmax(x, axis, t, log), 1e-9)
    _close(gx, _numgrad(lambda v: (_softmax(v, axis, t, log) * head).sum(), x), 1e-5)


def test_softmax_with_length():
    x = R.standard_normal((2, 3, 4))
    lengths = onp.array([[1, 4, 2], [3, 0, 4]])

    def ref(v, log):
        out = onp.zeros_like(v)
        for i, j in itertools.product(range(2), range(3)):
            n = lengths[i, j]
            if n:
                out[i, j, :n] = _softmax(v[i, j, :n], 0, log=log)
        return out
    for log, op in ((False, npx.softmax), (True, npx.log_softmax)):
        head = R.standard_normal(x.shape)
        y, (gx,) = _run(lambda a: op(a, length=np.array(lengths), use_length=True), [x], head)
        _close(y, ref(x, log), 1e-9)
        _close(gx, _numgrad(lambda v: (ref(v, log) * head).sum(), x), 1e-5)


def test_masked_softmax():
    x = R.standard_normal((2, 3, 4))
    mask = R.uniform(size=x.shape) > 0.3
    mask[0, 0] = False

    def ref(v):
        z = onp.where(mask, v / 2.0, -onp.inf)
        m = z.max(-1, keepdims=True)
        e = onp.where(mask, onp.exp(z - onp.where(onp.isfinite(m), m, 0)), 0)
        s = e.sum(-1, keepdims=True)
        return onp.where(s > 0, e / onp.where(s > 0, s, 1), 0)
    head = R.standard_normal(x.shape)
    y, (gx,) = _run(lambda a: npx.masked_softmax(a, np.array(mask), temperature=2.0), [x],
                    head)
    _close(y, ref(x), 1e-9)
    _close(gx, _numgrad(lambda v: (ref(v) * head).sum(), x), 1e-5)
    got = npx.masked_log_softmax(np.array(x), np.array(mask), temperature=2.0).asnumpy()
    _close(got[mask], onp.log(ref(x)[mask]), 1e-5)
    assert onp.all(onp.isneginf(got[~mask]))


ACTS = {"relu": lambda z: onp.maximum(z, 0), "sigmoid": lambda z: 1 / (1 + onp.exp(-z)),
        "tanh": onp.tanh, "softrelu": lambda z: onp.log1p(onp.exp(z)),
        "softsign": lambda z: z / (1 + onp.abs(z)),
        "log_sigmoid": lambda z: -onp.log1p(onp.exp(-z)),
        "mish": lambda z: z * onp.tanh(onp.log1p(onp.exp(z)))}


@pytest.mark.parametrize("act", sorted(ACTS))
def test_activation(act):
    # MXNet 2's Activation act_types: relu, sigmoid, log_sigmoid, mish, tanh, softrelu,
    # softsign (softsign and mish were rejected before the npx wrapper).
    x = R.standard_normal((3, 5)) * 3
    head = R.standard_normal(x.shape)
    y, (gx,) = _run(lambda a: npx.activation(a, act_type=act), [x], head)
    _close(y, ACTS[act](x), 1e-9)
    _close(gx, _numgrad(lambda v: (ACTS[act](v) * head).sum(), x), 1e-5)
    y16 = npx.activation(np.array(x, dtype="float16"), act_type=act)
    assert y16.dtype == onp.float16
    _close(y16, ACTS[act](x), 2e-2)
    out = np.zeros(x.shape, dtype="float32")
    assert npx.activation(np.array(x, dtype="float32"), act, out=out) is out
    _close(out, ACTS[act](x), 1e-5)


def test_activation_bad_type():
    with pytest.raises(ValueError, match="activation"):
        npx.activation(np.ones(3), act_type="swishy")


def test_leaky_relu_kinds():
    from math import erf, pi, sqrt
    verf = onp.vectorize(erf)
    refs = {"leaky": lambda z: onp.where(z > 0, z, 0.1 * z),
            "elu": lambda z: onp.where(z > 0, z, 0.1 * (onp.exp(z) - 1)),
            "selu": lambda z: 1.0507009873554805 * onp.where(z > 0, z, 1.6732632423543772 *
                                                              (onp.exp(z) - 1)),
            "gelu": lambda z: 0.5 * z * (1 + verf(z / sqrt(2))),
            "gelu_tanh": lambda z: 0.5 * z * (1 + onp.tanh(sqrt(2 / pi) *
                                                           (z + 0.044715 * z ** 3)))}
    x = R.standard_normal((3, 5)) * 2
    for kind, f in refs.items():
        head = R.standard_normal(x.shape)
        y, (gx,) = _run(lambda a: npx.leaky_relu(a, act_type=kind, slope=0.1), [x], head)
        _close(y, f(x), 1e-9)
        _close(gx, _numgrad(lambda v: (f(v) * head).sum(), x), 1e-5)
    x3, gm = R.standard_normal((2, 3, 4)), onp.array([0.1, 0.2, 0.3])
    head = R.standard_normal(x3.shape)

    def pre(v, s):
        return onp.where(v > 0, v, s.reshape(1, 3, 1) * v)
    y, (gx, gg) = _run(lambda a, s: npx.leaky_relu(a, s, act_type="prelu"), [x3, gm], head)
    _close(y, pre(x3, gm), 1e-12)
    _close(gx, _numgrad(lambda v: (pre(v, gm) * head).sum(), x3), 1e-5)
    _close(gg, _numgrad(lambda v: (pre(x3, v) * head).sum(), gm), 1e-5)
    # rrelu: the mean slope in predict mode, a slope in [lower, upper] per element in training
    _close(npx.leaky_relu(np.array(x), act_type="rrelu"),
           onp.where(x > 0, x, x * (0.125 + 0.334) / 2), 1e-6)
    with autograd.record():
        y = npx.leaky_relu(np.array(x), act_type="rrelu").asnumpy()
    ratio = y[x < 0] / x[x < 0]
    assert onp.all((ratio >= 0.125 - 1e-6) & (ratio <= 0.334 + 1e-6))


def test_dropout():
    x = onp.ones((200, 50))
    _close(npx.dropout(np.array(x), p=0.3), x, 0)  # predict mode: identity
    xa = np.array(x)
    xa.attach_grad()
    with autograd.record():
        y = npx.dropout(xa, p=0.3)
    y.backward()
    got = y.asnumpy()
    assert set(onp.unique(onp.round(got, 5))) <= {0.0, onp.round(1 / 0.7, 5)}
    assert 0.25 < (got == 0).mean() < 0.35
    _close(xa.grad, got, 1e-6)  # d(out)/dx is the scaled mask
    assert 0.25 < (npx.dropout(np.array(x), p=0.3, mode="always").asnumpy() == 0).mean() < 0.35
    with autograd.record():
        y = npx.dropout(np.ones((4, 6, 5)), p=0.5, axes=(1,)).asnumpy()
    assert (y == y[:, :1, :]).all()


# ---- indexing-like ops ------------------------------------------------------------------------

def test_embedding_and_one_hot():
    w, idx = R.standard_normal((5, 3)), onp.array([[0, 4, 2], [1, 1, 3]])
    head = R.standard_normal((2, 3, 3))
    y, (gw,) = _run(lambda a: npx.embedding(np.array(idx, dtype="int32"), a, input_dim=5,
                                            output_dim=3), [w], head)
    _close(y, w[idx], 0)
    want = onp.zeros_like(w)
    onp.add.at(want, idx.ravel(), head.reshape(-1, 3))
    _close(gw, want, 1e-12)
    _close(npx.one_hot(np.array(idx), 5), onp.eye(5)[idx], 0)
    y = npx.one_hot(np.array([0, -1, 5, 2]), 4, on_value=3, off_value=-1, dtype="int32")
    assert y.dtype == onp.int32
    _close(y, [[3, -1, -1, -1], [-1] * 4, [-1] * 4, [-1, -1, 3, -1]], 0)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("mode", ["clip", "wrap"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_pick(axis, mode, keepdims):
    d = R.standard_normal((3, 4, 5))
    sh = list(d.shape)
    n = sh.pop(axis % 3)
    ind = R.integers(-7, 9, size=sh)
    ii = onp.expand_dims(onp.clip(ind, 0, n - 1) if mode == "clip" else onp.mod(ind, n), axis)
    ref = onp.take_along_axis(d, ii, axis)
    if not keepdims:
        ref = ref.squeeze(axis)
    head = R.standard_normal(ref.shape)
    y, (gd,) = _run(lambda a: npx.pick(a, np.array(ind), axis=axis, mode=mode,
                                       keepdims=keepdims), [d], head)
    _close(y, ref, 0)
    want = onp.zeros_like(d)
    onp.put_along_axis(want, ii, head.reshape(ii.shape), axis)
    _close(gd, want, 0)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("ascend", [False, True])
def test_topk(axis, ascend):
    t = R.permutation(24).reshape(2, 3, 4).astype(float)
    order = onp.argsort(t if ascend else -t, axis=axis)
    for k in (1, 2):
        oi = onp.take(order, range(k), axis=axis)
        vals = onp.take_along_axis(t, oi, axis)
        kw = dict(axis=axis, k=k, is_ascend=ascend)
        _close(npx.topk(np.array(t), **kw), oi, 0)
        _close(npx.topk(np.array(t), ret_typ="value", **kw), vals, 0)
        v, i = npx.topk(np.array(t), ret_typ="both", **kw)
        _close(v, vals, 0)
        _close(i, oi, 0)
        mask = onp.zeros_like(t)
        onp.put_along_axis(mask, oi, 1, axis)
        _close(npx.topk(np.array(t), ret_typ="mask", **kw), mask, 0)
    # k < 1: a full sort along the axis (MXNet)
    _close(npx.topk(np.array(t), axis=axis, k=0, is_ascend=ascend, ret_typ="value"),
           onp.take_along_axis(t, order, axis), 0)
    head = R.standard_normal(vals.shape)
    y, (gt,) = _run(lambda a: npx.topk(a, ret_typ="value", **kw), [t], head)
    want = onp.zeros_like(t)
    onp.put_along_axis(want, oi, head, axis)
    _close(gt, want, 0)


@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_ops(axis):
    d = R.standard_normal((5, 3, 2))
    data = d if axis == 0 else onp.ascontiguousarray(d.transpose(1, 0, 2))
    lengths = onp.array([2, 5, 1])
    m = onp.array([[t < lengths[b] for b in range(3)] for t in range(5)])
    m = (m if axis == 0 else m.T)[..., None]
    head = R.standard_normal(data.shape)
    L = np.array(lengths)
    y, (gx,) = _run(lambda a: npx.sequence_mask(a, L, use_sequence_length=True, value=-7,
                                                axis=axis), [data], head)
    _close(y, onp.where(m, data, -7), 0)
    _close(gx, onp.where(m, head, 0), 0)
    last = onp.stack([data[lengths[b] - 1, b] if axis == 0 else data[b, lengths[b] - 1]
                      for b in range(3)])
    _close(npx.sequence_last(np.array(data), L, use_sequence_length=True, axis=axis), last, 0)
    rev, grev = data.copy(), head.copy()
    for b in range(3):
        n = lengths[b]
        idx = (slice(None, n), b) if axis == 0 else (b, slice(None, n))
        rev[idx], grev[idx] = data[idx][::-1], head[idx][::-1]
    y, (gx,) = _run(lambda a: npx.sequence_reverse(a, L, use_sequence_length=True, axis=axis),
                    [data], head)
    _close(y, rev, 0)
    _close(gx, grev, 0)


# ---- dense ops --------------------------------------------------------------------------------

@pytest.mark.parametrize("flatten", [True, False])
def test_fully_connected(flatten):
    x = R.standard_normal((2, 3, 4))
    w, b = R.standard_normal((5, 12 if flatten else 4)), R.standard_normal(5)
    x2 = x.reshape(2, -1) if flatten else x.reshape(-1, 4)
    ref = (x2 @ w.T + b).reshape((2, 5) if flatten else (2, 3, 5))
    head = R.standard_normal(ref.shape)
    y, (gx, gw, gb) = _run(lambda a, ww, bb: npx.fully_connected(a, ww, bb, num_hidden=5,
                                                                 flatten=flatten),
                           [x, w, b], head)
    _close(y, ref, 1e-10)
    _close(gx, (head.reshape(-1, 5) @ w).reshape(x.shape), 1e-10)
    _close(gw, head.reshape(-1, 5).T @ x2, 1e-10)
    _close(gb, head.reshape(-1, 5).sum(0), 1e-10)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_dot(ta, tb):
    a = R.standard_normal((3, 4, 2) if ta else (3, 2, 4))
    b = R.standard_normal((3, 5, 4) if tb else (3, 4, 5))
    aa = a.transpose(0, 2, 1) if ta else a
    bb = b.transpose(0, 2, 1) if tb else b
    head = R.standard_normal((3, 2, 5))
    y, (ga, gb) = _run(lambda p, q: npx.batch_dot(p, q, transpose_a=ta, transpose_b=tb),
                       [a, b], head)
    _close(y, aa @ bb, 1e-10)
    da, db = head @ bb.transpose(0, 2, 1), aa.transpose(0, 2, 1) @ head
    _close(ga, da.transpose(0, 2, 1) if ta else da, 1e-10)
    _close(gb, db.transpose(0, 2, 1) if tb else db, 1e-10)


def test_gather_scatter_nd():
    d, ind = R.standard_normal((3, 4, 2)), onp.array([[0, 2, 0], [3, 0, 3]])
    head = R.standard_normal((3, 2))
    y, (gd,) = _run(lambda a: npx.gather_nd(a, np.array(ind)), [d], head)
    _close(y, d[tuple(ind)], 0)
    want = onp.zeros_like(d)
    onp.add.at(want, tuple(ind), head)  # repeated indices accumulate
    _close(gd, want, 1e-12)
    v, ind2 = R.standard_normal((3, 2)), onp.array([[0, 2, 1], [3, 0, 2]])
    head = R.standard_normal((3, 4, 2))
    y, (gv,) = _run(lambda a: npx.scatter_nd(a, np.array(ind2), (3, 4, 2)), [v], head)
    want = onp.zeros((3, 4, 2))
    want[tuple(ind2)] = v
    _close(y, want, 0)
    _close(gv, head[tuple(ind2)], 0)


@pytest.mark.parametrize("code,want", [((-2, -1), (2, 60)), ((-4,), (2, 3, 4, 5)),
                                       ((-5, -4), (6, 4, 5)), ((-5, -5), (6, 20)),
                                       ((-6, 1, 2, -4), (1, 2, 3, 4, 5)),
                                       ((-2, -6, -1, 1, -4), (2, 3, 1, 4, 5))])
def test_reshape_special_codes(code, want):
    # MXNet 2's npx.reshape: -2 copy, -3 drop a 1, -4 copy the rest, -5 merge two, -6 split
    x = onp.arange(120).reshape(2, 3, 4, 5)
    _close(npx.reshape(np.array(x), code), x.reshape(want), 0)


def test_reshape_skip_and_reverse():
    assert npx.reshape(np.zeros((1, 3, 1, 5)), (-3, -2, -3, -2)).shape == (3, 5)
    assert npx.reshape(np.zeros((10, 5, 4)), (-1, -2), reverse=True).shape == (50, 4)
    assert npx.reshape(np.zeros((10, 5, 4)), (-1, -2)).shape == (40, 5)


# ---- rnn, ctc, roi_align ----------------------------------------------------------------------

_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _sig(z):
    return 1 / (1 + onp.exp(-z))


def _rnn_ref(x, params, h0, c0, mode, layers, dirs, hidden):
    t_len, _, c_in = x.shape
    g, off, weights = _GATES[mode], 0, {}
    for layer, d in itertools.product(range(layers), range(dirs)):
        cin = c_in if layer == 0 else dirs * hidden
        wi = params[off:off + g * hidden * cin].reshape(g * hidden, cin)
        off += g * hidden * cin
        wh = params[off:off + g * hidden * hidden].reshape(g * hidden, hidden)
        off += g * hidden * hidden
        weights[layer, d] = [wi, wh]
    for layer, d in itertools.product(range(layers), range(dirs)):
        weights[layer, d] += [params[off:off + g * hidden],
                              params[off + g * hidden:off + 2 * g * hidden]]
        off += 2 * g * hidden
    assert off == params.size
    H = hidden
    inp, hs, cs = x, [], []
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            wi, wh, bi, bh = weights[layer, d]
            h = h0[layer * dirs + d]
            c = c0[layer * dirs + d] if c0 is not None else None
            o = [None] * t_len
            for t in (range(t_len) if d == 0 else range(t_len - 1, -1, -1)):
                a, r = inp[t] @ wi.T + bi, h @ wh.T + bh
                if mode == "lstm":  # gates i, f, g, o
                    z = a + r
                    c = _sig(z[:, H:2 * H]) * c + _sig(z[:, :H]) * onp.tanh(z[:, 2 * H:3 * H])
                    h = _sig(z[:, 3 * H:]) * onp.tanh(c)
                elif mode == "gru":  # gates r, z, n
                    rr = _sig(a[:, :H] + r[:, :H])
                    zz = _sig(a[:, H:2 * H] + r[:, H:2 * H])
                    n = onp.tanh(a[:, 2 * H:] + rr * r[:, 2 * H:])
                    h = (1 - zz) * n + zz * h
                else:
                    h = onp.tanh(a + r) if mode == "rnn_tanh" else onp.maximum(a + r, 0)
                o[t] = h
            outs.append(onp.stack(o))
            hs.append(h)
            cs.append(c)
        inp = onp.concatenate(outs, -1)
    return inp, onp.stack(hs), (onp.stack(cs) if c0 is not None else None)


@pytest.mark.parametrize("mode", sorted(_GATES))
@pytest.mark.parametrize("layers,dirs", [(1, 1), (2, 2)])
def test_rnn(mode, layers, dirs):
    t_len, n, c, hidden = 3, 2, 3, 4
    g = _GATES[mode]
    size = sum(g * hidden * ((c if i == 0 else dirs * hidden) + hidden + 2) * dirs
               for i in range(layers))
    x, p = R.standard_normal((t_len, n, c)), R.standard_normal(size) * 0.5
    h0 = R.standard_normal((layers * dirs, n, hidden))
    c0 = R.standard_normal(h0.shape) if mode == "lstm" else None
    out, hy, cy = _rnn_ref(x, p, h0, c0, mode, layers, dirs, hidden)
    head = R.standard_normal(out.shape)
    nds = [np.array(a, dtype="float64") for a in (x, p, h0)]
    for a in nds:
        a.attach_grad()
    cell = None if c0 is None else np.array(c0, dtype="float64")
    with autograd.record():
        res = npx.rnn(*nds, cell, mode=mode, state_size=hidden, num_layers=layers,
                      bidirectional=dirs == 2, state_outputs=True)
    res[0].backward(np.array(head))
    _close(res[0], out, 1e-9)
    _close(res[1], hy, 1e-9)
    if mode == "lstm":
        _close(res[2], cy, 1e-9)
    _close(nds[0].grad, _numgrad(
        lambda v: (_rnn_ref(v, p, h0, c0, mode, layers, dirs, hidden)[0] * head).sum(), x), 1e-5)
    _close(nds[1].grad, _numgrad(
        lambda v: (_rnn_ref(x, v, h0, c0, mode, layers, dirs, hidden)[0] * head).sum(), p), 1e-5)


def _ctc_one(logits, labels, blank):
    z = logits - logits.max(-1, keepdims=True)
    lp = z - onp.log(onp.exp(z).sum(-1, keepdims=True))
    ext = [blank]
    for label in labels:
        ext += [label, blank]
    alpha = onp.full(len(ext), -onp.inf)
    alpha[:2] = lp[0, ext[:2]]
    for t in range(1, len(lp)):
        new = onp.full(len(ext), -onp.inf)
        for s in range(len(ext)):
            terms = [alpha[s]] + ([alpha[s - 1]] if s else [])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                terms.append(alpha[s - 2])
            new[s] = onp.logaddexp.reduce(terms) + lp[t, ext[s]]
        alpha = new
    return -onp.logaddexp.reduce(alpha[-2:])


def _ctc_ref(data, labels, first, data_len=None, label_len=None):
    out = []
    for n in range(data.shape[1]):
        lab = list(labels[n])
        lab = lab[:label_len[n]] if label_len is not None else \
            [v for v in lab if v != (0 if first else -1)]
        t = data.shape[0] if data_len is None else data_len[n]
        out.append(_ctc_one(data[:t, n], lab, 0 if first else data.shape[2] - 1))
    return onp.array(out)


def test_ctc_loss():
    data = R.standard_normal((6, 3, 5))
    for first, lab in ((True, onp.array([[1, 2, 2], [3, 0, 0], [4, 1, 0]])),
                       (False, onp.array([[0, 1, 1], [2, -1, -1], [3, 0, -1]]))):
        y, (gd,) = _run(lambda a: npx.ctc_loss(a, np.array(lab),
                                               blank_label="first" if first else "last"),
                        [data], onp.ones(3))
        _close(y, _ctc_ref(data, lab, first), 1e-8)
        _close(gd, _numgrad(lambda v: _ctc_ref(v, lab, first).sum(), data), 1e-5)
    dl, ll = onp.array([6, 4, 5]), onp.array([2, 1, 2])
    y = npx.ctc_loss(np.array(data), np.array(lab := onp.array([[1, 2, 2], [3, 0, 0],
                                                                [4, 1, 0]])),
                     np.array(dl), np.array(ll), use_data_lengths=True, use_label_lengths=True)
    _close(y, _ctc_ref(data, lab, True, dl, ll), 1e-5)


def _bilinear(img, y, x):
    h, w = img.shape[-2:]
    if y < -1 or y > h or x < -1 or x > w:
        return onp.zeros(img.shape[0])
    y, x = max(y, 0), max(x, 0)
    y0, x0 = int(y), int(x)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = y0
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = x0
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1] +
            ly * (1 - lx) * img[:, y1, x0] + ly * lx * img[:, y1, x1])


def _roi_align_ref(data, rois, ph, pw, scale, ratio, aligned):
    out = onp.zeros((len(rois), data.shape[1], ph, pw))
    off = 0.5 if aligned else 0.0
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        x1, y1, x2, y2 = (v * scale - off for v in (x1, y1, x2, y2))
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else int(onp.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(onp.ceil(rw / pw))
        for i, j in itertools.product(range(ph), range(pw)):
            acc = sum(_bilinear(data[int(b)], y1 + i * bh + (iy + 0.5) * bh / gh,
                                x1 + j * bw + (ix + 0.5) * bw / gw)
                      for iy in range(gh) for ix in range(gw))
            out[r, :, i, j] = acc / (gh * gw)
    return out


@pytest.mark.parametrize("ratio", [2, -1])
@pytest.mark.parametrize("aligned", [False, True])
def test_roi_align(ratio, aligned):
    data = R.standard_normal((2, 3, 7, 8))
    rois = onp.array([[0, 0.5, 1.0, 4.2, 5.1], [1, 2, 0.3, 7.5, 6.0], [0, 1, 1, 1.5, 1.2]])
    head = R.standard_normal((3, 3, 2, 3))
    y, (gd,) = _run(lambda a: npx.roi_align(a, np.array(rois, dtype="float64"),
                                            pooled_size=(2, 3), spatial_scale=0.5,
                                            sample_ratio=ratio, aligned=aligned), [data], head)
    _close(y, _roi_align_ref(data, rois, 2, 3, 0.5, ratio, aligned), 1e-9)
    _close(gd, _numgrad(lambda v: (_roi_align_ref(v, rois, 2, 3, 0.5, ratio, aligned)
                                   * head).sum(), data), 1e-5)


# ---- typed errors ---------------------------------------------------------------------------

W33 = onp.ones((2, 3, 3, 3))
BAD = [
    ("convolution", lambda: npx.convolution(np.ones((3, 5)), np.ones((2, 3, 3)), None,
                                            kernel=(3,), num_filter=2)),
    ("convolution", lambda: npx.convolution(np.ones((1, 3, 2, 2)), np.array(W33), None,
                                            kernel=(3, 3), num_filter=2)),
    ("convolution", lambda: npx.convolution(np.ones((1, 3, 5, 5)), np.array(W33), None,
                                            kernel=(3, 3), num_filter=2, layout="XYZW")),
    ("convolution", lambda: npx.convolution(np.ones((1, 3, 5, 5)), np.array(W33), None,
                                            kernel=(3, 3), num_filter=2, pad=(-1, -1))),
    ("convolution", lambda: npx.convolution(np.ones((1, 4, 5, 5)), np.array(W33), None,
                                            kernel=(3, 3), num_filter=2)),
    ("convolution", lambda: npx.convolution(np.ones((1, 4, 5, 5)), np.ones((3, 2, 3, 3)), None,
                                            kernel=(3, 3), num_filter=3, num_group=2)),
    ("deconvolution", lambda: npx.deconvolution(np.ones((1, 3, 5, 5)), np.ones((3, 2, 3, 3)),
                                                None, kernel=(3, 3), num_filter=2,
                                                stride=(2, 2), adj=(2, 2))),
    ("pooling", lambda: npx.pooling(np.ones((1, 2, 2, 2)), kernel=(3, 3))),
    ("pooling", lambda: npx.pooling(np.ones((4,)), kernel=(2,))),
    ("pooling", lambda: npx.pooling(np.ones((1, 2, 5, 5)), kernel=(2, 2), pad=(-1, -1))),
    ("pooling", lambda: npx.pooling(np.ones((1, 2, 5, 5)), kernel=(2, 2), layout="NCHWX")),
    # A pad as wide as the kernel: whole windows in the padding (max would give -FLT_MAX).
    ("pooling", lambda: npx.pooling(np.ones((1, 2, 5, 5)), kernel=(2, 2), pad=(2, 0))),
    ("pooling", lambda: npx.pooling(np.ones((1, 2, 5)), kernel=(1,), pad=(1,), pool_type="avg",
                                    count_include_pad=False)),
    ("batch_norm", lambda: npx.batch_norm(np.ones((2, 3)), np.ones(4), np.ones(3), np.ones(3),
                                          np.ones(3))),
    ("layer_norm", lambda: npx.layer_norm(np.ones((2, 3)), np.ones(4), np.ones(3))),
    ("group_norm", lambda: npx.group_norm(np.ones((2, 3, 4)), np.ones(3), np.ones(3),
                                          num_groups=2)),
    ("softmax", lambda: npx.softmax(np.ones((2, 3)), length=np.array([1, 2, 3]),
                                    use_length=True)),
    ("pick", lambda: npx.pick(np.ones((3, 4)), np.array([0, 1]), axis=1)),
    ("topk", lambda: npx.topk(np.ones((3, 4)), k=10)),
    ("fully_connected", lambda: npx.fully_connected(np.ones((2, 5)), np.ones((3, 4)),
                                                    np.ones(3))),
    ("rnn", lambda: npx.rnn(np.ones((3, 2, 3)), np.ones(10), np.ones((1, 2, 4)),
                            np.ones((1, 2, 4)), mode="lstm", state_size=4, num_layers=1)),
    ("ctc_loss", lambda: npx.ctc_loss(np.ones((4, 2, 3)), np.array([[5, 1], [1, 1]]))),
    ("batch_dot", lambda: npx.batch_dot(np.ones((2, 3, 4)), np.ones((2, 5, 6)))),
]


@pytest.mark.parametrize("op,call", BAD, ids=[f"{op}-{i}" for i, (op, _) in enumerate(BAD)])
def test_bad_arguments_raise_typed_errors(op, call):
    with pytest.raises((ValueError, TypeError, IndexError, NotImplementedError)) as info:
        call()
    assert op in str(info.value)
