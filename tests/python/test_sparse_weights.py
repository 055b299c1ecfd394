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


# ------------------------------------------------------------------ symbols and Module


def _sparse_regression_module(x, y, batch_size, lazy_update):
    """MXNet's tutorial 'linear regression with sparse symbols', as written there: a CSR
    data variable, a row_sparse weight, sym.sparse.dot, LinearRegressionOutput, Module."""
    it = mx.io.NDArrayIter(nd.array(x).tostype("csr"), {"lin_reg_label": nd.array(y)},
                           batch_size, last_batch_handle="discard")
    data = mx.sym.Variable("data", stype="csr")
    label = mx.sym.Variable("lin_reg_label")
    weight = mx.sym.Variable("weight", stype="row_sparse", shape=(x.shape[1], 1))
    bias = mx.sym.Variable("bias", shape=(1,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), bias)
    out = mx.sym.LinearRegressionOutput(data=pred, label=label, name="lro")
    mod = mx.mod.Module(symbol=out, data_names=["data"], label_names=["lin_reg_label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params()
    mod.init_optimizer(optimizer=mx.optimizer.SGD(
        learning_rate=0.1, momentum=0.9, rescale_grad=1.0 / batch_size,
        lazy_update=lazy_update))
    return it, mod


def test_the_sparse_symbols_tutorial_trains_as_numpys_lazy_sgd(rng):
    n, features, batch = 24, 40, 8
    x = (rng.random((n, features)) < 0.06) * rng.standard_normal((n, features))
    y = rng.standard_normal(n)
    it, mod = _sparse_regression_module(x, y, batch, lazy_update=True)
    args, _ = mod.get_params()
    w, b = args["weight"].asnumpy().astype(onp.float64), args["bias"].asnumpy()[0]
    w0 = w.copy()
    mom_w, mom_b = onp.zeros_like(w), 0.0
    used = set()
    for _ in range(2):
        it.reset()
        for k, batch_data in enumerate(it):
            mod.prepare(batch_data, sparse_row_id_fn=lambda b: {"weight": b.data[0].indices})
            mod.forward(batch_data, is_train=True)
            mod.backward()
            mod.update()
            xb, yb = x[k * batch:(k + 1) * batch], y[k * batch:(k + 1) * batch]
            # NumPy: the squared error's gradient (pred - y); SGD with momentum on the
            # weight's rows the batch uses (lazy), and on the bias
            err = xb @ w[:, 0] + b - yb
            g = xb.T @ err / batch
            rows = sorted(set(onp.nonzero(xb)[1].tolist()))
            used.update(rows)
            mom_w[rows, 0] = 0.9 * mom_w[rows, 0] - 0.1 * g[rows]
            w[rows] += mom_w[rows]
            mom_b = 0.9 * mom_b - 0.1 * err.sum() / batch
            b += mom_b
    args, _ = mod.get_params()
    onp.testing.assert_allclose(args["weight"].asnumpy(), w, rtol=1e-4, atol=1e-6)
    onp.testing.assert_allclose(args["bias"].asnumpy(), [b], rtol=1e-4, atol=1e-6)
    unused = sorted(set(range(features)) - used)
    assert unused  # (some columns never occur: lazy_update leaves their rows alone)
    onp.testing.assert_array_equal(args["weight"].asnumpy()[unused], w0[unused])


@pytest.mark.parametrize("lazy", [True, False])
def test_momentum_moves_rows_outside_the_batch_only_without_lazy_update(rng, lazy):
    n, features, batch = 16, 40, 8
    x = (rng.random((n, features)) < 0.06) * rng.standard_normal((n, features))
    it, mod = _sparse_regression_module(x, rng.standard_normal(n), batch, lazy_update=lazy)
    seen = []
    for batch_data in it:
        mod.forward_backward(batch_data)
        mod.update()
        seen.append(mod.get_params()[0]["weight"].asnumpy())
    # rows the first batch uses and the second does not: their momentum moves them in the
    # second step unless the update is lazy
    first_only = sorted(set(onp.nonzero(x[:batch])[1].tolist()) -
                        set(onp.nonzero(x[batch:])[1].tolist()))
    assert first_only
    moved = not onp.array_equal(seen[1][first_only], seen[0][first_only])
    assert moved == (not lazy)


def test_an_embedding_with_sparse_grad_in_a_module_is_updated_lazily(rng):
    vocab, dim, batch = 20, 3, 4
    ids = rng.integers(0, 8, size=(batch, 2)).astype(onp.float32)
    target = rng.standard_normal((batch, 2, dim)).astype(onp.float32)
    data = mx.sym.Variable("data")
    emb = mx.sym.Embedding(data, input_dim=vocab, output_dim=dim, sparse_grad=True,
                           name="emb")
    out = mx.sym.LinearRegressionOutput(emb, mx.sym.Variable("label"), name="lro")
    mod = mx.mod.Module(out, data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=[("data", ids.shape)], label_shapes=[("label", target.shape)])
    mod.init_params()
    mod.init_optimizer(optimizer="sgd", optimizer_params={
        "learning_rate": 0.5, "wd": 0.1, "lazy_update": True})
    w0 = mod.get_params()[0]["emb_weight"].asnumpy().astype(onp.float64)
    batch_data = mx.io.DataBatch([nd.array(ids)], [nd.array(target)])
    mod.forward_backward(batch_data)
    mod.update()
    got = mod.get_params()[0]["emb_weight"].asnumpy()
    # NumPy: LinearRegressionOutput's gradient (out - label) / (outputs per example, MXNet's
    # normalization), summed into the looked-up rows and rescaled by 1 / batch; SGD with
    # weight decay on those rows only
    g = onp.zeros_like(w0)
    per_example = 2 * dim
    onp.add.at(g, ids.astype(int).ravel(),
               (w0[ids.astype(int)] - target).reshape(-1, dim) / per_example)
    rows = sorted(set(ids.astype(int).ravel().tolist()))
    want = w0.copy()
    want[rows] -= 0.5 * (g[rows] / batch + 0.1 * w0[rows])
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert set(rows) != set(range(vocab))


def test_sparse_symbol_attributes_and_mxnet_json():
    w = mx.sym.var("w", stype="row_sparse")
    assert w.attr("__storage_type__") == "1"  # MXNet's code for row_sparse
    assert mx.sym.var("x", stype="csr").attr("__storage_type__") == "2"
    with pytest.raises(ValueError, match="stype"):
        mx.sym.var("v", stype="coo")
    # MXNet's JSON of a sparse model: cast_storage to csr and contrib's SparseEmbedding
    graph = {"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "emb_weight", "inputs": [],
         "attrs": {"__storage_type__": "1"}},
        {"op": "_contrib_SparseEmbedding", "name": "emb", "inputs": [[0, 0, 0], [1, 0, 0]],
         "attrs": {"input_dim": "6", "output_dim": "2", "deterministic": "False"}},
        {"op": "cast_storage", "name": "cast", "inputs": [[2, 0, 0]],
         "attrs": {"stype": "row_sparse"}}],
        "arg_nodes": [0, 1], "heads": [[3, 0, 0]]}
    import json
    net = mx.sym.load_json(json.dumps(graph))
    weight = onp.arange(12, dtype=onp.float32).reshape(6, 2)
    exe = net._bind(mx.cpu(), {"data": nd.array([[5, 1]]), "emb_weight": nd.array(weight)})
    onp.testing.assert_array_equal(exe.forward()[0].asnumpy(), weight[[[5, 1]]])
    # a batch_dot asking for a sparse result computes the same values (densely)
    bd = {"nodes": [{"op": "null", "name": "p", "inputs": []},
                    {"op": "null", "name": "q", "inputs": []},
                    {"op": "batch_dot", "name": "bd", "inputs": [[0, 0, 0], [1, 0, 0]],
                     "attrs": {"forward_stype": "csr", "transpose_b": "True"}}],
          "arg_nodes": [0, 1], "heads": [[2, 0, 0]]}
    p = onp.arange(12, dtype=onp.float32).reshape(2, 2, 3)
    q = onp.ones((2, 4, 3), onp.float32)
    exe = mx.sym.load_json(json.dumps(bd))._bind(mx.cpu(), {"p": nd.array(p), "q": nd.array(q)})
    onp.testing.assert_allclose(exe.forward()[0].asnumpy(), p @ q.transpose(0, 2, 1))
    # sym.sparse.dot's transposes, against NumPy
    a, b = mx.sym.var("a"), mx.sym.var("b")
    prod = mx.sym.sparse.dot(a, b, transpose_a=True, forward_stype="row_sparse")
    av, bv = onp.ones((3, 2), onp.float32), onp.arange(6, dtype=onp.float32).reshape(3, 2)
    exe = prod._bind(mx.cpu(), {"a": nd.array(av), "b": nd.array(bv)})
    onp.testing.assert_allclose(exe.forward()[0].asnumpy(), av.T @ bv)


