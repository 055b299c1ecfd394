"""MXNet's sparse storage (mx.nd.sparse: CSRNDArray, RowSparseNDArray) against SciPy's CSR
matrices and NumPy's dense arithmetic, products checked in float64 against NumPy's float64
product, gradients against hand-derived formulas and numeric differences."""
import numpy as onp
import pytest
import scipy.sparse as sp

import ndx as mx
from ndx import autograd

nd = mx.nd
sparse = nd.sparse


def _dense(rng, shape, density=0.3, dtype="float64"):
    x = rng.standard_normal(shape) * (rng.uniform(size=shape) < density)
    return x.astype(dtype)


def _close(got, want, tol=1e-12):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    onp.testing.assert_allclose(onp.asarray(got), onp.asarray(want), rtol=tol, atol=tol)


@pytest.fixture
def rng():
    return onp.random.default_rng(11)


# ---- storage casts and construction ----------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 7), (1, 1), (0, 4), (4, 0), (3, 3)])
def test_cast_to_csr_matches_scipy(rng, shape):
    x = _dense(rng, shape)
    c = nd.array(x, dtype="float64").tostype("csr")
    ref = sp.csr_matrix(x)
    assert isinstance(c, sparse.CSRNDArray) and c.stype == "csr" and c.shape == shape
    onp.testing.assert_array_equal(c.indptr.asnumpy(), ref.indptr)
    onp.testing.assert_array_equal(c.indices.asnumpy(), ref.indices)
    onp.testing.assert_array_equal(c.data.asnumpy(), ref.data)
    assert c.indices.dtype == onp.int64 and c.indptr.dtype == onp.int64
    onp.testing.assert_array_equal(c.asnumpy(), x)
    onp.testing.assert_array_equal(c.tostype("default").asnumpy(), x)
    c.check_format()


def test_mxnet_documented_cast_storage_example():
    # cast_storage's documented example (MXNet's cast_storage.cc)
    dense = nd.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    rsp = nd.cast_storage(dense, "row_sparse")
    assert rsp.indices.asnumpy().tolist() == [0, 1]
    assert rsp.data.asnumpy().tolist() == [[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]
    csr = nd.cast_storage(dense, "csr")
    assert csr.indices.asnumpy().tolist() == [1, 0, 2]
    assert csr.data.asnumpy().tolist() == [1.0, 2.0, 3.0]
    assert csr.indptr.asnumpy().tolist() == [0, 1, 3, 3, 3]
    assert csr.dtype == onp.float32


@pytest.mark.parametrize("shape", [(6, 3), (6,), (4, 2, 3), (0, 5)])
def test_cast_to_row_sparse_keeps_the_nonzero_rows(rng, shape):
    x = _dense(rng, shape, density=0.5)
    if len(shape) > 1 and shape[0]:
        x[1] = 0.0
    r = nd.array(x, dtype="float64").tostype("row_sparse")
    rows = [i for i in range(shape[0]) if onp.any(x[i] != 0)]
    assert isinstance(r, sparse.RowSparseNDArray) and r.shape == shape
    assert r.indices.asnumpy().tolist() == rows
    onp.testing.assert_array_equal(r.data.asnumpy(), x[rows])
    onp.testing.assert_array_equal(r.asnumpy(), x)
    r.check_format()
    # and between the two sparse stypes, through dense
    if len(shape) == 2:
        onp.testing.assert_array_equal(r.tostype("csr").asnumpy(), x)
        onp.testing.assert_array_equal(r.tostype("csr").tostype("row_sparse").asnumpy(), x)


def test_csr_matrix_constructors(rng):
    x = _dense(rng, (4, 6))
    ref = sp.csr_matrix(x)
    a = sparse.csr_matrix((ref.data, ref.indices, ref.indptr), shape=(4, 6))
    onp.testing.assert_array_equal(a.asnumpy(), x)
    assert a.dtype == onp.float64  # a NumPy source keeps its dtype (MXNet's rule)
    b = sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]))  # shape inferred
    assert b.shape == (3, 3) and b.dtype == onp.float32
    onp.testing.assert_array_equal(b.asnumpy(), [[1, 0, 2], [0, 0, 0], [0, 3, 0]])
    c = sparse.csr_matrix(ref)  # from SciPy
    onp.testing.assert_array_equal(c.asnumpy(), x)
    onp.testing.assert_array_equal(c.asscipy().toarray(), x)
    d = sparse.csr_matrix(x.tolist())  # dense lists: float32
    assert d.dtype == onp.float32
    onp.testing.assert_allclose(d.asnumpy(), x.astype(onp.float32))
    e = sparse.csr_matrix((3, 5))
    assert e.shape == (3, 5) and e.data.size == 0 and not e.asnumpy().any()
    f = sparse.csr_matrix(nd.array(x, dtype="float64"), dtype="float32")
    assert f.dtype == onp.float32
    assert nd.sparse.array(ref).stype == "csr" and nd.array(ref).stype == "csr"
    assert nd.array(a) is not a and nd.array(a).stype == "csr"


