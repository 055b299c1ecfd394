"""NumPy's in-place layout changes and memory descriptions, against NumPy in the same
process: setting `a.shape` / `a.dtype`, `ndarray.resize`'s refusals, `__array_interface__`,
`a.ctypes` and `a.data`."""
import ctypes

import numpy as onp
import pytest

from ndx import autograd, np


def _pair(ref):
    return np.array(ref), ref


@pytest.mark.parametrize("new_shape", [(2, 3), (3, -1), (6,), (1, 6, 1), (-1,)])
def test_setting_shape_reshapes_in_place_as_numpy(new_shape):
    a, ref = _pair(onp.arange(6, dtype=onp.float32))
    view = a[:]  # another array over the same memory keeps its own layout
    a.shape = new_shape
    ref.shape = new_shape
    assert a.shape == ref.shape and a.strides == ref.strides
    onp.testing.assert_array_equal(a.asnumpy(), ref)
    assert view.shape == (6,)
    a[...] = 7  # still the same memory
    assert view.asnumpy().tolist() == [7.0] * 6
    assert a.flags.owndata  # the array itself changed: it still owns its memory


def test_setting_shape_of_a_strided_view_when_numpy_can():
    ref = onp.arange(24, dtype=onp.int32).reshape(4, 6)[:, ::2]  # (4, 3), strided rows
    a = np.array(onp.arange(24, dtype=onp.int32)).reshape(4, 6)[:, ::2]
    a.shape = ref.shape = (2, 2, 3)  # splits the outer axis: a view NumPy can make
    assert a.strides == ref.strides
    onp.testing.assert_array_equal(a.asnumpy(), ref)


def test_setting_an_incompatible_shape_raises_numpys_errors():
    ref = onp.arange(6.0).reshape(2, 3).T
    a = np.array(onp.arange(6.0)).reshape(2, 3).T
    for arr in (ref, a):
        with pytest.raises(AttributeError, match="Incompatible shape"):
            arr.shape = (6,)
        with pytest.raises(ValueError):  # the size differs
            arr.shape = (4,)
        with pytest.raises(AttributeError):
            del arr.shape
    assert a.shape == (3, 2)  # nothing changed


def test_setting_the_shape_of_empty_and_read_only_arrays():
    a, ref = _pair(onp.zeros((0, 4), dtype=onp.float32))
    a.shape = ref.shape = (4, 0, 2)
    assert a.shape == ref.shape
    b = np.arange(6)
    b.setflags(write=False)
    b.shape = (3, 2)
    assert not b.flags.writeable and b.shape == (3, 2)


def test_shape_of_an_array_autograd_tracks_stays():
    x = np.ones((2, 3))
    x.attach_grad()
    with pytest.raises(ValueError, match="reshape"):
        x.shape = (6,)
    with autograd.record():
        y = x * 2
        with pytest.raises(ValueError, match="autograd"):
            y.shape = (3, 2)
    assert x.shape == (2, 3) and y.shape == (2, 3)


@pytest.mark.parametrize("new_dtype", ["int32", "uint8", "float64", "int16", "complex64"])
def test_setting_dtype_reads_the_memory_as_another_dtype(new_dtype):
    ref = onp.arange(8, dtype=onp.float32).reshape(2, 4)
    a = np.array(ref.copy())
    ref = ref.copy()
    a.dtype = ref.dtype = onp.dtype(new_dtype)
    assert a.dtype == ref.dtype and a.shape == ref.shape and a.strides == ref.strides
    onp.testing.assert_array_equal(a.asnumpy(), ref)


def test_setting_dtype_refuses_what_numpy_refuses():
    ref = onp.arange(6, dtype=onp.float32).reshape(2, 3)[:, ::2]
    a = np.array(onp.arange(6, dtype=onp.float32)).reshape(2, 3)[:, ::2]
    for arr in (ref, a):
        with pytest.raises(ValueError):
            arr.dtype = onp.float64  # the last axis is strided
    z = np.array(onp.float32(1))
    with pytest.raises(ValueError):
        z.dtype = onp.float64  # a 0-d array keeps its itemsize
    z.dtype = onp.int32
    assert int(z) == int(onp.float32(1).view(onp.int32))


def test_resize_refusals_follow_numpy():
    for mod in (onp, np):
        strided = mod.arange(6.0)[::2]
        with pytest.raises(ValueError, match="single-segment"):
            strided.resize(5, refcheck=False)
        view = mod.arange(6.0)[1:]
        with pytest.raises(ValueError, match="own its data"):
            view.resize(7, refcheck=False)
    # the same size: NumPy only relays the memory out, so a view sees the new layout too
    a = np.arange(6.0)
    first = a[:3]
    a.resize((3, 2))
    a[0, 1] = 50
    assert a.shape == (3, 2) and first.asnumpy().tolist() == [0.0, 50.0, 2.0]


DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_interface_matches_numpys(dtype):
    ref = (onp.arange(12) % 3).astype(dtype).reshape(3, 4)
    a = np.array(ref)
    cases = ((a, ref), (a[:, 1::2], ref[:, 1::2]), (a[1], ref[1]), (a[0, 0], ref[0, 0]))
    for x, r in cases:
        got, want = x.__array_interface__, onp.asarray(r).__array_interface__
        assert got["typestr"] == want["typestr"] and got["descr"] == want["descr"]
        assert got["shape"] == want["shape"] and got["strides"] == want["strides"]
        assert got["version"] == 3 and got["data"][1] is False
        # NumPy reads the described memory itself: the same values, no copy
        seen = onp.array(_Described(got), copy=False)
        onp.testing.assert_array_equal(seen, x.asnumpy())
    onp.array(_Described(a.__array_interface__), copy=False)[...] = 0  # the same memory
    assert not a.asnumpy().any()


class _Described:
    def __init__(self, interface):
        self.__array_interface__ = interface


def test_array_interface_read_only_and_absent():
    a = np.arange(4)
    a.setflags(write=False)
    assert a.__array_interface__["data"][1] is True
    assert not onp.array(_Described(a.__array_interface__), copy=False).flags.writeable
    with pytest.raises(AttributeError, match="bfloat16"):
        np.zeros(2, dtype="bfloat16").__array_interface__
    with pytest.raises(AttributeError):
        np.zeros(2, dtype="bfloat16").ctypes


def test_ctypes_passes_the_memory_to_c():
    a = np.array(onp.arange(5, dtype=onp.float64))
    p = a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    assert [p[i] for i in range(5)] == [0.0, 1.0, 2.0, 3.0, 4.0]
    p[2] = 20.0
    assert a[2] == 20.0
    ref = onp.zeros((2, 3), dtype=onp.float32)[:, ::2]
    b = np.zeros((2, 3), dtype="float32")[:, ::2]
    assert list(b.ctypes.shape) == list(ref.ctypes.shape)
    assert list(b.ctypes.strides) == list(ref.ctypes.strides)
    assert a.ctypes.data == a.__array_interface__["data"][0]
    # libc's memset through the address, as C code would write
    libc = ctypes.CDLL(None)
    libc.memset(ctypes.c_void_p(a.ctypes.data), 0, 5 * 8)
    assert a.asnumpy().tolist() == [0.0] * 5


def test_data_is_a_memoryview():
    a, ref = _pair(onp.arange(6, dtype=onp.int16).reshape(2, 3))
    m, r = a.data, ref.data
    assert isinstance(m, memoryview)
    assert (m.format, m.shape, m.strides, m.readonly) == (r.format, r.shape, r.strides, r.readonly)
    assert m.tolist() == r.tolist()
