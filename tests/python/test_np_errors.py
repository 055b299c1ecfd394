"""Bad input raises NumPy's exception class (tools/fuzz/np_diff.py, seeds 120-125): each call
goes to NumPy and to ndx.numpy with the same arguments, and both must raise the same builtin
class (ndx's own classes subclass the builtin ones; NumPy's AxisError is a ValueError and an
IndexError, so either is accepted where NumPy raises it)."""
import numpy as onp
import pytest

import ndx.numpy as np

EXC_BASES = (TypeError, ValueError, IndexError, OverflowError)


def _nd(v):
    if isinstance(v, onp.ndarray):
        return np.array(v)
    if isinstance(v, list):
        return [_nd(x) for x in v]
    return v


def _a(*shape, dtype="float32"):
    return onp.arange(onp.prod(shape, dtype=int), dtype=dtype).reshape(shape)


def _bases(e):
    return {b for b in EXC_BASES if isinstance(e, b)}


def _fn(mod, name):
    for part in name.split("."):
        mod = getattr(mod, part)
    return mod


CASES = [
    # one integer axis: a tuple or None is NumPy's TypeError (repro 121:118, 121:2572, ...)
    ("rollaxis", (_a(2, 3), (0, 1)), {}),
    ("diff", (_a(3, 1),), {"axis": (-1,)}),
    ("cross", (_a(2, 3), _a(2, 3)), {"axis": (-1,)}),
    ("packbits", (_a(3, 1, dtype="uint8"),), {"axis": (0, 1)}),
    ("unpackbits", (_a(3, dtype="uint8"),), {"axis": (0,)}),
    ("take_along_axis", (_a(3), onp.array([2, 0, 1])), {"axis": (0, 0)}),
    ("put_along_axis", (_a(3), onp.array([2, 0, 1]), 0.0, (0,)), {}),
    ("unwrap", (_a(2, 3),), {"axis": (0,)}),
    ("trapezoid", (_a(2, 3),), {"axis": (0, 1)}),
    ("array_split", (_a(1, 4), [1, 2]), {"axis": None}),
    ("insert", (_a(2, 3), 1, 5.0), {"axis": (0,)}),
    ("delete", (_a(2, 3), 1), {"axis": (0,)}),
    ("compress", (onp.array([True, False]), _a(2, 3)), {"axis": (0,)}),
    ("unique", (_a(2, 3),), {"axis": (0,)}),
    # unstack: NumPy's moveaxis rules (repro 120:1726, 122:1988)
    ("unstack", (_a(2, 1, 3),), {"axis": (0, 0)}),
    ("unstack", (_a(2, 1, 3),), {"axis": (0, 1)}),
    ("unstack", (_a(2, 1, 3),), {"axis": None}),
    ("unstack", (_a(2, 1, 3),), {"axis": 3}),
    # linspace / logspace axis (repro 124:1447, 120:2783, 121:1527, 123:178)
    ("linspace", (0, 3.5), {"num": 5, "axis": None}),
    ("linspace", (0, -2), {"axis": ()}),
    ("linspace", (0, -2), {"axis": 1}),
    ("logspace", (0, 3.5), {"num": 3, "axis": None}),
    ("logspace", (0, 3.5), {"axis": ()}),
    # an axis of a 0-d array (repro 121:434, 124:1506, 120:1173)
    ("trim_zeros", (onp.array(8, dtype="int16"),), {"axis": 0}),
    ("lexsort", (onp.array([5.5, -1.0, -1.0]),), {"axis": -2}),
    ("gradient", (onp.array(2.0),), {"axis": -1}),
    # arange of a multi-element array (repro 120:2404)
    ("arange", (_a(2, 3),), {}),
    ("arange", (0, _a(2)), {}),
    # kind= (repro 122:761, 123:1497, 120:853)
    ("partition", (onp.array([6, -1, -5]), 1), {"kind": "mergesort"}),
    ("partition", (onp.array([6, -1, -5]), 1), {"kind": None}),
    ("argpartition", (onp.array([6, -1, -5]), 1), {"kind": "mergesort"}),
    ("argpartition", (_a(2, 2), 3), {"kind": None}),
    ("isin", (_a(3), _a(2)), {"kind": "quicksort"}),
    ("isin", (_a(3), _a(2)), {"kind": "table"}),
    # complex data where NumPy takes real numbers only (repro 120:1688, 124:299, 123:740)
    ("digitize", (onp.array([1 + 1j, 2]), onp.array([0.0, 1.5, 3.0])), {}),
    ("interp", (onp.array(-2 + 0.4j), onp.array([-5.0, -1.0, 1.0]),
                onp.array([1.0, 0.0, 3.0])), {}),
    ("percentile", (onp.array([1 + 1j, 2]), 50), {}),
    ("quantile", (onp.array([1 + 1j, 2]), 0.5), {}),
    ("nanpercentile", (onp.array([], dtype="complex128"), onp.array([])), {}),
    ("nanquantile", (onp.array([1 + 1j, 2]), 0.5), {"method": "weibull"}),
    # dtype= (repro 122:908, 120:1494, 120:2649)
    ("nanmean", (onp.array([1.5, 2.0]),), {"dtype": "uint32"}),
    ("nanvar", (onp.array([1.5, 2.0]),), {"dtype": "int32"}),
    ("nanstd", (onp.array([1.5, 2.0]),), {"dtype": "int32"}),
    ("cov", (_a(2, 3),), {"dtype": "uint32"}),
    ("corrcoef", (_a(2, 3),), {"dtype": "int16"}),
    ("matvec", (_a(2, 3, dtype="float64"), _a(3)), {"dtype": "uint16"}),
    ("matvec", (_a(3, dtype="float64"), _a(3)), {"dtype": "bool"}),
    ("vecmat", (_a(5, dtype="int8"), 9), {"dtype": "uint8"}),
    ("vecdot", (onp.array(3, dtype="uint64"), _a(3, 1, dtype="uint8")), {"dtype": "bool"}),
    ("vecdot", (_a(2, dtype="complex64"), _a(2, dtype="complex64")), {"dtype": "float16"}),
    # values written into an array (repro 120:272, 125:2134, 125:122)
    ("fill_diagonal", (_a(3, 2, dtype="float16"), -3 + 1.5j), {}),
    ("fill_diagonal", (_a(2, 2, dtype="uint32"), -1), {}),
    ("put_along_axis", (onp.array([], dtype="uint32"), onp.array([-1, 3]), -2.0, 0), {}),
    # choose's indices cast safely to int64 (repro 120:1500, 120:2464)
    ("choose", (onp.array([0, 1], dtype="uint64"), [_a(2), _a(2)]), {}),
    # unpackbits checks the dtype first (repro 124:646)
    ("unpackbits", (onp.array([], dtype="int32"),), {"axis": 1}),
    # histogram2d range= that is not a pair of pairs (repro 120:300)
    ("histogram2d", (onp.array([1.0]), onp.array([8.0])), {"range": (0, 5)}),
    ("histogram", (onp.array([1.0]),), {"range": 0}),
    ("histogram", (onp.array([1.0]),), {"range": (0, 1, 2)}),
    # insert's obj: not 1-d is a ValueError, one float index a TypeError (repro 120:1128)
    ("insert", (_a(4), onp.array([[1.0]]), 1.0), {}),
    ("insert", (_a(4), -0.4, 1.0), {}),
    ("insert", (_a(4), onp.array([1.5, 2.5]), 1.0), {}),
]


