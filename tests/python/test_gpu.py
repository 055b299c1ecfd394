"""The CUDA backend against NumPy: placement and copies, the elementwise and reduction engines
on the GPU, casts, autograd, the allocator. Runs where a GPU is; skipped with the reason
elsewhere (a build without CUDA, or a machine without a driver or device)."""
import numpy as onp
import pytest

import ndx
from ndx import autograd, np, npx

pytestmark = pytest.mark.skipif(
    ndx.num_gpus() == 0, reason=f"no GPU: {ndx.device.gpu_unavailable_reason()}")

GPU = ndx.gpu(0)
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]


def rand(shape, dtype="float32", seed=0, low=-3, high=3):
    rng = onp.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if onp.dtype(dtype).kind in "iu":
        lo = 0 if onp.dtype(dtype).kind == "u" else low
        return rng.integers(lo, high + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def on_gpu(x):
    return np.array(x, dtype=x.dtype, device=GPU)


# ---- devices, placement, copies ----

def test_devices_and_placement():
    assert ndx.num_gpus() >= 1 and npx.num_gpus() == ndx.num_gpus()
    x = np.zeros((3, 4), device=GPU)
    assert x.device == GPU and x.device == "gpu(0)" and x.ctx == ndx.gpu(0)
    assert x.dtype == onp.float32
    assert onp.array_equal(x.asnumpy(), onp.zeros((3, 4), onp.float32))
    assert onp.array_equal(np.ones((2,), dtype="int32", device=GPU).asnumpy(), [1, 1])
    assert onp.array_equal(np.full((2, 2), 7.5, device=GPU).asnumpy(), onp.full((2, 2), 7.5))
    assert onp.array_equal(np.arange(5, device=GPU).asnumpy(), onp.arange(5))
    assert onp.array_equal(np.array([[1, 2], [3, 4]], device=GPU).asnumpy(), [[1, 2], [3, 4]])
    assert "device=gpu(0)" in repr(x)
    assert np.zeros((0, 3), device=GPU).shape == (0, 3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(dtype):
    h = rand((5, 7), dtype)
    g = np.array(h).to_device(GPU)
    assert g.device == GPU and g.dtype == h.dtype
    assert onp.array_equal(g.asnumpy(), h)
    assert onp.array_equal(g.as_in_ctx(ndx.cpu()).asnumpy(), h)
    # strided views on the GPU copy back as NumPy's views do
    assert onp.array_equal(g[1:4, ::2].asnumpy(), h[1:4, ::2])
    assert onp.array_equal(g.T.asnumpy(), h.T)


def test_missing_device_and_mixed_devices_raise():
    with pytest.raises(ValueError, match=rf"gpu\({ndx.num_gpus()}\)"):
        np.zeros((2,), device=ndx.gpu(ndx.num_gpus()))
    a, b = np.ones((2,), device=GPU), np.ones((2,))
    with pytest.raises(ValueError, match="add.*gpu\\(0\\).*cpu\\(0\\)|add.*cpu\\(0\\).*gpu\\(0\\)"):
        a + b
    with pytest.raises(BufferError, match="gpu"):
        memoryview(a)


def test_copyto_and_assignment():
    h = rand((4, 5))
    g = np.zeros((4, 5), device=GPU)
    np.array(h).copyto(g)
    assert onp.array_equal(g.asnumpy(), h)
    g[1:3] = 2.0
    want = h.copy()
    want[1:3] = 2.0
    assert onp.array_equal(g.asnumpy(), want)
    g[:, 0] = np.array(onp.arange(4, dtype=onp.float32))  # a host value into a GPU view
    want[:, 0] = onp.arange(4)
    assert onp.array_equal(g.asnumpy(), want)
    assert g.copyto(ndx.cpu()).device == "cpu(0)"


# ---- the elementwise engine ----

UNARY = ["negative", "absolute", "sign", "square", "floor", "ceil", "sqrt", "exp", "log",
         "expm1", "log1p", "log2", "log10", "sin", "cos", "tanh"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_matches_numpy(name, dtype):
    low = 0.1 if name in ("sqrt", "log", "log2", "log10", "log1p") else -3
    h = rand((33, 65), dtype, low=low)
    got = getattr(np, name)(on_gpu(h))
    assert got.device == GPU
    want = getattr(onp, name)(h)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "float16"])
def test_unary_other_dtypes(dtype):
    h = rand((100,), dtype)
    for name in ["negative", "absolute", "square"]:
        if dtype.startswith("uint") and name == "negative":
            continue
        got = getattr(np, name)(on_gpu(h)).asnumpy()
        onp.testing.assert_allclose(got, getattr(onp, name)(h), rtol=1e-3)
    onp.testing.assert_allclose(np.exp(on_gpu(h)).asnumpy(), np.exp(np.array(h)).asnumpy(),
                                rtol=1e-5)


BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "power",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "floor_divide", "mod"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", [((6, 7), (6, 7)), ((6, 1), (1, 7)), ((3, 6, 7), (7,)),
                                    ((), (4, 5)), ((0, 3), (1, 3))])
def test_binary_broadcasting_matches_numpy(name, shapes):
    a = rand(shapes[0], "float32", seed=1, low=0.5)
    b = rand(shapes[1], "float32", seed=2, low=0.5)
    got = getattr(np, name)(on_gpu(a), on_gpu(b))
    want = getattr(onp, name)(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dt", [("int32", "float32"), ("int8", "int64"), ("uint8", "int8"),
                                ("bool", "int32"), ("float16", "float32"), ("int64", "int64")])
def test_binary_promotion_matches_the_cpu(dt):
    a, b = rand((4, 9), dt[0], seed=3), rand((4, 9), dt[1], seed=4)
    for name in ["add", "multiply", "maximum", "less"]:
        got = getattr(np, name)(on_gpu(a), on_gpu(b))
        want = getattr(np, name)(np.array(a), np.array(b))
        assert got.dtype == want.dtype
        onp.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-3)


def test_python_scalars_operators_and_in_place():
    h = rand((5, 6))
    g = on_gpu(h)
    onp.testing.assert_allclose((g * 2 + 1).asnumpy(), h * 2 + 1, rtol=1e-6)
    onp.testing.assert_allclose((1 - g).asnumpy(), 1 - h, rtol=1e-6)
    onp.testing.assert_allclose((g ** 2).asnumpy(), h ** 2, rtol=1e-5)
    assert (g > 0).dtype == onp.bool_
    assert onp.array_equal((g > 0).asnumpy(), h > 0)
    g += 1
    onp.testing.assert_allclose(g.asnumpy(), h + 1, rtol=1e-6)
    out = np.zeros((5, 6), device=GPU)
    np.multiply(g, 3, out=out)
    onp.testing.assert_allclose(out.asnumpy(), (h + 1) * 3, rtol=1e-6)
    i = np.array(onp.arange(6, dtype=onp.int32), device=GPU)
    assert (i + 1).dtype == onp.int32 and (i + 1.5).dtype == onp.float32


def test_strided_and_transposed_operands():
    h = rand((8, 10), "float32")
    g = on_gpu(h)
    onp.testing.assert_allclose((g.T + g.T).asnumpy(), h.T * 2, rtol=1e-6)
    onp.testing.assert_allclose((g[::2, 1::3] * g[1::2, ::3][:, :3]).asnumpy(),
                                h[::2, 1::3] * h[1::2, ::3][:, :3], rtol=1e-6)
    onp.testing.assert_allclose(np.exp(g[:, ::-1]).asnumpy(), onp.exp(h[:, ::-1]), rtol=1e-5)


