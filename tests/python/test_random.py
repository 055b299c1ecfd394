"""np.random / npx.random (issue 13): every distribution against its analytic distribution
(Kolmogorov-Smirnov for continuous ones, chi-square for discrete ones, mean and variance),
seeds and Generators reproducible and independent of the thread count, typed errors."""
import numpy as onp
import pytest
from scipy import stats

import ndx
import ndx.numpy as np
from ndx import npx

N = 20000
SEED = 20261123

# name, params, scipy reference distribution (frozen), mean, variance
CONTINUOUS = [
    ("uniform", dict(low=-2.0, high=3.0), stats.uniform(-2, 5), 0.5, 25 / 12),
    ("normal", dict(loc=1.5, scale=2.0), stats.norm(1.5, 2.0), 1.5, 4.0),
    ("lognormal", dict(mean=0.2, sigma=0.5), stats.lognorm(0.5, scale=onp.exp(0.2)), None, None),
    ("gamma", dict(shape=2.5, scale=1.5), stats.gamma(2.5, scale=1.5), 3.75, 5.625),
    ("gamma", dict(shape=0.3, scale=2.0), stats.gamma(0.3, scale=2.0), 0.6, 1.2),
    ("beta", dict(a=2.0, b=5.0), stats.beta(2, 5), 2 / 7, 10 / (49 * 8)),
    ("beta", dict(a=0.5, b=0.4), stats.beta(0.5, 0.4), 0.5 / 0.9, None),
    ("chisquare", dict(df=3.0), stats.chi2(3), 3.0, 6.0),
    ("f", dict(dfnum=5.0, dfden=12.0), stats.f(5, 12), 12 / 10, None),
    ("exponential", dict(scale=2.0), stats.expon(scale=2.0), 2.0, 4.0),
    ("gumbel", dict(loc=1.0, scale=2.0), stats.gumbel_r(1.0, 2.0), None, None),
    ("laplace", dict(loc=-1.0, scale=0.5), stats.laplace(-1.0, 0.5), -1.0, 0.5),
    ("logistic", dict(loc=2.0, scale=1.5), stats.logistic(2.0, 1.5), 2.0, None),
    ("pareto", dict(a=3.5), stats.lomax(3.5), 1 / 2.5, None),
    ("power", dict(a=2.5), stats.powerlaw(2.5), 2.5 / 3.5, None),
    ("rayleigh", dict(scale=1.5), stats.rayleigh(scale=1.5), None, None),
    ("weibull", dict(a=1.7), stats.weibull_min(1.7), None, None),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,params,ref,mean,var", CONTINUOUS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONTINUOUS)])
def test_continuous_distribution(name, params, ref, mean, var, dtype):
    np.random.seed(SEED)
    x = getattr(np.random, name)(**params, size=(N,), dtype=dtype)
    assert x.shape == (N,) and x.dtype == onp.dtype(dtype)
    xs = x.asnumpy().astype(onp.float64)
    assert onp.isfinite(xs).all()
    # With a fixed seed the statistic is a fixed number; the bound is the 0.1% critical value.
    assert stats.kstest(xs, ref.cdf).pvalue > 1e-3
    if mean is not None:
        assert abs(xs.mean() - mean) < 5 * onp.sqrt(ref.var() / N)
    if var is not None:
        assert abs(xs.var() - var) / var < 0.08


def test_standard_shortcuts():
    np.random.seed(1)
    for x, ref in [(np.random.standard_normal(size=N), stats.norm()),
                   (np.random.standard_exponential(size=N), stats.expon()),
                   (np.random.standard_gamma(2.0, size=N), stats.gamma(2.0)),
                   (np.random.random(N), stats.uniform()), (np.random.random_sample(N),
                                                            stats.uniform()),
                   (np.random.rand(N), stats.uniform()), (np.random.randn(N), stats.norm())]:
        assert x.dtype == onp.float32
        assert stats.kstest(x.asnumpy(), ref.cdf).pvalue > 1e-3
    assert np.random.rand(2, 3).shape == (2, 3)
    assert np.random.randn().shape == ()


def test_normal_float16_and_bfloat16_follow_float32():
    np.random.seed(3)
    a = np.random.normal(size=(1000,))
    np.random.seed(3)
    h = np.random.normal(size=(1000,), dtype="float16")
    assert h.dtype == onp.float16
    onp.testing.assert_allclose(h.asnumpy().astype(onp.float32), a.asnumpy(), rtol=2e-3,
                                atol=2e-3)
    np.random.seed(3)
    b = np.random.normal(size=(1000,), dtype="bfloat16")
    onp.testing.assert_allclose(b.astype("float32").asnumpy(), a.asnumpy(), rtol=1e-2,
                                atol=1e-2)


def test_array_parameters_broadcast():
    np.random.seed(4)
    loc = np.array([[0.0], [100.0]])
    scale = np.array([1.0, 2.0, 3.0])
    x = np.random.normal(loc, scale)
    assert x.shape == (2, 3)
    x = np.random.normal(loc, scale, size=(4000, 2, 3)).asnumpy()
    onp.testing.assert_allclose(x.mean(axis=0), [[0, 0, 0], [100, 100, 100]], atol=0.3)
    onp.testing.assert_allclose(x.std(axis=0), [[1, 2, 3], [1, 2, 3]], rtol=0.08)
    g = np.random.gamma(onp.array([1.0, 4.0]), 2.0, size=(20000, 2)).asnumpy()
    onp.testing.assert_allclose(g.mean(axis=0), [2.0, 8.0], rtol=0.05)
    u = np.random.uniform(onp.array([0.0, 10.0]), onp.array([1.0, 20.0]), size=(1000, 2))
    u = u.asnumpy()
    assert (u[:, 0] >= 0).all() and (u[:, 0] < 1).all()
    assert (u[:, 1] >= 10).all() and (u[:, 1] < 20).all()
    with pytest.raises(ValueError, match="broadcast"):
        np.random.normal(np.zeros(3), 1.0 + np.zeros(3), size=(2,))


def test_randint_is_uniform_over_the_range():
    np.random.seed(5)
    x = np.random.randint(-3, 7, size=(50000,))
    assert x.dtype == onp.int64
    counts = onp.bincount(x.asnumpy() + 3, minlength=10)
    assert counts.sum() == 50000 and len(counts) == 10
    assert stats.chisquare(counts).pvalue > 1e-3
    y = np.random.randint(5, size=(1000,), dtype="uint8")
    assert y.dtype == onp.uint8 and int(y.max()) == 4 and int(y.min()) == 0
    big = np.random.randint(0, 2**40, size=(1000,)).asnumpy()
    assert big.max() > 2**39 and big.min() >= 0
    assert np.random.randint(10).shape == ()


def test_bernoulli():
    np.random.seed(6)
    x = npx.random.bernoulli(0.3, size=(N,))
    assert x.dtype == onp.float32
    assert set(onp.unique(x.asnumpy())) <= {0.0, 1.0}
    assert abs(float(x.mean()) - 0.3) < 5 * onp.sqrt(0.21 / N)
    y = npx.random.bernoulli(logit=onp.log(4.0), size=(N,), dtype="int32")
    assert y.dtype == onp.int32 and abs(float(y.mean()) - 0.8) < 0.02
    p = npx.random.bernoulli(np.array([0.0, 1.0]), size=(100, 2)).asnumpy()
    assert (p[:, 0] == 0).all() and (p[:, 1] == 1).all()
    with pytest.raises(ValueError):
        npx.random.bernoulli(1.5)
    with pytest.raises(ValueError):
        npx.random.bernoulli(0.5, logit=0.0)


def test_choice():
    np.random.seed(7)
    x = np.random.choice(5, size=(N,)).asnumpy()
    assert stats.chisquare(onp.bincount(x, minlength=5)).pvalue > 1e-3
    p = [0.1, 0.2, 0.3, 0.4, 0.0]
    y = np.random.choice(np.arange(5) * 10, size=(N,), p=p).asnumpy()
    counts = onp.bincount(y // 10, minlength=5)
    assert counts[4] == 0
    assert stats.chisquare(counts[:4], N * onp.array(p[:4])).pvalue > 1e-3
    z = np.random.choice(10, size=(10,), replace=False).asnumpy()
    assert sorted(z) == list(range(10))
    w = np.random.choice(6, size=(2, 2), replace=False, p=[0.5, 0.1, 0.1, 0.1, 0.2, 0.0])
    assert w.shape == (2, 2) and len(set(w.asnumpy().ravel())) == 4 and 5 not in w.asnumpy()
    # Without replacement, the first pick follows p.
    first = [int(np.random.choice(3, size=(2,), replace=False, p=[0.6, 0.3, 0.1])[0])
             for _ in range(2000)]
    assert stats.chisquare(onp.bincount(first, minlength=3), [1200, 600, 200]).pvalue > 1e-3
    with pytest.raises(ValueError, match="larger sample"):
        np.random.choice(3, size=(4,), replace=False)
    with pytest.raises(ValueError, match="sum to 1"):
        np.random.choice(3, p=[0.5, 0.2, 0.2])
    with pytest.raises(ValueError, match="non-negative"):
        np.random.choice(2, p=[1.5, -0.5])
    with pytest.raises(ValueError):
        np.random.choice(0)
    with pytest.raises(ValueError):
        np.random.choice(np.zeros((2, 2)))


def test_permutation_and_shuffle():
    np.random.seed(8)
    p = np.random.permutation(100).asnumpy()
    assert sorted(p) == list(range(100)) and (p != onp.arange(100)).any()
    a = np.arange(12).reshape(4, 3)
    b = np.random.permutation(a).asnumpy()
    assert sorted(map(tuple, b)) == sorted(map(tuple, a.asnumpy()))
    c = np.arange(50)
    np.random.shuffle(c)
    assert sorted(c.asnumpy()) == list(range(50)) and (c.asnumpy() != onp.arange(50)).any()
    lst = list(range(20))
    np.random.shuffle(lst)
    assert sorted(lst) == list(range(20))
    # Each position is uniform over the values.
    firsts = [int(np.random.permutation(4)[0]) for _ in range(2000)]
    assert stats.chisquare(onp.bincount(firsts, minlength=4)).pvalue > 1e-3
    for gen in (np.random, np.random.default_rng(0)):  # NumPy's: arange(-1) is empty
        assert gen.permutation(-1).shape == onp.random.permutation(-1).shape == (0,)
    with pytest.raises(TypeError):  # (NumPy's: a 0-d array has no len())
        onp.random.shuffle(onp.array(3.0))
    with pytest.raises(TypeError):
        np.random.shuffle(np.array(3.0))


def test_multinomial():
    np.random.seed(9)
    pv = [0.2, 0.3, 0.5]
    x = np.random.multinomial(20, pv, size=(3000,))
    assert x.shape == (3000, 3) and x.dtype == onp.int64
    xs = x.asnumpy()
    assert (xs.sum(axis=1) == 20).all()
    onp.testing.assert_allclose(xs.mean(axis=0), [4, 6, 10], atol=0.15)
    onp.testing.assert_allclose(xs.var(axis=0), [20 * 0.2 * 0.8, 20 * 0.21, 5], rtol=0.1)
    assert np.random.multinomial(5, [1.0]).asnumpy().tolist() == [5]
    with pytest.raises(ValueError):
        np.random.multinomial(5, [0.8, 0.8, 0.1])
    with pytest.raises(ValueError):
        np.random.multinomial(-1, [0.5, 0.5])


def test_multivariate_normal():
    np.random.seed(10)
    mean = [1.0, -2.0, 0.5]
    cov = onp.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    x = np.random.multivariate_normal(mean, cov, size=(40000,))
    assert x.shape == (40000, 3) and x.dtype == onp.float32
    xs = x.asnumpy().astype(onp.float64)
    onp.testing.assert_allclose(xs.mean(axis=0), mean, atol=0.03)
    onp.testing.assert_allclose(onp.cov(xs.T), cov, atol=0.04)
    # A singular (positive semi-definite) covariance works, as in NumPy.
    s = np.random.multivariate_normal([0.0, 0.0], [[1.0, 1.0], [1.0, 1.0]], size=(100,))
    onp.testing.assert_allclose(s.asnumpy()[:, 0], s.asnumpy()[:, 1], atol=1e-5)
    with pytest.raises(ValueError):
        np.random.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]], check_valid="raise")
    with pytest.raises(ValueError):
        np.random.multivariate_normal([0.0], [[1.0, 0.0], [0.0, 1.0]])


