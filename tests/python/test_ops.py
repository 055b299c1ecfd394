"""Table-driven op tests (PyTorch OpInfo style), generated from op_table.ENTRIES.

1. forward vs NumPy for every entry x dtype x sample (values and result dtype),
2. broadcasting and mixed-dtype promotion for binary ops,
3. non-contiguous inputs (x.T, x[..., ::2], x[::-1] views) against NumPy on the same values,
4. bad inputs raise the declared exception class (and NumPy raises the same kind),
5. FGradient against central differences (test_utils.check_numeric_gradient) in float64,
6. a dtype sweep of the creation ops.

The reference is always NumPy; the only allowances are ndx's documented differences (float
results of non-float inputs are float32, see op_table.default_expected_dtype).
"""
import os
import sys
import warnings
import zlib

import numpy as onp
import pytest

import ndx
from ndx import np
from ndx.test_utils import check_numeric_gradient

sys.path.insert(0, os.path.dirname(__file__))
import op_table as T


# ----------------------------------------------------------------------------------- helpers
def rng_for(*parts):
    """A generator seeded from the test's identity, so every run sees the same inputs."""
    return onp.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


def is_array_list(x):
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(
        isinstance(v, onp.ndarray) for v in x)


# NDX_TEST_DEVICE=gpu(0) runs the table on that device (inputs placed there; results are
# compared with NumPy as on the CPU). Unset, everything runs on the CPU.
DEVICE = os.environ.get("NDX_TEST_DEVICE") or None


def to_nd(x):
    """NumPy arrays (and lists of them) -> ndx arrays; everything else as it is."""
    if isinstance(x, onp.ndarray):
        return np.array(x, device=DEVICE)
    if is_array_list(x):
        return [np.array(v, device=DEVICE) for v in x]
    return x


def arrays_in(args):
    out = []
    for a in args:
        if isinstance(a, onp.ndarray):
            out.append(a)
        elif is_array_list(a):
            out.extend(a)
    return out


def map_arrays(args, fn):
    """args with every NumPy array (also inside lists) replaced by fn(array)."""
    out = []
    for a in args:
        if isinstance(a, onp.ndarray):
            out.append(fn(a))
        elif is_array_list(a):
            out.append([fn(v) for v in a])
        else:
            out.append(a)
    return tuple(out)


def run_ref(fn, args, kwargs):
    with onp.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def expected_outputs(entry, args, kwargs, dtype):
    """[(reference values, expected dtype)] per output, and whether the op returns a list."""
    res = run_ref(entry.ref, args, kwargs)
    is_list = isinstance(res, (list, tuple))
    outs = list(res) if is_list else [res]
    arrays = arrays_in(args)
    hook = entry.expected_dtype or T.default_expected_dtype
    expected = []
    for r in outs:
        r = onp.asarray(r)
        edt = onp.dtype(hook(r.dtype, arrays, kwargs, dtype))
        if edt != r.dtype and edt.kind == "f" and r.dtype.kind == "f" and arrays and not is_list:
            # ndx computes in its default float where NumPy picks float16 or float64 for
            # non-float inputs: take the reference from float64 inputs (exact for the samples).
            r = onp.asarray(run_ref(entry.ref, map_arrays(args, lambda a: a.astype("float64")),
                                    kwargs))
        expected.append((r, edt))
    return expected, is_list


def assert_matches(got, ref, edt, entry, values=True):
    assert isinstance(got, np.ndarray), f"expected an ndarray, got {type(got)}"
    assert got.dtype == edt, f"dtype: expected {edt}, got {got.dtype}"
    assert tuple(got.shape) == ref.shape, f"shape: expected {ref.shape}, got {got.shape}"
    if not values:
        return
    g = got.asnumpy()
    assert g.dtype == edt and g.shape == ref.shape
    if edt.kind in "fc":
        rtol, atol = entry.tols[edt.name]
        wide = onp.complex128 if edt.kind == "c" else onp.float64
        with onp.errstate(all="ignore"):
            want = ref.astype(edt)
        onp.testing.assert_allclose(g.astype(wide), want.astype(wide), rtol=rtol, atol=atol,
                                    equal_nan=entry.equal_nan)
    else:
        onp.testing.assert_array_equal(g, ref.astype(edt))


