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