@pytest.mark.parametrize("src", DTYPES)
def test_casts_match_numpy(src):
    h = rand((50,), src, seed=5, low=-100, high=100)
    g = on_gpu(h)
    for dst in DTYPES:
        if onp.dtype(dst).kind in "ui" and onp.dtype(src).kind == "f":
            continue  # float -> int out of range differs by design (ndx saturates)
        if onp.dtype(dst).kind == "u" and onp.dtype(src).kind == "i":
            continue
        got = g.astype(dst)
        want = np.array(h).astype(dst)  # the CPU engine's cast
        assert got.dtype == want.dtype
        assert onp.array_equal(got.asnumpy(), want.asnumpy()), (src, dst)


def test_bfloat16_on_the_gpu():
    h = rand((64,), "float32")
    g = np.array(h, device=GPU).astype("bfloat16")
    c = np.array(h).astype("bfloat16")
    assert onp.array_equal((g + g).asnumpy(), (c + c).asnumpy())


# ---- reductions ----

@pytest.mark.parametrize("shape,axis", [((1000,), None), ((37, 53), 0), ((37, 53), 1),
                                        ((4, 5, 6), (0, 2)), ((4, 5, 6), (1,)),
                                        ((3, 0, 2), 1), ((3, 0, 2), None), ((), None),
                                        ((2, 3, 4, 5), (1, 3)), ((1 << 20,), None),
                                        ((2048, 300), 0), ((7, 100000), 1)])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reductions_match_numpy(shape, axis, name):
    size = int(onp.prod(shape)) if shape else 1
    if name in ("max", "min") and size == 0:
        return
    low, high = (0.9, 1.1) if name == "prod" else (-3, 3)
    h = rand(shape, "float32", seed=6, low=low, high=high)
    g = on_gpu(h)
    for keepdims in (False, True):
        got = getattr(np, name)(g, axis=axis, keepdims=keepdims)
        want = getattr(onp, name)(h.astype(onp.float64), axis=axis, keepdims=keepdims)
        assert got.shape == want.shape
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=2e-5 if name != "prod" else 1e-3,
                                    atol=1e-4)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", "float16", "float64"])
def test_reductions_other_dtypes(dtype):
    h = rand((30, 40), dtype, seed=7)
    for name, axis in [("sum", None), ("sum", 1), ("max", 0), ("min", None)]:
        got = getattr(np, name)(on_gpu(h), axis=axis)
        want = getattr(np, name)(np.array(h), axis=axis)
        assert got.dtype == want.dtype, (name, dtype)
        onp.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-2)


def test_nan_propagates_through_max_and_strided_reductions():
    h = rand((10, 20))
    h[3, 7] = onp.nan
    g = on_gpu(h)
    assert onp.isnan(np.max(g).item())
    assert onp.array_equal(onp.isnan(np.max(g, axis=0).asnumpy()), onp.isnan(h.max(axis=0)))
    onp.testing.assert_allclose(np.sum(g.T[:, ::2], axis=1).asnumpy(),
                                onp.sum(h.T[:, ::2], axis=1), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8"])
@pytest.mark.parametrize("cols", [slice(None), slice(0, 1030), slice(1, 1031), slice(0, 18)])
def test_reductions_over_rows_of_views(dtype, cols):
    """Axis-0 reductions read 16 bytes of neighbouring outputs at a time where the rows are
    aligned: whole rows, a last partial group, rows starting off alignment, a NaN column."""
    h = rand((997, 1032), dtype, seed=8, low=-3, high=3)
    if onp.dtype(dtype).kind == "f":
        h[500, 7] = onp.nan
    ref = h[:, cols]
    g = on_gpu(h)[:, cols]
    for name in ("sum", "max", "min", "mean"):
        got = getattr(np, name)(g, axis=0).asnumpy()
        want = getattr(onp, name)(ref.astype(onp.float64) if name != "max" and name != "min"
                                  else ref, axis=0)
        exact = got.dtype == onp.float64 or got.dtype.kind in "iu"
        onp.testing.assert_allclose(got, want, rtol=1e-12 if exact else 1e-5,
                                    atol=0 if exact else 1e-3)


# ---- autograd and the host fallback ----

def test_autograd_on_the_gpu():
    h = rand((4, 5), "float32")
    x = on_gpu(h)
    x.attach_grad()
    with autograd.record():
        y = (x * x + 3 * x).sum()
    y.backward()
    assert x.grad.device == GPU
    onp.testing.assert_allclose(x.grad.asnumpy(), 2 * h + 3, rtol=1e-5)
    w = on_gpu(rand((1, 5), "float32", seed=9))
    w.attach_grad()
    with autograd.record():
        z = np.exp(x * w).mean()
    z.backward()
    hw = rand((1, 5), "float32", seed=9)
    onp.testing.assert_allclose(w.grad.asnumpy(),
                                (onp.exp(h * hw) * h).sum(axis=0, keepdims=True) / h.size,
                                rtol=1e-4)


def test_ops_without_gpu_kernels_run_on_host_copies_and_are_counted():
    a, b = rand((3, 4), seed=10), rand((4, 2), seed=11)
    before = npx.gpu_host_fallbacks()
    got = np.cumsum(on_gpu(a), axis=1)  # cumsum has no GPU kernel yet
    assert got.device == GPU
    onp.testing.assert_allclose(got.asnumpy(), onp.cumsum(a, axis=1), rtol=1e-5)
    after = npx.gpu_host_fallbacks()
    assert after.get("_np_cumsum", 0) == before.get("_np_cumsum", 0) + 1
    got = np.dot(on_gpu(a), on_gpu(b))
    assert got.device == GPU
    onp.testing.assert_allclose(got.asnumpy(), a @ b, rtol=1e-5)


# ---- the allocator ----

def test_allocator_reuses_blocks_and_does_not_leak():
    npx.synchronize()
    base = npx.gpu_memory_stats()["in_use"]
    x = np.ones((1000,), device=GPU)
    for _ in range(10000):
        x = x * 1.0 + 0.0
    del x
    npx.synchronize()
    stats = npx.gpu_memory_stats()
    assert stats["in_use"] == base
    assert stats["cached"] > 0
    free, total = npx.gpu_memory_info(0)
    assert 0 < free <= total
    npx.empty_cache(0)
    assert npx.gpu_memory_stats()["cached"] == 0


# ---- matmul through cuBLAS, softmax rows ----

@pytest.mark.parametrize("shapes", [((64, 48), (48, 80)), ((5, 64, 48), (48, 80)),
                                    ((2, 3, 17, 9), (3, 9, 11)), ((7,), (7, 5)), ((4, 7), (7,)),
                                    ((0, 4), (4, 3)), ((3, 0), (0, 2))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_matmul_matches_numpy(shapes, dtype):
    a = rand(shapes[0], dtype, seed=12)
    b = rand(shapes[1], dtype, seed=13)
    before = npx.gpu_host_fallbacks().get("_np_matmul", 0)
    got = np.matmul(on_gpu(a), on_gpu(b))
    assert npx.gpu_host_fallbacks().get("_np_matmul", 0) == before  # cuBLAS, not the host
    want = onp.matmul(a.astype(onp.float64), b.astype(onp.float64))
    tol = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-2}[dtype]
    assert got.shape == want.shape and got.dtype == onp.dtype(dtype)
    onp.testing.assert_allclose(got.asnumpy().astype(onp.float64), want, rtol=tol, atol=tol * 10)


def test_matmul_and_dot_gradients_on_the_gpu():
    ha, hb = rand((3, 4, 5), seed=14), rand((5, 6), seed=15)
    a, b = on_gpu(ha), on_gpu(hb)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = np.matmul(a, b).sum() + np.dot(a, b).sum()
    y.backward()
    ones = onp.ones((3, 4, 6))
    onp.testing.assert_allclose(a.grad.asnumpy(), 2 * ones @ hb.T, rtol=1e-5)
    onp.testing.assert_allclose(b.grad.asnumpy(),
                                2 * onp.einsum("bij,bik->jk", ha, ones), rtol=1e-5)


def test_integer_matmul_on_the_gpu():
    a, b = rand((4, 6), "int32", seed=16), rand((6, 3), "int32", seed=17)
    got = np.matmul(on_gpu(a), on_gpu(b))
    assert got.device == GPU and onp.array_equal(got.asnumpy(), a @ b)


@pytest.mark.parametrize("shape,axis", [((8, 1000), -1), ((3, 5, 4096), -1), ((6, 7), 0),
                                        ((2, 3, 4), 1), ((4, 1), -1), ((0, 5), -1)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_on_the_gpu(shape, axis, log):
    h = rand(shape, "float32", seed=18, low=-20, high=20)
    g = on_gpu(h)
    f = npx.log_softmax if log else npx.softmax
    got = f(g, axis=axis)
    hx = h.astype(onp.float64)
    e = onp.exp(hx - hx.max(axis=axis, keepdims=True)) if h.size else hx
    s = e.sum(axis=axis, keepdims=True)
    want = (hx - hx.max(axis=axis, keepdims=True) - onp.log(s)) if log else e / s
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    if h.size:  # a NaN in a row makes the whole row NaN, as on the CPU
        h2 = h.copy().reshape(-1, h.shape[-1])
        h2[0, 0] = onp.nan
        r = f(np.array(h2, device=GPU), axis=-1).asnumpy()
        c = f(np.array(h2), axis=-1).asnumpy()
        assert onp.array_equal(onp.isnan(r), onp.isnan(c))


# ---- Gluon on the GPU ----

def _train(device, params, x, y, steps=30, hybridize=False):
    from ndx import gluon
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(32, activation="relu"), gluon.nn.Dense(10))
    net.initialize(device=device)
    net(np.array(x[:2], device=device))  # shapes are inferred at the first call
    for p, value in zip(net.collect_params().values(), params):
        p.set_data(np.array(value, device=device))
    if hybridize:
        net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.2, "momentum": 0.9})
    data, label = gluon.utils.split_and_load(x, [device])[0], np.array(y, device=device)
    losses = []
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(x.shape[0])
        losses.append(float(loss.mean().item()))
    return losses, [p.data().asnumpy() for p in net.collect_params().values()]


@pytest.mark.parametrize("hybridize", [False, True])
def test_gluon_training_on_the_gpu_follows_the_cpu(hybridize):
    from ndx import gluon
    rng = onp.random.default_rng(19)
    x = rng.normal(size=(64, 20)).astype(onp.float32)
    y = rng.integers(0, 10, size=64).astype(onp.float32)
    ref = gluon.nn.HybridSequential()
    ref.add(gluon.nn.Dense(32, activation="relu"), gluon.nn.Dense(10))
    ref.initialize()
    ref(np.array(x[:2]))
    params = [p.data().asnumpy() for p in ref.collect_params().values()]
    cpu_losses, cpu_params = _train(ndx.cpu(), params, x, y, hybridize=hybridize)
    gpu_losses, gpu_params = _train(GPU, params, x, y, hybridize=hybridize)
    assert gpu_losses[-1] < gpu_losses[0] * 0.7  # it learns
    onp.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-4, atol=1e-5)
    for g, c in zip(gpu_params, cpu_params):
        onp.testing.assert_allclose(g, c, rtol=1e-3, atol=1e-5)


