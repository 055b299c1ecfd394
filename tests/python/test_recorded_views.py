"""Shape ops on arrays autograd records (reshape, transpose, swapaxes, expand_dims, squeeze,
basic slicing) give views, as NumPy's and as ndx's unrecorded ones do, and their gradients
reach the viewed elements: the reference scatters the weights through the same view of an
array of positions (NumPy), so any composition is checked."""
import numpy as onp
import pytest

from ndx import autograd, np, npx

R = onp.random.default_rng(11)

VIEWS = {
    "reshape": lambda a: a.reshape(6, 4),
    "reshape -1": lambda a: a.reshape(-1),
    "T": lambda a: a.T,
    "transpose axes": lambda a: a.transpose(1, 0, 2),
    "np.transpose": lambda a: (np if isinstance(a, np.ndarray) else onp).transpose(a, (2, 0, 1)),
    "swapaxes": lambda a: a.swapaxes(0, 2),
    "expand_dims": lambda a: (np if isinstance(a, np.ndarray) else onp).expand_dims(a, 1),
    "squeeze": lambda a: a[:, :1].squeeze(1),
    "slices": lambda a: a[1:, ::2, 1:3],
    "int and None": lambda a: a[:, None, 2],
    "ellipsis": lambda a: a[..., -1],
    "negative step": lambda a: a[::-1, 1],
    "chain": lambda a: a.T.reshape(4, 6)[::2, 1:].reshape(-1)[::3],
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_recorded_shape_ops_are_views_with_scattered_gradients(name):
    f = VIEWS[name]
    values = R.standard_normal((2, 3, 4))
    x = np.array(values)
    x.attach_grad()
    with autograd.record():
        y = f(x)
        w = np.array(R.standard_normal(y.shape))
        loss = (y * w).sum()
    want_value = f(values)
    assert y.shape == want_value.shape
    onp.testing.assert_array_equal(y.asnumpy(), want_value)
    if name != "chain":  # (NumPy's own chain copies once, at a reshape of a transposed view)
        assert np.shares_memory(y, x)
    loss.backward()
    positions = f(onp.arange(values.size).reshape(values.shape))
    want = onp.bincount(positions.ravel(), weights=w.asnumpy().ravel(), minlength=values.size)
    onp.testing.assert_allclose(x.grad.asnumpy(), want.reshape(values.shape), rtol=1e-12)


def test_writes_into_a_recorded_view_leave_the_base_alone():
    # as before views: assignment gives the view a recorded buffer of its own, and in-place
    # arithmetic is refused, so the base and what backward saved of it never change
    x = np.ones((2, 3))
    x.attach_grad()
    with autograd.record():
        y = x.reshape(-1)
        y[0] = 5
        with pytest.raises(NotImplementedError, match="autograd records"):
            y += 1
        loss = (y * np.arange(6.0)).sum()
    loss.backward()
    onp.testing.assert_array_equal(y.asnumpy(), [5, 1, 1, 1, 1, 1])
    onp.testing.assert_array_equal(x.asnumpy(), onp.ones((2, 3)))
    onp.testing.assert_array_equal(x.grad.asnumpy(), [[0, 1, 2], [3, 4, 5]])


def test_second_order_through_recorded_views():
    values = R.standard_normal((3, 4))
    x = np.array(values)
    x.attach_grad()
    with autograd.record():
        y = (x.T[1:] ** 3).sum()
        (g,) = autograd.grad(y, [x], create_graph=True)  # 3 x^2 off the first column
        z = (g.reshape(-1) * np.array(onp.arange(12.0))).sum()
    z.backward()
    mask = onp.ones((3, 4))
    mask[:, 0] = 0
    want = 6 * values * mask * onp.arange(12.0).reshape(3, 4)
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-12)


