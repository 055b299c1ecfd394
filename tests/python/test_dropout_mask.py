"""Dropout's mask: element i's draw depends on (seed, i) alone (Philox4x32-10 counter blocks,
two elements a block), whichever code path or thread makes it. The CPU kernel makes most
blocks several at a time in SIMD and the rest one at a time; these tests compare the two
paths, thread counts and dtypes on the same seed, and the mask's values and keep rate."""
import numpy as onp
import pytest

import ndx as mx
from ndx import np, npx


def _mask(n, p=0.3, dtype="float32", threads=None):
    if threads is not None:
        mx.npx.set_num_threads(threads)
    mx.random.seed(42)
    return npx.dropout(np.ones(n, dtype=dtype), p=p, mode="always").asnumpy()


@pytest.fixture(autouse=True)
def _restore_threads():
    before = mx.npx.get_num_threads()
    yield
    mx.npx.set_num_threads(before)


def test_vector_and_single_block_paths_draw_the_same_mask():
    # 10 elements are 5 blocks (made one at a time); in 100,003 they are the first 5 of
    # many made several at a time: element i is the same draw either way
    small, large = _mask(10), _mask(100_003)
    onp.testing.assert_array_equal(small, large[:10])
    onp.testing.assert_array_equal(_mask(1001), large[:1001])


def test_the_mask_does_not_depend_on_threads_or_dtype():
    one, two = _mask(200_001, threads=1), _mask(200_001, threads=2)
    onp.testing.assert_array_equal(one, two)
    wide = _mask(200_001, dtype="float64")
    onp.testing.assert_array_equal(wide > 0, one > 0)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_mask_values_and_keep_rate(p):
    m = _mask(400_000, p=p)
    scale = onp.float32(1 / (1 - p))
    assert set(onp.unique(m).tolist()) <= {0.0, float(scale)}
    kept = (m > 0).mean()
    # a binomial proportion: 5 standard deviations of 400,000 draws
    assert abs(kept - (1 - p)) < 5 * onp.sqrt(p * (1 - p) / m.size)
