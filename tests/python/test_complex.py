"""complex64 / complex128 (issue 13): creation, NumPy 2 promotion, elementwise math,
reductions, matmul, printing, the buffer protocol, typed errors for the ops without complex
kernels, and gradients under the conjugate Wirtinger convention (tests/python/wirtinger.py).
NumPy is the reference throughout."""
import numpy as onp
import pytest

import ndx
import wirtinger
from ndx import np

R = onp.random.default_rng(20261123)
C = ("complex64", "complex128")
TOL = {"complex64": dict(rtol=2e-5, atol=1e-5), "complex128": dict(rtol=1e-12, atol=1e-12)}


def carr(shape, dtype="complex128", low=-2.0, high=2.0):
    return (R.uniform(low, high, shape) + 1j * R.uniform(low, high, shape)).astype(dtype)


# ------------------------------------------------------------------------------ creation
def test_array_from_python_complex_follows_the_default_float():
    a = np.array([1 + 2j, 3, -0.5j])
    assert a.dtype == onp.complex64  # NumPy: complex128; ndx's default float is float32
    onp.testing.assert_array_equal(a.asnumpy(), onp.array([1 + 2j, 3, -0.5j], onp.complex64))
    assert np.array([1j], dtype="complex128").dtype == onp.complex128


@pytest.mark.parametrize("dtype", C)
def test_numpy_arrays_and_the_buffer_protocol_round_trip(dtype):
    x = carr((3, 4), dtype)
    a = np.array(x)
    assert a.dtype == onp.dtype(dtype)
    onp.testing.assert_array_equal(a.asnumpy(), x)
    onp.testing.assert_array_equal(onp.asarray(memoryview(a)), x)  # "Zf" / "Zd" buffers
    onp.testing.assert_array_equal(a[1:, ::2].asnumpy(), x[1:, ::2])
    assert complex(a[1, 2]) == complex(x[1, 2])
    assert a[0, 0].item() == complex(x[0, 0])


def test_creation_functions_take_complex_dtypes():
    onp.testing.assert_array_equal(np.zeros((2, 3), dtype="complex64").asnumpy(),
                                   onp.zeros((2, 3), onp.complex64))
    onp.testing.assert_array_equal(np.ones(2, dtype=np.complex128).asnumpy(), onp.ones(2, complex))
    f = np.full((2, 2), 1 - 2j)
    assert f.dtype == onp.complex64
    onp.testing.assert_array_equal(f.asnumpy(), onp.full((2, 2), 1 - 2j, onp.complex64))


def test_astype_between_real_and_complex():
    x = carr((5,))
    a = np.array(x)
    onp.testing.assert_array_equal(a.astype("float64").asnumpy(), x.real)  # NumPy keeps Re
    onp.testing.assert_array_equal(a.astype("complex64").asnumpy(), x.astype(onp.complex64))
    onp.testing.assert_array_equal(a.astype(bool).asnumpy(), x.astype(bool))
    r = onp.array([1.5, -2.0, 0.0], onp.float32)
    onp.testing.assert_array_equal(np.array(r).astype("complex128").asnumpy(), r.astype(complex))
    onp.testing.assert_array_equal(np.array([0j, 1j, 0.0]).astype(bool).asnumpy(),
                                   onp.array([False, True, False]))


# ----------------------------------------------------------------------------- promotion
@pytest.mark.parametrize("a,b", [("float32", "complex64"), ("float64", "complex64"),
                                 ("int32", "complex64"), ("int8", "complex64"),
                                 ("uint16", "complex64"), ("int64", "complex64"),
                                 ("float16", "complex128"), ("complex64", "complex128"),
                                 ("bool", "complex64")])
def test_promotion_follows_numpy_2(a, b):
    x, y = onp.ones(2, a), onp.ones(2, b)
    assert (np.array(x) + np.array(y)).dtype == onp.result_type(x, y)
    assert (np.array(y) * np.array(x)).dtype == onp.result_type(x, y)


