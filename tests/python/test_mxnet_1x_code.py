"""MXNet 1.x-style user code: mx.random with MXNet's signatures, mx.nd.array's float32
default, mx.metric, mx.init.InitDesc, and the legacy mx.nd names 1.x programs use; checked
against MXNet's documented behaviour and NumPy / hand computations."""
import numpy as onp
import pytest

import ndx as mx


def test_random_samplers_take_mxnets_shape_dtype_ctx():
    a = mx.random.uniform(-1, 1, shape=(3, 4), ctx=mx.cpu())
    assert isinstance(a, mx.nd.NDArray) and a.shape == (3, 4) and a.dtype == onp.float32
    assert ((a.asnumpy() >= -1) & (a.asnumpy() < 1)).all()
    assert mx.random.uniform().shape == (1,)  # MXNet's legacy default shape
    assert mx.random.uniform(shape=5).shape == (5,)
    assert mx.random.normal(0, 1, shape=(2,), dtype="float64").dtype == onp.float64
    assert mx.random.randint(0, 10, shape=(5,)).dtype == onp.int32
    assert mx.random.randn(2, 3).shape == (2, 3)
    for draw in (mx.random.poisson(lam=3, shape=(4,)), mx.random.exponential(2, shape=(4,)),
                 mx.random.gamma(2, 1, shape=(4,)),
                 mx.random.negative_binomial(k=3, p=0.4, shape=(4,)),
                 mx.random.generalized_negative_binomial(mu=2, alpha=0.3, shape=(4,))):
        assert draw.shape == (4,) and draw.dtype == onp.float32
    out = mx.nd.zeros((2, 2))
    assert mx.random.normal(5, 0.1, shape=(2, 2), out=out) is out
    assert abs(out.asnumpy().mean() - 5) < 1


def test_random_poisson_mean_and_integer_values():
    mx.random.seed(0)
    s = mx.random.poisson(lam=4, shape=(4000,)).asnumpy()
    assert (s == onp.round(s)).all() and abs(s.mean() - 4) < 0.2


def test_random_array_parameters_give_one_sample_per_element():
    u = mx.random.uniform(mx.nd.array([0, 10]), mx.nd.array([1, 11]), shape=3)
    assert u.shape == (2, 3)
    assert (u.asnumpy()[0] < 1).all() and (u.asnumpy()[1] >= 10).all()


def test_random_seed_repeats_mx_random_and_mx_nd_random():
    mx.random.seed(42)
    a = mx.nd.random.normal(shape=(4,)).asnumpy()
    mx.random.seed(42, ctx=mx.cpu())
    b = mx.random.normal(shape=(4,)).asnumpy()
    assert (a == b).all()


def test_random_multinomial_shuffle_and_numpy_spellings():
    picks = mx.random.multinomial(mx.nd.array([[0, 1.0], [1.0, 0]]))
    assert picks.asnumpy().tolist() == [1, 0]
    src = mx.nd.arange(10)
    s = mx.random.shuffle(src)
    assert sorted(s.asnumpy().tolist()) == list(range(10))
    assert src.asnumpy().tolist() == list(range(10))  # MXNet's shuffle returns a copy
    # what ndx.random took before (NumPy's keywords) still works
    assert mx.random.uniform(0, 1, size=(2, 2)).shape == (2, 2)
    assert (mx.random.randint(5, size=(20,)).asnumpy() < 5).all()
    assert mx.random.gamma(shape=2.0, scale=1.0, size=(3,)).shape == (3,)
    assert int(mx.random.multinomial(10, [0.5, 0.5]).asnumpy().sum()) == 10
    with pytest.raises(TypeError, match="unexpected arguments"):
        mx.random.uniform(0, 1, shap=(2,))
    with pytest.raises(TypeError, match="both shape"):
        mx.random.normal(shape=(2,), size=(3,))


def test_nd_legacy_sampler_names():
    assert mx.nd.random_uniform(low=0, high=1, shape=(2,)).shape == (2,)
    assert mx.nd.random_normal(0, 1, shape=(3,)).shape == (3,)
    e = mx.nd.sample_uniform(mx.nd.array([0, 1]), mx.nd.array([1, 2]), shape=(3,))
    assert e.shape == (2, 3)


def test_nd_array_defaults_to_float32_except_for_ndarrays():
    # MXNet: "The default dtype is source_array.dtype if source_array is an NDArray,
    # float32 otherwise."
    assert mx.nd.array(onp.arange(3)).dtype == onp.float32
    assert mx.nd.array(onp.ones(3, "float64")).dtype == onp.float32
    assert mx.nd.array(onp.ones(3, "uint8")).dtype == onp.float32
    assert mx.nd.array([1, 2]).dtype == onp.float32
    assert mx.nd.array(mx.nd.array([1, 2], dtype="int32")).dtype == onp.int32
    assert mx.nd.array(mx.np.arange(3)).dtype == onp.int64
    assert mx.nd.array(onp.arange(3), dtype="int64").dtype == onp.int64
    assert mx.nd.array(onp.array([1.5, 2.5])).asnumpy().tolist() == [1.5, 2.5]


