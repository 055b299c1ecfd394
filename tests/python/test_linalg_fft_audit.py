"""Differential audit of np.linalg / np.fft / products / polynomials against NumPy: regressions."""
import warnings

import numpy as onp
import pytest

from ndx import np


def _close(r, e, rtol=1e-6, atol=1e-8):
    r = r.asnumpy() if isinstance(r, np.ndarray) else onp.asarray(r)
    assert r.shape == onp.shape(e)
    assert r.dtype == onp.asarray(e).dtype
    onp.testing.assert_allclose(r, e, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- linalg
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_lstsq_with_no_right_hand_sides_still_reports_rank_and_singular_values(dtype):
    a = onp.arange(12.0).reshape(4, 3).astype(dtype)
    b = onp.zeros((4, 0), dtype)
    r = np.linalg.lstsq(np.array(a), np.array(b))
    e = onp.linalg.lstsq(a, b)
    assert r[0].shape == e[0].shape and r[1].shape == e[1].shape
    assert int(r[2]) == int(e[2]) == 2
    _close(r[3], e[3], rtol=1e-5, atol=1e-5)


def test_pinv_and_matrix_rank_take_one_cutoff_per_matrix():
    a = onp.diag([1.0, 1e-2, 1e-5, 0.0])
    stack = onp.stack([a, 2 * a, a[::-1, ::-1]])
    cut = onp.array([1e-1, 1e-3, 1e-6])
    _close(np.linalg.pinv(np.array(stack), rcond=np.array(cut)),
           onp.linalg.pinv(stack, rcond=cut))
    _close(np.linalg.pinv(np.array(stack), rtol=cut), onp.linalg.pinv(stack, rtol=cut))
    assert np.linalg.matrix_rank(np.array(stack), rtol=np.array(cut)).tolist() == \
        onp.linalg.matrix_rank(stack, rtol=cut).tolist() == [1, 2, 3]
    with pytest.raises(ValueError):
        np.linalg.pinv(np.array(stack), rtol=cut[:, None])


@pytest.mark.parametrize("uplo", ["l", "u"])
def test_eigh_takes_lower_case_uplo(uplo):
    a = onp.array([[2.0, 1.0], [1.0, 3.0]])
    _close(np.linalg.eigh(np.array(a), UPLO=uplo).eigenvalues,
           onp.linalg.eigh(a, UPLO=uplo).eigenvalues)
    _close(np.linalg.eigvalsh(np.array(a), uplo), onp.linalg.eigvalsh(a, uplo))
    with pytest.raises(ValueError):
        np.linalg.eigvalsh(np.array(a), "x")


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle_and_ignores_nan_in_the_other(uplo):
    a = onp.array([[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.5, -1.0, 4.0]])
    unread = onp.triu_indices(3, 1) if uplo == "L" else onp.tril_indices(3, -1)
    a[unread] = onp.nan
    want = onp.linalg.eigh(a, UPLO=uplo)
    got = np.linalg.eigh(np.array(a), UPLO=uplo)
    _close(got.eigenvalues, want.eigenvalues)
    _close(np.abs(got.eigenvectors), onp.abs(want.eigenvectors))  # (up to sign)
    _close(np.linalg.eigvalsh(np.array(a), uplo), want.eigenvalues)
    a[onp.diag_indices(3)] = onp.inf  # a read entry not finite: LinAlgError
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.eigh(np.array(a), UPLO=uplo)


def test_dot_out_must_be_exact_as_numpys():
    a = onp.arange(4.0).reshape(2, 2)
    # Another dtype, a strided view, another shape (float64 is spelled out: ndx's default
    # float is float32).
    for make in (lambda m: m.zeros((2, 2), "float32"), lambda m: m.zeros((2, 4), "float64")[:, ::2],
                 lambda m: m.zeros((3, 2), "float64")):
        with pytest.raises(ValueError):
            onp.dot(a, a, out=make(onp))
        with pytest.raises(ValueError, match="dot"):
            np.dot(np.array(a), np.array(a), out=make(np))
    out = np.zeros((2, 2), dtype="float64")
    assert np.dot(np.array(a), np.array(a), out=out) is out
    _close(out, a @ a)
    v = onp.arange(3, dtype=onp.int32)
    o = np.zeros((), dtype="int32")
    assert np.dot(np.array(v), np.array(v), out=o) is o and int(o) == 5


def test_qr_deprecated_modes():
    a = onp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    for mode in ("full", "f"):
        with pytest.warns(DeprecationWarning):
            q, r = np.linalg.qr(np.array(a), mode=mode)
        _close(np.matmul(q, r), a)
        assert q.shape == (3, 2) and r.shape == (2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(NotImplementedError):
            np.linalg.qr(np.array(a), mode="economic")


@pytest.mark.parametrize("shape", [(3,), ()])
def test_matrix_norm_of_fewer_than_two_dimensions_is_an_axis_error(shape):
    with pytest.raises(onp.exceptions.AxisError):
        onp.linalg.matrix_norm(onp.ones(shape))
    with pytest.raises(onp.exceptions.AxisError):
        np.linalg.matrix_norm(np.ones(shape))


@pytest.mark.parametrize("n", [2, 3])
def test_multi_dot_out_must_have_the_product_dtype(n):
    a = onp.ones((2, 3))
    arrays = [a, a.T, a][:n]
    out_bad = np.zeros((2, 2) if n == 2 else (2, 3), dtype="float32")
    with pytest.raises(ValueError):
        onp.linalg.multi_dot(arrays, out=onp.zeros(out_bad.shape, "float32"))
    with pytest.raises(ValueError):
        np.linalg.multi_dot([np.array(x) for x in arrays], out=out_bad)
    out = np.zeros(out_bad.shape, dtype="float64")
    assert np.linalg.multi_dot([np.array(x) for x in arrays], out=out) is out
    _close(out, onp.linalg.multi_dot(arrays))


# ---------------------------------------------------------------- fft
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_fft_of_a_0d_array_is_an_axis_error(name):
    # NumPy raises AxisError (axis given) or IndexError (its shape read): AxisError is both.
    for kw in ({}, {"axis": 0}):
        with pytest.raises(IndexError):
            getattr(onp.fft, name)(onp.array(1.0), **kw)
        with pytest.raises(onp.exceptions.AxisError):
            getattr(np.fft, name)(np.array(1.0), **kw)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "fft2"])
