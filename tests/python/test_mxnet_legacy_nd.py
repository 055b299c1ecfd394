"""MXNet's legacy ``mx.nd`` API (creation with ctx= / dtype=, float32 defaults, MXNet's
reshape codes, reductions with exclude=, the NN operators under their MXNet names,
``mx.nd.random``) and devices as context managers, checked against MXNet's documented
results or NumPy / hand computations."""
import threading

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd

nd = mx.nd


def _np(x):
    return x.asnumpy()


# ---- creation ----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [nd.zeros, nd.ones, nd.empty])
def test_creation_defaults_float32_and_shape_as_int(fn):
    a = fn(3)
    assert a.shape == (3,) and a.dtype == onp.float32
    assert isinstance(a, nd.NDArray) and type(a) is nd.NDArray
    b = fn((2, 3), ctx=mx.cpu(), dtype="int32")
    assert b.shape == (2, 3) and b.dtype == onp.int32 and b.context == mx.cpu(0)


def test_zeros_ones_full_values():
    assert _np(nd.zeros((2, 2))).tolist() == [[0, 0], [0, 0]]
    assert _np(nd.ones((2,))).tolist() == [1, 1]
    f = nd.full((2, 3), 7)
    assert f.dtype == onp.float32 and (_np(f) == 7).all()
    out = nd.zeros((2,))
    assert nd.full((2,), 5, out=out) is out and _np(out).tolist() == [5, 5]


def test_array_dtypes():
    assert nd.array([1, 2]).dtype == onp.float32
    assert nd.array([[1.5, 2]], ctx=mx.cpu()).dtype == onp.float32
    assert nd.array([1, 2], dtype="int64").dtype == onp.int64
    src = nd.array([1, 2], dtype="int32")
    assert nd.array(src).dtype == onp.int32  # an NDArray keeps its dtype
    assert _np(nd.array(onp.arange(3))).tolist() == [0, 1, 2]


def test_arange_float32_and_repeat():
    a = nd.arange(3)
    assert a.dtype == onp.float32 and _np(a).tolist() == [0, 1, 2]
    assert _np(nd.arange(2, 8, 2)).tolist() == [2, 4, 6]
    assert _np(nd.arange(0, 3, repeat=2)).tolist() == [0, 0, 1, 1, 2, 2]


def test_asscalar_asnumpy_copyto_as_in_context():
    a = nd.array([3.5])
    assert a.asscalar() == 3.5
    with pytest.raises(ValueError):
        nd.ones((2,)).asscalar()
    dst = nd.zeros((1,))
    assert a.copyto(dst) is dst and dst.asscalar() == 3.5
    b = a.copyto(mx.cpu())
    assert type(b) is nd.NDArray and b.asscalar() == 3.5
    c = a.as_in_context(mx.cpu(0))
    assert type(c) is nd.NDArray and c.context == mx.cpu()


def test_isinstance_and_results_are_ndarrays():
    a = nd.ones((2, 2))
    assert isinstance(mx.np.ones(2), nd.NDArray)
    for r in (a + 1, 2 * a, a - a, a / 2, -a, a[0], a.T, a.sum(), nd.dot(a, a)):
        assert type(r) is nd.NDArray, r


def test_comparisons_return_zero_one_in_dtype():
    a = nd.array([1, 2, 3])
    r = a > 1.5
    assert r.dtype == onp.float32 and _np(r).tolist() == [0, 1, 1]
    assert _np(nd.equal(a, nd.array([1, 0, 3]))).tolist() == [1, 0, 1]
    assert _np(nd.broadcast_greater(nd.array([[1], [3]]), nd.array([2, 0]))).tolist() == \
        [[0, 1], [1, 1]]


# ---- reshape -----------------------------------------------------------------------------

@pytest.mark.parametrize("src, spec, expected", [
    # the examples of MXNet's reshape documentation
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), (3, 1, 8)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)),
    ((2, 3, 4, 5), (-3, -3), (6, 20)),
    ((2, 3, 4), (0, -3), (2, 12)),
    ((2, 3, 4), (-3, -2), (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
])
def test_reshape_special_values(src, spec, expected):
    x = nd.arange(int(onp.prod(src))).reshape(src)
    y = nd.reshape(x, shape=spec)
    assert y.shape == expected
    assert (_np(y).ravel() == onp.arange(y.size)).all()
    assert x.reshape(spec).shape == expected
    assert x.reshape(*spec).shape == expected


