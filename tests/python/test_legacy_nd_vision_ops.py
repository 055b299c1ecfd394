"""MXNet 1.x's legacy vision, indexing and recurrent operators in ``mx.nd``: LRN, histogram,
ravel_multi_index / unravel_index, Crop, GridGenerator, BilinearSampler, SpatialTransformer,
khatri_rao, Correlation, fill_element_0index and RNN. Each is checked against a plain NumPy
reference written here from MXNet's documented formula (and MXNet's documented examples),
gradients against central differences in float64, and bad inputs against their errors."""
import math

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd
from strict_checks import assert_almost_equal

nd = mx.nd


def _rand(*shape, seed=0, low=-1.0, high=1.0):
    return onp.random.RandomState(seed).uniform(low, high, shape)


def _f64(x):
    return nd.array(x, dtype="float64")


def _numeric_grads(fn, inputs, head, eps=1e-6):
    """Central differences of sum(fn(*inputs) * head) with respect to each input (float64)."""
    def loss(arrays):
        return float((fn(*[_f64(a) for a in arrays]).asnumpy() * head).sum())

    grads = []
    for k, x in enumerate(inputs):
        g = onp.zeros_like(x)
        for idx in onp.ndindex(*x.shape):
            plus = [a.copy() for a in inputs]
            minus = [a.copy() for a in inputs]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            g[idx] = (loss(plus) - loss(minus)) / (2 * eps)
        grads.append(g)
    return grads


def _autograd_grads(fn, inputs, head):
    arrays = [_f64(x) for x in inputs]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        out = fn(*arrays)
    out.backward(_f64(head))
    return [a.grad.asnumpy() for a in arrays]


def _check_grads(fn, inputs, seed=1):
    inputs = [onp.asarray(x, dtype=onp.float64) for x in inputs]
    out_shape = fn(*[_f64(x) for x in inputs]).shape
    head = _rand(*out_shape, seed=seed)
    for got, want in zip(_autograd_grads(fn, inputs, head),
                         _numeric_grads(fn, inputs, head)):
        assert_almost_equal(got, want, rtol=1e-5, atol=1e-7)


# ---- LRN ----------------------------------------------------------------------------------

