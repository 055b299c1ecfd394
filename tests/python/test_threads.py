"""npx.set_num_threads / get_num_threads: validation, and results that do not change with the
thread count (bit for bit: the engine's chunking never changes what is summed with what)."""
import numpy as onp
import pytest

from ndx import np, npx


@pytest.fixture
def restore_threads():
    saved = npx.get_num_threads()
    yield
    npx.set_num_threads(saved)


def test_set_and_get(restore_threads):
    npx.set_num_threads(3)
    assert npx.get_num_threads() == 3
    npx.set_num_threads(None)
    assert npx.get_num_threads() >= 1


@pytest.mark.parametrize("bad,exc", [(0, ValueError), (-2, ValueError), (10**6, ValueError),
                                     (2**80, ValueError), (1.5, TypeError), ("2", TypeError),
                                     (True, TypeError)])
def test_bad_thread_counts(bad, exc, restore_threads):
    before = npx.get_num_threads()
    with pytest.raises(exc):
        npx.set_num_threads(bad)
    assert npx.get_num_threads() == before


def test_results_match_numpy_for_every_thread_count(restore_threads):
    rng = onp.random.default_rng(0)
    x = rng.uniform(-3, 3, (517, 733)).astype(onp.float32)
    a = np.array(x)
    results = []
    for threads in (1, 2, 4):
        npx.set_num_threads(threads)
        results.append([np.exp(a).asnumpy(), (a * 2 + 1).asnumpy(), np.sum(a).asnumpy(),
                        np.sum(a, axis=0).asnumpy(), np.max(a, axis=1).asnumpy(),
                        np.argmax(a, axis=0).asnumpy(), npx.softmax(a).asnumpy()])
    for other in results[1:]:
        for r0, r in zip(results[0], other):
            assert onp.array_equal(r0, r)
    onp.testing.assert_allclose(results[0][0], onp.exp(x), rtol=1e-6)
    onp.testing.assert_allclose(results[0][2], x.sum(dtype=onp.float64), rtol=1e-6)
    onp.testing.assert_array_equal(results[0][5], onp.argmax(x, axis=0))
