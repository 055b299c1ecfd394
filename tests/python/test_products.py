"""Products (issue 12, part 4) against NumPy: tensordot, inner, outer, vdot, kron, cross, einsum
(every optimize mode, sublists, ellipsis, implicit output), einsum_path, polyval, interp,
npx.batch_dot; gradients against central differences; typed errors."""
import numpy as onp
import pytest

from ndx import autograd, np, npx

R = onp.random.default_rng(31)


def _f64(*shapes):
    return [R.standard_normal(s) for s in shapes]


def _nd(*arrays):
    return [np.array(a, dtype=a.dtype) for a in arrays]


def _numeric_grad_check(fn, arrays, eps=1e-6):
    """autograd's gradient of sum(w * fn(*xs)) against central differences, in float64."""
    xs = _nd(*arrays)
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = fn(*xs)
    w = R.standard_normal(y.shape)
    with autograd.record():
        loss = np.sum(fn(*xs) * np.array(w))
    loss.backward()
    for k, a in enumerate(arrays):
        want = onp.zeros_like(a)
        for i in range(a.size):
            plus, minus = [x.copy() for x in arrays], [x.copy() for x in arrays]
            plus[k].reshape(-1)[i] += eps
            minus[k].reshape(-1)[i] -= eps
            fp = (fn(*_nd(*plus)).asnumpy() * w).sum()
            fm = (fn(*_nd(*minus)).asnumpy() * w).sum()
            want.reshape(-1)[i] = (fp - fm) / (2 * eps)
        onp.testing.assert_allclose(xs[k].grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


EINSUM_CASES = [
    ("ij,jk->ik", (3, 4), (4, 5)), ("ij,jk", (3, 4), (4, 5)), ("ii->i", (3, 3)),
    ("ii", (3, 3)), ("ij->ji", (2, 3)), ("ij->", (2, 3)), ("i,i", (4,), (4,)),
    ("i,j->ij", (2,), (3,)), ("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)),
    ("...ij,...jk->...ik", (2, 3, 4), (4, 5)), ("ij,jk,kl->il", (3, 4), (4, 5), (5, 6)),
    ("iij->j", (2, 2, 3)), ("Ba,aB", (2, 3), (3, 2)), ("bA", (2, 3)), ("i,i", (1,), (3,)),
    ("ijk,ikj->i", (2, 3, 4), (2, 4, 3)), ("ab,cd,bc->ad", (2, 3), (4, 5), (3, 4)),
    ("a,b,c->abc", (2,), (3,), (4,)), ("ij,ij->ij", (2, 3), (2, 3)), ("...,...", (2, 3), (3,)),
    ("i...->...", (3, 2, 4)), ("ijk,jil->kl", (3, 4, 5), (4, 3, 2)), ("ij,kl->", (0, 3), (2, 2)),
    ("ij,jk->ik", (0, 4), (4, 5)), ("ij,jk->ik", (3, 0), (0, 5)), ("->", ()), (",i->i", (), (3,)),
    ("ab,bc,cd,de->ae", (2, 3), (3, 4), (4, 5), (5, 2)),
]


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal"])
@pytest.mark.parametrize("case", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_matches_numpy(case, optimize):
    sub, *shapes = case
    ops = _f64(*shapes)
    got = np.einsum(sub, *_nd(*ops), optimize=optimize)
    want = onp.einsum(sub, *ops)
    assert got.shape == want.shape and got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-12)


def test_einsum_dtypes_sublists_out_and_paths():
    i32 = onp.arange(6, dtype=onp.int32).reshape(2, 3)
    assert np.einsum("ij->", np.array(i32)).dtype == onp.int32  # einsum keeps the dtype
    got = np.einsum("ij,j->i", np.array(i32), np.array(onp.ones(3, onp.float32)))
    assert got.dtype == onp.einsum("ij,j->i", i32, onp.ones(3, onp.float32)).dtype
    onp.testing.assert_array_equal(got.asnumpy(), i32.sum(1))
    b = onp.array([True, False, True])
    assert np.einsum("i,i", np.array(b), np.array(b)).dtype == onp.bool_
    a, v = _f64((2, 3), (3,))
    onp.testing.assert_allclose(np.einsum(np.array(a), [0, 1], np.array(v), [1], [0]).asnumpy(),
                                onp.einsum(a, [0, 1], v, [1], [0]))
    onp.testing.assert_allclose(np.einsum(np.array(a), [Ellipsis, 1], np.array(v), [1]).asnumpy(),
                                onp.einsum(a, [Ellipsis, 1], v, [1]))
    out = np.zeros((2,), dtype="float64")
    r = np.einsum("ij,j->i", *_nd(a, v), out=out)
    assert r is out
    onp.testing.assert_allclose(out.asnumpy(), a @ v)
    got = np.einsum("ij,j->i", np.array(i32), np.array(onp.ones(3, onp.int32)), dtype="float64")
    assert got.dtype == onp.float64
    with pytest.raises(TypeError, match="einsum"):
        np.einsum("i->i", np.array(onp.ones(3)), dtype="int32")  # casting='safe'
    ops = [onp.ones((10, 20)), onp.ones((20, 5)), onp.ones((5, 30))]
    path, report = np.einsum_path("ij,jk,kl->il", *_nd(*ops), optimize="greedy")
    assert path == onp.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")[0]
    assert "contraction" in report
    path, _ = np.einsum_path("ij,jk,kl->il", *_nd(*ops), optimize="optimal")
    assert path == onp.einsum_path("ij,jk,kl->il", *ops, optimize="optimal")[0]
    onp.testing.assert_allclose(
        np.einsum("ij,jk,kl->il", *_nd(*ops), optimize=["einsum_path", (1, 2), (0, 1)]).asnumpy(),
        ops[0] @ ops[1] @ ops[2])


def test_einsum_bad_input():
    a = np.ones((2, 3))
    for args, err, msg in [
        (("ij,jk", a, np.ones((4, 2))), ValueError, "broadcast"),
        (("ij->ii", a), ValueError, "multiple times"),
        (("ij->k", a), ValueError, "never appeared"),
        (("ijk", a), ValueError, "dimensions"),
        (("ij,jk", a), ValueError, "operands"),
        (("i$", a), ValueError, "invalid subscript"),
        (("...i->i", np.ones((2, 3))), ValueError, "ellipsis"),
        (("ii", a), ValueError, "subscript .i. has sizes 2 and 3"),
        ((), TypeError, "subscripts"),
    ]:
        with pytest.raises(err, match=msg):
            np.einsum(*args)
    with pytest.raises(ValueError, match="optimize"):
        np.einsum("ij", a, optimize="fastest")
    with pytest.raises(ValueError, match="invalid contraction"):
        np.einsum("ij,jk", a, np.ones((3, 2)), optimize=["einsum_path", (0, 5)])


@pytest.mark.parametrize("sub, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bhqd,bhkd->bhqk", [(1, 2, 3, 2), (1, 2, 2, 2)]),
    ("ii->i", [(3, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]), ("i,j->ij", [(2,), (3,)]),
])
def test_einsum_gradients(sub, shapes):
    _numeric_grad_check(lambda *xs: np.einsum(sub, *xs, optimize=True), _f64(*shapes))


def test_tensordot_inner_outer_vdot_kron():
    a, b, c, d = _f64((3, 4), (4, 5), (3, 4, 5), (4, 3, 2))
    A, B, C, D = _nd(a, b, c, d)
    for got, want in [
        (np.tensordot(A, B, 1), onp.tensordot(a, b, 1)),
        (np.tensordot(C, D, ([0, 1], [1, 0])), onp.tensordot(c, d, ([0, 1], [1, 0]))),
        (np.tensordot(A, A, 0), onp.tensordot(a, a, 0)),
        (np.tensordot(A, A), onp.tensordot(a, a)),
        (np.tensordot(C, A, (0, 0)), onp.tensordot(c, a, (0, 0))),
        (np.inner(A, A), onp.inner(a, a)), (np.inner(C, B), onp.inner(c, b)),
        (np.inner(A, np.array(2.0, dtype="float64")), onp.inner(a, 2.0)),
        (np.outer(A, B), onp.outer(a, b)), (np.vdot(A, A), onp.vdot(a, a)),
        (np.kron(A, B), onp.kron(a, b)), (np.kron(C, A), onp.kron(c, a)),
        (np.kron(A[0], C), onp.kron(a[0], c)),
    ]:
        assert got.shape == onp.shape(want)
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    i = onp.arange(6, dtype=onp.int64).reshape(2, 3)
    assert np.tensordot(np.array(i), np.array(i.T), 1).dtype == onp.int64
    z = onp.zeros((0, 3))
    assert np.tensordot(np.array(z), np.array(onp.ones((3, 2))), 1).shape == (0, 2)
    assert np.outer(np.array(z), np.array(onp.ones(2))).shape == (0, 2)
    with pytest.raises(ValueError, match="shape-mismatch"):
        np.tensordot(A, B, ([0], [0]))
    with pytest.raises(ValueError, match="exceeds"):
        np.tensordot(A, B, 3)
    with pytest.raises(ValueError, match="not aligned"):
        np.inner(A, B)
    with pytest.raises(ValueError, match="vdot"):
        np.vdot(A, B)
    _numeric_grad_check(lambda x, y: np.tensordot(x, y, 1), [a, b])
    _numeric_grad_check(lambda x, y: np.kron(x, y), _f64((2, 2), (2, 3)))
    _numeric_grad_check(lambda x, y: np.outer(x, y), _f64((3,), (2,)))


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
def test_cross():
    x3, y3, x2 = _f64((5, 3), (5, 3), (5, 2))
    for p, q in [(x3, y3), (x3, x2), (x2, y3)]:
        onp.testing.assert_allclose(np.cross(*_nd(p, q)).asnumpy(), onp.cross(p, q))
    # NumPy 2 deprecates 2-vectors; their cross product is the z component.
    onp.testing.assert_allclose(np.cross(*_nd(x2, x2[::-1])).asnumpy(),
                                x2[:, 0] * x2[::-1, 1] - x2[:, 1] * x2[::-1, 0])
    onp.testing.assert_allclose(np.cross(*_nd(x3.T, y3), axisa=0, axisc=0).asnumpy(),
                                onp.cross(x3.T, y3, axisa=0, axisc=0))
    onp.testing.assert_allclose(np.cross(*_nd(x3.T, y3.T), axis=0).asnumpy(),
                                onp.cross(x3.T, y3.T, axis=0))
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        np.cross(np.ones((2, 4)), np.ones((2, 3)))
    with pytest.raises(onp.exceptions.AxisError):
        np.cross(np.ones((2, 3)), np.ones((2, 3)), axisa=4)
    _numeric_grad_check(np.cross, [x3[:2], y3[:2]])


def test_polyval_and_interp():
    p, x = onp.array([3.0, 0.0, -1.0, 2.0]), onp.linspace(-2, 2, 7)
    onp.testing.assert_allclose(np.polyval(*_nd(p, x)).asnumpy(), onp.polyval(p, x))
    ip = onp.array([1, 2, 3])
    got = np.polyval(np.array(ip), np.array(onp.array([2, 3])))
    assert got.dtype == onp.int64
    onp.testing.assert_array_equal(got.asnumpy(), onp.polyval(ip, onp.array([2, 3])))
    _numeric_grad_check(np.polyval, [p, x])
    xp, fp = onp.array([1.0, 2.0, 3.0]), onp.array([3.0, 2.0, 0.0])
    xq = onp.array([0.0, 1.0, 1.5, 2.72, 3.14, 2.0, 3.0])
    onp.testing.assert_allclose(np.interp(*_nd(xq, xp, fp)).asnumpy(), onp.interp(xq, xp, fp))
    onp.testing.assert_allclose(np.interp(*_nd(xq, xp, fp), left=-1, right=9).asnumpy(),
                                onp.interp(xq, xp, fp, left=-1, right=9))
    xq, xp, fp = (onp.array([-180.0, -170, -185, 185, -10, -5, 0, 365]),
                  onp.array([190.0, -190, 350, -350]), onp.array([5.0, 10, 3, 4]))
    onp.testing.assert_allclose(np.interp(*_nd(xq, xp, fp), period=360).asnumpy(),
                                onp.interp(xq, xp, fp, period=360))
    got = np.interp(np.array([0.5, 1.5]), np.array([0, 1, 2]), np.array([0, 10, 20]))
    assert got.dtype == onp.float32  # ndx's default float (NumPy: float64)
    onp.testing.assert_allclose(got.asnumpy(), [5.0, 15.0])
    assert np.interp(np.array(0.5, dtype="float64"), np.array([0.0, 1.0]),
                     np.array([1.0, 3.0])).shape == ()
    with pytest.raises(ValueError, match="same length"):
        np.interp(np.ones(2), np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="empty"):
        np.interp(np.ones(2), np.ones(0), np.ones(0))
    with pytest.raises(ValueError, match="period"):
        np.interp(np.ones(2), np.arange(3), np.arange(3), period=0)
    xq = onp.array([0.2, 1.3, 2.9])
    _numeric_grad_check(lambda x, f: np.interp(x, np.array(onp.array([0.0, 1.0, 2.0, 3.0])), f),
                        [xq, onp.array([1.0, -2.0, 0.5, 4.0])])


def test_batch_dot():
    a, b = _f64((2, 3, 4), (2, 4, 5))
    onp.testing.assert_allclose(npx.batch_dot(*_nd(a, b)).asnumpy(), a @ b)
    onp.testing.assert_allclose(
        npx.batch_dot(*_nd(a.transpose(0, 2, 1), b), transpose_a=True).asnumpy(), a @ b)
    onp.testing.assert_allclose(
        npx.batch_dot(*_nd(a, b.transpose(0, 2, 1)), transpose_b=True).asnumpy(), a @ b)
    c, d = _f64((2, 2, 3, 4), (2, 2, 4, 1))
    onp.testing.assert_allclose(npx.batch_dot(*_nd(c, d)).asnumpy(), c @ d)
    with pytest.raises(ValueError, match="batch_dot"):
        npx.batch_dot(np.ones((3, 4)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="batch_dot"):
        npx.batch_dot(np.ones((2, 3, 4)), np.ones((3, 4, 5)))
    with pytest.raises(ValueError, match="batch_dot"):
        npx.batch_dot(np.ones((2, 3, 4)), np.ones((2, 5, 5)))
    _numeric_grad_check(npx.batch_dot, _f64((2, 2, 3), (2, 3, 2)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul_of_transposed_views(dtype):
    """Operands that are transposed contiguous arrays go to BLAS as they are (no copy)."""
    a = (R.standard_normal((2, 5, 3)) * 4).astype(dtype)
    b = (R.standard_normal((4, 5)) * 4).astype(dtype)
    for x, y in [(a.swapaxes(1, 2), b.T), (a.swapaxes(1, 2), b.T[None]), (b, a[0]),
                 (b.T[:3].T, a.swapaxes(1, 2))]:
        want = onp.matmul(x, y)
        got = np.matmul(np.array(onp.ascontiguousarray(x.swapaxes(-1, -2))).swapaxes(-1, -2),
                        np.array(onp.ascontiguousarray(y.swapaxes(-1, -2))).swapaxes(-1, -2))
        assert got.dtype == want.dtype
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("flatten", [True, False])
def test_fully_connected_gradients_accumulate(dtype, flatten):
    """fully_connected's GEMMs write the outputs (and, with grad_req='add', add to them) in
    place: two backward passes leave twice NumPy's gradients; data without a gradient is
    skipped."""
    x = R.standard_normal((3, 2, 4)).astype(dtype)
    k = 4 if not flatten else 8
    w = R.standard_normal((5, k)).astype(dtype)
    b = R.standard_normal(5).astype(dtype)
    g = R.standard_normal((3, 2, 5) if not flatten else (3, 5)).astype(dtype)
    x64, w64, g64 = (a.astype(onp.float64) for a in (x, w, g))
    xm = x64 if not flatten else x64.reshape(3, 8)
    gm = g64.reshape(-1, 5)
    want_y = xm @ w64.T + b
    want = {"x": (gm @ w64).reshape(x.shape), "w": gm.T @ xm.reshape(-1, k), "b": gm.sum(0)}
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == "float16" else dict(rtol=1e-5, atol=1e-5)
    for with_x in (True, False):
        nx, nw, nb = np.array(x), np.array(w), np.array(b)
        arrays = {"w": nw, "b": nb, **({"x": nx} if with_x else {})}
        for a in arrays.values():
            a.attach_grad(grad_req="add")
        for _ in range(2):
            with autograd.record():
                y = npx.fully_connected(nx, nw, nb, num_hidden=5, flatten=flatten)
            y.backward(np.array(g))
        onp.testing.assert_allclose(y.asnumpy().astype(onp.float64), want_y, **tol)
        for name, a in arrays.items():
            onp.testing.assert_allclose(a.grad.asnumpy().astype(onp.float64), 2 * want[name],
                                        **tol)


# ---- session 53: matvec / vecmat, the poly* family, gradient, unwrap (the op table has
# their forward rows against NumPy; here the gradients, and what the table cannot compare)
@pytest.mark.parametrize("name, fn, shapes", [
    ("matvec", np.matvec, [(2, 3, 4), (4,)]),
    ("vecmat", np.vecmat, [(3,), (2, 3, 4)]),
    ("polymul", np.polymul, [(3,), (4,)]),
    ("polyder", lambda p: np.polyder(p, 2), [(5,)]),
    ("polyint", lambda p: np.polyint(p, 2, k=[1.0, 2.0]), [(4,)]),
    ("gradient", lambda f: np.stack(np.gradient(f, 0.5)), [(4, 5)]),
    ("gradient-edge-order-2", lambda f: np.gradient(f, edge_order=2), [(6,)]),
    ("unwrap", lambda p: np.unwrap(p * 4), [(3, 6)]),
    ("block", lambda a, b: np.block([[a], [b]]), [(2, 3), (1, 3)]),
    ("polyfit", lambda x, y: np.polyfit(x, y, 2), [(6,), (6,)]),
    ("polyfit-weighted", lambda y, w: np.polyfit(np.array(onp.arange(5.0)), y, 1, w=w),
     [(5,), (5,)]),
])
def test_new_composites_carry_gradients(name, fn, shapes):
    _numeric_grad_check(fn, _f64(*shapes))


def test_gradient_with_coordinates_carries_gradients_in_f_and_nowhere_else():
    xs = np.array(onp.cumsum(R.uniform(0.5, 1.5, 5)))
    _numeric_grad_check(lambda f: np.gradient(f, xs, edge_order=2), _f64((5,)))


def test_roots_of_float32_coefficients_and_poly_round_trip():
    # Float32 coefficients give float32 roots (NumPy's dtype) close to float64's; poly of the
    # roots gives the monic coefficients back; no coefficient: no root; only zeros: none.
    p = onp.array([2, -12, 22, -12], dtype=onp.float32)  # 2 (x - 1)(x - 2)(x - 3)
    got = np.roots(np.array(p))
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(onp.sort(got.asnumpy()), [1, 2, 3], rtol=1e-4)
    onp.testing.assert_allclose(np.poly(got).asnumpy(), p / 2, rtol=1e-4, atol=1e-4)
    assert np.roots(np.array([0.0, 0.0])).shape == (0,)
    assert np.roots(np.array([5.0])).shape == (0,)
    assert np.poly(np.zeros((0,))) == 1.0 == onp.poly(onp.zeros((0,)))


def test_polyfit_full_and_cov_match_numpy():
    x = onp.linspace(-2, 2, 15)
    y = onp.stack([x ** 3 - x, 2 * x + 1], 1) + R.normal(0, 0.1, (15, 2))
    got = np.polyfit(np.array(x), np.array(y[:, 0]), 3, full=True)
    want = onp.polyfit(x, y[:, 0], 3, full=True)
    for g, w in zip(got[:2] + got[3:4], want[:2] + want[3:4]):
        onp.testing.assert_allclose(g.asnumpy(), w, rtol=1e-8)
    assert got[2] == want[2] == 4 and got[4] == want[4]
    for cov in (True, "unscaled"):
        for ys in (y[:, 0], y):
            c, v = np.polyfit(np.array(x), np.array(ys), 2, cov=cov)
            wc, wv = onp.polyfit(x, ys, 2, cov=cov)
            onp.testing.assert_allclose(c.asnumpy(), wc, rtol=1e-8)
            # (the odd-even covariances are 0 for this symmetric x: rounding noise of 1e-17,
            # which differs between BLAS builds, is compared on the matrix's scale)
            onp.testing.assert_allclose(v.asnumpy(), wv, rtol=1e-6,
                                        atol=1e-12 * onp.abs(wv).max())
    with pytest.raises(ValueError, match="exceed order"):
        np.polyfit(np.array(x[:3]), np.array(y[:3, 0]), 2, cov=True)
    with pytest.warns(onp.exceptions.RankWarning):  # NumPy's warning for a rank-deficient fit
        np.polyfit(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0]), 2)


def test_new_functions_take_bfloat16_arrays():
    # bfloat16, which NumPy lacks, has a string dtype: these read its kind through _kind
    # (fuzz seed 69 found AttributeErrors). Values against NumPy on the float32 values the
    # bfloat16 array holds exactly.
    x = onp.array([0.5, 3.0, -2.0, 6.5, 1.0], dtype=onp.float32)
    b = np.array(x).astype("bfloat16")
    for fn, ref in [(np.gradient, onp.gradient), (np.unwrap, onp.unwrap),
                    (lambda v: np.polydiv(v, np.array([1.0, 2.0]).astype(v.dtype))[0],
                     lambda v: onp.polydiv(v, onp.array([1.0, 2.0], dtype=v.dtype))[0]),
                    (np.sort_complex, onp.sort_complex),
                    (lambda v: np.polyder(v, 2), lambda v: onp.polyder(v, 2)),
                    (lambda v: np.histogram2d(v, v, bins=2)[0],
                     lambda v: onp.histogram2d(v, v, bins=2)[0])]:
        got = fn(b)
        onp.testing.assert_allclose(onp.asarray(got.astype("float64").asnumpy(), onp.float64)
                                    if got.dtype == "bfloat16" else got.asnumpy(), ref(x),
                                    rtol=2e-2, atol=2e-2)
    dst = np.zeros(5).astype("bfloat16")
    np.copyto(dst, np.array(x))
    onp.testing.assert_array_equal(dst.astype("float32").asnumpy(), x)
    with pytest.raises(TypeError):
        np.copyto(np.zeros(5, dtype="int32"), b)  # a float kind into ints: same_kind refuses


def test_shape_checks_numpy_makes_in_products_and_searches():
    # tensordot with an integer axes compared no lengths (2*3 == 3*2 reshaped silently);
    # vecdot broadcast its core dimension; searchsorted took a sorter of another length.
    with pytest.raises(ValueError, match="shape-mismatch"):
        np.tensordot(np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2), axes=2)
    with pytest.raises(ValueError, match="same length"):
        np.linalg.vecdot(np.array([1, 2, 3]), np.array([1]))
    with pytest.raises(ValueError, match="sorter.size"):
        np.searchsorted(np.arange(3), np.ones(3), sorter=np.array([0, 1]))
    for a, b in ((onp.array([True, False]), onp.array([True, True])),
                 (onp.array([1, 2], "uint8"), onp.array([3, -4], "int8"))):
        got, want = np.linalg.vecdot(np.array(a), np.array(b)), onp.linalg.vecdot(a, b)
        assert got.dtype == want.dtype and got.item() == want.item()
    onp.testing.assert_array_equal(np.diff(np.array([1, 5, 2, 9]), n=0, prepend=0).asnumpy(),
                                   onp.diff([1, 5, 2, 9], n=0, prepend=0))


# --------------------------------------------------------------------------------- poly1d
POLYS = [[1.0, 2.0, 3.0], [1.0, -2.0, 3.0], [-1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 1.0], [0.0],
         [2.5, -1e-5, 3e7], [1.0, 0.0], [-1.0], [3.0, 1.0] + [0.0] * 9 + [5.0],
         [1j, 2, 3 - 4j, -1j, 1.5 + 2j, -1 - 1j, 0j], [onp.nan, onp.inf, -onp.inf]]


def _poly_pair(c):
    dtype = "complex128" if any(isinstance(v, complex) for v in c) else "float64"
    return np.poly1d(np.array(c, dtype=dtype)), onp.poly1d(onp.array(c, dtype=dtype))


def _same_poly(got, want):
    assert isinstance(got, np.poly1d), type(got)
    assert got.variable == want.variable
    onp.testing.assert_allclose(got.coeffs.asnumpy(), want.coeffs, rtol=1e-12)
    assert got.coeffs.dtype == want.coeffs.dtype


@pytest.mark.parametrize("c", POLYS, ids=range(len(POLYS)))
def test_poly1d_prints_and_evaluates_as_numpys(c):
    p, q = _poly_pair(c)
    assert str(p) == str(q)
    assert repr(p) == repr(q)
    assert (p.order, len(p)) == (q.order, len(q))
    _same_poly(p, q)
    x = onp.array([-1.5, 0.0, 2.0])
    onp.testing.assert_allclose(p(np.array(x)).asnumpy(), q(x), rtol=1e-12)
    for k in range(-1, p.order + 2):
        assert p[k] == q[k] or (onp.isnan(p[k]) and onp.isnan(q[k]))


def test_poly1d_arithmetic_matches_numpy():
    p, q = _poly_pair([1.0, 2.0, 3.0])
    s, t = _poly_pair([2.0, -1.0])
    for got, want in [(p + s, q + t), (p - s, q - t), (s - p, t - q), (p * s, q * t),
                      (p * 2.5, q * 2.5), (3 * p, 3 * q), (p + 1, q + 1), (1 - p, 1 - q),
                      (-p, -q), (p ** 3, q ** 3), (p ** 0, q ** 0), (p / 4, q / 4),
                      (p(s), q(t)), (p.deriv(), q.deriv()), (p.deriv(2), q.deriv(2)),
                      (p.integ(), q.integ()), (p.integ(2, k=[1.0, 2.0]), q.integ(2, k=[1.0, 2.0])),
                      (np.polyadd(p, [1.0, 1.0]), onp.polyadd(q, [1.0, 1.0])),
                      (np.polymul(p, s), onp.polymul(q, t)), (np.polyder(p), onp.polyder(q))]:
        _same_poly(got, want)
    (quot, rem), (quot_ref, rem_ref) = p / s, q / t
    _same_poly(quot, quot_ref)
    _same_poly(rem, rem_ref)
    assert all(isinstance(r, np.poly1d) for r in np.polydiv(p, s))
    onp.testing.assert_allclose(onp.sort_complex(p.roots.asnumpy()), onp.sort_complex(q.roots))
    _same_poly(np.poly1d(np.array([1.0, 2.0], "float64"), r=True), onp.poly1d([1.0, 2.0], r=True))
    assert p == np.poly1d(np.array([0.0, 1.0, 2.0, 3.0])) and p != s
    p[4], q[4] = 7.0, 7.0
    _same_poly(p, q)
    onp.testing.assert_array_equal(onp.asarray(p), onp.asarray(q))
    assert str(np.poly1d(np.array([1.0, 2.0]), variable="z")) == str(
        onp.poly1d([1.0, 2.0], variable="z"))


def test_poly1d_errors_as_numpys():
    for bad in (lambda m: m.poly1d([[1.0, 2.0]]), lambda m: m.poly1d([1.0]) ** -1,
                lambda m: m.poly1d([1.0]) ** 1.5):
        with pytest.raises(ValueError):
            bad(onp)
        with pytest.raises(ValueError):
            bad(np)
    with pytest.raises(ValueError):
        np.poly1d([1.0]).__setitem__(-1, 2.0)
