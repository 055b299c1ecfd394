"""Array manipulation and simple creation (issue 12, first part) against NumPy: values, dtypes,
shapes incl. () and zero-size, views where NumPy gives views, gradients, typed errors."""
import numpy as onp
import pytest

import ndx
from ndx import autograd, np, npx

R = onp.random.default_rng(12)
X = R.standard_normal((2, 3, 4)).astype(onp.float32)
M = R.standard_normal((3, 5)).astype(onp.float32)
V = onp.arange(4, dtype=onp.float32)
S = onp.float32(2.5)
Z = onp.zeros((0, 3), onp.float32)
I8 = R.integers(-5, 5, (4, 3)).astype(onp.int8)


def _nd(v):
    if isinstance(v, onp.ndarray) or isinstance(v, onp.generic):
        return np.array(v)
    if isinstance(v, (list, tuple)) and v and all(isinstance(e, onp.ndarray) for e in v):
        return type(v)(np.array(e) for e in v)
    return v


def _check_vjp(fn):
    """d/dx sum(w * f(x)) for a linear rearrangement f is f's transpose applied to w: the
    weights f places on each element of x, found by running f (checked against NumPy by the
    value tests) on the element numbers 1..size; 0 marks what comes from no element."""
    x = np.array(M)
    x.attach_grad()
    with autograd.record():
        y = fn(x)
    w = onp.arange(1, y.size + 1, dtype=onp.float32).reshape(y.shape)
    with autograd.record():
        loss = np.sum(fn(x) * np.array(w))
    loss.backward()
    ids = fn(np.array(onp.arange(M.size, dtype=onp.float32).reshape(M.shape) + 1)).asnumpy()
    want = onp.zeros(M.size, onp.float32)
    for i, wi in zip(ids.reshape(-1), w.reshape(-1)):
        if i:  # constant padding's zeros come from no element
            want[int(i) - 1] += wi
    onp.testing.assert_array_equal(x.grad.asnumpy(), want.reshape(M.shape))


CASES = [
    ("ravel", (X,), {}), ("ravel", (S,), {}), ("ravel", (Z,), {}),
    ("moveaxis", (X, 0, -1), {}), ("moveaxis", (X, [0, 1], [2, 0]), {}),
    ("rollaxis", (X, 2), {}), ("rollaxis", (X, 0, 3), {}), ("rollaxis", (X, 1, 1), {}),
    ("permute_dims", (X, (2, 0, 1)), {}), ("matrix_transpose", (X,), {}),
    ("atleast_1d", (S,), {}), ("atleast_1d", (X,), {}), ("atleast_2d", (V,), {}),
    ("atleast_2d", (S,), {}), ("atleast_3d", (V,), {}), ("atleast_3d", (M,), {}),
    ("atleast_3d", (S,), {}),
    ("hstack", ([V, V],), {}), ("hstack", ([M, M[:, :2]],), {}), ("vstack", ([V, V],), {}),
    ("vstack", ([M, M[:1]],), {}), ("dstack", ([M, M],), {}), ("dstack", ([V, V],), {}),
    ("column_stack", ([V, V],), {}), ("column_stack", ([M, M[:, :1]],), {}),
    ("concat", ([M, M],), {"axis": 1}), ("concat", ([M, V],), {"axis": None}),
    ("array_split", (V, 3), {}), ("array_split", (M, 2), {"axis": 1}),
    ("array_split", (M, [1, 4]), {"axis": 1}), ("array_split", (V, 6), {}),
    ("hsplit", (M[:, :4], 2), {}), ("hsplit", (V, [1, 3]), {}), ("vsplit", (X[0], 3), {}),
    ("dsplit", (X, 2), {}),
    ("append", (M, M), {}), ("append", (M, M[:1]), {"axis": 0}),
    ("flip", (X,), {}), ("flip", (X, 1), {}), ("flip", (X, (0, 2)), {}), ("flip", (S,), {}),
    ("fliplr", (M,), {}), ("flipud", (V,), {}),
    ("roll", (V, 1), {}), ("roll", (V, -6), {}), ("roll", (M, 2), {}),
    ("roll", (M, (1, -2), (0, 1)), {}), ("roll", (X, 3, 2), {}), ("roll", (Z, 1, 0), {}),
    ("rot90", (M,), {}), ("rot90", (M, 2), {}), ("rot90", (M, 3), {}), ("rot90", (M, -1), {}),
    ("rot90", (X, 1, (1, 2)), {}),
    ("tri", (3,), {}), ("tri", (3, 5, 1), {}), ("tri", (4, 2, -1), {"dtype": "int32"}),
    ("tril", (M,), {}), ("tril", (M, -1), {}), ("triu", (M, 1), {}), ("tril", (X,), {}),
    ("triu", (V,), {}), ("tril", (I8, 1), {}),
    ("diag", (V,), {}), ("diag", (V, 2), {}), ("diag", (V, -1), {}), ("diag", (M,), {}),
    ("diag", (M, 2), {}), ("diagflat", (M[:2, :2],), {}), ("diagflat", (V, -2), {}),
    ("identity", (3,), {}), ("identity", (0,), {"dtype": "int64"}),
    ("meshgrid", (V, M[0]), {}), ("meshgrid", (V, M[0]), {"indexing": "ij"}),
    ("meshgrid", (V, M[0], V[:2]), {}), ("meshgrid", (V, M[0]), {"sparse": True}),
    ("indices", ((2, 3),), {}), ("indices", ((2, 3),), {"sparse": True}),
    ("copy", (M,), {}), ("ascontiguousarray", (M.T,), {}), ("ascontiguousarray", (S,), {}),
    ("empty_like", (M,), {"shape": (0, 2)}),
    ("broadcast_arrays", (V, M[:, :1]), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                         enumerate(CASES)])
def test_matches_numpy(name, args, kwargs):
    want = getattr(onp, name)(*args, **kwargs)
    got = getattr(np, name)(*[_nd(a) for a in args], **kwargs)
    wants = want if isinstance(want, (list, tuple)) else [want]
    gots = got if isinstance(got, (list, tuple)) else [got]
    assert type(got) is not list or isinstance(want, list)
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        w = onp.asarray(w)
        if w.dtype == onp.float64 and name in ("tri", "identity"):
            w = w.astype(onp.float32)  # ndx's default float
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if name != "empty_like":
            onp.testing.assert_array_equal(g.asnumpy(), w)


def test_views_write_through_where_numpy_gives_views():
    for fn in (lambda a: np.moveaxis(a, 0, -1), lambda a: np.flip(a, 1), np.ravel,
               lambda a: np.rot90(a), lambda a: np.unstack(a)[1], np.matrix_transpose,
               lambda a: np.atleast_3d(a), lambda a: np.permute_dims(a, (1, 0))):
        a = np.array(M.copy())
        fn(a)[...] = 7.0
        assert (a.asnumpy() == 7.0).any()


def test_unstack_and_broadcast_shapes():
    got = np.unstack(np.array(X), axis=1)
    assert len(got) == 3
    for i, g in enumerate(got):
        onp.testing.assert_array_equal(g.asnumpy(), X[:, i])
    assert np.broadcast_shapes((2, 1), (3,), ()) == onp.broadcast_shapes((2, 1), (3,), ())


@pytest.mark.parametrize("args", [(1, 1000, 4), (2.0, 3.0, 5), (1, 1000, 4, False),
                                  (-1, -16, 5)])
def test_geomspace_and_logspace(args):
    g = np.geomspace(*args)
    w = onp.geomspace(*args)
    assert g.dtype == onp.float32
    onp.testing.assert_allclose(g.asnumpy(), w, rtol=1e-6)
    exps = (args[0] / 4, args[1] / 400, args[2])  # exponents whose powers fit in float32
    g = np.logspace(*exps, base=2.0)
    onp.testing.assert_allclose(g.asnumpy(), onp.logspace(*exps, base=2.0), rtol=1e-6)


F64 = onp.float64


@pytest.mark.parametrize("fn,args,kwargs", [
    ("linspace", ([0.0, 1.0], 5.0, 4), {"axis": 1}),
    ("linspace", ([[0.0], [1.0]], [2.0, 3.0, 4.0], 3), {"axis": -1, "endpoint": False}),
    ("linspace", (onp.array([0.0, 2.0]), onp.array([1.0, -3.0]), 6), {}),
    ("linspace", ([-3, 2], 5, 7), {"dtype": "int32"}),  # floored, as NumPy 2
    ("linspace", ([1.0, 1.0], [1.0, 2.0], 4), {}),  # a zero step beside a nonzero one
    ("linspace", ([0.0, 1.0], 5.0, 0), {"axis": 1}),
    ("linspace", ([0.0, 1.0], 5.0, 1), {}),
    ("logspace", ([0.0, 1.0], 3.0, 4), {"axis": 1}),
    ("logspace", ([0.0, 1.0], [2.0, 3.0], 3), {"base": [2.0, 3.0], "axis": -1}),
    ("logspace", (onp.array([0.0, 1.0]), 2.0, 3), {"base": 2.0}),
    ("geomspace", ([1.0, -2.0], [100.0, -8.0], 3), {"axis": 1}),
    ("geomspace", ([[1.0], [2.0]], [10.0, 20.0, 30.0], 4), {"axis": -1, "endpoint": False}),
    ("geomspace", (onp.array([1.0, 3.0]), 27.0, 3), {}),
])
def test_linspace_family_with_array_endpoints_and_axis(fn, args, kwargs):
    # NumPy's: endpoints broadcast, the samples along `axis`. float64 where an endpoint is a
    # float64 array, else ndx's default float32 (NumPy: float64).
    want = getattr(onp, fn)(*args, **kwargs)
    got = getattr(np, fn)(*args, **kwargs)
    f64 = any(isinstance(a, onp.ndarray) and a.dtype == F64 for a in args)
    assert got.shape == want.shape
    assert got.dtype == (want.dtype if "dtype" in kwargs or f64 else onp.float32)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6 if f64 else 2e-6)


