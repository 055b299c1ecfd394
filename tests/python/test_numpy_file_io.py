"""np.save / load / savez / savez_compressed / loadtxt / savetxt / genfromtxt / fromfile /
tofile / dump / dumps and np.lib.stride_tricks, with NumPy 2.4 as the reference: files written
by one are read by the other, and views are compared element for element."""
import io
import pickle

import numpy as onp
import pytest

from ndx import np
from ndx.numpy.lib.stride_tricks import as_strided, sliding_window_view


def same(got, want):
    assert isinstance(got, np.ndarray), type(got)
    got = got.asnumpy()
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    onp.testing.assert_array_equal(got, want)


DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32", "float64",
          "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_save_is_read_by_numpy_and_numpys_file_by_load(tmp_path, dtype):
    ref = (onp.arange(-6, 6).reshape(3, 4) * 3 + 1).astype(dtype)
    np.save(tmp_path / "a", np.array(ref))  # '.npy' is added, as NumPy does
    same(np.array(onp.load(tmp_path / "a.npy")), ref)
    onp.save(tmp_path / "b.npy", ref)
    same(np.load(tmp_path / "b.npy"), ref)


def test_save_and_load_take_file_objects_zero_d_and_empty_arrays():
    for ref in (onp.float64(2.5).reshape(()), onp.zeros((0, 3), "int16")):
        buf = io.BytesIO()
        np.save(buf, np.array(ref))
        buf.seek(0)
        same(np.load(buf), ref)


def test_bfloat16_round_trips():
    x = np.array([1.5, -2.0, 2.0**100], dtype="bfloat16")  # each exact in bfloat16
    buf = io.BytesIO()
    np.save(buf, x)
    buf.seek(0)
    y = np.load(buf)
    assert y.dtype == np.bfloat16
    onp.testing.assert_array_equal(y.astype("float32").asnumpy(), [1.5, -2.0, 2.0**100])


def test_savez_names_and_numpy_reads_it(tmp_path):
    a, b = onp.arange(5, dtype="int32"), onp.eye(2)
    np.savez(tmp_path / "z", np.array(a), bias=np.array(b))
    with onp.load(tmp_path / "z.npz") as z:
        assert sorted(z.files) == ["arr_0", "bias"]
        onp.testing.assert_array_equal(z["arr_0"], a)
    with np.load(tmp_path / "z.npz") as z:
        assert sorted(z.files) == ["arr_0", "bias"] and "bias" in z and len(z) == 2
        same(z["arr_0"], a)
        same(z["bias"], b)
        assert sorted(dict(z.items())) == ["arr_0", "bias"]
        with pytest.raises(KeyError):
            z["missing"]


def test_savez_compressed_is_smaller_and_loads(tmp_path):
    ref = onp.zeros((200, 200), "float32")
    np.savez(tmp_path / "plain", x=np.array(ref))
    np.savez_compressed(tmp_path / "small", x=np.array(ref))
    assert (tmp_path / "small.npz").stat().st_size < (tmp_path / "plain.npz").stat().st_size / 10
    with np.load(tmp_path / "small.npz") as z:
        same(z["x"], ref)


def test_load_refuses_pickles_unless_allowed_and_mmap_writes(tmp_path):
    onp.save(tmp_path / "o.npy", onp.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):  # NumPy's refusal
        np.load(tmp_path / "o.npy")
    onp.save(tmp_path / "f.npy", onp.arange(3.0))
    same(np.load(tmp_path / "f.npy", mmap_mode="r"), onp.arange(3.0))
    with pytest.raises(NotImplementedError):
        np.load(tmp_path / "f.npy", mmap_mode="r+")
    with pytest.raises(ValueError):
        np.load(tmp_path / "f.npy", mmap_mode="rw")
    with pytest.raises(FileNotFoundError):
        np.load(tmp_path / "missing.npy")


def test_text_round_trip_matches_numpy(tmp_path):
    ref = onp.array([[1.25, -2.0], [3.5, 1e-3]])
    np.savetxt(tmp_path / "t.txt", np.array(ref), fmt="%.6f", delimiter=",")
    onp.savetxt(tmp_path / "r.txt", ref, fmt="%.6f", delimiter=",")
    assert (tmp_path / "t.txt").read_text() == (tmp_path / "r.txt").read_text()
    same(np.loadtxt(tmp_path / "t.txt", delimiter=","), onp.loadtxt(tmp_path / "r.txt",
                                                                     delimiter=","))
    same(np.loadtxt(io.StringIO("1 2\n3 4"), dtype=int), onp.loadtxt(io.StringIO("1 2\n3 4"),
                                                                      dtype=int))
    got = np.genfromtxt(io.StringIO("1,2\n3,"), delimiter=",")
    same(got, onp.genfromtxt(io.StringIO("1,2\n3,"), delimiter=","))
    with pytest.raises(NotImplementedError):
        np.genfromtxt(io.StringIO("1,2"), delimiter=",", usemask=True)
    with pytest.raises(TypeError):  # a structured result ndx cannot hold
        np.loadtxt(io.StringIO("1 a"), dtype=[("x", "i4"), ("y", "U1")])


