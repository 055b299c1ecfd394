"""DLPack (1.x and legacy) exchange with NumPy 2, PyTorch and JAX; __array__'s NumPy 2 copy
semantics; np.shares_memory / np.may_share_memory against NumPy's answers; MXNet's
attach_grad(grad_req='null')."""
import ctypes
import gc
import weakref

import numpy as onp
import pytest
from numpy.lib.stride_tricks import as_strided

from ndx import autograd, np, npx

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def _sample(dtype, shape=(3, 4)):
    rng = onp.random.default_rng(7)
    n = int(onp.prod(shape))
    if dtype == "bool":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    if dtype.startswith("complex"):
        return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype).reshape(shape)
    return rng.integers(0, 100, n).astype(dtype).reshape(shape)


# ---- the DLPack ABI, written from the specification, to inspect capsules independently ----
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.CFUNCTYPE(None, ctypes.c_void_p))]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.CFUNCTYPE(None, ctypes.c_void_p)), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

READ_ONLY, IS_COPIED = 1, 2


def capsule_name(capsule):
    return _api.PyCapsule_GetName(capsule).decode()


def managed(capsule):
    """The managed struct inside an unconsumed capsule (legacy or versioned)."""
    name = capsule_name(capsule)
    ptr = _api.PyCapsule_GetPointer(capsule, name.encode())
    kind = DLManagedTensorVersioned if name == "dltensor_versioned" else DLManagedTensor
    return kind.from_address(ptr)