def test_ndarrayiter_numpy_input_becomes_float32_and_shuffle_keeps_dtype():
    X = onp.arange(20).reshape(10, 2)
    y = onp.arange(10)
    it = mx.io.NDArrayIter(X, y, batch_size=4, last_batch_handle="pad")
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 2]
    assert batches[0].data[0].dtype == onp.float32 and it.provide_data[0].dtype == onp.float32
    assert batches[0].label[0].asnumpy().tolist() == [0, 1, 2, 3]
    ints = mx.nd.array(X, dtype="int32")
    it = mx.io.NDArrayIter(ints, y, batch_size=5, shuffle=True)
    rows = onp.concatenate([b.data[0].asnumpy() for b in it])
    assert rows.dtype == onp.int32
    assert sorted(rows[:, 0].tolist()) == list(range(0, 20, 2))


def test_mx_metric_is_gluon_metric_with_1x_names():
    assert mx.metric.Accuracy is mx.gluon.metric.Accuracy
    m = mx.metric.create("acc")
    m.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]])])
    assert m.get() == ("accuracy", pytest.approx(2 / 3))
    c = mx.metric.create(["acc", "ce"])
    assert isinstance(c, mx.metric.CompositeEvalMetric)
    c.update([mx.nd.array([0, 1])], [mx.nd.array([[0.5, 0.5], [0.25, 0.75]])])
    names, values = c.get()
    assert names == ["accuracy", "cross-entropy"]
    assert values[1] == pytest.approx(-(onp.log(0.5) + onp.log(0.75)) / 2, rel=1e-5)
    caffe = mx.metric.create("caffe")
    caffe.update(None, [mx.nd.array([1.0, 3.0])])
    assert caffe.get() == ("caffe", 2.0)


def test_mx_metric_custom_metric_gets_numpy_arrays():
    seen = []

    def my_acc(label, pred):
        seen.append((type(label), type(pred)))
        return (onp.argmax(pred, axis=1) == label).sum(), label.size

    m = mx.metric.CustomMetric(my_acc)
    m.update([mx.nd.array([1, 0])], [mx.nd.array([[0.1, 0.9], [0.3, 0.7]])])
    assert m.get() == ("my_acc", 0.5)
    assert seen == [(onp.ndarray, onp.ndarray)]
    m2 = mx.metric.np(lambda lab, pred: float(onp.abs(lab - pred).mean()))
    m2.update([mx.nd.array([1.0, 2.0])], [mx.nd.array([1.5, 2.5])])
    assert m2.get()[1] == pytest.approx(0.5)
    m3 = mx.metric.create(my_acc)
    m3.update([mx.nd.array([1])], [mx.nd.array([[0.1, 0.9]])])
    assert m3.get()[1] == 1.0


def test_init_desc_fills_arrays_in_place():
    x = mx.nd.zeros((3, 4))
    assert mx.init.Uniform(0.2)(mx.init.InitDesc("fc_weight"), x) is None
    v = onp.abs(x.asnumpy())
    assert v.max() <= 0.2 and v.max() > 0
    b = mx.nd.ones((3,))
    mx.init.Xavier()(mx.init.InitDesc("fc_bias"), b)  # *bias -> zeros, as MXNet
    assert (b.asnumpy() == 0).all()
    g = mx.nd.zeros((3,))
    mx.init.Normal(0.1)("bn_gamma", g)
    assert (g.asnumpy() == 1).all()
    w = mx.nd.zeros((2, 2))
    mx.init.Mixed(["bias", ".*"], [mx.init.Zero(), mx.init.One()])("fc_weight", w)
    assert (w.asnumpy() == 1).all()
    d = mx.init.InitDesc("w", attrs={"lr_mult": "2"})
    assert d == "w" and d.attrs == {"lr_mult": "2"} and d.global_init is None


def test_nd_linspace_gather_nd_float_indices_and_transpose_axes():
    assert mx.nd.linspace(0, 1, 5).asnumpy().tolist() == [0, 0.25, 0.5, 0.75, 1]
    assert mx.nd.linspace(0, 1, 4, endpoint=False).dtype == onp.float32
    a = mx.nd.array([[1, 2], [3, 4]])
    assert mx.nd.gather_nd(a, mx.nd.array([[0, 1], [1, 0]])).asnumpy().tolist() == [2, 3]
    x = mx.nd.arange(24).reshape((2, 3, 4))
    assert x.transpose(2, 0, 1).shape == (4, 2, 3)
    assert x.transpose((2, 0, 1)).shape == (4, 2, 3)
    assert mx.nd.transpose(x, axes=(1, 0, 2)).shape == (3, 2, 4)


def test_autograd_with_nd_arrays_matches_hand_gradient():
    x = mx.nd.array([[1, 2], [3, 4]])
    w = mx.nd.array([[1], [1]])
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
        z = (y * y).sum()
    z.backward()
    Y = onp.array([[3], [7]], "float32")
    onp.testing.assert_allclose(x.grad.asnumpy(), 2 * Y @ onp.ones((1, 2)))
    onp.testing.assert_allclose(w.grad.asnumpy(), onp.array([[1, 2], [3, 4]]).T @ (2 * Y))


def test_lr_scheduler_with_sgd_optimizer():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    assert [sched(i) for i in range(1, 7)] == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    opt = mx.optimizer.SGD(learning_rate=1.0,
                           lr_scheduler=mx.lr_scheduler.FactorScheduler(2, 0.5, base_lr=1.0))
    lrs = []
    for _ in range(5):
        opt.num_update += 1
        lrs.append(opt.learning_rate)
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25]
