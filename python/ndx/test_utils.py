"""Helpers for tests of ndx ops and of custom ops, with the names MXNet's test template uses."""
import functools
import random

import numpy as _onp

from . import _core
from . import numpy as np
from ._registry import ops as _ops


def _to_numpy(a):
    if isinstance(a, np.ndarray):
        return a.asnumpy()
    return _onp.asarray(a)


def default_tols(dtype):
    """(rtol, atol) suited to a dtype."""
    name = str(_onp.dtype(dtype)) if dtype != "bfloat16" else "bfloat16"
    return {"float16": (1e-2, 1e-3), "bfloat16": (5e-2, 1e-2), "float32": (1e-4, 1e-5)}.get(
        name, (1e-7, 1e-9))


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False):
    """Asserts that a and b (ndarrays, NumPy arrays or scalars) have equal shapes and close
    values."""
    a, b = _to_numpy(a), _to_numpy(b)
    if rtol is None or atol is None:
        r, t = default_tols(a.dtype if a.dtype.kind == "f" else b.dtype)
        rtol = r if rtol is None else rtol
        atol = t if atol is None else atol
    assert a.shape == b.shape, f"shape mismatch: {names[0]} {a.shape} vs {names[1]} {b.shape}"
    _onp.testing.assert_allclose(a.astype(_onp.float64) if a.dtype.kind == "b" else a,
                                 b.astype(_onp.float64) if b.dtype.kind == "b" else b,
                                 rtol=rtol, atol=atol, equal_nan=equal_nan)


def same(a, b):
    """True when a and b have the same shape and exactly equal elements."""
    a, b = _to_numpy(a), _to_numpy(b)
    return a.shape == b.shape and _onp.array_equal(a, b)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape with num_dim dims, each in [1, dim] (or [0, dim])."""
    low = 0 if allow_zero_size else 1
    return tuple(_onp.random.randint(low, dim + 1, size=num_dim).tolist())


def rand_ndarray(shape, dtype="float32", low=-1.0, high=1.0):
    """An ndarray of uniform random values in [low, high)."""
    return np.array(_onp.random.uniform(low, high, size=shape).astype(dtype), dtype=dtype)


def collapse_sum_like(a, shape):
    """Sums `a` over the axes where `shape` is broadcast to a.shape (NumPy reference)."""
    a = _to_numpy(a)
    shape = tuple(shape)
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape)
                                      if d == 1 and a.shape[i + lead] != 1)
    return a.sum(axis=axes, keepdims=True).reshape(shape) if axes else a.reshape(shape)


def use_np(func):
    """Marks a test (or HybridBlock) as using NumPy semantics; ndx always does."""
    return func


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


def op_gradient(op_name, inputs, ograds, **params):
    """The input gradients of one registered op, built by its FGradient and evaluated."""
    return _core._gradient(_ops()[op_name].handle, tuple(inputs), params, tuple(ograds))


def check_numeric_gradient(op_name, inputs, params=None, eps=1e-6, rtol=1e-4, atol=1e-6):
    """Checks an op's FGradient against central differences of sum(op(inputs) * w) in float64.

    Until autograd lands this checks single registered ops; `inputs` are NumPy arrays."""
    params = params or {}
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
                            names=(f"symbolic grad {i}", "numeric grad"))


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
    Inputs are NumPy arrays. Raises AssertionError naming the failed check."""
    from . import autograd, gluon
    params = dict(params or {})

    def run(arrays):
        return op(*[np.array(a) for a in arrays], **params)

    def check_forward(arrays, what):
        out = run(arrays)
        if reference is not None:
            want = _onp.asarray(reference(*arrays, **params))
            got = out.asnumpy()
            assert got.shape == want.shape, f"{what}: shape {got.shape}, reference {want.shape}"
            assert_almost_equal(got, want, rtol=rtol, atol=atol, names=(what, "reference"))
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
        hyb = block(*[np.array(a) for a in inputs])
        assert_almost_equal(hyb, out, rtol=0, atol=0, names=("hybridized", "imperative"))
    if grad:
        arrays = [_onp.array(a) for a in inputs]
        w = _onp.random.uniform(-1, 1, size=out.shape).astype(out.dtype)
        xs = [np.array(a) for a in arrays]
        for x in xs:
            x.attach_grad()
        with autograd.record():
            y = op(*xs, **params)
        y.backward(np.array(w))
        for i, a in enumerate(arrays):
            if a.dtype.kind != "f":
                continue
            numeric = _onp.zeros(a.shape, dtype=_onp.float64)
            for idx in _onp.ndindex(*a.shape):
                vals = []
                for sign in (1, -1):
                    shifted = [b.copy() for b in arrays]
                    shifted[i][idx] += sign * eps
                    vals.append(float((run(shifted).asnumpy().astype(_onp.float64) * w).sum()))
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