def test_a_recorded_element_and_flatten_are_copies_as_numpy():
    x = np.arange(6.0).reshape(2, 3)
    x.attach_grad()
    with autograd.record():
        element, row_end, flat = x[1, 2], x[1, -1:], x.flatten()
    assert not np.shares_memory(element, x) and not np.shares_memory(flat, x)
    assert np.shares_memory(row_end, x)  # (a slice stays a view)
    element += 10  # outside record: the copies take writes, x does not change
    flat[0] = 100
    onp.testing.assert_array_equal(x.asnumpy(), onp.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("write", [
    lambda x: np.add(np.zeros((2, 2)), 1, out=x.T),
    lambda x: np.sum(np.ones((3, 2, 2)), axis=0, out=x.reshape(2, 2)),
    lambda x: np.sum(np.ones((3, 2, 2), dtype="float32"), axis=0, out=x[:, :]),  # (a cast)
    lambda x: np.zeros((2, 2)).copyto(x.reshape(2, 2)),
])
def test_writes_into_recorded_views_are_refused_and_the_gradient_stays_right(write):
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with autograd.record():
        s = (x * x).sum()
        with pytest.raises(NotImplementedError, match="autograd records"):
            write(x)
    s.backward()
    onp.testing.assert_array_equal(x.asnumpy(), [[1, 2], [3, 4]])
    onp.testing.assert_array_equal(x.grad.asnumpy(), [[2, 4], [6, 8]])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_masked_gathers_scatter_their_gradient_back(dtype):
    # the positions a mask reads are increasing: the embedding backward writes each row once
    values = R.standard_normal((6, 5)).astype(dtype)
    mask = values > 0
    rows = onp.array([True, False, True, True, False, True])
    x = np.array(values)
    x.attach_grad(grad_req="add")
    for _ in range(2):  # (the second backward adds)
        with autograd.record():
            loss = (x[np.array(mask)] * 3).sum() + (x[np.array(rows)] ** 2).sum()
        loss.backward()
    want = 2 * (3 * mask + 2 * values.astype(onp.float64) * rows[:, None])
    tol = 1e-2 if dtype == "float16" else 1e-6
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("ids", [[0, 2, 3, 7], [1, 1, 4, 6], [5, 0, 2, 2]])
def test_embedding_gradient_for_ordered_repeated_and_shuffled_ids(ids):
    table = R.standard_normal((8, 3))
    w = np.array(table)
    w.attach_grad()
    og = R.standard_normal((len(ids), 3))
    with autograd.record():
        y = npx.embedding(np.array(ids), w, input_dim=8, output_dim=3)
    y.backward(np.array(og))
    want = onp.zeros((8, 3))
    onp.add.at(want, ids, og)
    onp.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-12)


def test_a_mask_over_leading_axes_selects_cells_with_their_trailing_axes():
    values = R.standard_normal((3, 4, 2))
    mask = R.random((3, 4)) > 0.4
    x = np.array(values)
    x.attach_grad()
    w = R.standard_normal((int(mask.sum()), 2))
    with autograd.record():
        y = x[np.array(mask)]
        loss = (y * np.array(w)).sum()
    loss.backward()
    onp.testing.assert_array_equal(y.asnumpy(), values[mask])
    want = onp.zeros_like(values)
    want[mask] = w
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-12)
    with autograd.record():  # nothing selected, and a mismatched mask (NumPy's IndexError)
        assert x[np.zeros((3, 4), dtype=bool)].shape == (0, 2)
        with pytest.raises(IndexError):
            x[np.ones((3, 3), dtype=bool)]


@pytest.mark.parametrize("key", [
    lambda i: (slice(None), i), lambda i: (Ellipsis, i), lambda i: (slice(None), i, slice(None)),
    lambda i: (slice(None), slice(None), i)])
def test_an_index_array_after_whole_slices_takes_along_its_axis(key):
    values = R.standard_normal((3, 5, 4))
    idx = onp.array([[4, -1], [0, 0], [2, 3]]) % 4  # (repeats; within every axis here)
    idx[0, 1] = -1  # a negative index
    x = np.array(values)
    x.attach_grad()
    k = key(np.array(idx))
    want_value = values[key(idx)]
    w = R.standard_normal(want_value.shape)
    with autograd.record():
        y = x[k]
        loss = (y * np.array(w)).sum()
    loss.backward()
    onp.testing.assert_array_equal(y.asnumpy(), want_value)
    positions = onp.arange(values.size).reshape(values.shape)[key(idx)]
    want = onp.bincount(positions.ravel(), weights=w.ravel(), minlength=values.size)
    onp.testing.assert_allclose(x.grad.asnumpy(), want.reshape(values.shape), rtol=1e-12)
    with autograd.record(), pytest.raises(IndexError, match="out of bounds"):
        x[key(np.array([9]))]


