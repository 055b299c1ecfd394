"""The ndarray type against NumPy: attributes, operators with NumPy's scalar rules, basic
indexing as views, conversions, printing and the errors bad input raises."""
import numpy as onp
import pytest

import ndx
from ndx import np


def test_attributes_match_numpy():
    ref = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)
    a = np.array(ref)
    assert a.shape == ref.shape and a.ndim == 3 and a.size == 24
    assert a.dtype == onp.float32 and a.itemsize == 4 and a.nbytes == 96
    assert a.strides == ref.strides
    assert a.T.shape == (4, 3, 2)
    assert a.device == "cpu(0)" and a.ctx == "cpu(0)"
    assert len(a) == 2
    onp.testing.assert_array_equal(a.asnumpy(), ref)
    onp.testing.assert_array_equal(onp.asarray(a), ref)  # buffer protocol, no copy
    assert a.tolist() == ref.tolist()


def test_array_default_dtypes():
    assert np.array([1.5, 2.0]).dtype == onp.float32  # ndx's default float
    assert np.array([1, 2]).dtype == onp.int64
    assert np.array([True]).dtype == onp.bool_
    # NumPy arrays keep their dtype
    assert np.array(onp.zeros(2, dtype=onp.float64)).dtype == onp.float64
    assert np.array([1, 2], dtype="float16").dtype == onp.float16
    assert np.array(3.0).shape == ()
    assert np.array([]).shape == (0,)
    b = np.array([1.0, 2.0], dtype="bfloat16")
    assert b.dtype == "bfloat16"
    onp.testing.assert_array_equal(b.asnumpy(), [1.0, 2.0])
    ndx.npx.set_np(dtype=True)
    try:
        assert np.array([1.5]).dtype == onp.float64
        assert np.ones((2,)).dtype == onp.float64
    finally:
        ndx.npx.reset_np()
    assert np.ones((2,)).dtype == onp.float32


OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=", ">", ">="]