class Wrapper:
    """Hands a fixed capsule to a consumer (numpy.from_dlpack calls __dlpack__)."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


# ---- round trips with NumPy ----
@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_from_ndx_every_dtype_shares_memory(dtype):
    ref = _sample(dtype)
    a = np.array(ref)
    b = onp.from_dlpack(a)
    assert b.dtype == ref.dtype and b.shape == ref.shape
    onp.testing.assert_array_equal(b, ref)
    b[1, 2] = ref[0, 0] if dtype != "bool" else not ref[1, 2]
    assert a[1, 2].item() == b[1, 2].item()  # the write reached ndx's memory


@pytest.mark.parametrize("dtype", DTYPES)
def test_ndx_from_numpy_every_dtype_shares_memory(dtype):
    ref = _sample(dtype)
    x = ref.copy()
    a = np.from_dlpack(x)
    assert str(a.dtype) == dtype and a.shape == ref.shape
    onp.testing.assert_array_equal(a.asnumpy(), ref)
    a[0, 1] = ref[2, 3] if dtype != "bool" else not ref[0, 1]
    assert x[0, 1] == a[0, 1].item()  # the write reached NumPy's memory
    assert np.shares_memory(a, x)


def test_bfloat16_round_trips_between_ndx_arrays_and_numpy_refuses_it():
    a = np.array([1.5, -2.0, 3.25]).astype("bfloat16")
    b = np.from_dlpack(a)
    assert str(b.dtype) == "bfloat16" and np.shares_memory(a, b)
    onp.testing.assert_array_equal(b.astype("float32").asnumpy(), [1.5, -2.0, 3.25])
    m = managed(a.__dlpack__(max_version=(1, 0)))
    assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes) == (4, 16, 1)
    with pytest.raises((BufferError, RuntimeError)):  # NumPy has no bfloat16
        onp.from_dlpack(a)


@pytest.mark.parametrize("view", [
    lambda x: x[::2], lambda x: x[:, 1::3], lambda x: x.T, lambda x: x[::-1],
    lambda x: x[:, ::-2], lambda x: x.T[::-1, 1:], lambda x: x[1], lambda x: x[:, 2],
    lambda x: x[None, 1:3, ::2], lambda x: x[::-1, ::-1].T, lambda x: x[2:2]])
def test_strided_views_both_ways(view):
    ref = onp.arange(30, dtype=onp.float64).reshape(5, 6)
    a = view(np.array(ref))
    b = onp.from_dlpack(a)
    onp.testing.assert_array_equal(b, view(ref))
    assert b.strides == a.strides  # exported as a strided view, not copied
    x = ref.copy()
    v = view(x)
    c = np.from_dlpack(v)
    onp.testing.assert_array_equal(c.asnumpy(), view(ref))
    assert c.strides == v.strides
    if c.size:
        c[...] = -1.0
        assert (v == -1.0).all()


def test_zero_size_and_zero_d():
    for shape in [(0,), (2, 0, 3), ()]:
        ref = onp.full(shape, 2.5, dtype=onp.float32)
        a = np.from_dlpack(ref)
        assert a.shape == shape and str(a.dtype) == "float32"
        onp.testing.assert_array_equal(a.asnumpy(), ref)
        b = onp.from_dlpack(np.array(ref))
        assert b.shape == shape and b.dtype == onp.float32
        onp.testing.assert_array_equal(b, ref)
    s = np.array(7.0)
    m = managed(s.__dlpack__(max_version=(1, 0)))
    assert m.dl_tensor.ndim == 0
    z = onp.from_dlpack(s)
    z[()] = 3.0
    assert s.item() == 3.0


def test_lifetime_consumer_outlives_producer():
    # ndx -> NumPy: the capsule's handle keeps ndx's storage alive.
    a = np.arange(1000).astype("float64") * 2
    b = onp.from_dlpack(a)
    del a
    gc.collect()
    _ = np.ones(1000) * 5  # reuse of a freed block would show up as wrong values
    onp.testing.assert_array_equal(b, onp.arange(1000) * 2.0)
    # NumPy -> ndx: the producer's deleter runs when the last ndx view is gone, not before.
    x = onp.arange(100.0)
    gone = weakref.ref(x)
    a = np.from_dlpack(x)
    view = a[10:20]
    del x, a
    gc.collect()
    assert gone() is not None  # ndx still holds NumPy's array through the capsule
    onp.testing.assert_array_equal(view.asnumpy(), onp.arange(10.0, 20.0))
    del view
    gc.collect()
    assert gone() is None


def test_capsules_legacy_and_versioned():
    a = np.arange(12).reshape(3, 4).astype("int32")[:, ::2]
    for kwargs, name in [({}, "dltensor"), ({"max_version": None}, "dltensor"),
                         ({"max_version": (0, 8)}, "dltensor"),
                         ({"max_version": (1, 0)}, "dltensor_versioned"),
                         ({"max_version": (1, 7)}, "dltensor_versioned"),
                         ({"max_version": (2, 0)}, "dltensor_versioned")]:
        cap = a.__dlpack__(**kwargs)
        assert capsule_name(cap) == name
        m = managed(cap)
        t = m.dl_tensor
        assert (t.device.device_type, t.device.device_id) == (1, 0)
        assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (0, 32, 1)
        assert [t.shape[i] for i in range(t.ndim)] == [3, 2]
        assert [t.strides[i] for i in range(t.ndim)] == [4, 2]  # in elements, always filled
        assert t.data + t.byte_offset == onp.from_dlpack(a).ctypes.data
        if name == "dltensor_versioned":
            assert m.major == 1 and m.minor <= (kwargs["max_version"][1]
                                                if kwargs["max_version"][0] == 1 else 99)
            assert m.flags == 0  # writable, shared
    copied = a.__dlpack__(max_version=(1, 0), copy=True)
    assert managed(copied).flags == IS_COPIED
    b = onp.from_dlpack(Wrapper(copied))
    assert capsule_name(copied) == "used_dltensor_versioned"  # the consumer took it
    onp.testing.assert_array_equal(b, a.asnumpy())
    b[0, 0] = 99
    assert a[0, 0].item() == 0  # copy=True made a copy
    legacy = a.__dlpack__()
    onp.from_dlpack(Wrapper(legacy))
    assert capsule_name(legacy) == "used_dltensor"
    # An unconsumed capsule frees its tensor when collected (no leak, no crash).
    for _ in range(3):
        a.__dlpack__(max_version=(1, 0))
        a.__dlpack__()
    gc.collect()
    assert a.asnumpy().tolist() == [[0, 2], [4, 6], [8, 10]]


def test_dlpack_device_and_export_arguments():
    a = np.ones((2, 2))
    assert a.__dlpack_device__() == (1, 0)
    assert capsule_name(a.__dlpack__(dl_device=(1, 0))) == "dltensor"
    with pytest.raises(BufferError, match="device"):
        a.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="device"):
        a.__dlpack__(dl_device=(14, 0), copy=True)
    with pytest.raises(ValueError, match="stream"):
        a.__dlpack__(stream=1)
    with pytest.raises(TypeError, match="copy"):
        a.__dlpack__(copy="yes")
    with pytest.raises(TypeError, match="max_version"):
        a.__dlpack__(max_version=1)
    with pytest.raises(TypeError, match="dl_device"):
        a.__dlpack__(dl_device="cpu")
    with pytest.raises(TypeError):
        a.__dlpack__(None)  # keyword-only, as the Array API specifies
    b = onp.from_dlpack(a, copy=False)
    assert onp.shares_memory(b, onp.asarray(a))
    c = onp.from_dlpack(a, copy=True)
    assert not onp.shares_memory(c, onp.asarray(a))
    d = onp.from_dlpack(a, device="cpu")
    onp.testing.assert_array_equal(d, onp.ones((2, 2)))


def test_export_while_recording_gives_the_data():
    x = np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x * 2
        b = onp.from_dlpack(y)
        (y * y).sum().backward()
    onp.testing.assert_array_equal(b, [2.0, 4.0, 6.0])
    onp.testing.assert_allclose(x.grad.asnumpy(), [8.0, 16.0, 24.0])


def test_from_dlpack_copy_and_readonly():
    x = onp.arange(6.0)
    a = np.from_dlpack(x, copy=True)
    a[0] = 50.0
    assert x[0] == 0.0
    a = np.from_dlpack(x, copy=False)
    a[0] = 50.0
    assert x[0] == 50.0
    ro = onp.arange(4.0)
    ro.flags.writeable = False
    r = np.from_dlpack(ro)  # read-only producer memory: copied, so ndx may write
    r[0] = 9.0
    assert ro[0] == 0.0 and not np.shares_memory(r, ro)
    with pytest.raises(BufferError, match="read-only"):
        np.from_dlpack(ro, copy=False)
    with pytest.raises(TypeError, match="__dlpack__"):
        np.from_dlpack([1, 2, 3])
    with pytest.raises(TypeError, match="copy"):
        np.from_dlpack(x, copy=1)
    b = np.from_dlpack(x, device="cpu(0)")
    assert b.device == "cpu(0)" and np.shares_memory(b, x)


class LegacyProducer:
    """A pre-1.0 producer: __dlpack__ takes only stream."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, stream=None):
        return self.x.__dlpack__()

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


