"""Gluon activation layers, GroupNorm / InstanceNorm, Lambda, pixel shuffle and reflection
padding against NumPy formulas (and MXNet's documented outputs), their gradients against
central differences, hybridized against imperative; and the Block utilities (summary, hooks,
cast, share_parameters, collect_params' regex selection, apply, zero_grad)."""
import math
import re
import warnings

import numpy as onp
import pytest
import scipy.special as sps

import ndx
from ndx import autograd, gluon, np, npx
from ndx.gluon import nn
from ndx.test_utils import check_numeric_gradient
from strict_checks import assert_almost_equal

SELU_L, SELU_A = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717


def _rng(seed=0):
    return onp.random.default_rng(seed)


def _away_from_zero(rng, shape, lo=0.2, hi=2.0):
    return rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _numeric_grad(f, arrays, i, eps=1e-6):
    """d sum(f(*arrays) * proj) / d arrays[i] by central differences in float64 (f takes and
    returns NumPy arrays); returns (gradient, proj)."""
    base = f(*arrays)
    proj = _rng(99).uniform(0.1, 1.1, size=base.shape)
    grad = onp.zeros_like(arrays[i])
    flat = arrays[i].reshape(-1)
    for j in range(flat.size):
        old = flat[j]
        flat[j] = old + eps
        up = (f(*arrays) * proj).sum()
        flat[j] = old - eps
        down = (f(*arrays) * proj).sum()
        flat[j] = old
        grad.reshape(-1)[j] = (up - down) / (2 * eps)
    return grad, proj


def _hybrid_matches(block, *inputs):
    """The block's outputs imperative and hybridized (same parameters) are equal."""
    want = block(*inputs)
    block.hybridize()
    got = block(*inputs)
    got2 = block(*inputs)  # the replayed graph
    block.hybridize(False)
    for g in (got, got2):
        assert g.shape == want.shape and g.dtype == want.dtype
        assert_almost_equal(g.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-7)
    return want


# ------------------------------------------------------------------ activation layers
def _gelu_erf(x):
    return 0.5 * x * (1 + onp.vectorize(math.erf)(x / math.sqrt(2)))


