"""Indexing against NumPy: basic keys (views), integer arrays, boolean masks, and mixtures,
for reading and for assignment; and the errors bad keys raise."""
import numpy as onp
import pytest

from ndx import np

BASE = onp.arange(120, dtype=onp.float32).reshape(4, 5, 6)

KEYS = [
    [0, 2],
    [[0, 1], [3, 2]],
    onp.array([3, -1, 0]),
    (slice(None), [1, 3]),
    (slice(None), slice(None), [0, 5, 5]),
    ([0, 1], [2, 3]),
    ([0, 1], slice(1, 3), [2, 3]),  # advanced items apart: broadcast dims go first
    (slice(1, 3), [0, 4], [1, 2]),  # adjacent after a slice: they stay in place
    (1, [0, 2]),  # an int next to an array counts as advanced
    ([1], 2, slice(None)),
    (Ellipsis, [0, 1]),
    (None, [0, 1]),
    ([[0], [1]], [2, 3]),  # broadcasting of index arrays
    BASE[:, 0, 0] > 30,  # boolean mask on axis 0
    BASE[:, :, 0] % 2 == 0,  # 2-d mask
    (slice(None), BASE[0, :, 0] > 10),
    BASE > 100,
    [],
    (onp.array([], dtype=onp.int64), slice(None)),
    BASE[:, 0, 0] > 1000,  # mask selecting nothing
]


def _np_key(key):
    """The same key with NumPy arrays replaced by ndx arrays where they are arrays."""
    if isinstance(key, tuple):
        return tuple(_np_key(k) for k in key)
    if isinstance(key, onp.ndarray):
        return np.array(key)
    return key


@pytest.mark.parametrize("key", KEYS, ids=[f"key{i}" for i in range(len(KEYS))])
@pytest.mark.parametrize("as_ndx", [False, True], ids=["numpy-key", "ndx-key"])
def test_advanced_getitem_matches_numpy(key, as_ndx):
    a = np.array(BASE)
    got = a[_np_key(key) if as_ndx else key]
    want = BASE[key]
    assert got.shape == want.shape
    onp.testing.assert_array_equal(got.asnumpy(), want)
    # Advanced indexing copies: writing to the result leaves the base alone.
    if got.size:
        got[...] = -1
        onp.testing.assert_array_equal(a.asnumpy(), BASE)


@pytest.mark.parametrize("key", KEYS, ids=[f"key{i}" for i in range(len(KEYS))])
def test_advanced_setitem_matches_numpy(key):
    a = np.array(BASE)
    ref = BASE.copy()
    ref[key] = -7
    a[key] = -7
    onp.testing.assert_array_equal(a.asnumpy(), ref)
    # Assigning an array of the indexed shape.
    ref2 = BASE.copy()
    vals = onp.arange(ref2[key].size, dtype=onp.float32).reshape(ref2[key].shape)
    ref2[key] = vals
    b = np.array(BASE)
    b[key] = np.array(vals)
    onp.testing.assert_array_equal(b.asnumpy(), ref2)


def test_index_dtypes_and_negative_indices():
    a = np.array(BASE)
    for dt in ["int8", "int32", "uint8", "int64"]:
        idx = onp.array([0, 3, 1], dtype=dt)
        onp.testing.assert_array_equal(a[np.array(idx)].asnumpy(), BASE[idx])
    onp.testing.assert_array_equal(a[[-1, -4]].asnumpy(), BASE[[-1, -4]])


@pytest.mark.parametrize("key,exc", [
    ([0, 4], IndexError),  # out of bounds
    ([[0, 1], [2]], ValueError),  # ragged list (NumPy refuses to make an array)
    (onp.array([1.0, 2.0]), IndexError),  # float indices
    (BASE[:2, 0, 0] > 0, IndexError),  # mask of the wrong length
    (([0, 1], [0, 1, 2]), IndexError),  # index arrays that do not broadcast
    ((0, 0, 0, 0), IndexError),
])
def test_bad_advanced_keys_raise(key, exc):
    a = np.array(BASE)
    with pytest.raises(exc):
        a[key]
    with pytest.raises(exc):
        BASE[key]  # NumPy agrees on the kind of error


def _ndx_view(base, layout):
    """base (4, 5, 6) as a non-C-contiguous ndx array: every other row of a (4, 10, 6) array,
    or the transpose of a (6, 5, 4) one. Returns (the view, its storage array)."""
    if layout == "every-other-row":
        store = np.zeros((4, 10, 6), dtype=str(base.dtype))
        view = store[:, ::2, :]
    else:
        store = np.zeros((6, 5, 4), dtype=str(base.dtype))
        view = store.transpose(2, 1, 0)
    view[...] = np.array(base)
    return view, store


