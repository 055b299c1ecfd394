"""np.linalg (issue 13) against NumPy: every function, batched, float32 / float64 / integer
input, zero-size matrices; gradients against central differences; LinAlgError for singular and
non-convergent input."""
import contextlib

import numpy as onp
import pytest

import ndx
from ndx import autograd, np
from test_products import _numeric_grad_check

R = onp.random.default_rng(13)


def _spd(n, batch=()):
    a = R.standard_normal(batch + (n, n))
    return a @ onp.swapaxes(a, -1, -2) + n * onp.eye(n)


def _close(x, want, rtol=1e-6, atol=1e-8):
    onp.testing.assert_allclose(x.asnumpy() if hasattr(x, "asnumpy") else x, want, rtol=rtol,
                                atol=atol)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0), (0, 2, 2), (2, 0, 0)])
def test_inv_det_slogdet(shape):
    a = R.standard_normal(shape) + 3 * onp.eye(shape[-1])
    _close(np.linalg.inv(np.array(a)), onp.linalg.inv(a))
    _close(np.linalg.det(np.array(a)), onp.linalg.det(a))
    sign, logdet = np.linalg.slogdet(np.array(a))
    want = onp.linalg.slogdet(a)
    _close(sign, want.sign)
    _close(logdet, want.logabsdet)


def test_float32_and_integer_input():
    a = R.standard_normal((4, 4)).astype(onp.float32) + 4 * onp.eye(4, dtype=onp.float32)
    r = np.linalg.inv(np.array(a))
    assert r.dtype == onp.float32
    _close(r, onp.linalg.inv(a), rtol=1e-4, atol=1e-5)
    i = np.array([[2, 1], [1, 3]])
    assert np.linalg.inv(i).dtype == onp.float32
    _close(np.linalg.det(i), 5.0, rtol=1e-6)
    with pytest.raises(TypeError):
        np.linalg.inv(np.array(a, dtype="float16"))


def test_singular_matrices():
    s = onp.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        np.linalg.inv(np.array(s))
    with pytest.raises(onp.linalg.LinAlgError):  # NumPy's class catches it too
        np.linalg.solve(np.array(s), np.ones(2, dtype="float64"))
    with pytest.raises(ValueError):
        np.linalg.inv(np.array(s))
    assert float(np.linalg.det(np.array(s))) == 0.0
    sign, logdet = np.linalg.slogdet(np.array(s))
    assert float(sign) == 0.0 and float(logdet) == -onp.inf
    assert issubclass(ndx.LinAlgError, ValueError)


@pytest.mark.parametrize("a_shape,b_shape", [
    ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 4)), ((2, 3, 3), (3,)),
    ((2, 3, 3), (3, 1)), ((3, 3), (2, 3, 2)), ((0, 2, 2), (0, 2, 1))])
def test_solve(a_shape, b_shape):
    a = R.standard_normal(a_shape) + 3 * onp.eye(a_shape[-1])
    b = R.standard_normal(b_shape)
    _close(np.linalg.solve(np.array(a), np.array(b)), onp.linalg.solve(a, b))


@pytest.mark.parametrize("batch", [(), (3,)])
def test_cholesky(batch):
    a = _spd(4, batch)
    _close(np.linalg.cholesky(np.array(a)), onp.linalg.cholesky(a))
    _close(np.linalg.cholesky(np.array(a), upper=True), onp.linalg.cholesky(a, upper=True))
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        np.linalg.cholesky(np.array(-a))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(shape, mode):
    a = R.standard_normal(shape)
    q, r = np.linalg.qr(np.array(a), mode=mode)
    wq, wr = onp.linalg.qr(a, mode=mode)
    assert q.shape == wq.shape and r.shape == wr.shape
    qn, rn = q.asnumpy(), r.asnumpy()
    _close(qn @ rn, a)
    _close(onp.swapaxes(qn, -1, -2) @ qn, onp.broadcast_to(onp.eye(qn.shape[-1]),
                                                           wq.shape[:-2] + (qn.shape[-1],) * 2),
           atol=1e-12)
    assert onp.allclose(onp.tril(rn, -1), 0)
    _close(onp.abs(rn), onp.abs(wr))  # signs are LAPACK's choice; magnitudes are unique
    _close(np.linalg.qr(np.array(a), mode="r"), r.asnumpy() if mode == "reduced"
           else np.linalg.qr(np.array(a)).R.asnumpy())


