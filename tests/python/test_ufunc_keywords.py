"""NumPy's ufunc keywords (out= of another dtype, where=, dtype=, casting=, order=, subok=) and
where= on reductions, each checked against NumPy's own result for the same call."""
import numpy as onp
import pytest

from ndx import autograd, gluon, np

A = onp.array([[1.5, -2.0, 3.0], [0.25, 4.0, -0.5]], dtype=onp.float32)
INTS = onp.array([[1, 2, 3], [4, 5, 6]], dtype=onp.int32)
MASK = onp.array([[True, False, True], [False, True, True]])
UNARY = ["sin", "exp", "negative", "absolute", "sqrt", "tanh", "floor", "square", "log1p",
         "arctan", "cbrt", "rint", "sign"]
BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "fmin", "hypot", "arctan2",
          "copysign", "power", "floor_divide", "mod"]


def _numpy_and_ndx(name, args, **kwargs):
    """Calls NumPy and ndx alike; `out` (a NumPy array) is copied for each."""
    out = kwargs.pop("out", None)
    onp_kw, ndx_kw = dict(kwargs), {k: (np.array(v) if isinstance(v, onp.ndarray) else v)
                                    for k, v in kwargs.items()}
    if out is not None:
        onp_kw["out"], ndx_kw["out"] = out.copy(), np.array(out.copy())
    want = getattr(onp, name)(*args, **onp_kw)
    got = getattr(np, name)(*[np.array(a) if isinstance(a, onp.ndarray) else a for a in args],
                            **ndx_kw)
    return got, want


def _same(got, want, rtol=1e-6):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name", UNARY)
def test_unary_where_with_out_keeps_the_masked_out_elements(name):
    x = onp.abs(A) if name == "sqrt" else A
    out = onp.full(A.shape, 7.0, onp.float32)
    got, want = _numpy_and_ndx(name, (x,), out=out, where=MASK)
    _same(got, want)


@pytest.mark.parametrize("name", BINARY)
def test_binary_where_and_a_wider_out(name):
    out = onp.full(A.shape, -3.0, onp.float64)
    got, want = _numpy_and_ndx(name, (onp.abs(A) + 1, A), out=out, where=MASK)
    _same(got, want)


def test_divide_where_nonzero_is_numpys_safe_division():
    b = onp.array([2.0, 0.0, 4.0], onp.float32)
    a = onp.array([1.0, 5.0, 2.0], onp.float32)
    got, want = _numpy_and_ndx("divide", (a, b), out=onp.zeros(3, onp.float32), where=b != 0)
    _same(got, want)


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int8", "int64", "int16"])
def test_out_of_another_dtype_under_same_kind(out_dtype):
    got, want = _numpy_and_ndx("add", (INTS, 1), out=onp.zeros(INTS.shape, out_dtype))
    _same(got, want)


