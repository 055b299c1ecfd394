"""NumPy's WRITEABLE flag on ndx arrays: setflags / flags.writeable, the read-only views
broadcast_to, broadcast_arrays, diagonal, sliding_window_view and as_strided(writeable=False)
make, and every way of writing refusing them with ValueError, as NumPy 2.4 does (NumPy is the
reference for which calls raise and for the views' values)."""
import numpy as onp
import pytest

from ndx import autograd, np
from ndx.numpy.lib.stride_tricks import as_strided, sliding_window_view


def read_only_pair():
    x, a = onp.arange(6.0), np.arange(6.0, dtype="float64")
    x.setflags(write=False)
    a.setflags(write=False)
    return x, a


WRITES = {
    "setitem": lambda m, a: a.__setitem__(0, 1.0),
    "setitem_fancy": lambda m, a: a.__setitem__([0, 2], 1.0),
    "setitem_mask": lambda m, a: a.__setitem__(a > 2, 1.0),
    "iadd": lambda m, a: a.__iadd__(1.0),
    "imul": lambda m, a: a.__imul__(2.0),
    "ifloordiv": lambda m, a: a.__ifloordiv__(2.0),
    "out": lambda m, a: m.add(a, 1.0, out=a),
    "fill": lambda m, a: a.fill(0.0),
    "copyto": lambda m, a: m.copyto(a, 1.0),
    "sort": lambda m, a: a.sort(),
    "put": lambda m, a: m.put(a, [0], [5.0]),
    "place": lambda m, a: m.place(a, a > 2, [0.0]),
    "putmask": lambda m, a: m.putmask(a, a > 2, 0.0),
}


@pytest.mark.parametrize("how", list(WRITES))
def test_writes_into_a_read_only_array_raise_as_numpys(how):
    x, a = read_only_pair()
    with pytest.raises(ValueError):
        WRITES[how](onp, x)
    with pytest.raises(ValueError, match="read-only"):
        WRITES[how](np, a)
    onp.testing.assert_array_equal(a.asnumpy(), onp.arange(6.0))  # nothing was written


def test_flags_and_setflags_follow_numpys_rules():
    x, a = read_only_pair()
    assert a.flags.writeable is False and a.flags["WRITEABLE"] is False
    for make in (lambda m: m[1:], lambda m: m.reshape(2, 3), lambda m: m.T, lambda m: m[None],
                 lambda m: m.view("int64"), lambda m: m[::2]):
        v, w = make(x), make(a)
        assert w.flags.writeable is v.flags.writeable is False
        with pytest.raises(ValueError):  # a view of a read-only array stays read-only
            v.setflags(write=True)
        with pytest.raises(ValueError):
            w.setflags(write=True)
    for make in (lambda m: m.copy(), lambda m: m + 1, lambda m: m.astype("float32")):
        assert make(a).flags.writeable is make(x).flags.writeable is True
    a.setflags(write=True)
    x.setflags(write=True)
    a[0] = 7.0
    assert a[0].item() == 7.0
    a.flags.writeable = False
    with pytest.raises(ValueError):
        a[0] = 1.0
    with pytest.raises(ValueError):
        a.setflags(uic=True)
    with pytest.raises(NotImplementedError):
        a.setflags(align=False)


def test_reads_of_a_read_only_array_still_work():
    x, a = read_only_pair()
    onp.testing.assert_array_equal((a * 2 + 1).asnumpy(), x * 2 + 1)
    assert a.sum().item() == x.sum()
    onp.testing.assert_array_equal(np.sort(a[::-1]).asnumpy(), onp.sort(x[::-1]))
    with autograd.record():
        y = (a * a).sum()
    assert y.item() == (x * x).sum()