@pytest.mark.parametrize("layout", ["every-other-row", "transposed"])
@pytest.mark.parametrize("dtype", ["int8", "float16", "int64", "bool"])
def test_advanced_indexing_of_strided_views_in_every_item_size(layout, dtype):
    # Contiguous blocks copy as words of the item size; strided ones take the general path.
    base = (BASE % 3 == 0) if dtype == "bool" else BASE.astype(dtype)
    for i, key in enumerate(KEYS):
        view, _ = _ndx_view(base, layout)
        want = base[key]
        got = view[_np_key(key)]
        assert got.shape == want.shape, i
        onp.testing.assert_array_equal(got.asnumpy(), want)
        # Assignment through the view reaches its storage.
        ref = base.copy()
        vals = onp.ones(ref[key].shape, dtype=base.dtype)
        ref[key] = vals
        view[_np_key(key)] = np.array(vals)
        onp.testing.assert_array_equal(view.asnumpy(), ref)


def test_full_mask_selection_of_views_matches_numpy():
    x = onp.arange(60, dtype=onp.int16).reshape(6, 10)
    a = np.array(x)
    for nd, ref in ((a, x), (a.T, x.T), (a[::2, 3:], x[::2, 3:])):
        mask = ref % 3 == 1
        onp.testing.assert_array_equal(nd[np.array(mask)].asnumpy(), ref[mask])


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "int32", "float64",
                                   "int64", "uint64"])
@pytest.mark.parametrize("n", [0, 1, 7, 16, 33, 1000, 4099])
def test_full_mask_selection_of_every_item_size_and_length_matches_numpy(dtype, n):
    """x[mask] with a mask of x's shape counts the mask and copies the kept elements a
    vector at a time for 4- and 8-byte items (a scalar copy for 1 and 2): every item size,
    lengths around the vector widths, masks all-False, all-True, sparse and dense."""
    rng = onp.random.default_rng(n)
    x = (rng.normal(size=n) * 100).astype(dtype)
    if dtype == "float64":
        x[::5] = onp.nan  # a payload copied, not compared
    a = np.array(x)
    for mask in (onp.zeros(n, bool), onp.ones(n, bool), rng.uniform(size=n) < 0.05,
                 rng.uniform(size=n) < 0.7):
        got = a[np.array(mask)].asnumpy()
        assert got.dtype == x.dtype and got.shape == x[mask].shape
        onp.testing.assert_array_equal(got, x[mask])
    m2 = rng.uniform(size=(3, n)) < 0.5
    x2 = onp.stack([x, x[::-1], x]) if n else onp.zeros((3, 0), dtype)
    onp.testing.assert_array_equal(np.array(x2)[np.array(m2)].asnumpy(), x2[m2])


@pytest.mark.parametrize("key", [range(3), (range(3), range(3)), (slice(None), range(1, 4, 2)),
                                 range(0), (range(2), onp.array([0, 3]))])
def test_range_and_other_sequences_index_as_integer_arrays(key):
    # NumPy turns a non-tuple sequence into an index array (d2l's y_hat[range(n), y])
    ref = onp.arange(12.0).reshape(3, 4)
    a = np.array(ref)
    k = tuple(np.array(p) if isinstance(p, onp.ndarray) else p for p in key) \
        if isinstance(key, tuple) else key
    onp.testing.assert_array_equal(a[k].asnumpy(), ref[key])
    b, want = np.array(ref), ref.copy()
    b[k] = -1.0
    want[key] = -1.0
    onp.testing.assert_array_equal(b.asnumpy(), want)
    with pytest.raises(IndexError):
        a["ab"]


@pytest.mark.parametrize("key", [(onp.int64(1), 2), (onp.int32(2), onp.int8(3)), (1, onp.int64(0)),
                                 onp.int64(1)])
def test_numpy_integer_scalar_keys_give_an_element_copy_or_a_view_as_numpy(key):
    # an element is a copy (NumPy's scalar), a row a view: with NumPy integer scalars too
    ref = onp.arange(12.0).reshape(3, 4)
    a = np.array(ref)
    got, want = a[key], ref[key].copy()
    a[key] = -7.0
    if onp.ndim(want) == 0:
        assert float(got) == float(want)  # unchanged by the write
    else:
        onp.testing.assert_array_equal(got.asnumpy(), onp.full(want.shape, -7.0))  # a view


@pytest.mark.parametrize("key", [b"\x01", "a"])
def test_bytes_and_str_keys_are_index_errors_as_numpy(key):
    with pytest.raises(IndexError):
        onp.arange(3)[key]
    with pytest.raises(IndexError):
        np.arange(3)[key]