def test_eigh_and_eigvalsh():
    a = _spd(5, (2,))
    w, v = np.linalg.eigh(np.array(a))
    _close(w, onp.linalg.eigvalsh(a))
    wn, vn = w.asnumpy(), v.asnumpy()
    _close(a @ vn, vn * wn[..., None, :], atol=1e-10)
    _close(np.linalg.eigvalsh(np.array(a)), onp.linalg.eigvalsh(a))
    lower_only = onp.tril(a[0]) + onp.triu(R.standard_normal((5, 5)), 1)  # upper ignored
    _close(np.linalg.eigvalsh(np.array(lower_only)), onp.linalg.eigvalsh(lower_only))
    _close(np.linalg.eigvalsh(np.array(a), UPLO="U"), onp.linalg.eigvalsh(a, UPLO="U"))
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.eigh(np.array([[onp.nan, 0.0], [0.0, 1.0]]))


def test_eig_real_and_complex():
    a = onp.array([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [0.0, 0.0, -1.0]])
    w, v = np.linalg.eig(np.array(a))
    _close(onp.sort(w.asnumpy()), onp.sort(onp.linalg.eigvals(a).real))
    _close(a @ v.asnumpy(), v.asnumpy() * w.asnumpy()[None, :], atol=1e-12)
    _close(onp.sort(np.linalg.eigvals(np.array(a)).asnumpy()), [-1.0, 2.0, 3.0])
    assert w.dtype == onp.float64  # NumPy: real eigenvalues of real input stay real
    rot = onp.array([[0.0, -1.0], [1.0, 0.0]])  # eigenvalues +-i: complex results
    w, v = np.linalg.eig(np.array(rot))
    want_w, want_v = onp.linalg.eig(rot)
    assert w.dtype == onp.complex128 and v.dtype == onp.complex128
    _close(w, want_w)
    _close(v, want_v)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 2), (0, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(shape, full):
    a = R.standard_normal(shape)
    u, s, vh = np.linalg.svd(np.array(a), full_matrices=full)
    wu, ws, wvh = onp.linalg.svd(a, full_matrices=full)
    assert u.shape == wu.shape and s.shape == ws.shape and vh.shape == wvh.shape
    _close(s, ws)
    k = ws.shape[-1]
    _close(u.asnumpy()[..., :k] * s.asnumpy()[..., None, :] @ vh.asnumpy()[..., :k, :], a,
           atol=1e-12)
    _close(np.linalg.svd(np.array(a), compute_uv=False), ws)
    _close(np.linalg.svdvals(np.array(a)), ws)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.svd(np.array(onp.full((2, 2), onp.inf)))


@pytest.mark.parametrize("m,n,k", [(6, 3, None), (6, 3, 2), (3, 5, 2), (4, 4, None)])
def test_lstsq(m, n, k):
    a = R.standard_normal((m, n))
    b = R.standard_normal((m,) if k is None else (m, k))
    x, res, rank, s = np.linalg.lstsq(np.array(a), np.array(b))
    wx, wres, wrank, ws = onp.linalg.lstsq(a, b)
    _close(x, wx)
    _close(res, wres)
    assert rank == wrank
    _close(s, ws)


def test_lstsq_rank_deficient():
    a = onp.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = onp.array([1.0, 2.0, 3.5])
    x, res, rank, s = np.linalg.lstsq(np.array(a), np.array(b))
    wx, wres, wrank, ws = onp.linalg.lstsq(a, b)
    _close(x, wx)
    assert rank == wrank == 1 and res.shape == wres.shape == (0,)


def test_lstsq_cutoff_is_numpys_and_the_same_while_recording():
    # Singular values 1, 1e-3, 1e-6 and 4e-16: the last is above machine precision (rcond=-1)
    # and below eps * max(M, N) (rcond=None, NumPy's default).
    u = onp.linalg.qr(R.standard_normal((8, 8)))[0][:, :4]
    v = onp.linalg.qr(R.standard_normal((4, 4)))[0]
    a = (u * onp.array([1.0, 1e-3, 1e-6, 4e-16])) @ v.T
    b = R.standard_normal(8)
    for rcond in (None, -1, 1e-4):
        want_x, _, want_rank, want_s = onp.linalg.lstsq(a, b, rcond=rcond)
        for recording in (False, True):
            na = np.array(a)
            na.attach_grad()
            with autograd.record() if recording else contextlib.nullcontext():
                x, _, rank, s = np.linalg.lstsq(na, np.array(b), rcond=rcond)
            assert rank == want_rank, (rcond, recording)
            _close(s, want_s, atol=1e-12)
            if want_rank == 3:  # (x is ill-conditioned when the 4e-16 value counts)
                _close(x, want_x, rtol=1e-6, atol=1e-8)


def test_hermitian_flags():
    a = _spd(4, (2,)) - 6 * onp.eye(4)  # symmetric, eigenvalues of both signs
    u, s, vh = np.linalg.svd(np.array(a), hermitian=True)
    _close(s, onp.linalg.svd(a, compute_uv=False))
    _close(u.asnumpy() * s.asnumpy()[..., None, :] @ vh.asnumpy(), a, atol=1e-10)
    _close(np.linalg.svd(np.array(a), compute_uv=False, hermitian=True),
           onp.linalg.svd(a, compute_uv=False, hermitian=True))
    _close(np.linalg.pinv(np.array(a), hermitian=True), onp.linalg.pinv(a, hermitian=True))
    _close(np.linalg.matrix_rank(np.array(a), hermitian=True),
           onp.linalg.matrix_rank(a, hermitian=True))


def test_pinv_matrix_rank_cond():
    a = R.standard_normal((2, 5, 3))
    _close(np.linalg.pinv(np.array(a)), onp.linalg.pinv(a, rtol=None))
    d = onp.array([[1.0, 2.0], [2.0, 4.0]])
    _close(np.linalg.pinv(np.array(d)), onp.linalg.pinv(d, rtol=None))
    _close(np.linalg.pinv(np.array(a), rcond=0.5), onp.linalg.pinv(a, rcond=0.5))
    assert int(np.linalg.matrix_rank(np.array(d))) == 1
    _close(np.linalg.matrix_rank(np.array(a)), onp.linalg.matrix_rank(a))
    assert int(np.linalg.matrix_rank(np.array([0.0, 1.0]))) == 1
    assert int(np.linalg.matrix_rank(np.array(onp.eye(4)), tol=2.0)) == 0
    sq = R.standard_normal((4, 4))
    for p in (None, 2, -2, "fro", "nuc", 1, -1, onp.inf, -onp.inf):
        _close(np.linalg.cond(np.array(sq), p), onp.linalg.cond(sq, p), rtol=1e-6)
    batch = R.standard_normal((3, 2, 2))
    for p in (None, 1, "fro"):
        _close(np.linalg.cond(np.array(batch), p), onp.linalg.cond(batch, p), rtol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -3])