def _gelu_tanh(x):
    return 0.5 * x * (1 + onp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _sigmoid(x):
    return 1 / (1 + onp.exp(-x))


ACTIVATIONS = [
    ("LeakyReLU(0.1)", lambda: nn.LeakyReLU(0.1), lambda x: onp.where(x >= 0, x, 0.1 * x)),
    ("LeakyReLU(0)", lambda: nn.LeakyReLU(0), lambda x: onp.maximum(x, 0)),
    ("ELU()", lambda: nn.ELU(), lambda x: onp.where(x > 0, x, onp.exp(x) - 1)),
    ("ELU(0.7)", lambda: nn.ELU(0.7), lambda x: onp.where(x > 0, x, 0.7 * (onp.exp(x) - 1))),
    ("SELU", lambda: nn.SELU(),
     lambda x: SELU_L * onp.where(x > 0, x, SELU_A * (onp.exp(x) - 1))),
    ("GELU", lambda: nn.GELU(), _gelu_erf),
    ("GELU(erf)", lambda: nn.GELU(approximation="erf"), lambda x: x * sps.ndtr(x)),
    ("GELU(tanh)", lambda: nn.GELU(approximation="tanh"), _gelu_tanh),
    ("Swish", lambda: nn.Swish(), lambda x: x * _sigmoid(x)),
    ("Swish(1.5)", lambda: nn.Swish(beta=1.5), lambda x: x * _sigmoid(1.5 * x)),
    ("SiLU", lambda: nn.SiLU(), lambda x: x * _sigmoid(x)),
]


@pytest.mark.parametrize("make,ref", [a[1:] for a in ACTIVATIONS], ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_forward_and_hybridize(make, ref, dtype):
    x = _rng().uniform(-4, 4, size=(3, 4, 5)).astype(dtype)
    layer = make()
    out = _hybrid_matches(layer, np.array(x))
    assert out.dtype == onp.dtype(dtype)
    tol = (1e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-13)
    assert_almost_equal(out.asnumpy(), ref(x.astype(onp.float64)).astype(dtype), *tol)


@pytest.mark.parametrize("make,ref", [a[1:] for a in ACTIVATIONS], ids=[a[0] for a in ACTIVATIONS])
def test_activation_gradient(make, ref):
    x = _away_from_zero(_rng(1), (2, 3))
    layer = make()
    check_numeric_gradient(lambda v: layer(v), [x], dtype=onp.float64, rtol=1e-5, atol=1e-7)
    # and the gradient against the NumPy formula's own central differences
    want, proj = _numeric_grad(ref, [x.copy()], 0)
    xa = np.array(x)
    xa.attach_grad()
    with autograd.record():
        y = layer(xa)
    y.backward(np.array(proj))
    assert_almost_equal(xa.grad.asnumpy(), want, rtol=1e-6, atol=1e-8)


def test_activation_special_values():
    x = onp.array([onp.inf, -onp.inf, onp.nan, 0.0, -0.0, 30.0, -30.0], dtype=onp.float32)
    out = nn.LeakyReLU(0.2)(np.array(x)).asnumpy()
    onp.testing.assert_array_equal(out[[0, 1, 3, 5, 6]], [onp.inf, -onp.inf, 0, 30, -6])
    assert onp.isnan(out[2])
    out = nn.ELU(2.0)(np.array(x)).asnumpy()
    onp.testing.assert_allclose(out[[0, 1, 3, 5, 6]], [onp.inf, -2, 0, 30, 2 * math.expm1(-30)])
    out = nn.SELU()(np.array(x)).asnumpy()
    onp.testing.assert_allclose(out[[1, 5]], [-SELU_L * SELU_A, SELU_L * 30], rtol=1e-6)


def test_activation_bad_arguments():
    with pytest.raises(ValueError, match="LeakyReLU"):
        nn.LeakyReLU(-0.1)
    with pytest.raises(TypeError, match="LeakyReLU"):
        nn.LeakyReLU("0.1")
    with pytest.raises(ValueError, match="approximation"):
        nn.GELU(approximation="sigmoid")
    with pytest.raises(ValueError, match="in_channels"):
        nn.PReLU(in_channels=0)
    with pytest.raises(TypeError):
        nn.Swish(beta=None)
    with pytest.raises(TypeError, match="float"):
        nn.ELU()(np.array([1, 2], dtype="int32"))


@pytest.mark.parametrize("in_channels", [1, 3])
def test_prelu_forward_backward(in_channels):
    rng = _rng(2)
    x = _away_from_zero(rng, (2, 3, 4))
    alpha = rng.uniform(0.05, 0.5, size=(in_channels,))
    layer = nn.PReLU(in_channels=in_channels)
    layer.initialize()
    # MXNet's default initializer: 0.25 everywhere
    onp.testing.assert_array_equal(layer.alpha.data().asnumpy(), onp.full(in_channels, 0.25))
    layer.cast("float64")
    layer.alpha.set_data(np.array(alpha))
    a = alpha.reshape(1, -1, 1)

    def ref(xv, av):
        return onp.where(xv > 0, xv, av.reshape(1, -1, 1) * xv)

    out = _hybrid_matches(layer, np.array(x))
    assert_almost_equal(out.asnumpy(), onp.where(x > 0, x, a * x))
    want_x, proj = _numeric_grad(ref, [x.copy(), alpha.copy()], 0)
    want_a, _ = _numeric_grad(ref, [x.copy(), alpha.copy()], 1)
    xa = np.array(x)
    xa.attach_grad()
    with autograd.record():
        y = layer(xa)
    y.backward(np.array(proj))
    assert_almost_equal(xa.grad.asnumpy(), want_x, rtol=1e-6, atol=1e-8)
    assert_almost_equal(layer.alpha.grad().asnumpy(), want_a, rtol=1e-6, atol=1e-8)
    # by hand: d/d alpha_c = sum over x <= 0 in channel c of proj * x
    neg = onp.where(x > 0, 0.0, x) * proj
    by_hand = neg.sum() if in_channels == 1 else neg.sum(axis=(0, 2))
    assert_almost_equal(layer.alpha.grad().asnumpy().reshape(-1), onp.ravel(by_hand))


def test_prelu_custom_initializer_and_wrong_channels():
    layer = nn.PReLU(alpha_initializer=ndx.initializer.Constant(0.5), in_channels=2)
    layer.initialize()
    x = onp.array([[-2.0, 4.0], [6.0, -8.0]], dtype=onp.float32)
    onp.testing.assert_allclose(layer(np.array(x)).asnumpy(), [[-1.0, 4.0], [6.0, -4.0]])
    with pytest.raises(ValueError, match="gamma"):
        layer(np.ones((2, 3)))


@pytest.mark.parametrize("act_type,slope,ref", [
    ("leaky", 0.3, lambda x: onp.where(x > 0, x, 0.3 * x)),
    ("elu", 0.4, lambda x: onp.where(x > 0, x, 0.4 * onp.expm1(x))),
    ("selu", 0.25, lambda x: SELU_L * onp.where(x > 0, x, SELU_A * onp.expm1(x))),
    ("gelu_erf", 0.25, _gelu_erf),
    ("gelu", 0.25, _gelu_erf),
    ("gelu_tanh", 0.25, _gelu_tanh),
])
def test_npx_leaky_relu(act_type, slope, ref):
    x = _rng(3).uniform(-3, 3, size=(4, 5))
    out = npx.leaky_relu(np.array(x), act_type=act_type, slope=slope)
    assert_almost_equal(out.asnumpy(), ref(x), rtol=1e-12, atol=1e-13)
    out32 = npx.leaky_relu(np.array(x, dtype="float32"), act_type=act_type, slope=slope)
    assert out32.dtype == onp.float32
    assert_almost_equal(out32.asnumpy(), ref(x).astype(onp.float32), rtol=1e-5, atol=1e-6)
    # gamma is read by prelu only (MXNet's behaviour)
    same = npx.leaky_relu(np.array(x), gamma=np.ones(5), act_type=act_type, slope=slope)
    onp.testing.assert_array_equal(same.asnumpy(), out.asnumpy())


def test_npx_leaky_relu_rrelu():
    rng = _rng(4)
    x = _away_from_zero(rng, (50, 40))
    lo, hi = 0.1, 0.4
    # predict mode: the mean slope
    out = npx.leaky_relu(np.array(x), act_type="rrelu", lower_bound=lo, upper_bound=hi)
    assert_almost_equal(out.asnumpy(), onp.where(x > 0, x, 0.25 * x), rtol=1e-12, atol=0)
    # training: a slope in [lo, hi) per element; the gradient is that slope
    xa = np.array(x)
    xa.attach_grad()
    with autograd.record():
        y = npx.leaky_relu(xa, act_type="rrelu", lower_bound=lo, upper_bound=hi)
    y.backward()
    y, g = y.asnumpy(), xa.grad.asnumpy()
    neg = x < 0
    onp.testing.assert_array_equal(y[~neg], x[~neg])
    onp.testing.assert_array_equal(g[~neg], 1.0)
    slopes = y[neg] / x[neg]
    assert onp.all(slopes >= lo) and onp.all(slopes < hi)
    assert slopes.std() > 0.05  # random, not one slope
    assert_almost_equal(g[neg], slopes, rtol=1e-12, atol=0)


# ------------------------------------------------------------------ Lambda / HybridLambda
def test_lambda_and_hybrid_lambda():
    x = _rng(5).normal(size=(3, 4)).astype(onp.float32)
    xa = np.array(x)
    assert_almost_equal(nn.Lambda("tanh")(xa).asnumpy(), onp.tanh(x))
    assert_almost_equal(nn.Lambda(lambda v: v * 2 + 1)(xa).asnumpy(), x * 2 + 1)
    assert_almost_equal(nn.Lambda("relu")(xa).asnumpy(), onp.maximum(x, 0))  # from npx
    two = nn.Lambda(lambda a, b: a - b)
    assert_almost_equal(two(xa, xa * 3).asnumpy(), -2 * x)
    for block, ref in ((nn.HybridLambda("tanh"), onp.tanh(x)),
                       (nn.HybridLambda("sigmoid"), _sigmoid(x)),
                       (nn.HybridLambda(lambda v: npx.leaky_relu(v, slope=0.1)),
                        onp.where(x > 0, x, 0.1 * x)),
                       (nn.HybridLambda(lambda F, v: F.np.exp(v)), onp.exp(x))):
        out = _hybrid_matches(block, xa)
        assert_almost_equal(out.asnumpy(), ref)
    assert "tanh" in repr(nn.Lambda("tanh")) and "HybridLambda" in repr(nn.HybridLambda("exp"))
    with pytest.raises(ValueError, match="not found"):
        nn.Lambda("no_such_function")
    with pytest.raises(ValueError, match="HybridLambda"):
        nn.HybridLambda(3)


# ------------------------------------------------------------------ pixel shuffle
def _pixel_shuffle_ref(x, fs):
    """out[n, c, d1 * f1 + i1, ...] = x[n, c * prod(fs) + flat(i1, ..., ik), d1, ...], by
    looping over every output element."""
    n, cin = x.shape[:2]
    block = math.prod(fs)
    spatial = x.shape[2:]
    out = onp.empty((n, cin // block) + tuple(d * f for d, f in zip(spatial, fs)), x.dtype)
    for idx in onp.ndindex(out.shape):
        b, c, pos = idx[0], idx[1], idx[2:]
        offs = [p % f for p, f in zip(pos, fs)]
        src = [p // f for p, f in zip(pos, fs)]
        flat = 0
        for o, f in zip(offs, fs):
            flat = flat * f + o
        out[idx] = x[(b, c * block + flat) + tuple(src)]
    return out


@pytest.mark.parametrize("layer,shape,fs,out_shape", [
    (lambda: nn.PixelShuffle1D(2), (1, 8, 3), (2,), (1, 4, 6)),
    (lambda: nn.PixelShuffle1D(3), (2, 6, 4), (3,), (2, 2, 12)),
    (lambda: nn.PixelShuffle2D((2, 3)), (1, 12, 3, 5), (2, 3), (1, 2, 6, 15)),
    (lambda: nn.PixelShuffle2D(2), (2, 8, 2, 3), (2, 2), (2, 2, 4, 6)),
    (lambda: nn.PixelShuffle3D((2, 3, 4)), (1, 48, 3, 5, 7), (2, 3, 4), (1, 2, 6, 15, 28)),
    (lambda: nn.PixelShuffle3D(2), (1, 16, 2, 1, 3), (2, 2, 2), (1, 2, 4, 2, 6)),
])
def test_pixel_shuffle(layer, shape, fs, out_shape):
    x = onp.arange(math.prod(shape), dtype=onp.float32).reshape(shape)
    block = layer()
    out = _hybrid_matches(block, np.array(x))
    assert out.shape == out_shape  # MXNet's documented shapes
    onp.testing.assert_array_equal(out.asnumpy(), _pixel_shuffle_ref(x, fs))


def test_pixel_shuffle_gradient_and_errors():
    x = _rng(6).normal(size=(1, 4, 2, 3))
    check_numeric_gradient(lambda v: nn.PixelShuffle2D(2)(v), [x], dtype=onp.float64)
    with pytest.raises(ValueError, match="divisible"):
        nn.PixelShuffle2D(2)(np.ones((1, 6, 2, 2)))
    with pytest.raises(ValueError, match="4-d"):
        nn.PixelShuffle2D(2)(np.ones((4, 2, 2)))
    with pytest.raises(ValueError, match="factor"):
        nn.PixelShuffle2D((2, 2, 2))
    with pytest.raises(ValueError, match="factor"):
        nn.PixelShuffle1D(0)


# ------------------------------------------------------------------ ReflectionPad2D
@pytest.mark.parametrize("padding,widths", [
    (1, ((0, 0), (0, 0), (1, 1), (1, 1))),
    (2, ((0, 0), (0, 0), (2, 2), (2, 2))),
    ((0, 0, 0, 0, 1, 2, 0, 3), ((0, 0), (0, 0), (1, 2), (0, 3))),
])
def test_reflection_pad2d(padding, widths):
    x = _rng(7).normal(size=(2, 3, 4, 5)).astype(onp.float32)
    out = _hybrid_matches(nn.ReflectionPad2D(padding), np.array(x))
    onp.testing.assert_array_equal(out.asnumpy(), onp.pad(x, widths, mode="reflect"))


def test_reflection_pad2d_gradient_and_errors():
    x = _rng(8).normal(size=(1, 1, 3, 3))
    check_numeric_gradient(lambda v: nn.ReflectionPad2D(1)(v), [x], dtype=onp.float64)
    with pytest.raises(ValueError, match="4-d"):
        nn.ReflectionPad2D(1)(np.ones((3, 3)))
    with pytest.raises(ValueError, match="less than"):
        nn.ReflectionPad2D(3)(np.ones((1, 1, 3, 3)))
    with pytest.raises(ValueError, match="first four"):
        nn.ReflectionPad2D((1, 1, 0, 0, 1, 1, 1, 1))
    with pytest.raises(ValueError, match="padding"):
        nn.ReflectionPad2D((1, 1))


# ------------------------------------------------------------------ GroupNorm / InstanceNorm
def _group_norm_ref(x, gamma, beta, groups, eps):
    n, c = x.shape[:2]
    xg = x.reshape(n, groups, -1)
    mean = xg.mean(axis=2, keepdims=True)
    var = xg.var(axis=2, keepdims=True)
    xhat = ((xg - mean) / onp.sqrt(var + eps)).reshape(x.shape)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    return xhat * gamma.reshape(bshape) + beta.reshape(bshape)


def test_group_norm_mxnet_example():
    # MXNet's GroupNorm docstring example (num_groups=1, gamma 1, beta 0)
    x = np.array(onp.arange(24, dtype=onp.float32).reshape(2, 3, 4))
    layer = nn.GroupNorm()
    layer.initialize()
    row = [-1.5932543, -1.3035717, -1.0138891, -0.7242065]
    out = layer(x).asnumpy()
    assert_almost_equal(out[0, 0], onp.array(row, onp.float32), rtol=1e-5, atol=1e-6)
    assert_almost_equal(out[1], out[0])


@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((2, 4), 4),
                                          ((2, 4, 3), 1)])
def test_group_norm_layer(shape, groups):
    rng = _rng(9)
    x = rng.normal(size=shape) * 3 + 1
    c = shape[1]
    gamma, beta = rng.uniform(0.5, 1.5, size=c), rng.normal(size=c)
    layer = nn.GroupNorm(num_groups=groups, epsilon=1e-4)
    layer.initialize()
    layer.cast("float64")
    layer(np.array(x))
    assert layer.gamma.shape == (c,) and layer.beta.shape == (c,)
    layer.gamma.set_data(np.array(gamma))
    layer.beta.set_data(np.array(beta))
    out = _hybrid_matches(layer, np.array(x))
    assert_almost_equal(out.asnumpy(), _group_norm_ref(x, gamma, beta, groups, 1e-4),
                        rtol=1e-10, atol=1e-12)


def test_npx_group_norm_gradient_and_mean_std():
    rng = _rng(10)
    x = rng.normal(size=(2, 4, 3))
    gamma, beta = rng.uniform(0.5, 1.5, size=4), rng.normal(size=4)
    check_numeric_gradient(lambda a, g, b: npx.group_norm(a, g, b, num_groups=2, eps=1e-3),
                           [x, gamma, beta], dtype=onp.float64, rtol=1e-5, atol=1e-7)
    out, mean, std = npx.group_norm(np.array(x), np.array(gamma), np.array(beta), num_groups=2,
                                    eps=1e-3, output_mean_var=True)
    xg = x.reshape(2, 2, 6)
    assert mean.shape == (2, 2) and std.shape == (2, 2)
    assert_almost_equal(mean.asnumpy(), xg.mean(axis=2))
    assert_almost_equal(std.asnumpy(), onp.sqrt(xg.var(axis=2) + 1e-3))
    assert_almost_equal(out.asnumpy(), _group_norm_ref(x, gamma, beta, 2, 1e-3))
    # MXNet 1.x's gamma / beta of one value per group
    g2, b2 = onp.array([2.0, 0.5]), onp.array([1.0, -1.0])
    got = npx.group_norm(np.array(x), np.array(g2), np.array(b2), num_groups=2, eps=1e-3)
    assert_almost_equal(got.asnumpy(), _group_norm_ref(x, onp.repeat(g2, 2), onp.repeat(b2, 2),
                                                       2, 1e-3))


def test_group_norm_errors():
    x = np.ones((2, 6, 3))
    with pytest.raises(ValueError, match="num_groups"):
        npx.group_norm(x, np.ones(6), np.zeros(6), num_groups=4)
    with pytest.raises(ValueError, match="gamma"):
        npx.group_norm(x, np.ones(5), np.zeros(6), num_groups=3)
    with pytest.raises(ValueError, match="2-d"):
        npx.group_norm(np.ones(6), np.ones(6), np.zeros(6))
    with pytest.raises(ValueError, match="num_groups"):
        nn.GroupNorm(num_groups=0)


def test_instance_norm_mxnet_example():
    # MXNet's InstanceNorm docstring example
    x = np.array([[[1.1, 2.2]], [[3.3, 4.4]]])
    layer = nn.InstanceNorm()
    layer.initialize()
    want = onp.array([[[-0.99998355, 0.99998331]], [[-0.99998319, 0.99998361]]], onp.float32)
    assert_almost_equal(layer(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert layer.gamma.grad_req == "null" and layer.beta.grad_req == "write"  # MXNet defaults


@pytest.mark.parametrize("shape,axis", [((2, 3, 5), 1), ((2, 3, 4, 2), 1), ((2, 5, 3), 2),
                                        ((2, 5, 3), -1)])
def test_instance_norm_layer(shape, axis):
    rng = _rng(11)
    x = rng.normal(size=shape) * 2 - 1
    c = shape[axis]
    gamma, beta = rng.uniform(0.5, 1.5, size=c), rng.normal(size=c)
    layer = nn.InstanceNorm(axis=axis, epsilon=1e-3, scale=True)
    layer.initialize()
    layer.cast("float64")
    layer(np.array(x))
    layer.gamma.set_data(np.array(gamma))
    layer.beta.set_data(np.array(beta))
    out = _hybrid_matches(layer, np.array(x))
    xs = onp.moveaxis(x, axis, 1)
    want = _group_norm_ref(xs, gamma, beta, c, 1e-3)  # one group per channel
    assert_almost_equal(out.asnumpy(), onp.moveaxis(want, 1, axis), rtol=1e-10, atol=1e-12)
    check_numeric_gradient(lambda a, g, b: npx.instance_norm(a, g, b, eps=1e-3),
                           [xs, gamma, beta], dtype=onp.float64, rtol=1e-5, atol=1e-7)


def test_instance_norm_errors():
    with pytest.raises(ValueError, match="3-d"):
        npx.instance_norm(np.ones((2, 3)), np.ones(3), np.zeros(3))
    with pytest.raises(ValueError, match="beta"):
        npx.instance_norm(np.ones((2, 3, 4)), np.ones(3), np.zeros(2))


# ------------------------------------------------------------------ Block utilities
def _small_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(5, in_units=3), nn.Activation("relu"), nn.BatchNorm(in_channels=5),
            nn.Dense(2))
    net.initialize()
    return net


def _rows(text):
    """{layer: (output shape, param count)} from summary's table."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\s*(\S+)\s+(\(.*\))\s+(\d+)$", line)
        if m:
            rows[m.group(1)] = (m.group(2), int(m.group(3)))
    return rows


def test_summary_counts(capsys):
    net = _small_net()
    net.summary(np.ones((2, 3)))
    text = capsys.readouterr().out
    # by hand: Dense(3 -> 5) 15 + 5; BatchNorm(5) gamma, beta, running mean and var 4 * 5
    # (10 trainable); Dense(5 -> 2) 10 + 2
    assert _rows(text) == {"Input": ("(2, 3)", 0), "Dense-1": ("(2, 5)", 20),
                           "Activation-2": ("(2, 5)", 0), "BatchNorm-3": ("(2, 5)", 20),
                           "Dense-4": ("(2, 2)", 12)}
    assert "Layer (type)" in text and "Output Shape" in text and "Param #" in text
    assert "   Total params: 52\n" in text
    assert "   Trainable params: 42\n" in text
    assert "   Non-trainable params: 10\n" in text
    assert "Shared params in forward computation graph: 0\n" in text
    assert "Unique parameters in model: 52\n" in text
    # the summary's hooks are gone afterwards
    assert all(not b._forward_hooks for b in [net] + [net[i] for i in range(len(net))])


class _Tied(gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        self.a = nn.Dense(4, in_units=4)
        self.b = nn.Dense(4, in_units=4)
        self.b.share_parameters(self.a.collect_params())

    def forward(self, x):
        return self.b(self.a(x))


def test_summary_shared_and_hybridized(capsys):
    net = _Tied()
    net.initialize()
    net.summary(np.ones((1, 4)))
    text = capsys.readouterr().out
    rows = _rows(text)
    assert rows["Dense-1"] == ("(1, 4)", 20) and rows["Dense-2"] == ("(1, 4)", 20)
    assert rows["_Tied-3"] == ("(1, 4)", 0)
    assert "   Total params: 40\n" in text
    assert "Shared params in forward computation graph: 20\n" in text
    assert "Unique parameters in model: 20\n" in text
    net.hybridize()
    with pytest.raises(ValueError, match="hybridized"):
        net.summary(np.ones((1, 4)))
    assert not net.a._forward_hooks  # the hooks registered before the error are detached


def test_forward_hooks():
    net = _small_net()
    calls = []
    x = np.ones((2, 3))
    pre = net[0].register_forward_pre_hook(lambda blk, inputs: calls.append(("pre", blk, inputs)))
    post = net[0].register_forward_hook(
        lambda blk, inputs, out: calls.append(("post", blk, inputs, out)))
    out = net(x)
    assert [c[0] for c in calls] == ["pre", "post"]
    assert calls[0][1] is net[0] and calls[1][1] is net[0]
    assert len(calls[0][2]) == 1 and calls[0][2][0] is x
    dense_out = calls[1][3]
    w, b = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    assert_almost_equal(dense_out.asnumpy(), onp.ones((2, 3), onp.float32) @ w.T + b)
    assert out.shape == (2, 2)
    pre.detach()
    calls.clear()
    net(x)
    assert [c[0] for c in calls] == ["post"]
    post.detach()
    post.detach()  # a second detach does nothing
    calls.clear()
    net(x)
    assert calls == []
    # a context manager detaches on exit; hooks on a hybridized block run per call
    net.hybridize()
    with net.register_forward_hook(lambda blk, i, o: calls.append(o.shape)):
        net(x)
        net(x)
    net(x)
    assert calls == [(2, 2), (2, 2)]
    with pytest.raises(TypeError, match="callable"):
        net.register_forward_hook(3)


def test_apply_and_params():
    net = _small_net()
    seen = []
    assert net.apply(lambda b: seen.append(type(b).__name__)) is net
    assert seen == ["Dense", "Activation", "BatchNorm", "Dense", "HybridSequential"]
    assert list(net[0].params) == ["weight", "bias"]
    assert net.params == {}


def test_collect_params_select():
    net = _small_net()
    names = list(net.collect_params())
    assert names == ["0.weight", "0.bias", "2.gamma", "2.beta", "2.running_mean",
                     "2.running_var", "3.weight", "3.bias"]
    assert list(net.collect_params(".*weight")) == ["0.weight", "3.weight"]
    assert list(net.collect_params(".*weight|.*bias")) == ["0.weight", "0.bias", "3.weight",
                                                          "3.bias"]
    assert list(net.collect_params("2\\.")) == ["2.gamma", "2.beta", "2.running_mean",
                                               "2.running_var"]
    assert list(net.collect_params("0.weight|3.bias")) == ["0.weight", "3.bias"]
    # matched from the start, as MXNet 2.0's re.match: 'weight' alone selects nothing
    assert list(net.collect_params("weight")) == []
    with pytest.raises(ValueError, match="regular expression"):
        net.collect_params("(")
    with pytest.raises(TypeError, match="select"):
        net.collect_params(3)


def test_cast_params_and_grads():
    net = _small_net()
    x = onp.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]])
    with autograd.record():
        loss = net(np.array(x, dtype="float32")).sum()
    loss.backward()
    grads = {k: p.grad().asnumpy() for k, p in net.collect_params().items()
             if p.grad_req != "null"}
    values = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
    net.hybridize()
    net(np.array(x, dtype="float32"))
    net.cast("float64")
    for name, p in net.collect_params().items():
        assert p.data().dtype == onp.float64, name
        assert p.dtype == "float64"
        onp.testing.assert_array_equal(p.data().asnumpy(), values[name].astype(onp.float64))
        if name in grads:
            assert p.grad().dtype == onp.float64
            onp.testing.assert_array_equal(p.grad().asnumpy(), grads[name].astype(onp.float64))
    out = net(np.array(x))  # the graph is traced again for float64
    assert out.dtype == onp.float64
    # a deferred parameter is created in the new dtype
    d = nn.Dense(2)
    d.initialize()
    d.cast("float64")
    assert d(np.ones((1, 3), dtype="float64")).dtype == onp.float64
    assert d.weight.data().dtype == onp.float64


def test_share_parameters():
    d0, d1 = nn.Dense(3, in_units=2), nn.Dense(3, in_units=2)
    d0.initialize()
    d1.initialize()
    assert d1.share_parameters(d0.collect_params()) is d1
    assert d1.weight is d0.weight and d1.bias is d0.bias
    assert d1.collect_params()["weight"] is d0.weight
    x = np.array([[1.0, 2.0]])
    onp.testing.assert_array_equal(d0(x).asnumpy(), d1(x).asnumpy())
    # update one, see both
    d0.weight.set_data(np.ones((3, 2)))
    d0.bias.set_data(np.array([1.0, 2.0, 3.0]))
    onp.testing.assert_array_equal(d1(x).asnumpy(), [[4.0, 5.0, 6.0]])
    # a gradient step through d1 changes d0
    with autograd.record():
        loss = d1(x).sum()
    loss.backward()
    trainer = gluon.Trainer(d1.collect_params(), "sgd", {"learning_rate": 0.5})
    trainer.step(1)
    onp.testing.assert_allclose(d0.weight.data().asnumpy(), onp.ones((3, 2)) - 0.5 * x.asnumpy())
    with pytest.warns(UserWarning, match="not in the model"):
        d1.share_parameters({"weight": d0.weight, "gamma": d0.bias})
    with pytest.raises(ValueError, match="dict"):
        d1.share_parameters([d0.weight])


def test_share_parameters_nested():
    a, b = _small_net(), _small_net()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b.share_parameters(a.collect_params(".*weight"))
    assert b[0].weight is a[0].weight and b[3].weight is a[3].weight
    assert b[0].bias is not a[0].bias


def test_zero_grad():
    net = _small_net()
    with autograd.record():
        loss = (net(np.array(_rng(12).normal(size=(4, 3)), dtype="float32")) ** 2).sum()
    loss.backward()
    params = [p for p in net.collect_params().values() if p.grad_req != "null"]
    assert all(onp.abs(p.grad().asnumpy()).sum() > 0 for p in params)
    net.zero_grad()
    for p in params:
        onp.testing.assert_array_equal(p.grad().asnumpy(), 0)
