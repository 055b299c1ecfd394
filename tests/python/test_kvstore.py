"""ndx.kvstore (one process) against MXNet's documented KVStore semantics, worked out by hand:
pushed values are summed, pull copies the stored value, an optimizer set on the store updates
it; Trainer's kvstore argument."""
import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np


def test_init_push_pull_sum_the_devices_values():
    kv = ndx.kv.create("local")
    assert (kv.type, kv.rank, kv.num_workers) == ("local", 0, 1)
    kv.init("weight", np.ones((2, 3)))
    outs = [np.zeros((2, 3)), np.zeros((2, 3))]
    kv.pull("weight", out=outs)
    assert all(o.asnumpy().tolist() == [[1.0] * 3] * 2 for o in outs)
    kv.push("weight", [np.ones((2, 3)), np.ones((2, 3)) + 1])  # 1 + 2
    kv.pull("weight", out=outs)
    assert all((o.asnumpy() == 3).all() for o in outs)


def test_lists_of_keys_and_pushpull():
    kv = ndx.kvstore.create("device")
    kv.init([3, 5], [np.zeros(2), np.zeros(2)])
    a, b = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    kv.pushpull([3, 5], [a, b])  # one worker: the sum of one value is the value
    assert a.asnumpy().tolist() == [1.0, 2.0] and b.asnumpy().tolist() == [10.0, 20.0]
    out = np.zeros(2)
    kv.pushpull(3, [np.ones(2), np.ones(2) * 4], out=out)
    assert out.asnumpy().tolist() == [5.0, 5.0]


def test_zero_dim_and_zero_size_values():
    kv = ndx.kv.create("local")
    kv.init(0, np.array(2.0))
    kv.init(1, np.zeros((0, 3)))
    kv.push(0, [np.array(1.0), np.array(4.0)])
    out = np.array(0.0)
    kv.pull(0, out=out)
    assert float(out) == 5.0
    empty = np.zeros((0, 3))
    kv.pushpull(1, np.zeros((0, 3)), out=empty)
    assert empty.shape == (0, 3)


def test_broadcast_and_the_optimizer_on_the_store():
    kv = ndx.kv.create("local")
    out = np.zeros(3)
    kv.broadcast("w", np.array([1.0, 2.0, 3.0]), out=out)
    assert out.asnumpy().tolist() == [1.0, 2.0, 3.0]
    kv.set_optimizer(ndx.optimizer.SGD(learning_rate=0.5))
    kv.push("w", np.array([2.0, 2.0, 2.0]))  # w - 0.5 * g, by hand
    kv.pull("w", out=out)
    assert out.asnumpy().tolist() == [0.0, 1.0, 2.0]


def test_errors_are_typed():
    kv = ndx.kv.create("local")
    kv.init("a", np.ones(2))
    with pytest.raises(ValueError, match="already initialized"):
        kv.init("a", np.ones(2))
    with pytest.raises(KeyError, match="not initialized"):
        kv.push("b", np.ones(2))
    with pytest.raises(ValueError, match="holds shape"):
        kv.push("a", np.ones(3))
    with pytest.raises(ValueError, match="out must be given"):
        kv.pull("a")
    with pytest.raises(TypeError, match="keys must be int or str"):
        kv.init(1.5, np.ones(2))
    with pytest.raises(TypeError, match="ndx arrays"):
        kv.push("a", onp.ones(2))
    with pytest.raises(NotImplementedError, match="no parameter servers"):
        ndx.kv.create("dist_async")
    with pytest.raises(ValueError, match="unknown store type"):
        ndx.kv.create("cloud")
    with pytest.raises(NotImplementedError, match="compression"):
        kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})


def _train(**trainer_kwargs):
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(ndx.initializer.Constant(0.5))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                            **trainer_kwargs)
    x = np.array([[1.0, 2.0, 3.0]])
    for _ in range(2):
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        trainer.step(1)
    return net.weight.data().asnumpy(), net.bias.data().asnumpy(), trainer


@pytest.mark.parametrize("kwargs", [{}, {"kvstore": "local"}, {"kvstore": None},
                                    {"kvstore": "KV", "update_on_kvstore": True},
                                    {"kvstore": "KV", "update_on_kvstore": False},
                                    {"kvstore": "dist_sync"},
                                    {"kvstore": "dist_sync", "update_on_kvstore": False}])
def test_trainer_with_a_store_takes_the_same_steps(kwargs):
    if kwargs.get("kvstore") == "KV":
        kwargs = dict(kwargs, kvstore=ndx.kv.create("device"))
    w, b, trainer = _train(**kwargs)
    # d(sum(x @ W.T + b))/dW = x for each row, /db = 1: two SGD steps of 0.1, by hand; the
    # bias starts at 0 (Dense's own bias_initializer wins over the global one, as in MXNet)
    assert onp.allclose(w, 0.5 - 0.2 * onp.array([[1.0, 2.0, 3.0]] * 2))
    assert onp.allclose(b, 0.0 - 0.2)
    made = isinstance(kwargs.get("kvstore"), ndx.kv.KVStore) or kwargs.get("kvstore") == \
        "dist_sync"  # a distributed type makes a store (rank 0 of 1 in one process)
    assert (trainer.kvstore is not None) == made


def test_trainer_kvstore_errors():
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with pytest.raises(NotImplementedError, match="no parameter servers"):
        gluon.Trainer(net.collect_params(), "sgd", kvstore="dist_async")
    with pytest.raises(ValueError, match="needs a store"):
        gluon.Trainer(net.collect_params(), "sgd", kvstore="device", update_on_kvstore=True)
    with pytest.raises(TypeError, match="kvstore must be"):
        gluon.Trainer(net.collect_params(), "sgd", kvstore=3)
