"""NumPy's ufunc breadth (issue 11, part 1): what the op table cannot express — the names of
the namespace, the ndarray operators that map to the new ops, and the gradients of ops with
several outputs or an integer input. Forward values, dtypes, bad inputs and single-output
gradients of every op are in op_table.py / test_ops.py."""
import numpy as onp
import pytest
import scipy.special

import ndx
from ndx import autograd, np

# The names issue 11 asks for, by part.
UFUNCS = """tan sinh cosh arcsin asin arccos acos arctan atan arcsinh asinh arccosh acosh arctanh
atanh arctan2 atan2 hypot degrees radians deg2rad rad2deg expm1 exp2 log2 log10 log1p logaddexp
logaddexp2 cbrt reciprocal positive fabs rint fix trunc around round round_ sinc signbit copysign
nextafter spacing ldexp frexp modf divmod fmod fmax fmin heaviside float_power pow gcd lcm
bitwise_and bitwise_or bitwise_xor bitwise_not invert bitwise_invert left_shift right_shift
bitwise_left_shift bitwise_right_shift logical_and logical_or logical_xor isnan isinf isfinite
isposinf isneginf nan_to_num clip real imag conj conjugate""".split()
NPX_UFUNCS = """erf erfinv gamma gammaln digamma sigmoid log_sigmoid softsign relu6 gelu silu
mish""".split()
REDUCTIONS = """all any count_nonzero ptp cumsum cumprod cumulative_sum cumulative_prod diff ediff1d
std var average median percentile quantile nansum nanprod nanmean nanstd nanvar nanmax nanmin
nanargmax nanargmin nanmedian nanpercentile nanquantile nancumsum nancumprod trapezoid histogram
histogram_bin_edges bincount digitize corrcoef cov correlate convolve""".split()
SEARCHING = """sort argsort partition argpartition lexsort searchsorted nonzero argwhere flatnonzero
where extract select choose compress unique unique_values unique_counts unique_inverse
unique_all isin in1d intersect1d union1d setdiff1d setxor1d allclose isclose array_equal
array_equiv""".split()
DTYPE_UTILS = """finfo iinfo can_cast promote_types result_type min_scalar_type isdtype issubdtype
integer_dtypes floating_dtypes boolean_dtypes numeric_dtypes NINF PINF NAN NaN PZERO NZERO
euler_gamma""".split()
ALL_NAMES = [("np", n) for n in UFUNCS + REDUCTIONS + SEARCHING + DTYPE_UTILS] + [
    ("npx", n) for n in NPX_UFUNCS] + [("npx", "topk")]

def _has(ns, name):
    return hasattr(np if ns == "np" else ndx.npx, name)


@pytest.mark.parametrize("ns,name", ALL_NAMES, ids=lambda v: v)
def test_issue11_name(ns, name):
    assert _has(ns, name), f"{ns}.{name} is missing"


# ----------------------------------------------------------------------- ndarray operators
INTS = onp.array([[5, -3, 12], [0, 7, -8]], dtype=onp.int32)
OTHER = onp.array([[3, 6, 1], [2, 2, 5]], dtype=onp.int32)


@pytest.mark.parametrize("op", ["&", "|", "^", "<<", ">>"])
def test_bitwise_operators_match_numpy(op):
    a, b = np.array(INTS), np.array(OTHER)  # noqa: F841 (used by eval)
    for got, want in ((eval(f"a {op} b"), eval(f"INTS {op} OTHER")),
                      (eval(f"a {op} 2"), eval(f"INTS {op} 2")),
                      (eval(f"2 {op} b"), eval(f"2 {op} OTHER"))):
        assert got.dtype == want.dtype
        onp.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("op", ["&=", "|=", "^=", "<<=", ">>="])
def test_inplace_bitwise_operators(op):
    a = np.array(INTS)
    before = a
    want = INTS.copy()
    exec(f"a {op} np.array(OTHER)")
    exec(f"want {op} OTHER")
    assert a is before  # updated in place
    onp.testing.assert_array_equal(a.asnumpy(), want)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64"])