def test_legacy_producer_fallback():
    x = onp.arange(5.0)
    a = np.from_dlpack(LegacyProducer(x))
    a[1] = 10.0
    assert x[1] == 10.0
    c = np.from_dlpack(LegacyProducer(x), copy=True)  # the consumer copies
    c[2] = 30.0
    assert x[2] == 2.0


def _fake_capsule(code=2, bits=32, lanes=1, major=1, device_type=1, flags=0):
    """A versioned capsule built by hand (no deleter, memory kept by the returned objects)."""
    data = (ctypes.c_float * 4)(1, 2, 3, 4)
    shape = (ctypes.c_int64 * 1)(4)
    strides = (ctypes.c_int64 * 1)(1)
    m = DLManagedTensorVersioned()
    m.major, m.minor, m.flags = major, 0, flags
    m.dl_tensor.data = ctypes.cast(data, ctypes.c_void_p)
    m.dl_tensor.device = DLDevice(device_type, 0)
    m.dl_tensor.ndim = 1
    m.dl_tensor.dtype = DLDataType(code, bits, lanes)
    m.dl_tensor.shape = shape
    m.dl_tensor.strides = strides
    cap = _api.PyCapsule_New(ctypes.addressof(m), b"dltensor_versioned", None)
    return cap, (data, shape, strides, m)


def test_from_dlpack_rejects_what_it_cannot_read_and_leaves_the_capsule():
    cap, keep = _fake_capsule()
    a = npx.from_dlpack(cap)  # a well-formed float32 tensor reads fine
    onp.testing.assert_array_equal(a.asnumpy(), [1, 2, 3, 4])
    assert capsule_name(cap) == "used_dltensor_versioned"
    del a
    for kwargs, match in [({"code": 2, "bits": 8}, "dtype"), ({"lanes": 4}, "dtype"),
                          ({"code": 3, "bits": 64}, "dtype"), ({"major": 2}, "version"),
                          ({"device_type": 4}, "device"), ({"device_type": 2}, "CUDA")]:
        cap, keep = _fake_capsule(**kwargs)
        with pytest.raises(BufferError, match=match):
            npx.from_dlpack(cap)
        assert capsule_name(cap) == "dltensor_versioned"  # not consumed
    cap, keep = _fake_capsule(flags=READ_ONLY)
    with pytest.raises(BufferError, match="read-only"):
        npx.from_dlpack(cap, copy=False)
    r = npx.from_dlpack(cap)
    onp.testing.assert_array_equal(r.asnumpy(), [1, 2, 3, 4])
    r[0] = 5  # a copy: the producer's memory is untouched
    assert keep[0][0] == 1.0
    with pytest.raises(BufferError, match="consumed"):
        npx.from_dlpack(cap)
    with pytest.raises(TypeError, match="capsule"):
        npx.from_dlpack(3)
    other = _api.PyCapsule_New(ctypes.addressof(keep[3]), b"something", None)
    with pytest.raises(TypeError, match="dltensor"):
        npx.from_dlpack(other)