@pytest.mark.parametrize("x,out_dtype", [(A, "int32"), (INTS, "uint8"), (INTS, "bool")])
def test_out_that_same_kind_cannot_hold_is_a_type_error(x, out_dtype):
    with pytest.raises(TypeError):
        onp.add(x, 1, out=onp.zeros(x.shape, out_dtype))
    with pytest.raises(TypeError, match=rf"\[add\] cannot cast output 0 from {x.dtype} to "
                       rf"{out_dtype}"):
        np.add(np.array(x), 1, out=np.zeros(x.shape, dtype=out_dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16"])
def test_dtype_selects_the_loop(dtype):
    got, want = _numpy_and_ndx("add", (INTS, INTS), dtype=dtype)
    _same(got, want)


def test_dtype_with_a_weak_python_scalar_types_the_scalar():
    got, want = _numpy_and_ndx("add", (INTS.astype(onp.int8), 1000), dtype="int32")
    _same(got, want)


@pytest.mark.parametrize("name,args,kwargs", [
    ("add", (A, 1), {"dtype": "int32"}),                  # input float32 -> int32: same_kind no
    ("sqrt", (INTS,), {"dtype": "int32"}),                   # no integer sqrt loop
    ("less", (INTS, 2), {"dtype": "float32"}),               # comparisons give bool
    ("add", (INTS, INTS.astype(onp.int64)), {"casting": "no"}),  # int32 -> int64 is a cast
    ("add", (INTS, INTS.astype(onp.int64)), {"casting": "equiv"}),
])
def test_casting_rules_refuse_what_numpy_refuses(name, args, kwargs):
    with pytest.raises(TypeError):
        getattr(onp, name)(*args, **kwargs)
    with pytest.raises(TypeError, match=rf"\[{name}\]"):
        getattr(np, name)(*[np.array(a) if isinstance(a, onp.ndarray) else a for a in args],
                          **kwargs)


def test_unsafe_casting_truncates_as_numpy_does():
    got, want = _numpy_and_ndx("add", (A, 1), dtype="int32", casting="unsafe")
    _same(got, want)
    got, want = _numpy_and_ndx("add", (A, 1), out=onp.zeros(A.shape, onp.int16), casting="unsafe")
    _same(got, want)


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_every_casting_name_is_accepted(casting):
    got, want = _numpy_and_ndx("multiply", (INTS, INTS), casting=casting)
    _same(got, want)


def test_bad_keywords_are_typed_errors():
    a = np.array(A)
    with pytest.raises(ValueError, match="casting must be one of"):
        np.add(a, 1, casting="bogus")
    with pytest.raises(TypeError):
        np.add(a, 1, dtype="not-a-dtype")
    with pytest.raises(TypeError, match="where must be a bool array"):
        np.add(a, 1, out=np.zeros(A.shape), where=np.array(INTS))
    with pytest.raises(ValueError):
        np.add(a, 1, out=np.zeros(A.shape), where=np.array([True, False]))
    with pytest.raises(NotImplementedError, match="order='F'"):
        np.add(a, 1, order="F")
    with pytest.raises(NotImplementedError, match="signature"):
        np.add(a, 1, signature="ff->f")
    with pytest.raises(ValueError, match="order must be one of"):
        np.add(a, 1, order="Z")


def test_order_and_subok_that_change_nothing_are_accepted():
    a = np.array(A)
    for kwargs in ({"order": "C"}, {"order": "K"}, {"order": "A"}, {"subok": False}):
        onp.testing.assert_array_equal(np.add(a, 1, **kwargs).asnumpy(), A + 1)


def test_where_false_leaves_out_untouched_and_true_is_the_default():
    out = np.full(A.shape, 9.0)
    np.exp(np.array(A), out=out, where=False)
    onp.testing.assert_array_equal(out.asnumpy(), onp.full(A.shape, 9.0, onp.float32))
    onp.testing.assert_allclose(np.exp(np.array(A), where=True).asnumpy(), onp.exp(A), rtol=1e-6)


def test_two_output_ufunc_with_an_out_tuple_and_where():
    q0, r0 = onp.full(INTS.shape, -1, onp.int32), onp.full(INTS.shape, -1, onp.int32)
    want = onp.divmod(INTS, 4, out=(q0, r0), where=MASK)
    q, r = np.full(INTS.shape, -1, dtype="int32"), np.full(INTS.shape, -1, dtype="int32")
    got = np.divmod(np.array(INTS), 4, out=(q, r), where=np.array(MASK))
    assert got[0] is q and got[1] is r
    onp.testing.assert_array_equal(q.asnumpy(), want[0])
    onp.testing.assert_array_equal(r.asnumpy(), want[1])


def test_where_with_out_under_autograd_is_refused_like_every_out():
    # MXNet's rule, kept by ndx: out= does not join the recorded graph.
    x = np.array(A)
    x.attach_grad()
    with autograd.record(), pytest.raises(NotImplementedError, match="out="):
        np.multiply(x, 3.0, out=np.zeros(A.shape), where=np.array(MASK))


# ------------------------------------------------------------------ reductions with where=
REDUCE_CASES = [
    ("sum", {}), ("sum", {"axis": 0}), ("sum", {"axis": 1, "keepdims": True}),
    ("prod", {}), ("prod", {"axis": 1}),
    ("max", {"initial": -10.0}), ("max", {"axis": 0, "initial": -10.0}),
    ("min", {"axis": 1, "initial": 10.0}),
    ("mean", {}), ("mean", {"axis": 1}), ("mean", {"axis": 0, "keepdims": True}),
    ("var", {}), ("var", {"axis": 1}), ("std", {"axis": 1, "ddof": 1}),
    ("nansum", {"axis": 1}), ("nanmean", {}), ("nanvar", {"axis": 1}), ("nanstd", {}),
    ("nanprod", {"axis": 0}),
]


@pytest.mark.parametrize("name,kwargs", REDUCE_CASES, ids=lambda v: str(v))
def test_reduction_where_matches_numpy(name, kwargs):
    x = A.copy()
    if name.startswith("nan"):
        x[0, 2] = onp.nan
    got, want = _numpy_and_ndx(name, (x,), where=MASK, **kwargs)
    assert got.shape == onp.shape(want)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["all", "any"])
def test_logical_reductions_with_where(name):
    b = A > 0
    for axis in (None, 0, 1):
        got, want = _numpy_and_ndx(name, (b,), axis=axis, where=MASK)
        onp.testing.assert_array_equal(got.asnumpy(), want)


def test_integer_mean_with_where_is_float32_of_numpys_value():
    got, want = _numpy_and_ndx("mean", (INTS,), axis=1, where=MASK)
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_reduction_where_errors():
    a = np.array(A)
    with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
        np.max(a, where=np.array(MASK))
    with pytest.raises(TypeError, match="where must be a bool array"):
        np.sum(a, where=np.array(INTS))
    with pytest.raises(ValueError, match="broadcast"):
        np.sum(a, where=np.ones((3, 3), dtype=bool))


def test_reduction_where_as_a_method_and_its_gradient():
    x = np.array(A)
    onp.testing.assert_allclose(x.sum(axis=1, where=np.array(MASK)).asnumpy(),
                                A.sum(axis=1, where=MASK), rtol=1e-6)
    x.attach_grad()
    with autograd.record():
        y = np.sum(np.square(x), where=np.array(MASK))
    y.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.where(MASK, 2 * A, 0), rtol=1e-6)


