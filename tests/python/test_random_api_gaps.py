"""np.random against NumPy 2.4's API: Generator's construction and default_rng's seeds, the
exception types NumPy raises (OverflowError for an infinite uniform range, TypeError for a
float array of counts, NaN parameters that NumPy passes through), dirichlet with an empty or
zero alpha, multinomial with an array n and stacked pvals, multivariate_hypergeometric (both
methods), and the method= / dtype= / out= keywords of Generator's samplers. ndx's streams are
its own, so samples are checked against the exact distribution's support and moments (fixed
seeds, bounds of several standard errors) and shapes, dtypes and errors against NumPy's."""
import math

import numpy as onp
import pytest
from scipy import stats

import ndx.numpy as np

R = np.random


def _numpy_error(call):
    """The exception type NumPy raises for call (None when it raises nothing)."""
    try:
        call()
    except Exception as e:  # noqa: BLE001  (any type: it is what we compare)
        return type(e)
    return None


def _same_error(np_call, ndx_call):
    """ndx_call raises what np_call raises in NumPy (an instance of NumPy's type)."""
    want = _numpy_error(np_call)
    assert want is not None, "NumPy raised nothing"
    with pytest.raises(want):
        ndx_call()


def _host(x):
    return x.asnumpy() if hasattr(x, "asnumpy") else onp.asarray(x)


# ---- Generator and default_rng ----
@pytest.mark.parametrize("bad", [5, None, "seed", 1.5])
def test_generator_needs_a_bit_generator(bad):
    _same_error(lambda: onp.random.Generator(bad), lambda: R.Generator(bad))
    with pytest.raises(TypeError, match=r"\[Generator\]"):  # and the TypeError it is documented
        R.Generator(bad)


def test_generator_of_a_generator_is_refused_but_default_rng_returns_it():
    g = R.default_rng(1)
    _same_error(lambda: onp.random.Generator(onp.random.default_rng(1)),
                lambda: R.Generator(g))
    assert R.default_rng(g) is g
    assert isinstance(R.Generator(R.Philox(3)), R.Generator)


@pytest.mark.parametrize("seed", [
    None, 7, onp.int64(7), [1, 2, 3], onp.array([1, 2, 3]), 2**70, True, [],
    onp.array([2**40, 5], dtype=onp.uint64), [[1, 2], [3, 4]]])
def test_default_rng_takes_what_numpy_takes(seed):
    onp.random.default_rng(seed)  # NumPy takes it
    g = R.default_rng(seed)
    assert isinstance(g, R.Generator) and g.random(3).shape == (3,)


def test_default_rng_seeds_of_every_kind_key_the_same_stream():
    want = R.default_rng([1, 2, 3]).random(20).asnumpy()
    for seed in (onp.array([1, 2, 3]), np.array([1, 2, 3]), R.SeedSequence([1, 2, 3]),
                 onp.random.SeedSequence([1, 2, 3]), R.Philox([1, 2, 3]),
                 R.SeedSequence(np.array([1, 2, 3]))):
        onp.testing.assert_array_equal(R.default_rng(seed).random(20).asnumpy(), want)
    onp.testing.assert_array_equal(R.default_rng(np.array(9)).random(5).asnumpy(),
                                   R.default_rng(9).random(5).asnumpy())


@pytest.mark.parametrize("bad", [-1, 1.5, "a", [-1], onp.array([1.0])])
def test_default_rng_errors_are_numpys(bad):
    _same_error(lambda: onp.random.default_rng(bad), lambda: R.default_rng(bad))


def test_seed_sequence_takes_ndx_arrays():
    for entropy in ([1, 2, 3], [2**40, 7]):
        want = onp.random.SeedSequence(onp.array(entropy))
        got = R.SeedSequence(np.array(entropy))
        onp.testing.assert_array_equal(got.entropy, want.entropy)
        onp.testing.assert_array_equal(got.generate_state(4), want.generate_state(4))
    got = R.SeedSequence(5, spawn_key=np.array([1, 2]))
    want = onp.random.SeedSequence(5, spawn_key=(1, 2))
    assert tuple(got.spawn_key) == want.spawn_key
    onp.testing.assert_array_equal(got.generate_state(4), want.generate_state(4))
    _same_error(lambda: onp.random.SeedSequence(onp.array([1.0])),
                lambda: R.SeedSequence(np.array([1.0])))


