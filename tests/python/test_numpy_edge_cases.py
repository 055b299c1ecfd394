"""Edge cases where ndx differed from NumPy 2.4 (found by differential runs against it): each
test runs the same call through both and compares values, dtypes and the exception type.
NumPy is the reference throughout."""
import itertools

import numpy as onp
import pytest

import ndx
from ndx import np


def same(got, want):
    got = got.asnumpy() if isinstance(got, np.ndarray) else onp.asarray(got)
    want = onp.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    onp.testing.assert_array_equal(got, want)


def raises_like(fn_np, fn_ndx, family):
    """Both calls raise, NumPy's exception is of `family` and ndx's is too."""
    with pytest.raises(family):
        fn_np()
    with pytest.raises(family):
        fn_ndx()


# ------------------------------------------------------------------------------ promotion
NUMERIC = [onp.dtype(t) for t in ("?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2",
                                  "f4", "f8", "c8", "c16")]


def test_result_type_of_three_dtypes_is_numpys_whatever_the_order():
    # NumPy's is not a left fold of promote_types: ('u2', 'i2', 'f4') is float32, not float64.
    for ts in itertools.product(NUMERIC, repeat=3):
        assert np.result_type(*ts) == onp.result_type(*ts), ts


def test_concatenate_and_stack_promote_as_result_type():
    parts = [onp.arange(3, dtype=t) for t in ("u2", "i2", "f4")]
    same(np.concatenate([np.array(p) for p in parts]), onp.concatenate(parts))
    same(np.stack([np.array(p) for p in parts]), onp.stack(parts))


def test_common_type_and_the_abstract_scalar_types():
    for ts in [("f2",), ("c8", "f2"), ("i1", "f4"), ("c8", "i1"), ("f4", "f8"), ("i8",)]:
        arrays = [onp.zeros(2, t) for t in ts]
        assert np.common_type(*[np.array(a) for a in arrays]) is onp.common_type(*arrays)
    with pytest.raises(TypeError):
        np.common_type(np.zeros(2, dtype=bool))
    x = np.zeros(3, dtype="int16")
    assert np.issubdtype(x.dtype, np.integer) and np.issubdtype(x.dtype, np.signedinteger)
    assert not np.issubdtype(x.dtype, np.floating)
    assert np.issubdtype(np.float32, np.inexact) and np.issubdtype(np.complex64, np.number)
    assert (np.intp, np.int_, np.single, np.double, np.csingle, np.ubyte) == (
        onp.intp, onp.int_, onp.single, onp.double, onp.csingle, onp.ubyte)
    with pytest.raises(TypeError):
        np.can_cast(None, "f4")


# ----------------------------------------------------------------- joining with dtype / out
def test_concatenate_stack_hstack_vstack_take_dtype_and_casting():
    a, b = onp.array([[1, 2], [3, 4]], "int32"), onp.array([[5, 6]], "int32")
    same(np.concatenate((np.array(a), np.array(b)), dtype="float64"),
         onp.concatenate((a, b), dtype="float64"))
    same(np.stack((np.array(a), np.array(a)), axis=1, dtype="int8", casting="unsafe"),
         onp.stack((a, a), axis=1, dtype="int8", casting="unsafe"))
    same(np.hstack((np.array(a), np.array(a)), dtype="float32"),
         onp.hstack((a, a), dtype="float32"))
    same(np.vstack((np.array(a), np.array(b)), dtype="int64"), onp.vstack((a, b), dtype="int64"))
    f = onp.array([1.5, 2.5])
    raises_like(lambda: onp.concatenate((f, f), dtype="int32"),
                lambda: np.concatenate((np.array(f), np.array(f)), dtype="int32"), TypeError)
    raises_like(lambda: onp.stack((a, a), casting="no", dtype="int64"),
                lambda: np.stack((np.array(a), np.array(a)), casting="no", dtype="int64"),
                TypeError)
    raises_like(lambda: onp.concatenate((a, a), out=onp.zeros((4, 2)), dtype="int32"),
                lambda: np.concatenate((np.array(a), np.array(a)), out=np.zeros((4, 2)),
                                       dtype="int32"), TypeError)


def test_concatenate_and_stack_cast_into_an_out_of_another_dtype():
    a = onp.array([[1, 2], [3, 4]], "int32")
    want = onp.zeros((4, 2))
    onp.concatenate((a, a), out=want)
    got = np.zeros((4, 2), dtype="float64")
    assert np.concatenate((np.array(a), np.array(a)), out=got) is got
    same(got, want)
    want = onp.zeros((2, 2, 2), "int64")
    onp.stack((a, a), out=want)
    got = np.zeros((2, 2, 2), dtype="int64")
    np.stack((np.array(a), np.array(a)), out=got)
    same(got, want)
    f = onp.array([1.5])
    raises_like(lambda: onp.concatenate((f, f), out=onp.zeros(2, "int32")),
                lambda: np.concatenate((np.array(f), np.array(f)),
                                       out=np.zeros(2, dtype="int32")), TypeError)


# ------------------------------------------------------------------------------ indexing
def test_an_integer_index_out_of_bounds_raises_beside_an_empty_index_array():
    x, e = onp.zeros((3, 4), "int32"), onp.array([], "int64")
    a = np.array(x)
    for key in [(5, e), (e, 9), (5, onp.zeros(4, bool))]:
        raises_like(lambda k=key: x[k], lambda k=key: a[tuple(
            np.array(i) if isinstance(i, onp.ndarray) else i for i in k)], IndexError)
    with pytest.raises(IndexError):
        a[5, np.array(e)] = 1


@pytest.mark.parametrize("key,value_shape", [(0, (1, 3)), (Ellipsis, (1, 2, 3)),
                                             ([0, 1], (1, 2, 3)), ((slice(None), 1), (1, 1, 2)),
                                             (onp.array([True, False]), (1, 1, 3))])