def test_python_complex_scalars_are_weak():
    f32 = np.array(onp.ones(2, onp.float32))
    assert (f32 + 1j).dtype == onp.complex64  # as NumPy 2 (NEP 50)
    assert (np.array(onp.ones(2, onp.float64)) * 2j).dtype == onp.complex128
    c64 = np.array(onp.ones(2, onp.complex64))
    assert (c64 + 2.5).dtype == onp.complex64 and (c64 * 3).dtype == onp.complex64
    assert (np.array(onp.ones(2, onp.int64)) + 1j).dtype == onp.complex64  # default float
    onp.testing.assert_allclose((f32 * (1 + 2j)).asnumpy(), onp.ones(2) * (1 + 2j))


# ---------------------------------------------------------------------- elementwise math
BINARY = [("add", lambda a, b: a + b), ("subtract", lambda a, b: a - b),
          ("multiply", lambda a, b: a * b), ("true_divide", lambda a, b: a / b),
          ("power", lambda a, b: a ** b)]


@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("name,fn", BINARY, ids=[b[0] for b in BINARY])
def test_binary_ops_match_numpy(name, fn, dtype):
    x, y = carr((3, 4), dtype), carr((4,), dtype, 0.5, 2.0)
    got = fn(np.array(x), np.array(y))
    want = fn(x, y)
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, **TOL[dtype])
    onp.testing.assert_allclose(getattr(np, name)(np.array(x), np.array(y)).asnumpy(), want,
                                **TOL[dtype])


@pytest.mark.parametrize("dtype", C)
def test_power_as_numpy_computes_it(dtype):
    # Whole real exponents under 100 multiply (Gaussian integers stay exact: 1j ** 2 is -1,
    # not exp(2 log 1j) = -1 + 1.2e-16j); 0 ** b is 0 when b's real part is positive, else
    # NaN; x ** 0 is 1. NumPy 2.4's values, written out.
    base = onp.array([1j, 1 + 1j, 2 - 3j, -1j], dtype=dtype)
    got = (np.array(base) ** np.array(onp.array([2, 4, 3, -2], dtype=dtype))).asnumpy()
    onp.testing.assert_array_equal(got, onp.array([-1, -4, -46 - 9j, -1], dtype=dtype))
    zero = np.array(onp.zeros(6, dtype))
    got = (zero ** np.array(onp.array([2 + 1j, 0.5, 1j, -1 + 1j, -2, 0], dtype=dtype))).asnumpy()
    onp.testing.assert_array_equal(got, onp.array([0, 0, onp.nan * (1 + 1j), onp.nan * (1 + 1j),
                                                   onp.nan * (1 + 1j), 1], dtype=dtype))
    x, e = carr((3, 7), dtype), onp.array([-7, -1, 3, 5, 17, 99, 2.5], dtype=dtype)
    onp.testing.assert_allclose((np.array(x) ** np.array(e)).asnumpy(), x ** e, **TOL[dtype])


UNARY = ["negative", "absolute", "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "tanh",
         "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "square",
         "reciprocal", "sign", "conjugate", "real", "imag", "angle", "positive", "exp2",
         "log2", "expm1", "log1p", "sinc"]


@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_match_numpy(name, dtype):
    x = carr((2, 5), dtype)
    x[0, 0] = 0  # sign(0), angle(0)
    got = getattr(np, name)(np.array(x))
    want = getattr(onp, name)(x)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    onp.testing.assert_allclose(got.asnumpy(), want, **TOL[dtype])


def test_angle_in_degrees_and_of_real_input():
    x = carr((4,))
    onp.testing.assert_allclose(np.angle(np.array(x), deg=True).asnumpy(), onp.angle(x, deg=True))
    r = onp.array([-1.0, 2.0, 0.0])
    onp.testing.assert_allclose(np.angle(np.array(r)).asnumpy(), onp.angle(r))


