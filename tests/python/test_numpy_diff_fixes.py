"""Fixes for differences from NumPy 2.4 that tools/fuzz/np_diff.py found (report: cov of
complex data, Python floats beside float64 arrays, geomspace with a complex dtype, ...). Each
test runs the same call through NumPy and ndx and compares values, dtypes and exception types,
with README's default-float rule applied where it decides the dtype."""
import itertools
import warnings

import numpy as onp
import pytest

from ndx import np


def nd(x):
    """NumPy arrays as ndx arrays (the dtype kept); anything else as it is."""
    return np.asarray(x) if isinstance(x, onp.ndarray) else x


def host(x):
    return x.asnumpy() if isinstance(x, np.ndarray) else onp.asarray(x)


def close(got, want, rtol=1e-12, dtype=None):
    got, want = host(got), onp.asarray(want)
    assert got.dtype == (want.dtype if dtype is None else onp.dtype(dtype)), (got.dtype,
                                                                             want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    onp.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


def same(got, want):
    got, want = host(got), onp.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    onp.testing.assert_array_equal(got, want)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# ---- 1. cov / corrcoef of complex data: X @ X^H, complex --------------------------------
_RNG = onp.random.default_rng(7)
_M = _RNG.normal(size=(3, 5)) + 1j * _RNG.normal(size=(3, 5))
_Y = _RNG.normal(size=(2, 5))
_FW = onp.array([1, 2, 1, 3, 1])
_AW = _RNG.random(5)


def test_cov_of_a_complex_vector():
    x = onp.array([1 + 2j, 3 - 1j, 1j])
    got = np.cov(np.asarray(x))
    close(got, onp.cov(x), rtol=1e-12)
    assert complex(got) == pytest.approx(4.666666666666667 + 0j)


@pytest.mark.parametrize("rowvar,bias,ddof,fw,aw,dtype,y", list(itertools.product(
    [True, False], [False, True], [None, 0, 2], [None, _FW], [None, _AW],
    [None, "complex64", "complex128"], [None, _Y])))
def test_cov_complex_keywords(rowvar, bias, ddof, fw, aw, dtype, y):
    m = _M if rowvar else _M.T
    yy = None if y is None else (y if rowvar else y.T)
    kw = dict(rowvar=rowvar, bias=bias, ddof=ddof, fweights=fw, aweights=aw, dtype=dtype)
    want = quiet(onp.cov, m, yy, **kw)
    got = quiet(np.cov, nd(m), nd(yy), **{k: nd(v) for k, v in kw.items()})
    close(got, want, rtol=1e-5 if dtype == "complex64" else 1e-10)


def test_cov_complex_to_real_dtype_drops_the_imaginary_part_with_a_warning():
    x = onp.array([1 + 2j, 3 - 1j, 1j])
    with pytest.warns(onp.exceptions.ComplexWarning):
        want = onp.cov(x, dtype="float64")
    with pytest.warns(onp.exceptions.ComplexWarning):
        got = np.cov(np.asarray(x), dtype="float64")
    close(got, want)


def test_cov_real_input_is_unchanged():
    x = _RNG.normal(size=(3, 6)).astype("float32")
    close(np.cov(np.asarray(x)), onp.cov(x), rtol=1e-6)


@pytest.mark.parametrize("dtype", [None, "complex64", "complex128"])
def test_corrcoef_of_complex_data(dtype):
    want = onp.corrcoef(_M, _Y, dtype=dtype)
    got = np.corrcoef(np.asarray(_M), np.asarray(_Y), dtype=dtype)
    close(got, want, rtol=1e-5 if dtype == "complex64" else 1e-10)


def test_corrcoef_fuzzer_case_3_1277():
    x = onp.array([[0 + 4j, 6 + 6j, 1.01 - 2.25j], [-2.593 + 6j, 1.2 + 0j, 1 + 0j],
                   [4 - 0.441j, 3.2 - 2.32j, 6 + 4j]])
    y = onp.array([[-0.3, -1.8507, 5.], [4., -1.67, -2.], [2.2323, 1., 2.89]])
    want = onp.corrcoef(x, y=y, dtype=onp.dtype("complex64"))
    got = np.corrcoef(np.asarray(x), y=np.asarray(y), dtype=onp.dtype("complex64"))
    close(got, want, rtol=1e-5)


# ---- 2. Python floats / complex numbers beside float64 arrays stay float64 ---------------
_F64 = onp.array([1.0, 3.0])
_F32 = onp.array([1.0, 2.0], "float32")
_U64 = onp.array([1, 2], "uint64")
_C128 = onp.array([1 + 1j, 2.0])


@pytest.mark.parametrize("name,args,kwargs", [
    ("ediff1d", (_F64,), dict(to_begin=-5.58)),
    ("ediff1d", (_F64,), dict(to_end=[0.1, 0.3], to_begin=0.7)),
    ("ediff1d", (onp.array([1.0, 2.0], "float16"),), dict(to_end=0.1)),
    ("outer", (_F64, 0.1 + 0.4655j), {}),
    ("outer", (0.1, _F64), {}),
    ("outer", (_F32, 0.1), {}),
    ("diff", (_F64,), dict(prepend=0.1, append=[0.3])),
    ("diff", (onp.array([[1.0, 2.5], [4.0, 7.0]]),), dict(axis=0, prepend=0.1)),
    ("polyadd", (_F64, -5.58), {}),
    ("polysub", (-5.58, _F64), {}),
    ("polymul", (_F64, 0.1), {}),
    ("polydiv", (_F64, 0.3), {}),
    ("polyval", (_F64, 0.1), {}),
    ("polyval", ([0.1, 0.3], _F64), {}),
    ("union1d", (_F64, 0.1), {}),
    ("setxor1d", (_F64, 0.1), {}),
    ("vdot", (onp.array([1.0]), 0.1), {}),
    ("vdot", (_C128[:1], 0.1j), {}),
    ("kron", (_U64, 0.1), {}),
    ("kron", (_F64, [0.1, 0.2]), {}),
    ("kron", (_C128, 0.3), {}),
    ("inner", (_F64, 0.1), {}),
    ("tensordot", (_F64, 0.1), dict(axes=0)),
    ("cross", (onp.array([1.0, 2.0, 3.0]), [0.1, 0.2, 0.3]), {}),
    ("append", (_F64, 0.1), {}),
])
def test_python_floats_beside_float64_keep_their_value(name, args, kwargs):
    want = getattr(onp, name)(*args, **kwargs)
    got = getattr(np, name)(*[nd(a) for a in args], **kwargs)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        # float32 stays float32 (README's default float); float64 is exact
        same(g, w) if host(g).dtype == onp.asarray(w).dtype else close(g, w, 1e-6, "float32")


def test_python_float_beside_float32_is_the_default_float():
    got = np.outer(np.asarray(_F32), 0.1)
    assert got.dtype == onp.float32
    got = np.kron(np.asarray(onp.array([1, 2], "int32")), 0.5)
    close(got, onp.kron(onp.array([1, 2], "int32"), 0.5), dtype=got.dtype)


@pytest.mark.parametrize("a,b", [(onp.array([7, 8], "uint8"), 6), (6, onp.array([7, 8], "uint8")),
                                 (onp.array([1.0, 2.0], "float32"), 6.5),
                                 (onp.array([7, 8], "int16"), [6])])
def test_union1d_takes_a_python_scalar_weakly(a, b):
    same(np.union1d(nd(a), nd(b)), onp.union1d(a, b))


# ---- 3. geomspace with complex endpoints or dtype -----------------------------------------
@pytest.mark.parametrize("args,kwargs", [
    ((-1.5, 5), dict(num=4, dtype="complex128")),
    ((-1.5, 5), dict(num=4, dtype="complex64")),
    ((1.5, -5), dict(num=5, dtype="complex128", endpoint=False)),
    ((-2, -50), dict(num=5, dtype=complex)),
    ((1, 5), dict(num=4, dtype="complex128")),
    ((-1.5, 5), dict(num=1, dtype="complex128")),
    ((-1.5, 5), dict(num=0, dtype="complex128")),
    ((onp.array([-1.0, 2.0]), onp.array([5.0, -7.0])), dict(num=3, dtype="complex128", axis=1)),
    ((onp.array([-1.0, 2.0]), 5.0), dict(num=3, dtype="complex128", axis=-1, endpoint=False)),
    ((-3, 5), dict(num=4, dtype="float64")),
])
def test_geomspace_complex_dtype(args, kwargs):
    want = quiet(onp.geomspace, *args, **kwargs)
    got = quiet(np.geomspace, *[nd(a) for a in args], **kwargs)
    close(got, want, rtol=2e-6 if kwargs.get("dtype") == "complex64" else 1e-12)


@pytest.mark.parametrize("args,kwargs", [((1j, 100j), dict(num=4)),
                                         ((3 + 1j, -2 - 2j), dict(num=6, endpoint=False))])
def test_geomspace_python_complex_endpoints_are_complex64(args, kwargs):
    got = np.geomspace(*args, **kwargs)  # README: a Python complex is the default complex
    close(got, onp.geomspace(*args, **kwargs).astype("complex64"), rtol=2e-6)


# ---- 4. permute_dims' default ---------------------------------------------------------------
def test_permute_dims_defaults_to_reversing_the_axes():
    x = onp.arange(24.0).reshape(2, 3, 4)
    same(np.permute_dims(np.asarray(x)), onp.permute_dims(x))
    same(np.permute_dims(np.asarray(x), (1, 0, 2)), onp.permute_dims(x, (1, 0, 2)))
    same(np.permute_dims(np.asarray(onp.float64(2.0))), onp.permute_dims(onp.float64(2.0)))


# ---- 5. var / std / nanvar / nanstd with a complex or integer dtype= ------------------------
_VAR_INPUTS = [onp.array([1.7, 2.9, 5.5, 9.6]), onp.array([1, 2, 7], "int64"),
               onp.array([1 + 1j, 2, -3j], "complex64"), onp.array([[1.5, 2.25], [3.5, 9.0]],
                                                                  "float32"),
               onp.array([1, 2, 7, 11], "uint8")]


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("a", _VAR_INPUTS, ids=lambda a: str(a.dtype))
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", "complex64",
                                   "complex128"])
