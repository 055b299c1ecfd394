"""3-d convolution, transposed convolution (npx.deconvolution), 1-d / 3-d and global pooling,
and their Gluon layers, against NumPy references written here (direct loops / per-tap slices
in float64), central-difference gradients, MXNet's documented output-size formulas and the
adjoint identity <deconv(x), y> = <x, conv(y)>."""
import itertools

import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np, npx
from ndx._registry import ops
from ndx.test_utils import check_numeric_gradient

RNG = onp.random.default_rng(15)


def _arr(shape, dtype="float64", low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def _per_dim(v, nsp, default):
    if v is None or len(v) == 0:
        return (default,) * nsp
    return tuple(v)


def _invoke(op, arrays, params):
    """A registered op called by handle (bias left out when no_bias)."""
    return ndx._core._invoke(ops()[op].handle, tuple(np.array(a) for a in arrays), params)


# ------------------------------------------------------------------------- NumPy references
def conv_ref(x, w, b=None, stride=None, pad=None, dilate=None, num_group=1):
    """Cross-correlation over the trailing nsp dims, one kernel tap at a time."""
    nsp = x.ndim - 2
    s, p, d = _per_dim(stride, nsp, 1), _per_dim(pad, nsp, 0), _per_dim(dilate, nsp, 1)
    x = onp.pad(x.astype(onp.float64), ((0, 0), (0, 0)) + tuple((q, q) for q in p))
    k = w.shape[2:]
    out_sz = [(x.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nsp)]
    n, c = x.shape[:2]
    f = w.shape[0]
    cg, fg = c // num_group, f // num_group
    out = onp.zeros((n, f) + tuple(out_sz))
    for g in range(num_group):
        xg = x[:, g * cg:(g + 1) * cg]
        for tap in itertools.product(*[range(kk) for kk in k]):
            sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (out_sz[i] - 1) + 1, s[i])
                       for i in range(nsp))
            patch = xg[(slice(None), slice(None)) + sl]
            wt = w[(slice(g * fg, (g + 1) * fg), slice(None)) + tap].astype(onp.float64)
            out[:, g * fg:(g + 1) * fg] += onp.einsum("nc...,fc->nf...", patch, wt)
    if b is not None:
        out += b.astype(onp.float64).reshape((1, f) + (1,) * nsp)
    return out


def deconv_ref(x, w, b=None, stride=None, pad=None, dilate=None, adj=None, num_group=1):
    """Transposed convolution by scattering: input position i with kernel tap t lands at
    i * stride + t * dilate of the unpadded output, which is then trimmed by pad on both sides
    (adj extra positions at the high end)."""
    nsp = x.ndim - 2
    s, p, d = _per_dim(stride, nsp, 1), _per_dim(pad, nsp, 0), _per_dim(dilate, nsp, 1)
    a = _per_dim(adj, nsp, 0)
    n, c = x.shape[:2]
    cg, fg = c // num_group, w.shape[1]
    f = fg * num_group
    k = w.shape[2:]
    ins = x.shape[2:]
    full = [s[i] * (ins[i] - 1) + d[i] * (k[i] - 1) + 1 + a[i] for i in range(nsp)]
    buf = onp.zeros((n, f) + tuple(full))
    for g in range(num_group):
        xg = x[:, g * cg:(g + 1) * cg].astype(onp.float64)
        for tap in itertools.product(*[range(kk) for kk in k]):
            sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (ins[i] - 1) + 1, s[i])
                       for i in range(nsp))
            wt = w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap].astype(onp.float64)
            buf[(slice(None), slice(g * fg, (g + 1) * fg)) + sl] += onp.einsum(
                "nc...,cf->nf...", xg, wt)
    out_sz = [full[i] - 2 * p[i] for i in range(nsp)]
    out = buf[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + out_sz[i])
                                                 for i in range(nsp))]
    if b is not None:
        out = out + b.astype(onp.float64).reshape((1, f) + (1,) * nsp)
    return out