def test_spawn_negative_is_overflow_error():
    _same_error(lambda: onp.random.default_rng(1).spawn(-1), lambda: R.default_rng(1).spawn(-1))


def test_failed_generator_call_draws_nothing():
    g = R.default_rng(3)
    with pytest.raises(ValueError):
        g.gamma(-1.0)
    onp.testing.assert_array_equal(g.random(5).asnumpy(), R.default_rng(3).random(5).asnumpy())


# ---- uniform ----
@pytest.mark.parametrize("low, high", [(0, onp.inf), (-onp.inf, onp.inf), (onp.nan, 1),
                                       (0, onp.nan)])
def test_uniform_bad_range_is_overflow_error(low, high):
    for n_gen, x_gen in ((onp.random.default_rng(0), R.default_rng(0)),
                         (onp.random.RandomState(0), R.RandomState(0)), (onp.random, R)):
        _same_error(lambda: n_gen.uniform(low, high), lambda: x_gen.uniform(low, high))
        _same_error(lambda: n_gen.uniform(onp.array([low]), onp.array([high])),
                    lambda: x_gen.uniform(np.array([low], dtype="float64"),
                                          np.array([high], dtype="float64")))
        with pytest.raises(ValueError):  # (still the ValueError ndx raised before)
            x_gen.uniform(low, high)


def test_uniform_high_below_low():
    _same_error(lambda: onp.random.default_rng(0).uniform(1, 0),
                lambda: R.default_rng(0).uniform(1, 0))
    _same_error(lambda: onp.random.default_rng(0).uniform([0, 1], [1, 0]),
                lambda: R.default_rng(0).uniform([0, 1], np.array([1.0, 0.0])))
    onp.random.RandomState(0).uniform(1, 0)  # the legacy ones take it: (low, high] then
    x = R.RandomState(0).uniform(1, 0, size=1000).asnumpy()
    assert ((x > 0) & (x <= 1)).all()


# ---- NaN parameters NumPy passes through ----
@pytest.mark.parametrize("name, args", [
    ("gamma", (onp.nan, 1.0)), ("gamma", (1.0, onp.nan)), ("standard_gamma", (onp.nan,)),
    ("beta", (onp.nan, 1.0)), ("beta", (1.0, onp.nan)), ("chisquare", (onp.nan,)),
    ("f", (onp.nan, 2.0)), ("f", (2.0, onp.nan)), ("wald", (onp.nan, 1.0)),
    ("wald", (1.0, onp.nan)), ("vonmises", (onp.nan, 1.0)), ("vonmises", (0.0, onp.nan)),
    ("noncentral_chisquare", (onp.nan, 1.0)), ("noncentral_chisquare", (2.0, onp.nan)),
    ("noncentral_f", (onp.nan, 2.0, 1.0)), ("noncentral_f", (2.0, 2.0, onp.nan)),
    ("standard_t", (onp.nan,))])
def test_nan_parameters_give_nan(name, args):
    for n_gen, x_gen in ((onp.random.default_rng(0), R.default_rng(0)),
                         (onp.random.RandomState(0), R.RandomState(0))):
        assert onp.isnan(getattr(n_gen, name)(*args, size=3)).all()
        assert onp.isnan(getattr(x_gen, name)(*args, size=3).asnumpy()).all()
        # An array parameter: NaN only where it is NaN.
        arrays = [onp.array([v, 2.0]) if onp.isnan(v) else v for v in args]
        want = getattr(n_gen, name)(*arrays)
        got = getattr(x_gen, name)(*[np.array(a, dtype="float64") if isinstance(a, onp.ndarray)
                                     else a for a in arrays]).asnumpy()
        onp.testing.assert_array_equal(onp.isnan(got), onp.isnan(want))
    out = np.zeros((3,), dtype="float64")
    if name not in ("noncentral_f", "standard_t"):
        assert getattr(R.default_rng(1), name)(*args, out=out) is out
        assert onp.isnan(out.asnumpy()).all()


