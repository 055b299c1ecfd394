"""Tests of the continuous univariate distributions of gluon.probability (Uniform, Laplace,
Cauchy, HalfCauchy, HalfNormal, Exponential, Gamma, Beta, Chi2, StudentT, FisherSnedecor,
Gumbel, Weibull, Pareto) and Dirichlet, with their KL divergences.

References are independent: scipy.stats (logpdf / cdf / ppf / entropy / mean / var), numeric
integration of KL(p || q) with scipy.integrate.quad (a Monte Carlo estimate from NumPy's
sampler for Dirichlet), finite differences of log_prob, the analytic derivative of each
reparameterized sample, and the empirical cdf / moments of many draws."""
import math

import numpy as onp
import pytest
import scipy.integrate as si
import scipy.special
import scipy.stats as ss

import ndx as mx
import ndx.gluon.probability as mgp
from ndx import autograd, np, npx
from ndx.gluon import HybridBlock
from ndx.gluon.probability.distributions import divergence

SHAPES = [(), (1,), (2, 3)]


@pytest.fixture(autouse=True)
def _seed():
    mx.random.seed(1234)
    npx.random.seed(1234)
    onp.random.seed(1234)


def _rng():
    return onp.random.default_rng(7)


# name -> (class, parameter draws (rng, shape) -> list of float64 arrays, scipy frozen
#          distribution from those, values in the support (rng, shape), methods with a
#          closed form besides log_prob / mean / variance / entropy)
def _u(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


SPECS = {
    "Uniform": (mgp.Uniform, [_u(-1, 0), _u(1, 2)], lambda p: ss.uniform(p[0], p[1] - p[0]),
                _u(0, 1), ("cdf", "icdf")),
    "Laplace": (mgp.Laplace, [_u(-1, 1), _u(0.5, 1.5)], lambda p: ss.laplace(p[0], p[1]),
                _u(-2, 2), ("cdf", "icdf")),
    "Cauchy": (mgp.Cauchy, [_u(-1, 1), _u(0.5, 1.5)], lambda p: ss.cauchy(p[0], p[1]),
               _u(-3, 3), ("cdf", "icdf")),
    "HalfCauchy": (mgp.HalfCauchy, [_u(0.5, 1.5)], lambda p: ss.halfcauchy(0, p[0]),
                   _u(0, 3), ("cdf", "icdf")),
    "HalfNormal": (mgp.HalfNormal, [_u(0.5, 1.5)], lambda p: ss.halfnorm(0, p[0]),
                   _u(0, 3), ("cdf", "icdf")),
    "Exponential": (mgp.Exponential, [_u(0.5, 1.5)], lambda p: ss.expon(0, p[0]),
                    _u(0, 3), ("cdf", "icdf")),
    "Gamma": (mgp.Gamma, [_u(0.5, 3), _u(0.5, 1.5)], lambda p: ss.gamma(p[0], 0, p[1]),
              _u(0.1, 3), ()),
    "Beta": (mgp.Beta, [_u(0.5, 3), _u(0.5, 3)], lambda p: ss.beta(p[0], p[1]),
             _u(0.05, 0.95), ()),
    "Chi2": (mgp.Chi2, [_u(0.5, 6)], lambda p: ss.chi2(p[0]), _u(0.1, 4), ()),
    "StudentT": (mgp.StudentT, [_u(4.5, 8), _u(-1, 1), _u(0.5, 1.5)],
                 lambda p: ss.t(p[0], p[1], p[2]), _u(-3, 3), ()),
    "FisherSnedecor": (mgp.FisherSnedecor, [_u(0.5, 6), _u(9, 12)],
                       lambda p: ss.f(p[0], p[1]), _u(0.1, 3), ()),
    "Gumbel": (mgp.Gumbel, [_u(-1, 1), _u(0.5, 1.5)], lambda p: ss.gumbel_r(p[0], p[1]),
               _u(-2, 3), ("cdf", "icdf")),
    "Weibull": (mgp.Weibull, [_u(0.5, 3), _u(0.5, 1.5)],
                lambda p: ss.weibull_min(p[0], 0, p[1]), _u(0.1, 3), ("cdf", "icdf")),
    "Pareto": (mgp.Pareto, [_u(4.5, 6), _u(0.5, 1)], lambda p: ss.pareto(p[0], 0, p[1]),
               _u(1, 3), ("cdf", "icdf")),
}
NAMES = list(SPECS)


def _params(name, shape, rng=None):
    rng = rng or _rng()
    return [f(rng, shape) for f in SPECS[name][1]]


def _nd(a, dtype="float32"):
    return np.array(onp.asarray(a, dtype=dtype))


def _close(actual, expected, rtol=1e-4, atol=1e-5):
    actual = actual.asnumpy() if hasattr(actual, "asnumpy") else onp.asarray(actual)
    onp.testing.assert_allclose(actual.astype("float64"), expected, rtol=rtol, atol=atol)


class _Call(HybridBlock):
    """Builds the distribution in forward (validate_args=True, as MXNet's tests do) and
    returns one method or property of it."""

    def __init__(self, cls, nparams, method, options=()):
        super().__init__()
        self._cls, self._n, self._method, self._options = cls, nparams, method, options

    def forward(self, *args):
        dist = self._cls(*args[:self._n], validate_args=True)
        attr = getattr(dist, self._method)
        return attr(*args[self._n:], *self._options) if callable(attr) else attr


def _run(cls, params, method, *args, hybridize=False, options=()):
    """``method`` of ``cls(*params)`` at the arrays ``args`` (and the Python values
    ``options``, given to the block when it is built)."""
    net = _Call(cls, len(params), method, options)
    if hybridize:
        net.hybridize()
    return net(*params, *args)


# ------------------------------------------------------------------ against scipy.stats
@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", NAMES)
def test_methods_match_scipy(name, shape, hybridize):
    cls, _, ref, values, extra = SPECS[name]
    rng = _rng()
    params = _params(name, shape, rng)
    frozen = ref(params)
    nd_params = [_nd(p) for p in params]
    x = values(rng, shape)
    u = rng.uniform(0.05, 0.95, shape)

    def run(method, *args):
        out = _run(cls, nd_params, method, *args, hybridize=hybridize)
        assert out.shape == shape, (method, out.shape)
        return out

    _close(run("log_prob", _nd(x)), frozen.logpdf(x))
    _close(run("entropy"), frozen.entropy())
    if name not in ("Cauchy", "HalfCauchy"):
        _close(run("mean"), frozen.mean())
        _close(run("variance"), frozen.var())
    if "cdf" in extra:
        _close(run("cdf", _nd(x)), frozen.cdf(x))
    if "icdf" in extra:
        _close(run("icdf", _nd(u)), frozen.ppf(u), rtol=2e-4)


@pytest.mark.parametrize("hybridize", [False, True])
def test_undefined_moments(hybridize):
    loc, scale = _nd(onp.zeros((2, 3))), _nd(onp.ones(3))
    for method in ("mean", "variance"):
        out = _run(mgp.Cauchy, [loc, scale], method, hybridize=hybridize).asnumpy()
        assert out.shape == (2, 3) and onp.isnan(out).all()
        out = _run(mgp.HalfCauchy, [scale], method, hybridize=hybridize).asnumpy()
        assert out.shape == (3,) and onp.isposinf(out).all()
    # Student's t: mean NaN for df <= 1; variance NaN for df <= 1, infinite for 1 < df <= 2
    df = _nd([0.5, 1.5, 3.0])
    t_mean = _run(mgp.StudentT, [df, _nd(0.5), _nd(2.0)], "mean", hybridize=hybridize)
    _close(t_mean, [onp.nan, 0.5, 0.5])
    t_var = _run(mgp.StudentT, [df, _nd(0.5), _nd(2.0)], "variance", hybridize=hybridize)
    _close(t_var, [onp.nan, onp.inf, ss.t(3.0, 0.5, 2.0).var()])
    # F: mean NaN for df2 <= 2; variance NaN for df2 <= 2, infinite for 2 < df2 <= 4
    df2 = _nd([1.5, 3.0, 5.0])
    f_mean = _run(mgp.FisherSnedecor, [_nd(2.0), df2], "mean", hybridize=hybridize)
    _close(f_mean, [onp.nan, 3.0, 5.0 / 3.0])
    f_var = _run(mgp.FisherSnedecor, [_nd(2.0), df2], "variance", hybridize=hybridize)
    _close(f_var, [onp.nan, onp.inf, ss.f(2.0, 5.0).var()])
    # Pareto: mean infinite for alpha <= 1, variance infinite for alpha <= 2
    alpha = _nd([0.5, 1.5, 3.0])
    _close(_run(mgp.Pareto, [alpha, _nd(2.0)], "mean", hybridize=hybridize),
           [onp.inf, 6.0, 3.0])
    _close(_run(mgp.Pareto, [alpha, _nd(2.0)], "variance", hybridize=hybridize),
           [onp.inf, onp.inf, ss.pareto(3.0, 0, 2.0).var()])


def test_python_scalar_parameters():
    x = onp.array([0.3, 1.7])
    _close(mgp.Exponential(2.0).log_prob(_nd(x)), ss.expon(0, 2.0).logpdf(x))
    _close(mgp.Gamma(2.5).log_prob(_nd(x)), ss.gamma(2.5).logpdf(x))
    _close(mgp.Chi2(3.0).log_prob(_nd(x)), ss.chi2(3).logpdf(x))
    _close(mgp.StudentT(3.0).log_prob(_nd(x)), ss.t(3.0).logpdf(x))
    _close(mgp.Uniform().entropy(), 0.0)
    _close(mgp.Gumbel(0.5).cdf(_nd(x)), ss.gumbel_r(0.5).cdf(x))
    _close(mgp.Laplace().icdf(_nd([0.2, 0.7])), ss.laplace.ppf([0.2, 0.7]))
    _close(mgp.Weibull(2.0).entropy(), ss.weibull_min(2.0).entropy())
    for dist in (mgp.Uniform(), mgp.Cauchy(), mgp.HalfNormal(), mgp.Pareto(3.0),
                 mgp.FisherSnedecor(3.0, 5.0), mgp.Beta(2.0, 3.0)):
        assert dist.sample().shape == ()
        assert dist.sample_n(4).shape == (4,)
        assert dist.sample((2, 3)).shape == (2, 3)


def test_log_prob_at_the_edge_of_the_support():
    # (k - 1) log x at x = 0 with k = 1 is 0, not NaN: Chi2(2) is Exponential(2) there.
    _close(mgp.Chi2(_nd(2.0)).log_prob(_nd(0.0)), ss.chi2(2).logpdf(0.0))
    _close(mgp.Weibull(_nd(1.0), _nd(2.0)).log_prob(_nd(0.0)), math.log(0.5))
    _close(mgp.Beta(_nd(1.0), _nd(1.0)).log_prob(_nd([0.0, 1.0])), [0.0, 0.0])
    # Outside the support (without validation): -inf, and cdf 0 below it.
    below = _nd([-1.0, 0.5])
    for dist in (mgp.Exponential(_nd(1.0)), mgp.HalfNormal(_nd(1.0)),
                 mgp.HalfCauchy(_nd(1.0)), mgp.Pareto(_nd(2.0), _nd(1.0)),
                 mgp.Uniform(_nd(0.0), _nd(0.25))):
        lp = dist.log_prob(below).asnumpy()
        assert onp.isneginf(lp[0]), type(dist).__name__
        if not isinstance(dist, mgp.Uniform):
            assert dist.cdf(below).asnumpy()[0] == 0, type(dist).__name__
    assert onp.isneginf(mgp.Uniform(_nd(0.0), _nd(0.25)).log_prob(below).asnumpy()).all()


# ------------------------------------------------------------------ sampling
@pytest.mark.parametrize("name", NAMES)
def test_sample_shapes_and_distribution(name):
    cls, _, ref, _, _ = SPECS[name]
    params = _params(name, (2,))
    dist = cls(*[_nd(p) for p in params])
    assert dist.sample().shape == (2,)
    assert dist.sample((3, 2)).shape == (3, 2)
    assert dist.sample_n(5).shape == (5, 2)
    assert dist.sample_n((4, 5)).shape == (4, 5, 2)
    n = 20000
    draws = dist.sample_n(n).asnumpy().astype("float64")
    frozen = ref(params)
    # The empirical cdf at three quantiles: within 5 standard errors of the probability.
    for prob in (0.1, 0.5, 0.9):
        ecdf = (draws <= frozen.ppf(prob)).mean(axis=0)
        assert onp.all(onp.abs(ecdf - prob) < 5 * math.sqrt(prob * (1 - prob) / n)), prob
    if name not in ("Cauchy", "HalfCauchy"):
        mean, var = frozen.mean(), frozen.var()
        assert onp.all(onp.abs(draws.mean(0) - mean) < 5 * onp.sqrt(var / n))
        if name not in ("Pareto", "StudentT", "FisherSnedecor"):  # (heavy tails)
            assert onp.all(onp.abs(draws.var(0) / var - 1) < 0.1)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", NAMES)
def test_sample_in_hybrid_block(name, shape, hybridize):
    cls = SPECS[name][0]
    params = [_nd(p) for p in _params(name, shape)]
    out = _run(cls, params, "sample", hybridize=hybridize)
    assert out.shape == shape
    out = _run(cls, params, "sample_n", hybridize=hybridize, options=(3,))
    assert out.shape == (3,) + shape
    assert onp.isfinite(out.asnumpy()).all()


def _pathwise(name, x, p):
    """d sample / d parameter, in closed form from the sample itself."""
    if name == "Uniform":
        low, high = p
        return [(high - x) / (high - low), (x - low) / (high - low)]
    if name in ("Laplace", "Cauchy", "Gumbel"):
        loc, scale = p
        return [onp.ones_like(x), (x - loc) / scale]
    if name in ("Exponential", "HalfNormal", "HalfCauchy"):
        return [x / p[0]]
    if name == "Weibull":  # x = scale E^(1/k)
        k, scale = p
        return [-x * onp.log(x / scale) / k, x / scale]
    if name == "Pareto":  # x = scale exp(E / alpha)
        alpha, scale = p
        return [-x * onp.log(x / scale) / alpha, x / scale]
    raise KeyError(name)


@pytest.mark.parametrize("name", ["Uniform", "Laplace", "Cauchy", "Gumbel", "Exponential",
                                  "HalfNormal", "HalfCauchy", "Weibull", "Pareto"])
def test_reparameterized_sample_gradients(name):
    cls = SPECS[name][0]
    assert cls.has_grad
    params = _params(name, (3,))
    nd_params = [_nd(p, "float64") for p in params]
    for p in nd_params:
        p.attach_grad()
    with autograd.record():
        x = cls(*nd_params).sample()
    x.backward()
    expected = _pathwise(name, x.asnumpy(), params)
    for p, e in zip(nd_params, expected):
        _close(p.grad, e, rtol=1e-6, atol=1e-8)


def test_student_t_sample_gradient_reaches_loc_and_scale():
    loc, scale = _nd([0.5, -1.0], "float64"), _nd([2.0, 0.5], "float64")
    loc.attach_grad()
    scale.attach_grad()
    with autograd.record():
        x = mgp.StudentT(_nd([3.0, 5.0], "float64"), loc, scale).sample()
    x.backward()
    _close(loc.grad, [1.0, 1.0])
    _close(scale.grad, ((x - loc) / scale).asnumpy())


# ------------------------------------------------------------------ gradients of log_prob
@pytest.mark.parametrize("name", NAMES)
def test_log_prob_gradient_matches_finite_difference(name):
    cls, _, _, values, _ = SPECS[name]
    rng = _rng()
    params = _params(name, (3,), rng)
    x = values(rng, (3,))
    if name == "Uniform":  # (the density does not depend on a bound through x)
        x = onp.clip(x, params[0] + 0.01, params[1] - 0.01)
    nd_params = [_nd(p, "float64") for p in params]
    for p in nd_params:
        p.attach_grad()
    with autograd.record():
        out = cls(*nd_params).log_prob(_nd(x, "float64")).sum()
    out.backward()
    h = 1e-6
    for i, p in enumerate(params):
        numeric = onp.zeros_like(p)
        for j in range(p.size):
            shifted = []
            for sign in (1, -1):
                moved = [q.copy() for q in params]
                moved[i][j] += sign * h
                dist = cls(*[_nd(q, "float64") for q in moved])
                shifted.append(float(dist.log_prob(_nd(x, "float64")).sum()))
            numeric[j] = (shifted[0] - shifted[1]) / (2 * h)
        _close(nd_params[i].grad, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["Gamma", "Beta", "StudentT", "Weibull", "Pareto",
                                  "FisherSnedecor"])
def test_log_prob_gradient_in_hybrid_block(name):
    cls, _, _, values, _ = SPECS[name]
    rng = _rng()
    params, x = _params(name, (2, 3), rng), values(rng, (2, 3))
    grads = []
    for hybridize in (False, True):
        nd_params = [_nd(p) for p in params]
        for p in nd_params:
            p.attach_grad()
        net = _Call(cls, len(params), "log_prob")
        if hybridize:
            net.hybridize()
        with autograd.record():
            out = net(*nd_params, _nd(x))
        out.backward()
        grads.append([p.grad.asnumpy() for p in nd_params])
    for eager, hybrid in zip(*grads):
        _close(hybrid, eager.astype("float64"), rtol=1e-5, atol=1e-6)


def test_entropy_gradient_of_gamma():
    # dH/dk = 1 + (1 - k) trigamma(k); dH/dtheta = 1 / theta
    k, theta = onp.array([0.7, 2.5]), onp.array([1.5, 0.5])
    nd_k, nd_theta = _nd(k, "float64"), _nd(theta, "float64")
    nd_k.attach_grad()
    nd_theta.attach_grad()
    with autograd.record():
        h = mgp.Gamma(nd_k, nd_theta).entropy().sum()
    h.backward()
    _close(nd_k.grad, 1 + (1 - k) * scipy.special.polygamma(1, k), rtol=1e-6)
    _close(nd_theta.grad, 1 / theta, rtol=1e-6)


# ------------------------------------------------------------------ broadcast_to
@pytest.mark.parametrize("name", NAMES)
def test_broadcast_to(name):
    cls, _, ref, values, _ = SPECS[name]
    rng = _rng()
    params = _params(name, (3,), rng)
    dist = cls(*[_nd(p) for p in params]).broadcast_to((2, 3))
    assert type(dist) is cls
    x = values(rng, (2, 3))
    _close(dist.log_prob(_nd(x)), ref(params).logpdf(x))
    assert dist.sample().shape == (2, 3)
    assert dist.sample_n(4).shape == (4, 2, 3)
    assert dist.entropy().shape == (2, 3)


# ------------------------------------------------------------------ validate_args
BAD_PARAMS = {
    "Uniform": [[0.5, 0.2], [0.5, 0.5]],  # high must exceed low
    "Laplace": [[0.0, -1.0]],
    "Cauchy": [[0.0, 0.0]],
    "HalfCauchy": [[-1.0]],
    "HalfNormal": [[0.0]],
    "Exponential": [[-2.0]],
    "Gamma": [[0.0, 1.0], [1.0, -1.0]],
    "Beta": [[-1.0, 1.0], [1.0, 0.0]],
    "Chi2": [[0.0]],
    "StudentT": [[0.0, 0.0, 1.0], [2.0, 0.0, -1.0], [2.0, math.nan, 1.0]],
    "FisherSnedecor": [[0.0, 1.0], [1.0, -3.0]],
    "Gumbel": [[0.0, 0.0], [math.nan, 1.0]],
    "Weibull": [[0.0, 1.0], [1.0, 0.0]],
    "Pareto": [[0.0, 1.0], [1.0, -1.0]],
}
OUT_OF_SUPPORT = {
    "Uniform": 1.5, "HalfCauchy": -0.5, "HalfNormal": -0.5, "Exponential": -0.5,
    "Gamma": -1.0, "Beta": 1.5, "Chi2": -1.0, "FisherSnedecor": 0.0, "Weibull": 0.0,
    "Pareto": 0.5, "Laplace": math.nan, "Cauchy": math.nan, "Gumbel": math.nan,
    "StudentT": math.nan,
}


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_validate_args(name, hybridize):
    cls, _, _, values, _ = SPECS[name]
    for bad in BAD_PARAMS[name]:
        with pytest.raises(ValueError):
            # (an array first parameter and a good one elsewhere, as a batch)
            good = _params(name, (2,))
            params = [onp.array([g[0], b]) for g, b in zip(good, bad)]
            _run(cls, [_nd(p) for p in params], "mean", hybridize=hybridize).asnumpy()
    params = [_nd(p) for p in _params(name, (2,))]
    good_x = values(_rng(), (2,))
    with pytest.raises(ValueError):
        x = _nd([good_x[0], OUT_OF_SUPPORT[name]])
        _run(cls, params, "log_prob", x, hybridize=hybridize).asnumpy()
    # valid values pass
    assert onp.isfinite(_run(cls, params, "log_prob", _nd(good_x),
                             hybridize=hybridize).asnumpy()).all()


def test_validate_args_on_python_scalars():
    with pytest.raises(ValueError, match="scale"):
        mgp.Exponential(-1.0, validate_args=True)
    with pytest.raises(ValueError, match="high"):
        mgp.Uniform(1.0, 0.0, validate_args=True)
    with pytest.raises(ValueError, match="low"):
        mgp.Uniform(_nd([0.0, 2.0]), 1.0, validate_args=True)
    with pytest.raises(ValueError, match="df"):
        mgp.Chi2(-1.0, validate_args=True)
    mgp.Gamma(2.0, 3.0, validate_args=True)  # (no error)


def test_supports():
    assert mgp.constraint.is_dependent(mgp.Uniform.support)
    assert mgp.constraint.is_dependent(mgp.Pareto.support)
    support = mgp.Pareto(_nd([2.0]), _nd([1.5])).support
    with pytest.raises(ValueError):
        support.check(_nd([1.0]))
    _close(support.check(_nd([1.5])), [1.5])
    assert isinstance(mgp.Chi2(_nd(1.0)), mgp.Gamma)
    _close(mgp.Chi2(_nd([3.0])).df, [3.0])


# ------------------------------------------------------------------ Dirichlet
def _dirichlet_alpha(batch, k, rng=None):
    return (rng or _rng()).uniform(0.5, 2.5, batch + (k,))


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("batch", [(), (1,), (2, 3)])
def test_dirichlet_against_scipy(batch, hybridize):
    rng = _rng()
    k = 4
    alpha = _dirichlet_alpha(batch, k, rng)
    x = rng.dirichlet(onp.ones(k), batch)
    flat_a, flat_x = alpha.reshape(-1, k), x.reshape(-1, k)
    frozen = [ss.dirichlet(a) for a in flat_a]
    expected = {
        "log_prob": onp.array([f.logpdf(v) for f, v in zip(frozen, flat_x)]).reshape(batch),
        "entropy": onp.array([f.entropy() for f in frozen]).reshape(batch),
        "mean": onp.array([f.mean() for f in frozen]).reshape(batch + (k,)),
        "variance": onp.array([f.var() for f in frozen]).reshape(batch + (k,)),
    }
    for method, want in expected.items():
        args = (_nd(x),) if method == "log_prob" else ()
        out = _run(mgp.Dirichlet, [_nd(alpha)], method, *args, hybridize=hybridize)
        assert out.shape == want.shape, method
        _close(out, want, rtol=2e-4)
    out = _run(mgp.Dirichlet, [_nd(alpha)], "sample", hybridize=hybridize)
    assert out.shape == batch + (k,)
    _close(out.sum(-1), onp.ones(batch), atol=1e-5)
    out = _run(mgp.Dirichlet, [_nd(alpha)], "sample_n", hybridize=hybridize, options=(2,))
    assert out.shape == (2,) + batch + (k,)


def test_dirichlet_sample_moments_and_validation():
    alpha = onp.array([[0.7, 1.5, 3.0], [2.0, 2.0, 0.5]])
    dist = mgp.Dirichlet(_nd(alpha))
    assert dist.event_dim == 1
    draws = dist.sample_n(20000).asnumpy().astype("float64")
    assert draws.shape == (20000, 2, 3)
    mean = alpha / alpha.sum(-1, keepdims=True)
    var = mean * (1 - mean) / (alpha.sum(-1, keepdims=True) + 1)
    assert onp.all(onp.abs(draws.mean(0) - mean) < 5 * onp.sqrt(var / 20000))
    assert onp.all(onp.abs(draws.var(0) / var - 1) < 0.1)
    assert dist.broadcast_to((4, 2)).sample().shape == (4, 2, 3)
    with pytest.raises(ValueError):
        mgp.Dirichlet(_nd([1.0, 0.0, 2.0]), validate_args=True)
    with pytest.raises(ValueError):
        mgp.Dirichlet(_nd([1.0, 1.0]), validate_args=True).log_prob(_nd([0.3, 0.6]))
    with pytest.raises(ValueError, match="alpha"):
        mgp.Dirichlet(2.0)


def test_dirichlet_log_prob_gradient():
    alpha = onp.array([0.7, 1.5, 3.0])
    x = onp.array([0.2, 0.3, 0.5])
    nd_alpha = _nd(alpha, "float64")
    nd_alpha.attach_grad()
    with autograd.record():
        lp = mgp.Dirichlet(nd_alpha).log_prob(_nd(x, "float64"))
    lp.backward()
    # d/d alpha_i = log x_i + digamma(alpha_0) - digamma(alpha_i)
    want = onp.log(x) + scipy.special.digamma(alpha.sum()) - scipy.special.digamma(alpha)
    _close(nd_alpha.grad, want, rtol=1e-6)


# ------------------------------------------------------------------ KL divergences
def _kl_quad(p, q, lo, hi):
    def integrand(x):
        density = p.pdf(x)
        return density * (p.logpdf(x) - q.logpdf(x)) if density > 0 else 0.0
    with onp.errstate(over="ignore"):  # (scipy's Gumbel logpdf far in the left tail)
        return si.quad(integrand, lo, hi, limit=200)[0]


INF = onp.inf
# (p class, p params, q class, q params, scipy p, scipy q, integration range)
KL_PAIRS = [
    (mgp.Uniform, (-0.5, 1.0), mgp.Uniform, (-1.0, 2.0),
     ss.uniform(-0.5, 1.5), ss.uniform(-1, 3), (-0.5, 1.0)),
    (mgp.Uniform, (-0.5, 1.0), mgp.Normal, (0.3, 0.8),
     ss.uniform(-0.5, 1.5), ss.norm(0.3, 0.8), (-0.5, 1.0)),
    (mgp.Uniform, (-0.5, 1.0), mgp.Gumbel, (0.3, 0.8),
     ss.uniform(-0.5, 1.5), ss.gumbel_r(0.3, 0.8), (-0.5, 1.0)),
    (mgp.Laplace, (0.2, 0.7), mgp.Laplace, (-0.4, 1.3),
     ss.laplace(0.2, 0.7), ss.laplace(-0.4, 1.3), (-INF, INF)),
    (mgp.Cauchy, (0.2, 0.7), mgp.Cauchy, (-0.4, 1.3),
     ss.cauchy(0.2, 0.7), ss.cauchy(-0.4, 1.3), (-INF, INF)),
    (mgp.Exponential, (0.7,), mgp.Exponential, (1.3,),
     ss.expon(0, 0.7), ss.expon(0, 1.3), (0, INF)),
    (mgp.Exponential, (0.7,), mgp.Gamma, (1.7, 0.6),
     ss.expon(0, 0.7), ss.gamma(1.7, 0, 0.6), (0, INF)),
    (mgp.Exponential, (0.7,), mgp.Gumbel, (0.3, 0.6),
     ss.expon(0, 0.7), ss.gumbel_r(0.3, 0.6), (0, INF)),
    (mgp.Exponential, (0.7,), mgp.Normal, (0.3, 0.6),
     ss.expon(0, 0.7), ss.norm(0.3, 0.6), (0, INF)),
    (mgp.Exponential, (0.7,), mgp.Chi2, (3.0,),
     ss.expon(0, 0.7), ss.chi2(3.0), (0, INF)),
    (mgp.Gamma, (2.5, 0.7), mgp.Gamma, (1.5, 1.2),
     ss.gamma(2.5, 0, 0.7), ss.gamma(1.5, 0, 1.2), (0, INF)),
    (mgp.Chi2, (3.0,), mgp.Gamma, (1.5, 1.2),
     ss.chi2(3.0), ss.gamma(1.5, 0, 1.2), (0, INF)),
    (mgp.Beta, (2.5, 0.7), mgp.Beta, (1.5, 1.2),
     ss.beta(2.5, 0.7), ss.beta(1.5, 1.2), (0, 1)),
    (mgp.HalfNormal, (0.7,), mgp.HalfNormal, (1.3,),
     ss.halfnorm(0, 0.7), ss.halfnorm(0, 1.3), (0, INF)),
    (mgp.Gumbel, (0.2, 0.7), mgp.Gumbel, (-0.4, 1.3),
     ss.gumbel_r(0.2, 0.7), ss.gumbel_r(-0.4, 1.3), (-INF, INF)),
    (mgp.Pareto, (2.5, 1.3), mgp.Pareto, (1.5, 0.8),
     ss.pareto(2.5, 0, 1.3), ss.pareto(1.5, 0, 0.8), (1.3, INF)),
]


@pytest.mark.parametrize("pair", KL_PAIRS, ids=lambda t: f"{t[0].__name__}-{t[2].__name__}")
def test_kl_against_numeric_integration(pair):
    p_cls, p_par, q_cls, q_par, sp, sq, (lo, hi) = pair
    p = p_cls(*[_nd(v) for v in p_par])
    q = q_cls(*[_nd(v) for v in q_par])
    _close(mgp.kl_divergence(p, q), _kl_quad(sp, sq, lo, hi), rtol=1e-4)
    # batched: the same pair broadcast over (2, 3), and KL(p || p) = 0
    kl = mgp.kl_divergence(p.broadcast_to((2, 3)), q.broadcast_to((2, 3)))
    assert kl.shape == (2, 3)
    _close(mgp.kl_divergence(p.broadcast_to((2, 3)), p), onp.zeros((2, 3)), atol=1e-5)


@pytest.mark.parametrize("shape", SHAPES)
def test_kl_zero_and_positive_in_batches(shape):
    rng = _rng()
    for name in ("Uniform", "Laplace", "Cauchy", "HalfNormal", "Exponential", "Gamma",
                 "Beta", "Chi2", "Gumbel", "Pareto"):
        cls = SPECS[name][0]
        p = cls(*[_nd(v) for v in _params(name, shape, rng)])
        q = cls(*[_nd(v) for v in _params(name, shape, rng)])
        _close(mgp.kl_divergence(p, p), onp.zeros(shape), atol=1e-5)
        kl = mgp.kl_divergence(p, q).asnumpy()
        assert kl.shape == shape and onp.all(kl >= -1e-6), name


def test_kl_infinite_where_q_misses_p():
    p = mgp.Uniform(_nd([-2.0, 0.0]), _nd([1.0, 1.0]))
    q = mgp.Uniform(_nd([-1.0, -1.0]), _nd([2.0, 2.0]))
    _close(mgp.kl_divergence(p, q), [onp.inf, math.log(3.0)])
    p = mgp.Pareto(_nd([2.0, 2.0]), _nd([0.5, 1.5]))
    q = mgp.Pareto(_nd([2.0, 2.0]), _nd([1.0, 1.0]))
    kl = mgp.kl_divergence(p, q).asnumpy()
    assert onp.isposinf(kl[0]) and onp.isfinite(kl[1])


def test_kl_dirichlet():
    a, b = onp.array([[0.7, 1.5, 2.2]]), onp.array([[1.2, 0.6, 3.1]])
    kl = mgp.kl_divergence(mgp.Dirichlet(_nd(a)), mgp.Dirichlet(_nd(b)))
    assert kl.shape == (1,)
    draws = onp.random.default_rng(0).dirichlet(a[0], 200000)
    estimate = onp.mean(ss.dirichlet(a[0]).logpdf(draws.T) - ss.dirichlet(b[0]).logpdf(draws.T))
    _close(kl, [estimate], rtol=0, atol=5e-3)
    _close(mgp.kl_divergence(mgp.Dirichlet(_nd(a)), mgp.Dirichlet(_nd(a))), [0.0], atol=1e-5)


def test_kl_closed_forms_agree_with_the_exponential_family_bregman_form():
    pairs = [(mgp.Beta(_nd(2.5), _nd(0.7)), mgp.Beta(_nd(1.5), _nd(1.2))),
             (mgp.Gamma(_nd(2.5), _nd(0.7)), mgp.Gamma(_nd(1.5), _nd(1.2))),
             (mgp.Exponential(_nd(0.7)), mgp.Exponential(_nd(1.3)))]
    for p, q in pairs:
        _close(divergence._kl_exponential_family(p, q), mgp.kl_divergence(p, q).asnumpy())
        generic = mgp.ExponentialFamily.entropy(p)
        _close(generic, p.entropy().asnumpy())


def test_kl_in_hybrid_block_and_empirical_kl():
    class KL(HybridBlock):
        def forward(self, scale_p, scale_q):
            return mgp.kl_divergence(mgp.Exponential(scale_p, validate_args=True),
                                     mgp.Gamma(2.0, scale_q, validate_args=True))

    net = KL()
    net.hybridize()
    sp, sq = onp.array([0.5, 1.5]), onp.array([1.0, 0.7])
    want = [_kl_quad(ss.expon(0, a), ss.gamma(2.0, 0, b), 0, INF) for a, b in zip(sp, sq)]
    _close(net(_nd(sp), _nd(sq)), want, rtol=1e-4)
    p, q = mgp.Laplace(_nd(0.2), _nd(0.7)), mgp.Laplace(_nd(-0.4), _nd(1.3))
    estimate = mgp.empirical_kl(p, q, 50000)
    _close(estimate, mgp.kl_divergence(p, q).asnumpy(), rtol=0.05)


def test_kl_unregistered_pair_raises():
    with pytest.raises(NotImplementedError):
        mgp.kl_divergence(mgp.Cauchy(_nd(0.0), _nd(1.0)), mgp.Normal(_nd(0.0), _nd(1.0)))
    with pytest.raises(NotImplementedError):
        mgp.kl_divergence(mgp.Gamma(_nd(1.0), _nd(1.0)), mgp.Exponential(_nd(1.0)))


def test_repr():
    text = repr(mgp.StudentT(_nd([3.0]), 0.0, _nd([[1.0], [2.0]])))
    assert text.startswith("StudentT(") and "df: size (1,)" in text
    assert "Chi2(df: size (2,)" in repr(mgp.Chi2(_nd([1.0, 2.0])))