def test_reshape_reverse():
    x = nd.zeros((10, 5, 4))
    assert x.reshape((-1, 0)).shape == (40, 5)
    assert x.reshape((-1, 0), reverse=True).shape == (50, 4)


def test_reshape_records_gradient():
    x = nd.array([[1, 2], [3, 4]])
    x.attach_grad()
    with autograd.record():
        y = (x.reshape((-1,)) * nd.array([1, 2, 3, 4])).sum()
    y.backward()
    assert _np(x.grad).tolist() == [[1, 2], [3, 4]]


# ---- shapes and indexing -----------------------------------------------------------------

def test_shape_functions():
    x = nd.arange(6).reshape((2, 3))
    assert nd.expand_dims(x, axis=1).shape == (2, 1, 3)
    assert nd.broadcast_to(nd.ones((1, 3)), shape=(4, 0)).shape == (4, 3)
    assert nd.transpose(x).shape == (3, 2)
    assert nd.transpose(nd.zeros((2, 3, 4)), axes=(1, 0, 2)).shape == (3, 2, 4)
    assert nd.flatten(nd.zeros((2, 3, 4))).shape == (2, 12)
    assert nd.zeros((2, 3, 4)).flatten().shape == (2, 12)
    assert _np(nd.slice_axis(x, axis=1, begin=1, end=None)).tolist() == [[1, 2], [4, 5]]
    assert _np(nd.slice(x, begin=(0, 1), end=(2, 3))).tolist() == [[1, 2], [4, 5]]
    assert _np(nd.tile(nd.array([1, 2]), reps=(2,))).tolist() == [1, 2, 1, 2]
    assert _np(nd.repeat(nd.array([1, 2]), repeats=2)).tolist() == [1, 1, 2, 2]
    assert _np(nd.flip(x, axis=1)).tolist() == [[2, 1, 0], [5, 4, 3]]
    assert _np(nd.broadcast_axis(nd.ones((1, 2)), axis=0, size=3)).shape == (3, 2)


def test_concat_stack_split_defaults():
    a, b = nd.ones((2, 2)), nd.zeros((2, 3))
    c = nd.concat(a, b)  # dim=1 by default
    assert c.shape == (2, 5)
    assert nd.concat(a, a, dim=0).shape == (4, 2)
    assert nd.stack(a, a).shape == (2, 2, 2)
    assert nd.stack(a, a, axis=1).shape == (2, 2, 2)
    parts = nd.split(nd.arange(12).reshape((2, 6)), num_outputs=3)  # axis=1 by default
    assert len(parts) == 3 and parts[1].shape == (2, 2)
    assert _np(parts[1]).tolist() == [[2, 3], [8, 9]]
    sq = nd.split(nd.zeros((2, 3)), num_outputs=3, axis=1, squeeze_axis=True)
    assert sq[0].shape == (2,)
    one = nd.split(nd.zeros((2, 3)), num_outputs=1)
    assert isinstance(one, nd.NDArray) and one.shape == (2, 3)


def test_take_pick_one_hot_where_clip():
    a = nd.array([[1, 2], [3, 4], [5, 6]])
    assert _np(nd.take(a, nd.array([0, 2]))).tolist() == [[1, 2], [5, 6]]
    assert _np(nd.take(a, nd.array([5]))).tolist() == [[5, 6]]  # mode 'clip'
    assert _np(nd.pick(a, nd.array([0, 1, 0]), axis=1)).tolist() == [1, 4, 5]
    oh = nd.one_hot(nd.array([1, 0]), 3)
    assert oh.dtype == onp.float32 and _np(oh).tolist() == [[0, 1, 0], [1, 0, 0]]
    w = nd.where(nd.array([1, 0, 2]), nd.array([1, 2, 3]), nd.array([7, 8, 9]))
    assert _np(w).tolist() == [1, 8, 3]
    assert _np(nd.clip(nd.array([-2, 0.5, 3]), 0, 1)).tolist() == [0, 0.5, 1]


# ---- reductions and sorting --------------------------------------------------------------

def test_reductions_axis_keepdims_exclude():
    x = onp.arange(24, dtype="float32").reshape(2, 3, 4)
    a = nd.array(x)
    assert _np(nd.sum(a)).item() == x.sum()
    assert onp.allclose(_np(nd.sum(a, axis=1)), x.sum(axis=1))
    assert nd.sum(a, axis=1, keepdims=True).shape == (2, 1, 4)
    assert onp.allclose(_np(nd.sum(a, axis=1, exclude=True)), x.sum(axis=(0, 2)))
    assert onp.allclose(_np(a.mean(axis=(0, 2))), x.mean(axis=(0, 2)))
    assert onp.allclose(_np(nd.max(a, axis=2, exclude=True)), x.max(axis=(0, 1)))
    assert onp.allclose(_np(a.min(axis=0)), x.min(axis=0))
    assert onp.allclose(_np(nd.norm(a)), onp.sqrt((x * x).sum()))