@pytest.mark.parametrize("name,args", [("normal", ()), ("uniform", ()), ("gamma", (0.5,)),
                                       ("randint", (0, 1000)), ("beta", (0.3, 0.4))])
def test_seed_reproducible_and_thread_count_independent(name, args):
    fn = getattr(np.random, name)
    np.random.seed(42)
    a = fn(*args, size=(100001,)).asnumpy()
    b = fn(*args, size=(100001,)).asnumpy()
    assert not (a == b).all()  # the next call draws new numbers
    threads = npx.get_num_threads()
    try:
        npx.set_num_threads(1)
        np.random.seed(42)
        c = fn(*args, size=(100001,)).asnumpy()
    finally:
        npx.set_num_threads(threads)
    onp.testing.assert_array_equal(a, c)
    ndx.random_seed(42)  # the same global generator
    onp.testing.assert_array_equal(fn(*args, size=(100001,)).asnumpy(), a)
    # A prefix of a larger draw is the smaller draw (element i depends on (seed, i) only).
    np.random.seed(42)
    onp.testing.assert_array_equal(fn(*args, size=(777,)).asnumpy(), a[:777])


def test_generator():
    g1, g2 = np.random.default_rng(123), np.random.default_rng(123)
    a = g1.normal(size=(1000,)).asnumpy()
    np.random.seed(0)  # the global seed does not touch a Generator
    onp.testing.assert_array_equal(g2.normal(size=(1000,)).asnumpy(), a)
    assert not (g1.normal(size=(1000,)).asnumpy() == a).all()
    assert not (np.random.default_rng(124).normal(size=(1000,)).asnumpy() == a).all()
    g = np.random.default_rng(5)
    i = g.integers(0, 10, size=(5000,))
    assert i.dtype == onp.int64 and int(i.min()) == 0 and int(i.max()) == 9
    assert int(g.integers(3, 5, size=(500,), endpoint=True).max()) == 5
    assert g.random(3).shape == (3,)
    assert stats.kstest(g.exponential(2.0, size=(5000,)).asnumpy(), stats.expon(scale=2).cdf
                        ).pvalue > 1e-3
    assert sorted(g.permutation(10).asnumpy()) == list(range(10))
    assert g.choice(5, size=(3,), replace=False).shape == (3,)
    assert isinstance(np.random.default_rng(), np.random.Generator)
    with pytest.raises(ValueError):
        np.random.default_rng(-1)