def test_matrix_power(n):
    a = R.standard_normal((2, 3, 3)) + 2 * onp.eye(3)
    _close(np.linalg.matrix_power(np.array(a), n), onp.linalg.matrix_power(a, n), rtol=1e-9)
    with pytest.raises(TypeError):
        np.linalg.matrix_power(np.array(a), 1.5)


def test_multi_dot():
    shapes = [(10, 30), (30, 5), (5, 60), (60, 3)]
    arrays = [R.standard_normal(s) for s in shapes]
    _close(np.linalg.multi_dot([np.array(x) for x in arrays]), onp.linalg.multi_dot(arrays))
    v1, v2 = R.standard_normal(10), R.standard_normal(3)
    args = [v1] + arrays + [v2]
    _close(np.linalg.multi_dot([np.array(x) for x in args]), onp.linalg.multi_dot(args))
    with pytest.raises(ValueError):
        np.linalg.multi_dot([np.ones((2, 2))])


NORM_CASES = [((5,), None, None), ((5,), 1, None), ((5,), onp.inf, None), ((5,), -onp.inf, None),
              ((5,), 0, None), ((5,), 3, None), ((5,), -1, None), ((3, 4), None, None),
              ((3, 4), "fro", None), ((3, 4), "nuc", None), ((3, 4), 2, None),
              ((3, 4), -2, None), ((3, 4), 1, None), ((3, 4), -1, None), ((3, 4), onp.inf, None),
              ((3, 4), -onp.inf, None), ((2, 3, 4), None, 1), ((2, 3, 4), 3, -1),
              ((2, 3, 4), None, (0, 2)), ((2, 3, 4), 1, (2, 1)), ((2, 3, 4), "nuc", (1, 2)),
              ((2, 3, 4), onp.inf, (0, 1)), ((2, 3, 4), None, None)]