def test_csr_matrix_from_coordinates_sums_duplicates_as_scipy(rng):
    row = onp.array([0, 2, 2, 0, 1, 2, 0])
    col = onp.array([0, 0, 1, 0, 3, 1, 2])
    val = onp.arange(1.0, 8.0)
    got = sparse.csr_matrix((val, (row, col)), shape=(3, 4))
    ref = sp.coo_matrix((val, (row, col)), shape=(3, 4)).tocsr()
    ref.sum_duplicates()
    onp.testing.assert_array_equal(got.indptr.asnumpy(), ref.indptr)
    onp.testing.assert_array_equal(got.indices.asnumpy(), ref.indices)
    onp.testing.assert_array_equal(got.data.asnumpy(), ref.data)
    got.check_format()


def test_row_sparse_array_constructors():
    r = sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [3, 1]), shape=(5, 2))
    assert r.indices.asnumpy().tolist() == [1, 3]  # sorted with their rows
    onp.testing.assert_array_equal(r.asnumpy(), [[0, 0], [3, 4], [0, 0], [1, 2], [0, 0]])
    assert r.dtype == onp.float32
    assert sparse.row_sparse_array(([[1.0]], [2])).shape == (3, 1)
    z = sparse.row_sparse_array((4, 3))
    assert z.shape == (4, 3) and z.indices.size == 0 and not z.asnumpy().any()
    with pytest.raises(ValueError, match="sorted and unique"):
        sparse.row_sparse_array(([[1.0], [2.0]], [1, 1]), shape=(3, 1))
    with pytest.raises(ValueError, match="one row per index"):
        sparse.row_sparse_array(([[1.0], [2.0]], [1]), shape=(3, 1))
    with pytest.raises(ValueError, match=r"in \[0, 3\)"):
        sparse.row_sparse_array(([[1.0]], [3]), shape=(3, 1))


def test_zeros_empty_and_nd_creation_with_a_sparse_stype():
    for make in (sparse.zeros, sparse.empty):
        c = make("csr", (3, 4))
        assert c.stype == "csr" and c.shape == (3, 4) and c.dtype == onp.float32
        assert c.indptr.asnumpy().tolist() == [0, 0, 0, 0] and not c.asnumpy().any()
        r = make("row_sparse", (3, 2, 2), dtype="float64")
        assert r.stype == "row_sparse" and r.dtype == onp.float64 and r.data.shape == (0, 2, 2)
    assert nd.zeros((2, 5), stype="csr").stype == "csr"
    assert nd.empty((2, 5), stype="row_sparse").stype == "row_sparse"
    assert sparse.zeros("default", (2, 2)).stype == "default"
    with pytest.raises(ValueError, match="2-D"):
        sparse.zeros("csr", (2, 2, 2))
    with pytest.raises(ValueError, match="stype"):
        sparse.zeros("coo", (2, 2))


def test_bad_csr_parts_are_typed_errors():
    with pytest.raises(ValueError, match="indptr"):
        sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 2, 1]), shape=(2, 2))
    with pytest.raises(ValueError, match="indptr"):
        sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1]), shape=(1, 2))
    with pytest.raises(ValueError, match="column indices"):
        sparse.csr_matrix(([1.0], [5], [0, 1]), shape=(1, 2))
    with pytest.raises(TypeError, match="integers"):
        sparse.csr_matrix(([1.0], [0.5], [0, 1]), shape=(1, 2))
    with pytest.raises(TypeError, match="float or integer values"):
        sparse.csr_matrix(([1, 2], [0, 1], [0, 2]), shape=(1, 2), dtype="bool")
    with pytest.raises(TypeError, match="float or integer"):
        nd.array([[1, 0]], dtype="bool").tostype("csr")
    with pytest.raises(ValueError, match="2-D"):
        nd.ones((2, 2, 2)).tostype("csr")
    with pytest.raises(ValueError, match="stype"):
        nd.ones((2, 2)).tostype("dense")
    with pytest.raises(TypeError):
        sparse.CSRNDArray()
    # check_format finds what the constructor's cheap checks allow: unsorted columns
    c = sparse.csr_matrix(([1.0, 2.0], [1, 0], [0, 2]), shape=(1, 2))
    c.check_format(full_check=False)
    with pytest.raises(ValueError, match="sorted and unique"):
        c.check_format()