# ---- convolution, pooling, normalization: the GPU against the CPU kernels (which the
# op-table tests check against NumPy references) ----

def _grads_on(device, fn, arrays):
    xs = [np.array(a, device=device) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = fn(*xs)
        loss = (y * np.array(onp.linspace(-1, 1, y.size).reshape(y.shape).astype(onp.float32),
                             device=device)).sum()
    loss.backward()
    return y.asnumpy(), [x.grad.asnumpy() for x in xs]


def _same_on_both(fn, arrays, rtol=1e-4, atol=1e-5):
    y_cpu, g_cpu = _grads_on(ndx.cpu(), fn, arrays)
    y_gpu, g_gpu = _grads_on(GPU, fn, arrays)
    onp.testing.assert_allclose(y_gpu, y_cpu, rtol=rtol, atol=atol)
    for a, b in zip(g_gpu, g_cpu):
        onp.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", [
    dict(x=(2, 4, 9, 9), k=(3, 3), f=6, stride=(1, 1), pad=(1, 1), dilate=(1, 1), groups=1),
    dict(x=(3, 4, 10, 7), k=(3, 2), f=4, stride=(2, 1), pad=(0, 1), dilate=(1, 2), groups=2),
    dict(x=(2, 6, 8, 8), k=(1, 1), f=6, stride=(1, 1), pad=(0, 0), dilate=(1, 1), groups=6),
    dict(x=(2, 3, 12), k=(3,), f=5, stride=(2,), pad=(1,), dilate=(1,), groups=1),
])
@pytest.mark.parametrize("bias", [True, False])
def test_convolution_on_the_gpu(case, bias):
    rng = onp.random.default_rng(20)
    x = rng.normal(size=case["x"]).astype(onp.float32)
    c = case["x"][1]
    w = rng.normal(size=(case["f"], c // case["groups"]) + case["k"]).astype(onp.float32)
    b = rng.normal(size=(case["f"],)).astype(onp.float32)
    kw = dict(kernel=case["k"], stride=case["stride"], pad=case["pad"], dilate=case["dilate"],
              num_filter=case["f"], num_group=case["groups"])
    if bias:
        _same_on_both(lambda x, w, b: npx.convolution(x, w, b, **kw), [x, w, b])
    else:
        _same_on_both(lambda x, w: npx.convolution(x, w, no_bias=True, **kw), [x, w])


@pytest.mark.parametrize("kw", [
    dict(kernel=(2, 2), stride=(2, 2), pool_type="max"),
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
    dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg"),
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=False),
    dict(kernel=(3, 2), stride=(2, 2), pool_type="sum", pooling_convention="full"),
    dict(global_pool=True, pool_type="avg"),
    dict(global_pool=True, pool_type="max"),
])
def test_pooling_on_the_gpu(kw):
    x = onp.random.default_rng(21).normal(size=(2, 3, 7, 8)).astype(onp.float32)
    _same_on_both(lambda x: npx.pooling(x, **kw), [x])


def test_normalization_on_the_gpu():
    rng = onp.random.default_rng(22)
    x = rng.normal(size=(4, 5, 6)).astype(onp.float32)
    g, b = rng.normal(size=(6,)).astype(onp.float32), rng.normal(size=(6,)).astype(onp.float32)
    _same_on_both(lambda x, g, b: npx.layer_norm(x, g, b, axis=-1), [x, g, b])
    x4 = rng.normal(size=(4, 3, 5, 5)).astype(onp.float32)
    g3, b3 = rng.normal(size=(3,)).astype(onp.float32), rng.normal(size=(3,)).astype(onp.float32)
    rm_c, rv_c = np.zeros((3,)), np.ones((3,))
    rm_g, rv_g = np.zeros((3,), device=GPU), np.ones((3,), device=GPU)

    def bn(rm, rv):
        return lambda x, g, b: npx.batch_norm(x, g, b, rm, rv)
    with autograd.train_mode():
        y_cpu, gr_cpu = _grads_on(ndx.cpu(), bn(rm_c, rv_c), [x4, g3, b3])
        y_gpu, gr_gpu = _grads_on(GPU, bn(rm_g, rv_g), [x4, g3, b3])
    onp.testing.assert_allclose(y_gpu, y_cpu, rtol=1e-4, atol=1e-5)
    for a, c in zip(gr_gpu, gr_cpu):
        onp.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-4)
    onp.testing.assert_allclose(rm_g.asnumpy(), rm_c.asnumpy(), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(rv_g.asnumpy(), rv_c.asnumpy(), rtol=1e-5, atol=1e-6)


def test_a_small_cnn_trains_on_the_gpu_as_on_the_cpu():
    from ndx import gluon
    rng = onp.random.default_rng(23)
    x = rng.normal(size=(16, 1, 12, 12)).astype(onp.float32)
    y = rng.integers(0, 4, size=16).astype(onp.float32)

    def build():
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Conv2D(6, kernel_size=3, padding=1, activation="relu"),
                gluon.nn.MaxPool2D(pool_size=2), gluon.nn.Flatten(), gluon.nn.Dense(4))
        return net
    ref = build()
    ref.initialize()
    ref(np.array(x[:2]))
    params = [p.data().asnumpy() for p in ref.collect_params().values()]
    results = []
    for device in (ndx.cpu(), GPU):
        net = build()
        net.initialize(device=device)
        net(np.array(x[:2], device=device))
        for p, v in zip(net.collect_params().values(), params):
            p.set_data(np.array(v, device=device))
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        xd, yd = np.array(x, device=device), np.array(y, device=device)
        losses = []
        for _ in range(10):
            with autograd.record():
                loss = loss_fn(net(xd), yd)
            loss.backward()
            trainer.step(16)
            losses.append(float(loss.mean().item()))
        results.append(losses)
    assert results[1][-1] < results[1][0]
    onp.testing.assert_allclose(results[1], results[0], rtol=1e-4, atol=1e-5)


