"""ndx.test_utils, the helpers custom-op authors use, checked on cases with known answers."""
import numpy as onp
import pytest

from ndx import np, test_utils


def test_assert_almost_equal_and_same():
    test_utils.assert_almost_equal(np.array([1.0, 2.0]), onp.array([1.0, 2.0 + 1e-7]))
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(np.array([1.0, 2.0]), onp.array([1.0, 2.1]))
    with pytest.raises(AssertionError, match="shape"):
        test_utils.assert_almost_equal(np.zeros((2,)), onp.zeros((3,)))
    assert test_utils.same(np.arange(3), onp.arange(3))
    assert not test_utils.same(np.arange(3), onp.arange(1, 4))


def test_random_helpers():
    shape = test_utils.rand_shape_nd(3, dim=4)
    assert len(shape) == 3 and all(1 <= d <= 4 for d in shape)
    x = test_utils.rand_ndarray((5, 2), dtype="float64", low=2.0, high=3.0)
    assert x.shape == (5, 2) and x.dtype == onp.float64
    v = x.asnumpy()
    assert ((v >= 2.0) & (v < 3.0)).all()


def test_collapse_sum_like_matches_hand_computation():
    a = onp.arange(24, dtype=onp.float64).reshape(2, 3, 4)
    got = test_utils.collapse_sum_like(a, (3, 1))
    onp.testing.assert_array_equal(got, a.sum(axis=(0, 2)).reshape(3, 1))
    onp.testing.assert_array_equal(test_utils.collapse_sum_like(a, (2, 3, 4)), a)


def test_with_seed_reproduces_and_use_np_is_transparent():
    @test_utils.with_seed(123)
    def draw():
        return onp.random.uniform(size=3)

    onp.testing.assert_array_equal(draw(), draw())
    assert test_utils.use_np(draw) is draw


def test_check_numeric_gradient_and_op_gradient():
    test_utils.check_numeric_gradient("_np_multiply",
                                      [onp.array([1.0, 2.0]), onp.array([3.0, -1.0])])
    test_utils.check_numeric_gradient("_np_sum", [onp.arange(6.0).reshape(2, 3)], {"axis": 1})
    # op_gradient evaluates the registered FGradient: d(x^2)/dx = 2x, and sign's is zero.
    grads = test_utils.op_gradient("_np_square", [np.array([3.0])], [np.array([1.0])])
    test_utils.assert_almost_equal(grads[0], onp.array([6.0]))
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(
            test_utils.op_gradient("_np_sign", [np.array([3.0])], [np.array([1.0])])[0],
            onp.array([6.0]))
