"""ndx.test_utils, the helpers custom-op authors use, checked on cases with known answers."""
import os

import numpy as onp
import pytest

import ndx
from ndx import np, sym, test_utils


def test_assert_almost_equal_and_same():
    test_utils.assert_almost_equal(np.array([1.0, 2.0]), onp.array([1.0, 2.0 + 1e-7]))
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(np.array([1.0, 2.0]), onp.array([1.0, 2.1]))
    with pytest.raises(AssertionError, match="shape"):
        test_utils.assert_almost_equal(np.zeros((2,)), onp.zeros((3,)))
    # MXNet's semantics: operands broadcast unless use_broadcast=False.
    test_utils.assert_almost_equal(np.ones((2, 3)), 1)
    test_utils.assert_almost_equal(np.ones((3, 1)), onp.ones((3,)))
    with pytest.raises(AssertionError, match="shape"):
        test_utils.assert_almost_equal(np.ones((3, 1)), onp.ones((3,)), use_broadcast=False)
    # Default tolerances per dtype (MXNet's table): float32 rtol 1e-4 / atol 1e-3,
    # float64 rtol 1e-5 / atol 1e-20; the looser of the two operands wins.
    f32 = onp.array([1000.0], dtype=onp.float32)
    test_utils.assert_almost_equal(f32, f32 * (1 + 0.9e-4))
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(f32, f32 * (1 + 2e-4))
    f64 = onp.array([1000.0])
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(f64, f64 * (1 + 2e-5))
    test_utils.assert_almost_equal(f64, f32 * (1 + 0.9e-4))
    # A dict of tolerances by dtype; integers compare exactly by default.
    test_utils.assert_almost_equal(f32, f32 * 1.01, rtol={onp.dtype(onp.float32): 0.02})
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(onp.array([3]), onp.array([4]))
    # NaN handling and booleans.
    test_utils.assert_almost_equal(onp.array([onp.nan]), onp.array([onp.nan]), equal_nan=True)
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(onp.array([onp.nan]), onp.array([onp.nan]))
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(onp.array([True]), onp.array([False]))
    # The message names the operands and the place of the largest error.
    a = onp.zeros((3, 4))
    b = a.copy()
    b[1, 2] = 5.0
    b[0, 0] = 1.0
    with pytest.raises(AssertionError) as info:
        test_utils.assert_almost_equal(a, b, names=("got", "want"))
    text = str(info.value)
    assert "Location of maximum error: (1, 2), got=0.0, want=5.0" in text
    assert "2 of 12 elements" in text
    assert test_utils.almost_equal(onp.ones(3), onp.ones(3) + 1e-9)
    assert not test_utils.almost_equal(onp.ones(3), onp.ones(3) + 1e-3)
    test_utils.assert_allclose(onp.ones(2), onp.ones(2))
    test_utils.assert_almost_equal_ignore_nan(onp.array([onp.nan, 1.0]), onp.array([0.0, 1.0]))
    test_utils.assert_almost_equal_with_err(onp.array([0.0, 1.0, 2.0, 3.0]),
                                            onp.array([0.0, 1.0, 2.0, 9.0]), etol=0.3)
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal_with_err(onp.array([0.0, 1.0, 2.0, 3.0]),
                                                onp.array([0.0, 1.0, 7.0, 9.0]), etol=0.3)
    assert test_utils.same(np.arange(3), onp.arange(3))
    assert not test_utils.same(np.arange(3), onp.arange(1, 4))


