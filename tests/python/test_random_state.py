"""np.random's state API: RandomState (NumPy's legacy class), get_state / set_state of it and
of the global stream, SeedSequence (NumPy's hash, so its words must equal NumPy's), Generator's
spawn / bit_generator / Philox, and Generator's choice / permutation / shuffle with axis.

ndx's streams are not NumPy's (Philox-based), so values are only compared with ndx itself for
determinism; everything else is checked against NumPy 2 (error types, shapes, dtypes) or
against the distribution (scipy's tests with fixed seeds)."""
import copy
import pickle
import warnings

import numpy as onp
import pytest
import scipy.stats as st

from ndx import np

R = np.random


def _host(x):
    return x.asnumpy() if hasattr(x, "asnumpy") else onp.asarray(x)


def _numpy_error(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001  (the type is the expectation)
        return type(e)
    raise AssertionError("NumPy raised nothing")


# ---- RandomState ----

@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "a", [], [-1], [2**32], [1.5], [[1, 2]]])
def test_random_state_bad_seed_raises_like_numpy(bad):
    want = _numpy_error(lambda: onp.random.RandomState(bad))
    with pytest.raises(want, match=r"\[RandomState.seed\]"):
        R.RandomState(bad)
    rs = R.RandomState(0)
    with pytest.raises(want):
        rs.seed(bad)


@pytest.mark.parametrize("good", [None, 0, 2**32 - 1, onp.uint32(7), [1, 2], (3,),
                                  onp.array([1, 2], dtype=onp.uint32), onp.array(5), True])
def test_random_state_accepts_numpys_seeds(good):
    onp.random.RandomState(good)  # the premise: NumPy takes it
    rs = R.RandomState(good)
    assert rs.rand(3).shape == (3,)


def test_random_state_is_deterministic_and_seed_dependent():
    a = R.RandomState(3).rand(1000).asnumpy()
    onp.testing.assert_array_equal(R.RandomState(3).rand(1000).asnumpy(), a)
    assert not (R.RandomState(4).rand(1000).asnumpy() == a).any()
    assert not (R.RandomState([3]).rand(1000).asnumpy() == a).any()  # as init_by_array
    onp.testing.assert_array_equal(R.RandomState(onp.array(3)).rand(1000).asnumpy(), a)
    rs = R.RandomState(3)
    b = rs.rand(1000).asnumpy()
    assert not (rs.rand(1000).asnumpy() == b).any()  # the next call draws new numbers
    rs.seed(3)
    onp.testing.assert_array_equal(rs.rand(1000).asnumpy(), a)
    assert repr(rs) == "RandomState(Philox)"


def test_random_state_draws_what_the_global_stream_draws_after_seed():
    def calls(src):
        return [src.rand(5), src.randn(2, 3), src.randint(0, 100, size=7),
                src.permutation(20), src.choice(10, size=4, replace=False),
                src.gamma(0.5, size=6), src.standard_t(3.0, size=4)]

    np.random.seed(11)
    want = [_host(v) for v in calls(np.random)]
    got = [_host(v) for v in calls(R.RandomState(11))]
    for w, g in zip(want, got):
        onp.testing.assert_array_equal(g, w)


def test_random_state_has_numpys_methods():
    names = [n for n in dir(onp.random.RandomState) if not n.startswith("_")]
    rs = R.RandomState(0)
    for n in names:
        assert callable(getattr(rs, n)), n
    for n in ("random", "random_sample", "ranf", "sample"):
        assert getattr(rs, n)(size=(4,)).shape == (4,)


