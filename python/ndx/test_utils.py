"""Helpers for tests of ndx ops, custom ops and MXNet-style code: MXNet's ``mxnet.test_utils``
(same names, signatures and defaults) plus ndx's own (op_gradient, check_op).

Arrays may be ndx arrays, NumPy arrays or Python scalars wherever MXNet takes arrays.
Tolerances follow MXNet: rtol / atol of None pick per-dtype defaults (default_rtols(),
default_atols()) from the less precise of the two operands, and may be dicts {dtype: tol}.
As in MXNet, assert_almost_equal broadcasts its operands unless use_broadcast=False (pass
use_broadcast=False where the shape is part of what a test checks).
"""
import contextlib
import functools
import json
import math
import numbers
import os
import random

import numpy as _onp

from . import _core
from . import numpy as np
from ._registry import ops as _ops
from .device import Device, current_device
from .util import use_np  # noqa: F401  (MXNet's test_utils re-exports it)

_FLOATS = {"float16", "float32", "float64", "bfloat16"}


def _to_numpy(a):
    if isinstance(a, np.ndarray):
        return a.asnumpy()
    return _onp.asarray(a)


def _dtype_key(x):
    """The dtype of x for tolerance lookups: a NumPy dtype, or 'bfloat16'."""
    if isinstance(x, numbers.Number) and not isinstance(x, _onp.generic):
        x = _onp.array(x)
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        x = _onp.asarray(x)
        dtype = x.dtype
    if str(dtype) == "bfloat16":
        return "bfloat16"
    return _onp.dtype(dtype)


# ---- devices and dtypes ----
def default_device():
    """The device tests run on: current_device()."""
    return current_device()


default_context = default_device


def set_default_device(device):
    """Sets the device current_device() (and default_device()) report, where creation calls
    given no device place arrays (outside `with device:` blocks)."""
    from . import _core
    from . import device as _device
    _device._current[0] = Device(device)
    _core._set_process_default_device(None if _device._current[0] == _device.cpu() else
                                      _device._current[0])


set_default_context = set_default_device


def default_dtype():
    """The dtype of test data: float32, as in MXNet."""
    return _onp.float32


def default_rtols():
    """Relative tolerance per dtype (MXNet's table; bfloat16 and complex added)."""
    d = _onp.dtype
    tols = {d(_onp.float16): 1e-2, d(_onp.float32): 1e-4, d(_onp.float64): 1e-5,
            d(_onp.complex64): 1e-4, d(_onp.complex128): 1e-5, "bfloat16": 5e-2}
    tols.update(dict.fromkeys(map(d, (_onp.bool_, _onp.int8, _onp.uint8, _onp.int16,
                                      _onp.uint16, _onp.int32, _onp.uint32, _onp.int64,
                                      _onp.uint64)), 0))
    return tols


def default_atols():
    """Absolute tolerance per dtype (MXNet's table; bfloat16 and complex added)."""
    d = _onp.dtype
    tols = {d(_onp.float16): 1e-1, d(_onp.float32): 1e-3, d(_onp.float64): 1e-20,
            d(_onp.complex64): 1e-3, d(_onp.complex128): 1e-20, "bfloat16": 1e-1}
    tols.update(dict.fromkeys(map(d, (_onp.bool_, _onp.int8, _onp.uint8, _onp.int16,
                                      _onp.uint16, _onp.int32, _onp.uint32, _onp.int64,
                                      _onp.uint64)), 0))
    return tols


def default_numeric_eps():
    """Finite-difference step per dtype (powers of two, as in MXNet)."""
    return {_onp.dtype(_onp.float16): 1.0 / 2**6, _onp.dtype(_onp.float32): 1.0 / 2**9,
            _onp.dtype(_onp.float64): 1.0 / 2**14, "bfloat16": 1.0 / 2**4}


def effective_dtype(dat):
    """The dtype that decides the tolerance for comparisons of dat: its own (MXNet lowers
    float32 to float16 for TF32 GPU math, which ndx does not use)."""
    return _dtype_key(dat)