def test_numpy_sees_a_read_only_array_as_read_only():
    _, a = read_only_pair()
    shared = onp.asarray(a)
    assert onp.shares_memory(shared, onp.asarray(a)) and not shared.flags.writeable
    with pytest.raises(ValueError):
        shared[0] = 1.0
    with pytest.raises((BufferError, TypeError)):
        memoryview(a).cast("B")[0] = 1  # (the memoryview itself is read-only)
    dl = onp.from_dlpack(a)
    assert not dl.flags.writeable
    onp.testing.assert_array_equal(dl, onp.arange(6.0))


def test_broadcast_to_is_a_read_only_view_as_numpys():
    x = onp.arange(3.0).reshape(3, 1)
    a = np.array(x)
    got, want = np.broadcast_to(a, (2, 3, 4)), onp.broadcast_to(x, (2, 3, 4))
    onp.testing.assert_array_equal(got.asnumpy(), want)
    assert np.shares_memory(got, a)
    assert got.flags.writeable is want.flags.writeable is False
    with pytest.raises(ValueError):
        got[0, 0, 0] = 1.0
    with pytest.raises(ValueError):
        got += 1
    huge = np.broadcast_to(a[:1, :1], (2**40, 5))  # no element is repeated in memory
    assert huge.shape == (2**40, 5) and huge[2**39, 4].item() == 0.0
    got.setflags(write=True)  # as NumPy allows for broadcast_to's view of a writeable array
    assert got.flags.writeable
    onp.testing.assert_array_equal(np.broadcast_to(5.0, 3).asnumpy(), onp.broadcast_to(5.0, 3))
    with pytest.raises(ValueError):
        np.broadcast_to(a, (2, 4))


def test_broadcast_to_records_gradients():
    a = np.array([[1.0], [2.0]])
    a.attach_grad()
    with autograd.record():
        y = (np.broadcast_to(a, (2, 3)) * np.array([1.0, 2.0, 3.0])).sum()
    y.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), [[6.0], [6.0]])


def test_broadcast_arrays_gives_read_only_views_where_the_shape_changes():
    a, b = np.arange(3.0), np.ones((2, 1))
    p, q = np.broadcast_arrays(a, b)
    onp.testing.assert_array_equal(p.asnumpy(), onp.broadcast_arrays(onp.arange(3.0),
                                                                     onp.ones((2, 1)))[0])
    assert not p.flags.writeable and np.shares_memory(p, a)
    same = np.broadcast_arrays(a, np.ones(3))[0]
    assert same.flags.writeable


@pytest.mark.parametrize("offset,axis1,axis2", [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (2, 1, 2),
                                                (0, 2, 0), (-2, 1, 0), (5, 0, 1)])
def test_diagonal_is_a_read_only_view_as_numpys(offset, axis1, axis2):
    x = onp.arange(60.0).reshape(3, 4, 5)
    a = np.array(x)
    want = x.diagonal(offset, axis1, axis2)
    for got in (a.diagonal(offset, axis1, axis2), np.diagonal(a, offset, axis1, axis2)):
        onp.testing.assert_array_equal(got.asnumpy(), want)
        assert got.shape == want.shape
        assert got.flags.writeable is want.flags.writeable is False
        if got.size:
            assert np.shares_memory(got, a)
            with pytest.raises(ValueError):
                got[...] = 0.0
    onp.testing.assert_array_equal(np.trace(a, offset, axis1, axis2).asnumpy(),
                                   onp.trace(x, offset, axis1, axis2))
    sliced = x[:, ::2, ::-1]
    onp.testing.assert_array_equal(np.array(x)[:, ::2, ::-1].diagonal(offset, axis1, axis2)
                                   .asnumpy(), sliced.diagonal(offset, axis1, axis2))


def test_diagonal_records_gradients():
    a = np.arange(9.0).reshape(3, 3)
    a.attach_grad()
    with autograd.record():
        y = (np.diagonal(a, 1) * 2).sum()
    y.backward()
    onp.testing.assert_array_equal(a.grad.asnumpy(), onp.diag([2.0, 2.0], 1))


