"""Tests of the discrete distributions of ndx.gluon.probability (MXNet 2.0's
mxnet.gluon.probability): Bernoulli, Categorical, OneHotCategorical, Binomial,
NegativeBinomial, Multinomial, Geometric, Poisson, RelaxedBernoulli and
RelaxedOneHotCategorical, with their KL divergences.

Every value is checked against an independent reference: scipy.stats, a NumPy computation
written here, a finite difference, a numeric integral or sums over the support, or sample
moments of many draws."""
import numpy as onp
import pytest
import scipy.special
import scipy.stats as ss

import ndx as mx
import ndx.gluon.probability as mgp
from ndx import autograd, np, npx
from ndx.gluon import HybridBlock

SHAPES = [(), (1,), (2, 3)]


@pytest.fixture(autouse=True)
def _seed():
    mx.random.seed(1234)
    npx.random.seed(1234)
    onp.random.seed(1234)


def _logit(p):
    return onp.log(p) - onp.log1p(-p)


def _close(actual, desired, rtol=1e-4, atol=1e-5):
    actual = actual.asnumpy() if hasattr(actual, "asnumpy") else onp.asarray(actual)
    onp.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol)


class _Method(HybridBlock):
    """Builds a distribution from the first ``n_params`` inputs inside forward (as MXNet's
    tests do) and returns one of its methods / properties applied to the other inputs."""

    def __init__(self, build, method, n_params, extra=()):
        super().__init__()
        self._build, self._method, self._n, self._extra = build, method, n_params, extra

    def forward(self, *arrays):
        dist = self._build(*arrays[:self._n])
        attr = getattr(dist, self._method)
        return attr(*arrays[self._n:], *self._extra) if callable(attr) else attr


def _call(build, method, params, args=(), extra=(), hybridize=False):
    net = _Method(build, method, len(params), extra)
    if hybridize:
        net.hybridize()
    inputs = [np.array(a) for a in list(params) + list(args)]
    return net(*inputs)


# ------------------------------------------------------------------ scalar-event cases
# name: (build(*params), params(shape), values(shape), scipy frozen reference(*params))
def _u(lo, hi):
    return lambda s: onp.random.uniform(lo, hi, s).astype("float32")


def _ints(lo, hi):
    return lambda s: onp.random.randint(lo, hi, s).astype("float32")


SCALAR_CASES = {
    "bernoulli_prob": (lambda p: mgp.Bernoulli(prob=p, validate_args=True),
                       [_u(0.05, 0.95)], _ints(0, 2), lambda p: ss.bernoulli(p)),
    "bernoulli_logit": (lambda lg: mgp.Bernoulli(logit=lg, validate_args=True),
                        [_u(-3, 3)], _ints(0, 2),
                        lambda lg: ss.bernoulli(scipy.special.expit(lg))),
    "binomial_prob": (lambda p: mgp.Binomial(n=6, prob=p, validate_args=True),
                      [_u(0.05, 0.95)], _ints(0, 7), lambda p: ss.binom(6, p)),
    "binomial_logit": (lambda lg: mgp.Binomial(n=6.0, logit=lg, validate_args=True),
                       [_u(-3, 3)], _ints(0, 7),
                       lambda lg: ss.binom(6, scipy.special.expit(lg))),
    "negbin_prob": (lambda n, p: mgp.NegativeBinomial(n, prob=p, validate_args=True),
                    [_u(0.5, 5), _u(0.1, 0.8)], _ints(0, 12),
                    lambda n, p: ss.nbinom(n, 1 - p)),
    "negbin_logit": (lambda n, lg: mgp.NegativeBinomial(n, logit=lg, validate_args=True),
                     [_u(0.5, 5), _u(-2, 1.5)], _ints(0, 12),
                     lambda n, lg: ss.nbinom(n, scipy.special.expit(-lg))),
    "geometric_prob": (lambda p: mgp.Geometric(prob=p, validate_args=True),
                       [_u(0.1, 0.95)], _ints(0, 10), lambda p: ss.geom(p, loc=-1)),
    "geometric_logit": (lambda lg: mgp.Geometric(logit=lg, validate_args=True),
                        [_u(-2, 3)], _ints(0, 10),
                        lambda lg: ss.geom(scipy.special.expit(lg), loc=-1)),
    "poisson": (lambda r: mgp.Poisson(r, validate_args=True),
                [_u(0.3, 6)], _ints(0, 12), lambda r: ss.poisson(r)),
}
NO_ENTROPY = {"negbin_prob", "negbin_logit", "poisson"}


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("case", sorted(SCALAR_CASES))
def test_scalar_event_methods(case, shape, hybridize):
    build, param_fns, value_fn, ref = SCALAR_CASES[case]
    params = [f(shape) for f in param_fns]
    value = value_fn(shape)
    frozen = ref(*[p.astype("float64") for p in params])
    run = lambda method, args=(), extra=(): _call(  # noqa: E731
        build, method, params, args, extra, hybridize)
    _close(run("log_prob", [value]), frozen.logpmf(value), rtol=1e-4, atol=1e-4)
    _close(run("mean"), frozen.mean(), rtol=1e-4, atol=1e-5)
    _close(run("variance"), frozen.var(), rtol=2e-4, atol=1e-5)
    if case not in NO_ENTROPY:
        _close(run("entropy"), frozen.entropy(), rtol=1e-4, atol=1e-5)
    assert run("sample").shape == shape
    assert run("sample", extra=((4,) + shape,)).shape == (4,) + shape
    assert run("sample_n", extra=((2, 5),)).shape == (2, 5) + shape
    _close(run("pdf", [value]), frozen.pmf(value), rtol=1e-4, atol=1e-6)