@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"ddof": 1}, {"keepdims": True}],
                         ids=["none", "axis0", "ddof1", "keepdims"])
def test_var_family_dtype(name, a, dtype, kw):
    if a.dtype.kind == "c" and dtype[0] != "c":
        pytest.skip("NumPy casts complex data to a real dtype= with a ComplexWarning")
    try:
        want = quiet(getattr(onp, name), a, dtype=dtype, **kw)
    except TypeError:
        with pytest.raises(TypeError):
            getattr(np, name)(np.asarray(a), dtype=dtype, **kw)
        return
    got = getattr(np, name)(np.asarray(a), dtype=dtype, **kw)
    close(got, want, rtol=1e-6)


def test_var_with_where_and_integer_dtype():
    a = onp.array([1.7, 2.9, 5.5, 9.6, 4.2])
    w = onp.array([True, False, True, True, False])
    for name in ("var", "std"):
        close(getattr(np, name)(np.asarray(a), dtype="int32", where=np.asarray(w)),
              getattr(onp, name)(a, dtype="int32", where=w))


def test_var_default_dtype_is_unchanged():
    a = onp.array([1, 2, 7], "int64")
    close(np.var(np.asarray(a)), onp.var(a), rtol=1e-6, dtype="float32")
    close(np.nanstd(np.asarray(onp.array([1.5, onp.nan, 3.0]))),
          onp.nanstd(onp.array([1.5, onp.nan, 3.0])))