@pytest.mark.parametrize("args,kwargs", [((0, 1, 5), {}), ((2, -4, 4), {"endpoint": False}),
                                         ((0, 1, 1), {}), ((0, 1, 0), {}),
                                         (([0, 1], [2, 5], 3), {})])
def test_linspace_retstep_is_numpys(args, kwargs):
    got, step = np.linspace(*args, retstep=True, **kwargs)
    want, want_step = onp.linspace(*args, retstep=True, **kwargs)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    onp.testing.assert_allclose(onp.asarray(step.asnumpy() if hasattr(step, "asnumpy")
                                            else step), want_step, rtol=1e-12)
    assert np.linspace(*args, retstep=False, **kwargs).shape == want.shape


def test_linspace_family_bad_inputs():
    with pytest.raises(ValueError, match="do not broadcast"):
        np.linspace([0, 1], [1, 2, 3], 3)
    with pytest.raises(ValueError, match="non-negative"):
        np.linspace([0, 1], 2, -1)
    with pytest.raises(TypeError, match="retstep"):
        np.linspace(0, 1, 5, True, "float64")  # dtype where NumPy has retstep
    with pytest.raises(ndx.AxisError):
        np.linspace(0, 1, 5, axis=1)
    with pytest.raises(ndx.AxisError):
        np.logspace([0.0, 1.0], 2.0, 3, axis=2)
    with pytest.raises(ValueError, match="cannot include zero"):
        np.geomspace([1.0, 0.0], 3.0, 3)
    with pytest.raises(TypeError, match="linspace.*floored"):  # NumPy: floor's TypeError
        np.linspace(0, 1j, 3, dtype="int32")


def test_logspace_dtype_counts_a_double_base_array():
    base = onp.array([[2.0], [3.0]])
    want = onp.logspace(0, 1, 3, base=base)
    got = np.logspace(0, 1, 3, base=base)
    assert got.dtype == want.dtype == onp.float64
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    assert np.logspace(0, 1, 3, base=[2.0, 3.0], axis=-1).dtype == onp.float32  # a list: weak
    # a base of more dimensions than the endpoints: more sequences (NumPy's ndmin)
    want = onp.logspace(0, [1.0, 2.0], 4, base=onp.array([[2.0], [3.0], [4.0]]), axis=1)
    got = np.logspace(0, [1.0, 2.0], 4, base=onp.array([[2.0], [3.0], [4.0]]), axis=1)
    assert got.shape == want.shape == (3, 4, 2)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    with pytest.raises(ValueError, match="logspace.*broadcast"):
        np.logspace([0, 1], [1, 2, 3], 3, base=[2.0, 3.0])


@pytest.mark.parametrize("fn,args,kwargs", [
    ("linspace", (0, 1 + 1j, 5), {}),
    ("linspace", (1j, 2, 3), {"dtype": "complex64"}),
    ("linspace", (0, 1, 3), {"dtype": "complex128"}),
    ("linspace", (onp.array([1j, 2]), 5, 4), {"axis": 1}),
    ("logspace", (0, 1j, 4), {}),
    ("logspace", (0, 2, 3), {"base": 1j}),  # whole exponents multiply: exactly 1, 1j, -1
    ("geomspace", (1j, 100j, 3), {}),
    ("geomspace", (1, 1j, 5), {}),
    ("geomspace", (onp.array([1 + 1j, -2]), onp.array([10j, 8]), 4), {"axis": 1}),
    ("geomspace", (-1.0, 1.0, 3), {}),  # different signs: NaN between the endpoints
    ("geomspace", ([1.0, -1.0], 3.0, 4), {}),
])
def test_linspace_family_complex_and_mixed_signs(fn, args, kwargs):
    # NumPy's values; the dtype ndx's: complex64 / float32 unless an endpoint is a double
    # array or dtype is given (NumPy: complex128 / float64 from Python scalars).
    want = getattr(onp, fn)(*args, **kwargs)
    got = getattr(np, fn)(*args, **kwargs)
    wide = any(isinstance(a, onp.ndarray) and a.dtype.itemsize >= 8 for a in args)
    default = onp.complex64 if want.dtype.kind == "c" else onp.float32
    assert got.shape == want.shape
    assert got.dtype == (want.dtype if "dtype" in kwargs or wide else default)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12 if got.dtype.itemsize == 16
                                else 2e-6, atol=1e-6)


@pytest.mark.parametrize("name,fn", [
    ("flip", lambda x: np.flip(x, 1)), ("roll", lambda x: np.roll(x, 2, 1)),
    ("rot90", lambda x: np.rot90(x)), ("tril", lambda x: np.tril(x, -1)),
    ("triu", lambda x: np.triu(x)), ("moveaxis", lambda x: np.moveaxis(x, 0, 1)),
    ("hstack", lambda x: np.hstack([x, x])), ("column_stack", lambda x: np.column_stack([x])),
    ("array_split", lambda x: np.array_split(x, 2, axis=1)[1]), ("copy", np.copy),
    ("diag", lambda x: np.diag(np.diag(x))),
])
def test_gradients_against_a_hand_computed_vector_jacobian(name, fn):
    _check_vjp(fn)


@pytest.mark.parametrize("call,exc", [
    (lambda: np.moveaxis(np.ones((2, 3)), 0, 5), ValueError),
    (lambda: np.moveaxis(np.ones((2, 3)), [0, 1], [0]), ValueError),
    (lambda: np.moveaxis(np.ones((2, 3)), [0, 0], [0, 1]), ValueError),
    (lambda: np.matrix_transpose(np.ones(3)), ValueError),
    (lambda: np.hstack(np.ones(3)), TypeError),
    (lambda: np.vstack([]), ValueError),
    (lambda: np.array_split(np.ones(3), 0), ValueError),
    (lambda: np.array_split(np.ones(3), 2**63 - 1), ValueError),
    (lambda: np.hsplit(np.ones((2, 0, 3)), 2**100), ValueError),
    (lambda: np.hsplit(np.ones(5), 2), ValueError),
    (lambda: np.vsplit(np.ones(4), 2), ValueError),
    (lambda: np.dsplit(np.ones((2, 2)), 2), ValueError),
    (lambda: np.fliplr(np.ones(3)), ValueError),
    (lambda: np.flip(np.ones(3), 1), ValueError),
    (lambda: np.roll(np.ones((2, 2)), (1, 2, 3), (0, 1)), ValueError),
    (lambda: np.roll(np.ones(3), 1.5), TypeError),
    (lambda: np.rot90(np.ones((2, 2)), 1, (0, 0)), ValueError),
    (lambda: np.rot90(np.ones((2, 2)), 1, (0,)), ValueError),
    (lambda: np.tri(-1), ValueError),
    (lambda: np.tril(np.array(1.0)), ValueError),
    (lambda: np.diag(np.ones((2, 2, 2))), ValueError),
    (lambda: np.meshgrid(np.ones(2), indexing="xz"), ValueError),
    (lambda: np.geomspace(0, 1), ValueError),
    (lambda: np.broadcast_arrays(np.ones(2), np.ones(3)), ValueError),
])
def test_bad_inputs_are_typed_errors(call, exc):
    with pytest.raises(exc):
        call()


IDX = onp.array([[2, 0, 1, 1, 0]], onp.int64)  # along axis 0 of M (3 rows), broadcast rows
CASES2 = [
    ("tile", (V, 2), {}), ("tile", (M, (2, 1)), {}), ("tile", (V, (2, 1, 3)), {}),
    ("tile", (S, 3), {}), ("tile", (X, (1, 2)), {}), ("tile", (Z, (2, 2)), {}),
    ("tile", (I8, 0), {}),
    ("take_along_axis", (M, IDX, 0), {}),
    ("take_along_axis", (M, onp.argsort(M, axis=1), 1), {}),
    ("take_along_axis", (X, onp.argsort(X, axis=-1)[..., :2], -1), {}),
    ("take_along_axis", (M, onp.array([3, 0, -1]), None), {}),
    ("unravel_index", (onp.array([5, 7, 0]), (3, 4)), {}),
    ("unravel_index", (onp.array([5, 7]), (3, 4)), {"order": "F"}),
    ("unravel_index", (11, (3, 4)), {}),
    ("ravel_multi_index", ((onp.array([1, 2]), onp.array([1, 3])), (3, 4)), {}),
    ("ravel_multi_index", ((onp.array([4, -1]), onp.array([1, 7])), (3, 4)), {"mode": "wrap"}),
    ("ravel_multi_index", ((onp.array([4, -1]), onp.array([1, 7])), (3, 4)), {"mode": "clip"}),
    ("ravel_multi_index", ((onp.array([1, 2]), onp.array([1, 3])), (3, 4)), {"order": "F"}),
    ("ix_", (onp.array([0, 2]), onp.array([1, 3, 4])), {}),
    ("ix_", (onp.array([True, False, True]), onp.array([1])), {}),
    ("tril_indices", (3,), {}), ("tril_indices", (3, 1, 4), {}), ("triu_indices", (4, -1), {}),
    ("triu_indices", (3, 1, 5), {}), ("tril_indices_from", (M,), {}),
    ("triu_indices_from", (M, 2), {}),
    ("diag_indices", (3,), {}), ("diag_indices", (2, 3), {}),
    ("diag_indices_from", (onp.ones((3, 3, 3)),), {}),
    ("vander", (onp.array([1, 2, 3]),), {}), ("vander", (onp.array([1, 2, 3]), 2, True), {}),
    ("vander", (onp.array([], onp.int64),), {}),
    ("trim_zeros", (onp.array([0, 0, 1, 2, 0, 3, 0]),), {}),
    ("trim_zeros", (onp.array([0, 0, 1, 2, 0]), "f"), {}),
    ("trim_zeros", (onp.array([0.0, 0.0]),), {}),
    ("delete", (V, 1), {}), ("delete", (M, [0, 2], 1), {}), ("delete", (M, slice(0, 2), 0), {}),
    ("delete", (M, onp.array([True, False, True]), 0), {}), ("delete", (V, -1), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES2, ids=[f"{c[0]}-{i}" for i, c in
                                                          enumerate(CASES2)])
def test_more_routines_match_numpy(name, args, kwargs):
    want = getattr(onp, name)(*args, **kwargs)
    got = getattr(np, name)(*[_nd(a) if not isinstance(a, tuple) or name != "ravel_multi_index"
                              else tuple(np.array(e) for e in a) for a in args], **kwargs)
    wants = want if isinstance(want, tuple) else [want]
    gots = got if isinstance(got, tuple) else [got]
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        w = onp.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        onp.testing.assert_array_equal(g.asnumpy(), w)


def test_vander_of_floats_keeps_the_float_dtype():
    x = onp.array([0.5, 2.0, -1.0], onp.float32)
    got = np.vander(np.array(x), 4)
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), onp.vander(x, 4), rtol=1e-6)