def test_nan_with_another_bad_parameter_is_still_value_error():
    _same_error(lambda: onp.random.default_rng(0).gamma(onp.nan, -1.0),
                lambda: R.default_rng(0).gamma(onp.nan, -1.0))


@pytest.mark.parametrize("call", [
    lambda m, g: g.standard_t("x"), lambda m, g: g.noncentral_f("x", 1, 1),
    lambda m, g: g.standard_t(1j), lambda m, g: g.hypergeometric(1j, 5, 2),
    lambda m, g: g.hypergeometric("x", 5, 2), lambda m, g: g.normal(None),
    lambda m, g: g.gamma(),
])
def test_wrong_parameter_types(call):
    _same_error(lambda: call(onp, onp.random.default_rng(0)),
                lambda: call(np, R.default_rng(0)))


# ---- counts: float arrays are NumPy's TypeError, nsample 0 ----
@pytest.mark.parametrize("call", [
    lambda m: m.binomial(m.array([5.0, 6.0]), 0.5),
    lambda m: m.hypergeometric(m.array([5.0]), 5, 2),
    lambda m: m.hypergeometric(5, m.array([5.0]), 2),
    lambda m: m.hypergeometric(5, 5, m.array([2.0])),
])
def test_float_count_arrays_are_type_errors(call):
    for n_gen, x_gen in ((onp.random.default_rng(0), R.default_rng(0)),
                         (onp.random.RandomState(0), R.RandomState(0))):
        _same_error(lambda: call(_Arrays(n_gen, onp)), lambda: call(_Arrays(x_gen, np)))
    # A float number, or a list of floats, is truncated, as NumPy's.
    x = R.default_rng(0).binomial([5.0, 6.9], 1.0).asnumpy()
    onp.testing.assert_array_equal(x, onp.random.default_rng(0).binomial([5.0, 6.9], 1.0))


class _Arrays:
    """A generator whose .array makes the matching library's arrays."""

    def __init__(self, gen, lib):
        self._gen, self.array = gen, lib.array

    def __getattr__(self, name):
        return getattr(self._gen, name)


def test_hypergeometric_nsample_zero():
    want = onp.random.default_rng(0).hypergeometric(5, 5, 0, size=3)
    got = R.default_rng(0).hypergeometric(5, 5, 0, size=3)
    onp.testing.assert_array_equal(got.asnumpy(), want)
    assert got.dtype == onp.int64 and R.default_rng(0).hypergeometric(0, 0, 0).shape == ()
    x = R.default_rng(1).hypergeometric(np.array([5, 5]), 5, np.array([0, 4]),
                                        size=(4000, 2)).asnumpy()
    assert (x[:, 0] == 0).all() and abs(x[:, 1].mean() - 2.0) < 0.1  # mean n K / N = 2
    # The legacy one refuses it, as NumPy's legacy one does.
    _same_error(lambda: onp.random.RandomState(0).hypergeometric(5, 5, 0),
                lambda: R.RandomState(0).hypergeometric(5, 5, 0))


# ---- dirichlet ----
def test_dirichlet_empty_alpha():
    for n_gen, x_gen in ((onp.random.default_rng(0), R.default_rng(0)),
                         (onp.random.RandomState(0), R.RandomState(0)), (onp.random, R)):
        for size in (None, 3, (2, 3)):
            want = n_gen.dirichlet([], size=size)
            got = x_gen.dirichlet([], size=size)
            assert got.shape == want.shape and got.dtype.kind == "f"
    _same_error(lambda: onp.random.default_rng(0).dirichlet(1.0),
                lambda: R.default_rng(0).dirichlet(1.0))


