"""Indexing under autograd (gathers and assignments scatter-add their gradients), 0-d boolean
masks, and MXNet's npx routines (reshape codes, index_add / index_update, gather_nd,
scatter_nd, boolean_mask) against NumPy, hand computations and MXNet's documented examples."""
import numpy as onp
import pytest

from ndx import autograd, np, npx

R = onp.random.default_rng(5)
A = R.standard_normal((3, 4))


def _grad_of(fn, base=A):
    """x.grad of sum(w * fn(x)) and the weights w."""
    x = np.array(base, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = fn(x)
    w = R.standard_normal(y.shape)
    with autograd.record():
        loss = np.sum(fn(x) * np.array(w))
    loss.backward()
    return x.grad.asnumpy(), w


@pytest.mark.parametrize("key", [
    ([0, 2, 0],), (onp.array([[1, 1], [2, 0]]),), (slice(None), [3, 0, 3]),
    ([0, 2], [1, 1]), (A > 0,), (Ellipsis, [1]), (True,), (None, [2, 2]),
    (onp.array([0, 1]), slice(1, 3)), (False,),
], ids=lambda k: repr(k)[:30])
def test_recorded_gather_scatter_adds(key):
    key = tuple(np.array(k) if isinstance(k, onp.ndarray) else k for k in key)
    nkey = tuple(k.asnumpy() if isinstance(k, np.ndarray) else k for k in key)
    grad, w = _grad_of(lambda x: x[key])
    want = onp.zeros_like(A)
    onp.add.at(want, nkey, w)  # the transpose of the gather: an unbuffered scatter-add
    onp.testing.assert_allclose(grad, want)
    assert np.array(A)[key].shape == A[nkey].shape


def test_recorded_assignment():
    v = np.array([1.0, 2.0], dtype="float64")
    w = np.array(A, dtype="float64")
    v.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = w * 2
        y[np.array([0, 1, 0]), np.array([1, 1, 1])] = np.stack([v[0], v[1], v[1]]) * 3
        y[0, 0] = v[0]
        y[2:] = 7.0
        y[y > 100] = 0.0  # selects nothing: a no-op
        loss = (y * y).sum()
    loss.backward()
    want = 2 * A
    want[0, 1], want[1, 1], want[0, 0], want[2:] = 6.0, 6.0, 1.0, 7.0  # later writes win
    onp.testing.assert_allclose(y.asnumpy(), want)
    gw = 2 * want * 2
    gw[0, 1] = gw[1, 1] = gw[0, 0] = 0.0
    gw[2:] = 0.0
    onp.testing.assert_allclose(w.grad.asnumpy(), gw)
    # v[0] lands at (0, 0) (3 * v[0] at (0, 1) was overwritten); v[1] at (1, 1) and (0, 1).
    onp.testing.assert_allclose(v.grad.asnumpy(), [2 * 1.0, 2 * 6.0 * 3 + 2 * 6.0 * 3])


def test_assignment_of_recorded_values_into_a_plain_array():
    v = np.array([1.0, 2.0])
    v.attach_grad()
    base = np.zeros((2, 3))
    view = base[0]
    with autograd.record():
        base[0, np.array([0, 2])] = v * v
        loss = base.sum()
    loss.backward()
    assert view.tolist() == [1.0, 0.0, 4.0]  # an array nobody records is written in place
    assert v.grad.tolist() == [2.0, 4.0]


def test_assignment_refusals():
    x = np.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        with pytest.raises(ValueError, match="attached gradient"):
            x[0] = 3.0
        y = x * 1
        with pytest.raises(ValueError, match="broadcast"):
            y[np.array([0, 1])] = np.ones(3)
        with pytest.raises(IndexError):
            y[np.array([5])] = 1.0
    assert x.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("key", [True, False, (True, 0), (False, 0), (Ellipsis, True),
                                 (0, True), (True, [0, 1]), (True, True), (slice(1), False)])
def test_zero_dim_boolean_masks_as_numpy(key):
    a = onp.arange(12.0).reshape(3, 4)
    got = np.array(a)[key]
    onp.testing.assert_array_equal(got.asnumpy(), a[key])
    b = np.array(a)
    b[key] = -1.0
    c = a.copy()
    c[key] = -1.0
    onp.testing.assert_array_equal(b.asnumpy(), c)
    assert np.array(a)[np.array(True)].shape == (1, 3, 4)
    assert np.array(a)[np.array(False)].shape == (0, 3, 4)
    assert np.array(5.0)[True].shape == (1,)


def test_npx_reshape_as_mxnet_documents():
    cases = [((2, 3, 8), (-2, -2, 2, -1), False, (2, 3, 2, 4)),
             ((8, 3, 3, 3, 4, 4), (-6, 2, -1, -4), False, (2, 4, 3, 3, 3, 4, 4)),
             ((8, 3, 3, 3, 4, 4), (-5, -4), False, (24, 3, 3, 4, 4)),
             ((8, 1, 1, 1, 3), (-2, -3, -3, -3, -2), False, (8, 3)),
             ((8, 3, 3, 3, 3, 8), (-4, -5), True, (8, 3, 3, 3, 24)),
             ((8, 3, 2, 4, 8), (-4, -1, 2, -6), True, (8, 3, 2, 4, 4, 2)),
             ((2, 3, 4), (6, -1), False, (6, 4)), ((0, 3), (-1, 3), False, (0, 3)),
             ((2, 3), (-4,), False, (2, 3)), ((2, 3), 6, False, (6,))]
    for shape, codes, reverse, want in cases:
        a = onp.arange(onp.prod(shape), dtype=onp.float32).reshape(shape)
        got = npx.reshape(np.array(a), codes, reverse=reverse)
        assert got.shape == want
        onp.testing.assert_array_equal(got.asnumpy(), a.reshape(want))
    x = np.ones((2, 3, 4))
    for codes, msg in [((-3, -4), "size 1"), ((-1, -1), "one unknown"), ((5, -1), "cannot"),
                       ((-6, 3, 3, -4), "split"), ((-5, -5), "past"), ((-7,), "invalid"),
                       ((-6, 2), "followed")]:
        with pytest.raises(ValueError, match=msg):
            npx.reshape(x, codes)
    with pytest.raises(TypeError):
        npx.reshape(x, (2.5, -1))


def test_index_add_and_update_as_mxnet_documents():
    a = np.zeros((2, 3, 4))
    got = npx.index_add(a, np.array([[0, 0], [0, 0], [0, 1]], dtype="int32"),
                        np.arange(2).reshape(2) + 1)
    want = onp.zeros((2, 3, 4))
    want[0, 0, 0], want[0, 0, 1] = 1, 2
    onp.testing.assert_array_equal(got.asnumpy(), want)
    ind = np.array([[0, 0], [0, 1]], dtype="int32")
    want = onp.zeros((2, 3, 4))
    want[0, 0], want[0, 1] = onp.arange(4), onp.arange(4, 8)
    onp.testing.assert_array_equal(npx.index_add(a, ind, np.arange(8).reshape(2, 4)).asnumpy(),
                                   want)
    want[0, 1] = onp.arange(4)
    onp.testing.assert_array_equal(npx.index_add(a, ind, np.arange(4)).asnumpy(), want)
    onp.testing.assert_array_equal(npx.index_update(a, ind, np.arange(4)).asnumpy(), want)
    # Repeated positions accumulate in index_add; in index_update the last one wins.
    base = onp.arange(5, dtype=onp.int64)
    dup = np.array([[1, 1, -1]])
    want = base.copy()
    onp.add.at(want, [1, 1, -1], [10, 20, 30])
    got = npx.index_add(np.array(base), dup, np.array([10, 20, 30]))
    assert got.dtype == onp.int64
    onp.testing.assert_array_equal(got.asnumpy(), want)
    onp.testing.assert_array_equal(
        npx.index_update(np.array(base), dup, np.array([10, 20, 30])).asnumpy(), [0, 20, 2, 3, 30])
    with pytest.raises(IndexError):
        npx.index_add(np.array(base), np.array([[5]]), np.array([1]))
    with pytest.raises(TypeError):
        npx.index_add(np.array(base), np.array([[0.5]]), np.array([1]))
    with pytest.raises(ValueError, match="broadcast"):
        npx.index_add(a, ind, np.ones(3))
    with pytest.raises(ValueError, match="dimensions"):
        npx.index_update(np.array(base), np.array([[0], [0]]), np.array([1]))
    # Gradients: identity for a, a gather for val.
    w = np.array(A)
    v = np.array([1.0, 2.0, 3.0])
    w.attach_grad()
    v.attach_grad()
    with autograd.record():
        r = npx.index_add(w * 1, np.array([[0, 0, 2], [1, 1, 3]]), v)
        (r * np.array(A)).sum().backward()
    onp.testing.assert_allclose(w.grad.asnumpy(), A, rtol=1e-6)
    onp.testing.assert_allclose(v.grad.asnumpy(), [A[0, 1], A[0, 1], A[2, 3]], rtol=1e-6)


def test_gather_scatter_nd_and_boolean_mask():
    d = onp.arange(24.0).reshape(2, 3, 4)
    idx = onp.array([[0, 1, 1], [2, 0, 2]])
    got = npx.gather_nd(np.array(d), np.array(idx))
    onp.testing.assert_array_equal(got.asnumpy(), d[idx[0], idx[1]])
    assert got.shape == (3, 4)
    out = npx.scatter_nd(np.array([1.0, 2.0]), np.array([[0, 2], [1, 3]]), (3, 4))
    want = onp.zeros((3, 4))
    want[0, 1], want[2, 3] = 1.0, 2.0
    onp.testing.assert_array_equal(out.asnumpy(), want)
    rows = npx.scatter_nd(np.array([[1.0, 2.0]]), np.array([[1]]), (3, 2))
    onp.testing.assert_array_equal(rows.asnumpy(), [[0, 0], [1, 2], [0, 0]])
    with pytest.raises(ValueError, match="expected"):
        npx.scatter_nd(np.array([1.0]), np.array([[0, 2], [1, 3]]), (3, 4))
    with pytest.raises(IndexError):
        npx.gather_nd(np.array(d), np.array([[5]]))
    m = np.array(d[0])
    onp.testing.assert_array_equal(npx.boolean_mask(m, np.array([1, 0, 1])).asnumpy(),
                                   d[0][[0, 2]])
    onp.testing.assert_array_equal(
        npx.boolean_mask(m, np.array([True, False, False, True]), axis=1).asnumpy(),
        d[0][:, [0, 3]])
    with pytest.raises(ValueError, match="elements"):
        npx.boolean_mask(m, np.array([1, 0]))
    # Gradients flow through the gathers and the scatter.
    grad, w = _grad_of(lambda x: npx.gather_nd(x, np.array([[0, 0, 2], [1, 1, 3]])))
    want = onp.zeros_like(A)
    onp.add.at(want, ([0, 0, 2], [1, 1, 3]), w)
    onp.testing.assert_allclose(grad, want)
    grad, w = _grad_of(lambda x: npx.boolean_mask(x, np.array([0, 1, 1])))
    onp.testing.assert_allclose(grad, onp.concatenate([onp.zeros((1, 4)), w]))
    grad, w = _grad_of(lambda x: npx.scatter_nd(x[0], np.array([[3, 1, 0, 2]]), (5,)))
    onp.testing.assert_allclose(grad[0], w[[3, 1, 0, 2]])


@pytest.mark.parametrize("shape,index", [
    ((5,), [4, -1, 0, -5]), ((4, 3), [[-1, 2], [2, 0]]), ((3, 2, 2), [2, -3, 2]),
    ((4, 3), onp.array([], dtype=onp.int64)),
])
def test_recorded_rows_lookup_takes_numpy_indices(shape, index):
    # a[rows] on axis 0 (an embedding's lookup): negative rows count from the end, repeats
    # add their gradients; NumPy's np.add.at is the reference
    base = R.standard_normal(shape)
    idx = onp.asarray(index, dtype=onp.int64)
    grad, w = _grad_of(lambda x: x[np.array(idx)], base)
    want = onp.zeros_like(base)
    onp.add.at(want, idx, w)
    onp.testing.assert_allclose(grad, want)
    x = np.array(base)
    x.attach_grad()
    with autograd.record():
        got = x[np.array(idx)]
    onp.testing.assert_array_equal(got.asnumpy(), base[idx])


def test_recorded_rows_lookup_out_of_range_is_an_index_error():
    x = np.array(A)
    x.attach_grad()
    for bad in ([3], [-4]):
        with autograd.record(), pytest.raises(IndexError, match="out of bounds for axis 0"):
            x[np.array(bad)]