@pytest.mark.parametrize("name", ["hanning", "hamming", "blackman", "bartlett"])
@pytest.mark.parametrize("m", [0, 1, 2, 5, 12])
def test_windows_in_float32(name, m):
    got = getattr(np, name)(m)
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), getattr(onp, name)(m), atol=1e-7)


@pytest.mark.parametrize("name,args", [
    ("put_along_axis", (IDX, 9.0, 0)), ("put_along_axis", (onp.array([[0], [4], [2]]), -1.0, 1)),
    ("put_along_axis", (onp.array([1, 14]), 5.0, None)),
    ("fill_diagonal", (3.0,)), ("fill_diagonal", ([1.0, 2.0],)),
    ("place", (M > 0, [10.0, 20.0])), ("putmask", (M > 0, [10.0, 20.0, 30.0])),
])
def test_in_place_routines_match_numpy(name, args):
    want = M.copy()
    getattr(onp, name)(want, *args)
    for base in (np.array(M), np.array(onp.ascontiguousarray(M.T)).T):  # strided too
        assert getattr(np, name)(base, *[_nd(a) for a in args]) is None
        onp.testing.assert_array_equal(base.asnumpy(), want)


def test_fill_diagonal_wrap_and_cube():
    tall, want = np.zeros((7, 3)), onp.zeros((7, 3), onp.float32)
    np.fill_diagonal(tall, 4.0, wrap=True)
    onp.fill_diagonal(want, 4.0, wrap=True)
    onp.testing.assert_array_equal(tall.asnumpy(), want)
    cube, want = np.zeros((3, 3, 3)), onp.zeros((3, 3, 3), onp.float32)
    np.fill_diagonal(cube, 2.0)
    onp.fill_diagonal(want, 2.0)
    onp.testing.assert_array_equal(cube.asnumpy(), want)


def test_fromfunction_and_frombuffer():
    got = np.fromfunction(lambda i, j: i * 10 + j, (2, 3))
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(got.asnumpy(), onp.fromfunction(lambda i, j: i * 10 + j,
                                                                   (2, 3)))
    raw = onp.arange(6, dtype=onp.int16).tobytes()
    for kwargs in ({"dtype": "int16"}, {"dtype": "int16", "count": 2, "offset": 4}):
        onp.testing.assert_array_equal(np.frombuffer(raw, **kwargs).asnumpy(),
                                       onp.frombuffer(raw, **kwargs))
    assert np.frombuffer(onp.ones(2).tobytes()).dtype == onp.float64


@pytest.mark.parametrize("name,fn", [
    ("tile", lambda x: np.tile(x, (2, 3))),
    ("take_along_axis", lambda x: np.take_along_axis(x, np.array(IDX), 0)),
    ("npi_take_repeats", lambda x: ndx.nd._npi_take(x, np.array([[2, 0], [2, -1]]), axis=1,
                                                    mode="wrap")),
    ("delete", lambda x: np.delete(x, [0, 3], 1)),
])
def test_gradients_of_more_rearrangements(name, fn):
    _check_vjp(fn)


@pytest.mark.parametrize("call,exc", [
    (lambda: np.tile(np.ones(2), -1), ValueError),
    (lambda: np.take_along_axis(np.ones((2, 2)), np.array([0]), 0), ValueError),
    (lambda: np.take_along_axis(np.ones((2, 2)), np.array([[2]]), 0), IndexError),
    (lambda: np.take_along_axis(np.ones((2, 2)), np.array([[0.5]]), 0), IndexError),
    (lambda: np.unravel_index(np.array([12]), (3, 4)), ValueError),
    (lambda: np.unravel_index(np.array([1.5]), (3, 4)), TypeError),
    (lambda: np.ravel_multi_index((np.array([3]), np.array([0])), (3, 4)), ValueError),
    (lambda: np.ravel_multi_index((np.array([0]),), (3, 4)), ValueError),
    (lambda: np.ix_(np.ones((2, 2))), ValueError),
    (lambda: np.tril_indices_from(np.ones(3)), ValueError),
    (lambda: np.diag_indices_from(np.ones((2, 3))), ValueError),
    (lambda: np.fill_diagonal(np.ones(3), 1.0), ValueError),
    (lambda: np.fill_diagonal(np.ones((2, 3, 3)), 1.0), ValueError),
    (lambda: np.vander(np.ones((2, 2))), ValueError),
    (lambda: np.trim_zeros(np.ones(3), "x"), ValueError),
    (lambda: np.trim_zeros(np.ones(3), None), TypeError),
    (lambda: np.frombuffer(np.ones((2, 3)).T), ValueError),
    (lambda: np.delete(np.ones(3), 3), IndexError),
    (lambda: np.delete(np.ones(3), [True]), ValueError),
    (lambda: np.place(np.ones(3), np.array([True, False]), 1.0), ValueError),
    (lambda: np.place(np.ones(3), np.array([True, False, True]), []), ValueError),
    (lambda: np.putmask(np.ones(3), np.array([True]), 1.0), ValueError),
    (lambda: np.put_along_axis(onp.ones(3), np.array([0]), 1.0, 0), TypeError),
])
def test_more_bad_inputs_are_typed_errors(call, exc):
    with pytest.raises(exc):
        call()


PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean",
             "linear_ramp"]
PAD_ARRAYS = {"f32-1d": onp.arange(1, 6, dtype=onp.float32),
              "i32-2d": onp.arange(12, dtype=onp.int32).reshape(3, 4) - 5,
              "one": onp.array([2.5], onp.float32), "empty-axis": onp.zeros((2, 0), onp.float32)}


@pytest.mark.parametrize("mode", PAD_MODES)
@pytest.mark.parametrize("arr", list(PAD_ARRAYS), ids=str)
@pytest.mark.parametrize("pad_width", [2, (1, 3), 7, "wide", 0], ids=str)
def test_pad_matches_numpy(mode, arr, pad_width):
    x = PAD_ARRAYS[arr]
    if pad_width == "wide":  # wider than the axis: reflect / symmetric / wrap go in chunks
        pad_width = ((0, 1), (2, 9)) if x.ndim == 2 else (9, 12)
    try:
        want = onp.pad(x, pad_width, mode=mode)
    except ValueError:
        with pytest.raises(ValueError):
            np.pad(np.array(x), pad_width, mode=mode)
        return
    got = np.pad(np.array(x), pad_width, mode=mode)
    assert got.shape == want.shape and got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_pad_values_keywords():
    x = PAD_ARRAYS["i32-2d"]
    for kwargs in ({"constant_values": (7, -9)}, {"constant_values": ((1, 2), (3, 4))}):
        onp.testing.assert_array_equal(np.pad(np.array(x), 1, **kwargs).asnumpy(),
                                       onp.pad(x, 1, **kwargs))
    f = PAD_ARRAYS["f32-1d"]
    kwargs = {"mode": "linear_ramp", "end_values": (5, -4)}
    onp.testing.assert_allclose(np.pad(np.array(f), (2, 3), **kwargs).asnumpy(),
                                onp.pad(f, (2, 3), **kwargs), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "int64", "complex128"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_take_along_axis_one_pass_kernel_matches_numpy(dtype, index_dtype):
    """_npi_take_along_axis (indices of arr's shape outside the axis, on the CPU): every axis
    of a 3-d array, negative indices, more or fewer picks than the axis holds, rows split
    over threads; out-of-range indices are IndexErrors naming the index and the axis."""
    rng = onp.random.default_rng(9)
    x = (rng.standard_normal((4, 5, 6)) * 40).astype(dtype)
    for axis in (0, 1, 2, -1):
        n = x.shape[axis]
        for picks in (1, n, 2 * n + 1):
            shape = list(x.shape)
            shape[axis] = picks
            idx = rng.integers(-n, n, shape).astype(index_dtype)
            got = np.take_along_axis(np.array(x), np.array(idx), axis=axis)
            onp.testing.assert_array_equal(got.asnumpy(), onp.take_along_axis(x, idx, axis))
    big = rng.standard_normal((700, 64)).astype(dtype)
    idx = rng.integers(-64, 64, (700, 100)).astype(index_dtype)
    for threads in (1, 2):
        npx.set_num_threads(threads)
        try:
            got = np.take_along_axis(np.array(big), np.array(idx), axis=1)
        finally:
            npx.set_num_threads(None)
        onp.testing.assert_array_equal(got.asnumpy(), onp.take_along_axis(big, idx, 1))
    for bad in (6, -7):
        idx = onp.zeros((4, 5, 3), index_dtype)
        idx[3, 4, 2] = bad
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis 2"):
            np.take_along_axis(np.array(x), np.array(idx), axis=2)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32",
                                   "float64", "complex64"])
