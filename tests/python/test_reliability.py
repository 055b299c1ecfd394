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