def test_gcd_and_lcm_at_the_integer_limits_are_numpys(dtype):
    """gcd and lcm take magnitudes in the unsigned type, as NumPy does: |INT_MIN| is
    2^(bits - 1) there. lcm(INT_MIN, 15) of int32 used to divide INT_MIN by -1 and kill the
    process with SIGFPE; lcm's products wrap as NumPy's."""
    info = onp.iinfo(dtype)
    edges = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 15, 64, info.max // 2]
    if info.min < 0:
        edges += [-1, -2, -15, -64, info.min // 2]
    x = onp.array([a for a in edges for _ in edges], dtype=dtype)
    y = onp.array([b for _ in edges for b in edges], dtype=dtype)
    rng = onp.random.default_rng(3)
    x = onp.concatenate([x, rng.integers(info.min, info.max, 2000, dtype=dtype, endpoint=True)])
    y = onp.concatenate([y, rng.integers(info.min, info.max, 2000, dtype=dtype, endpoint=True)])
    for name in ("gcd", "lcm"):
        with onp.errstate(all="ignore"):
            want = getattr(onp, name)(x, y)
        got = getattr(np, name)(np.array(x), np.array(y)).asnumpy()
        onp.testing.assert_array_equal(got, want, strict=True, err_msg=name)


def test_invert_operator():
    onp.testing.assert_array_equal((~np.array(INTS)).asnumpy(), ~INTS)
    b = onp.array([True, False])
    onp.testing.assert_array_equal((~np.array(b)).asnumpy(), ~b)
    with pytest.raises(TypeError):
        ~np.array([1.5])


def test_bitwise_operators_reject_floats():
    with pytest.raises(TypeError):
        np.array([1.5]) & np.array([1.0])
    with pytest.raises(TypeError):
        np.array([1, 2]) << 1.5


# ------------------------------------------------------- gradients the op table cannot run
def _numeric_grad(f, x, w, eps=1e-6):
    g = onp.zeros_like(x)
    for idx in onp.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        g[idx] = ((f(xp) * w).sum() - (f(xm) * w).sum()) / (2 * eps)
    return g


def _grad_of(fn, *arrays):
    xs = [np.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = fn(*xs)
    return xs, y


def test_ldexp_gradient():
    rng = onp.random.default_rng(0)
    x = rng.uniform(-2, 2, (2, 3))
    e = onp.array([[1, -2, 0], [3, 0, -1]], dtype=onp.int32)
    w = rng.uniform(-1, 1, (2, 3))
    (xn, _), y = _grad_of(lambda a, b: np.ldexp(a, b), x, e)
    y.backward(np.array(w))
    onp.testing.assert_allclose(xn.grad.asnumpy(), _numeric_grad(lambda v: onp.ldexp(v, e), x, w),
                                rtol=1e-6)


def test_frexp_mantissa_gradient():
    rng = onp.random.default_rng(1)
    x = rng.uniform(0.3, 7, (2, 3)) * rng.choice([-1, 1], (2, 3))
    w = rng.uniform(-1, 1, (2, 3))
    (xn,), (m, _) = _grad_of(np.frexp, x)
    m.backward(np.array(w))
    onp.testing.assert_allclose(xn.grad.asnumpy(),
                                _numeric_grad(lambda v: onp.frexp(v)[0], x, w), rtol=1e-6)


def test_modf_fraction_gradient():
    rng = onp.random.default_rng(2)
    x = rng.integers(-3, 3, (2, 3)) + rng.uniform(0.1, 0.9, (2, 3))
    w = rng.uniform(-1, 1, (2, 3))
    (xn,), (frac, _) = _grad_of(np.modf, x)
    frac.backward(np.array(w))
    onp.testing.assert_allclose(xn.grad.asnumpy(),
                                _numeric_grad(lambda v: onp.modf(v)[0], x, w), rtol=1e-6)


def test_divmod_remainder_gradient():
    rng = onp.random.default_rng(3)
    b = rng.uniform(1, 2, (2, 3)) * rng.choice([-1, 1], (2, 3))
    a = (rng.integers(-3, 3, (2, 3)) + rng.uniform(0.1, 0.9, (2, 3))) * b
    w = rng.uniform(-1, 1, (2, 3))
    (an, bn), (_, r) = _grad_of(np.divmod, a, b)
    r.backward(np.array(w))
    onp.testing.assert_allclose(an.grad.asnumpy(), _numeric_grad(lambda v: onp.mod(v, b), a, w),
                                rtol=1e-6)
    onp.testing.assert_allclose(bn.grad.asnumpy(), _numeric_grad(lambda v: onp.mod(a, v), b, w),
                                rtol=1e-6)


def test_nan_to_num_copy_false_writes_in_place():
    x = np.array([onp.nan, onp.inf, -onp.inf, 2.0])
    y = np.nan_to_num(x, copy=False, nan=1.0)
    assert y is x
    onp.testing.assert_array_equal(x.asnumpy(), onp.nan_to_num(
        onp.array([onp.nan, onp.inf, -onp.inf, 2.0], dtype=onp.float32), nan=1.0))


def test_nextafter_steps_in_the_arrays_own_format():
    for dt in ("float16", "float32", "float64"):
        a = onp.array([1.0, 0.0, -2.0, 65504.0, 6.1035156e-05, 1e-7], dtype=dt)
        b = onp.array([2.0, -1.0, 0.0, onp.inf, 0.0, 1.0], dtype=dt)
        got = np.nextafter(np.array(a), np.array(b)).asnumpy()
        onp.testing.assert_array_equal(got, onp.nextafter(a, b))


# ------------------------------------------------- dtype spellings, lists, NumPy scalars
@pytest.mark.parametrize("spelling", ["f4", "<f4", "=f4", "float32", onp.float32,
                                      onp.dtype("float32"), "single", "f"])
def test_every_numpy_spelling_of_float32(spelling):
    x = np.ones((2, 3), dtype="int8")
    assert np.zeros((2,), dtype=spelling).dtype == onp.float32
    assert np.sum(x, dtype=spelling).dtype == onp.float32
    assert np.sum(x, axis=0, dtype=spelling).dtype == onp.float32
    assert x.astype(spelling).dtype == onp.float32


@pytest.mark.parametrize("spelling,want", [("i8", "int64"), ("<i4", "int32"), ("u1", "uint8"),
                                           ("?", "bool"), ("d", "float64"), ("double", "float64"),
                                           ("e", "float16"), (int, "int64"), (float, "float64"),
                                           (bool, "bool")])
def test_dtype_spellings_in_op_params(spelling, want):
    x = np.ones((2, 3), dtype="int8")
    assert np.sum(x, dtype=spelling).dtype == onp.dtype(want)
    assert np.full((2,), 1, dtype=spelling).dtype == onp.dtype(want)


def test_unknown_or_foreign_dtype_is_a_type_error():
    x = np.ones((2,))
    for bad in ("f3", "float99", ">f4", "U5"):
        with pytest.raises(TypeError):
            np.sum(x, dtype=bad)


def test_python_lists_follow_the_float32_default():
    assert np.exp([1.0, 2.0]).dtype == onp.float32
    # lists become what np.array makes of them (float32, int64), then promote as arrays do
    assert np.add([1.0, 2.0], [3, 4]).dtype == np.add(np.array([1.0, 2.0]), np.array([3, 4])).dtype
    assert np.add([1.0, 2.0], [3.0, 4.0]).dtype == onp.float32
    assert np.add([1, 2], [3, 4]).dtype == onp.int64
    assert np.maximum(np.array([1, 2], dtype="int8"), [1.5, 2.5]).dtype == onp.float32
    # NumPy arrays keep their dtype
    assert np.exp(onp.array([1.0, 2.0])).dtype == onp.float64


def test_numpy_scalars_are_typed_not_weak():
    i32 = np.array([1, 2], dtype="int32")
    f32 = np.array([1.0, 2.0], dtype="float32")
    for got, want in ((i32 + onp.float64(0.5), i32.asnumpy() + onp.float64(0.5)),
                      (f32 * onp.float64(2), f32.asnumpy() * onp.float64(2)),
                      (f32 * onp.float32(2), f32.asnumpy() * onp.float32(2)),
                      (i32 + onp.int64(3), i32.asnumpy() + onp.int64(3)),
                      (np.add(f32, onp.float64(1)), onp.add(f32.asnumpy(), onp.float64(1)))):
        assert got.dtype == want.dtype
        onp.testing.assert_array_equal(got.asnumpy(), want)
    # Python scalars stay weak
    assert (f32 * 2.0).dtype == onp.float32 and (i32 + 3).dtype == onp.int32


# ------------------------------------------- gradients of the composites (through autograd)
@pytest.mark.parametrize("name,kwargs", [
    ("var", {}), ("var", {"axis": 1, "ddof": 1}), ("std", {"axis": 0}),
    ("std", {"axis": (0, 1), "keepdims": True}), ("nanmean", {"axis": 1}),
    ("nansum", {}), ("nanvar", {"axis": 0, "ddof": 1}), ("nanmax", {"axis": 1}),
    ("ptp", {"axis": 0}), ("average", {"axis": 1, "weights": [1.0, 2.0, 3.0, 0.5]})])
def test_composite_gradients(name, kwargs):
    rng = onp.random.default_rng(7)
    x = rng.permutation(12).reshape(3, 4) * 0.37 + rng.uniform(0, 0.1, (3, 4))
    if name.startswith("nan"):
        x[1, 2] = onp.nan
    ref = getattr(onp, name)
    w = rng.uniform(-1, 1, onp.shape(ref(x, **kwargs)))
    (xn,), y = _grad_of(lambda a: getattr(np, name)(a, **kwargs), x)
    y.backward(np.array(w))
    want = _numeric_grad(lambda v: ref(v, **kwargs), x, w)
    if name.startswith("nan"):  # NumPy's numeric gradient at the NaN is NaN; ndx's is 0
        want = onp.where(onp.isnan(x), 0.0, want)
    onp.testing.assert_allclose(xn.grad.asnumpy(), want, rtol=1e-5, atol=1e-8)


def test_where_gradient():
    rng = onp.random.default_rng(8)
    c = rng.random((2, 3)) < 0.5
    x, y = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3,))
    w = rng.uniform(-1, 1, (2, 3))
    (cn, xn, yn), out = _grad_of(np.where, c, x, y)
    out.backward(np.array(w))
    onp.testing.assert_allclose(xn.grad.asnumpy(), onp.where(c, w, 0))
    onp.testing.assert_allclose(yn.grad.asnumpy(), onp.where(c, 0, w).sum(0))