def test_pad_one_pass_kernel_matches_numpy(mode, dtype):
    """_npi_pad (np.pad outside autograd, on the CPU): corners of 3-d arrays with a different
    width per side, widths past the axis length, a transposed (strided) input, a large array
    split over threads, and fills of each kind."""
    rng = onp.random.default_rng(5)
    x = (rng.standard_normal((3, 4, 5)) * 50).astype(dtype)
    if dtype == "int64":
        x[0, 0, 0] = 2**62 + 1  # not a double: copied as bytes
    fills = {"constant_values": 7} if mode == "constant" else {}
    for arr, widths in [(x, ((1, 2), (0, 3), (4, 1))), (x, ((5, 0), (9, 8), (2, 11))),
                        (x.transpose(2, 0, 1), 2), (x[:, ::2], ((0, 0), (1, 0), (0, 2))),
                        (x[0, 0], (3, 0)), (x[0, 0, :1].reshape(()), 2)]:
        got = np.pad(np.array(arr), widths, mode=mode, **fills)
        want = onp.pad(arr, widths, mode=mode, **fills)
        assert got.dtype == want.dtype
        onp.testing.assert_array_equal(got.asnumpy(), want)
    big = (rng.standard_normal((300, 500)) * 50).astype(dtype)
    for threads in (1, 2):
        npx.set_num_threads(threads)
        try:
            got = np.pad(np.array(big), ((3, 2), (16, 16)), mode=mode, **fills)
        finally:
            npx.set_num_threads(None)
        onp.testing.assert_array_equal(got.asnumpy(), onp.pad(big, ((3, 2), (16, 16)),
                                                             mode=mode, **fills))


def test_pad_and_take_along_axis_gradients_in_a_hybridized_block():
    """Traced into a graph the ops run with their backward ops; the gradient of
    sum(w * f(x)) adds each weight back where its element came from (np.add.at)."""
    from ndx import gluon
    rng = onp.random.default_rng(3)
    x0 = rng.standard_normal((3, 5)).astype(onp.float32)
    idx = rng.integers(-5, 5, (3, 7))
    w_pad = rng.standard_normal((3 + 1 + 2, 5 + 4 + 3)).astype(onp.float32)
    w_take = rng.standard_normal((3, 7)).astype(onp.float32)

    class Net(gluon.HybridBlock):
        def forward(self, x, i):
            padded = np.pad(x, ((1, 2), (4, 3)), mode="reflect")
            return (padded * np.array(w_pad)).sum() + (
                np.take_along_axis(x, i, axis=1) * np.array(w_take)).sum()

    # NumPy's reference: each output position's source, found by padding the positions.
    pos = onp.arange(x0.size).reshape(x0.shape)
    want = onp.zeros(x0.size, onp.float64)
    onp.add.at(want, onp.pad(pos, ((1, 2), (4, 3)), mode="reflect").ravel(), w_pad.ravel())
    onp.add.at(want, onp.take_along_axis(pos, idx, axis=1).ravel(), w_take.ravel())
    for hybrid in (False, True):
        net = Net()
        if hybrid:
            net.hybridize()
        x = np.array(x0)
        x.attach_grad()
        with autograd.record():
            y = net(x, np.array(idx))
        y.backward()
        onp.testing.assert_allclose(x.grad.asnumpy(), want.reshape(x0.shape), rtol=1e-5,
                                    atol=1e-5)


@pytest.mark.parametrize("params, exc", [
    ({"pad_width": (1, 1)}, ValueError),                   # 2 widths for 2 axes: 4 needed
    ({"pad_width": (1, -1, 0, 0)}, ValueError),
    ({"pad_width": (0, 0, 1, 0), "mode": "edge"}, ValueError),  # an empty axis to extend
    ({"pad_width": (0, 0, 0, 0), "mode": "mean"}, ValueError),
    ({"pad_width": (0, 0, 2**50, 0)}, ValueError),
])
def test_pad_op_rejects_bad_params(params, exc):
    from ndx._registry import internal_function
    with pytest.raises(exc, match="pad"):
        internal_function("_npi_pad")(np.ones((2, 0)), **params)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_pad_gradient_adds_the_copies_back(mode):
    _check_vjp(lambda x: np.pad(x, ((1, 2), (3, 7)), mode=mode))


@pytest.mark.parametrize("call,exc", [
    (lambda: np.pad(np.ones(3), -1), ValueError),
    (lambda: np.pad(np.ones(3), 1.5), TypeError),
    (lambda: np.pad(np.ones((2, 2)), ((1, 2, 3),)), ValueError),
    (lambda: np.pad(np.ones(3), 1, mode="bogus"), ValueError),
    (lambda: np.pad(np.ones(3), 1, mode="edge", constant_values=1), ValueError),
    (lambda: np.pad(np.ones(3), 1, mode="minimum", stat_length=0), ValueError),
    (lambda: np.pad(np.ones(3), 1, mode="mean", stat_length=-1), ValueError),
    (lambda: np.pad(np.ones(3), 1, mode="mean", stat_length=1.5), TypeError),
    (lambda: np.pad(np.ones(3), 1, mode="reflect", reflect_type="odd-ish"), ValueError),
    (lambda: np.pad(np.ones((2, 0)), 1, mode="edge"), ValueError),
])
def test_pad_bad_inputs(call, exc):
    with pytest.raises(exc):
        call()


# ---------------------------------------------------------------- creation keywords, views
@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like"])
@pytest.mark.parametrize("kw", [{}, {"dtype": "int32"}, {"shape": (4,)}, {"shape": 3},
                                {"dtype": "bool", "shape": (2, 0)}, {"device": "cpu"}])
def test_like_functions_take_dtype_shape_device(name, kw):
    got = getattr(np, name)(np.array(M), **kw)
    want = getattr(onp, name)(M, **kw)
    assert got.shape == want.shape and got.dtype == want.dtype
    if name != "empty_like":
        onp.testing.assert_array_equal(got.asnumpy(), want)


def test_full_like_and_like_errors():
    for kw in [{}, {"dtype": "int64"}, {"shape": (2, 2)}, {"dtype": "float64", "shape": ()}]:
        got, want = np.full_like(np.array(M), 2.5, **kw), onp.full_like(M, 2.5, **kw)
        assert got.shape == want.shape and got.dtype == want.dtype
        onp.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(NotImplementedError, match="order"):
        np.zeros_like(np.array(M), order="F")
    with pytest.raises(ValueError, match="order"):
        np.ones_like(np.array(M), order="Q")


