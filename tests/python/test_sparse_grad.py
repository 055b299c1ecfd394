"""Row-sparse gradients in Gluon: Embedding(sparse_grad=True) / Parameter(grad_stype=
'row_sparse') and the optimizers' lazy_update (MXNet's: only the rows present in the batch are
updated, weight decay and momentum included), checked against NumPy implementations of the
update rules the optimizer documents."""
import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, gluon, np

nd = mx.nd


def _embedding(sparse_grad, weight):
    emb = gluon.nn.Embedding(*weight.shape, sparse_grad=sparse_grad)
    emb.initialize()
    emb.weight.set_data(np.array(weight))
    return emb


def _train(emb, optimizer, params, batches):
    trainer = gluon.Trainer(emb.collect_params(), optimizer, params)
    for x, c in batches:
        with autograd.record():
            loss = (emb(np.array(x)) * np.array(c)).sum()
        loss.backward()
        trainer.step(1)
    return emb.weight.data().asnumpy()


def _row_grads(shape, x, c):
    """d sum(W[x] * c) / dW: row r collects c[p] for every position p with x[p] == r."""
    g = onp.zeros(shape)
    for p, r in enumerate(x):
        g[r] += c[p]
    return g


def _batches(rng, dim):
    xs = [[1, 3, 3], [3, 4], [0, 4, 4, 4]]
    return [(x, rng.standard_normal((len(x), dim)).astype(onp.float32)) for x in xs]


@pytest.fixture
def rng():
    return onp.random.default_rng(5)


def test_embedding_sparse_grad_declares_a_row_sparse_gradient():
    emb = gluon.nn.Embedding(10, 4, sparse_grad=True)
    assert emb.weight.grad_stype == "row_sparse"
    assert gluon.nn.Embedding(10, 4).weight.grad_stype == "default"


def test_lazy_sgd_leaves_rows_outside_the_batch_alone(rng):
    w0 = rng.standard_normal((6, 3)).astype(onp.float32)
    batches = _batches(rng, 3)
    lr, momentum, wd = 0.1, 0.9, 0.05
    got = _train(_embedding(True, w0), "sgd",
                 {"learning_rate": lr, "momentum": momentum, "wd": wd, "lazy_update": True},
                 batches)
    # NumPy: SGD's documented rule on the rows in the batch only
    w, mom = w0.astype(onp.float64), onp.zeros(w0.shape)
    for x, c in batches:
        g = _row_grads(w.shape, x, c)
        rows = sorted(set(x))
        step = g[rows] + wd * w[rows]
        mom[rows] = momentum * mom[rows] - lr * step
        w[rows] += mom[rows]
    onp.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_array_equal(got[[2, 5]], w0[[2, 5]])  # never in a batch: untouched


def test_without_lazy_update_a_sparse_gradient_trains_as_the_dense_one(rng):
    w0 = rng.standard_normal((6, 3)).astype(onp.float32)
    batches = _batches(rng, 3)
    params = {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.05}
    sparse_run = _train(_embedding(True, w0), "sgd", dict(params, lazy_update=False), batches)
    dense_run = _train(_embedding(False, w0), "sgd", params, batches)
    onp.testing.assert_allclose(sparse_run, dense_run, rtol=1e-6, atol=1e-7)
    assert not onp.allclose(sparse_run[[2, 5]], w0[[2, 5]])  # weight decay moved every row


def test_lazy_adam_keeps_the_moments_of_rows_outside_the_batch(rng):
    w0 = rng.standard_normal((6, 3)).astype(onp.float32)
    batches = _batches(rng, 3)
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    got = _train(_embedding(True, w0), "adam",
                 {"learning_rate": lr, "beta1": b1, "beta2": b2, "epsilon": eps,
                  "lazy_update": True}, batches)
    w, m, v = w0.astype(onp.float64), onp.zeros(w0.shape), onp.zeros(w0.shape)
    for t, (x, c) in enumerate(batches, 1):
        g = _row_grads(w.shape, x, c)
        rows = sorted(set(x))
        m[rows] = b1 * m[rows] + (1 - b1) * g[rows]
        v[rows] = b2 * v[rows] + (1 - b2) * g[rows] ** 2
        rate = lr * onp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w[rows] -= rate * m[rows] / (onp.sqrt(v[rows]) + eps)
    onp.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_optimizer_update_takes_a_row_sparse_gradient():
    # MXNet 1.x's optimizer API with a RowSparseNDArray gradient
    opt = mx.optimizer.SGD(learning_rate=0.5, momentum=0.5, lazy_update=True)
    w = nd.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    state = opt.create_state(0, w)
    grad = nd.sparse.row_sparse_array((nd.array([[1.0, 2.0]]), nd.array([2])), shape=(3, 2))
    opt.update(0, w, grad, state)
    onp.testing.assert_allclose(w.asnumpy(), [[1, 1], [2, 2], [2.5, 2.0]])
    onp.testing.assert_allclose(state.asnumpy(), [[0, 0], [0, 0], [-0.5, -1.0]])
    opt.update(0, w, grad, state)  # momentum: -0.25 - 0.5 and -0.5 - 1.0 on row 2
    onp.testing.assert_allclose(w.asnumpy(), [[1, 1], [2, 2], [1.75, 0.5]])
    eager = mx.optimizer.SGD(learning_rate=0.5, wd=0.1)  # standard update: every row decays
    w2 = nd.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    eager.update(0, w2, grad, eager.create_state(0, w2))
    onp.testing.assert_allclose(w2.asnumpy(), [[0.95, 0.95], [1.9, 1.9], [2.35, 1.85]],
                                rtol=1e-6)
    with pytest.raises(ValueError, match="shape"):
        opt.update(0, nd.ones((4, 2)), grad, opt.create_state(0, nd.ones((4, 2))))