# name: (distribution, analytic mean, analytic variance, support check)
def _moment_cases():
    p = onp.array([0.15, 0.6], dtype="float32")
    n = onp.array([1.5, 4.0], dtype="float32")
    rate = onp.array([0.7, 5.0], dtype="float32")
    return {
        "bernoulli": (lambda: mgp.Bernoulli(prob=np.array(p)), ss.bernoulli(p)),
        "bernoulli_logit": (lambda: mgp.Bernoulli(logit=np.array(_logit(p))),
                            ss.bernoulli(p)),
        "binomial": (lambda: mgp.Binomial(7, prob=np.array(p)), ss.binom(7, p)),
        "negbin": (lambda: mgp.NegativeBinomial(np.array(n), prob=np.array(p)),
                   ss.nbinom(n, 1 - p)),
        "negbin_logit": (lambda: mgp.NegativeBinomial(np.array(n), logit=np.array(_logit(p))),
                         ss.nbinom(n, 1 - p)),
        "geometric": (lambda: mgp.Geometric(prob=np.array(p)), ss.geom(p, loc=-1)),
        "geometric_logit": (lambda: mgp.Geometric(logit=np.array(_logit(p))),
                            ss.geom(p, loc=-1)),
        "poisson": (lambda: mgp.Poisson(np.array(rate)), ss.poisson(rate)),
    }


@pytest.mark.parametrize("case", sorted(_moment_cases()))
def test_sample_moments(case):
    make, frozen = _moment_cases()[case]
    n = 200000
    samples = make().sample_n(n).asnumpy().astype("float64")
    assert samples.shape == (n, 2)
    # Integer counts in the support.
    assert onp.all(samples == onp.round(samples)) and onp.all(samples >= 0)
    mean, var = frozen.mean(), frozen.var()
    # 5 standard errors of the mean; 5% on the variance (its standard error here is < 1%).
    assert onp.all(onp.abs(samples.mean(0) - mean) < 5 * onp.sqrt(var / n)), samples.mean(0)
    onp.testing.assert_allclose(samples.var(0), var, rtol=0.05)
    # The empirical frequencies of the first values against the pmf.
    for k in range(3):
        freq = (samples == k).mean(0)
        pmf = frozen.pmf(k)
        assert onp.all(onp.abs(freq - pmf) < 5 * onp.sqrt(pmf * (1 - pmf) / n) + 1e-4)


FRESH_DRAWS = {
    "Bernoulli": (lambda p: mgp.Bernoulli(prob=p), [0.5] * 8),
    "Binomial": (lambda p: mgp.Binomial(10, prob=p), [0.5] * 8),
    "NegativeBinomial": (lambda p: mgp.NegativeBinomial(3.0, prob=p), [0.5] * 8),
    "Geometric": (lambda p: mgp.Geometric(prob=p), [0.3] * 8),
    "Poisson": (lambda p: mgp.Poisson(p), [4.0] * 8),
    "Categorical": (lambda p: mgp.Categorical(4, prob=p), [[0.25] * 4] * 8),
    "OneHotCategorical": (lambda p: mgp.OneHotCategorical(prob=p), [[0.25] * 4] * 8),
    "Multinomial": (lambda p: mgp.Multinomial(4, prob=p, total_count=5), [[0.25] * 4] * 8),
    "RelaxedBernoulli": (lambda p: mgp.RelaxedBernoulli(0.5, prob=p), [0.5] * 8),
    "RelaxedOneHotCategorical": (lambda p: mgp.RelaxedOneHotCategorical(0.5, prob=p),
                                 [[0.25] * 4] * 8),
}


@pytest.mark.parametrize("name", sorted(FRESH_DRAWS))
def test_hybridized_sample_draws_afresh(name):
    # A hybridized block must draw new samples on every call, not replay its trace's.
    build, param = FRESH_DRAWS[name]
    net = _Method(build, "sample", 1)
    net.hybridize()
    param = np.array(onp.array(param, dtype="float32"))
    draws = [net(param).asnumpy() for _ in range(3)]
    assert not (onp.array_equal(draws[0], draws[1]) and onp.array_equal(draws[1], draws[2]))


def test_sample_broadcast_size_and_scalar_params():
    d = mgp.Poisson(2.5)
    assert d.sample().shape == ()
    assert d.sample((3, 2)).shape == (3, 2)
    assert d.sample_n(4).shape == (4,)
    d = mgp.Bernoulli(prob=np.array([0.2, 0.9]))
    assert d.sample((5, 2)).shape == (5, 2)
    with pytest.raises(ValueError, match="Bernoulli.sample"):
        d.sample((3,))
    draws = mgp.Binomial(3, prob=0.25).sample_n(100000).asnumpy()
    assert abs(draws.mean() - 0.75) < 0.02