def test_assignment_drops_a_values_leading_length_one_axes(key, value_shape):
    x = onp.zeros((2, 3), "int32")
    v = onp.arange(onp.prod(value_shape), dtype="int32").reshape(value_shape) + 1
    a = np.array(x)
    x[key] = v
    a[np.array(key) if isinstance(key, (list, onp.ndarray)) else key] = np.array(v)
    same(a, x)
    with pytest.raises(ValueError):
        a[0] = np.ones((2, 3), dtype="int32")  # a leading axis that is not 1 still refuses


def test_recorded_assignment_drops_leading_length_one_axes():
    a = np.zeros((2, 3))
    v = np.ones((1, 3))
    v.attach_grad()
    with ndx.autograd.record():
        b = a * 1
        b[0] = v * 2
        y = np.sum(b)
    y.backward()
    same(b, onp.array([[2, 2, 2], [0, 0, 0]], "float32"))
    same(v.grad, onp.full((1, 3), 2.0, "float32"))


def test_python_floats_assigned_into_float64_arrays_keep_float64():
    x = onp.zeros(3)
    a = np.array(x)
    x[:] = [1.7, 0.1, 1e-300]
    a[:] = [1.7, 0.1, 1e-300]
    same(a, x)
    for fn in (lambda m, t: m.put(t, [0], [1.7]), lambda m, t: m.place(t, t == 0, [0.1]),
               lambda m, t: m.putmask(t, t == 0, [0.3]),
               lambda m, t: m.put_along_axis(t, m.asarray([[1]]) if m is np else
                                             onp.asarray([[1]]), [[2.3]], axis=1)):
        x = onp.zeros((1, 2))
        a = np.array(x)
        fn(onp, x)
        fn(np, a)
        same(a, x)
    same(np.array(onp.ones(2)) + [1.7, 0.1], onp.ones(2) + [1.7, 0.1])


def test_put_place_putmask_convert_host_values_as_numpy():
    raises_like(lambda: onp.put(onp.zeros(2, "int8"), [0], [300]),
                lambda: np.put(np.zeros(2, dtype="int8"), [0], [300]), OverflowError)
    raises_like(lambda: onp.put(onp.zeros(2), [0], [1j]),
                lambda: np.put(np.zeros(2, dtype="float64"), [0], [1j]), TypeError)
    for fn in (lambda m, t: m.put(t, [], [1]), lambda m, t: m.put(t, [0], [])):
        x = onp.arange(3)
        a = np.array(x)
        fn(onp, x)
        fn(np, a)
        same(a, x)


# ----------------------------------------------------------------------- manipulation
@pytest.mark.parametrize("axis,start", [(a, s) for a in range(3) for s in range(-3, 4)])
def test_rollaxis_with_any_start(axis, start):
    x = onp.arange(24).reshape(2, 3, 4)
    same(np.rollaxis(np.array(x), axis, start), onp.rollaxis(x, axis, start))


@pytest.mark.parametrize("obj,values,axis", [([1], [1, 2, 3], 1), ([0], [[10], [20], [30]], 0),
                                             (1, [1, 2, 3], 1), ([2], [7], None),
                                             ([1], [[1, 2]], 0)])
def test_insert_with_a_one_element_sequence(obj, values, axis):
    x = onp.array([[1, 1], [2, 2], [3, 3]])
    same(np.insert(np.array(x), obj, values, axis=axis), onp.insert(x, obj, values, axis=axis))


def test_trim_zeros_partition_sort_edge_cases():
    same(np.trim_zeros(np.array(0)), onp.trim_zeros(onp.array(0)))
    raises_like(lambda: onp.trim_zeros(onp.array([0, 1, 0]), trim=""),
                lambda: np.trim_zeros(np.array([0, 1, 0]), trim=""), ValueError)
    same(np.partition(np.array([], dtype="int32"), 0), onp.partition(onp.array([], "int32"), 0))
    raises_like(lambda: onp.partition(onp.array([3, 1, 2]), 1.0),
                lambda: np.partition(np.array([3, 1, 2]), 1.0), TypeError)
    x = onp.array([3, 1, 2])
    # (kind with stable=True is allowed: True is the default here, the Array API's)
    for kw in ({"kind": "stable", "stable": False}, {"kind": "quicksort", "stable": False}):
        raises_like(lambda k=kw: onp.sort(x, **k), lambda k=kw: np.sort(np.array(x), **k),
                    ValueError)
    raises_like(lambda: onp.sort(x, order="f"), lambda: np.sort(np.array(x), order="f"),
                ValueError)
    same(np.sort(np.array(x), stable=False), onp.sort(x, stable=False))
    raises_like(lambda: onp.sort_complex(onp.array(7.0)),
                lambda: np.sort_complex(np.array(7.0)), ValueError)  # AxisError


def test_unravel_and_ravel_multi_index_with_too_large_shapes_raise_value_error():
    raises_like(lambda: onp.unravel_index(2**62, (2**31, 2**31, 4)),
                lambda: np.unravel_index(2**62, (2**31, 2**31, 4)), ValueError)
    raises_like(lambda: onp.ravel_multi_index((1, 1, 1), (2**40,) * 3),
                lambda: np.ravel_multi_index((1, 1, 1), (2**40,) * 3), ValueError)


# --------------------------------------------------------------------------- einsum
@pytest.mark.parametrize("subscripts,n", [("...->", 1), ("i...->", 1), ("...i,...i->", 2),
                                          ("ij...->", 1), ("...ij->", 1)])
@pytest.mark.parametrize("optimize", [True, "greedy", "optimal"])
def test_optimized_einsum_sums_an_ellipsis_the_output_leaves_out(subscripts, n, optimize):
    ops = [onp.arange(24, dtype="float64").reshape(2, 3, 4) + k for k in range(n)]
    got = np.einsum(subscripts, *[np.array(o) for o in ops], optimize=optimize)
    onp.testing.assert_allclose(got.asnumpy(), onp.einsum(subscripts, *ops, optimize=optimize))
    assert np.einsum_path(subscripts, *[np.array(o) for o in ops])[0] == \
        onp.einsum_path(subscripts, *ops)[0]
    with pytest.raises(ValueError):  # unoptimized, NumPy raises too
        np.einsum(subscripts, *[np.array(o) for o in ops], optimize=False)