@pytest.mark.parametrize("key", [lambda i: (slice(None), i), lambda i: i, lambda i: (Ellipsis, i)])
def test_second_order_through_index_arrays(key):
    values = R.standard_normal((3, 4))
    idx = onp.array([2, 0, 2, 1])[:3]
    x = np.array(values)
    x.attach_grad()
    w = R.standard_normal(values.shape)
    with autograd.record():
        (g,) = autograd.grad((x[key(np.array(idx))] ** 3).sum(), [x], create_graph=True)
        z = (g * np.array(w)).sum()
    z.backward()
    positions = onp.arange(values.size).reshape(values.shape)[key(idx)].ravel()
    y = values.ravel()[positions]
    want = onp.bincount(positions, weights=6 * y * w.ravel()[positions], minlength=values.size)
    onp.testing.assert_allclose(x.grad.asnumpy(), want.reshape(values.shape), rtol=1e-10)


@pytest.mark.parametrize("axis,mode", [(None, "raise"), (0, "raise"), (1, "wrap"), (-1, "clip"),
                                       (2, "raise")])
def test_take_under_autograd_scatters_and_differentiates_twice(axis, mode):
    """np.take while recording (the _npi_take op on the host): values as NumPy's, the
    gradient of (take(x)**3 * w).sum() and its gradient (second order) scattered back
    through the positions NumPy's take picks."""
    values = R.standard_normal((3, 5, 4))
    idx = onp.array([[3, -1], [0, 0], [2, 7]]) if mode != "raise" else \
        onp.array([[2, -1], [0, 0], [2, 1]])
    x = np.array(values)
    x.attach_grad()
    positions = onp.take(onp.arange(values.size).reshape(values.shape), idx, axis=axis,
                         mode=mode)
    w = R.standard_normal(positions.shape)
    v = R.standard_normal(values.shape)
    with autograd.record():
        y = np.take(x, np.array(idx), axis=axis, mode=mode)
        (g,) = autograd.grad((y ** 3 * np.array(w)).sum(), [x], create_graph=True)
        z = (g * np.array(v)).sum()
    z.backward()
    onp.testing.assert_array_equal(y.asnumpy(), onp.take(values, idx, axis=axis, mode=mode))
    flat, picked = positions.ravel(), values.ravel()[positions.ravel()]
    first = onp.bincount(flat, weights=3 * picked ** 2 * w.ravel(), minlength=values.size)
    onp.testing.assert_allclose(g.asnumpy(), first.reshape(values.shape), rtol=1e-10)
    second = onp.bincount(flat, weights=6 * picked * w.ravel() * v.ravel()[flat],
                          minlength=values.size)
    onp.testing.assert_allclose(x.grad.asnumpy(), second.reshape(values.shape), rtol=1e-10)
    with autograd.record(), pytest.raises(IndexError, match="out of bounds"):
        np.take(x, np.array([9]), axis=1)
    for extreme in (2**63 - 1, -2**63, -6):  # (k + n would overflow a signed sum)
        with pytest.raises(IndexError, match=f"index {extreme} is out of bounds"):
            np.take(x, np.array([0, extreme], dtype="int64"), axis=1)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_large_takes_and_their_gradients_match_numpy_on_any_thread_count(axis, threads):
    """Sizes past the threads' grain (the element gather of the last axis, the row spans of
    the gradient's scatter): values as NumPy's take, gradients as NumPy's np.add.at of the
    output weights, in float64 so the repeats' sums (in index order) compare exactly."""
    values = R.standard_normal((40, 300, 30))
    n = values.shape[axis]
    idx = R.integers(-n, n, (2 * n + 3,))  # (repeats; about twice the input)
    positions = onp.take(onp.arange(values.size).reshape(values.shape), idx, axis=axis)
    w = R.standard_normal(positions.shape)
    want = onp.zeros(values.size)
    onp.add.at(want, positions.ravel(), w.ravel())
    npx.set_num_threads(threads)
    try:
        x = np.array(values)
        x.attach_grad()
        with autograd.record():
            y = np.take(x, np.array(idx), axis=axis)
            loss = (y * np.array(w)).sum()
        loss.backward()
        for dtype in ("int8", "float16", "complex128"):  # every element width of the gather
            v = values.astype(dtype)
            onp.testing.assert_array_equal(np.take(np.array(v), np.array(idx), axis=axis)
                                           .asnumpy(), onp.take(v, idx, axis=axis))
    finally:
        npx.set_num_threads(None)
    onp.testing.assert_array_equal(y.asnumpy(), onp.take(values, idx, axis=axis))
    onp.testing.assert_allclose(x.grad.asnumpy(), want.reshape(values.shape), rtol=1e-12,
                                atol=1e-12)