def test_out_tuple_of_one_returns_the_array_as_numpy_does():
    o = np.zeros(A.shape)
    assert np.add(np.array(A), 1, out=(o,)) is o
    onp.testing.assert_allclose(o.asnumpy(), A + 1)
    with pytest.raises(ValueError, match="expects 2 output"):
        np.divmod(np.array(A), 2, out=(o,))


NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64"]


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_output_casting_table_is_numpys(casting):
    # add(x, x) computes in x's dtype, so the only cast is the result's into out.
    for src in NUMPY_DTYPES:
        x = np.zeros((2,), dtype=src)
        for dst in NUMPY_DTYPES:
            allowed = onp.can_cast(src, dst, casting)
            try:
                np.add(x, x, out=np.zeros((2,), dtype=dst), casting=casting)
                ok = True
            except TypeError:
                ok = False
            assert ok == allowed, (src, dst, casting)


@pytest.mark.parametrize("name,args", [
    ("sum", (1, "float64")), ("sum", (0, None, None, True)), ("sum", (None, None, None, False, 5)),
    ("prod", (1, "float64", None, True)), ("mean", (1, "float64")), ("mean", (0, None, None, True)),
    ("max", (0, None, True)), ("min", (1, None, False, -100.0)), ("amax", (None, None, True)),
    ("all", (0, None, True)), ("any", (1,)), ("argmax", (1,)), ("argmin", (0, None)),
    ("cumsum", (1, "float64")), ("cumprod", (0, None)),
])
def test_reductions_take_numpys_positional_order(name, args):
    x = A > 0 if name in ("all", "any") else A
    want = getattr(onp, name)(x, *args)
    got = getattr(np, name)(np.array(x), *args)
    assert got.dtype == onp.asarray(want).dtype and got.shape == onp.shape(want)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_reduction_out_by_position_and_by_keyword_once():
    o = np.zeros((3,))
    assert np.sum(np.array(A), 0, None, o) is o
    onp.testing.assert_allclose(o.asnumpy(), A.sum(0), rtol=1e-6)
    with pytest.raises(TypeError, match="multiple values for argument 'out'"):
        np.sum(np.array(A), 0, None, o, out=o)