def test_ndarray_methods():
    x = onp.arange(12, dtype=onp.float32).reshape(3, 4) - 5
    a = np.array(x)
    assert a.all() == x.all() and bool(a.any(axis=0).asnumpy().all()) == x.any(axis=0).all()
    onp.testing.assert_allclose(a.std(axis=1).asnumpy(), x.std(axis=1), rtol=1e-6)
    onp.testing.assert_allclose(a.var().asnumpy(), x.var(), rtol=1e-6)
    onp.testing.assert_array_equal(a.clip(-1, 2).asnumpy(), x.clip(-1, 2))
    onp.testing.assert_array_equal((a / 3).round(2).asnumpy(), (x / 3).round(2))
    onp.testing.assert_array_equal(a.ravel().asnumpy(), x.ravel())
    assert a.tobytes() == x.tobytes()
    assert [r.asnumpy().tolist() for r in a] == x.tolist()
    assert 3.0 in a and 100.0 not in a
    onp.testing.assert_array_equal(a.mT.asnumpy(), x.mT)
    b = np.zeros((2, 2))
    b.fill(7)
    onp.testing.assert_array_equal(b.asnumpy(), onp.full((2, 2), 7, dtype=onp.float32))
    import copy
    c = copy.deepcopy(a)
    c += 1
    onp.testing.assert_array_equal(a.asnumpy(), x)  # the copy is independent
    assert complex(np.array(2.5)) == 2.5 + 0j
    assert (x + a).dtype == onp.float32 and isinstance(x + a, np.ndarray)  # NumPy defers


def test_sort_zero_dim_and_methods():
    assert np.argsort(np.array(5.0)).shape == (1,)  # as NumPy's
    with pytest.raises(ndx.AxisError):
        np.sort(np.array(5.0))
    x = onp.array([[3, 1, 2], [0, -1, 5]], dtype=onp.int32)
    a = np.array(x)
    before = a
    a.sort(axis=0)
    assert a is before
    onp.testing.assert_array_equal(a.asnumpy(), onp.sort(x, axis=0))
    onp.testing.assert_array_equal(np.array(x).argsort().asnumpy(), x.argsort(kind="stable"))