def check_against_numpy(entry, nd_args, np_args, kwargs, dtype, values=True):
    expected, is_list = expected_outputs(entry, np_args, kwargs, dtype)
    got = entry.op(*nd_args, **kwargs)
    if is_list:
        assert isinstance(got, (list, tuple)), f"expected a list, got {type(got)}"
        got = list(got)
        assert len(got) == len(expected), f"{len(got)} outputs, expected {len(expected)}"
    else:
        got = [got]
    for g, (r, edt) in zip(got, expected):
        assert_matches(g, r, edt, entry, values)


def sample_list(entry, dtype):
    return entry.samples(dtype, rng_for(entry.name, dtype), entry.domains)


# ------------------------------------------------------------------------ 1. forward vs NumPy
def _forward_cases():
    for e in T.entries("unary", "binary", "reduction", "shape", "matmul", "like", "search",
                       "complex", "fft"):
        for dt in e.dtypes:
            for s in sample_list(e, dt):
                yield pytest.param(e, dt, s, id=f"{e.name}-{dt}-{s.name}")


@pytest.mark.parametrize("entry,dtype,sample", list(_forward_cases()))
def test_forward(entry, dtype, sample):
    check_against_numpy(entry, tuple(to_nd(a) for a in sample.args), sample.args,
                        sample.kwargs, dtype)


# -------------------------------------------------------------- 2. broadcasting, promotion
def _broadcast_cases():
    for e in T.entries("binary"):
        if not e.broadcast_pairs:
            continue
        for dt in e.dtypes:
            for sa, sb in T.BROADCAST_PAIRS:
                yield pytest.param(e, dt, sa, sb, id=f"{e.name}-{dt}-{sa}-{sb}")


@pytest.mark.parametrize("entry,dtype,shape_a,shape_b", list(_broadcast_cases()))
def test_broadcast(entry, dtype, shape_a, shape_b):
    rng = rng_for(entry.name, dtype, shape_a, shape_b)
    a = T.make_arg(shape_a, dtype, rng, entry.domains[0])
    b = T.make_arg(shape_b, dtype, rng, entry.domains[1])
    check_against_numpy(entry, (to_nd(a), to_nd(b)), (a, b), {}, dtype)


def _promotion_cases():
    for e in T.entries("binary"):
        for da, db in T.PROMOTION_PAIRS:
            if e.name == "subtract" and da == db == "bool":
                continue
            if e.promotion_dtypes is not None and not {da, db} <= set(e.promotion_dtypes):
                continue
            yield pytest.param(e, da, db, id=f"{e.name}-{da}-{db}")


@pytest.mark.parametrize("entry,dtype_a,dtype_b", list(_promotion_cases()))
def test_promotion(entry, dtype_a, dtype_b):
    rng = rng_for(entry.name, dtype_a, dtype_b)
    a = T.make_arg((2, 3), dtype_a, rng, entry.domains[0])
    b = T.make_arg((2, 3), dtype_b, rng, entry.domains[1])
    check_against_numpy(entry, (to_nd(a), to_nd(b)), (a, b), {}, dtype_a)
    check_against_numpy(entry, (to_nd(b), to_nd(a)), (b, a), {}, dtype_b)


# ---------------------------------------------------------------------- 3. non-contiguous
def view_of(x, kind):
    """An ndx view (not a copy) whose values equal the NumPy array x, or None when `kind`
    does not apply to x's rank."""
    if kind == "T":
        if x.ndim < 2:
            return None
        return np.array(onp.ascontiguousarray(x.T), device=DEVICE).T
    if x.ndim < 1:
        return None
    if kind == "step2":
        base = onp.zeros(x.shape[:-1] + (2 * x.shape[-1] + 1,), dtype=x.dtype)
        base[..., 1::2] = x
        return np.array(base, device=DEVICE)[(slice(None),) * (x.ndim - 1) + (slice(1, None, 2),)]
    if kind == "reversed":
        return np.array(onp.ascontiguousarray(x[::-1]), device=DEVICE)[::-1]
    raise ValueError(kind)