def test_fftn_axis_out_of_range_is_an_axis_error(name):
    # NumPy: AxisError with s given, IndexError without; AxisError is both.
    with pytest.raises(onp.exceptions.AxisError):
        getattr(onp.fft, name)(onp.ones((2, 4)), s=(2, 4), axes=(0, 2))
    with pytest.raises(IndexError):
        getattr(onp.fft, name)(onp.ones((2, 4)), axes=(0, 2))
    for s in ((2, 4), None):
        with pytest.raises(onp.exceptions.AxisError):
            getattr(np.fft, name)(np.ones((2, 4)), s=s, axes=(0, 2))


@pytest.mark.parametrize("name,n_out", [("fft", 4), ("ifft", 4), ("rfft", 3), ("fftn", 4)])
def test_fft_out_refuses_a_real_out_for_a_complex_result(name, n_out):
    x = onp.arange(4.0)
    with pytest.raises(TypeError):
        getattr(onp.fft, name)(x, out=onp.zeros(n_out))
    with pytest.raises(TypeError):
        getattr(np.fft, name)(np.array(x), out=np.zeros(n_out, dtype="float64"))
    out = np.zeros(n_out, dtype="complex128")
    assert getattr(np.fft, name)(np.array(x), out=out) is out
    _close(out, getattr(onp.fft, name)(x), atol=1e-6)


# ---------------------------------------------------------------- products
@pytest.mark.parametrize("axisc", [0, 1, -3])
def test_cross_axisc_places_the_vector_axis(axisc):
    rng = onp.random.default_rng(1)
    a, b = rng.standard_normal((5, 2, 4, 3)), rng.standard_normal((4, 3))
    _close(np.cross(np.array(a), np.array(b), axisc=axisc), onp.cross(a, b, axisc=axisc))
    _close(np.cross(np.array(a), np.array(b), axisa=-1, axisb=-1, axisc=axisc),
           onp.cross(a, b, axisa=-1, axisb=-1, axisc=axisc))


def test_einsum_out_follows_casting():
    a, b = onp.ones((2, 3)), onp.ones((3, 4))
    with pytest.raises(TypeError):
        onp.einsum("ij,jk->ik", a, b, out=onp.zeros((2, 4), "float32"))
    with pytest.raises(TypeError):
        np.einsum("ij,jk->ik", np.array(a), np.array(b), out=np.zeros((2, 4), dtype="float32"))
    out = np.zeros((2, 4), dtype="float32")
    np.einsum("ij,jk->ik", np.array(a), np.array(b), out=out, casting="unsafe")
    _close(out, onp.einsum("ij,jk->ik", a, b).astype("float32"))
    with pytest.raises(ValueError):  # the shape is checked first
        np.einsum("ij,jk->ik", np.array(a), np.array(b), out=np.zeros((9,), dtype="float32"))


def test_outer_out_follows_same_kind():
    a = onp.arange(3.0)
    with pytest.raises(TypeError):
        onp.outer(a, a, out=onp.zeros((3, 3), "int64"))
    with pytest.raises(TypeError):
        np.outer(np.array(a), np.array(a), out=np.zeros((3, 3), dtype="int64"))
    out = np.zeros((3, 3), dtype="float32")
    assert np.outer(np.array(a), np.array(a), out=out) is out
    _close(out, onp.outer(a, a).astype("float32"))


# ---------------------------------------------------------------- polynomials
@pytest.mark.parametrize("module,fn", [("legendre", "legval"), ("laguerre", "lagval")])
@pytest.mark.parametrize("tensor", [True, False])
def test_series_values_at_integer_x_are_in_double(module, fn, tensor):
    x = onp.array([3, -2])
    c = onp.array([[1, 2], [3, -4], [2, 1], [0, 1]])
    r = getattr(getattr(np.polynomial, module), fn)(np.array(x), np.array(c), tensor=tensor)
    e = getattr(getattr(onp.polynomial, module), fn)(x, c, tensor=tensor)
    _close(r, e, rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("shape,rowvar", [((1, 3), False), ((0, 3), True), ((3, 0), False),
                                          ((2, 3), False), ((3,), False)])
def test_cov_and_corrcoef_variables_as_numpy_2(shape, rowvar):
    """NumPy 2 transposes any m of 2 dimensions when rowvar=False: a (1, N) m is N variables
    (ndx gave one variable, a 0-d result); no variables give a float64 (0, 0) matrix."""
    m = onp.arange(float(onp.prod(shape))).reshape(shape) ** 1.5
    for name in ("cov", "corrcoef"):
        ref = getattr(onp, name)(m, rowvar=rowvar)
        got = getattr(np, name)(np.array(m), rowvar=rowvar)
        assert got.shape == ref.shape and got.dtype == ref.dtype, (name, got.shape, ref.shape)
        onp.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-12, equal_nan=True)