# ------------------------------------------------------------------ products, polynomials
@pytest.mark.parametrize("a,v", [([1.0, 2.0], [1j, 2]), ([1j, 3], [1 + 1j, 2 - 1j]),
                                 ([1 + 2j, 0.5, -1j], [2.0, 1j])])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_does_not_conjugate_correlate_does(a, v, mode):
    a, v = onp.array(a, "complex128"), onp.array(v, "complex128")
    onp.testing.assert_allclose(np.convolve(np.array(a), np.array(v), mode).asnumpy(),
                                onp.convolve(a, v, mode))
    onp.testing.assert_allclose(np.correlate(np.array(a), np.array(v), mode).asnumpy(),
                                onp.correlate(a, v, mode))


def test_polynomial_edge_cases():
    a, b = onp.array([1.0, 2.0]), onp.array([1j, 2])
    onp.testing.assert_allclose(np.polymul(np.array(a), np.array(b)).asnumpy(),
                                onp.polymul(a, b))
    same(np.polymul(np.array(onp.zeros(0)), np.array([1.0, 3.0], dtype="float64")),
         onp.polymul([], [1.0, 3.0]))
    same(np.convolve(np.array(2.0, dtype="float64"), np.array([1.0, 3.0], dtype="float64")),
         onp.convolve(2.0, [1.0, 3.0]))
    u, v = onp.array([2j, 0, 1]), onp.array([1, 0, 0, 1], "complex128")
    for got, want in zip(np.polydiv(np.array(u), np.array(v)), onp.polydiv(u, v)):
        onp.testing.assert_allclose(got.asnumpy(), want)


# ----------------------------------------------------------------- elementwise functions
def test_elementwise_edge_cases():
    raises_like(lambda: onp.i0(onp.array([1 + 2j])), lambda: np.i0(np.array([1 + 2j])),
                TypeError)
    onp.testing.assert_allclose(np.angle(np.array([1, -2], dtype="int32")).asnumpy(),
                                onp.angle(onp.array([1, -2], "int32")), rtol=1e-7)
    onp.testing.assert_allclose(np.angle(np.array([True, False])).asnumpy(),
                                onp.angle(onp.array([True, False])))
    x = onp.array([complex(onp.nan, onp.inf), complex(-onp.inf, 2), complex(1, onp.nan)])
    same(np.nan_to_num(np.array(x)), onp.nan_to_num(x))
    same(np.nan_to_num(np.array(x), nan=5.0, posinf=1.0), onp.nan_to_num(x, nan=5.0, posinf=1.0))
    a = np.array(x)
    assert np.nan_to_num(a, copy=False) is a
    same(a, onp.nan_to_num(x))
    for fn in (onp.hanning, onp.hamming, onp.blackman, onp.bartlett):
        onp.testing.assert_allclose(getattr(np, fn.__name__)(5.0).asnumpy(), fn(5.0),
                                    rtol=1e-6, atol=1e-7)
    onp.testing.assert_allclose(np.kaiser(5.0, 2).asnumpy(), onp.kaiser(5.0, 2), rtol=1e-6)


# ------------------------------------------------------------ selection, counting, search
def test_selection_edge_cases():
    raises_like(lambda: onp.digitize([1.0, 2.0], [0, 3, 1.0]),
                lambda: np.digitize(np.array([1.0, 2.0]), np.array([0, 3, 1.0])), ValueError)
    same(np.take(np.array([10, 20]), np.array([True, False])),
         onp.take(onp.array([10, 20]), onp.array([True, False])))
    same(np.choose(np.array([False, True]), [np.array([1, 2]), np.array([3, 4])]),
         onp.choose(onp.array([False, True]), [[1, 2], [3, 4]]))
    same(np.compress(np.array([True, False, False, False]), np.array([0, 1, 2])),
         onp.compress([True, False, False, False], onp.array([0, 1, 2])))
    raises_like(lambda: onp.compress([False, False, False, True], onp.array([0, 1, 2])),
                lambda: np.compress(np.array([False, False, False, True]), np.array([0, 1, 2])),
                IndexError)
    same(np.bincount([]), onp.bincount([]))
    raises_like(lambda: onp.bincount([0, 1], weights=[1j, 2]),
                lambda: np.bincount(np.array([0, 1]), weights=np.array([1j, 2])), TypeError)
    raises_like(lambda: onp.bincount([0, 1], minlength=2.0),
                lambda: np.bincount(np.array([0, 1]), minlength=2.0), TypeError)
    u8 = onp.array([1, 3], "uint8")
    raises_like(lambda: onp.ediff1d(u8, to_begin=-1),
                lambda: np.ediff1d(np.array(u8), to_begin=-1), TypeError)
    same(np.ediff1d(np.array(u8), to_begin=np.array([5], dtype="uint8")),
         onp.ediff1d(u8, to_begin=onp.array([5], "uint8")))


def test_searchsorted_edge_cases():
    i8 = onp.array([1, 5], "int8")
    same(np.searchsorted(np.array(i8), 300), onp.searchsorted(i8, 300))
    same(np.searchsorted(np.array(onp.array([1, 5], "uint8")), -1),
         onp.searchsorted(onp.array([1, 5], "uint8"), -1))
    a = onp.array([3.0, 1.0, 2.0])
    raises_like(lambda: onp.searchsorted(a, 2.5, sorter=[0, -1, 2]),
                lambda: np.searchsorted(np.array(a), 2.5, sorter=np.array([0, -1, 2])),
                ValueError)
    raises_like(lambda: onp.searchsorted(a, 2.5, sorter=onp.array([1.0, 2.0, 0.0])),
                lambda: np.searchsorted(np.array(a), 2.5, sorter=np.array([1.0, 2.0, 0.0])),
                TypeError)
    same(np.searchsorted(np.array(a), np.array([2.5]), sorter=np.array([1, 2, 0])),
         onp.searchsorted(a, [2.5], sorter=[1, 2, 0]))


