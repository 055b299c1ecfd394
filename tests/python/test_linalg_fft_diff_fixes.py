"""np.linalg and np.fft against NumPy 2.4 where the differential fuzzer (tools/fuzz/np_diff.py)
found them apart: tensorsolve's shape, the dtype of mixed operands, norms of empty input,
lstsq's rank, float16 FFTs, and the exception classes of a few checks."""
import numpy as onp
import pytest

import ndx
import ndx.numpy as np

R = onp.random.default_rng(7)
INT_KINDS = "biu"


def _run(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001  (the class is what the tests compare)
        return None, e


def _expected_dtype(want_dtype, in_dtypes):
    """README: integer / bool operands alone compute in the default float (float32)."""
    if in_dtypes and all(onp.dtype(d).kind in INT_KINDS for d in in_dtypes):
        return {"float64": "float32", "complex128": "complex64"}.get(str(want_dtype),
                                                                      str(want_dtype))
    return str(want_dtype)


def _same(f_np, f_nd, in_dtypes=(), rtol=1e-5, atol=1e-6):
    """f_np() with NumPy and f_nd() with ndx agree: the same exception class (ndx's may be a
    subclass of NumPy's), or results of the same dtype, shape and values."""
    with onp.errstate(all="ignore"):  # NumPy's warnings of 0 ** -p and the like
        want, want_exc = _run(f_np)
    got, got_exc = _run(f_nd)
    if want_exc is not None:
        assert got_exc is not None, f"NumPy raised {want_exc!r}, ndx gave {got!r}"
        assert isinstance(got_exc, type(want_exc)), (want_exc, got_exc)
        return
    assert got_exc is None, f"ndx raised {got_exc!r}, NumPy gave {want!r}"
    want = onp.asarray(want)
    got_np = onp.asarray(got)
    assert str(got_np.dtype) == _expected_dtype(want.dtype, in_dtypes), (got_np.dtype,
                                                                         want.dtype)
    assert got_np.shape == want.shape
    onp.testing.assert_allclose(got_np.astype(want.dtype), want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- 1. tensorsolve
@pytest.mark.parametrize("sa,sb", [
    ((1, 1, 1, 1), (1, 1, 1, 1)), ((1, 1, 1, 1), (1, 1)), ((2, 3, 6), (2, 3)),
    ((2, 3, 2, 3), (2, 3)), ((6, 2, 3), (6,)), ((3,), (3,)), ((1,), (1,)), ((), ()),
    ((0, 0), (0,)), ((0,), (0,)), ((2, 0), (0,)), ((0, 2, 0), (0,)), ((0, 0, 0, 0), (0, 0)),
    ((2, 0), (2,)), ((2, 2), (3,)), ((4, 4), (2, 2))])
def test_tensorsolve_matches_numpy(sa, sb):
    a = R.standard_normal(sa) + 3 * (onp.eye(*sa[:2]).reshape(sa[:2] + (1,) * (len(sa) - 2))
                                     if len(sa) >= 2 and 0 not in sa else 0)
    b = R.standard_normal(sb)
    _same(lambda: onp.linalg.tensorsolve(a, b),
          lambda: np.linalg.tensorsolve(np.asarray(a), np.asarray(b)), rtol=1e-8)


def test_tensorsolve_shape_of_four_ones():
    a = np.asarray(onp.ones((1, 1, 1, 1)) * 5.)
    b = np.asarray(onp.ones((1, 1, 1, 1)) * 7.)
    x = np.linalg.tensorsolve(a, b)
    assert x.shape == (1, 1, 1, 1) and float(x.reshape(-1)[0]) == pytest.approx(1.4)


@pytest.mark.parametrize("sa,sb,axes", [
    ((6, 2, 3), (6,), (0,)), ((2, 6, 3), (2, 3), (1,)), ((2, 3, 6), (6,), (0, 1)),
    ((2, 3, 6), (6,), (1, 0)), ((2, 2, 4), (2, 2), (0, 0)), ((3, 2, 3, 2), (3, 2), (2,))])
def test_tensorsolve_axes_match_numpy(sa, sb, axes):
    a = R.standard_normal(sa)
    b = R.standard_normal(sb)
    _same(lambda: onp.linalg.tensorsolve(a, b, axes=axes),
          lambda: np.linalg.tensorsolve(np.asarray(a), np.asarray(b), axes=axes), rtol=1e-6)


def test_tensorsolve_axes_out_of_range_is_value_error():
    with pytest.raises(ValueError):  # NumPy: ValueError (ndx: AxisError, a ValueError)
        np.linalg.tensorsolve(np.asarray(onp.array(1, "int8")), np.asarray(onp.array(4.0)),
                              axes=(0, 1))
    # negative axes count from the end here (NumPy's list.remove refuses them)
    a = R.standard_normal((2, 3, 6))
    b = R.standard_normal((6,))
    want = onp.linalg.tensorsolve(a, b, axes=(0, 1))
    got = np.linalg.tensorsolve(np.asarray(a), np.asarray(b), axes=(-3, -2))
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-8)


# ---------------------------------------------------------------- 2. mixed operand dtypes
OPERAND_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                  "uint64", "float32", "float64", "complex64", "complex128", "float16"]


