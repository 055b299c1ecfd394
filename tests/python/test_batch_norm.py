"""npx.batch_norm in training mode, forward and backward, against float64 NumPy.

Channel rows of 16 or more contiguous float32 / float64 elements run the row kernels
(kernel/rowwise-inl.h: one pass for the statistics, one for the gradient's sums, one for dx);
shorter rows (the last CASES) run the reductions. Both are checked against the same
reference, and the row kernels' results must not change with the thread count."""
import numpy as onp
import pytest

from ndx import autograd, np, npx

TOLS = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def reference(x, gamma, beta, rm, rv, head, axis, eps, momentum, fix_gamma, global_stats):
    """(y, dx, dgamma, dbeta, new running_mean, new running_var) in float64."""
    x = x.astype(onp.float64)
    axis = axis % x.ndim
    axes = tuple(d for d in range(x.ndim) if d != axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    count = x.size // x.shape[axis]
    if global_stats:
        m, v = rm.astype(onp.float64), rv.astype(onp.float64)
        new_rm, new_rv = rm, rv
    else:
        m, v = x.mean(axis=axes), x.var(axis=axes)
        new_rm = rm * momentum + m * (1 - momentum)
        new_rv = rv * momentum + v * (1 - momentum)
    inv = 1 / onp.sqrt(v + eps)
    xhat = (x - m.reshape(shape)) * inv.reshape(shape)
    g = onp.ones_like(gamma, dtype=onp.float64) if fix_gamma else gamma.astype(onp.float64)
    y = xhat * g.reshape(shape) + beta.reshape(shape)
    h = head.astype(onp.float64)
    dbeta = h.sum(axis=axes)
    dgamma = onp.zeros_like(dbeta) if fix_gamma else (h * xhat).sum(axis=axes)
    scale = (g * inv).reshape(shape)
    if global_stats:
        dx = h * scale
    else:
        hx = (h * xhat).sum(axis=axes)
        dx = (h - dbeta.reshape(shape) / count - xhat * hx.reshape(shape) / count) * scale
    return y, dx, dgamma, dbeta, new_rm, new_rv


def run_ndx(x, gamma, beta, rm, rv, head, grad_req="write", **kw):
    xs, gs, bs = np.array(x), np.array(gamma), np.array(beta)
    rms, rvs = np.array(rm), np.array(rv)
    for a in (xs, gs, bs):
        a.attach_grad(grad_req)
        if grad_req == "add":
            a.grad[...] = 1
    with autograd.record():
        y = npx.batch_norm(xs, gs, bs, rms, rvs, **kw)
    y.backward(np.array(head))
    return [a.asnumpy() for a in (y, xs.grad, gs.grad, bs.grad, rms, rvs)]


CASES = [  # (shape, axis): the first ones have channel rows of >= 16 elements
    ((4, 3, 8, 8), 1), ((2, 5, 17), 1), ((3, 4, 2, 16), 1), ((2, 3, 4, 20), 2),
    ((5, 2, 3, 4, 4), 1), ((32, 6), 1), ((2, 3, 4), -1), ((4, 3, 2, 2), 1)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("mode", ["batch", "fix_gamma", "global_stats"])
def test_training_forward_and_backward_match_numpy(dtype, shape, axis, mode):
    rng = onp.random.default_rng(len(shape) * 10 + axis)
    c = shape[axis]
    x = rng.uniform(-2, 3, shape).astype(dtype)
    gamma = rng.uniform(0.5, 1.5, c).astype(dtype)
    beta = rng.uniform(-1, 1, c).astype(dtype)
    rm = rng.uniform(-1, 1, c).astype(dtype)
    rv = rng.uniform(0.5, 2, c).astype(dtype)
    head = rng.standard_normal(shape).astype(dtype)
    kw = dict(axis=axis, eps=1e-3, momentum=0.8, fix_gamma=mode == "fix_gamma",
              use_global_stats=mode == "global_stats")
    got = run_ndx(x, gamma, beta, rm, rv, head, **kw)
    want = reference(x, gamma, beta, rm, rv, head, axis, 1e-3, 0.8, kw["fix_gamma"],
                     kw["use_global_stats"])
    for name, g, w in zip(["y", "dx", "dgamma", "dbeta", "running_mean", "running_var"],
                          got, want):
        assert g.dtype == onp.dtype(dtype), name
        onp.testing.assert_allclose(g, w, err_msg=name, **TOLS[dtype])


def test_grad_req_add_accumulates():
    rng = onp.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 8)).astype(onp.float32)
    gamma, beta = onp.full(3, 1.5, onp.float32), onp.zeros(3, onp.float32)
    rm, rv = onp.zeros(3, onp.float32), onp.ones(3, onp.float32)
    head = rng.standard_normal(x.shape).astype(onp.float32)
    got = run_ndx(x, gamma, beta, rm, rv, head, grad_req="add")
    want = reference(x, gamma, beta, rm, rv, head, 1, 1e-5, 0.9, False, False)
    for g, w in zip(got[1:4], want[1:4]):
        onp.testing.assert_allclose(g, w + 1, **TOLS["float32"])