def test_convolution_without_cudnn_takes_im2col_and_cublas():
    """NDX_CUDA_CUDNN=0 keeps the im2col + cuBLAS path (used when cuDNN cannot be loaded):
    the convolution tests again, in a child process with it set."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, NDX_CUDA_CUDNN="0")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__,
                        "-k", "convolution_on_the_gpu or small_cnn"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert " passed" in r.stdout


# ---- extensions on GPU arrays ----

class _Cube(ndx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] ** 3)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 3 * in_data[0] ** 2)


@ndx.operator.register("gpu_test_cube")
class _CubeProp(ndx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Cube()


def test_python_custom_ops_run_on_gpu_arrays_through_host_copies():
    h = rand((3, 4), seed=24)
    x = on_gpu(h)
    x.attach_grad()
    with autograd.record():
        y = npx.custom(x, op_type="gpu_test_cube")
    y.backward()
    assert y.device == GPU and x.grad.device == GPU
    onp.testing.assert_allclose(y.asnumpy(), h ** 3, rtol=1e-5)
    onp.testing.assert_allclose(x.grad.asnumpy(), 3 * h ** 2, rtol=1e-5)
    assert npx.gpu_host_fallbacks().get("Custom", 0) >= 1


def test_a_library_gpu_kernel_runs_on_ndx_stream():
    import os
    import shutil
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    ext = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples", "extensions")
    ndx.library.compile(os.path.join(ext, "relu_gpu_lib.cu"))
    h = rand((1000,), seed=25)
    before = dict(npx.gpu_host_fallbacks())
    got = npx.relu_cuda(on_gpu(h))
    assert got.device == GPU
    onp.testing.assert_array_equal(got.asnumpy(), onp.maximum(h, 0))
    after = npx.gpu_host_fallbacks()  # its gpu forward ran, not the cpu one on host copies
    assert {k: v for k, v in after.items() if "relu_cuda" in k} == \
        {k: v for k, v in before.items() if "relu_cuda" in k}


# ---- gathers by index: pick and embedding on the GPU ----

@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_pick_on_the_gpu(mode):
    h = rand((4, 5, 3), seed=26)
    idx = onp.array([[0, 4, 7], [-1, 2, 3], [1, 1, 1], [9, 0, -6]], dtype=onp.float32)
    before = npx.gpu_host_fallbacks().get("_npx_pick", 0)
    _same_on_both(lambda x: npx.pick(x, np.array(idx, device=x.device), axis=1, mode=mode),
                  [h])
    assert npx.gpu_host_fallbacks().get("_npx_pick", 0) == before


def test_embedding_on_the_gpu():
    w = rand((10, 4), seed=27)
    idx = onp.array([[1, 3, 3], [9, 1, 0]], dtype=onp.float32)  # repeated rows sum gradients
    _same_on_both(lambda w: npx.embedding(np.array(idx, device=w.device), w, input_dim=10,
                                          output_dim=4), [w])
    with pytest.raises(IndexError, match="out of bounds"):
        npx.embedding(np.array([[10.0]], device=GPU), on_gpu(w), input_dim=10, output_dim=4)


def test_batch_norm_fix_gamma_on_the_gpu():
    # fix_gamma's constant 1 once lived on the host and the GPU kernel read it as device memory
    rng = onp.random.default_rng(28)
    x = rng.normal(size=(4, 3, 5)).astype(onp.float32)
    g, b = onp.full((3,), 5.0, onp.float32), rng.normal(size=(3,)).astype(onp.float32)
    outs = []
    for device in (ndx.cpu(), GPU):
        rm, rv = np.zeros((3,), device=device), np.ones((3,), device=device)
        outs.append(npx.batch_norm(np.array(x, device=device), np.array(g, device=device),
                                   np.array(b, device=device), rm, rv, fix_gamma=True).asnumpy())
    onp.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)


# ---- cases the GPU kernels hand back to the host ----

def _fallbacks(op):
    return npx.gpu_host_fallbacks().get(op, 0)


@pytest.mark.parametrize("case", [
    ("convolution 3-d", lambda x, w, b: npx.convolution(x, w, b, kernel=(2, 3, 2), num_filter=4,
                                                          stride=(1, 2, 1), pad=(1, 0, 1),
                                                          dilate=(2, 1, 1), num_group=2),
     [(2, 2, 5, 7, 4), (4, 1, 2, 3, 2), (4,)], "_npx_convolution"),
    ("deconvolution 2-d", lambda x, w, b: npx.deconvolution(x, w, b, kernel=(3, 3), num_filter=4,
                                                            stride=(2, 2), pad=(1, 0),
                                                            adj=(1, 0)),
     [(2, 3, 5, 4), (3, 4, 3, 3), (4,)], "_npx_deconvolution"),
    ("deconvolution 2-d, groups, dilation", lambda x, w: npx.deconvolution(
        x, w, kernel=(2, 3), num_filter=6, num_group=3, dilate=(2, 1), no_bias=True),
     [(2, 3, 4, 5), (3, 2, 2, 3)], "_npx_deconvolution"),
    ("deconvolution 1-d", lambda x, w, b: npx.deconvolution(x, w, b, kernel=(4,), num_filter=2,
                                                            stride=(3,)),
     [(3, 2, 6), (2, 2, 4), (2,)], "_npx_deconvolution"),
    ("deconvolution 3-d", lambda x, w: npx.deconvolution(x, w, kernel=(2, 2, 3), num_filter=3,
                                                         stride=(2, 1, 2), no_bias=True),
     [(2, 2, 3, 4, 3), (2, 3, 2, 2, 3)], "_npx_deconvolution"),
])
def test_cudnn_covers_3d_and_transposed_convolution(case):
    """3-d convolution and transposed convolution (1-, 2- and 3-d, groups, dilation, adj) run
    on cuDNN with no host copies, forward and backward as on the CPU."""
    _, fn, shapes, op = case
    rng = onp.random.default_rng(39)
    arrays = [rng.normal(size=s).astype(onp.float32) for s in shapes]
    before = _fallbacks(op)
    _same_on_both(fn, arrays)
    assert _fallbacks(op) == before


@pytest.mark.parametrize("case", [
    ("pooling 3-d", lambda x: npx.pooling(x, kernel=(2, 2, 2), stride=(2, 2, 2),
                                          pool_type="max"),
     [(2, 3, 4, 4, 6)], "_npx_pooling"),
])
def test_uncovered_nn_cases_run_on_host_copies_with_gradients(case):
    _, fn, shapes, op = case
    rng = onp.random.default_rng(40)
    arrays = [rng.normal(size=s).astype(onp.float32) for s in shapes]
    before = _fallbacks(op)
    _same_on_both(fn, arrays)
    assert _fallbacks(op) > before  # counted, never silent


def test_empty_convolution_on_the_gpu_matches_the_cpu():
    w = onp.ones((3, 2, 3, 3), onp.float32)
    b = onp.arange(3, dtype=onp.float32)
    kw = dict(kernel=(3, 3), num_filter=3, pad=(1, 1))
    for x in [onp.ones((0, 2, 5, 5), onp.float32)]:
        got = npx.convolution(on_gpu(x), on_gpu(w), on_gpu(b), **kw)
        assert got.device == GPU and got.shape == (0, 3, 5, 5)
    # no input channels: each output is its bias, as NumPy's empty sum gives 0
    x, w0 = onp.ones((2, 0, 4, 4), onp.float32), onp.ones((3, 0, 3, 3), onp.float32)
    got = npx.convolution(on_gpu(x), on_gpu(w0), on_gpu(b), **kw)
    onp.testing.assert_array_equal(got.asnumpy(), onp.broadcast_to(b[:, None, None],
                                                                   (2, 3, 4, 4)))


def test_complex_arrays_on_the_gpu_run_on_host_copies():
    rng = onp.random.default_rng(41)
    h = (rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))).astype(onp.complex64)
    g = np.array(h).to_device(GPU)
    assert g.device == GPU
    onp.testing.assert_allclose((g * g + 1).asnumpy(), h * h + 1, rtol=1e-5)
    onp.testing.assert_allclose(np.abs(g).asnumpy(), onp.abs(h), rtol=1e-5)
    onp.testing.assert_allclose(np.conj(g).asnumpy(), onp.conj(h))
    onp.testing.assert_allclose(g.sum(axis=0).asnumpy(), h.sum(axis=0), rtol=1e-5)
    onp.testing.assert_allclose(g.real.asnumpy(), h.real)
    assert (g * g).device == GPU


def test_astype_in_a_hybridized_block_runs_on_the_gpu():
    from ndx import gluon

    class Net(gluon.HybridBlock):
        def forward(self, x):
            return (x * 2).astype("float16").astype("float32") + 1

    net = Net()
    net.hybridize()
    h = rand((4, 5), seed=42)
    before = _fallbacks("_npi_astype")
    got = net(on_gpu(h))
    assert got.device == GPU
    onp.testing.assert_allclose(got.asnumpy(), (h * 2).astype(onp.float16).astype("f4") + 1)
    assert _fallbacks("_npi_astype") == before  # a GPU kernel, not a host copy


# ---- threads: each has its own stream; arrays handed between them are ordered ----

def _in_thread(fn):
    import threading
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", fn()))
    t.start()
    t.join()
    return out.get("r")


def test_an_array_written_on_another_threads_stream_is_read_after_that_work():
    """Thread A queues ~0.1 s of matmuls and then writes into y without waiting; the main
    thread reads y at once. Its stream must wait for A's (an event), or it reads the zeros
    that were there before."""
    y = np.zeros((1000,), device=GPU)
    npx.synchronize()
    big = np.array(rand((4096, 4096), seed=70, low=-1e-3, high=1e-3), device=GPU)

    def writer():
        t = big
        for _ in range(40):
            t = np.matmul(t, big)
        y[:] = t[0, :1000] * 0 + 7  # written on A's stream, behind the matmuls
        return t

    _in_thread(writer)
    onp.testing.assert_array_equal(y.asnumpy(), onp.full(1000, 7, onp.float32))
    # the other way: main writes after queued work, a thread reads (an op and a copy)
    z = np.zeros((1000,), device=GPU)
    t = big
    for _ in range(40):
        t = np.matmul(t, big)
    z[:] = t[0, :1000] * 0 + 3
    got = _in_thread(lambda: ((z + 1).asnumpy(), z.asnumpy()))
    onp.testing.assert_array_equal(got[0], onp.full(1000, 4, onp.float32))
    onp.testing.assert_array_equal(got[1], onp.full(1000, 3, onp.float32))


def test_threads_share_the_gpu_and_its_memory_pool():
    """Four threads each build and free arrays on their own streams; results match the CPU and
    blocks freed by one thread after another's use are reused safely."""
    import threading
    h = rand((256, 256), seed=71)
    want = onp.tanh(h @ h).sum(axis=0)
    results, errors = [None] * 4, []

    def work(i):
        try:
            for _ in range(20):
                g = on_gpu(h)
                r = np.tanh(np.matmul(g, g)).sum(axis=0)
            results[i] = r  # freed later by the main thread
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for r in results:
        onp.testing.assert_allclose(r.asnumpy(), want, rtol=1e-4, atol=1e-3)
    results.clear()