@pytest.mark.parametrize("op", OPERATORS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8"])
def test_operators_match_numpy(op, dtype):
    rng = onp.random.default_rng(0)
    x = rng.uniform(1, 4, size=(2, 3)).astype(dtype)
    y = rng.uniform(1, 4, size=(3,)).astype(dtype)
    a, b = np.array(x), np.array(y)
    expr = f"l {op} r"
    for lhs, rhs, rl, rr in [(a, b, x, y), (a, 2, x, 2), (3, a, 3, x), (a, 1.5, x, 1.5)]:
        got = eval(expr, {"l": lhs, "r": rhs})
        want = eval(expr, {"l": rl, "r": rr})
        # Where ints meet true division or a Python float, ndx's default float replaces
        # NumPy's float64.
        int_input = onp.dtype(dtype).kind == "i"
        if int_input and want.dtype == onp.float64 and (op == "/" or isinstance(rr, float)):
            want = want.astype(onp.float32)
        assert got.dtype == want.dtype, (expr, got.dtype, want.dtype)
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


def test_unary_operators_and_conversions():
    a = np.array([[-1.5, 2.0]])
    onp.testing.assert_array_equal((-a).asnumpy(), [[1.5, -2.0]])
    onp.testing.assert_array_equal(abs(a).asnumpy(), [[1.5, 2.0]])
    onp.testing.assert_array_equal((+a).asnumpy(), a.asnumpy())
    assert float(np.array([2.5])) == 2.5 and int(np.array(7)) == 7
    assert bool(np.array([1])) and not bool(np.array(0.0))
    assert np.array(5).item() == 5 and isinstance(np.array(5).item(), int)
    assert np.arange(6).reshape(2, 3).item(4) == 4
    assert [0, 1, 2][np.array(1)] == 1  # __index__ of a 0-d integer array
    with pytest.raises(ValueError, match="ambiguous"):
        bool(np.ones((2,)))
    with pytest.raises(TypeError, match="size-1"):
        float(np.ones((2,)))
    with pytest.raises(TypeError):
        [0][np.array(1.0)]
    assert (~np.array([True, False])).tolist() == [False, True]


def test_inplace_operators_keep_dtype_and_identity():
    a = np.zeros((2, 3))
    before = id(a)
    a += np.arange(3)
    a *= 2
    a -= 1.0
    a /= 2
    assert id(a) == before and a.dtype == onp.float32
    onp.testing.assert_allclose(a.asnumpy(), (onp.zeros((2, 3)) + onp.arange(3)) * 2 / 2 - 0.5)
    i = np.arange(4)
    i //= 2
    i %= 2
    assert i.tolist() == [0, 0, 1, 1]
    with pytest.raises(TypeError, match="same_kind"):
        i += 1.5
    with pytest.raises(ValueError, match="non-broadcastable"):
        v = np.zeros((3,))
        v += np.ones((2, 3))


INDEX_CASES = [
    1, -1, slice(None), slice(1, None), slice(None, None, -1), slice(0, 3, 2), (1, 2),
    (slice(None), 1), (Ellipsis, 0), (None, 1), (1, None, slice(None, 2)), Ellipsis, (),
    (slice(None), None, slice(1, 3)), (-2, slice(None), -1), (slice(5, 10),),
]


@pytest.mark.parametrize("key", INDEX_CASES, ids=repr)
def test_basic_indexing_matches_numpy_and_is_a_view(key):
    ref = onp.arange(60, dtype=onp.float64).reshape(3, 4, 5)
    a = np.array(ref)
    got = a[key]
    want = ref[key]
    assert got.shape == onp.shape(want)
    onp.testing.assert_array_equal(got.asnumpy(), want)
    if got.ndim > 0 and got.size > 0:
        got[...] = -1  # writing through the view changes the base, as in NumPy
        ref[key] = -1
        onp.testing.assert_array_equal(a.asnumpy(), ref)


def test_setitem_broadcasts_and_casts():
    a = np.zeros((3, 4), dtype="int32")
    a[1] = 7
    a[:, 0] = np.array([1, 2, 3])
    a[2, 1:3] = 9.9  # casts like NumPy's a[...] = value
    ref = onp.zeros((3, 4), dtype=onp.int32)
    ref[1] = 7
    ref[:, 0] = [1, 2, 3]
    ref[2, 1:3] = 9.9
    onp.testing.assert_array_equal(a.asnumpy(), ref)


@pytest.mark.parametrize("key,exc", [
    (3, IndexError), (-4, IndexError), ((0, 0, 0), IndexError), ((Ellipsis, Ellipsis), IndexError),
    (slice(0, 1, 0), ValueError), ("a", IndexError), (1.5, IndexError),
])
def test_bad_indices_raise(key, exc):
    a = np.zeros((3, 2))
    with pytest.raises(exc):
        a[key]


def test_zero_dim_and_zero_size():
    s = np.array(3.5)
    assert s.shape == () and s.ndim == 0 and s.size == 1
    assert float(s * 2) == 7.0
    with pytest.raises(TypeError):
        len(s)
    with pytest.raises(IndexError):
        s[0]
    z = np.zeros((0, 3))
    assert z.size == 0 and (z + 1).shape == (0, 3)
    assert np.sum(z, axis=0).tolist() == [0.0, 0.0, 0.0]
    assert list(z) == []


def test_methods():
    a = np.arange(6).reshape(2, 3)
    assert a.reshape((3, 2)).shape == (3, 2) and a.reshape(-1).shape == (6,)
    assert a.flatten().shape == (6,)
    assert a.transpose().shape == (3, 2) and a.transpose(1, 0).shape == (3, 2)
    assert a.astype("float16").dtype == onp.float16
    assert a.astype("int64", copy=False) is a
    assert a.sum() .item() == 15 and a.sum(axis=1).tolist() == [3, 12]
    assert a.max().item() == 5 and a.argmin().item() == 0
    c = a.copy()
    c[0, 0] = 100
    assert a[0, 0].item() == 0
    a.wait_to_read()


def test_printing_matches_numpy():
    ref = onp.array([[1.5, 2, 3], [4, 5, 6]], dtype=onp.float32)
    assert str(np.array(ref)) == str(ref)
    assert repr(np.array(ref)) == repr(ref)
    ints = onp.arange(30)
    assert str(np.array(ints)) == str(ints)
    assert repr(np.zeros((2, 0))) == repr(onp.zeros((2, 0), dtype=onp.float32))


def test_errors_are_typed_and_name_the_op():
    with pytest.raises(ndx.NDXError) as info:
        np.add(np.ones((2, 3)), np.ones((4,)))
    assert isinstance(info.value, ValueError)
    assert "[add]" in str(info.value) and "(2, 3)" in str(info.value)
    with pytest.raises(ndx.AxisError):
        np.sum(np.ones((2,)), axis=3)
    with pytest.raises(IndexError):  # AxisError is an IndexError too, as in NumPy
        np.sum(np.ones((2,)), axis=3)
    with pytest.raises(TypeError, match="dtype"):
        np.zeros((2,), dtype="U5")
    with pytest.raises(ValueError, match="negative"):
        np.zeros((-1,))
    with pytest.raises(TypeError):
        np.sum(np.ones(2), axis="x")
    assert ndx.base.MXNetError is ndx.NDXError


def test_help_has_signature_and_params():
    import inspect
    sig = inspect.signature(np.sum)
    assert list(sig.parameters)[:2] == ["a", "axis"]
    assert "keepdims" in np.sum.__doc__ and "_np_sum" in np.sum.__doc__
    assert callable(ndx.nd._np_add) and callable(ndx.nd._backward_power)