@pytest.mark.parametrize("call, out_dtype", [
    (lambda m, a, o: m.sum(a, out=o), "float64"),
    (lambda m, a, o: m.sum(a, axis=0, out=o), "int32"),
    (lambda m, a, o: m.prod(a, axis=1, out=o), "float32"),
    (lambda m, a, o: m.max(a, axis=0, out=o), "int64"),
    (lambda m, a, o: m.min(a, out=o), "float16"),
    (lambda m, a, o: m.argmax(a, axis=1, out=o), "int32"),
    (lambda m, a, o: m.mean(a, axis=0, out=o), "float64"),
    (lambda m, a, o: m.cumsum(a, axis=1, out=o), "float32"),
    (lambda m, a, o: m.all(a, axis=0, out=o), "int8")])
def test_reduction_out_of_another_dtype_is_cast_into_as_numpy(call, out_dtype):
    # NumPy casts a reduction's result into out= under casting='same_kind'.
    x = onp.array([[3, -1, 4], [1, 5, -9]], dtype=onp.int8)
    want = call(onp, x, None)
    o = np.zeros(onp.shape(want), dtype=out_dtype)
    got = call(np, np.array(x), o)
    assert got is o and o.dtype == onp.dtype(out_dtype)
    onp.testing.assert_allclose(o.asnumpy(), onp.asarray(want).astype(out_dtype), rtol=1e-6)


def test_reduction_out_casts_unsafely_as_numpy_and_checks_the_shape():
    for call in (lambda m, o: m.sum(m.asarray([1.5, 2.5]), out=o),
                 lambda m, o: m.max(m.asarray([1.5, 2.5]), out=o)):
        want = call(onp, onp.zeros((), dtype=onp.int32))
        got = call(np, np.zeros((), dtype="int32"))
        assert got.dtype == onp.int32 and int(got) == int(want)
    o = np.zeros(2, dtype="int64")
    np.cumsum(np.array([1.5, 2.5]), out=o)
    assert o.asnumpy().tolist() == onp.cumsum([1.5, 2.5], out=onp.zeros(2, "int64")).tolist()
    with pytest.raises(ValueError, match="out has shape"):
        np.sum(np.ones(3, dtype="int8"), out=np.zeros((1,), dtype="float64"))


UFUNC_METHOD_OPS = ["add", "subtract", "multiply", "maximum", "minimum", "logical_and",
                    "logical_xor", "bitwise_or", "power", "true_divide", "hypot", "logaddexp",
                    "gcd", "fmax", "copysign"]


def _method_input(name, rng):
    if name in ("hypot", "logaddexp", "true_divide", "fmax", "copysign"):
        return rng.standard_normal((3, 4))
    return rng.integers(1, 5, (3, 4))


