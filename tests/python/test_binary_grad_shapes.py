"""Gradients of binary ops where sharing or dtypes could go wrong -- an array used as both
operands, an operand used twice, mixed dtypes of one shape (the gradient must take the
operand's dtype), a float32 gradient reaching a float16 product, a broadcast operand beside an
unbroadcast one, and a second-order gradient -- against hand derivatives."""
import numpy as onp

from ndx import autograd, np, npx

R = onp.random.default_rng(9)


def _grad(fn, *values):
    xs = [np.array(v) for v in values]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = fn(*xs)
    y.backward()
    return [x.grad.asnumpy() for x in xs]


def test_one_array_as_both_operands():
    a = R.standard_normal((4, 5))
    (g,) = _grad(lambda x: (x + x).sum() + (x * x).sum() - (x - x).sum(), a)
    onp.testing.assert_allclose(g, 2 + 2 * a, rtol=1e-6)


def test_an_operand_used_by_several_ops():
    a, b = R.standard_normal((3, 3)), R.standard_normal((3, 3))
    ga, gb = _grad(lambda x, y: ((x + y) * (x - y) * y).sum(), a, b)
    # d/dx (x^2 - y^2) y = 2 x y; d/dy = x^2 - 3 y^2
    onp.testing.assert_allclose(ga, 2 * a * b, rtol=1e-6)
    onp.testing.assert_allclose(gb, a * a - 3 * b * b, rtol=1e-6)


def test_mixed_dtypes_of_one_shape_get_their_own_dtype():
    a = R.standard_normal((2, 3)).astype(onp.float32)
    b = R.standard_normal((2, 3))  # float64
    ga, gb = _grad(lambda x, y: (x * y).sum(), a, b)
    assert ga.dtype == onp.float32 and gb.dtype == onp.float64
    onp.testing.assert_allclose(ga, b, rtol=1e-6)
    onp.testing.assert_allclose(gb, a, rtol=1e-6)


def test_a_broadcast_operand_beside_an_unbroadcast_one():
    a, b = R.standard_normal((4, 3)), R.standard_normal((3,))
    ga, gb = _grad(lambda x, y: (x * y + x / 2.0).sum(), a, b)
    onp.testing.assert_allclose(ga, onp.broadcast_to(b, (4, 3)) + 0.5, rtol=1e-6)
    onp.testing.assert_allclose(gb, a.sum(axis=0), rtol=1e-6)


def test_second_order_through_a_same_shape_product():
    a = np.array(R.standard_normal((3,)))
    a.attach_grad()
    with autograd.record():
        y = (a * a * a).sum()
        (g,) = autograd.grad(y, [a], create_graph=True)  # 3 a^2
        z = (g * a).sum()  # 3 a^3
    z.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), 9 * a.asnumpy() ** 2, rtol=1e-6)


def test_a_wider_gradient_reaching_a_float16_product_is_cast_back():
    # the product's operands are float16; the loss sums in float32, so float32 gradients
    # reach the product and must come out float16 for the softmax before it
    x = np.array([[1.0, 2.0, 3.0]], dtype="float16")
    x.attach_grad()
    with autograd.record():
        s = npx.softmax(x)
        z = np.sum(s * s, dtype="float32")
    z.backward()
    sv = onp.exp([1.0, 2.0, 3.0]) / onp.exp([1.0, 2.0, 3.0]).sum()
    g = 2 * sv  # d z / d s
    want = sv * (g - (g * sv).sum())  # the softmax's Jacobian applied to it
    assert x.grad.dtype == onp.float16
    onp.testing.assert_allclose(x.grad.asnumpy()[0], want, atol=2e-3)


def test_reductions_with_a_wider_dtype_give_the_data_dtype_gradient():
    # sum / mean / prod(x, dtype=float32) of float16 data: the gradient reaching x is float16
    # (the data's dtype), so a softmax before the reduction can take it
    values = onp.array([[0.5, 2.0, -1.5], [1.0, 0.25, 3.0]])
    cases = {"sum": (lambda a: np.sum(a, axis=1, dtype="float32"), onp.ones_like(values)),
             "mean": (lambda a: np.mean(a, dtype="float32"), onp.full_like(values, 1 / 6)),
             "prod": (lambda a: np.prod(a, axis=0, dtype="float32"),
                      values[::-1])}  # (d(a0 * a1)/d a0 = a1)
    for name, (reduce, want) in cases.items():
        x = np.array(values, dtype="float16")
        x.attach_grad()
        with autograd.record():
            y = reduce(x)
        assert y.dtype == onp.float32, name
        y.backward()
        assert x.grad.dtype == onp.float16, name
        onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=2e-3, err_msg=name)
        s = np.array(values, dtype="float16")
        s.attach_grad()
        with autograd.record():
            z = reduce(npx.softmax(s)).sum()
        z.backward()
        assert s.grad.dtype == onp.float16 and onp.isfinite(s.grad.asnumpy()).all(), name