# ---- page-locked host memory ----

def test_pinned_arrays_copy_to_the_gpu_and_keep_their_memory_until_then():
    h = rand((256, 1024), seed=43)
    x = np.array(h)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.device == ndx.cpu() and p.pin_memory() is p
    onp.testing.assert_array_equal(p.asnumpy(), h)
    big = np.ones((64, 1024, 1024), device=GPU)  # queue work so the copy waits behind it
    ys = []
    for _ in range(3):
        big = big * 1.0
        ys.append(p.to_device(GPU))
    p[:] = 0  # ndx waits for the queued copies out of p before writing it
    for y in ys:
        onp.testing.assert_array_equal(y.asnumpy(), h)
    onp.testing.assert_array_equal(p.asnumpy(), onp.zeros_like(h))
    # a freed block is reused only after its copies: values stay right over many rounds
    for i in range(50):
        q = np.full((1000,), float(i)).pin_memory()
        y = q.to_device(GPU)
        del q
        onp.testing.assert_array_equal(y.asnumpy(), onp.full(1000, float(i), onp.float32))
    with pytest.raises(ValueError, match="only CPU arrays"):
        np.ones(3, device=GPU).pin_memory()


def test_dataloader_pins_batches_when_asked():
    from ndx.gluon.data import ArrayDataset, DataLoader
    data = ArrayDataset(onp.arange(24, dtype=onp.float32).reshape(12, 2),
                        onp.arange(12, dtype=onp.int32))
    batches = list(DataLoader(data, batch_size=5, pin_memory=True))
    assert all(x.is_pinned() and y.is_pinned() for x, y in batches)
    onp.testing.assert_array_equal(batches[1][0].to_device(GPU).asnumpy(),
                                   onp.arange(10, 20, dtype=onp.float32).reshape(5, 2))
    assert not any(x.is_pinned() for x, _ in DataLoader(data, batch_size=5))


