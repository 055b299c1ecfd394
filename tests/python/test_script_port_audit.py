"""Porting a NumPy data-analysis script to ndx.numpy: the routines such scripts use, checked
against NumPy 2.4 with the same inputs (values, dtypes modulo the float32 default, shapes,
error types)."""
import numpy as onp
import pytest

import ndx.numpy as np


def _same(got, expected):
    got = got.asnumpy() if isinstance(got, np.ndarray) else onp.asarray(got)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    onp.testing.assert_allclose(got, expected, rtol=1e-6)


# ---------------------------------------------------------------- pad
def test_pad_linear_ramp_complex_keeps_imaginary_part():
    x = onp.array([1 + 2j, 3 - 1j, 0.5j])
    for width in ((2, 3), 4):
        _same(np.pad(np.array(x), width, mode="linear_ramp"),
              onp.pad(x, width, mode="linear_ramp"))
    _same(np.pad(np.array(x), 2, mode="linear_ramp", end_values=(1j, 2)),
          onp.pad(x, 2, mode="linear_ramp", end_values=(1j, 2)))


def test_pad_linear_ramp_bool_is_truthiness_not_floor():
    # NumPy's linspace floors integer dtypes only; a bool ramp is True wherever nonzero.
    x = onp.array([True, False, False])
    for width in ((2, 3), 7):
        _same(np.pad(np.array(x), width, mode="linear_ramp"),
              onp.pad(x, width, mode="linear_ramp"))


def test_pad_linear_ramp_cannot_extend_an_empty_axis():
    for shape, width in (((0,), 1), ((0, 3), ((1, 0), (0, 2)))):
        with pytest.raises(ValueError):
            onp.pad(onp.zeros(shape), width, mode="linear_ramp")
        with pytest.raises(ValueError, match="pad"):
            np.pad(np.zeros(shape), width, mode="linear_ramp")
    # an empty axis that is not padded is fine, as in NumPy
    _same(np.pad(np.zeros((0, 3), dtype="float64"), ((0, 0), (1, 1)), mode="linear_ramp"),
          onp.pad(onp.zeros((0, 3)), ((0, 0), (1, 1)), mode="linear_ramp"))


@pytest.mark.parametrize("value, dtype, error", [
    (300, "int8", OverflowError),
    (-129, "int8", OverflowError),
    (onp.nan, "int64", ValueError),
    (onp.inf, "int32", OverflowError),
    ((1, 300), "int8", OverflowError),
])
def test_pad_constant_the_dtype_cannot_hold_raises(value, dtype, error):
    with pytest.raises(error):  # NumPy 2.4 raises: the fill is never wrapped silently
        onp.pad(onp.array([1, 2], dtype=dtype), 1, constant_values=value)
    with pytest.raises(error, match="pad"):
        np.pad(np.array([1, 2], dtype=dtype), 1, constant_values=value)
    # what the dtype holds (or truncates, or reads as truth) still pads
    for value, dtype in ((-128, "int8"), (2.7, "int32"), (255, "uint8"), (1.5, "bool")):
        x = onp.array([1, 2], dtype=dtype)
        _same(np.pad(np.array(x), 1, constant_values=value),
              onp.pad(x, 1, constant_values=value))


@pytest.mark.parametrize("width", [{1: (1, 2)}, {-1: 2, 0: 1}, {0: 0}, {}])
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "mean"])
def test_pad_dict_pad_width(width, mode):
    # NumPy 2.3: {axis: width or (before, after)}, the other axes unpadded
    x = onp.arange(6).reshape(2, 3)
    _same(np.pad(np.array(x), width, mode=mode), onp.pad(x, width, mode=mode))


def test_pad_dict_pad_width_bad_axis_and_width():
    with pytest.raises(IndexError):  # NumPy: IndexError; ndx's AxisError is one
        np.pad(np.ones((2, 2)), {2: 1})
    with pytest.raises(TypeError, match="pad_width"):
        np.pad(np.ones((2, 2)), {0: 1.5})


# ---------------------------------------------------------------- apply_along_axis
def test_apply_along_axis_over_an_empty_axis():
    # the slices themselves are empty (the iteration axes are not): func1d sees them
    x = onp.zeros((0, 3))
    _same(np.apply_along_axis(lambda v: v.sum(), 0, np.array(x)),
          onp.apply_along_axis(lambda v: v.sum(), 0, x))
    _same(np.apply_along_axis(lambda v: v.shape[0] + 1, 0, np.array(x, dtype="int64")),
          onp.apply_along_axis(lambda v: v.shape[0] + 1, 0, x.astype("int64")))
    with pytest.raises(ValueError, match="apply_along_axis"):  # the iteration axis is empty
        np.apply_along_axis(lambda v: v.sum(), 1, np.array(x))


# ---------------------------------------------------------------- clip
@pytest.mark.parametrize("lo, hi", [(-5, 300), (-1, None), (None, 300), (2, 300), (-5, 100),
                                    (True, 300)])
def test_clip_python_int_bounds_past_the_integer_dtype(lo, hi):
    # NumPy 2.1+: a Python int bound at or past the dtype's limit bounds nothing
    x = onp.array([1, 200], dtype="uint8")
    _same(np.clip(np.array(x), lo, hi), onp.clip(x, lo, hi))
    _same(np.array(x).clip(lo, hi), x.clip(lo, hi))
    big = onp.array([1, -2], dtype="int64")
    _same(np.clip(np.array(big), -2**70, 2**70), onp.clip(big, -2**70, 2**70))
    # past the other limit (a_min=300 for uint8) it is still NumPy's OverflowError
    for lo, hi in ((300, 400), (-1, -1)):
        with pytest.raises(OverflowError):
            onp.clip(x, lo, hi)
        with pytest.raises(OverflowError):
            np.clip(np.array(x), lo, hi)


# ---------------------------------------------------------------- partition
@pytest.mark.parametrize("name", ["partition", "argpartition"])
@pytest.mark.parametrize("kth", [True, onp.array([True, False])])
def test_partition_refuses_a_boolean_kth(name, kth):
    with pytest.raises(ValueError, match="Booleans"):  # NumPy 2.4's error
        getattr(onp, name)(onp.array([3, 1, 2]), kth)
    with pytest.raises(ValueError, match="Booleans"):
        getattr(np, name)(np.array([3, 1, 2]), kth)
    # a list mixing a bool into integers is integers, as NumPy reads it
    _same(np.sort(np.partition(np.array([3, 1, 2]), [False, 1])),
          onp.sort(onp.partition(onp.array([3, 1, 2]), [False, 1])))


# ---------------------------------------------------------------- insert
@pytest.mark.parametrize("value, dtype, error", [
    (300, "int8", OverflowError),
    ([1, -1], "uint8", OverflowError),
    (onp.nan, "int64", ValueError),
    (1j, "float64", TypeError),
])
def test_insert_values_the_dtype_cannot_hold_raise(value, dtype, error):
    with pytest.raises(error):  # NumPy: array(values, dtype=arr.dtype)
        onp.insert(onp.array([1, 2], dtype=dtype), 1, value)
    with pytest.raises(error):
        np.insert(np.array([1, 2], dtype=dtype), 1, value)
    # held (or truncated, or cast from an array) values still go in
    for v, dt in ((2.7, "int32"), (-128, "int8"), (onp.array([300]), "int8"), (2, "bool")):
        x = onp.array([1, 0], dtype=dt)
        _same(np.insert(np.array(x), 1, v), onp.insert(x, 1, v))