def test_array_copy_and_ndmin():
    a = np.array(M)
    assert np.array([1, 2], ndmin=3).shape == (1, 1, 2)
    assert np.array(a, ndmin=1) is not a and np.array(a, ndmin=4).shape == (1, 1, 3, 5)
    assert np.array(a, copy=False) is a and np.asarray(a, copy=False) is a
    assert np.asarray(a) is a and np.asarray(a, copy=True) is not a
    b = np.asarray(a, copy=True)
    b[...] = 0
    assert a.asnumpy().any()  # a real copy
    for args, kw in [((a,), {"dtype": "float64", "copy": False}), (([1.0, 2.0],), {"copy": False})]:
        with pytest.raises(ValueError, match="avoid copy"):
            np.asarray(*args, **kw)  # NumPy 2's copy=False never copies
    got = np.array([np.array(1.0), 2, np.array([3.0])[0]])
    onp.testing.assert_array_equal(got.asnumpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("view, shape", [
    (lambda a: a.transpose(0, 2, 1), (2, 4, 3)),   # same shape: a view of the transpose
    (lambda a: a.transpose(0, 2, 1), (8, 3)),      # the leading axes merge: a view
    (lambda a: a.transpose(0, 2, 1), (2, 12)),     # the swapped axes merge: a copy
    (lambda a: a[:, ::2], (2, 2, 2, 2)),           # the last axis splits: a view
    (lambda a: a[:, ::2], (4, 4)),                 # strided rows merge: a copy
    (lambda a: a[::-1], (2, 12)),                  # negative strides keep a view
    (lambda a: a[::-1], (6, 4)),
    (lambda a: a[:, :1], (2, 4)),                  # length-1 axes carry no layout
    (lambda a: a[:, :1], (1, 2, 1, 4, 1)),
    (lambda a: a[1, ::-1, 1:3], (6,)),
    (lambda a: a[1, ::-1, 1:3], (3, 1, 2)),
    (lambda a: a[..., 1], (-1,)),
    (lambda a: a[:0], (0, 4)),
])
def test_reshape_of_strided_arrays_is_a_view_exactly_where_numpy_gives_one(view, shape):
    ref_base, base = X.copy(), np.array(X)
    ref, got = view(ref_base).reshape(shape), view(base).reshape(shape)
    assert got.shape == ref.shape
    onp.testing.assert_array_equal(got.asnumpy(), ref)
    assert np.shares_memory(got, base) == onp.shares_memory(ref, ref_base)
    # writes through the result reach the base exactly where NumPy's do
    ref[...] = onp.arange(ref.size, dtype=onp.float32).reshape(ref.shape) + 100
    got[...] = np.arange(got.size, dtype="float32").reshape(got.shape) + 100
    onp.testing.assert_array_equal(base.asnumpy(), ref_base)


def test_function_forms_return_views_as_numpy():
    for fn in (np.transpose, lambda a: np.swapaxes(a, 0, 1), lambda a: a.swapaxes(1, 0),
               lambda a: np.expand_dims(a, (0, 3)), lambda a: np.reshape(a, (5, 3)),
               lambda a: np.squeeze(a[None], 0), lambda a: a[None, :, None].squeeze(),
               lambda a: np.reshape(a, shape=-1, copy=False)):
        a = np.array(M.copy())
        v = fn(a)
        assert np.may_share_memory(v, a)
        v[...] = 7.0
        assert (a.asnumpy() == 7.0).all()
    a = np.array(M)
    c = np.reshape(a, (5, 3), copy=True)
    assert not np.may_share_memory(c, a)
    with pytest.raises(ValueError, match="copy=False"):
        np.reshape(a.T, -1, copy=False)
    onp.testing.assert_array_equal(np.expand_dims(np.array(X), (-1, 0)).asnumpy(),
                                   onp.expand_dims(X, (-1, 0)))
    onp.testing.assert_array_equal(np.squeeze(np.array(X[:1, :, None]), (0, 2)).asnumpy(),
                                   onp.squeeze(X[:1, :, None], (0, 2)))
    with pytest.raises(ValueError, match="squeeze"):
        np.squeeze(np.array(X), 1)
    with pytest.raises(onp.exceptions.AxisError):
        np.expand_dims(np.array(X), 5)
    with pytest.raises(ValueError, match="repeated"):
        np.expand_dims(np.array(X), (1, 1))
    assert not np.may_share_memory(np.array(M)[:1], np.array(M)[1:])
    _check_vjp(lambda x: np.expand_dims(np.swapaxes(x, 0, 1), 0))


@pytest.mark.parametrize("obj, values, axis", [
    (1, 5, None), (1, 5, 0), (1, [7, 8, 9, 1, 2], 0), (1, 5, 1), ([1], [[1], [2], [3]], 1),
    (1, [1, 2, 3], 1), ([2, 2], [6, 7], None), (slice(None), 0, 1), ([0, -1, 5], [10, 20, 30], 1),
    ([], [], 1), (-1, 9, 0), (onp.array([3, 0]), 4.5, 1)])
def test_insert_matches_numpy(obj, values, axis):
    got = np.insert(np.array(M), obj, values, axis=axis)
    want = onp.insert(M, obj, values, axis=axis)
    assert got.shape == want.shape and got.dtype == want.dtype
    onp.testing.assert_array_equal(got.asnumpy(), want)
    _check_vjp(lambda x: np.insert(x, obj, 0.0, axis=axis))


def test_insert_errors():
    with pytest.raises(IndexError, match="out of bounds"):
        np.insert(np.array(M), 9, 1.0, axis=1)
    with pytest.raises(TypeError, match="integers"):  # one index: NumPy's TypeError
        np.insert(np.array(M), [0.5], 1.0)
    with pytest.raises(IndexError, match="integers"):
        np.insert(np.array(M), [0.5, 1.5], 1.0)
    with pytest.raises(ValueError, match="broadcast"):
        np.insert(np.array(M), 1, [1.0, 2.0], axis=1)


def test_kaiser_and_i0():
    for m, beta in [(1, 5), (2, 0), (12, 14), (51, 8.6), (10, 40), (0, 3)]:
        got = np.kaiser(m, beta)
        assert got.dtype == onp.float32
        onp.testing.assert_allclose(got.asnumpy(), onp.kaiser(m, beta), rtol=1e-6, atol=1e-7)
    # Up to the largest float64 (2 pi x overflowed there: inf / inf gave NaN; NumPy: inf).
    x = onp.array([0.0, 0.5, 1, 5, 29.9, 30.1, 35, 100, 700, -3, 1e300, 1.7976931348623157e308])
    with onp.errstate(over="ignore"):
        want = onp.i0(x)
    onp.testing.assert_allclose(np.i0(np.array(x, dtype="float64")).asnumpy(), want,
                                rtol=1e-12)
    assert np.i0(np.array([1, 2])).dtype == onp.float32


ISSUE_12_NAMES = """empty_like full_like identity logspace geomspace meshgrid indices tri tril triu
tril_indices triu_indices tril_indices_from triu_indices_from diag_indices diag_indices_from diag
diagflat diagonal fill_diagonal vander hanning hamming blackman bartlett kaiser copy asarray
ascontiguousarray frombuffer fromfunction array zeros_like ones_like ravel moveaxis rollaxis
permute_dims matrix_transpose atleast_1d atleast_2d atleast_3d broadcast_arrays broadcast_shapes
hstack vstack dstack column_stack row_stack concat unstack array_split hsplit vsplit dsplit tile
repeat pad flip fliplr flipud roll rot90 insert delete append resize trim_zeros squeeze
expand_dims reshape take take_along_axis put put_along_axis place putmask unravel_index
ravel_multi_index ix_ tensordot inner outer vdot kron cross trace einsum matmul polyval
interp""".split()
ISSUE_12_NPX = "reshape index_add index_update gather_nd scatter_nd boolean_mask batch_dot".split()


def test_issue_12_namespace():
    from ndx import npx
    assert [n for n in ISSUE_12_NAMES if not callable(getattr(np, n, None))] == []
    assert [n for n in ISSUE_12_NPX if not callable(getattr(npx, n, None))] == []
    for n in ISSUE_12_NAMES:
        assert hasattr(onp, n), n  # the names are NumPy's


def test_take_along_axis_broadcasts_both_ways():
    a = onp.arange(12.0, dtype=onp.float32).reshape(1, 3, 4)
    i = onp.array([0, 3, 1, 2]).reshape(2, 1, 2)  # arr broadcasts along 0, indices along 1
    onp.testing.assert_array_equal(np.take_along_axis(np.array(a), np.array(i), 2).asnumpy(),
                                   onp.take_along_axis(a, i, 2))
    b = onp.arange(24.0, dtype=onp.float32).reshape(2, 3, 4)
    j = onp.array([-3, 2, 0, -1, 1, 2, -2, 0]).reshape(2, 1, 4)
    onp.testing.assert_array_equal(np.take_along_axis(np.array(b), np.array(j), 1).asnumpy(),
                                   onp.take_along_axis(b, j, 1))
    k = onp.array([1, 0, 2], dtype=onp.int32).reshape(1, 3, 1)
    onp.testing.assert_array_equal(np.take_along_axis(np.array(b), np.array(k), 2).asnumpy(),
                                   onp.take_along_axis(b, k, 2))


@pytest.mark.parametrize("shape, codes, reverse, want", [
    ((2, 3, 4), (-2, -1), False, (2, 12)),
    ((2, 3, 4), (-1, -2), False, (8, 3)),  # -1 stands for dim 0; -2 copies dim 1 (3)
    ((2, 1, 4), (-2, -3, -2), False, (2, 4)),
    ((2, 3, 4), (-4,), False, (2, 3, 4)),
    ((2, 3, 4), (-5, -2), False, (6, 4)),
    ((6, 4), (-6, 2, -1, -2), False, (2, 3, 4)),
    ((2, 3, 4), (-1, 4), True, (6, 4)),
    ((10, 5, 4), (-1, 0), True, None),
])
def test_npx_reshape_op_keeps_the_codes_in_traced_graphs(shape, codes, reverse, want):
    # the _npx_reshape op (what a hybridized npx.reshape records) against the imperative
    # npx.reshape and the shapes worked out by hand
    from ndx import gluon, npx

    class Block(gluon.HybridBlock):
        def forward(self, x):
            return npx.reshape(x, codes, reverse=reverse)

    x = np.arange(int(onp.prod(shape))).reshape(shape)
    block = Block()
    block.hybridize()
    if want is None:
        with pytest.raises(ValueError, match="reshape"):
            npx.reshape(x, codes, reverse=reverse)
        with pytest.raises(ValueError, match="reshape"):
            block(x)
        return
    assert npx.reshape(x, codes, reverse=reverse).shape == want
    out = block(x)
    assert out.shape == want
    assert onp.array_equal(out.asnumpy(), onp.arange(int(onp.prod(shape))).reshape(want))


@pytest.mark.parametrize("kwargs", [{"mode": "reflect", "reflect_type": "odd"},
                                    {"mode": "symmetric", "reflect_type": "odd"},
                                    {"mode": "mean", "stat_length": (2, 1)},
                                    {"mode": "maximum", "stat_length": 2}])
def test_pad_odd_reflection_and_stat_length_gradients_are_numeric(kwargs):
    # These modes are compositions of differentiable ops; their gradient against central
    # differences of the NumPy reference, for widths past the axis length.
    rng = onp.random.default_rng(3)
    x = rng.standard_normal((3, 4))
    width = ((1, 5), (6, 2))
    w = rng.standard_normal(onp.pad(x, width, **kwargs).shape)
    a = np.array(x)
    a.attach_grad()
    with autograd.record():
        loss = np.sum(np.pad(a, width, **kwargs) * np.array(w))
    loss.backward()
    eps, want = 1e-6, onp.zeros_like(x)
    for i in onp.ndindex(x.shape):
        d = onp.zeros_like(x)
        d[i] = eps
        want[i] = (onp.sum(onp.pad(x + d, width, **kwargs) * w) -
                   onp.sum(onp.pad(x - d, width, **kwargs) * w)) / (2 * eps)
    onp.testing.assert_allclose(a.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


_ORDER_VIEWS = {"contiguous": lambda a: a, "transposed": lambda a: a.T,
                "swapped-strided": lambda a: a.swapaxes(0, 2)[:, ::2],
                "reversed": lambda a: a[:, ::-1],
                "reversed-permuted": lambda a: a[::-1].transpose(1, 2, 0),
                "sliced": lambda a: a[:, 1:, ::2], "1d": lambda a: a[0, 0],
                "0d": lambda a: a[0, 0, 0]}


@pytest.mark.parametrize("view", list(_ORDER_VIEWS))
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_ravel_and_reshape_read_in_numpys_orders(view, order):
    # 'A' and 'K' read transposed views differently from 'C' (they were taken as 'C'), 'F'
    # was NotImplementedError. Against NumPy on the same views.
    x = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)
    xv, nv = _ORDER_VIEWS[view](x), _ORDER_VIEWS[view](np.array(x))
    onp.testing.assert_array_equal(np.ravel(nv, order=order).asnumpy(), onp.ravel(xv, order))
    onp.testing.assert_array_equal(nv.ravel(order).asnumpy(), xv.ravel(order))
    flat = nv.flatten(order)
    onp.testing.assert_array_equal(flat.asnumpy(), xv.flatten(order))
    onp.testing.assert_array_equal(nv.flatten(order=order).asnumpy(), xv.flatten(order=order))
    if flat.size:  # flatten copies: a write to it leaves the array alone
        before = nv.asnumpy().copy()
        flat[0] = -1
        onp.testing.assert_array_equal(nv.asnumpy(), before)
    if order != "K" and xv.size == 24:
        for shape in [(4, 6), (2, -1, 3), 24]:
            onp.testing.assert_array_equal(np.reshape(nv, shape, order=order).asnumpy(),
                                           onp.reshape(xv, shape, order=order))
            # the method, with the shape as one argument or spread (was NotImplementedError)
            onp.testing.assert_array_equal(nv.reshape(shape, order=order).asnumpy(),
                                           xv.reshape(shape, order=order))
        onp.testing.assert_array_equal(nv.reshape(4, 6, order=order).asnumpy(),
                                       xv.reshape(4, 6, order=order))


def test_order_arguments_that_numpy_refuses():
    with pytest.raises(ValueError, match="order"):
        np.reshape(np.ones(6), (2, 3), order="K")  # NumPy: not permitted for reshaping
    with pytest.raises(ValueError, match="order"):
        np.ravel(np.ones(6), order="Z")
    with pytest.raises(ValueError, match="flatten"):
        np.ones(6).flatten("Z")
    with pytest.raises(ValueError, match="order"):
        np.ones(6).reshape(2, 3, order="K")
    for call in (lambda a: a.flatten(1), lambda a: a.ravel(2.0), lambda a: a.reshape(6, order=0)):
        with pytest.raises(TypeError, match="order"):  # NumPy: TypeError, order must be str
            call(np.ones(6))
    with pytest.raises(TypeError):
        np.ones(6).reshape(2, 3, colour="red")
    x = onp.arange(6.0).reshape(2, 3).T  # None is NumPy's C
    nx = np.array(onp.arange(6.0).reshape(2, 3)).T  # the same transposed view
    onp.testing.assert_array_equal(nx.ravel(None).asnumpy(), x.ravel(None))
    onp.testing.assert_array_equal(nx.flatten(None).asnumpy(), x.flatten(None))
    onp.testing.assert_array_equal(nx.reshape(6, order=None).asnumpy(), x.reshape(6, order=None))


def test_flatten_and_reshape_methods_in_f_order_carry_gradients():
    # d/da of sum(a.flatten('F') * w) is w placed back in F order (hand computed), and the
    # same for reshape(order='F').
    x = onp.arange(6.0).reshape(2, 3)
    w = onp.arange(1.0, 7.0)
    a = np.array(x)
    a.attach_grad()
    with autograd.record():
        y = (a.flatten("F") * np.array(w)).sum() + \
            (a.reshape(3, 2, order="F") * np.array(w.reshape(3, 2))).sum()
    y.backward()
    want = w.reshape(2, 3, order="F") + w.reshape(3, 2).reshape(2, 3, order="F")
    onp.testing.assert_allclose(a.grad.asnumpy(), want)


def test_ndim_shape_size_of_arrays_and_host_data():
    x = onp.ones((2, 3, 4))
    a = np.array(x)
    for host in (x, [[1, 2], [3, 4]], 5.0):
        assert np.ndim(host) == onp.ndim(host)
        assert np.shape(host) == onp.shape(host)
        assert np.size(host) == onp.size(host)
    assert (np.ndim(a), np.shape(a), np.size(a)) == (3, (2, 3, 4), 24)
    for axis in (0, -1, (0, 2)):
        assert np.size(a, axis) == onp.size(x, axis)
    with pytest.raises(ndx.AxisError):
        np.size(a, 3)
    with pytest.raises(ValueError, match="repeated"):
        np.size(a, (1, 1))


def test_copyto_follows_numpys_casting_broadcasting_and_where():
    x = onp.arange(12.0).reshape(3, 4)
    dst = np.zeros((3, 4))
    np.copyto(dst, np.array(x[0]))  # broadcast along rows
    onp.testing.assert_array_equal(dst.asnumpy(), onp.broadcast_to(x[0], (3, 4)))
    mask = (x % 3 == 0)
    np.copyto(dst, -1, where=np.array(mask))
    want = onp.broadcast_to(x[0], (3, 4)).astype(onp.float32).copy()
    onp.copyto(want, -1, where=mask)
    onp.testing.assert_array_equal(dst.asnumpy(), want)
    ints = np.zeros(3, dtype="int8")
    np.copyto(ints, 7)  # a Python int fits an int8 array
    np.copyto(ints, np.array([1.7, 2.2, 3.9]), casting="unsafe")
    onp.testing.assert_array_equal(ints.asnumpy(), [1, 2, 3])
    # The errors NumPy raises for the same calls.
    for args, kwargs, exc in [((ints, 1.5), {}, TypeError), ((ints, 300), {}, OverflowError),
                              ((ints, np.array([1.0, 2, 3])), {}, TypeError),
                              ((np.zeros(3, dtype="bool"), 1), {}, TypeError),
                              ((ints, np.array([1, 2], dtype="int8")), {}, ValueError),
                              ((ints, 1), {"where": np.array([1, 0, 1])}, TypeError),
                              ((ints, 1), {"casting": "sometimes"}, ValueError)]:
        host = [a.asnumpy() if isinstance(a, np.ndarray) else a for a in args]
        host_kwargs = {k: v.asnumpy() if isinstance(v, np.ndarray) else v
                       for k, v in kwargs.items()}
        with pytest.raises(exc):
            onp.copyto(*host, **host_kwargs)
        with pytest.raises(exc):
            np.copyto(*args, **kwargs)
    with pytest.raises(TypeError, match="dst"):
        np.copyto([0, 0], np.ones(2))
    wide = np.zeros(3, dtype="float64")
    np.copyto(wide, [0.1, 0.2, 0.3])  # a list is float64 data, as NumPy reads it
    onp.testing.assert_array_equal(wide.asnumpy(), [0.1, 0.2, 0.3])
    with pytest.raises(TypeError):  # ... so 'safe' refuses it into float32, as NumPy does
        np.copyto(np.zeros(1), [0.5], casting="safe")
    with pytest.raises(TypeError):
        onp.copyto(onp.zeros(1, onp.float32), [0.5], casting="safe")
    onp.testing.assert_array_equal(ints.asnumpy(), [1, 2, 3])  # nothing written by the errors


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "int64", "bool"])
@pytest.mark.parametrize("endpoint", [True, False])
def test_long_linspace_and_arange_fill_in_threads_as_numpy(dtype, endpoint):
    """Creation ops fill blocks of their output in threads (from 32768 elements); every
    element is computed from its index alone, so results match NumPy at any length."""
    for start, stop, num in ((0.0, 1.0, 100001), (-3.5, 7.25, 70001), (2.0, 90.0, 65536)):
        onp.testing.assert_array_equal(
            np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype).asnumpy(),
            onp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))
    if dtype != "bool":  # (int8 values wrap, as NumPy's do; bool takes at most 2 values)
        onp.testing.assert_array_equal(np.arange(-5, 200000, 3, dtype=dtype).asnumpy(),
                                       onp.arange(-5, 200000, 3, dtype=dtype))
    onp.testing.assert_array_equal(np.eye(300, 500, k=-7, dtype=dtype).asnumpy(),
                                   onp.eye(300, 500, k=-7, dtype=dtype))