# ---- 6. dtype details -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float64", "complex64", "complex128", "int8",
                                   "uint64", "bool", "uint8"])
def test_vander_dtype(dtype):
    x = onp.array([1, 2, 3], dtype)
    same(np.vander(np.asarray(x)), onp.vander(x))


def test_vander_float32_keeps_float32():  # (deliberate: NumPy gives float64)
    x = onp.array([0.5, 2.0, -1.0], "float32")
    close(np.vander(np.asarray(x)), onp.vander(x), rtol=1e-6, dtype="float32")


@pytest.mark.parametrize("a_dtype,w_dtype,want", [
    ("bool", "float16", "float32"), ("int32", "int32", "float32"),
    ("int64", "float64", "float64"), ("uint8", "float32", "float32"),
    ("bool", "complex64", "complex64"), ("float16", "float16", "float16"),
    ("float32", "int64", "float64"), ("int32", "float32", "float64"),
    ("int64", "float16", "float64")])
def test_average_dtype(a_dtype, w_dtype, want):
    # README: where NumPy's 'f8' floor is a default, ndx's default float (float32) is used
    a = onp.array([1, 0, 1], a_dtype)
    w = onp.array([1, 2, 3], w_dtype)
    avg, scl = np.average(np.asarray(a), weights=np.asarray(w), returned=True)
    navg, nscl = onp.average(a, weights=w, returned=True)
    close(avg, navg.astype(want), rtol=1e-3 if want == "float16" else 1e-6)
    close(scl, nscl.astype(want), rtol=1e-6)


def test_full_like_complex_fill_on_a_real_array():
    a = onp.array([1, 2], "int32")
    for fill in (3 + 4j, onp.complex64(2.5 - 1j)):
        with pytest.warns(onp.exceptions.ComplexWarning):
            want = onp.full_like(a, fill)
        with pytest.warns(onp.exceptions.ComplexWarning):
            got = np.full_like(np.asarray(a), fill)
        same(got, want)
    same(np.full_like(np.asarray(a), 3 + 4j, dtype="complex64"),
         onp.full_like(a, 3 + 4j, dtype="complex64"))