def test_a_row_sparse_weight_as_in_mxnets_tutorial():
    # MXNet's RowSparseNDArray tutorial: SGD on a row_sparse weight and gradient
    weight = nd.ones((4, 2)).tostype("row_sparse")
    grad = nd.sparse.row_sparse_array((nd.array([[1, 2], [4, 5]]), nd.array([1, 2])),
                                      shape=(4, 2))
    sgd = mx.optimizer.SGD(learning_rate=0.01, momentum=0.01)
    momentum = sgd.create_state(0, weight)
    sgd.update(0, weight, grad, momentum)
    assert weight.stype == "row_sparse"
    onp.testing.assert_allclose(weight.asnumpy(), [[1, 1], [0.99, 0.98], [0.96, 0.95], [1, 1]],
                                rtol=1e-6)
    onp.testing.assert_allclose(momentum.asnumpy()[1:3], [[-0.01, -0.02], [-0.04, -0.05]],
                                rtol=1e-6)


def test_lazy_update_with_float16_master_weights(rng):
    opt = mx.optimizer.SGD(learning_rate=0.25, momentum=0.5, lazy_update=True,
                           multi_precision=True)
    w = np.array(rng.standard_normal((5, 4)), dtype="float16")
    before = w.asnumpy().copy()
    state = opt.create_state_multi_precision(0, w)
    g = rng.standard_normal((2, 4)).astype(onp.float16)
    grad = nd.sparse.row_sparse_array((nd.array(g, dtype="float16"), nd.array([1, 3])),
                                      shape=(5, 4))
    opt.update_multi_precision(0, w, grad, state)
    got = w.asnumpy()
    onp.testing.assert_array_equal(got[[0, 2, 4]], before[[0, 2, 4]])
    want = before[[1, 3]].astype(onp.float32) - 0.25 * g.astype(onp.float32)
    onp.testing.assert_allclose(got[[1, 3]], want.astype(onp.float16), rtol=2e-3, atol=2e-3)
    onp.testing.assert_allclose(state[0].asnumpy()[[1, 3]], want, rtol=1e-6)  # float32 master


def _train_on_store(emb, optimizer, params, batches):
    trainer = gluon.Trainer(emb.collect_params(), optimizer, params,
                            kvstore=mx.kv.create("local"), update_on_kvstore=True)
    for x, c in batches:
        with autograd.record():
            loss = (emb(np.array(x)) * np.array(c)).sum()
        loss.backward()
        trainer.step(1)
    return emb.weight.data().asnumpy()


def test_a_store_that_updates_applies_the_lazy_update_too(rng):
    # MXNet's store gets the row_sparse gradient, so its updater updates those rows only
    w0 = rng.standard_normal((6, 3)).astype(onp.float32)
    batches = _batches(rng, 3)
    params = {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.05, "lazy_update": True}
    on_store = _train_on_store(_embedding(True, w0), "sgd", params, batches)
    here = _train(_embedding(True, w0), "sgd", params, batches)
    onp.testing.assert_allclose(on_store, here, rtol=1e-6, atol=1e-7)
    onp.testing.assert_array_equal(on_store[[2, 5]], w0[[2, 5]])
    dense = _train_on_store(_embedding(False, w0), "sgd", dict(params, lazy_update=False),
                            batches)
    assert not onp.allclose(dense[[2, 5]], w0[[2, 5]])  # a dense gradient decays every row


def test_embedding_repr_is_mxnets():
    assert repr(gluon.nn.Embedding(5, 2)) == "Embedding(5 -> 2, float32)"


def test_parameter_storage_arguments():
    with pytest.raises(NotImplementedError, match="csr"):
        gluon.Parameter("w", shape=(2, 2), stype="csr")
    with pytest.raises(NotImplementedError, match="csr"):
        gluon.Parameter("w", shape=(2, 2), grad_stype="csr")
    with pytest.raises(ValueError, match="grad_stype"):
        gluon.Parameter("w", shape=(2, 2), grad_stype="dense")


def test_embedding_backward_writes_and_adds_only_the_looked_up_rows(rng):
    # the op's gradient: each looked-up row gets its output gradients summed, other rows 0
    # (grad_req 'write') or unchanged ('add'); NumPy's np.add.at is the reference
    w = np.array(rng.standard_normal((6, 3)), dtype="float32")
    heads = [([1, 3, 3], rng.standard_normal((3, 3))), ([3, 0], rng.standard_normal((2, 3)))]
    for req in ("write", "add"):
        w.attach_grad(grad_req=req)
        start = rng.standard_normal((6, 3)).astype(onp.float32)
        w.grad[...] = np.array(start)
        want = start.astype(onp.float64) if req == "add" else onp.zeros((6, 3))
        for ids, head in heads:
            with autograd.record():
                out = mx.npx.embedding(np.array(ids), w, input_dim=6, output_dim=3)
            out.backward(np.array(head, dtype="float32"))
            if req == "write":
                want = onp.zeros((6, 3))
            onp.add.at(want, ids, head)
        onp.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)
