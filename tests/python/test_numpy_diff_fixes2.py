"""Differences from NumPy found by tools/fuzz/np_diff.py (seeds 104-111), each compared with
NumPy's own result."""
import warnings

import numpy as onp
import pytest

import ndx.numpy as np


def _nd(x):
    return np.array(x) if isinstance(x, onp.ndarray) else x


def _check(ref, got, exact_dtype=True):
    got = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
    ref = onp.asarray(ref)
    if exact_dtype:
        assert got.dtype == ref.dtype
    assert got.shape == ref.shape
    onp.testing.assert_allclose(got, ref, rtol=1e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_leave_non_finite_values_to_their_overlaps(mode):
    # a padding zero times NaN / inf made every output NaN
    a = onp.array([1, 4, 6], dtype="int32")
    v = onp.array([-2 + 5j, complex("nan-3j"), 1 + 4j])
    _check(onp.convolve(a, v, mode), np.convolve(_nd(a), _nd(v), mode))
    _check(onp.correlate(v, a, mode), np.correlate(_nd(v), _nd(a), mode))
    x, w = onp.array([1.0, 2, 3, 4, 5]), onp.array([onp.inf, 1, 2])
    _check(onp.convolve(x, w, mode), np.convolve(_nd(x), _nd(w), mode))
    _check(onp.correlate(x, w, mode), np.correlate(_nd(x), _nd(w), mode))


def test_median_of_an_empty_complex_array_is_nan_nan_j():
    for a, axis in ((onp.array([], dtype="complex128"), None),
                    (onp.zeros((2, 0), dtype="complex64"), 1)):
        ref = onp.median(a, axis=axis)
        got = np.median(_nd(a), axis=axis).asnumpy()
        assert onp.isnan(got.real).all() and onp.isnan(got.imag).all()
        assert got.dtype == onp.asarray(ref).dtype


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_var_of_complex_data_with_a_real_dtype_keeps_the_imaginary_deviations(dtype, axis):
    a = onp.array([[1 + 1j, 3 + 3j, 2 - 1j], [0.5j, 2, 1 + 7j]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(onp.var(a, dtype=dtype, axis=axis), np.var(_nd(a), dtype=dtype, axis=axis))
        _check(onp.nanvar(a, dtype=dtype, axis=axis), np.nanvar(_nd(a), dtype=dtype, axis=axis))
        keep = onp.array([True, False, True])
        _check(onp.var(a, dtype=dtype, axis=axis, where=keep),
               np.var(_nd(a), dtype=dtype, axis=axis, where=_nd(keep)))
        big = onp.array([[1 + 5j, 6 + 3.4e38j], [2.43 + 1e300j, 1e300 + 0j]])
        _check(onp.var(big, dtype=dtype, keepdims=True),
               np.var(_nd(big), dtype=dtype, keepdims=True))


def test_bincount_and_histogram_keep_an_infinite_weight_in_its_bin():
    x, w = onp.array([3, 1, 6, 0, 7, 2]), onp.array([1, onp.inf, 3, 4, 5, onp.nan])
    _check(onp.bincount(x, weights=w), np.bincount(_nd(x), weights=_nd(w)))
    a, wa = onp.array(False), onp.array(onp.inf, dtype="float32")
    for r, g in zip(onp.histogram(a, weights=wa), np.histogram(_nd(a), weights=_nd(wa))):
        _check(r, g)
    # given edges: NumPy's running sum spoils the later bins, and so does ndx's
    b, e, wb = onp.array([1, 2, 3, 3]), onp.array([0.0, 1.5, 2.5, 4]), onp.array([onp.inf, 1, 2, 3])
    _check(onp.histogram(b, e, weights=wb)[0], np.histogram(_nd(b), _nd(e), weights=_nd(wb))[0])
    empty = onp.array([], dtype="int64")
    _check(onp.bincount(empty, weights=onp.array([]), minlength=3),
           np.bincount(_nd(empty), weights=np.array(onp.array([])), minlength=3))


@pytest.mark.parametrize("bins", [10, 3, onp.array([0.0, 2, 5, 9])])
def test_histogram_takes_complex_weights(bins):
    a = onp.array([3, 1, 6, 0, 7, 2], dtype="uint16")
    w = onp.array([-4 - 2j, 2, complex("nan+3j"), 3 - 1.9j, complex(onp.inf, 1), 2.5 + 0.7j],
                  dtype="complex64")
    ref = onp.histogram(a, bins=bins, weights=w)
    got = np.histogram(_nd(a), bins=_nd(bins), weights=_nd(w))
    _check(ref[0], got[0])
    _check(ref[1], got[1])
    w = onp.array([-4 - 2j, 2, -3.1 - 3.8j, 3 - 1.9j, -3, 2.5 + 0.7j])
    ref = onp.histogram(a, bins=bins, weights=w, density=True)[0]
    _check(ref, np.histogram(_nd(a), bins=_nd(bins), weights=_nd(w), density=True)[0])


def test_unwrap_of_integers_compares_the_wrapped_differences_as_numpy():
    a = onp.array([[0, 0, -3], [1, -2, 32766]], dtype="int16")
    _check(onp.unwrap(a, discont=1.0), np.unwrap(_nd(a), discont=1.0))
    b = onp.array([5, 3, -9223372036854775807, 9223372036854775806, 1])
    _check(onp.unwrap(b, period=6.28), np.unwrap(_nd(b), period=6.28))
    c = onp.array([0.0, 1, 5, 7, 3, -2])
    _check(onp.unwrap(c), np.unwrap(_nd(c)))


def test_polydiv_scales_by_the_reciprocal_in_the_divisors_dtype():
    for u, v in ((onp.array(7, dtype="uint8"), onp.array(-5.461, dtype="float32")),
                 (onp.array([7, 3, 1], dtype="uint8"), onp.array([-5.461, 2], dtype="float16"))):
        for r, g in zip(onp.polydiv(u, v), np.polydiv(_nd(u), _nd(v))):
            _check(r, g)


def test_polymul_of_a_zero_polynomial_keeps_its_dtype():
    _check(onp.polymul(onp.array([False]), onp.array([0], dtype="uint64")),
           np.polymul(np.array(onp.array([False])), np.array(onp.array([0], dtype="uint64"))))
    _check(onp.polymul(onp.array([6], dtype="int32"), False),
           np.polymul(np.array(onp.array([6], dtype="int32")), False))


def test_putmask_takes_a_mask_of_the_same_size():
    a, m = onp.zeros((2, 3)), onp.array([1, 0, 0, 0, 0, 1], dtype=bool)
    b = np.array(a)
    onp.putmask(a, m, 5)
    np.putmask(b, _nd(m), 5)
    _check(a, b)
    e = np.zeros((2, 0, 3), dtype="uint32")
    np.putmask(e, np.zeros((0, 3), dtype=bool), e)  # sizes 0 and 0, as NumPy's
    with pytest.raises(ValueError):
        np.putmask(np.zeros((2, 3)), np.zeros((2, 2), dtype=bool), 1)


def test_trapezoid_with_x_of_fewer_axes_than_y():
    y = onp.arange(24.0).reshape(2, 3, 4)
    x = onp.arange(12.0).reshape(3, 4) ** 2
    _check(onp.trapezoid(y, x=x), np.trapezoid(_nd(y), x=_nd(x)))
    y0, x0 = onp.zeros((2, 0, 3), dtype="complex64"), onp.zeros((0, 3))
    _check(onp.trapezoid(y0, x=x0), np.trapezoid(_nd(y0), x=_nd(x0)), exact_dtype=False)


@pytest.mark.parametrize("name", ["nanmin", "nanmax"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nanmin_nanmax_of_complex_data_take_a_complex_initial(name, axis):
    a = onp.array([[4 + 0j, 1 - 2j], [complex("nan"), -3 + 1j]], dtype="complex64")
    for initial in (-2 - 4j, 10 + 1j, onp.complex128(0.5j)):
        _check(getattr(onp, name)(a, axis=axis, initial=initial),
               getattr(np, name)(_nd(a), axis=axis, initial=initial))
    _check(getattr(onp, name)(a[:, :0], axis=1, initial=1j),
           getattr(np, name)(_nd(a)[:, :0], axis=1, initial=1j))


def test_roots_of_no_nonzero_coefficient_is_an_empty_float64_array():
    for p in (onp.array([], dtype="float16"), onp.array([0, 0], dtype="int32"),
              onp.array([-1.0], dtype="float16"), onp.array([2, 0, 0], dtype="float32")):
        _check(onp.roots(p), np.roots(_nd(p)))


def test_tensorsolve_keeps_a_python_float_b_in_float64_beside_float64_a():
    a = onp.array([-1.0])
    _check(onp.linalg.tensorsolve(a, -2.8433), np.linalg.tensorsolve(_nd(a), -2.8433))
    c = onp.array([-1.0 + 1j])
    _check(onp.linalg.tensorsolve(c, 2.8433), np.linalg.tensorsolve(_nd(c), 2.8433))