def test_stride_tricks_views_are_read_only_unless_asked():
    x = onp.arange(8.0)
    a = np.array(x)
    w, v = sliding_window_view(a, 3), onp.lib.stride_tricks.sliding_window_view(x, 3)
    assert w.flags.writeable is v.flags.writeable is False
    with pytest.raises(ValueError):
        w.setflags(write=True)
    with pytest.raises(ValueError):
        v.setflags(write=True)
    w = sliding_window_view(a, 3, writeable=True)
    w[0, 2] = 100.0  # every window holding element 2 sees it
    assert a[2].item() == 100.0 and w[1, 1].item() == 100.0 and w[2, 0].item() == 100.0
    s = as_strided(a, (2,), (16,), writeable=False)
    assert not s.flags.writeable
    with pytest.raises(ValueError):
        s[0] = 1.0
    assert as_strided(a, (2,), (16,)).flags.writeable


def test_read_only_corner_cases_as_numpys():
    x, a = read_only_pair()
    x.resize((2, 3), refcheck=False)
    a.resize((2, 3), refcheck=False)
    assert a.flags.writeable is x.flags.writeable is False  # resizing keeps the flag
    with pytest.raises(ValueError):
        a[0, 0] = 5.0
    for m, arr in ((onp, x), (np, a)):
        got = m.require(arr, requirements=["W"])
        assert got.flags.writeable and not m.shares_memory(got, arr)
    with pytest.raises(ValueError):  # the read-only check comes before the index check
        np.put(a, [100], [1.0])
    with pytest.raises(ValueError):
        np.copyto(a, 1j)  # (before the casting check)
    m = np.arange(9.0).reshape(3, 3)
    d = np.einsum("ii->i", m)  # einsum's diagonal is a writeable view, as NumPy's
    assert d.flags.writeable is onp.einsum("ii->i", onp.eye(3)).flags.writeable is True
    with pytest.raises(AttributeError):
        a.flags.c_contiguous = False
    with pytest.raises(BufferError):  # the legacy struct cannot say "read-only", as NumPy's
        a.__dlpack__()
    a.__dlpack__(max_version=(1, 0))


def test_immutable_sources_give_read_only_arrays(tmp_path):
    for m in (onp, np):
        b = m.frombuffer(b"\x01\x02\x03\x04", dtype="uint8")
        assert not b.flags.writeable
        with pytest.raises(ValueError):
            b.setflags(write=True)
        assert m.frombuffer(bytearray(b"\x01\x02"), dtype="uint8").flags.writeable
    onp.save(tmp_path / "f.npy", onp.arange(3.0))
    for m in (onp, np):
        assert not m.load(tmp_path / "f.npy", mmap_mode="r").flags.writeable
        assert m.load(tmp_path / "f.npy").flags.writeable


def test_views_of_a_writeable_owner_can_be_made_writeable_again():
    for m in (onp, np):
        owner = m.arange(12.0)
        view = owner.reshape(3, 4)
        view.setflags(write=False)
        inner = view[1:]
        assert not inner.flags.writeable
        inner.setflags(write=True)  # the memory's owner is writeable, as NumPy allows
        inner[0, 0] = 50.0
        assert float(owner[4]) == 50.0
        owner.setflags(write=False)
        with pytest.raises(ValueError):  # now the owner is read-only
            owner[2:].setflags(write=True)


@pytest.mark.parametrize("make", [lambda m: m.zeros((3, 4)), lambda m: m.arange(6.0)[1:],
                                  lambda m: m.arange(6.0).reshape(2, 3),
                                  lambda m: m.ones((2, 3)).T, lambda m: m.ones(3) + 1,
                                  lambda m: m.ones(3).copy(), lambda m: m.diagonal(m.eye(3))])
def test_owndata_as_numpys(make):
    assert make(np).flags.owndata == make(onp).flags.owndata
    assert make(np).flags["OWNDATA"] == make(onp).flags["O"]