def test_optimizer_update_ops_on_the_gpu():
    """adam_update runs on the GPU as on the CPU (weight and both moments); the multi-weight
    ops read their rates on the host and refuse GPU arrays with a clear error."""
    vals = [rand((3, 4), seed=i) for i in range(4)]
    vals[3] = onp.abs(vals[3])
    cpu, gpu = [np.array(v) for v in vals], [on_gpu(v) for v in vals]
    for arrays in (cpu, gpu):
        ndx.nd.adam_update(*arrays, out=arrays[0], lr=0.01, wd=0.1, rescale_grad=0.5,
                           clip_gradient=1.0)
    for a, b in zip(cpu, gpu):
        onp.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="CPU only"):
        ndx.nd.preloaded_multi_sgd_update(gpu[0], gpu[1], np.array([0.1], device=GPU),
                                          np.array([0.0], device=GPU), num_weights=1)

@pytest.mark.parametrize("shape,dtype", [((5, 8192), "float32"), ((3, 16384), "float32"),
                                         ((3, 16388), "float32"), ((4, 4096), "float64"),
                                         ((4, 4098), "float64"),
                                         ((3, 8194), "float64"), ((6, 10), "float32"),
                                         ((4, 7), "float64")])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_in_registers_and_past_them(shape, dtype, log):
    """Rows that fit the one-read kernel (n a multiple of 16 bytes, up to 16384 float32 /
    4096 float64) and rows that take the two-read one, with rows of +inf, -inf and NaN: each
    against NumPy's formula and the CPU's NaN pattern."""
    h = rand(shape, dtype, seed=19, low=-30, high=30)
    h[1, 3] = onp.inf
    h[2, :] = -onp.inf
    h[0, 5] = -onp.inf
    if shape[0] > 3:
        h[3, 0] = onp.nan
    f = npx.log_softmax if log else npx.softmax
    got = f(on_gpu(h), axis=-1).asnumpy()
    cpu = f(np.array(h), axis=-1).asnumpy()
    assert onp.array_equal(onp.isnan(got), onp.isnan(cpu))
    with onp.errstate(invalid="ignore", divide="ignore"):
        m = h.max(axis=-1, keepdims=True)
        e = onp.exp(h.astype(onp.float64) - m)
        s = e.sum(axis=-1, keepdims=True)
        want = (h - m - onp.log(s)) if log else e / s
    assert onp.array_equal(onp.isnan(got), onp.isnan(want))
    onp.testing.assert_allclose(got, want, rtol=2e-5 if dtype == "float32" else 1e-12,
                                atol=1e-7)


# ---- ops with GPU kernels of their own: no host copies (npx.gpu_host_fallbacks unchanged) ----

def _no_fallbacks(fn):
    before = npx.gpu_host_fallbacks()
    out = fn()
    npx.synchronize()
    assert npx.gpu_host_fallbacks() == before
    return out


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("shape, axis", [((7,), None), ((4, 300), 1), ((4, 300), 0),
                                          ((300, 300), None), ((2, 5000), 1), ((3, 5, 70), 1),
                                          ((3, 5, 70), -1), ((6, 40, 2), 1)])
