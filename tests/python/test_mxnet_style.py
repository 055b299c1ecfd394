"""A test module written as MXNet 2.0's own tests are (``import mxnet as mx``, ``from mxnet
import np, npx``, ``@use_np``, mxnet.test_utils), run on ndx through ndx.compat's alias.
Results are compared with NumPy and hand computations."""
import ndx.compat

ndx.compat.alias_as_mxnet()

import os  # noqa: E402

import mxnet as mx  # noqa: E402
import numpy as onp  # noqa: E402
import pytest  # noqa: E402
from mxnet import autograd, gluon, np, npx  # noqa: E402
from mxnet.base import MXNetError  # noqa: E402
from mxnet.gluon import nn  # noqa: E402
from mxnet.ndarray.numpy import _internal as _npi  # noqa: E402
from mxnet.test_utils import (  # noqa: E402
    assert_almost_equal,
    check_numeric_gradient,
    check_symbolic_backward,
    check_symbolic_forward,
    default_device,
    rand_ndarray,
    rand_shape_nd,
    same,
    use_np,
)
from mxnet.util import TemporaryDirectory  # noqa: E402


def test_alias_is_ndx_without_second_copies():
    import sys

    import mxnet.gluon.nn
    import mxnet.ndarray.numpy._internal
    import mxnet.symbol
    assert mx is ndx and mx.np is ndx.np and mx.npx is ndx.npx
    assert mxnet.gluon.nn is ndx.gluon.nn and mxnet.symbol is ndx.sym is mx.sym
    assert mx.ndarray is mx.nd is ndx.nd and _npi is ndx.nd.numpy._internal
    assert sys.modules["mxnet.test_utils"] is ndx.test_utils
    assert ndx.gluon.nn.__spec__.name == "ndx.gluon.nn"  # the module keeps its own spec
    assert not any(k.startswith("ndx.") and k.split(".")[1] in ("ndarray", "symbol")
                   for k in sys.modules)
    with pytest.raises(ModuleNotFoundError):
        import mxnet.no_such_module  # noqa: F401
    assert MXNetError is ndx.NDXError
    with pytest.raises(MXNetError):
        np.ones((2, 3)) @ np.ones((4, 5))


@use_np
def test_np_npx_and_internal_ops_against_numpy():
    assert npx.is_np_array() and mx.util.is_np_shape()
    shape = rand_shape_nd(3, dim=4)
    x = np.random.uniform(-1, 1, size=shape)
    xn = x.asnumpy()
    assert_almost_equal(np.tanh(x) * 2, onp.tanh(xn) * 2, rtol=1e-5, atol=1e-6)
    assert_almost_equal(npx.relu(x), onp.maximum(xn, 0), use_broadcast=False)
    assert_almost_equal(_npi.add(x, x), 2 * xn, use_broadcast=False)
    assert_almost_equal(np.sum(x, axis=0), xn.sum(axis=0), rtol=1e-5, atol=1e-6,
                        use_broadcast=False)
    assert same(np.maximum(x, 0), onp.maximum(xn, 0))
    assert not same(x, xn[::-1] + 1)
    nd_view = x.as_nd_ndarray()
    assert isinstance(nd_view, mx.nd.NDArray) and isinstance(x, mx.nd.NDArray)
    nd_view[...] = 0
    assert float(np.abs(x).sum()) == 0.0  # shared memory
    npx.waitall()
    mx.nd.waitall()


@use_np
class TestBlocks:
    def test_hybrid_block_autograd_and_trainer(self):
        class Net(gluon.HybridBlock):
            def __init__(self):
                super().__init__()
                self.dense = nn.Dense(3, in_units=4)

            def forward(self, x):
                return npx.relu(self.dense(x)).sum(axis=1)

        mx.random.seed(7, device=mx.cpu())
        net = Net()
        net.initialize(mx.init.Normal(0.5), device=default_device())
        x = np.random.normal(size=(5, 4))
        eager = net(x)
        net.hybridize()
        with autograd.record():
            out = net(x)
        out.backward()
        w = net.dense.weight.data().asnumpy()
        b = net.dense.bias.data().asnumpy()
        xn = x.asnumpy()
        pre = xn @ w.T + b
        assert_almost_equal(out, onp.maximum(pre, 0).sum(axis=1), rtol=1e-5, atol=1e-6)
        assert_almost_equal(eager, out, rtol=1e-6, atol=1e-6)
        # d(sum relu(x W^T + b))/dW = mask^T x, /db = mask summed over the batch.
        mask = (pre > 0).astype(onp.float32)
        assert_almost_equal(net.dense.weight.grad(), mask.T @ xn, rtol=1e-5, atol=1e-6)
        assert_almost_equal(net.dense.bias.grad(), mask.sum(axis=0), rtol=1e-5, atol=1e-6)
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        trainer.step(batch_size=5)
        assert_almost_equal(net.dense.weight.data(), w - 0.1 * (mask.T @ xn) / 5,
                            rtol=1e-5, atol=1e-6)
        assert_almost_equal(net.dense.bias.data(), b - 0.1 * mask.sum(axis=0) / 5,
                            rtol=1e-5, atol=1e-6)

    def test_rand_ndarray_as_np(self):
        a = rand_ndarray((3, 2)).as_np_ndarray()
        assert type(a) is np.ndarray and a.dtype == onp.float32
        assert_almost_equal(a * 2, a.asnumpy() * 2, use_broadcast=False)