def test_out_and_device_arguments():
    o = np.zeros((3, 4))
    r = np.random.uniform(size=(3, 4), out=o)
    assert r is o and float(o.min()) >= 0 and float(o.max()) < 1 and float(o.max()) > 0
    x = np.random.normal(size=(2,), device=npx.cpu())
    assert x.device == npx.cpu()
    assert npx.random.uniform_n(0.0, np.ones((2,)), batch_shape=(3,)).shape == (3, 2)
    assert npx.random.normal_n(np.zeros((2, 1)), 1.0, batch_shape=4).shape == (4, 2, 1)


def test_zero_size_and_scalar_shapes():
    assert np.random.normal(size=(0, 3)).shape == (0, 3)
    assert np.random.gamma(1.0, size=()).shape == ()
    assert np.random.uniform().shape == ()
    assert np.random.randint(0, 5, size=(2, 0)).shape == (2, 0)


@pytest.mark.parametrize("call,exc", [
    (lambda: np.random.normal(0, -1), ValueError),
    (lambda: np.random.normal(np.array([1.0]), np.array([-1.0])), ValueError),
    (lambda: np.random.uniform(0, onp.inf), ValueError),
    (lambda: np.random.gamma(-1.0), ValueError),
    (lambda: np.random.beta(0.0, 1.0), ValueError),
    (lambda: np.random.chisquare(0.0), ValueError),
    (lambda: np.random.f(1.0, 0.0), ValueError),
    (lambda: np.random.exponential(-1.0), ValueError),
    (lambda: np.random.pareto(0.0), ValueError),
    (lambda: np.random.power(-1.0), ValueError),
    (lambda: np.random.rayleigh(-1.0), ValueError),
    (lambda: np.random.weibull(-1.0), ValueError),
    (lambda: np.random.laplace(0.0, -2.0), ValueError),
    (lambda: np.random.poisson(onp.nan), ValueError),  # (NumPy: normal(nan) is nan)
    (lambda: np.random.randint(5, 3), ValueError),
    (lambda: np.random.randint(0, 300, dtype="uint8"), ValueError),
    (lambda: np.random.randint(0, 3, dtype="float32"), TypeError),
    (lambda: np.random.normal(size=(-1,)), ValueError),
    (lambda: np.random.normal(size="3"), TypeError),
    (lambda: np.random.normal(dtype="int32"), TypeError),
    (lambda: np.random.seed(-3), ValueError),
    (lambda: np.random.normal(size=(2**40, 2**40)), ValueError),
])
def test_bad_input(call, exc):
    with pytest.raises(exc):
        call()