def test_random_state_shapes_dtypes_and_distributions():
    rs = R.RandomState(5)
    assert rs.rand(2, 3).shape == (2, 3) and rs.randn(4).shape == (4,)
    want = onp.random.RandomState(0).randint(5, size=3).dtype
    i = rs.randint(5, size=20000)
    assert i.dtype == want and set(onp.unique(i.asnumpy())) == set(range(5))
    u = rs.random_sample(20000).asnumpy().astype(onp.float64)
    assert u.min() >= 0 and u.max() < 1 and st.kstest(u, "uniform").pvalue > 1e-3
    z = rs.standard_normal(20000).asnumpy().astype(onp.float64)
    assert st.kstest(z, "norm").pvalue > 1e-3
    g = rs.gamma(2.5, 2.0, size=20000).asnumpy().astype(onp.float64)
    assert st.kstest(g, st.gamma(2.5, scale=2.0).cdf).pvalue > 1e-3
    m = rs.tomaxint(2000)
    assert m.dtype == onp.int64 and int(m.min()) >= 0 and int(m.max()) > 2**62
    b = rs.bytes(10)
    assert isinstance(b, bytes) and len(b) == 10
    assert R.RandomState(2).bytes(32) == R.RandomState(2).bytes(32)


def test_random_integers_is_deprecated_like_numpy():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        onp.random.RandomState(0).random_integers(1, 6, size=3)
        onp.random.RandomState(0).random_integers(6, size=3)
    rs = R.RandomState(0)
    with pytest.warns(w[0].category, match=r"randint\(1, 6 \+ 1\)"):
        x = rs.random_integers(1, 6, size=6000)
    assert str(w[0].message) in [str(m.message) for m in w]
    assert set(onp.unique(x.asnumpy())) == set(range(1, 7))
    with pytest.warns(w[1].category) as rec:
        y = rs.random_integers(6, size=6000)
    assert str(rec[0].message) == str(w[1].message)
    assert set(onp.unique(y.asnumpy())) == set(range(1, 7))
    with pytest.warns(DeprecationWarning):
        assert R.random_integers(3, size=5).shape == (5,)


def test_legacy_choice_and_permutation_errors_like_numpy():
    rs = R.RandomState(0)
    with pytest.raises(ValueError):
        rs.choice(onp.ones((2, 2)), 1)
    want = _numpy_error(lambda: onp.random.RandomState(0).permutation(onp.array(3)))
    with pytest.raises(want):
        rs.permutation(onp.array(3))
    with pytest.raises(ValueError):  # ndx's legacy 0-d error is also a ValueError
        rs.permutation(onp.array(3))


# ---- get_state / set_state ----

def test_random_state_state_round_trips():
    rs = R.RandomState(7)
    rs.rand(3)
    s = rs.get_state()
    assert isinstance(s, tuple) and len(s) == 5 and s[0] == "Philox"
    a = rs.rand(5).asnumpy()
    b = rs.randint(0, 1000, size=5).asnumpy()
    rs.set_state(s)
    onp.testing.assert_array_equal(rs.rand(5).asnumpy(), a)
    onp.testing.assert_array_equal(rs.randint(0, 1000, size=5).asnumpy(), b)
    d = rs.get_state(legacy=False)
    assert d.keys() == onp.random.RandomState(0).get_state(legacy=False).keys()
    c = rs.rand(4).asnumpy()
    other = R.RandomState(99)
    other.set_state(d)  # a state moves between RandomStates
    onp.testing.assert_array_equal(other.rand(4).asnumpy(), c)
    other.set_state(s[:3])  # NumPy's 3-item form
    onp.testing.assert_array_equal(other.rand(5).asnumpy(), a)


def test_random_state_copies_and_pickles():
    rs = R.RandomState(8)
    rs.rand(2)
    s = rs.get_state()
    for clone in (copy.deepcopy(rs), pickle.loads(pickle.dumps(rs))):
        onp.testing.assert_array_equal(clone.rand(6).asnumpy(), rs.rand(6).asnumpy())
        rs.set_state(s)


def test_a_failed_call_draws_nothing():
    rs = R.RandomState(9)
    before = rs.get_state()
    with pytest.raises(ValueError):
        rs.normal(0.0, [-1.0, 1.0])
    assert rs.get_state() == before
    np.random.seed(9)
    with pytest.raises(ValueError):
        np.random.normal(0.0, [-1.0, 1.0])
    onp.testing.assert_array_equal(rs.rand(5).asnumpy(), np.random.rand(5).asnumpy())