def pool_ref(x, kernel=None, pool_type="max", stride=None, pad=None, global_pool=False,
             pooling_convention="valid", count_include_pad=True):
    """Pooling by a loop over output positions (MXNet's windows: clipped at in + pad)."""
    x = x.astype(onp.float64)
    nsp = x.ndim - 2
    ins = x.shape[2:]
    if global_pool:
        kernel, stride, pad = ins, (1,) * nsp, (0,) * nsp
    s, p = _per_dim(stride, nsp, 1), _per_dim(pad, nsp, 0)

    def osize(i):
        span = ins[i] + 2 * p[i] - kernel[i]
        if global_pool:
            return 1
        return 1 + (-(-span // s[i]) if pooling_convention == "full" else span // s[i])

    out_sz = [osize(i) for i in range(nsp)]
    out = onp.zeros(x.shape[:2] + tuple(out_sz))
    for pos in itertools.product(*[range(o) for o in out_sz]):
        starts = [pos[i] * s[i] - p[i] for i in range(nsp)]
        ends = [min(starts[i] + kernel[i], ins[i] + p[i]) for i in range(nsp)]
        lo = [max(v, 0) for v in starts]
        hi = [min(ends[i], ins[i]) for i in range(nsp)]
        win = x[(slice(None), slice(None)) + tuple(slice(lo[i], hi[i]) for i in range(nsp))]
        idx = (slice(None), slice(None)) + pos
        if pool_type == "max":
            out[idx] = win.max(axis=tuple(range(2, 2 + nsp)))
        else:
            total = win.sum(axis=tuple(range(2, 2 + nsp)))
            if pool_type == "sum":
                out[idx] = total
            else:
                count = (onp.prod([ends[i] - starts[i] for i in range(nsp)]) if count_include_pad
                         else onp.prod([hi[i] - lo[i] for i in range(nsp)]))
                out[idx] = total / count
    return out


# ------------------------------------------------------------------- 3-d convolution (op)
CONV3D = [
    # (data shape, kernel, params, num_filter)
    ((2, 3, 4, 5, 5), (2, 3, 3), {}, 4),
    ((1, 4, 5, 6, 5), (3, 2, 3), {"stride": (2, 1, 2), "pad": (1, 0, 1)}, 2),
    ((1, 4, 6, 5, 7), (2, 2, 3), {"dilate": (2, 1, 2), "pad": (1, 1, 0), "num_group": 2}, 6),
    ((2, 3, 3, 3, 4), (1, 2, 2), {"num_group": 3, "stride": (1, 2, 1)}, 3),  # depthwise
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CONV3D, ids=lambda c: str(c[0]) + str(c[2]))
@pytest.mark.parametrize("bias", [True, False])
def test_conv3d_forward(case, dtype, bias):
    shape, kernel, kw, f = case
    g = kw.get("num_group", 1)
    x, w = _arr(shape, dtype), _arr((f, shape[1] // g) + kernel, dtype)
    b = _arr((f,), dtype) if bias else None
    args = (np.array(x), np.array(w)) + ((np.array(b),) if bias else ())
    got = npx.convolution(*args, kernel=kernel, num_filter=f, no_bias=not bias, **kw)
    want = conv_ref(x, w, b, **kw)
    assert got.shape == want.shape and got.dtype == onp.dtype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)


def test_conv3d_layout_and_float16():
    x, w = _arr((1, 2, 3, 4, 4), "float16"), _arr((2, 2, 2, 2, 2), "float16")
    got = npx.convolution(np.array(x), np.array(w), kernel=(2, 2, 2), num_filter=2,
                          layout="NCDHW")
    onp.testing.assert_allclose(got.asnumpy().astype(onp.float64), conv_ref(x, w), rtol=1e-2,
                                atol=2e-2)


@pytest.mark.parametrize("case", CONV3D[:3], ids=lambda c: str(c[0]))
def test_conv3d_gradient(case):
    shape, kernel, kw, f = case
    shape = (1,) + shape[1:2] + tuple(min(s, 5) for s in shape[2:])
    g = kw.get("num_group", 1)
    x, w, b = _arr(shape), _arr((f, shape[1] // g) + kernel), _arr((f,))
    check_numeric_gradient("_npx_convolution", [x, w, b], dict(kw, kernel=kernel, num_filter=f))


def _conv_weight_grad_ref(x, w_shape, g, **kw):
    """The weight gradient of sum(g * conv(x, w)) by linearity: one unit weight per entry."""
    dw = onp.zeros(w_shape)
    for i in onp.ndindex(*w_shape):
        unit = onp.zeros(w_shape)
        unit[i] = 1.0
        dw[i] = (g * conv_ref(x, unit, **kw)).sum()
    return dw


ONE_CHANNEL_CONVS = [
    ((4, 1, 8, 8), (3, 1, 3, 3), {"pad": (1, 1)}),
    ((3, 1, 9, 7), (2, 1, 3, 2), {"stride": (2, 3), "pad": (2, 1), "dilate": (1, 2)}),
    ((2, 1, 11), (3, 1, 4), {"stride": (2,), "pad": (3,)}),
    ((2, 1, 4, 5, 3), (2, 1, 2, 3, 2), {"pad": (1, 0, 1)}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ONE_CHANNEL_CONVS, ids=lambda c: str(c[0]) + str(c[2]))
def test_conv_weight_gradient_of_one_channel_data(case, dtype):
    """A first layer's backward (one input channel, no data gradient asked for: the weight
    gradient in one GEMM over every image): weight and bias gradients against NumPy, added to
    what is there with grad_req='add'."""
    xs, ws, kw = case
    rng = onp.random.default_rng(12)
    xn, wn = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
    bn = rng.standard_normal(ws[0]).astype(dtype)
    x, w, b = np.array(xn), np.array(wn), np.array(bn)
    w.attach_grad(grad_req="add")
    b.attach_grad(grad_req="add")
    want_w, want_b = onp.zeros(ws), onp.zeros(ws[0])
    for _ in range(2):
        with autograd.record():
            y = npx.convolution(x, w, b, kernel=ws[2:], num_filter=ws[0], **kw)
        gn = rng.standard_normal(y.shape).astype(dtype)
        y.backward(np.array(gn))
        want_w += _conv_weight_grad_ref(xn, ws, gn.astype(onp.float64), **kw)
        want_b += gn.astype(onp.float64).sum(axis=(0,) + tuple(range(2, gn.ndim)))
    tol = 2e-4 if dtype == "float32" else 1e-10
    onp.testing.assert_allclose(w.grad.asnumpy(), want_w, rtol=tol, atol=tol)
    onp.testing.assert_allclose(b.grad.asnumpy(), want_b, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_gradients_add_to_what_is_there(dtype):
    """grad_req='add' on data, weight and bias of a multi-channel convolution (oneDNN's
    backward in float32, written through buffers; the reference loops in float64): two
    backward passes against NumPy, each gradient found by linearity."""
    rng = onp.random.default_rng(13)
    xs, ws, kw = (2, 3, 5, 6), (4, 3, 3, 3), {"pad": (1, 1), "stride": (1, 2)}
    xn, wn = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
    x, w, b = np.array(xn), np.array(wn), np.array(rng.standard_normal(4).astype(dtype))
    for a in (x, w, b):
        a.attach_grad(grad_req="add")
    want_x, want_w, want_b = onp.zeros(xs), onp.zeros(ws), onp.zeros(4)
    for _ in range(2):
        with autograd.record():
            y = npx.convolution(x, w, b, kernel=(3, 3), num_filter=4, **kw)
        gn = rng.standard_normal(y.shape)
        y.backward(np.array(gn.astype(dtype)))
        gn = gn.astype(dtype).astype(onp.float64)
        want_w += _conv_weight_grad_ref(xn, ws, gn, **kw)
        for i in onp.ndindex(*xs):
            unit = onp.zeros(xs)
            unit[i] = 1.0
            want_x[i] += (gn * conv_ref(unit, wn, **kw)).sum()
        want_b += gn.sum(axis=(0, 2, 3))
    tol = 2e-4 if dtype == "float32" else 1e-10
    for got, want in ((x, want_x), (w, want_w), (b, want_b)):
        onp.testing.assert_allclose(got.grad.asnumpy(), want, rtol=tol, atol=tol)


def test_conv_gradients_over_more_shapes_than_the_plan_cache_holds():
    """Data, weight and bias gradients of 90 shapes in a row (three oneDNN plans each, so the
    per-thread plan cache of 256 fills and is renewed while the backward pass holds both of its
    plans): every gradient against NumPy. The data gradient of a 3x3 'same' correlation is
    the 'same' correlation of the output gradient with the flipped, transposed kernel."""
    rng = onp.random.default_rng(14)
    wn = rng.standard_normal((2, 2, 3, 3)).astype("float32")
    w_flipped = wn[:, :, ::-1, ::-1].transpose(1, 0, 2, 3).astype(onp.float64)
    for width in range(3, 93):
        xn = rng.standard_normal((1, 2, 5, width)).astype("float32")
        x, w, b = np.array(xn), np.array(wn), np.array(onp.zeros(2, "float32"))
        for a in (x, w, b):
            a.attach_grad()
        with autograd.record():
            y = npx.convolution(x, w, b, kernel=(3, 3), num_filter=2, pad=(1, 1))
        gn = rng.standard_normal(y.shape).astype("float32")
        y.backward(np.array(gn))
        g64 = gn.astype(onp.float64)
        onp.testing.assert_allclose(x.grad.asnumpy(), conv_ref(g64, w_flipped, pad=(1, 1)),
                                    rtol=1e-4, atol=1e-4, err_msg=f"dx, width {width}")
        onp.testing.assert_allclose(b.grad.asnumpy(), g64.sum(axis=(0, 2, 3)), rtol=1e-4,
                                    atol=1e-4, err_msg=f"db, width {width}")
        if width % 15 == 0:  # (the reference is slow; the data and bias checks run for all)
            onp.testing.assert_allclose(
                w.grad.asnumpy(), _conv_weight_grad_ref(xn, wn.shape, g64, pad=(1, 1)),
                rtol=1e-4, atol=1e-4, err_msg=f"dw, width {width}")


def test_conv3d_gradient_no_bias():
    x, w = _arr((2, 2, 3, 3, 3)), _arr((2, 2, 2, 2, 2))
    check_numeric_gradient("_npx_convolution", [x, w],
                           {"kernel": (2, 2, 2), "num_filter": 2, "no_bias": True,
                            "pad": (1, 0, 1), "stride": (2, 1, 1)})


# ------------------------------------------------------------- transposed convolution (op)
DECONV = [
    # (data shape, kernel, params, num_filter)
    ((2, 3, 5), (3,), {}, 2),
    ((1, 2, 4), (3,), {"stride": (2,), "pad": (1,), "adj": (1,)}, 3),
    ((2, 4, 5), (2,), {"stride": (3,), "dilate": (2,), "num_group": 2, "adj": (2,)}, 4),
    ((2, 3, 4, 3), (3, 2), {}, 2),
    ((1, 2, 3, 4), (3, 3), {"stride": (2, 3), "pad": (1, 1), "adj": (1, 2)}, 3),
    ((1, 4, 3, 3), (2, 3), {"dilate": (2, 1), "num_group": 4, "stride": (2, 1)}, 4),
    ((1, 6, 3, 4), (3, 2), {"num_group": 3, "pad": (1, 0), "stride": (1, 2)}, 9),
    ((2, 2, 2, 3, 2), (2, 2, 2), {}, 3),
    ((1, 4, 2, 3, 3), (3, 2, 2), {"stride": (2, 1, 2), "pad": (1, 0, 1), "adj": (1, 0, 1),
                                  "dilate": (1, 2, 1), "num_group": 2}, 2),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", DECONV, ids=lambda c: str(c[0]) + str(c[2]))
@pytest.mark.parametrize("bias", [True, False])
def test_deconvolution_forward(case, dtype, bias):
    shape, kernel, kw, f = case
    g = kw.get("num_group", 1)
    x, w = _arr(shape, dtype), _arr((shape[1], f // g) + kernel, dtype)
    b = _arr((f,), dtype) if bias else None
    params = dict(kw, kernel=kernel, num_filter=f, no_bias=not bias)
    got = _invoke("_npx_deconvolution", (x, w) + ((b,) if bias else ()), params)
    want = deconv_ref(x, w, b, **kw)
    assert got.shape == want.shape and got.dtype == onp.dtype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)


def test_deconvolution_output_size_formula():
    """MXNet: out = stride * (in - 1) + dilate * (kernel - 1) + 1 - 2 * pad + adj."""
    x, w = onp.ones((1, 1, 5, 4, 3)), onp.ones((1, 2, 3, 2, 4))
    params = {"kernel": (3, 2, 4), "stride": (2, 3, 1), "dilate": (1, 2, 1), "pad": (1, 0, 2),
              "adj": (1, 2, 0), "num_filter": 2, "no_bias": True}
    got = _invoke("_npx_deconvolution", (x, w), params)
    assert got.shape == (1, 2, 2 * 4 + 3 - 2 + 1, 3 * 3 + 3 - 0 + 2, 1 * 2 + 4 - 4 + 0)


def test_npx_deconvolution_function():
    """The generated npx.deconvolution: MXNet 2.0's keywords (num_filter defaults to 1)."""
    x, w, b = _arr((1, 2, 3, 3)), _arr((2, 1, 2, 2)), _arr((1,))
    got = npx.deconvolution(np.array(x), np.array(w), np.array(b), kernel=(2, 2),
                            stride=(2, 2))
    onp.testing.assert_allclose(got.asnumpy(), deconv_ref(x, w, b, stride=(2, 2)), rtol=1e-12)


@pytest.mark.parametrize("case", DECONV, ids=lambda c: str(c[0]) + str(c[2]))
def test_deconvolution_is_adjoint_of_convolution(case):
    """<deconv(x; W), y> = <x, conv(y; W)>: the same weight (C, F / g, *k) read as the
    convolution's (num_filter = C) weight, with the same stride, pad, dilate and groups."""
    shape, kernel, kw, f = case
    g = kw.get("num_group", 1)
    x, w = _arr(shape), _arr((shape[1], f // g) + kernel)
    dparams = dict(kw, kernel=kernel, num_filter=f, no_bias=True)
    y_shape = _invoke("_npx_deconvolution", (x, w), dparams).shape
    y = _arr(y_shape)
    cparams = {k: v for k, v in kw.items() if k != "adj"}
    lhs = float((_invoke("_npx_deconvolution", (x, w), dparams).asnumpy() * y).sum())
    conv = _invoke("_npx_convolution", (y, w),
                   dict(cparams, kernel=kernel, num_filter=shape[1], no_bias=True))
    assert conv.shape == x.shape
    onp.testing.assert_allclose(lhs, float((conv.asnumpy() * x).sum()), rtol=1e-11)


@pytest.mark.parametrize("case", DECONV, ids=lambda c: str(c[0]) + str(c[2]))
def test_deconvolution_gradient(case):
    shape, kernel, kw, f = case
    g = kw.get("num_group", 1)
    x, w, b = _arr((1,) + shape[1:]), _arr((shape[1], f // g) + kernel), _arr((f,))
    check_numeric_gradient("_npx_deconvolution", [x, w, b], dict(kw, kernel=kernel,
                                                                 num_filter=f))


def test_deconvolution_gradient_no_bias():
    x, w = _arr((2, 2, 3, 2)), _arr((2, 2, 2, 2))
    check_numeric_gradient("_npx_deconvolution", [x, w],
                           {"kernel": (2, 2), "num_filter": 2, "no_bias": True,
                            "stride": (2, 1), "adj": (1, 0)})


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_deconvolution_target_shape(nsp):
    """target_shape sets pad = ceil(total / 2), adj = total % 2 (MXNet's InferPad), with
    total = stride * (in - 1) + dilated kernel - target."""
    ins, k, s = (3, 4, 2)[:nsp], (3, 2, 3)[:nsp], (2, 2, 3)[:nsp]
    full = [s[i] * (ins[i] - 1) + k[i] for i in range(nsp)]
    target = tuple(full[i] - (3, 1, 2)[i] for i in range(nsp))
    x, w = _arr((1, 2) + ins), _arr((2, 3) + k)
    got = _invoke("_npx_deconvolution", (x, w),
                  {"kernel": k, "stride": s, "target_shape": target, "num_filter": 3,
                   "no_bias": True, "pad": (7,) * nsp})  # pad is ignored
    assert got.shape[2:] == target
    total = [full[i] - target[i] for i in range(nsp)]
    want = deconv_ref(x, w, stride=s, pad=[(t + 1) // 2 for t in total],
                      adj=[t % 2 for t in total])
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_deconvolution_zero_batch():
    got = _invoke("_npx_deconvolution", (onp.zeros((0, 2, 3)), onp.ones((2, 2, 2))),
                  {"kernel": (2,), "num_filter": 2, "no_bias": True})
    assert got.shape == (0, 2, 4)


def test_deconvolution_autograd_and_float16():
    x, w, b = _arr((1, 2, 3, 3), "float16"), _arr((2, 2, 2, 2), "float16"), _arr((2,), "float16")
    want = deconv_ref(x, w, b, stride=(2, 2))
    got = _invoke("_npx_deconvolution", (x, w, b), {"kernel": (2, 2), "stride": (2, 2),
                                                    "num_filter": 2})
    assert got.dtype == onp.float16
    onp.testing.assert_allclose(got.asnumpy().astype(onp.float64), want, rtol=1e-2, atol=2e-2)
    # through autograd: d sum(deconv(x)) / d b = the number of output positions per filter
    xs, ws, bs = np.array(x.astype("float32")), np.array(w.astype("float32")), np.array(
        b.astype("float32"))
    bs.attach_grad()
    with autograd.record():
        y = npx.deconvolution(xs, ws, bs, kernel=(2, 2), stride=(2, 2), num_filter=2)
    y.backward()
    onp.testing.assert_allclose(bs.grad.asnumpy(), [36.0, 36.0])


# ------------------------------------------------------------------------------ pooling
POOLS = [
    ((2, 3, 9), {"kernel": (3,), "stride": (2,)}),
    ((1, 2, 8), {"kernel": (3,), "stride": (2,), "pad": (1,), "pooling_convention": "full"}),
    ((1, 2, 7), {"kernel": (2,), "pad": (1,), "count_include_pad": False}),
    ((2, 2, 4, 5, 6), {"kernel": (2, 2, 3), "stride": (2, 2, 3)}),
    ((1, 2, 5, 4, 5), {"kernel": (3, 2, 2), "stride": (2, 1, 2), "pad": (1, 0, 1)}),
    ((1, 1, 5, 5, 4), {"kernel": (3, 3, 2), "stride": (2, 2, 2), "pad": (1, 1, 0),
                       "pooling_convention": "full"}),
    ((1, 2, 4, 3, 5), {"kernel": (3, 2, 3), "stride": (2, 2, 2), "pad": (1, 1, 1),
                       "count_include_pad": False}),
    ((2, 3, 3, 4, 2), {"global_pool": True}),
    ((2, 3, 10, 37), {"kernel": (2, 2), "stride": (2, 2)}),  # MaxPool2D(2): the SIMD kernels
    ((1, 2, 9, 6), {"kernel": (2, 2), "stride": (2, 2)}),
    ((2, 3, 5), {"global_pool": True, "layout": "NCW"}),
    ((2, 2, 3, 3, 2), {"global_pool": True, "layout": "NCDHW"}),
]


def _ref_kwargs(kw):
    return {k: v for k, v in kw.items() if k != "layout"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
@pytest.mark.parametrize("case", POOLS, ids=lambda c: str(c[0]) + str(c[1]))
def test_pooling_forward(case, pool_type, dtype):
    shape, kw = case
    x = _arr(shape, dtype, -3, 3)
    got = npx.pooling(np.array(x), pool_type=pool_type, **kw)
    want = pool_ref(x, pool_type=pool_type, **_ref_kwargs(kw))
    assert got.shape == want.shape and got.dtype == onp.dtype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
@pytest.mark.parametrize("case", POOLS, ids=lambda c: str(c[0]) + str(c[1]))
def test_pooling_gradient(case, pool_type):
    shape, kw = case
    shape = (1,) + shape[1:]
    size = int(onp.prod(shape))
    x = RNG.permutation(size).reshape(shape).astype(onp.float64) * 0.1  # no ties for max
    check_numeric_gradient("_npx_pooling", [x], dict(kw, pool_type=pool_type))


def max_pool_grad_ref(x, g, kernel, stride=None, pad=None, pooling_convention="valid"):
    """Max pooling's gradient by a loop over windows: each head gradient goes to its window's
    first maximum in row-major order, or its first nan (NumPy's argmax picks the same)."""
    nsp = x.ndim - 2
    ins = x.shape[2:]
    s, p = _per_dim(stride, nsp, 1), _per_dim(pad, nsp, 0)
    dx = onp.zeros(x.shape, onp.float64)
    for pos in itertools.product(*[range(o) for o in g.shape[2:]]):
        starts = [pos[i] * s[i] - p[i] for i in range(nsp)]
        lo = [max(v, 0) for v in starts]
        hi = [min(starts[i] + kernel[i], ins[i] + p[i], ins[i]) for i in range(nsp)]
        win = x[(slice(None), slice(None)) + tuple(slice(lo[i], hi[i]) for i in range(nsp))]
        flat = win.reshape(x.shape[:2] + (-1,))
        arg = onp.argmax(flat, axis=-1)
        for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
            at = onp.unravel_index(arg[n, c], win.shape[2:])
            dx[(n, c) + tuple(lo[i] + at[i] for i in range(nsp))] += g[(n, c) + pos]
    return dx


MAX_POOL_GRAD_CASES = [
    ((2, 3, 8, 8), {"kernel": (2, 2), "stride": (2, 2)}),
    ((1, 2, 7, 9), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
    ((1, 2, 6, 6), {"kernel": (3, 3), "stride": (1, 1)}),
    ((2, 2, 9), {"kernel": (3,), "stride": (3,)}),
    ((1, 1, 4, 5, 6), {"kernel": (2, 2, 3), "stride": (2, 1, 3), "pad": (0, 1, 1)}),
    ((1, 2, 7, 7), {"kernel": (2, 2), "stride": (2, 2), "pooling_convention": "full"}),
    ((2, 3, 8, 7), {"kernel": (2, 2), "stride": (3, 3)}),  # gaps between the windows
    ((1, 2, 7), {"kernel": (2,), "stride": (3,), "pooling_convention": "full"}),  # past the end
    ((1, 2, 3, 6, 6), {"kernel": (3, 2, 2), "stride": (3, 2, 2)}),  # 3-d, windows tile it
    # 2x2 / stride 2 (the SIMD kernel): rows of 17-18 windows (whole vectors and a tail), a
    # column and a row past the last window, rows of 2-3 windows (narrow vectors)
    ((2, 3, 10, 37), {"kernel": (2, 2), "stride": (2, 2)}),
    ((1, 2, 9, 34), {"kernel": (2, 2), "stride": (2, 2)}),
    ((2, 2, 5, 6), {"kernel": (2, 2), "stride": (2, 2)}),
    ((1, 1, 4, 4), {"kernel": (2, 2), "stride": (2, 2)}),
    ((1, 2, 6, 12), {"kernel": (2, 2), "stride": (2, 2)}),  # 6 windows: one 4-lane vector
    ((1, 2, 4, 15), {"kernel": (2, 2), "stride": (2, 2)}),  # 7 windows, an odd column
]


def _first_maximum_cases():
    for case in MAX_POOL_GRAD_CASES:
        for dtype in ("float16", "float32", "float64"):
            yield pytest.param(case, dtype, id=f"{case[0]}{case[1]}-{dtype}")


@pytest.mark.parametrize("case,dtype", list(_first_maximum_cases()))
def test_max_pooling_gradient_goes_to_the_first_maximum(case, dtype):
    """Exact gradients with ties (values from {0, 1, 2}) and nan: the first maximum (or nan)
    of each window takes its head gradient, overlapping windows add up, and grad_req='add'
    adds to what is there."""
    shape, kw = case
    rng = onp.random.default_rng(8)
    xn = rng.integers(0, 3, size=shape).astype(dtype)
    xn.reshape(-1)[rng.choice(xn.size, size=max(1, xn.size // 20), replace=False)] = onp.nan
    x = np.array(xn)
    x.attach_grad(grad_req="add")
    want = onp.zeros(shape)
    for _ in range(2):
        with autograd.record():
            y = npx.pooling(x, pool_type="max", **kw)
        gn = rng.integers(1, 4, size=y.shape).astype(dtype)
        y.backward(np.array(gn))
        want += max_pool_grad_ref(xn.astype(onp.float64), gn.astype(onp.float64), **kw)
    onp.testing.assert_array_equal(x.grad.asnumpy().astype(onp.float64), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_global_max_pooling_gradient_goes_to_the_first_maximum(dtype):
    """global_pool: one window per plane, the whole plane (ties and nan as above)."""
    rng = onp.random.default_rng(9)
    xn = rng.integers(0, 3, size=(3, 4, 5, 6)).astype(dtype)
    xn[0, 1, 2, 3] = onp.nan
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = npx.pooling(x, kernel=(1, 1), pool_type="max", global_pool=True)
    gn = rng.integers(1, 4, size=y.shape).astype(dtype)
    y.backward(np.array(gn))
    want = max_pool_grad_ref(xn.astype(onp.float64), gn.astype(onp.float64), kernel=(5, 6),
                             stride=(1, 1))
    onp.testing.assert_array_equal(x.grad.asnumpy().astype(onp.float64), want)


def _max_pool2x2_grad_ref(x, g):
    """The 2x2 / stride-2 gradient, vectorized: each window's first maximum (or first nan)."""
    n, c, oh, ow = g.shape
    win = x[:, :, :2 * oh, :2 * ow].reshape(n, c, oh, 2, ow, 2).transpose(0, 1, 2, 4, 3, 5)
    arg = onp.argmax(win.reshape(n, c, oh, ow, 4), axis=-1)
    hit = onp.zeros((n, c, oh, ow, 4))
    onp.put_along_axis(hit, arg[..., None], g[..., None], axis=-1)
    dx = onp.zeros(x.shape)
    dx[:, :, :2 * oh, :2 * ow] = (hit.reshape(n, c, oh, ow, 2, 2).transpose(0, 1, 2, 4, 3, 5)
                                  .reshape(n, c, 2 * oh, 2 * ow))
    return dx


@pytest.mark.parametrize("shape", [(2, 3, 6, 40), (1, 2, 9, 7), (1, 2, 6, 12), (1, 3, 5, 15),
                                   (3, 64, 66, 67)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool_2x2_forward_is_the_first_maximum_bit_for_bit(dtype, shape):
    """2x2 / stride 2 max pooling with ties of -0 and +0 and nans of two payloads: each
    output is its window's first maximum in row-major order, or its first nan, bit for bit
    (what NumPy's argmax picks); the last (3, 64, 66, 67) runs on the threads."""
    rng = onp.random.default_rng(14)
    xn = rng.choice([-1.0, -0.0, 0.0, 2.0], size=shape).astype(dtype)
    flat = xn.reshape(-1)
    picks = rng.choice(xn.size, size=max(2, xn.size // 30), replace=False)
    flat[picks[::2]] = onp.nan
    flat[picks[1::2]] = -onp.nan
    n, c, h, w = shape
    oh, ow = h // 2, w // 2
    win = xn[:, :, :2 * oh, :2 * ow].reshape(n, c, oh, 2, ow, 2).transpose(0, 1, 2, 4, 3, 5)
    win = win.reshape(n, c, oh, ow, 4)
    want = onp.take_along_axis(win, onp.argmax(win, axis=-1)[..., None], axis=-1)[..., 0]
    got = npx.pooling(np.array(xn), kernel=(2, 2), stride=(2, 2), pool_type="max").asnumpy()
    bits = onp.uint32 if dtype == "float32" else onp.uint64
    onp.testing.assert_array_equal(got.view(bits), want.view(bits))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool_2x2_gradient_of_large_data_on_threads(dtype, threads):
    """Large enough for the 2x2 kernel to split its planes over threads (ties and nan)."""
    rng = onp.random.default_rng(10)
    xn = rng.integers(0, 4, size=(4, 32, 66, 67)).astype(dtype)
    xn.reshape(-1)[rng.choice(xn.size, size=xn.size // 50, replace=False)] = onp.nan
    x = np.array(xn)
    x.attach_grad()
    before = npx.get_num_threads()
    npx.set_num_threads(threads)
    try:
        with autograd.record():
            y = npx.pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max")
        gn = rng.integers(1, 4, size=y.shape).astype(dtype)
        y.backward(np.array(gn))
    finally:
        npx.set_num_threads(before)
    want = _max_pool2x2_grad_ref(xn.astype(onp.float64), gn.astype(onp.float64))
    onp.testing.assert_array_equal(x.grad.asnumpy().astype(onp.float64), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool_2x2_gradient_with_an_output_not_of_this_data(dtype):
    """_backward_pooling given an output that is no window's element (here every window's
    maximum plus one, and a nan for a window without one): each window's gradient goes to its
    first maximum, as the reference loops send it."""
    rng = onp.random.default_rng(11)
    xn = rng.integers(0, 3, size=(2, 3, 6, 20)).astype(dtype)
    xn[0, 0, 0, 0] = onp.nan
    kw = {"kernel": (2, 2), "stride": (2, 2), "pool_type": "max"}
    yn = npx.pooling(np.array(xn), **kw).asnumpy()
    fake = yn + 1
    fake[1, 2, 1, 3] = onp.nan
    gn = rng.integers(1, 4, size=yn.shape).astype(dtype)
    got = _invoke("_backward_pooling", (np.array(gn), np.array(xn), np.array(fake)), kw)
    want = _max_pool2x2_grad_ref(xn.astype(onp.float64), gn.astype(onp.float64))
    onp.testing.assert_array_equal(got.asnumpy().astype(onp.float64), want)


def test_max_pooling_gradient_of_an_empty_plane_is_empty():
    """Global max pooling over a zero-size spatial extent: the gradient is zero-size too."""
    for shape in [(2, 3, 0, 5), (1, 1, 0)]:
        x = np.zeros(shape)
        x.attach_grad()
        with autograd.record():
            y = npx.pooling(x, kernel=(1,) * (len(shape) - 2), pool_type="max",
                            global_pool=True)
        y.backward()
        assert x.grad.shape == shape


def test_pooling_3d_hand_computed():
    x = onp.arange(16, dtype=onp.float64).reshape(1, 1, 2, 2, 4)
    got = npx.pooling(np.array(x), kernel=(2, 2, 2), stride=(2, 2, 2), pool_type="max")
    assert got.asnumpy().tolist() == [[[[[13.0, 15.0]]]]]
    got = npx.pooling(np.array(x), kernel=(2, 2, 2), stride=(2, 2, 2), pool_type="avg")
    assert got.asnumpy().tolist() == [[[[[(0 + 1 + 4 + 5 + 8 + 9 + 12 + 13) / 8,
                                         (2 + 3 + 6 + 7 + 10 + 11 + 14 + 15) / 8]]]]]


# ------------------------------------------------------------------------- typed errors
def _conv(shape, wshape, **kw):
    kw.setdefault("no_bias", True)
    return _invoke("_npx_convolution", (onp.ones(shape), onp.ones(wshape)), kw)


def _deconv(shape, wshape, **kw):
    kw.setdefault("no_bias", True)
    return _invoke("_npx_deconvolution", (onp.ones(shape), onp.ones(wshape)), kw)


@pytest.mark.parametrize("call,match", [
    (lambda: _conv((1, 2, 2, 5, 5), (4, 2, 3, 3, 3), kernel=(3, 3, 3), num_filter=4),
     "exceeds the padded input size 2"),
    (lambda: _conv((1, 2, 4, 5, 5), (4, 2, 3, 3, 3), kernel=(3, 3, 3), num_filter=4,
                   dilate=(2, 1, 1)), r"kernel size 5 \(dilated\) exceeds"),
    (lambda: _conv((1, 3, 4, 4, 4), (4, 1, 2, 2, 2), kernel=(2, 2, 2), num_filter=4,
                   num_group=2), "not divisible by num_group"),
    (lambda: _conv((1, 2, 4, 4, 4), (4, 2, 2, 2), kernel=(2, 2, 2), num_filter=4),
     "argument 'weight' has shape"),
    (lambda: _conv((1, 2, 4, 4), (4, 2, 2, 2, 2), kernel=(2, 2, 2), num_filter=4),
     "has 2"),
    (lambda: _conv((1, 2, 4, 4, 4), (4, 2, 2, 2, 2), kernel=(2, 2, 2), num_filter=4,
                   layout="NCHW"), "layout 'NCHW' expects 4-d data"),
    (lambda: _conv((1, 2, 4, 4, 4, 4), (4, 2, 2, 2, 2, 2), kernel=(2, 2, 2, 2), num_filter=4),
     "1, 2 or 3 values"),
    (lambda: _conv((1, 2, 4, 4, 4), (4, 2, 2, 2, 2), kernel=(2, 2, 2), num_filter=4,
                   stride=(1, 0, 1)), "stride"),
    (lambda: _deconv((1, 2, 4), (2, 2, 3), kernel=(3,), num_filter=2, stride=(2,), adj=(2,)),
     "smaller than the stride"),
    (lambda: _deconv((1, 2, 4), (2, 2, 3), kernel=(3,), num_filter=2, target_shape=(20,)),
     "too big"),
    (lambda: _deconv((1, 2, 4), (2, 2, 3), kernel=(3,), num_filter=2, target_shape=(5,)),
     "worked out from target_shape"),  # total 1 -> adj 1, not below stride 1
    (lambda: _deconv((1, 2, 2), (2, 2, 2), kernel=(2,), num_filter=2, pad=(2,)),
     "must be positive"),
    (lambda: _deconv((1, 3, 4, 4), (3, 1, 2, 2), kernel=(2, 2), num_filter=2, num_group=2),
     "num_filter 2|input channels"),
    (lambda: _deconv((1, 4, 4, 4), (4, 1, 2, 2), kernel=(2, 2), num_filter=3, num_group=2),
     "num_filter 3 is not divisible"),
    (lambda: _deconv((1, 2, 4, 4), (2, 3, 2, 2), kernel=(2, 2), num_filter=2),
     "argument 'weight' has shape"),
    (lambda: _deconv((1, 2, 4, 4), (2, 2, 2, 2), kernel=(2, 2), num_filter=2,
                     target_shape=(5,)), "'target_shape' has 1 values"),
    (lambda: _deconv((1, 2, 4, 4, 4), (2, 2, 2, 2, 2), kernel=(2, 2), num_filter=2),
     "has 3"),
    (lambda: _invoke("_npx_deconvolution", (onp.ones((1, 2, 4)), onp.ones((2, 2, 2)),
                                            onp.ones((3,))), {"kernel": (2,), "num_filter": 2}),
     "argument 'bias' has shape"),
    (lambda: npx.pooling(np.ones((1, 1, 2, 4, 4)), kernel=(3, 2, 2)), "exceeds"),
    (lambda: npx.pooling(np.ones((1, 1, 4, 4, 4)), kernel=(2, 2)), "has 3"),
    (lambda: npx.pooling(np.ones((1, 1, 2, 2, 2, 2)), global_pool=True), "5 dimensions"),
])
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError):
        _invoke("_npx_deconvolution", (onp.ones((1, 2, 4), onp.int32),
                                       onp.ones((2, 2, 2), onp.int32)),
                {"kernel": (2,), "num_filter": 2, "no_bias": True})
    with pytest.raises(TypeError):
        _invoke("_npx_deconvolution", (onp.ones((1, 2, 4), onp.float32), onp.ones((2, 2, 2))),
                {"kernel": (2,), "num_filter": 2, "no_bias": True})


def test_unknown_layout_is_value_error():
    with pytest.raises(ValueError):
        _deconv((1, 2, 4, 4), (2, 2, 2, 2), kernel=(2, 2), num_filter=2, layout="NHWC")


@pytest.mark.skipif(npx.num_gpus() == 0, reason="needs a GPU")
@pytest.mark.parametrize("call", [
    lambda d: npx.convolution(np.ones((1, 1, 3, 3, 3), device=d), np.ones((1, 1, 2, 2, 2),
                                                                          device=d)),
    lambda d: npx.pooling(np.ones((1, 1, 3, 3, 3), device=d), kernel=(2, 2, 2)),
    lambda d: npx.deconvolution(np.ones((1, 1, 3, 3), device=d), np.ones((1, 1, 2, 2), device=d),
                                np.ones((1,), device=d), kernel=(2, 2)),
])
def test_gpu_arrays_of_these_layers_match_the_cpu(call):
    # 3-d convolution and deconvolution run on cuDNN, 3-d pooling the CPU kernel on host
    # copies (counted in npx.gpu_host_fallbacks()): either way the CPU's values
    got = call(npx.gpu(0))
    assert got.device == npx.gpu(0)
    onp.testing.assert_allclose(got.asnumpy(), call(npx.cpu()).asnumpy(), rtol=1e-6)


# ----------------------------------------------------------------------------- Gluon layers
def _run_layer(layer, x, hybridize=False):
    layer.initialize()
    if hybridize:
        layer.hybridize()
    return layer(np.array(x))


def _params(layer):
    return {n: p.data().asnumpy() for n, p in layer.collect_params().items()}


CONV_LAYERS = [
    (gluon.nn.Conv3D, (2, 3, 4, 5, 4), dict(channels=4, kernel_size=(2, 3, 2), strides=(1, 2, 1),
                                             padding=1, dilation=(1, 1, 2)), False),
    (gluon.nn.Conv3D, (1, 4, 3, 3, 3), dict(channels=2, kernel_size=2, groups=2,
                                             use_bias=False), False),
    (gluon.nn.Conv1DTranspose, (2, 3, 5), dict(channels=4, kernel_size=3, strides=2, padding=1,
                                               output_padding=1), True),
    (gluon.nn.Conv2DTranspose, (1, 4, 3, 4), dict(channels=6, kernel_size=(3, 2),
                                                  strides=(2, 3), padding=(1, 0),
                                                  output_padding=(1, 2), groups=2,
                                                  dilation=(1, 2)), True),
    (gluon.nn.Conv3DTranspose, (1, 2, 2, 3, 2), dict(channels=3, kernel_size=2, strides=2,
                                                     use_bias=False), True),
]


@pytest.mark.parametrize("cls,shape,kw,transpose", CONV_LAYERS,
                         ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_conv_layers_match_reference(cls, shape, kw, transpose):
    x = _arr(shape, "float32")
    layer = cls(**kw)
    got = _run_layer(layer, x).asnumpy()
    p = _params(layer)
    w = next(v for k, v in p.items() if k.endswith("weight"))
    b = next((v for k, v in p.items() if k.endswith("bias")), None)
    nsp = len(shape) - 2

    def t(v):
        return (v,) * nsp if isinstance(v, int) else tuple(v)

    groups = kw.get("groups", 1)
    common = dict(stride=t(kw.get("strides", 1)), pad=t(kw.get("padding", 0)),
                  dilate=t(kw.get("dilation", 1)), num_group=groups)
    if transpose:
        assert w.shape == (shape[1], kw["channels"] // groups) + t(kw["kernel_size"])
        want = deconv_ref(x, w, b, adj=t(kw.get("output_padding", 0)), **common)
    else:
        assert w.shape == (kw["channels"], shape[1] // groups) + t(kw["kernel_size"])
        want = conv_ref(x, w, b, **common)
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv_transpose_output_size_documented():
    """MXNet's docstring: out = (in - 1) * strides - 2 * padding + kernel_size +
    output_padding."""
    layer = gluon.nn.Conv2DTranspose(5, kernel_size=(4, 3), strides=(2, 3), padding=(1, 1),
                                     output_padding=(1, 2))
    out = _run_layer(layer, onp.ones((2, 3, 6, 5), onp.float32))
    assert out.shape == (2, 5, 5 * 2 - 2 + 4 + 1, 4 * 3 - 2 + 3 + 2)


ALL_LAYERS = [
    lambda: gluon.nn.Conv3D(3, 2, padding=(1, 0, 1), activation="relu"),
    lambda: gluon.nn.Conv1DTranspose(3, 3, strides=2, output_padding=1),
    lambda: gluon.nn.Conv2DTranspose(4, (2, 3), strides=(2, 1), groups=2),
    lambda: gluon.nn.Conv3DTranspose(2, 2, strides=(1, 2, 2), output_padding=(0, 1, 0)),
    lambda: gluon.nn.MaxPool1D(3, 2, 1),
    lambda: gluon.nn.MaxPool3D((2, 2, 2), ceil_mode=True),
    lambda: gluon.nn.AvgPool1D(2),
    lambda: gluon.nn.AvgPool3D(3, strides=2, padding=1, count_include_pad=False),
    lambda: gluon.nn.GlobalMaxPool1D(),
    lambda: gluon.nn.GlobalMaxPool2D(),
    lambda: gluon.nn.GlobalMaxPool3D(),
    lambda: gluon.nn.GlobalAvgPool1D(),
    lambda: gluon.nn.GlobalAvgPool3D(),
]
_INPUT_RANK = [5, 3, 4, 5, 3, 5, 3, 5, 3, 4, 5, 3, 5]


@pytest.mark.parametrize("i", range(len(ALL_LAYERS)))
def test_layers_hybridized_equal_imperative(i):
    rank = _INPUT_RANK[i]
    shape = (2, 4) + (5, 4, 6)[:rank - 2]
    x = np.array(_arr(shape, "float32"))
    layer = ALL_LAYERS[i]()
    layer.initialize()
    want = layer(x)
    layer.hybridize()
    got = layer(x)
    assert got.shape == want.shape
    onp.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
    got2 = layer(x)  # the cached graph
    onp.testing.assert_array_equal(got2.asnumpy(), want.asnumpy())


@pytest.mark.parametrize("cls,ndim,kw", [
    (gluon.nn.MaxPool1D, 1, dict(pool_size=3, strides=2, padding=1)),
    (gluon.nn.MaxPool3D, 3, dict(pool_size=(2, 3, 2), ceil_mode=True)),
    (gluon.nn.AvgPool1D, 1, dict(pool_size=3, padding=1, count_include_pad=False)),
    (gluon.nn.AvgPool3D, 3, dict(pool_size=2, strides=(1, 2, 2), padding=(1, 0, 1))),
    (gluon.nn.GlobalMaxPool1D, 1, {}),
    (gluon.nn.GlobalMaxPool2D, 2, {}),
    (gluon.nn.GlobalMaxPool3D, 3, {}),
    (gluon.nn.GlobalAvgPool1D, 1, {}),
    (gluon.nn.GlobalAvgPool3D, 3, {}),
])
def test_pool_layers_match_reference(cls, ndim, kw):
    shape = (2, 3) + (5, 6, 7)[:ndim]
    x = _arr(shape, "float64", -2, 2)
    got = cls(**kw)(np.array(x)).asnumpy()
    name = cls.__name__
    pool_type = "max" if "Max" in name else "avg"
    if name.startswith("Global"):
        want = pool_ref(x, pool_type=pool_type, global_pool=True)
        assert got.shape == shape[:2] + (1,) * ndim
    else:
        k = kw["pool_size"]
        k = (k,) * ndim if isinstance(k, int) else k
        s = kw.get("strides", k)
        s = (s,) * ndim if isinstance(s, int) else s
        p = kw.get("padding", 0)
        p = (p,) * ndim if isinstance(p, int) else p
        want = pool_ref(x, kernel=k, pool_type=pool_type, stride=s, pad=p,
                        pooling_convention="full" if kw.get("ceil_mode") else "valid",
                        count_include_pad=kw.get("count_include_pad", True))
    onp.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv_transpose_layer_trains():
    """Gradients reach the layer's parameters: d sum(y) / d bias = output positions."""
    layer = gluon.nn.Conv1DTranspose(2, 3, strides=2, in_channels=3)
    layer.initialize()
    x = np.array(_arr((2, 3, 4), "float32"))
    with autograd.record():
        y = layer(x)
    y.backward()
    assert y.shape == (2, 2, 9)
    onp.testing.assert_allclose(layer.bias.grad().asnumpy(), [18.0, 18.0])
    w = layer.weight.data().asnumpy()
    # d sum(y) / d w[c, f, t] = sum over images and positions of x[:, c]
    want = onp.broadcast_to(x.asnumpy().sum(axis=(0, 2))[:, None, None], w.shape)
    onp.testing.assert_allclose(layer.weight.grad().asnumpy(), want, rtol=1e-5)


@pytest.mark.parametrize("make", [
    lambda: gluon.nn.Conv1D(2, 3, layout="NWC"),
    lambda: gluon.nn.Conv2D(2, 3, layout="NHWC"),
    lambda: gluon.nn.Conv3D(2, 3, layout="NDHWC"),
    lambda: gluon.nn.Conv1DTranspose(2, 3, layout="NWC"),
    lambda: gluon.nn.Conv2DTranspose(2, 3, layout="NHWC"),
    lambda: gluon.nn.Conv3DTranspose(2, 3, layout="NDHWC"),
    lambda: gluon.nn.MaxPool1D(layout="NWC"),
    lambda: gluon.nn.MaxPool3D(layout="NDHWC"),
    lambda: gluon.nn.AvgPool1D(layout="NWC"),
    lambda: gluon.nn.AvgPool3D(layout="NDHWC"),
    lambda: gluon.nn.GlobalMaxPool2D(layout="NHWC"),
    lambda: gluon.nn.GlobalAvgPool3D(layout="NDHWC"),
])
def test_layers_other_layouts_not_implemented(make):
    with pytest.raises(NotImplementedError, match="layout"):
        make()


@pytest.mark.parametrize("make,shape,exc", [
    (lambda: gluon.nn.Conv3D(2, 3), (1, 2, 4, 4), ValueError),  # 4-d input
    (lambda: gluon.nn.Conv3D(2, 4), (1, 2, 3, 5, 5), ValueError),  # kernel > input
    (lambda: gluon.nn.Conv3D(2, 2, groups=2), (1, 3, 3, 3, 3), ValueError),
    (lambda: gluon.nn.Conv2DTranspose(4, 2, groups=2), (1, 3, 3, 3), ValueError),
    (lambda: gluon.nn.Conv1DTranspose(2, 3, strides=2, output_padding=2), (1, 2, 4),
     ValueError),
    (lambda: gluon.nn.MaxPool3D(3), (1, 2, 2, 4, 4), ValueError),
    (lambda: gluon.nn.GlobalMaxPool1D(), (1, 2, 4, 4), ValueError),
])
def test_layer_bad_input(make, shape, exc):
    layer = make()
    layer.initialize()
    with pytest.raises(exc):
        layer(np.ones(shape))


@pytest.mark.parametrize("make", [
    lambda: gluon.nn.Conv3D(2, (2, 2)),
    lambda: gluon.nn.Conv2DTranspose(3, 2, groups=2),
    lambda: gluon.nn.Conv3D(2, 2, in_channels=3, groups=2),
    lambda: gluon.nn.Conv1DTranspose(2, 3, output_padding=(1, 1)),
    lambda: gluon.nn.MaxPool3D((2, 2)),
    lambda: gluon.nn.Conv3D(0, 2),
])
def test_layer_bad_params(make):
    with pytest.raises(ValueError):
        make()


def test_mxnet_positional_order():
    """MXNet 2.0's positional orders: Conv1D(channels, kernel_size, strides, padding,
    dilation, groups, layout, ...), Conv1DTranspose(..., padding, output_padding, ...),
    MaxPool1D(pool_size, strides, padding, layout, ceil_mode), MaxPool3D(pool_size, strides,
    padding, ceil_mode, layout)."""
    c = gluon.nn.Conv1DTranspose(2, 3, 2, 1, 1, 1, 1, "NCW")
    assert c._kwargs["adj"] == (1,) and c._kwargs["pad"] == (1,)
    c = gluon.nn.Conv1D(2, 3, 1, 0, 1, 1, "NCW", "relu")
    assert c._act == "relu"
    p = gluon.nn.MaxPool1D(2, None, 0, "NCW", True)
    assert p._kwargs["pooling_convention"] == "full"
    p = gluon.nn.MaxPool3D(2, None, 0, True, "NCDHW")
    assert p._kwargs["pooling_convention"] == "full"
    p = gluon.nn.AvgPool2D((2, 2), None, 0, False, "NCHW", False)
    assert p._kwargs["count_include_pad"] is False


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("pool_type,kw", [
    ("max", {"kernel": (2, 2), "stride": (2, 2)}),
    ("avg", {"kernel": (2, 2), "stride": (2, 2)}),
    ("max", {"kernel": (3, 3), "stride": (1, 1), "pad": (1, 1)}),
    ("avg", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
])
def test_16_bit_pooling_matches_the_float64_reference(dtype, pool_type, kw):
    """16-bit floats pool in float32 and round once: the result is the float64 reference
    rounded to the dtype (to one unit in its last place for averages), and max pooling's
    gradient reaches each window's first maximum exactly."""
    rng = onp.random.default_rng(5)
    xs = rng.integers(-8, 9, size=(2, 3, 6, 7)) / 4.0  # exact in both dtypes
    x = np.array(xs.astype(onp.float32)).astype(dtype)
    x.attach_grad()
    with autograd.record():
        y = npx.pooling(x, pool_type=pool_type, **kw)
    assert str(y.dtype) == dtype
    want = pool_ref(xs, pool_type=pool_type, **kw)
    got = y.astype("float64").asnumpy()
    ulp = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
    onp.testing.assert_allclose(got, want, rtol=ulp, atol=0)
    y.backward(np.ones(y.shape, dtype=dtype))
    if pool_type == "max":
        g = max_pool_grad_ref(xs, onp.ones(y.shape), **kw)
        onp.testing.assert_array_equal(x.grad.astype("float64").asnumpy(), g)


def test_inference_convolution_sees_weights_changed_in_place():
    """Outside training, oneDNN's reorder of each weight array is kept while the weights are
    unchanged: in-place changes and several weight arrays of one shape must still be used."""
    rng = onp.random.default_rng(3)
    x = rng.standard_normal((2, 16, 8, 8)).astype(onp.float32)
    ws = [rng.standard_normal((16, 16, 3, 3)).astype(onp.float32) for _ in range(3)]

    def ref(w):  # direct convolution, float64
        xp = onp.pad(x.astype(onp.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = onp.zeros((2, 16, 8, 8))
        for i in range(3):
            for j in range(3):
                out += onp.einsum("nchw,fc->nfhw", xp[:, :, i:i + 8, j:j + 8], w[:, :, i, j])
        return out

    arrays = [np.array(w) for w in ws]
    xd = np.array(x)
    for _ in range(2):  # layers of one shape take turns on one plan
        for w, a in zip(ws, arrays):
            got = npx.convolution(xd, a, kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True)
            onp.testing.assert_allclose(got.asnumpy(), ref(w), rtol=1e-4, atol=1e-4)
    arrays[0][:] = np.array(ws[1])  # changed in place
    got = npx.convolution(xd, arrays[0], kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True)
    onp.testing.assert_allclose(got.asnumpy(), ref(ws[1]), rtol=1e-4, atol=1e-4)
