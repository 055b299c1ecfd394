"""npx.set_num_threads / get_num_threads: validation, and results that do not change with the
thread count (bit for bit: the engine's chunking never changes what is summed with what)."""
import numpy as onp
import pytest

from ndx import np, npx


@pytest.fixture
def restore_threads():
    saved = npx.get_num_threads()
    yield
    npx.set_num_threads(saved)


def test_set_and_get(restore_threads):
    npx.set_num_threads(3)
    assert npx.get_num_threads() == 3
    npx.set_num_threads(None)
    assert npx.get_num_threads() >= 1


@pytest.mark.parametrize("bad,exc", [(0, ValueError), (-2, ValueError), (10**6, ValueError),
                                     (2**80, ValueError), (1.5, TypeError), ("2", TypeError),
                                     (True, TypeError)])
def test_bad_thread_counts(bad, exc, restore_threads):
    before = npx.get_num_threads()
    with pytest.raises(exc):
        npx.set_num_threads(bad)
    assert npx.get_num_threads() == before


def test_results_match_numpy_for_every_thread_count(restore_threads):
    rng = onp.random.default_rng(0)
    x = rng.uniform(-3, 3, (517, 733)).astype(onp.float32)
    a = np.array(x)
    results = []
    for threads in (1, 2, 4):
        npx.set_num_threads(threads)
        results.append([np.exp(a).asnumpy(), (a * 2 + 1).asnumpy(), np.sum(a).asnumpy(),
                        np.sum(a, axis=0).asnumpy(), np.max(a, axis=1).asnumpy(),
                        np.argmax(a, axis=0).asnumpy(), npx.softmax(a).asnumpy()])
    for other in results[1:]:
        for r0, r in zip(results[0], other):
            assert onp.array_equal(r0, r)
    onp.testing.assert_allclose(results[0][0], onp.exp(x), rtol=1e-6)
    onp.testing.assert_allclose(results[0][2], x.sum(dtype=onp.float64), rtol=1e-6)
    onp.testing.assert_array_equal(results[0][5], onp.argmax(x, axis=0))


def test_a_forked_child_runs_kernels_while_the_parent_is_busy(restore_threads):
    # DataLoader's workers are forked. The child has none of the parent's worker threads, and
    # a lock the parent's busy thread held at the fork stays held in the child: ndx's kernel
    # pool must start afresh there (pthread_atfork), or these children hang.
    import os
    import threading
    import time

    npx.set_num_threads(2)
    a = np.ones((1 << 22,))
    stop = threading.Event()

    def busy():  # large kernels release the GIL, so the forks land inside them
        while not stop.is_set():
            np.exp(a)

    thread = threading.Thread(target=busy)
    thread.start()
    children = []
    try:
        for _ in range(8):
            time.sleep(0.01)
            pid = os.fork()
            if pid == 0:
                try:
                    npx.set_num_threads(2)
                    ok = float(np.exp(a).sum()) > 0
                finally:
                    os._exit(0 if ok else 3)
            children.append(pid)
    finally:
        stop.set()
        thread.join()
    deadline = time.monotonic() + 30
    hung = []
    for pid in children:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                assert os.waitstatus_to_exitcode(status) == 0
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                hung.append(pid)
                break
            time.sleep(0.05)
    assert not hung, f"{len(hung)} of {len(children)} forked children hung"


def _layer_norm_ref(x, gamma, beta, head, eps=1e-5):
    """Layer norm over the last axis and its gradients, by hand in float64."""
    x, gamma, beta, head = (v.astype(onp.float64) for v in (x, gamma, beta, head))
    mean = x.mean(axis=-1, keepdims=True)
    sd = onp.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) / sd
    d = head * gamma
    dx = (d - d.mean(axis=-1, keepdims=True) - xhat * (d * xhat).mean(axis=-1, keepdims=True)) / sd
    rows = tuple(range(x.ndim - 1))
    return xhat * gamma + beta, dx, (head * xhat).sum(axis=rows), head.sum(axis=rows)


