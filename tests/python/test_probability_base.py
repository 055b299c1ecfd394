"""gluon.probability's base: Normal (the template distribution), constraints, the KL registry,
the exponential-family fallbacks and the probability utilities. References: scipy.stats, closed
forms computed here with NumPy, and finite differences."""
import math

import numpy as onp
import pytest
import scipy.special
import scipy.stats as ss

import ndx as mx
import ndx.gluon.probability as mgp
from ndx import autograd, np
from ndx.gluon import HybridBlock
from ndx.gluon.probability.distributions import divergence

SHAPES = [(), (1,), (2, 3)]


def _params(shape, seed=0):
    rng = onp.random.RandomState(seed)
    loc = rng.uniform(-1, 1, shape).astype("float32")
    scale = rng.uniform(0.5, 1.5, shape).astype("float32")
    return loc, scale


class _NormalMethod(HybridBlock):
    def __init__(self, method):
        super().__init__()
        self._method = method

    def forward(self, loc, scale, *args):
        dist = mgp.Normal(loc, scale, validate_args=True)
        out = getattr(dist, self._method)
        return out(*args) if callable(out) else out


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("method", ["log_prob", "cdf", "icdf", "entropy", "pdf"])
def test_normal_methods_match_scipy(shape, hybridize, method):
    loc, scale = _params(shape)
    rng = onp.random.RandomState(1)
    value = rng.uniform(0.05, 0.95, shape) if method == "icdf" else rng.normal(size=shape)
    value = value.astype("float32")
    ref_dist = ss.norm(loc, scale)
    reference = {"log_prob": ref_dist.logpdf, "cdf": ref_dist.cdf, "icdf": ref_dist.ppf,
                 "pdf": ref_dist.pdf, "entropy": lambda _: ref_dist.entropy()}[method](value)
    net = _NormalMethod(method)
    if hybridize:
        net.hybridize()
    args = () if method == "entropy" else (np.array(value),)
    for _ in range(2):  # (the second call of a hybridized block replays its graph)
        out = net(np.array(loc), np.array(scale), *args)
        onp.testing.assert_allclose(out.asnumpy(), reference, rtol=1e-4, atol=1e-5)


def test_normal_moments_and_sample_shapes():
    mx.random.seed(7)
    loc, scale = _params((2, 3))
    dist = mgp.Normal(np.array(loc), np.array(scale))
    onp.testing.assert_allclose(dist.mean.asnumpy(), loc)
    onp.testing.assert_allclose(dist.stddev.asnumpy(), scale)
    onp.testing.assert_allclose(dist.variance.asnumpy(), scale ** 2, rtol=1e-6)
    assert dist.sample().shape == (2, 3)
    assert dist.sample((4, 2, 3)).shape == (4, 2, 3)
    assert dist.sample_n(5).shape == (5, 2, 3)
    assert dist.sample_n((5, 6)).shape == (5, 6, 2, 3)
    draws = dist.sample_n(40000).asnumpy()
    # Standard errors: scale / 200 for the mean, about scale^2 / 140 for the variance.
    onp.testing.assert_allclose(draws.mean(0), loc, atol=0.03)
    onp.testing.assert_allclose(draws.var(0), scale ** 2, rtol=0.05)
    onp.testing.assert_allclose(dist.perplexity().asnumpy(),
                                onp.exp(ss.norm(loc, scale).entropy()), rtol=1e-5)


def test_normal_scalar_parameters_and_broadcast_to():
    dist = mgp.Normal(0.5, 2.0)
    assert dist.sample().shape == ()
    assert dist.sample_n(3).shape == (3,)
    value = np.array([0.0, 1.0, -3.0])
    onp.testing.assert_allclose(dist.log_prob(value).asnumpy(),
                                ss.norm(0.5, 2.0).logpdf([0.0, 1.0, -3.0]), rtol=1e-5)
    wide = mgp.Normal(np.array([0.0, 1.0]), 1.0).broadcast_to((3, 2))
    assert wide.loc.shape == (3, 2) and wide.scale.shape == (3, 2)
    assert wide.sample().shape == (3, 2)
    onp.testing.assert_allclose(wide.mean.asnumpy(), [[0.0, 1.0]] * 3)
    assert repr(wide) == "Normal(loc: size (3, 2), scale: size (3, 2), event_dim: 0)"