@pytest.mark.parametrize("state, exc, match", [
    (onp.random.RandomState(0).get_state(), ValueError, "MT19937"),
    (onp.random.RandomState(0).get_state(legacy=False), ValueError, "MT19937"),
    (5, TypeError, "dict or a tuple"),
    (("Philox",), ValueError, "3 or 5"),
    (("PCG64", 1, 0), ValueError, "Philox"),
    (("Philox", 1.5, 0), TypeError, "key"),
    (("Philox", -1, 0), ValueError, "key"),
    (("Philox", 2**64, 0), ValueError, "key"),
    (("Philox", 1, -1), ValueError, "pos"),
    ({"bit_generator": "Philox"}, ValueError, "not valid"),
    ({"bit_generator": "Philox", "state": {"key": 1, "counter": 0}}, ValueError, "Generator"),
])
def test_set_state_validates(state, exc, match):
    with pytest.raises(exc, match=r"\[RandomState.set_state\].*" + match):
        R.RandomState(0).set_state(state)
    with pytest.raises(exc, match=r"\[set_state\]"):
        R.set_state(state)


def test_global_state_round_trips_and_interchanges_with_random_state():
    np.random.seed(21)
    s = R.get_state()
    assert s[0] == "Philox" and len(s) == 5
    a = np.random.rand(5).asnumpy()
    b = np.random.permutation(9).asnumpy()
    R.set_state(s)
    onp.testing.assert_array_equal(np.random.rand(5).asnumpy(), a)
    onp.testing.assert_array_equal(np.random.permutation(9).asnumpy(), b)
    rs = R.RandomState(0)
    rs.set_state(R.get_state(legacy=False))  # the global stream's state in a RandomState
    onp.testing.assert_array_equal(rs.rand(6).asnumpy(), np.random.rand(6).asnumpy())
    rs = R.RandomState(4)
    rs.rand(3)
    rs.normal(size=2)  # mid-stream: pos 2
    R.set_state(rs.get_state())
    onp.testing.assert_array_equal(np.random.rand(6).asnumpy(), rs.rand(6).asnumpy())
    # get_state draws nothing, as NumPy's: the stream is the one without the call.
    np.random.seed(5)
    c = np.random.rand(4).asnumpy()
    np.random.seed(5)
    assert R.get_state() == ("Philox", 5, 0, 0, 0.0)  # the seed, no call drawn yet
    onp.testing.assert_array_equal(np.random.rand(4).asnumpy(), c)
    assert R.get_state()[1:3] == (5, 1)


def test_module_seed_accepts_sequences_like_random_state():
    np.random.seed([3, 4])
    onp.testing.assert_array_equal(np.random.rand(5).asnumpy(),
                                   R.RandomState([3, 4]).rand(5).asnumpy())
    with pytest.raises(ValueError, match=r"\[seed\]"):
        np.random.seed([-1])
    with pytest.raises(TypeError, match=r"\[seed\]"):
        np.random.seed(1.5)


# ---- SeedSequence ----

@pytest.mark.parametrize("entropy, kw", [
    (5, {}), (2**100 + 3, {}), ([1, 2, 3], {}), (7, {"spawn_key": (1, 2)}),
    (7, {"pool_size": 8}), (0, {"n_children_spawned": 3}),
])
def test_seed_sequence_matches_numpy(entropy, kw):
    want, got = onp.random.SeedSequence(entropy, **kw), R.SeedSequence(entropy, **kw)
    for attr in ("entropy", "spawn_key", "pool_size", "n_children_spawned", "state"):
        assert getattr(got, attr) == getattr(want, attr), attr
    for dtype in (onp.uint32, onp.uint64, "uint64"):
        out = got.generate_state(6, dtype)
        onp.testing.assert_array_equal(out, want.generate_state(6, dtype))
        assert out.dtype == onp.dtype(dtype)
    kids, want_kids = got.spawn(3), want.spawn(3)
    assert got.n_children_spawned == want.n_children_spawned == 3 + kw.get(
        "n_children_spawned", 0)
    for k, wk in zip(kids, want_kids):
        assert isinstance(k, R.SeedSequence) and k.spawn_key == wk.spawn_key
        onp.testing.assert_array_equal(k.generate_state(4), wk.generate_state(4))


