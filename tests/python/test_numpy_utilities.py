"""NumPy's top-level utilities (np.testing, np.emath, errstate, vectorize, frompyfunc,
broadcast, require, fromiter, ...) against NumPy 2's own answers."""
import warnings

import numpy as onp
import pytest

import ndx
from ndx import np
from ndx.numpy import testing as nt


def _both(values, dtype):
    return np.array(values, dtype=dtype), onp.array(values, dtype=dtype)


def _outcome(fn, *args, **kwargs):
    """("ok", None) when fn passes, else (exception type, None)."""
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e)
    return "ok"


# ---- np.testing ------------------------------------------------------------------------------

CASES = [
    ("assert_allclose", [1.0, 2.0], [1.0, 2.0 + 1e-9], {}),
    ("assert_allclose", [1.0, 2.0], [1.0, 2.1], {}),
    ("assert_allclose", [1.0, 2.0], [1.0, 2.1], {"rtol": 0.1}),
    ("assert_allclose", [1.0, onp.nan], [1.0, onp.nan], {}),
    ("assert_allclose", [1.0, onp.nan], [1.0, onp.nan], {"equal_nan": False}),
    ("assert_allclose", [1.0, 2.0], [1.0, 2.0, 3.0], {}),
    ("assert_allclose", [1.0, 2.0], [1.0, 2.0], {"strict": True}),
    ("assert_array_equal", [1, 2, 3], [1, 2, 3], {}),
    ("assert_array_equal", [1, 2, 3], [1, 2, 4], {}),
    ("assert_array_equal", [1, 2], [[1, 2], [1, 2]], {}),
    ("assert_array_equal", [1, 2], [[1, 2], [1, 2]], {"strict": True}),
    ("assert_array_equal", [onp.nan, 1.0], [onp.nan, 1.0], {}),
    ("assert_array_equal", [1, 2, 3], [1, 2], {}),
    ("assert_array_almost_equal", [1.0, 2.0], [1.0, 2.0000001], {}),
    ("assert_array_almost_equal", [1.0, 2.0], [1.0, 2.001], {}),
    ("assert_array_almost_equal", [1.0, 2.0], [1.0, 2.001], {"decimal": 2}),
    ("assert_array_less", [1.0, 2.0], [2.0, 3.0], {}),
    ("assert_array_less", [1.0, 3.0], [2.0, 3.0], {}),
    ("assert_array_less", [onp.nan, 1.0], [onp.nan, 2.0], {}),
    ("assert_equal", [1.0, onp.nan], [1.0, onp.nan], {}),
    ("assert_equal", [1.0, 2.0], [1.0, 3.0], {}),
    ("assert_equal", [1, 2], [1, 2], {"strict": True}),
    ("assert_almost_equal", [1.0, 2.0], [1.0, 2.00000001], {}),
    ("assert_almost_equal", [1.0, 2.0], [1.0, 2.01], {"decimal": 3}),
    ("assert_array_almost_equal_nulp", [1.0, 2.0], [1.0, 2.0], {}),
    ("assert_array_max_ulp", [1.0, 2.0], [1.0, 2.0], {}),
]


