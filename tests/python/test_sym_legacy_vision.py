"""MXNet 1.x's legacy ops as symbols (mx.sym.LRN, UpSampling, InstanceNorm, L2Normalization,
GroupNorm, GridGenerator, BilinearSampler, SpatialTransformer, Correlation, depth_to_space,
khatri_rao, histogram, ravel_multi_index, ...), built from the MXNet graph node that load_json
expands: their values against mx.nd's on the same inputs and against NumPy computations written
here from MXNet's operator definitions (lrn-inl.h, upsampling-inl.h, instance_norm-inl.h,
l2_normalization-inl.h, group_norm-inl.h, grid_generator-inl.h, bilinear_sampler-inl.h,
correlation-inl.h, krprod.h, ravel.h, histogram-inl.h), never ndx's own output; infer_shape;
gradients through a bound executor against mx.nd's autograd; tojson round trips; MXNet 1.x
graph JSON with the same nodes; MXNet's naming and automatic variables; errors."""
import json

import numpy as onp
import pytest

import ndx
from ndx import autograd, nd, np, sym

RNG = onp.random.default_rng(5)


def f32(*shape):
    return RNG.standard_normal(shape).astype("float32")


def run(s, **values):
    with autograd.predict_mode():
        outs = s.eval(**{k: np.array(v) for k, v in values.items()})
    return [o.asnumpy() for o in outs]


def nd_run(fn, *args, **kwargs):
    out = fn(*[nd.array(a) if isinstance(a, onp.ndarray) else a for a in args], **kwargs)
    return [o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


X, Y, Z = sym.var("x"), sym.var("y"), sym.var("z")


# ---- NumPy references ------------------------------------------------------------------------

def np_lrn(x, n, alpha=1e-4, beta=0.75, knorm=2.0):
    half, c = n // 2, x.shape[1]
    sq = onp.pad(x.astype("float64") ** 2, ((0, 0), (half, half), (0, 0), (0, 0)))
    window = sum(sq[:, i:i + c] for i in range(n))
    return x * (knorm + alpha / n * window) ** -beta


def np_instance_norm(x, gamma, beta, eps=1e-3):
    axes = tuple(range(2, x.ndim))
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean) / onp.sqrt(var + eps) * gamma.reshape(shape) + beta.reshape(shape)


def np_group_norm(x, gamma, beta, groups, eps=1e-5):
    """MXNet 1.x: gamma and beta one value a group."""
    g = x.reshape(x.shape[0], groups, -1).astype("float64")
    mean, std = g.mean(axis=2, keepdims=True), onp.sqrt(g.var(axis=2, keepdims=True) + eps)
    y = (g - mean) / std * gamma[None, :, None] + beta[None, :, None]
    return y.reshape(x.shape), mean[..., 0], std[..., 0]


def np_l2_normalization(x, mode, eps=1e-10):
    axes = {"instance": tuple(range(1, x.ndim)), "channel": (1,),
            "spatial": tuple(range(2, x.ndim))}[mode]
    return x / onp.sqrt((x.astype("float64") ** 2).sum(axis=axes, keepdims=True) + eps)


def np_depth_to_space(x, b):
    """DCR: out[n, c, h * b + i, w * b + j] = x[n, (i * b + j) * C' + c, h, w]."""
    n, c, h, w = x.shape
    cc = c // (b * b)
    out = onp.zeros((n, cc, h * b, w * b), x.dtype)
    for i in range(b):
        for j in range(b):
            out[:, :, i::b, j::b] = x[:, (i * b + j) * cc:(i * b + j + 1) * cc]
    return out


