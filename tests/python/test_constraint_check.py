"""npx.constraint_check (MXNet's): a 0-d true when the bool condition holds everywhere, the
caller's ValueError otherwise, imperatively and inside a hybridized block."""
import numpy as onp
import pytest

from ndx import autograd, gluon, np, npx


def test_true_conditions_give_a_zero_d_true():
    for cond in (np.array(True), np.array([True, True]), np.ones((2, 3), dtype=bool),
                 np.zeros((0, 4), dtype=bool)):  # all() of nothing is true, as NumPy's
        out = npx.constraint_check(cond)
        assert out.shape == () and out.dtype == onp.bool_ and bool(out)


def test_a_false_element_raises_the_callers_message():
    with pytest.raises(ValueError, match="^scale must be positive$"):
        npx.constraint_check(np.array([0.5, -1.0, 2.0]) > 0, msg="scale must be positive")
    with pytest.raises(ValueError, match="Constraint violated"):
        npx.constraint_check(np.array([[True], [False]]))
    with pytest.raises(TypeError, match="bool"):
        npx.constraint_check(np.array([1, 2]))


def test_inside_a_hybridized_block_and_under_autograd():
    class Scaled(gluon.HybridBlock):
        def forward(self, x, scale):
            npx.constraint_check(scale > 0, msg="scale must be positive")
            return x * scale

    block = Scaled()
    block.hybridize()
    x = np.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = block(x, np.array([3.0, 3.0]))
    y.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 3.0])
    with pytest.raises(ValueError, match="scale must be positive"):
        block(x, np.array([3.0, -1.0]))