def test_the_csr_ops_validate_their_parts_in_cpp():
    from ndx import _core
    from ndx._registry import ops
    data = mx.np.array([1.0, 2.0])
    rhs = mx.np.ones((3, 2))

    def call(indices, indptr, num_cols=3):
        return _core._invoke(ops()["_sparse_csr_dot"].handle,
                             (data, mx.np.array(indices, dtype="int64"),
                              mx.np.array(indptr, dtype="int64"), rhs),
                             {"num_cols": num_cols, "transpose_a": False})

    with pytest.raises(ValueError, match="must not decrease"):
        call([0, 1], [0, 2, 1, 2])
    with pytest.raises(ValueError, match="start at 0"):
        call([0, 1], [1, 2])
    with pytest.raises(IndexError, match="out of range"):
        call([0, 3], [0, 2])
    with pytest.raises(ValueError, match="4 rows"):
        call([0, 1], [0, 2], num_cols=4)
    with pytest.raises(TypeError, match="same dtype"):
        _core._invoke(ops()["_sparse_csr_dot"].handle,
                      (data.astype("float64"), mx.np.array([0, 1]), mx.np.array([0, 2]), rhs),
                      {"num_cols": 3})
    with pytest.raises(TypeError, match="integer dtype"):
        _core._invoke(ops()["_sparse_csr_dot"].handle,
                      (data, mx.np.array([0.0, 1.0]), mx.np.array([0, 2]), rhs),
                      {"num_cols": 3})
    onp.testing.assert_array_equal(call([0, 2], [0, 1, 2]).asnumpy(), [[1, 1], [2, 2]])


def test_the_values_gradient_op_checks_its_operand_shapes():
    # _backward_sparse_csr_dot_data reads ograd and rhs rows by the CSR's positions: shapes
    # that do not fit the matrix are refused before it reads (a 2 x 2 matrix here).
    from ndx import _core
    from ndx._registry import ops
    indices, indptr = mx.np.array([0, 1]), mx.np.array([0, 1, 2])

    def call(ograd, rhs):
        return _core._invoke(ops()["_backward_sparse_csr_dot_data"].handle,
                             (mx.np.array(ograd), indices, indptr, mx.np.array(rhs)),
                             {"num_cols": 2})

    for ograd, rhs in [(onp.ones((3, 4)), onp.ones((2, 4))), (onp.ones((2, 4)), onp.ones((2, 5))),
                       (onp.ones(()), onp.ones((2, 4))), (onp.ones((2, 4)), onp.ones(2))]:
        with pytest.raises(ValueError, match="output gradient"):
            call(ograd, rhs)
    # identity pattern: g[j] = <ograd[j], rhs[j]>
    ograd, rhs = onp.arange(8.0).reshape(2, 4), onp.arange(8.0, 16.0).reshape(2, 4)
    onp.testing.assert_allclose(call(ograd, rhs).asnumpy(), (ograd * rhs).sum(axis=1))


# ---- products ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 1e-5),
                                       ("float16", 3e-2)])
def test_dot_csr_dense_against_numpy(rng, dtype, tol):
    a = _dense(rng, (9, 13), density=0.25)
    b = rng.standard_normal((13, 5))
    c = nd.array(a, dtype=dtype).tostype("csr")
    a_, b_ = a.astype(dtype).astype(onp.float64), b.astype(dtype).astype(onp.float64)
    out = sparse.dot(c, nd.array(b, dtype=dtype))
    assert out.stype == "default" and out.dtype == onp.dtype(dtype)
    _close(out, a_ @ b_, tol)
    _close(nd.dot(c, nd.array(b[:, 0], dtype=dtype)), a_ @ b_[:, 0], tol)  # 1-D operand
    bt = rng.standard_normal((9, 4))
    out_t = nd.dot(c, nd.array(bt, dtype=dtype), transpose_a=True)
    assert out_t.stype == "row_sparse"  # dot(csr.T, dense) = row_sparse
    _close(out_t.asnumpy(), a_.T @ bt.astype(dtype).astype(onp.float64), tol)
    _close(nd.dot(c, nd.array(b.T, dtype=dtype), transpose_b=True), a_ @ b_, tol)


def test_dot_dense_csr_and_the_storage_rules(rng):
    a = _dense(rng, (6, 8), density=0.3)
    c = nd.array(a, dtype="float64").tostype("csr")
    x = rng.standard_normal((4, 6))
    y = rng.standard_normal((5, 8))
    out = nd.dot(nd.array(x, dtype="float64"), c)
    assert out.stype == "csr"  # dot(default, csr) = csr
    _close(out.asnumpy(), x @ a)
    out = nd.dot(nd.array(y, dtype="float64"), c, transpose_b=True)
    assert out.stype == "default"
    _close(out, y @ a.T)
    out = nd.dot(nd.array(x.T, dtype="float64"), c, transpose_a=True, forward_stype="default")
    assert out.stype == "default"
    _close(out, x @ a)
    r = nd.array(rng.standard_normal((8, 3)), dtype="float64").tostype("row_sparse")
    out = nd.dot(c, r)  # dot(csr, row_sparse) = default
    assert out.stype == "default"
    _close(out, a @ r.asnumpy())
    out = nd.dot(c, nd.array(rng.standard_normal((8, 2)), dtype="float64"),
                 forward_stype="csr")
    assert out.stype == "csr"
    dd = nd.dot(nd.ones((2, 3)), nd.ones((3, 2)), forward_stype="row_sparse")
    assert dd.stype == "row_sparse" and dd.asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    with pytest.raises(ValueError, match=r"\[nd.dot\] shapes \(6, 8\) and \(7, 2\)"):
        nd.dot(c, nd.ones((7, 2), dtype="float64"))
    with pytest.raises(ValueError, match=r"\[nd.dot\] shapes \(3, 4\) and \(6, 8\)"):
        nd.dot(nd.ones((3, 4), dtype="float64"), c)  # the user's shapes, not the kernel's


