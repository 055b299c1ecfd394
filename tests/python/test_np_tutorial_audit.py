"""Regressions found by auditing ndx.numpy with tutorial-style NumPy programs, and fuzzer
(tools/fuzz/np_diff.py) value differences; NumPy is the reference."""
import numpy as onp
import pytest

import ndx.numpy as np


def _pad_with(vector, pad_width, iaxis, kwargs):  # NumPy's documented example
    pad_value = kwargs.get("padder", 10)
    vector[:pad_width[0]] = pad_value
    if pad_width[1]:
        vector[-pad_width[1]:] = pad_value


@pytest.mark.parametrize("width,kw", [(2, {}), (((1, 0), (0, 2)), {"padder": 100}), (0, {})])
def test_pad_with_a_function_mode(width, kw):
    want = onp.pad(onp.arange(6).reshape(2, 3), width, _pad_with, **kw)
    got = np.pad(np.arange(6).reshape(2, 3), width, _pad_with, **kw)
    assert got.dtype == want.dtype
    onp.testing.assert_array_equal(got.asnumpy(), want)
    got = np.pad(np.arange(3.0, dtype="float64"), 1, _pad_with, padder=-1.5)
    onp.testing.assert_array_equal(got.asnumpy(), onp.pad(onp.arange(3.0), 1, _pad_with,
                                                         padder=-1.5))


def test_builtin_round_of_a_0d_result_is_the_scalars():
    # NumPy's a[3] / 7 is a float64 scalar: round(x, n) rounds it, round(x) is a Python int.
    a, want = np.arange(10.0, dtype="float64"), onp.arange(10.0)
    assert float(round(a[3] / 7, 3)) == float(round(want[3] / 7, 3))
    r = round(a.mean())
    assert type(r) is int and r == round(want.mean())
    assert round(np.array(2.5)) == 2 and round(np.array(3.5)) == 4  # half to even
    assert int(round(np.array(1234), -2)) == 1200
    with pytest.raises(TypeError):
        round(np.arange(3.0))  # NumPy's n-d arrays have no __round__
    for v in (True, 1 + 2j):  # nor its bool and complex scalars
        with pytest.raises(TypeError):
            round(onp.asarray(v)[()])
        with pytest.raises(TypeError):
            round(np.array(v))


@pytest.mark.parametrize("fp", [[2.0, onp.inf, 4.5, 4.0], [onp.inf, onp.inf, 1.0, 2.0],
                                [1.0, -onp.inf, 3.0, onp.nan]])
@pytest.mark.parametrize("period", [None, 6.28])
def test_interp_infinite_samples_as_numpy(fp, period):
    # NumPy: a NaN from one end of the interval (inf - inf) is retried from the other end,
    # and where both ends are equal it is that value (fuzzer 108:792).
    x = onp.array([0.5, 1.0, 2.0, 2.9, 3.0, 6.0])
    xp = onp.array([0.89, 1.22, 2.8, 3.1812])
    want = onp.interp(x, xp, onp.array(fp), period=period)
    got = np.interp(np.array(x), np.array(xp), np.array(fp), period=period)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)


@pytest.mark.parametrize("args,kw", [((0, 1, 5), {"dtype": "complex64"}),
                                     ((0, 1, 5), {"dtype": complex}),
                                     ((0j, 1, 5), {}), ((0, 1 + 1j, 4), {"dtype": "complex64"}),
                                     ((0, [1, 2], 5), {"dtype": complex}),
                                     ((0, [1, 2], 1), {}), ((0, 1, 1), {"dtype": "complex64"})])
def test_linspace_retstep_step_as_numpys(args, kw):
    # The step is of the endpoints: a real float for real ones whatever dtype= is, a scalar
    # for scalar endpoints, and a float NaN when undefined.
    _, want = onp.linspace(*args, retstep=True, **kw)
    _, got = np.linspace(*args, retstep=True, **kw)
    if onp.ndim(want) == 0:
        assert not isinstance(got, np.ndarray)
        assert isinstance(got, complex) == onp.iscomplexobj(want)
    else:
        got = got.asnumpy()
        assert got.dtype.kind == want.dtype.kind
    onp.testing.assert_allclose(got, want, rtol=1e-12)


def test_trapezoid_0d_x_raises_numpys_valueerror_before_axis():  # fuzzer 123:1846
    with pytest.raises(ValueError):
        onp.trapezoid(onp.array([[0], [9], [2]]), x=1, axis=None)
    with pytest.raises(ValueError, match="one dimensional"):
        np.trapezoid(np.array([[0], [9], [2]]), x=1, axis=None)


@pytest.mark.parametrize("name", ["vecmat", "matvec", "vecdot"])
def test_gufunc_python_int_out_of_range_first(name):  # fuzzer 123:106
    a = onp.array([[8, 8, 0, 1]], dtype="uint64")
    with pytest.raises(OverflowError):
        getattr(onp, name)(a, -2)
    with pytest.raises(OverflowError):
        getattr(np, name)(np.array(a), -2)
    with pytest.raises(OverflowError):
        getattr(np, name)(-2, np.array(a))


def test_gufunc_products_with_host_operands_unchanged():
    got = np.vecdot(np.array([1.0, 2.0]), [3, 4])
    assert float(got) == 11.0
    onp.testing.assert_array_equal(np.matvec([[1, 2]], np.array([3, 4])).asnumpy(), [11])
    onp.testing.assert_array_equal(np.vecmat(np.array([1, 2]), [[1, 0], [0, 1]]).asnumpy(),
                                   [1, 2])


@pytest.mark.parametrize("a,kw", [
    (onp.array([6], dtype="int32"), {"axis": (0,), "append": 3.9 + 2.4j}),
    (onp.zeros((2, 0, 3), dtype="uint32"), {"axis": (0, 1)}),
    (onp.array(5), {})])
def test_diff_n0_returns_a_before_reading_axis(a, kw):  # fuzzer 105:472, 107:1423
    want = onp.diff(a, n=0, **kw)
    got = np.diff(np.array(a), n=0, **kw)
    assert got.dtype == want.dtype and got.shape == onp.shape(want)
    onp.testing.assert_array_equal(got.asnumpy(), want)