# ------------------------------------------------------------------- ndarray attributes
def test_astype_takes_numpys_casting_and_order():
    x = onp.array([1.5, -2.5])
    a = np.array(x)
    same(a.astype("int32", casting="unsafe"), x.astype("int32", casting="unsafe"))
    same(a.astype("float32", "C", "same_kind"), x.astype("float32", "C", "same_kind"))
    for casting in ("safe", "same_kind", "no", "equiv"):
        raises_like(lambda c=casting: x.astype("int32", casting=c),
                    lambda c=casting: a.astype("int32", casting=c), TypeError)
    raises_like(lambda: x.astype("float32", order="Z"), lambda: a.astype("float32", order="Z"),
                ValueError)
    assert a.astype("float64", copy=False) is a


@pytest.mark.parametrize("make", [lambda m: m.zeros((3, 4)), lambda m: m.zeros((3, 4))[:, ::2],
                                  lambda m: m.zeros((3, 4)).T, lambda m: m.zeros((1, 4)),
                                  lambda m: m.zeros((0, 3)), lambda m: m.zeros(()),
                                  lambda m: m.zeros((3, 4))[1:]])
def test_flags_describe_the_layout_as_numpys(make):
    x, a = make(onp), make(np)
    for name in ("c_contiguous", "f_contiguous", "fnc", "forc", "carray", "farray"):
        assert getattr(a.flags, name) == getattr(x.flags, name), name
    for key in ("C_CONTIGUOUS", "F_CONTIGUOUS", "C", "F", "FORTRAN", "WRITEABLE", "ALIGNED",
                "OWNDATA", "O"):
        assert a.flags[key] == x.flags[key], key
    a.flags.writeable = False
    x.flags.writeable = False
    assert a.flags.writeable is False and a.flags["W"] is False
    for name in ("behaved", "carray", "farray"):
        assert getattr(a.flags, name) == getattr(x.flags, name), name
    a.flags.writeable = True
    assert a.flags.writeable is True
    with pytest.raises(KeyError):
        a.flags["NOPE"]


def test_select_takes_numpys_result_dtype_with_weak_python_scalars():
    c1, c2 = onp.array([True, False, False]), onp.array([False, True, False])
    # (an integer array beside a Python float gives ndx's default float, float32: not here)
    cases = [([onp.ones(3, "float16"), 1.5], 0), ([onp.arange(3, dtype="int8"), 2], 7),
             ([onp.ones(3, "float32"), 2], 1.5),
             ([onp.arange(3, dtype="uint8")], 7), ([onp.arange(3, dtype="int16"), 3], 4)]
    for choices, default in cases:
        conds = [c1, c2][:len(choices)]
        want = onp.select(conds, choices, default=default)
        got = np.select([np.array(c) for c in conds],
                        [np.array(c) if isinstance(c, onp.ndarray) else c for c in choices],
                        default=default)
        same(got, want)


# ------------------------------------------------------------------- elements and scalars
def test_an_element_is_a_copy_as_numpys_scalar():
    x = onp.array([0, 1, 2, 3], "int32")
    a = np.array(x)
    s = a[2]
    s += 10
    for v in a:
        v += 1
    t = np.array(onp.arange(6).reshape(2, 3))[1, 2]
    t += 5
    same(a, x)  # unchanged, as NumPy's
    assert int(s) == 12 and int(t) == 10
    row = a.reshape(2, 2)[1]  # a sub-array stays a view, as NumPy's
    row += 100
    same(a, onp.array([0, 1, 102, 103], "int32"))
    z = np.array(onp.array(5.0))
    view = z[...]  # (an Ellipsis keeps a 0-d view, as NumPy's)
    view += 1
    assert float(z) == 6.0


def test_numpy_scalars_are_stored_as_their_python_values():
    x = onp.zeros(2, "int8")
    a = np.array(x)
    for v in (onp.int64(300), onp.int16(-200), onp.uint64(2**64 - 1)):
        raises_like(lambda v=v: x.__setitem__(0, v), lambda v=v: a.__setitem__(0, v),
                    OverflowError)
        raises_like(lambda v=v: x.fill(v), lambda v=v: a.fill(v), OverflowError)
    raises_like(lambda: x.__setitem__(0, onp.float64("nan")),
                lambda: a.__setitem__(0, onp.float64("nan")), ValueError)
    x[0], a[0] = onp.int64(-7), onp.int64(-7)
    x[1], a[1] = onp.array(300), np.array(onp.array(300))  # arrays still cast, as NumPy's
    same(a, x)


def test_python_ints_past_int64_beside_uint64_and_in_comparisons():
    u = onp.array([1, 2**63], "uint64")
    same(np.array(u) + 2**63, u + 2**63)
    same(np.array(u) == 2**63, u == 2**63)
    i8 = onp.array([1, -5], "int8")
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        same(getattr(np.array(i8), op)(2**63), getattr(i8, op)(2**63))


# ------------------------------------------------------------------------------- random
@pytest.mark.parametrize("low,high,dtype", [(0, 2**63 - 1, "int64"), (-2**63, 2**63 - 1, "int64"),
                                            (0, 2**64 - 1, "uint64"), (2**62, 2**62 + 3, "int64"),
                                            (-2**60, 5, "int64")])