def test_dot_storage_types_follow_mxnets_inference(rng):
    # MXNet's DotForwardInferStorageType on the CPU: csr.T with dense or row_sparse ->
    # row_sparse, only without transpose_b; dense x csr -> csr only without transposes
    a = _dense(rng, (6, 8), density=0.3)
    c = nd.array(a, dtype="float64").tostype("csr")
    r = nd.array(_dense(rng, (6, 3), density=0.5), dtype="float64").tostype("row_sparse")
    out = nd.dot(c, r, transpose_a=True)
    assert out.stype == "row_sparse"
    _close(out.asnumpy(), a.T @ r.asnumpy())
    g = rng.standard_normal((2, 6))
    out = nd.dot(c, nd.array(g, dtype="float64"), transpose_a=True, transpose_b=True)
    assert out.stype == "default"
    _close(out, a.T @ g.T)
    x = rng.standard_normal((6, 4))
    out = nd.dot(nd.array(x, dtype="float64"), c, transpose_a=True)
    assert out.stype == "default"
    _close(out, x.T @ a)
    v = rng.standard_normal(6)
    out = nd.dot(nd.array(v, dtype="float64"), c)  # a 1-D dense operand, as NumPy's
    assert out.shape == (8,)
    _close(out, v @ a)


def test_dot_promotes_mixed_float_dtypes(rng):
    a = _dense(rng, (5, 7), density=0.4)
    c = nd.array(a, dtype="float32").tostype("csr")
    w = rng.standard_normal((7, 3))
    out = nd.dot(c, nd.array(w, dtype="float64"))
    assert out.dtype == onp.float64  # as the dense product's promotion
    _close(out, a.astype(onp.float32).astype(onp.float64) @ w)


def test_csr_dot_does_not_depend_on_the_thread_count(rng):
    a = _dense(rng, (3000, 400), density=0.05, dtype="float32")
    b = rng.standard_normal((400, 64)).astype(onp.float32)
    bt = rng.standard_normal((3000, 64)).astype(onp.float32)
    c, nb, nbt = nd.array(a).tostype("csr"), nd.array(b), nd.array(bt)
    old = mx.npx.get_num_threads()
    try:
        outs = []
        for n in (1, 2):
            mx.npx.set_num_threads(n)
            outs.append((nd.dot(c, nb).asnumpy(),
                         nd.dot(c, nbt, transpose_a=True, forward_stype="default").asnumpy()))
    finally:
        mx.npx.set_num_threads(old)
    onp.testing.assert_array_equal(outs[0][0], outs[1][0])
    onp.testing.assert_array_equal(outs[0][1], outs[1][1])
    _close(outs[0][0], a.astype(onp.float64) @ b, 1e-4)
    _close(outs[0][1], a.T.astype(onp.float64) @ bt, 1e-4)


# ---- autograd ----------------------------------------------------------------------------


def test_gradient_of_the_dense_operand(rng):
    a = _dense(rng, (5, 7))
    c = nd.array(a, dtype="float64").tostype("csr")
    w = nd.array(rng.standard_normal((7, 3)), dtype="float64")
    head = rng.standard_normal((5, 3))
    w.attach_grad()
    with autograd.record():
        y = nd.dot(c, w)
    y.backward(nd.array(head, dtype="float64"))
    _close(w.grad, a.T @ head)  # d<head, A w>/dw = A.T head
    v = nd.array(rng.standard_normal((5, 2)), dtype="float64")
    v.attach_grad()
    with autograd.record():
        z = nd.dot(c, v, transpose_a=True, forward_stype="default")
    head2 = rng.standard_normal((7, 2))
    z.backward(nd.array(head2, dtype="float64"))
    _close(v.grad, a @ head2)