def test_predicates_and_comparisons():
    x = onp.array([1 + 1j, onp.nan + 0j, complex(0, onp.inf), 2j, 2j], onp.complex128)
    a = np.array(x)
    for name in ("isnan", "isinf", "isfinite"):
        onp.testing.assert_array_equal(getattr(np, name)(a).asnumpy(), getattr(onp, name)(x))
    y = onp.array([1 + 1j, 0, 0, 2j, 1j])
    onp.testing.assert_array_equal((a == np.array(y)).asnumpy(), x == y)
    onp.testing.assert_array_equal((a != np.array(y)).asnumpy(), x != y)
    onp.testing.assert_array_equal(np.iscomplex(np.array(y)).asnumpy(), onp.iscomplex(y))
    onp.testing.assert_array_equal(np.isreal(np.array(y)).asnumpy(), onp.isreal(y))
    assert np.iscomplexobj(a) and not np.iscomplexobj(np.ones(2))
    assert np.isrealobj(np.ones(2)) and not np.isrealobj(a)
    onp.testing.assert_array_equal(np.real_if_close(np.array([1 + 1e-20j])).asnumpy(),
                                   onp.real_if_close(onp.array([1 + 1e-20j])))


def test_real_and_imag_of_real_arrays_and_properties():
    r = np.array(onp.arange(3.0))
    assert np.real(r) is r  # NumPy returns the array itself
    onp.testing.assert_array_equal(np.imag(r).asnumpy(), onp.zeros(3))
    x = carr((3,))
    a = np.array(x)
    onp.testing.assert_array_equal(a.real.asnumpy(), x.real)
    onp.testing.assert_array_equal(a.imag.asnumpy(), x.imag)
    onp.testing.assert_array_equal(a.conj().asnumpy(), x.conj())