def test_module_prepare_checks_sparse_row_id_fn(rng):
    x = (rng.random((8, 10)) < 0.2) * rng.standard_normal((8, 10))
    it, mod = _sparse_regression_module(x, rng.standard_normal(8), 4, lazy_update=True)
    batch = next(iter(it))
    with pytest.raises(TypeError, match="dict"):
        mod.prepare(batch, sparse_row_id_fn=lambda b: [1, 2])
    with pytest.raises(ValueError, match="not parameters"):
        mod.prepare(batch, sparse_row_id_fn=lambda b: {"nope": nd.array([1])})


def test_a_hybridized_block_takes_a_csr_batch_as_its_dense_value(rng):
    class Linear(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = gluon.Parameter("w", shape=(6, 2))

        def forward(self, x):
            return nd.dot(x, self.w.data())

    x = (rng.random((3, 6)) < 0.3) * rng.standard_normal((3, 6))
    csr = nd.array(x).tostype("csr")
    net = Linear()
    net.initialize()
    w = net.w.data().asnumpy()
    imperative = net(csr).asnumpy()
    net.hybridize()
    with autograd.record():
        out = net(csr)
    out.backward()
    assert isinstance(out, nd.NDArray)
    onp.testing.assert_allclose(out.asnumpy(), x @ w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(imperative, x @ w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net.w.grad().asnumpy(), x.T @ onp.ones((3, 2)), rtol=1e-5,
                                atol=1e-6)


# ------------------------------------------------------------------ review cases


def _ones_embedding(rows=6, **opt):
    net = gluon.contrib.nn.SparseEmbedding(rows, 2)
    net.initialize(mx.init.Constant(1))
    trainer = gluon.Trainer(net.collect_params(), "sgd", dict({"learning_rate": 1.0}, **opt))
    return net, trainer


def _step(net, trainer, *id_lists, device=None):
    with autograd.record():
        loss = sum(net(np.array(ids, device=device)).sum() for ids in id_lists)
    loss.backward()
    trainer.step(1)


def test_a_table_used_twice_in_one_forward_gets_both_gradients():
    net, trainer = _ones_embedding()
    _step(net, trainer, [1, 1], [2, 1])  # row 1 three times, row 2 once
    got = net.weight._reduce().asnumpy()
    want = onp.ones((6, 2))
    want[1] -= 3
    want[2] -= 1
    onp.testing.assert_array_equal(got, want)


def test_a_step_without_backward_is_stale_for_a_row_sparse_weight():
    net, trainer = _ones_embedding(wd=0.5, lazy_update=True)
    _step(net, trainer, [1])
    before = net.weight._reduce().asnumpy().copy()
    net(np.array([3]))  # a forward, no backward
    with pytest.raises(UserWarning, match="not been updated by backward"):
        trainer.step(1)
    trainer.step(1, ignore_stale_grad=True)  # skipped: row 3 gets no weight decay
    onp.testing.assert_array_equal(net.weight._reduce().asnumpy(), before)


def test_the_saved_table_is_the_trained_one_after_the_parameter_is_replaced(tmp_path):
    net, trainer = _ones_embedding()
    _step(net, trainer, [1])
    net.weight.initialize(mx.init.Constant(5), force_reinit=True)  # the store takes it
    onp.testing.assert_array_equal(net.weight.row_sparse_data(np.array([1])).data.asnumpy(),
                                   [[5, 5]])
    _step(net, trainer, [2])
    net.weight.reset_device(mx.cpu(1))
    _step(net, trainer, [3], device=mx.cpu(1))
    want = onp.full((6, 2), 5.0)
    want[[2, 3]] = 4
    onp.testing.assert_array_equal(net.weight._reduce().asnumpy(), want)
    path = str(tmp_path / "w.params")
    net.save_parameters(path)
    again = gluon.contrib.nn.SparseEmbedding(6, 2)
    again.load_parameters(path)
    onp.testing.assert_array_equal(again.weight._reduce().asnumpy(), want)


def test_a_failed_trainer_leaves_the_parameter_free():
    net = gluon.contrib.nn.SparseEmbedding(4, 2)
    net.initialize()
    with pytest.raises(TypeError):
        gluon.Trainer(net.collect_params(), "sgd", kvstore=123)
    gluon.Trainer(net.collect_params(), "sgd")  # (not "more than one trainer")


def test_an_exported_sparse_grad_embedding_keeps_its_flag(tmp_path):
    import json
    net = gluon.nn.Embedding(5, 2, sparse_grad=True)
    net.initialize()
    net.hybridize()
    net(np.array([1, 2]))
    sym_file, _ = net.export(str(tmp_path / "emb"))
    nodes = json.load(open(sym_file))["nodes"]
    assert [n["attrs"].get("sparse_grad") for n in nodes if n["op"] == "_npx_embedding"] \
        == ["True"]


def test_a_batch_meeting_no_stored_rows_back_propagates():
    weight = nd.sparse.zeros("row_sparse", (4, 2))
    weight._data.attach_grad()
    csr = nd.zeros((2, 4)).tostype("csr")
    with autograd.record():
        out = nd.sparse.dot(csr, weight).sum() + nd.Embedding(nd.array([1]), weight).sum()
    out.backward()
    assert out.asnumpy() == 0 and weight._data.grad.shape == (0, 2)