def test_argmax_float32_topk_sort():
    a = nd.array([[1, 5, 3], [9, 2, 4]])
    am = nd.argmax(a, axis=1)
    assert am.dtype == onp.float32 and _np(am).tolist() == [1, 0]
    assert _np(a.argmin(axis=0)).tolist() == [0, 1, 0]
    tk = nd.topk(a, k=2)
    assert tk.dtype == onp.float32 and _np(tk).tolist() == [[1, 2], [0, 2]]
    assert _np(nd.topk(a, k=1, ret_typ="value")).tolist() == [[5], [9]]
    assert _np(nd.sort(a, is_ascend=False)).tolist() == [[5, 3, 1], [9, 4, 2]]
    assert _np(nd.argsort(a)).tolist() == [[0, 2, 1], [1, 2, 0]]


# ---- math --------------------------------------------------------------------------------

def test_elementwise_math():
    x = onp.array([0.25, 1.0, 4.0], dtype="float32")
    a = nd.array(x)
    for name, ref in [("sqrt", onp.sqrt), ("exp", onp.exp), ("log", onp.log),
                      ("tanh", onp.tanh), ("square", onp.square)]:
        assert onp.allclose(_np(getattr(nd, name)(a)), ref(x)), name
    assert onp.allclose(_np(nd.sigmoid(a)), 1 / (1 + onp.exp(-x)))
    assert onp.allclose(_np(nd.relu(nd.array([-1, 2]))), [0, 2])
    assert onp.allclose(_np(nd.rsqrt(a)), 1 / onp.sqrt(x))
    assert _np(nd.round(nd.array([0.5, -0.5, 1.4]))).tolist() == [1, -1, 1]
    assert _np(nd.maximum(nd.array([1, 5]), nd.array([3, 2]))).tolist() == [3, 5]
    assert _np(nd.broadcast_add(nd.ones((2, 1)), nd.ones((3,)))).shape == (2, 3)


def test_dot_and_batch_dot():
    x = onp.arange(6, dtype="float32").reshape(2, 3)
    y = onp.arange(12, dtype="float32").reshape(3, 4)
    assert onp.allclose(_np(nd.dot(nd.array(x), nd.array(y))), x @ y)
    assert onp.allclose(_np(nd.dot(nd.array(x), nd.array(x), transpose_b=True)), x @ x.T)
    assert onp.allclose(_np(nd.dot(nd.array(x), nd.array(x), transpose_a=True)), x.T @ x)
    t = onp.arange(24, dtype="float32").reshape(2, 3, 4)
    assert onp.allclose(_np(nd.dot(nd.array(t), nd.array(y.T))),
                        onp.tensordot(t, y.T, axes=1))
    b1 = onp.arange(12, dtype="float32").reshape(2, 2, 3)
    b2 = onp.arange(12, dtype="float32").reshape(2, 3, 2)
    assert onp.allclose(_np(nd.batch_dot(nd.array(b1), nd.array(b2))), b1 @ b2)


