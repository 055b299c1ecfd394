"""Tests of gluon.probability's transformations, domain maps, TransformedDistribution,
Independent, MultivariateNormal and StochasticBlock / StochasticSequential, each against an
independent reference: scipy.stats, NumPy closed forms, finite differences or sample moments.
"""
import math
import os

import numpy as onp
import pytest
import scipy.stats as ss

import ndx as mx
import ndx.gluon.probability as mgp
from ndx import autograd, gluon, np, npx
from ndx.gluon import HybridBlock
from ndx.gluon.probability import StochasticBlock, StochasticSequential


@pytest.fixture(autouse=True)
def _seed():
    mx.random.seed(1234)
    onp.random.seed(1234)


def arr(x):
    """An ndx float64 array (float64 keeps finite differences accurate)."""
    return np.array(onp.asarray(x, dtype="float64"))


def as_np(value):
    """An ndx array or a Python number as NumPy."""
    return value.asnumpy() if hasattr(value, "asnumpy") else onp.asarray(value)


def num_grad(fn, x, h=1e-6):
    """Central-difference gradient of the scalar fn(onp array) at x."""
    x = onp.array(x, dtype="float64")
    grad = onp.zeros_like(x)
    for i in onp.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (fn(up) - fn(down)) / (2 * h)
    return grad


def spd(batch, n):
    """Random symmetric positive-definite matrices A A^T + I and the factor A."""
    a = onp.random.randn(*batch, n, n)
    return a @ onp.swapaxes(a, -1, -2) + onp.eye(n), a


class Invoke(HybridBlock):
    """Builds something from the inputs with ``make`` inside forward and applies ``call``."""

    def __init__(self, make, call):
        super().__init__()
        self._make, self._call = make, call

    def forward(self, *args):
        return self._call(self._make(*args), *args)


def run(make, call, args, hybridize):
    net = Invoke(make, call)
    if hybridize:
        net.hybridize()
        net(*args)  # (the first call traces; the second replays the graph)
    return net(*args)


