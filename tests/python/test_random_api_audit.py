"""np.random audit against NumPy 2.4's API: randint / Generator.integers array bounds (checked
against the dtype's range, exact past 2**53, endpoint at a dtype's maximum), shuffle of NumPy
arrays and mutable sequences, Generator.choice without replacement from a huge range. Errors
are compared with NumPy's exception types, samples with exact distributions (chi-square with
fixed seeds)."""
import numpy as onp
import pytest
import scipy.stats as st

import ndx.numpy as np

N = 20000


def _chi2_uniform_p(values, k):
    """p-value of values (ints in range(k)) against the uniform distribution on range(k)."""
    return st.chisquare(onp.bincount(values, minlength=k)).pvalue


@pytest.mark.parametrize("call", [
    lambda r: r.randint(0, [10, 300], dtype="uint8"),
    lambda r: r.randint([-1, 0], 10, dtype="uint8"),
    lambda r: r.randint([-129, 0], 10, dtype="int8"),
    lambda r: r.randint([0, 0], [2, 3], dtype=bool),
    lambda r: r.randint(0, [2**31, 2**31 + 1], dtype="int32"),
    lambda r: r.randint([0], [2**63 + 1]),
])
def test_randint_array_bounds_are_checked_against_the_dtype(call):
    with pytest.raises(ValueError):
        call(onp.random)  # the reference
    with pytest.raises(ValueError, match=r"\[randint\] (low|high) is out of bounds"):
        call(np.random)


def test_randint_array_bounds_of_ndx_arrays_and_integers_endpoint_are_checked():
    with pytest.raises(ValueError, match="high is out of bounds for uint8"):
        np.random.randint(np.array([1, 2]), np.array([3, 300]), dtype="uint8")
    g = np.random.default_rng(0)
    with pytest.raises(ValueError):
        onp.random.default_rng(0).integers(0, [255, 256], dtype="uint8", endpoint=True)
    with pytest.raises(ValueError, match="high is out of bounds for uint8"):
        g.integers(0, [255, 256], dtype="uint8", endpoint=True)
    x = g.integers([0, 250], [255, 255], size=(N, 2), dtype="uint8", endpoint=True).asnumpy()
    assert x.dtype == onp.uint8 and x[:, 1].min() == 250 and x[:, 1].max() == 255
    assert _chi2_uniform_p(x[:, 0], 256) > 1e-4


