"""Gradients of gradients (autograd.grad with create_graph=True) through the backward ops of
power, maximum / minimum, mod, matmul, dot and fully_connected, against central differences of
the first gradient computed in float64: a gradient penalty through a Dense layer, x**2 and
np.power need them."""
import numpy as onp
import pytest

from ndx import autograd, np, npx


def _first_grads(f, arrays):
    """The first gradients of sum(f(*arrays) * head), as NumPy arrays."""
    xs = [np.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = f(*xs)
        loss = (y * np.array(_head(y.shape))).sum()
    loss.backward()
    return [x.grad.asnumpy() for x in xs]


def _head(shape):
    return onp.random.default_rng(11).uniform(0.5, 1.5, size=shape)


def _check_second_order(f, arrays, eps=1e-6, rtol=1e-6, atol=1e-8):
    """d/dx_k sum_j <w_j, grad_j(x)> from autograd (create_graph) equals its central
    difference, for fixed random weights w_j."""
    arrays = [onp.asarray(a, dtype=onp.float64) for a in arrays]
    rng = onp.random.default_rng(5)
    weights = [rng.uniform(-1, 1, size=a.shape) for a in arrays]

    def functional(vals):
        return sum(float((w * g).sum()) for w, g in zip(weights, _first_grads(f, vals)))

    xs = [np.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = f(*xs)
        loss = (y * np.array(_head(y.shape))).sum()
        grads = autograd.grad(loss, xs, create_graph=True)
        total = sum((g * np.array(w)).sum() for g, w in zip(grads, weights))
    total.backward()
    for k, a in enumerate(arrays):
        numeric = onp.zeros_like(a)
        for idx in onp.ndindex(a.shape):
            plus = [v.copy() for v in arrays]
            minus = [v.copy() for v in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            numeric[idx] = (functional(plus) - functional(minus)) / (2 * eps)
        onp.testing.assert_allclose(xs[k].grad.asnumpy(), numeric, rtol=rtol, atol=atol,
                                    err_msg=f"input {k}")


RNG = onp.random.default_rng(0)


def _pos(*shape):
    return RNG.uniform(0.5, 2.0, size=shape)


def _any(*shape):
    return RNG.uniform(-1.5, 1.5, size=shape)


@pytest.mark.parametrize("name,f,arrays", [
    ("square", lambda x: x ** 2, [_any(3)]),
    ("cube", lambda x: x ** 3, [_any(2, 3)]),
    ("sqrt-power", lambda x: x ** 0.5, [_pos(4)]),
    ("power-arrays", lambda a, b: np.power(a, b), [_pos(2, 3), _any(2, 3)]),
    ("power-broadcast", lambda a, b: np.power(a, b), [_pos(2, 3), _any(3)]),
    ("exp2", lambda x: 2.0 ** x, [_any(3)]),
    ("maximum", lambda a, b: np.maximum(a, b) * a * b, [_any(2, 3), _any(3)]),
    ("minimum", lambda a, b: np.minimum(a, b) * a * b, [_any(2, 3), _any(2, 3)]),
    ("mod", lambda a, b: np.mod(a, b) * a * b, [_pos(4) * 3, _pos(4)]),
    ("matmul", lambda a, b: np.matmul(a, b) ** 2, [_any(2, 3), _any(3, 4)]),
    ("matmul-batched", lambda a, b: np.matmul(a, b) ** 2, [_any(2, 2, 3), _any(3, 2)]),
    ("matmul-vector", lambda a, b: np.matmul(a, b) ** 2, [_any(3), _any(3, 2)]),
    ("dot", lambda a, b: np.dot(a, b) ** 2, [_any(2, 3), _any(3, 2)]),
    ("dot-nd", lambda a, b: np.dot(a, b) ** 2, [_any(2, 2, 3), _any(3)]),
    ("fully_connected", lambda x, w, b: np.tanh(npx.fully_connected(x, w, b, num_hidden=2)),
     [_any(3, 4), _any(2, 4), _any(2)]),
    ("fully_connected-nobias-noflatten",
     lambda x, w: np.tanh(npx.fully_connected(x, w, num_hidden=2, no_bias=True, flatten=False)),
     [_any(2, 3, 4), _any(2, 4)]),
    ("fully_connected-flatten",
     lambda x, w, b: npx.fully_connected(x, w, b, num_hidden=2) ** 2,
     [_any(2, 2, 3), _any(2, 6), _any(2)]),
])
def test_second_order_against_differences_of_the_first(name, f, arrays):
    _check_second_order(f, arrays)


def test_power_first_order_with_exponent_zero_at_zero():
    """d/da a**0 is 0 everywhere, at a == 0 too (0 * 0**-1 gave NaN), as PyTorch's."""
    a = np.array([0.0, 2.0])
    a.attach_grad()
    with autograd.record():
        y = np.power(a, np.array([0.0, 0.0]))
    y.backward()
    assert a.grad.tolist() == [0.0, 0.0]