def get_tolerance(dat, tol, default_tol):
    """tol when it is a number; else tol[dtype] (a dict) or default_tol[dtype]."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    if dtype in tol:
        return tol[dtype]
    return default_tol.get(dtype, default_tol[_onp.dtype(_onp.float64)])


def get_tols(x, y, rtol, atol):
    """(rtol, atol) for comparing x and y: the larger default of the two dtypes."""
    return (max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols())),
            max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols())))


def get_atol(atol=None, dtype=_onp.dtype(_onp.float64)):
    return default_atols()[dtype] if atol is None else atol


def get_rtol(rtol=None, dtype=_onp.dtype(_onp.float64)):
    return default_rtols()[dtype] if rtol is None else rtol


def get_etol(etol=None):
    return 0 if etol is None else etol


def default_tols(dtype):
    """(rtol, atol) for a dtype (MXNet's defaults)."""
    key = "bfloat16" if str(dtype) == "bfloat16" else _onp.dtype(dtype)
    return default_rtols()[key], default_atols()[key]


# ---- random data ----
def random_arrays(*shapes):
    """Standard-normal NumPy arrays of default_dtype() (one array for one shape)."""
    arrays = [_onp.array(_onp.random.randn(), dtype=default_dtype()) if len(s) == 0
              else _onp.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """Uniform [low, high) NumPy arrays."""
    dtype = default_dtype() if dtype is None else dtype
    return [_onp.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """k elements of population in random order."""
    if not 0 <= k <= len(population):
        raise ValueError(f"[random_sample] k must be in [0, {len(population)}], got {k}")
    copy = list(population)
    _onp.random.shuffle(copy)
    return copy[:k]


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-d shape with dims in [1, dim] ([0, dim] when allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return int(_onp.random.randint(low, dim0 + 1)), int(_onp.random.randint(low, dim1 + 1))


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-d shape with dims in [1, dim] ([0, dim] when allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return (int(_onp.random.randint(low, dim0 + 1)), int(_onp.random.randint(low, dim1 + 1)),
            int(_onp.random.randint(low, dim2 + 1)))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape with num_dim dims, each in [1, dim] ([0, dim] when allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in _onp.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    return (int(_onp.random.randint(x_low, x_high)), int(_onp.random.randint(y_low, y_high)))


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random NDArray (MXNet's legacy array; ``.as_np_ndarray()`` gives the same memory as
    an ndx.numpy.ndarray): standard-normal values for stype 'default'; for 'csr' /
    'row_sparse', uniform [0, 1) values at a fraction `density` (random by default) of the
    elements (csr) or rows (row_sparse), as MXNet's."""
    from .nd.ndarray import array as nd_array
    dtype = default_dtype() if dtype is None else dtype
    device = ctx if ctx is not None else default_device()
    if stype not in ("default", "csr", "row_sparse"):
        raise ValueError(f"[rand_ndarray] stype must be 'default', 'csr' or 'row_sparse', "
                         f"got {stype!r}")
    if stype == "default":
        data = _onp.asarray(random_arrays(tuple(shape)))
        return nd_array(data, dtype=dtype, device=device)
    density = _onp.random.rand() if density is None else float(density)
    if not 0.0 <= density <= 1.0:
        raise ValueError(f"[rand_ndarray] density must be in [0, 1], got {density}")
    values = _onp.random.uniform(size=tuple(shape))
    if stype == "csr":
        values = values * (_onp.random.uniform(size=values.shape) < density)
    else:
        values = values * (_onp.random.uniform(size=(values.shape[0],) + (1,) *
                                               (values.ndim - 1)) < density)
    if modifier_func is not None:
        values = _onp.vectorize(modifier_func)(values) * (values != 0)
    return nd_array(values, dtype=dtype, device=device).tostype(stype)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """numpy_reduce_func over several axes, one at a time."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i] = 1
        ret = ret.reshape(tuple(shape))
    return ret


# ---- comparisons ----
def same(a, b):
    """True when a and b have the same shape and exactly equal elements."""
    a, b = _to_numpy(a), _to_numpy(b)
    return a.shape == b.shape and _onp.array_equal(a, b)


def checkShapes(a, b):  # noqa: N802  (MXNet's name)
    a, b = _to_numpy(a), _to_numpy(b)
    if a.shape != b.shape:
        raise AssertionError(f"shape mismatch: a.shape = {a.shape} and b.shape = {b.shape} "
                             f"are not equal")


def _comparable(x):
    """x as a NumPy array NumPy can compare (bfloat16 and other non-NumPy dtypes widened)."""
    x = _to_numpy(x)
    if x.dtype.kind not in "biufcO":
        x = x.astype(_onp.float64)
    return x


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """Whether a and b are close (np.allclose; tolerances of None: float64's defaults)."""
    if not use_broadcast:
        checkShapes(a, b)
    return bool(_onp.allclose(_comparable(a), _comparable(b), rtol=get_rtol(rtol),
                              atol=get_atol(atol), equal_nan=equal_nan))


def _max_violation(a, b, rtol, atol):
    diff = _onp.where(_onp.equal(a, b), 0, _onp.abs(a - b))
    violation = diff / (atol + rtol * _onp.abs(b) + 1e-20)
    violation = _onp.where(_onp.isnan(violation), _onp.inf, violation)
    idx = _onp.unravel_index(int(_onp.argmax(violation)), violation.shape)
    return idx, violation


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Asserts that a and b are close: |a - b| <= atol + rtol * |b| elementwise. rtol / atol of
    None take the per-dtype defaults (a dict {dtype: tol} overrides some). Operands broadcast
    unless use_broadcast=False, which requires equal shapes. Booleans must be equal. The error
    names the maximum violation and lists up to mismatches[0] of the mismatched elements
    (counting up to mismatches[1] of them; <= 0: all)."""
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _comparable(a), _comparable(b)
    try:
        shape = _onp.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise AssertionError(f"shape mismatch: {names[0]} {a.shape} and {names[1]} {b.shape} do "
                             f"not broadcast") from None
    if a.dtype == _onp.bool_ and b.dtype == _onp.bool_:
        _onp.testing.assert_equal(a, b, err_msg=f"{names[0]} != {names[1]}")
        return
    if _onp.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    a, b = _onp.broadcast_to(a, shape), _onp.broadcast_to(b, shape)
    close = _onp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    bad = _onp.argwhere(~close)
    idx, violation = _max_violation(a, b, rtol, atol)
    limit = mismatches[1] if mismatches[1] > 0 else len(bad)
    counted = min(len(bad), limit)
    degree = "at least " if len(bad) > limit else ""
    lines = [f"Not equal to tolerance: error {float(violation[idx]):g} exceeds tolerance "
             f"rtol={rtol:e}, atol={atol:e} "
             f"(mismatch {degree}{100.0 * counted / max(a.size, 1):g}%: {counted} of "
             f"{a.size} elements).",
             f"Location of maximum error: {tuple(int(i) for i in idx)}, {names[0]}={a[idx]}, "
             f"{names[1]}={b[idx]}"]
    order = sorted(map(tuple, bad[:limit]), key=lambda i: -violation[i])
    for i in order[:mismatches[0]]:
        lines.append(f"  at {tuple(int(j) for j in i)}: {names[0]}={a[i]}, {names[1]}={b[i]}")
    raise AssertionError("\n".join(lines))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """assert_almost_equal that tolerates a fraction etol of mismatched elements."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan,
                            mismatches=mismatches)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _comparable(a), _comparable(b)
    close = _onp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    err = 1 - _onp.count_nonzero(close) / max(close.size, 1)
    if err > etol:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan,
                            mismatches=mismatches)


def almost_equal_ignore_nan(a, b, rtol=None, atol=None):
    """almost_equal where a NaN in either operand counts as equal."""
    a, b = _comparable(a).copy(), _comparable(b).copy()
    nan = _onp.logical_or(_onp.isnan(a), _onp.isnan(b))
    a[nan] = 0
    b[nan] = 0
    return almost_equal(a, b, rtol, atol)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """assert_almost_equal where a NaN in either operand counts as equal."""
    a, b = _comparable(a).copy(), _comparable(b).copy()
    nan = _onp.logical_or(_onp.isnan(a), _onp.isnan(b))
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Asserts that f(*args, **kwargs) raises exception_type."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise "
                         f"{exception_type.__name__}")


def assertRaises(expected_exception, func, *args, **kwargs):  # noqa: N802  (MXNet's name)
    """Asserts that func(*args, **kwargs) raises expected_exception."""
    assert_exception(func, expected_exception, *args, **kwargs)


def retry(n):
    """Decorator: runs a stochastic test up to n times, failing only when every run fails an
    assertion."""
    if n <= 0:
        raise ValueError(f"[retry] n must be positive, got {n}")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            err = None
            for _ in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError as e:
                    err = e
            raise err
        return wrapper
    return decorate


def same_array(array1, array2):
    """Whether two arrays share memory (checked by writing through array1, then undoing)."""
    array1[...] = array1 + 1
    shared = same(array1, array2)
    array1[...] = array1 - 1
    return shared and same(array1, array2)


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """assert_almost_equal over nested tuples of arrays (None skips)."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def collapse_sum_like(a, shape):
    """Sums `a` over the axes where `shape` is broadcast to a.shape (NumPy reference): the
    gradient of broadcast_to(x of `shape`, a.shape)."""
    a = _to_numpy(a)
    shape = tuple(shape)
    lead = a.ndim - len(shape)
    if lead < 0 or any(d not in (1, a.shape[i + lead]) for i, d in enumerate(shape)):
        raise ValueError(f"[collapse_sum_like] shape {shape} does not broadcast to {a.shape}")
    if a.size == 0 or math.prod(shape) == 0:
        return _onp.zeros(shape, dtype=a.dtype)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape)
                                      if d == 1 and a.shape[i + lead] != 1)
    return a.sum(axis=axes, keepdims=True).reshape(shape) if axes else a.reshape(shape)


def same_symbol_structure(sym1, sym2):
    """Whether two symbols have the same op at every node."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return len(nodes1) == len(nodes2) and all(n1["op"] == n2["op"]
                                              for n1, n2 in zip(nodes1, nodes2))


# ---- environment and capabilities ----
@contextlib.contextmanager
def environment(*args):
    """Sets environment variables for the body of a `with` and restores them after, even on
    an exception: environment(name, value) or environment({name: value, ...}); a value of
    None unsets the variable."""
    if len(args) == 1 and isinstance(args[0], dict):
        env = dict(args[0])
    elif len(args) == 2:
        env = {args[0]: args[1]}
    else:
        raise TypeError("[environment] expected (name, value) or one dict of them, got "
                        f"{len(args)} arguments")
    snapshot = {k: os.environ.get(k) for k in env}

    def apply(values):
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)

    apply(env)
    try:
        yield
    finally:
        from .nd.ndarray import waitall
        waitall()
        apply(snapshot)


def has_tvm_ops():
    """False: ndx has no TVM-generated operators."""
    return False


def is_op_runnable():
    """True: every ndx operator runs on every device ndx supports (MXNet's check concerns
    TVM-generated operators on old GPUs)."""
    return True


def list_gpus():
    """range(number of usable GPUs)."""
    return range(_core._num_gpus())


def is_cd_run():
    return os.environ.get("CD_JOB", "0") == "1"


# ---- matrices for linear-algebra tests ----
def _householder(n):
    v = _onp.random.uniform(-1.0, 1.0, (n, 1))
    v /= _onp.linalg.norm(v)
    return _onp.eye(n) - 2 * v @ v.T


def new_matrix_with_real_eigvals_2d(n):
    """An n x n matrix Q^-1 D Q with D diagonal in [-10, 10) (so real eigenvalues there) and Q
    of 2-norm condition number below 3 (a reflection times a diagonal in [0.6, 1.7])."""
    q = _householder(n) @ _onp.diag(_onp.random.uniform(0.6, 1.7, n))
    d = _onp.diag(_onp.random.uniform(-10.0, 10.0, n))
    return _onp.linalg.inv(q) @ d @ q


def new_matrix_with_real_eigvals_nd(shape):
    """A stack of new_matrix_with_real_eigvals_2d(shape[-1]) of the given shape."""
    n = int(_onp.prod(shape[:-2])) if len(shape) > 2 else 1
    return _onp.array([new_matrix_with_real_eigvals_2d(shape[-1])
                       for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random n x n orthogonal matrix."""
    x = _onp.random.randn(n, n)
    return _onp.linalg.qr(x.T @ x)[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A symmetric n x n matrix Q^T D Q with eigenvalues D uniform in [-10, 10)."""
    q = new_orthonormal_matrix_2d(n)
    return q.T @ _onp.diag(_onp.random.uniform(-10.0, 10.0, n)) @ q


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A stack of new_sym_matrix_with_real_eigvals_2d(shape[-1]) of the given shape."""
    n = int(_onp.prod(shape[:-2])) if len(shape) > 2 else 1
    return _onp.array([new_sym_matrix_with_real_eigvals_2d(shape[-1])
                       for _ in range(n)]).reshape(shape)


# ---- checking random generators ----
def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """nbuckets equiprobable buckets [(ppf(i/n), ppf((i+1)/n))] and their probabilities."""
    if nbuckets <= 0:
        raise ValueError(f"[gen_buckets_probs_with_ppf] nbuckets must be positive, got "
                         f"{nbuckets}")
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the sample mean of generator(nsamples) lies within mu +- 3 sigma / sqrt(n)."""
    samples = _to_numpy(generator(nsamples))
    m = samples.mean()
    half = 3 * sigma / _onp.sqrt(nsamples)
    return bool(mu - half < m < mu + half)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance of generator(nsamples) lies within sigma^2 +-
    3 sqrt(2 sigma^4 / (n - 1))."""
    samples = _to_numpy(generator(nsamples))
    v = samples.var(ddof=1)
    half = 3 * _onp.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < v < sigma ** 2 + half)


def _gamma_q(a, x):
    """The regularized upper incomplete gamma function Q(a, x) (series below a + 1, Lentz's
    continued fraction above)."""
    if x <= 0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        k = a
        for _ in range(10000):
            k += 1
            term *= x / k
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return math.exp(log_front) * h


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of generator(nsamples) against bucket probabilities.
    Continuous buckets are (low, high) pairs in ascending order; discrete buckets are the
    values themselves. Returns (p value, observed counts, expected counts)."""
    if not isinstance(buckets, list):
        raise TypeError(f"[chi_square_check] buckets must be a list, got "
                        f"{type(buckets).__name__}")
    if len(probs) != len(buckets):
        raise ValueError(f"[chi_square_check] {len(probs)} probs for {len(buckets)} buckets")
    samples = _to_numpy(generator(nsamples)).ravel()
    continuous = isinstance(buckets[0], (list, tuple))
    obs = _onp.zeros(len(buckets), dtype=_onp.int64)
    for i, bucket in enumerate(buckets):
        if continuous:
            low, high = bucket
            if low > high or (i + 1 < len(buckets) and high > buckets[i + 1][0]):
                raise ValueError("[chi_square_check] buckets must be ascending and disjoint")
            obs[i] = ((samples >= low) & (samples < high)).sum()
        else:
            obs[i] = (samples == bucket).sum()
    expected = (nsamples * _onp.asarray(probs, dtype=_onp.float64))
    stat = float((((obs - expected) ** 2) / expected).sum())
    return _gamma_q((len(buckets) - 1) / 2.0, stat / 2.0), obs, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Repeats chi_square_check nrepeat times; raises AssertionError unless at least
    success_rate of the p values exceed alpha. Returns the p values."""
    results = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    ps = [r[0] for r in results]
    if sum(p > alpha for p in ps) < nrepeat * success_rate:
        raise AssertionError(f"Generator test fails, chi-square p={ps}, "
                             f"obs_freq={[r[1].tolist() for r in results]}, "
                             f"expected_freq={[r[2].tolist() for r in results]}, "
                             f"buckets={buckets}, probs={probs}")
    return ps


# ---- symbols ----
def _as_location(sym, location, device, dtype, what="location"):
    """{argument name: ndx array} from a list (list_arguments order) or a dict."""
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise ValueError(f"[{what}] the names {sorted(location)} do not match the symbol's "
                             f"arguments {sorted(names)}")
    elif isinstance(location, (list, tuple)):
        if len(location) != len(names):
            raise ValueError(f"[{what}] {len(location)} values for the symbol's "
                             f"{len(names)} arguments {names}")
        location = dict(zip(names, location))
    else:
        raise TypeError(f"[{what}] location must be a list or a dict, got "
                        f"{type(location).__name__}")
    return {k: _as_array(v, device, dtype) for k, v in location.items()}


def _as_aux(sym, aux_states, device, dtype):
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise ValueError(f"[aux_states] the names {sorted(aux_states)} do not match the "
                             f"symbol's auxiliary states {sorted(names)}")
    else:
        aux_states = dict(zip(names, aux_states))
    return {k: _as_array(v, device, dtype) for k, v in aux_states.items()}


def _as_array(v, device, dtype):
    """An ndx array of v: dtype 'asnumpy' keeps v's dtype, None too."""
    if dtype == "asnumpy" or dtype is None:
        dtype = v.dtype if hasattr(v, "dtype") else None
    if isinstance(v, np.ndarray) and (dtype is None or v.dtype == dtype):
        return v
    kwargs = {"dtype": dtype} if dtype is not None else {}
    if device is not None:
        kwargs["device"] = device
    return np.array(_to_numpy(v) if isinstance(v, np.ndarray) else v, **kwargs)


def _check_dtype(dtype, what):
    if dtype != "asnumpy" and _onp.dtype(dtype) not in map(_onp.dtype, ("float16", "float32",
                                                                        "float64")):
        raise ValueError(f"[{what}] dtype must be float16, float32, float64 or 'asnumpy', got "
                         f"{dtype!r}")


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Runs sym on NumPy inputs given by name; returns NumPy output(s)."""
    ctx = ctx or default_device()
    exe = sym._bind(ctx, args={k: np.array(v) for k, v in inputs.items()})
    outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
    return outs[0] if len(outs) == 1 else outs


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):  # noqa: B008
    """Asserts that sym's outputs at `location` (a list in list_arguments order or a dict;
    NumPy arrays are converted to `dtype`, 'asnumpy' keeps theirs) equal `expected` (a list in
    output order or a dict by list_outputs name). Returns the outputs."""
    _check_dtype(dtype, "check_symbolic_forward")
    ctx = ctx or default_device()
    location = _as_location(sym, location, ctx, dtype)
    aux_states = _as_aux(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    exe = sym._bind(ctx, args=location, grad_req="null", aux_states=aux_states)
    outputs = exe.forward(is_train=False)
    if len(expected) != len(outputs):
        raise ValueError(f"[check_symbolic_forward] {len(expected)} expected values for "
                         f"{len(outputs)} outputs")
    for name, want, got in zip(sym.list_outputs(), expected, outputs):
        assert_almost_equal(want, got, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):  # noqa: B008
    """Asserts that the gradients of sym at `location`, back-propagated from `out_grads` (a
    list in output order, a dict by output name, or None for ones), equal `expected` (a list
    in list_arguments order or a dict by name). grad_req 'add' adds to buffers that start with
    random values (checked as the difference); 'null' leaves them unchanged. Returns the
    gradient buffers by name."""
    _check_dtype(dtype, "check_symbolic_backward")
    if grad_stypes and any(v not in (None, "default") for v in grad_stypes.values()):
        raise NotImplementedError("[check_symbolic_backward] sparse gradients are not supported")
    ctx = ctx or default_device()
    location = _as_location(sym, location, ctx, dtype)
    aux_states = _as_aux(sym, aux_states, ctx, dtype)
    names = sym.list_arguments()
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(names, expected))
    if isinstance(grad_req, str):
        grad_req = dict.fromkeys(names, grad_req)
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(names, grad_req))
    # Buffers start "dirty" (random), so 'add' and 'null' are checked against their start.
    grads = {k: _as_array(_onp.random.normal(size=location[k].shape), ctx,
                          location[k].dtype if dtype == "asnumpy" else dtype)
             for k in sorted(expected)}
    initial = {k: g.asnumpy().copy() for k, g in grads.items()}
    exe = sym._bind(ctx, args=location, args_grad=grads, grad_req=grad_req,
                    aux_states=aux_states)
    outputs = exe.forward(is_train=True)
    if isinstance(out_grads, dict):
        out_grads = [out_grads[k] for k in sym.list_outputs()]
    if out_grads is not None:
        out_grads = [_as_array(g, ctx, o.dtype if dtype == "asnumpy" else dtype)
                     for g, o in zip(out_grads, outputs)]
    exe.backward(out_grads)
    for name in expected:
        req = grad_req.get(name, "null")
        got = grads[name].asnumpy()
        if req == "write":
            want = expected[name]
        elif req == "add":
            want, got = expected[name], got - initial[name]
        elif req == "null":
            want = initial[name]
        else:
            raise ValueError(f"[check_symbolic_backward] invalid grad_req {req!r} for "
                             f"'{name}'")
        assert_almost_equal(want, got, rtol, atol, (f"EXPECTED_{name}", f"BACKWARD_{name}"),
                            equal_nan=equal_nan)
    return grads


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype()):  # noqa: B008
    """Central differences of sum(executor's first output) with respect to each float
    argument in `location` ({name: NumPy array}), in `dtype`."""
    approx = {k: _onp.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        executor.arg_dict[k][...] = np.array(v, dtype=dtype)
    for k, v in location.items():
        v = _onp.array(v, dtype=dtype, order="C")
        if v.dtype.kind != "f":
            continue
        flat = v.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            values = []
            for step in (eps / 2.0, -eps / 2.0):
                flat[i] = old + step
                executor.arg_dict[k][...] = np.array(v, dtype=dtype)
                if aux_states is not None:
                    for name, a in aux_states.items():
                        executor.aux_dict[name][...] = np.array(a, dtype=dtype)
                executor.forward(is_train=use_forward_train)
                values.append(executor.outputs[0].asnumpy().astype(_onp.float64))
            approx[k].reshape(-1)[i] = (values[0] - values[1]).sum() / eps
            flat[i] = old
        executor.arg_dict[k][...] = np.array(location[k], dtype=dtype)
    return approx


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):  # noqa: B008
    """Checks backward against central differences, as MXNet's check_numeric_gradient.

    - `sym` a Symbol: `location` gives every argument (a list in list_arguments order or a
      dict); the gradient of sum(sym * r) (r a fixed random projection of the first output)
      from the executor's backward is compared with finite differences (step numeric_eps, by
      default default_numeric_eps()[dtype]) for the arguments in `grad_nodes` (names, or a
      dict {name: grad_req}; all arguments by default).
    - `sym` a callable: `location` is the list of its array inputs; autograd's gradients of
      sum(sym(*inputs) * r) are checked the same way (grad_nodes: input positions).
    - `sym` a str (ndx's op checker): a registered op's FGradient against central
      differences in float64; the third argument is the op's params dict.
    """
    if isinstance(sym, str):
        return _check_op_numeric_gradient(sym, location, aux_states, numeric_eps, rtol, atol)
    _check_dtype(dtype, "check_numeric_gradient")
    if grad_stype_dict and any(v != "default" for v in grad_stype_dict.values()):
        raise NotImplementedError("[check_numeric_gradient] sparse gradients are not supported")
    from .sym import Symbol
    if isinstance(sym, Symbol):
        return _check_symbol_numeric_gradient(sym, location, aux_states, numeric_eps, rtol,
                                              atol, grad_nodes, use_forward_train, ctx, dtype)
    if callable(sym):
        return _check_callable_numeric_gradient(sym, location, numeric_eps, rtol, atol,
                                                grad_nodes, use_forward_train, dtype)
    raise TypeError(f"[check_numeric_gradient] sym must be a Symbol, a callable or a "
                    f"registered op name, got {type(sym).__name__}")


def _random_projection(shape):
    # Not too small, or finite differences lose too much precision.
    return _onp.random.rand(*shape) + 0.1


def _check_symbol_numeric_gradient(sym, location, aux_states, numeric_eps, rtol, atol,
                                   grad_nodes, use_forward_train, ctx, dtype):
    from . import sym as _sym
    ctx = ctx or default_device()
    location = _as_location(sym, location, ctx, dtype)
    location_np = {k: v.asnumpy() for k, v in location.items()}
    aux = _as_aux(sym, aux_states, ctx, dtype)
    aux_np = {k: v.asnumpy() for k, v in aux.items()} if aux is not None else None
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
        grad_req = dict.fromkeys(grad_nodes, "write")
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = dict.fromkeys(grad_nodes, "write")
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
        grad_nodes = list(grad_nodes)
    else:
        raise TypeError(f"[check_numeric_gradient] grad_nodes must be a list or a dict, got "
                        f"{type(grad_nodes).__name__}")
    shapes = {k: v.shape for k, v in location.items()}
    if aux is not None:
        shapes.update({k: v.shape for k, v in aux.items()})
    _, out_shapes, _ = sym.infer_shape(**shapes)
    proj_name = "__random_proj"
    out = (sym[0] if len(sym) > 1 else sym) * _sym.var(proj_name)
    proj = _random_projection(out_shapes[0])
    location = dict(location, **{proj_name: _as_array(proj, ctx, dtype)})
    initial = {k: _onp.random.normal(0, 0.01, size=location[k].shape) for k in grad_nodes}
    grads = {k: _as_array(v, ctx, dtype).copy() for k, v in initial.items()}
    grad_req[proj_name] = "write"
    exe = out._bind(ctx, args=location, args_grad=grads, grad_req=grad_req, aux_states=aux)
    exe.forward(is_train=True)
    eps = get_tolerance(exe.outputs[0], numeric_eps, default_numeric_eps())
    if _onp.dtype(dtype) in (_onp.float16, _onp.float32) and eps < 1e-5:
        raise ValueError(f"[check_numeric_gradient] numeric_eps {eps} is too small for "
                         f"{_onp.dtype(dtype)} finite differences (>= 1e-5)")
    exe.backward()
    symbolic = exe.grad_dict
    numeric = numeric_grad(exe, dict(location_np, **{proj_name: proj}), aux_np, eps=eps,
                           use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        req = grad_req[name]
        if req == "write":
            assert_almost_equal(numeric[name], symbolic[name], rtol, atol,
                                (f"NUMERICAL_{name}", f"BACKWARD_{name}"))
        elif req == "add":
            assert_almost_equal(numeric[name], symbolic[name].asnumpy() - initial[name], rtol,
                                atol, (f"NUMERICAL_{name}", f"BACKWARD_{name}"))
        elif req == "null":
            if symbolic[name] is not None:
                raise AssertionError(f"grad_req 'null' for '{name}' but a gradient exists")
        else:
            raise ValueError(f"[check_numeric_gradient] invalid grad_req {req!r} for '{name}'")


def _check_callable_numeric_gradient(func, location, numeric_eps, rtol, atol, grad_nodes,
                                     use_forward_train, dtype):
    from . import autograd
    if not isinstance(location, (list, tuple)):
        location = [location]
    arrays = [_onp.array(_to_numpy(v), dtype=dtype, order="C") for v in location]
    nodes = range(len(arrays)) if grad_nodes is None else list(grad_nodes)

    def first(out):
        return out[0] if isinstance(out, (list, tuple)) else out

    xs = [np.array(a, dtype=dtype) for a in arrays]
    for i in nodes:
        xs[i].attach_grad()
    with autograd.record(train_mode=use_forward_train):
        y = first(func(*xs))
    proj = _random_projection(y.shape).astype(dtype)
    y.backward(np.array(proj))
    eps = get_tolerance(y, numeric_eps, default_numeric_eps())
    with (autograd.train_mode() if use_forward_train else autograd.predict_mode()):
        for i in nodes:
            numeric = _onp.zeros(arrays[i].shape, dtype=_onp.float64)
            flat = arrays[i].reshape(-1)
            for j in range(flat.size):
                old = flat[j]
                values = []
                for step in (eps / 2.0, -eps / 2.0):
                    flat[j] = old + step
                    out = first(func(*[np.array(a, dtype=dtype) for a in arrays]))
                    values.append(float((out.asnumpy().astype(_onp.float64) * proj).sum()))
                flat[j] = old
                numeric.reshape(-1)[j] = (values[0] - values[1]) / eps
            assert_almost_equal(numeric.astype(dtype), xs[i].grad, rtol, atol,
                                (f"NUMERICAL_{i}", f"BACKWARD_{i}"))


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1e-4, atol=1e-4):
    """Asserts that net_builder()'s blocks give the same outputs (and input gradients) with
    and without hybridize(), with the same parameters, and match numpy_func when given."""
    from . import autograd
    saved_out = saved_grads = params = None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder()
            if params is None:
                net.initialize()
            else:
                for k, p in net.collect_params().items():
                    p.shape = params[k].shape
                    if p._data is None:
                        p.initialize()
                    p.set_data(params[k])
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if params is None:
                params = {k: p.data().copy() for k, p in net.collect_params().items()}
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                if saved_grads is None:
                    saved_grads = [x.grad.asnumpy() for x in inputs]
                else:
                    for x, g in zip(inputs, saved_grads):
                        assert_almost_equal(x.grad.asnumpy(), g, rtol=rtol, atol=atol)
    if numpy_func is not None:
        want = numpy_func(*[x.asnumpy() for x in data_l])
        assert_almost_equal(saved_out, want, rtol=rtol, atol=atol)


def with_seed(seed=None):
    """Seeds NumPy, Python and ndx's generators for a test, and prints the seed on failure."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            s = seed if seed is not None else random.randint(0, 2**31 - 1)
            _onp.random.seed(s)
            random.seed(s)
            _core.random_seed(s)
            try:
                return func(*args, **kwargs)
            except Exception:
                print(f"with_seed: test failed with seed {s}")
                raise
        return wrapper
    return decorator


def _check_op_numeric_gradient(op_name, inputs, params=None, eps=None, rtol=None, atol=None):
    """Checks a registered op's FGradient against central differences of
    sum(op(inputs) * w) in float64; `inputs` are NumPy arrays."""
    params = params or {}
    eps = 1e-6 if eps is None else eps
    rtol = 1e-4 if rtol is None else rtol
    atol = 1e-6 if atol is None else atol
    inputs = [_onp.asarray(x, dtype=_onp.float64) for x in inputs]
    handle = _ops()[op_name].handle
    y = _core._invoke(handle, tuple(np.array(x) for x in inputs), params).asnumpy()
    w = _onp.random.uniform(-1, 1, size=y.shape)
    grads = op_gradient(op_name, [np.array(x) for x in inputs], [np.array(w)], **params)
    for i, x in enumerate(inputs):
        numeric = _onp.zeros_like(x)
        for idx in _onp.ndindex(*x.shape):
            for sign in (1, -1):
                xp = [v.copy() for v in inputs]
                xp[i][idx] += sign * eps
                out = _core._invoke(handle, tuple(np.array(v) for v in xp), params).asnumpy()
                numeric[idx] += sign * (out * w).sum() / (2 * eps)
        assert_almost_equal(grads[i], numeric, rtol=rtol, atol=atol,
                            names=(f"symbolic grad {i}", "numeric grad"), use_broadcast=False)


def op_gradient(op_name, inputs, ograds, **params):
    """The input gradients of one registered op, built by its FGradient and evaluated."""
    return _core._gradient(_ops()[op_name].handle, tuple(inputs), params, tuple(ograds))


def check_op(op, inputs, params=None, reference=None, grad=True, rtol=1e-5, atol=1e-6,
             grad_rtol=1e-4, grad_atol=1e-6, extra_inputs=(), error_inputs=(), hybridize=True,
             eps=1e-4):
    """Checks any op (built-in, Python custom, or from a library), given as a callable
    `op(*inputs, **params)`:
    - forward against `reference(*numpy_inputs, **params)` when given (values, shape, dtype);
    - backward against central differences of sum(op(x) * w), in the inputs' dtype (use float64
      inputs for tight tolerances), when `grad`;
    - the op inside a hybridized block equals the op called directly, when `hybridize`;
    - each input tuple of `extra_inputs` (0-d and zero-size ones, say) against the reference;
    - each (inputs, params, exception) of `error_inputs` raises that exception.
    An op with several outputs returns a tuple (or list): `reference` then returns one array per
    output, and the backward check weighs every floating-point output (sum of op(x)[k] * w[k]).
    Inputs are NumPy arrays. Raises AssertionError naming the failed check."""
    from . import autograd, gluon
    params = dict(params or {})

    def outputs(out):
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    def run(arrays):
        return op(*[np.array(a) for a in arrays], **params)

    def check_forward(arrays, what):
        out = run(arrays)
        if reference is not None:
            got = outputs(out)
            want = reference(*arrays, **params)
            want = tuple(want) if isinstance(out, (tuple, list)) else (want,)
            assert len(got) == len(want), \
                f"{what}: {len(got)} outputs, reference {len(want)}"
            for k, (g, w) in enumerate(zip(got, want)):
                name = f"{what} output {k}" if isinstance(out, (tuple, list)) else what
                g, w = g.asnumpy(), _onp.asarray(w)
                assert g.shape == w.shape, f"{name}: shape {g.shape}, reference {w.shape}"
                assert_almost_equal(g, w, rtol=rtol, atol=atol, names=(name, "reference"))
        return out

    out = check_forward(inputs, "forward")
    for i, extra in enumerate(extra_inputs):
        check_forward(extra, f"extra input {i}")
    if hybridize:
        class _Wrap(gluon.HybridBlock):
            def forward(self, *xs):
                return op(*xs, **params)

        block = _Wrap()
        block.hybridize()
        hyb = outputs(block(*[np.array(a) for a in inputs]))
        outs = outputs(out)
        assert len(hyb) == len(outs), f"hybridized: {len(hyb)} outputs, imperative {len(outs)}"
        for k, (h, o) in enumerate(zip(hyb, outs)):
            name = f"hybridized output {k}" if isinstance(out, (tuple, list)) else "hybridized"
            assert_almost_equal(h, o, rtol=0, atol=0, names=(name, "imperative"))
    # one head gradient per floating-point output (an integer output, indices say, has none)
    weighted = [k for k, o in enumerate(outputs(out)) if _onp.dtype(o.dtype).kind == "f"]
    if grad and weighted:
        arrays = [_onp.array(a) for a in inputs]
        ws = {k: _onp.random.uniform(-1, 1, size=o.shape).astype(o.dtype)
              for k, o in enumerate(outputs(out)) if k in weighted}
        xs = [np.array(a) for a in arrays]
        for x in xs:
            x.attach_grad()
        with autograd.record():
            y = outputs(op(*xs, **params))
        autograd.backward([y[k] for k in weighted], [np.array(ws[k]) for k in weighted])

        def weighted_sum(arrays):
            ys = outputs(run(arrays))
            return sum(float((ys[k].asnumpy().astype(_onp.float64) * ws[k]).sum())
                       for k in weighted)

        for i, a in enumerate(arrays):
            if a.dtype.kind != "f":
                continue
            numeric = _onp.zeros(a.shape, dtype=_onp.float64)
            for idx in _onp.ndindex(*a.shape):
                vals = []
                for sign in (1, -1):
                    shifted = [b.copy() for b in arrays]
                    shifted[i][idx] += sign * eps
                    vals.append(weighted_sum(shifted))
                numeric[idx] = (vals[0] - vals[1]) / (2 * eps)
            assert_almost_equal(xs[i].grad.asnumpy().astype(_onp.float64), numeric, rtol=grad_rtol,
                                atol=grad_atol, names=(f"gradient of input {i}", "numeric"))
    for bad_inputs, bad_params, exc in error_inputs:
        try:
            op(*[np.array(a) for a in bad_inputs], **dict(params, **(bad_params or {})))
        except exc:
            continue
        raise AssertionError(f"error input {bad_inputs!r} {bad_params!r} did not raise "
                             f"{exc.__name__}")
