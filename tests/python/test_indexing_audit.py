"""Regressions from a differential audit of indexing and the index-based functions against
NumPy: take_along_axis / put_along_axis (errors, values with leading unit axes),
unravel_index, r_ / c_ / mgrid / ogrid; and, marked xfail, the differences left in the
indexing core and the functions outside these modules."""
import warnings

import numpy as onp
import pytest

from ndx import np

A = onp.arange(12).reshape(3, 4)


def _raises_like(fn, exc):
    """fn raises exc for NumPy and for ndx (each given its own module)."""
    with pytest.raises(exc):
        fn(onp)
    with pytest.raises(exc):
        fn(np)


# ---------------------------------------------------------------- take/put_along_axis
@pytest.mark.parametrize("idx, axis", [([[0], [1]], 1), ([[0, 1]], 0),
                                       (onp.zeros((3, 0), dtype=onp.int64), 0),
                                       (onp.array([[0, 1]], dtype=onp.uint8), 0)])
def test_take_along_axis_unbroadcastable_indices_raise_index_error(idx, axis):
    idx = onp.asarray(idx)
    _raises_like(lambda m: m.take_along_axis(m.array(A), m.array(idx), axis=axis), IndexError)


@pytest.mark.parametrize("values", [5, onp.array([[7]])])
def test_put_along_axis_unbroadcastable_indices_raise_index_error(values):
    def put(m):
        m.put_along_axis(m.array(A), m.array([[0], [1]]), m.array(values), axis=1)
    _raises_like(put, IndexError)


def test_put_along_axis_checks_indices_dtype_before_values():
    def put(m):  # float indices and values that do not fit: the indices' error comes first
        m.put_along_axis(m.array(A), m.array([[1.0]]), m.array([[[7, 8]]]), axis=1)
    _raises_like(put, IndexError)


@pytest.mark.parametrize("idx, values, axis", [
    ([[0], [1], [2]], onp.full((1, 3, 1), -1), 1),  # leading unit axis dropped
    ([[0, 2]], onp.array([[[[5, 6]]]]), 1),
    ([0, 5], onp.array([[[7, 8]]]), None),
    ([0, 5, 11], onp.array([[9]]), None),
])
def test_put_along_axis_values_with_leading_unit_axes(idx, values, axis):
    want = A.copy()
    onp.put_along_axis(want, onp.array(idx), values, axis=axis)
    got = np.array(A)
    np.put_along_axis(got, np.array(idx), np.array(values), axis=axis)
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_put_along_axis_values_not_broadcastable_still_raise():
    def put(m):
        m.put_along_axis(m.array(A), m.array([[0], [1], [2]]), m.zeros((2, 3, 1), dtype="int64"),
                         axis=1)
    _raises_like(put, ValueError)


# ---------------------------------------------------------------- unravel_index
@pytest.mark.parametrize("idx", [True, onp.array([True, False])])
def test_unravel_index_takes_bools(idx):
    want = onp.unravel_index(idx, (3, 4))
    got = np.unravel_index(np.array(idx) if isinstance(idx, onp.ndarray) else idx, (3, 4))
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(onp.asarray(g.asnumpy()), w)


@pytest.mark.parametrize("idx", [[0], [0, 0], onp.zeros((0,), dtype=onp.int64)])
def test_unravel_index_many_indices_into_a_0d_shape(idx):
    _raises_like(lambda m: m.unravel_index(m.array(idx, dtype="int64"), ()), ValueError)
    assert np.unravel_index(np.array(0), ()) == onp.unravel_index(0, ()) == ()


# ---------------------------------------------------------------- r_, c_, mgrid, ogrid
@pytest.mark.parametrize("expr", ["r_[3:]", "r_[::2]", "r_[2:5, 3:]", "r_[3::2]", "r_[5::-1]",
                                  "mgrid[3:]", "ogrid[3:]", "mgrid[:]", "mgrid[4::2]",
                                  "c_[3:]"])
def test_index_tricks_slice_without_stop(expr):
    want = eval("m." + expr, {"m": onp})
    got = eval("m." + expr, {"m": np})
    assert got.dtype == want.dtype
    onp.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("expr", ["r_[m.array([1], dtype='uint8'), 300]",
                                  "r_[m.array([1], dtype='int8'), -200]",
                                  "c_[m.array([1], dtype='uint8'), 256]",
                                  "r_['0,2', m.array([1], dtype='uint16'), 70000]"])