def test_generator_dirichlet_zero_alpha():
    alpha = [0.0, 2.0, 0.0, 3.0]
    x = R.default_rng(5).dirichlet(alpha, size=20000, dtype="float64").asnumpy()
    assert x.shape == (20000, 4)
    assert (x[:, [0, 2]] == 0).all()
    onp.testing.assert_allclose(x.sum(axis=1), 1.0, rtol=1e-12)
    # The other components are Dirichlet(2, 3): component 1 is Beta(2, 3).
    assert stats.kstest(x[:, 1], stats.beta(2, 3).cdf).pvalue > 1e-3
    onp.testing.assert_array_equal(R.default_rng(5).dirichlet([0.0, 0.0]).asnumpy(), [0, 0])
    onp.testing.assert_array_equal(onp.random.default_rng(5).dirichlet([0.0, 0.0]), [0, 0])
    _same_error(lambda: onp.random.default_rng(0).dirichlet([-1.0, 1.0]),
                lambda: R.default_rng(0).dirichlet([-1.0, 1.0]))
    _same_error(lambda: onp.random.RandomState(0).dirichlet([0.0, 1.0]),
                lambda: R.RandomState(0).dirichlet([0.0, 1.0]))


def test_dirichlet_nan_alpha_is_nan_everywhere():
    for n_gen, x_gen in ((onp.random.default_rng(0), R.default_rng(0)),
                         (onp.random.RandomState(0), R.RandomState(0))):
        want = n_gen.dirichlet([onp.nan, 1.0], size=2)
        got = x_gen.dirichlet([onp.nan, 1.0], size=2).asnumpy()
        assert got.shape == want.shape and onp.isnan(got).all() and onp.isnan(want).all()


# ---- multinomial ----
@pytest.mark.parametrize("n, pvals, size", [
    (10, [0.2, 0.8], None), (10, [0.2, 0.8], 3), ([10, 20], [0.2, 0.8], None),
    ([10, 20], [0.2, 0.8], (3, 2)), (10, [[0.2, 0.8], [0.5, 0.5]], None),
    ([[10], [20], [30]], [[0.2, 0.8], [0.5, 0.5]], None),
    ([[1], [2]], [0.5, 0.5], (2, 3)), (10, [[0.5, 0.5]], (3, 2)), (0, [0.5, 0.5], 4),
    ([10, 20], [0.2, 0.3, 0.5], (0, 2)),
])
def test_multinomial_shapes_as_numpy(n, pvals, size):
    want = onp.random.default_rng(0).multinomial(onp.array(n), pvals, size=size)
    got = R.default_rng(0).multinomial(np.array(n), pvals, size=size)
    assert got.shape == want.shape and got.dtype == onp.int64
    g = got.asnumpy()
    onp.testing.assert_array_equal(g.sum(axis=-1), onp.broadcast_to(onp.array(n), g.shape[:-1]))
    assert (g >= 0).all()


def test_multinomial_array_n_moments():
    n = onp.array([[30], [200]])
    p = onp.array([[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]])
    x = R.default_rng(11).multinomial(np.array(n), p, size=(5000, 2, 2)).asnumpy()
    nb = n[..., None]  # n (2, 1) against pvals' rows (2,): counts (2, 2, 3)
    mean, var = nb * p, nb * p * (1 - p)  # each count is Binomial(n, p_i)
    se = onp.sqrt(var / 5000) + 1e-12
    assert (abs(x.mean(axis=0) - mean) < 6 * se + 1e-9).all()
    assert (abs(x.var(axis=0) - var) < 0.1 * var + 1e-9).all()
    assert (x[..., 1, 2] == 0).all()  # a zero probability is never drawn
    # Covariance of two counts is -n p_i p_j.
    c = onp.cov(x[:, 0, 0, 0], x[:, 0, 0, 1])[0, 1]
    assert abs(c - (-30 * 0.2 * 0.3)) < 0.4