@pytest.mark.parametrize("f,spacing,kwargs", [
    (onp.array([1.0, 2.0, 4.0, 7.5]), (1 + 1j,), {}),
    (onp.array([1.0, 2.0, 4.0, 7.5], "float32"), (0.5 + 1j,), {}),
    (onp.array([1.0, 2.0, 4.0, 7.5]) + 1j, (1 + 1j,), {}),
    (onp.arange(12.0).reshape(3, 4) ** 2, (1 + 2j, 0.5), {}),
    (onp.arange(12.0).reshape(3, 4) ** 2, (1 + 2j,), dict(edge_order=2)),
    (onp.array([1, 4, 9, 16]), (1 + 1j,), {}),
])
def test_gradient_complex_spacing(f, spacing, kwargs):
    want = quiet(onp.gradient, f, *spacing, **kwargs)
    got = quiet(np.gradient, np.asarray(f), *spacing, **kwargs)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, (tuple, list)) else (want,)):
        close(g, w, rtol=1e-6)


def test_gradient_complex_spacing_edge_order_2_of_1d_real_data_raises():
    f = onp.array([1.0, 2.0, 4.0])
    with pytest.raises(TypeError):
        quiet(onp.gradient, f, 2j, edge_order=2)
    with pytest.raises(TypeError):
        quiet(np.gradient, np.asarray(f), 2j, edge_order=2)


# ---- 7. cumulative_sum / cumulative_prod with a 1-tuple axis -------------------------------
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("axis", [(0,), (1,), (-1,), (onp.int64(1),)])
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_one_tuple_axis(name, axis, include_initial):
    x = onp.arange(1.0, 7.0).reshape(2, 3)
    if include_initial:  # NumPy 2.4 refuses a tuple there (it indexes the shape with it)
        for mod, arr in ((onp, x), (np, np.asarray(x))):
            with pytest.raises(TypeError):
                getattr(mod, name)(arr, axis=axis, include_initial=True)
        return
    same(getattr(np, name)(np.asarray(x), axis=axis, include_initial=include_initial),
         getattr(onp, name)(x, axis=axis, include_initial=include_initial))


@pytest.mark.parametrize("x,axis,family", [
    (onp.ones((2, 3)), (0, 1), ValueError), (onp.ones(3), (), ValueError),
    (onp.ones(3), (0, 1), ValueError), (onp.ones(3), (1,), IndexError),
    (onp.ones((2, 3)), [0], TypeError)])
def test_cumulative_bad_axes(x, axis, family):
    for mod, arr in ((onp, x), (np, np.asarray(x))):
        with pytest.raises(family):
            mod.cumulative_sum(arr, axis=axis)


# ---- 8. poly with an infinite root ----------------------------------------------------------
@pytest.mark.parametrize("z", [onp.array([1.0, onp.inf]), onp.array([-onp.inf, onp.inf, 1.0]),
                               onp.array([1.0, 2.0, 3.0]), onp.array([1 + 1j, 1 - 1j, 2]),
                               onp.array([2.5], "float32"), onp.array([onp.nan, 1.0])])
def test_poly_convolves_without_padding_products(z):
    close(np.poly(np.asarray(z)), onp.poly(z), rtol=1e-12)


# ---- 9. input NumPy refuses -----------------------------------------------------------------
@pytest.mark.parametrize("axis,family", [((0,), TypeError), ([0], TypeError),
                                         ((0, 1), ValueError), ((5,), IndexError)])
def test_unique_axis_must_be_an_integer(axis, family):
    x = onp.ones((2, 2))
    for mod, arr in ((onp, x), (np, np.asarray(x))):
        with pytest.raises(family):
            mod.unique(arr, axis=axis)
    same(np.unique(np.asarray(x), axis=onp.int64(0)), onp.unique(x, axis=onp.int64(0)))


@pytest.mark.parametrize("axis", [(0,), [0], (0, 1)])
def test_take_axis_must_be_an_integer(axis):
    x = onp.ones((2, 2))
    for mod, arr in ((onp, x), (np, np.asarray(x))):
        with pytest.raises(TypeError):
            mod.take(arr, [0], axis=axis)


_MASK = onp.array([True, False, True])
_PLACE_VALUES = [[1.5], 1.5, onp.array([1.5]), onp.array([7], "int64"), 7, [7], [300], -1,
                 onp.array([-1]), onp.array([1 + 1j]), onp.array([1e300]), True, [2],
                 onp.array([2.5]), 2 ** 40, onp.float64(1.5), onp.array(7),
                 onp.array(7, "int32"), onp.array([7], "int16"), onp.array([1], "uint8")]