@pytest.mark.parametrize("da", ["float32", "float64", "complex64", "int32", "uint8"])
@pytest.mark.parametrize("db", OPERAND_DTYPES)
def test_solve_promotes_as_numpy(da, db):
    a = (onp.eye(3) * 2 + onp.diag([1, 1], 1)).astype(da)
    b = onp.arange(1, 4).astype(db)
    _same(lambda: onp.linalg.solve(a, b), lambda: np.linalg.solve(np.asarray(a), np.asarray(b)),
          (da, db), rtol=1e-5)


@pytest.mark.parametrize("da", ["float32", "complex64", "int64", "bool"])
@pytest.mark.parametrize("db", OPERAND_DTYPES)
def test_lstsq_promotes_as_numpy(da, db):
    a = onp.array([[1, 0], [1, 1], [1, 2]]).astype(da)
    b = onp.array([1, 0, 1]).astype(db)
    want, want_exc = _run(lambda: onp.linalg.lstsq(a, b))
    got, got_exc = _run(lambda: np.linalg.lstsq(np.asarray(a), np.asarray(b)))
    if want_exc is not None:
        assert isinstance(got_exc, type(want_exc))
        return
    for w, g in zip(want, got):
        g = onp.asarray(g)
        assert str(g.dtype) == _expected_dtype(onp.asarray(w).dtype, (da, db)), (g.dtype, w)
        onp.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_solve_of_float32_and_uint64_is_float64():
    got = np.linalg.solve(np.asarray(onp.eye(2, dtype="float32")),
                          np.asarray(onp.ones(2, dtype="uint64")))
    assert got.dtype == onp.float64


def test_integer_operands_alone_keep_the_default_float():
    a = np.asarray(onp.array([[2, 1], [1, 3]], "int64"))
    b = np.asarray(onp.array([1, 2], "uint64"))
    assert np.linalg.solve(a, b).dtype == onp.float32
    assert np.linalg.lstsq(a, b)[0].dtype == onp.float32
    assert np.linalg.tensorsolve(a, b).dtype == onp.float32


def test_tensorsolve_promotes_as_solve():
    a = onp.eye(2, dtype="uint8")
    b = onp.ones(2, dtype="float32")
    assert np.linalg.tensorsolve(np.asarray(a), np.asarray(b)).dtype == \
        onp.linalg.tensorsolve(a, b).dtype == onp.float64


# ---------------------------------------------------------------- 3. norms of empty input
VECTOR_ORDS = [None, 2, -2, 1, -1, 0, onp.inf, -onp.inf, 3, 0.5, -1.5, "fro", "nuc"]
MATRIX_ORDS = [None, "fro", "nuc", 2, -2, 1, -1, onp.inf, -onp.inf, 3]
EMPTY_DTYPES = ["float32", "float64", "complex64", "complex128", "int8"]