def test_seed_sequence_fresh_entropy_and_errors():
    a, b = R.SeedSequence(), R.SeedSequence()
    assert isinstance(a.entropy, int) and a.entropy != b.entropy
    for bad in (-1, 1.5):
        want = _numpy_error(lambda: onp.random.SeedSequence(bad))
        with pytest.raises(want if want is not OverflowError else ValueError,
                           match=r"\[SeedSequence\]"):
            R.SeedSequence(bad)
    with pytest.raises(ValueError, match="uint32 or uint64"):
        R.SeedSequence(1).generate_state(2, onp.int32)
    with pytest.raises(ValueError, match="n_children"):
        R.SeedSequence(1).spawn(-1)


def test_generators_from_seed_sequences():
    x = R.default_rng(R.SeedSequence(5)).random(50).asnumpy()
    onp.testing.assert_array_equal(R.default_rng(5).random(50).asnumpy(), x)  # as NumPy
    onp.testing.assert_array_equal(
        R.Generator(onp.random.SeedSequence(5)).random(50).asnumpy(), x)
    y = R.default_rng(R.SeedSequence(5, spawn_key=(1,))).random(50).asnumpy()
    assert not (x == y).any()
    onp.testing.assert_array_equal(
        R.default_rng(R.SeedSequence(5, spawn_key=(1,))).random(50).asnumpy(), y)
    z = R.default_rng([1, 2]).random(50).asnumpy()
    onp.testing.assert_array_equal(R.default_rng(R.SeedSequence([1, 2])).random(50).asnumpy(),
                                   z)


# ---- Generator: spawn, bit_generator, Philox ----

def test_generator_spawn():
    kids = R.default_rng(42).spawn(3)
    again = R.default_rng(42).spawn(3)
    parent = R.default_rng(42).random(2000).asnumpy()
    draws = [k.random(2000).asnumpy() for k in kids]
    for d, k in zip(draws, again):
        onp.testing.assert_array_equal(k.random(2000).asnumpy(), d)
    for i, d in enumerate(draws):
        assert abs(st.pearsonr(d, parent)[0]) < 0.1
        for e in draws[i + 1:]:
            assert abs(st.pearsonr(d, e)[0]) < 0.1 and not (d == e).any()
    g = R.default_rng(42)
    first, second = g.spawn(1)[0], g.spawn(1)[0]  # new children each time, as NumPy's
    assert not (first.random(100).asnumpy() == second.random(100).asnumpy()).any()
    assert R.default_rng(1).spawn(0) == [] and all(
        isinstance(k, R.Generator) for k in kids)
    assert g.bit_generator.seed_seq.n_children_spawned == 2


def test_bit_generator_state_round_trips():
    g = R.default_rng(3)
    bg = g.bit_generator
    assert isinstance(bg, R.Philox) and isinstance(bg, R.BitGenerator)
    g.random(3)
    s = bg.state
    assert s["bit_generator"] == "Philox"
    a = g.normal(size=8).asnumpy()
    bg.state = s
    onp.testing.assert_array_equal(g.normal(size=8).asnumpy(), a)
    h = R.default_rng(77)
    h.bit_generator.state = s  # another Generator takes the stream
    onp.testing.assert_array_equal(h.normal(size=8).asnumpy(), a)
    assert bg.seed_seq.entropy == 3
    shared = R.Philox(7)
    g1 = R.Generator(shared)
    onp.testing.assert_array_equal(g1.random(5).asnumpy(), R.default_rng(7).random(5).asnumpy())
    assert shared.state["state"]["counter"] == 1  # the Generator draws from the object given
    assert R.default_rng(g1) is g1  # as NumPy's default_rng