def test_tofile_and_fromfile_match_numpy(tmp_path):
    ref = onp.arange(12, dtype="int16").reshape(3, 4).T  # written in C order of the view
    np.array(ref).tofile(tmp_path / "ndx.bin")
    ref.tofile(tmp_path / "np.bin")
    assert (tmp_path / "ndx.bin").read_bytes() == (tmp_path / "np.bin").read_bytes()
    same(np.fromfile(tmp_path / "np.bin", dtype="int16", count=5, offset=2),
         onp.fromfile(tmp_path / "np.bin", dtype="int16", count=5, offset=2))
    np.array([1.5, 2.5]).tofile(tmp_path / "t.txt", sep=",")
    assert (tmp_path / "t.txt").read_text() == "1.5,2.5"


def test_dump_and_dumps_pickle_the_array(tmp_path):
    x = np.arange(6).reshape(2, 3)
    same(pickle.loads(x.dumps()), onp.arange(6).reshape(2, 3))
    x.dump(tmp_path / "p.pkl")
    with open(tmp_path / "p.pkl", "rb") as f:
        same(pickle.load(f), onp.arange(6).reshape(2, 3))


# ----------------------------------------------------------------------------- stride tricks
@pytest.mark.parametrize("window,axis", [((2, 3), None), (2, 0), (3, 1), ((2, 2), (1, 0)),
                                         ((1, 5), None), (4, -2)])
def test_sliding_window_view_matches_numpy(window, axis):
    ref = onp.arange(20, dtype="float32").reshape(4, 5)
    for a, r in ((np.array(ref), ref), (np.array(ref).T, ref.T), (np.array(ref)[::2], ref[::2])):
        w = window if isinstance(window, tuple) else (window,)
        axes = range(r.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        if any(r.shape[ax] < n for ax, n in zip(axes, w)):
            continue  # NumPy refuses it: see the next test
        want = onp.lib.stride_tricks.sliding_window_view(r, window, axis)
        got = sliding_window_view(a, window, axis)
        same(got, want)
        assert np.shares_memory(got, a)


def test_sliding_window_view_errors_as_numpys():
    x, ox = np.arange(5), onp.arange(5)
    for args, family in [((6,), ValueError), ((-1,), ValueError), ((2, 1), ValueError),
                         ((2,), onp.exceptions.AxisError)]:
        kw = {"axis": 3} if family is onp.exceptions.AxisError else {}
        with pytest.raises(family):
            onp.lib.stride_tricks.sliding_window_view(ox, *args, **kw)
        with pytest.raises(family):
            sliding_window_view(x, *args, **kw)


def test_as_strided_views_like_numpys_and_writes_reach_the_base():
    ref = onp.arange(10, dtype="int32")
    x = np.array(ref)
    same(as_strided(x), ref)
    for shape, strides in [((3, 3), (8, 4)), ((4,), (-4,)), ((5, 2), (0, 4)), ((0, 7), (4, 4))]:
        start = 5 if strides[0] < 0 else 0
        want = onp.lib.stride_tricks.as_strided(ref[start:], shape, strides)
        same(as_strided(x[start:], shape, strides), want)
    v = as_strided(x, (2,), (12,))
    v[1] = 100
    assert x[3].item() == 100


def test_as_strided_refuses_views_outside_the_memory():
    x = np.arange(10, dtype="float32")
    for shape, strides in [((11,), (4,)), ((2,), (-4,)), ((2,), (3,)), ((2, 3), (4,)),
                           ((2**40, 2**40), (4, 4)), ((-1,), (4,))]:
        with pytest.raises(ValueError):
            as_strided(x, shape, strides)


def test_views_of_memory_numpy_owns_stay_inside_it():
    host = onp.arange(10.0)
    x = np.asarray(host)  # shares NumPy's memory (its length is the array's extent)
    assert np.shares_memory(x, x) and onp.shares_memory(host, onp.asarray(x))
    same(sliding_window_view(x, 4), onp.lib.stride_tricks.sliding_window_view(host, 4))
    same(as_strided(x[::-1], (3,), (-16,)),
         onp.lib.stride_tricks.as_strided(host[::-1], (3,), (-16,)))
    with pytest.raises(ValueError):
        as_strided(x, (11,), (8,))
    with pytest.raises(ValueError):
        as_strided(x[5:], (6,), (8,))  # past the end of the shared memory


def test_bad_file_arguments_are_type_errors():
    x = np.arange(3.0)
    for call in (lambda: x.tofile(1j), lambda: x.tofile((1, 2)), lambda: np.fromfile(2.5),
                 lambda: np.fromfile(x), lambda: np.genfromtxt(x), lambda: np.loadtxt(x),
                 lambda: np.genfromtxt([[1, 2], [3]]), lambda: np.savetxt(3.5, x)):
        with pytest.raises(TypeError):
            call()
