"""ndx.numpy.polynomial against numpy.polynomial (the reference): the module functions of
every basis, the series classes, printing and errors."""
import pickle
import warnings

import numpy as onp
import pytest

from ndx import np

P, Q = np.polynomial, onp.polynomial
MODULES = [("polynomial", "poly", "Polynomial"), ("chebyshev", "cheb", "Chebyshev"),
           ("legendre", "leg", "Legendre"), ("hermite", "herm", "Hermite"),
           ("hermite_e", "herme", "HermiteE"), ("laguerre", "lag", "Laguerre")]
IDS = [m[1] for m in MODULES]
RNG = onp.random.default_rng(1234)
C1, C2, X = RNG.normal(size=5), RNG.normal(size=3), RNG.normal(size=7)


def host(a):
    return a.asnumpy() if isinstance(a, np.ndarray) else onp.asarray(a)


def same(got, want, tol=1e-10):
    """got (ndx) equals want (NumPy) in type, dtype, shape and value."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, tol)
        return
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        assert got == pytest.approx(want, rel=tol, abs=tol)
        return
    assert isinstance(got, np.ndarray), type(got)
    want = onp.asarray(want)
    g = host(got)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    assert g.shape == want.shape, (g.shape, want.shape)
    onp.testing.assert_allclose(g, want, rtol=tol, atol=tol)


def fns(pre_mod, suffix):
    mod, pre = pre_mod
    return getattr(getattr(P, mod), pre + suffix), getattr(getattr(Q, mod), pre + suffix)


@pytest.fixture(params=MODULES, ids=IDS)
def basis(request):
    return request.param[:2]


ORTHOGONAL = [m for m in MODULES if m[1] != "poly"]  # (the power basis has no conversions,
# quadrature or weight function)


@pytest.fixture(params=ORTHOGONAL, ids=[i for m, i in zip(MODULES, IDS) if m[1] != "poly"])
def orthogonal_basis(request):
    return request.param[:2]


# ------------------------------------------------------------------ module functions
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_arithmetic(basis, name):
    ours, ref = fns(basis, name)
    same(ours(C1.tolist(), C2.tolist()), ref(C1, C2))
    same(ours(C2.tolist(), C1.tolist()), ref(C2, C1))
    same(ours([1, 2, 0, 0], [3]), ref([1, 2, 0, 0], [3]))  # ints: float64, trimmed


def test_mulx_pow_line(basis):
    for name, args in [("mulx", (C1.tolist(),)), ("mulx", ([0],)), ("pow", (C2.tolist(), 3)),
                       ("pow", (C2.tolist(), 0)), ("line", (1., 2.)), ("line", (3, 0)),
                       ("fromroots", (C2.tolist(),)), ("fromroots", ([],)),
                       ("companion", (C1.tolist(),)), ("companion", ([1., 2.],))]:
        ours, ref = fns(basis, name)
        same(ours(*args), ref(*args))


def test_complex_series(basis):
    c = (C1 + 1j * C2.sum()).tolist()
    for name in ("mul", "add"):
        ours, ref = fns(basis, name)
        same(ours(c, C2.tolist()), ref(c, C2))
    ours, ref = fns(basis, "val")
    same(ours(X.tolist(), c), ref(X, c))


def test_val_shapes(basis):
    ours, ref = fns(basis, "val")
    c2d = RNG.normal(size=(4, 3))
    x2d = X[:6].reshape(2, 3)
    same(ours(x2d.tolist(), c2d.tolist()), ref(x2d, c2d))
    same(ours(np.asarray(x2d[0]), np.asarray(c2d), tensor=False), ref(x2d[0], c2d, tensor=False))
    got = ours(0.5, C1.tolist())
    assert isinstance(got, np.ndarray) and got.ndim == 0
    assert float(got) == pytest.approx(float(ref(0.5, C1)), rel=1e-12)
    same(ours(X.tolist(), [1, 2]), ref(X, [1, 2]))  # integer coefficients


def test_val_nd_grid_vander_nd(basis):
    mod, pre = basis
    c = RNG.normal(size=(3, 2, 2))
    x, y, z = X[:4], X[1:5], X[2:6]
    a, b = fns(basis, "val2d")
    same(a(x.tolist(), y.tolist(), c[:, :, 0].tolist()), b(x, y, c[:, :, 0]))
    a, b = fns(basis, "val3d")
    same(a(x.tolist(), y.tolist(), z.tolist(), c), b(x, y, z, c))
    a, b = fns(basis, "grid2d")
    same(a(x.tolist(), y[:2].tolist(), c[:, :, 0]), b(x, y[:2], c[:, :, 0]))
    a, b = fns(basis, "grid3d")
    same(a(x[:2], y[:3], z.tolist(), c), b(x[:2], y[:3], z, c))
    a, b = fns(basis, "vander2d")
    same(a(x.tolist(), y.tolist(), [2, 3]), b(x, y, [2, 3]))
    a, b = fns(basis, "vander3d")
    same(a(x.tolist(), y.tolist(), z.tolist(), [1, 2, 1]), b(x, y, z, [1, 2, 1]))
    a, b = fns(basis, "val2d")
    with pytest.raises(ValueError):
        b(x, y[:2], c[:, :, 0])
    with pytest.raises(ValueError, match=f"{pre}val2d"):
        a(x.tolist(), y[:2].tolist(), c[:, :, 0])


def test_vander(basis):
    ours, ref = fns(basis, "vander")
    same(ours(X.tolist(), 4), ref(X, 4))
    same(ours(X[:6].reshape(2, 3).tolist(), 3), ref(X[:6].reshape(2, 3), 3))
    same(ours([1, 2], 0), ref([1, 2], 0))
    same(ours(np.asarray(X.astype("float32")), 2), ref(X.astype("float32"), 2), 1e-6)
    with pytest.raises(ValueError):
        ref(X, -1)
    with pytest.raises(ValueError, match="vander"):
        ours(X.tolist(), -1)
    with pytest.raises(TypeError):
        ours(X.tolist(), 1.5)


def test_der_int(basis):
    der, rder = fns(basis, "der")
    integ, rinteg = fns(basis, "int")
    same(der(C1.tolist()), rder(C1))
    same(der(C1.tolist(), 3, 0.5), rder(C1, 3, 0.5))
    same(der(C1.tolist(), 9), rder(C1, 9))
    same(der(C1.tolist(), 0), rder(C1, 0))
    c2 = RNG.normal(size=(4, 3))
    same(der(c2, 2, 2.0, axis=1), rder(c2, 2, 2.0, axis=1))
    same(integ(C1.tolist()), rinteg(C1))
    same(integ(C1.tolist(), 2, [1, 2], 0.5, 1.5), rinteg(C1, 2, [1, 2], 0.5, 1.5))
    same(integ(C1.tolist(), 1, 3.0, -1.0), rinteg(C1, 1, 3.0, -1.0))
    same(integ([0], 2, [1, 2]), rinteg([0], 2, [1, 2]))
    same(integ(c2, 1, [1], 0.3, 1.0, axis=-1), rinteg(c2, 1, [1], 0.3, 1.0, axis=-1))
    same(integ([1, 2]), rinteg([1, 2]))
    for fn, ref, bad in [(der, rder, {"m": -1}), (integ, rinteg, {"m": -1}),
                         (integ, rinteg, {"k": [1, 2]}), (integ, rinteg, {"lbnd": [0, 1]}),
                         (integ, rinteg, {"scl": [1, 2]})]:
        with pytest.raises(ValueError):
            ref(C1, **bad)
        with pytest.raises(ValueError, match=basis[1]):
            fn(C1.tolist(), **bad)
    with pytest.raises(TypeError):
        der(C1.tolist(), 1.5)
    with pytest.raises(onp.exceptions.AxisError):
        der(C1.tolist(), axis=1)


def test_roots(basis):
    ours, ref = fns(basis, "roots")
    same(ours(C1.tolist()), ref(C1), 1e-8)
    same(ours([1., 2.]), ref([1., 2.]))
    same(ours([3.]), ref([3.]))
    fr, _ = fns(basis, "fromroots")
    r = onp.array([-0.7, 0.2, 1.3])
    same(ours(fr(r.tolist())), ref(getattr(getattr(Q, basis[0]), basis[1] + "fromroots")(r)),
         1e-8)


def test_fit(basis):
    ours, ref = fns(basis, "fit")
    y = onp.sin(X)
    same(ours(X.tolist(), y.tolist(), 3), ref(X, y, 3), 1e-8)
    same(ours(X.tolist(), y.tolist(), [0, 2, 3]), ref(X, y, [0, 2, 3]), 1e-8)
    w = onp.linspace(0.5, 2, X.size)
    same(ours(X.tolist(), onp.stack([y, y ** 2], 1), 2, w=w.tolist()),
         ref(X, onp.stack([y, y ** 2], 1), 2, w=w), 1e-8)
    c, (res, rank, sv, rcond) = ours(X.tolist(), y.tolist(), 2, full=True)
    rc, (rres, rrank, rsv, rrcond) = ref(X, y, 2, full=True)
    same(c, rc, 1e-8)
    same(res, rres, 1e-8)
    same(sv, rsv, 1e-8)
    assert rank == rrank and rcond == pytest.approx(rrcond)
    for bad, err in [({"deg": -1}, ValueError), ({"deg": 1.5}, TypeError),
                     ({"deg": [[1]]}, TypeError), ({"x": [[1.0]]}, TypeError),
                     ({"x": []}, TypeError), ({"y": [1.0]}, TypeError),
                     ({"w": [1.0, 2.0]}, TypeError)]:
        kw = {"x": X.tolist(), "y": y.tolist(), "deg": 2, **bad}
        with pytest.raises(err):
            ref(**kw)
        with pytest.raises(err, match=basis[1] + "fit"):
            ours(**kw)
    with pytest.warns(onp.exceptions.RankWarning):
        ours([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], 2)


def test_conversions(orthogonal_basis):
    basis = orthogonal_basis
    mod, pre = basis
    for name in (pre + "2poly", "poly2" + pre):
        ours, ref = getattr(getattr(P, mod), name), getattr(getattr(Q, mod), name)
        same(ours(C1.tolist()), ref(C1))
        same(ours([2]), ref([2]))


@pytest.mark.parametrize("deg", [1, 2, 5, 16, 60])
def test_gauss(orthogonal_basis, deg):
    basis = orthogonal_basis
    mod, pre = basis
    ours, ref = fns(basis, "gauss")
    same(ours(deg), ref(deg), 1e-11)
    with pytest.raises(ValueError):
        ours(0)


def test_weight(orthogonal_basis):
    basis = orthogonal_basis
    mod, pre = basis
    ours, ref = fns(basis, "weight")
    x = onp.linspace(0.05, 0.9, 5)
    same(ours(x.tolist()), ref(x))


def test_constants_and_trim(basis):
    mod, pre = basis
    for s in ("zero", "one", "x", "domain"):
        same(getattr(getattr(P, mod), pre + s), getattr(getattr(Q, mod), pre + s))
    ours, ref = fns(basis, "trim")
    same(ours([1, 1e-3, 0, 1e-5], 1e-4), ref([1, 1e-3, 0, 1e-5], 1e-4))
    same(ours([0, 0]), ref([0, 0]))
    with pytest.raises(ValueError):
        ours([1], -1)
    assert sorted(getattr(P, mod).__all__) == sorted(getattr(Q, mod).__all__)


def test_division_by_zero(basis):
    ours, ref = fns(basis, "div")
    with pytest.raises(ZeroDivisionError):
        ref([1.0, 2.0], [0.0])
    with pytest.raises(ZeroDivisionError):
        ours([1.0, 2.0], [0.0])


def test_pow_errors(basis):
    ours, _ = fns(basis, "pow")
    with pytest.raises(ValueError):
        ours([1, 2], -1)
    with pytest.raises(ValueError):
        ours([1, 2], 1.5)
    with pytest.raises(ValueError):
        ours([1, 2], 5, maxpower=4)


# ---------------------------------------------------------------------------- polyutils
def test_polyutils():
    pu, ru = P.polyutils, Q.polyutils
    for got, want in zip(pu.as_series([[1, 2], [3.5]]), ru.as_series([[1, 2], [3.5]])):
        same(got, want)
    same(pu.as_series([[1, 0, 0]])[0], ru.as_series([[1, 0, 0]])[0])
    same(pu.as_series([np.asarray(onp.float32([1, 2]))])[0],
         ru.as_series([onp.float32([1, 2])])[0])
    same(pu.as_series([[1j, 2]])[0], ru.as_series([[1j, 2]])[0])
    for bad in ([[]], [[[1, 2]]]):
        with pytest.raises(ValueError):
            ru.as_series(bad)
        with pytest.raises(ValueError, match="as_series"):
            pu.as_series(bad)
    same(pu.trimseq(np.asarray(onp.array([1., 0., 0.]))), ru.trimseq(onp.array([1., 0., 0.])))
    same(pu.trimcoef([1, 1e-3, 0], 1e-2), ru.trimcoef([1, 1e-3, 0], 1e-2))
    same(pu.getdomain([1, 3, -2]), ru.getdomain([1, 3, -2]))
    same(pu.getdomain([1 + 1j, 3 - 2j]), ru.getdomain([1 + 1j, 3 - 2j]))
    assert pu.mapparms([0, 1], [-1, 1]) == ru.mapparms([0, 1], [-1, 1])
    same(pu.mapdomain([0, 0.5, 1], [0, 1], [-1, 1]), ru.mapdomain([0, 0.5, 1], [0, 1], [-1, 1]))
    assert pu.format_float(onp.float64(1.5)) == ru.format_float(onp.float64(1.5))


# --------------------------------------------------------------------- polynomial extras
def test_polyvalfromroots():
    pm, rm = P.polynomial, Q.polynomial
    r = RNG.normal(size=(3, 2))
    same(pm.polyvalfromroots(X.tolist(), r[:, 0].tolist()), rm.polyvalfromroots(X, r[:, 0]))
    same(pm.polyvalfromroots(X[:2], r, tensor=False), rm.polyvalfromroots(X[:2], r,
                                                                          tensor=False))
    same(pm.polyvalfromroots(X[:4].reshape(2, 2), r), rm.polyvalfromroots(X[:4].reshape(2, 2),
                                                                          r))
    with pytest.raises(ValueError):
        pm.polyvalfromroots(X[:6].reshape(3, 2), r, tensor=False)


def test_chebyshev_extras():
    cm, rm = P.chebyshev, Q.chebyshev
    for n in (1, 4, 7):
        same(cm.chebpts1(n), rm.chebpts1(n))
    for n in (2, 5):
        same(cm.chebpts2(n), rm.chebpts2(n))
    with pytest.raises(ValueError):
        cm.chebpts2(1)
    same(cm.chebinterpolate(np.exp, 6), rm.chebinterpolate(onp.exp, 6))
    same(cm.chebinterpolate(lambda x, a: x * a, 3, (2.0,)),
         rm.chebinterpolate(lambda x, a: x * a, 3, (2.0,)))
    with pytest.raises(TypeError):
        cm.chebinterpolate(np.exp, 1.5)
    with pytest.raises(ValueError):
        cm.chebinterpolate(np.exp, -1)
    got = P.Chebyshev.interpolate(np.sin, 5, domain=[0, 2])
    want = Q.Chebyshev.interpolate(onp.sin, 5, domain=[0, 2])
    same(got.coef, want.coef)
    same(got.domain, want.domain)


# ------------------------------------------------------------------------------ classes
@pytest.fixture(params=MODULES, ids=IDS)
def classes(request):
    return getattr(P, request.param[2]), getattr(Q, request.param[2])


def pair(classes, coef, **kw):
    ours, ref = classes
    return ours(coef, **kw), ref(coef, **kw)


def same_series(got, want, tol=1e-10):
    assert type(got).__name__ == type(want).__name__
    same(got.coef, want.coef, tol)
    same(got.domain, want.domain)
    same(got.window, want.window)
    assert got.symbol == want.symbol


def test_class_basics(classes):
    p, q = pair(classes, [1., 2., 3.], domain=[0, 2])
    same_series(p, q)
    assert repr(p) == repr(q)
    assert str(p) == str(q)
    assert format(p, "ascii") == format(q, "ascii")
    assert p.degree() == q.degree() and len(p) == len(q)
    assert [float(v) for v in p] == [float(v) for v in q]
    same(p(X.tolist()), q(X))
    same(p(np.asarray(X)), q(X))
    assert float(p(0.3)) == pytest.approx(float(q(0.3)), rel=1e-12)
    same_series(p.copy(), q.copy())
    same_series(p.trim(), q.trim())
    same_series(p.truncate(2), q.truncate(2))
    same_series(p.cutdeg(1), q.cutdeg(1))
    assert p.mapparms() == pytest.approx(tuple(float(v) for v in q.mapparms()))
    same_series(p.integ(2, [1, 2], lbnd=0.5), q.integ(2, [1, 2], lbnd=0.5))
    same_series(p.deriv(2), q.deriv(2))
    same(p.roots(), q.roots(), 1e-8)
    same(p.linspace(5), q.linspace(5))
    same(p.linspace(4, domain=[-1, 3]), q.linspace(4, domain=[-1, 3]))
    assert p == p.copy() and p != p.deriv() and not (p == 1)
    assert p.has_samecoef(p.copy()) and p.has_samedomain(p) and p.has_samewindow(p)
    assert p.has_sametype(p) and not p.has_samecoef(p.deriv())
    p2 = pickle.loads(pickle.dumps(p))
    assert p2 == p


def test_class_arithmetic(classes):
    p, q = pair(classes, [1., 2., 3.])
    p2, q2 = pair(classes, [0.5, -1.])
    for op in (lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b,
               lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a + 2,
               lambda a, b: 2 - a, lambda a, b: 3 * a, lambda a, b: a / 2,
               lambda a, b: a ** 3, lambda a, b: -a, lambda a, b: +a, lambda a, b: 5 // b,
               lambda a, b: a * [1, 2]):
        same_series(op(p, p2), op(q, q2))
    (d, m), (rd, rm) = divmod(p, p2), divmod(q, q2)
    same_series(d, rd)
    same_series(m, rm)
    with pytest.raises(TypeError):
        p / p2
    with pytest.raises(TypeError):
        2 / p
    with pytest.raises(ZeroDivisionError):
        p // 0
    with pytest.raises(TypeError):
        p + classes[0]([1.], domain=[0, 5])
    with pytest.raises(ValueError):
        p + classes[0]([1.], symbol="y")
    with pytest.raises(ValueError):
        p ** -1
    other = P.Chebyshev if classes[0] is not P.Chebyshev else P.Legendre
    with pytest.raises(TypeError):
        p + other([1.])


def test_class_constructors(classes):
    ours, ref = classes
    x = onp.linspace(-1, 3, 9)
    y = onp.cos(x)
    same_series(ours.fit(x.tolist(), y.tolist(), 3), ref.fit(x, y, 3), 1e-8)
    same_series(ours.fit(x.tolist(), y.tolist(), 3, domain=[]), ref.fit(x, y, 3, domain=[]),
                1e-8)
    same_series(ours.fit([1., 1., 1.], [1., 2., 3.], 0), ref.fit([1., 1., 1.], [1., 2., 3.], 0))
    got, (res, rank, _, _) = ours.fit(x, y, 2, full=True, w=onp.ones(9))
    want, (rres, rrank, _, _) = ref.fit(x, y, 2, full=True, w=onp.ones(9))
    same_series(got, want, 1e-8)
    same(res, rres, 1e-8)
    assert rank == rrank
    same_series(ours.fromroots([0.5, 1.5]), ref.fromroots([0.5, 1.5]))
    same_series(ours.fromroots([0.5, 1.5], domain=[0, 2]), ref.fromroots([0.5, 1.5],
                                                                         domain=[0, 2]))
    same_series(ours.identity(), ref.identity())
    same_series(ours.identity([0, 4], symbol="t"), ref.identity([0, 4], symbol="t"))
    same_series(ours.basis(3), ref.basis(3))
    same_series(ours.cast(P.Polynomial([1., 2., 3.])), ref.cast(Q.Polynomial([1., 2., 3.])))
    same_series(P.Chebyshev([1., 2., 3.], domain=[0, 1]).convert(kind=ours),
                Q.Chebyshev([1., 2., 3.], domain=[0, 1]).convert(kind=ref))
    same_series(ours([1., 2.]).convert(domain=[0, 3]), ref([1., 2.]).convert(domain=[0, 3]))
    with pytest.raises(ValueError):
        ours.basis(-1)
    with pytest.raises(ValueError):
        ours([1.], domain=[0, 1, 2])
    with pytest.raises(ValueError):
        ours([1.], window=[0])
    with pytest.raises(ValueError):
        ours([1.], symbol="1x")
    with pytest.raises(TypeError):
        ours([1.], symbol=1)
    with pytest.raises(ValueError):
        ours([1., 2.]).truncate(0)


def test_polynomial_printing():
    cases = [([1., 2.], {}), ([1.5, -2., 0., 3.25], {}), ([1., 2., 3.], {"domain": [0, 4]}),
             ([1e-9, 2e10], {}), ([1., 2.], {"symbol": "t", "window": [0, 1]}),
             ([1 + 2j, 3.], {}), (list(range(30)), {}), ([2., 1.], {"domain": [1, 3]})]
    for coef, kw in cases:
        p, q = P.Polynomial(coef, **kw), Q.Polynomial(coef, **kw)
        assert repr(p) == repr(q)
        assert str(p) == str(q)
        assert format(p, "ascii") == format(q, "ascii")
        assert format(p, "unicode") == format(q, "unicode")
    assert str(P.Chebyshev([1., 2., 3.])) == str(Q.Chebyshev([1., 2., 3.]))
    assert str(P.Hermite([1., 2.], domain=[0, 1])) == str(Q.Hermite([1., 2.], domain=[0, 1]))
    assert P.Polynomial([1., 2.])._repr_latex_() == Q.Polynomial([1., 2.])._repr_latex_()
    with pytest.raises(ValueError):
        format(P.Polynomial([1.]), "latex")


def test_printstyle():
    p, q = P.Legendre([1., 2.]), Q.Legendre([1., 2.])
    try:
        P.set_default_printstyle("ascii")
        Q.set_default_printstyle("ascii")
        assert str(p) == str(q) == "1.0 + 2.0 P_1(x)"
    finally:
        P.set_default_printstyle("unicode")
        Q.set_default_printstyle("unicode")
    assert str(p) == str(q)
    with pytest.raises(ValueError):
        P.set_default_printstyle("latex")


def test_dtypes_and_results_are_ndx():
    p = P.Polynomial([1, 2])
    assert isinstance(p.coef, np.ndarray) and str(p.coef.dtype) == "float64"
    assert str(P.Polynomial(np.asarray(onp.float32([1, 2]))).coef.dtype) == "float32"
    assert str(P.polynomial.polyval(np.asarray(onp.float32([1, 2])), [1, 2]).dtype) == "float64"
    assert str(P.Polynomial([1j, 2]).coef.dtype) == "complex128"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(P.polynomial.polyfit([0., 1., 2.], [1., 2., 3.], 1), np.ndarray)


def test_namespace():
    assert sorted(P.__all__) == sorted(Q.__all__)
    assert np.polynomial.Polynomial is P.polynomial.Polynomial