def test_namespace():
    names = ("seed uniform normal randn rand randint choice shuffle permutation multinomial "
             "multivariate_normal gamma beta chisquare exponential f gumbel laplace logistic "
             "lognormal pareto power rayleigh weibull default_rng Generator").split()
    for n in names:
        assert callable(getattr(np.random, n)), n
    for n in ("bernoulli", "seed", "uniform", "normal", "uniform_n", "normal_n"):
        assert callable(getattr(npx.random, n)), n


def test_choice_takes_float32_probabilities_within_numpys_tolerance():
    # 7 float32 values of 1/7 sum to 1 + 3e-8 in float64: NumPy accepts float32 p within
    # sqrt(float32 eps) ~ 3.5e-4 and refuses a sum 1% off; ndx alike (d2l's word2vec sampling)
    p = onp.full(7, 1 / 7, dtype=onp.float32)
    assert abs(p.astype(onp.float64).sum() - 1) > onp.sqrt(onp.finfo(onp.float64).eps)
    onp.random.default_rng(0).choice(7, 5, p=p)  # NumPy accepts it
    draws = np.random.choice(7, 5, p=np.array(p)).asnumpy()
    assert draws.shape == (5,) and ((0 <= draws) & (draws < 7)).all()
    with pytest.raises(ValueError):
        onp.random.default_rng(0).choice(7, 5, p=p * 1.01)
    with pytest.raises(ValueError, match="sum to 1"):
        np.random.choice(7, 5, p=np.array(p * 1.01))