@pytest.mark.parametrize("shape,ord,axis", NORM_CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm(shape, ord, axis, keepdims):
    x = R.standard_normal(shape)
    x.reshape(-1)[0] = 0.0
    _close(np.linalg.norm(np.array(x), ord, axis, keepdims),
           onp.linalg.norm(x, ord, axis, keepdims))


def test_vector_and_matrix_norm():
    x = R.standard_normal((2, 3, 4))
    _close(np.linalg.vector_norm(np.array(x)), onp.linalg.vector_norm(x))
    _close(np.linalg.vector_norm(np.array(x), axis=(0, 2), ord=1, keepdims=True),
           onp.linalg.vector_norm(x, axis=(0, 2), ord=1, keepdims=True))
    _close(np.linalg.vector_norm(np.array(x), axis=1, ord=onp.inf),
           onp.linalg.vector_norm(x, axis=1, ord=onp.inf))
    _close(np.linalg.matrix_norm(np.array(x)), onp.linalg.matrix_norm(x))
    _close(np.linalg.matrix_norm(np.array(x), ord="nuc", keepdims=True),
           onp.linalg.matrix_norm(x, ord="nuc", keepdims=True))
    i = np.array([[3, 4]])
    assert np.linalg.norm(i).dtype == onp.float32 and float(np.linalg.norm(i)) == 5.0
    with pytest.raises(ValueError):
        np.linalg.norm(np.ones((2, 3, 4)), ord=2)
    with pytest.raises(ValueError):
        np.linalg.norm(np.ones((3,)), ord="fro")
    with pytest.raises(ValueError):
        np.linalg.norm(np.ones((3, 3)), ord=3)


def test_tensorinv_tensorsolve():
    a = (R.standard_normal((24, 24)) + 5 * onp.eye(24)).reshape(4, 6, 8, 3)
    _close(np.linalg.tensorinv(np.array(a)), onp.linalg.tensorinv(a), rtol=1e-8)
    b = R.standard_normal((4, 6))
    _close(np.linalg.tensorsolve(np.array(a), np.array(b)), onp.linalg.tensorsolve(a, b),
           rtol=1e-8)
    a2 = (R.standard_normal((6, 6)) + 4 * onp.eye(6)).reshape(3, 2, 6)
    b2 = R.standard_normal((3, 2))
    _close(np.linalg.tensorsolve(np.array(a2), np.array(b2)), onp.linalg.tensorsolve(a2, b2),
           rtol=1e-8)
    c = (R.standard_normal((6, 6)) + 4 * onp.eye(6)).reshape(6, 3, 2)
    _close(np.linalg.tensorsolve(np.array(c), np.array(b2), axes=(0,)),
           onp.linalg.tensorsolve(c, b2, axes=(0,)), rtol=1e-8)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.tensorinv(np.ones((2, 3)), ind=1)


def test_array_api_aliases():
    x, y = R.standard_normal((4, 3)), R.standard_normal((4, 3))
    _close(np.linalg.cross(np.array(x), np.array(y)), onp.linalg.cross(x, y))
    m = R.standard_normal((2, 3, 3))
    _close(np.linalg.diagonal(np.array(m), offset=1), onp.linalg.diagonal(m, offset=1))
    _close(np.linalg.trace(np.array(m)), onp.linalg.trace(m))
    _close(np.linalg.outer(np.array(x[0]), np.array(y[1])), onp.linalg.outer(x[0], y[1]))
    _close(np.linalg.tensordot(np.array(x), np.array(y), axes=([0], [0])),
           onp.linalg.tensordot(x, y, axes=([0], [0])))
    _close(np.linalg.vecdot(np.array(x), np.array(y)), onp.linalg.vecdot(x, y))
    _close(np.linalg.matrix_transpose(np.array(m)), onp.linalg.matrix_transpose(m))
    with pytest.raises(ValueError):
        np.linalg.outer(np.ones((2, 2)), np.ones(2))


@pytest.mark.parametrize("call,exc", [
    (lambda: np.linalg.inv(np.ones(3)), np.linalg.LinAlgError),
    (lambda: np.linalg.inv(np.ones((2, 3))), np.linalg.LinAlgError),
    (lambda: np.linalg.det(np.ones((2, 3))), np.linalg.LinAlgError),
    (lambda: np.linalg.solve(np.eye(3), np.ones(2)), ValueError),
    (lambda: np.linalg.cholesky(np.ones((2, 3))), np.linalg.LinAlgError),
    (lambda: np.linalg.qr(np.ones(3)), np.linalg.LinAlgError),
    (lambda: np.linalg.qr(np.ones((2, 2)), mode="bad"), ValueError),
    (lambda: np.linalg.eigh(np.ones((2, 2)), UPLO="X"), ValueError),
    (lambda: np.linalg.svd(np.ones(3)), np.linalg.LinAlgError),
    (lambda: np.linalg.lstsq(np.ones((3, 2)), np.ones(4)), np.linalg.LinAlgError),
    (lambda: np.linalg.inv(np.ones((2, 2), dtype="int32").astype("bfloat16")), TypeError),
    (lambda: np.linalg.svd(np.array([[onp.nan]])), np.linalg.LinAlgError),
])
def test_bad_input(call, exc):
    with pytest.raises(exc):
        call()


# ---------------------------------------------------------------- gradients
def _sym(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


GRAD_CASES = [
    ("inv", lambda a: np.linalg.inv(a), [(2, 3, 3)]),
    ("det", lambda a: np.linalg.det(a), [(2, 3, 3)]),
    ("slogdet", lambda a: np.linalg.slogdet(a)[1], [(3, 3)]),
    ("solve", lambda a, b: np.linalg.solve(a, b), [(2, 3, 3), (2, 3, 2)]),
    ("solve-vector", lambda a, b: np.linalg.solve(a, b), [(3, 3), (3,)]),
    ("cholesky", lambda a: np.linalg.cholesky(np.matmul(a, np.swapaxes(a, -1, -2))
                                              + 3 * np.eye(3)), [(2, 3, 3)]),
    ("cholesky-upper", lambda a: np.linalg.cholesky(np.matmul(a, a.T) + 3 * np.eye(3),
                                                    upper=True), [(3, 3)]),
    ("qr", lambda a: np.concatenate([x.reshape(-1) for x in np.linalg.qr(a)]), [(4, 3)]),
    ("qr-square", lambda a: np.linalg.qr(a)[0] + np.linalg.qr(a)[1], [(2, 3, 3)]),
    ("eigh-values", lambda a: np.linalg.eigvalsh(_sym(a)), [(2, 4, 4)]),
    ("eigh-vectors", lambda a: np.linalg.eigh(_sym(a))[1] ** 2, [(4, 4)]),
    ("svd-values", lambda a: np.linalg.svdvals(a), [(4, 3)]),
    ("svd-wide", lambda a: np.linalg.svd(a, full_matrices=False)[1], [(2, 3, 5)]),
    ("svd-uv", lambda a: _svd_invariant(a), [(5, 3)]),
    ("svd-uv-wide", lambda a: _svd_invariant(a), [(3, 4)]),
    ("pinv", lambda a: np.linalg.pinv(a), [(4, 3)]),
    # lstsq differentiates through svd while recording (the LAPACK op has no gradient)
    ("lstsq-tall", lambda a, b: np.linalg.lstsq(a, b)[0], [(5, 3), (5, 2)]),
    ("lstsq-wide", lambda a, b: np.linalg.lstsq(a, b)[0], [(3, 5), (3,)]),
    ("lstsq-residuals", lambda a, b: np.linalg.lstsq(a, b)[1], [(6, 3), (6,)]),
    ("lstsq-singular-values", lambda a, b: np.linalg.lstsq(a, b)[3], [(4, 3), (4,)]),
    ("norm-fro", lambda a: np.linalg.norm(a), [(3, 4)]),
    ("norm-2", lambda a: np.linalg.norm(a, 2), [(3, 4)]),
    ("norm-nuc", lambda a: np.linalg.norm(a, "nuc"), [(3, 4)]),
    ("norm-p", lambda a: np.linalg.norm(a, 3, axis=1), [(3, 4)]),
    ("matrix_power", lambda a: np.linalg.matrix_power(a, -2), [(3, 3)]),
    ("multi_dot", lambda a, b, c: np.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4, 2)]),
]


