"""Row-sparse weights: Parameter(stype='row_sparse'), contrib.nn.SparseEmbedding, the
KVStore's row_sparse values (push of row_sparse gradients, row_sparse_pull, pull's
ignore_sparse) and the products that read a row_sparse weight's stored rows only
(nd.Embedding, dot(csr, row_sparse)). References: NumPy implementations of the lookups, the
products and SGD's documented update rule."""
import warnings

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, gluon, np

nd = mx.nd


@pytest.fixture
def rng():
    return onp.random.default_rng(11)


def _rsp(dense_rows, rows, shape):
    return nd.sparse.row_sparse_array((nd.array(dense_rows), nd.array(rows, dtype="int64")),
                                      shape=shape)


# ------------------------------------------------------------------ KVStore


def test_row_sparse_pull_gives_the_rows_asked_for(rng):
    w = rng.standard_normal((6, 3)).astype(onp.float32)
    kv = mx.kv.create("local")
    kv.init("w", nd.array(w))
    out = nd.sparse.zeros("row_sparse", (6, 3))
    kv.row_sparse_pull("w", out=out, row_ids=nd.array([4, 1, 4], dtype="int64"))
    assert out.stype == "row_sparse"
    assert out.indices.asnumpy().tolist() == [1, 4]  # sorted, each once
    onp.testing.assert_array_equal(out.data.asnumpy(), w[[1, 4]])
    want = onp.zeros_like(w)
    want[[1, 4]] = w[[1, 4]]
    onp.testing.assert_array_equal(out.asnumpy(), want)
    # two outputs: one row_ids for both, or one each
    a, b = nd.sparse.zeros("row_sparse", (6, 3)), nd.sparse.zeros("row_sparse", (6, 3))
    kv.row_sparse_pull("w", out=[a, b], row_ids=nd.array([0]))
    assert a.indices.asnumpy().tolist() == b.indices.asnumpy().tolist() == [0]
    kv.row_sparse_pull("w", out=[a, b], row_ids=[nd.array([2]), nd.array([5, 3])])
    onp.testing.assert_array_equal(a.data.asnumpy(), w[[2]])
    onp.testing.assert_array_equal(b.data.asnumpy(), w[[3, 5]])


def test_row_sparse_pull_checks_its_arguments():
    kv = mx.kv.create("local")
    kv.init(0, nd.ones((4, 2)))
    out = nd.sparse.zeros("row_sparse", (4, 2))
    with pytest.raises(IndexError, match=r"\[0, 4\)"):
        kv.row_sparse_pull(0, out=out, row_ids=nd.array([4]))
    with pytest.raises(TypeError, match="row_sparse"):
        kv.row_sparse_pull(0, out=nd.zeros((4, 2)), row_ids=nd.array([1]))
    with pytest.raises(ValueError, match="row_ids"):
        kv.row_sparse_pull(0, out=out)
    with pytest.raises(ValueError, match="shape"):
        kv.row_sparse_pull(0, out=nd.sparse.zeros("row_sparse", (5, 2)), row_ids=nd.array([1]))
    with pytest.raises(ValueError, match="row_ids"):
        kv.row_sparse_pull(0, out=[out, out.copy()], row_ids=[nd.array([1])] * 3)
    with pytest.raises(KeyError):
        kv.row_sparse_pull(1, out=out, row_ids=nd.array([1]))


def test_push_of_row_sparse_values_stores_their_sum(rng):
    kv = mx.kv.create("local")
    kv.init(3, nd.zeros((5, 2)))
    g1, g2 = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    kv.push(3, [_rsp(g1, [0, 3], (5, 2)), _rsp(g2, [3, 4], (5, 2))])
    want = onp.zeros((5, 2))
    want[[0, 3]] += g1
    want[[3, 4]] += g2
    out = nd.zeros((5, 2))
    kv.pull(3, out=out)
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)


