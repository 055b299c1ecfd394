"""NumPy's formatter= and legacy= print options, against NumPy 2.4's own text."""
import sys
import warnings

import numpy as onp
import pytest

from ndx import np

_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _arrays():
    rng = onp.random.default_rng(7)
    out = [onp.array([True, False, True]), onp.array(True), onp.zeros((2, 0), bool)]
    for dt in _INTS:
        out += [onp.arange(-3, 5).astype(dt), onp.arange(1200).astype(dt).reshape(3, 400),
                onp.array(7, dt), onp.zeros((0,), dt), onp.arange(24).astype(dt).reshape(2, 3, 4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2e5 and 3e7 overflow float16
        for dt in ("float16", "float32", "float64"):
            out += [onp.array([0.5, -1.25, 3.0], dt),
                    onp.array([onp.nan, onp.inf, -onp.inf, 1], dt),
                    onp.array([-0.0, 0.0], dt), onp.array([1500.0, 2.0], dt),
                    onp.array([2e6, 3e6], dt), onp.array([1e-5, 1.0], dt),
                    onp.array([3e7, 1.5], dt),
                    rng.standard_normal((3, 7)).astype(dt), rng.standard_normal(1200).astype(dt),
                    rng.standard_normal((2, 3, 40)).astype(dt), onp.array(1.1, dt),
                    onp.array(-0.0, dt), onp.array(onp.nan, dt), onp.array(12345.678, dt),
                    onp.array(2e7, dt), onp.zeros((0, 3), dt), onp.array([onp.nan, 2e4], dt),
                    (rng.standard_normal(30) * 1e-6).astype(dt)]
    for dt in ("complex64", "complex128"):
        out += [onp.array([1 + 2j, -3.5 - 4.25j], dt), onp.array([onp.nan + 1j, 1e9 - 1e-9j], dt),
                (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dt),
                onp.array(1 + 1j, dt), onp.array([1e5 + 1j, 2], dt), onp.zeros((0,), dt),
                (rng.standard_normal(1100) + 1j).astype(dt), onp.array([-0.0 - 0.0j, 1j], dt)]
    return out


ARRAYS = _arrays()


@pytest.fixture(autouse=True)
def _restored_print_options():
    """Each test starts without a formatter or legacy mode, and its options come back after."""
    with onp.printoptions(legacy=False), np.printoptions(legacy=False):
        yield

CALLS = [("str", lambda m, x: str(x)), ("repr", lambda m, x: repr(x)),
         ("array2string", lambda m, x: m.array2string(x, separator=", ", prefix="f(",
                                                      suffix=")")),
         ("array_repr", lambda m, x: m.array_repr(x, max_line_width=40)),
         ("array_str", lambda m, x: m.array_str(x, max_line_width=30, precision=3))]


def _text(m, x, call, options):
    """The text, or the type of the exception (legacy 1.13 refuses floatmode 'unique' for
    floats in scientific notation)."""
    with m.printoptions(**options):
        try:
            return call(m, x)
        except TypeError as e:
            return type(e)


def _mismatches(options):
    out = []
    for x in ARRAYS:
        a = np.array(x)
        for name, call in CALLS:
            want = _text(onp, x, call, options)
            got = _text(np, a, call, options)
            if got != want:
                out.append((name, x.dtype, x.shape, got, want))
    return out


FORMATTERS = [
    {"float": lambda x: f"{x:.2f}"},
    {"all": lambda x: "<" + str(x) + ">"},
    {"int_kind": hex, "int": lambda x: f"i{x}"},  # the specific key wins over its group's
    {"complex_kind": lambda x: f"{x.real:g}|{x.imag:g}", "all": lambda x: "?"},
    {"bool": lambda b: "Y" if b else "N", "float_kind": lambda x: "%.1e" % x},
    {"float_kind": lambda x: "a\nbb"},  # multi-line elements stay aligned
    {"all": None, "int": str, "numpystr": repr, "object": repr},  # None and unused keys: ignored
    {},
]
LAYOUTS = [{}, {"threshold": 10, "edgeitems": 2}, {"linewidth": 30},
           {"precision": 3, "sign": " "}]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("formatter", range(len(FORMATTERS)))
def test_formatter_texts_are_numpys(formatter, layout):
    mismatches = _mismatches(dict(layout, formatter=FORMATTERS[formatter]))
    assert not mismatches, mismatches[:3]


@pytest.mark.parametrize("formatter", FORMATTERS[:5], ids=range(5))
def test_array2string_formatter_argument_is_numpys(formatter):
    for x in ARRAYS:
        a = np.array(x)
        for kwargs in ({}, {"threshold": 5, "edgeitems": 1}, {"max_line_width": 20}):
            want = onp.array2string(x, formatter=formatter, **kwargs)
            assert np.array2string(a, formatter=formatter, **kwargs) == want, (x.dtype, x.shape)


LEGACY_OPTIONS = [{}, {"threshold": 10, "edgeitems": 2}, {"linewidth": 30},
                  {"precision": 3, "sign": " "}, {"sign": "+", "floatmode": "fixed"},
                  {"suppress": True, "nanstr": "NaN", "infstr": "Inf"},
                  {"threshold": 5, "edgeitems": 0}, {"floatmode": "unique"}]


@pytest.mark.parametrize("options", LEGACY_OPTIONS, ids=str)
@pytest.mark.parametrize("legacy", ["1.13", "1.21", "1.25", "2.1", "2.2", False])
def test_legacy_texts_are_numpys(legacy, options):
    # 1.13: a space for the sign, all digits in scientific notation, its own wrapping and
    # '...' separators, 0-d arrays as Python scalars, dtype=bool; up to 2.2: scientific
    # notation from 1e8 for every dtype (0-d str too); up to 2.2 no shape= in summaries.
    mismatches = _mismatches(dict(options, legacy=legacy))
    assert not mismatches, mismatches[:3]


def test_legacy_and_formatter_together_are_numpys():
    fmt = {"int": lambda x: f"<{x}>"}
    for legacy in ("1.13", "2.1"):
        assert not _mismatches({"legacy": legacy, "formatter": fmt, "threshold": 10})
    for x in ARRAYS[:20]:
        want = onp.array2string(x, legacy="1.13", formatter=fmt)
        assert np.array2string(np.array(x), legacy="1.13", formatter=fmt) == want


def test_bfloat16_prints_as_float32_does():
    # NumPy has no bfloat16: its text is float32's for values that bfloat16 holds exactly
    # and prints with the same shortest digits; the formatter's 'float' key covers it (its
    # elements reach the callable as NumPy float32 scalars). The
    # legacy modes print 256 and 512 positionally (NumPy 2.4: bfloat16's cutoff is 1e2).
    vals = [1.5, -1.25, 3.0, 256.0, 512.0, float("nan")]
    a, x = np.array(vals, dtype="float64").astype("bfloat16"), onp.float32(vals)
    for options in ({"legacy": "2.2"}, {"legacy": "1.13"},
                    {"formatter": {"float": "{:.1f}".format}},
                    {"formatter": {"float_kind": str}, "legacy": "2.1"}):
        with onp.printoptions(**options), np.printoptions(**options):
            assert str(a) == str(x)
            assert repr(a) == repr(x).replace("float32", "bfloat16")


def test_get_printoptions_reports_formatter_and_legacy():
    fmt = {"float": str}
    assert np.get_printoptions() == onp.get_printoptions()
    for legacy in ("1.13", "1.21", "1.25", "2.1", "2.2", False):
        with onp.printoptions(legacy=legacy, formatter=fmt), \
                np.printoptions(legacy=legacy, formatter=fmt) as opts:
            assert opts == onp.get_printoptions() == np.get_printoptions()
            assert opts["formatter"] is fmt
        assert np.get_printoptions() == onp.get_printoptions()
    with onp.printoptions(legacy="1.13", sign="+"), np.printoptions(legacy="1.13", sign="+"):
        assert np.get_printoptions()["sign"] == onp.get_printoptions()["sign"] == "-"
    with onp.printoptions(formatter=fmt), np.printoptions(formatter=fmt):
        onp.set_printoptions(precision=3)
        np.set_printoptions(precision=3)  # formatter is reset by every call, legacy is kept
        assert np.get_printoptions() == onp.get_printoptions()
        assert np.get_printoptions()["formatter"] is None


def test_default_printing_goes_back_to_the_core():
    core_repr = np.ndarray.__dict__["__repr__"]
    with np.printoptions(formatter={"int": hex}):
        assert np.ndarray.__dict__["__repr__"] is not core_repr
        assert repr(np.arange(3)) == "array([0x0, 0x1, 0x2])"
    with np.printoptions(legacy="2.1"):
        assert np.ndarray.__dict__["__repr__"] is not core_repr
    assert np.ndarray.__dict__["__repr__"] is core_repr
    np.set_printoptions(formatter={"int": hex})
    np.set_printoptions()
    assert np.ndarray.__dict__["__repr__"] is core_repr
    assert repr(np.arange(3)) == "array([0, 1, 2])"


def _outcome(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
        except Exception as e:
            result = type(e)
    return result, [w.category for w in caught]


def test_invalid_legacy_fails_as_numpys():
    # NumPy warns and keeps the value: printing then raises TypeError, get_printoptions
    # KeyError; a value equal to False is deprecated (FutureWarning) and means False.
    x = onp.arange(3.0)
    a = np.array(x)
    for m, arr in ((onp, x), (np, a)):
        assert _outcome(lambda: m.array2string(arr, legacy="x")) == (TypeError, [UserWarning])
        assert _outcome(lambda: m.array2string(arr, legacy=True)) == \
            ("[ 0.  1.  2.]", [UserWarning])  # True == 1 <= 113: 1.13's text
        assert _outcome(lambda: m.array2string(arr, legacy=0)) == ("[0. 1. 2.]", [FutureWarning])
        with pytest.raises(KeyError), pytest.warns(UserWarning):
            with m.printoptions(legacy="2.0"):
                pass
        assert m.get_printoptions()["legacy"] is False
        saved = m.get_printoptions()
        try:
            assert _outcome(lambda: m.set_printoptions(legacy="foo")) == (None, [UserWarning])
            assert _outcome(lambda: repr(arr)) == (TypeError, [])
            assert _outcome(lambda: str(arr)) == (TypeError, [])
            assert _outcome(m.get_printoptions) == (KeyError, [])
        finally:
            m.set_printoptions(legacy=False)
            m.set_printoptions(**{k: v for k, v in saved.items() if k != "override_repr"})
    assert np.get_printoptions() == onp.get_printoptions()
    assert repr(a) == "array([0., 1., 2.])"
    assert sys.maxsize not in np.get_printoptions().values()


@pytest.mark.parametrize("bad", [5, [str], {"int": 5}, onp.arange(3)])
def test_a_formatter_that_is_not_a_dict_of_callables_is_refused_at_once(bad):
    # NumPy accepts these and then fails (AttributeError / TypeError) at every later print;
    # ndx refuses them where they are given, and printing keeps working.
    with pytest.raises(TypeError, match="formatter"):
        np.set_printoptions(formatter=bad)
    with pytest.raises(TypeError, match="formatter"):
        np.array2string(np.arange(3), formatter=bad)
    assert repr(np.arange(3)) == repr(onp.arange(3))
