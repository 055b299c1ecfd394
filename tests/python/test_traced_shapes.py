"""Graphs traced from a hybridized block serve inputs of other shapes: ops whose output shape
the trace would otherwise bake in (legacy Flatten and reshape codes, npx.batch_flatten,
expand_dims, basic indexing with None or integers) keep codes or axes in the graph, so an
exported model runs at every batch size. Reference: the same function called imperatively
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