def test_pull_skips_row_sparse_outputs_unless_told_not_to(rng):
    w = rng.standard_normal((3, 2)).astype(onp.float32)
    kv = mx.kv.create("local")
    kv.init("k", nd.array(w))
    out = nd.sparse.zeros("row_sparse", (3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kv.pull("k", out=out)  # MXNet's ignore_sparse=True: nothing pulled
    assert out.indices.size == 0
    kv.pull("k", out=out, ignore_sparse=False)
    onp.testing.assert_array_equal(out.asnumpy(), w)


def test_a_store_optimizer_updates_only_the_pushed_rows_lazily(rng):
    w0 = rng.standard_normal((6, 2)).astype(onp.float32)
    lr, momentum, wd = 0.1, 0.9, 0.01
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=lr, momentum=momentum, wd=wd,
                                      lazy_update=True))
    kv.init(0, nd.array(w0))
    pushes = [([1, 4], rng.standard_normal((2, 2))), ([4, 5], rng.standard_normal((2, 2)))]
    w, mom = w0.astype(onp.float64), onp.zeros(w0.shape)
    for rows, g in pushes:
        kv.push(0, _rsp(g, rows, (6, 2)))
        # SGD's rule (MXNet's documentation) on the pushed rows only
        mom[rows] = momentum * mom[rows] - lr * (g + wd * w[rows])
        w[rows] += mom[rows]
    out = nd.zeros((6, 2))
    kv.pull(0, out=out)
    onp.testing.assert_allclose(out.asnumpy(), w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_array_equal(out.asnumpy()[[0, 2, 3]], w0[[0, 2, 3]])


# ------------------------------------------------------------------ products


def test_embedding_of_a_row_sparse_weight_reads_the_stored_rows(rng):
    rows = rng.standard_normal((3, 4)).astype(onp.float32)
    weight = _rsp(rows, [1, 4, 6], (8, 4))
    ids = onp.array([[4, 0], [6, 1], [9, 4]])  # 0: no stored row; 9: clipped to 7, none
    out = nd.Embedding(nd.array(ids), weight, input_dim=8, output_dim=4)
    dense = weight.asnumpy()
    onp.testing.assert_array_equal(out.asnumpy(), dense[onp.clip(ids, 0, 7)])
    # the gradient reaches the stored rows: row r gets the sum of the head gradients of its ids
    values = weight._data
    values.attach_grad()
    head = rng.standard_normal(ids.shape + (4,)).astype(onp.float32)
    with autograd.record():
        y = nd.Embedding(nd.array(ids), weight, input_dim=8, output_dim=4)
    y.backward(nd.array(head))
    want = onp.zeros((3, 4), onp.float32)
    for pos, r in onp.ndenumerate(onp.clip(ids, 0, 7)):
        if r in (1, 4, 6):
            want[[1, 4, 6].index(r)] += head[pos]
    onp.testing.assert_allclose(values.grad.asnumpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="input_dim"):
        nd.Embedding(nd.array(ids), weight, input_dim=9, output_dim=4)


def test_dot_of_csr_and_row_sparse_reads_the_stored_rows(rng):
    x = (rng.random((5, 7)) < 0.4) * rng.standard_normal((5, 7))
    rows = rng.standard_normal((3, 2))
    weight = _rsp(rows, [0, 3, 5], (7, 2))
    csr = nd.array(x).tostype("csr")
    out = nd.sparse.dot(csr, weight)
    assert out.stype == "default"
    onp.testing.assert_allclose(out.asnumpy(), x @ weight.asnumpy(), rtol=1e-5, atol=1e-6)
    values = weight._data
    values.attach_grad()
    head = rng.standard_normal((5, 2)).astype(onp.float32)
    with autograd.record():
        y = nd.sparse.dot(csr, weight)
    y.backward(nd.array(head))
    # d/dW (x @ W) = x.T @ head, at the stored rows
    onp.testing.assert_allclose(values.grad.asnumpy(), (x.T @ head)[[0, 3, 5]], rtol=1e-5,
                                atol=1e-6)


def test_a_recorded_dense_view_of_a_row_sparse_array_passes_the_gradient(rng):
    weight = _rsp(rng.standard_normal((2, 3)), [1, 2], (4, 3))
    values = weight._data
    values.attach_grad()
    scale = rng.standard_normal((4, 3)).astype(onp.float32)
    with autograd.record():
        y = (weight.tostype("default") * nd.array(scale)).sum()
    y.backward()
    onp.testing.assert_allclose(values.grad.asnumpy(), scale[[1, 2]], rtol=1e-6)


# ------------------------------------------------------------------ Parameter and Trainer


def _param(w):
    p = gluon.Parameter("emb", shape=w.shape, stype="row_sparse", grad_stype="row_sparse",
                        init=mx.init.Constant(0))
    p.initialize()
    p.set_data(np.array(w))
    return p


def test_a_row_sparse_parameter_is_read_through_its_trainer(rng):
    w = rng.standard_normal((5, 2)).astype(onp.float32)
    p = _param(w)
    assert p.stype == "row_sparse" and p.grad_stype == "row_sparse"
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        p.data()
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        p.list_data()
    with pytest.raises(RuntimeError, match="no Trainer"):
        p.row_sparse_data(nd.array([1]))
    gluon.Trainer([p], "sgd", {"learning_rate": 0.1})
    got = p.row_sparse_data(nd.array([3, 0, 3]))
    assert got.indices.asnumpy().tolist() == [0, 3]
    onp.testing.assert_array_equal(got.data.asnumpy(), w[[0, 3]])
    grad = p.grad()  # the pulled rows' gradient: zeros until a backward pass writes it
    assert grad.stype == "row_sparse" and grad.indices.asnumpy().tolist() == [0, 3]
    onp.testing.assert_array_equal(grad.asnumpy(), onp.zeros((5, 2)))
    with pytest.raises(TypeError, match="row_id"):
        p.row_sparse_data([1, 2])


def test_trainer_rules_for_row_sparse_weights(rng):
    w = rng.standard_normal((4, 2)).astype(onp.float32)
    with pytest.raises(ValueError, match="update_on_kvstore"):
        gluon.Trainer([_param(w)], "sgd", update_on_kvstore=False)
    with pytest.raises(TypeError, match="KVStore"):
        gluon.Trainer([_param(w)], "sgd", kvstore=None)
    p = _param(w)
    gluon.Trainer([p], "sgd")
    with pytest.raises(RuntimeError, match="More than one trainer"):
        gluon.Trainer([p], "sgd")
    with pytest.raises(NotImplementedError, match="add"):
        p.grad_req = "add"
    q = gluon.Parameter("q", shape=(4, 2), stype="row_sparse")
    with pytest.raises(NotImplementedError, match="one device"):
        q.initialize(ctx=[mx.cpu(0), mx.cpu(1)])


def _sgd_lazy_reference(w0, batches, lr, momentum, wd, batch_size):
    """SGD (MXNet's documented rule) on the rows each batch looks up, the loss being
    sum(W[x] * c): row r's gradient is the sum of c over the positions of r in x."""
    w, mom = w0.astype(onp.float64), onp.zeros(w0.shape)
    for x, c in batches:
        g = onp.zeros(w.shape)
        for pos, r in onp.ndenumerate(x):
            g[r] += c[pos]
        rows = sorted(set(x.ravel().tolist()))
        step = g[rows] / batch_size + wd * w[rows]
        mom[rows] = momentum * mom[rows] - lr * step
        w[rows] += mom[rows]
    return w


def test_sparse_embedding_trains_only_the_rows_it_looks_up(rng, tmp_path):
    vocab, dim = 40, 3
    w0 = rng.standard_normal((vocab, dim)).astype(onp.float32)
    batches = [(rng.integers(0, 12, size=(2, 3)), rng.standard_normal((2, 3, dim))
                .astype(onp.float32)) for _ in range(4)]
    lr, momentum, wd = 0.2, 0.5, 0.01
    net = gluon.contrib.nn.SparseEmbedding(vocab, dim)
    net.initialize()
    net.weight.set_data(np.array(w0))
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": lr, "momentum": momentum, "wd": wd,
                             "lazy_update": True})
    for x, c in batches:
        with autograd.record():
            out = net(np.array(x))
            loss = (out * np.array(c)).sum()
        assert type(out) is np.ndarray and out.shape == (2, 3, dim)
        loss.backward()
        grad = net.weight.grad()
        assert grad.stype == "row_sparse"
        assert grad.indices.asnumpy().tolist() == sorted(set(x.ravel().tolist()))
        trainer.step(2)
    want = _sgd_lazy_reference(w0, batches, lr, momentum, wd, 2)
    got = net.weight._reduce().asnumpy()
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    onp.testing.assert_array_equal(got[12:], w0[12:])  # never looked up: untouched
    # the rows a forward pulls are the trained ones
    rows = net.weight.row_sparse_data(nd.array([0, 5]))
    onp.testing.assert_allclose(rows.data.asnumpy(), want[[0, 5]], rtol=1e-5, atol=1e-6)
    # saved as the whole table; loading it into a fresh net and Trainer gives it back
    path = str(tmp_path / "emb.params")
    net.save_parameters(path)
    again = gluon.contrib.nn.SparseEmbedding(vocab, dim)
    again.load_parameters(path)
    gluon.Trainer(again.collect_params(), "sgd")
    back = again.weight.row_sparse_data(nd.array(list(range(vocab))))
    onp.testing.assert_allclose(back.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_sparse_embedding_takes_mxnet_1x_arrays_and_skips_stale_steps(rng):
    net = gluon.contrib.nn.SparseEmbedding(10, 2)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        out = net(nd.array([1, 2]))
    assert isinstance(out, nd.NDArray)
    out.backward()
    trainer.step(1)
    with pytest.raises(UserWarning, match="not been updated by backward"):
        trainer.step(1)  # no backward since the last step


def test_a_sparse_linear_model_on_csr_data(rng):
    # MXNet's sparse linear classification: dot(csr batch, row_sparse weight), the weight's
    # rows pulled for the columns the batch uses
    features = 30
    w0 = rng.standard_normal((features, 1)).astype(onp.float32) * 0.1
    w = gluon.Parameter("w", shape=(features, 1), stype="row_sparse",
                        grad_stype="row_sparse")
    w.initialize()
    w.set_data(np.array(w0))
    trainer = gluon.Trainer([w], "sgd", {"learning_rate": 0.5, "lazy_update": True})
    ref = w0.astype(onp.float64)
    for _ in range(3):
        x = (rng.random((4, features)) < 0.1) * rng.standard_normal((4, features))
        y = rng.standard_normal((4, 1))
        csr = nd.array(x).tostype("csr")
        rows = w.row_sparse_data(csr.indices)
        with autograd.record():
            pred = nd.sparse.dot(csr, rows)
            loss = ((pred - nd.array(y)) ** 2).sum()
        loss.backward()
        trainer.step(4)
        # NumPy: the squared error's gradient 2 x.T (x w - y), SGD on the columns in x
        g = 2 * x.T @ (x @ ref - y)
        cols = sorted(set(onp.nonzero(x)[1].tolist()))
        ref[cols] -= 0.5 * g[cols] / 4
    onp.testing.assert_allclose(w._reduce().asnumpy(), ref, rtol=1e-4, atol=1e-6)
