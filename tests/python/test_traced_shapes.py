"""Graphs traced from a hybridized block serve inputs of other shapes: ops whose output shape
the trace would otherwise bake in (legacy Flatten and reshape codes, npx.batch_flatten,
expand_dims, basic indexing with None or integers, zeros_like / ones_like / full_like, the
legacy samplers) keep codes, axes or shape-reading ops in the graph, so an exported model runs
at every batch size. Reference: the same function called imperatively
(and NumPy) on the new shape."""
import numpy as onp
import pytest

from ndx import autograd, gluon, nd, np, npx


class Fn(gluon.HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


CASES = [
    ("nd.flatten", lambda x: nd.flatten(x.as_nd_ndarray()), lambda a: a.reshape(len(a), -1)),
    ("nd.reshape (0, -1)", lambda x: nd.reshape(x.as_nd_ndarray(), (0, -1)),
     lambda a: a.reshape(len(a), -1)),
    ("nd.reshape (-3, -2)", lambda x: nd.reshape(x.as_nd_ndarray(), (-3, -2)),
     lambda a: a.reshape((a.shape[0] * a.shape[1],) + a.shape[2:])),
    ("nd.reshape (-4, -1, 1, -2)", lambda x: nd.reshape(x.as_nd_ndarray(), (-4, -1, 1, -2)),
     lambda a: a.reshape((a.shape[0], 1) + a.shape[1:])),
    ("npx.batch_flatten", npx.batch_flatten, lambda a: a.reshape(len(a), -1)),
    ("np.expand_dims", lambda x: np.expand_dims(x, 1), lambda a: onp.expand_dims(a, 1)),
    ("x[:, None]", lambda x: x[:, None], lambda a: a[:, None]),
    ("x[..., None, :]", lambda x: x[..., None, :], lambda a: a[..., None, :]),
    ("x[:, -1]", lambda x: x[:, -1], lambda a: a[:, -1]),
    ("x[:, 1, None]", lambda x: x[:, 1, None], lambda a: a[:, 1, None]),
    ("x[None, :, -2]", lambda x: x[None, :, -2], lambda a: a[None, :, -2]),
    ("x[-1]", lambda x: x[-1], lambda a: a[-1]),
    ("np.zeros_like", lambda x: np.zeros_like(x[:, 0]), lambda a: onp.zeros_like(a[:, 0])),
    ("np.ones_like int32", lambda x: np.ones_like(x, dtype="int32"),
     lambda a: onp.ones_like(a, dtype="int32")),
    ("np.full_like", lambda x: np.full_like(x, 2.5) * x, lambda a: onp.full_like(a, 2.5) * a),
    ("x[-2:]", lambda x: x[-2:], lambda a: a[-2:]),
]


@pytest.mark.parametrize("fn,ref", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_exported_graph_serves_other_batch_sizes(tmp_path, fn, ref):
    block = Fn(fn)
    block.hybridize()
    x4 = onp.arange(4 * 3 * 2, dtype=onp.float32).reshape(4, 3, 2)
    block(np.array(x4))
    path = str(tmp_path / "m")
    block.export(path)
    imported = gluon.SymbolBlock.imports(path + "-symbol.json", ["data"])
    for n in (2, 5, 4):
        xn = onp.arange(n * 3 * 2, dtype=onp.float32).reshape(n, 3, 2) - 7
        want = ref(xn)
        for got in (imported(np.array(xn)), block(np.array(xn))):
            got = got.asnumpy()
            assert got.shape == want.shape
            onp.testing.assert_array_equal(got, want)


def test_indexing_with_none_and_integers_is_differentiable():
    xn = onp.random.default_rng(0).normal(size=(3, 4, 2))
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = x[:, None, -1] * 2 + x[1, None]
    y.backward()
    # y = x[:, None, -1] * 2 + x[1, None]: shapes (3, 1, 2) and (1, 4, 2) broadcast to
    # (3, 4, 2); each x[:, -1] element is read by 4 outputs (times 2), each x[1] element by 3.
    want = onp.zeros_like(xn)
    want[:, -1] += 4 * 2
    want[1] += 3
    onp.testing.assert_allclose(x.grad.asnumpy(), want)


class Two(gluon.HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, a, b):
        return self.fn(a, b)


def _affine(n, seed):
    rng = onp.random.default_rng(seed)
    eye = onp.array([1, 0, 0, 0, 1, 0], "float32")
    return (eye + rng.normal(0, 0.2, (n, 6))).astype("float32")


SAMPLERS = [
    ("SpatialTransformer",
     lambda d, t: nd.SpatialTransformer(d.as_nd_ndarray(), t.as_nd_ndarray(),
                                        target_shape=(3, 4)),
     lambda n: (_f32((n, 2, 5, 6), n), _affine(n, n))),
    ("BilinearSampler(GridGenerator affine)",
     lambda d, t: nd.BilinearSampler(d.as_nd_ndarray(), nd.GridGenerator(
         t.as_nd_ndarray(), transform_type="affine", target_shape=(4, 3))),
     lambda n: (_f32((n, 3, 5, 5), n), _affine(n, n + 1))),
    ("BilinearSampler(GridGenerator warp)",
     lambda d, f: nd.BilinearSampler(d.as_nd_ndarray(), nd.GridGenerator(
         f.as_nd_ndarray(), transform_type="warp")),
     lambda n: (_f32((n, 2, 4, 5), n), _f32((n, 2, 4, 5), n + 2))),
]


def _f32(shape, seed):
    return onp.random.default_rng(seed).normal(size=shape).astype("float32")


@pytest.mark.parametrize("fn,make", [c[1:] for c in SAMPLERS], ids=[c[0] for c in SAMPLERS])
def test_exported_samplers_serve_other_batch_sizes(tmp_path, fn, make):
    block = Two(fn)
    block.hybridize()
    block(*[np.array(v) for v in make(4)])
    path = str(tmp_path / "s")
    block.export(path)
    imported = gluon.SymbolBlock.imports(path + "-symbol.json", ["data0", "data1"])
    for n in (2, 5):
        values = make(n)
        want = fn(*[np.array(v) for v in values]).asnumpy()  # imperative
        got = imported(*[np.array(v) for v in values]).asnumpy()
        assert got.shape == want.shape and got.shape[0] == n
        onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