@pytest.mark.parametrize("name,a,b,kwargs", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mix", ["ndx-ndx", "ndx-numpy", "numpy-ndx"])
def test_assertions_pass_and_fail_as_numpys(name, a, b, kwargs, dtype, mix):
    xa, ha = _both(a, dtype)
    xb, hb = _both(b, dtype)
    want = _outcome(getattr(onp.testing, name), ha, hb, **kwargs)
    first = xa if mix != "numpy-ndx" else ha
    second = xb if mix != "ndx-numpy" else hb
    assert _outcome(getattr(nt, name), first, second, **kwargs) == want


def test_strict_sees_dtype_and_the_message_is_numpys():
    a = np.array([1.0, 2.0], dtype="float32")
    with pytest.raises(AssertionError, match="dtype"):
        nt.assert_array_equal(a, onp.array([1.0, 2.0]), strict=True)
    nt.assert_array_equal(a, onp.array([1.0, 2.0], dtype="float32"), strict=True)
    with pytest.raises(AssertionError, match="shapes"):
        nt.assert_allclose(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 3"):
        nt.assert_array_equal(np.array([1, 2, 3]), [1, 2, 5], err_msg="mine")
    # by keyword too
    with pytest.raises(AssertionError):
        nt.assert_allclose(actual=np.array([1.0]), desired=np.array([2.0]))


def test_assert_equal_recurses_into_containers():
    x = np.array([1, 2])
    nt.assert_equal({"a": [x, (x, 3)]}, {"a": [onp.array([1, 2]), (onp.array([1, 2]), 3)]})
    with pytest.raises(AssertionError):
        nt.assert_equal({"a": [x]}, {"a": [onp.array([1, 3])]})
    with pytest.raises(AssertionError):
        nt.assert_equal((x, x), (x,))
    nt.assert_equal(np.array(3), 3)
    nt.assert_approx_equal(np.array(1.0000001, dtype="float64"), 1.0)
    with pytest.raises(AssertionError):
        nt.assert_approx_equal(np.array(1.1, dtype="float64"), 1.0)


def test_ulp_assertions_fail_as_numpys():
    one = onp.float32(1)
    far = onp.nextafter(onp.nextafter(one, onp.float32(2)), onp.float32(2))
    a = np.array([1.0], dtype="float32")
    b = np.array([far], dtype="float32")
    with pytest.raises(AssertionError):
        nt.assert_array_almost_equal_nulp(a, b, nulp=1)
    nt.assert_array_almost_equal_nulp(a, b, nulp=2)
    with pytest.raises(AssertionError):
        nt.assert_array_max_ulp(a, b, maxulp=1)
    assert nt.assert_array_max_ulp(a, b, maxulp=2) == 2


def test_the_callable_assertions_are_numpys():
    def bad(x):
        raise ValueError(f"bad {x.shape}")

    nt.assert_raises(ValueError, bad, np.ones((2,)))
    nt.assert_raises_regex(ValueError, r"bad \(2,\)", bad, np.ones((2,)))
    with pytest.raises(AssertionError):
        nt.assert_raises(TypeError, lambda: None)
    with pytest.raises(AssertionError):
        nt.assert_(False, "no")
    nt.assert_string_equal("abc", "abc")
    with pytest.raises(AssertionError):
        nt.assert_string_equal("abc", "abd")
    assert nt.assert_no_warnings(lambda: 5) == 5
    with pytest.raises(AssertionError):
        nt.assert_no_warnings(lambda: warnings.warn("w"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2.4 deprecates these
        with nt.assert_warns(UserWarning):
            warnings.warn("w")
        if hasattr(nt, "suppress_warnings"):
            with nt.suppress_warnings() as sup:
                sup.filter(UserWarning)
                warnings.warn("w")


# ---- scalars, types, formatting --------------------------------------------------------------

def test_scalar_and_type_helpers_match_numpy():
    for v in (3, 2.5, 1j, True, "s", onp.float32(1), [1], None):
        assert np.isscalar(v) == onp.isscalar(v)
    assert not np.isscalar(np.array(3))
    assert not np.iterable(np.array(3)) and np.iterable(np.ones((2,))) and not np.iterable(3)
    assert list(np.ndindex(2, 3)) == list(onp.ndindex(2, 3))
    assert list(np.ndindex((2, 1))) == list(onp.ndindex((2, 1)))
    assert np.typename("d") == onp.typename("d")
    assert np.True_ is onp.True_ and np.False_ is onp.False_
    assert np.little_endian == onp.little_endian


def test_typecodes_sctypedict_scalartype_hold_ndx_dtypes_only():
    for group, chars in np.typecodes.items():
        assert all(c in onp.typecodes[group] for c in chars)
        for c in chars:
            assert np.zeros((1,), dtype=c).dtype == onp.dtype(c)
    assert np.typecodes["AllFloat"] == "efdFD" and np.typecodes["Datetime"] == ""
    assert np.sctypeDict["float32"] is onp.float32 and np.sctypeDict["int"] is onp.int64
    for name in ("longdouble", "str_", "object_", "datetime64", "void"):
        assert name not in np.sctypeDict
    assert np.float64 in np.ScalarType and int in np.ScalarType
    assert onp.str_ not in np.ScalarType and onp.longdouble not in np.ScalarType


@pytest.mark.parametrize("num,width", [(5, None), (-5, None), (-3, 8), (3, 4), (0, None),
                                       (-128, 8), (255, 8)])
def test_binary_repr(num, width):
    assert np.binary_repr(num, width) == onp.binary_repr(num, width)
    assert np.binary_repr(np.array(num), width=width) == onp.binary_repr(num, width=width)


def test_binary_and_base_repr_errors_and_bases():
    with pytest.raises(ValueError):
        onp.binary_repr(-3, width=2)
    with pytest.raises(ValueError):
        np.binary_repr(-3, width=2)
    with pytest.raises(TypeError):
        np.binary_repr(3.0)
    for num, base, pad in ((10, 2, 0), (-10, 3, 2), (35, 36, 0), (np.array(255), 16, 1)):
        want = onp.base_repr(int(num), base, pad)
        assert np.base_repr(num, base, pad) == want
    for base in (1, 37):
        with pytest.raises(ValueError):
            np.base_repr(10, base)


def test_mintypecode_and_float_formatting():
    assert np.mintypecode(["d", "f"]) == onp.mintypecode(["d", "f"])
    assert np.mintypecode([np.ones((2,), dtype="float32")]) == "f"
    assert np.mintypecode([np.ones((2,), dtype="complex64"), "d"]) == \
        onp.mintypecode(["F", "d"])
    x = np.array(0.1, dtype="float32")
    assert np.format_float_positional(x) == onp.format_float_positional(onp.float32(0.1))
    assert np.format_float_positional(x) == "0.1"  # float32's shortest repr, not float64's
    assert np.format_float_scientific(np.array(1234.5, dtype="float64"), precision=2) == \
        onp.format_float_scientific(1234.5, precision=2)
    assert np.format_float_positional(1.5, trim="-") == onp.format_float_positional(1.5, trim="-")


def test_ufunc_isinstance():
    for f in (np.add, np.sqrt, np.maximum, np.ldexp, np.logical_not):
        assert isinstance(f, np.ufunc), f
    for f in (np.sum, np.reshape, np.where, len, "add"):
        assert not isinstance(f, np.ufunc), f
    assert isinstance(onp.add, np.ufunc)
    assert isinstance(np.frompyfunc(abs, 1, 1), np.ufunc)
    with pytest.raises(TypeError):
        np.ufunc()


def test_exceptions_module():
    assert np.exceptions.AxisError is ndx.AxisError
    assert issubclass(np.exceptions.AxisError, onp.exceptions.AxisError)
    with pytest.raises(np.exceptions.AxisError):
        np.sum(np.ones((2,)), axis=3)
    for name in ("ComplexWarning", "VisibleDeprecationWarning", "TooHardError",
                 "DTypePromotionError", "RankWarning"):
        assert getattr(np.exceptions, name) is getattr(onp.exceptions, name)
    from ndx.numpy.exceptions import AxisError
    assert AxisError is ndx.AxisError


# ---- errstate ---------------------------------------------------------------------------------

def test_seterr_geterr_like_numpys():
    assert np.geterr() == onp.geterr()  # NumPy's defaults
    old = np.seterr(all="ignore", over="warn")
    try:
        assert old == {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
        assert np.geterr() == {"divide": "ignore", "over": "warn", "under": "ignore",
                               "invalid": "ignore"}
        assert np.seterr(under="print")["under"] == "ignore"
        assert np.geterr()["under"] == "print"
    finally:
        np.seterr(**old)
    assert np.geterr() == old


@pytest.mark.parametrize("kwargs", [{"divide": "foo"}, {"all": 1}, {"over": "IGNORE"},
                                    {"foo": "ignore"}])
def test_seterr_and_errstate_reject_what_numpy_rejects(kwargs):
    before = np.geterr()
    want = _outcome(onp.seterr, **kwargs)
    onp.seterr(**onp.geterr())
    assert want in (ValueError, TypeError)
    assert _outcome(np.seterr, **kwargs) is want
    assert np.geterr() == before

    def enter(mod):
        with mod.errstate(**kwargs):
            pass

    assert _outcome(enter, np) is _outcome(enter, onp)
    assert _outcome(np.errstate, "ignore") is _outcome(onp.errstate, "ignore") is TypeError
    assert _outcome(np.seterrcall, 3) is _outcome(onp.seterrcall, 3) is TypeError


@pytest.mark.parametrize("mode", ["raise", "call", "log"])
def test_modes_ndx_cannot_honour_raise_not_implemented(mode):
    before = np.geterr()
    with pytest.raises(NotImplementedError, match=mode):
        np.seterr(divide=mode)
    with pytest.raises(NotImplementedError):
        with np.errstate(all=mode):
            pass
    assert np.geterr() == before


def test_errstate_nests_restores_and_decorates():
    before = np.geterr()
    with np.errstate(all="ignore"):
        assert set(np.geterr().values()) == {"ignore"}
        with np.errstate(divide="warn"):
            assert np.geterr()["divide"] == "warn" and np.geterr()["over"] == "ignore"
        assert np.geterr()["divide"] == "ignore"
        with pytest.raises(KeyError):
            with np.errstate(invalid="print"):
                raise KeyError("out")
        assert np.geterr()["invalid"] == "ignore"
        assert (np.array([1.0]) / 0).asnumpy()[0] == onp.inf  # no FloatingPointError
    assert np.geterr() == before

    @np.errstate(over="ignore")
    def inner():
        return np.geterr()["over"]

    assert inner() == "ignore" and inner() == "ignore" and np.geterr() == before
    state = np.errstate(all="ignore")
    with state:
        pass
    with pytest.raises(TypeError):
        with state:  # NumPy's errstate is entered once
            pass


def test_seterrcall_geterrcall():
    def handler(kind, flag):
        pass

    assert np.geterrcall() is None
    assert np.seterrcall(handler) is None
    try:
        assert np.geterrcall() is handler
        with np.errstate(call=None):
            assert np.geterrcall() is None
        assert np.geterrcall() is handler
    finally:
        assert np.seterrcall(None) is handler


# ---- vectorize / frompyfunc ------------------------------------------------------------------

def test_vectorize_values_dtypes_and_broadcasting():
    def f(a, b):
        return a - b if a > b else a + b

    x, hx = _both([[1, 5, 3]], "int32")
    y, hy = _both([[2], [2]], "int64")
    got = np.vectorize(f)(x, y)
    want = onp.vectorize(f)(hx, hy)
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
    assert (got.asnumpy() == want).all()
    got = np.vectorize(f, otypes=[onp.float32])(x, 2)
    assert got.dtype == onp.float32 and (got.asnumpy() == onp.vectorize(f)(hx, 2)).all()
    s = np.vectorize(lambda v: v + 1)(3)
    assert isinstance(s, np.ndarray) and s.shape == () and int(s) == 4


def test_vectorize_decorator_excluded_signature_and_tuples():
    @np.vectorize(otypes=[float])
    def half(v):
        return v / 2

    assert half(np.array([1, 3])).dtype == onp.float64
    assert half(np.array([1, 3])).asnumpy().tolist() == [0.5, 1.5]

    def poly(x, coefs):
        return sum(c * x ** i for i, c in enumerate(coefs))

    coefs = np.array([1.0, 2.0])  # excluded: handed to poly as it is
    vp = np.vectorize(poly, excluded={1})
    assert vp(np.array([0, 1, 2]), [1, 2]).asnumpy().tolist() == [1, 3, 5]
    assert vp.excluded == {1}
    mean = np.vectorize(lambda v: v.mean(), signature="(n)->()")
    got, want = mean(np.ones((3, 4))), onp.vectorize(lambda v: v.mean(), signature="(n)->()")(
        onp.ones((3, 4), dtype="float32"))
    assert got.shape == want.shape == (3,) and got.dtype == want.dtype
    got = np.vectorize(divmod)(np.array([7, 8]), 3)
    assert isinstance(got, tuple) and [g.asnumpy().tolist() for g in got] == [[2, 2], [1, 2]]
    assert poly.__name__ in repr(vp.pyfunc)
    del coefs


def test_vectorize_object_results_raise_typeerror():
    with pytest.raises(TypeError, match="vectorize"):
        np.vectorize(str)(np.array([1, 2]))
    with pytest.raises(TypeError, match="vectorize"):
        np.vectorize(lambda v: v, otypes=[object])(np.array([1, 2]))
    with pytest.raises(TypeError):
        np.vectorize(3)


def test_frompyfunc():
    uf = np.frompyfunc(lambda a, b: a * 10 + b, 2, 1)
    assert (uf.nin, uf.nout, uf.nargs) == (2, 1, 3)
    got = uf(np.array([[1], [2]]), np.array([3, 4]))
    assert got.dtype == onp.int64 and got.asnumpy().tolist() == [[13, 14], [23, 24]]
    assert uf(1, 2) == 12  # scalars only: the Python result, as NumPy
    half = np.frompyfunc(lambda v: v / 2, 1, 1)
    assert half(np.array([1, 3])).dtype == onp.float64
    add = np.frompyfunc(lambda a, b: a + b, 2, 1, identity=0)
    assert add.identity == 0
    r = add.reduce(np.array([[1, 2], [3, 4]]), axis=1)
    assert r.asnumpy().tolist() == [3, 7]
    assert add.accumulate(np.array([1, 2, 3])).asnumpy().tolist() == [1, 3, 6]
    assert add.outer(np.array([1, 2]), np.array([10, 20])).asnumpy().tolist() == \
        [[11, 21], [12, 22]]
    two = np.frompyfunc(divmod, 2, 2)(np.array([7, 9]), 4)
    assert [t.asnumpy().tolist() for t in two] == [[1, 2], [3, 1]]
    with pytest.raises(TypeError, match="frompyfunc.*str"):
        np.frompyfunc(str, 1, 1)(np.array([1, 2]))
    with pytest.raises(TypeError):
        np.frompyfunc(5, 1, 1)


# ---- broadcast ---------------------------------------------------------------------------------

def test_broadcast_like_numpys():
    x, hx = _both([[1], [2], [3]], "int32")
    y, hy = _both([4.0, 5.0], "float64")
    b, hb = np.broadcast(x, y), onp.broadcast(hx, hy)
    assert (b.shape, b.ndim, b.nd, b.size, b.numiter, b.index) == \
        (hb.shape, hb.ndim, hb.nd, hb.size, hb.numiter, hb.index)
    assert [tuple(map(float, t)) for t in b] == [tuple(map(float, t)) for t in hb]
    assert b.index == hb.index == 6
    b.reset()
    hb.reset()
    assert b.index == 0 and next(b) == next(hb) == (1, 4.0)
    assert [list(it) for it in b.iters] == [list(it) for it in hb.iters]
    nested = np.broadcast(np.broadcast(x, y), 7)
    assert nested.numiter == 3 and nested.shape == (3, 2)
    assert np.broadcast(x).shape == (3, 1) and np.broadcast(3.0).shape == ()
    with pytest.raises(ValueError):
        np.broadcast(np.ones((2,)), np.ones((3,)))


# ---- memory order -----------------------------------------------------------------------------

def test_asfortranarray_and_isfortran():
    a = np.arange(6).reshape(2, 3)
    f = np.asfortranarray(a)
    assert f.flags.f_contiguous and not f.flags.c_contiguous and np.isfortran(f)
    assert (f.asnumpy() == a.asnumpy()).all() and f.strides == onp.asfortranarray(
        a.asnumpy()).strides
    assert np.asfortranarray(f) is f
    assert not np.isfortran(a) and not np.isfortran(np.ones((3,)))
    assert np.isfortran(a.T) == onp.isfortran(a.asnumpy().T)
    assert np.asfortranarray(5).shape == onp.asfortranarray(5).shape == (1,)
    assert np.asfortranarray([1, 2], dtype="float64").dtype == onp.float64
    with pytest.raises(AttributeError):
        np.isfortran([[1, 2]])


def test_require():
    a = np.arange(6).reshape(2, 3)
    assert np.require(a) is a and np.require(a, requirements="CAW") is a
    f = np.require(a, requirements=["F"])
    assert f.flags.f_contiguous and (f.asnumpy() == a.asnumpy()).all()
    c = np.require(a.T, requirements=["C_CONTIGUOUS"])
    assert c.flags.c_contiguous and (c.asnumpy() == a.asnumpy().T).all()
    assert np.require(a, dtype="float64", requirements="C").dtype == onp.float64
    o = np.require(a, requirements="O")
    assert o is not a and not np.shares_memory(o, a)
    assert np.require(a, requirements="E") is a
    assert np.require(5, requirements="C").shape == onp.require(5, requirements="C").shape
    for bad in ("X", ["C", "F"], "C_CONTIGUOUS", ["c", "f"]):  # (a str is its characters)
        want = _outcome(onp.require, onp.ones(3), requirements=bad)
        assert issubclass(_outcome(np.require, np.ones((3,)), requirements=bad), want)


# ---- fromiter / fromstring ---------------------------------------------------------------------

def test_fromiter_and_fromstring():
    for dtype in (float, "int32", "float32", bool, complex):
        got = np.fromiter((v for v in range(4)), dtype)
        want = onp.fromiter((v for v in range(4)), dtype)
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype
        assert (got.asnumpy() == want).all()
    assert np.fromiter(iter([1, 2, 3]), "int64", count=2).asnumpy().tolist() == [1, 2]
    with pytest.raises(ValueError):
        np.fromiter(iter([1, 2]), float, count=5)
    with pytest.raises(TypeError, match="fromiter"):
        np.fromiter(iter([1, 2]), object)
    with pytest.raises(TypeError, match="fromiter"):
        np.fromiter(iter(["a"]), "U1")
    got, want = np.fromstring("1 2 3.5", sep=" "), onp.fromstring("1 2 3.5", sep=" ")
    assert got.dtype == want.dtype == onp.float64 and got.asnumpy().tolist() == want.tolist()
    got = np.fromstring("1,2,3", dtype="int32", sep=",", count=2)
    assert got.dtype == onp.int32 and got.asnumpy().tolist() == [1, 2]
    assert _outcome(np.fromstring, b"\x01\x02", dtype="int8") is \
        _outcome(onp.fromstring, b"\x01\x02", dtype="int8") is ValueError


def test_ndenumerate_yields_numpys_scalars():
    a = np.arange(6, dtype="int32").reshape(2, 3)
    got = list(np.ndenumerate(a))
    want = list(onp.ndenumerate(a.asnumpy()))
    assert got == want and all(type(v) is onp.int32 for _, v in got)
    b = np.zeros((2, 3), dtype="int32")
    for i, v in np.ndenumerate(a):
        b[i] = v * 2
    assert (b.asnumpy() == a.asnumpy() * 2).all()
    assert list(np.ndenumerate([[1.5]])) == [((0, 0), onp.float32(1.5))]


# ---- emath ---------------------------------------------------------------------------------------

UNARY = ["sqrt", "log", "log2", "log10", "arccos", "arcsin", "arctanh"]
DTYPES = ["float32", "float64", "float16", "int8", "int16", "uint8", "uint16", "int32", "int64",
          "bool", "complex64", "complex128"]
VALUES = {"in": [0.0, 0.25, 0.5, 1.0], "out": [-4.0, -0.5, 0.5, 2.0]}


def _check(got, want, dtype):
    assert isinstance(got, np.ndarray)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    rtol = 3e-3 if want.dtype in (onp.float16, ) else 1e-5
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("where", ["in", "out"])
def test_emath_unary_like_numpys(name, dtype, where):
    host = onp.array(VALUES[where]).astype(dtype)
    if dtype in ("bool", "uint8", "uint16") and where == "out":
        host = onp.array([0, 1, 2, 3]).astype(dtype)  # no negatives; > 1 for arccos & co
    with onp.errstate(all="ignore"):
        want = getattr(onp.emath, name)(host)
    _check(getattr(np.emath, name)(np.array(host)), want, dtype)


def test_emath_scalars_and_specific_values():
    assert complex(np.emath.sqrt(-4)) == 2j and np.emath.sqrt(-4).dtype == onp.complex128
    assert np.emath.sqrt(np.float64(-4)).dtype == onp.complex128
    r = np.emath.sqrt(4)
    assert r.shape == () and float(r) == 2.0 and r.dtype == onp.emath.sqrt(4).dtype
    # a Python float is ndx's default float (float32): complex64, as for float32 arrays
    assert np.emath.sqrt(-1.0).dtype == onp.complex64
    assert complex(np.emath.log(-1)) == pytest.approx(onp.pi * 1j)
    assert np.emath.sqrt(np.array([-0.0])).dtype == onp.float32  # -0 is not negative
    nan = np.emath.sqrt(np.array([onp.nan, 4.0], dtype="float64"))
    assert nan.dtype == onp.float64 and onp.isnan(nan.asnumpy()[0])
    assert np.emath.sqrt(np.zeros((0,), dtype="float32")).dtype == onp.float32


@pytest.mark.parametrize("x,p", [
    ([2, 3], [2, 3]), ([2, 3], [-1, 2]), ([-4.0, 9.0], [0.5, 0.5]), ([2.0, 3.0], [-1, 2]),
    ([-8, 8], [3, 2]), ([4, 9], 0.5), ([-4, 9], 2), ([2, 3], -2)])
@pytest.mark.parametrize("dx", ["int64", "float32", "float64", "int16"])
def test_emath_power_like_numpys(x, p, dx):
    hx = onp.array(x).astype(dx) if not (dx[0] == "i" and isinstance(x[0], float)) else \
        onp.array(x)
    hp = onp.array(p) if isinstance(p, list) else onp.asarray(p)
    if hp.dtype == onp.float64 and isinstance(p, float):
        hp = hp.astype("float32")  # a Python float, as ndx makes it
    want = onp.emath.power(hx, hp)
    got = np.emath.power(np.array(hx), np.array(hp) if isinstance(p, list) else p)
    _check(got, want, dx)


@pytest.mark.parametrize("n,x", [(2, [8.0, -8.0]), (10, [100, 1000]), (-2, [4.0]),
                                 (2.0, [0.5, 4.0])])
@pytest.mark.parametrize("dx", ["float32", "float64", "int64"])
def test_emath_logn_like_numpys(n, x, dx):
    hx = onp.array(x).astype(dx) if dx != "int64" or all(v == int(v) for v in x) else None
    if hx is None:
        return
    hn = onp.asarray(n).astype("float32") if isinstance(n, float) else onp.asarray(n)
    want = onp.emath.logn(hn, hx)
    got = np.emath.logn(n, np.array(hx))
    _check(got, want, dx)


# ---- nditer ----------------------------------------------------------------------------------

def test_nditer_reads_in_numpys_orders():
    ref = onp.arange(12, dtype=onp.int32).reshape(3, 4)[:, ::2]
    a = np.array(onp.arange(12, dtype=onp.int32)).reshape(3, 4)[:, ::2]
    for kw in ({}, {"order": "F"}, {"order": "C"}, {"flags": ["external_loop"], "order": "F"}):
        got = [onp.asarray(v).tolist() for v in np.nditer(a, **kw)]
        want = [onp.asarray(v).tolist() for v in onp.nditer(ref, **kw)]
        assert got == want
    it, ref_it = np.nditer(a, flags=["multi_index"]), onp.nditer(ref, flags=["multi_index"])
    assert [(it.multi_index, int(v)) for v in it] == [
        (ref_it.multi_index, int(v)) for v in ref_it]


def test_nditer_writes_reach_the_ndx_array():
    a = np.arange(6, dtype="float32").reshape(2, 3)
    with np.nditer(a, op_flags=["readwrite"]) as it:
        for x in it:
            x[...] = 2 * x + 1
    assert a.asnumpy().tolist() == [[1, 3, 5], [7, 9, 11]]
    b = np.arange(3)
    with np.nditer([b, np.arange(3).reshape(3, 1), None]) as it:  # broadcasting, allocation
        for x, y, z in it:
            z[...] = x * 10 + y
        out = it.operands[2]
    assert isinstance(out, np.ndarray)
    want = onp.arange(3) * 10 + onp.arange(3).reshape(3, 1)
    assert out.asnumpy().tolist() == want.tolist()


def test_nditer_refuses_writes_it_cannot_make():
    ro = np.arange(3)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):  # NumPy's own check and message
        np.nditer(ro, op_flags=["readwrite"])
    bf = np.ones(3, dtype="bfloat16")
    assert [float(v) for v in np.nditer(bf)] == [1.0, 1.0, 1.0]  # read through a host copy
    with pytest.raises(NotImplementedError, match="bfloat16"):
        np.nditer(bf, op_flags=["readwrite"])
    with pytest.raises(ValueError, match="op_flags"):
        np.nditer([np.arange(2), np.arange(2)], op_flags=[["readonly"]])
