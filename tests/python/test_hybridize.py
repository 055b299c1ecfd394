"""hybridize(): graph capture per input signature, the cached executor, export and
SymbolBlock.imports, graph JSON through ndx.sym; and the seeds' operator test template,
run hybridized and not."""
import itertools

import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np
from strict_checks import assert_almost_equal


def _mlp():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation="tanh"), gluon.nn.Dense(3))
    net.initialize(ndx.initializer.Xavier())
    return net


def _grads(net, x):
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    return {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()}


def test_hybridized_outputs_and_gradients_equal_imperative():
    x = np.array(onp.random.default_rng(0).normal(size=(5, 4)).astype(onp.float32))
    net = _mlp()
    out_imp, grads_imp = net(x).asnumpy(), _grads(net, x)
    net.hybridize()
    assert_almost_equal(net(x), out_imp, rtol=0, atol=0)
    assert len(net._graphs) == 1
    for k, g in _grads(net, x).items():
        assert_almost_equal(g, grads_imp[k], rtol=0, atol=0)
    assert len(net._graphs) == 2  # training mode is part of the signature
    # One graph per input signature: a new batch size traces again, the old one is reused.
    net(np.array(onp.ones((2, 4), dtype=onp.float32)))
    net(x)
    assert len(net._graphs) == 3


class Scale(gluon.HybridBlock):
    """A block in the seeds' hybrid_forward(F, x, **params) style."""

    def __init__(self):
        super().__init__()
        self.alpha = gluon.Parameter("alpha", shape=(1,), init=ndx.initializer.Constant(3.0))

    def hybrid_forward(self, F, x, alpha):
        return F.np.sin(x) * alpha + F.np.square(x)


def test_hybridized_block_follows_a_parameter_or_child_set_after_capture():
    """The graph's inputs are bound to Parameters once per signature; setting a parameter or
    a child afterwards rebinds them, so the next call reads the new one's values."""
    x = onp.random.default_rng(3).normal(size=(2, 4)).astype(onp.float32)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(3, in_units=4))
    net.initialize(ndx.initializer.Xavier())
    net.hybridize()
    net(np.array(x))
    other = gluon.nn.Dense(3, in_units=4)
    other.initialize(ndx.initializer.Constant(0.5))
    net[0].weight = other.weight
    w, b = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    assert_almost_equal(net(np.array(x)), x @ w.T + b, rtol=1e-6, atol=1e-6)
    other.bias.set_data(np.full((3,), 2.0))
    net.register_child(other, "0")
    assert_almost_equal(net(np.array(x)), x @ onp.full((3, 4), 0.5).T + 2.0, rtol=1e-6,
                        atol=1e-6)


def test_hybrid_forward_style_blocks():
    blk = Scale()
    blk.initialize()
    xn = onp.linspace(-1, 1, 6).reshape(2, 3)
    x = np.array(xn)
    ref = onp.sin(xn) * 3.0 + xn**2
    assert_almost_equal(blk(x), ref, rtol=1e-12)
    blk.hybridize()
    assert_almost_equal(blk(x), ref, rtol=1e-12)
    x.attach_grad()
    with autograd.record():
        y = blk(x).sum()
    y.backward()
    assert_almost_equal(x.grad, onp.cos(xn) * 3.0 + 2 * xn, rtol=1e-12)
    assert_almost_equal(blk.alpha.grad(), [onp.sin(xn).sum()], rtol=1e-6)


def test_export_imports_and_symbol_json(tmp_path):
    x = np.array(onp.random.default_rng(1).normal(size=(3, 4)).astype(onp.float32))
    net = _mlp()
    net.hybridize()
    ref = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "mlp"), epoch=7)
    assert params_file.endswith("-0007.params")  # MXNet's file names
    blk = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    assert_almost_equal(blk(x), ref, rtol=0, atol=0)
    s = ndx.sym.load(sym_file)
    assert s.list_arguments() == ["data", "0.weight", "0.bias", "1.weight", "1.bias"]
    shapes = {"data": (10, 4), "0.weight": (8, 4), "0.bias": (8,), "1.weight": (3, 8),
              "1.bias": (3,)}
    assert s.infer_shape(**shapes)[1] == [(10, 3)]
    assert ndx.sym.load_json(s.tojson()).tojson() == s.tojson()
    values = {k: p.data() for k, p in net.collect_params().items()}
    assert_almost_equal(s.eval(data=x, **values)[0], ref, rtol=0, atol=0)
    # as MXNet, the layers' weight shapes follow from the data's
    assert s.infer_shape(data=(1, 4)) == ([(1, 4), (8, 4), (8,), (3, 8), (3,)], [(1, 3)], [])
    with pytest.raises(ValueError, match="no shape"):
        s.infer_shape(**{"0.weight": (8, 4)})
    with pytest.raises(ValueError, match="invalid JSON at byte 1"):
        ndx.sym.load_json("{broken")
    with pytest.raises(RuntimeError, match="hybridize"):
        _mlp().export(str(tmp_path / "never_run"))
    with pytest.raises(ValueError, match="parameter"):
        gluon.SymbolBlock.imports(sym_file, ["data"])  # parameters missing