def _same_class(name, args, kwargs):
    """Calls NumPy and ndx; both must raise, with a common builtin base class."""
    np_args = [a.copy() if isinstance(a, onp.ndarray) else a for a in args]
    with pytest.raises(EXC_BASES) as ref:
        _fn(onp, name)(*np_args, **kwargs)
    with pytest.raises(EXC_BASES) as got:
        _fn(np, name)(*_nd(list(args)), **kwargs)
    assert _bases(ref.value) & _bases(got.value), (ref.value, got.value)
    return got


@pytest.mark.parametrize("name,args,kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_same_exception_class_as_numpy(name, args, kwargs):
    got = _same_class(name, args, kwargs)
    assert f"[{name}]" in str(got.value) or name in ("fill_diagonal", "put_along_axis",
                                                        "histogram2d"), \
        got.value


def test_single_axis_still_takes_integers():
    a = onp.arange(6.0).reshape(2, 3)
    for name, kw in (("diff", {"axis": onp.int64(0)}), ("unwrap", {"axis": -1}),
                     ("trapezoid", {"axis": 0})):
        onp.testing.assert_allclose(_fn(np, name)(np.array(a), **kw).asnumpy(),
                                    _fn(onp, name)(a, **kw), rtol=1e-6)
    assert len(np.unstack(np.array(a), axis=(1,))) == 3  # NumPy's moveaxis takes (1,)
    assert np.linspace(0, 1, 3, axis=-1).shape == (3,)
    assert np.lexsort(np.array([1.0, 2.0]), axis=0).shape == ()
    assert np.isin(np.array([1, 2]), np.array([2]), kind="table").tolist() == [False, True]


@pytest.mark.parametrize("name,args,kwargs", [
    # put_along_axis checks in NumPy's order: axis, indices' ndim, values, bounds
    ("put_along_axis", (onp.array([7, 9], dtype="uint32"), onp.array([1]), 2.5 - 4j, 1), {}),
    ("put_along_axis", (onp.zeros((2, 2), dtype="uint64"), onp.array([9]), -5, 0), {}),
    ("put_along_axis", (onp.array([], dtype="int16"), onp.array([-2, -1]),
                        onp.array([], dtype="uint8"), None), {}),
    # cov / corrcoef: m's dimensions before dtype=
    ("cov", (onp.zeros((2, 2, 2)),), {"dtype": "uint64"}),
    ("corrcoef", (onp.zeros((2, 2, 2)),), {"dtype": "uint16"}),
    ("cov", (onp.zeros(3), onp.array(5)), {"dtype": "int64"}),
    # concatenate / stack: the shapes before the dtype= cast (ValueError, not TypeError)
    ("concatenate", ([_a(2, 2), _a(3, 3)],), {"dtype": "int64"}),
    ("stack", ([_a(2, 2), _a(3, 3)],), {"dtype": "int64"}),
    # a ufunc's loop before broadcasting (TypeError, not ValueError)
    ("bitwise_and", (_a(3), _a(4)), {}),
    ("left_shift", (_a(3), _a(2, 4)), {}),
    # initial= must fit an integer result (OverflowError; NaN is a ValueError)
    ("max", (_a(3, dtype="uint8"),), {"initial": -1}),
    ("min", (_a(3, dtype="int8"),), {"initial": 300}),
    ("sum", (_a(3, dtype="uint64"),), {"initial": -1}),
    ("max", (_a(3, dtype="int16"),), {"initial": float("nan")}),
    # outputs given positionally: one per ufunc output, more is a TypeError
    ("add", (_a(2), 1.0, _a(2), _a(2)), {}),
    ("negative", (_a(2), _a(2), _a(2)), {}),
    ("matmul", (_a(2, 2), _a(2, 2), _a(2, 2), _a(2, 2)), {}),
])
def test_checks_come_in_numpys_order(name, args, kwargs):
    _same_class(name, args, kwargs)


def test_initial_within_range_still_works():
    big, small = int(onp.iinfo("int64").max), int(onp.iinfo("int64").min)
    for name, dtype, initial in (("max", "uint8", 255), ("min", "int8", -128),
                                 ("sum", "int8", 1000), ("max", "int8", 127.9),
                                 # int64's ends (the largest rounds to 2**63 as a double)
                                 ("min", "int64", big), ("max", "int64", big),
                                 ("max", "int64", small), ("min", "int64", small),
                                 ("sum", "int64", big)):
        a = _a(3, dtype=dtype)
        ref = _fn(onp, name)(a, initial=initial)
        got = _fn(np, name)(np.array(a), initial=initial)
        assert got.dtype == ref.dtype and got.item() == ref.item(), (name, got, ref)


def test_two_positional_outputs_of_divmod_and_out_of_dropout():
    q, r = np.zeros(3), np.zeros(3)
    res = np.divmod(np.array([7.0, -7.0, 5.5]), 2.0, q, r)
    assert res[0] is q and res[1] is r
    onp.testing.assert_array_equal(q.asnumpy(), [3.0, -4.0, 2.0])
    onp.testing.assert_array_equal(r.asnumpy(), [1.0, 1.0, 1.5])
    # npx.dropout has a hidden mask output: out= names the visible result only
    import ndx
    from ndx import autograd
    o = np.zeros((2, 3))
    y = ndx.npx.dropout(np.ones((2, 3)), p=0.5, out=o)
    assert y is o and o.asnumpy().tolist() == [[1.0] * 3] * 2  # not training: identity
    o2 = np.zeros((4, 8))
    with autograd.train_mode():
        ndx.npx.dropout(np.ones((4, 8)), p=0.5, out=o2)
    kept = o2.asnumpy()
    assert set(onp.unique(kept)) <= {0.0, 2.0} and (kept == 2.0).any()


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_interp_with_a_period_takes_complex_x_as_numpy():
    args = (onp.array([4 + 0j]), onp.array([-1.0, 0.0, 2.0, 3.0]),
            onp.array([-5.6, -2.5, -3.0, -4.0]))
    ref = onp.interp(*args, period=4)
    got = np.interp(*[np.array(a) for a in args], period=4)
    onp.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-6)