@pytest.mark.parametrize("value, exc", [
    (5, TypeError), ({"bit_generator": "PCG64"}, ValueError),
    ({"bit_generator": "Philox", "state": {}}, ValueError),
    (onp.random.Philox(1).state, ValueError),
    ({"bit_generator": "Philox", "state": {"key": -1, "counter": 0}}, ValueError),
])
def test_bit_generator_state_validates(value, exc):
    bg = R.Philox(1)
    with pytest.raises(exc, match=r"\[Philox.state\]"):
        bg.state = value


def test_numpys_other_bit_generators_are_not_implemented():
    for name in ("MT19937", "PCG64", "PCG64DXSM", "SFC64"):
        cls = getattr(R, name)
        assert issubclass(cls, R.BitGenerator)
        with pytest.raises(NotImplementedError, match="Philox"):
            cls(5)
    with pytest.raises(TypeError, match=r"\[Generator\]"):
        R.Generator(onp.random.PCG64(5))
    with pytest.raises(TypeError, match=r"\[Generator\]"):
        R.default_rng(1.5)
    with pytest.raises(ValueError, match=r"\[Generator\]"):
        R.default_rng(-1)


def test_namespace_has_numpys_names():
    skip = {"bit_generator", "mtrand", "test", "get_bit_generator", "set_bit_generator"}
    for n in dir(onp.random):
        if not n.startswith("_") and n not in skip:
            assert hasattr(R, n), n
    for n in R.__all__:
        assert hasattr(R, n), n


# ---- Generator.choice / permutation / shuffle with axis ----

@pytest.mark.parametrize("shape, size, axis, replace", [
    ((5,), 3, 0, True), ((5,), None, 0, True), ((4, 6), 3, 0, False), ((4, 6), (2, 2), 1, True),
    ((4, 6), None, 1, False), ((4, 6), 2, -1, False), ((2, 3, 4), (2,), 2, True),
    ((3, 4), 0, 0, False), ((0, 3), 0, 0, True),
])
def test_generator_choice_axis_shapes_match_numpy(shape, size, axis, replace):
    a = onp.arange(int(onp.prod(shape))).reshape(shape)
    want = onp.random.default_rng(0).choice(a, size, replace=replace, axis=axis)
    got = R.default_rng(0).choice(np.array(a), size, replace=replace, axis=axis)
    assert got.shape == want.shape and got.dtype == want.dtype
    # Every chosen slice is a slice of a along axis (the sample's dimensions sit at axis).
    ax = axis % a.ndim
    slices = {tuple(s.ravel()) for s in onp.moveaxis(a, ax, 0)}
    g = got.asnumpy().reshape(a.shape[:ax] + (-1,) + a.shape[ax + 1:])
    g = onp.moveaxis(g, ax, 0)
    assert all(tuple(s.ravel()) in slices for s in g)
    if not replace and g.shape[0]:
        assert len({tuple(s.ravel()) for s in g}) == g.shape[0]


def test_generator_choice_distribution_and_options():
    g = R.default_rng(1)
    a = onp.arange(12).reshape(3, 4)
    cols = g.choice(np.array(a), 30000, axis=1, p=[0.1, 0.2, 0.3, 0.4]).asnumpy()
    assert (cols[1] == cols[0] + 4).all()
    counts = onp.bincount(cols[0], minlength=4)
    assert st.chisquare(counts, onp.array([0.1, 0.2, 0.3, 0.4]) * 30000).pvalue > 1e-3
    s = g.choice(10, 10, replace=False, shuffle=False).asnumpy()
    assert sorted(s) == list(range(10))
    assert g.choice(np.array(5), 3).shape == (3,)  # a 0-d a is an int, as NumPy
    assert g.choice([1.5, 2.5], 4).dtype == np.asarray([1.5, 2.5]).dtype
    with pytest.raises(onp.exceptions.AxisError):
        g.choice(np.ones((2, 3)), 2, axis=2)
    with pytest.raises(IndexError):  # what NumPy raises here
        g.choice(np.ones((2, 3)), 2, axis=-3)
    for call in (lambda gen: gen.choice(onp.ones((0, 3)), 2),
                 lambda gen: gen.choice(onp.arange(4).reshape(2, 2), 3, replace=False),
                 lambda gen: gen.choice(5, 2, replace=False, p=[1, 0, 0, 0, 0])):
        want = _numpy_error(lambda: call(onp.random.default_rng(0)))
        with pytest.raises(want):
            call(R.default_rng(0))


