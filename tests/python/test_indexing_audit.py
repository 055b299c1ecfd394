"""Regressions from a differential audit of indexing and the index-based functions against
NumPy: take_along_axis / put_along_axis (errors, values with leading unit axes),
unravel_index, r_ / c_ / mgrid / ogrid, flatiter, take / put / diagonal; and the indexing
core's cases (an empty bool index, lists holding slices, complex stored into real arrays)."""
import warnings

import numpy as onp
import pytest

import ndx
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


# ---------------------------------------------------------------- the indexing core
def test_empty_bool_array_index():
    """NumPy reads a 1-d empty bool array as an empty integer index, not a mask."""
    key = onp.array([], dtype=bool)
    want = A[key]
    got = np.array(A)[np.array(key)]
    assert got.shape == want.shape
    b, ref = np.array(A), A.copy()
    b[np.array(key)] = 5
    ref[key] = 5
    onp.testing.assert_array_equal(b.asnumpy(), ref)
    a2 = onp.zeros((5, 2))
    for shape in ((0, 2), (5, 0), (0, 0)):  # an empty mask of any shape selects nothing
        m = onp.zeros(shape, dtype=bool)
        assert np.array(a2)[np.array(m)].shape == a2[m].shape


@pytest.mark.parametrize("key", [[slice(None), 0], [None]])
def test_list_with_slice_or_none_is_index_error(key):
    with pytest.raises(IndexError):
        A[key]
    with pytest.raises(IndexError):
        np.array(A)[key]


def test_complex_into_real_setitem_warns():
    a = np.zeros(3, dtype="float32")
    with pytest.warns(onp.exceptions.ComplexWarning):
        a[:] = np.array([1 + 2j, 3, 4])
    assert a.tolist() == [1.0, 3.0, 4.0]  # the real parts, as NumPy
    with warnings.catch_warnings():
        warnings.simplefilter("error", onp.exceptions.ComplexWarning)
        with pytest.raises(onp.exceptions.ComplexWarning):
            a[:] = np.array([5 + 1j, 6, 7])
    assert a.tolist() == [1.0, 3.0, 4.0]  # an error: nothing written
    with pytest.raises(TypeError):  # Python complex numbers in a list: NumPy's TypeError
        a[:] = [1 + 2j, 3, 4]


# ---------------------------------------------------------------- flatiter
@pytest.mark.parametrize("key, values", [([0, 1, 2, 3, 4], [7, 8]), (slice(2, 7), [7, 8]),
                                         ([1, 2], [7, 8, 9]), (Ellipsis, [[7], [8]]),
                                         ([[0, 1], [2, 3]], [7, 8, 9]),
                                         (onp.array([0, 1, 2, 3, 4]), onp.array([[7, 8]])),
                                         ([0, 1], []), ([100], [])])
def test_flat_assignment_repeats_values(key, values):
    want = A.copy()
    want.flat[key] = values
    got = np.array(A)
    got.flat[np.array(key) if isinstance(key, onp.ndarray) else key] = (
        np.array(values) if isinstance(values, onp.ndarray) else values)
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_flat_assignment_into_a_strided_view_repeats_values():
    want = A.copy()
    want.T.flat[[0, 1, 2, 3, 4]] = [7, 8]
    got = np.array(A)
    got.T.flat[[0, 1, 2, 3, 4]] = np.array([7, 8])
    onp.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("values", [[1, 2], list(range(1, 15)), 5])
def test_flat_setter_repeats_values(values):
    want = A.copy()
    want.flat = values
    got = np.array(A)
    got.flat = values
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_flatiter_is_an_iterator():
    want, got = A.flat, np.array(A).flat
    assert iter(got) is got
    for _ in range(2):
        assert int(next(got)) == next(want)
        assert got.index == want.index and got.coords == want.coords
    assert len(got) == len(want)
    onp.testing.assert_array_equal(got.copy().asnumpy(), want.copy())
    onp.testing.assert_array_equal(onp.asarray(got), onp.asarray(want))
    got[0], want[0]  # indexing starts the iteration over, as NumPy's
    assert got.index == want.index == 0
    assert [int(x) for x in got] == list(want)
    assert got.index == want.index and got.coords == want.coords
    assert np.array(5).flat.coords == onp.array(5).flat.coords == ()
    a = np.array(A)
    assert a.flat.base is a


@pytest.mark.parametrize("key", [None, (slice(None), None)])
def test_flatiter_bad_keys_are_index_errors(key):
    _raises_like(lambda m: m.array(A).flat[key], IndexError)


def test_flat_assignment_with_an_empty_tuple_is_index_error():
    def assign(m):
        m.array(A).flat[()] = [1, 2]
    _raises_like(assign, IndexError)


# ---------------------------------------------------------------- take, diagonal, put
@pytest.mark.parametrize("indices, axis", [(0, 0), (0, -1), ([0, 0], 0)])
def test_take_0d_with_axis(indices, axis):
    want = onp.take(onp.array(5), indices, axis=axis)
    got = np.take(np.array(5), indices, axis=axis)
    assert got.shape == want.shape
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_take_0d_with_axis_out_of_range():
    with pytest.raises(onp.exceptions.AxisError):
        onp.take(onp.array(5), 0, axis=1)
    with pytest.raises(ndx.AxisError):
        np.take(np.array(5), 0, axis=1)


@pytest.mark.parametrize("indices, axis", [([], 1), ([], None), ([[]], 0), ((), 0)])
def test_take_empty_list(indices, axis):
    want = onp.take(onp.zeros((2, 3)), indices, axis=axis)
    assert np.take(np.zeros((2, 3)), indices, axis=axis).shape == want.shape
    # an empty float array stays refused
    _raises_like(lambda m: m.take(m.zeros((2, 3)), m.array([], dtype="float32")), TypeError)


@pytest.mark.parametrize("axes", [(0, 2), (2, 0), (0, -3)])
def test_diagonal_axis_error(axes):
    _raises_like(lambda m: m.diagonal(m.array(A), 0, *axes), IndexError)  # AxisError
    _raises_like(lambda m: m.trace(m.array(A), 0, *axes), IndexError)
    with pytest.raises(ndx.AxisError):
        np.diagonal(np.array(A), 0, *axes)


@pytest.mark.parametrize("ind", [onp.array([12]), [12]])
def test_put_empty_values_is_noop(ind):
    a = np.array(A)
    np.put(a, np.array(ind) if isinstance(ind, onp.ndarray) else ind,
           np.array([], dtype="int64"))
    onp.testing.assert_array_equal(a.asnumpy(), A)


@pytest.mark.parametrize("ind", [onp.array([True, False]), [True, False], True,
                                 [0.5, 1.7], onp.float64(1.0), ["1"]])
def test_put_indices_cast_as_numpy(ind):
    want = A.copy()
    onp.put(want, ind, [100, 200])
    got = np.array(A)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.put(got, np.array(ind) if isinstance(ind, onp.ndarray) else ind,
               np.array([100, 200]))
    onp.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("ind", [onp.array([0, 1], dtype=onp.uint64),
                                 onp.array([], dtype=onp.uint64)])
@pytest.mark.parametrize("values", [[100, 200], []])
def test_put_unsafe_index_arrays_raise_type_error(ind, values):
    _raises_like(lambda m: m.put(m.array(A), m.array(ind), values), TypeError)