def test_npx_mxnet_names():
    a = np.arange(6).reshape(2, 3).astype("float32")
    cap = npx.to_dlpack_for_read(a)
    assert capsule_name(cap) == "dltensor"
    b = npx.from_dlpack(cap)
    assert np.shares_memory(a, b)
    w = npx.from_dlpack(npx.to_dlpack_for_write(a))
    w[1, 1] = -3.0
    assert a[1, 1].item() == -3.0
    onp.testing.assert_array_equal(onp.from_dlpack(Wrapper(npx.to_dlpack_for_read(a))),
                                   a.asnumpy())
    with pytest.raises(TypeError, match="ndarray"):
        npx.to_dlpack_for_read(onp.ones(2))
    c = npx.from_dlpack(onp.arange(3.0))  # objects with __dlpack__ too
    onp.testing.assert_array_equal(c.asnumpy(), [0.0, 1.0, 2.0])


# ---- PyTorch and JAX ----
def test_torch_round_trips():
    torch = pytest.importorskip("torch")
    for dtype in ["bool", "int8", "int64", "uint8", "float16", "float32", "float64",
                  "complex64", "complex128"]:
        ref = _sample(dtype)
        a = np.array(ref)
        t = torch.from_dlpack(a)
        onp.testing.assert_array_equal(t.numpy(), ref)
        b = np.from_dlpack(torch.from_numpy(ref.copy()))
        onp.testing.assert_array_equal(b.asnumpy(), ref)
    a = np.arange(12).reshape(3, 4).astype("float32")
    t = torch.from_dlpack(a[:, ::2])
    t[0, 1] = 100.0
    assert a[0, 2].item() == 100.0
    u = torch.arange(20, dtype=torch.float64).reshape(4, 5).t()[1:]
    v = np.from_dlpack(u)
    onp.testing.assert_array_equal(v.asnumpy(), u.numpy())
    v[0, 0] = -1.0
    assert u[0, 0].item() == -1.0
    del u
    gc.collect()
    assert v[0, 0].item() == -1.0
    bf = torch.tensor([1.5, -2.25], dtype=torch.bfloat16)
    c = np.from_dlpack(bf)
    assert str(c.dtype) == "bfloat16"
    onp.testing.assert_array_equal(c.astype("float32").asnumpy(), [1.5, -2.25])
    assert torch.from_dlpack(c).dtype == torch.bfloat16


def test_jax_round_trips():
    jnp = pytest.importorskip("jax.numpy")
    ref = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    a = np.from_dlpack(jnp.asarray(ref))
    onp.testing.assert_array_equal(a.asnumpy(), ref)
    onp.testing.assert_array_equal(onp.asarray(jnp.from_dlpack(np.array(ref))), ref)


# ---- __array__ ----
def test_array_copy_semantics_follow_numpy_2():
    ref = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    a = np.array(ref)
    host = onp.from_dlpack(a)
    shared = a.__array__()
    assert onp.shares_memory(shared, host) and shared.dtype == onp.float32
    assert onp.shares_memory(a.__array__(copy=False), host)
    assert not onp.shares_memory(a.__array__(copy=True), host)
    cast = a.__array__(dtype=onp.float64)
    assert cast.dtype == onp.float64 and not onp.shares_memory(cast, host)
    onp.testing.assert_array_equal(cast, ref)
    with pytest.raises(ValueError, match="copy"):
        a.__array__(dtype="float64", copy=False)
    assert onp.shares_memory(a.__array__(dtype="float32", copy=False), host)
    # NumPy's own entry points agree with what they do for a NumPy input.
    for make, conv in [(lambda x: x, lambda x: onp.asarray(x)),
                       (lambda x: x, lambda x: onp.array(x, copy=False)),
                       (lambda x: x, lambda x: onp.array(x)),
                       (lambda x: x, lambda x: onp.asarray(x, dtype="float64")),
                       (lambda x: x, lambda x: onp.asarray(x, dtype="float32")),
                       (lambda x: x.T, lambda x: onp.asarray(x))]:
        n = make(ref.copy())
        d = make(np.array(ref))
        assert onp.shares_memory(conv(d), onp.from_dlpack(d)) == onp.shares_memory(conv(n), n)
        onp.testing.assert_array_equal(conv(d), conv(n))
    with pytest.raises(ValueError):
        onp.asarray(a, dtype="float64", copy=False)
    keep = a.__array__()
    del a
    gc.collect()
    onp.testing.assert_array_equal(keep, ref)  # the view keeps ndx's storage alive