@pytest.mark.parametrize("args, dtype", [
    ((250, 260), "uint8"), ((120, 130), "int8"), ((300,), "uint8"), ((5, 0, -2), "uint8"),
    ((0, 5, 0.5), "int32"),  # NumPy's documented ten zeros: int(0.5) - int(0) is the step
    ((0, 5, 1.5), "int32"), ((0.5, 300.5, 100), "int8"), ((250, 260, 1.0), "uint8"),
    ((-30000, 100000, 7), "int16"), ((2**31 - 3, 2**31 + 3), "int32"),
    ((2**15 - 2, 2**15 + 2), "uint16"), ((-7.9, 3.2, 2.5), "int64"), ((0, 2), "bool"),
    ((1, 3), "bool"), ((7,), "int8")])
def test_integer_arange_takes_numpy_steps_and_wraps(args, dtype):
    """NumPy's integer arange: int(start) and int(start + step) are its first two values, and
    the rest repeat their difference in the dtype's own (wrapping) arithmetic."""
    ours, ref = np.arange(*args, dtype=dtype), onp.arange(*args, dtype=dtype)
    assert ours.dtype == ref.dtype
    onp.testing.assert_array_equal(ours.asnumpy(), ref)


@pytest.mark.parametrize("args, dtype", [
    ((127, 130), "int8"), ((-1.5, 3), "uint8"), ((2**40, 2**40 + 5), "int32"),
    ((1e10, 1e10 + 3), "int32"), ((0, -5, -2), "uint8"), ((-3, 3), "uint8")])
def test_integer_arange_beyond_its_dtype_raises_overflow_as_numpy(args, dtype):
    with pytest.raises(OverflowError):
        onp.arange(*args, dtype=dtype)
    with pytest.raises(OverflowError, match="out of bounds"):
        np.arange(*args, dtype=dtype)


def test_bool_arange_of_more_than_two_values_is_a_type_error_as_in_numpy():
    with pytest.raises(TypeError):
        onp.arange(0, 10, 3, dtype=bool)
    with pytest.raises(TypeError, match="at most length 2"):
        np.arange(0, 10, 3, dtype=bool)