def test_concatenator_python_int_out_of_range(expr):
    _raises_like(lambda m: eval("m." + expr, {"m": m}), OverflowError)


def test_concatenator_python_int_in_range_keeps_dtype():
    got = np.r_[np.array([1], dtype="uint8"), 255]
    want = onp.r_[onp.array([1], dtype="uint8"), 255]
    assert got.dtype == want.dtype
    onp.testing.assert_array_equal(got.asnumpy(), want)


# ---------------------------------------------------------------- left to the core (xfail)
@pytest.mark.xfail(strict=True, reason="indexing core (src/core/indexing.cc): a 1-d empty "
                   "boolean array is taken as an empty integer index by NumPy, a mask "
                   "mismatch (IndexError) by ndx")
def test_empty_bool_array_index():
    key = onp.array([], dtype=bool)
    want = A[key]
    got = np.array(A)[np.array(key)]
    assert got.shape == want.shape


@pytest.mark.xfail(strict=True, reason="indexing core (python/src key parsing): a list holding "
                   "a slice or None is NumPy's IndexError, ndx's TypeError (element format 'O')")
@pytest.mark.parametrize("key", [[slice(None), 0], [None]])
def test_list_with_slice_or_none_is_index_error(key):
    with pytest.raises(IndexError):
        A[key]
    with pytest.raises(IndexError):
        np.array(A)[key]


@pytest.mark.xfail(strict=True, reason="setitem cast (src/core/indexing.cc): storing a complex "
                   "array into a real one drops the imaginary part without NumPy's "
                   "ComplexWarning")
def test_complex_into_real_setitem_warns():
    a = np.zeros(3, dtype="float32")
    with pytest.warns(onp.exceptions.ComplexWarning):
        a[:] = np.array([1 + 2j, 3, 4])


@pytest.mark.xfail(strict=True, reason="flatiter (ndx/numpy/__init__.py): assignment broadcasts "
                   "the values instead of repeating them over the positions as NumPy's")
def test_flat_assignment_repeats_values():
    want = A.copy()
    want.flat[[0, 1, 2, 3, 4]] = [7, 8]
    got = np.array(A)
    got.flat[[0, 1, 2, 3, 4]] = np.array([7, 8])
    onp.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.xfail(strict=True, reason="flatiter (ndx/numpy/__init__.py) is iterable but not an "
                   "iterator: no __next__, index or coords as NumPy's")
def test_flatiter_is_an_iterator():
    it = np.array(A).flat
    next(it)
    assert it.index == 1


@pytest.mark.xfail(strict=True, reason="take (ndx/numpy/_composites.py): a 0-d array with "
                   "axis=0 fails with 'tuple index out of range'; NumPy reads it as 1-d")
def test_take_0d_with_axis():
    assert int(np.take(np.array(5), 0, axis=0)) == onp.take(onp.array(5), 0, axis=0)


@pytest.mark.xfail(strict=True, reason="take (ndx/numpy/_composites.py): an empty list of "
                   "indices becomes a float array and is refused; NumPy takes it as intp")
def test_take_empty_list():
    want = onp.take(onp.zeros((2, 3)), [], axis=1)
    assert np.take(np.zeros((2, 3)), [], axis=1).shape == want.shape


@pytest.mark.xfail(strict=True, reason="diagonal (ndx/numpy/_composites.py _axis_pair): an axis "
                   "out of range is a plain ValueError, not NumPy's AxisError (an IndexError)")
def test_diagonal_axis_error():
    with pytest.raises(IndexError):
        np.diagonal(np.array(A), 0, 0, 2)


@pytest.mark.xfail(strict=True, reason="put (ndx/numpy/_composites.py): empty values make "
                   "NumPy's put a no-op, whatever the indices; ndx checks their bounds first")
def test_put_empty_values_is_noop():
    a = np.array(A)
    np.put(a, np.array([12]), np.array([], dtype="int64"))
    onp.testing.assert_array_equal(a.asnumpy(), A)


@pytest.mark.xfail(strict=True, reason="put (ndx/numpy/_composites.py): NumPy's put takes bool "
                   "indices as 0 / 1 (as take does); ndx's put refuses them")
def test_put_bool_indices():
    want = A.copy()
    onp.put(want, onp.array([True, False]), [100, 200])
    got = np.array(A)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.put(got, np.array([True, False]), np.array([100, 200]))
    onp.testing.assert_array_equal(got.asnumpy(), want)
