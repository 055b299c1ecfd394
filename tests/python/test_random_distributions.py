"""The np.random distributions added after the first set (poisson, binomial, negative_binomial,
geometric, zipf, logseries, wald, vonmises, noncentral_chisquare / _f, standard_cauchy,
standard_t, triangular, dirichlet): each sample's distribution against scipy.stats (a
chi-square test of the counts for discrete ones, Kolmogorov-Smirnov for continuous ones) with
a fixed seed, so every run draws the same numbers; moments where scipy has no sampler-free
distribution; parameter errors as NumPy raises them."""
import numpy as onp
import pytest
import scipy.stats as st

from ndx import np

N = 60000


def _sample(name, *args, **kwargs):
    np.random.seed(1234)
    return getattr(np.random, name)(*args, size=N, **kwargs).asnumpy()


def _chi2_p(x, pmf, support):
    """p-value of the counts of x over `support` (the tail lumped into the last cell) against
    pmf; cells with expectation under 5 merged, as the test needs."""
    probs = onp.array([pmf(k) for k in support])
    probs = onp.append(probs, max(0.0, 1 - probs.sum()))
    counts = onp.array([onp.sum(x == k) for k in support] + [onp.sum(x > support[-1])])
    expected = probs * len(x)
    keep = expected >= 5
    obs = onp.append(counts[keep], counts[~keep].sum())
    exp = onp.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return st.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.parametrize("name, args, dist, support", [
    ("poisson", (3.5,), st.poisson(3.5), range(0, 20)),
    ("poisson", (40.0,), st.poisson(40.0), range(10, 80)),  # PTRS
    ("binomial", (20, 0.3), st.binom(20, 0.3), range(0, 21)),  # inversion
    ("binomial", (500, 0.7), st.binom(500, 0.7), range(300, 400)),  # BTRS on the failures
    ("binomial", (7.9, 0.5), st.binom(7, 0.5), range(0, 8)),  # n truncated, as NumPy
    ("geometric", (0.25,), st.geom(0.25), range(1, 40)),
    ("negative_binomial", (4.5, 0.35), st.nbinom(4.5, 0.35), range(0, 50)),
    ("zipf", (2.2,), st.zipf(2.2), range(1, 60)),
    ("logseries", (0.8,), st.logser(0.8), range(1, 40)),
    ("hypergeometric", (7, 12, 6), st.hypergeom(19, 7, 6), range(0, 7)),  # item by item
    ("hypergeometric", (60, 140, 90), st.hypergeom(200, 60, 90), range(10, 45)),  # HRUA
    ("hypergeometric", (900, 100, 950), st.hypergeom(1000, 900, 950), range(845, 901)),
    ("hypergeometric", (7.9, 12, 6), st.hypergeom(19, 7, 6), range(0, 7)),  # truncated
])
def test_discrete_distributions_match_scipy(name, args, dist, support):
    x = _sample(name, *args)
    assert x.dtype == onp.int64
    assert _chi2_p(x, dist.pmf, list(support)) > 1e-3


@pytest.mark.parametrize("name, args, cdf", [
    ("wald", (2.0, 3.0), st.invgauss(2.0 / 3.0, scale=3.0).cdf),
    ("vonmises", (0.5, 2.0), st.vonmises(2.0, loc=0.5).cdf),
    ("vonmises", (0.0, 1e-6), st.uniform(-onp.pi, 2 * onp.pi).cdf),  # near-uniform kappa
    ("noncentral_chisquare", (3.0, 2.0), st.ncx2(3.0, 2.0).cdf),  # df > 1
    ("noncentral_chisquare", (0.6, 1.5), st.ncx2(0.6, 1.5).cdf),  # Poisson mixture
    ("noncentral_f", (3.0, 10.0, 2.0), st.ncf(3.0, 10.0, 2.0).cdf),
    ("standard_cauchy", (), st.cauchy().cdf),
    ("standard_t", (4.0,), st.t(4.0).cdf),
    ("triangular", (-1.0, 0.5, 3.0), st.triang(0.375, loc=-1.0, scale=4.0).cdf),
])
def test_continuous_distributions_match_scipy(name, args, cdf):
    x = _sample(name, *args, dtype="float64")
    assert x.dtype == onp.float64
    assert st.kstest(x, cdf).pvalue > 1e-3


def test_degenerate_parameters():
    assert not _sample("poisson", 0.0).any()
    assert not _sample("binomial", 9, 0.0).any() and (_sample("binomial", 9, 1.0) == 9).all()
    assert (_sample("geometric", 1.0) == 1).all()
    assert not _sample("negative_binomial", 3, 1.0).any()
    assert (_sample("logseries", 0.0) == 1).all()


def test_vonmises_wraps_into_the_circle():
    x = _sample("vonmises", 3.0, 0.5)
    assert x.min() >= -onp.pi and x.max() < onp.pi
    big = _sample("vonmises", -3.1, 5e6)  # the wrapped normal, around the mode
    assert abs(onp.angle(onp.exp(1j * big).mean()) + 3.1) < 1e-3