def test_randint_past_2_to_the_53_is_exact_and_uniform(low, high, dtype):
    r = np.random.randint(low, high, size=20000, dtype=dtype).asnumpy()
    assert r.dtype == onp.dtype(dtype)
    values = [int(v) for v in r]
    assert min(values) >= low and max(values) < high
    span = high - low
    if span > 2**32:
        # every bit position of the offset is about half set (the old double draw left the low
        # ones 0): 20000 draws put each within 0.5 +- 0.02 (over 5 standard deviations)
        offsets = [v - low for v in values]
        for bit in (0, 1, 7, 20, 40):
            share = sum((o >> bit) & 1 for o in offsets) / len(offsets)
            assert abs(share - 0.5) < 0.02, (bit, share)
        assert abs(sum(offsets) / len(offsets) / span - 0.5) < 0.02
    else:
        assert set(values) == set(range(low, high))
    g = np.random.default_rng(7).integers(0, 2**64, size=2000, dtype="uint64").asnumpy()
    assert abs(float(onp.mean(g % 2)) - 0.5) < 0.05


def test_randint_bounds_checks_hold_on_the_wide_path():
    with pytest.raises(ValueError):
        np.random.randint(-2**63 - 1, 2**62)
    with pytest.raises(ValueError):
        np.random.randint(0, 2**64, dtype="int64")
    with pytest.raises(ValueError):
        np.random.randint(2**60, 2**60)


def test_a_size_the_parameters_do_not_broadcast_to_is_a_value_error():
    with pytest.raises(ValueError):
        onp.random.triangular(onp.zeros(3), 1, 2, size=(3, 1))
    with pytest.raises(ValueError):
        np.random.triangular(np.zeros(3), 1, 2, size=(3, 1))
    assert np.random.triangular(np.zeros(3), 1, 2, size=(4, 3)).shape == (4, 3)


def test_dirichlet_with_small_alphas_has_no_nan_rows():
    d = np.random.default_rng(2).dirichlet([1e-3, 1e-3], size=20000).asnumpy().astype("float64")
    assert not onp.isnan(d).any()
    onp.testing.assert_allclose(d.sum(axis=1), 1.0, rtol=1e-6)
    # Dirichlet(a, a) puts half its mass on each side: the first share's mean is 1/2
    assert abs(d[:, 0].mean() - 0.5) < 0.02
    d = np.random.dirichlet([0.5, 2.0, 3.0], size=40000).asnumpy().astype("float64")
    onp.testing.assert_allclose(d.mean(axis=0), onp.array([0.5, 2, 3]) / 5.5, atol=0.01)


def test_in_place_operators_follow_numpys_same_kind_rule():
    cases = [("uint8", "int8", "__iadd__"), ("uint8", "int8", "__isub__"),
             ("uint8", "int8", "__imul__"), ("float32", "complex64", "__iadd__"),
             ("int64", "complex128", "__imul__"), ("int32", "float32", "__iadd__"),
             ("int32", "int32", "__itruediv__"), ("bool", "int8", "__iadd__")]
    for xt, yt, op in cases:
        x = onp.array([1, 2], xt)
        y = onp.array([1, 1], yt)
        raises_like(lambda: getattr(x.copy(), op)(y),
                    lambda: getattr(np.array(x), op)(np.array(y)), TypeError)
    raises_like(lambda: onp.array([1, 2]).__iadd__(1.5),
                lambda: np.array(onp.array([1, 2])).__iadd__(1.5), TypeError)
    x = onp.array([1, 2], "int16")
    a = np.array(x)
    x += onp.array([3, 4], "int8")
    a += np.array(onp.array([3, 4], "int8"))
    x *= 3
    a *= 3
    same(a, x)
    f = onp.array([1.5, 2.5], "float64")
    b = np.array(f)
    f /= onp.array([2, 4], "int32")
    b /= np.array(onp.array([2, 4], "int32"))
    same(b, f)


def test_random_edge_cases():
    for fn, args in [("normal", (0, float("nan"))), ("laplace", (0, float("nan"))),
                     ("exponential", (float("nan"),)), ("weibull", (float("nan"),))]:
        assert onp.isnan(getattr(onp.random, fn)(*args))
        assert onp.isnan(float(getattr(np.random, fn)(*args)))
    r = np.random.randint(2, size=4000, dtype=bool).asnumpy()
    assert r.dtype == bool and 0.4 < r.mean() < 0.6
    with pytest.raises(ValueError):
        np.random.randint(3, size=4, dtype=bool)


@pytest.mark.parametrize("op", ["equal", "not_equal", "less", "less_equal", "greater",
                                "greater_equal"])
@pytest.mark.parametrize("signed", ["int8", "int32", "int64"])
def test_signed_integers_compare_with_uint64_exactly(op, signed):
    # NumPy 2 compares them exactly; a float64 comparison rounds values past 2**53
    info = onp.iinfo(signed)
    s = onp.array([info.max, info.max - 1, -1, info.min, 0, 5], signed)
    u = onp.array([2**63, info.max, 2**64 - 1, 0, 0, 4], "uint64")
    for a, b in [(s, u), (u, s), (s[:, None], u[None, :]), (u[::-2], s[::2])]:
        same(getattr(np, op)(np.array(a), np.array(b)), getattr(onp, op)(a, b))
    same(getattr(np, op)(np.array(s), onp.uint64(2**63)), getattr(onp, op)(s, onp.uint64(2**63)))


def test_bfloat16_and_bad_argument_types_give_typed_errors_or_values():
    # (found by the fuzzer: bfloat16's dtype is the str 'bfloat16', which has no .kind)
    b = np.array(onp.array([1.0, -2.0, onp.nan], "float32")).astype("bfloat16")
    got = np.nan_to_num(b).astype("float32").asnumpy()
    onp.testing.assert_array_equal(got, onp.array([1.0, -2.0, 0.0], "float32"))
    onp.testing.assert_allclose(np.angle(b).astype("float32").asnumpy(),
                                onp.array([0.0, onp.pi, onp.nan], "float32"), rtol=1e-2)
    with pytest.raises(TypeError):
        np.piecewise(np.zeros(3), {}, [1.0])
    with pytest.raises(TypeError):
        np.piecewise(np.zeros(3), [True, False, True], {"a": 1})


