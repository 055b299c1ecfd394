"""The PackedFunc FFI from Python: registered C++ functions called with typed arguments."""
import numpy as onp
import pytest

import ndx
from ndx import _api_internal, np


def test_registered_functions_are_callable():
    names = _api_internal.list_functions()
    assert "_npi.zeros" in names and "_npi.arange" in names
    z = _api_internal.zeros((2, 3), "int32", None)
    assert z.shape == (2, 3) and z.dtype == onp.int32 and z.asnumpy().sum() == 0
    assert _api_internal.zeros is _api_internal.zeros  # resolved once, then cached
    assert _api_internal.shape_broadcast((3, 1), (1, 4)) == (3, 4)
    assert "zeros" in _api_internal.zeros.__doc__
    onp.testing.assert_array_equal(_api_internal.arange(1.0, 7.0, 2.0, "int64", None).asnumpy(),
                                   [1, 3, 5])


def test_bad_arguments_raise_typed_errors():
    with pytest.raises(TypeError, match="expected 3 arguments"):
        _api_internal.zeros((2, 3))
    with pytest.raises(TypeError):
        _api_internal.zeros("abc", None, None)
    with pytest.raises(ValueError, match="negative dimensions"):
        _api_internal.zeros((-2,), None, None)
    with pytest.raises(TypeError, match="positional"):
        _api_internal.zeros((2,), dtype=None, device=None)
    with pytest.raises(AttributeError):
        _api_internal.no_such_function
    if ndx.num_gpus() == 0:  # NotImplementedError without CUDA, ValueError without a GPU
        with pytest.raises((NotImplementedError, ValueError), match="gpu"):
            _api_internal.zeros((2,), None, "gpu(0)")


def test_np_creation_goes_through_the_ffi():
    assert np.zeros((2,)).dtype == onp.float32
    assert np.full((2,), 3).dtype == onp.int64
    assert np.full((2,), True).dtype == onp.bool_
    with pytest.raises(OverflowError):
        np.full((2,), -1, dtype="uint8")
    with pytest.raises(ZeroDivisionError):
        np.arange(0, 5, 0)