def test_symbol_bind_executor_and_gradient_checks():
    data = mx.sym.var("data")
    weight = mx.sym.Variable("weight")
    out = mx.sym.tanh(mx.sym.matmul(data, weight))
    arg_shapes, out_shapes, aux_shapes = out.infer_shape(data=(2, 3), weight=(3, 4))
    assert arg_shapes == [(2, 3), (3, 4)] and out_shapes == [(2, 4)] and aux_shapes == []
    rng = onp.random.default_rng(0)
    dn, wn = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    grads = {"data": np.zeros((2, 3)), "weight": np.zeros((3, 4))}
    exe = out._bind(mx.cpu(), args={"data": np.array(dn), "weight": np.array(wn)},
                    args_grad=grads)
    outputs = exe.forward(is_train=True)
    assert_almost_equal(outputs[0], onp.tanh(dn @ wn), rtol=1e-5, atol=1e-6)
    head = rng.normal(size=(2, 4))
    exe.backward([np.array(head)])
    d = head * (1 - onp.tanh(dn @ wn) ** 2)
    assert_almost_equal(exe.grad_dict["data"], d @ wn.T, rtol=1e-4, atol=1e-5)
    assert_almost_equal(grads["weight"], dn.T @ d, rtol=1e-4, atol=1e-5)
    check_numeric_gradient(out, [dn, wn], numeric_eps=1e-3, rtol=1e-2, atol=1e-3)
    check_numeric_gradient(out, {"data": dn, "weight": wn}, dtype=onp.float64)
    check_symbolic_forward(out, [dn, wn], [onp.tanh(dn @ wn)])
    check_symbolic_backward(out, [dn, wn], [head], [d @ wn.T, dn.T @ d])
    sexe = out._simple_bind(mx.cpu(), data=(2, 3), weight=(3, 4))
    assert [a.shape for a in sexe.arg_arrays] == [(2, 3), (3, 4)]
    assert_almost_equal(sexe.forward()[0], onp.zeros((2, 4)))


def test_util_and_device_helpers():
    assert mx.current_context() == mx.cpu() == mx.context.current_context()
    assert mx.device.current_device() == mx.Context("cpu", 0)
    assert mx.util.np_ufunc_legal_option("casting", "same_kind")
    assert not mx.util.np_ufunc_legal_option("casting", "sometimes")
    assert mx.util.np_ufunc_legal_option("dtype", onp.float32)
    assert not mx.util.np_ufunc_legal_option("dtype", onp.complex64)
    assert not mx.util.np_ufunc_legal_option("colour", "red")
    with TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.txt")
        with open(path, "w") as f:
            f.write("x")
    assert not os.path.exists(tmp)
    assert "_np_add" in mx.operator.get_all_registered_operators()
    npx.set_np(dtype=True)
    try:
        assert np.ones((2,)).dtype == onp.float64
    finally:
        npx.set_np()
    assert np.ones((2,)).dtype == onp.float32
    with pytest.raises(ValueError, match="shape=False, array=True"):
        npx.set_np(shape=False, array=True)
    with pytest.raises(ValueError):
        mx.random.seed(1, device="tpu(0)")


def test_mxnet_module_spellings_import_under_ndx():
    """Code ported by renaming mxnet to ndx imports MXNet's module names (ndx.ndarray is
    ndx.nd, ndx.symbol is ndx.sym, ...), without alias_as_mxnet."""
    import importlib

    import ndx
    for spelled, module in [("ndx.ndarray", ndx.nd), ("ndx.symbol", ndx.sym),
                            ("ndx.visualization", ndx.viz), ("ndx.kv", ndx.kvstore),
                            ("ndx.init", ndx.initializer), ("ndx.ndarray.contrib", ndx.nd.contrib),
                            ("ndx.ndarray.random", ndx.nd.random)]:
        assert importlib.import_module(spelled) is module
    from ndx.ndarray import NDArray
    from ndx.symbol import Symbol
    assert NDArray is ndx.nd.NDArray and Symbol is ndx.sym.Symbol
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ndx.ndarray.no_such_module")


def test_engine_bulk_size_is_kept_and_restored():
    import ndx
    previous = ndx.engine.set_bulk_size(30)
    assert previous == 15  # MXNet's default
    with ndx.engine.bulk(5):
        assert ndx.engine.set_bulk_size(5) == 5
        x = ndx.np.ones((2, 2)) * 3  # ops run as usual inside
    assert x.asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert ndx.engine.set_bulk_size(previous) == 30
    with pytest.raises(TypeError, match="int"):
        ndx.engine.set_bulk_size(2.5)
    with pytest.raises(ValueError, match=">= 0"):
        ndx.engine.set_bulk_size(-1)