# ------------------------------------------------------------------ views where NumPy has them
@pytest.mark.parametrize("shape", [(6,), (4, 6), (0, 4), (3, 0), ()])
def test_split_gives_numpys_pieces_and_errors(shape):
    x = onp.arange(int(onp.prod(shape))).reshape(shape)
    for axis in (0, -1, 1, 2, -3):
        for ios in (1, 2, 3, 0, -1, [1, 5], [5, 1], [], [0], [10], (2,), [-2], [1, 1],
                    [onp.int64(2)]):
            try:
                want = onp.split(x, ios, axis)
            except Exception as e:  # noqa: BLE001 - the family NumPy raises
                with pytest.raises(type(e)):
                    np.split(np.array(x), ios, axis)
                continue
            got = np.split(np.array(x), ios, axis)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                same(g, w)


def test_split_pieces_and_real_imag_are_views_as_numpys():
    x = np.arange(6.0)
    pieces = np.split(x, 3)
    pieces[1][0] = 100.0
    assert x[2].item() == 100.0 and all(np.shares_memory(p, x) for p in pieces)
    c = np.array([1 + 2j, 3 - 4j])
    np.real(c)[0] = 9.0
    np.imag(c)[1] = 7.0
    same(c, onp.array([9 + 2j, 3 + 7j], dtype=c.dtype))
    for m in (onp, np):
        assert not m.imag(m.arange(2.0)).flags.writeable  # zeros NumPy will not let you write


# ------------------------------------------------------------------ NumPy's keywords and orders
def test_outputs_passed_positionally_as_numpys():
    a, b = onp.arange(4.0), onp.full(4, 2.0)
    for fn, args in [("add", (a, b)), ("sqrt", (a,)), ("subtract", (a, b)), ("matmul", (
            a.reshape(2, 2), b.reshape(2, 2))), ("dot", (a, b)), ("round", (a / 3, 1))]:
        want_out = onp.zeros_like(getattr(onp, fn)(*args))
        getattr(onp, fn)(*args, want_out)
        got_out = np.zeros(want_out.shape, dtype=str(want_out.dtype))
        assert getattr(np, fn)(*(np.array(x) if isinstance(x, onp.ndarray) else x
                                 for x in args), got_out) is got_out
        same(got_out, want_out)
    q, r = np.zeros(4), np.zeros(4)
    np.divmod(np.array(a + 1), 2.0, q, r)
    same(q, onp.divmod(a + 1, 2.0)[0].astype("float32"))
    same(r, onp.divmod(a + 1, 2.0)[1].astype("float32"))
    with pytest.raises(TypeError):
        np.add(np.array(a), np.array(b), np.zeros(4), out=np.zeros(4))


@pytest.mark.parametrize("order", ["C", "F"])
def test_creation_takes_numpys_order(order):
    for fn, args in [("zeros", ((2, 3), "int32")), ("ones", ((2, 3), "int8")),
                     ("full", ((2, 3), 7, "int64"))]:
        want = getattr(onp, fn)(*args, order)
        got = getattr(np, fn)(*args, order)
        same(got, want)
        assert got.flags.f_contiguous == want.flags.f_contiguous
        assert getattr(np, fn)(*args, order=order).flags.c_contiguous == want.flags.c_contiguous
    assert np.empty((2, 3), order=order).flags.f_contiguous == (order == "F")
    got, want = np.eye(3, 2, 0, "int8", order), onp.eye(3, 2, 0, "int8", order)
    same(got, want)
    assert got.flags.f_contiguous == want.flags.f_contiguous
    ref = onp.arange(6).reshape(2, 3)
    for m, src in ((onp, ref), (np, np.array(ref))):
        assert m.asarray(src, "int64", order).flags.f_contiguous == (order == "F")
        assert m.array(src, order=order).flags.f_contiguous == (order == "F")
    with pytest.raises(ValueError):
        np.zeros((2,), order="Z")
    same(np.zeros(2, "float32", "cpu"), onp.zeros(2, "float32"))  # a device stays a device


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_copy_takes_numpys_order(order):
    ref = onp.arange(6.0).reshape(2, 3)
    for src, want_src in ((np.array(ref), ref), (np.array(ref).T, ref.T)):
        got, want = src.copy(order=order), want_src.copy(order=order)
        same(got, want)
        assert got.flags.c_contiguous == want.flags.c_contiguous
        assert got.flags.f_contiguous == want.flags.f_contiguous
    with pytest.raises(ValueError):
        np.array(ref).copy(order="Z")


def test_nan_reductions_take_initial_where_and_correction():
    a = onp.array([[onp.nan, 1.0, 5.0], [onp.nan, onp.nan, onp.nan], [2.0, 3.0, onp.nan]])
    w = onp.array([[True, False, True], [True, True, True], [False, True, True]])
    x = np.array(a)
    for fn in ("nanmax", "nanmin"):
        same(getattr(np, fn)(x, axis=1, initial=2.0), getattr(onp, fn)(a, axis=1, initial=2.0))
        same(getattr(np, fn)(x, axis=1, where=np.array(w), initial=-9.0),
             getattr(onp, fn)(a, axis=1, where=w, initial=-9.0))
        raises_like(lambda f=fn: getattr(onp, f)(a, where=w),
                    lambda f=fn: getattr(np, f)(x, where=np.array(w)), ValueError)
    v = onp.array([1.0, 2.0, onp.nan, 4.0])
    for fn in ("nanvar", "nanstd"):
        onp.testing.assert_allclose(getattr(np, fn)(np.array(v), correction=1).item(),
                                    getattr(onp, fn)(v, correction=1))
        with pytest.raises(ValueError):
            getattr(np, fn)(np.array(v), ddof=1, correction=1)