def np_space_to_depth(x, b):
    n, c, h, w = x.shape
    out = onp.zeros((n, c * b * b, h // b, w // b), x.dtype)
    for i in range(b):
        for j in range(b):
            out[:, (i * b + j) * c:(i * b + j + 1) * c] = x[:, :, i::b, j::b]
    return out


def np_affine_grid(loc, th, tw):
    """The target's (x, y, 1), x and y from -1 to 1, under each (2, 3) matrix."""
    ys, xs = onp.meshgrid(onp.linspace(-1, 1, th), onp.linspace(-1, 1, tw), indexing="ij")
    dst = onp.stack([xs.ravel(), ys.ravel(), onp.ones(th * tw)])
    return (loc.reshape(-1, 2, 3).astype("float64") @ dst).reshape(-1, 2, th, tw)


def np_bilinear_sampler(data, grid):
    """Each output pixel: the four neighbours of ((gx + 1) (W - 1) / 2, (gy + 1) (H - 1) / 2),
    weighted by their distances, zero outside the data."""
    n, c, h, w = data.shape
    out = onp.zeros((n, c) + grid.shape[2:])
    for b in range(n):
        for i in range(grid.shape[2]):
            for j in range(grid.shape[3]):
                x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
                y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
                x0, y0 = int(onp.floor(x)), int(onp.floor(y))
                for yy in (y0, y0 + 1):
                    for xx in (x0, x0 + 1):
                        if 0 <= yy < h and 0 <= xx < w:
                            out[b, :, i, j] += data[b, :, yy, xx] * \
                                (1 - abs(x - xx)) * (1 - abs(y - yy))
    return out


def np_correlation(a, b, k, md, s1, s2, pad, multiply=True):
    """FlowNet: out[n, d, y, x] = the sum over channels and the k x k window at (y s1 + md,
    x s1 + md) (padded coordinates) of a * (b shifted by d), over k^2 C."""
    n, c, h, w = a.shape
    pads = ((0, 0), (0, 0), (pad, pad), (pad, pad))
    a, b = onp.pad(a, pads).astype("float64"), onp.pad(b, pads).astype("float64")
    border = md + (k - 1) // 2
    th = -(-(h + 2 * pad - 2 * border) // s1)
    tw = -(-(w + 2 * pad - 2 * border) // s1)
    r = md // s2
    shifts = [(dy * s2, dx * s2) for dy in range(-r, r + 1) for dx in range(-r, r + 1)]
    out = onp.zeros((n, len(shifts), th, tw))
    for d, (sy, sx) in enumerate(shifts):
        for y in range(th):
            for x in range(tw):
                y1, x1 = y * s1 + md, x * s1 + md
                p = a[:, :, y1:y1 + k, x1:x1 + k]
                q = b[:, :, y1 + sy:y1 + sy + k, x1 + sx:x1 + sx + k]
                v = p * q if multiply else abs(p - q)
                out[:, d, y, x] = v.sum(axis=(1, 2, 3)) / (k * k * c)
    return out


# ---- values against NumPy --------------------------------------------------------------------

def test_lrn_alexnet_call_against_numpy_and_nd():
    x = f32(2, 7, 3, 4) * 3
    s = sym.LRN(data=X, alpha=0.0001, beta=0.75, knorm=2, nsize=5, name="norm1")
    got = run(s, x=x)[0]
    onp.testing.assert_allclose(got, np_lrn(x, 5), rtol=1e-5)
    onp.testing.assert_array_equal(got, nd_run(nd.LRN, x, nsize=5, knorm=2)[0])
    got = run(sym.LRN(X, 0.1, 0.5, 1.0, 3), x=x)[0]  # (MXNet's positional order)
    onp.testing.assert_allclose(got, np_lrn(x, 3, 0.1, 0.5, 1.0), rtol=1e-5)


def test_upsampling_nearest_against_numpy_and_bilinear_against_nd():
    x = f32(2, 3, 2, 3)
    got = run(sym.UpSampling(X, scale=3, sample_type="nearest"), x=x)[0]
    onp.testing.assert_array_equal(got, x.repeat(3, axis=2).repeat(3, axis=3))
    w = f32(3, 1, 4, 4)
    up = sym.UpSampling(X, scale=2, sample_type="bilinear", num_filter=3, name="up")
    onp.testing.assert_allclose(
        run(up, x=x, up_weight=w)[0],
        nd_run(nd.UpSampling, x, w, scale=2, sample_type="bilinear", num_filter=3)[0],
        rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("eps", [1e-3, 0.5])
def test_instance_norm_against_numpy_and_nd(eps):
    x, gamma, beta = f32(2, 3, 4, 5), f32(3), f32(3)
    got = run(sym.InstanceNorm(X, Y, Z, eps=eps), x=x, y=gamma, z=beta)[0]
    onp.testing.assert_allclose(got, np_instance_norm(x, gamma, beta, eps), rtol=1e-4,
                                atol=1e-5)
    onp.testing.assert_allclose(got, nd_run(nd.InstanceNorm, x, gamma, beta, eps=eps)[0],
                                rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["instance", "channel", "spatial"])
def test_l2_normalization_against_numpy_and_nd(mode):
    x = f32(2, 3, 4, 2)
    got = run(sym.L2Normalization(X, mode=mode, eps=1e-6), x=x)[0]
    onp.testing.assert_allclose(got, np_l2_normalization(x, mode, 1e-6), rtol=1e-5)
    onp.testing.assert_allclose(got, nd_run(nd.L2Normalization, x, mode=mode, eps=1e-6)[0],
                                rtol=1e-6)


def test_group_norm_against_numpy_and_nd_with_mean_and_std():
    x, gamma, beta = f32(2, 6, 3, 2), f32(3), f32(3)
    out, mean, std = run(sym.GroupNorm(X, Y, Z, num_groups=3, output_mean_var=True),
                         x=x, y=gamma, z=beta)
    want = np_group_norm(x, gamma, beta, 3)
    for got, ref in zip((out, mean, std), want):
        onp.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    ref = nd_run(nd.GroupNorm, x, gamma, beta, num_groups=3, output_mean_var=True)
    for got, r in zip((out, mean, std), ref):
        onp.testing.assert_allclose(got, r, rtol=1e-5, atol=1e-6)
    assert len(sym.GroupNorm(X, Y, Z, num_groups=3)) == 1  # (mean and std hidden by default)


@pytest.mark.parametrize("b", [2, 3])
def test_depth_to_space_and_space_to_depth_against_numpy_and_nd(b):
    x = f32(2, 2 * b * b, 3, 2)
    got = run(sym.depth_to_space(X, block_size=b), x=x)[0]
    onp.testing.assert_array_equal(got, np_depth_to_space(x, b))
    onp.testing.assert_array_equal(got, nd_run(nd.depth_to_space, x, b)[0])
    back = run(sym.space_to_depth(X, block_size=b), x=got)[0]
    onp.testing.assert_array_equal(back, x)
    y = f32(2, 3, 2 * b, 3 * b)
    got = run(sym.space_to_depth(X, b), x=y)[0]
    onp.testing.assert_array_equal(got, np_space_to_depth(y, b))
    onp.testing.assert_array_equal(got, nd_run(nd.space_to_depth, y, b)[0])


def test_grid_generator_affine_and_warp_against_numpy_and_nd():
    loc = f32(2, 6)
    got = run(sym.GridGenerator(X, transform_type="affine", target_shape=(3, 5)), x=loc)[0]
    onp.testing.assert_allclose(got, np_affine_grid(loc, 3, 5), rtol=1e-5, atol=1e-6)
    onp.testing.assert_array_equal(
        got, nd_run(nd.GridGenerator, loc, transform_type="affine", target_shape=(3, 5))[0])
    flow = f32(2, 2, 3, 4)
    got = run(sym.GridGenerator(X, transform_type="warp"), x=flow)[0]
    want = onp.stack([(flow[:, 0] + onp.arange(4)) / 1.5 - 1,
                      (flow[:, 1] + onp.arange(3)[:, None]) / 1.0 - 1], axis=1)
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    onp.testing.assert_array_equal(got, nd_run(nd.GridGenerator, flow,
                                               transform_type="warp")[0])


def test_bilinear_sampler_and_spatial_transformer_against_numpy_and_nd():
    data = f32(2, 3, 4, 5)
    grid = (f32(2, 2, 3, 4) * 0.7).clip(-1.3, 1.3)  # (some points outside: zeros there)
    got = run(sym.BilinearSampler(X, Y), x=data, y=grid)[0]
    onp.testing.assert_allclose(got, np_bilinear_sampler(data, grid), rtol=1e-4, atol=1e-5)
    onp.testing.assert_array_equal(got, nd_run(nd.BilinearSampler, data, grid)[0])
    loc = onp.array([[0.9, 0.1, 0.05, -0.1, 0.8, 0.1], [1.2, 0, -0.1, 0, 1.1, 0.2]], "float32")
    got = run(sym.SpatialTransformer(X, Y, target_shape=(3, 6)), x=data, y=loc)[0]
    want = np_bilinear_sampler(data, np_affine_grid(loc, 3, 6))
    onp.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    onp.testing.assert_array_equal(
        got, nd_run(nd.SpatialTransformer, data, loc, target_shape=(3, 6))[0])


@pytest.mark.parametrize("k,md,s1,s2,pad,mult", [
    (1, 1, 1, 1, 0, True), (3, 2, 2, 1, 2, True), (1, 4, 1, 2, 4, False), (3, 1, 3, 1, 0, True)])
def test_correlation_against_numpy_and_nd(k, md, s1, s2, pad, mult):
    a, b = f32(2, 3, 8, 9), f32(2, 3, 8, 9)
    kw = dict(kernel_size=k, max_displacement=md, stride1=s1, stride2=s2, pad_size=pad,
              is_multiply=mult)
    got = run(sym.Correlation(X, Y, **kw), x=a, y=b)[0]
    onp.testing.assert_allclose(got, np_correlation(a, b, k, md, s1, s2, pad, mult),
                                rtol=1e-4, atol=1e-5)
    onp.testing.assert_array_equal(got, nd_run(nd.Correlation, a, b, **kw)[0])


def test_indexing_ops_against_numpy_and_nd():
    m = [f32(2, 3), f32(4, 3), f32(3, 3)]
    got = run(sym.khatri_rao(X, Y, Z), x=m[0], y=m[1], z=m[2])[0]
    want = onp.einsum("ak,bk,ck->abck", *m).reshape(24, 3)
    onp.testing.assert_allclose(got, want, rtol=1e-6)
    onp.testing.assert_array_equal(got, nd_run(nd.khatri_rao, *m)[0])
    onp.testing.assert_array_equal(run(sym.khatri_rao(X), x=m[0])[0], m[0])
    multi = onp.array([[3, 6, 6], [4, 5, 1]], "float32")  # (MXNet's documented example)
    got = run(sym.ravel_multi_index(X, shape=(7, 6)), x=multi)[0]
    onp.testing.assert_array_equal(got, [22, 41, 37])
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(got, nd_run(nd.ravel_multi_index, multi, shape=(7, 6))[0])
    flat = onp.array([[22, 41], [37, 0]], "int64")
    got = run(sym.unravel_index(X, shape=(7, 6)), x=flat)[0]
    onp.testing.assert_array_equal(got, onp.stack(onp.unravel_index(flat, (7, 6))))
    neg = onp.array([-5.0, 7.0], "float32")  # (C division toward zero, as MXNet's kernel)
    onp.testing.assert_array_equal(run(sym.unravel_index(X, shape=(-1, 4)), x=neg)[0],
                                   nd_run(nd.unravel_index, neg, shape=(-1, 4))[0])
    lhs, mhs, rhs = f32(3, 4), f32(3), onp.array([0, 3, 1.7], "float32")
    got = run(sym.fill_element_0index(X, Y, Z), x=lhs, y=mhs, z=rhs)[0]
    want = lhs.copy()
    want[[0, 1, 2], [0, 3, 1]] = mhs
    onp.testing.assert_array_equal(got, want)
    onp.testing.assert_array_equal(got, nd_run(nd.fill_element_0index, lhs, mhs, rhs)[0])
    # arguments in the node's input order (MXNet's), so positional binding lines up
    s = sym.fill_element_0index(sym.var("lhs"), sym.var("mhs"), sym.var("rhs"))
    assert s.list_arguments() == ["lhs", "mhs", "rhs"]


def test_histogram_against_numpy_and_nd():
    a = f32(4, 6) * 2
    counts, edges = run(sym.histogram(X, bins=5, range=(-2, 3)), x=a)
    want_c, want_e = onp.histogram(a, bins=5, range=(-2, 3))
    onp.testing.assert_array_equal(counts, want_c)
    assert counts.dtype == onp.int64 and edges.dtype == onp.float32
    onp.testing.assert_allclose(edges, want_e, rtol=1e-6)
    bins = onp.array([-1.0, 0.0, 0.5, 2.0], "float32")
    a[0, :2] = [onp.nan, 2.0]  # (NaN not counted; 2.0, the last edge, in the last bin)
    got = run(sym.histogram(X, bins=Y), x=a, y=bins)
    ref = nd_run(nd.histogram, a, bins=nd.array(bins))
    for g, r in zip(got, ref):
        onp.testing.assert_array_equal(g, r)
    onp.testing.assert_array_equal(got[0], onp.histogram(a[~onp.isnan(a)], bins=bins)[0])


# ---- the other legacy ops against mx.nd (and NumPy where it is one line) -----------------------

D = f32(2, 3, 4)
D_NAN = D.copy()
D_NAN[0, 1, 2] = onp.nan
SEQ, LENS = f32(4, 2, 3), onp.array([2, 3], "float32")
ROWS, PICK = f32(3, 5), onp.array([4, 0, 2], "float32")
CTC, LABELS = f32(5, 2, 4), onp.array([[1, 2, 0], [3, 0, 0]], "float32")

CASES = [  # (id, symbol of X / Y, nd function, inputs, NumPy reference or None)
    ("hard_sigmoid", lambda: sym.hard_sigmoid(X, alpha=0.3), lambda x: nd.hard_sigmoid(x, 0.3),
     (D * 3,), lambda x: onp.clip(0.3 * x + 0.5, 0, 1)),
    ("softmin", lambda: sym.softmin(X, axis=1), lambda x: nd.softmin(x, axis=1), (D,),
     lambda x: onp.exp(-x) / onp.exp(-x).sum(axis=1, keepdims=True)),
    ("reverse", lambda: sym.reverse(X, axis=(0, -1)), lambda x: nd.reverse(x, axis=(0, 2)),
     (D,), lambda x: x[::-1, :, ::-1]),
    ("flip", lambda: sym.flip(X, axis=1), lambda x: nd.flip(x, axis=1), (D,), None),
    ("nansum", lambda: sym.nansum(X, axis=(1, 2)), lambda x: nd.nansum(x, axis=(1, 2)),
     (D_NAN,), lambda x: onp.nansum(x, axis=(1, 2))),
    ("nanprod", lambda: sym.nanprod(X, axis=0), lambda x: nd.nanprod(x, axis=0), (D_NAN,),
     None),
    ("broadcast_axis", lambda: sym.broadcast_axis(X, axis=(1, -1), size=(3, 2)),
     lambda x: nd.broadcast_axis(x, axis=(1, 3), size=(3, 2)), (f32(2, 1, 4, 1),),
     lambda x: onp.broadcast_to(x, (2, 3, 4, 2))),
    ("argmax_channel", lambda: sym.argmax_channel(X), nd.argmax_channel, (D,),
     lambda x: x.argmax(axis=-1).astype("float32")),
    ("batch_take", lambda: sym.batch_take(X, Y), nd.batch_take, (ROWS, PICK),
     lambda a, i: a[onp.arange(3), i.astype(int)]),
    ("moments", lambda: sym.moments(X, axes=(0, 2)), lambda x: nd.moments(x, axes=(0, 2)),
     (D,), lambda x: [x.mean(axis=(0, 2)), x.var(axis=(0, 2))]),
    ("norm", lambda: sym.norm(X, axis=1), lambda x: nd.norm(x, axis=1), (D,),
     lambda x: onp.sqrt((x ** 2).sum(axis=1))),
    ("norm_l1", lambda: sym.norm(X, ord=1, axis=(0, 2), keepdims=True),
     lambda x: nd.norm(x, ord=1, axis=(0, 2), keepdims=True), (D,),
     lambda x: abs(x).sum(axis=(0, 2), keepdims=True)),
    ("softmax_cross_entropy", lambda: sym.softmax_cross_entropy(X, Y),
     nd.softmax_cross_entropy, (ROWS, PICK), None),
    ("cast_storage", lambda: sym.cast_storage(X, stype="default"),
     lambda x: nd.cast_storage(x, "default"), (D,), lambda x: x),
    ("size_array", lambda: sym.size_array(X), nd.size_array, (D,), lambda x: [x.size]),
    ("CTCLoss", lambda: sym.CTCLoss(X, Y), nd.CTCLoss, (CTC, LABELS), None),
    ("sum_axis", lambda: sym.sum_axis(X, axis=1), lambda x: nd.sum_axis(x, axis=1), (D,),
     lambda x: x.sum(axis=1)),
    ("max_axis", lambda: sym.max_axis(X, axis=(0, 2), keepdims=True),
     lambda x: nd.max_axis(x, axis=(0, 2), keepdims=True), (D,), None),
    ("min_axis", lambda: sym.min_axis(X, axis=2), lambda x: nd.min_axis(x, axis=2), (D,),
     None),
    ("SwapAxis", lambda: sym.SwapAxis(X, dim1=0, dim2=2),
     lambda x: nd.SwapAxis(x, dim1=0, dim2=2), (D,), lambda x: x.swapaxes(0, 2)),
    ("identity", lambda: sym.identity(X), nd.identity, (D,), lambda x: x),
    ("cast", lambda: sym.cast(X, dtype="float16"), lambda x: nd.cast(x, "float16"), (D,),
     lambda x: x.astype("float16")),
    ("rsqrt", lambda: sym.rsqrt(X), nd.rsqrt, (abs(D) + 0.5,), lambda x: 1 / onp.sqrt(x)),
    ("rcbrt", lambda: sym.rcbrt(X), nd.rcbrt, (abs(D) + 0.5,), lambda x: 1 / onp.cbrt(x)),
    ("smooth_l1", lambda: sym.smooth_l1(X, scalar=2.0), lambda x: nd.smooth_l1(x, 2.0),
     (D,), None),
    ("Pad", lambda: sym.Pad(X, mode="edge", pad_width=(0, 0, 0, 0, 1, 2, 2, 1)),
     lambda x: nd.Pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 2, 2, 1)), (f32(1, 2, 3, 2),),
     lambda x: onp.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode="edge")),
    ("SequenceMask", lambda: sym.SequenceMask(X, Y, use_sequence_length=True, value=-1.0),
     lambda x, n: nd.SequenceMask(x, n, use_sequence_length=True, value=-1.0), (SEQ, LENS),
     None),
    ("SequenceLast", lambda: sym.SequenceLast(X, Y, use_sequence_length=True),
     lambda x, n: nd.SequenceLast(x, n, use_sequence_length=True), (SEQ, LENS), None),
    ("SequenceReverse", lambda: sym.SequenceReverse(X), nd.SequenceReverse, (SEQ,),
     lambda x: x[::-1]),
    ("batch_dot", lambda: sym.batch_dot(X, Y, transpose_b=True),
     lambda a, b: nd.batch_dot(a, b, transpose_b=True), (SEQ, SEQ),
     lambda a, b: a @ b.swapaxes(1, 2)),
    ("slice_axis", lambda: sym.slice_axis(X, axis=-1, begin=1, end=None),
     lambda x: nd.slice_axis(x, axis=-1, begin=1, end=None), (D,), lambda x: x[..., 1:]),
    ("slice_like", lambda: sym.slice_like(X, Y, axes=(0, 2)),
     lambda a, b: nd.slice_like(a, b, axes=(0, 2)), (D, D[:1, :, :2]), lambda a, b: a[:1, :, :2]),
    ("topk", lambda: sym.topk(X, k=2, ret_typ="both"), lambda x: nd.topk(x, k=2, ret_typ="both"),
     (ROWS,), None),
    ("split_v2", lambda: sym.split_v2(X, (1, 3), axis=1), lambda x: nd.split_v2(x, (1, 3), 1),
     (ROWS,), lambda x: onp.split(x, (1, 3), axis=1)),
    ("add_n", lambda: sym.add_n(X, Y, X), lambda a, b: nd.add_n(a, b, a), (ROWS, ROWS * 2),
     lambda a, b: a + b + a),
    ("ElementWiseSum", lambda: sym.ElementWiseSum(X, Y), lambda a, b: nd.ElementWiseSum(a, b),
     (ROWS, ROWS), lambda a, b: a + b),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_legacy_op_against_nd_and_numpy(case):
    _, make, nd_fn, args, ref = case
    got = run(make(), **dict(zip("xy", args)))
    want = nd_run(nd_fn, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        onp.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    if ref is not None:
        ref = ref(*args)
        for g, r in zip(got, ref if isinstance(ref, list) else [ref]):
            onp.testing.assert_allclose(g, onp.asarray(r), rtol=1e-5, atol=1e-6)


def test_full_reductions_keep_one_axis_as_mxnets():
    """(broadcast_reduce_op.h: a reduction over every axis gives shape (1,), not ())."""
    for s in (sym.sum_axis(X), sym.nansum(X), sym.norm(X)):
        assert s.infer_shape(x=(2, 3))[1] == [(1,)]
    assert sym.moments(X).infer_shape(x=(2, 3))[1] == [(1,), (1,)]
    onp.testing.assert_allclose(run(sym.norm(X), x=D)[0], [onp.sqrt((D ** 2).sum())],
                                rtol=1e-6)


# ---- infer_shape, automatic variables, names -------------------------------------------------

def test_infer_shape_of_the_vision_ops():
    assert sym.LRN(X, nsize=3).infer_shape(x=(2, 6, 3, 3)) == \
        ([(2, 6, 3, 3)], [(2, 6, 3, 3)], [])
    assert sym.GridGenerator(X, target_shape=(4, 5)).infer_shape(x=(2, 6))[1] == [(2, 2, 4, 5)]
    assert sym.BilinearSampler(X, Y).infer_shape(x=(2, 3, 5, 6), y=(2, 2, 4, 7))[1] == \
        [(2, 3, 4, 7)]
    assert sym.SpatialTransformer(X, Y, target_shape=(4, 5)).infer_shape(
        x=(2, 3, 5, 6), y=(2, 6))[1] == [(2, 3, 4, 5)]
    # FlowNet's: (2 * (20 // 2) + 1)^2 = 441 channels, the padded size kept by stride 1
    c = sym.Correlation(X, Y, kernel_size=1, max_displacement=20, stride1=1, stride2=2,
                        pad_size=20)
    assert c.infer_shape(x=(1, 4, 12, 16), y=(1, 4, 12, 16))[1] == [(1, 441, 12, 16)]
    assert sym.depth_to_space(X, 2).infer_shape(x=(1, 8, 3, 5))[1] == [(1, 2, 6, 10)]
    assert sym.space_to_depth(X, 2).infer_shape(x=(1, 2, 6, 10))[1] == [(1, 8, 3, 5)]
    assert sym.histogram(X, bins=4, range=(0, 1)).infer_shape(x=(3, 5))[1] == [(4,), (5,)]
    assert sym.khatri_rao(X, Y).infer_shape(x=(2, 3), y=(4, 3))[1] == [(8, 3)]


def test_parameters_become_variables_with_shapes_inferred_as_mxnets():
    """MXNet's '<name>_<input>' variables; as MXNet's FInferShape, gamma / beta (C,) for
    InstanceNorm, (num_groups,) for 1.x's GroupNorm, the bilinear weight (C, 1, k, k)."""
    s = sym.InstanceNorm(data=X, name="in1")
    assert s.list_arguments() == ["x", "in1_gamma", "in1_beta"]
    assert s.infer_shape(x=(2, 3, 4, 4)) == ([(2, 3, 4, 4), (3,), (3,)], [(2, 3, 4, 4)], [])
    assert s.list_auxiliary_states() == []
    s = sym.GroupNorm(X, num_groups=2, name="gn")
    assert s.infer_shape(x=(2, 6, 3))[0] == [(2, 6, 3), (2,), (2,)]
    s = sym.UpSampling(X, scale=2, sample_type="bilinear", num_filter=3, name="up")
    assert s.list_arguments() == ["x", "up_weight"]
    assert s.infer_shape(x=(1, 3, 4, 4))[0][1] == (3, 1, 4, 4)
    assert sym.LRN(X, nsize=5).list_arguments() == ["x"]  # (no parameters)
    assert sym.SpatialTransformer(target_shape=(2, 2), name="st").list_arguments() == \
        ["st_data", "st_loc"]
    assert sym.SequenceMask(X, use_sequence_length=True, name="sm").list_arguments() == \
        ["x", "sm_sequence_length"]
    assert sym.SequenceMask(X, name="sm").list_arguments() == ["x"]
    assert sym.CTCLoss(X, Y, use_label_lengths=True, name="ctc").list_arguments() == \
        ["x", "y", "ctc_label_lengths"]


def test_names_prefixes_attributes_and_inputs_by_keyword():
    a, b = sym.LRN(X, nsize=3), sym.LRN(X, nsize=3)
    assert a.name.startswith("lrn") and b.name.startswith("lrn") and a.name != b.name
    assert sym.LRN(X, nsize=3, name="norm1").list_outputs() == ["norm1_output"]
    with ndx.name.Prefix("net_"):
        s = sym.InstanceNorm(X, lr_mult=0.5)
    gamma = [n for n in s.list_arguments() if n.endswith("_gamma")][0]
    assert gamma.startswith("net_instancenorm")
    assert s.attr_dict()[gamma] == {"__lr_mult__": "0.5"}
    with sym.AttrScope(ctx_group="dev1"):
        s = sym.GroupNorm(X, num_groups=1, name="gn")
    assert s.attr_dict()["gn_beta"] == {"__ctx_group__": "dev1"}
    data, grid = f32(1, 2, 3, 3), f32(1, 2, 2, 2) * 0.5
    by_kw = run(sym.BilinearSampler(grid=Y, data=X), x=data, y=grid)[0]
    onp.testing.assert_array_equal(by_kw, run(sym.BilinearSampler(X, Y), x=data, y=grid)[0])
    same = run(sym.Correlation(X, X, max_displacement=1), x=data)[0]  # (one symbol twice)
    onp.testing.assert_allclose(same, nd_run(nd.Correlation, data, data)[0], rtol=1e-6)


# ---- gradients through an executor, against mx.nd's autograd --------------------------------

def executor_grads(s, values, head):
    args = {k: np.array(v) for k, v in values.items()}
    grads = {k: np.zeros(v.shape) for k, v in values.items()}
    exe = s.bind(ndx.cpu(), args, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward([np.array(head)])
    return {k: g.asnumpy() for k, g in grads.items()}


def nd_grads(fn, values, head):
    arrays = {k: nd.array(v) for k, v in values.items()}
    for a in arrays.values():
        a.attach_grad()
    with autograd.record():
        out = fn(**arrays)
    out.backward(nd.array(head))
    return {k: a.grad.asnumpy() for k, a in arrays.items()}


GRAD_CASES = [
    ("LRN", sym.LRN(X, nsize=3, alpha=0.1), lambda x: nd.LRN(x, nsize=3, alpha=0.1),
     {"x": f32(2, 5, 3, 2)}, (2, 5, 3, 2)),
    ("InstanceNorm", sym.InstanceNorm(X, Y, Z), lambda x, y, z: nd.InstanceNorm(x, y, z),
     {"x": f32(2, 3, 4, 2), "y": f32(3), "z": f32(3)}, (2, 3, 4, 2)),
    ("BilinearSampler", sym.BilinearSampler(X, Y), lambda x, y: nd.BilinearSampler(x, y),
     {"x": f32(2, 3, 4, 5), "y": f32(2, 2, 3, 3) * 0.6}, (2, 3, 3, 3)),
    ("Correlation", sym.Correlation(X, Y, kernel_size=3, max_displacement=1, pad_size=1),
     lambda x, y: nd.Correlation(x, y, kernel_size=3, max_displacement=1, pad_size=1),
     {"x": f32(1, 2, 5, 5), "y": f32(1, 2, 5, 5)}, (1, 9, 3, 3)),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_executor_gradients_match_nd_autograd(case):
    _, s, fn, values, out_shape = case
    head = f32(*out_shape)
    got, want = executor_grads(s, values, head), nd_grads(fn, values, head)
    for k in values:
        assert onp.abs(want[k]).max() > 0
        onp.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5)


# ---- saved graphs and MXNet's graph JSON -----------------------------------------------------

def test_a_saved_and_reloaded_symbol_gives_the_same_result():
    data, loc = f32(2, 4, 6, 6), f32(2, 6) * 0.3 + [1, 0, 0, 0, 1, 0]
    st = sym.SpatialTransformer(X, Y, target_shape=(4, 4), name="st")
    corr = sym.Correlation(st, st, max_displacement=1, pad_size=1, name="corr")
    net = sym.GroupNorm(sym.LRN(corr, nsize=3), num_groups=3, name="gn")
    net = sym.Group([net, sym.histogram(sym.depth_to_space(st, 2), bins=4, range=(-1, 1))[0]])
    values = {"x": data, "y": loc.astype("float32"), "gn_gamma": f32(3), "gn_beta": f32(3)}
    again = sym.load_json(net.tojson())
    assert again.list_arguments() == net.list_arguments()
    for a, b in zip(run(net, **values), run(again, **values)):
        onp.testing.assert_array_equal(a, b)


def mxnet_graph(nodes, heads):
    """A graph as MXNet 1.x writes it: string attrs, [node, output, version] entries."""
    for node in nodes:
        node.setdefault("inputs", [])
        node["inputs"] = [[e, 0, 0] for e in node["inputs"]]
        if "attrs" in node:
            node["attrs"] = {k: str(v) for k, v in node["attrs"].items()}
    return json.dumps({"nodes": nodes,
                       "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
                       "node_row_ptr": list(range(len(nodes) + 1)),
                       "heads": [[h, 0, 0] for h in heads],
                       "attrs": {"mxnet_version": ["int", 10600]}})


def test_alexnet_style_mxnet_json_is_the_graph_sym_builds():
    """conv -> relu -> LRN -> pool, as MXNet 1.x saves AlexNet's first block, and as
    mx.sym builds it: one implementation, the same graph JSON and values."""
    text = mxnet_graph([
        {"op": "null", "name": "data"}, {"op": "null", "name": "conv1_weight"},
        {"op": "null", "name": "conv1_bias"},
        {"op": "Convolution", "name": "conv1", "inputs": [0, 1, 2],
         "attrs": {"kernel": (3, 3), "num_filter": 6, "stride": (1, 1)}},
        {"op": "Activation", "name": "relu1", "inputs": [3], "attrs": {"act_type": "relu"}},
        {"op": "LRN", "name": "norm1", "inputs": [4],
         "attrs": {"alpha": 0.0001, "beta": 0.75, "knorm": 2, "nsize": 5}},
        {"op": "Pooling", "name": "pool1", "inputs": [5],
         "attrs": {"kernel": (2, 2), "pool_type": "max", "stride": (2, 2)}}], [6])
    net = sym.Variable("data")
    net = sym.Convolution(net, kernel=(3, 3), num_filter=6, stride=(1, 1), name="conv1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.LRN(net, alpha=0.0001, beta=0.75, knorm=2, nsize=5, name="norm1")
    net = sym.Pooling(net, kernel=(2, 2), pool_type="max", stride=(2, 2), name="pool1")
    loaded = sym.load_json(text)
    assert loaded.tojson() == net.tojson()
    values = {"data": f32(1, 3, 9, 9), "conv1_weight": f32(6, 3, 3, 3), "conv1_bias": f32(6)}
    onp.testing.assert_array_equal(run(loaded, **values)[0], run(net, **values)[0])


@pytest.mark.parametrize("op,inputs,attrs,build", [
    ("SpatialTransformer", 2, {"target_shape": (3, 4), "transform_type": "affine",
                               "sampler_type": "bilinear"},
     lambda a, b: sym.SpatialTransformer(a, b, target_shape=(3, 4), transform_type="affine",
                                         sampler_type="bilinear", name="y")),
    ("GridGenerator", 1, {"transform_type": "warp"},
     lambda a: sym.GridGenerator(a, transform_type="warp", name="y")),
    ("GroupNorm", 3, {"num_groups": 2, "eps": 1e-4},
     lambda a, b, c: sym.GroupNorm(a, b, c, num_groups=2, eps=1e-4, name="y")),
    ("depth_to_space", 1, {"block_size": 2}, lambda a: sym.depth_to_space(a, 2, name="y")),
    ("khatri_rao", 2, {"num_args": 2}, lambda a, b: sym.khatri_rao(a, b, name="y")),
    ("_unravel_index", 1, {"shape": (3, 4)}, lambda a: sym.unravel_index(a, (3, 4), name="y")),
    ("broadcast_axis", 1, {"axis": (1,), "size": (3,)},
     lambda a: sym.broadcast_axis(a, axis=(1,), size=(3,), name="y")),
    ("Correlation", 2, {"kernel_size": 1, "max_displacement": 2, "stride2": 2},
     lambda a, b: sym.Correlation(a, b, kernel_size=1, max_displacement=2, stride2=2,
                                  name="y")),
])
def test_mxnet_json_with_the_new_nodes_loads_as_the_symbol(op, inputs, attrs, build):
    names = [f"x{i}" for i in range(inputs)]
    text = mxnet_graph([{"op": "null", "name": n} for n in names] +
                       [{"op": op, "name": "y", "inputs": list(range(inputs)),
                         "attrs": attrs}], [inputs])
    built = build(*[sym.var(n) for n in names])
    assert sym.load_json(text).tojson() == built.tojson()


# ---- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("make,kind,match", [
    (lambda: sym.LRN(X, nsize=4), ValueError, r"\[sym\.LRN\] nsize=4"),
    (lambda: sym.LRN(X), ValueError, r"\[sym\.LRN\] parameter nsize is required"),
    (lambda: sym.LRN(X, nsize=2.5), ValueError, r"\[sym\.LRN\] nsize='2.5'"),
    (lambda: sym.LRN(X, nsize=5, size=3), TypeError, r"\[sym\.LRN\].*'size'"),
    (lambda: sym.LRN(onp.zeros(3), nsize=3), TypeError, r"\[sym\.LRN\] input 'data'"),
    (lambda: sym.LRN(X, nsize=sym.var("n")), TypeError, r"\[sym\.LRN\] nsize must be"),
    (lambda: sym.depth_to_space(X, block_size=0), ValueError, r"\[sym\.depth_to_space\]"),
    (lambda: sym.space_to_depth(X), ValueError, r"\[sym\.space_to_depth\].*block_size"),
    (lambda: sym.Correlation(X, Y, kernel_size=2), ValueError, r"\[sym\.Correlation\]"),
    (lambda: sym.Correlation(X, Y, stride2=0), ValueError, r"\[sym\.Correlation\] stride2"),
    (lambda: sym.GridGenerator(X, transform_type="perspective"), ValueError,
     r"\[sym\.GridGenerator\]"),
    (lambda: sym.GridGenerator(X), ValueError, r"\[sym\.GridGenerator\] target_shape"),
    (lambda: sym.SpatialTransformer(X, Y, target_shape=(4, 4), sampler_type="nearest"),
     ValueError, r"\[sym\.SpatialTransformer\] sampler_type"),
    (lambda: sym.GroupNorm(X, num_groups=0), ValueError, r"\[sym\.GroupNorm\] num_groups"),
    (lambda: sym.InstanceNorm(X, eps=-1.0), ValueError, r"\[sym\.InstanceNorm\] eps"),
    (lambda: sym.L2Normalization(X, mode="batch"), ValueError, r"\[sym\.L2Normalization\]"),
    (lambda: sym.UpSampling(X, scale=2, sample_type="bicubic"), ValueError,
     r"\[sym\.UpSampling\]"),
    (lambda: sym.histogram(X, bins=5), ValueError, r"\[sym\.histogram\] range"),
    (lambda: sym.histogram(X, bins=5, range=(2, 1)), ValueError, r"\[sym\.histogram\]"),
    (lambda: sym.histogram(X, bins=2.5, range=(0, 1)), TypeError, r"\[sym\.histogram\]"),
    (lambda: sym.ravel_multi_index(X), ValueError, r"\[sym\.ravel_multi_index\] shape"),
    (lambda: sym.unravel_index(X, shape=(2, 0)), ValueError, r"\[sym\.unravel_index\]"),
    (lambda: sym.khatri_rao(X, Y, num_args=3), ValueError, r"\[sym\.khatri_rao\] num_args"),
    (lambda: sym.SequenceMask(X, Y), ValueError, r"\[sym\.SequenceMask\].*sequence_length"),
    (lambda: sym.norm(X, ord=3), ValueError, r"\[sym\.norm\] ord=3"),
    (lambda: sym.broadcast_axis(X, axis=(0, 1), size=(2,)), ValueError,
     r"\[sym\.broadcast_axis\]"),
    (lambda: sym.cast_storage(X, stype="coo"), ValueError, r"\[sym\.cast_storage\]"),
])
def test_bad_params_name_the_op(make, kind, match):
    with pytest.raises(kind, match=match):
        make()