def test_multinomial_large_n():
    x = R.default_rng(2).multinomial(10**9, [0.25, 0.25, 0.5], size=2000).asnumpy()
    assert (x.sum(axis=1) == 10**9).all()
    sd = math.sqrt(10**9 * 0.25 * 0.75)
    assert abs(x[:, 0].mean() - 2.5e8) < 6 * sd / math.sqrt(2000)


@pytest.mark.parametrize("call", [
    lambda m, g: g.multinomial(m.array([10, 20]), [0.2, 0.8], size=3),
    lambda m, g: g.multinomial(m.array([1, -1]), [0.2, 0.8]),
    lambda m, g: g.multinomial(m.array([10.0, 20.0]), [0.2, 0.8]),
    lambda m, g: g.multinomial(10, [[0.5, 0.6], [-0.1, 1.1]]),
    lambda m, g: g.multinomial(10, [[0.9, 0.9, 0.1]]),
    lambda m, g: g.multinomial(onp.nan, [0.5, 0.5]),
    lambda m, g: g.multinomial(10, []),
    lambda m, g: g.multinomial(10, [onp.nan, 0.5]),
])
def test_multinomial_errors_as_numpy(call):
    _same_error(lambda: call(onp, onp.random.default_rng(0)),
                lambda: call(np, R.default_rng(0)))


def test_legacy_multinomial():
    # A float n is truncated; array n and stacked pvals are the Generator's only.
    for n_gen, x_gen in ((onp.random.RandomState(0), R.RandomState(0)), (onp.random, R)):
        assert n_gen.multinomial(10.5, [0.5, 0.5]).sum() == 10
        assert int(x_gen.multinomial(10.5, [0.5, 0.5]).sum()) == 10
        _same_error(lambda: n_gen.multinomial(10, [[0.5, 0.5]]),
                    lambda: x_gen.multinomial(10, [[0.5, 0.5]]))


# ---- multivariate_hypergeometric ----
@pytest.mark.parametrize("method", ["marginals", "count"])
@pytest.mark.parametrize("colors, nsample, size", [
    ([5, 3, 2], 4, None), ([5, 3, 2], 4, 3), ([5, 3, 2], 4, (2, 3)), ([5, 0, 2], 7, 5),
    ([], 0, None), ([], 0, 3), ([4], 2, 2), ([5, 3, 2], 0, (2,)), ([5, 3, 2], 4, (0, 2))])
def test_multivariate_hypergeometric_shapes(colors, nsample, size, method):
    want = onp.random.default_rng(0).multivariate_hypergeometric(colors, nsample, size, method)
    got = R.default_rng(0).multivariate_hypergeometric(colors, nsample, size, method)
    assert got.shape == want.shape and got.dtype == onp.int64
    g = got.asnumpy()
    assert (g.sum(axis=-1) == nsample).all()
    assert (g >= 0).all() and (g <= onp.array(colors, dtype=onp.int64)).all()


@pytest.mark.parametrize("method", ["marginals", "count"])
def test_multivariate_hypergeometric_moments(method):
    colors, k, rows = onp.array([16, 8, 4, 0, 12]), 15, 20000
    x = R.default_rng(7).multivariate_hypergeometric(np.array(colors), k, size=rows,
                                                     method=method).asnumpy()
    total = colors.sum()
    q = colors / total  # each count is Hypergeometric(colors_i, total - colors_i, k)
    mean = k * q
    var = k * q * (1 - q) * (total - k) / (total - 1)
    assert (abs(x.mean(axis=0) - mean) < 6 * onp.sqrt(var / rows) + 1e-12).all()
    assert (abs(x.var(axis=0) - var) < 0.1 * var + 1e-12).all()
    # Counts of color 0 against the exact distribution (chi-square of the frequencies).
    support = onp.arange(0, k + 1)
    pmf = stats.hypergeom(total, colors[0], k).pmf(support)
    keep = pmf * rows > 5
    observed = onp.bincount(x[:, 0], minlength=k + 1)[keep]
    expected = pmf[keep] / pmf[keep].sum() * observed.sum()
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_multivariate_hypergeometric_count_with_a_huge_urn():
    x = R.default_rng(3).multivariate_hypergeometric([10**9, 10**9], 3, size=4,
                                                    method="count").asnumpy()
    assert x.shape == (4, 2) and (x.sum(axis=1) == 3).all()
    _same_error(lambda: onp.random.default_rng(0).multivariate_hypergeometric([10**9, 10**9], 1),
                lambda: R.default_rng(0).multivariate_hypergeometric([10**9, 10**9], 1))


