"""np.zeros / ones / empty / full / array / asarray: the C fast paths agree with NumPy (float32
where NumPy picks float64) and with the Python fallbacks they defer to, and asarray shares a
NumPy array's memory instead of copying it."""
import gc

import numpy as onp
import pytest

import ndx
from ndx import np


def expect(nd, ref, dtype=None):
    """ndx's result equals NumPy's, whose float64 defaults are ndx's float32."""
    ref = onp.asarray(ref)
    if dtype is None and ref.dtype == onp.float64:
        ref = ref.astype(onp.float32)
    got = nd.asnumpy()
    assert got.dtype == ref.dtype and got.shape == ref.shape
    onp.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape", [(), 0, 5, (0,), (2, 3), [4, 1, 2], (2, 0, 3)])
@pytest.mark.parametrize("dtype", [None, "int8", "uint8", "int64", "float16", "float64", bool,
                                   onp.float32])
def test_zeros_ones_empty(fn, shape, dtype):
    got = getattr(np, fn)(shape, dtype=dtype)
    ref = getattr(onp, fn)(shape, dtype=dtype)
    if fn == "empty":
        assert got.shape == ref.shape
        assert got.dtype == (ref.dtype if dtype is not None else onp.float32)
    else:
        expect(got, ref, dtype)


@pytest.mark.parametrize("value,dtype", [(1.5, None), (7, None), (True, None), (-3, "int8"),
                                         (2.5, "float16"), (3, "float64"), (0.0, "bool"),
                                         (255, "uint8"), (2**40, None)])
def test_full(value, dtype):
    expect(np.full((2, 3), value, dtype=dtype), onp.full((2, 3), value, dtype=dtype), dtype)


def test_full_broadcasts_an_array_fill_past_32_dimensions():
    # NumPy's broadcast_shapes stops at 32 dimensions (RuntimeError); ndx arrays do not (fuzz
    # seed 55). Compared with NumPy's broadcast_to, which takes 40.
    shape = (1,) * 38 + (2, 3)
    got = np.full(shape, np.array([1, 2, 3], dtype="int32"))
    want = onp.broadcast_to(onp.array([1, 2, 3], dtype=onp.int32), shape)
    assert got.shape == shape and got.dtype == onp.int32
    onp.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        np.full(shape, np.array([1, 2], dtype="int32"))


@pytest.mark.parametrize("args,exc", [(((2, -1),), ValueError), ((("a", 2),), TypeError),
                                      (((2, 3), "not-a-dtype"), TypeError)])
def test_zeros_errors(args, exc):
    with pytest.raises(exc):
        np.zeros(*args)


def test_full_overflow_is_numpys_error():
    with pytest.raises(OverflowError):
        np.full((2,), 300, dtype="int8")
    with pytest.raises(OverflowError):
        onp.full((2,), 300, dtype="int8")


@pytest.mark.parametrize("obj", [1.5, 3, True, [], [[], []], [1, 2, 3], [1.0, 2, True],
                                 [[1, 2], [3, 4]], [[True, False]], ((1.5, 2.5), (3.5, 4.5)),
                                 [[[1]], [[2]]], [2**62, -(2**62)]])
@pytest.mark.parametrize("dtype", [None, "float64", "float16", "int32", "bool"])
def test_array_from_python_numbers(obj, dtype):
    has_float = "." in repr(obj)
    if dtype in ("int32", "bool") and has_float:
        return  # NumPy's own float -> int / bool casting rules: the fallback's business
    if obj == [2**62, -(2**62)] and dtype is not None:
        return  # out of range for these dtypes: OverflowError, tested below
    ref = onp.array(obj, dtype=dtype)
    expect(np.array(obj, dtype=dtype), ref, dtype)


def test_array_falls_back_for_what_it_does_not_handle():
    expect(np.array([1.7, -2.2], dtype="int32"), onp.array([1.7, -2.2], dtype="int32"), "int32")
    expect(np.array([onp.float16(1), 2]), onp.array([onp.float16(1), 2]))
    expect(np.array(onp.arange(6).reshape(2, 3)), onp.arange(6).reshape(2, 3))
    with pytest.raises(ValueError):
        np.array([[1, 2], [3]])  # ragged, as NumPy
    with pytest.raises(OverflowError):
        np.array([300], dtype="int8")
    with pytest.raises(TypeError):
        np.array(object())


@pytest.mark.parametrize("scalar", [onp.float64(1.5), onp.float32(-2.25), onp.float16(3.0),
                                    onp.int64(-7), onp.uint8(200), onp.bool_(True),
                                    onp.complex128(1 - 2j)])
