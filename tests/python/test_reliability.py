"""Regression tests for the reliability issue: every reproducer that once crashed,
hung, or raised an untyped error now raises the exception NumPy (or MXNet) would."""

import pytest

import ndx
from ndx import nd, np

HUGE_SHAPES = [
    ("ones", lambda: np.ones((2**31, 2**31))),
    ("eye", lambda: np.eye(2**31)),
    ("full", lambda: np.full((3, 2**61), 1)),
    ("linspace", lambda: np.linspace(0, 1, 2**62)),
    ("zeros", lambda: np.zeros((2**32, 2**32))),
    ("zeros_max", lambda: np.zeros((2**63 - 1,))),
    ("empty_max", lambda: np.empty((2**63 - 1,))),
    ("ones_max", lambda: np.ones((2**63 - 1,))),
    ("broadcast_to", lambda: np.broadcast_to(np.ones((1,)), (2**32, 2**32))),
    ("reshape_empty", lambda: np.ones((0,)).reshape((2**62, 2**62, 0))),
]


@pytest.mark.parametrize("name,call", HUGE_SHAPES, ids=[n for n, _ in HUGE_SHAPES])
def test_sizes_that_overflow_raise_value_error(name, call):
    # NumPy: "array is too big; `arr.size * arr.dtype.itemsize` is larger than ..."
    with pytest.raises(ValueError, match="array is too big"):
        call()


@pytest.mark.parametrize("call", [lambda: np.arange(1e12), lambda: np.zeros((10**12,))])
def test_allocation_failure_is_memory_error(call):
    # 4 TB: representable, but no allocator can serve it.
    with pytest.raises(MemoryError):
        call()


def test_memory_error_is_also_an_ndx_error():
    with pytest.raises(ndx.NDXError):
        np.zeros((10**12,))


def test_arrays_still_allocate_after_a_failed_allocation():
    with pytest.raises(MemoryError):
        np.zeros((10**12,))
    assert float(np.ones((1000,)).sum()) == 1000.0


@pytest.mark.parametrize("op", ["_backward_power", "_backward_mod", "_backward_minimum",
                                "_backward_maximum"])
@pytest.mark.parametrize("shapes", [((1,), (0,), (1,)), ((8, 8), (2,), (1,)),
                                    ((3,), (2, 3), (3,))])
def test_binary_backward_rejects_an_ograd_of_the_wrong_shape(op, shapes):
    fn = getattr(nd, op)
    g, a, b = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError, match="ograd"):
        fn(g, a, b)


def test_binary_backward_accepts_the_broadcast_shape():
    # d max(a, b): the gradient goes to the larger input; b's is summed over the
    # broadcast axis (hand computation, no ties).
    a = np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    b = np.array([2.0, 3.0, 4.0])
    ga, gb = nd._backward_maximum(np.ones((2, 3)), a, b)
    assert ga.shape == (2, 3) and gb.shape == (3,)
    assert ga.asnumpy().tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
    assert gb.asnumpy().tolist() == [1.0, 1.0, 1.0]


def test_collapse_sum_like_rejects_a_target_that_does_not_broadcast():
    with pytest.raises(ValueError, match="collapse_sum_like"):
        nd._npi_collapse_sum_like(np.ones((1,)), np.ones((0,)))


# ---- Python integers of any size: no pending error, NumPy's slice semantics ----

def test_item_with_a_huge_index_is_an_index_error():
    a = np.arange(6.0)
    for i in (2**63, 2**64, -(2**63) - 1, 2**100):
        with pytest.raises(IndexError):
            a.item(i)
    assert a.item(-1) == 5.0


@pytest.mark.parametrize("key", [2**63, 2**64, -(2**70)])
def test_integer_index_beyond_int64_is_an_index_error(key):
    with pytest.raises(IndexError):
        np.arange(3.0)[key]


def test_slices_with_huge_bounds_and_steps_match_numpy():
    onp = pytest.importorskip("numpy")
    x = onp.arange(10.0)
    a = np.array(x)
    for key in [slice(5, 0, -(2**63)), slice(5, 0, -(2**70)), slice(0, 2**70),
                slice(-(2**70), 2**70, 3), slice(2**70, None, -1), slice(None, None, 2**64),
                slice(-(2**64), 4), slice(1, 8, 2**62)]:
        assert a[key].asnumpy().tolist() == x[key].tolist(), key
    z = onp.zeros((3, 3))
    assert np.array(z)[0:2**70, [0, 1]].shape == z[0:2**70, [0, 1]].shape == (3, 2)
    with pytest.raises(ValueError):
        a[::0]


# ---- semantics ----

def test_a_length_one_tuple_is_an_array_not_a_scalar():
    assert np.add((1,), (2,)).shape == (1,)
    assert np.add((1,), (2,)).asnumpy().tolist() == [3]
    assert np.multiply(np.ones((2, 1)), (3,)).shape == (2, 1)
    assert np.array((1, 2)).astype("float32").tolist() == [1.0, 2.0]