@pytest.mark.parametrize("name", UFUNC_METHOD_OPS)
def test_ufunc_methods_are_numpys(name):
    rng = onp.random.default_rng(4)
    x = _method_input(name, rng)
    ours, theirs = getattr(np, name), getattr(onp, name)

    def check(got, want):
        want = onp.asarray(want)
        got = got.asnumpy()
        # Float results: ndx's float32 default stands in for NumPy's float64 of integers.
        assert got.dtype == want.dtype or (want.dtype == onp.float64 and got.dtype == "float32")
        onp.testing.assert_allclose(got, want, rtol=1e-6)

    for axis in (0, 1, -1, None, (0, 1)):
        try:
            want = theirs.reduce(x, axis=axis)
        except ValueError:  # not reorderable: NumPy refuses several axes, so does ndx
            with pytest.raises(ValueError, match="reorderable"):
                ours.reduce(np.array(x), axis=axis)
            continue
        check(ours.reduce(np.array(x), axis=axis), want)
    check(ours.reduce(np.array(x), axis=1, keepdims=True), theirs.reduce(x, axis=1, keepdims=True))
    for axis in (0, 1):
        check(ours.accumulate(np.array(x), axis=axis), theirs.accumulate(x, axis=axis))
    segments = [0, 2, 1, 3]  # 2 > 1: that segment is the single element x[:, 2]
    check(ours.reduceat(np.array(x), segments, axis=1), theirs.reduceat(x, segments, axis=1))
    check(ours.outer(np.array(x[0]), np.array(x[1:])), theirs.outer(x[0], x[1:]))
    a, want = np.array(x[0].copy()), x[0].copy()
    theirs.at(want, [0, 0, 2], x[1, :3])  # index 0 twice: applied twice
    ours.at(a, [0, 0, 2], np.array(x[1, :3]))
    check(a, want)
    assert (ours.nin, ours.nout, ours.nargs) == (theirs.nin, theirs.nout, theirs.nargs)
    assert ours.identity == theirs.identity


def test_ufunc_at_and_reduce_corner_cases():
    a = np.arange(5.0)
    np.negative.at(a, [0, 0, 1])  # a unary ufunc's at, index 0 twice
    onp.testing.assert_array_equal(a.asnumpy(), [0.0, -1.0, 2.0, 3.0, 4.0])
    a, want = np.zeros((3, 3)), onp.zeros((3, 3))
    key = (onp.array([0, 0, 1]), slice(None))
    onp.add.at(want, key, onp.array([1.0, 2.0, 3.0]))
    np.add.at(a, (np.array([0, 0, 1]), slice(None)), np.array([1.0, 2.0, 3.0]))
    onp.testing.assert_array_equal(a.asnumpy(), want)
    assert float(np.maximum.reduce(np.array([1, 5, 2]), initial=7)) == 7
    assert int(np.add.reduce(np.array([1, 2, 3]), where=np.array([True, False, True]))) == 4
    assert float(np.add.reduce(np.zeros(0))) == 0.0  # the identity
    with pytest.raises(ValueError, match="no identity"):
        np.maximum.reduce(np.zeros(0))
    with pytest.raises(ValueError, match="no identity"):
        np.subtract.reduce(np.zeros((0, 2)))
    with pytest.raises(TypeError, match="ndarray"):
        np.add.at([1, 2], [0], 1)


@pytest.mark.parametrize("kwargs", [{"dtype": "float64"}, {"dtype": "float32"},
                                    {"dtype": "float64", "casting": "safe"}, {"subok": True},
                                    {"dtype": "int64"}, {"dtype": "float16", "casting": "no"},
                                    {"dtype": "float64", "casting": "no"}, {"where": True}])
def test_matmul_takes_numpys_gufunc_keywords(kwargs):
    # matmul is a generalized ufunc in NumPy: dtype= / casting= / subok=, not where=
    a = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    b = onp.arange(12, dtype=onp.float32).reshape(3, 4) / 7
    try:
        want = onp.matmul(a, b, **kwargs)
    except TypeError:  # UFuncTypeError is a TypeError
        with pytest.raises(TypeError):
            np.matmul(np.array(a), np.array(b), **kwargs)
        return
    got = np.matmul(np.array(a), np.array(b), **kwargs)
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_matmul_out_of_another_dtype_positional_and_keyword():
    a = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    want = a @ a.T
    for pass_out in (lambda x, y, o: np.matmul(x, y, o), lambda x, y, o: np.matmul(x, y, out=o)):
        out = np.zeros((2, 2), dtype="float64")
        pass_out(np.array(a), np.array(a.T), out)
        onp.testing.assert_allclose(out.asnumpy(), want, rtol=0, atol=0)