@pytest.mark.parametrize("shape", [(300, 1029), (7, 5, 33), (40000, 3)])
def test_layer_norm_rows_match_numpy_for_every_thread_count(shape, restore_threads):
    """The last-axis layer_norm row kernels (forward, and the gradient's column sums over
    fixed row blocks) give the same bits for 1, 2 and 4 threads, and match float64 NumPy."""
    from ndx import autograd
    rng = onp.random.default_rng(1)
    x = rng.normal(2.0, 3.0, shape).astype(onp.float32)
    gamma = rng.normal(size=shape[-1:]).astype(onp.float32)
    beta = rng.normal(size=shape[-1:]).astype(onp.float32)
    head = rng.normal(size=shape).astype(onp.float32)
    results = []
    for threads in (1, 2, 4):
        npx.set_num_threads(threads)
        args = [np.array(v) for v in (x, gamma, beta)]
        for v in args:
            v.attach_grad()
        with autograd.record():
            y = npx.layer_norm(*args, axis=-1, eps=1e-5)
        y.backward(np.array(head))
        results.append([y.asnumpy()] + [v.grad.asnumpy() for v in args])
    for other in results[1:]:
        for r0, r in zip(results[0], other):
            assert onp.array_equal(r0, r)
    for got, want in zip(results[0], _layer_norm_ref(x, gamma, beta, head)):
        onp.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * onp.abs(want).max())


def _products(arrays):
    """matmul tall and wide, batched small and large products, complex, and a fully connected
    layer with its gradients (the transposed GEMMs)."""
    from ndx import autograd
    tall, wide, w, bs, bl, c, x, fw = arrays
    xs = [np.array(v) for v in (x, fw)]
    for v in xs:
        v.attach_grad()
    with autograd.record():
        y = npx.fully_connected(xs[0], xs[1], no_bias=True, num_hidden=fw.shape[0])
    y.backward()
    return [np.matmul(np.array(tall), np.array(w)).asnumpy(),
            np.matmul(np.array(wide).T, np.array(wide)).asnumpy(),
            np.matmul(np.array(bs), np.array(bs).transpose(0, 2, 1)).asnumpy(),
            np.matmul(np.array(bl), np.array(bl)).asnumpy(),
            np.matmul(np.array(c), np.array(c).T).asnumpy(),
            y.asnumpy(), xs[0].grad.asnumpy(), xs[1].grad.asnumpy()]


def test_gemm_results_match_numpy_for_every_thread_count(restore_threads):
    """ndx splits a GEMM into panels over its own threads with OpenBLAS single-threaded in
    each. Every thread count matches NumPy's products, and repeats bit for bit; across thread
    counts the last bits may differ (OpenBLAS's edge kernels sum in another order), as they do
    with OpenBLAS's own threads."""
    rng = onp.random.default_rng(2)
    f32 = onp.float32
    tall = rng.standard_normal((1000, 300)).astype(f32)
    wide = rng.standard_normal((130, 900)).astype(f32)
    w = rng.standard_normal((300, 257)).astype(f32)
    bs = rng.standard_normal((64, 9, 17))  # float64, small products: whole ones per thread
    bl = rng.standard_normal((3, 200, 200)).astype(f32)
    c = (rng.standard_normal((150, 80)) + 1j * rng.standard_normal((150, 80))).astype(onp.complex64)
    x = rng.standard_normal((512, 784)).astype(f32)
    fw = rng.standard_normal((256, 784)).astype(f32)
    arrays = (tall, wide, w, bs, bl, c, x, fw)
    ones = onp.ones((512, 256), f32)
    wants = [tall @ w, wide.T @ wide, bs @ bs.transpose(0, 2, 1), bl @ bl, c @ c.T,
             x @ fw.T, ones @ fw, ones.T @ x]
    for threads in (1, 2, 3, 4):
        npx.set_num_threads(threads)
        first, again = _products(arrays), _products(arrays)
        for got, repeat, want in zip(first, again, wants):
            assert onp.array_equal(got, repeat)
            tol = 1e-12 if want.dtype == onp.float64 else 2e-5
            onp.testing.assert_allclose(got, want, rtol=tol,
                                        atol=tol * onp.abs(want).max() * 50)


def test_lapack_after_split_gemms_uses_threads_and_stays_right(restore_threads):
    """LAPACK (which ndx does not split) runs after GEMMs that left OpenBLAS single-threaded."""
    rng = onp.random.default_rng(3)
    m = rng.standard_normal((300, 300)) + 300 * onp.eye(300)
    b = rng.standard_normal((300, 4))
    npx.set_num_threads(2)
    np.matmul(np.array(m), np.array(m)).asnumpy()
    got = np.linalg.solve(np.array(m), np.array(b)).asnumpy()
    onp.testing.assert_allclose(got, onp.linalg.solve(m, b), rtol=1e-10, atol=1e-12)
    onp.testing.assert_allclose(np.linalg.inv(np.array(m)).asnumpy() @ m, onp.eye(300),
                                atol=1e-10)