VIEW_KINDS = ("T", "step2", "reversed")


def _view_cases():
    for e in T.entries("unary", "binary", "reduction", "shape", "matmul", "like", "search"):
        for dt in ("float32", "int32"):
            if dt not in e.dtypes:
                continue
            for s in sample_list(e, dt):
                arrays = arrays_in(s.args)
                for kind in VIEW_KINDS:
                    if any(view_of(a, kind) is not None for a in arrays):
                        yield pytest.param(e, dt, s, kind, id=f"{e.name}-{dt}-{s.name}-{kind}")


@pytest.mark.parametrize("entry,dtype,sample,kind", list(_view_cases()))
def test_noncontiguous(entry, dtype, sample, kind):
    def nd_view(a):
        v = view_of(a, kind)
        return np.array(a, device=DEVICE) if v is None else v

    nd_args = []
    for a in sample.args:
        if isinstance(a, onp.ndarray):
            nd_args.append(nd_view(a))
        elif is_array_list(a):
            nd_args.append([nd_view(v) for v in a])
        else:
            nd_args.append(a)
    check_against_numpy(entry, tuple(nd_args), sample.args, sample.kwargs, dtype)


def test_views_are_views():
    """The views test_noncontiguous feeds are really strided: their strides are not the
    contiguous ones."""
    x = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)
    for kind in VIEW_KINDS:
        v = view_of(x, kind)
        onp.testing.assert_array_equal(v.asnumpy(), x)
        contiguous = tuple(s // 4 for s in x.strides)
        assert tuple(s // v.itemsize for s in v.strides) != contiguous, kind


# ------------------------------------------------------------------------------ 4. errors
def _error_cases():
    for e in T.ENTRIES:
        for err in e.error_inputs():
            yield pytest.param(e, err, id=f"{e.name}-{err.name}")


@pytest.mark.parametrize("entry,err", list(_error_cases()))
def test_error(entry, err):
    if err.numpy_exc is not None:  # the declared class is NumPy's too
        with pytest.raises(err.numpy_exc):
            run_ref(entry.ref, err.args, err.kwargs)
    nd_args = tuple(to_nd(a) for a in err.args)
    with pytest.raises(err.exc):
        entry.op(*nd_args, **err.kwargs)


# --------------------------------------------------------------------------- 5. gradients
def _grad_cases():
    for e in T.ENTRIES:
        if not e.differentiable:
            continue
        for g in e.grad_samples(rng_for("grad", e.name)):
            yield pytest.param(e, g, id=f"{e.name}-{g.name}")


@pytest.mark.parametrize("entry,gs", list(_grad_cases()))
def test_gradient(entry, gs):
    onp.random.seed(zlib.crc32(f"{entry.name}/{gs.name}".encode()))
    check_numeric_gradient(entry.grad_op, list(gs.inputs), dict(gs.params))


# ------------------------------------------------------------------ 6. creation dtype sweep
def _creation_cases():
    for e in T.entries("creation"):
        for dt in e.dtypes:
            for s in sample_list(e, dt):
                yield pytest.param(e, dt, s, id=f"{e.name}-{dt}-{s.name}")


@pytest.mark.parametrize("entry,dtype,sample", list(_creation_cases()))
def test_creation(entry, dtype, sample):
    kwargs = dict(sample.kwargs)
    if dtype is not None:
        kwargs["dtype"] = dtype
    check_against_numpy(entry, sample.args, sample.args, kwargs, dtype,
                        values=entry.name != "empty")


# -------------------------------------------------------------------------- table sanity
def test_table_covers_every_registered_op():
    """Every public op of the registry (_np_* and _npi_*) has an entry in the table."""
    from ndx._registry import ops
    names = {n[len("_np_"):] if n.startswith("_np_") else n[len("_npi_"):]
             for n in ops() if n.startswith(("_np_", "_npi_"))}
    missing = sorted(names - set(T.ENTRY_BY_NAME))
    assert not missing, f"ops without a table entry: {missing}"


@pytest.mark.parametrize("entry", [e for e in T.ENTRIES if e.kind in ("unary", "binary",
                                                                      "reduction", "like")],
                         ids=lambda e: e.name)
def test_table_samples_have_0d_and_zero_size(entry):
    for dt in entry.dtypes:
        shapes = [a.shape for s in sample_list(entry, dt) for a in arrays_in(s.args)]
        assert () in shapes, f"{entry.name}/{dt}: no 0-d sample"
        assert any(0 in sh for sh in shapes), f"{entry.name}/{dt}: no zero-size sample"


@pytest.mark.parametrize("entry", T.ENTRIES, ids=lambda e: e.name)
def test_table_entry_is_consistent(entry):
    assert callable(entry.op) and callable(entry.ref)
    assert entry.dtypes
    if entry.differentiable:
        assert entry.grad_op and entry.grad_samples is not None
    if entry.kind == "binary":
        assert len(entry.domains) == 2
    assert isinstance(ndx.AxisError("x"), ValueError)


# ----------------------------------------------------------- 7. hybridized equals imperative
# ("search" entries are left out: their output shapes depend on the data, which a graph
# cannot know before it runs.)
def _hybrid_cases():
    for e in T.entries("unary", "binary", "reduction", "shape", "matmul", "like"):
        dt = "float32" if "float32" in e.dtypes else e.dtypes[0]
        for s in sample_list(e, dt)[:4]:
            yield pytest.param(e, dt, s, id=f"{e.name}-{dt}-{s.name}")


class _OpBlock(ndx.gluon.HybridBlock):
    """Calls one table entry's op on the block's array inputs (other arguments are fixed)."""

    def __init__(self, entry, args, kwargs):
        super().__init__()
        self._entry, self._args, self._kwargs = entry, args, kwargs

    def forward(self, *arrays):
        it = iter(arrays)
        args = []
        for a in self._args:
            if isinstance(a, onp.ndarray):
                args.append(next(it))
            elif is_array_list(a):
                args.append([next(it) for _ in a])
            else:
                args.append(a)
        return self._entry.op(*args, **self._kwargs)


@pytest.mark.parametrize("entry,dtype,sample", list(_hybrid_cases()))
def test_hybridized_equals_imperative(entry, dtype, sample):
    def arrays():  # each call its own copies: an update op (sgd_mom_update) changes its inputs
        return [np.array(a, device=DEVICE) for a in arrays_in(sample.args)]
    block = _OpBlock(entry, sample.args, sample.kwargs)
    want = block(*arrays())
    block.hybridize()
    got = block(*arrays())
    got_list = list(got) if isinstance(got, (list, tuple)) else [got]
    want_list = list(want) if isinstance(want, (list, tuple)) else [want]
    assert len(got_list) == len(want_list)
    for g, w in zip(got_list, want_list):
        assert g.shape == w.shape and g.dtype == w.dtype
        onp.testing.assert_array_equal(g.asnumpy(), w.asnumpy())


@pytest.mark.parametrize("spread", [1.0, 5.0, 30.0, 200.0])
def test_softmax_float32_accuracy_against_float64(spread):
    # The row kernel's float32 exp is a shorter one for x - max <= 0 (lanes below -86, whose
    # results are subnormal, take the general exp) and its last pass multiplies by the row's
    # reciprocal sum: its error stays within NumPy's own float32 formula's, both measured
    # against float64, plus the row sum's: that sum runs in a few vector accumulators, not
    # pairwise, and shifts a whole row by up to ~20 ULP on SSE's 4 lanes (measured with
    # NDX_SIMD=baseline; 4 on AVX-512). NaN / -inf behave as the formula does.
    rng = onp.random.default_rng(int(spread))
    x = (rng.normal(size=(48, 777)) * spread).astype(onp.float32)
    x[0, 7] = onp.nan
    x[1, :5] = -onp.inf
    x[2, :] = -onp.inf
    with onp.errstate(invalid="ignore", over="ignore", under="ignore"):
        x64 = x.astype(onp.float64)
        e64 = onp.exp(x64 - x64.max(-1, keepdims=True))
        ref = (e64 / e64.sum(-1, keepdims=True)).astype(onp.float32)
        e32 = onp.exp(x - x.max(-1, keepdims=True))
        formula = e32 / e32.sum(-1, keepdims=True)
    got = ndx.npx.softmax(np.array(x), axis=-1).asnumpy()
    onp.testing.assert_array_equal(onp.isnan(got), onp.isnan(ref))
    ok = ~onp.isnan(ref)
    spacing = onp.spacing(onp.abs(ref[ok]))
    err_ndx = onp.abs(got[ok] - ref[ok]) / spacing
    err_formula = onp.abs(formula[ok] - ref[ok]) / spacing
    assert err_ndx.max() <= err_formula.max() + 24, (err_ndx.max(), err_formula.max())
    log_got = ndx.npx.log_softmax(np.array(x), axis=-1).asnumpy()
    with onp.errstate(invalid="ignore", divide="ignore"):
        log_ref = (x64 - x64.max(-1, keepdims=True)) - onp.log(e64.sum(-1, keepdims=True))
    onp.testing.assert_array_equal(onp.isnan(log_got), onp.isnan(log_ref))
    fin = onp.isfinite(log_ref)
    onp.testing.assert_array_equal(log_got[~fin & ~onp.isnan(log_ref)],
                                   log_ref[~fin & ~onp.isnan(log_ref)])
    with onp.errstate(invalid="ignore", divide="ignore"):
        log_formula = (x - x.max(-1, keepdims=True)) - onp.log(e32.sum(-1, keepdims=True))
    spacing = onp.spacing(onp.abs(log_ref[fin]).astype(onp.float32))
    err_ndx = onp.abs(log_got[fin] - log_ref[fin]) / spacing
    err_formula = onp.abs(log_formula[fin] - log_ref[fin]) / spacing
    assert err_ndx.max() <= err_formula.max() + 4, (err_ndx.max(), err_formula.max())


@pytest.mark.parametrize("shape", [(13, 1024), (9, 115), (8, 114), (17, 300), (3, 5), (1, 2048)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_cumsum_and_cumprod_along_rows_match_numpy_exactly(shape, dtype):
    """Rows scanned eight at a time, each row a few elements ahead of the last (scan.cc):
    rows shorter than the stagger, a row count that is not a multiple of eight, rows of 4 KiB.
    Each row adds in NumPy's order, so float results are NumPy's bit for bit; the gradient of
    cumsum (a reverse scan) against the reverse cumsum of the weights, also exact here."""
    rng = onp.random.default_rng(11)
    x = (rng.uniform(-3, 3, shape) if dtype.startswith("float")
         else rng.integers(0, 5, shape)).astype(dtype)
    a = np.array(x)
    onp.testing.assert_array_equal(np.cumsum(a, axis=-1).asnumpy(), onp.cumsum(x, axis=-1))
    small = (x % 3 + 1).astype(dtype) if dtype.startswith("u") or dtype.startswith("i") \
        else (onp.sign(x) * 0.5 + 1).astype(dtype)  # products that stay finite
    onp.testing.assert_array_equal(np.cumprod(np.array(small), axis=-1).asnumpy(),
                                   onp.cumprod(small, axis=-1))
    if dtype == "float64":
        w = rng.integers(-3, 4, shape).astype(dtype)
        a.attach_grad()
        with ndx.autograd.record():
            y = (np.cumsum(a, axis=-1) * np.array(w)).sum()
        y.backward()
        onp.testing.assert_array_equal(a.grad.asnumpy(),
                                       onp.cumsum(w[:, ::-1], axis=-1)[:, ::-1])