@pytest.mark.parametrize("make", [lambda r: r, lambda r: r[:, ::2], lambda r: r.T,
                                  lambda r: r.astype(onp.int32)])
@pytest.mark.parametrize("fn, kwargs", [
    ("asarray", {}), ("asarray", {"copy": False}), ("asarray", {"copy": True}),
    ("array", {}), ("array", {"copy": False}), ("asarray", {"dtype": "float64"}),
    ("asarray", {"dtype": "float32"}), ("asarray", {"dtype": "float32", "copy": False}),
    ("array", {"dtype": "float64", "copy": False})])
def test_ndx_creation_from_numpy_copies_as_numpy_does(make, fn, kwargs):
    """ndx's np.array / np.asarray given a NumPy array share or copy where NumPy's do."""
    src = make(onp.arange(12.0).reshape(3, 4))
    try:
        expected = onp.shares_memory(getattr(onp, fn)(src, **kwargs), src)
    except ValueError:
        expected = ValueError
    try:
        out = getattr(np, fn)(src, **kwargs)
        got = np.shares_memory(out, src)
        onp.testing.assert_array_equal(out.asnumpy(), getattr(onp, fn)(src, **kwargs))
    except ValueError:
        got = ValueError
    assert got == expected


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_shares_every_dtype_and_layout(dtype):
    ref = _sample(dtype, (4, 5))
    for view in (lambda x: x, lambda x: x.T[::-1, 1::2], lambda x: x[2, 3], lambda x: x[4:]):
        a = view(np.array(ref))
        r = a.__array__()
        assert r.dtype == view(ref).dtype and r.shape == view(ref).shape
        onp.testing.assert_array_equal(r, view(ref))
        assert r.size == 0 or onp.shares_memory(r, onp.from_dlpack(a))


def test_array_of_bfloat16_needs_a_copy():
    a = np.array([1.0, 2.5]).astype("bfloat16")
    r = a.__array__()
    assert r.dtype == onp.float32
    onp.testing.assert_array_equal(r, [1.0, 2.5])
    with pytest.raises(ValueError, match="copy"):
        a.__array__(copy=False)
    onp.testing.assert_array_equal(onp.asarray(a), [1.0, 2.5])


# ---- shares_memory / may_share_memory ----
VIEW_PAIRS = [
    (lambda x: x, lambda x: x), (lambda x: x[1:], lambda x: x[:1]),
    (lambda x: x[:, ::2], lambda x: x[:, 1::2]), (lambda x: x[:, ::2], lambda x: x[:, 2::4]),
    (lambda x: x[0], lambda x: x[1]), (lambda x: x[0], lambda x: x[:, 0]),
    (lambda x: x.T, lambda x: x[2]), (lambda x: x[::-1], lambda x: x[3]),
    (lambda x: x[::2, ::3], lambda x: x[1::2, 1::3]),
    (lambda x: x[::2, ::3], lambda x: x[2::2, 3::3]),
    (lambda x: x.reshape(-1)[5:9], lambda x: x[1, :]),
    (lambda x: x.reshape(-1)[3:6], lambda x: x[1]),
    (lambda x: x[:, 1:3], lambda x: x[:, 3:5]), (lambda x: x[:, 1:4], lambda x: x[:, 3:5]),
    (lambda x: x[2:2], lambda x: x), (lambda x: x[..., None][1:], lambda x: x[:1, None]),
    (lambda x: x.reshape(2, 3, 4)[:, 1], lambda x: x.reshape(2, 3, 4)[1, ::2, 1::2]),
    (lambda x: x.reshape(2, 3, 4)[:, :, ::-3], lambda x: x.reshape(24)[1::3]),
]


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except onp.exceptions.TooHardError:
        return "TooHardError"