# The seeds' unit-test template: forward and backward, hybridized and not, scalar and
# zero-size shapes, against NumPy.
class OpBlock(gluon.HybridBlock):
    def __init__(self, name):
        super().__init__()
        self._name = name

    def hybrid_forward(self, F, a):
        return getattr(F.np, self._name)(a)


TEMPLATE_OPS = [
    ("sin", onp.sin, onp.cos),
    ("exp", onp.exp, onp.exp),
    ("tanh", onp.tanh, lambda v: 1 - onp.tanh(v) ** 2),
    ("square", onp.square, lambda v: 2 * v),
]


@pytest.mark.parametrize("name,ref,deriv", TEMPLATE_OPS, ids=[t[0] for t in TEMPLATE_OPS])
def test_seed_template(name, ref, deriv):
    shapes = [(), (2, 3), (0, 3), (1, 0, 2)]
    dtypes = ["float32", "float64"]
    for hybridize, shape, dtype in itertools.product([False, True], shapes, dtypes):
        rtol = 1e-3 if dtype == "float32" else 1e-10
        atol = 1e-5 if dtype == "float32" else 1e-12
        block = OpBlock(name)
        if hybridize:
            block.hybridize()
        xn = onp.random.uniform(-1.0, 1.0, size=shape).astype(dtype)
        x = np.array(xn)
        x.attach_grad()
        with autograd.record():
            out = block(x)
        assert out.shape == ref(xn).shape
        assert_almost_equal(out, ref(xn), rtol=rtol, atol=atol)
        out.backward()
        assert_almost_equal(x.grad, deriv(xn), rtol=rtol, atol=atol)
        assert_almost_equal(getattr(np, name)(x), ref(xn), rtol=rtol, atol=atol)


def test_a_read_only_input_view_traces_and_replays():
    # broadcast_to and diagonal return read-only views; the trace must not write into them.
    class Double(gluon.HybridBlock):
        def forward(self, x):
            return x * 2

    net = Double()
    net.hybridize()
    view = np.broadcast_to(np.array([1.0, 2.0]), (3, 2))
    for _ in range(2):
        onp.testing.assert_array_equal(net(view).asnumpy(), [[2.0, 4.0]] * 3)


@pytest.mark.parametrize("offset", [-2, 0, 1])
def test_diagonal_and_trace_trace_in_a_hybridized_block(offset):
    class Diag(gluon.HybridBlock):
        def forward(self, x):
            return np.diagonal(x, offset, 1, 2) + np.trace(x, offset, 1, 2)[..., None]

    x = onp.random.RandomState(0).randn(2, 4, 3).astype("float32")
    reference = onp.diagonal(x, offset, 1, 2) + onp.trace(x, offset, 1, 2)[..., None]
    net = Diag()
    net.hybridize()
    a = np.array(x)
    a.attach_grad()
    with autograd.record():
        out = net(a)
    out.backward()
    onp.testing.assert_allclose(out.asnumpy(), reference, rtol=1e-6)
    # Each diagonal element reaches the output once through diagonal and k times through trace.
    mask = onp.zeros(x.shape)
    positions = onp.diagonal(onp.arange(x.size).reshape(x.shape), offset, 1, 2)
    mask.ravel()[positions.ravel()] = 1.0
    onp.testing.assert_allclose(a.grad.asnumpy(), mask * (1 + positions.shape[-1]))


def test_random_draws_with_constant_parameters_are_fresh_on_every_replay():
    # np.zeros_like(x) is a constant of the trace; the draws from it must still be graph nodes.
    class Noisy(gluon.HybridBlock):
        def forward(self, x):
            return np.random.normal(np.zeros_like(x), 1.0) + np.random.gumbel(np.zeros_like(x))

    net = Noisy()
    net.hybridize()
    x = np.zeros(16)
    draws = [net(x).asnumpy() for _ in range(3)]
    assert not onp.array_equal(draws[0], draws[1])
    assert not onp.array_equal(draws[1], draws[2])


# ---- integer-array indexing by arrays the block gets as inputs -------------------------------
class _Indexer(gluon.HybridBlock):
    def __init__(self, key):
        super().__init__()
        self._key = key  # the key, with None where an input array goes (and Ellipsis, slices)

    def forward(self, x, *arrays):
        arrays = iter(arrays)
        key = tuple(next(arrays) if isinstance(k, str) else k for k in self._key)
        return x[key] * 1.0