def test_dtype_keyword_casts_are_recorded_for_autograd_and_hybridize():
    # exp(x, dtype=float64) differentiates back to a float32 x; a hybridized block keeps the cast
    # as a graph node (not a constant of the first call's input)
    xn = onp.array([[0.5, -1.0], [2.0, 0.25]], dtype=onp.float32)
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = np.exp(x, dtype="float64").sum() + np.matmul(x, x, dtype="float64").sum()
    y.backward()
    ones = onp.ones((2, 2))
    want = onp.exp(xn) + ones @ xn.T + xn.T @ ones  # d sum(x @ x) / dx
    assert x.grad.dtype == onp.float32
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)

    class Twice(gluon.HybridBlock):
        def forward(self, v):
            return np.multiply(v, 2, dtype="float64")

    net = Twice()
    net.hybridize()
    for scale in (1, 3):
        out = net(np.array(xn * scale))
        assert out.dtype == onp.float64
        want = xn.astype(onp.float64) * scale * 2
        onp.testing.assert_allclose(out.asnumpy(), want, rtol=0, atol=0)


@pytest.mark.parametrize("scalar, dtype, casting", [
    (1.5, "int64", "same_kind"), (1.5, "int64", "unsafe"), (1.5, "float32", "same_kind"),
    (2, "int8", "same_kind"), (1 + 2j, "float64", "same_kind"), (1.5, "bool", "same_kind"),
    (1.5, "float16", "safe"), (1 + 2j, "complex64", "same_kind")])
def test_python_scalar_kinds_under_dtype_and_casting_as_numpy(scalar, dtype, casting):
    # NEP 50: a Python float / complex is weak in value but keeps its kind, so dtype= of a
    # lower kind is refused unless casting='unsafe'
    a = onp.array([1, 2])
    try:
        want = onp.add(a, scalar, dtype=dtype, casting=casting)
    except TypeError:
        with pytest.raises(TypeError):
            np.add(np.array(a), scalar, dtype=dtype, casting=casting)
        return
    got = np.add(np.array(a), scalar, dtype=dtype, casting=casting)
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-3)


@pytest.mark.parametrize("name, scalar, dtype", [
    ("equal", 1.5, "bool"), ("less", 1.5, "bool"), ("logical_and", 1.5, "bool"),
    ("add", 1, "bool"), ("add", 1000, "int8"), ("add", -1, "uint8"), ("add", True, "int8")])
def test_python_scalars_with_dtype_follow_numpy(name, scalar, dtype):
    # comparisons with dtype=bool compare with the scalar as it is; a Python int into a bool
    # loop is a TypeError and an int out of the dtype's range an OverflowError, as NumPy's
    a = onp.array([0, 1, 2], dtype=onp.int32)
    try:
        want = getattr(onp, name)(a, scalar, dtype=dtype)
    except (TypeError, OverflowError) as e:
        with pytest.raises(TypeError if isinstance(e, TypeError) else OverflowError):
            getattr(np, name)(np.array(a), scalar, dtype=dtype)
        return
    got = getattr(np, name)(np.array(a), scalar, dtype=dtype)
    assert got.dtype == want.dtype
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_out_of_another_dtype_is_refused_while_autograd_records():
    # the cast into out= is a write autograd cannot see: refused (it silently lost gradients)
    a = np.ones((2, 3))
    a.attach_grad()
    b = np.ones((3, 2))
    out = np.zeros((2, 2), dtype="float64")
    with autograd.record():
        with pytest.raises(NotImplementedError):
            np.matmul(a, b, out=out)
        with pytest.raises(NotImplementedError):
            np.add(a, 1, out=np.zeros((2, 3), dtype="float64"))
    np.matmul(a, b, out=out)  # not recording: fine
    onp.testing.assert_array_equal(out.asnumpy(), onp.full((2, 2), 3.0))