def test_normal_log_prob_gradient_matches_finite_differences():
    loc, scale = _params((3,))
    value = onp.array([0.3, -1.2, 2.0], dtype="float64")
    loc64, scale64 = loc.astype("float64"), scale.astype("float64")
    x_loc, x_scale = np.array(loc64), np.array(scale64)
    x_loc.attach_grad()
    x_scale.attach_grad()
    with autograd.record():
        total = mgp.Normal(x_loc, x_scale).log_prob(np.array(value)).sum()
    total.backward()

    def f(loc_, scale_):
        return ss.norm(loc_, scale_).logpdf(value).sum()

    eps = 1e-6
    for i in range(3):
        step = onp.zeros(3)
        step[i] = eps
        d_loc = (f(loc64 + step, scale64) - f(loc64 - step, scale64)) / (2 * eps)
        d_scale = (f(loc64, scale64 + step) - f(loc64, scale64 - step)) / (2 * eps)
        assert abs(x_loc.grad.asnumpy()[i] - d_loc) < 1e-5
        assert abs(x_scale.grad.asnumpy()[i] - d_scale) < 1e-5


def test_normal_samples_are_reparameterized():
    # d sample / d loc = 1 and d sample / d scale = (sample - loc) / scale, per element.
    mx.random.seed(3)
    loc, scale = np.array([0.5, -1.0]), np.array([2.0, 0.5])
    loc.attach_grad()
    scale.attach_grad()
    with autograd.record():
        s = mgp.Normal(loc, scale).sample()
    s.backward()
    onp.testing.assert_allclose(loc.grad.asnumpy(), [1.0, 1.0])
    expected = (s.asnumpy() - [0.5, -1.0]) / onp.array([2.0, 0.5])
    onp.testing.assert_allclose(scale.grad.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert mgp.Normal.has_grad


def _kl_normal_reference(m1, s1, m2, s2):
    return onp.log(s2 / s1) + (s1 ** 2 + (m1 - m2) ** 2) / (2 * s2 ** 2) - 0.5


def test_normal_kl_closed_form_and_exponential_family_fallback():
    m1, s1 = _params((2, 3), seed=2)
    m2, s2 = _params((2, 3), seed=3)
    p = mgp.Normal(np.array(m1), np.array(s1))
    q = mgp.Normal(np.array(m2), np.array(s2))
    reference = _kl_normal_reference(m1, s1, m2, s2)
    onp.testing.assert_allclose(mgp.kl_divergence(p, q).asnumpy(), reference,
                                rtol=1e-4, atol=1e-6)
    # The generic Bregman-divergence KL of the exponential family gives the same numbers.
    onp.testing.assert_allclose(divergence._kl_exponential_family(p, q).asnumpy(), reference,
                                rtol=1e-3, atol=1e-5)
    # And the generic entropy (log normalizer and its gradient) matches scipy's.
    onp.testing.assert_allclose(mgp.ExponentialFamily.entropy(p).asnumpy(),
                                ss.norm(m1, s1).entropy(), rtol=1e-4)


def test_empirical_kl_estimates_the_normal_kl():
    mx.random.seed(11)
    p = mgp.Normal(np.array([0.0, 1.0]), np.array([1.0, 0.5]))
    q = mgp.Normal(np.array([0.5, 0.0]), np.array([1.5, 1.0]))
    estimate = mgp.empirical_kl(p, q, n_samples=100000).asnumpy()
    reference = _kl_normal_reference(onp.array([0.0, 1.0]), onp.array([1.0, 0.5]),
                                     onp.array([0.5, 0.0]), onp.array([1.5, 1.0]))
    onp.testing.assert_allclose(estimate, reference, atol=0.02)


def test_kl_registry_takes_the_most_specific_match_and_reports_missing_pairs():
    class Wide(mgp.Normal):
        pass

    class Wider(Wide):
        pass

    calls = []

    @mgp.register_kl(Wide, mgp.Normal)
    def _wide(p, q):
        calls.append("wide")
        return 0.0

    try:
        p, q = Wider(0.0, 1.0), mgp.Normal(0.0, 2.0)
        assert mgp.kl_divergence(p, q) == 0.0 and calls == ["wide"]
        # Normal-Normal is still the closed form for plain normals.
        got = mgp.kl_divergence(mgp.Normal(0.0, 1.0), mgp.Normal(0.0, 2.0))
        assert abs(float(got) - _kl_normal_reference(0.0, 1.0, 0.0, 2.0)) < 1e-6
    finally:
        del divergence._KL_REGISTRY[Wide, mgp.Normal]
        divergence._lookup.cache = {}

    class Other(mgp.Distribution):
        pass

    with pytest.raises(NotImplementedError, match="Other and Normal"):
        mgp.kl_divergence(Other(), mgp.Normal(0.0, 1.0))
    with pytest.raises(TypeError, match="register_kl"):
        mgp.register_kl(int, mgp.Normal)


def test_validate_args_rejects_bad_parameters_and_values():
    with pytest.raises(ValueError, match="Normal: scale should be > 0"):
        mgp.Normal(np.zeros(2), np.array([1.0, -1.0]), validate_args=True)
    with pytest.raises(ValueError, match="Normal: scale"):
        mgp.Normal(0.0, 0.0, validate_args=True)
    with pytest.raises(ValueError, match="not NaN"):
        mgp.Normal(np.array([float("nan")]), 1.0, validate_args=True)
    dist = mgp.Normal(0.0, 1.0, validate_args=True)
    with pytest.raises(ValueError, match="the value"):
        dist.log_prob(np.array([0.0, float("nan")]))
    # Without validation nothing is checked (as MXNet's default).
    assert math.isnan(float(mgp.Normal(0.0, -1.0).log_prob(np.array(0.0))))


def test_validation_inside_a_hybridized_block_raises_at_run_time():
    net = _NormalMethod("log_prob")
    net.hybridize()
    x = np.array([0.1, 0.2])
    net(np.zeros(2), np.ones(2), x)
    with pytest.raises(ValueError, match="scale"):
        net(np.zeros(2), -np.ones(2), x)


def test_set_default_validate_args():
    try:
        mgp.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            mgp.Normal(0.0, -1.0)
        assert math.isnan(float(mgp.Normal(0.0, -1.0, validate_args=False)
                                .log_prob(np.array(0.0))))
    finally:
        mgp.Distribution.set_default_validate_args(False)
    with pytest.raises(ValueError, match="True or False"):
        mgp.Distribution.set_default_validate_args("yes")


@pytest.mark.parametrize("constraint, good, bad", [
    (mgp.Real(), [0.0, -3.0, 2.0 ** 100], [float("nan")]),
    (mgp.Boolean(), [0.0, 1.0], [0.5]),
    (mgp.Interval(0, 1), [0.0, 0.5, 1.0], [1.5]),
    (mgp.OpenInterval(0, 1), [0.5], [0.0]),
    (mgp.HalfOpenInterval(0, 1), [0.0], [1.0]),
    (mgp.UnitInterval(), [1.0], [-0.1]),
    (mgp.IntegerInterval(0, 3), [0.0, 3.0], [1.5]),
    (mgp.IntegerOpenInterval(0, 3), [1.0, 2.0], [3.0]),
    (mgp.IntegerHalfOpenInterval(0, 3), [0.0], [3.0]),
    (mgp.GreaterThan(1), [1.5], [1.0]),
    (mgp.GreaterThanEq(1), [1.0], [0.5]),
    (mgp.LessThan(1), [0.5], [1.0]),
    (mgp.LessThanEq(1), [1.0], [1.5]),
    (mgp.IntegerGreaterThan(1), [2.0], [1.0]),
    (mgp.IntegerGreaterThanEq(1), [1.0], [1.5]),
    (mgp.IntegerLessThan(1), [0.0], [1.0]),
    (mgp.IntegerLessThanEq(1), [1.0], [0.5]),
    (mgp.Positive(), [1e-3], [0.0]),
    (mgp.NonNegative(), [0.0], [-1e-3]),
    (mgp.PositiveInteger(), [1.0], [0.0]),
    (mgp.NonNegativeInteger(), [0.0], [-1.0]),
])
def test_scalar_constraints(constraint, good, bad):
    value = np.array(good)
    onp.testing.assert_allclose(constraint.check(value).asnumpy(), good, rtol=1e-7)
    with pytest.raises(ValueError, match="Constraint violated"):
        constraint.check(np.array(good + bad))
    with pytest.raises(ValueError, match="Constraint violated"):
        constraint.check(bad[0])


def test_matrix_constraints():
    simplex = onp.array([[0.2, 0.8], [0.5, 0.5]], dtype="float32")
    onp.testing.assert_allclose(mgp.Simplex().check(np.array(simplex)).asnumpy(), simplex)
    with pytest.raises(ValueError):
        mgp.Simplex().check(np.array([[0.2, 0.7]]))
    with pytest.raises(ValueError):
        mgp.Simplex().check(np.array([[-0.2, 1.2]]))
    lower = onp.array([[1.0, 0.0], [2.0, 3.0]], dtype="float32")
    mgp.LowerTriangular().check(np.array(lower))
    mgp.LowerCholesky().check(np.array(lower))
    with pytest.raises(ValueError):
        mgp.LowerTriangular().check(np.array(lower.T))
    with pytest.raises(ValueError):
        mgp.LowerCholesky().check(np.array([[1.0, 0.0], [2.0, -3.0]]))
    spd = onp.array([[2.0, 0.5], [0.5, 1.0]], dtype="float32")
    mgp.PositiveDefinite().check(np.array(spd))
    with pytest.raises(ValueError):
        mgp.PositiveDefinite().check(np.array([[1.0, 2.0], [2.0, 1.0]]))  # eigenvalue -1
    with pytest.raises(ValueError):
        mgp.PositiveDefinite().check(np.array([[2.0, 0.5], [0.0, 1.0]]))  # not symmetric


def test_cat_and_stack_constraints():
    cat = mgp.Cat([mgp.Positive(), mgp.Real()], axis=0, lengths=[2, 1])
    onp.testing.assert_allclose(cat.check(np.array([1.0, 2.0, -5.0])).asnumpy(), [1, 2, -5])
    with pytest.raises(ValueError):
        cat.check(np.array([1.0, -2.0, -5.0]))
    stack = mgp.Stack([mgp.Positive(), mgp.Real()], axis=1)
    stack.check(np.array([[1.0, -1.0], [2.0, -3.0]]))
    with pytest.raises(ValueError):
        stack.check(np.array([[-1.0, -1.0], [2.0, -3.0]]))
    with pytest.raises(ValueError, match="2 constraints for 3"):
        stack.check(np.zeros((2, 3)))
    with pytest.raises(TypeError):
        mgp.Cat([mgp.Positive(), "real"])


def test_utils_against_hand_computations():
    utils = mgp.utils
    p = onp.array([0.1, 0.5, 0.9], dtype="float32")
    onp.testing.assert_allclose(utils.prob2logit(np.array(p)).asnumpy(),
                                scipy.special.logit(p), rtol=1e-5)
    onp.testing.assert_allclose(utils.logit2prob(np.array(scipy.special.logit(p))).asnumpy(),
                                p, rtol=1e-5)
    logits = onp.array([[1.0, 2.0, 3.0]], dtype="float32")
    onp.testing.assert_allclose(utils.logit2prob(np.array(logits), binary=False).asnumpy(),
                                scipy.special.softmax(logits, axis=-1), rtol=1e-5)
    onp.testing.assert_allclose(utils.prob2logit(np.array(p), binary=False).asnumpy(),
                                onp.log(p), rtol=1e-5)
    x = onp.arange(24, dtype="float32").reshape(2, 3, 4)
    onp.testing.assert_allclose(utils.sum_right_most(np.array(x), 2).asnumpy(),
                                x.sum(axis=(1, 2)))
    assert utils.sum_right_most(np.array(x), 0).shape == (2, 3, 4)
    assert abs(utils.gammaln(4.5) - math.lgamma(4.5)) < 1e-12
    assert abs(utils.digamma(2.0) - scipy.special.digamma(2.0)) < 1e-10
    assert abs(utils.erfinv(0.5) - scipy.special.erfinv(0.5)) < 1e-12
    onp.testing.assert_allclose(utils.erf(np.array([0.5, -1.0])).asnumpy(),
                                scipy.special.erf([0.5, -1.0]), rtol=1e-6)
    assert utils.as_size_tuple(None) == () and utils.as_size_tuple(3) == (3,)
    with pytest.raises(ValueError):
        utils.as_size_tuple((2, -1))
    with pytest.raises(TypeError):
        utils.as_size_tuple(2.5)


def test_cached_property_computes_once():
    calls = []

    class Thing:
        @mgp.utils.cached_property
        def value(self):
            calls.append(1)
            return 42

    t = Thing()
    assert t.value == 42 and t.value == 42 and calls == [1]


def test_getF_follows_mxnet():  # noqa: N802
    getF = mgp.utils.getF  # noqa: N806
    assert getF(mx.nd.ones((2, 2)), np.ones(2)) is mx.nd
    assert getF(1.0, 2.0) is mx.nd
    assert getF(mx.sym.var("a")) is mx.sym
    with pytest.raises(TypeError):
        getF(np.ones(2), mx.sym.var("a"))


def test_unimplemented_methods_name_the_class():
    class Bare(mgp.Distribution):
        pass

    dist = Bare()
    for call in (lambda: dist.log_prob(0.0), lambda: dist.sample(), lambda: dist.mean,
                 lambda: dist.entropy(), lambda: dist.cdf(0.0)):
        with pytest.raises(NotImplementedError, match="Bare"):
            call()


def test_stochastic_block_collects_a_kl_loss():
    class Encoder(mgp.StochasticBlock):
        @mgp.StochasticBlock.collectLoss
        def forward(self, loc, scale):
            qz = mgp.Normal(loc, scale)
            pz = mgp.Normal(np.zeros_like(loc), np.ones_like(scale))
            self.add_loss(mgp.kl_divergence(qz, pz))
            return qz.sample()

    loc, scale = _params((2, 3), seed=5)
    reference = _kl_normal_reference(loc, scale, 0.0, 1.0)
    for hybridize in (False, True):
        net = Encoder()
        if hybridize:
            net.hybridize()
        for _ in range(2):
            out = net(np.array(loc), np.array(scale))
            assert out.shape == (2, 3)
            assert len(net.losses) == 1
            onp.testing.assert_allclose(net.losses[0].asnumpy(), reference, rtol=1e-4)

    class Undecorated(mgp.StochasticBlock):
        def forward(self, x):
            return x

    with pytest.raises(ValueError, match="collectLoss"):
        Undecorated()(np.ones(2))


def test_validate_args_in_F_s_position_follows_mxnet_2_signatures():  # noqa: N802
    # MXNet 2.0's final signatures have no F: Normal(loc, scale, validate_args).
    with pytest.raises(ValueError, match="scale"):
        mgp.Normal(0.0, -1.0, True)
    assert mgp.Normal(0.0, 1.0, False)._validate_args is False


def test_getF_namespace_has_np_and_npx_as_mxnet_code_uses_it():  # noqa: N802
    # MXNet 1.x-style distribution code: F = getF(x); F.np.exp(...); F.npx.sigmoid(...).
    F = mgp.utils.getF(np.zeros(2))  # noqa: N806
    onp.testing.assert_allclose(F.npx.sigmoid(np.zeros(2)).asnumpy(), [0.5, 0.5])
    onp.testing.assert_allclose(F.np.exp(np.zeros(2)).asnumpy(), [1.0, 1.0])