def test_softmax_log_softmax():
    x = onp.array([[1, 2, 3], [1, 1, 1]], dtype="float32")
    e = onp.exp(x - x.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    assert onp.allclose(_np(nd.softmax(nd.array(x))), p, atol=1e-6)
    assert onp.allclose(_np(nd.log_softmax(nd.array(x))), onp.log(p), atol=1e-6)
    assert onp.allclose(_np(nd.softmax(nd.array(x), axis=0)).sum(axis=0), 1)


# ---- neural network operators ------------------------------------------------------------

def test_activation_types():
    x = onp.array([-2.0, 0.5], dtype="float32")
    a = nd.array(x)
    assert onp.allclose(_np(nd.Activation(a, act_type="relu")), [0, 0.5])
    assert onp.allclose(_np(nd.Activation(a, act_type="softrelu")), onp.log1p(onp.exp(x)))
    assert onp.allclose(_np(nd.Activation(a, act_type="tanh")), onp.tanh(x))
    assert onp.allclose(_np(nd.LeakyReLU(a, slope=0.1)), [-0.2, 0.5])


def test_fully_connected():
    x = onp.arange(24, dtype="float32").reshape(2, 3, 4) / 10
    w = onp.ones((5, 12), dtype="float32") / 7
    b = onp.arange(5, dtype="float32")
    out = nd.FullyConnected(nd.array(x), nd.array(w), nd.array(b), num_hidden=5)
    assert onp.allclose(_np(out), x.reshape(2, 12) @ w.T + b, atol=1e-5)
    nb = nd.FullyConnected(nd.array(x), nd.array(w), num_hidden=5, no_bias=True)
    assert onp.allclose(_np(nb), x.reshape(2, 12) @ w.T, atol=1e-5)


def test_convolution_and_pooling():
    x = onp.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    w = onp.ones((1, 1, 2, 2), dtype="float32")
    out = nd.Convolution(nd.array(x), nd.array(w), kernel=(2, 2), num_filter=1, no_bias=True)
    ref = onp.array([[x[0, 0, i:i + 2, j:j + 2].sum() for j in range(3)] for i in range(3)])
    assert onp.allclose(_np(out)[0, 0], ref)
    mp = nd.Pooling(nd.array(x), kernel=(2, 2), stride=(2, 2), pool_type="max")
    assert _np(mp)[0, 0].tolist() == [[5, 7], [13, 15]]
    ap = nd.Pooling(nd.array(x), kernel=(2, 2), stride=(2, 2), pool_type="avg")
    assert _np(ap)[0, 0].tolist() == [[2.5, 4.5], [10.5, 12.5]]
    gp = nd.Pooling(nd.array(x), global_pool=True, pool_type="avg", kernel=(1, 1))
    assert gp.shape == (1, 1, 1, 1) and gp.asscalar() == 7.5


def test_batchnorm_fix_gamma_default():
    x = onp.array([[1.0, 2.0], [3.0, 6.0]], dtype="float32")
    gamma, beta = nd.array([5, 5]), nd.array([0.5, 0.5])
    mean, var = nd.array([1, 2]), nd.array([4, 16])
    # use_global_stats: (x - mean) / sqrt(var + eps), gamma read as 1 (fix_gamma=True)
    out = nd.BatchNorm(nd.array(x), gamma, beta, mean, var, use_global_stats=True)
    ref = (x - [1, 2]) / onp.sqrt(onp.array([4, 16]) + 1e-3) + 0.5
    assert onp.allclose(_np(out), ref, atol=1e-5)
    out2 = nd.BatchNorm(nd.array(x), gamma, beta, mean, var, use_global_stats=True,
                        fix_gamma=False)
    assert onp.allclose(_np(out2), 5 * (ref - 0.5) + 0.5, atol=1e-4)


def test_dropout_and_embedding():
    x = nd.ones((100,))
    assert (_np(nd.Dropout(x, p=0.5)) == 1).all()  # not training: identity
    with autograd.record():
        y = nd.Dropout(x, p=0.5)
    vals = set(_np(y).tolist())
    assert vals <= {0.0, 2.0} and len(vals) == 2
    w = onp.arange(12, dtype="float32").reshape(4, 3)
    e = nd.Embedding(nd.array([2, 0]), nd.array(w), input_dim=4, output_dim=3)
    assert _np(e).tolist() == [w[2].tolist(), w[0].tolist()]


def test_softmax_output_forward_and_gradient():
    x = onp.array([[1, 2, 3], [0, 0, 1]], dtype="float32")
    label = nd.array([2, 0])
    data = nd.array(x)
    data.attach_grad()
    with autograd.record():
        out = nd.SoftmaxOutput(data, label)
    out.backward()
    e = onp.exp(x - x.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    assert onp.allclose(_np(out), p, atol=1e-6)
    hot = onp.eye(3, dtype="float32")[[2, 0]]
    assert onp.allclose(_np(data.grad), p - hot, atol=1e-6)  # (softmax - one_hot(label))


def test_nd_function_gradient():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = nd.sum(nd.exp(x) * 2)
    y.backward()
    assert onp.allclose(_np(x.grad), 2 * onp.exp([1.0, 2.0, 3.0]), rtol=1e-5)
    assert type(x.grad) is nd.NDArray


# ---- random ------------------------------------------------------------------------------

def test_random_samplers():
    mx.random.seed(7)
    u = nd.random.uniform(-1, 1, shape=(1000,))
    assert u.dtype == onp.float32 and u.shape == (1000,)
    assert -1 <= _np(u).min() and _np(u).max() < 1 and abs(_np(u).mean()) < 0.1
    n = nd.random.normal(3, 2, shape=(2000,))
    assert abs(_np(n).mean() - 3) < 0.2 and abs(_np(n).std() - 2) < 0.2
    r = nd.random.randint(0, 5, shape=(500,))
    assert r.dtype == onp.int32 and set(_np(r).tolist()) == {0, 1, 2, 3, 4}
    assert nd.random.uniform().shape == (1,)  # MXNet's default shape
    assert nd.random.randn(2, 3).shape == (2, 3)
    per_row = nd.random.uniform(nd.array([0, 10]), nd.array([1, 11]), shape=(50,))
    assert per_row.shape == (2, 50)
    assert (_np(per_row)[1] >= 10).all() and (_np(per_row)[0] < 1).all()


def test_random_seed_repeats_and_shuffle():
    mx.random.seed(3)
    a = _np(nd.random.normal(shape=(5,)))
    mx.random.seed(3)
    b = _np(nd.random.normal(shape=(5,)))
    assert (a == b).all()
    x = nd.arange(20).reshape((10, 2))
    s = _np(nd.random.shuffle(x))
    assert sorted(s[:, 0].tolist()) == list(range(0, 20, 2))
    assert (s[:, 1] == s[:, 0] + 1).all()  # rows move whole


def test_random_multinomial():
    mx.random.seed(0)
    probs = nd.array([[0, 1, 0], [0.5, 0, 0.5]])
    draws = nd.random.multinomial(probs, shape=(200,))
    assert draws.shape == (2, 200) and draws.dtype == onp.int32
    assert (_np(draws)[0] == 1).all()
    assert set(_np(draws)[1].tolist()) == {0, 2}


# ---- save / load -------------------------------------------------------------------------

def test_save_load_round_trip(tmp_path):
    f = str(tmp_path / "x.nd")
    nd.save(f, {"w": nd.array([[1, 2]]), "b": nd.array([3], dtype="int32")})
    back = nd.load(f)
    assert type(back["w"]) is nd.NDArray
    assert _np(back["w"]).tolist() == [[1, 2]] and back["b"].dtype == onp.int32
    nd.waitall()


# ---- devices as context managers ---------------------------------------------------------

def test_device_scope_nesting_and_restoring():
    assert mx.context.current_context() == mx.cpu(0)
    with mx.Context("cpu", 1) as c:
        assert c == mx.cpu(1)
        assert mx.context.current_context() == mx.cpu(1)
        assert mx.device.current_device() == mx.cpu(1)
        with mx.cpu(2):
            assert mx.current_device() == mx.cpu(2)
        assert mx.current_device() == mx.cpu(1)
    assert mx.current_device() == mx.cpu(0)


def test_device_scope_restores_after_exception():
    with pytest.raises(RuntimeError):
        with mx.Device("cpu", 3):
            raise RuntimeError("boom")
    assert mx.current_device() == mx.cpu(0)


def test_device_scope_is_per_thread():
    seen = []
    with mx.cpu(1):
        t = threading.Thread(target=lambda: seen.append(mx.current_device()))
        t.start()
        t.join()
    assert seen == [mx.cpu(0)]


@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs a GPU")
def test_device_scope_places_nd_arrays_on_gpu():
    with mx.gpu(0):
        for a in (nd.zeros((2,)), nd.ones(2), nd.array([1, 2]), nd.arange(3),
                  nd.full((2,), 3), nd.random.uniform(shape=(2,))):
            assert a.context == mx.gpu(0)
        assert nd.ones((2,), ctx=mx.cpu()).context == mx.cpu(0)
    assert nd.zeros((2,)).context == mx.cpu(0)


def test_device_scope_ctx_keyword_wins():
    with mx.cpu(0):
        assert nd.zeros((2,), ctx=mx.cpu(0)).context == mx.cpu(0)


def test_device_scope_places_np_creation_and_random_arrays():
    # MXNet's mx.np creation functions default to current_context(): inside `with device:`
    # arrays given no device (host data included) are made there; explicit devices win, and
    # an ndx array passed to asarray stays where it is
    host = onp.arange(3.0, dtype=onp.float32)
    with mx.cpu(1):
        made = [mx.np.zeros(2), mx.np.ones((2,)), mx.np.full(2, 3.0), mx.np.empty(2),
                mx.np.array([1.0, 2.0]), mx.np.array(host), mx.np.asarray(host),
                mx.np.arange(3), mx.np.linspace(0, 1, 3), mx.np.eye(2),
                mx.np.random.uniform(size=2), mx.np.random.normal(0, 1, (2,))]
        assert [a.device for a in made] == [mx.cpu(1)] * len(made)
        onp.testing.assert_array_equal(made[5].asnumpy(), host)
        placed = mx.np.zeros(2, device=mx.cpu(0))
        assert placed.device == mx.cpu(0)
        assert mx.np.asarray(placed) is placed
        with mx.cpu(0):
            assert mx.np.zeros(2).device == mx.cpu(0)
        assert mx.np.ones(2).device == mx.cpu(1)
    assert mx.np.zeros(2).device == mx.cpu(0) and mx.np.array([1]).device == mx.cpu(0)
    seen = []
    with mx.cpu(1):  # the scope is per thread
        t = threading.Thread(target=lambda: seen.append(mx.np.zeros(1).device))
        t.start()
        t.join()
    assert seen == [mx.cpu(0)]


def test_device_scope_arithmetic_with_python_scalars_and_device_ids():
    # scalars beside an array on cpu(1) join its device (they stayed on cpu(0): a device error)
    with mx.cpu(1):
        x = mx.np.arange(3.0)
        for y in (x * 2, 1 - x, mx.np.multiply(x, 0), mx.np.tri(2), mx.np.logspace(0, 1, 3)):
            assert y.device == mx.cpu(1)
        onp.testing.assert_array_equal((x * 2 + 1).asnumpy(), [1.0, 3.0, 5.0])
    with pytest.raises(ValueError, match="out of range"):
        mx.np.zeros(1, device=mx.cpu(2**31))
    with pytest.raises(ValueError, match="out of range"):
        mx.np.zeros(1, device=mx.cpu(2**32 + 1))  # (it wrapped to cpu(1))


def test_device_scope_places_nd_arrays():
    with mx.cpu(1):
        for a in (nd.zeros((2,)), nd.ones(2), nd.empty(2), nd.array([1, 2]), nd.arange(3),
                  nd.full((2,), 3), nd.random.uniform(shape=(2,)),
                  nd.random.randint(0, 3, shape=(2,))):
            assert a.context == mx.cpu(1)
        assert nd.ones((2,), ctx=mx.cpu(0)).context == mx.cpu(0)
    assert nd.zeros((2,)).context == mx.cpu(0)


# ---- contrib.BilinearResize2D --------------------------------------------------------------

def _bilinear_ref(x, out_h, out_w, align_corners):
    """MXNet's kernel written out per output pixel in float64 (source positions in float32,
    as MXNet computes them)."""
    def taps(n_in, n_out):
        f32 = onp.float32
        if align_corners:
            scale = f32((n_in - 1) / (n_out - 1)) if n_out > 1 else f32(0)
        else:
            scale = f32(n_in / n_out)
        rows = []
        for o in range(n_out):
            src = scale * f32(o) if align_corners else max(scale * (f32(o) + f32(0.5)) - f32(0.5),
                                                             f32(0))
            i0 = min(int(src), n_in - 1)
            rows.append((i0, min(i0 + 1, n_in - 1), float(src) - i0))
        return rows

    out = onp.zeros(x.shape[:2] + (out_h, out_w))
    for oh, (h0, h1, lh) in enumerate(taps(x.shape[2], out_h)):
        for ow, (w0, w1, lw) in enumerate(taps(x.shape[3], out_w)):
            out[:, :, oh, ow] = (1 - lh) * ((1 - lw) * x[:, :, h0, w0] + lw * x[:, :, h0, w1]) + \
                lh * ((1 - lw) * x[:, :, h1, w0] + lw * x[:, :, h1, w1])
    return out


def test_bilinear_resize_hand_values():
    x = nd.array([[[[0.0, 1.0], [2.0, 3.0]]]])
    # align_corners (MXNet's default): the corners stay, the middles are the averages.
    y = nd.contrib.BilinearResize2D(x, height=3, width=3)
    assert isinstance(y, nd.NDArray)
    onp.testing.assert_allclose(_np(y)[0, 0], [[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]])
    # Pixel centres (PyTorch's align_corners=False): one row is the rows' mean, [1, 2], and
    # [1, 2] to 4 columns samples at -0.25 (clamped to 0), 0.25, 0.75 and 1.25 (past the end).
    y = nd.contrib.BilinearResize2D(x, height=1, width=4, align_corners=False)
    onp.testing.assert_allclose(_np(y)[0, 0], [[1.0, 1.25, 1.75, 2.0]])


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("shape,out", [((2, 3, 4, 5), (7, 3)), ((1, 2, 5, 3), (2, 9)),
                                       ((1, 1, 1, 4), (3, 1))])
def test_bilinear_resize_matches_mxnet_kernel_and_gradient(shape, out, align):
    rng = onp.random.default_rng(3)
    x = rng.standard_normal(shape)
    a = nd.array(x, dtype="float64")
    a.attach_grad()
    head = rng.standard_normal(shape[:2] + out)
    with autograd.record():
        y = nd.contrib.BilinearResize2D(a, height=out[0], width=out[1], align_corners=align)
    y.backward(nd.array(head, dtype="float64"))
    onp.testing.assert_allclose(_np(y), _bilinear_ref(x, *out, align), rtol=1e-12, atol=1e-12)
    # The map is linear: its gradient is the reference's transpose, by central differences.
    num = onp.zeros_like(x)
    for i in onp.ndindex(*shape):
        d = onp.zeros_like(x)
        d[i] = 0.5
        num[i] = ((_bilinear_ref(x + d, *out, align) - _bilinear_ref(x - d, *out, align))
                  * head).sum()
    onp.testing.assert_allclose(_np(a.grad), num, rtol=1e-9, atol=1e-9)


def test_bilinear_resize_modes_give_mxnets_shapes():
    br = nd.contrib.BilinearResize2D
    x = nd.ones((1, 2, 5, 6))
    assert br(x, scale_height=2.0, scale_width=0.5).shape == (1, 2, 10, 3)
    assert br(x, mode="odd_scale", scale_height=2.0, scale_width=2.0).shape == (1, 2, 9, 12)
    assert br(x, nd.zeros((3, 1, 4, 7)), mode="like").shape == (1, 2, 4, 7)
    assert br(x, mode="to_even_down").shape == (1, 2, 4, 6)
    assert br(x, mode="to_even_up").shape == (1, 2, 6, 6)
    assert br(x, mode="to_odd_down").shape == (1, 2, 5, 5)
    assert br(x, mode="to_odd_up").shape == (1, 2, 5, 7)
    onp.testing.assert_array_equal(_np(br(x * 2, height=5, width=6)), 2 * onp.ones((1, 2, 5, 6)))


def test_bilinear_resize_in_hybridized_blocks_both_styles():
    class New(mx.gluon.HybridBlock):
        def forward(self, x):
            return nd.contrib.BilinearResize2D(x, height=6, width=5)

    class Old(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.contrib.BilinearResize2D(x, scale_height=2.0, scale_width=2.0)

    x = onp.random.default_rng(4).standard_normal((1, 2, 3, 4))
    for block, out in ((New(), (6, 5)), (Old(), (6, 8))):
        block.hybridize()
        a = mx.np.array(x, dtype="float64")
        a.attach_grad()
        with autograd.record():
            y = block(a)
        y.backward()
        onp.testing.assert_allclose(y.asnumpy(), _bilinear_ref(x, *out, True), rtol=1e-12)
        # Every output is a convex combination of inputs: the gradient of the sum totals
        # the number of outputs.
        assert abs(a.grad.asnumpy().sum() - 2 * out[0] * out[1]) < 1e-9


@pytest.mark.parametrize("kwargs,error", [
    (dict(height=0), ValueError), (dict(width=2.5), TypeError), (dict(mode="bicubic"), ValueError),
    (dict(mode="odd_scale"), ValueError), (dict(mode="like"), ValueError),
    (dict(scale_height=-1.0, scale_width=1.0), ValueError)])
def test_bilinear_resize_bad_arguments(kwargs, error):
    with pytest.raises(error, match="BilinearResize2D"):
        nd.contrib.BilinearResize2D(nd.ones((1, 1, 3, 3)), **kwargs)
    with pytest.raises(ValueError, match="4-d"):
        nd.contrib.BilinearResize2D(nd.ones((3, 3)), height=2, width=2)
    with pytest.raises(TypeError, match="float"):
        nd.contrib.BilinearResize2D(nd.ones((1, 1, 3, 3), dtype="int32"), height=2, width=2)


# ---- out= ----------------------------------------------------------------------------------


def test_out_stores_the_result_and_returns_it():
    # MXNet's legacy functions take out=: the result goes into that array, which is returned
    x = nd.array([[-1.0, 2.0], [3.0, -4.0]])
    y = nd.zeros((2, 2))
    assert nd.abs(x, out=y) is y
    onp.testing.assert_array_equal(_np(y), [[1, 2], [3, 4]])
    a = nd.array([1.0, 2.0])
    nd.elemwise_add(a, a, out=a)  # in place
    onp.testing.assert_array_equal(_np(a), [2, 4])
    m = nd.zeros((2, 2))
    nd.dot(x, x, out=m)
    onp.testing.assert_array_equal(_np(m), _np(x) @ _np(x))
    s = nd.zeros((2,))
    nd.sum(x, axis=1, out=s)
    onp.testing.assert_array_equal(_np(s), [1, -1])
    with pytest.raises(ValueError, match=r"\[abs\] out has shape \(3,\)"):
        nd.abs(x, out=nd.zeros((3,)))
    with pytest.raises(TypeError, match="out must be an NDArray"):
        nd.abs(x, out=[0.0, 0.0])
    with pytest.raises(TypeError, match="takes one array"):
        nd.split(x, num_outputs=2, out=y)
    c = nd.sparse.zeros("csr", (2, 2))
    nd.abs(x.tostype("csr"), out=c)  # a sparse out keeps its storage
    assert c.stype == "csr"
    onp.testing.assert_array_equal(c.asnumpy(), [[1, 2], [3, 4]])


def test_contrib_isinf_isnan_isfinite_give_ones_and_zeros_in_the_data_dtype():
    # MXNet's contrib versions: comparisons of legacy arrays, 1.0 / 0.0 of the data's dtype
    x = onp.array([1.0, onp.inf, -onp.inf, onp.nan, 0.0], onp.float32)
    for fn, want in ((nd.contrib.isinf, onp.isinf(x)), (nd.contrib.isnan, onp.isnan(x)),
                     (nd.contrib.isfinite, onp.isfinite(x))):
        got = fn(nd.array(x))
        assert isinstance(got, nd.NDArray) and got.dtype == onp.float32
        onp.testing.assert_array_equal(got.asnumpy(), want.astype(onp.float32))
    assert nd.contrib.isnan(nd.array([1.0], dtype="float64")).dtype == onp.float64


def test_contrib_quadratic_and_its_gradient():
    x = nd.array([[1.0, -2.0], [0.5, 3.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = nd.contrib.quadratic(x, a=2.0, b=-1.0, c=0.5)
    y.backward()
    xv = x.asnumpy()
    onp.testing.assert_allclose(y.asnumpy(), 2 * xv ** 2 - xv + 0.5, rtol=1e-6)
    onp.testing.assert_allclose(x.grad.asnumpy(), 4 * xv - 1, rtol=1e-6)  # 2 a x + b


def test_contrib_multibox_and_sparse_embedding_names():
    feat = nd.zeros((1, 3, 2, 2))
    anchors = nd.contrib.MultiBoxPrior(feat, sizes=(0.5,), ratios=(1.0,))
    assert isinstance(anchors, nd.NDArray) and anchors.shape == (1, 4, 4)
    # the first anchor: centred on pixel (0, 0) of a 2 x 2 map, half the image wide
    onp.testing.assert_allclose(anchors.asnumpy()[0, 0], [0.0, 0.0, 0.5, 0.5], atol=1e-6)
    assert nd.contrib.MultiBoxTarget is not None and nd.contrib.MultiBoxDetection is not None
    weight = nd.array(onp.arange(8, dtype=onp.float32).reshape(4, 2))
    out = nd.contrib.SparseEmbedding(nd.array([3, 1]), weight, input_dim=4, output_dim=2)
    onp.testing.assert_array_equal(out.asnumpy(), [[6, 7], [2, 3]])


def test_gluon_contrib_data_sampler_is_the_interval_sampler():
    from ndx.gluon.contrib.data.sampler import IntervalSampler
    assert list(IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]  # MXNet's documented order
    assert mx.gluon.contrib.data.IntervalSampler is mx.gluon.data.IntervalSampler


def test_print_shows_mxnets_footer(capsys):
    # MXNet's NDArray prints as its repr: the values, then <NDArray shape @device>
    x = nd.array([[1, 2], [3, 4]])
    print(x)
    assert capsys.readouterr().out == "\n[[1. 2.]\n [3. 4.]]\n<NDArray 2x2 @cpu(0)>\n"
    assert str(x) == repr(x) and f"{x}" == repr(x)