@pytest.mark.parametrize("fa, fb", VIEW_PAIRS)
def test_shares_memory_matches_numpy(fa, fb):
    ref = onp.arange(24, dtype=onp.float64).reshape(4, 6)
    a = np.array(ref)
    xa, xb = fa(a), fb(a)
    na, nb = fa(ref), fb(ref)
    assert np.shares_memory(xa, xb) == onp.shares_memory(na, nb)
    assert np.may_share_memory(xa, xb) == onp.may_share_memory(na, nb)
    # max_work=0 compares extents only: overlapping extents are too hard to decide.
    assert (_outcome(np.shares_memory, xa, xb, max_work=0)
            == _outcome(onp.shares_memory, na, nb, max_work=0))
    assert np.may_share_memory(xa, xb, max_work=100) == onp.may_share_memory(na, nb, max_work=100)
    assert not np.shares_memory(xa, np.array(nb))


def _random_views(rng, buf, byte_step):
    """Two random strided views of buf (strides multiples of byte_step bytes)."""
    views = []
    for _ in range(2):
        nd = rng.integers(1, 4)
        shape = tuple(int(s) for s in rng.integers(1, 6, nd))
        strides = tuple(int(s) * byte_step for s in rng.integers(1, 30, nd))
        extent = sum((n - 1) * s for n, s in zip(shape, strides)) + buf.itemsize
        if extent > buf.nbytes:
            return None
        start = int(rng.integers(0, buf.nbytes - extent + 1))
        start -= start % byte_step
        views.append(onp.ndarray(shape, buf.dtype, buffer=buf, offset=start, strides=strides))
    return views


def test_shares_memory_random_interleaved_strides():
    rng = onp.random.default_rng(0)
    buf = onp.zeros(400, dtype=onp.int16)
    for _ in range(300):
        # Element-aligned strided views of one buffer, made by NumPy and imported zero-copy.
        views = _random_views(rng, buf, 2)
        if views is not None:
            a, b = (np.from_dlpack(v) for v in views)
            expected = onp.shares_memory(*views)
            assert np.shares_memory(a, b) == expected
            assert np.shares_memory(a, views[1]) == expected  # mixed operands
            assert np.may_share_memory(a, b) == onp.may_share_memory(*views)
        # Odd byte strides (NumPy operands only: DLPack strides count elements): elements
        # that overlap in part of their bytes.
        views = _random_views(rng, buf[:-1], 1)
        if views is not None:
            assert np.shares_memory(*views) == onp.shares_memory(*views)


def test_shares_memory_across_imports_and_too_hard():
    x = onp.arange(10.0)
    a, b = np.from_dlpack(x), np.from_dlpack(x[5:])  # two imports of one buffer
    assert np.shares_memory(a, b) and np.shares_memory(a[5:], x)
    assert not np.shares_memory(a[:5], b) and not np.shares_memory(a[:5], x[5:])
    assert not np.shares_memory(a, [1.0, 2.0]) and not np.may_share_memory(a, 3.0)
    assert np.shares_memory(a, a.T) and np.may_share_memory(np.from_dlpack(a), a)
    # NumPy's documented hard instance: an exact answer is beyond max_work.
    big = onp.zeros(192163377, dtype=onp.int8)
    x1 = as_strided(big, strides=(36674, 61119, 85569), shape=(1049, 1049, 1049))
    x2 = as_strided(big[64023025:], strides=(12223, 12224, 1), shape=(1049, 1049, 1))
    with pytest.raises(onp.exceptions.TooHardError):
        onp.shares_memory(x1, x2, max_work=1000)  # the reference agrees it is too hard
    with pytest.raises(onp.exceptions.TooHardError):
        np.shares_memory(np.from_dlpack(x1), np.from_dlpack(x2), max_work=1000)
    assert np.may_share_memory(np.from_dlpack(x1), x2, max_work=1000)  # too hard: maybe
    with pytest.raises(ValueError, match="max_work"):
        np.shares_memory(a, b, max_work=-5)
    with pytest.raises(TypeError, match="max_work"):
        np.may_share_memory(a, b, max_work=1.5)
    raw = bytearray(16)
    assert np.shares_memory(np.from_dlpack(onp.frombuffer(raw, onp.uint8)), raw)
    assert onp.shares_memory(onp.frombuffer(raw, onp.uint8), raw)  # NumPy agrees


