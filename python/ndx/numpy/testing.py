"""numpy.testing for ndx arrays: NumPy's assertions, with ndx arrays (also inside lists,
tuples and dicts) copied to NumPy arrays first, so the comparisons, their tolerances, NaN
handling, strict= checks and failure messages (AssertionError) are NumPy's own. A bfloat16
array compares as its float32 values. The assertions about exceptions and warnings take
callables and are NumPy's unchanged."""
import functools
import inspect

import numpy.testing as _nt

from .. import _core

__all__ = ["assert_", "assert_allclose", "assert_almost_equal", "assert_approx_equal",
           "assert_array_almost_equal", "assert_array_almost_equal_nulp", "assert_array_compare",
           "assert_array_equal", "assert_array_less", "assert_array_max_ulp", "assert_equal",
           "assert_no_warnings", "assert_raises", "assert_raises_regex", "assert_string_equal",
           "assert_warns", "clear_and_catch_warnings", "suppress_warnings"]


def _to_numpy(x):
    """x with ndx arrays replaced by NumPy copies, inside lists, tuples and dicts too."""
    if isinstance(x, _core.ndarray):
        return x.asnumpy()
    if isinstance(x, dict):
        return {k: _to_numpy(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):  # (namedtuples as they are)
        return type(x)(_to_numpy(v) for v in x)
    return x


def _comparing(assertion, n=2):
    """assertion with its first n arguments (positional or by name) converted."""
    names = list(inspect.signature(assertion).parameters)[:n]

    @functools.wraps(assertion)
    def wrapper(*args, **kwargs):
        args = [_to_numpy(a) if i < n else a for i, a in enumerate(args)]
        kwargs = {k: _to_numpy(v) if k in names else v for k, v in kwargs.items()}
        return assertion(*args, **kwargs)
    return wrapper


assert_allclose = _comparing(_nt.assert_allclose)
assert_array_equal = _comparing(_nt.assert_array_equal)
assert_array_almost_equal = _comparing(_nt.assert_array_almost_equal)
assert_array_less = _comparing(_nt.assert_array_less)
assert_equal = _comparing(_nt.assert_equal)
assert_almost_equal = _comparing(_nt.assert_almost_equal)
assert_approx_equal = _comparing(_nt.assert_approx_equal)
assert_array_almost_equal_nulp = _comparing(_nt.assert_array_almost_equal_nulp)
assert_array_max_ulp = _comparing(_nt.assert_array_max_ulp)


@functools.wraps(_nt.assert_array_compare)
def assert_array_compare(comparison, x, y, *args, **kwargs):
    return _nt.assert_array_compare(comparison, _to_numpy(x), _to_numpy(y), *args, **kwargs)


# No arrays to convert: strings, callables and their arguments (passed to them unchanged).
assert_ = _nt.assert_
assert_string_equal = _nt.assert_string_equal
assert_raises = _nt.assert_raises
assert_raises_regex = _nt.assert_raises_regex
assert_warns = _nt.assert_warns  # (deprecated by NumPy 2.4, which warns on use)
assert_no_warnings = _nt.assert_no_warnings
clear_and_catch_warnings = _nt.clear_and_catch_warnings
if hasattr(_nt, "suppress_warnings"):
    suppress_warnings = _nt.suppress_warnings
else:  # a NumPy that removed it
    __all__.remove("suppress_warnings")