def test_gufunc_and_fft_keywords_as_numpys():
    m = onp.arange(6.0).reshape(2, 3)
    got, want = np.vecdot(np.array(m), np.array(m), axis=0, keepdims=True), onp.vecdot(
        m, m, axis=0, keepdims=True)
    same(got, want)
    o = np.zeros(2)
    assert np.vecdot(np.array(m), np.arange(3.0), o) is o
    same(o, onp.vecdot(m, onp.arange(3.0)).astype("float32"))
    same(np.matvec(np.eye(2), np.ones(2), dtype="float64"), onp.matvec(onp.eye(2), onp.ones(2)))
    same(np.vecmat(np.ones(2), np.eye(2), dtype="float64"), onp.vecmat(onp.ones(2), onp.eye(2)))
    o = np.zeros(3, dtype="int64")
    assert np.cumulative_sum(np.arange(3), out=o) is o
    same(o, onp.cumulative_sum(onp.arange(3)))
    same(np.concat((np.ones(2), np.zeros(2)), 0, dtype="int32", casting="unsafe"),
         onp.concat((onp.ones(2), onp.zeros(2)), 0, dtype="int32", casting="unsafe"))
    x = onp.random.default_rng(3).normal(size=(4, 6))
    for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "fft2",
                 "ifft2", "rfftn", "irfftn", "rfft2", "irfft2"):
        want = getattr(onp.fft, name)(x)
        out = np.zeros(want.shape, dtype=str(want.dtype))
        assert getattr(np.fft, name)(np.array(x), out=out) is out
        onp.testing.assert_allclose(out.asnumpy(), want, atol=1e-9)
    with pytest.raises(ValueError):
        np.fft.fft(np.array(x), out=np.zeros((2, 2), dtype="complex128"))


def test_clip_and_sort_take_numpys_keywords():
    a = onp.arange(5.0)
    same(np.clip(np.arange(5), 1, 3, dtype="float64"), onp.clip(onp.arange(5), 1, 3,
                                                              dtype="float64"))
    got, want = np.zeros(5), onp.zeros(5, dtype="float32")
    np.clip(np.array(a), 1, 3, out=got, where=np.array(a > 2))
    onp.clip(a, 1, 3, out=want, where=a > 2)
    same(got, want)
    s = np.array([3.0, 1.0, 2.0])
    same(s.argsort(order=None), onp.array([3.0, 1.0, 2.0]).argsort(order=None))
    s.sort(order=None)
    same(s, onp.array([1.0, 2.0, 3.0], dtype="float32"))
    with pytest.raises(ValueError):
        s.sort(order="x")


@pytest.mark.filterwarnings("ignore:All-NaN slice:RuntimeWarning")  # (NumPy's, for NaN slices)
def test_weighted_quantiles_as_numpys():
    rng = onp.random.default_rng(7)
    for _ in range(120):
        shape = tuple(int(v) for v in rng.integers(1, 5, size=rng.integers(1, 4)))
        a = rng.integers(0, 6, size=shape).astype(float)
        if rng.random() < 0.3:
            a[rng.random(shape) < 0.2] = onp.nan
        axes = [None] + list(range(len(shape)))
        axis = axes[rng.integers(len(axes))]
        one_d = axis is not None and rng.random() < 0.4
        w = (rng.integers(1, 4, size=shape[axis]) if one_d
             else rng.integers(0, 4, size=shape)).astype(float)
        keepdims = bool(rng.random() < 0.3)
        # (NumPy's nanquantile raises IndexError for 1-d weights: left out)
        for fn in ("quantile", "percentile") + (() if one_d else ("nanquantile",)):
            q = [0.0, 0.1, 0.5, 0.77, 1.0] if "quantile" in fn else [0.0, 25.0, 100.0]
            kw = dict(axis=axis, method="inverted_cdf", keepdims=keepdims)
            try:
                want = getattr(onp, fn)(a, q, weights=w, **kw)
            except ValueError:
                with pytest.raises(ValueError):
                    getattr(np, fn)(np.array(a), q, weights=np.array(w), **kw)
                continue
            got = getattr(np, fn)(np.array(a), q, weights=np.array(w), **kw).asnumpy()
            assert got.shape == want.shape
            onp.testing.assert_array_equal(got, want)
    a, w = onp.arange(6.0), onp.ones(6)
    for bad, family in (({"method": "linear", "weights": w}, ValueError),
                        ({"method": "inverted_cdf", "weights": -w}, ValueError),
                        ({"method": "inverted_cdf", "weights": w[:3], "axis": 0}, ValueError),
                        ({"method": "inverted_cdf", "weights": w[:3]}, TypeError)):
        raises_like(lambda b=bad: onp.quantile(a, 0.5, **b),
                    lambda b=bad: np.quantile(np.array(a), 0.5,
                                              **{k: np.array(v) if k == "weights" else v
                                                 for k, v in b.items()}), family)


@pytest.mark.parametrize("name", ["logical_not", "logical_xor", "logical_and", "not_equal",
                                  "less", "equal", "greater_equal"])
def test_dtype_bool_names_the_output_of_comparisons_and_logical_ops(name):
    # NumPy's dtype= fixes the output dtype; float inputs need no cast for a bool result.
    ref = onp.array([0.0, 2.0, -1.5], dtype="float32")
    other = onp.array([0.0, 1.0, -1.5], dtype="float32")
    fn, ref_fn = getattr(np, name), getattr(onp, name)
    args = (ref,) if name == "logical_not" else (ref, other)
    want = ref_fn(*args, dtype=bool)
    got = fn(*(np.array(a) for a in args), dtype=bool)
    assert got.dtype == want.dtype
    assert got.asnumpy().tolist() == want.tolist()