def test_statistics_of_data_far_from_zero():
    """A large common offset: the variance comes from deviations, not from sum(x^2)."""
    rng = onp.random.default_rng(2)
    x = (1000 + rng.standard_normal((8, 4, 32, 32))).astype(onp.float32)
    head = rng.standard_normal(x.shape).astype(onp.float32)
    gamma, beta = onp.ones(4, onp.float32), onp.zeros(4, onp.float32)
    rm, rv = onp.zeros(4, onp.float32), onp.ones(4, onp.float32)
    got = run_ndx(x, gamma, beta, rm, rv, head)
    want = reference(x, gamma, beta, rm, rv, head, 1, 1e-5, 0.9, False, False)
    onp.testing.assert_allclose(got[5], want[5], rtol=1e-4)  # running_var: the batch variance
    onp.testing.assert_allclose(got[0], want[0], rtol=2e-3, atol=2e-3)
    onp.testing.assert_allclose(got[1], want[1], rtol=2e-3, atol=2e-3)


def test_row_kernels_do_not_depend_on_the_thread_count():
    saved = npx.get_num_threads()
    rng = onp.random.default_rng(3)
    x = rng.standard_normal((16, 8, 40, 40)).astype(onp.float32)
    gamma, beta = rng.uniform(0.5, 1.5, 8).astype(onp.float32), onp.zeros(8, onp.float32)
    rm, rv = onp.zeros(8, onp.float32), onp.ones(8, onp.float32)
    head = rng.standard_normal(x.shape).astype(onp.float32)
    try:
        results = []
        for threads in (1, 2, 3):
            npx.set_num_threads(threads)
            results.append(run_ndx(x, gamma, beta, rm, rv, head))
    finally:
        npx.set_num_threads(saved)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            onp.testing.assert_array_equal(a, b)
    want = reference(x, gamma, beta, rm, rv, head, 1, 1e-5, 0.9, False, False)
    for g, w in zip(results[0], want):
        onp.testing.assert_allclose(g, w, **TOLS["float32"])



@pytest.mark.parametrize("use_global_stats", [False, True])
def test_float16_data_with_float32_parameters_as_mxnet(use_global_stats):
    # MXNet's pairing (AMP, net.cast('float16')): float16 data, float32 gamma / beta / running
    # statistics; computed in float32, the output float16. Reference: the same values in
    # float32 throughout.
    rng = onp.random.default_rng(5)
    xh = rng.normal(size=(4, 3, 5, 5)).astype(onp.float16)
    g, b = rng.normal(size=3).astype(onp.float32), rng.normal(size=3).astype(onp.float32)
    w = onp.arange(300, dtype=onp.float32).reshape(4, 3, 5, 5) / 300

    def run(x, params):
        x = np.array(x)
        gamma, beta = np.array(params[0]), np.array(params[1])
        mean, var = np.zeros(3), np.full(3, 2.0)
        for a in (x, gamma, beta):
            a.attach_grad()
        with autograd.record():
            y = npx.batch_norm(x, gamma, beta, mean, var, fix_gamma=False,
                               use_global_stats=use_global_stats)
            (y.astype("float32") * np.array(w)).sum().backward()
        return y, x.grad, gamma.grad, beta.grad, mean

    low = run(xh, (g, b))
    ref = run(xh.astype(onp.float32), (g, b))
    assert low[0].dtype == onp.float16 and low[1].dtype == onp.float16
    assert low[2].dtype == low[3].dtype == low[4].dtype == onp.float32
    # (the gradient reaching y is float16: parameter gradients agree to float16 precision)
    for got, want, tol in zip(low, ref, (3e-3, 2e-3, 3e-3, 3e-3, 1e-6)):
        onp.testing.assert_allclose(got.asnumpy().astype(onp.float32), want.asnumpy(),
                                    rtol=tol, atol=tol)
    with pytest.raises(TypeError):  # float16 data with float64 parameters: no such pairing
        npx.batch_norm(np.array(xh), np.array(g.astype(onp.float64)), np.array(b),
                       np.zeros(3), np.ones(3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("fix_gamma", [False, True])
def test_inference_forward_matches_numpy(dtype, shape, axis, fix_gamma):
    """Predict mode (running statistics): rows of >= 16 elements take channel_normalize."""
    rng = onp.random.default_rng(len(shape) * 7 + axis)
    c = shape[axis]
    x = rng.uniform(-2, 3, shape).astype(dtype)
    gamma, beta = rng.uniform(0.5, 2, c).astype(dtype), rng.uniform(-1, 1, c).astype(dtype)
    rm, rv = rng.uniform(-1, 1, c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    y = npx.batch_norm(np.array(x), np.array(gamma), np.array(beta), np.array(rm),
                       np.array(rv), axis=axis, eps=1e-3, fix_gamma=fix_gamma)
    want = reference(x, gamma, beta, rm, rv, onp.zeros_like(x), axis, 1e-3, 0.9, fix_gamma,
                     True)[0]
    onp.testing.assert_allclose(y.asnumpy(), want, **TOLS[dtype])
