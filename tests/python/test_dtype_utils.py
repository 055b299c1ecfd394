"""Dtype utilities (issue 11, part 5) against NumPy's, and bfloat16's own answers against
its format (8 exponent bits, 7 stored mantissa bits)."""
import numpy as onp
import pytest

from ndx import np

NUMPY_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float16", "float32", "float64")


@pytest.mark.parametrize("t", ["float16", "float32", "float64", onp.float32, "f8"])
def test_finfo_matches_numpy(t):
    got, want = np.finfo(t), onp.finfo(t)
    assert (got.eps, got.max, got.min, got.tiny, got.bits) == (
        want.eps, want.max, want.min, want.tiny, want.bits)


def test_finfo_of_an_array_and_of_bfloat16():
    assert np.finfo(np.zeros((2,), dtype="float16")).max == 65504.0
    b = np.finfo("bfloat16")
    assert b.bits == 16 and b.eps == 2.0 ** -7 and b.tiny == 2.0 ** -126
    # the largest finite bfloat16: float32's exponent range, 8 significant bits
    assert b.max == (2 - 2.0 ** -7) * 2.0 ** 127
    assert np.array([b.max], dtype="bfloat16").astype("float32").asnumpy()[0] == b.max


@pytest.mark.parametrize("t", ["int8", "uint8", "int16", "int32", "int64", "uint64", "i4"])
def test_iinfo_matches_numpy(t):
    got, want = np.iinfo(t), onp.iinfo(t)
    assert (got.min, got.max, got.bits) == (want.min, want.max, want.bits)


def test_finfo_iinfo_reject_the_other_kind():
    with pytest.raises(ValueError):
        np.finfo("int32")
    with pytest.raises(ValueError):
        np.iinfo("float32")
    with pytest.raises(TypeError):
        np.finfo("float99")


@pytest.mark.parametrize("a", NUMPY_DTYPES)
@pytest.mark.parametrize("b", NUMPY_DTYPES)
def test_promote_types_matches_numpy(a, b):
    assert np.promote_types(a, b) == onp.promote_types(a, b)


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_can_cast_matches_numpy(casting):
    for a in NUMPY_DTYPES:
        for b in NUMPY_DTYPES:
            assert np.can_cast(a, b, casting) == onp.can_cast(a, b, casting), (a, b, casting)


def test_can_cast_bfloat16():
    assert np.can_cast("bfloat16", "float32") and np.can_cast("bfloat16", "float64")
    assert not np.can_cast("bfloat16", "float16")
    assert np.can_cast("bfloat16", "float16", "same_kind")
    assert np.can_cast("uint8", "bfloat16") and np.can_cast("bool", "bfloat16")
    assert not np.can_cast("int16", "bfloat16") and not np.can_cast("float32", "bfloat16")
    assert np.can_cast("float32", "bfloat16", "same_kind")
    assert not np.can_cast("bfloat16", "int32", "same_kind")
    with pytest.raises(ValueError):
        np.can_cast("int8", "int16", "sometimes")


def test_min_scalar_type_and_kinds():
    for v in (3, 300, -3, 70000, 1.5, 1e300):
        assert np.min_scalar_type(v) == onp.min_scalar_type(v)
    for t in NUMPY_DTYPES:
        for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating",
                     "numeric", ("bool", "real floating")):
            assert np.isdtype(t, kind) == onp.isdtype(onp.dtype(t), kind), (t, kind)
        for parent in (onp.integer, onp.floating, onp.number, onp.signedinteger):
            assert np.issubdtype(t, parent) == onp.issubdtype(t, parent)
    assert np.isdtype("bfloat16", "real floating") and np.isdtype("bfloat16", "numeric")
    assert np.issubdtype("bfloat16", onp.floating) and not np.issubdtype("bfloat16", onp.integer)


def test_dtype_groups_and_constants():
    assert set(np.integer_dtypes) == {onp.dtype(t) for t in NUMPY_DTYPES if t[0] in "iu"}
    assert set(np.floating_dtypes) == {onp.dtype(t) for t in ("float16", "float32", "float64")}
    assert np.boolean_dtypes == (onp.dtype("bool"),)
    assert set(np.numeric_dtypes) == set(np.integer_dtypes) | set(np.floating_dtypes)
    assert np.PINF == onp.inf and np.NINF == -onp.inf and onp.isnan(np.NAN) and onp.isnan(np.NaN)
    assert np.PZERO == 0 and onp.signbit(np.NZERO) and not onp.signbit(np.PZERO)
    assert np.euler_gamma == 0.5772156649015329
    assert np.float32(3) == onp.float32(3) and type(np.float32(3)) is onp.float32