@pytest.mark.parametrize("colors, nsample, kw", [
    ([5, 3, 2], 11, {}), ([5, -3, 2], 4, {}), ([5, 3, 2], -1, {}), ([5.0, 3.0], 1, {}),
    ([[5, 3]], 1, {}), (5, 1, {}), ([5, 3], 1.5, {}), ([5, 3], 1, {"method": "x"}),
    ([], 1, {})])
def test_multivariate_hypergeometric_errors_as_numpy(colors, nsample, kw):
    _same_error(
        lambda: onp.random.default_rng(0).multivariate_hypergeometric(colors, nsample, **kw),
        lambda: R.default_rng(0).multivariate_hypergeometric(colors, nsample, **kw))


# ---- multivariate_normal(method=) ----
@pytest.mark.parametrize("method", ["svd", "eigh", "cholesky"])
def test_multivariate_normal_methods(method):
    cov = onp.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    mean = onp.array([1.0, -2.0, 0.5])
    x = R.default_rng(4).multivariate_normal(mean, cov, size=(20000,), dtype="float64",
                                             method=method).asnumpy()
    assert x.shape == onp.random.default_rng(4).multivariate_normal(
        mean, cov, size=(20000,), method=method).shape
    onp.testing.assert_allclose(x.mean(axis=0), mean, atol=0.05)
    onp.testing.assert_allclose(onp.cov(x.T), cov, atol=0.06)


@pytest.mark.parametrize("call", [
    lambda g: g.multivariate_normal([0, 0], onp.eye(2), method="x"),
    lambda g: g.multivariate_normal([0, 0], [[1.0, 2.0], [2.0, 1.0]], method="cholesky",
                                    check_valid="ignore"),
    lambda g: g.multivariate_normal([0, 0], [[1.0, 0.5], [0.0, 1.0]], check_valid="raise"),
    lambda g: g.multivariate_normal([0, 0], [[1.0, 2.0], [2.0, 1.0]], method="eigh",
                                    check_valid="raise"),
])
def test_multivariate_normal_errors_as_numpy(call):
    _same_error(lambda: call(onp.random.default_rng(0)), lambda: call(R.default_rng(0)))


def test_multivariate_normal_asymmetric_cov_warns_as_numpy():
    cov = [[1.0, 0.5], [0.0, 1.0]]
    with pytest.warns(RuntimeWarning):
        onp.random.default_rng(0).multivariate_normal([0, 0], cov)
    with pytest.warns(RuntimeWarning):
        R.default_rng(0).multivariate_normal([0, 0], cov)


# ---- dtype= / out= / method= of Generator's samplers ----
def test_standard_exponential_methods():
    g = R.default_rng(8)
    for method in ("zig", "inv"):
        for dtype in ("float32", "float64"):
            x = g.standard_exponential(20000, dtype=dtype, method=method)
            assert x.dtype == onp.dtype(dtype) and x.shape == (20000,)
            assert stats.kstest(x.asnumpy().astype(onp.float64), stats.expon().cdf).pvalue > 1e-3
            assert float(x.min()) >= 0
    a = R.default_rng(8).standard_exponential(50, method="inv").asnumpy()
    onp.testing.assert_array_equal(R.default_rng(8).standard_exponential(50, method="inv")
                                   .asnumpy(), a)  # repeatable
    out = np.zeros((2, 3), dtype="float64")
    assert R.default_rng(1).standard_exponential(out=out, method="inv", dtype="float64") is out
    assert float(out.min()) > 0