def _sort_data(shape, dtype, seed, distinct):
    rng = onp.random.default_rng(seed)
    if onp.dtype(dtype) == bool:
        return rng.integers(0, 2, shape).astype(bool)
    if onp.dtype(dtype).kind in "iu":
        info = onp.iinfo(dtype)
        lo, hi = (info.min, info.max) if distinct else (max(info.min, -4), 4)
        return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)
    x = onp.asarray(rng.standard_normal(shape) * 1e3 if distinct
                    else rng.integers(-4, 4, shape)).astype(dtype)  # a 0-d array, not a scalar
    flat = x.reshape(-1)
    flat[::7] = onp.nan
    flat[1::11] = 0.0
    flat[2::13] = -0.0
    flat[3::17] = onp.inf
    flat[4::19] = -onp.inf
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint16", "int32",
                                   "uint32", "int64", "bool"])
@pytest.mark.parametrize("shape, axis", [
    ((500, 2), -1), ((300, 5), -1), ((200, 8), -1), ((100, 9), -1), ((70, 16), -1),
    ((40, 31), -1), ((33, 32), -1), ((20, 33), -1), ((9, 48), -1), ((4, 127), -1),
    ((3, 255), -1), ((3, 256), -1), ((2, 1023), -1), ((2, 1024), -1), ((2, 3000), -1),
    ((37, 24), 0), ((5, 17, 6), 1), ((70000,), None), ((3, 40000), -1),
    ((16, 64), -1), ((17, 129), -1), ((16, 257), -1), ((18, 700), -1), ((16, 2048), -1),
    ((16, 4096), -1), ((16, 4097), -1), ((300, 20), 0),
    ((0, 16), -1), ((16, 0), -1), ((7, 0, 3), 0), ((1,), -1), ((), None)])