def test_argmax_and_argmin_on_the_gpu(dtype, shape, axis):
    h = rand(shape, dtype, seed=50, low=-2, high=2)  # few distinct values: ties everywhere
    if onp.dtype(dtype).kind == "f":
        flat = h.reshape(-1)
        flat[[3, 5, flat.size - 1]] = onp.nan  # the first NaN wins
    g = on_gpu(h)
    for ours, ref in [(np.argmax, onp.argmax), (np.argmin, onp.argmin)]:
        got = _no_fallbacks(lambda: ours(g, axis=axis))
        assert got.device == GPU
        onp.testing.assert_array_equal(got.asnumpy(), ref(h, axis=axis))
    got = np.argmax(g, axis=axis, keepdims=True)
    onp.testing.assert_array_equal(got.asnumpy(), onp.argmax(h, axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int64", "bool"])
@pytest.mark.parametrize("offset", [0, 1, 3])
def test_argmax_of_long_rows_at_every_alignment(dtype, offset):
    """Rows read with 16-byte loads: heads and tails of every length, ties, NaN and -inf, a
    whole-array reduction split into segments."""
    rng = onp.random.default_rng(53)
    h = rand((5, 3000 + offset), dtype, seed=53, low=-3, high=3)
    if onp.dtype(dtype).kind == "f":
        h[1, rng.integers(0, h.shape[1], 5)] = onp.nan
        h[2, :] = -onp.inf
        h[3, 2999] = onp.inf
    view = on_gpu(h)[:, offset:]  # rows starting off 16-byte alignment
    ref = h[:, offset:]
    for ours, theirs in [(np.argmax, onp.argmax), (np.argmin, onp.argmin)]:
        for axis in (1, None):
            got = _no_fallbacks(lambda: ours(view, axis=axis))
            onp.testing.assert_array_equal(got.asnumpy(), theirs(ref, axis=axis))
    big = rand((1 << 21) + offset, dtype, seed=54, low=-100, high=100)
    if onp.dtype(dtype).kind == "f":
        big[1234567] = 1000
    g = on_gpu(big)
    for ours, theirs in [(np.argmax, onp.argmax), (np.argmin, onp.argmin)]:
        assert ours(g).item() == theirs(big)


def test_argmax_of_a_transposed_gpu_array():
    h = rand((30, 20), seed=51)
    got = _no_fallbacks(lambda: np.argmax(on_gpu(h).T, axis=1))
    onp.testing.assert_array_equal(got.asnumpy(), onp.argmax(h.T, axis=1))


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_one_hot_on_the_gpu(dtype):
    idx = onp.array([[0, 3, -1], [4, 2, 7], [1, 1, 0]], dtype=onp.float32)  # out of range: off
    if dtype == "float32":
        idx = idx + 0.7  # floats truncate toward zero (-0.3 reads as 0)
    got = _no_fallbacks(lambda: npx.one_hot(np.array(idx, device=GPU), 5, on_value=2.5,
                                            off_value=-1, dtype=dtype))
    assert got.device == GPU and got.dtype == onp.dtype(dtype)
    k = onp.trunc(idx).astype(onp.int64)
    want = onp.where(k[..., None] == onp.arange(5), 2.5, -1.0).astype(dtype)
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_dropout_on_the_gpu_draws_the_cpu_mask():
    h = rand((33, 70), seed=52)
    outs = []
    for device in (ndx.cpu(), GPU):
        np.random.seed(123)
        x = np.array(h, device=device)
        x.attach_grad()
        with autograd.record():
            y = npx.dropout(x, p=0.3)
        y.backward()
        outs.append((y.asnumpy(), x.grad.asnumpy()))
    onp.testing.assert_array_equal(outs[1][0], outs[0][0])
    onp.testing.assert_array_equal(outs[1][1], outs[0][1])
    kept = outs[1][1] != 0
    assert abs(kept.mean() - 0.7) < 0.05
    onp.testing.assert_allclose(outs[1][0][kept], h[kept] / 0.7, rtol=1e-6)
    # predict mode: the identity; 'always': drops in predict mode too, on the GPU
    g = on_gpu(h)
    onp.testing.assert_array_equal(_no_fallbacks(lambda: npx.dropout(g, p=0.3)).asnumpy(), h)
    y = _no_fallbacks(lambda: npx.dropout(g, p=0.3, mode="always"))
    assert 0 < (y.asnumpy() == 0).mean() < 0.5
    for dtype in ("float64", "float16"):  # fused (float64) and two-pass (float16) kernels
        got = []
        for device in (ndx.cpu(), GPU):
            np.random.seed(5)
            got.append(npx.dropout(np.array(h.astype(dtype), device=device), p=0.6,
                                   mode="always").asnumpy())
        onp.testing.assert_array_equal(got[1], got[0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("dist", ["normal", "uniform"])
def test_random_draws_on_the_gpu_match_the_cpu_stream(dist, dtype):
    outs = []
    for device in (ndx.cpu(), GPU):
        np.random.seed(7)
        draw = getattr(np.random, dist)
        outs.append(_no_fallbacks(lambda: draw(-1.0, 3.0, size=(3, 700), dtype=dtype,
                                               device=device)).asnumpy())
    assert outs[1].dtype == onp.dtype(dtype)
    # the same Philox draws: uniforms to the last bit of float32 arithmetic, normals to the
    # rounding of the log / sin / cos libraries (CUDA's against Highway's)
    rtol = {"float16": 1e-3, "float32": 2e-6, "float64": 1e-12}[dtype]
    onp.testing.assert_allclose(outs[1], outs[0], rtol=rtol, atol=rtol)
    if dist == "normal":
        assert abs(outs[1].astype(onp.float64).mean() + 1) < 0.3  # 4.6 standard errors
        assert abs(outs[1].astype(onp.float64).std() - 3) < 0.25


def test_random_with_array_parameters_on_the_gpu_runs_on_the_host_alike():
    loc = onp.linspace(-5, 5, 12).astype(onp.float32).reshape(3, 4)
    outs = []
    for device in (ndx.cpu(), GPU):
        np.random.seed(8)
        outs.append(np.random.normal(np.array(loc, device=device), 0.5).asnumpy())
    onp.testing.assert_array_equal(outs[1], outs[0])


@pytest.mark.parametrize("act", ["leaky", "elu", "selu", "gelu", "gelu_tanh", "prelu"])
def test_leaky_relu_family_on_the_gpu(act):
    h = rand((4, 3, 5), seed=53)
    if act == "prelu":
        gamma = onp.array([0.1, 0.2, 0.3], onp.float32)
        fn = lambda x, g: npx.leaky_relu(x, g, act_type="prelu")  # noqa: E731
        arrays = [h, gamma]
    else:
        fn = lambda x: npx.leaky_relu(x, act_type=act, slope=0.3)  # noqa: E731
        arrays = [h]
    before = npx.gpu_host_fallbacks()
    _same_on_both(fn, arrays)
    after = npx.gpu_host_fallbacks()
    assert after.get("_npx_leaky_relu", 0) == before.get("_npx_leaky_relu", 0)
    assert after.get("_backward_leaky_relu", 0) == before.get("_backward_leaky_relu", 0)


def test_slicing_under_autograd_on_the_gpu():
    h = rand((5, 6, 4), seed=54)
    before = npx.gpu_host_fallbacks()
    _same_on_both(lambda x: x[1:4, ::-2] * 3 + x[-1, 3:], [h])
    after = npx.gpu_host_fallbacks()
    assert after.get("_npx_slice", 0) == before.get("_npx_slice", 0)
    assert after.get("_backward_npx_slice", 0) == before.get("_backward_npx_slice", 0)


def test_advanced_indexing_gradients_on_the_gpu():
    h = rand((5, 4), seed=55)
    _same_on_both(lambda x: x[np.array([0, 3, 3, 1], device=x.device)] * 2, [h])
    _same_on_both(lambda x: x[x > 0], [h])


_GETITEM_KEYS = [
    lambda n: (onp.array([0, 2, 2, -1]),),
    lambda n: (slice(None), onp.array([1, 0])),
    lambda n: (onp.array([[0, 1], [3, 2]]),),
    lambda n: (onp.array([0, 3]), onp.array([2, 0])),
    lambda n: (onp.array([0, 1])[:, None], slice(1, 3), onp.array([0, 3])),
    lambda n: (Ellipsis, onp.array([1])),
    lambda n: (slice(1, None), onp.array([0, 2])),
    lambda n: (onp.array([True, False, True, True]),),
    lambda n: (n > 0,),
    lambda n: (n[:, 0, 0] > 0, 1),
    lambda n: (onp.array([], dtype=onp.int64),),
]


@pytest.mark.parametrize("key", range(len(_GETITEM_KEYS)))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16", "uint8"])
def test_advanced_getitem_on_the_gpu(key, dtype):
    h = rand((4, 3, 5), dtype, seed=56)
    k = _GETITEM_KEYS[key](rand((4, 3, 5), seed=57))
    g = on_gpu(h)
    for where in (GPU, ndx.cpu()):  # index arrays on either device
        dk = tuple(np.array(i, device=where) if isinstance(i, onp.ndarray) else i for i in k)
        got = g[dk]
        assert got.device == GPU
        onp.testing.assert_array_equal(got.asnumpy(), h[k])
    if isinstance(k[0], onp.ndarray) and k[0].dtype != bool:  # a transposed GPU array
        onp.testing.assert_array_equal(on_gpu(h).transpose(2, 1, 0)[k[:1]].asnumpy(),
                                       h.transpose(2, 1, 0)[k[:1]])


def test_gather_by_a_gpu_index_array_checks_it_on_the_device():
    h = rand((6, 4), seed=63)
    g = on_gpu(h)
    for dt in ("int32", "uint8", "int64", "int8", "uint64"):
        idx = onp.array([5, 0, 3, 3], dtype=dt)
        got = _no_fallbacks(lambda: g[np.array(idx, device=GPU)])
        onp.testing.assert_array_equal(got.asnumpy(), h[idx])
    idx = onp.array([[-1, -6], [2, 0]])
    onp.testing.assert_array_equal(g[np.array(idx, device=GPU)].asnumpy(), h[idx])
    onp.testing.assert_array_equal(g.T[np.array([1, 3], device=GPU)].asnumpy(), h.T[[1, 3]])
    onp.testing.assert_array_equal(g[2:][np.array([3, 0], device=GPU)].asnumpy(), h[2:][[3, 0]])
    assert g[np.array(onp.zeros(0, onp.int64), device=GPU)].shape == (0, 4)
    for bad, first in (([0, 6, 7], 6), ([-7], -7), ([1, -9, 8], -9)):
        with pytest.raises(IndexError, match=f"index {first} is out of bounds for axis 0 "
                                             "with size 6"):
            g[np.array(bad, device=GPU)]


def test_advanced_getitem_of_complex_gpu_arrays():
    h = (rand((4, 3)) + 1j * rand((4, 3), seed=1)).astype(onp.complex128)
    g = np.array(h).to_device(GPU)
    onp.testing.assert_array_equal(g[np.array([2, 0, 2], device=GPU)].asnumpy(), h[[2, 0, 2]])


@pytest.mark.parametrize("case", [
    (lambda n: (onp.array([0, 2]),), lambda s: rand(s, seed=60)),
    (lambda n: (onp.array([1, 1, 1]),), lambda s: onp.array([1.0, 2.0, 3.0])[:, None, None]),
    (lambda n: (slice(None), onp.array([0, 2])), lambda s: onp.float32(7)),
    (lambda n: (n > 0,), lambda s: onp.float32(0)),
    (lambda n: (onp.array([0, 3]), slice(None), onp.array([4, 4])), lambda s: rand(s, seed=61)),
    (lambda n: (onp.array([3, 0, 3]), 1), lambda s: onp.arange(15.0).reshape(3, 5)),
])
def test_advanced_setitem_on_the_gpu(case):
    keyf, valuef = case
    h = rand((4, 3, 5), seed=62)
    k = keyf(h)
    want = h.copy()
    shape = want[k].shape
    v = valuef(shape)
    want[k] = v  # NumPy: a repeated index keeps the last value written
    for where in (GPU, ndx.cpu()):
        g = on_gpu(h)
        dk = tuple(np.array(i, device=where) if isinstance(i, onp.ndarray) else i for i in k)
        g[dk] = np.array(v, device=where) if isinstance(v, onp.ndarray) else v
        assert g.device == GPU
        onp.testing.assert_array_equal(g.asnumpy(), want)


@pytest.mark.parametrize("dtype", ["float32", "int8", "float64", "int64", "float16"])
def test_scatter_with_a_gpu_index_keeps_the_last_writer(dtype):
    """x[idx] = v with idx on x's GPU: checked and deduplicated on the device (the last of
    repeated rows wins, as in NumPy), negative indices, broadcast and aliased values, strided
    views of x, and an out-of-range index raising with x unchanged."""
    rng = onp.random.default_rng(63)
    h = rand((300, 7), dtype, seed=63)
    for idx_dtype in ("int64", "int32", "uint8"):
        idx = rng.integers(-300 if idx_dtype != "uint8" else 0, 256, size=2000).astype(idx_dtype)
        v = rand((2000, 7), dtype, seed=64)
        g, want = on_gpu(h), h.copy()
        g[np.array(idx, device=GPU)] = on_gpu(v)
        want[idx] = v
        onp.testing.assert_array_equal(g.asnumpy(), want)
    idx = onp.array([4, -1, 4, 0])
    for value in (rand((7,), dtype, seed=65), rand((4, 1), dtype, seed=66)):
        g, want = on_gpu(h), h.copy()
        g[np.array(idx, device=GPU)] = on_gpu(value)
        want[idx] = value
        onp.testing.assert_array_equal(g.asnumpy(), want)
    g, want = on_gpu(h), h.copy()  # the value reads x itself
    g[np.array(idx, device=GPU)] = g[np.array([1, 2, 3, 4], device=GPU)]
    want[idx] = want[[1, 2, 3, 4]]
    onp.testing.assert_array_equal(g.asnumpy(), want)
    g, want = on_gpu(h), h.copy()  # a strided view: every other row, columns reversed
    view = g[::2, ::-1]
    view[np.array([0, 149, 0], device=GPU)] = on_gpu(rand((3, 7), dtype, seed=67))
    want[::2, ::-1][[0, 149, 0]] = rand((3, 7), dtype, seed=67)
    onp.testing.assert_array_equal(g.asnumpy(), want)
    g = on_gpu(h)
    for bad, first in (([0, 300, 301], 300), ([5, -301], -301)):
        with pytest.raises(IndexError, match=f"index {first} is out of bounds for axis 0 "
                                             "with size 300"):
            g[np.array(bad, device=GPU)] = on_gpu(h[:len(bad)])
    onp.testing.assert_array_equal(g.asnumpy(), h)
    g[np.array(onp.zeros(0, onp.int64), device=GPU)] = 5  # nothing to write
    onp.testing.assert_array_equal(g.asnumpy(), h)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int64"])
def test_arange_linspace_eye_on_the_gpu(dtype):
    cases = [
        (lambda d: np.arange(3, 50, 4, dtype=dtype, device=d), onp.arange(3, 50, 4, dtype=dtype)),
        (lambda d: np.arange(-2.5, 7.0, 0.75, dtype="float32", device=d),
         onp.arange(-2.5, 7.0, 0.75, dtype="float32")),
        (lambda d: np.linspace(-1, 9, 13, dtype=dtype, device=d),
         onp.linspace(-1, 9, 13, dtype=dtype)),
        (lambda d: np.linspace(0, 1, 7, endpoint=False, dtype=dtype, device=d),
         onp.linspace(0, 1, 7, endpoint=False, dtype=dtype)),
        (lambda d: np.eye(4, 6, k=1, dtype=dtype, device=d), onp.eye(4, 6, k=1, dtype=dtype)),
        (lambda d: np.eye(3, k=-2, dtype=dtype, device=d), onp.eye(3, k=-2, dtype=dtype)),
    ]
    for make, want in cases:
        got = _no_fallbacks(lambda: make(GPU))
        assert got.device == GPU
        onp.testing.assert_array_equal(got.asnumpy(), make(ndx.cpu()).asnumpy())
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "uint8", "bool",
                                   "int64"])
@pytest.mark.parametrize("shape, axis", [((1000,), -1), ((7, 300), -1), ((7, 300), 0),
                                          ((3, 5, 4), 1), ((3, 5, 4), None), ((4, 0), 0),
                                          ((300, 1000), -1), ((1000, 300), 0),
                                          ((200, 3001), -1), ((150, 4096), -1)])
def test_sort_and_argsort_on_the_gpu(dtype, shape, axis):
    # many lanes of up to 4096 are sorted a lane per block in shared memory; the others, and
    # a few long lanes, by CUB's device-wide sorts
    h = rand(shape, dtype, seed=64, low=-4, high=4)  # few distinct values: stability matters
    if onp.dtype(dtype).kind == "f" and h.size:
        flat = h.reshape(-1)
        flat[::7] = onp.nan
        flat[1::11] = 0.0
        flat[2::13] = -0.0
    g = on_gpu(h)
    got = _no_fallbacks(lambda: np.sort(g, axis=axis))
    assert got.device == GPU
    onp.testing.assert_array_equal(got.asnumpy(), onp.sort(h, axis=axis))
    got = _no_fallbacks(lambda: np.argsort(g, axis=axis))
    onp.testing.assert_array_equal(got.asnumpy(), onp.argsort(h, axis=axis, kind="stable"))