def test_random_helpers():
    shape = test_utils.rand_shape_nd(3, dim=4)
    assert len(shape) == 3 and all(1 <= d <= 4 for d in shape)
    assert all(isinstance(d, int) for d in shape)
    shapes = [test_utils.rand_shape_nd(2, dim=2, allow_zero_size=True) for _ in range(200)]
    assert {d for s in shapes for d in s} == {0, 1, 2}
    d0, d1 = test_utils.rand_shape_2d(3, 5)
    assert 1 <= d0 <= 3 and 1 <= d1 <= 5
    s3 = test_utils.rand_shape_3d(2, 3, 4)
    assert len(s3) == 3 and all(1 <= d <= m for d, m in zip(s3, (2, 3, 4)))
    # MXNet's rand_ndarray: standard-normal values in an NDArray (float32 by default).
    onp.random.seed(0)
    x = test_utils.rand_ndarray((400, 50))
    assert isinstance(x, ndx.nd.NDArray) and x.shape == (400, 50) and x.dtype == onp.float32
    v = x.asnumpy()
    assert abs(v.mean()) < 0.02 and abs(v.std() - 1) < 0.02
    y = x.as_np_ndarray()
    assert type(y) is np.ndarray
    y[0, 0] = 123.0  # the same memory
    assert x[0, 0].item() == 123.0
    assert test_utils.rand_ndarray((2,), dtype="float64").dtype == onp.float64
    with pytest.raises(ValueError, match="stype"):
        test_utils.rand_ndarray((2, 2), stype="coo")


def test_collapse_sum_like_matches_hand_computation():
    a = onp.arange(24, dtype=onp.float64).reshape(2, 3, 4)
    got = test_utils.collapse_sum_like(a, (3, 1))
    onp.testing.assert_array_equal(got, a.sum(axis=(0, 2)).reshape(3, 1))
    onp.testing.assert_array_equal(test_utils.collapse_sum_like(a, (2, 3, 4)), a)


def test_with_seed_reproduces_and_use_np_scopes():
    @test_utils.with_seed(123)
    def draw():
        return onp.random.uniform(size=3)

    onp.testing.assert_array_equal(draw(), draw())
    seen = []

    @test_utils.use_np
    def probe(x):
        seen.append((ndx.util.is_np_array(), ndx.util.is_np_shape()))
        return x + 1

    ndx.util.reset_np()
    try:
        assert (ndx.util.is_np_array(), ndx.util.is_np_shape()) == (False, False)
        assert probe(1) == 2 and seen == [(True, True)]
        assert not ndx.util.is_np_array()  # restored on return
    finally:
        ndx.util.set_np()


def test_check_numeric_gradient_and_op_gradient():
    test_utils.check_numeric_gradient("_np_multiply",
                                      [onp.array([1.0, 2.0]), onp.array([3.0, -1.0])])
    test_utils.check_numeric_gradient("_np_sum", [onp.arange(6.0).reshape(2, 3)], {"axis": 1})
    # op_gradient evaluates the registered FGradient: d(x^2)/dx = 2x, and sign's is zero.
    grads = test_utils.op_gradient("_np_square", [np.array([3.0])], [np.array([1.0])])
    test_utils.assert_almost_equal(grads[0], onp.array([6.0]))
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(
            test_utils.op_gradient("_np_sign", [np.array([3.0])], [np.array([1.0])])[0],
            onp.array([6.0]))


def test_tolerance_tables_and_effective_dtype():
    rt, at = test_utils.default_rtols(), test_utils.default_atols()
    f16, f32, f64 = (onp.dtype(t) for t in ("float16", "float32", "float64"))
    assert (rt[f16], rt[f32], rt[f64]) == (1e-2, 1e-4, 1e-5)  # MXNet's values
    assert (at[f16], at[f32], at[f64]) == (1e-1, 1e-3, 1e-20)
    assert rt[onp.dtype("int32")] == 0 and at[onp.dtype("bool")] == 0
    assert test_utils.default_numeric_eps()[f32] == 2.0 ** -9
    assert test_utils.effective_dtype(np.ones(2, dtype="float16")) == f16
    assert test_utils.get_tols(onp.ones(1, dtype=onp.float16), onp.ones(1), None, None) \
        == (1e-2, 1e-1)
    assert test_utils.get_tols(onp.ones(1), onp.ones(1), 0.5, {f64: 0.25}) == (0.5, 0.25)


def test_collapse_sum_like_zero_size_and_errors():
    assert test_utils.collapse_sum_like(onp.zeros((0, 3)), (1, 3)).tolist() == [[0.0] * 3]
    with pytest.raises(ValueError, match="does not broadcast"):
        test_utils.collapse_sum_like(onp.zeros((2, 3)), (2,))