_X_SHAPE = (4, 5, 6)
# "a:<axis>:<shape>": an index array for that axis of x. Keys mix slices, ints, None and
# Ellipsis with one or more arrays (adjacent or not: NumPy's two layouts), broadcasting.
_KEYS = [
    ("a:0:3",), ("a:0:2x3",), (slice(None), "a:1:3"), (slice(1, 4), "a:1:2", slice(None, None, 2)),
    ("a:0:3", "a:1:3"), ("a:0:2x1", "a:1:3"), ("a:0:3", slice(None), "a:2:3"), (Ellipsis, "a:2:2"),
    ("a:0:3", Ellipsis), (None, "a:0:3"), ("a:0:3", None, "a:1:3"), (1, "a:1:3"), ("a:0:3", 2),
    ("a:0:3", slice(None), 2), (slice(None, None, -1), "a:1:2x2", "a:2:2x2"), ("a:0:", "a:1:3"),
    ("a:0:", "a:1:", "a:2:"), (slice(1, None), "a:1:4", None), (0, slice(None), "a:2:2"),
    (Ellipsis, "a:1:2", "a:2:2"), ("a:0:0",),
]


def _index_arrays(key, rng):
    arrays = []
    for k in key:
        if isinstance(k, str):
            _, axis, shape = k.split(":")
            n = _X_SHAPE[int(axis)]
            dims = tuple(int(d) for d in shape.split("x")) if shape else ()
            arrays.append(rng.integers(-n, n, size=dims))
    return arrays


def _numpy_key(key, arrays):
    arrays = iter(arrays)
    return tuple(next(arrays) if isinstance(k, str) else k for k in key)


@pytest.mark.parametrize("key", _KEYS, ids=[str(i) for i in range(len(_KEYS))])
def test_integer_array_indexing_by_block_inputs_matches_numpy(key):
    rng = onp.random.default_rng(0)
    x = rng.standard_normal(_X_SHAPE).astype("float32")
    net = _Indexer(key)
    net.hybridize()
    for _ in range(2):  # new index values each call: the graph reads them when it runs
        arrays = _index_arrays(key, rng)
        expected = x[_numpy_key(key, arrays)]
        head = onp.asarray(rng.standard_normal(expected.shape), dtype="float32")
        a = np.array(x)
        a.attach_grad()
        with autograd.record():
            out = net(a, *[np.array(i) for i in arrays])
        out.backward(np.array(head))
        onp.testing.assert_allclose(out.asnumpy(), expected)
        grad = onp.zeros_like(x)
        onp.add.at(grad, _numpy_key(key, arrays), head)
        onp.testing.assert_allclose(a.grad.asnumpy(), grad, rtol=1e-6, atol=1e-6)


def test_traced_index_arrays_check_their_range_and_refuse_input_masks():
    net = _Indexer(("i", "j"))
    net.hybridize()
    x = np.zeros((3, 4))
    net(x, np.array([0, 1]), np.array([1, 2]))
    with pytest.raises(IndexError, match="out of bounds"):
        net(x, np.array([0, 3]), np.array([1, 2]))

    class Masked(gluon.HybridBlock):
        def forward(self, x):
            return x[x > 0]

    masked = Masked()
    masked.hybridize()
    with pytest.raises(NotImplementedError, match="boolean mask"):
        masked(np.ones(3))
    # NumPy's IndexError for float index arrays, as imperatively.
    floats = _Indexer(("i",))
    floats.hybridize()
    with pytest.raises(IndexError, match="integer"):
        floats(x, np.array([0.0, 1.0]))


def test_a_constant_table_indexed_by_a_block_input_is_not_frozen():
    class Lookup(gluon.HybridBlock):
        def forward(self, i):
            return np.arange(10.0)[i] * 2

    net = Lookup()
    net.hybridize()
    onp.testing.assert_array_equal(net(np.array([1, 2])).asnumpy(), [2.0, 4.0])
    onp.testing.assert_array_equal(net(np.array([5, 6])).asnumpy(), [10.0, 12.0])


def test_hybridized_blocks_deepcopy_and_pickle(tmp_path):
    """copy.deepcopy / pickle of a hybridized block (EMA models, best-model snapshots): the
    captured graphs are left out and traced again; the copy computes what the original did
    and owns its parameters. A SymbolBlock carries its graph as JSON."""
    import copy
    import pickle

    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, in_channels=2), gluon.nn.BatchNorm(in_channels=4),
            gluon.nn.Activation("relu"), gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    x = np.array(onp.random.default_rng(0).standard_normal((2, 2, 6, 6)).astype("float32"))
    want = net(x).asnumpy()
    for twin in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        onp.testing.assert_array_equal(twin(x).asnumpy(), want)
        for p in twin.collect_params().values():  # the twin's parameters are its own
            p.data()[:] = 0
        assert onp.abs(twin(x).asnumpy()).max() == 0
        onp.testing.assert_array_equal(net(x).asnumpy(), want)
    net.export(str(tmp_path / "net"))
    sb = gluon.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"],
                                   str(tmp_path / "net-0000.params"))
    for twin in (copy.deepcopy(sb), pickle.loads(pickle.dumps(sb))):
        onp.testing.assert_array_equal(twin(x).asnumpy(), want)