@pytest.mark.parametrize("distinct", [True, False])
def test_sort_and_argsort_of_every_lane_length_match_numpy(dtype, shape, axis, distinct):
    # Lanes go through one sorting network for 16 lanes at a time (up to 32 keys, and from 16
    # lanes on in the ranges of kernel::sort_as_columns up to 4096 keys), vqsort, or a radix
    # sort (32-bit keys from 1024 on: by bytes when they differ in over 22 bits); few distinct
    # values make argsort's stability visible.
    x = _sort_data(shape, dtype, seed=len(shape) * 1000 + (shape[-1] if shape else 0),
                   distinct=distinct)
    a = np.array(x)
    # NumPy 2.4's default float16 sort misplaced an -inf of the 70000-element lane on the
    # AVX-512 host (its result was not sorted); its stable sort is the reference.
    onp.testing.assert_array_equal(np.sort(a, axis=axis).asnumpy(),
                                   onp.sort(x, axis=axis, kind="stable"))
    onp.testing.assert_array_equal(np.argsort(a, axis=axis).asnumpy(),
                                   onp.argsort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_sort_does_not_depend_on_the_thread_count(dtype):
    x = _sort_data((4099, 20), dtype, seed=5, distinct=False)
    a = np.array(x)
    results = []
    for threads in (1, 2):
        ndx.npx.set_num_threads(threads)
        try:
            results.append((np.sort(a, axis=-1).asnumpy(), np.argsort(a, axis=0).asnumpy()))
        finally:
            ndx.npx.set_num_threads(None)
    for got in results:
        onp.testing.assert_array_equal(got[0], onp.sort(x, axis=-1))
        onp.testing.assert_array_equal(got[1], onp.argsort(x, axis=0, kind="stable"))


def test_sort_gradient_goes_back_to_each_elements_position():
    rng = onp.random.default_rng(9)
    x = rng.permutation(12).reshape(3, 4) * 0.5
    w = rng.uniform(-1, 1, (3, 4))
    (xn,), y = _grad_of(lambda a: np.sort(a, axis=1), x)
    y.backward(np.array(w))
    want = onp.zeros_like(x)
    onp.put_along_axis(want, onp.argsort(x, axis=1), w, axis=1)
    onp.testing.assert_allclose(xn.grad.asnumpy(), want)


def test_allclose_and_array_equality_match_numpy():
    a = onp.array([[1.0, onp.nan], [3.0, 4.0]], dtype=onp.float32)
    for x, y, kw in ((a, a, {}), (a, a, {"equal_nan": True}), (a, a + 1e-6, {}),
                     (a, a * 1.01, {}), (a[:1], a, {}), (a, a[0], {})):
        assert np.allclose(np.array(x), np.array(y), **kw) == onp.allclose(x, y, **kw)
        assert np.array_equiv(np.array(x), np.array(y)) == onp.array_equiv(x, y)
        eq_kw = {"equal_nan": kw.get("equal_nan", False)}
        assert np.array_equal(np.array(x), np.array(y), **eq_kw) == onp.array_equal(x, y, **eq_kw)
    assert np.array_equal(np.array([1, 2]), [1, 2]) and not np.array_equal([1, 2], [1, 2, 3])
    assert not np.array_equiv(np.array([1, 2]), np.array([1, 2, 3]))


@pytest.mark.parametrize("name", ["partition", "argpartition"])
def test_partition_property(name):
    rng = onp.random.default_rng(11)
    x = rng.integers(-5, 5, (4, 9)).astype(onp.float32)
    for kth in (0, 4, 8, -1):
        got = getattr(np, name)(np.array(x), kth, axis=1).asnumpy()
        vals = onp.take_along_axis(x, got, axis=1) if name == "argpartition" else got
        k = kth % 9
        want_k = onp.sort(x, axis=1)[:, k]
        onp.testing.assert_array_equal(vals[:, k], want_k)
        assert (vals[:, :k] <= want_k[:, None]).all() and (vals[:, k + 1:] >= want_k[:, None]).all()
    with pytest.raises(ValueError):
        getattr(np, name)(np.array(x), 9, axis=1)


def _topk_ref(x, axis, k, is_ascend):
    """NumPy's stable argsort (descending: the reversed ascending order, ties last first)."""
    order = onp.argsort(x, axis=axis, kind="stable")
    if not is_ascend:
        order = onp.flip(order, axis=axis)
    return onp.take(order, onp.arange(k), axis=axis)


@pytest.mark.parametrize("axis,k,is_ascend", [(-1, 2, False), (0, 1, True), (1, 4, False),
                                              (-1, 0, True)])
def test_topk_matches_an_argsort(axis, k, is_ascend):
    rng = onp.random.default_rng(12)
    x = rng.permutation(20).reshape(4, 5).astype(onp.float32)  # distinct: one right answer
    kk = k if k >= 1 else x.shape[axis]
    idx = _topk_ref(x, axis, kk, is_ascend)
    got = ndx.npx.topk(np.array(x), axis=axis, k=k, is_ascend=is_ascend)
    assert got.dtype == onp.float32  # MXNet's default index dtype
    onp.testing.assert_array_equal(got.asnumpy(), idx.astype(onp.float32))
    vals, ind = ndx.npx.topk(np.array(x), axis=axis, k=k, is_ascend=is_ascend, ret_typ="both",
                             dtype="int64")
    onp.testing.assert_array_equal(vals.asnumpy(), onp.take_along_axis(x, idx, axis=axis))
    assert ind.dtype == onp.int64
    mask = ndx.npx.topk(np.array(x), axis=axis, k=k, is_ascend=is_ascend, ret_typ="mask")
    want = onp.zeros_like(x)
    onp.put_along_axis(want, idx, 1, axis=axis)
    onp.testing.assert_array_equal(mask.asnumpy(), want)
    with pytest.raises(ValueError):
        ndx.npx.topk(np.array(x), k=99)


def test_array_api_unique_functions_against_np_unique():
    x = onp.array([3.0, onp.nan, 1.0, 3.0, onp.nan, -0.0, 0.0, 1.0], dtype=onp.float32)
    vals, idx, inv, counts = onp.unique(x, return_index=True, return_inverse=True,
                                        return_counts=True, equal_nan=False)
    a = np.array(x)
    onp.testing.assert_array_equal(np.unique_values(a).asnumpy(), vals)
    got = np.unique_counts(a)
    onp.testing.assert_array_equal(got[0].asnumpy(), vals)
    onp.testing.assert_array_equal(got[1].asnumpy(), counts)
    got = np.unique_inverse(a)
    onp.testing.assert_array_equal(got[1].asnumpy(), inv)
    got = np.unique_all(a)
    onp.testing.assert_array_equal(got[1].asnumpy(), idx)
    onp.testing.assert_array_equal(got[3].asnumpy(), counts)


def test_spacing_of_float16_in_its_own_format():
    x = onp.array([4.0, 0.5, 1.5, 2.5, 0.0, 1e-7], dtype=onp.float16)
    onp.testing.assert_array_equal(np.spacing(np.array(x)).asnumpy(), onp.spacing(x))
    # negative x: the distance to the next float away from zero, negative (NumPy's float32
    # and float64 rule)
    onp.testing.assert_array_equal(np.spacing(np.array(-x[:4])).asnumpy(), -onp.spacing(x[:4]))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_spacing_of_negative_zero_is_the_smallest_subnormal_as_numpy(dtype):
    x = onp.array([-0.0, 0.0], dtype=dtype)
    got = np.spacing(np.array(x)).asnumpy()
    onp.testing.assert_array_equal(got, onp.spacing(x), strict=True)
    assert (got > 0).all()


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64"])
def test_round_of_integers_to_tens_is_exact_half_to_even(dtype):
    """round(x, -d) of integers in integer arithmetic: Python's round of an int (exact, ties to
    even) is the reference. The remainder was taken in double, and large int64 values lost
    their low digits (round(123456789012345678, -1) gave ...670)."""
    info = onp.iinfo(dtype)
    rng = onp.random.default_rng(8)
    big = rng.integers(info.min // 2, info.max // 2, 3000, dtype=dtype, endpoint=True)
    ties = [t for t in (5, 15, 25, 35, 45, 50, 95, 105, 115, 150, 250, 1500, 2500)
            if t <= info.max]
    ties += [-t for t in ties if -t >= info.min]
    x = onp.concatenate([big, onp.array(ties, dtype=dtype)])
    for decimals in (-1, -2, -3):
        want = onp.array([round(int(v), decimals) for v in x], dtype=object)
        fits = (want >= int(info.min)) & (want <= int(info.max))
        got = np.round(np.array(x), decimals).asnumpy()
        assert got.dtype == x.dtype
        onp.testing.assert_array_equal(got[fits].astype(object), want[fits])


@pytest.mark.parametrize("shape", [(6, 3, 2), (5, 4), (7,), (0, 3), (3, 0)])
def test_unique_along_an_axis_matches_numpy(shape):
    x = onp.random.default_rng(1).integers(0, 2, shape).astype(onp.float32)
    for axis in range(-1, len(shape)):
        got = np.unique(np.array(x), axis=axis, return_index=True, return_inverse=True,
                        return_counts=True)
        want = onp.unique(x, axis=axis, return_index=True, return_inverse=True,
                          return_counts=True)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            onp.testing.assert_array_equal(g.asnumpy(), w)


@pytest.mark.parametrize("assume_unique", [False, True])
def test_intersect1d_return_indices_matches_numpy(assume_unique):
    a = onp.array([1, 3, 4, 3, 7, 1, 9]) if not assume_unique else onp.array([5, 1, 3, 7, 0])
    b = onp.array([3, 1, 2, 1, 9, 7]) if not assume_unique else onp.array([7, 2, 1, 6])
    got = np.intersect1d(np.array(a), np.array(b), assume_unique, return_indices=True)
    want = onp.intersect1d(a, b, assume_unique, return_indices=True)
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(g.asnumpy(), w)


@pytest.mark.parametrize("x", [
    onp.array([0.0, -0.0, onp.nan, 1.0, -2.5], onp.float32),  # NaN is nonzero, -0.0 is zero
    onp.random.default_rng(3).integers(-1, 2, (3, 4, 5)).astype(onp.int16),
    onp.random.default_rng(4).integers(0, 2, (7, 9)).astype(bool),
    onp.zeros((0, 4), onp.float64), onp.ones((2, 0, 3), onp.uint8),
])
def test_nonzero_and_boolean_masks_match_numpy(x):
    for got, want in zip(np.nonzero(np.array(x)), onp.nonzero(x)):
        assert got.dtype == onp.int64
        onp.testing.assert_array_equal(got.asnumpy(), want)
    onp.testing.assert_array_equal(np.flatnonzero(np.array(x)).asnumpy(), onp.flatnonzero(x))
    mask = x != 0
    onp.testing.assert_array_equal(np.array(x)[np.array(mask)].asnumpy(), x[mask])
    with pytest.raises(ValueError, match="0d"):
        np.nonzero(np.array(1.0))


@pytest.mark.parametrize("dtype", [onp.float32, onp.float64])
def test_sort_keeps_the_sign_of_zero_and_argsort_stays_stable_across_it(dtype):
    v = onp.array([0.0, -0.0, onp.nan, -1.0, 0.0, -0.0, onp.inf], dtype)
    got = np.sort(np.array(v)).asnumpy()
    want = onp.sort(v)
    onp.testing.assert_array_equal(got, want)
    # -0 == +0, so their order among themselves is free; the multiset of signs is not.
    assert onp.signbit(got).sum() == onp.signbit(want).sum()
    onp.testing.assert_array_equal(np.argsort(np.array(v)).asnumpy(), onp.argsort(v, stable=True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
@pytest.mark.parametrize("n", [1000, 3000])
def test_arg_reductions_find_the_first_extremum_of_long_rows(dtype, fn, n):
    """The SIMD search for the extremum's index (groups of four vectors, then the vector and
    the lane) against NumPy, with ties after the first extremum at every kind of position."""
    rng = onp.random.default_rng(5)
    ext = 2.0 if fn == "argmax" else -2.0
    rows = []
    for pos in [0, 1, 7, 8, 15, 31, 32, 33, 63, 100, 511, 2047, 2048, 2100, n - 1]:
        x = rng.uniform(-1, 1, n)
        for p in (pos, pos + 3, pos + 40, n - 1):
            x[min(p, n - 1)] = ext
        rows.append(x)
    m = onp.array(rows, dtype=dtype)
    a = np.array(m)
    onp.testing.assert_array_equal(getattr(np, fn)(a, axis=-1).asnumpy(),
                                   getattr(onp, fn)(m, axis=-1))
    for row, x in zip(a, m):
        assert int(getattr(np, fn)(row)) == int(getattr(onp, fn)(x))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint32",
                                   "uint64", "bool"])
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_integer_arg_reductions_find_the_first_extremum(dtype, fn):
    """Integer rows against NumPy: a rare extremum (one lane of the accumulators holds it and
    is searched along its stride) and a frequent one from some position on (many lanes hold
    it: the vector scan), at every kind of position; rows of 1000 to 5000 and a
    200000-element array (blocks merged in order)."""
    rng = onp.random.default_rng(11)
    if dtype == "bool":
        ext, others = (True, [False]) if fn == "argmax" else (False, [True])
    else:
        info = onp.iinfo(dtype)
        ext = info.max if fn == "argmax" else info.min
        others = [v for v in (0, 1, 5, 90, int(info.max) - 1, int(info.min) + 1)
                  if info.min < v < info.max]
    others = onp.array(others, dtype=dtype)
    for n in (1000, 3000, 5000):
        rows = []
        for pos in [p for p in (0, 1, 7, 31, 32, 63, 64, 127, 128, 511, 2047, 2048, 2100)
                    if p < n] + [n - 1]:
            rare = rng.choice(others, n)
            for p in (pos, pos + 5, pos + 70, n - 1):
                rare[min(p, n - 1)] = ext
            dense = rng.choice(others, n)
            dense[pos:][rng.uniform(size=n - pos) < 0.1] = ext
            dense[pos] = ext
            rows += [rare, dense]
        m = onp.array(rows, dtype=dtype)
        onp.testing.assert_array_equal(getattr(np, fn)(np.array(m), axis=-1).asnumpy(),
                                       getattr(onp, fn)(m, axis=-1))
    big = rng.choice(others, 200000)
    for p in (150000, 70000, 65536, 3):
        big[p] = ext
        assert int(getattr(np, fn)(np.array(big))) == int(getattr(onp, fn)(big))


@pytest.mark.parametrize("mode", ["fixed", "vqsort", "quicksort"])
def test_sorts_match_numpy_whichever_way_32_bit_keys_are_sorted(mode):
    """32-bit and 64-bit keys are sorted the fastest way measured on this host (radix,
    vqsort, the quicksort down to a register network or the column network; NDX_SORT=measure,
    the default, which the tests above run). NDX_SORT=fixed keeps the rules tuned on the
    Zen 4 host, vqsort never radix sorts, quicksort takes the quicksort wherever it applies:
    the sort tests of this file pass in each."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, NDX_SORT=mode)
    here = os.path.abspath(__file__)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", here, "-k",
         "sort and not whichever_way"], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout and " failed" not in result.stdout


@pytest.mark.parametrize("n", [257, 300, 512, 1000, 4097, 65536])
def test_lanes_of_every_pattern_sort_as_numpy_does(n):
    """The quicksort down to a register sorting network (lanes of 32-bit keys up to 64K keys,
    where it measures fastest, and always under NDX_SORT=quicksort, which the test above
    runs) splits around a ninther pivot and takes the pivot's equals out when the pivot is the
    least key: patterns that defeat such pivots, and few distinct keys."""
    rng = onp.random.default_rng(n)
    ramp = onp.arange(n, dtype="float32")
    patterns = [
        ramp, ramp[::-1].copy(), onp.full(n, 2.5, "float32"),
        (onp.arange(n) % 2).astype("float32"),                      # two values
        onp.minimum(ramp, ramp[::-1]),                              # organ pipe
        (onp.arange(n) % 37).astype("float32"),                     # sawtooth
        rng.integers(0, 3, n).astype("float32"),
        onp.where(rng.uniform(size=n) < 0.01, onp.nan, rng.normal(size=n)).astype("float32"),
        onp.concatenate([onp.zeros(n - 1, "float32"), [-1.0]]).astype("float32"),
        # NaNs with the sign bit set, and infinities: NumPy sorts every NaN last
        onp.where(rng.uniform(size=n) < 0.05, onp.copysign(onp.nan, -1.0),
                  onp.where(rng.uniform(size=n) < 0.05, -onp.inf, rng.normal(size=n))
                  ).astype("float32"),
    ]
    m = onp.stack(patterns)
    onp.testing.assert_array_equal(np.sort(np.array(m), axis=-1).asnumpy(), onp.sort(m, axis=-1))
    ints = (m[:7] * 3 - 1000).astype("int32")
    onp.testing.assert_array_equal(np.sort(np.array(ints), axis=-1).asnumpy(),
                                   onp.sort(ints, axis=-1))
    # 64-bit keys take the same quicksort and network, 8 lanes to a vector; argsort of 32-bit
    # values sorts (key, position) pairs packed in 64 bits
    wide = m.astype("float64")
    onp.testing.assert_array_equal(np.sort(np.array(wide), axis=-1).asnumpy(),
                                   onp.sort(wide, axis=-1))
    longs = ints.astype("int64") * 3_000_000_000
    onp.testing.assert_array_equal(np.sort(np.array(longs), axis=-1).asnumpy(),
                                   onp.sort(longs, axis=-1))
    onp.testing.assert_array_equal(np.argsort(np.array(m), axis=-1).asnumpy(),
                                   onp.argsort(m, axis=-1, kind="stable"))


@pytest.mark.parametrize("n", [40, 300, 5000])
def test_argsort_of_64_bit_keys_sharing_their_high_halves_is_numpys_stable_order(n):
    """argsort of 64-bit values sorts their keys' high halves packed with positions, then
    orders runs that share a high half by the low halves: short runs by insertion, long ones
    (few distinct high halves) by a second sort. Ties keep their order."""
    rng = onp.random.default_rng(n)
    highs = rng.integers(0, 10 if n < 1000 else 3, n)
    ints = (highs.astype("int64") << 32) + rng.integers(0, 8, n) - (1 << 33)
    floats = 1.0 + rng.integers(0, 50, n) * 2.0 ** -45  # one high half, 50 low ones
    floats[rng.uniform(size=n) < 0.1] = onp.nan
    unsigned = onp.uint64(2**64 - 1) - rng.integers(0, 8, n).astype("uint64")
    for a in (ints, floats, -floats, unsigned):
        onp.testing.assert_array_equal(np.argsort(np.array(a)).asnumpy(),
                                       onp.argsort(a, kind="stable"))
        m = onp.stack([a, a[::-1].copy()])
        onp.testing.assert_array_equal(np.argsort(np.array(m), axis=-1).asnumpy(),
                                       onp.argsort(m, axis=-1, kind="stable"))


@pytest.mark.parametrize("n", [2, 7, 64, 1000, 5000, 70000])
def test_argsort_by_the_span_of_the_keys_is_numpys_stable_order(n):
    """argsort orders 64-bit keys three ways by their span (largest - smallest): fewer than
    n / 4 distinct values are counted; a span that leaves room for the positions' bits is
    sorted once as (offset, position); wider spans take the high halves. 32-bit keys are
    counted too, else sorted as (key, position). Each side of each boundary (spans of n / 4 -
    1 and n / 4, of 2^(64 - bits) - 1 and 2^(64 - bits)), against NumPy's stable argsort, in
    1-D and in rows."""
    rng = onp.random.default_rng(n + 7)
    bits = max(1, (n - 1).bit_length())
    room = 2 ** (64 - bits)  # the smallest span that no longer fits beside the positions
    spans = [0, 1, max(0, n // 4 - 1), n // 4, 1000, 2 ** 40, room - 1, room]
    cases = []
    for span in spans:
        for base in (-(2 ** 63), -5, 2 ** 20):
            if base + span > 2 ** 63 - 1:
                continue
            v = base + rng.integers(0, span + 1, n, dtype=onp.uint64).astype(object)
            v[0], v[-1] = base, base + span  # both ends present: the span is exact
            cases.append(onp.array(v.tolist(), dtype=onp.int64))
        cases.append((onp.uint64(2 ** 64 - 1) - rng.integers(0, span + 1, n, dtype=onp.uint64)))
    floats = rng.standard_normal(n)
    floats[:: 3] = 2.5  # ties among distinct values
    cases += [floats, onp.where(rng.uniform(size=n) < 0.2, onp.nan, 1.0 + floats * 2.0 ** -40)]
    # 32-bit keys (and narrower values, whose keys are 32-bit) are counted the same way.
    for span in (0, 2, max(0, n // 4 - 1), n // 4, 5000):
        v = rng.integers(0, span + 1, n) - span // 2
        v[0], v[-1] = -(span // 2), span - span // 2
        cases += [v.astype(onp.int32), (v + 2 ** 31).astype(onp.uint32), v.astype(onp.float32)]
    cases += [rng.integers(0, 2, n).astype(bool), rng.integers(-3, 3, n).astype(onp.int8),
              onp.where(rng.uniform(size=n) < 0.3, onp.nan, 1.5).astype(onp.float32)]
    for a in cases:
        want = onp.argsort(a, kind="stable")
        onp.testing.assert_array_equal(np.argsort(np.array(a)).asnumpy(), want, err_msg=str(a[:4]))
        m = onp.stack([a[::-1].copy(), a])
        onp.testing.assert_array_equal(np.argsort(np.array(m), axis=-1).asnumpy(),
                                       onp.argsort(m, axis=-1, kind="stable"))


def test_float32_tanh_reaches_exactly_one_and_never_passes_it():
    """float32 tanh is e / (e + 2) with e = expm1(2|x|); from 9.010914, where tanh rounds to
    1, the quotient could round just below 1, so the result is set to 1 there. The reference
    is float64 tanh rounded to float32 (a grid every 97th float32 from 0.5 to 30)."""
    x = onp.arange(onp.float32(0.5).view(onp.uint32), onp.float32(30.0).view(onp.uint32), 97,
                   dtype=onp.uint32).view(onp.float32)
    x = onp.concatenate([x, [onp.inf, onp.float32(9.010913), onp.float32(9.010914)]])
    x = onp.sort(x).astype(onp.float32)
    got = np.tanh(np.array(x)).asnumpy()
    want = onp.tanh(x.astype(onp.float64)).astype(onp.float32)
    assert (got <= 1).all()
    onp.testing.assert_array_equal(got[want == 1], 1)
    ulps = onp.abs(got.astype(onp.float64) - want) / onp.spacing(want).astype(onp.float64)
    assert ulps[onp.isfinite(x)].max() <= 4
    onp.testing.assert_array_equal(np.tanh(np.array(-x)).asnumpy(), -got)
    assert onp.isnan(np.tanh(np.array(onp.float32([onp.nan]))).asnumpy()).all()


def test_median_is_the_mean_of_the_middle_pair_and_nan_when_empty_as_numpy():
    # NumPy's median is np.mean of the middle elements (float16 summed in float32), not a
    # lerp; an empty reduction gives NaN (NumPy warns).
    for dtype, values in (("float16", [-13.445, -4.574]), ("float16", [60000.0, 60000.0]),
                          ("float32", [0.1, 0.7, 0.2, 1e-8]), ("float64", [1e308, 1e308, 0.5])):
        x = onp.array(values, dtype=dtype)
        got = np.median(np.array(x))
        assert got.dtype == x.dtype
        assert float(got) == float(onp.median(x))
    with onp.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        want = onp.median(onp.zeros(0))
    assert onp.isnan(want) and onp.isnan(float(np.median(np.zeros(0))))
    got = np.median(np.zeros((2, 0)), axis=1).asnumpy()
    assert got.shape == (2,) and onp.isnan(got).all()


@pytest.mark.parametrize("fn", ["var", "std", "nanvar", "nanstd"])
def test_var_takes_a_precomputed_mean_as_numpy_2(fn):
    x = onp.random.default_rng(0).standard_normal((3, 4))
    for axis in (None, 0, 1, (0, 1)):
        m = onp.mean(x, axis=axis, keepdims=True)
        got = getattr(np, fn)(np.array(x), axis=axis, mean=np.array(m))
        onp.testing.assert_allclose(got.asnumpy(), getattr(onp, fn)(x, axis=axis, mean=m),
                                    rtol=1e-12)
    with pytest.raises(ValueError, match="keepdims"):
        getattr(np, fn)(np.array(x), axis=0, mean=np.zeros(3))


def test_unique_sorted_and_pad_empty_are_accepted_as_numpy():
    assert np.unique(np.array([3, 1, 3]), sorted=False).asnumpy().tolist() == [1, 3]
    got = np.pad(np.arange(3), 2, mode="empty")
    assert got.shape == onp.pad(onp.arange(3), 2, mode="empty").shape
    assert got.asnumpy()[2:5].tolist() == [0, 1, 2]


@pytest.mark.parametrize("exponent", [True, onp.int8(2), onp.array([1, 2], dtype=onp.uint32),
                                      onp.array([True, False]),
                                      onp.array([1, 2], dtype=onp.uint64)])
def test_ldexp_exponents_as_numpy(exponent):
    # a bool exponent is an integer (1), uint64 has no safe cast to NumPy's int loops
    x = onp.array([1.5, -3.0], dtype=onp.float16)
    e = np.array(exponent) if isinstance(exponent, onp.ndarray) else exponent
    try:
        want = onp.ldexp(x, exponent)
    except TypeError:
        with pytest.raises(TypeError):
            np.ldexp(np.array(x), e)
        return
    got = np.ldexp(np.array(x), e)
    assert got.dtype == want.dtype
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_float64_digamma_and_its_gradient_are_accurate_to_float64():
    # The asymptotic series starts at x >= 10 with terms through x^-14 (x^-15 for trigamma):
    # from 6 with terms to x^-10, float64 digamma was off by 3e-11 (trigamma 1e-9).
    x = onp.concatenate([onp.linspace(0.01, 30.0, 300), onp.linspace(1.5, 9.5, 17)])
    a = np.array(x)
    a.attach_grad()
    with autograd.record():
        y = ndx.npx.digamma(a)
    y.backward()
    onp.testing.assert_allclose(y.asnumpy(), scipy.special.digamma(x), rtol=2e-14)
    onp.testing.assert_allclose(a.grad.asnumpy(), scipy.special.polygamma(1, x), rtol=1e-13)