def test_dirichlet_rows_sum_to_one_with_the_right_means():
    np.random.seed(7)
    alpha = onp.array([0.5, 2.0, 3.5])
    x = np.random.dirichlet(alpha, size=(N, 2), dtype="float64").asnumpy()
    assert x.shape == (N, 2, 3)
    onp.testing.assert_allclose(x.sum(axis=-1), 1.0, rtol=1e-12)
    onp.testing.assert_allclose(x.reshape(-1, 3).mean(axis=0), alpha / alpha.sum(), atol=3e-3)
    assert st.kstest(x[:, 0, 1], st.beta(2.0, 4.0).cdf).pvalue > 1e-3  # marginal Beta


def test_array_parameters_broadcast_and_seeds_repeat():
    lam = np.array([[0.5], [5.0], [50.0]])
    np.random.seed(3)
    a = np.random.poisson(lam, size=(3, 20000)).asnumpy()
    onp.testing.assert_allclose(a.mean(axis=1), [0.5, 5.0, 50.0], rtol=0.03)
    np.random.seed(3)
    onp.testing.assert_array_equal(np.random.poisson(lam, size=(3, 20000)).asnumpy(), a)
    b = np.random.binomial(np.array([10, 100]), np.array([[0.1], [0.9]]))
    assert b.shape == (2, 2) and b.dtype == onp.int64
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    onp.testing.assert_array_equal(g1.geometric(0.3, size=10).asnumpy(),
                                   g2.geometric(0.3, size=10).asnumpy())
    t = np.random.standard_t(np.array([1.0, 10.0]))
    assert t.shape == (2,)
    assert np.random.zipf(3.0, size=5, dtype="int32").dtype == onp.int32


def test_zipf_of_huge_exponents_draws_ones_as_numpy_does():
    # P(X > 1) is about 2**-a: NumPy returns 1 for these; from a = 1025 the rejection test
    # once compared NaNs forever (2**(a - 1) overflows).
    for a in (60.0, 1024.5, 1025.0, 1e6, 1e300, onp.inf):
        onp.testing.assert_array_equal(np.random.zipf(a, size=50).asnumpy(), onp.ones(50))
        onp.testing.assert_array_equal(onp.random.default_rng(0).zipf(a, size=50), onp.ones(50))
    got = np.random.zipf(np.array([2.5, onp.inf]), size=(4000, 2)).asnumpy()
    assert (got[:, 1] == 1).all() and got[:, 0].max() > 1


@pytest.mark.parametrize("call, match", [
    (lambda: np.random.poisson(-1.0), "lam < 0"),
    (lambda: np.random.poisson(np.array([1.0, -2.0])), "lam < 0"),
    (lambda: np.random.binomial(-1, 0.5), "n < 0"),
    (lambda: np.random.binomial(5, 1.5), "p < 0, p > 1"),
    (lambda: np.random.geometric(0.0), "p <= 0"),
    (lambda: np.random.negative_binomial(0, 0.5), "n <= 0"),
    (lambda: np.random.zipf(1.0), "a <= 1"),
    (lambda: np.random.zipf(1.00001), "a - 1 < 1e-4"),
    (lambda: np.random.logseries(1.0), "p >= 1"),
    (lambda: np.random.wald(0.0, 1.0), "mean <= 0"),
    (lambda: np.random.vonmises(0.0, -1.0), "kappa < 0"),
    (lambda: np.random.noncentral_chisquare(0.0, 1.0), "df <= 0"),
    (lambda: np.random.noncentral_chisquare(2.0, -1.0), "nonc < 0"),
    (lambda: np.random.standard_t(0.0), "df <= 0"),
    (lambda: np.random.triangular(2.0, 1.0, 3.0), "left > mode"),
    (lambda: np.random.triangular(1.0, 1.0, 1.0), "left == right"),
    (lambda: np.random.dirichlet([1.0, 0.0]), "alpha <= 0"),
    (lambda: np.random.noncentral_f(1.0, 0.0, 1.0), "dfden <= 0"),
    (lambda: np.random.hypergeometric(-1, 5, 3), "ngood < 0"),
    (lambda: np.random.hypergeometric(5, 5, 11), "ngood \\+ nbad < nsample"),
    (lambda: np.random.hypergeometric(5, 5, 0), "nsample < 1"),
    (lambda: np.random.hypergeometric(np.array([5, 2]), 1, 4), "ngood \\+ nbad < nsample"),
])
def test_bad_parameters_are_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_count_dtypes_must_be_integers():
    with pytest.raises(TypeError, match="integer"):
        np.random.poisson(2.0, size=3, dtype="float32")


def test_generator_permuted_and_bytes():
    g = np.random.default_rng(4)
    x = onp.arange(60).reshape(3, 20)
    rows = g.permuted(np.array(x), axis=1).asnumpy()
    for got, want in zip(rows, x):
        assert sorted(got) == list(want) and list(got) != list(want)
    cols = g.permuted(np.array(x), axis=0).asnumpy()
    assert (onp.sort(cols, axis=0) == x).all()
    flat = g.permuted(np.array(x)).asnumpy()
    assert sorted(flat.ravel()) == list(range(60)) and flat.shape == (3, 20)
    with pytest.raises(Exception, match="axis"):
        g.permuted(np.array(x), axis=2)
    b = np.random.bytes(1000)
    assert isinstance(b, bytes) and len(b) == 1000 and len(set(b)) > 200
    assert np.random.default_rng(9).bytes(16) == np.random.default_rng(9).bytes(16)