def test_gradient_through_a_storage_cast_matches_numeric_differences(rng):
    a = _dense(rng, (4, 5), density=0.5)
    a[0, 0] = 1.5  # at least one stored value
    w0 = rng.standard_normal((5, 2))
    head = rng.standard_normal((4, 2))

    def loss(values):
        return float(onp.sum((values @ w0) ** 2 * head))

    x = nd.array(a, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = nd.dot(x.tostype("csr"), nd.array(w0, dtype="float64"))
        out = (y * y * nd.array(head, dtype="float64")).sum()
    out.backward()
    mask = a != 0
    numeric = onp.zeros_like(a)
    for i, j in zip(*onp.nonzero(mask)):
        e = onp.zeros_like(a)
        e[i, j] = 1e-6
        numeric[i, j] = (loss(a + e) - loss(a - e)) / 2e-6
    # the gradient reaches the stored positions only (the cast's pattern)
    _close(x.grad, numeric, 1e-6)
    assert not x.grad.asnumpy()[~mask].any()


def test_sparse_linear_regression_trains_as_its_dense_twin(rng):
    a = _dense(rng, (64, 20), density=0.2, dtype="float32")
    target = a @ rng.standard_normal((20, 1)).astype(onp.float32)
    c, dense_a = nd.array(a).tostype("csr"), nd.array(a)
    ws = [nd.zeros((20, 1)), nd.zeros((20, 1))]
    for w in ws:
        w.attach_grad()
    for _ in range(30):
        for lhs, w in zip((c, dense_a), ws):
            with autograd.record():
                loss = ((nd.dot(lhs, w) - nd.array(target)) ** 2).mean()
            loss.backward()
            w[:] = w - 0.5 * w.grad
    _close(ws[0], ws[1].asnumpy(), 1e-5)
    assert float(((a @ ws[0].asnumpy() - target) ** 2).mean()) < 0.5 * float((target ** 2).mean())


# ---- element-wise, slicing, reductions ---------------------------------------------------------


def test_arithmetic_keeps_mxnets_storage_types(rng):
    x, y = _dense(rng, (5, 6)), _dense(rng, (5, 6))
    cx, cy = (nd.array(v, dtype="float64").tostype("csr") for v in (x, y))
    cases = [(cx + cy, "csr", x + y), (cx - cy, "csr", x - y), (cx * cy, "csr", x * y),
             (cx * 3.0, "csr", x * 3), (2.0 * cx, "csr", 2 * x), (cx / 4.0, "csr", x / 4),
             (-cx, "csr", -x), (cx + nd.array(y, dtype="float64"), "default", x + y),
             (cx * nd.array(y, dtype="float64"), "csr", x * y),
             (cx * nd.array(y[0], dtype="float64"), "csr", x * y[0]),
             (cx + 1.0, "default", x + 1)]
    for got, stype, want in cases:
        assert got.stype == stype
        _close(got.asnumpy(), want)
        if stype == "csr":
            got.check_format()
    rx, ry = (nd.array(v, dtype="float64").tostype("row_sparse") for v in (x, y))
    for got, stype, want in [(rx + ry, "row_sparse", x + y), (rx - ry, "row_sparse", x - y),
                             (rx * ry, "row_sparse", x * y), (rx * 2.0, "row_sparse", 2 * x),
                             (rx * nd.array(y, dtype="float64"), "row_sparse", x * y),
                             (rx + cy, "default", x + y)]:
        assert got.stype == stype
        _close(got.asnumpy(), want)
    s = sparse.add_n(rx, ry, rx)
    assert s.stype == "row_sparse"
    _close(s.asnumpy(), 2 * x + y)
    with pytest.raises(ValueError, match="same shape"):
        sparse.add(cx, nd.array(x[:4], dtype="float64").tostype("csr"))


def test_zero_preserving_functions_map_the_stored_values(rng):
    x = _dense(rng, (4, 5))
    c = nd.array(x, dtype="float64").tostype("csr")
    for fn, ref in [(sparse.abs, onp.abs), (sparse.square, onp.square), (sparse.tanh, onp.tanh),
                    (sparse.sign, onp.sign), (sparse.relu, lambda v: onp.maximum(v, 0))]:
        got = fn(c)
        assert got.stype == "csr"
        _close(got.asnumpy(), ref(x))
    _close(sparse.sqrt(sparse.abs(c)).asnumpy(), onp.sqrt(onp.abs(x)))
    assert sparse.clip(c, -0.5, 0.5).stype == "csr"
    _close(sparse.clip(c, -0.5, 0.5).asnumpy(), onp.clip(x, -0.5, 0.5))
    clipped = sparse.clip(c, 0.1, 0.5)  # 0 is outside the range: dense
    assert clipped.stype == "default"
    _close(clipped, onp.clip(x, 0.1, 0.5))


def test_csr_row_slicing(rng):
    x = _dense(rng, (6, 4))
    c = nd.array(x, dtype="float64").tostype("csr")
    for key, want in [(slice(1, 4), x[1:4]), (slice(None), x), (2, x[2:3]), (-1, x[5:6]),
                      (slice(4, 2), x[4:2]), (slice(-2, None), x[-2:])]:
        got = c[key]
        assert got.stype == "csr"
        _close(got.asnumpy(), want)
        got.check_format()
    with pytest.raises(IndexError, match="out of range"):
        c[6]
    with pytest.raises(ValueError, match="step 1"):
        c[::2]
    with pytest.raises(TypeError):
        c[1, 2]


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_against_numpy(rng, axis, keepdims):
    x = _dense(rng, (5, 6))
    for stype in ("csr", "row_sparse"):
        s = nd.array(x, dtype="float64").tostype(stype)
        _close(sparse.sum(s, axis=axis, keepdims=keepdims),
               x.sum(axis=axis, keepdims=keepdims))
        _close(s.mean(axis=axis, keepdims=keepdims), x.mean(axis=axis, keepdims=keepdims))
    r = nd.array(x, dtype="float64").tostype("row_sparse")
    got = sparse.square_sum(r, axis=axis, keepdims=keepdims)
    _close(got.asnumpy(), (x * x).sum(axis=axis, keepdims=keepdims))
    if axis == 1 and keepdims:
        assert got.stype == "row_sparse"


def test_norm_retain_and_copies(rng):
    x = _dense(rng, (6, 3), density=0.6)
    x[2] = 0
    r = nd.array(x, dtype="float64").tostype("row_sparse")
    _close(sparse.norm(r), onp.linalg.norm(x))
    kept = sparse.retain(r, nd.array([0, 2, 5]))
    want = onp.zeros_like(x)
    for i in (0, 2, 5):
        want[i] = x[i]
    _close(kept.asnumpy(), want)
    assert set(kept.indices.asnumpy().tolist()) <= {0, 5}
    with pytest.raises(TypeError, match="row_sparse"):
        sparse.retain(r.tostype("csr"), [0])
    c = nd.array(x, dtype="float64").tostype("csr")
    d = c.copy()
    d *= 2.0
    _close(c.asnumpy(), x)  # the copy owns its values
    _close(d.asnumpy(), 2 * x)
    e = sparse.zeros("csr", (6, 3), dtype="float64")
    c.copyto(e)
    _close(e.asnumpy(), x)
    assert c.astype("float32").dtype == onp.float32
    assert isinstance(c, nd.NDArray) and isinstance(r, nd.NDArray)
    assert not isinstance(c, mx.np.ndarray)
    assert "CSRNDArray 6x3" in repr(c)
    with pytest.raises(ValueError, match="shape"):
        e[:] = nd.ones((2, 2)).tostype("csr")


# ---- MXNet's storage fallback and the array protocol ------------------------------------


def test_nd_functions_take_sparse_arrays(rng):
    x = _dense(rng, (4, 5), density=0.5)
    c = nd.array(x, dtype="float64").tostype("csr")
    r = nd.array(x, dtype="float64").tostype("row_sparse")
    d = nd.array(x + 1.0, dtype="float64")
    # functions with a sparse version keep the storage type (nd.abs(csr) is csr) ...
    for s_ in (c, r):
        assert nd.abs(s_).stype == s_.stype
        _close(nd.abs(s_).asnumpy(), onp.abs(x))
        assert nd.elemwise_add(s_, s_).stype == s_.stype
        _close(nd.clip(s_, -0.5, 0.5).asnumpy(), onp.clip(x, -0.5, 0.5))
    assert nd.broadcast_mul(c, d).stype == "csr"
    _close(nd.sum(c), x.sum())
    _close(nd.mean(r, axis=1), x.mean(axis=1))
    _close(nd.norm(c), onp.linalg.norm(x))
    _close(nd.add_n(r, r), 2 * x)
    # ... the others compute on the dense values (MXNet's storage fallback)
    _close(nd.exp(c), onp.exp(x))
    _close(nd.sqrt(nd.square(r)), onp.abs(x))
    _close(nd.slice(c, begin=(1, 0), end=(3, 5)), x[1:3])
    _close(d + c, 2 * x + 1)
    _close(d - r, onp.ones_like(x))
    _close((d * c).asnumpy(), (x + 1) * x)
    _close(c == c, onp.ones_like(x))
    _close(c > 0, (x > 0).astype(onp.float64))
    _close(c ** 2, x ** 2)
    _close(onp.asarray(c), x)
    y = d.copy()
    alias = y
    y += c  # in place, as with a dense operand
    assert y is alias
    _close(y, 2 * x + 1)


def test_elemwise_mul_storage_and_backward_from_a_sparse_result(rng):
    # MXNet's elemwise_mul: csr with dense is dense, row_sparse with dense is row_sparse;
    # multiply (broadcast_mul) keeps the sparse operand's stype. Both record for autograd.
    x = rng.standard_normal((3, 4))
    a = _dense(rng, (3, 4), density=0.5)
    c = nd.array(a, dtype="float64").tostype("csr")
    w = nd.array(x, dtype="float64")
    w.attach_grad()
    with autograd.record():
        y = nd.elemwise_mul(w, c)
    assert y.stype == "default"
    y.backward()
    _close(w.grad, a)  # d sum(w * a) / dw
    assert nd.elemwise_mul(w, c.tostype("row_sparse")).stype == "row_sparse"
    assert nd.elemwise_div(c, w).stype == "default"
    head = rng.standard_normal((3, 4))
    with autograd.record():
        z = nd.multiply(w, c)
    assert z.stype == "csr"
    z.backward(nd.array(head, dtype="float64"))  # a sparse result back-propagates too
    _close(w.grad, a * head)
    with pytest.raises(ValueError, match="out_grad"):
        z.backward(nd.ones((2, 2), dtype="float64"))


def test_sparse_unary_functions_round_as_the_dense_ones():
    v = onp.array([[0.5, 1.5, 2.5, -0.5, 0.0]])
    for stype in ("csr", "row_sparse"):
        s_ = nd.array(v).tostype(stype)
        for name in ("round", "rint", "fix", "ceil", "floor"):
            want = getattr(nd, name)(nd.array(v)).asnumpy()
            got = getattr(nd, name)(s_)
            assert got.stype == stype
            onp.testing.assert_array_equal(got.asnumpy(), want)
    onp.testing.assert_array_equal(nd.round(nd.array(v)).asnumpy(), [[1, 2, 3, -1, 0]])


def test_keyword_sparse_arguments_take_the_sparse_version():
    c = nd.array([[0.0, 1.0], [2.0, 0.0]]).tostype("csr")
    assert nd.elemwise_add(lhs=c, rhs=c).stype == "csr"
    assert nd.abs(data=c).stype == "csr"


def test_slice_concat_zeros_like_keep_csr_storage(rng):
    # MXNet: slice(csr) = csr, concat(csr, ..., dim=0) = csr, zeros_like keeps the stype
    x = _dense(rng, (5, 6), density=0.4)
    y = _dense(rng, (3, 6), density=0.4)
    c, d = nd.array(x, dtype="float64").tostype("csr"), nd.array(y, dtype="float64").tostype("csr")
    out = nd.slice(c, begin=(1, 2), end=(4, 5))
    assert out.stype == "csr"
    out.check_format()
    _close(out.asnumpy(), x[1:4, 2:5])
    assert nd.slice(c, begin=(2,), end=(None,)).shape == (3, 6)
    joined = nd.concat(c, d, dim=0)
    assert joined.stype == "csr"
    joined.check_format()
    _close(joined.asnumpy(), onp.concatenate([x, y]))
    side = nd.concat(c, nd.array(x, dtype="float64"), dim=1)  # other cases: dense
    assert side.stype == "default"
    _close(side, onp.concatenate([x, x], axis=1))
    z = nd.zeros_like(c)
    assert z.stype == "csr" and z.data.size == 0 and z.shape == c.shape
    assert nd.stop_gradient(c).stype == "csr"
    with pytest.raises(ValueError, match="columns"):
        sparse.concat(c, nd.ones((2, 3)).tostype("csr"), dim=0)
    # the rest of MXNet's nd.sparse namespace: the nd functions (storage fallback)
    _close(sparse.broadcast_add(c, nd.ones((6,), dtype="float64")), x + 1)
    with pytest.raises(AttributeError):
        sparse.no_such_function  # noqa: B018


def test_integer_sparse_arrays_as_mxnets_tutorial():
    # MXNet's CSRNDArray tutorial: int64 NumPy parts give an int64 matrix
    a = sparse.csr_matrix((onp.array([7, 8, 9]), onp.array([0, 2, 1]), onp.array([0, 2, 2, 3])),
                          shape=(3, 4))
    assert a.dtype == onp.int64
    onp.testing.assert_array_equal(a.asnumpy(), [[7, 0, 8, 0], [0, 0, 0, 0], [0, 9, 0, 0]])
    big = 2 ** 40 + 3  # integers go through float64 in the kernels: exact below 2**53
    w = nd.array(onp.array([[1], [2], [big], [4]]), dtype="int64")
    out = nd.dot(a, w)
    assert out.dtype == onp.int64
    onp.testing.assert_array_equal(out.asnumpy().ravel(), [7 + 8 * big, 0, 18])
    assert int(sparse.sum(a).asnumpy()) == 24
    r = sparse.row_sparse_array((onp.array([[1, 2], [3, 4]]), onp.array([1, 4])), shape=(6, 2))
    assert r.dtype == onp.int64 and r.asnumpy()[4].tolist() == [3, 4]
    d = nd.array(onp.array([[0, 5], [6, 0]]), dtype="int32").tostype("csr")
    assert d.dtype == onp.int32 and d.data.asnumpy().tolist() == [5, 6]
    assert (d * 2).asnumpy().tolist() == [[0, 10], [12, 0]]


def test_ndarray_iter_batches_a_csr_matrix(rng):
    # MXNet's NDArrayIter over a CSRNDArray (the CSR tutorial): batches stay CSR
    x = _dense(rng, (9, 4), density=0.5, dtype="float32")
    it = mx.io.NDArrayIter(nd.array(x).tostype("csr"), onp.arange(9), 3,
                           last_batch_handle="discard")
    batches = list(it)
    assert len(batches) == 3 and all(b.data[0].stype == "csr" for b in batches)
    onp.testing.assert_array_equal(batches[1].data[0].asnumpy(), x[3:6])
    onp.random.seed(0)
    it = mx.io.NDArrayIter(sp.csr_matrix(x[:5]), onp.arange(5), 2, shuffle=True,
                           last_batch_handle="pad")  # SciPy input, shuffled, padded
    seen = []
    for b in it:
        rows, labels = b.data[0].asnumpy(), b.label[0].asnumpy().astype(int)
        onp.testing.assert_array_equal(rows, x[labels])  # rows and labels stay paired
        seen += labels[:len(labels) - b.pad].tolist()
    assert sorted(seen) == [0, 1, 2, 3, 4] and b.pad == 1 and b.data[0].stype == "csr"
    with pytest.raises(TypeError, match="only csr"):
        mx.io.NDArrayIter(nd.array(x).tostype("row_sparse"), batch_size=2)


def test_take_rows_of_a_csr_matrix(rng):
    x = _dense(rng, (5, 3), density=0.5)
    c = nd.array(x, dtype="float64").tostype("csr")
    idx = [4, 0, 0, 2]
    out = nd.take(c, nd.array(idx))
    assert out.stype == "csr"
    out.check_format()
    _close(out.asnumpy(), x[idx])
    _close(sparse.take(c, [7, -1], mode="clip").asnumpy(), x[[4, 0]])
    _close(sparse.take(c, [7, -1], mode="wrap").asnumpy(), x[[2, 4]])
    assert nd.take(c, nd.array([1]), axis=1).stype == "default"


def test_dense_copyto_a_sparse_array():
    f = sparse.zeros("csr", (2, 2))
    assert nd.array([[0.0, 1.0], [2.0, 0.0]]).copyto(f) is f
    assert f.stype == "csr" and f.asnumpy().tolist() == [[0, 1], [2, 0]]
    with pytest.raises(ValueError, match="shape"):
        nd.ones((3, 2)).copyto(f)


def test_parts_are_copies_and_casts_copy(rng):
    x = _dense(rng, (3, 4), density=0.6)
    c = nd.array(x, dtype="float64").tostype("csr")
    c.data[:] = 0  # MXNet's data / indices / indptr are deep copies
    c.indices[:] = 0
    c.indptr[:] = 0
    _close(c.asnumpy(), x)
    same = c.tostype("csr")  # cast_storage returns a copy
    same *= 0
    _close(c.asnumpy(), x)
    dense = nd.zeros((3, 4), dtype="float64")
    assert c.copyto(dense) is dense
    _close(dense, x)
    with pytest.raises(ValueError, match="shape"):
        c.copyto(nd.zeros((4, 3), dtype="float64"))


def test_scipy_input_is_put_in_canonical_form():
    m = sp.csr_matrix((onp.array([1.0, 2.0, 5.0]), onp.array([2, 2, 0]), onp.array([0, 3, 3])),
                      shape=(2, 3))  # row 0: a duplicate of column 2 and unsorted columns
    assert not m.has_canonical_format
    c = sparse.csr_matrix(m)
    c.check_format()
    assert c.indices.asnumpy().tolist() == [0, 2] and c.data.asnumpy().tolist() == [5.0, 3.0]
    _close(sparse.norm(c), onp.linalg.norm(m.toarray()))
    _close(sparse.sqrt(c).asnumpy(), onp.sqrt(m.toarray()))
    assert m.indices.tolist() == [2, 2, 0]  # the caller's matrix is left as it was


def test_sparse_argument_errors_name_the_function():
    c = nd.ones((2, 3)).tostype("csr")
    with pytest.raises(ValueError, match=r"csr_matrix.*2-D"):
        sparse.csr_matrix([2.0, 3.0])
    with pytest.raises(TypeError, match=r"nd.sparse.csr_matrix\] dtype"):
        sparse.csr_matrix((onp.array([True, False]), [0, 1], [0, 1, 2]), shape=(2, 2))
    with pytest.raises(TypeError, match=r"nd.sparse.zeros\] dtype"):
        sparse.zeros("csr", (2, 2), dtype="bool")
    with pytest.raises(TypeError, match=r"astype\] dtype"):
        c.astype("bool")
    with pytest.raises(ValueError, match="int64"):
        sparse.csr_matrix(([1.0], onp.array([2 ** 63 + 5], onp.uint64), [0, 1]), shape=(1, 3))
    with pytest.raises(ValueError, match="shape"):
        sparse.row_sparse_array(nd.ones((2, 2)).tostype("row_sparse"), shape=(3, 3))
    with pytest.raises(ValueError, match="out of range"):
        sparse.sum(c, axis=(0, 5))
    with pytest.raises(ValueError, match="repeats"):
        sparse.sum(c, axis=(1, -1))
    _close(sparse.clip(c * 0.5, None, 0.25).asnumpy(), onp.full((2, 3), 0.25))


@pytest.mark.parametrize("axis,exclude", [((1, 2), False), ((0, 2), False), ((0,), True),
                                          ((), False)])
def test_row_sparse_reductions_over_several_axes(rng, axis, exclude):
    x = _dense(rng, (4, 3, 2), density=0.5)
    x[1] = 0
    r = nd.array(x, dtype="float64").tostype("row_sparse")
    axes = tuple(a for a in range(3) if a not in axis) if exclude else axis or None
    _close(sparse.sum(r, axis=axis, exclude=exclude), x.sum(axis=axes))
    _close(sparse.mean(r, axis=axis, exclude=exclude), x.mean(axis=axes))


def test_rand_ndarray_with_a_sparse_stype():
    onp.random.seed(3)
    c = mx.test_utils.rand_ndarray((200, 50), stype="csr", density=0.1)
    assert c.stype == "csr" and c.shape == (200, 50)
    assert 0.07 < c.data.size / 10000 < 0.13
    c.check_format()
    r = mx.test_utils.rand_ndarray((300, 4), stype="row_sparse", density=0.5)
    assert r.stype == "row_sparse" and 100 < r.indices.size < 200