def test_dtype_still_refuses_what_numpy_refuses():
    x = onp.array([1.0, 2.0])
    with pytest.raises(TypeError):
        onp.less(x, x, dtype="float64")
    with pytest.raises(TypeError):
        np.less(np.array(x), np.array(x), dtype="float64")
    with pytest.raises(TypeError):  # float64 inputs to an int64 loop: not a same_kind cast
        onp.add(x, x, dtype="int64")
    with pytest.raises(TypeError):
        np.add(np.array(x), np.array(x), dtype="int64")


@pytest.mark.parametrize("dtype", ["int8", "uint32", "int64"])
def test_arange_of_a_0d_integer_array_is_integer_as_numpys(dtype):
    stop = onp.array(5, dtype=dtype)
    want = onp.arange(stop)
    got = np.arange(np.array(stop))
    assert got.dtype == want.dtype
    assert got.asnumpy().tolist() == want.tolist()
    got = np.arange(np.array(onp.array(1, dtype=dtype)), 7, 2)
    assert got.dtype == onp.arange(onp.array(1, dtype=dtype), 7, 2).dtype


@pytest.mark.parametrize("value", [-1.0, -5.25, 300.0, 1e20, -1e20, float("nan"), 7.9])
@pytest.mark.parametrize("dtype", ["uint8", "uint32", "int8", "int64"])
def test_full_casts_a_float_fill_as_astype_does(value, dtype):
    # README: float -> integer casts saturate (NaN is 0); full casts its float fill the same
    # way, where a Python int out of range is NumPy's OverflowError.
    info = onp.iinfo(dtype)
    want = 0 if value != value else int(min(max(value, info.min), info.max))  # toward zero
    got = np.full(3, value, dtype=dtype).asnumpy()
    assert got.dtype == onp.dtype(dtype) and got.tolist() == [want] * 3
    if 0 <= value <= 100:
        assert got.tolist() == onp.full(3, value, dtype=dtype).tolist()
    with pytest.raises(OverflowError):
        np.full(3, -1, dtype="uint8")


def test_small_numpy_rules_found_by_the_differential_fuzzer():
    # each against NumPy in the same process (tools/fuzz/np_diff.py found them)
    x0 = onp.array(-4, dtype="int64")
    want = onp.compress(onp.array([True, False]), x0, axis=0)
    got = np.compress(np.array([True, False]), np.array(x0), axis=0)
    assert got.asnumpy().tolist() == want.tolist() and got.shape == want.shape
    for axis in (0, -1):
        assert np.squeeze(np.array(2.0), axis=axis).shape == onp.squeeze(onp.array(2.0),
                                                                          axis=axis).shape
    for axis in (1, (0,)):
        with pytest.raises(ValueError):  # AxisError, as NumPy's
            onp.squeeze(onp.array(2.0), axis=axis)
        with pytest.raises(ValueError):
            np.squeeze(np.array(2.0), axis=axis)
    got = np.ix_(np.array(onp.array([], "complex64")), np.array(onp.array([], "int16")))
    want = onp.ix_(onp.array([], "complex64"), onp.array([], "int16"))
    assert [g.dtype for g in got] == [w.dtype for w in want]
    assert [g.shape for g in got] == [w.shape for w in want]
    assert np.ix_([])[0].dtype == onp.ix_([])[0].dtype  # an empty list is an index
    with pytest.warns(RuntimeWarning):
        want = onp.nanpercentile(onp.array([], "int32"), 5.0)
    got = np.nanpercentile(np.array(onp.array([], "int32")), 5.0)
    assert onp.isnan(float(got)) and onp.isnan(want)
    h = onp.array([[-5.5, 2.0, 4.0]], "float16")
    want = onp.conjugate(h, dtype="complex64")
    got = np.conjugate(np.array(h), dtype="complex64")
    assert got.dtype == want.dtype and got.asnumpy().tolist() == want.tolist()
    with pytest.raises(TypeError):
        onp.conjugate(onp.array([1.5]), dtype="int32")
    with pytest.raises(TypeError):
        np.conjugate(np.array([1.5]), dtype="int32")


@pytest.mark.parametrize("arr_shape,idx_shape,axis", [((0, 0), (1, 0), -1), ((2, 0), (1, 0), 1),
                                                      ((0, 3), (0, 1), 0), ((3, 0), (3, 0), 0)])
def test_take_along_axis_with_no_indices_is_numpys_empty_result(arr_shape, idx_shape, axis):
    want = onp.take_along_axis(onp.zeros(arr_shape), onp.zeros(idx_shape, "int64"), axis=axis)
    got = np.take_along_axis(np.zeros(arr_shape), np.zeros(idx_shape, dtype="int64"), axis=axis)
    assert got.shape == want.shape


def test_float_power_takes_python_floats_in_float64():
    # float_power computes in float64: a Python float exponent is not rounded to float32 first
    x = onp.array([3, 7, 2], "int16")
    for other in (0.1, 1 / 3, -2.7):
        want = onp.float_power(x, other)
        got = np.float_power(np.array(x), other)
        assert got.dtype == want.dtype == onp.float64
        assert got.asnumpy().tolist() == want.tolist()
        assert np.float_power(other, np.array(x)).asnumpy().tolist() == \
            onp.float_power(other, x).tolist()
    assert float(np.float_power(2.0, 0.1)) == float(onp.float_power(2.0, 0.1))


@pytest.mark.parametrize("dtype", ["int16", "float32", "bool", "uint8"])
def test_full_with_a_complex_fill_in_a_real_dtype_warns_and_keeps_the_real_part(dtype):
    import warnings
    with warnings.catch_warnings(record=True) as want_warned:
        warnings.simplefilter("always")
        want = onp.full(3, 2.5 + 1j, dtype=dtype)
    with warnings.catch_warnings(record=True) as got_warned:
        warnings.simplefilter("always")
        got = np.full(3, 2.5 + 1j, dtype=dtype)
    assert got.dtype == want.dtype and got.asnumpy().tolist() == want.tolist()
    assert [w.category for w in got_warned] == [w.category for w in want_warned]