def _svd_invariant(a):
    """U diag(w) Vh for fixed w: invariant under the sign choice of each singular pair."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    w = np.array(onp.linspace(1.0, 2.0, s.shape[-1]))
    return np.matmul(u * w, vh) + s.reshape(-1)[0]


@pytest.mark.parametrize("name,fn,shapes", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradient(name, fn, shapes):
    arrays = [R.standard_normal(s) for s in shapes]
    if name in ("inv", "det", "slogdet", "solve", "solve-vector", "qr-square", "matrix_power"):
        arrays[0] = arrays[0] + 3 * onp.eye(shapes[0][-1])
    if name.startswith("eigh"):
        arrays[0] = arrays[0] + onp.diag(onp.arange(shapes[0][-1]) * 3.0)  # distinct values
    _numeric_grad_check(fn, arrays)


def test_gradient_second_order_of_inv():
    a = np.array(R.standard_normal((3, 3)) + 3 * onp.eye(3))
    a.attach_grad()
    with autograd.record():
        y = np.linalg.inv(a)
        (g,) = autograd.grad(y.sum(), [a], create_graph=True)
        z = (g * g).sum()
    z.backward()
    eps = 1e-6

    def first(x):
        xi = onp.linalg.inv(x)
        return -(xi.T @ onp.ones((3, 3)) @ xi.T)

    base = a.asnumpy()
    want = onp.zeros((3, 3))
    for i in range(9):
        p, m = base.copy(), base.copy()
        p.reshape(-1)[i] += eps
        m.reshape(-1)[i] -= eps
        want.reshape(-1)[i] = ((first(p) ** 2).sum() - (first(m) ** 2).sum()) / (2 * eps)
    _close(a.grad, want, rtol=1e-5, atol=1e-6)


def test_namespace():
    names = ("norm vector_norm matrix_norm det slogdet inv pinv solve lstsq svd svdvals qr "
             "cholesky eig eigvals eigh eigvalsh matrix_rank matrix_power multi_dot cond "
             "tensorinv tensorsolve cross diagonal outer tensordot trace vecdot "
             "matrix_transpose").split()
    for n in names:
        assert callable(getattr(np.linalg, n)), n
    assert issubclass(np.linalg.LinAlgError, onp.linalg.LinAlgError)


# ----------------------------------------------------------------------- complex input
def _c(shape, dtype="complex128"):
    return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(dtype)


def _hpd(n, batch=(), dtype="complex128"):
    a = _c(batch + (n, n), dtype)
    return (a @ onp.conj(onp.swapaxes(a, -1, -2)) + n * onp.eye(n)).astype(dtype)


_SQ = (3, 4, 4)
COMPLEX_CASES = [  # name, ndx function, NumPy function, input maker
    ("inv", np.linalg.inv, onp.linalg.inv, lambda t: [_c(_SQ, t)]),
    ("det", np.linalg.det, onp.linalg.det, lambda t: [_c(_SQ, t)]),
    ("slogdet-sign", lambda a: np.linalg.slogdet(a)[0], lambda a: onp.linalg.slogdet(a)[0],
     lambda t: [_c(_SQ, t)]),
    ("slogdet-log", lambda a: np.linalg.slogdet(a)[1], lambda a: onp.linalg.slogdet(a)[1],
     lambda t: [_c(_SQ, t)]),
    ("solve", np.linalg.solve, onp.linalg.solve, lambda t: [_c(_SQ, t), _c((3, 4, 2), t)]),
    ("solve-vector", np.linalg.solve, onp.linalg.solve, lambda t: [_c((4, 4), t), _c((4,), t)]),
    ("cholesky", np.linalg.cholesky, onp.linalg.cholesky, lambda t: [_hpd(4, (2,), t)]),
    ("cholesky-upper", lambda a: np.linalg.cholesky(a, upper=True),
     lambda a: onp.linalg.cholesky(a, upper=True), lambda t: [_hpd(3, (), t)]),
    ("qr-q", lambda a: np.linalg.qr(a)[0], lambda a: onp.linalg.qr(a)[0],
     lambda t: [_c((2, 5, 3), t)]),
    ("qr-r-complete", lambda a: np.linalg.qr(a, "complete")[1],
     lambda a: onp.linalg.qr(a, "complete")[1], lambda t: [_c((3, 5), t)]),
    ("eigvalsh", np.linalg.eigvalsh, onp.linalg.eigvalsh, lambda t: [_hpd(4, (2,), t)]),
    ("eigvalsh-U", lambda a: np.linalg.eigvalsh(a, "U"), lambda a: onp.linalg.eigvalsh(a, "U"),
     lambda t: [_hpd(4, (), t)]),
    ("svdvals", np.linalg.svdvals, onp.linalg.svdvals, lambda t: [_c((2, 5, 3), t)]),
    ("svd-hermitian", lambda a: np.linalg.svd(a, hermitian=True)[1],
     lambda a: onp.linalg.svd(a, hermitian=True)[1], lambda t: [_hpd(4, (), t)]),
    ("pinv", np.linalg.pinv, onp.linalg.pinv, lambda t: [_c((2, 5, 3), t)]),
    ("pinv-hermitian", lambda a: np.linalg.pinv(a, hermitian=True),
     lambda a: onp.linalg.pinv(a, hermitian=True), lambda t: [_hpd(4, (), t)]),
    ("matrix_rank", np.linalg.matrix_rank, onp.linalg.matrix_rank, lambda t: [_c(_SQ, t)]),
    ("cond", np.linalg.cond, onp.linalg.cond, lambda t: [_c(_SQ, t)]),
    ("cond-1", lambda a: np.linalg.cond(a, 1), lambda a: onp.linalg.cond(a, 1),
     lambda t: [_c((4, 4), t)]),
    ("matrix_power", lambda a: np.linalg.matrix_power(a, -3),
     lambda a: onp.linalg.matrix_power(a, -3), lambda t: [_c(_SQ, t)]),
    ("tensorinv", lambda a: np.linalg.tensorinv(a, ind=1),
     lambda a: onp.linalg.tensorinv(a, ind=1), lambda t: [_c((4, 2, 2), t)]),
    ("vecdot", np.linalg.vecdot, onp.linalg.vecdot, lambda t: [_c((3, 4), t), _c((3, 4), t)]),
    ("multi_dot", lambda a, b: np.linalg.multi_dot([a, b, a]),
     lambda a, b: onp.linalg.multi_dot([a, b, a]), lambda t: [_c((3, 3), t), _c((3, 3), t)]),
] + [
    (f"norm-{o}", lambda a, o=o: np.linalg.norm(a, o), lambda a, o=o: onp.linalg.norm(a, o),
     lambda t: [_c((3, 4), t)]) for o in (None, "fro", "nuc", 1, -1, 2, -2, onp.inf, -onp.inf)
] + [
    (f"vector_norm-{o}", lambda a, o=o: np.linalg.vector_norm(a, ord=o),
     lambda a, o=o: onp.linalg.vector_norm(a, ord=o), lambda t: [_c((5,), t)])
    for o in (2, 1, 0, 3, onp.inf, -onp.inf)
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name,f_nd,f_ref,make", COMPLEX_CASES,
                         ids=[c[0] for c in COMPLEX_CASES])
def test_complex_input_matches_numpy(name, f_nd, f_ref, make, dtype):
    xs = make(dtype)
    got, want = f_nd(*[np.array(x) for x in xs]), f_ref(*xs)
    want = onp.asarray(want)
    assert str(got.dtype) == str(want.dtype), (got.dtype, want.dtype)
    tol = 2e-4 if dtype == "complex64" else 1e-9
    _close(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_decompositions_reconstruct(dtype):
    tol = 1e-4 if dtype == "complex64" else 1e-10
    a = _c((2, 4, 4), dtype)
    w, v = np.linalg.eig(np.array(a))
    assert w.dtype == dtype and v.dtype == dtype
    _close(np.linalg.eigvals(np.array(a)), w.asnumpy())
    _close(a @ v.asnumpy(), v.asnumpy() * w.asnumpy()[..., None, :], rtol=tol, atol=tol)
    _close(onp.sort_complex(w.asnumpy()[0]), onp.sort_complex(onp.linalg.eigvals(a[0])),
           rtol=tol, atol=tol)
    h = _hpd(4, (2,), dtype)
    w, v = np.linalg.eigh(np.array(h))
    assert str(w.dtype) == ("float32" if dtype == "complex64" else "float64")
    vn = v.asnumpy()
    _close(vn @ (w.asnumpy()[..., None] * onp.conj(onp.swapaxes(vn, -1, -2))), h,
           rtol=tol, atol=tol)
    for full in (True, False):
        m = _c((2, 5, 3), dtype)
        u, s, vh = np.linalg.svd(np.array(m), full_matrices=full)
        k = 3
        _close((u.asnumpy()[..., :k] * s.asnumpy()[..., None, :]) @ vh.asnumpy()[..., :k, :], m,
               rtol=tol, atol=tol)
        assert u.shape == ((2, 5, 5) if full else (2, 5, 3))
    x, res, rank, sv = np.linalg.lstsq(np.array(m[0]), np.array(_c((5, 2), dtype)))
    assert rank == 3 and str(sv.dtype) == str(w.dtype) and str(res.dtype) == str(w.dtype)


def test_complex_real_matrix_with_complex_eigenvalues():
    a = R.standard_normal((6, 6))
    w, v = np.linalg.eig(np.array(a))
    want = onp.linalg.eigvals(a)
    assert w.dtype == onp.complex128
    _close(onp.sort_complex(w.asnumpy()), onp.sort_complex(want))
    _close(a @ v.asnumpy(), v.asnumpy() * w.asnumpy()[None, :], atol=1e-10)


def test_complex_singular_raises_linalg_error():
    s = onp.array([[1 + 1j, 2 + 2j], [2 + 2j, 4 + 4j]])
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        np.linalg.inv(np.array(s))
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        np.linalg.cholesky(np.array(-onp.eye(2, dtype=complex)))
    _close(np.linalg.det(np.array(s)), 0.0)


COMPLEX_GRADS = [
    ("inv", np.linalg.inv, onp.linalg.inv, 1),
    ("det", np.linalg.det, onp.linalg.det, 1),
    ("slogdet", lambda a: np.linalg.slogdet(a)[0] * np.linalg.slogdet(a)[1],
     lambda a: onp.linalg.slogdet(a)[0] * onp.linalg.slogdet(a)[1], 1),
    ("solve", np.linalg.solve, onp.linalg.solve, 2),
    ("matrix_power", lambda a: np.linalg.matrix_power(a, -2),
     lambda a: onp.linalg.matrix_power(a, -2), 1),
    ("norm-fro", lambda a: np.linalg.norm(a), onp.linalg.norm, 1),
]


@pytest.mark.parametrize("name,f_nd,f_ref,arity", COMPLEX_GRADS,
                         ids=[g[0] for g in COMPLEX_GRADS])
def test_complex_gradients(name, f_nd, f_ref, arity):
    import wirtinger
    xs = [_c((2, 3, 3)) + 3 * onp.eye(3)] + [_c((2, 3, 2)) for _ in range(arity - 1)]
    wirtinger.check(f_nd, f_ref, xs, R)


def test_cond_of_singular_matrices_is_inf_as_numpy():
    for m in (onp.zeros((2, 2)), onp.array([[1.0, 2.0], [0.0, 0.0]])):
        assert onp.isinf(float(np.linalg.cond(np.array(m)))) and onp.isinf(onp.linalg.cond(m))