def _float_arange_cases():
    """Hand-picked ranges (the first six once differed from NumPy in their last bits) and a
    seeded sweep of starts, steps of both signs and lengths up to 3000."""
    cases = [(0.1, 1, 0.1), (0, 10, 0.3), (-5.5, 7, 0.77), (1e3, 1e3 + 50, 0.013),
             (0, 1, 1 / 3), (3.3, 1e5, 7.1), (5, -3, -0.7), (2.5,), (1e-3, 2e-3, 1e-5)]
    rng = onp.random.default_rng(60)
    for _ in range(40):
        start = float(rng.uniform(-1e3, 1e3)) * 10.0 ** int(rng.integers(-3, 3))
        step = float(rng.uniform(1e-3, 10)) * 10.0 ** int(rng.integers(-2, 3))
        step = step if rng.random() < 0.8 else -step
        cases.append((start, start + step * int(rng.integers(0, 3000)) + 0.5 * step, step))
    return cases


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_arange_is_numpys_values_bit_for_bit(dtype):
    """NumPy fills a float arange from its first two values in the dtype (start and
    start + step), the rest start + i * (their difference), in float32 arithmetic for
    float16 / float32: the same values to the last bit, not start + i * step in double."""
    for args in _float_arange_cases():
        with onp.errstate(over="ignore"):
            ref = onp.arange(*args, dtype=dtype)
        ours = np.arange(*args, dtype=dtype).asnumpy()
        assert ours.dtype == ref.dtype and ours.shape == ref.shape, args
        onp.testing.assert_array_equal(ours, ref, err_msg=str(args), strict=True)


def _half_ties_and_neighbours():
    """Doubles at, and a float64 ulp either side of, the midpoints between neighbouring
    float16 values (where rounding twice through float32 goes wrong), plus a spread of
    values across float16's range, its subnormals and beyond its largest value."""
    halves = onp.arange(0x0000, 0x7C00, dtype=onp.uint16).view(onp.float16).astype(onp.float64)
    mids = halves[:-1] + onp.diff(halves) / 2  # exact in float64
    near = onp.concatenate([mids, onp.nextafter(mids, onp.inf), onp.nextafter(mids, -onp.inf)])
    rng = onp.random.default_rng(61)
    spread = rng.uniform(-1, 1, 20000) * 10.0 ** rng.integers(-9, 6, 20000)
    return onp.concatenate([near, -near, spread, [0.0, -0.0, 65519.99, 65520.0, 1e300, -1e300,
                                                 onp.inf, -onp.inf, 2.0 ** -25, -2.0 ** -25]])


def test_float64_to_float16_rounds_once_as_numpy():
    """astype, linspace and full give a float64 value's nearest float16, as NumPy does; going
    through the nearest float32 first put 50 in a million values of [-100, 100] an ulp off."""
    x = _half_ties_and_neighbours()
    with onp.errstate(over="ignore"):
        ref = x.astype(onp.float16)
    onp.testing.assert_array_equal(np.array(x).astype("float16").asnumpy(), ref, strict=True)
    for start, stop, num in [(79.41832721422085, 46.79817668133953, 176),
                             (-72.50287279272595, -93.38334744369614, 200), (0, 1, 1001)]:
        onp.testing.assert_array_equal(
            np.linspace(start, stop, num, endpoint=False, dtype="float16").asnumpy(),
            onp.linspace(start, stop, num, endpoint=False, dtype="float16"), strict=True)
    # Just above the tie between 1 and 1 + 2**-10: its nearest float32 is the tie itself.
    above_tie = 1 + 2.0 ** -11 + 2.0 ** -40
    assert onp.float16(above_tie) == 1 + 2.0 ** -10
    assert np.full((3,), above_tie, dtype="float16").asnumpy()[0] == 1 + 2.0 ** -10


def _nearest_bfloat16(x):
    """The bfloat16 nearest each float64 value (ties to even), by rounding the float64
    significand to 8 bits in integer arithmetic (normal values only), as float32."""
    bits = x.view(onp.uint64)
    drop = 52 - 7
    half, mask = onp.uint64(1) << onp.uint64(drop - 1), (onp.uint64(1) << onp.uint64(drop)) - 1
    low = bits & mask
    kept = bits >> onp.uint64(drop)
    up = (low > half) | ((low == half) & (kept & onp.uint64(1)).astype(bool))
    rounded = (kept + up.astype(onp.uint64)) << onp.uint64(drop)
    return rounded.view(onp.float64).astype(onp.float32)  # 8 significant bits: exact


def test_float64_to_bfloat16_rounds_once():
    rng = onp.random.default_rng(62)
    base = rng.uniform(-1, 1, 20000) * 10.0 ** rng.integers(-30, 30, 20000)
    # Values a float64 ulp above and below bfloat16 midpoints, where rounding to float32
    # first lands on the tie and rounds to even the wrong way.
    b = onp.arange(0x3F00, 0x4100, dtype=onp.uint32) << 16
    grid = b.view(onp.float32).astype(onp.float64)
    mids = grid[:-1] + onp.diff(grid) / 2
    x = onp.concatenate([base, onp.nextafter(mids, onp.inf), onp.nextafter(mids, -onp.inf),
                         -onp.nextafter(mids, onp.inf)])
    ours = np.array(x).astype("bfloat16").astype("float32").asnumpy()
    onp.testing.assert_array_equal(ours, _nearest_bfloat16(x), strict=True)


@pytest.mark.parametrize("threads", [1, 2])
def test_packbits_and_unpackbits_of_large_arrays_are_numpys_on_any_thread_count(threads):
    # Sizes past the threads' grain, lanes of a length that is not a multiple of 8 (so the
    # chunks and the vector loop meet partial bytes), every element width.
    rng = onp.random.default_rng(21)
    cases = [((1 << 20) + 13, None), ((700, 1001), -1), ((1001, 300), 0), ((40, 77, 9), 1)]
    npx.set_num_threads(threads)
    try:
        for dtype in ("bool", "uint8", "int16", "int32", "int64"):
            for shape, axis in cases:
                x = (rng.integers(-3, 4, shape) * (rng.random(shape) < 0.5)).astype(dtype)
                for order in ("big", "little"):
                    want = onp.packbits(x, axis=axis, bitorder=order)
                    got = np.packbits(np.array(x), axis=axis, bitorder=order).asnumpy()
                    onp.testing.assert_array_equal(got, want)
                    assert got.dtype == onp.uint8
                    if dtype == "bool":
                        back = np.unpackbits(np.array(want), axis=axis, bitorder=order,
                                             count=-3).asnumpy()
                        onp.testing.assert_array_equal(
                            back, onp.unpackbits(want, axis=axis, bitorder=order, count=-3))
    finally:
        npx.set_num_threads(None)


def test_unpackbits_pads_an_empty_input_with_zeros():
    # NumPy 2.4 returns uninitialized bytes here; count says the bits past the input are zero.
    got = np.unpackbits(np.zeros((2, 0, 3), dtype="uint8"), axis=1, count=4).asnumpy()
    onp.testing.assert_array_equal(got, onp.zeros((2, 4, 3), dtype=onp.uint8))
    assert np.unpackbits(np.zeros(0, dtype="uint8"), count=20).asnumpy().tolist() == [0] * 20


GRID_KEYS = [slice(0, 5), slice(1, 10, 3), slice(-1, 1, 5j), slice(0, 1, 0.25), slice(5, 0, -1),
             slice(3, 0), (slice(0, 3), slice(0, 2)), (slice(0, 1, 3j), slice(0, 2)),
             (slice(0, 5, 2), slice(1, 2, 0.25)), (slice(0, 0), slice(0, 3)),
             (slice(-2, 2, 4j),) * 3]


@pytest.mark.parametrize("key", GRID_KEYS, ids=str)
def test_mgrid_and_ogrid_are_numpys(key):
    for ours, theirs in ((np.mgrid, onp.mgrid), (np.ogrid, onp.ogrid)):
        want = theirs[key]
        got = ours[key]
        if isinstance(want, tuple):
            assert isinstance(got, tuple) and len(got) == len(want)
        else:
            got, want = (got,), (want,)
        for g, w in zip(got, want):
            # Integer bounds give int64 as NumPy; float ones ndx's default float (float32).
            assert g.dtype == (onp.int64 if w.dtype.kind == "i" else onp.float32)
            onp.testing.assert_allclose(g.asnumpy(), w, rtol=1e-6, atol=1e-7)
            assert g.shape == w.shape


R_CASES = [
    ("ranges-lists-scalars", lambda m: m.r_[1:4, [5, 6], 7, m.array([8.5])]),
    ("linspace-slice", lambda m: m.r_[-1:1:6j, [0] * 3, 5, 6]),
    ("rows-2d", lambda m: m.r_["0,2", [1, 2], [3, 4]]),
    ("axis1", lambda m: m.r_["1", m.array([[1, 2]]), m.array([[3, 4]])]),
    ("trans1d-0", lambda m: m.r_["-1,2,0", [1, 2, 3], [4, 5, 6]]),
    ("trans1d-0-axis1", lambda m: m.r_["1,2,0", [1, 2, 3], [4, 5, 6]]),
    ("ndmin3-trans1d-1", lambda m: m.r_["0,3,1", [1, 2, 3], [4, 5, 6]]),
    ("weak-scalar", lambda m: m.r_[m.array([1], dtype="int8"), 2]),
    ("c-columns", lambda m: m.c_[[1, 2], [3, 4]]),
    ("c-rows-and-scalars", lambda m: m.c_[m.array([[1, 2, 3]]), 0, 0, m.array([[4, 5, 6]])]),
    ("c-ranges", lambda m: m.c_[1:4, 4:7]),
]