def _lrn_ref(x, alpha, beta, knorm, nsize):
    """b[c] = a[c] / (k + alpha / n * sum_{j=max(0, c-n/2)}^{min(C-1, c+n/2)} a[j]^2)^beta."""
    out = onp.empty_like(x)
    channels = x.shape[1]
    for c in range(channels):
        lo, hi = max(0, c - nsize // 2), min(channels - 1, c + nsize // 2)
        s = (x[:, lo:hi + 1] ** 2).sum(axis=1)
        out[:, c] = x[:, c] / (knorm + alpha / nsize * s) ** beta
    return out


@pytest.mark.parametrize("shape, kwargs", [
    ((2, 7, 3, 4), dict(nsize=5)),
    ((1, 4, 2, 2), dict(nsize=3, alpha=0.5, beta=0.6, knorm=1.0)),
    ((2, 3, 2, 1), dict(nsize=7, alpha=2.0)),    # window wider than the channels
    ((2, 3, 2, 1), dict(nsize=10 ** 9 + 1, alpha=2.0)),  # (costs no more than 5 would)
    ((1, 1, 1, 1), dict(nsize=1)),
])
def test_lrn_against_the_documented_formula(shape, kwargs):
    x = _rand(*shape, low=-3, high=3)
    full = {"alpha": 1e-4, "beta": 0.75, "knorm": 2.0, **kwargs}
    out = nd.LRN(nd.array(x), **kwargs)
    assert type(out) is nd.NDArray and out.dtype == onp.float32
    assert_almost_equal(out.asnumpy(), _lrn_ref(x, **full).astype(onp.float32))
    out64 = nd.LRN(_f64(x), **kwargs)
    assert out64.dtype == onp.float64
    # (MXNet's params are float32: alpha / nsize and beta rounded to float32)
    assert_almost_equal(out64.asnumpy(), _lrn_ref(x, **full), rtol=1e-6, atol=1e-8)


def test_lrn_zero_batch_and_gradient():
    assert nd.LRN(nd.zeros((0, 3, 2, 2)), nsize=3).shape == (0, 3, 2, 2)
    _check_grads(lambda x: nd.LRN(x, nsize=3, alpha=0.5, beta=0.75, knorm=1.0),
                 [_rand(2, 4, 2, 2, low=-2, high=2)])


def test_lrn_bad_inputs():
    x = nd.ones((1, 3, 2, 2))
    with pytest.raises(ValueError, match=r"\[LRN\] nsize must be a positive odd int, got 4"):
        nd.LRN(x, nsize=4)
    with pytest.raises(ValueError, match="nsize"):
        nd.LRN(x, nsize=0)
    with pytest.raises(TypeError, match="nsize"):
        nd.LRN(x)
    with pytest.raises(ValueError, match=r"\[LRN\] data must be 4-d"):
        nd.LRN(nd.ones((3, 2, 2)), nsize=3)
    with pytest.raises(TypeError, match="floating"):
        nd.LRN(nd.ones((1, 3, 2, 2), dtype="int32"), nsize=3)
    with pytest.raises(TypeError, match="beta"):
        nd.LRN(x, nsize=3, beta="0.75")


# ---- histogram ----------------------------------------------------------------------------

def test_histogram_documented_examples():
    x = nd.array([[0, 1], [2, 2], [3, 4]])
    counts, edges = nd.histogram(x, bins=5, range=(0, 5))
    assert counts.dtype == onp.int64 and edges.dtype == onp.float32
    assert counts.asnumpy().tolist() == [1, 1, 2, 1, 1]
    assert edges.asnumpy().tolist() == [0, 1, 2, 3, 4, 5]
    counts, edges = nd.histogram(x, bins=nd.array([0., 2.1, 3.]))
    assert counts.asnumpy().tolist() == [4, 1]
    assert_almost_equal(edges.asnumpy(), onp.array([0., 2.1, 3.], dtype=onp.float32))


@pytest.mark.parametrize("bins, rng", [(7, (-1.0, 1.0)), (3, (-0.25, 0.5)), (1, (0.0, 1.0)),
                                       (4, (2.0, 2.0))])
def test_histogram_uniform_bins_as_numpy(bins, rng):
    x = _rand(5, 8, seed=3).astype(onp.float32)
    x[0, :4] = [-1.0, 1.0, 0.5, 2.0]     # the range's ends (both counted), one outside
    counts, edges = nd.histogram(nd.array(x), bins=bins, range=rng)
    lo, hi = rng if rng[0] != rng[1] else (rng[0] - 0.5, rng[1] + 0.5)  # (MXNet, NumPy)
    ref_edges = onp.array([lo + (hi - lo) * i / bins for i in range(bins + 1)])
    ref_counts = onp.zeros(bins, dtype=onp.int64)
    for v in x.astype(onp.float64).ravel():     # [e_i, e_i+1), the last bin closed
        for i in range(bins):
            if ref_edges[i] <= v < ref_edges[i + 1] or (i == bins - 1 and v == hi):
                ref_counts[i] += 1
                break
    assert counts.asnumpy().tolist() == ref_counts.tolist()
    assert_almost_equal(edges.asnumpy(), ref_edges.astype(onp.float32))


def test_histogram_edges_array_nan_outside_and_empty():
    x = onp.array([0.0, 0.5, 1.0, 1.5, 3.0, 3.5, -2.0, onp.nan, 10.0], dtype=onp.float32)
    counts, edges = nd.histogram(nd.array(x), bins=nd.array([0.0, 1.0, 1.5, 3.5]))
    # [0, 1): 0, 0.5   [1, 1.5): 1   [1.5, 3.5]: 1.5, 3, 3.5   -2, nan, 10 not counted
    assert counts.asnumpy().tolist() == [2, 1, 3]
    assert edges.shape == (4,) and edges.dtype == onp.float32
    counts, _ = nd.histogram(nd.array(x), bins=[0.0, 1.0, 1.5, 3.5])   # a sequence of edges
    assert counts.asnumpy().tolist() == [2, 1, 3]
    counts, edges = nd.histogram(nd.zeros((0,)), bins=3, range=(0, 3))
    assert counts.asnumpy().tolist() == [0, 0, 0] and edges.shape == (4,)


def test_histogram_without_range_is_numpys_as_float32():
    x = _rand(20, seed=4).astype(onp.float32)
    counts, edges = nd.histogram(nd.array(x), bins=6)
    ref_counts, ref_edges = onp.histogram(x.astype(onp.float64), bins=6)
    assert counts.dtype == onp.float32 and edges.dtype == onp.float32  # (via mx.nd.array)
    assert counts.asnumpy().tolist() == ref_counts.tolist()
    assert_almost_equal(edges.asnumpy(), ref_edges.astype(onp.float32))


def test_histogram_bad_inputs():
    x = nd.array([1.0, 2.0])
    with pytest.raises(ValueError, match=r"\[histogram\] bins must be >= 1"):
        nd.histogram(x, bins=0, range=(0, 1))
    with pytest.raises(ValueError, match="lo <= hi"):
        nd.histogram(x, bins=2, range=(1, 0))
    with pytest.raises(TypeError, match="range"):
        nd.histogram(x, bins=2, range=(0, 1, 2))
    with pytest.raises(ValueError, match="monotonically"):
        nd.histogram(x, bins=nd.array([0.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="at least 2 edges"):
        nd.histogram(x, bins=nd.array([0.0]))
    with pytest.raises(TypeError, match="bins"):
        nd.histogram(x, bins="auto")
    with pytest.raises(ValueError, match="finite"):
        nd.histogram(nd.array([1.0, onp.nan]), bins=2)


# ---- ravel_multi_index / unravel_index -----------------------------------------------------

def test_ravel_and_unravel_documented_examples():
    a = nd.array([[3, 6, 6], [4, 5, 1]])
    for shape in ((7, 6), (-1, 6)):
        out = nd.ravel_multi_index(a, shape=shape)
        assert out.dtype == onp.float32 and out.asnumpy().tolist() == [22, 41, 37]
        u = nd.unravel_index(nd.array([22, 41, 37]), shape=shape)
        assert u.dtype == onp.float32 and u.asnumpy().tolist() == [[3, 6, 6], [4, 5, 1]]
        u = nd.unravel_index(nd.array([[22, 41, 37], [10, 11, 15]]), shape=shape)
        assert u.asnumpy().tolist() == [[[3, 6, 6], [1, 1, 2]], [[4, 5, 1], [4, 5, 3]]]


@pytest.mark.parametrize("shape", [(4, 5, 6), (3,), (1, 1), (2, 1, 3, 2)])
def test_ravel_and_unravel_against_numpy(shape):
    rs = onp.random.RandomState(5)
    multi = onp.stack([rs.randint(0, d, size=9) for d in shape]).astype(onp.int64)
    flat = onp.ravel_multi_index(tuple(multi), shape)
    out = nd.ravel_multi_index(nd.array(multi, dtype="int64"), shape=shape)
    assert out.dtype == onp.int64 and out.asnumpy().tolist() == flat.tolist()
    back = nd.unravel_index(nd.array(flat, dtype="int64"), shape=shape)
    assert back.dtype == onp.int64 and back.asnumpy().tolist() == multi.tolist()


def test_ravel_and_unravel_edge_cases():
    assert nd.ravel_multi_index(nd.zeros((2, 0)), shape=(3, 4)).shape == (0,)
    u = nd.unravel_index(nd.array(17.0).reshape(()), shape=(3, 4, 5))
    assert u.shape == (3,) and u.asnumpy().tolist() == [0, 3, 2]
    assert nd.unravel_index(nd.zeros((0,)), shape=(2, 2)).shape == (2, 0)
    # MXNet checks no range: the first dimension's index is the quotient (beyond shape[0]
    # too) and a negative index divides as C does (toward zero)
    assert nd.unravel_index(nd.array([29.0]), shape=(2, 6)).asnumpy().tolist() == [[4], [5]]
    idx = -13
    ref = [math.trunc(idx / 6), idx - math.trunc(idx / 6) * 6]
    got = nd.unravel_index(nd.array([idx], dtype="int64"), shape=(7, 6)).asnumpy()
    assert got.ravel().tolist() == ref


def test_ravel_and_unravel_bad_inputs():
    with pytest.raises(ValueError, match=r"\[ravel_multi_index\] data must be 2-d"):
        nd.ravel_multi_index(nd.zeros((3, 2)), shape=(2, 2))
    with pytest.raises(TypeError, match="shape"):
        nd.ravel_multi_index(nd.zeros((2, 2)))
    with pytest.raises(ValueError, match="shape's dimensions"):
        nd.unravel_index(nd.zeros((2,)), shape=(3, 0))
    with pytest.raises(TypeError, match="non-empty tuple"):
        nd.unravel_index(nd.zeros((2,)), shape=())
    with pytest.raises(TypeError, match="NDArray"):
        nd.unravel_index([1, 2], shape=(2, 2))


# ---- Crop ---------------------------------------------------------------------------------

def test_crop_with_h_w_crop_like_and_center():
    x = _rand(2, 3, 6, 7).astype(onp.float32)
    out = nd.Crop(nd.array(x), offset=(1, 2), h_w=(3, 4))
    assert_almost_equal(out.asnumpy(), x[:, :, 1:4, 2:6])
    out = nd.Crop(nd.array(x), nd.zeros((5, 1, 2, 5)), offset=(4, 1))
    assert_almost_equal(out.asnumpy(), x[:, :, 4:6, 1:6])
    out = nd.Crop(nd.array(x), h_w=(3, 4), center_crop=True)     # offset (1, 1)
    assert_almost_equal(out.asnumpy(), x[:, :, 1:4, 1:5])
    out = nd.Crop([nd.array(x), nd.zeros((1, 1, 2, 2))], center_crop=True, num_args=2)
    assert_almost_equal(out.asnumpy(), x[:, :, 2:4, 2:4])
    out = nd.Crop(nd.array(x), h_w=(1, 1), offset=(5, 6))
    assert_almost_equal(out.asnumpy(), x[:, :, 5:6, 6:7])
    assert nd.Crop(nd.zeros((0, 3, 4, 4)), h_w=(2, 2)).shape == (0, 3, 2, 2)


def test_crop_gradient():
    x = _rand(1, 2, 4, 5)
    like = onp.zeros((1, 1, 2, 3))
    head = _rand(1, 2, 2, 3, seed=2)
    got = _autograd_grads(lambda a: nd.Crop(a, _f64(like), offset=(1, 2)), [x], head)[0]
    want = onp.zeros_like(x)
    want[:, :, 1:3, 2:5] = head
    assert_almost_equal(got, want)
    _check_grads(lambda a: nd.Crop(a, h_w=(2, 2), center_crop=True), [x])


def test_crop_bad_inputs():
    x = nd.ones((1, 1, 4, 4))
    with pytest.raises(ValueError, match=r"\[Crop\] with one input, h_w"):
        nd.Crop(x)
    with pytest.raises(ValueError, match="outside"):
        nd.Crop(x, h_w=(2, 2), offset=(3, 0))
    with pytest.raises(ValueError, match="offset must be two ints >= 0"):
        nd.Crop(x, h_w=(2, 2), offset=(-1, 0))
    with pytest.raises(ValueError, match="exceed"):
        nd.Crop(x, nd.ones((1, 1, 5, 2)))
    with pytest.raises(ValueError, match="num_args"):
        nd.Crop(x, h_w=(2, 2), num_args=2)
    with pytest.raises(ValueError, match="4-d"):
        nd.Crop(nd.ones((4, 4)), h_w=(2, 2))
    with pytest.raises(ValueError, match="takes 1 input"):
        nd.Crop(x, x, x)


# ---- GridGenerator / BilinearSampler / SpatialTransformer ---------------------------------

def _affine_grid_ref(theta, h, w):
    """grid[n, :, i, j] = theta[n] @ (x_j, y_i, 1), x_j = -1 + 2 j / (W - 1), y alike."""
    out = onp.empty((theta.shape[0], 2, h, w))
    for n in range(theta.shape[0]):
        m = theta[n].reshape(2, 3)
        for i in range(h):
            for j in range(w):
                out[n, :, i, j] = m @ [-1 + 2 * j / (w - 1), -1 + 2 * i / (h - 1), 1.0]
    return out


def _warp_grid_ref(flow):
    n, _, h, w = flow.shape
    out = onp.empty(flow.shape)
    for i in range(h):
        for j in range(w):
            out[:, 0, i, j] = (flow[:, 0, i, j] + j) / ((w - 1) / 2) - 1
            out[:, 1, i, j] = (flow[:, 1, i, j] + i) / ((h - 1) / 2) - 1
    return out


def _sampler_ref(data, grid):
    """out[n, c, i, j] = the bilinear interpolation of data[n, c] at (y, x) = ((gy + 1) *
    (H - 1) / 2, (gx + 1) * (W - 1) / 2), pixels outside the data being 0."""
    n_, c_, h, w = data.shape
    out = onp.zeros((n_, c_) + grid.shape[2:])

    def pix(n, c, y, x):
        return data[n, c, y, x] if 0 <= y < h and 0 <= x < w else 0.0

    for n in range(n_):
        for i in range(grid.shape[2]):
            for j in range(grid.shape[3]):
                x = (grid[n, 0, i, j] + 1) * (w - 1) / 2
                y = (grid[n, 1, i, j] + 1) * (h - 1) / 2
                x0, y0 = math.floor(x), math.floor(y)
                fx, fy = x - x0, y - y0
                for c in range(c_):
                    out[n, c, i, j] = (pix(n, c, y0, x0) * (1 - fy) * (1 - fx) +
                                       pix(n, c, y0, x0 + 1) * (1 - fy) * fx +
                                       pix(n, c, y0 + 1, x0) * fy * (1 - fx) +
                                       pix(n, c, y0 + 1, x0 + 1) * fy * fx)
    return out


_DOC_DATA = onp.array([[[[1, 4, 3, 6], [1, 8, 8, 9], [0, 4, 1, 5], [1, 0, 1, 3]]]],
                      dtype=onp.float32)


def test_bilinear_sampler_documented_examples():
    affine = nd.array([[2, 0, 0], [0, 2, 0]]).reshape((1, 6))     # zoom out twice
    grid = nd.GridGenerator(affine, transform_type="affine", target_shape=(4, 4))
    out = nd.BilinearSampler(nd.array(_DOC_DATA), grid)
    want = [[0, 0, 0, 0], [0, 3.5, 6.5, 0], [0, 1.25, 2.5, 0], [0, 0, 0, 0]]
    assert_almost_equal(out.asnumpy(), onp.array([[want]], dtype=onp.float32))
    flow = onp.zeros((1, 2, 4, 4), dtype=onp.float32)
    flow[:, 0] = 1                                                   # shift left by a pixel
    grid = nd.GridGenerator(nd.array(flow), transform_type="warp")
    out = nd.BilinearSampler(nd.array(_DOC_DATA), grid)
    want = [[4, 3, 6, 0], [8, 8, 9, 0], [4, 1, 5, 0], [0, 1, 3, 0]]
    assert_almost_equal(out.asnumpy(), onp.array([[want]], dtype=onp.float32))
    out = nd.SpatialTransformer(nd.array(_DOC_DATA), affine, target_shape=(4, 4))
    assert_almost_equal(out.asnumpy()[0, 0, 1], onp.array([0, 3.5, 6.5, 0], dtype=onp.float32))


@pytest.mark.parametrize("target", [(3, 4), (2, 2), (5, 3)])
def test_grid_generator_affine_and_warp(target):
    theta = _rand(3, 6, seed=6)
    out = nd.GridGenerator(nd.array(theta), transform_type="affine", target_shape=target)
    assert out.shape == (3, 2) + target and out.dtype == onp.float32
    assert_almost_equal(out.asnumpy(), _affine_grid_ref(theta, *target).astype(onp.float32))
    flow = _rand(2, 2, *target, seed=7, low=-2, high=2)
    out = nd.GridGenerator(nd.array(flow), transform_type="warp", target_shape=(9, 9))
    assert_almost_equal(out.asnumpy(), _warp_grid_ref(flow).astype(onp.float32))
    assert nd.GridGenerator(nd.zeros((0, 6)), target_shape=target).shape == (0, 2) + target


def test_grid_generator_gradients():
    _check_grads(lambda t: nd.GridGenerator(t, transform_type="affine", target_shape=(3, 2)),
                 [_rand(2, 6, seed=8)])
    _check_grads(lambda f: nd.GridGenerator(f, transform_type="warp"),
                 [_rand(1, 2, 3, 2, seed=9)])


@pytest.mark.parametrize("dshape, gshape", [((2, 3, 4, 5), (2, 2, 3, 6)),
                                            ((1, 1, 1, 1), (1, 2, 2, 2)),
                                            ((1, 2, 3, 1), (1, 2, 1, 4))])
def test_bilinear_sampler_against_the_loop(dshape, gshape):
    data = _rand(*dshape, seed=10)
    grid = _rand(*gshape, seed=11, low=-1.3, high=1.3)       # some points outside the data
    out = nd.BilinearSampler(nd.array(data), nd.array(grid))
    assert out.shape == dshape[:2] + gshape[2:] and type(out) is nd.NDArray
    assert_almost_equal(out.asnumpy(), _sampler_ref(data, grid).astype(onp.float32))
    out64 = nd.BilinearSampler(_f64(data), _f64(grid), cudnn_off=True)
    assert_almost_equal(out64.asnumpy(), _sampler_ref(data, grid))
    empty = nd.BilinearSampler(nd.zeros((0,) + dshape[1:]), nd.zeros((0,) + gshape[1:]))
    assert empty.shape == (0, dshape[1]) + gshape[2:]


def test_bilinear_sampler_gradients():
    _check_grads(nd.BilinearSampler, [_rand(1, 2, 3, 4, seed=12),
                                      _rand(1, 2, 2, 3, seed=13, low=-1.2, high=1.2)])


def test_spatial_transformer_against_the_reference():
    data = _rand(2, 3, 5, 4, seed=14)
    loc = _rand(2, 6, seed=15, low=-1.1, high=1.1)
    out = nd.SpatialTransformer(nd.array(data), nd.array(loc), target_shape=(3, 6),
                                transform_type="affine", sampler_type="bilinear")
    want = _sampler_ref(data, _affine_grid_ref(loc, 3, 6))
    assert out.shape == (2, 3, 3, 6)
    assert_almost_equal(out.asnumpy(), want.astype(onp.float32))
    identity = onp.array([[1, 0, 0, 0, 1, 0]], dtype=onp.float32)   # the same grid: the data
    same = nd.SpatialTransformer(nd.array(data[:1]), nd.array(identity), target_shape=(5, 4))
    assert_almost_equal(same.asnumpy(), data[:1].astype(onp.float32))
    assert nd.SpatialTransformer(nd.zeros((0, 3, 5, 4)), nd.zeros((0, 6)),
                                 target_shape=(2, 2)).shape == (0, 3, 2, 2)


def test_spatial_transformer_gradients():
    _check_grads(lambda d, t: nd.SpatialTransformer(d, t, target_shape=(2, 3)),
                 [_rand(1, 2, 3, 3, seed=16), _rand(1, 6, seed=17)])


def test_grid_sampler_and_transformer_bad_inputs():
    with pytest.raises(ValueError, match=r"\[GridGenerator\] target_shape"):
        nd.GridGenerator(nd.ones((1, 6)), target_shape=(0, 0))
    with pytest.raises(ValueError, match="target_shape"):
        nd.GridGenerator(nd.ones((1, 6)), target_shape=(1, 4))
    with pytest.raises(ValueError, match=r"\(batch, 6\)"):
        nd.GridGenerator(nd.ones((1, 4)), target_shape=(2, 2))
    with pytest.raises(ValueError, match="transform_type"):
        nd.GridGenerator(nd.ones((1, 6)), transform_type="perspective", target_shape=(2, 2))
    with pytest.raises(ValueError, match="optical flow"):
        nd.GridGenerator(nd.ones((1, 3, 4, 4)), transform_type="warp")
    with pytest.raises(ValueError, match=r"\[BilinearSampler\] grid must be"):
        nd.BilinearSampler(nd.ones((2, 1, 3, 3)), nd.ones((1, 2, 3, 3)))
    with pytest.raises(TypeError, match="same dtype"):
        nd.BilinearSampler(nd.ones((1, 1, 3, 3)), _f64(onp.ones((1, 2, 3, 3))))
    with pytest.raises(TypeError, match="floating"):
        nd.BilinearSampler(nd.ones((1, 1, 3, 3), dtype="int32"), nd.ones((1, 2, 3, 3)))
    with pytest.raises(ValueError, match="sampler_type"):
        nd.SpatialTransformer(nd.ones((1, 1, 3, 3)), nd.ones((1, 6)), target_shape=(2, 2),
                              sampler_type="nearest")
    with pytest.raises(ValueError, match="loc must be"):
        nd.SpatialTransformer(nd.ones((2, 1, 3, 3)), nd.ones((1, 6)), target_shape=(2, 2))
    with pytest.raises(ValueError, match="target_shape"):
        nd.SpatialTransformer(nd.ones((1, 1, 3, 3)), nd.ones((1, 6)))


# ---- khatri_rao ---------------------------------------------------------------------------

def test_khatri_rao_documented_example_and_kron_columns():
    a = nd.array([[1, -1], [2, -3]])
    b = nd.array([[1, 4], [2, 5], [3, 6]])
    want = [[1, -4], [2, -5], [3, -6], [2, -12], [4, -15], [6, -18]]
    assert nd.khatri_rao(a, b).asnumpy().tolist() == want
    mats = [_rand(2, 3, seed=18), _rand(3, 3, seed=19), _rand(4, 3, seed=20)]
    ref = onp.stack([onp.kron(onp.kron(mats[0][:, k], mats[1][:, k]), mats[2][:, k])
                     for k in range(3)], axis=1)
    out = nd.khatri_rao(*[nd.array(m) for m in mats])
    assert out.shape == (24, 3)
    assert_almost_equal(out.asnumpy(), ref.astype(onp.float32))
    assert_almost_equal(nd.khatri_rao(nd.array(mats[0])).asnumpy(),
                        mats[0].astype(onp.float32))
    assert nd.khatri_rao(nd.zeros((0, 3)), nd.ones((2, 3))).shape == (0, 3)
    assert nd.khatri_rao(nd.array([[2.0]]), nd.array([[3.0]])).asnumpy().tolist() == [[6.0]]


def test_khatri_rao_gradient_and_bad_inputs():
    _check_grads(nd.khatri_rao, [_rand(2, 3, seed=21), _rand(3, 3, seed=22)])
    with pytest.raises(ValueError, match=r"\[khatri_rao\] every matrix must have 2 columns"):
        nd.khatri_rao(nd.ones((2, 2)), nd.ones((2, 3)))
    with pytest.raises(ValueError, match="2-d"):
        nd.khatri_rao(nd.ones((2,)))
    with pytest.raises(ValueError, match="at least one"):
        nd.khatri_rao()


# ---- Correlation --------------------------------------------------------------------------

def _correlation_ref(d1, d2, k, md, s1, s2, pad, multiply):
    """FlowNet's correlation as MXNet's CPU loop: window top-left (y1, x1) = (i * s1 + md,
    j * s1 + md) in the padded maps, data2's window moved by (dy, dx) * s2, output channel
    (dy + r) * (2r + 1) + (dx + r), r = md // s2, divided by k * k * C."""
    n_, c_, h, w = d1.shape
    p1 = onp.pad(d1, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    p2 = onp.pad(d2, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    border = md + (k - 1) // 2
    top_h = math.ceil((h + 2 * pad - 2 * border) / s1)
    top_w = math.ceil((w + 2 * pad - 2 * border) / s1)
    r = md // s2
    gw = 2 * r + 1
    out = onp.zeros((n_, gw * gw, top_h, top_w))
    for n in range(n_):
        for tc in range(gw * gw):
            dx, dy = (tc % gw - r) * s2, (tc // gw - r) * s2
            for i in range(top_h):
                for j in range(top_w):
                    y1, x1 = i * s1 + md, j * s1 + md
                    total = 0.0
                    for hh in range(k):
                        for ww in range(k):
                            a = p1[n, :, y1 + hh, x1 + ww]
                            b = p2[n, :, y1 + dy + hh, x1 + dx + ww]
                            total += (a * b).sum() if multiply else abs(a - b).sum()
                    out[n, tc, i, j] = total / (k * k * c_)
    return out


@pytest.mark.parametrize("shape, kwargs", [
    ((2, 3, 5, 6), dict()),
    ((1, 2, 6, 6), dict(kernel_size=3, max_displacement=2, pad_size=2)),
    ((1, 2, 7, 8), dict(max_displacement=2, stride1=2, stride2=2, pad_size=1)),
    ((1, 4, 5, 5), dict(kernel_size=3, max_displacement=1, is_multiply=False)),
    ((1, 1, 1, 1), dict(max_displacement=0)),
    ((1, 1, 3, 3), dict(max_displacement=3, stride2=2, pad_size=2)),
])
def test_correlation_against_the_loop(shape, kwargs):
    d1, d2 = _rand(*shape, seed=23), _rand(*shape, seed=24)
    full = {"kernel_size": 1, "max_displacement": 1, "stride1": 1, "stride2": 1,
            "pad_size": 0, "is_multiply": True, **kwargs}
    want = _correlation_ref(d1, d2, full["kernel_size"], full["max_displacement"],
                            full["stride1"], full["stride2"], full["pad_size"],
                            full["is_multiply"])
    out = nd.Correlation(nd.array(d1), nd.array(d2), **kwargs)
    gw = 2 * (full["max_displacement"] // full["stride2"]) + 1
    assert out.shape == want.shape and out.shape[1] == gw * gw
    assert_almost_equal(out.asnumpy(), want.astype(onp.float32))


def test_correlation_zero_batch_and_gradients():
    out = nd.Correlation(nd.zeros((0, 2, 4, 4)), nd.zeros((0, 2, 4, 4)), pad_size=1)
    assert out.shape == (0, 9, 4, 4)
    d = [_rand(1, 2, 4, 4, seed=25), _rand(1, 2, 4, 4, seed=26)]
    _check_grads(lambda a, b: nd.Correlation(a, b, kernel_size=3, max_displacement=1,
                                             pad_size=2), d)
    _check_grads(lambda a, b: nd.Correlation(a, b, max_displacement=1, stride1=2,
                                             is_multiply=False), d)


def test_correlation_bad_inputs():
    x = nd.ones((1, 2, 4, 4))
    with pytest.raises(ValueError, match=r"\[Correlation\] kernel_size must be an odd int"):
        nd.Correlation(x, x, kernel_size=2)
    with pytest.raises(ValueError, match="stride2"):
        nd.Correlation(x, x, stride2=0)
    with pytest.raises(ValueError, match="too small"):
        nd.Correlation(x, x, max_displacement=3)
    with pytest.raises(ValueError, match="same shape"):
        nd.Correlation(x, nd.ones((1, 2, 4, 5)))
    with pytest.raises(TypeError, match="is_multiply"):
        nd.Correlation(x, x, is_multiply=1)
    with pytest.raises(TypeError, match="max_displacement"):
        nd.Correlation(x, x, max_displacement=1.5)


# ---- fill_element_0index ------------------------------------------------------------------

def test_fill_element_0index():
    lhs = onp.arange(20, dtype=onp.float32).reshape(4, 5)
    mhs = onp.array([-1, -2, -3, -4], dtype=onp.float32)
    rhs = onp.array([0, 4, 2, 2], dtype=onp.float32)
    want = lhs.copy()
    want[onp.arange(4), rhs.astype(int)] = mhs
    out = nd.fill_element_0index(nd.array(lhs), nd.array(mhs), nd.array(rhs))
    assert type(out) is nd.NDArray and out.asnumpy().tolist() == want.tolist()
    assert nd.fill_element_0index(nd.zeros((0, 3)), nd.zeros((0,)), nd.zeros((0,))).shape \
        == (0, 3)
    one = nd.fill_element_0index(nd.zeros((1, 1)), nd.array([7.0]), nd.array([0.0]))
    assert one.asnumpy().tolist() == [[7.0]]
    with pytest.raises(ValueError, match=r"\[fill_element_0index\] rhs's indices must be in"):
        nd.fill_element_0index(nd.array(lhs), nd.array(mhs), nd.array([0, 5, 0, 0]))
    with pytest.raises(ValueError, match="rows"):
        nd.fill_element_0index(nd.array(lhs), nd.array(mhs[:2]), nd.array(rhs))
    with pytest.raises(ValueError, match="2-d"):
        nd.fill_element_0index(nd.array(mhs), nd.array(mhs), nd.array(rhs))


# ---- RNN ----------------------------------------------------------------------------------

def _sigmoid(v):
    return 1 / (1 + onp.exp(-v))


def _rnn_ref(x, params, h, c, mode, hidden):
    """One layer, one direction: weights i2h (G * H, C), h2h (G * H, H), then the biases
    b_i2h, b_h2h (cuDNN's packing); LSTM gates i, f, g, o; GRU r, z, n."""
    gates = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}[mode]
    width = x.shape[2]
    w_i = params[:gates * hidden * width].reshape(gates * hidden, width)
    at = gates * hidden * width
    w_h = params[at:at + gates * hidden * hidden].reshape(gates * hidden, hidden)
    at += gates * hidden * hidden
    b_i, b_h = params[at:at + gates * hidden], params[at + gates * hidden:]
    h, c = h[0], None if c is None else c[0]
    outs = []
    for t in range(x.shape[0]):
        gi, gh = x[t] @ w_i.T + b_i, h @ w_h.T + b_h
        if mode == "rnn_tanh":
            h = onp.tanh(gi + gh)
        elif mode == "rnn_relu":
            h = onp.maximum(gi + gh, 0)
        elif mode == "lstm":
            i, f, g, o = onp.split(gi + gh, 4, axis=1)
            c = _sigmoid(f) * c + _sigmoid(i) * onp.tanh(g)
            h = _sigmoid(o) * onp.tanh(c)
        else:
            r = _sigmoid(gi[:, :hidden] + gh[:, :hidden])
            z = _sigmoid(gi[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden])
            n = onp.tanh(gi[:, 2 * hidden:] + r * gh[:, 2 * hidden:])
            h = (1 - z) * n + z * h
        outs.append(h)
    return onp.stack(outs), h[None], None if c is None else c[None]


@pytest.mark.parametrize("mode", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
def test_rnn_against_the_recurrence_and_output_count(mode):
    seq, batch, width, hidden = 4, 2, 3, 5
    gates = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}[mode]
    x = _rand(seq, batch, width, seed=27)
    params = _rand(gates * hidden * (width + hidden + 2), seed=28, low=-0.5, high=0.5)
    h0 = _rand(1, batch, hidden, seed=29)
    c0 = _rand(1, batch, hidden, seed=30) if mode == "lstm" else None
    want_out, want_h, want_c = _rnn_ref(x, params, h0, c0, mode, hidden)
    args = [nd.array(x), nd.array(params), nd.array(h0)]
    cell = nd.array(c0) if mode == "lstm" else None
    out = nd.RNN(*args, state_cell=cell, state_size=hidden, num_layers=1, mode=mode)
    assert type(out) is nd.NDArray           # one output without state_outputs, as MXNet
    assert_almost_equal(out.asnumpy(), want_out.astype(onp.float32))
    outs = nd.RNN(*args, state_cell=cell, state_size=hidden, num_layers=1, mode=mode,
                  state_outputs=True)
    assert isinstance(outs, list) and len(outs) == (3 if mode == "lstm" else 2)
    assert_almost_equal(outs[0].asnumpy(), want_out.astype(onp.float32))
    assert_almost_equal(outs[1].asnumpy(), want_h.astype(onp.float32))
    if mode == "lstm":
        assert_almost_equal(outs[2].asnumpy(), want_c.astype(onp.float32))


def test_rnn_stacked_bidirectional_shapes_and_bad_inputs():
    seq, batch, width, hidden, layers = 3, 2, 4, 3, 2
    size = sum(2 * 4 * hidden * ((width if layer == 0 else 2 * hidden) + hidden + 2)
               for layer in range(layers))
    x, p = nd.array(_rand(seq, batch, width)), nd.array(_rand(size, low=-0.3, high=0.3))
    h = nd.zeros((2 * layers, batch, hidden))
    out, hy, cy = nd.RNN(x, p, h, h, state_size=hidden, num_layers=layers, mode="lstm",
                         bidirectional=True, state_outputs=True)
    assert out.shape == (seq, batch, 2 * hidden) and hy.shape == cy.shape == h.shape
    with pytest.raises(ValueError, match=r"\[RNN\] parameters must hold"):
        nd.RNN(x, p[:-1], h, h, state_size=hidden, num_layers=layers, mode="lstm",
               bidirectional=True)
    with pytest.raises(ValueError, match=r"\[RNN\] state must be"):
        nd.RNN(x, p, h[:2], h, state_size=hidden, num_layers=layers, mode="lstm",
               bidirectional=True)
    with pytest.raises(TypeError, match="state_cell"):
        nd.RNN(x, p, h, state_size=hidden, num_layers=layers, mode="lstm", bidirectional=True)
    with pytest.raises(ValueError, match="mode"):
        nd.RNN(x, p, h, state_size=hidden, num_layers=layers, mode="transformer")
    with pytest.raises(TypeError, match="state_size"):
        nd.RNN(x, p, h, h, num_layers=layers, mode="lstm")
    with pytest.raises(ValueError, match="dropout"):
        nd.RNN(x, p, h, h, state_size=hidden, num_layers=layers, mode="lstm", p=1.5)
    with pytest.raises(NotImplementedError, match="sequence_length"):
        nd.RNN(x, p, h, h, state_size=hidden, num_layers=layers, mode="lstm",
               bidirectional=True, use_sequence_length=True, sequence_length=nd.ones((2,)))
    with pytest.raises(NotImplementedError, match="projection_size"):
        nd.RNN(x, p, h, h, state_size=hidden, num_layers=layers, mode="lstm",
               bidirectional=True, projection_size=2)
    with pytest.raises(NotImplementedError, match="clip"):
        nd.RNN(x, p, h, h, state_size=hidden, num_layers=layers, mode="lstm",
               bidirectional=True, lstm_state_clip_min=-1.0, lstm_state_clip_max=1.0)