@pytest.mark.parametrize("dtype", EMPTY_DTYPES)
@pytest.mark.parametrize("shape,axis,ords", [
    ((0,), None, VECTOR_ORDS), ((2, 0), 1, VECTOR_ORDS), ((0, 3), 0, VECTOR_ORDS),
    ((0, 0), None, MATRIX_ORDS), ((2, 0), None, MATRIX_ORDS), ((0, 3), None, MATRIX_ORDS),
    ((2, 0, 3), (0, 2), MATRIX_ORDS), ((2, 3, 0), (1, 2), MATRIX_ORDS)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_of_empty_matches_numpy(dtype, shape, axis, ords, keepdims):
    x = onp.zeros(shape, dtype)
    for o in ords:
        _same(lambda: onp.linalg.norm(x, o, axis, keepdims),
              lambda: np.linalg.norm(np.asarray(x), o, axis, keepdims), (dtype,))


def test_norm_ord2_of_empty_complex():
    assert float(np.linalg.norm(np.asarray(onp.zeros((0,), "complex64")), ord=2)) == 0.0
    assert float(np.linalg.norm(np.asarray(onp.zeros((0, 0), "complex64")), ord=2)) == 0.0


@pytest.mark.parametrize("dtype", EMPTY_DTYPES)
@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3), (0, 0), (2, 0, 3)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norm_of_empty_matches_numpy(dtype, shape, keepdims):
    x = onp.zeros(shape, dtype)
    axes = [None, -1, (0,)] + ([(0, 1), (1, 0)] if len(shape) > 1 else []) + \
        ([(0, 2)] if len(shape) > 2 else [])
    for ax in axes:
        for o in [2, -2, 1, -1, 0, onp.inf, -onp.inf, 3]:
            _same(lambda: onp.linalg.vector_norm(x, axis=ax, keepdims=keepdims, ord=o),
                  lambda: np.linalg.vector_norm(np.asarray(x), axis=ax, keepdims=keepdims,
                                                ord=o), (dtype,))


@pytest.mark.parametrize("dtype", EMPTY_DTYPES)
@pytest.mark.parametrize("shape", [(2, 0), (0, 3), (0, 0), (2, 0, 3), (2, 3, 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm_of_empty_matches_numpy(dtype, shape, keepdims):
    x = onp.zeros(shape, dtype)
    for o in ["fro", "nuc", 2, -2, 1, -1, onp.inf, -onp.inf]:
        _same(lambda: onp.linalg.matrix_norm(x, keepdims=keepdims, ord=o),
              lambda: np.linalg.matrix_norm(np.asarray(x), keepdims=keepdims, ord=o), (dtype,))


def test_norms_of_nonempty_input_unchanged():
    x = R.standard_normal((3, 4, 5))
    for o in [onp.inf, 1, 2, -onp.inf]:
        _same(lambda: onp.linalg.norm(x, o, (0, 2)), lambda: np.linalg.norm(np.asarray(x), o,
                                                                         (0, 2)), rtol=1e-6)
    _same(lambda: onp.linalg.vector_norm(x, axis=(0, 2), ord=onp.inf),
          lambda: np.linalg.vector_norm(np.asarray(x), axis=(0, 2), ord=onp.inf))


# ---------------------------------------------------------------- 4. lstsq's rank
def test_lstsq_rank_is_int32():
    a = onp.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    want = onp.linalg.lstsq(a, onp.ones(3))[2]
    got = np.linalg.lstsq(np.asarray(a), np.asarray(onp.ones(3)))[2]
    assert type(got) is type(want) is onp.int32 and got == want == 2
    got = np.linalg.lstsq(np.asarray(onp.ones((3, 2), "int32")), np.asarray(onp.ones(3)))[2]
    assert isinstance(got, onp.int32) and got == 1


def test_polyfit_rank_is_int32():
    x, y = onp.array([1.0, 2.0, 3.0]), onp.array([1.0, 2.0, 4.0])
    want = onp.polyfit(x, y, 1, full=True)[2]
    got = np.polyfit(np.asarray(x), np.asarray(y), 1, full=True)[2]
    assert type(got) is type(want) and got == want


def test_lstsq_checks_dimensions_before_dtypes():
    for a, b in [(onp.ones((2, 2, 2), "float16"), onp.ones(2)),
                 (onp.ones((3, 2), "float16"), onp.ones(2)),
                 (onp.ones((3, 2), "complex64"), onp.ones((2, 2, 2), "float16"))]:
        _same(lambda: onp.linalg.lstsq(a, b), lambda: np.linalg.lstsq(np.asarray(a),
                                                                      np.asarray(b)))
    with pytest.raises(TypeError):
        np.linalg.lstsq(np.asarray(onp.ones((3, 2), "float16")), np.asarray(onp.ones(3)))


# ---------------------------------------------------------------- 5. fft dtypes
FFT_FUNCTIONS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn",
                 "ifftn", "rfft2", "irfft2", "rfftn", "irfftn"]


@pytest.mark.parametrize("name", FFT_FUNCTIONS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int16", "bool",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(6,), (3, 4)])
def test_fft_result_dtypes_match_numpy(name, dtype, shape):
    x = R.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * R.standard_normal(shape)
    x = x.astype(dtype)
    rtol = 3e-3 if dtype == "float16" else 1e-4 if dtype != "float64" and \
        dtype != "complex128" else 1e-10
    for kw in ({}, {"norm": "ortho"}, {"axes": (-1,)} if name[-1] in "2n" else {"axis": 0}):
        _same(lambda: getattr(onp.fft, name)(x, **kw),
              lambda: getattr(np.fft, name)(np.asarray(x), **kw), (dtype,), rtol=rtol,
              atol=rtol)


def test_irfft_of_float16_is_float16():
    x = onp.array([1.0, 2.5, -1.0, 0.5], "float16")
    for name in ("irfft", "hfft", "irfftn"):
        want = getattr(onp.fft, name)(x)
        got = getattr(np.fft, name)(np.asarray(x))
        assert want.dtype == got.dtype == onp.float16
        onp.testing.assert_allclose(onp.asarray(got), want, rtol=2e-3, atol=2e-3)
    got = np.fft.irfft2(np.asarray(x.reshape(2, 2)))  # a complex64 ifft first: float32
    assert got.dtype == onp.fft.irfft2(x.reshape(2, 2)).dtype == onp.float32


@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2",
                                  "rfftn", "irfftn"])
def test_fft_shape_and_axes_lengths_checked_first(name):
    for x, kw in [(onp.ones(3, "complex64"), {"s": (2,), "axes": (-2, -1)}),
                  (onp.array(2.0 - 3j), {"s": (2,), "axes": (-2, -1)}),
                  (onp.array(-4, "int8"), {"s": (3, 2), "axes": (-1,)})]:
        if name.startswith("r") and x.dtype.kind == "c":
            continue
        fn_np, fn_nd = getattr(onp.fft, name), getattr(np.fft, name)
        with pytest.raises(ValueError):
            fn_np(x, **kw)
        with pytest.raises(ValueError, match="different lengths"):
            fn_nd(np.asarray(x), **kw)


# ---------------------------------------------------------------- 6. exception classes
@pytest.mark.parametrize("shape,dtype", [((0, 0), "float32"), ((0,), "int64"),
                                         ((2, 0, 3), "complex128"), ((0, 0), "float16")])
def test_cond_of_empty_raises_linalgerror(shape, dtype):
    x = onp.zeros(shape, dtype)
    for p in (None, 1, "fro"):
        with pytest.raises(onp.linalg.LinAlgError):
            onp.linalg.cond(x, p)
        with pytest.raises(np.linalg.LinAlgError, match="empty"):
            np.linalg.cond(np.asarray(x), p)


@pytest.mark.parametrize("p", [1, -1, "fro", onp.inf, -onp.inf])
def test_cond_of_singular_matrix_is_inf(p):
    # (through inv: NumPy ignores its error; "nuc" then fails in NumPy's SVD of NaN)
    for x in (onp.ones((2, 2)), onp.ones((3, 2, 2), "float32")):
        _same(lambda: onp.linalg.cond(x, p), lambda: np.linalg.cond(np.asarray(x), p))


def test_pinv_of_empty_float16_and_shape_checks():
    for x in (onp.ones((0, 2), "float16"), onp.ones((2,), "float16"),
              onp.ones((3, 0), "complex64")):
        _same(lambda: onp.linalg.pinv(x), lambda: np.linalg.pinv(np.asarray(x)))


def test_multi_dot_of_two_arrays_is_dot():
    cases = [[onp.ones((2, 2, 3)), onp.ones(3, bool)],
             [onp.ones((2, 3), "int16"), onp.array(3, "uint8")],
             [onp.arange(24.0).reshape(2, 3, 4), onp.arange(20.0).reshape(4, 5)],
             [onp.ones(3), onp.ones(3)]]
    for a, b in cases:
        _same(lambda: onp.linalg.multi_dot([a, b]),
              lambda: np.linalg.multi_dot([np.asarray(a), np.asarray(b)]))


def test_multi_dot_dimension_error_is_linalgerror():
    arrays = [onp.ones((2, 2, 3)), onp.ones((3, 3)), onp.ones(3)]
    with pytest.raises(onp.linalg.LinAlgError):
        onp.linalg.multi_dot(arrays)
    with pytest.raises(ndx.LinAlgError):
        np.linalg.multi_dot([np.asarray(a) for a in arrays])


@pytest.mark.parametrize("s1,s2,axis", [
    ((3, 3), (3,), 0), ((3, 3), (3,), -1), ((2, 4, 3), (4, 3), 1), ((2, 4, 3), (3,), -1),
    ((5, 3), (1, 3), -1), ((3,), (3,), 0)])
def test_vecdot_axis_counts_in_each_operand(s1, s2, axis):
    x1 = R.standard_normal(s1) + 1j * R.standard_normal(s1)
    x2 = R.standard_normal(s2)
    _same(lambda: onp.linalg.vecdot(x1, x2, axis=axis),
          lambda: np.linalg.vecdot(np.asarray(x1), np.asarray(x2), axis=axis), rtol=1e-10)


def test_vecdot_errors_match_numpy():
    x, v = onp.ones((3, 3)), onp.ones(3)
    for a, b, kw in [(x, onp.array(2.0), {"axis": (-1, -2)}), (v, onp.array(-3), {"axis": 1}),
                     (v, v, {"axis": 1}), (v, v, {"axis": (0,)}), (v, v, {"axis": None}),
                     (x, onp.ones(2), {}), (onp.ones((2, 3)), onp.ones((4, 3)), {})]:
        _same(lambda: onp.linalg.vecdot(a, b, **kw),
              lambda: np.linalg.vecdot(np.asarray(a), np.asarray(b), **kw))


@pytest.mark.parametrize("case", [
    ("svd", (3,), {}), ("svd", (2, 3), {"hermitian": True}), ("svdvals", (3,), {}),
    ("qr", (3,), {}), ("qr", (3, 3), {}), ("pinv", (2, 3), {"hermitian": True}),
    ("matrix_rank", (1, 3), {"hermitian": True}), ("eigvalsh", (2, 3), {}),
    ("inv", (3,), {}), ("cholesky", (2, 3), {}), ("det", (3,), {}),
    ("slogdet", (2, 3), {}), ("eig", (2, 3), {}), ("eigh", (3,), {})])
def test_shape_checks_come_before_the_dtype_check(case):
    name, shape, kw = case
    x = onp.ones(shape, "float16")
    _same(lambda: getattr(onp.linalg, name)(x, **kw),
          lambda: getattr(np.linalg, name)(np.asarray(x), **kw))


def test_matrix_rank_refuses_tol_with_rtol():
    with pytest.raises(ValueError, match="both"):
        onp.linalg.matrix_rank(onp.eye(3), 0.1, rtol=0.2)
    with pytest.raises(ValueError, match="both"):
        np.linalg.matrix_rank(np.asarray(onp.eye(3)), 0.1, rtol=0.2)
    _same(lambda: onp.linalg.matrix_rank(onp.eye(3, dtype="complex64"), hermitian=True),
          lambda: np.linalg.matrix_rank(np.asarray(onp.eye(3, dtype="complex64")),
                                        hermitian=True))


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0)])
def test_hermitian_svd_of_empty_matrices(shape):
    x = onp.zeros(shape)
    want = onp.linalg.svd(x, hermitian=True)
    got = np.linalg.svd(np.asarray(x), hermitian=True)
    for w, g in zip(want, got):
        assert onp.asarray(g).shape == w.shape and g.dtype == w.dtype
    _same(lambda: onp.linalg.svd(x, hermitian=True, compute_uv=False),
          lambda: np.linalg.svd(np.asarray(x), hermitian=True, compute_uv=False))


def test_cond_of_no_matrices():
    x = onp.ones((0, 2, 2))
    _same(lambda: onp.linalg.cond(x, 1), lambda: np.linalg.cond(np.asarray(x), 1))
