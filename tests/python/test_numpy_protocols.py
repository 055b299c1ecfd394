"""NumPy's override protocols on ndx arrays (NEP 13 __array_ufunc__, NEP 18
__array_function__): NumPy's ufuncs and functions given ndx arrays run ndx's and return ndx
arrays holding NumPy's values for the same call on NumPy arrays; what ndx lacks runs NumPy on
host copies with one warning per function, and refuses while autograd records."""
import operator
import warnings

import numpy as onp
import pytest

from ndx import autograd, gluon, np
from ndx.numpy import _protocols
from ndx.numpy._protocols import NumpyFallbackError, NumpyFallbackWarning

A = onp.array([[1.5, -2.0, 3.0], [0.25, 4.0, -0.5]], dtype=onp.float32)
B = onp.array([[0.5, 2.0, -1.0], [2.0, -3.0, 0.75]], dtype=onp.float32)
INTS = onp.array([[1, 2, 3], [4, 5, 6]], dtype=onp.int32)
MASK = onp.array([[True, False, True], [False, True, True]])


@pytest.fixture(autouse=True)
def no_fallback_unless_expected():
    """NumPy's functions on ndx arrays must not fall back silently: a fallback warning is an
    error unless a test expects it (pytest.warns overrides this filter)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumpyFallbackWarning)
        yield


@pytest.fixture
def lacking(monkeypatch):
    """lacking(*names): ndx.np without those functions for the test (the fallback's subject:
    ndx has since implemented the ones these tests used to lack), with the cached lookups
    forgotten before and after."""
    def forget():
        for cache in (_protocols._targets, _protocols._ufuncs, _protocols._plain):
            cache.clear()

    def remove(*names):
        for name in names:
            monkeypatch.delattr(np, name)
        forget()

    yield remove
    monkeypatch.undo()  # the functions back, then the lookups rebuilt with them
    forget()


@pytest.fixture
def fresh_warnings(monkeypatch):
    """Forgets which functions have warned, so each test sees its first warning."""
    monkeypatch.setattr(_protocols, "_warned", set())


def _same(got, want, rtol=1e-6, atol=1e-6):
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=atol)


# ---- __array_ufunc__: __call__ ----

UNARY = ["sin", "exp", "negative", "absolute", "sqrt", "tanh", "floor", "square", "log1p",
         "sign", "isnan", "logical_not", "reciprocal"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_ufuncs_run_ndx(name):
    x = onp.abs(A) if name in ("sqrt", "log1p") else A
    _same(getattr(onp, name)(np.array(x)), getattr(onp, name)(x))


BINARY = ["add", "subtract", "multiply", "true_divide", "power", "maximum", "fmin", "arctan2",
          "hypot", "floor_divide", "mod", "copysign"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_ufuncs_with_ndx_numpy_and_scalar_operands(name):
    f = getattr(onp, name)
    x, y = (onp.abs(A) + 1, B) if name == "power" else (A, B)
    want = f(x, y)
    _same(f(np.array(x), np.array(y)), want)
    _same(f(x, np.array(y)), want)  # NumPy array first: the result is still an ndx array
    _same(f(np.array(x), y), want)
    _same(f(np.array(x), 2), f(x, 2))  # a Python scalar is weak: float32 stays
    _same(f(3, np.array(y)), f(3, y))


@pytest.mark.parametrize("name", ["less", "less_equal", "equal", "not_equal", "greater",
                                  "greater_equal", "logical_and", "logical_xor"])
def test_comparisons_give_ndx_bool_arrays(name):
    f = getattr(onp, name)
    _same(f(A, np.array(B)), f(A, B))
    _same(f(np.array(A), 0.25), f(A, 0.25))


def test_numpy_scalars_and_lists_keep_numpys_dtypes():
    a = np.array(A)
    _same(onp.multiply(onp.float64(2.0), a), onp.multiply(onp.float64(2.0), A))  # float64
    _same(onp.add([1.5, -1.0, 2.0], a), onp.add([1.5, -1.0, 2.0], A))  # a list is float64
    _same(onp.add(INTS, np.array(INTS)), INTS + INTS)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.lt, operator.eq, operator.pow, operator.mod])
def test_numpy_array_operators_with_an_ndx_operand_give_ndx_arrays(op):
    x, y = onp.abs(A) + 1, onp.abs(B) + 1
    want = op(x, y)
    _same(op(x, np.array(y)), want)  # NumPy array on the left: still an ndx array
    _same(op(np.array(x), y), want)


def test_in_place_operator_on_a_numpy_array_stays_numpy():
    x = A.copy()
    x += np.array(B)  # as MXNet: the left operand's type is kept for in-place operators
    assert type(x) is onp.ndarray
    onp.testing.assert_array_equal(x, A + B)


def test_out_is_written_and_returned():
    out = np.zeros(A.shape)
    r = onp.add(np.array(A), B, out=out)
    assert r is out
    _same(out, A + B)
    r = onp.sin(np.array(A), out=(out,))
    assert r is out
    _same(out, onp.sin(A))


def test_out_where_dtype_and_casting_reach_ndx():
    out_np = onp.full(A.shape, 7.0, onp.float64)
    want = onp.add(A, B, out=out_np.copy(), where=MASK)
    out = np.array(onp.full(A.shape, 7.0, onp.float64))
    assert onp.add(np.array(A), np.array(B), out=out, where=np.array(MASK)) is out
    _same(out, want)
    _same(onp.add(np.array(INTS), np.array(INTS), dtype="float64"),
          onp.add(INTS, INTS, dtype="float64"))
    _same(onp.add(np.array(A), 1, dtype="int32", casting="unsafe"),
          onp.add(A, 1, dtype="int32", casting="unsafe"))
    with pytest.raises(TypeError):  # NumPy refuses float32 -> int32 under same_kind; so do we
        onp.add(np.array(A), 1, dtype="int32")


def test_two_output_ufunc_with_out_tuples():
    a = np.array(A)
    q, r = onp.divmod(a, 0.75)
    wq, wr = onp.divmod(A, 0.75)
    _same(q, wq)
    _same(r, wr)
    oq, orem = np.zeros(A.shape), np.zeros(A.shape)
    got = onp.divmod(a, 0.75, out=(oq, orem))
    assert got[0] is oq and got[1] is orem
    _same(oq, wq)
    _same(orem, wr)
    orem2 = np.zeros(A.shape)
    got = onp.divmod(a, 0.75, out=(None, orem2))  # only the remainder given
    assert got[1] is orem2
    _same(got[0], wq)
    _same(orem2, wr)


def test_gradient_flows_through_numpy_ufuncs_and_functions():
    x = np.array([0.5, 1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = onp.sum(onp.multiply(onp.sin(x), x))
    y.backward()
    xn = onp.array([0.5, 1.0, 2.0], dtype=onp.float32)
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.cos(xn) * xn + onp.sin(xn), rtol=1e-6)


# ---- __array_ufunc__: reduce / accumulate / outer ----

@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum"])
@pytest.mark.parametrize("kwargs", [{}, {"axis": 1}, {"axis": None}, {"axis": 0, "keepdims": True},
                                    {"axis": (0, 1)}])
def test_reduce_matches_numpy(name, kwargs):
    f = getattr(onp, name).reduce
    _same(f(np.array(A), **kwargs), f(A, **kwargs))
    _same(f(np.array(INTS), **kwargs), f(INTS, **kwargs))  # add / multiply: int32 -> int64


@pytest.mark.parametrize("name", ["logical_and", "logical_or"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_logical_reduce_matches_numpy(name, axis):
    f = getattr(onp, name).reduce
    _same(f(np.array(MASK), axis=axis), f(MASK, axis=axis))


def test_reduce_keywords_dtype_initial_where_out():
    a = np.array(A)
    _same(onp.add.reduce(a, dtype="float64"), onp.add.reduce(A, dtype="float64"))
    _same(onp.add.reduce(a, axis=1, initial=10.0), onp.add.reduce(A, axis=1, initial=10.0))
    _same(onp.maximum.reduce(a, axis=None, initial=3.5), onp.maximum.reduce(A, axis=None,
                                                                             initial=3.5))
    _same(onp.add.reduce(a, axis=1, where=np.array(MASK)), onp.add.reduce(A, axis=1, where=MASK))
    out = np.zeros((3,))
    assert onp.multiply.reduce(a, out=out) is out
    _same(out, onp.multiply.reduce(A))


def test_reduce_arguments_by_position_are_numpys():
    # NumPy passes axis, dtype, out, keepdims given by position as keywords, dtype=None among
    # them: max and all take no dtype, and None asks for nothing, so ndx still runs them.
    a = np.array(A)
    _same(onp.maximum.reduce(a, 1, None, None, True), onp.maximum.reduce(A, 1, None, None, True))
    _same(onp.logical_or.reduce(a > 1, 0, None), onp.logical_or.reduce(A > 1, 0, None))
    _same(onp.add.reduce(a, 1, "float64"), onp.add.reduce(A, 1, "float64"))


@pytest.mark.parametrize("name", ["add", "multiply"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_accumulate_matches_numpy(name, axis):
    f = getattr(onp, name).accumulate
    _same(f(np.array(A), axis=axis), f(A, axis=axis))
    i8 = INTS.astype(onp.int8)
    _same(f(np.array(i8), axis=axis), f(i8, axis=axis))  # NumPy's upcast to int64


def test_accumulate_default_axis_and_dtype():
    _same(onp.add.accumulate(np.array(A)), onp.add.accumulate(A))
    _same(onp.add.accumulate(np.array(INTS), dtype="float64"),
          onp.add.accumulate(INTS, dtype="float64"))


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "greater", "maximum"])
def test_outer_matches_numpy(name):
    f = getattr(onp, name).outer
    _same(f(np.array(A[0]), np.array(B[1])), f(A[0], B[1]))
    _same(f(np.array(A), B[0]), f(A, B[0]))  # 2-d with 1-d: shape (2, 3, 3)
    _same(f(A[1], np.array(INTS)), f(A[1], INTS))


# ---- fallbacks of __array_ufunc__ ----

def test_ufunc_ndx_lacks_falls_back_once(fresh_warnings, lacking):
    lacking("bitwise_count")
    x = onp.array([0, 3, 7, 255], dtype=onp.uint8)
    with pytest.warns(NumpyFallbackWarning, match=r"ndx: numpy\.bitwise_count has no ndx "
                      r"implementation; running NumPy on host copies"):
        _same(onp.bitwise_count(np.array(x)), onp.bitwise_count(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second call is silent
        _same(onp.bitwise_count(np.array(x)), onp.bitwise_count(x))


def test_ufunc_methods_ndx_lacks_fall_back(fresh_warnings):
    idx = [0, 2]
    with pytest.warns(NumpyFallbackWarning, match=r"numpy\.add\.reduceat"):
        _same(onp.add.reduceat(np.array(A), idx, axis=1), onp.add.reduceat(A, idx, axis=1))
    a, want = np.array(A), A.copy()
    with pytest.warns(NumpyFallbackWarning, match=r"numpy\.add\.at"):
        assert onp.add.at(a, [0, 0], 1.0) is None
    onp.add.at(want, [0, 0], 1.0)
    _same(a, want)  # in place on the ndx array
    out = np.zeros((2, 2))
    with pytest.warns(NumpyFallbackWarning, match=r"numpy\.maximum\.reduceat"):
        assert onp.maximum.reduceat(np.array(A), idx, axis=1, out=out) is out
    _same(out, onp.maximum.reduceat(A, idx, axis=1))


def test_ufunc_keyword_ndx_does_not_take_falls_back(fresh_warnings):
    axes = [(-2, -1), (-2, -1), (-2, -1)]
    with pytest.warns(NumpyFallbackWarning, match=r"numpy\.matmul .*axes="):
        _same(onp.matmul(np.array(A), np.array(B.T), axes=axes), onp.matmul(A, B.T, axes=axes))


def test_genuine_ufunc_errors_are_not_swallowed():
    with pytest.raises(ValueError):
        onp.add(np.array(A), np.ones((4,)))  # shapes do not broadcast: no fallback


# ---- __array_function__ ----

def test_functions_run_ndx_and_return_ndx_arrays():
    a, b = np.array(A), np.array(B)
    _same(onp.sum(a), onp.sum(A))
    _same(onp.sum(a, axis=1, keepdims=True), onp.sum(A, axis=1, keepdims=True))
    _same(onp.mean(a, 0), onp.mean(A, 0))
    _same(onp.concatenate([a, b]), onp.concatenate([A, B]))
    _same(onp.concatenate([a, B], axis=1), onp.concatenate([A, B], axis=1))  # mixed operands
    _same(onp.stack([a, b], axis=1), onp.stack([A, B], axis=1))
    _same(onp.where(a > b, a, b), onp.where(A > B, A, B))
    _same(onp.linalg.norm(a), onp.linalg.norm(A), rtol=1e-5)
    _same(onp.linalg.norm(a, axis=1), onp.linalg.norm(A, axis=1), rtol=1e-5)
    _same(onp.fft.fft(a), onp.fft.fft(A).astype(onp.complex64), rtol=1e-5)


def test_like_creates_ndx_arrays():
    # NumPy passes its own defaults (order='C') on; ndx's functions need not take them.
    a = np.array(A)
    got = onp.asarray([1.0, 2.0], like=a)
    assert isinstance(got, np.ndarray) and got.tolist() == [1.0, 2.0]
    got = onp.full((2, 2), 3, like=a)
    assert isinstance(got, np.ndarray) and got.tolist() == [[3, 3], [3, 3]]
    assert isinstance(onp.zeros((2,), like=a), np.ndarray)


def test_metadata_functions_read_the_array():
    a = np.array(A)
    with autograd.record():  # no host copy, so no refusal either
        assert onp.shape(a) == A.shape and onp.ndim(a) == 2 and onp.size(a) == 6
        assert onp.size(a, 1) == 3 and onp.size(a, 0) == 2


def test_printing_and_saving_run_on_host_silently(tmp_path):
    a = np.array(A)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with autograd.record():
            assert onp.array_str(a) == onp.array_str(A)
            assert onp.array2string(a, precision=2) == onp.array2string(A, precision=2)
        onp.save(tmp_path / "a.npy", a)
    onp.testing.assert_array_equal(onp.load(tmp_path / "a.npy"), A)


def test_functions_dispatch_to_the_ndx_function():
    calls = []
    orig = np.sum

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return orig(*args, **kwargs)

    _protocols._targets.pop(onp.sum, None)
    try:
        np.sum = spy
        onp.sum(np.array(A), axis=0)
    finally:
        np.sum = orig
        _protocols._targets.pop(onp.sum, None)
    assert calls == [{"axis": 0}]


def test_function_ndx_lacks_falls_back_with_one_warning(fresh_warnings, lacking):
    lacking("poly")
    roots = onp.array([1.0, -2.0, 0.5], dtype=onp.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = onp.poly(np.array(roots))
        second = onp.poly(np.array(roots))
    msgs = [str(w.message) for w in caught if issubclass(w.category, NumpyFallbackWarning)]
    assert msgs == ["ndx: numpy.poly has no ndx implementation; running NumPy on host copies"]
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert issubclass(NumpyFallbackWarning, UserWarning)
    _same(first, onp.poly(roots))
    _same(second, onp.poly(roots))


def test_fallback_converts_nested_arrays_and_results(fresh_warnings, lacking):
    lacking("block", "gradient")
    a, b = np.array(A), np.array(B)
    with pytest.warns(NumpyFallbackWarning, match=r"numpy\.block"):
        _same(onp.block([[a, b], [b, a]]), onp.block([[A, B], [B, A]]))
    with pytest.warns(NumpyFallbackWarning, match=r"numpy\.gradient"):
        got = onp.gradient(a)  # a tuple of arrays comes back as a tuple of ndx arrays
    for g, w in zip(got, onp.gradient(A)):
        _same(g, w)


def test_fallback_writes_into_ndx_arrays_it_was_given(fresh_warnings, lacking):
    lacking("copyto")
    dst = np.zeros(A.shape)
    with pytest.warns(NumpyFallbackWarning, match=r"numpy\.copyto"):
        onp.copyto(dst, np.array(A), where=MASK)
    _same(dst, onp.where(MASK, A, 0).astype(onp.float32))


def test_signature_mismatch_falls_back(fresh_warnings):
    import inspect
    try:
        takes_dtype = "dtype" in inspect.signature(np.concatenate).parameters
    except (TypeError, ValueError):
        takes_dtype = False
    if takes_dtype:
        pytest.skip("ndx.np.concatenate takes dtype= now")
    a, b = np.array(A), np.array(B)
    with pytest.warns(NumpyFallbackWarning, match=r"numpy\.concatenate .*dtype="):
        got = onp.concatenate([a, b], dtype="float64")
    _same(got, onp.concatenate([A, B], dtype="float64"))


def test_genuine_function_errors_are_not_swallowed():
    with pytest.raises(ValueError):  # shapes differ along axis 1: ndx's error, no fallback
        onp.concatenate([np.array(A), np.ones((2, 4))])
    with pytest.raises(ValueError):
        onp.stack([np.array(A), np.ones((3, 2))])


# ---- autograd and hybridize refuse the fallback ----

def test_fallback_refused_while_recording(fresh_warnings, lacking):
    lacking("poly", "bitwise_count")
    x = np.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        with pytest.raises(NumpyFallbackError, match=r"numpy\.poly.*autograd is recording"):
            onp.poly(x)
        with pytest.raises(NotImplementedError):
            onp.bitwise_count(np.array([1, 2]))
        with pytest.raises(ValueError):  # what MXNet raised here
            onp.add.reduceat(x, [0])
    assert issubclass(NumpyFallbackError, NotImplementedError)
    assert issubclass(NumpyFallbackError, ValueError)
    with autograd.record():
        with autograd.pause():
            with pytest.warns(NumpyFallbackWarning):
                _same(onp.poly(x), onp.poly(onp.array([1.0, 2.0], onp.float32)))


class _SinBlock(gluon.HybridBlock):
    def forward(self, x):
        return onp.sin(x) + onp.sum(x)


class _PolyBlock(gluon.HybridBlock):
    def forward(self, x):
        return onp.poly(x)


def test_hybridized_blocks_trace_numpy_calls_as_ndx_ops():
    blk = _SinBlock()
    blk.initialize()
    blk.hybridize()
    _same(blk(np.array(A)), onp.sin(A) + onp.sum(A), rtol=1e-5)
    assert len(blk._graphs) == 1
    _same(blk(np.array(B)), onp.sin(B) + onp.sum(B), rtol=1e-5)  # the graph, new values
    assert len(blk._graphs) == 1


def test_hybridized_fallback_is_refused(fresh_warnings, lacking):
    lacking("poly")
    blk = _PolyBlock()
    blk.initialize()
    blk.hybridize()
    with pytest.raises(NumpyFallbackError, match=r"numpy\.poly.*hybridized"):
        blk(np.array([1.0, 2.0]))


# ---- other libraries' types ----

class Foreign:
    """A type that overrides ufuncs and functions itself (as another array library would)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ("foreign ufunc", ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        return ("foreign function", func.__name__)


def test_foreign_types_get_not_implemented():
    a, f = np.array(A), Foreign()
    assert a.__array_ufunc__(onp.add, "__call__", a, f) is NotImplemented
    assert a.__array_ufunc__(onp.add, "__call__", a, 1, out=(f,)) is NotImplemented
    assert a.__array_function__(onp.concatenate, (np.ndarray, Foreign), ([a, f],), {}) \
        is NotImplemented
    # NumPy then asks the other type, whose answer is the call's.
    assert onp.add(a, f) == ("foreign ufunc", "add")
    assert onp.add(f, a) == ("foreign ufunc", "add")
    assert onp.concatenate([a, f]) == ("foreign function", "concatenate")


def test_known_types_are_handled_not_deferred():
    a = np.array(A)
    assert a.__array_ufunc__(onp.add, "__call__", a, A) is not NotImplemented
    assert a.__array_function__(onp.sum, (np.ndarray, onp.ndarray), (a,), {}) \
        is not NotImplemented


def test_results_stay_on_the_inputs_device(fresh_warnings, lacking):
    lacking("poly")
    a = np.array(A)
    assert onp.add(A, a).device == a.device
    with pytest.warns(NumpyFallbackWarning):
        assert onp.poly(np.array([1.0, 2.0])).device == a.device


def test_functions_of_numpy_modules_ndx_does_not_mirror_fall_back():
    # numpy.polynomial.polynomial has no ndx counterpart: NumPy's function runs on host copies
    # (this raised AttributeError while naming the missing namespace).
    x, y, c = onp.array([0.5, 2.0]), onp.array([1.0, -1.0]), onp.arange(4.0).reshape(2, 2)
    want = onp.polynomial.polynomial.polyval2d(x, y, c)
    with pytest.warns(NumpyFallbackWarning):
        got = onp.polynomial.polynomial.polyval2d(np.array(x), np.array(y), c)
    onp.testing.assert_allclose(onp.asarray(got.asnumpy() if hasattr(got, "asnumpy") else got),
                                want)


def test_stride_tricks_of_an_ndx_array_run_ndx():
    x = np.arange(6.0)
    got = onp.lib.stride_tricks.sliding_window_view(x, 3)
    assert isinstance(got, np.ndarray)
    onp.testing.assert_array_equal(
        got.asnumpy(), onp.lib.stride_tricks.sliding_window_view(onp.arange(6.0), 3))