@pytest.mark.parametrize("name, args", [("random", ()), ("standard_normal", ()),
                                        ("standard_exponential", ()),
                                        ("standard_gamma", (2.0,))])
def test_generator_float_dtypes_and_out(name, args):
    ng, xg = onp.random.default_rng(0), R.default_rng(0)
    for dtype in ("float32", "float64", onp.float32):
        got = getattr(xg, name)(*args, size=(2, 3), dtype=dtype)
        want = getattr(ng, name)(*args, size=(2, 3), dtype=dtype)
        assert got.dtype == want.dtype and got.shape == want.shape
    for dtype in ("float16", "int32", "complex64"):
        _same_error(lambda: getattr(ng, name)(*args, size=3, dtype=dtype),
                    lambda: getattr(xg, name)(*args, size=3, dtype=dtype))
    # out=: its dtype must be the dtype asked for, its shape size.
    _same_error(lambda: getattr(ng, name)(*args, dtype="float32", out=onp.zeros(3)),
                lambda: getattr(xg, name)(*args, dtype="float32",
                                          out=np.zeros(3, dtype="float64")))
    _same_error(lambda: getattr(ng, name)(*args, size=4, out=onp.zeros(3)),
                lambda: getattr(xg, name)(*args, size=4, out=np.zeros(3, dtype="float64")))
    out = np.zeros((2, 3), dtype="float64")
    assert getattr(xg, name)(*args, out=out, dtype="float64") is out


def test_integers_endpoint_with_arrays():
    ng, xg = onp.random.default_rng(0), R.default_rng(0)
    for low, high in ((0, [5, 6]), ([0, 1], [5, 6]), (onp.array([0, 1]), onp.array([2, 3]))):
        want = ng.integers(low, high, endpoint=True)
        got = xg.integers(low, high, endpoint=True)
        assert got.shape == want.shape and got.dtype == want.dtype
    x = xg.integers(2, [4, 7], size=(5000, 2), endpoint=True).asnumpy()
    assert set(onp.unique(x[:, 0])) == {2, 3, 4} and x[:, 1].max() == 7
    _same_error(lambda: ng.integers(0, 256, dtype="uint8", endpoint=True),
                lambda: xg.integers(0, 256, dtype="uint8", endpoint=True))


def test_choice_and_permuted_as_numpy():
    ng, xg = onp.random.default_rng(0), R.default_rng(0)
    for n_gen, x_gen in ((ng, xg), (onp.random.RandomState(0), R.RandomState(0))):
        assert x_gen.choice(0, 0).shape == n_gen.choice(0, 0).shape == (0,)
        _same_error(lambda: n_gen.choice(5.0), lambda: x_gen.choice(5.0))
        _same_error(lambda: n_gen.choice(0), lambda: x_gen.choice(0))
        assert x_gen.choice(-1, 0).shape == n_gen.choice(-1, 0).shape == (0,)
    assert xg.choice(0, (0, 3)).shape == ng.choice(0, (0, 3)).shape
    _same_error(lambda: ng.choice(onp.array(4.0)), lambda: xg.choice(np.array(4.0)))
    _same_error(lambda: ng.permuted(onp.arange(6).reshape(2, 3), 1),
                lambda: xg.permuted(np.arange(6).reshape(2, 3), 1))
    _same_error(lambda: ng.permuted(onp.array(3)), lambda: xg.permuted(np.array(3)))
    x = xg.permuted([[1, 2, 3], [4, 5, 6]], axis=1).asnumpy()
    assert sorted(x[0]) == [1, 2, 3] and sorted(x[1]) == [4, 5, 6]


def test_size_as_an_integer_array():
    for size in (onp.array([2, 3]), np.array([2, 3]), onp.array(4)):
        want = onp.random.default_rng(0).normal(size=size).shape
        assert R.default_rng(0).normal(size=size).shape == want
        assert R.normal(size=size).shape == want