# ==================================================================== transformations
# (transformation factory, domain sampler, numpy forward)
TRANSFORMS = {
    "exp": (lambda: mgp.ExpTransform(), lambda s: onp.random.randn(*s), onp.exp),
    "affine_scalar": (lambda: mgp.AffineTransform(1.5, -2.0),
                      lambda s: onp.random.randn(*s), lambda x: 1.5 - 2.0 * x),
    "affine_array": (lambda: mgp.AffineTransform(arr([0.5, -1.0, 2.0]), arr([3.0, -0.5, 1.5])),
                     lambda s: onp.random.randn(*s),
                     lambda x: onp.array([0.5, -1.0, 2.0]) + onp.array([3.0, -0.5, 1.5]) * x),
    "power": (lambda: mgp.PowerTransform(2.5), lambda s: onp.random.uniform(0.5, 2, s),
              lambda x: x ** 2.5),
    "power_negative": (lambda: mgp.PowerTransform(-0.5), lambda s: onp.random.uniform(0.5, 2, s),
                       lambda x: x ** -0.5),
    "sigmoid": (lambda: mgp.SigmoidTransform(), lambda s: 3 * onp.random.randn(*s),
                lambda x: 1 / (1 + onp.exp(-x))),
    "compose": (lambda: mgp.ComposeTransform([mgp.AffineTransform(0.3, 0.5), mgp.ExpTransform(),
                                              mgp.PowerTransform(-1.0)]),
                lambda s: onp.random.randn(*s), lambda x: onp.exp(-(0.3 + 0.5 * x))),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_forward_inverse_jacobian(name):
    make, domain, ref = TRANSFORMS[name]
    t = make()
    x = domain((4, 3))
    y = t(arr(x))
    onp.testing.assert_allclose(y.asnumpy(), ref(x), rtol=1e-6)
    onp.testing.assert_allclose(t.inv(y).asnumpy(), x, rtol=1e-5, atol=1e-6)
    # log |dy/dx| against a central difference of the NumPy map (elementwise maps)
    h = 1e-6
    deriv = (ref(x + h) - ref(x - h)) / (2 * h)
    ldj = t.log_det_jacobian(arr(x), y).asnumpy()
    onp.testing.assert_allclose(ldj, onp.log(onp.abs(deriv)), rtol=1e-5, atol=1e-6)
    # the inverse's log |dx/dy| is minus the forward's
    onp.testing.assert_allclose(t.inv.log_det_jacobian(y, arr(x)).asnumpy(), -ldj, rtol=1e-6)
    # sign: the sign of the derivative, the same for the inverse
    assert onp.all(onp.sign(deriv) == as_np(t.sign))
    assert onp.all(as_np(t.inv.sign) == as_np(t.sign))
    assert t.bijective and t.inv.bijective


@pytest.mark.parametrize("name", ["affine_array", "sigmoid", "compose"])
def test_transform_hybridized(name):
    make, domain, ref = TRANSFORMS[name]
    x = domain((2, 3))

    def call(t, x):
        y = t(x)
        return y, t.inv(y), t.log_det_jacobian(x, y)

    y, x_back, ldj = run(lambda x: make(), call, (arr(x),), hybridize=True)
    eager = call(make(), arr(x))
    onp.testing.assert_allclose(y.asnumpy(), ref(x), rtol=1e-6)
    onp.testing.assert_allclose(x_back.asnumpy(), x, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(ldj.asnumpy(), eager[2].asnumpy(), rtol=1e-6)


def test_inverse_is_cached_and_involutive():
    for t in [mgp.ExpTransform(), mgp.AffineTransform(1.0, 2.0),
              mgp.ComposeTransform([mgp.ExpTransform(), mgp.AffineTransform(1.0, 2.0)])]:
        assert t.inv is t.inv
        assert t.inv.inv is t
        assert t.inv.event_dim == t.event_dim


def test_affine_event_dim_and_compose_event_dim():
    x = onp.random.randn(2, 4)
    scale = onp.array([0.5, -2.0, 3.0, 1.5])
    t = mgp.AffineTransform(1.0, arr(scale), event_dim=1)
    ldj = t.log_det_jacobian(arr(x), t(arr(x)))
    assert ldj.shape == (2,)
    onp.testing.assert_allclose(ldj.asnumpy(), onp.full(2, onp.log(onp.abs(scale)).sum()))
    # exp (elementwise) then an event_dim-1 affine: log|J| = sum(x) + sum(log|scale|)
    c = mgp.ComposeTransform([mgp.ExpTransform(), t])
    assert c.event_dim == 1
    ldj = c.log_det_jacobian(arr(x), c(arr(x)))
    onp.testing.assert_allclose(ldj.asnumpy(), x.sum(-1) + onp.log(onp.abs(scale)).sum())
    # the empty composition is the identity
    e = mgp.ComposeTransform([])
    onp.testing.assert_allclose(e(arr(x)).asnumpy(), x)
    onp.testing.assert_allclose(e.log_det_jacobian(arr(x), arr(x)).asnumpy(), onp.zeros_like(x))


def test_softmax_and_abs_transforms():
    x = onp.random.randn(3, 5)
    t = mgp.SoftmaxTransform()
    y = t(arr(x)).asnumpy()
    ref = onp.exp(x) / onp.exp(x).sum(-1, keepdims=True)
    onp.testing.assert_allclose(y, ref, rtol=1e-6)
    onp.testing.assert_allclose(t(t.inv(arr(y))).asnumpy(), ref, rtol=1e-6)
    assert t.event_dim == 1 and not t.bijective
    with pytest.raises(NotImplementedError):
        t.log_det_jacobian(arr(x), arr(y))
    a = mgp.AbsTransform()
    onp.testing.assert_allclose(a(arr(x)).asnumpy(), onp.abs(x))
    onp.testing.assert_allclose(a.inv(arr(onp.abs(x))).asnumpy(), onp.abs(x))
    assert not a.bijective
    with pytest.raises(NotImplementedError):
        _ = a.sign


def test_transform_gradient_wrt_parameters():
    x = onp.random.randn(5)
    loc0, scale0 = onp.random.randn(5), onp.random.uniform(0.5, 2, 5)

    def objective(loc, scale, xs):
        t = mgp.ComposeTransform([mgp.AffineTransform(loc, scale), mgp.ExpTransform()])
        y = t(xs)
        return (y + t.log_det_jacobian(xs, y)).sum()

    loc, scale = arr(loc0), arr(scale0)
    loc.attach_grad()
    scale.attach_grad()
    with autograd.record():
        out = objective(loc, scale, arr(x))
    out.backward()
    f_loc = lambda v: float(objective(arr(v), arr(scale0), arr(x)))  # noqa: E731
    f_scale = lambda v: float(objective(arr(loc0), arr(v), arr(x)))  # noqa: E731
    onp.testing.assert_allclose(loc.grad.asnumpy(), num_grad(f_loc, loc0), rtol=1e-5)
    onp.testing.assert_allclose(scale.grad.asnumpy(), num_grad(f_scale, scale0), rtol=1e-5)


@pytest.mark.parametrize("bad, error", [
    (lambda: mgp.AffineTransform(0.0, "a"), TypeError),
    (lambda: mgp.AffineTransform(0.0, 0.0), ValueError),
    (lambda: mgp.AffineTransform(0.0, 1.0, event_dim=-1), ValueError),
    (lambda: mgp.AffineTransform(0.0, 1.0, event_dim=1.5), TypeError),
    (lambda: mgp.PowerTransform(0), ValueError),
    (lambda: mgp.PowerTransform(None), TypeError),
    (lambda: mgp.ComposeTransform(mgp.ExpTransform()), TypeError),
    (lambda: mgp.ComposeTransform([mgp.ExpTransform(), 3]), TypeError),
])
def test_transform_argument_errors(bad, error):
    with pytest.raises(error, match="Transform"):
        bad()


class AffineFlow(mgp.TransformBlock):
    """A learnable elementwise affine flow y = x * exp(log_scale) + shift."""

    bijective = True
    sign = 1

    def __init__(self, n):
        super().__init__()
        self.log_scale = gluon.Parameter("log_scale", shape=(n,), init=mx.init.Normal(0.5),
                                         dtype="float64")
        self.shift = gluon.Parameter("shift", shape=(n,), init=mx.init.Normal(1.0),
                                     dtype="float64")

    def _forward_compute(self, x):
        return x * np.exp(self.log_scale.data()) + self.shift.data()

    def _inverse_compute(self, y):
        return (y - self.shift.data()) * np.exp(-self.log_scale.data())

    def log_det_jacobian(self, x, y):
        return np.ones_like(x) * self.log_scale.data()


class FlowDensity(HybridBlock):
    """log p(x) of a standard normal pushed through an AffineFlow."""

    def __init__(self, n):
        super().__init__()
        self.flow = AffineFlow(n)

    def forward(self, x):
        base = mgp.Normal(np.zeros_like(x), np.ones_like(x))
        return mgp.TransformedDistribution(base, self.flow).log_prob(x)


@pytest.mark.parametrize("hybridize", [False, True])
def test_transform_block_holds_parameters(hybridize):
    net = FlowDensity(3)
    net.initialize()
    assert set(net.collect_params()) == {"flow.log_scale", "flow.shift"}
    x = onp.random.randn(4, 3)
    if hybridize:
        net.hybridize()
        net(arr(x))
    with autograd.record():
        out = net(arr(x))
        total = out.sum()
    total.backward()
    log_scale = net.flow.log_scale.data().asnumpy()
    shift = net.flow.shift.data().asnumpy()
    scale = onp.exp(log_scale)
    onp.testing.assert_allclose(out.asnumpy(), ss.norm(shift, scale).logpdf(x), rtol=1e-6)
    # d/d shift of sum log N(x; shift, scale) = sum (x - shift) / scale^2
    onp.testing.assert_allclose(net.flow.shift.grad().asnumpy(),
                                ((x - shift) / scale ** 2).sum(0), rtol=1e-6)
    # the block itself is callable and hybridizable as a transformation
    flow = net.flow
    onp.testing.assert_allclose(flow(arr(x)).asnumpy(), x * scale + shift, rtol=1e-6)
    onp.testing.assert_allclose(flow.inv(flow(arr(x))).asnumpy(), x, rtol=1e-6, atol=1e-9)


# ==================================================================== domain maps
CONSTRAINTS = {
    "Real": (lambda: mgp.constraint.Real(), lambda v: onp.isfinite(v)),
    "Positive": (lambda: mgp.constraint.Positive(), lambda v: v > 0),
    "NonNegative": (lambda: mgp.constraint.NonNegative(), lambda v: v >= 0),
    "GreaterThan": (lambda lo: mgp.constraint.GreaterThan(lo), lambda v, lo: v > lo),
    "GreaterThanEq": (lambda lo: mgp.constraint.GreaterThanEq(lo), lambda v, lo: v >= lo),
    "LessThan": (lambda hi: mgp.constraint.LessThan(hi), lambda v, hi: v < hi),
    "LessThanEq": (lambda hi: mgp.constraint.LessThanEq(hi), lambda v, hi: v <= hi),
    "Interval": (lambda lo, hi: mgp.constraint.Interval(lo, hi),
                 lambda v, lo, hi: (v >= lo) & (v <= hi)),
    "OpenInterval": (lambda lo, hi: mgp.constraint.OpenInterval(lo, hi),
                     lambda v, lo, hi: (v > lo) & (v < hi)),
    "HalfOpenInterval": (lambda lo, hi: mgp.constraint.HalfOpenInterval(lo, hi),
                         lambda v, lo, hi: (v >= lo) & (v < hi)),
    "UnitInterval": (lambda: mgp.constraint.UnitInterval(), lambda v: (v >= 0) & (v <= 1)),
}
N_BOUNDS = {"GreaterThan": 1, "GreaterThanEq": 1, "LessThan": 1, "LessThanEq": 1,
            "Interval": 2, "OpenInterval": 2, "HalfOpenInterval": 2}


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_domain_map_lands_in_region(name, registry, hybridize):
    make, inside = CONSTRAINTS[name]
    x = 2 * onp.random.randn(2, 3)
    bounds = [onp.random.uniform(-1, 0, (2, 3)), onp.random.uniform(1, 2, (2, 3))]
    bounds = bounds[:N_BOUNDS.get(name, 0)]
    if name.startswith("Less"):
        bounds = [bounds[0]]

    def call(c, value, *bounds):
        t = getattr(mgp, registry)(c)
        y = t(value)
        return y, c.check(y), t.inv(y)

    y, checked, x_back = run(lambda value, *bounds: make(*bounds), call,
                             (arr(x), *[arr(b) for b in bounds]), hybridize)
    y = y.asnumpy()
    assert onp.all(inside(y, *bounds))
    onp.testing.assert_allclose(checked.asnumpy(), y)
    onp.testing.assert_allclose(x_back.asnumpy(), x, rtol=1e-5, atol=1e-5)


def test_domain_map_lookup():
    assert isinstance(mgp.biject_to(mgp.constraint.UnitInterval()), mgp.SigmoidTransform)
    assert isinstance(mgp.biject_to(mgp.constraint.Positive()), mgp.ExpTransform)
    # transform_to(Simplex) is softmax; no bijection is registered for it
    y = mgp.transform_to(mgp.constraint.Simplex())(arr(onp.random.randn(4, 3))).asnumpy()
    onp.testing.assert_allclose(y.sum(-1), onp.ones(4))
    with pytest.raises(NotImplementedError):
        mgp.biject_to(mgp.constraint.Simplex())
    with pytest.raises(NotImplementedError):
        mgp.biject_to(mgp.constraint.IntegerInterval(0, 3))
    with pytest.raises(TypeError):
        mgp.biject_to.register(int, lambda c: mgp.ExpTransform())
    with pytest.raises(TypeError):
        mgp.biject_to(3.0)

    class Above2(mgp.constraint.GreaterThan):
        def __init__(self):
            super().__init__(2.0)

    # a subclass maps as its base until it is registered itself
    onp.testing.assert_allclose(mgp.biject_to(Above2())(arr([0.0])).asnumpy(), [3.0])
    registry = mgp.domain_map()

    @registry.register(Above2)
    def _square(constraint):
        return mgp.PowerTransform(2.0)

    assert isinstance(registry(Above2()), mgp.PowerTransform)


# ==================================================================== TransformedDistribution
def lognormal(loc, scale):
    return mgp.TransformedDistribution(mgp.Normal(loc, scale), mgp.ExpTransform())


@pytest.mark.parametrize("hybridize", [False, True])
def test_lognormal_log_prob_cdf_icdf(hybridize):
    loc, scale = onp.random.randn(2, 3), onp.random.uniform(0.5, 1.5, (2, 3))
    x, q = onp.random.uniform(0.2, 3, (2, 3)), onp.random.uniform(0.05, 0.95, (2, 3))
    ref = ss.lognorm(s=scale, scale=onp.exp(loc))
    out = run(lambda loc, scale, x, q: lognormal(loc, scale),
              lambda d, loc, scale, x, q: (d.log_prob(x), d.cdf(x), d.icdf(q), d.sample()),
              (arr(loc), arr(scale), arr(x), arr(q)), hybridize)
    assert out[3].shape == (2, 3) and onp.all(out[3].asnumpy() > 0)
    onp.testing.assert_allclose(out[0].asnumpy(), ref.logpdf(x), rtol=1e-5)
    onp.testing.assert_allclose(out[1].asnumpy(), ref.cdf(x), rtol=1e-5, atol=1e-7)
    onp.testing.assert_allclose(out[2].asnumpy(), ref.ppf(q), rtol=1e-5)


def test_lognormal_samples():
    loc, scale = onp.array([0.0, 0.5]), onp.array([0.3, 0.5])
    d = lognormal(arr(loc), arr(scale))
    assert d.sample().shape == (2,)
    assert d.sample((3, 2)).shape == (3, 2)
    draws = d.sample_n(100000).asnumpy()
    assert draws.shape == (100000, 2)
    mean = onp.exp(loc + scale ** 2 / 2)
    var = (onp.exp(scale ** 2) - 1) * onp.exp(2 * loc + scale ** 2)
    onp.testing.assert_allclose(draws.mean(0), mean, rtol=0.02)
    onp.testing.assert_allclose(draws.var(0), var, rtol=0.06)
    # pathwise gradient: y = exp(loc + scale * eps), so d sum(y) / d loc = y
    assert d.has_grad
    loc_a = arr(loc)
    loc_a.attach_grad()
    with autograd.record():
        y = lognormal(loc_a, arr(scale)).sample_n(4)
        total = y.sum()
    total.backward()
    onp.testing.assert_allclose(loc_a.grad.asnumpy(), y.asnumpy().sum(0), rtol=1e-5)


@pytest.mark.parametrize("hybridize", [False, True])
def test_affine_chain_log_prob_and_gradients(hybridize):
    """MXNet's check: N(loc, scale) as loc + scale * N(0, 1), with the gradients of log_prob
    with respect to loc and scale against their hand derivation."""
    loc, scale = onp.random.uniform(-1, 1, 6), onp.random.uniform(0.5, 1.5, 6)
    x = onp.random.randn(6)

    def make(loc, scale, x):
        base = mgp.Normal(np.zeros_like(loc), np.ones_like(scale))
        return mgp.TransformedDistribution(
            base, [mgp.AffineTransform(0, scale), mgp.AffineTransform(loc, 1)])

    loc_a, scale_a = arr(loc), arr(scale)
    loc_a.attach_grad()
    scale_a.attach_grad()
    net = Invoke(make, lambda d, loc, scale, x: d.log_prob(x))
    if hybridize:
        net.hybridize()
        net(loc_a, scale_a, arr(x))
    with autograd.record():
        out = net(loc_a, scale_a, arr(x))
    out.backward()
    onp.testing.assert_allclose(out.asnumpy(), ss.norm(loc, scale).logpdf(x), rtol=1e-6)
    onp.testing.assert_allclose(loc_a.grad.asnumpy(), (x - loc) / scale ** 2, rtol=1e-6)
    onp.testing.assert_allclose(scale_a.grad.asnumpy(),
                                (x - loc) ** 2 / scale ** 3 - 1 / scale, rtol=1e-6)


def test_decreasing_chain_cdf_icdf():
    """Y = exp(X) ** -1 = exp(-X) is lognormal(-loc, scale), reached through a decreasing
    map: cdf and icdf must flip."""
    loc, scale = onp.random.randn(5), onp.random.uniform(0.5, 1.5, 5)
    d = mgp.TransformedDistribution(mgp.Normal(arr(loc), arr(scale)),
                                    [mgp.ExpTransform(), mgp.PowerTransform(-1.0)])
    ref = ss.lognorm(s=scale, scale=onp.exp(-loc))
    y, q = onp.random.uniform(0.2, 3, 5), onp.random.uniform(0.05, 0.95, 5)
    onp.testing.assert_allclose(d.log_prob(arr(y)).asnumpy(), ref.logpdf(y), rtol=1e-6)
    onp.testing.assert_allclose(d.cdf(arr(y)).asnumpy(), ref.cdf(y), rtol=1e-6, atol=1e-9)
    onp.testing.assert_allclose(d.icdf(arr(q)).asnumpy(), ref.ppf(q), rtol=1e-6)
    # an affine map with a negative array scale: Y = 1 - 2 X
    d = mgp.TransformedDistribution(mgp.Normal(arr(loc), arr(scale)),
                                    mgp.AffineTransform(1.0, arr(-2 * onp.ones(5))))
    ref = ss.norm(1 - 2 * loc, 2 * scale)
    onp.testing.assert_allclose(d.cdf(arr(y)).asnumpy(), ref.cdf(y), rtol=1e-6, atol=1e-9)
    onp.testing.assert_allclose(d.icdf(arr(q)).asnumpy(), ref.ppf(q), rtol=1e-6)


def test_logit_normal_against_numeric_density():
    """sigmoid(N(loc, scale)): log_prob against the numeric derivative of its cdf,
    P(Y <= y) = Phi((logit(y) - loc) / scale), and sample moments against NumPy draws."""
    loc, scale = onp.array([-0.5, 0.8]), onp.array([0.7, 1.2])
    d = mgp.TransformedDistribution(mgp.Normal(arr(loc), arr(scale)), mgp.SigmoidTransform())
    y = onp.random.uniform(0.05, 0.95, (3, 2))
    h = 1e-6

    def cdf(v):
        return ss.norm(loc, scale).cdf(onp.log(v) - onp.log1p(-v))

    density = (cdf(y + h) - cdf(y - h)) / (2 * h)
    onp.testing.assert_allclose(d.log_prob(arr(y)).asnumpy(), onp.log(density), rtol=1e-5)
    onp.testing.assert_allclose(d.cdf(arr(y)).asnumpy(), cdf(y), rtol=1e-5)
    draws = d.sample_n(100000).asnumpy()
    ref = 1 / (1 + onp.exp(-(loc + scale * onp.random.randn(400000, 2))))
    onp.testing.assert_allclose(draws.mean(0), ref.mean(0), atol=0.006)
    onp.testing.assert_allclose(draws.std(0), ref.std(0), atol=0.006)


def test_transformed_event_dim_and_shapes():
    loc, scale = onp.random.randn(2, 3), onp.random.uniform(0.5, 1.5, (2, 3))
    s = onp.array([0.5, 2.0, 1.5])
    d = mgp.TransformedDistribution(mgp.Normal(arr(loc), arr(scale)),
                                    [mgp.ExpTransform(), mgp.AffineTransform(0, arr(s), 1)])
    assert d.event_dim == 1
    assert d._batch_shape() == (2,) and d._event_shape() == (3,)
    y = onp.random.uniform(0.5, 3, (2, 3))
    ref = ss.lognorm(s=scale, scale=s * onp.exp(loc)).logpdf(y).sum(-1)
    onp.testing.assert_allclose(d.log_prob(arr(y)).asnumpy(), ref, rtol=1e-6)
    assert d.sample_n((4, 5)).shape == (4, 5, 2, 3)
    b = d.broadcast_to((6, 2))
    assert b._batch_shape() == (6, 2) and b.sample().shape == (6, 2, 3)
    assert b.log_prob(arr(y)).shape == (6, 2)
    with pytest.raises(NotImplementedError):
        d.cdf(arr(y))


def test_transformed_distribution_errors():
    base = mgp.Normal(0.0, 1.0)
    with pytest.raises(TypeError, match="TransformedDistribution"):
        mgp.TransformedDistribution("normal", mgp.ExpTransform())
    with pytest.raises(TypeError, match="TransformedDistribution"):
        mgp.TransformedDistribution(base, [mgp.ExpTransform(), "exp"])
    folded = mgp.TransformedDistribution(base, mgp.AbsTransform())
    with pytest.raises(NotImplementedError):
        folded.log_prob(arr([1.0]))
    with pytest.raises(NotImplementedError):
        folded.cdf(arr([1.0]))
    with pytest.raises(ValueError):
        mgp.TransformedDistribution(mgp.Normal(0.0, arr([-1.0]), validate_args=True),
                                    mgp.ExpTransform())


def test_transformed_subclass_validates_its_parameters():
    """A subclass (MXNet's HalfNormal pattern) gets its own arg_constraints checked."""

    class Folded(mgp.TransformedDistribution):
        arg_constraints = {"scale": mgp.constraint.Positive()}
        support = mgp.constraint.Positive()

        def __init__(self, scale, validate_args=None):
            self.scale = scale
            super().__init__(mgp.Normal(0.0, scale), mgp.AbsTransform(),
                             validate_args=validate_args)

        def log_prob(self, value):
            value = self._maybe_validate(value)
            return self._base_dist.log_prob(value) + math.log(2)

    d = Folded(arr([1.0, 2.0]), validate_args=True)
    onp.testing.assert_allclose(d.log_prob(arr([0.5, 1.0])).asnumpy(),
                                ss.halfnorm(0, [1.0, 2.0]).logpdf([0.5, 1.0]))
    assert d.sample_n(7).shape == (7, 2)
    with pytest.raises(ValueError, match="scale"):
        Folded(arr([1.0, -2.0]), validate_args=True)
    with pytest.raises(ValueError):
        d.log_prob(arr([0.5, -1.0]))


# ==================================================================== Independent
@pytest.mark.parametrize("ndims", [1, 2])
def test_independent_normal(ndims):
    loc, scale = onp.random.randn(2, 3, 4), onp.random.uniform(0.5, 1.5, (2, 3, 4))
    d = mgp.Independent(mgp.Normal(arr(loc), arr(scale)), ndims)
    axes = tuple(range(-ndims, 0))
    assert d.event_dim == ndims
    assert d._batch_shape() == (2, 3, 4)[:3 - ndims]
    assert d._event_shape() == (2, 3, 4)[3 - ndims:]
    x = onp.random.randn(2, 3, 4)
    onp.testing.assert_allclose(d.log_prob(arr(x)).asnumpy(),
                                ss.norm(loc, scale).logpdf(x).sum(axes), rtol=1e-6)
    onp.testing.assert_allclose(d.entropy().asnumpy(),
                                ss.norm(loc, scale).entropy().sum(axes), rtol=1e-6)
    onp.testing.assert_allclose(d.mean.asnumpy(), loc)
    onp.testing.assert_allclose(d.variance.asnumpy(), scale ** 2, rtol=1e-6)
    assert d.sample().shape == (2, 3, 4)
    draws = d.sample_n(20000).asnumpy()
    assert draws.shape == (20000, 2, 3, 4)
    onp.testing.assert_allclose(draws.mean(0), loc, atol=0.05)
    b = d.broadcast_to((5,) + (2, 3, 4)[:3 - ndims])
    assert b.log_prob(arr(x)).shape == (5,) + (2, 3, 4)[:3 - ndims]


def test_independent_kl_and_gradient():
    lp, sp = onp.random.randn(3, 4), onp.random.uniform(0.5, 1.5, (3, 4))
    lq, sq = onp.random.randn(3, 4), onp.random.uniform(0.5, 1.5, (3, 4))
    p = mgp.Independent(mgp.Normal(arr(lp), arr(sp)), 1)
    q = mgp.Independent(mgp.Normal(arr(lq), arr(sq)), 1)
    ref = (onp.log(sq / sp) + (sp ** 2 + (lp - lq) ** 2) / (2 * sq ** 2) - 0.5).sum(-1)
    onp.testing.assert_allclose(mgp.kl_divergence(p, q).asnumpy(), ref, rtol=1e-6)
    with pytest.raises(NotImplementedError):
        mgp.kl_divergence(p, mgp.Independent(mgp.Normal(arr(lq), arr(sq)), 2))
    # the gradient of log_prob with respect to loc against a finite difference
    x = onp.random.randn(3, 4)
    loc = arr(lp)
    loc.attach_grad()
    with autograd.record():
        out = mgp.Independent(mgp.Normal(loc, arr(sp)), 1).log_prob(arr(x)).sum()
    out.backward()
    f = lambda v: float(  # noqa: E731
        mgp.Independent(mgp.Normal(arr(v), arr(sp)), 1).log_prob(arr(x)).sum())
    onp.testing.assert_allclose(loc.grad.asnumpy(), num_grad(f, lp), rtol=1e-5)


@pytest.mark.parametrize("hybridize", [False, True])
def test_independent_hybridized(hybridize):
    loc, scale = onp.random.randn(2, 3), onp.random.uniform(0.5, 1.5, (2, 3))
    x = onp.random.randn(2, 3)

    def make(loc, scale, x):
        return mgp.Independent(mgp.Normal(loc, scale, validate_args=True), 1,
                               validate_args=True)

    def call(d, loc, scale, x):
        return d.log_prob(x), d.entropy(), d.sample(), mgp.kl_divergence(d, d)

    out = run(make, call, (arr(loc), arr(scale), arr(x)), hybridize)
    onp.testing.assert_allclose(out[0].asnumpy(), ss.norm(loc, scale).logpdf(x).sum(-1),
                                rtol=1e-6)
    onp.testing.assert_allclose(out[1].asnumpy(), ss.norm(loc, scale).entropy().sum(-1),
                                rtol=1e-6)
    assert out[2].shape == (2, 3)
    onp.testing.assert_allclose(out[3].asnumpy(), onp.zeros(2), atol=1e-12)


def test_independent_errors_and_validation():
    base = mgp.Normal(arr(onp.zeros(3)), arr(onp.ones(3)))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        mgp.Independent(base, -1)
    with pytest.raises(TypeError, match="reinterpreted_batch_ndims"):
        mgp.Independent(base, 1.5)
    with pytest.raises(TypeError, match="base_distribution"):
        mgp.Independent("normal", 1)
    d = mgp.Independent(base, 1, validate_args=True)
    with pytest.raises(ValueError):
        d.log_prob(arr([0.0, onp.nan, 1.0]))


def test_independent_of_multivariate_normal():
    cov, _ = spd((2, 3), 4)
    loc = onp.random.randn(2, 3, 4)
    d = mgp.Independent(mgp.MultivariateNormal(arr(loc), cov=arr(cov)), 1)
    assert d.event_dim == 2 and d._batch_shape() == (2,)
    x = onp.random.randn(2, 3, 4)
    ref = onp.array([[ss.multivariate_normal(loc[i, j], cov[i, j]).logpdf(x[i, j])
                      for j in range(3)] for i in range(2)]).sum(-1)
    onp.testing.assert_allclose(d.log_prob(arr(x)).asnumpy(), ref, rtol=1e-6)


# ==================================================================== MultivariateNormal
def mvn_param(kind, cov):
    if kind == "cov":
        return cov
    if kind == "precision":
        return onp.linalg.inv(cov)
    return onp.linalg.cholesky(cov)


SHAPES = [((), ()), ((2,), ()), ((), (2,)), ((4, 2), (2,))]


@pytest.mark.parametrize("kind", ["cov", "precision", "scale_tril"])
@pytest.mark.parametrize("loc_shape, cov_shape", SHAPES)
def test_mvn_log_prob_entropy_matrices(kind, loc_shape, cov_shape):
    n = 3
    cov, _ = spd(cov_shape, n)
    loc = onp.random.randn(*loc_shape, n)
    d = mgp.MultivariateNormal(arr(loc), **{kind: arr(mvn_param(kind, cov))},
                               validate_args=True)
    batch = onp.broadcast_shapes(loc_shape, cov_shape)
    x = onp.random.randn(*batch, n)
    loc_b = onp.broadcast_to(loc, batch + (n,))
    cov_b = onp.broadcast_to(cov, batch + (n, n))
    ref = onp.array([ss.multivariate_normal(loc_b[i], cov_b[i]).logpdf(x[i])
                     for i in onp.ndindex(*batch)]).reshape(batch)
    onp.testing.assert_allclose(d.log_prob(arr(x)).asnumpy(), ref, rtol=1e-6)
    ent = onp.array([ss.multivariate_normal(onp.zeros(n), cov[i]).entropy()
                     for i in onp.ndindex(*cov_shape)]).reshape(cov_shape)
    onp.testing.assert_allclose(d.entropy().asnumpy(), ent, rtol=1e-6)
    onp.testing.assert_allclose(d.cov.asnumpy(), cov, rtol=1e-6, atol=1e-9)
    onp.testing.assert_allclose(d.precision.asnumpy(), onp.linalg.inv(cov), rtol=1e-6,
                                atol=1e-9)
    onp.testing.assert_allclose(d.scale_tril.asnumpy(), onp.linalg.cholesky(cov), rtol=1e-6,
                                atol=1e-9)
    onp.testing.assert_allclose(d.mean.asnumpy(), loc_b)
    onp.testing.assert_allclose(d.variance.asnumpy(),
                                onp.broadcast_to(onp.diagonal(cov, 0, -2, -1), batch + (n,)),
                                rtol=1e-6)
    assert d.sample().shape == batch + (n,)
    assert d.sample_n((5,)).shape == (5,) + batch + (n,)


@pytest.mark.parametrize("kind", ["cov", "precision", "scale_tril"])
def test_mvn_sample_moments(kind):
    n = 3
    cov, _ = spd((2,), n)
    loc = onp.random.randn(2, n)
    d = mgp.MultivariateNormal(arr(loc), **{kind: arr(mvn_param(kind, cov))})
    draws = d.sample_n(50000).asnumpy()
    assert draws.shape == (50000, 2, n)
    onp.testing.assert_allclose(draws.mean(0), loc, atol=0.1)
    centred = draws - draws.mean(0)
    emp_cov = onp.einsum("sbi,sbj->bij", centred, centred) / len(draws)
    # (a transposed factor, L^T eps, would give L^T L: far from cov for these matrices)
    onp.testing.assert_allclose(emp_cov, cov, rtol=0.05, atol=0.05 * onp.abs(cov).max())
    assert d.sample((4, 2)).shape == (4, 2, n)
    with pytest.raises(ValueError, match="size"):
        d.sample((3,))


def test_mvn_log_prob_gradients():
    """d log_prob / d loc = Sigma^-1 (x - loc), and the gradient with respect to A (cov =
    A A^T + I) against a finite difference: checks cholesky's and solve's backward."""
    n = 3
    cov, a = spd((), n)
    loc, x = onp.random.randn(n), onp.random.randn(n)

    def log_prob(loc, a, x):
        cov = np.matmul(a, np.swapaxes(a, -1, -2)) + np.eye(n, dtype="float64")
        return mgp.MultivariateNormal(loc, cov=cov).log_prob(x)

    loc_a, a_a = arr(loc), arr(a)
    loc_a.attach_grad()
    a_a.attach_grad()
    with autograd.record():
        out = log_prob(loc_a, a_a, arr(x))
    out.backward()
    onp.testing.assert_allclose(loc_a.grad.asnumpy(), onp.linalg.solve(cov, x - loc),
                                rtol=1e-6)
    f = lambda v: float(log_prob(arr(loc), arr(v), arr(x)))  # noqa: E731
    onp.testing.assert_allclose(a_a.grad.asnumpy(), num_grad(f, a), rtol=1e-5, atol=1e-8)


def test_mvn_sample_pathwise_gradient():
    """Samples are loc + L eps: with the noise fixed by the seed, the gradient of a function
    of the samples with respect to A matches a finite difference."""
    n = 3
    _, a = spd((2,), n)
    loc = onp.random.randn(2, n)
    weights = onp.random.randn(5, 2, n)

    def objective(loc, a):
        cov = np.matmul(a, np.swapaxes(a, -1, -2)) + np.eye(n, dtype="float64")
        mx.random.seed(7)
        return (mgp.MultivariateNormal(loc, cov=cov).sample_n(5) * arr(weights)).sum()

    loc_a, a_a = arr(loc), arr(a)
    loc_a.attach_grad()
    a_a.attach_grad()
    with autograd.record():
        out = objective(loc_a, a_a)
    out.backward()
    onp.testing.assert_allclose(loc_a.grad.asnumpy(), weights.sum(0), rtol=1e-6)
    f = lambda v: float(objective(arr(loc), arr(v)))  # noqa: E731
    onp.testing.assert_allclose(a_a.grad.asnumpy(), num_grad(f, a), rtol=1e-5, atol=1e-7)


def kl_mvn_numpy(mp, cp, mq, cq):
    n = mp.shape[-1]
    qinv = onp.linalg.inv(cq)
    diff = mq - mp
    return 0.5 * (onp.trace(qinv @ cp, axis1=-2, axis2=-1)
                  + onp.einsum("...i,...ij,...j->...", diff, qinv, diff) - n
                  + onp.linalg.slogdet(cq)[1] - onp.linalg.slogdet(cp)[1])


@pytest.mark.parametrize("kinds", [("cov", "cov"), ("precision", "scale_tril"),
                                   ("scale_tril", "precision")])
def test_mvn_kl(kinds):
    n = 4
    cp, _ = spd((3,), n)
    cq, _ = spd((), n)
    mp, mq = onp.random.randn(3, n), onp.random.randn(2, 1, n)
    p = mgp.MultivariateNormal(arr(mp), **{kinds[0]: arr(mvn_param(kinds[0], cp))})
    q = mgp.MultivariateNormal(arr(mq), **{kinds[1]: arr(mvn_param(kinds[1], cq))})
    kl = mgp.kl_divergence(p, q).asnumpy()
    assert kl.shape == (2, 3)
    onp.testing.assert_allclose(kl, kl_mvn_numpy(mp, cp, mq, cq), rtol=1e-6)
    onp.testing.assert_allclose(mgp.kl_divergence(p, p).asnumpy(), onp.zeros(3), atol=1e-10)


@pytest.mark.parametrize("kind", ["cov", "precision", "scale_tril"])
def test_mvn_hybridized(kind):
    n = 3
    cov, _ = spd((2,), n)
    loc, x = onp.random.randn(2, n), onp.random.randn(2, n)

    def make(loc, matrix, x):
        return mgp.MultivariateNormal(loc, **{kind: matrix}, validate_args=True)

    def call(d, loc, matrix, x):
        return d.log_prob(x), d.entropy(), d.sample(), mgp.kl_divergence(d, d)

    loc_a, m_a = arr(loc), arr(mvn_param(kind, cov))
    loc_a.attach_grad()
    net = Invoke(make, call)
    net.hybridize()
    net(loc_a, m_a, arr(x))
    with autograd.record():
        out = net(loc_a, m_a, arr(x))
    out[2].backward()
    ref = [ss.multivariate_normal(loc[i], cov[i]) for i in range(2)]
    onp.testing.assert_allclose(out[0].asnumpy(), [r.logpdf(x[i]) for i, r in enumerate(ref)],
                                rtol=1e-6)
    onp.testing.assert_allclose(out[1].asnumpy(), [r.entropy() for r in ref], rtol=1e-6)
    assert out[2].shape == (2, n)
    onp.testing.assert_allclose(out[3].asnumpy(), onp.zeros(2), atol=1e-10)
    onp.testing.assert_allclose(loc_a.grad.asnumpy(), onp.ones((2, n)))
    bad = -onp.eye(n) if kind != "scale_tril" else onp.ones((n, n))
    with pytest.raises(ValueError):
        net(loc_a, arr(onp.broadcast_to(bad, (2, n, n))), arr(x))


@pytest.mark.parametrize("kwargs, error, match", [
    ({}, ValueError, "exactly one"),
    ({"cov": "eye", "precision": "eye"}, ValueError, "exactly one"),
    ({"cov": "nonsym"}, ValueError, "cov"),
    ({"cov": "negdef"}, ValueError, "cov"),
    ({"precision": "negdef"}, ValueError, "precision"),
    ({"scale_tril": "upper"}, ValueError, "scale_tril"),
    ({"scale_tril": "negdiag"}, ValueError, "scale_tril"),
    ({"cov": "rect"}, ValueError, "square"),
    ({"cov": "big"}, ValueError, "components"),
    ({"cov": "list"}, TypeError, "cov"),
])
def test_mvn_argument_errors(kwargs, error, match):
    mats = {"eye": onp.eye(3), "nonsym": onp.eye(3) + onp.triu(onp.ones((3, 3)), 1),
            "negdef": -onp.eye(3), "upper": onp.triu(onp.ones((3, 3))),
            "negdiag": onp.diag([1.0, -1.0, 1.0]), "rect": onp.ones((3, 2)),
            "big": onp.eye(4)}
    given = {k: ([[1.0]] if v == "list" else arr(mats[v])) for k, v in kwargs.items()}
    with pytest.raises(error, match=match):
        mgp.MultivariateNormal(arr(onp.zeros(3)), validate_args=True, **given)


def test_mvn_loc_errors():
    with pytest.raises(ValueError, match="loc"):
        mgp.MultivariateNormal(arr(0.0), cov=arr(onp.eye(1)))
    with pytest.raises(TypeError, match="loc"):
        mgp.MultivariateNormal([0.0, 0.0], cov=arr(onp.eye(2)))
    d = mgp.MultivariateNormal(arr(onp.zeros(2)), cov=arr(onp.eye(2)), validate_args=True)
    with pytest.raises(ValueError):
        d.log_prob(arr([onp.nan, 0.0]))


# ==================================================================== StochasticBlock
class VAE(StochasticBlock):
    """An encoder giving the posterior N(loc, exp(log_scale)) of a 2-d code, a decoder from
    a reparameterized sample; the KL to the N(0, I) prior is collected as a loss."""

    def __init__(self):
        super().__init__()
        self.encoder = gluon.nn.Dense(4, in_units=5)
        self.decoder = gluon.nn.Dense(5, in_units=2)

    @StochasticBlock.collectLoss
    def forward(self, x):
        h = self.encoder(x)
        loc, log_scale = h[:, :2], h[:, 2:]
        qz = mgp.Independent(mgp.Normal(loc, np.exp(log_scale)), 1)
        pz = mgp.Independent(mgp.Normal(np.zeros_like(loc), np.ones_like(loc)), 1)
        self.add_loss(mgp.kl_divergence(qz, pz))
        self.add_loss((loc ** 2).sum(-1))
        # (Bernoulli means of the reconstruction)
        return npx.sigmoid(self.decoder(qz.sample()))


@pytest.mark.parametrize("hybridize", [False, True])
def test_stochastic_block_vae(hybridize):
    net = VAE()
    net.initialize()
    if hybridize:
        net.hybridize()
    x = onp.random.randn(6, 5).astype("float32")
    for _ in range(2):  # (hybridized: a trace, then a replay)
        with autograd.record():
            out = net(np.array(x))
            kl, l2 = net.losses
            kl.sum().backward()
    assert out.shape == (6, 5) and len(net.losses) == 2
    w, b = net.encoder.weight.data().asnumpy(), net.encoder.bias.data().asnumpy()
    h = x @ w.T + b
    loc, scale = h[:, :2], onp.exp(h[:, 2:])
    ref = (0.5 * (scale ** 2 + loc ** 2 - 1) - onp.log(scale)).sum(-1)
    onp.testing.assert_allclose(kl.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(l2.asnumpy(), (loc ** 2).sum(-1), rtol=1e-5)
    # the KL does not depend on the sample: its gradient has a closed form
    dh = onp.concatenate([loc, scale ** 2 - 1], axis=1)
    onp.testing.assert_allclose(net.encoder.weight.grad().asnumpy(), dh.T @ x, rtol=1e-4,
                                atol=1e-5)
    assert onp.all(net.decoder.weight.grad().asnumpy() == 0)  # (grad_req write, KL only)


class Adds(StochasticBlock):
    @StochasticBlock.collectLoss
    def forward(self, x):
        self.add_loss(x ** 2)
        self.add_loss(x - 1)
        return x + 1


class Plus1(HybridBlock):
    def forward(self, x):
        return x + 1


class Undecorated(StochasticBlock):
    def forward(self, x):
        return x + 1


class UndecoratedPair(StochasticBlock):
    def forward(self, x):
        return x + 1, x


@pytest.mark.parametrize("hybridize", [False, True])
def test_stochastic_sequential_collects_children_losses(hybridize):
    net = StochasticSequential()
    net.add(Adds(), Plus1(), Adds(), Plus1())
    if hybridize:
        net.hybridize()
    ones = onp.ones((4, 4))
    for v in [1.0, 2.0]:  # (hybridized: a trace, then a replay with other values)
        out = net(np.array(v * ones))
    onp.testing.assert_allclose(out.asnumpy(), (v + 4) * ones)
    assert len(net.losses) == 2 and len(net) == 4
    # the first Adds sees v, the second v + 2
    expected = [[v ** 2 * ones, (v - 1) * ones], [(v + 2) ** 2 * ones, (v + 1) * ones]]
    for got, want in zip(net.losses, expected):
        assert len(got) == 2
        for g, w in zip(got, want):
            onp.testing.assert_allclose(g.asnumpy(), w)
    # each child holds its own losses too, also after a replayed (hybridized) call
    for child, want in zip([net[0], net[2]], expected):
        onp.testing.assert_allclose(child.losses[0].asnumpy(), want[0])
        onp.testing.assert_allclose(child.losses[1].asnumpy(), want[1])
    assert isinstance(net[1:], StochasticSequential) and len(net[1:]) == 3


def test_nested_stochastic_sequential_hybridized():
    inner = StochasticSequential()
    inner.add(Plus1(), Adds())
    outer = StochasticSequential()
    outer.add(Adds(), inner)
    outer.hybridize()
    ones = onp.ones(3)
    for v in [1.0, 3.0]:  # (a trace, then a replay with other values)
        out = outer(np.array(v * ones))
    onp.testing.assert_allclose(out.asnumpy(), (v + 3) * ones)
    # outer.losses: [losses of Adds (at v), losses of inner = [losses of its Adds (at v + 2)]]
    onp.testing.assert_allclose(outer.losses[0][0].asnumpy(), v ** 2 * ones)
    onp.testing.assert_allclose(outer.losses[1][0][1].asnumpy(), (v + 1) * ones)
    onp.testing.assert_allclose(inner.losses[0][0].asnumpy(), (v + 2) ** 2 * ones)
    onp.testing.assert_allclose(inner[1].losses[1].asnumpy(), (v + 1) * ones)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("block", [Undecorated, UndecoratedPair])
def test_stochastic_block_requires_collect_loss(block, hybridize):
    net = block()
    if hybridize:
        net.hybridize()
    for _ in range(2):  # (hybridized: the second call would replay a cached graph)
        with pytest.raises(ValueError, match="collectLoss"):
            net(np.ones((2, 2)))
    seq = StochasticSequential()
    seq.add(Adds(), block())
    if hybridize:
        seq.hybridize()
    with pytest.raises(ValueError, match="collectLoss"):
        seq(np.ones((2, 2)))


def test_stochastic_block_losses_reset_each_call():
    net = Adds()
    net(np.ones(3))
    net(2 * np.ones(3))
    assert len(net.losses) == 2
    onp.testing.assert_allclose(net.losses[0].asnumpy(), 4 * onp.ones(3))


def test_stochastic_block_export(tmp_path):
    net = VAE()
    net.initialize()
    net.hybridize()
    net(np.ones((2, 5)))
    for path in net.export(str(tmp_path / "vae"), epoch=0):
        assert os.path.exists(path)