# ------------------------------------------------------------------- reductions, matmul
@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("name", ["sum", "mean", "prod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions_match_numpy(name, axis, dtype):
    x = carr((3, 5), dtype, -1.0, 1.0)
    got = getattr(np, name)(np.array(x), axis=axis)
    want = getattr(onp, name)(x, axis=axis)
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, **TOL[dtype])


def test_large_complex64_sum_is_accurate():
    x = carr((1 << 20,), "complex64", 0.0, 1.0)
    want = x.astype(onp.complex128).sum()
    got = complex(np.sum(np.array(x)))
    assert abs(got - want) / abs(want) < 1e-6  # pairwise summation, as NumPy's


@pytest.mark.parametrize("dtype", C)
def test_matmul_on_blas_cgemm_zgemm(dtype):
    a, b = carr((2, 3, 4), dtype), carr((4, 5), dtype)
    got = np.array(a) @ np.array(b)
    assert got.dtype == onp.dtype(dtype)
    onp.testing.assert_allclose(got.asnumpy(), a @ b, rtol=1e-5 if dtype == "complex64" else 1e-12)
    r = R.standard_normal((3, 4)).astype(onp.float32)
    mixed = np.array(r) @ np.array(b[:, :2].astype(onp.complex64))
    assert mixed.dtype == onp.complex64
    onp.testing.assert_allclose(mixed.asnumpy(), r @ b[:, :2], rtol=1e-5, atol=1e-5)
    onp.testing.assert_allclose(np.dot(np.array(a[0]), np.array(b)).asnumpy(), a[0] @ b,
                                rtol=1e-5)


# ------------------------------------------------------------------------------ printing
@pytest.mark.parametrize("values,dtype", [([1 + 2j, 3 - 4j], "complex64"),
                                          ([1 + 2j, 3.5 - 4j], "complex128"),
                                          ([0.25 + 1j, -1 - 0.5j, 2j], "complex128"),
                                          ([[1 + 1j, 2], [3, 4 - 1j]], "complex64")])
def test_repr_matches_numpy(values, dtype):
    x = onp.array(values, dtype)
    assert repr(np.array(x)) == repr(x)
    assert str(np.array(x)) == str(x)


def test_0d_str_is_pythons_complex():
    assert str(np.array(onp.array(1 + 2j))) == str(onp.array(1 + 2j)) == "(1+2j)"
    assert repr(np.array(onp.array(2j, onp.complex64))) == repr(onp.array(2j, onp.complex64))


def test_expm1_and_log1p_of_small_complex_values_as_numpy():
    # NumPy's forms: expm1's real part without cancellation near 0 (exp(z) - 1 would lose it);
    # log1p as log |1 + z| + i arg(1 + z), NumPy's (which keeps ~8 digits of the real part)
    x = onp.array([1e-10 + 1e-9j, -3e-12 + 2e-11j, 1e-300 + 0j], "complex128")
    onp.testing.assert_allclose(np.expm1(np.array(x)).asnumpy(), onp.expm1(x), rtol=1e-14)
    onp.testing.assert_allclose(np.log1p(np.array(x)).asnumpy(), onp.log1p(x), rtol=1e-6)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops_of_complex_values(name):
    a = onp.array([0j, 1j, 2 + 0j, 0j, complex(onp.nan, 0)])
    b = onp.array([0j, 0j, 1 + 1j, 1j, 0j])
    same_complex(getattr(np, name)(np.array(a), np.array(b)), getattr(onp, name)(a, b))
    same_complex(np.logical_not(np.array(a)), onp.logical_not(a))


# ---------------------------------------------------- ordering (NumPy's lexicographic order)
NAN, INF = float("nan"), float("inf")
# Every class of NumPy's order: plain values (ties in the real part, signed zeros,
# infinities), a NaN imaginary part, a NaN real part, both NaN.
ORDER_VALUES = [complex(1, 0), complex(1, 5), complex(1, -1), complex(2, 0), complex(-3, 2),
                complex(0.0, 0.0), complex(-0.0, -0.0), complex(INF, 0), complex(-INF, 1),
                complex(1, INF), complex(1, NAN), complex(2, NAN), complex(NAN, 0),
                complex(NAN, -1), complex(NAN, NAN)]


def same_complex(got, want):
    """Equal real and imaginary parts, NaN where NumPy has NaN, in NumPy's dtype."""
    got = got.asnumpy() if isinstance(got, np.ndarray) else onp.asarray(got)
    want = onp.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    onp.testing.assert_array_equal(onp.real(got), onp.real(want))
    onp.testing.assert_array_equal(onp.imag(got), onp.imag(want))


def ordered_sample(shape, dtype, nan_fraction=0.1):
    """Random complex values with repeated real parts (so ties go to the imaginary part) and
    some NaN parts."""
    x = (R.integers(-3, 4, shape) + 1j * R.integers(-3, 4, shape)).astype(dtype)
    hole = R.random(shape) < nan_fraction
    x[hole] = onp.where(R.random(int(hole.sum())) < 0.5, complex(NAN, 1), complex(2, NAN))
    return x


@pytest.mark.parametrize("name", ["less", "less_equal", "greater", "greater_equal", "maximum",
                                  "minimum", "fmax", "fmin"])
@pytest.mark.parametrize("dtype", C)
def test_comparisons_and_extrema_follow_numpys_complex_order(name, dtype):
    v = onp.array(ORDER_VALUES, dtype)
    a, b = onp.repeat(v, len(v)), onp.tile(v, len(v))  # every pair
    with onp.errstate(invalid="ignore"):
        want = getattr(onp, name)(a, b)
    got = getattr(np, name)(np.array(a), np.array(b))
    same_complex(got, want)


@pytest.mark.parametrize("dtype", C)
def test_ordering_operators_and_clip_with_complex_bounds(dtype):
    v = onp.array(ORDER_VALUES, dtype)
    x = np.array(v)
    with onp.errstate(invalid="ignore"):
        same_complex(x < complex(1, 0), v < complex(1, 0))
        same_complex(x >= np.array(v[::-1]), v >= v[::-1])
        for lo, hi in [(complex(1, 0), complex(2, 0)), (complex(1, NAN), 2),
                       (0, complex(1, NAN)), (complex(2, 0), complex(1, 0))]:
            same_complex(np.clip(x, lo, hi), onp.clip(v, onp.array(lo, dtype),
                                                      onp.array(hi, dtype)))


@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_max_min_argmax_argmin_of_complex_arrays(dtype, axis):
    for shape, nan_fraction in [((7, 9), 0.0), ((7, 9), 0.05), ((3, 70001), 0.00002)]:
        x = ordered_sample(shape, dtype, nan_fraction)
        a = np.array(x)
        for name in ("max", "min", "argmax", "argmin"):
            same_complex(getattr(np, name)(a, axis=axis), getattr(onp, name)(x, axis=axis))
        same_complex(np.max(a, axis=axis, keepdims=True), onp.max(x, axis=axis, keepdims=True))
    # the first NaN wins, whichever part holds it
    v = onp.array([2, complex(1, NAN), complex(NAN, 0)], dtype)
    same_complex(np.max(np.array(v)), onp.max(v))
    assert int(np.argmin(np.array(v))) == int(onp.argmin(v)) == 1


@pytest.mark.parametrize("dtype", C)
def test_nan_functions_and_ptp_of_complex_arrays(dtype):
    x = ordered_sample((6, 8), dtype, 0.2)
    x[2] = complex(NAN, 0)  # an all-NaN row
    a = np.array(x)
    with onp.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        same_complex(np.nanmax(a, axis=1), onp.nanmax(x, axis=1))
    with onp.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        same_complex(np.nanmin(a, axis=1), onp.nanmin(x, axis=1))
    same_complex(np.nanargmax(a, axis=0), onp.nanargmax(x, axis=0))
    same_complex(np.nanargmin(a[[0, 1, 3]], axis=1), onp.nanargmin(x[[0, 1, 3]], axis=1))
    same_complex(np.nancumsum(a, axis=1), onp.nancumsum(x, axis=1))
    y = ordered_sample((5, 6), dtype, 0.0)
    same_complex(np.ptp(np.array(y), axis=0), onp.ptp(y, axis=0))


@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_sort_argsort_searchsorted_unique_of_complex_arrays(dtype, axis):
    x = ordered_sample((40, 33), dtype, 0.1)
    x[0, :len(ORDER_VALUES)] = ORDER_VALUES
    a = np.array(x)
    same_complex(np.sort(a, axis=axis), onp.sort(x, axis=axis))
    same_complex(np.argsort(a, axis=axis), onp.argsort(x, axis=axis, kind="stable"))
    kth = 5
    want = onp.partition(x, kth, axis=axis)
    got = np.partition(a, kth, axis=axis).asnumpy()
    same_complex(onp.take(got, [kth], axis=axis if axis is not None else 0),
                 onp.take(want, [kth], axis=axis if axis is not None else 0))
    ordered = onp.sort(x.reshape(-1))
    for side in ("left", "right"):
        same_complex(np.searchsorted(np.array(ordered), a, side=side),
                     onp.searchsorted(ordered, x, side=side))
    same_complex(np.unique(a), onp.unique(x))
    same_complex(np.unique(a, equal_nan=False), onp.unique(x, equal_nan=False))


@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_median_of_complex_arrays(dtype, axis):
    x = ordered_sample((5, 8), dtype, 0.0)
    same_complex(np.median(np.array(x), axis=axis), onp.median(x, axis=axis))
    x[1, 2] = complex(NAN, 1)
    with onp.errstate(invalid="ignore"):
        same_complex(np.median(np.array(x), axis=axis), onp.median(x, axis=axis))
        same_complex(np.nanmedian(np.array(x), axis=axis), onp.nanmedian(x, axis=axis))
    with pytest.raises(TypeError, match="real"):
        np.quantile(np.array(x), 0.5)  # NumPy's quantiles refuse complex input too


@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumsum_cumprod_of_complex_arrays(dtype, axis):
    x = carr((4, 6), dtype, -1.2, 1.2)
    x[2, 3] = complex(NAN, 0)
    a = np.array(x)
    onp.testing.assert_allclose(np.cumsum(a, axis=axis).asnumpy(), onp.cumsum(x, axis=axis),
                                **TOL[dtype])
    onp.testing.assert_allclose(np.cumprod(a, axis=axis).asnumpy(),
                                onp.cumprod(x, axis=axis), **TOL[dtype])
    assert np.cumsum(a, axis=axis).dtype == onp.cumsum(x, axis=axis).dtype


def test_cumsum_of_complex_input_differentiates_cumprod_refuses():
    x = carr((5,))
    a = np.array(x)
    a.attach_grad()
    with ndx.autograd.record():
        y = np.real(np.sum(np.cumsum(a) * np.array(onp.arange(1, 6))))
    y.backward()
    # d/dz of Re(sum_j w_j cumsum(z)_j) under the conjugate convention: sum_{j>=i} w_j
    onp.testing.assert_allclose(a.grad.asnumpy(), onp.cumsum(onp.arange(1, 6)[::-1])[::-1])
    with ndx.autograd.record():
        y = np.real(np.sum(np.cumprod(a)))
    with pytest.raises(TypeError, match="float"):
        y.backward()


@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
def test_round_and_rint_of_complex_arrays_round_each_part(dtype, decimals):
    x = (R.integers(-2000, 2000, (50,)) / 8 + 1j * R.integers(-2000, 2000, (50,)) / 8)
    x = x.astype(dtype)
    same_complex(np.round(np.array(x), decimals), onp.round(x, decimals))
    same_complex(np.rint(np.array(x)), onp.rint(x))


# ----------------------------------------------------------------------- typed errors
@pytest.mark.parametrize("fn", [np.floor, np.ceil, np.trunc, np.fabs, np.spacing, np.cbrt],
                         ids=lambda f: f.__name__)
def test_ops_without_complex_kernels_raise_type_error(fn):
    with pytest.raises(TypeError, match="complex"):
        fn(np.array(carr((3,))))


def test_complex_gradients_without_a_rule_raise_typed_errors():
    a = np.array(carr((3, 3)) + 3 * onp.eye(3))
    a.attach_grad()
    with ndx.autograd.record():
        y = np.real(np.sum(np.linalg.cholesky(a @ np.conj(a.T))))
    with pytest.raises(NotImplementedError, match="complex"):
        y.backward()


# ------------------------------------------------------- gradients (conjugate Wirtinger)
GRADS = [
    ("multiply", lambda a, b: a * b, lambda a, b: a * b, 2),
    ("divide", lambda a, b: a / b, lambda a, b: a / b, 2),
    ("add-sub", lambda a, b: a + b - a * 2, lambda a, b: a + b - a * 2, 2),
    ("exp", np.exp, onp.exp, 1), ("log", np.log, onp.log, 1), ("sqrt", np.sqrt, onp.sqrt, 1),
    ("sin", np.sin, onp.sin, 1), ("cos", np.cos, onp.cos, 1), ("tanh", np.tanh, onp.tanh, 1),
    ("square", np.square, onp.square, 1), ("reciprocal", np.reciprocal, onp.reciprocal, 1),
    ("abs", np.abs, onp.abs, 1), ("real", np.real, onp.real, 1), ("imag", np.imag, onp.imag, 1),
    ("conj", np.conjugate, onp.conjugate, 1), ("angle", np.angle, onp.angle, 1),
    ("exp2", np.exp2, onp.exp2, 1), ("log2", np.log2, onp.log2, 1),
    ("expm1", np.expm1, onp.expm1, 1), ("log1p", np.log1p, onp.log1p, 1),
    ("sum", lambda a: np.sum(a, axis=0), lambda a: onp.sum(a, axis=0), 1),
    ("mean", np.mean, onp.mean, 1),
    ("abs-of-product", lambda a, b: np.abs(a * np.conj(b)),
     lambda a, b: onp.abs(a * onp.conj(b)), 2),
    ("matmul", lambda a, b: np.matmul(a, b.T), lambda a, b: a @ b.T, 2),
    ("dot", lambda a, b: np.dot(a.T, b), lambda a, b: onp.dot(a.T, b), 2),
]


@pytest.mark.parametrize("name,f_nd,f_ref,arity", GRADS, ids=[g[0] for g in GRADS])
def test_wirtinger_gradients(name, f_nd, f_ref, arity):
    xs = [carr((2, 3), "complex128", 0.3, 1.5) for _ in range(arity)]
    wirtinger.check(f_nd, f_ref, xs, R)


def test_real_inputs_mixed_with_complex_constants():
    w = np.array(carr((3,)))
    x = R.standard_normal(3)
    wirtinger.check(lambda a: np.abs(a * w), lambda a: onp.abs(a * w.asnumpy()), [x], R)
    # a Python complex scalar lifts a real array to complex: the cast is recorded
    wirtinger.check(lambda a: a * (0.5 - 2j), lambda a: a * (0.5 - 2j), [x], R)
    # the gradient reaching a real intermediate is real (its real part), as PyTorch's
    wirtinger.check(lambda a: np.sin(a * 2.0) * w, lambda a: onp.sin(a * 2.0) * w.asnumpy(),
                    [x], R)
    m = R.standard_normal((3, 2))
    wirtinger.check(lambda a: np.matmul(w, a), lambda a: w.asnumpy() @ a, [m], R)


def test_where_selects_complex_values_and_passes_gradients():
    c = R.uniform(size=(3, 4)) > 0.5
    x, y = carr((3, 4)), carr((4,))
    got = np.where(np.array(c), np.array(x), np.array(y))
    assert got.dtype == onp.complex128
    onp.testing.assert_array_equal(got.asnumpy(), onp.where(c, x, y))
    r = R.standard_normal((3, 4))  # real beside complex promotes as NumPy
    onp.testing.assert_array_equal(np.where(np.array(c), np.array(r), np.array(y)).asnumpy(),
                                   onp.where(c, r, y))
    cn = np.array(c)
    wirtinger.check(lambda a, b: np.where(cn, a, b), lambda a, b: onp.where(c, a, b),
                    [x, y], R)
    wirtinger.check(lambda a: np.where(cn, a, np.array(y)), lambda a: onp.where(c, a, y), [r], R)


@pytest.mark.parametrize("fn", ["var", "std", "nanvar", "nanstd", "nanmean", "nansum"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_statistics_of_complex_arrays_are_numpys(fn, dtype):
    # var / std are of |x - mean|^2: real, of the matching float dtype; a complex NaN is one
    # with either part NaN.
    x = onp.array([[1 + 1j, complex(1, onp.nan), 0.5j], [3, 4j, -1 - 1j]], dtype=dtype)
    for kw in ({}, {"axis": 0}, {"axis": 1}):
        if fn in ("var", "std", "nanvar", "nanstd"):
            kw = dict(kw, ddof=1) if kw.get("axis") == 1 else kw
        got = getattr(np, fn)(np.array(x), **kw)
        want = getattr(onp, fn)(x, **kw)
        assert got.dtype == want.dtype
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    clean = onp.array([1 + 1j, 2 - 3j, -0.5j], dtype=dtype)
    mask = onp.array([False, True, True])
    if fn in ("var", "std"):
        got = getattr(np, fn)(np.array(clean), where=np.array(mask))
        want = getattr(onp, fn)(clean, where=mask)
        assert got.dtype == want.dtype
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


def test_array_of_python_numbers_with_a_complex_dtype():
    for obj, dtype in ((0, "complex128"), ([1, 2], "complex64"), ([[1.5, 2], [3, 4]], "complex128"),
                       (True, "complex64"), ([], "complex64")):
        got = np.array(obj, dtype=dtype)
        want = onp.array(obj, dtype=dtype)
        assert got.dtype == want.dtype and got.shape == want.shape
        onp.testing.assert_array_equal(got.asnumpy(), want)


def test_conjugating_products_and_complex_interp_as_numpy():
    a, b = onp.array([1 + 2j, 3j]), onp.array([2 - 1j, 1 + 1j])
    onp.testing.assert_allclose(complex(np.vdot(np.array(a), np.array(b))), onp.vdot(a, b),
                                rtol=1e-6)  # a conjugated
    x, v = onp.array([1.0, 2.0, 3.0]), onp.array([1j, 1.0])
    for mode in ("full", "same", "valid"):  # v conjugated
        onp.testing.assert_allclose(np.correlate(np.array(x), np.array(v), mode).asnumpy(),
                                    onp.correlate(x, v, mode), rtol=1e-6)
    xp, fp = onp.array([1.0, 2.0]), onp.array([1 + 1j, 2 + 3j])
    got = np.interp(np.array([1.5, 0.0, 3.0]), np.array(xp), np.array(fp), left=5j)
    onp.testing.assert_allclose(got.asnumpy(), onp.interp([1.5, 0.0, 3.0], xp, fp, left=5j),
                                rtol=1e-6)
    assert got.dtype.kind == "c"


def test_eye_and_identity_of_complex_dtypes():
    for dtype in ("complex64", "complex128"):
        onp.testing.assert_array_equal(np.eye(3, 4, k=1, dtype=dtype).asnumpy(),
                                       onp.eye(3, 4, k=1, dtype=dtype))
        assert np.identity(2, dtype=dtype).dtype == onp.dtype(dtype)


# ----------------------------------------------------------- real / imag as views (NumPy's)
@pytest.mark.parametrize("dtype", C)
def test_real_and_imag_are_views_that_take_assignments(dtype):
    x = carr((3, 4), dtype)
    a = np.array(x)
    for key in [(slice(None), slice(None, None, 2)), (1,), (slice(None, None, -1), 0)]:
        same_complex(a[key].real, x[key].real)
        same_complex(a[key].imag, x[key].imag)
    r = a.real
    r[0] = 7
    x.real[0] = 7
    a.imag = 5
    x.imag = 5
    a[1:].real = np.array(onp.arange(4, dtype=x.real.dtype))
    x[1:].real = onp.arange(4)
    same_complex(a, x)
    assert a.real.strides == x.real.strides


def test_real_of_a_real_array_is_the_array_and_imag_refuses_assignment():
    y = np.array(onp.array([1.0, 2.0]))
    assert y.real is y
    y.real = 9
    same_complex(y, onp.array([9.0, 9.0]))
    with pytest.raises(TypeError):
        y.imag = 3
    b = np.array(onp.array([True, False]))
    assert b.conj().dtype == onp.array([True]).conj().dtype == onp.bool_
    assert np.conjugate(b).dtype == onp.conjugate(onp.array([True])).dtype  # int8 for both


def test_real_and_imag_while_recording_are_differentiable_copies():
    z = np.array(carr((3,)))
    z.attach_grad()
    with ndx.autograd.record():
        y = np.sum(z.real * 2 + z.imag * 3)
    y.backward()
    onp.testing.assert_allclose(z.grad.asnumpy(), onp.full(3, 2 + 3j))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sign_of_complex_infinities_and_nans_is_numpys(dtype):
    inf, nan = float("inf"), float("nan")
    values = [complex(1e30, inf), complex(inf, 2), complex(-inf, 2), complex(2, -inf),
              complex(inf, inf), complex(inf, nan), complex(nan, inf), complex(nan, 1), 0j,
              complex(3, 4), complex(-0.0, -5), complex(1e30, 1e30)]
    ref = onp.array(values, dtype=dtype)
    with onp.errstate(all="ignore"):
        want = onp.sign(ref)
    got = np.sign(np.array(ref)).asnumpy()
    onp.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


def test_float_power_keeps_complex_values_as_numpy():
    ref = onp.array([2 + 1j, -1 - 3j, 0.5j], dtype="complex64")
    for x1, x2 in ((ref, 2), (ref, ref), (onp.array([4, 9], "int32"), -1.5 + 4j)):
        want = onp.float_power(x1, x2)
        a1 = np.array(x1)
        a2 = np.array(x2) if isinstance(x2, onp.ndarray) else x2
        got = np.float_power(a1, a2)
        assert got.dtype == want.dtype == onp.complex128
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    real = onp.array([2.0, 3.0], "float32")
    assert np.float_power(np.array(real), 2).dtype == onp.float_power(real, 2).dtype