def test_randint_array_bounds_past_2_53_are_exact():
    np.random.seed(11)
    lo = onp.array([2**60, -2**62])
    x = np.random.randint(lo, lo + [10, 7], size=(N, 2)).asnumpy()
    d = x - lo  # (int64 arithmetic: exact)
    assert (d >= 0).all() and (d[:, 0] < 10).all() and (d[:, 1] < 7).all()
    assert _chi2_uniform_p(d[:, 0], 10) > 1e-4 and _chi2_uniform_p(d[:, 1], 7) > 1e-4
    # A span of 3 * 2**61 needs rejection (2**64 is not a multiple of it) to be uniform.
    y = np.random.randint([0], 3 * 2**61, size=N).asnumpy()
    assert _chi2_uniform_p(y // 2**61, 3) > 1e-4
    # uint64 bounds at the top of the range, lists NumPy would make float64
    z = np.random.randint([0, 2**64 - 3], 2**64, size=(N, 2), dtype="uint64").asnumpy()
    assert z.dtype == onp.uint64
    assert set(z[:, 1].tolist()) == {2**64 - 3, 2**64 - 2, 2**64 - 1}
    with pytest.raises(ValueError, match="low >= high"):
        np.random.randint([2**60], [2**60])


def test_integers_endpoint_at_the_dtype_maximum():
    g = np.random.default_rng(3)
    top = onp.array([2**64 - 1], dtype="uint64")
    x = g.integers(2**64 - 2, top, size=200, dtype="uint64", endpoint=True).asnumpy()
    assert set(x.tolist()) == {2**64 - 2, 2**64 - 1}
    y = g.integers(2**63 - 2, np.array([2**63 - 1]), size=200, endpoint=True).asnumpy()
    assert set(y.tolist()) == {2**63 - 2, 2**63 - 1}
    z = g.integers(250, onp.uint8(255), size=N, dtype="uint8", endpoint=True).asnumpy()
    assert _chi2_uniform_p(z - 250, 6) > 1e-4


@pytest.mark.parametrize("low, high", [(5, 4), ([5, 0], [4, 3])])
def test_integers_endpoint_low_above_high_names_the_arguments(low, high):
    with pytest.raises(ValueError, match="low > high"):
        onp.random.default_rng(0).integers(low, high, endpoint=True)
    with pytest.raises(ValueError, match=r"\[integers\] low > high"):
        np.random.default_rng(0).integers(low, high, endpoint=True)


def _is_shuffled_in_place(before, after):
    return sorted(before) == sorted(after)


@pytest.mark.parametrize("make", [np.random.RandomState, np.random.default_rng])
def test_shuffle_takes_numpy_arrays_and_mutable_sequences_as_numpy(make):
    r = make(4)
    a = onp.arange(50)
    r.shuffle(a)  # NumPy shuffles its own arrays in place
    assert _is_shuffled_in_place(range(50), a.tolist()) and (a != onp.arange(50)).any()
    m = onp.arange(40).reshape(10, 4)
    r.shuffle(m[:, 1:])  # a view: rows of the last three columns move together
    assert (m[:, 0] == onp.arange(0, 40, 4)).all()
    assert ((m[:, 2] - m[:, 1] == 1) & (m[:, 3] - m[:, 2] == 1)).all()
    assert _is_shuffled_in_place(range(1, 40, 4), m[:, 1].tolist())
    b = bytearray(range(60))  # any mutable sequence, as NumPy's
    r.shuffle(b)
    assert _is_shuffled_in_place(range(60), list(b)) and list(b) != list(range(60))
    for bad in [onp.array(3), (1, 2), "abc"]:
        with pytest.raises(TypeError):
            onp.random.default_rng(0).shuffle(bad)
        with pytest.raises(TypeError, match="shuffle"):
            r.shuffle(bad)


def test_generator_shuffle_of_a_numpy_array_along_an_axis():
    m = onp.arange(60).reshape(3, 20)
    np.random.default_rng(5).shuffle(m, axis=1)
    assert (m - m[:1] == onp.array([[0], [20], [40]])).all()  # columns move together
    assert _is_shuffled_in_place(range(20), m[0].tolist()) and (m[0] != onp.arange(20)).any()


def test_generator_choice_without_replacement_from_a_huge_range():
    g = np.random.default_rng(9)
    # NumPy's Generator takes a few of many in O(k) (Floyd); a permutation would need 8 TB.
    x = g.choice(10**12, size=(2, 3), replace=False).asnumpy()
    assert x.shape == (2, 3) and len(set(x.ravel().tolist())) == 6
    assert ((0 <= x) & (x < 10**12)).all()
    # The sample is uniform over the subsets and in random order: every position uniform.
    draws = onp.stack([g.choice(200, 3, replace=False).asnumpy() for _ in range(2000)])
    assert all(len(set(row)) == 3 for row in draws.tolist())
    for pos in range(3):
        assert _chi2_uniform_p(draws[:, pos], 200) > 1e-4
    pool = onp.arange(10**6) * 2
    y = g.choice(pool, 4, replace=False).asnumpy()
    assert len(set(y.tolist())) == 4 and (y % 2 == 0).all()


def test_generator_choice_of_none_without_replacement_makes_no_permutation():
    # (it permuted all n: 224 s for n = 10**9, a MemoryError for 10**12; NumPy returns [])
    r = np.random.default_rng(0).choice(10**12, 0, replace=False)
    assert r.shape == (0,) and r.dtype == onp.int64