@pytest.mark.parametrize("make", [c[1] for c in R_CASES], ids=[c[0] for c in R_CASES])
def test_r_and_c_concatenate_as_numpys(make):
    want = make(onp)
    got = make(np)
    assert got.shape == want.shape
    # The kind is NumPy's; a float's width follows ndx's float32 default (ranges and lists
    # of floats are float32, promoted with int64 to float64 as NumPy 2 promotes).
    assert got.dtype == want.dtype if want.dtype.kind != "f" else got.dtype.kind == "f"
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("expr, exc", [
    ("m.r_[()]", ValueError), ("m.r_[[1], 'x']", ValueError), ("m.r_['a,b', [1]]", ValueError),
    ("m.mgrid['a':3]", TypeError)])
def test_index_tricks_refuse_what_numpy_refuses(expr, exc):
    with pytest.raises(exc):
        eval(expr, {"m": onp})
    with pytest.raises(exc, match=r"\[(r_|mgrid)\]"):
        eval(expr, {"m": np})


def test_r_matrix_directive_is_not_implemented():
    with pytest.raises(ValueError, match="step must not be zero"):  # NumPy: ZeroDivisionError
        np.mgrid[0:3:0]
    with pytest.raises(NotImplementedError, match="matrix"):
        np.r_["r", [1, 2]]
    assert np.s_[1:2, ::3] == (slice(1, 2), slice(None, None, 3))
    assert np.index_exp[1:2] == (slice(1, 2),)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_apply_along_axis_is_numpys(axis):
    x = onp.random.default_rng(5).standard_normal((3, 4, 5)).astype(onp.float32)
    cases = [(lambda v: v.sum(), lambda v: v.sum(), ()),
             (lambda v: np.diag(v), lambda v: onp.diag(v), ()),  # a 2-d result per slice
             (lambda v, k: np.sort(v)[:k], lambda v, k: onp.sort(v)[:k], (2,))]
    for ours, theirs, args in cases:
        got = np.apply_along_axis(ours, axis, np.array(x), *args)
        want = onp.apply_along_axis(theirs, axis, x, *args)
        assert got.shape == want.shape
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_apply_along_axis_is_differentiable_and_checks_its_input():
    x = onp.random.default_rng(6).standard_normal((3, 4))
    a = np.array(x)
    a.attach_grad()
    with autograd.record():
        y = np.apply_along_axis(lambda v: (v * v).sum(), 1, a).sum()
    y.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), 2 * x, rtol=1e-12)
    with pytest.raises(ndx.AxisError):
        np.apply_along_axis(np.sum, 2, np.ones((2, 2)))
    with pytest.raises(ValueError, match="iteration dimensions are 0"):
        np.apply_along_axis(np.sum, 0, np.ones((2, 0)))
    with pytest.raises(ValueError, match="returned shape"):
        np.apply_along_axis(lambda v: v[:int(v[0])], 1, np.array([[1.0, 1], [2, 2]]))
    with pytest.raises(TypeError, match="callable"):
        np.apply_along_axis(5, 0, np.ones(2))


@pytest.mark.parametrize("axes", [(0, 2), (1,), 0, (-1, 0)])
def test_apply_over_axes_is_numpys(axes):
    x = onp.random.default_rng(7).standard_normal((3, 4, 5))
    got = np.apply_over_axes(np.sum, np.array(x), axes)
    want = onp.apply_over_axes(onp.sum, x, axes)
    assert got.shape == want.shape
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    with pytest.raises(ValueError, match="correct shape"):
        np.apply_over_axes(lambda a, axis: a.sum(axis).sum(), np.ones((2, 2, 2)), 0)


def test_piecewise_is_numpys():
    xv = onp.linspace(-2.5, 2.5, 6)
    x = np.array(xv)
    cases = [
        (([x < 0, x >= 0], [-1, 1]), ([xv < 0, xv >= 0], [-1, 1])),
        (([x < 0, x >= 0], [lambda v: -v, lambda v: v]),
         ([xv < 0, xv >= 0], [lambda v: -v, lambda v: v])),
        (([x < -1, x > 1], [lambda v: v * 0 + 9, 3, 7]),  # the last one: neither condition
         ([xv < -1, xv > 1], [lambda v: v * 0 + 9, 3, 7])),
        ((x > 0, [lambda v, k: v ** k, 0], 2), (xv > 0, [lambda v, k: v ** k, 0], 2)),
    ]
    for ours, theirs in cases:
        got = np.piecewise(x, *ours)
        want = onp.piecewise(xv, *theirs)
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    onp.testing.assert_array_equal(
        np.piecewise(np.array([1, 2, 3]), [[True, False, True]], [lambda v: v * 10]).asnumpy(),
        onp.piecewise(onp.array([1, 2, 3]), [[True, False, True]], [lambda v: v * 10]))
    assert float(np.piecewise(np.array(-3.0), [False, True], [1, 2])) == 2.0
    # func is only called on its elements: log never sees the negatives.
    onp.testing.assert_allclose(
        np.piecewise(x, [x > 0], [np.log, 0]).asnumpy(),
        onp.piecewise(xv, [xv > 0], [onp.log, 0]), rtol=1e-12)
    with pytest.raises(ValueError, match="functions are expected"):
        np.piecewise(x, [x < 0], [1, 2, 3])


def test_mxnet_numpy_names_numpy_2_dropped():
    # MXNet's mxnet.numpy had these (NumPy 1 names): MXNet code keeps running.
    x = onp.random.default_rng(8).standard_normal((4, 3))
    onp.testing.assert_array_equal(np.msort(np.array(x)).asnumpy(), onp.sort(x, axis=0))
    assert bool(np.alltrue(np.array([True, True]))) and not bool(np.alltrue(np.array([1, 0])))
    onp.testing.assert_array_equal(np.alltrue(np.array([[1, 1], [0, 1]]), axis=0).asnumpy(),
                                   [False, True])
    onp.testing.assert_allclose(np.trapz(np.array(x), dx=0.5, axis=0).asnumpy(),
                                onp.trapezoid(x, dx=0.5, axis=0), rtol=1e-12)
    assert np.dtype("float32") == onp.float32 and np.ones(2).dtype == np.dtype("float32")


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "float16", "float32", "float64"])
def test_pad_linear_ramp_is_numpys_to_the_last_bit(dtype):
    # NumPy's ramp is linspace(end, edge, width, endpoint=False) in float64: start + i * step
    # (start + i / width * delta when any step is 0), floored for integers. A float formula
    # 4 ULP off once floored -1 to -2.
    rng = onp.random.default_rng(3)
    for shape in ((1,), (5,), (3, 4), (2, 3, 2)):
        if dtype.startswith("float"):
            x = (rng.standard_normal(shape) * 20).astype(dtype)
        else:
            x = rng.integers(0 if dtype == "uint8" else -50, 50, shape).astype(dtype)
        for width in (5, (3, 2), 1, 7):
            for end in (0, 5, 2.5) + (() if dtype == "uint8" else ((-3, 7),)):
                want = onp.pad(x, width, mode="linear_ramp", end_values=end)
                got = np.pad(np.array(x), width, mode="linear_ramp", end_values=end).asnumpy()
                assert got.dtype == want.dtype
                onp.testing.assert_array_equal(got, want)
    onp.testing.assert_array_equal(
        np.pad(np.array([-5]), (5, 0), mode="linear_ramp", end_values=5).asnumpy(),
        [5, 3, 1, -1, -3, -5])


def test_roll_adds_the_shifts_of_a_repeated_axis_as_numpy():
    x = onp.arange(12).reshape(3, 4)
    for shift, axis in (((1, -3), (0, 0)), ((1, 2, 5), (1, 0, 1)), (2, (0, 1, 0))):
        onp.testing.assert_array_equal(np.roll(np.array(x), shift, axis=axis).asnumpy(),
                                       onp.roll(x, shift, axis=axis))


def test_insert_with_a_boolean_mask_inserts_before_each_true_as_numpy():
    for mask in ([True, False, True, False], [True, False], [True, False, True, False, True]):
        onp.testing.assert_array_equal(
            np.insert(np.arange(4), np.array(mask), 9).asnumpy(),
            onp.insert(onp.arange(4), onp.array(mask), 9))
    with pytest.raises(ValueError, match="one dimensional"):
        np.insert(np.arange(4), np.array([[True, False]]), 9)


def test_setitem_refuses_the_python_scalars_numpy_refuses():
    for value, exc in ((float("nan"), ValueError), (float("inf"), OverflowError),
                       (-float("inf"), OverflowError), (1 + 2j, TypeError)):
        with pytest.raises(exc):
            onp.zeros(3, dtype=onp.int64)[0] = value
        a = np.zeros(3, dtype="int64")
        with pytest.raises(exc, match="setitem"):
            a[0] = value
        assert a.asnumpy().tolist() == [0, 0, 0]  # nothing written
    with pytest.raises(TypeError):
        onp.zeros(2)[0] = 1 + 2j
    with pytest.raises(TypeError, match="complex"):
        np.zeros(2)[0] = 1 + 2j
    c = np.zeros(2, dtype="complex64")
    c[0] = 1 + 2j
    assert c.asnumpy().tolist() == [1 + 2j, 0]
    b = np.zeros(3, dtype="int64")
    b[0], b[1] = 2.7, True  # finite floats truncate, as NumPy
    assert b.asnumpy().tolist() == [2, 1, 0]


@pytest.mark.parametrize("args", [(onp.float64(5),), (1, onp.array(3.5)),
                                  (0.5, 4, onp.float64(0.5)), (onp.array(2.0), 6.0)])
def test_arange_keeps_float64_of_numpy_float64_arguments(args):
    # NumPy's arange computes float64 for float arguments; ndx's Python floats give the default
    # float32, but a float64 NumPy scalar or 0-d array says float64 as in NumPy
    want = onp.arange(*args)
    got = np.arange(*args)
    assert got.dtype == want.dtype == onp.float64
    onp.testing.assert_array_equal(got.asnumpy(), want)