def test_exceptions_retry_environment_and_devices():
    test_utils.assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError, match="did not raise"):
        test_utils.assert_exception(int, ValueError, "3")
    test_utils.assertRaises(ZeroDivisionError, lambda: 1 / 0)
    calls = []

    @test_utils.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 2

    flaky()
    assert len(calls) == 2

    @test_utils.retry(2)
    def always_fails():
        calls.append(1)
        raise AssertionError("no")

    with pytest.raises(AssertionError, match="no"):
        always_fails()
    os.environ.pop("NDX_TEST_ENV_A", None)
    os.environ["NDX_TEST_ENV_B"] = "keep"
    with test_utils.environment({"NDX_TEST_ENV_A": "1", "NDX_TEST_ENV_B": None}):
        assert os.environ["NDX_TEST_ENV_A"] == "1" and "NDX_TEST_ENV_B" not in os.environ
    assert "NDX_TEST_ENV_A" not in os.environ and os.environ["NDX_TEST_ENV_B"] == "keep"
    with pytest.raises(RuntimeError):
        with test_utils.environment("NDX_TEST_ENV_A", "2"):
            assert os.environ["NDX_TEST_ENV_A"] == "2"
            raise RuntimeError
    assert "NDX_TEST_ENV_A" not in os.environ
    del os.environ["NDX_TEST_ENV_B"]
    assert test_utils.default_device() == ndx.cpu() == test_utils.default_context()
    assert test_utils.is_op_runnable() and not test_utils.has_tvm_ops()


def test_eigenvalue_matrices():
    onp.random.seed(1)
    m = test_utils.new_matrix_with_real_eigvals_nd((3, 4, 4))
    assert m.shape == (3, 4, 4)
    ev = onp.linalg.eigvals(m)
    assert onp.abs(ev.imag).max() < 1e-8 and onp.abs(ev.real).max() <= 10
    assert not onp.allclose(m, onp.swapaxes(m, -1, -2))  # not symmetric in general
    s = test_utils.new_sym_matrix_with_real_eigvals_nd((2, 5, 5))
    onp.testing.assert_allclose(s, onp.swapaxes(s, -1, -2), atol=1e-12)
    assert onp.abs(onp.linalg.eigvalsh(s)).max() <= 10
    assert test_utils.new_matrix_with_real_eigvals_nd((3, 3)).shape == (3, 3)


def test_generator_checks_against_scipy():
    stats = pytest.importorskip("scipy.stats")
    buckets, probs = test_utils.gen_buckets_probs_with_ppf(lambda q: stats.norm.ppf(q), 5)
    assert probs == [0.2] * 5 and buckets[0][0] == -onp.inf and buckets[-1][1] == onp.inf
    onp.testing.assert_allclose([b[1] for b in buckets[:-1]],
                                stats.norm.ppf([0.2, 0.4, 0.6, 0.8]))
    onp.random.seed(2)
    samples = onp.random.normal(size=5000)
    p, obs, expected = test_utils.chi_square_check(lambda n: samples[:n], buckets, probs, 5000)
    assert obs.sum() == 5000
    ref = stats.chisquare(obs, expected)
    assert abs(p - ref.pvalue) < 1e-9
    for a, x in [(0.5, 0.1), (2.0, 3.0), (7.5, 2.0), (20.0, 40.0)]:
        assert abs(test_utils._gamma_q(a, x) - stats.chi2.sf(2 * x, 2 * a)) < 1e-12
    test_utils.verify_generator(lambda n: onp.random.normal(size=n), buckets, probs,
                                nsamples=20000, nrepeat=3)
    with pytest.raises(AssertionError, match="Generator test fails"):
        test_utils.verify_generator(lambda n: onp.random.normal(0.5, size=n), buckets, probs,
                                    nsamples=20000, nrepeat=3)
    discrete, dprobs = [0, 1, 2], [0.5, 0.25, 0.25]
    test_utils.verify_generator(lambda n: onp.random.choice(3, size=n, p=dprobs), discrete,
                                dprobs, nsamples=20000, nrepeat=3)
    assert test_utils.mean_check(lambda n: onp.random.normal(3.0, 2.0, size=n), 3.0, 2.0,
                                 nsamples=20000)
    assert not test_utils.mean_check(lambda n: onp.random.normal(3.5, 2.0, size=n), 3.0, 2.0,
                                     nsamples=20000)
    assert test_utils.var_check(lambda n: onp.random.normal(0.0, 2.0, size=n), 2.0,
                                nsamples=20000)


