"""str / repr of arrays and NumPy's print options, against NumPy 2's own text."""
import sys

import numpy as onp
import pytest

from ndx import np


def _arrays():
    rng = onp.random.default_rng(1)
    out = []
    for n in (1, 3, 7, 13, 20, 21, 50, 1001):
        out += [onp.arange(n, dtype=onp.float64) / 7, onp.arange(n) - n // 2,
                rng.standard_normal(n).astype(onp.float32), rng.random(n) < 0.5,
                rng.standard_normal(n) * 1e5,
                (rng.standard_normal(n) * 1e-5).astype(onp.float16),  # subnormal digits
                rng.integers(0, 2**63, n, dtype=onp.uint64),
                rng.integers(-128, 127, n).astype(onp.int8)]
    out += [onp.arange(24).reshape(2, 3, 4), rng.standard_normal((3, 7)),
            rng.standard_normal((40, 40)), onp.arange(3000).reshape(3, 1000),
            rng.standard_normal((2, 3, 400)), onp.zeros((0, 3)), onp.array([]),
            onp.zeros((2, 0, 2), onp.int32), onp.array([1e-300, 1.0]), onp.array([onp.nan, 1e10]),
            onp.array([onp.inf, -onp.inf, onp.nan]), onp.array([onp.nan, 1.5, -2.25]),
            onp.array([1 + 2j, 3.5 - 4.25j]), onp.array([onp.nan + 1j, 1e9 - 1e-9j]),
            (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(onp.complex64),
            onp.array([-0.0, 0.0]), onp.array([[True]]), onp.array([True, True]),
            onp.float32([1e-5, 1.0, 123.456]), onp.float32([0.3, 1.2345678e-5]),
            onp.array([1e16, 1.0]), onp.array([5e-5, 0.5]), onp.float16([999.0, 1.0]),
            onp.float16([1000.0, 1.0]), onp.float32([999999.0, 1.0]), onp.float32([1e6, 1.0])]
    # 0-d arrays: str is the scalar's (all digits), repr the array's.
    out += [onp.array(v) for v in (1.5, -1e-20, 1 / 3, 1e-9, 123456789.0, 1e16, 1e15, -0.0, True,
                                   3, 1 + 1j)]
    out += [onp.array(v, dtype=onp.float32) for v in (1 / 3, 1e20, 1e15, 16777216.0, 999999.0,
                                                      3.25)]
    out += [onp.array(v, dtype=onp.float16) for v in (1 / 3, 2.5, 65504.0, 999.0, 1e-4, 6e-5)]
    return out


OPTIONS = [{}, {"precision": 3}, {"precision": 3, "suppress": True},
           {"precision": 2, "floatmode": "fixed"}, {"floatmode": "unique"},
           {"precision": 4, "floatmode": "maxprec_equal"}, {"sign": "+"}, {"sign": " "},
           {"nanstr": "NaN", "infstr": "Infinity"}, {"threshold": 5, "edgeitems": 1},
           {"linewidth": 40}, {"threshold": 10, "edgeitems": 2, "linewidth": 50, "precision": 2},
           {"precision": 0}]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in
                                                                    o.items()) or "defaults")
def test_str_and_repr_are_numpys_under_its_print_options(options):
    # The line wrapping counts "array(" and the closing ")", shape= and dtype= go on a new
    # line when the last one is full, summaries keep edgeitems, floats take NumPy 2.3's
    # per-dtype cutoffs for scientific notation and Dragon4's digits.
    mismatches = []
    for x in _arrays():
        a = np.array(x)
        with onp.printoptions(**options), np.printoptions(**options):
            for fn in (str, repr):
                if fn(a) != fn(x):
                    mismatches.append((fn.__name__, x.dtype, x.shape, fn(a), fn(x)))
    assert not mismatches, mismatches[:3]


@pytest.mark.parametrize("call", [
    lambda m, x: m.array2string(x),
    lambda m, x: m.array2string(x, separator=", ", prefix="foo(", suffix=")"),
    lambda m, x: m.array2string(x, max_line_width=30, precision=2, suppress_small=True),
    lambda m, x: m.array2string(x, threshold=10, edgeitems=1, sign="+", floatmode="fixed"),
    lambda m, x: m.array_str(x, max_line_width=40, precision=3),
    lambda m, x: m.array_repr(x, max_line_width=40, precision=3, suppress_small=True),
])
def test_array2string_array_str_array_repr_are_numpys(call):
    rng = onp.random.default_rng(2)
    for x in (rng.standard_normal((4, 9)), onp.arange(30),
              rng.standard_normal(2000).astype(onp.float32), onp.array([1.5, onp.nan])):
        assert call(np, np.array(x)) == call(onp, x)


def test_print_options_are_kept_checked_and_restored():
    assert np.get_printoptions() == onp.get_printoptions()
    with np.printoptions(precision=2, threshold=onp.inf) as opts:
        assert opts["precision"] == 2 and opts["threshold"] == sys.maxsize
        assert str(np.array([1 / 3])) == "[0.33]"
        assert "..." not in repr(np.arange(2000))
    assert np.get_printoptions() == onp.get_printoptions()
    bad = [({"precision": -1}, ValueError), ({"precision": 1.5}, TypeError),
           ({"threshold": float("nan")}, ValueError), ({"threshold": "a"}, TypeError),
           ({"floatmode": "x"}, ValueError), ({"sign": "x"}, ValueError),
           ({"linewidth": 0}, ValueError), ({"edgeitems": -1}, ValueError),
           ({"nanstr": 5}, TypeError)]
    for kwargs, exc in bad:
        with pytest.raises(exc, match="set_printoptions"):
            np.set_printoptions(**kwargs)
        assert np.get_printoptions() == onp.get_printoptions()  # nothing changed
    with pytest.raises(TypeError, match="array2string"):
        np.array2string(np.ones(2), separator=1)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_str_of_a_0d_complex_is_numpys(dtype):
    # complex64 parts print as float32 scalars (scientific from 1e6 and below 1e-4),
    # complex128 parts as Python's floats
    for v in (1e5, 999999.0, 1e6, 1234567.0, 1e7, 1e15, 1e16, 1e-4, 1e-5, 1.234e-4, 0.0,
              -2.5, float("inf"), float("nan")):
        for z in (complex(v, 1), complex(1, v), complex(0, v), complex(v, -v)):
            want = str(onp.array(z, dtype=dtype)[()])
            assert str(np.array(z, dtype=dtype)) == want, (dtype, z)


@pytest.mark.parametrize("shape", [(8,), (3, 4), (2, 3, 4), (1, 5), (6, 1)])
def test_edgeitems_0_prints_the_last_items_as_numpy(shape):
    ref = onp.arange(onp.prod(shape), dtype="float32").reshape(shape) * 1.5
    a = np.array(ref)
    with np.printoptions(threshold=3, edgeitems=0), onp.printoptions(threshold=3, edgeitems=0):
        assert repr(a) == repr(ref)
        assert str(a) == str(ref)