# ---- attach_grad(grad_req='null') ----
def test_attach_grad_null_leaves_grad_none():
    x = np.array([1.0, 2.0])
    z = np.array([3.0, 4.0])
    w = np.array([0.5, 0.5])
    x.attach_grad()
    z.attach_grad(grad_req="null")
    w.attach_grad(grad_req="add")
    assert z.grad is None
    for _ in range(2):
        with autograd.record():
            y = (x * z * w).sum()
        y.backward()
    assert z.grad is None
    onp.testing.assert_allclose(x.grad.asnumpy(), [1.5, 2.0])  # 'write': the last pass
    onp.testing.assert_allclose(w.grad.asnumpy(), [6.0, 16.0])  # 'add': both passes
    z.attach_grad()  # back to 'write': a zero buffer again
    assert z.grad.asnumpy().tolist() == [0.0, 0.0]


# ---- GPU arrays (run only where ndx has a GPU) ----
@pytest.mark.skipif(npx.num_gpus() == 0, reason="no GPU")
def test_gpu_arrays_export_and_import():
    a = np.arange(6.0).reshape(2, 3).to_device("gpu(0)")
    assert a.__dlpack_device__() == (2, 0)
    m = managed(a.__dlpack__(max_version=(1, 0)))
    assert (m.dl_tensor.device.device_type, m.dl_tensor.device.device_id) == (2, 0)
    assert m.flags == 0
    host = a.__dlpack__(max_version=(1, 0), dl_device=(1, 0))  # a copy to the CPU
    assert managed(host).flags == IS_COPIED
    onp.testing.assert_array_equal(onp.from_dlpack(Wrapper(host)), onp.arange(6.0).reshape(2, 3))
    with pytest.raises(BufferError, match="copy=False"):
        a.__dlpack__(dl_device=(1, 0), copy=False)
    with pytest.raises(ValueError, match="stream"):
        a.__dlpack__(stream=0)
    b = np.from_dlpack(a)  # the same GPU memory
    assert b.device == "gpu(0)" and np.shares_memory(a, b)
    c = np.from_dlpack(a, device="cpu")
    assert c.device == "cpu(0)"
    onp.testing.assert_array_equal(c.asnumpy(), onp.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="copy"):
        a.__array__(copy=False)
    onp.testing.assert_array_equal(a.__array__(), onp.arange(6.0).reshape(2, 3))
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        t = torch.from_dlpack(a)
        assert t.is_cuda
        t += 1
        onp.testing.assert_array_equal(a.asnumpy(), onp.arange(1.0, 7.0).reshape(2, 3))
        d = np.from_dlpack(torch.ones(3, device="cuda"))
        assert d.device == "gpu(0)" and d.asnumpy().tolist() == [1.0, 1.0, 1.0]


def test_from_dlpack_to_another_device_imports_then_moves():
    """A producer that cannot export to the target device (NumPy: CPU only) is imported where
    it is and moved by ndx; copy=False refuses the move with BufferError."""
    x = onp.arange(3.0, dtype="float32")
    with pytest.raises(BufferError):
        np.from_dlpack(x, device="gpu(0)", copy=False)
    if npx.num_gpus() == 0:
        with pytest.raises(ValueError, match="gpu\\(0\\) is not available"):
            np.from_dlpack(x, device="gpu(0)")  # ndx's move fails, not the producer's export
    else:
        y = np.from_dlpack(x, device="gpu(0)")
        assert str(y.device) == "gpu(0)"
        onp.testing.assert_array_equal(y.asnumpy(), x)


def test_npx_from_numpy_shares_or_copies_as_mxnet():
    x = onp.arange(6.0).reshape(2, 3)
    a = npx.from_numpy(x)  # zero_copy: the same memory, the NumPy array made read-only
    assert a.shape == (2, 3) and a.dtype == onp.float64
    assert not x.flags.writeable
    a[0, 0] = 7.0
    assert x[0, 0] == 7.0
    y = onp.arange(3, dtype=onp.int16)
    b = npx.from_numpy(y, zero_copy=False)
    y[0] = 9
    assert b.dtype == onp.int16 and b.asnumpy().tolist() == [0, 1, 2] and y.flags.writeable
    with pytest.raises(ValueError, match="C-contiguous"):
        npx.from_numpy(onp.arange(6.0)[::2])
    with pytest.raises(TypeError, match="numpy.ndarray"):
        npx.from_numpy([1, 2])
