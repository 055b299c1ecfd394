"""Reductions over the rows of a matrix (axis 0 of a C-contiguous matrix): the engine folds
blocks of rows into rows of partial accumulators. max / min take the plain instruction a row
at a time and switch to the NaN-exact combine once a row holds a NaN; these tests put NaN and
infinities at the rows where that switch happens and compare with NumPy."""
import subprocess
import sys
import textwrap

import numpy as onp
import pytest

from ndx import np, npx


@pytest.fixture
def restore_threads():
    saved = npx.get_num_threads()
    yield
    npx.set_num_threads(saved)


# (row, column, value) triples; 600 rows span several blocks of rows for 1024 columns.
SPECIALS = [
    [],
    [(0, 5, onp.nan)],
    [(599, 1023, onp.nan)],
    [(255, 17, onp.nan), (256, 17, 3.0)],  # a NaN, then a larger value in the next row
    [(10, 3, onp.nan), (300, 3, -onp.inf), (301, 4, onp.nan)],
    [(7, 0, onp.inf), (7, 1, -onp.inf)],  # both infinities in one row, no NaN
    [(7, 0, onp.inf), (9, 0, -onp.inf), (400, 2, onp.inf)],
    [(123, 1020, onp.nan), (124, 1021, onp.nan), (125, 1022, onp.nan)],  # in the last vector
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cols", [1024, 1000, 7])
@pytest.mark.parametrize("specials", SPECIALS)
def test_max_min_sum_over_rows_match_numpy(dtype, cols, specials, restore_threads):
    rng = onp.random.default_rng(len(specials) * 31 + cols)
    x = rng.standard_normal((600, cols)).astype(dtype)
    for r, c, v in specials:
        x[r, c % cols] = v
    a = np.array(x)
    for threads in (1, 2):
        npx.set_num_threads(threads)
        for fn in ("max", "min"):
            onp.testing.assert_array_equal(getattr(np, fn)(a, axis=0).asnumpy(),
                                           getattr(onp, fn)(x, axis=0))
        with onp.errstate(invalid="ignore"):
            want = x.sum(axis=0, dtype=onp.float64)
        onp.testing.assert_allclose(np.sum(a, axis=0).asnumpy(), want, rtol=1e-5, atol=1e-4)


def test_signed_zeros_and_all_nan_rows(restore_threads):
    x = onp.zeros((40, 64), onp.float32)
    x[::2] = -0.0
    x[30] = onp.nan
    for threads in (1, 2):
        npx.set_num_threads(threads)
        got = np.max(np.array(x), axis=0).asnumpy()
        assert onp.isnan(got).all()
        got = np.max(np.array(x[:30]), axis=0).asnumpy()
        onp.testing.assert_array_equal(got, onp.zeros(64, onp.float32))  # 0 == -0


def test_sum_over_rows_of_a_wide_matrix_allocates_little():
    # 256 x 131000 float32 (134 MB): the partial accumulators were 128 rows of 131000 (67 MB)
    # before their number was capped at 32 (17 MB).
    code = textwrap.dedent("""
        import resource
        from ndx import np
        a = np.ones((256, 131000), dtype="float32")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        s = np.sum(a, axis=0)
        assert float(s[0]) == 256.0 and float(s[-1]) == 256.0
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
    """)
    grown_mb = int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                  text=True, timeout=120).stdout.split()[-1])
    assert grown_mb < 40