def test_check_numeric_gradient_on_callables_and_symbols():
    onp.random.seed(3)
    x = onp.random.uniform(0.5, 1.5, size=(3, 2))
    test_utils.check_numeric_gradient(lambda a: np.sin(a) * a, [x], dtype=onp.float64)
    test_utils.check_numeric_gradient(lambda a, b: a @ b, [x, x.T], grad_nodes=[1],
                                      dtype=onp.float64)
    v = sym.var("v")
    test_utils.check_numeric_gradient(sym.log(v) * v, [x], dtype=onp.float64)
    # Within half a step of the kink of |v|, central differences (about 0.02) disagree with
    # the derivative sign(v) = +-1: the checker must report it, for symbols and callables.
    near_kink = [onp.array([1e-4, -1e-4])]
    with pytest.raises(AssertionError, match="NUMERICAL_v"):
        test_utils.check_numeric_gradient(sym.abs(v), near_kink, numeric_eps=1e-2,
                                          dtype=onp.float64)
    with pytest.raises(AssertionError, match="NUMERICAL_0"):
        test_utils.check_numeric_gradient(np.abs, near_kink, numeric_eps=1e-2,
                                          dtype=onp.float64)
    with pytest.raises(ValueError, match="do not match"):
        test_utils.check_numeric_gradient(sym.log(v), {"w": x})
    with pytest.raises(TypeError, match="Symbol, a callable"):
        test_utils.check_numeric_gradient(3, [x])


def test_simple_forward_and_symbol_structure():
    a, b = sym.var("a"), sym.var("b")
    out = test_utils.simple_forward(a * b, a=onp.array([2.0]), b=onp.array([3.0]))
    onp.testing.assert_allclose(out, [6.0])
    assert test_utils.same_symbol_structure(sym.sin(a) + b, sym.sin(b) + a)
    assert not test_utils.same_symbol_structure(sym.sin(a) + b, sym.cos(a) + b)
    x = np.arange(4.0)
    assert test_utils.same_array(x, x[:]) and not test_utils.same_array(x, x.copy())


def test_hybridize_consistency_helper():
    from ndx.gluon import nn
    data = [np.array(onp.random.default_rng(5).normal(size=(4, 3)).astype(onp.float32))]

    def build():
        return nn.Dense(2, in_units=3)

    test_utils.check_gluon_hybridize_consistency(build, data)
    with pytest.raises(AssertionError):  # a reference the block cannot match
        test_utils.check_gluon_hybridize_consistency(build, data,
                                                     numpy_func=lambda x: x[:, :2] * 0 + 7)


def test_set_default_device_and_decorated_classes():
    before = test_utils.default_device()
    try:
        test_utils.set_default_device("gpu(1)")
        assert test_utils.default_device() == ndx.gpu(1) == ndx.current_device()
    finally:
        test_utils.set_default_device(before)
    assert test_utils.default_device() == before

    @test_utils.use_np
    class Probe:
        def method(self):
            return ndx.util.is_np_array()

        @staticmethod
        def static(a):
            return a + 1

        @classmethod
        def klass(cls):
            return cls.__name__

        @property
        def prop(self):
            return ndx.util.is_np_shape()

    with ndx.util.np_array(False), ndx.util.np_shape(False):
        p = Probe()
        assert p.method() and p.prop
        assert p.static(1) == 2 and Probe.static(2) == 3 and p.klass() == "Probe"
        assert not ndx.util.is_np_array()
    with pytest.raises(TypeError, match="classes and callables"):
        test_utils.use_np(3)
