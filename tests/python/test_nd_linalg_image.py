"""mx.nd.linalg (MXNet's BLAS / LAPACK operators with their parameters and batch semantics),
mx.nd.image, mx.nd.sparse on dense operands (sparse storage: test_sparse.py),
npx.slice_like and the legacy UpSampling / moments. References: NumPy, MXNet's documented
examples (la_op.cc, upsampling.cc) and numeric gradients of NumPy formulas."""
import numpy as onp
import pytest

import ndx as mx
from ndx import autograd

nd = mx.nd
RNG = onp.random.default_rng(7)


def _a(x, dtype="float64"):
    return nd.array(onp.asarray(x, dtype=dtype), dtype=dtype)


def _close(got, want, tol=1e-6):
    onp.testing.assert_allclose(onp.asarray(got.asnumpy() if hasattr(got, "asnumpy") else got),
                                onp.asarray(want), rtol=tol, atol=tol)


def _spd(n, batch=()):
    x = RNG.standard_normal(batch + (n, n))
    return x @ onp.swapaxes(x, -1, -2) + n * onp.eye(n)


def _numeric_grad(f, x, eps=1e-6):
    g = onp.zeros_like(x)
    it = onp.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def _autograd(fn, *arrays):
    xs = [_a(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        out = fn(*xs)
    out.backward()
    return [x.grad.asnumpy() for x in xs]


# ---- linalg: MXNet's documented examples ----------------------------------------------------


def test_gemm_and_gemm2_documented_examples():
    A = _a([[1.0, 1.0], [1.0, 1.0]])
    B = _a([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    C = _a([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    _close(nd.linalg.gemm(A, B, C, transpose_b=True, alpha=2.0, beta=10.0), [[14.0] * 3] * 2)
    _close(nd.linalg.gemm2(A, B, transpose_b=True, alpha=2.0), [[4.0] * 3] * 2)
    A = _a([[[1.0, 1.0]], [[0.1, 0.1]]])
    C = _a([[[10.0]], [[0.01]]])
    _close(nd.linalg.gemm(A, A, C, transpose_b=True, alpha=2.0, beta=10.0), [[[104.0]], [[0.14]]])
    _close(nd.linalg.gemm2(A, A, transpose_b=True, alpha=2.0), [[[4.0]], [[0.04]]])


def test_gemm2_axis_and_transposes_match_numpy():
    a = RNG.standard_normal((2, 3, 4, 5))  # rows on axis 1: matrices (3, 5) per (2, 4)
    b = RNG.standard_normal((2, 5, 4, 6))
    want = onp.einsum("irkc,ickd->irkd", a, b)
    _close(nd.linalg.gemm2(_a(a), _a(b), axis=1), want)
    x, y = RNG.standard_normal((3, 4, 2)), RNG.standard_normal((3, 5, 4))
    want = 0.5 * onp.swapaxes(x, -1, -2) @ onp.swapaxes(y, -1, -2)
    _close(nd.linalg.gemm2(_a(x), _a(y), transpose_a=True, transpose_b=True, alpha=0.5), want)
    c = RNG.standard_normal((3, 2, 5))
    _close(nd.linalg.gemm(_a(x), _a(y), _a(c), transpose_a=True, transpose_b=True, beta=-2.0),
           onp.swapaxes(x, -1, -2) @ onp.swapaxes(y, -1, -2) - 2 * c)


def test_flat_aliases():
    a = RNG.standard_normal((2, 3))
    _close(nd.linalg_gemm2(_a(a), _a(a), transpose_b=True), a @ a.T)
    for name in ("gemm", "potrf", "potri", "trmm", "trsm", "syrk", "gelqf", "sumlogdiag",
                 "extractdiag", "makediag", "extracttrian", "maketrian", "inverse", "det",
                 "slogdet"):
        assert getattr(nd, "linalg_" + name) is getattr(nd.linalg, name)


def test_potrf_potri_documented_examples():
    A = _a([[[4.0, 1.0], [1.0, 4.25]], [[16.0, 4.0], [4.0, 17.0]]])
    _close(nd.linalg.potrf(A), [[[2.0, 0], [0.5, 2.0]], [[4.0, 0], [1.0, 4.0]]])
    L = _a([[[2.0, 0], [0.5, 2.0]], [[4.0, 0], [1.0, 4.0]]])
    _close(nd.linalg.potri(L), [[[0.265625, -0.0625], [-0.0625, 0.25]],
                                [[0.06640625, -0.015625], [-0.015625, 0.0625]]])


def test_potrf_upper_and_potri_upper_match_numpy():
    s = _spd(4, (3,))
    lower = onp.linalg.cholesky(s)
    upper = onp.swapaxes(lower, -1, -2)
    _close(nd.linalg.potrf(_a(s), lower=False), upper, 1e-8)
    _close(nd.linalg.potri(_a(upper), lower=False), onp.linalg.inv(s), 1e-8)
    # only the named triangle of the factor is read
    junk = lower + onp.triu(onp.ones((4, 4)), 1)
    _close(nd.linalg.potri(_a(junk)), onp.linalg.inv(s), 1e-8)


def test_trmm_trsm_documented_examples_and_options():
    A = _a([[1.0, 0], [1.0, 1.0]])
    _close(nd.linalg.trmm(A, _a([[1.0] * 3] * 2), alpha=2.0), [[2.0] * 3, [4.0] * 3])
    _close(nd.linalg.trsm(A, _a([[2.0] * 3, [4.0] * 3]), alpha=0.5), [[1.0] * 3] * 2)
    t = onp.tril(RNG.standard_normal((2, 3, 3))) + 3 * onp.eye(3)
    b = RNG.standard_normal((2, 4, 3))
    full = t + onp.triu(RNG.standard_normal((3, 3)), 1)  # the upper part must be ignored
    for transpose in (False, True):
        op = onp.swapaxes(t, -1, -2) if transpose else t
        _close(nd.linalg.trmm(_a(full), _a(b), transpose=transpose, rightside=True, alpha=3.0),
               3.0 * b @ op)
        _close(nd.linalg.trsm(_a(full), _a(b), transpose=transpose, rightside=True, alpha=3.0),
               3.0 * b @ onp.linalg.inv(op))
    u = onp.swapaxes(t, -1, -2)
    bl = RNG.standard_normal((2, 3, 2))
    _close(nd.linalg.trsm(_a(u), _a(bl), lower=False), onp.linalg.solve(u, bl))
    _close(nd.linalg.trmm(_a(u), _a(bl), lower=False, transpose=True), t @ bl)


def test_syrk_documented_examples():
    A = _a([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    _close(nd.linalg.syrk(A), [[14.0, 32.0], [32.0, 77.0]])
    _close(nd.linalg.syrk(A, transpose=True),
           [[17.0, 22.0, 27.0], [22.0, 29.0, 36.0], [27.0, 36.0, 45.0]])
    _close(nd.linalg.syrk(_a([[[1.0, 1.0]], [[0.1, 0.1]]]), alpha=2.0), [[[4.0]], [[0.04]]])


def test_gelqf_documented_example_and_properties():
    A = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
    Q, L = nd.linalg.gelqf(_a(A))
    _close(Q, [[[-0.26726124, -0.53452248, -0.80178373], [0.87287156, 0.21821789, -0.43643578]],
               [[-0.50257071, -0.57436653, -0.64616234], [0.7620735, 0.05862104, -0.64483142]]],
           1e-6)
    _close(L, [[[-3.74165739, 0.0], [-8.55235974, 1.96396101]],
               [[-13.92838828, 0.0], [-19.09768702, 0.52758934]]], 1e-6)
    q, l_ = Q.asnumpy(), L.asnumpy()
    _close(l_ @ q, A, 1e-8)
    _close(q @ onp.swapaxes(q, -1, -2), onp.broadcast_to(onp.eye(2), (2, 2, 2)), 1e-8)


def test_syevd_documented_example_and_sign_rule():
    U, L = nd.linalg.syevd(_a([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [2.0, 5.0]]]))
    _close(U, [[[0.89442719, -0.4472136], [0.4472136, 0.89442719]],
               [[0.92387953, -0.38268343], [0.38268343, 0.92387953]]], 1e-7)
    _close(L, [[0.0, 5.0], [0.17157288, 5.82842712]], 1e-7)
    s = _spd(5)
    u, w = (x.asnumpy() for x in nd.linalg.syevd(_a(s)))
    _close(w, onp.linalg.eigvalsh(s), 1e-8)
    _close(u @ s, onp.diag(w) @ u, 1e-8)
    big = onp.abs(u).argmax(axis=-1)
    assert (u[onp.arange(5), big] > 0).all()


def test_sumlogdiag_inverse_det_slogdet():
    _close(nd.linalg.sumlogdiag(_a([[1.0, 1.0], [1.0, 7.0]])), [1.9459101])
    assert nd.linalg.sumlogdiag(_a([[1.0, 1.0], [1.0, 7.0]])).shape == (1,)
    _close(nd.linalg.sumlogdiag(_a([[[1.0, 1.0], [1.0, 7.0]], [[3.0, 0], [0, 17.0]]])),
           [1.9459101, 3.9318256])
    A = _a([[[1.0, 4.0], [2.0, 3.0]], [[1.0, 3.0], [2.0, 4.0]]])
    _close(nd.linalg.inverse(A), [[[-0.6, 0.8], [0.4, -0.2]], [[-2.0, 1.5], [1.0, -0.5]]])
    _close(nd.linalg.det(_a([[[1.0, 4.0], [2.0, 3.0]], [[2.0, 3.0], [1.0, 4.0]]])), [-5.0, 5.0])
    assert nd.linalg.det(_a([[1.0, 4.0], [2.0, 3.0]])).size == 1
    sign, logabs = nd.linalg.slogdet(_a([[[2.0, 3.0], [1.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]],
                                         [[1.0, 2.0], [4.0, 3.0]]]))
    _close(sign, [1.0, 0.0, -1.0])
    assert onp.isneginf(logabs.asnumpy()[1])
    _close(logabs.asnumpy()[[0, 2]], [1.609438, 1.609438])
    ld = nd.linalg.logdet(_a([[[2.0, 3.0], [1.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]],
                              [[1.0, 2.0], [4.0, 3.0]]])).asnumpy()
    assert onp.isclose(ld[0], 1.609438) and onp.isneginf(ld[1]) and onp.isnan(ld[2])


def test_diag_and_trian_documented_examples():
    A = _a([[1.0, 2.0], [3.0, 4.0]])
    _close(nd.linalg.extractdiag(A), [1.0, 4.0])
    _close(nd.linalg.extractdiag(A, 1), [2.0])
    _close(nd.linalg.extractdiag(_a([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])),
           [[1.0, 4.0], [5.0, 8.0]])
    _close(nd.linalg.makediag(_a([1.0, 2.0])), [[1.0, 0.0], [0.0, 2.0]])
    _close(nd.linalg.makediag(_a([1.0, 2.0]), 1), [[0, 1.0, 0], [0, 0, 2.0], [0, 0, 0]])
    _close(nd.linalg.makediag(_a([1.0, 2.0]), -1), [[0, 0, 0], [1.0, 0, 0], [0, 2.0, 0]])
    _close(nd.linalg.makediag(_a([[1.0, 2.0], [3.0, 4.0]])),
           [[[1.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [0.0, 4.0]]])
    _close(nd.linalg.extracttrian(A), [1.0, 3.0, 4.0])
    _close(nd.linalg.extracttrian(A, lower=False), [1.0, 2.0, 4.0])
    _close(nd.linalg.extracttrian(A, 1), [2.0])
    _close(nd.linalg.extracttrian(A, -1), [3.0])
    t = _a([1.0, 2.0, 3.0])
    _close(nd.linalg.maketrian(t), [[1.0, 0.0], [2.0, 3.0]])
    _close(nd.linalg.maketrian(t, lower=False), [[1.0, 2.0], [0.0, 3.0]])
    _close(nd.linalg.maketrian(t, offset=1), [[0, 1.0, 2.0], [0, 0, 3.0], [0, 0, 0]])
    _close(nd.linalg.maketrian(t, offset=-1), [[0, 0, 0], [1.0, 0, 0], [2.0, 3.0, 0]])
    _close(nd.linalg.maketrian(_a([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), offset=1),
           [[[0, 1.0, 2.0], [0, 0, 3.0], [0, 0, 0]], [[0, 4.0, 5.0], [0, 0, 6.0], [0, 0, 0]]])
    m = RNG.standard_normal((2, 5, 5))
    for off in (-2, 0, 3):
        for lower in (True, False):
            v = nd.linalg.extracttrian(_a(m), off, lower)
            keep = onp.tril(m, off) if (off < 0 or (off == 0 and lower)) else onp.triu(m, off)
            _close(nd.linalg.maketrian(v, off, lower), keep)


def test_dtype_and_shape_errors():
    with pytest.raises(TypeError):
        nd.linalg.inverse(nd.array([[1, 2], [3, 4]], dtype="int32"))
    with pytest.raises(ValueError):
        nd.linalg.gemm2(_a(onp.ones((2, 3))), _a(onp.ones((2, 3))))
    with pytest.raises(ValueError):
        nd.linalg.potrf(_a(onp.ones((2, 3))))
    with pytest.raises(ValueError):
        nd.linalg.maketrian(_a(onp.ones(4)))


# ---- linalg gradients against numeric gradients of NumPy formulas --------------------------


def test_gemm2_gradient():
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4))
    w = RNG.standard_normal((2, 3, 5))
    ga, gb = _autograd(lambda x, y: (nd.linalg.gemm2(x, y, transpose_b=True, alpha=1.5) *
                                     _a(w)).sum(), a, b)
    _close(ga, _numeric_grad(lambda x: (1.5 * x @ onp.swapaxes(b, -1, -2) * w).sum(), a), 1e-6)
    _close(gb, _numeric_grad(lambda y: (1.5 * a @ onp.swapaxes(y, -1, -2) * w).sum(), b), 1e-6)


def test_gemm_gradient_with_axis():
    a, b, c = (RNG.standard_normal(s) for s in ((3, 2, 4), (4, 2, 5), (3, 2, 5)))
    w = RNG.standard_normal((3, 2, 5))

    def ref(x, y, z):
        return ((0.5 * onp.einsum("rkc,ckd->rkd", x, y) + 2.0 * z) * w).sum()

    grads = _autograd(lambda x, y, z: (nd.linalg.gemm(x, y, z, alpha=0.5, beta=2.0, axis=0) *
                                       _a(w)).sum(), a, b, c)
    _close(grads[0], _numeric_grad(lambda x: ref(x, b, c), a), 1e-6)
    _close(grads[1], _numeric_grad(lambda y: ref(a, y, c), b), 1e-6)
    _close(grads[2], 2.0 * w, 1e-9)


def test_potrf_gradient():
    x = RNG.standard_normal((2, 3, 3))
    w = onp.tril(RNG.standard_normal((2, 3, 3)))

    def spd(m):
        return m @ onp.swapaxes(m, -1, -2) + 3 * onp.eye(3)

    (g,) = _autograd(lambda m: (nd.linalg.potrf(nd.linalg.syrk(m) + _a(3 * onp.eye(3))) *
                                _a(w)).sum(), x)
    _close(g, _numeric_grad(lambda m: (onp.linalg.cholesky(spd(m)) * w).sum(), x), 1e-5)


def test_inverse_gradient():
    a = RNG.standard_normal((2, 3, 3)) + 3 * onp.eye(3)
    w = RNG.standard_normal((2, 3, 3))
    (g,) = _autograd(lambda m: (nd.linalg.inverse(m) * _a(w)).sum(), a)
    _close(g, _numeric_grad(lambda m: (onp.linalg.inv(m) * w).sum(), a), 1e-5)


def test_trsm_det_sumlogdiag_maketrian_gradients():
    t = onp.tril(RNG.standard_normal((3, 3))) + 3 * onp.eye(3)
    b = RNG.standard_normal((3, 2))
    w = RNG.standard_normal((3, 2))
    gt, gb = _autograd(lambda x, y: (nd.linalg.trsm(x, y, alpha=2.0) * _a(w)).sum(), t, b)
    _close(gt, _numeric_grad(lambda x: (2 * onp.linalg.solve(onp.tril(x), b) * w).sum(), t),
           1e-5)
    _close(gb, _numeric_grad(lambda y: (2 * onp.linalg.solve(t, y) * w).sum(), b), 1e-5)
    a = RNG.standard_normal((2, 3, 3)) + 3 * onp.eye(3)
    (g,) = _autograd(lambda m: nd.linalg.det(m).sum(), a)
    _close(g, _numeric_grad(lambda m: onp.linalg.det(m).sum(), a), 1e-5)
    (g,) = _autograd(lambda m: nd.linalg.sumlogdiag(m).sum(), onp.abs(a))
    _close(g, _numeric_grad(lambda m: onp.log(onp.diagonal(m, 0, -2, -1)).sum(), onp.abs(a)),
           1e-5)
    v = RNG.standard_normal((2, 6))
    wm = RNG.standard_normal((2, 4, 4))
    (g,) = _autograd(lambda x: (nd.linalg.maketrian(x, offset=1) * _a(wm)).sum(), v)
    rows, cols = onp.triu_indices(4, 1)
    _close(g, wm[:, rows, cols], 1e-9)


# ---- image -----------------------------------------------------------------------------------


def _image(shape=(4, 6, 3)):
    return onp.random.default_rng(3).integers(0, 256, shape).astype("uint8")


def test_image_ops_match_numpy():
    img = _image()
    x = nd.array(img, dtype="uint8")
    t = nd.image.to_tensor(x)
    assert isinstance(t, nd.NDArray) and t.dtype == onp.float32
    _close(t, onp.transpose(img, (2, 0, 1)) / 255.0, 1e-6)
    n = nd.image.normalize(t, mean=(0.0, 1.0, 2.0), std=(3.0, 2.0, 1.0))
    want = (onp.transpose(img, (2, 0, 1)) / 255.0 - onp.array([0, 1, 2])[:, None, None]) / \
        onp.array([3, 2, 1])[:, None, None]
    _close(n, want, 1e-6)
    _close(nd.image.crop(x, 1, 1, 2, 2), img[1:3, 1:3])
    _close(nd.image.flip_left_right(x), img[:, ::-1])
    _close(nd.image.flip_top_bottom(x), img[::-1])
    assert nd.image.resize(x, (3, 2)).shape == (2, 3, 3)
    assert nd.image.resize(x, (5, 5)).dtype == onp.uint8
    batch = nd.array(_image((2, 4, 6, 3)), dtype="uint8")
    assert nd.image.to_tensor(batch).shape == (2, 3, 4, 6)
    assert nd.image.crop(batch, 1, 1, 2, 2).shape == (2, 2, 2, 3)


def test_random_image_ops():
    img = _image()
    x = nd.array(img, dtype="uint8")
    for _ in range(5):
        f = nd.image.random_flip_left_right(x).asnumpy()
        assert (f == img).all() or (f == img[:, ::-1]).all()
    b = nd.image.random_brightness(nd.array(img, dtype="float32"), 0.5, 0.5)
    _close(b, img * 0.5, 1e-4)
    mx.random.seed(0)
    c = nd.image.random_crop(x, width=3, height=2)
    assert c.shape == (2, 3, 3)
    # the crop is a window of the image
    c = c.asnumpy()
    assert any((img[i:i + 2, j:j + 3] == c).all() for i in range(3) for j in range(4))
    assert nd.image.random_crop(x, width=12, height=8).shape == (8, 12, 3)  # upsampled
    assert nd.image.random_resized_crop(x, width=5, height=5).shape == (5, 5, 3)
    assert nd.image.random_color_jitter(x, 0.1, 0.1, 0.1, 0.1).shape == img.shape
    assert nd.image.random_lighting(x).shape == img.shape
    _close(nd.image.adjust_lighting(nd.array(img, dtype="float32"), (0.0, 0.0, 0.0)), img)


# ---- sparse ----------------------------------------------------------------------------------


def test_sparse_dense_paths():
    z = nd.sparse.zeros("default", (2, 3))
    assert z.shape == (2, 3) and z.stype == "default" and not z.asnumpy().any()
    x = nd.ones((2, 3))
    assert x.tostype("default") is x
    assert nd.cast_storage(x, "default").shape == (2, 3)
    assert not isinstance(x, (nd.sparse.CSRNDArray, nd.sparse.RowSparseNDArray,
                              nd.sparse.BaseSparseNDArray))
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    _close(nd.sparse.dot(_a(a), _a(b)), a @ b)
    _close(nd.sparse.add(_a(a), _a(a)), 2 * a)
    _close(nd.sparse.multiply(_a(a), 2.0), 2 * a)


# ---- npx.slice_like, UpSampling, moments -----------------------------------------------------


def test_npx_slice_like():
    np, npx = mx.np, mx.npx
    d = onp.arange(60.0).reshape(3, 4, 5)
    _close(npx.slice_like(np.array(d), np.ones((2, 3))), d[:2, :3])
    _close(npx.slice_like(np.array(d), np.ones((2, 3, 4)), axes=(0, -1)), d[:2, :, :4])
    assert isinstance(nd.slice_like(nd.array(d), nd.ones((2, 2)), axes=(1,)), nd.NDArray)
    _close(nd.slice_like(nd.array(d), nd.ones((2, 2)), axes=(1,)), d[:, :2])
    with pytest.raises(ValueError):
        npx.slice_like(np.array(d), np.ones((2, 3)), axes=(-1,))
    x = np.array(d)
    x.attach_grad()
    with autograd.record():
        y = npx.slice_like(x, np.ones((2, 3))).sum()
    y.backward()
    want = onp.zeros_like(d)
    want[:2, :3] = 1
    _close(x.grad, want)


def test_upsampling_nearest_and_bilinear():
    x = onp.arange(8.0).reshape(1, 2, 2, 2)
    _close(nd.UpSampling(nd.array(x), scale=2, sample_type="nearest"),
           x.repeat(2, axis=2).repeat(2, axis=3))
    small = onp.ones((1, 1, 1, 1))
    _close(nd.UpSampling(nd.array(x), nd.array(small), scale=2, sample_type="nearest",
                         num_args=2), onp.concatenate([x.repeat(2, 2).repeat(2, 3),
                                                       onp.ones((1, 1, 4, 4))], axis=1))
    _close(nd.UpSampling(nd.array(x), nd.array(x), scale=2, sample_type="nearest",
                         multi_input_mode="sum", num_args=2), 2 * x.repeat(2, 2).repeat(2, 3))
    # MXNet's documented bilinear example
    out = nd.UpSampling(nd.ones((1, 1, 3, 3)), nd.ones((1, 1, 4, 4)), scale=2,
                        sample_type="bilinear", num_filter=1)
    edge = [1.0, 2.0, 2.0, 2.0, 2.0, 1.0]
    mid = [2.0, 4.0, 4.0, 4.0, 4.0, 2.0]
    _close(out, [[[edge, mid, mid, mid, mid, edge]]])


def test_moments():
    d = RNG.standard_normal((3, 4, 5))
    m, v = nd.moments(_a(d), axes=(0, 2))
    _close(m, d.mean(axis=(0, 2)))
    _close(v, d.var(axis=(0, 2)))
    m, v = nd.moments(_a(d), axes=(1,), keepdims=True)
    assert m.shape == v.shape == (3, 1, 5)
    _close(v, d.var(axis=1, keepdims=True))