@pytest.mark.parametrize("cls", ["Bernoulli", "Binomial", "Geometric", "NegativeBinomial",
                                 "Poisson", "RelaxedBernoulli"])
def test_scalar_broadcast_to(cls):
    p = np.array([0.3, 0.6])
    dist = {"Bernoulli": lambda: mgp.Bernoulli(prob=p),
            "Binomial": lambda: mgp.Binomial(4, logit=p),
            "Geometric": lambda: mgp.Geometric(prob=p),
            "NegativeBinomial": lambda: mgp.NegativeBinomial(2.0, prob=p),
            "Poisson": lambda: mgp.Poisson(p),
            "RelaxedBernoulli": lambda: mgp.RelaxedBernoulli(0.5, prob=p)}[cls]()
    value = np.array([0.25, 0.75]) if cls == "RelaxedBernoulli" else np.array([1.0, 0.0])
    wide = dist.broadcast_to((3, 2))
    assert type(wide) is type(dist)
    assert wide.sample().shape == (3, 2)
    assert wide.sample_n(4).shape == (4, 3, 2)
    expected = onp.broadcast_to(dist.log_prob(value).asnumpy(), (3, 2))
    _close(wide.log_prob(value), expected, rtol=1e-6)


# ------------------------------------------------------------------ categorical family
def _simplex(shape, k):
    return onp.random.dirichlet(onp.ones(k), size=shape or None).astype("float32").reshape(
        shape + (k,))


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("use_logit", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_categorical(shape, use_logit, hybridize):
    k = 4
    prob = _simplex(shape, k)
    # Unnormalized logits (log prob + a constant) must give the same distribution.
    param = onp.log(prob) + 0.7 if use_logit else prob
    key = "logit" if use_logit else "prob"

    def build(x):
        return mgp.Categorical(k, validate_args=True, **{key: x})

    value = onp.random.randint(0, k, (3,) + shape)
    expected = onp.take_along_axis(onp.broadcast_to(onp.log(prob), (3,) + shape + (k,)),
                                   value[..., None], axis=-1)[..., 0]
    _close(_call(build, "log_prob", [param], [value], hybridize=hybridize), expected,
           atol=1e-5)
    _close(_call(build, "entropy", [param], hybridize=hybridize),
           ss.entropy(prob.astype("float64"), axis=-1), atol=1e-5)
    _close(_call(build, "prob", [param], hybridize=hybridize), prob, atol=1e-6)
    assert _call(build, "sample", [param], hybridize=hybridize).shape == shape
    assert _call(build, "sample", [param], extra=((5,) + shape,),
                 hybridize=hybridize).shape == (5,) + shape
    assert _call(build, "sample_n", [param], extra=((2, 3),),
                 hybridize=hybridize).shape == (2, 3) + shape
    support = _call(build, "enumerate_support", [param], hybridize=hybridize).asnumpy()
    assert support.shape == (k,) + shape
    assert onp.all(support == onp.arange(k).reshape((k,) + (1,) * len(shape)))


@pytest.mark.parametrize("use_logit", [False, True])
def test_categorical_sample_frequencies(use_logit):
    prob = onp.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], dtype="float32")
    kw = {"logit": np.array(onp.log(prob) - 2.0)} if use_logit else {"prob": np.array(prob)}
    n = 100000
    samples = mgp.Categorical(3, **kw).sample_n(n).asnumpy()
    assert samples.shape == (n, 2)
    freq = onp.stack([(samples == j).mean(0) for j in range(3)], -1)
    assert onp.all(onp.abs(freq - prob) < 5 * onp.sqrt(prob * (1 - prob) / n))
    samples = mgp.Categorical(3, **kw).broadcast_to((4, 2)).sample()
    assert samples.shape == (4, 2)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("use_logit", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_one_hot_categorical(shape, use_logit, hybridize):
    k = 3
    prob = _simplex(shape, k)
    param = onp.log(prob) if use_logit else prob
    key = "logit" if use_logit else "prob"

    def build(x):
        return mgp.OneHotCategorical(num_events=k, validate_args=True, **{key: x})

    index = onp.random.randint(0, k, (2,) + shape)
    value = onp.eye(k, dtype="float32")[index]
    expected = onp.take_along_axis(onp.broadcast_to(onp.log(prob), (2,) + shape + (k,)),
                                   index[..., None], axis=-1)[..., 0]
    _close(_call(build, "log_prob", [param], [value], hybridize=hybridize), expected,
           atol=1e-5)
    _close(_call(build, "mean", [param], hybridize=hybridize), prob, atol=1e-6)
    _close(_call(build, "variance", [param], hybridize=hybridize), prob * (1 - prob),
           atol=1e-6)
    _close(_call(build, "entropy", [param], hybridize=hybridize),
           ss.entropy(prob.astype("float64"), axis=-1), atol=1e-5)
    sample = _call(build, "sample", [param], hybridize=hybridize).asnumpy()
    assert sample.shape == shape + (k,)
    assert onp.all(sample.sum(-1) == 1) and onp.all((sample == 0) | (sample == 1))
    assert _call(build, "sample_n", [param], extra=((4,),),
                 hybridize=hybridize).shape == (4,) + shape + (k,)
    support = _call(build, "enumerate_support", [param], hybridize=hybridize).asnumpy()
    assert support.shape == (k,) + shape + (k,)
    onp.testing.assert_array_equal(support.reshape(k, -1, k)[:, 0], onp.eye(k))


def test_one_hot_categorical_sampling_and_broadcast():
    prob = onp.array([0.2, 0.5, 0.3], dtype="float32")
    d = mgp.OneHotCategorical(prob=np.array(prob))
    assert d.num_events == 3
    n = 100000
    samples = d.sample_n(n).asnumpy()
    assert samples.shape == (n, 3)
    assert onp.all(onp.abs(samples.mean(0) - prob) < 5 * onp.sqrt(prob * (1 - prob) / n))
    wide = d.broadcast_to((2, 4))
    assert wide.sample().shape == (2, 4, 3)
    assert wide.log_prob(np.array([0.0, 1.0, 0.0])).shape == (2, 4)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("use_logit", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_multinomial(shape, use_logit, hybridize):
    k, total = 3, 5
    prob = _simplex(shape, k)
    param = onp.log(prob) if use_logit else prob
    key = "logit" if use_logit else "prob"

    def build(x):
        return mgp.Multinomial(k, total_count=total, validate_args=True, **{key: x})

    p64 = prob.astype("float64") / prob.astype("float64").sum(-1, keepdims=True)
    counts = onp.stack([onp.random.multinomial(total, p) for p in p64.reshape(-1, k)])
    value = counts.reshape(shape + (k,)).astype("float32")
    expected = ss.multinomial(total, p64).logpmf(value)
    _close(_call(build, "log_prob", [param], [value], hybridize=hybridize), expected,
           atol=1e-4)
    _close(_call(build, "mean", [param], hybridize=hybridize), total * prob, atol=1e-5)
    _close(_call(build, "variance", [param], hybridize=hybridize),
           total * prob * (1 - prob), atol=1e-5)
    sample = _call(build, "sample", [param], hybridize=hybridize).asnumpy()
    assert sample.shape == shape + (k,)
    assert onp.all(sample.sum(-1) == total)
    assert _call(build, "sample", [param], extra=((2,) + shape,),
                 hybridize=hybridize).shape == (2,) + shape + (k,)
    assert _call(build, "sample_n", [param], extra=((3, 2),),
                 hybridize=hybridize).shape == (3, 2) + shape + (k,)


def test_multinomial_sample_moments():
    prob = onp.array([[0.1, 0.3, 0.6], [0.4, 0.4, 0.2]], dtype="float32")
    d = mgp.Multinomial(3, prob=np.array(prob), total_count=6)
    n = 50000
    samples = d.sample_n(n).asnumpy().astype("float64")
    assert samples.shape == (n, 2, 3)
    mean, var = 6 * prob, 6 * prob * (1 - prob)
    assert onp.all(onp.abs(samples.mean(0) - mean) < 5 * onp.sqrt(var / n))
    onp.testing.assert_allclose(samples.var(0), var, rtol=0.05)
    wide = d.broadcast_to((4, 2))
    assert wide.sample().shape == (4, 2, 3)
    assert mgp.Multinomial(3, prob=np.array(prob), total_count=0).sample().shape == (2, 3)


# ------------------------------------------------------------------ relaxed distributions
def _relaxed_bernoulli_ref(temperature, logit):
    """X = sigmoid(Y) with Y logistic of location logit / T and scale 1 / T."""
    return ss.logistic(loc=logit / temperature, scale=1 / temperature)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("use_logit", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_relaxed_bernoulli(shape, use_logit, hybridize):
    temperature = onp.random.uniform(0.3, 2.0, shape).astype("float32")
    prob = onp.random.uniform(0.1, 0.9, shape).astype("float32")
    param = _logit(prob) if use_logit else prob
    key = "logit" if use_logit else "prob"

    def build(t, x):
        return mgp.RelaxedBernoulli(T=t, validate_args=True, **{key: x})

    value = onp.random.uniform(0.05, 0.95, shape).astype("float32")
    y = _relaxed_bernoulli_ref(temperature.astype("float64"), _logit(prob.astype("float64")))
    x64 = value.astype("float64")
    params = [temperature, param]
    expected = y.logpdf(_logit(x64)) - onp.log(x64 * (1 - x64))
    _close(_call(build, "log_prob", params, [value], hybridize=hybridize), expected,
           rtol=1e-4, atol=1e-4)
    _close(_call(build, "cdf", params, [value], hybridize=hybridize), y.cdf(_logit(x64)),
           atol=1e-5)
    _close(_call(build, "icdf", params, [value], hybridize=hybridize),
           scipy.special.expit(y.ppf(x64)), atol=1e-5)
    sample = _call(build, "sample", params, hybridize=hybridize).asnumpy()
    assert sample.shape == shape and onp.all((sample > 0) & (sample < 1))
    assert _call(build, "sample_n", params, extra=((3,),),
                 hybridize=hybridize).shape == (3,) + shape


def test_relaxed_bernoulli_density_and_samples():
    # The density integrates to 1 and to the cdf (in y = logit(x), where the density of Y
    # is smooth and the endpoints of (0, 1) are far away); P(X > 1/2) = prob at any T.
    d = mgp.RelaxedBernoulli(T=np.array([0.4, 1.0, 2.5]), prob=np.array([0.3, 0.3, 0.8]))
    d64 = mgp.RelaxedBernoulli(T=np.array([0.4, 1.0, 2.5], dtype="float64"),
                               prob=np.array([0.3, 0.3, 0.8], dtype="float64"))
    y = onp.linspace(-35, 35, 70001)
    x = scipy.special.expit(y)[:, None]
    dens = onp.exp(d64.log_prob(np.array(x, dtype="float64")).asnumpy()) * x * (1 - x)
    _close(onp.trapezoid(dens, y, axis=0), onp.ones(3), atol=1e-4)
    below = y <= 0.0
    _close(onp.trapezoid(dens[below], y[below], axis=0), d.cdf(np.array(0.5)).asnumpy(),
           atol=1e-4)
    n = 100000
    samples = d.sample_n(n).asnumpy()
    assert samples.shape == (n, 3)
    freq = (samples > 0.5).mean(0)
    assert onp.all(onp.abs(freq - [0.3, 0.3, 0.8]) < 0.01)
    # The empirical cdf at a few points against cdf.
    for x in (0.2, 0.5, 0.9):
        _close((samples <= x).mean(0), d.cdf(np.array(x)).asnumpy(), atol=0.01)


def test_relaxed_bernoulli_pathwise_gradient():
    # x = sigmoid((logit + L) / T): dx/dlogit = x (1 - x) / T, dx/dT = -x (1 - x) y / T.
    logit = np.array([0.3, -1.2, 2.0])
    temperature = np.array([0.5, 1.0, 2.0])
    logit.attach_grad()
    temperature.attach_grad()
    with autograd.record():
        x = mgp.RelaxedBernoulli(T=temperature, logit=logit).sample()
    x.backward()
    xs, ts = x.asnumpy().astype("float64"), temperature.asnumpy()
    _close(logit.grad, xs * (1 - xs) / ts, rtol=1e-3, atol=1e-6)
    _close(temperature.grad, -xs * (1 - xs) * _logit(xs) / ts, rtol=2e-3, atol=1e-5)
    assert mgp.RelaxedBernoulli.has_grad and mgp.RelaxedOneHotCategorical.has_grad


def _concrete_log_density(temperature, prob, x):
    """The Concrete density of Maddison et al. (2017), eq. (1), in NumPy."""
    k = x.shape[-1]
    t = onp.asarray(temperature)[..., None]
    log_terms = onp.log(prob) - (t + 1) * onp.log(x)
    log_denominator = scipy.special.logsumexp(onp.log(prob) - t * onp.log(x), axis=-1)
    return (scipy.special.gammaln(k) + (k - 1) * onp.log(temperature)
            + log_terms.sum(-1) - k * log_denominator)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("use_logit", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_relaxed_one_hot_categorical(shape, use_logit, hybridize):
    k = 4
    temperature = onp.random.uniform(0.5, 2.0, shape).astype("float32")
    prob = _simplex(shape, k)
    param = onp.log(prob) + 1.5 if use_logit else prob
    key = "logit" if use_logit else "prob"

    def build(t, x):
        return mgp.RelaxedOneHotCategorical(T=t, num_events=k, validate_args=True,
                                            **{key: x})

    params = [temperature, param]
    value = _simplex((2,) + shape, k)
    expected = _concrete_log_density(temperature.astype("float64"), prob.astype("float64"),
                                     value.astype("float64"))
    _close(_call(build, "log_prob", params, [value], hybridize=hybridize), expected,
           rtol=1e-4, atol=2e-4)
    sample = _call(build, "sample", params, hybridize=hybridize).asnumpy()
    assert sample.shape == shape + (k,)
    _close(sample.sum(-1), onp.ones(shape), atol=1e-5)
    assert _call(build, "sample_n", params, extra=((3,),),
                 hybridize=hybridize).shape == (3,) + shape + (k,)


def test_relaxed_one_hot_categorical_density_and_samples():
    prob = onp.array([0.2, 0.5, 0.3], dtype="float32")
    # The density integrates to 1 over the simplex (a midpoint grid in (x1, x2); at T = 2
    # the density is bounded there).
    d = mgp.RelaxedOneHotCategorical(T=2.0, prob=np.array(prob))
    m = 600
    x1, x2 = onp.meshgrid((onp.arange(m) + 0.5) / m, (onp.arange(m) + 0.5) / m)
    inside = x1 + x2 < 1 - 1e-9
    pts = onp.stack([x1[inside], x2[inside], 1 - x1[inside] - x2[inside]], -1)
    dens = onp.exp(d.log_prob(np.array(pts.astype("float32"))).asnumpy().astype("float64"))
    assert abs(dens.sum() / m ** 2 - 1) < 2e-3
    # argmax of a sample is Categorical(prob) at any temperature.
    d = mgp.RelaxedOneHotCategorical(T=0.7, prob=np.array(prob))
    n = 100000
    samples = d.sample_n(n).asnumpy()
    freq = onp.bincount(samples.argmax(-1), minlength=3) / n
    assert onp.all(onp.abs(freq - prob) < 5 * onp.sqrt(prob * (1 - prob) / n))
    # With two events, X_1 is RelaxedBernoulli(T, logit_1 - logit_2).
    pair = mgp.RelaxedOneHotCategorical(T=0.7, logit=np.array([0.4, -0.5]))
    x = onp.array([0.1, 0.45, 0.8])
    ref = _relaxed_bernoulli_ref(0.7, 0.9).logpdf(_logit(x)) - onp.log(x * (1 - x))
    _close(pair.log_prob(np.array(onp.stack([x, 1 - x], -1))), ref, atol=1e-4)
    assert d.broadcast_to((2, 5)).sample().shape == (2, 5, 3)


def test_relaxed_one_hot_categorical_pathwise_gradient():
    # x = softmax((logit + G) / T): d(sum_k w_k x_k)/dlogit_j = x_j (w_j - <w, x>) / T.
    logit = np.array([[0.1, 0.5, -0.3], [1.0, -1.0, 0.0]])
    logit.attach_grad()
    w = onp.array([1.0, -2.0, 0.5], dtype="float32")
    with autograd.record():
        x = mgp.RelaxedOneHotCategorical(T=0.8, num_events=3, logit=logit).sample()
        y = (x * np.array(w)).sum()
    y.backward()
    xs = x.asnumpy().astype("float64")
    expected = xs * (w - (xs * w).sum(-1, keepdims=True)) / 0.8
    _close(logit.grad, expected, rtol=1e-3, atol=1e-6)


# ------------------------------------------------------------------ KL divergences
def _bern(p):
    return onp.stack([1 - p, p], -1)


def test_kl_bernoulli():
    p = onp.array([0.1, 0.5, 0.9, 0.3])
    q = onp.array([0.2, 0.5, 0.4, 0.95])
    kl = mgp.kl_divergence(mgp.Bernoulli(prob=np.array(p)), mgp.Bernoulli(logit=np.array(
        _logit(q))))
    _close(kl, ss.entropy(_bern(p), _bern(q), axis=-1), atol=1e-5)
    same = mgp.Bernoulli(prob=np.array(p))
    _close(mgp.kl_divergence(same, same), onp.zeros(4), atol=1e-6)


@pytest.mark.parametrize("cls", ["Categorical", "OneHotCategorical"])
def test_kl_categorical(cls):
    p, q = _simplex((2, 3), 5), _simplex((2, 3), 5)
    make = getattr(mgp, cls)
    kl = mgp.kl_divergence(make(5, prob=np.array(p)), make(5, logit=np.array(onp.log(q) + 3)))
    _close(kl, ss.entropy(p.astype("float64"), q.astype("float64"), axis=-1), atol=1e-5)
    same = make(5, prob=np.array(p))
    _close(mgp.kl_divergence(same, same), onp.zeros((2, 3)), atol=1e-6)


def test_kl_binomial():
    p, q = onp.array([0.2, 0.7]), onp.array([0.5, 0.6])
    k = onp.arange(0, 9)[:, None]

    def exact(n_p, n_q):
        pmf = ss.binom(n_p, p).pmf(k)
        with onp.errstate(divide="ignore", invalid="ignore"):
            terms = onp.where(pmf > 0, pmf * (ss.binom(n_p, p).logpmf(k)
                                              - ss.binom(n_q, q).logpmf(k)), 0.0)
        return terms.sum(0)

    dp = mgp.Binomial(5, prob=np.array(p))
    _close(mgp.kl_divergence(dp, mgp.Binomial(5, logit=np.array(_logit(q)))), exact(5, 5),
           atol=1e-5)
    _close(mgp.kl_divergence(dp, mgp.Binomial(8, prob=np.array(q))), exact(5, 8), atol=1e-5)
    assert onp.all(onp.isinf(mgp.kl_divergence(dp, mgp.Binomial(3, prob=np.array(q)))
                             .asnumpy()))


def test_kl_geometric():
    p, q = onp.array([0.2, 0.7, 0.5]), onp.array([0.5, 0.3, 0.5])
    k = onp.arange(0, 3000)[:, None]
    fp, fq = ss.geom(p, loc=-1), ss.geom(q, loc=-1)
    exact = (fp.pmf(k) * (fp.logpmf(k) - fq.logpmf(k))).sum(0)
    kl = mgp.kl_divergence(mgp.Geometric(prob=np.array(p)), mgp.Geometric(logit=np.array(
        _logit(q))))
    _close(kl, exact, atol=1e-5)


def test_kl_poisson():
    r, s = onp.array([0.5, 3.0, 7.0]), onp.array([2.0, 3.0, 4.0])
    k = onp.arange(0, 200)[:, None]
    exact = (ss.poisson(r).pmf(k) * (ss.poisson(r).logpmf(k) - ss.poisson(s).logpmf(k))).sum(0)
    p, q = mgp.Poisson(np.array(r)), mgp.Poisson(np.array(s))
    _close(mgp.kl_divergence(p, q), exact, rtol=1e-4, atol=1e-5)
    # The Monte Carlo estimate agrees within its error.
    mc = mgp.empirical_kl(p, q, 200000).asnumpy()
    onp.testing.assert_allclose(mc, exact, atol=0.02)


def test_kl_unregistered_pair():
    with pytest.raises(NotImplementedError):
        mgp.kl_divergence(mgp.Poisson(1.0), mgp.Geometric(prob=0.5))


# ------------------------------------------------------------------ gradients
def _fd_check(make, value, params, eps=1e-3):
    """The gradient of log_prob(value).sum() with respect to each parameter against a
    central difference (float64)."""
    arrays = [np.array(p, dtype="float64") for p in params]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        out = make(*arrays).log_prob(np.array(value, dtype="float64")).sum()
    out.backward()
    for i, base in enumerate(params):
        numeric = onp.zeros_like(base)
        for j in onp.ndindex(base.shape):
            shifted = []
            for sign in (1, -1):
                moved = [onp.array(p, dtype="float64") for p in params]
                moved[i][j] += sign * eps
                dist = make(*[np.array(m, dtype="float64") for m in moved])
                shifted.append(float(dist.log_prob(np.array(value, dtype="float64")).sum()))
            numeric[j] = (shifted[0] - shifted[1]) / (2 * eps)
        _close(arrays[i].grad, numeric, rtol=1e-4, atol=1e-5)


GRAD_CASES = {
    "bernoulli": (lambda lg: mgp.Bernoulli(logit=lg), [0.0, 1.0, 1.0], [[0.3, -1.0, 2.0]]),
    "binomial": (lambda p: mgp.Binomial(5, prob=p), [0.0, 2.0, 5.0], [[0.2, 0.5, 0.9]]),
    "negbin": (lambda n, p: mgp.NegativeBinomial(n, prob=p), [0.0, 3.0, 7.0],
               [[1.5, 2.0, 4.5], [0.3, 0.5, 0.7]]),
    "geometric": (lambda lg: mgp.Geometric(logit=lg), [0.0, 3.0, 1.0], [[0.2, -0.5, 1.5]]),
    "poisson": (lambda r: mgp.Poisson(r), [0.0, 3.0, 6.0], [[0.5, 2.0, 5.0]]),
    "categorical": (lambda lg: mgp.Categorical(3, logit=lg), [0, 2],
                    [[[0.1, 0.5, -0.3], [1.0, 0.0, 2.0]]]),
    "multinomial": (lambda lg: mgp.Multinomial(3, logit=lg, total_count=4),
                    [[1.0, 1.0, 2.0], [4.0, 0.0, 0.0]], [[[0.1, 0.5, -0.3], [1.0, 0.0, 2.0]]]),
    "relaxed_bernoulli": (lambda t, lg: mgp.RelaxedBernoulli(t, logit=lg), [0.2, 0.5, 0.9],
                          [[0.5, 1.0, 2.0], [0.3, -1.0, 0.8]]),
    "relaxed_one_hot": (lambda t, lg: mgp.RelaxedOneHotCategorical(t, 3, logit=lg),
                        [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]],
                        [[0.7, 1.5], [[0.1, 0.5, -0.3], [1.0, 0.0, 2.0]]]),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_log_prob_gradient(case):
    make, value, params = GRAD_CASES[case]
    _fd_check(make, onp.array(value), [onp.array(p, dtype="float64") for p in params])


# ------------------------------------------------------------------ validation and errors
def _raises_in_block(build, params, args=()):
    for hybridize in (False, True):
        with pytest.raises(ValueError):
            _call(build, "log_prob", params, args, hybridize=hybridize).asnumpy()


VALIDATION_CASES = {
    # name: (build, good params, bad params, good value, value outside the support)
    "bernoulli": (lambda p: mgp.Bernoulli(prob=p, validate_args=True), [[0.3, 0.6]],
                  [[0.3, 1.5]], [0.0, 1.0], [0.5, 1.0]),
    "binomial": (lambda p: mgp.Binomial(3, prob=p, validate_args=True), [[0.3, 0.6]],
                 [[-0.1, 0.6]], [0.0, 3.0], [4.0, 1.0]),
    "negbin": (lambda n: mgp.NegativeBinomial(n, prob=0.4, validate_args=True), [[1.0, 2.5]],
               [[-1.0, 2.5]], [0.0, 3.0], [1.5, 2.0]),
    "geometric": (lambda p: mgp.Geometric(prob=p, validate_args=True), [[0.3, 0.6]],
                  [[1.3, 0.6]], [0.0, 3.0], [-1.0, 2.0]),
    "poisson": (lambda r: mgp.Poisson(r, validate_args=True), [[0.3, 2.0]], [[0.0, 2.0]],
                [0.0, 3.0], [0.5, 2.0]),
    "categorical": (lambda p: mgp.Categorical(3, prob=p, validate_args=True),
                    [[0.2, 0.3, 0.5]], [[0.2, 0.3, 0.6]], [0, 2], [3, 1]),
    "one_hot": (lambda p: mgp.OneHotCategorical(prob=p, validate_args=True),
                [[0.2, 0.3, 0.5]], [[-0.2, 0.7, 0.5]], [0.0, 1.0, 0.0], [0.0, 1.0, 1.0]),
    "multinomial": (lambda p: mgp.Multinomial(3, prob=p, total_count=2, validate_args=True),
                    [[0.2, 0.3, 0.5]], [[0.5, 0.6, 0.5]], [0.0, 1.0, 1.0], [0.0, 3.0, -1.0]),
    "relaxed_bernoulli": (lambda t: mgp.RelaxedBernoulli(t, prob=0.4, validate_args=True),
                          [[0.5, 2.0]], [[0.5, -2.0]], [0.3, 0.7], [0.3, 1.0]),
    "relaxed_one_hot": (lambda p: mgp.RelaxedOneHotCategorical(1.0, prob=p,
                                                               validate_args=True),
                        [[0.2, 0.3, 0.5]], [[0.2, 0.3, 0.4]], [0.2, 0.2, 0.6],
                        [0.2, 0.2, 0.7]),
}


@pytest.mark.parametrize("case", sorted(VALIDATION_CASES))
def test_validate_args(case):
    build, good, bad, value, outside = VALIDATION_CASES[case]
    good_params = [onp.array(g, dtype="float32") for g in good]
    for hybridize in (False, True):
        out = _call(build, "log_prob", good_params, [onp.array(value)], hybridize=hybridize)
        assert onp.all(onp.isfinite(out.asnumpy()))
    _raises_in_block(build, [onp.array(b, dtype="float32") for b in bad], [onp.array(value)])
    _raises_in_block(build, good_params, [onp.array(outside)])


@pytest.mark.parametrize("make, match", [
    (lambda: mgp.Bernoulli(), "Bernoulli: expected exactly one of prob and logit"),
    (lambda: mgp.Bernoulli(prob=0.5, logit=0.0), "Bernoulli: expected exactly one"),
    (lambda: mgp.Geometric(), "Geometric: expected exactly one"),
    (lambda: mgp.Binomial(3), "Binomial: expected exactly one"),
    (lambda: mgp.Binomial(2.5, prob=0.5), "Binomial: n must be a non-negative integer"),
    (lambda: mgp.Binomial(-1, prob=0.5), "Binomial: n must be a non-negative integer"),
    (lambda: mgp.NegativeBinomial(2.0), "NegativeBinomial: expected exactly one"),
    (lambda: mgp.Categorical(0, prob=np.array([0.5, 0.5])), "Categorical: num_events must"),
    (lambda: mgp.Categorical(3, prob=np.array([0.5, 0.5])), "Categorical: num_events is 3"),
    (lambda: mgp.Categorical(2, prob=0.5), "Categorical: prob / logit must be an array"),
    (lambda: mgp.Categorical(2, prob=np.array([0.5, 0.5]), logit=np.zeros(2)),
     "Categorical: expected exactly one"),
    (lambda: mgp.OneHotCategorical(), "OneHotCategorical: expected exactly one"),
    (lambda: mgp.Multinomial(2, prob=np.array([0.5, 0.5]), total_count=-2),
     "Multinomial: total_count must be a non-negative integer"),
    (lambda: mgp.RelaxedBernoulli(prob=0.3), "RelaxedBernoulli: expected the temperature T"),
    (lambda: mgp.RelaxedOneHotCategorical(T=np.ones(3), logit=np.zeros((2, 4))),
     "RelaxedOneHotCategorical: T of shape"),
])
def test_bad_arguments_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("make, match", [
    (lambda: mgp.Binomial(np.array([3.0]), prob=0.5), "Binomial: n must be"),
    (lambda: mgp.Multinomial(2, prob=np.array([0.5, 0.5]), total_count="3"),
     "Multinomial: total_count must be"),
    (lambda: mgp.Categorical(2.0, prob=np.array([0.5, 0.5])), "Categorical: num_events must"),
    (lambda: mgp.Poisson("1"), "Poisson: rate must be an array or a number"),
])
def test_bad_arguments_type_error(make, match):
    with pytest.raises(TypeError, match=match):
        make()


def test_misc_api():
    d = mgp.Bernoulli(prob=np.array([0.25, 0.5]))
    # prob and logit are cached properties computed from each other.
    _close(d.logit, _logit(onp.array([0.25, 0.5])), atol=1e-6)
    _close(mgp.Bernoulli(logit=np.array([0.0, 2.0])).prob, scipy.special.expit([0.0, 2.0]),
           atol=1e-6)
    assert "Bernoulli(prob: size (2,)" in repr(d)
    assert mgp.Categorical.has_enumerate_support and mgp.OneHotCategorical.has_enumerate_support
    assert not mgp.Bernoulli.has_grad and not mgp.Categorical.has_grad
    _close(d.perplexity(), onp.exp(ss.bernoulli([0.25, 0.5]).entropy()), atol=1e-5)
    _close(d.stddev, ss.bernoulli([0.25, 0.5]).std(), atol=1e-6)
    with pytest.raises(NotImplementedError, match="Poisson does not implement entropy"):
        mgp.Poisson(1.0).entropy()
    # Python scalar parameters work throughout.
    b = mgp.Binomial(4, prob=0.3)
    _close(b.log_prob(np.array([1.0, 4.0])), ss.binom(4, 0.3).logpmf([1, 4]), atol=1e-5)
    _close(mgp.Poisson(2.0).log_prob(np.array(3.0)), ss.poisson(2.0).logpmf(3), atol=1e-5)
    _close(mgp.Geometric(logit=0.5).entropy(),
           ss.geom(scipy.special.expit(0.5)).entropy(), atol=1e-5)