def test_matmul_in_place_writes_through_views():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    view = a[0]
    a @= np.array([[0.0, 1.0], [1.0, 0.0]])
    assert a.asnumpy().tolist() == [[2.0, 1.0], [4.0, 3.0]]
    assert view.asnumpy().tolist() == [2.0, 1.0]  # same buffer
    i = np.array([[1, 2], [3, 4]])
    with pytest.raises(TypeError):  # NumPy: float64 result cannot be cast to int64 in place
        i @= np.array([[0.5, 0.0], [0.0, 0.5]])
    assert i.asnumpy().tolist() == [[1, 2], [3, 4]]
    with pytest.raises(ValueError):  # the result's shape (2, 3) is not a's
        a @= np.ones((2, 3))


def test_a_gpu_device_without_a_gpu_is_an_error_not_a_cpu_array():
    # gpu(0) on a machine with no GPU; a missing index on any machine
    missing = "gpu(0)" if ndx.num_gpus() == 0 else f"gpu({ndx.num_gpus()})"
    for make in (lambda: np.array([1.0], device=missing),
                 lambda: np.asarray([1.0], device=missing),
                 lambda: np.zeros((2,), device=missing)):
        with pytest.raises((NotImplementedError, ValueError), match="gpu"):
            make()
    assert np.array([1.0], device="cpu(0)").asnumpy().tolist() == [1.0]


def test_split_into_too_many_sections_is_a_value_error():
    with pytest.raises(ValueError):  # NumPy: "array split does not result in an equal division"
        np.split(np.ones((4,)), 2**31)
    with pytest.raises(ValueError):
        np.split(np.ones((4,)), 2**62)


def test_backward_custom_called_directly_is_a_value_error():
    with pytest.raises(ValueError, match="op_type"):
        nd._backward_Custom()


# ---- deep graphs: freed and run without one stack frame per node (it overflowed near 90k) ----

DEPTH = 200_000


def test_a_deep_autograd_chain_records_differentiates_and_frees():
    x = np.array(0.5, dtype="float64")
    x.attach_grad()
    with ndx.autograd.record():
        y = x
        for _ in range(DEPTH):
            y = -y
    y.backward()
    assert x.grad.item() == 1.0
    del y  # the tape goes here


def test_a_deep_symbol_chain_runs_saves_loads_and_frees(tmp_path):
    from ndx import sym
    y = sym.var("x")
    for _ in range(DEPTH):
        y = -y
    path = str(tmp_path / "deep.json")
    y.save(path)
    back = sym.load(path)
    del y
    assert back.eval(x=np.array([3.0]))[0].asnumpy().tolist() == [3.0]
    del back


def test_a_deep_hybridized_block_runs_and_frees():
    from ndx import gluon

    class Deep(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            for _ in range(DEPTH):
                x = -x
            return x

    net = Deep()
    net.hybridize()
    assert net(np.array([2.0])).asnumpy().tolist() == [2.0]
    assert net(np.array([5.0])).asnumpy().tolist() == [5.0]
    del net


# ---- strings without UTF-8 (a lone surrogate) are errors, never a null pointer ----

@pytest.mark.parametrize("call", [
    lambda: ndx._core._op_handle("\ud800"),
    lambda: ndx._core._invoke("\ud800", [], {}),
    lambda: ndx.sym.var("\ud800"),
    lambda: nd.Custom(np.ones(2), op_type="\ud800"),
    lambda: ndx.npx.activation(np.ones(2), act_type="\ud800"),
    lambda: np.zeros(2, dtype="\ud800"),
    lambda: ndx._core._get_api("\ud800"),
    # found by the fuzzer (seed 6): these read a null string and crashed
    lambda: nd._npi_astype(np.ones(2), dtype="\ud800"),
    lambda: np.sum(np.ones(2), dtype="\ud800"),
    lambda: np.empty((0,), device="\ud800"),
    lambda: nd._npx_dropout(np.ones(2), mode="\ud800"),
    lambda: np.max(np.ones(2), initial="\ud800"),
    lambda: nd._np_add(np.ones(2), np.ones(2), **{"\ud800": 1}),
])
def test_a_lone_surrogate_string_is_a_value_or_type_error(call):
    with pytest.raises((ValueError, TypeError)):  # UnicodeEncodeError is a ValueError
        call()


# ---- found by the fuzzer under UBSan: products past int64 in reshape and a cache key ----

def test_reshape_to_dims_whose_product_overflows_is_a_value_error():
    onp = pytest.importorskip("numpy")
    with pytest.raises(ValueError):
        onp.reshape(onp.ones(2), (5, 2**63 - 1))  # NumPy's behaviour
    with pytest.raises(ValueError):
        np.reshape(np.ones(2), (5, 2**63 - 1))
    # 2**62 * 4 wraps to 0 in int64: a wrapped product must not match a zero-size array
    with pytest.raises(ValueError):
        np.reshape(np.ones(0), (2**62, 4))
    with pytest.raises(ValueError):
        nd._np_reshape(np.ones(0), newshape=(2**62, 4, -1))


@pytest.mark.parametrize("repeats", [2**62, [2**62] * 4, [2**40, 1, 0, 0]])
def test_repeat_past_the_memory_is_a_value_error(repeats):
    """Found by the fuzzer: NumPy 2.4's own repeat, which np.repeat used for its index,
    crashes (SIGSEGV) when the result's length passes int64."""
    with pytest.raises(ValueError, match="repeat"):
        np.repeat(np.ones(4, dtype="int32"), repeats)


def test_concatenate_with_a_huge_axis_is_an_axis_error():
    with pytest.raises(ValueError):  # AxisError is a ValueError
        np.concatenate([np.ones(3)], axis=2**63 - 1)