@pytest.mark.parametrize("name", ["place", "putmask"])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "bool"])
@pytest.mark.parametrize("v", _PLACE_VALUES, ids=repr)
@pytest.mark.parametrize("as_ndx", [False, True])
def test_place_putmask_casting(name, dtype, v, as_ndx):
    if as_ndx and not isinstance(v, onp.ndarray):
        pytest.skip("host data only")
    want_arr = onp.array([1, 2, 3]).astype(dtype)
    got_arr = np.asarray(want_arr.copy())
    try:
        getattr(onp, name)(want_arr, _MASK, v)
    except (TypeError, OverflowError) as e:
        with pytest.raises(TypeError if isinstance(e, TypeError) else OverflowError):
            getattr(np, name)(got_arr, np.asarray(_MASK), nd(v) if as_ndx else v)
        return
    getattr(np, name)(got_arr, np.asarray(_MASK), nd(v) if as_ndx else v)
    same(got_arr, want_arr)


def test_clip_bounds_helper_follows_numpy_with_unset_defaults():
    from ndx.numpy._composites import _NO_BOUND, _clip_bounds
    assert _clip_bounds(_NO_BOUND, _NO_BOUND, _NO_BOUND, _NO_BOUND) == (None, None)
    assert _clip_bounds(_NO_BOUND, _NO_BOUND, 2, _NO_BOUND) == (2, None)
    assert _clip_bounds(None, None, _NO_BOUND, _NO_BOUND) == (None, None)
    assert _clip_bounds(1, 3, _NO_BOUND, _NO_BOUND) == (1, 3)
    for bounds in ((2, _NO_BOUND), (_NO_BOUND, 2), (None, _NO_BOUND)):
        with pytest.raises(TypeError):
            _clip_bounds(*bounds, _NO_BOUND, _NO_BOUND)
    with pytest.raises(TypeError):  # NumPy's own rule
        onp.clip(onp.ones(2), 2)
    # np.clip's defaults are still None (python/ndx/numpy/__init__.py): the old behaviour
    assert _clip_bounds(None, None, 2, None) == (2, None)


# ---- found on the re-run of the fuzzer --------------------------------------------------
def test_place_checks_the_cast_even_when_the_mask_is_all_false():
    for v in (onp.array([6], "uint32"), -4 - 2j):
        for mod, arr, mask, vals in ((onp, onp.array([7], "int16"), onp.array([False]), v),
                                     (np, np.asarray(onp.array([7], "int16")),
                                      np.asarray(onp.array([False])), nd(v))):
            with pytest.raises(TypeError):
                mod.place(arr, mask, vals)


def test_full_like_complex_fill_on_a_bool_array_is_its_truth():
    a = onp.array([False, True])
    for fill in (5j, 0j, 2 + 0j):
        same(np.full_like(np.asarray(a), fill), onp.full_like(a, fill))


@pytest.mark.parametrize("a,b", [(onp.array([0, 3], "uint32"), 0.7213),
                                 (onp.array([0, 3], "int64"), -0.32 + 0j)])
def test_union1d_scalar_beside_a_widening_array_keeps_its_value(a, b):
    same(np.union1d(np.asarray(a), b), onp.union1d(a, b))


def test_diff_python_scalars_widened_by_the_other_parts():
    a = onp.array([[[-128, -128, -1]], [[126, 7, 6]]], "int8")
    kw = dict(n=3, axis=-3, prepend=-4, append=-1.96 + 2j)
    same(np.diff(np.asarray(a), **kw), onp.diff(a, **kw))
    got = np.diff(np.asarray(onp.array([1.0, 2.0], "float32")), prepend=0.1)
    close(got, onp.array([0.9, 1.0], "float32"), rtol=1e-6)  # (float32 stays float32)


def test_nanvar_of_nothing_in_a_complex_dtype_is_nan_nan_j():
    a = onp.array([], "uint16")
    want = quiet(onp.nanvar, a, dtype="complex64", correction=1)
    got = quiet(np.nanvar, np.asarray(a), dtype="complex64", correction=1)
    close(got, want)


def test_integer_dtype_var_of_a_0d_array_checks_the_axis():
    a = onp.array(9, "uint32")
    for mod, arr in ((onp, a), (np, np.asarray(a))):
        with pytest.raises(IndexError):
            quiet(mod.nanstd, arr, axis=-1, dtype="uint32")