def test_generator_choice_with_generator_as_module():
    a = onp.arange(6).reshape(2, 3)
    got = R.default_rng(2).choice(a, 5, axis=1).asnumpy()  # a host array works too
    assert got.shape == (2, 5) and (got[1] == got[0] + 3).all()


@pytest.mark.parametrize("shape, axis", [((6,), 0), ((4, 5), 0), ((4, 5), 1), ((3, 4, 5), -1)])
def test_generator_permutation_and_shuffle_axis(shape, axis):
    a = onp.arange(int(onp.prod(shape))).reshape(shape)
    x = np.array(a)
    p = R.default_rng(3).permutation(x, axis=axis).asnumpy()
    assert p.shape == onp.random.default_rng(0).permutation(a, axis=axis).shape
    onp.testing.assert_array_equal(x.asnumpy(), a)  # a copy
    onp.testing.assert_array_equal(onp.sort(p, axis=axis), a)
    # Whole slices move: the order along axis is the same for every other index.
    order = onp.moveaxis(p, axis, -1).reshape(-1, a.shape[axis])
    assert (order - order[:, :1] == order[0] - order[0, 0]).all()
    R.default_rng(3).shuffle(x, axis=axis)
    onp.testing.assert_array_equal(x.asnumpy(), p)  # the same stream: the same order


def test_generator_permutation_shuffle_errors_like_numpy():
    g, ng = R.default_rng(0), onp.random.default_rng(0)
    cases = [
        (lambda m, gen: gen.permutation(m.array(3))),
        (lambda m, gen: gen.permutation(m.arange(3), axis=1)),
        (lambda m, gen: gen.shuffle(m.array(3))),
        (lambda m, gen: gen.shuffle(m.arange(6).reshape(2, 3), axis=2)),
        (lambda m, gen: gen.shuffle([1, 2, 3], axis=1)),
    ]
    for call in cases:
        want = _numpy_error(lambda: call(onp, ng))
        with pytest.raises(want):
            call(np, g)
    with pytest.raises(onp.exceptions.AxisError):
        g.permutation(np.arange(3), axis=1)
    lst = list(range(30))
    g.shuffle(lst)
    assert sorted(lst) == list(range(30)) and lst != list(range(30))
    assert sorted(g.permutation([3, 1, 2]).asnumpy()) == [1, 2, 3]


@pytest.mark.parametrize("low, high", [(0, 2**63), (-2**62, 2**62), (2**40, 2**40 + 2**56)])
def test_wide_randint_with_power_of_two_span_stays_in_bounds(low, high):
    onp.random.RandomState(0).randint(low, high, size=2, dtype=onp.int64)  # NumPy takes it
    x = R.RandomState(1).randint(low, high, size=4000, dtype="int64").asnumpy()
    assert x.min() >= low and x.max() < high
    # Uniform over the span: each quarter holds about a quarter of the draws.
    quarter = (x.astype(object) - low) * 4 // (high - low)
    assert st.chisquare(onp.bincount(quarter.astype(onp.int64), minlength=4)).pvalue > 1e-3


def test_out_alone_sets_the_shape_and_dtype_as_numpys():
    for dtype in ("float32", "float64"):
        o, ref = np.zeros((2, 3), dtype=dtype), onp.zeros((2, 3), dtype=dtype)
        assert np.random.default_rng(1).random(out=o) is o
        onp.random.default_rng(1).random(out=ref, dtype=dtype)  # (NumPy's wants dtype too)
        got = o.asnumpy()
        assert got.dtype == ref.dtype and ((got >= 0) & (got < 1)).all() and got.std() > 0
    o = np.zeros(4)
    np.random.default_rng(2).standard_normal(out=o)
    assert o.asnumpy().std() > 0