def test_numpy_scalars_keep_their_dtype(scalar):
    # NumPy keeps a scalar's dtype, and so does MXNet's array() (it reads object.dtype); only
    # Python floats take the default float32.
    want = onp.array(scalar)
    for got in (np.array(scalar), np.asarray(scalar)):
        assert got.shape == () and got.dtype == want.dtype
        assert got.item() == want.item()
    assert np.array(scalar, dtype="float32").dtype == onp.float32
    filled = np.full((2, 3), scalar)
    assert filled.dtype == onp.full((2, 3), scalar).dtype
    onp.testing.assert_array_equal(filled.asnumpy(), onp.full((2, 3), scalar))


def test_array_copies_ndarrays():
    a = np.arange(4)
    b = np.array(a)
    b[0] = 10
    assert a[0] == 0
    assert np.array(a, dtype="float16").dtype == onp.float16


def test_asarray_shares_numpy_memory():
    x = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    a = np.asarray(x)
    x[0, 0] = 42
    assert a[0, 0] == 42  # one buffer
    a[1, 2] = -1
    assert x[1, 2] == -1
    t = np.asarray(x.T)  # strided views too
    assert t.shape == (3, 2) and float(t[2, 1]) == -1
    del x
    gc.collect()
    onp.testing.assert_array_equal(a.asnumpy()[0], [42, 1, 2])  # the buffer outlives x


def test_asarray_copies_read_only_or_retyped_arrays():
    x = onp.arange(4, dtype=onp.float32)
    x.setflags(write=False)
    a = np.asarray(x)
    a[0] = 5
    assert x[0] == 0
    y = onp.arange(3, dtype=onp.int32)
    b = np.asarray(y, dtype="float32")
    assert b.dtype == onp.float32
    b[0] = 9
    assert y[0] == 0


def test_asarray_of_numpy_views_with_any_strides():
    """Negative and stepped strides share memory; strides that are not whole elements (a
    field of a record array, a byte view of int16) are copied, as NumPy's own asarray would
    give the values."""
    base = onp.arange(24, dtype=onp.float64).reshape(4, 6)
    v = base[::-2, 1::2]
    a = np.asarray(v)
    assert a.shape == (2, 3)
    onp.testing.assert_array_equal(a.asnumpy(), v)
    base[3, 1] = -7.0
    assert float(a[0, 0]) == -7.0  # a view, not a copy
    rec = onp.zeros(4, dtype=[("a", "<f4"), ("b", "<i2")])
    rec["a"] = [1.5, 2.5, 3.5, 4.5]
    onp.testing.assert_array_equal(np.asarray(rec["a"]).asnumpy(), [1.5, 2.5, 3.5, 4.5])
    odd = onp.arange(6, dtype="<i2").view("i1")[1::3]
    onp.testing.assert_array_equal(np.asarray(odd).asnumpy(), odd)
    assert np.asarray(onp.zeros((0, 3), dtype=onp.int32)).shape == (0, 3)
    assert np.asarray(onp.float32(2.5)).shape == ()


def test_asarray_of_ndarray_is_itself():
    a = np.ones((2,))
    assert np.asarray(a) is a
    assert np.asarray(a, dtype="float32") is a
    assert np.asarray(a, dtype="float64") is not a


def test_signatures_and_default_dtype():
    import inspect
    assert list(inspect.signature(np.zeros).parameters) == ["shape", "dtype", "device"]
    ndx.npx.set_np(dtype=True)
    try:
        assert np.zeros((2,)).dtype == onp.float64
        assert np.array([1.5]).dtype == onp.float64
    finally:
        ndx.npx.reset_np()
    assert np.array([1.5]).dtype == onp.float32


@pytest.mark.parametrize("device", ["cpu(0)", ndx.cpu(), ndx.cpu(0)])
def test_the_cpu_named_as_device_is_the_default(device):
    """device='cpu(0)' (the optimizers pass their weights' device) gives what no device gives:
    the same values and dtype, an array on cpu(0), and asarray sharing a NumPy array's memory
    as it does without a device."""
    expect(np.zeros((2, 3), device=device), onp.zeros((2, 3)))
    expect(np.ones(4, "int8", device=device), onp.ones(4, "int8"))
    expect(np.full((2,), 7.5, device=device), onp.full((2,), 7.5))
    expect(np.array([0.25, 1], dtype="float64", device=device), onp.array([0.25, 1]), "float64")
    expect(np.array([1, 2], device=device), onp.array([1, 2]))
    for a in (np.zeros(1, device=device), np.array([1.0], device=device)):
        assert a.device == "cpu(0)"
    x = onp.arange(3, dtype=onp.float32)
    shared = np.asarray(x, device=device)
    x[0] = 9
    assert float(shared[0]) == 9


def test_another_cpu_or_a_bad_device_still_takes_the_full_path():
    assert np.zeros(2, device="cpu(1)").device == "cpu(1)"
    assert np.array([1.0, 2.0], device=ndx.cpu(1)).device == "cpu(1)"
    with pytest.raises((ValueError, NotImplementedError)):
        np.zeros(2, device="tpu(0)")
    with pytest.raises((ValueError, NotImplementedError)):
        np.array([1.0], device="cpu(0")
