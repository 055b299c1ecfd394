"""Small MXNet behaviours: HybridBlock.export's input names ('data' for one input, 'data0',
'data1', ... for several) and parameter names ('arg:' / 'aux:' + structured name), the
documented SymbolBlock.imports call, np.arange with step=None, np.full with an array
fill_value and npx.slice with None bounds. References: NumPy, MXNet's documented examples
and hand computations."""
import json

import numpy as onp
import pytest

from ndx import autograd, gluon, np, npx
from ndx.gluon.serialization import load_arrays


class TwoInputs(gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        self.dense = gluon.nn.Dense(3, in_units=4)

    def forward(self, x, y):
        return self.dense(x) * y


def _net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(5, in_units=4), gluon.nn.BatchNorm(in_channels=5),
            gluon.nn.Dense(2, in_units=5))
    net.initialize()
    return net


def _graph_inputs(sym_file):
    doc = json.load(open(sym_file))
    return [doc["nodes"][i]["name"] for i in doc["arg_nodes"]]


def test_export_names_a_single_input_data_and_imports_round_trips(tmp_path):
    net = _net()
    net.hybridize()
    x = np.array(onp.random.default_rng(0).normal(size=(6, 4)).astype(onp.float32))
    ref = net(x).asnumpy()
    path = str(tmp_path / "net")
    sym_file, params_file = net.export(path, 0, True)  # MXNet's (path, epoch, remove_amp_cast)
    assert (sym_file, params_file) == (f"{path}-symbol.json", f"{path}-0000.params")
    assert _graph_inputs(sym_file)[0] == "data"
    # MXNet 2.0 names the exported parameters 'arg:<structured name>', and 'aux:' for the
    # auxiliary states (BatchNorm's running statistics).
    _, names = load_arrays(params_file)
    assert names == ["arg:0.weight", "arg:0.bias", "arg:1.gamma", "arg:1.beta",
                     "aux:1.running_mean", "aux:1.running_var", "arg:2.weight", "arg:2.bias"]
    # MXNet's documented call: imports('net-symbol.json', ['data'], 'net-0000.params')
    blk = gluon.SymbolBlock.imports(f"{path}-symbol.json", ["data"], f"{path}-0000.params")
    onp.testing.assert_array_equal(blk(x).asnumpy(), ref)
    onp.testing.assert_array_equal(gluon.SymbolBlock.imports(sym_file, "data",
                                                             params_file)(x).asnumpy(), ref)
    for name, p in net.collect_params().items():  # parameters keep their saved values
        onp.testing.assert_array_equal(blk._reg_params[name].data().asnumpy(),
                                       p.data().asnumpy())


def test_export_names_several_inputs_data0_data1(tmp_path):
    blk = TwoInputs()
    blk.initialize()
    blk.hybridize()
    rng = onp.random.default_rng(1)
    x = np.array(rng.normal(size=(2, 4)).astype(onp.float32))
    y = np.array(rng.normal(size=(2, 3)).astype(onp.float32))
    ref = blk(x, y).asnumpy()
    w, b = blk.dense.weight.data().asnumpy(), blk.dense.bias.data().asnumpy()
    onp.testing.assert_allclose(ref, (x.asnumpy() @ w.T + b) * y.asnumpy(), rtol=1e-6,
                                atol=1e-6)  # (float32 sums of four terms: near-cancellation)
    sym_file, params_file = blk.export(str(tmp_path / "two"), epoch=3)
    assert params_file.endswith("two-0003.params")
    assert _graph_inputs(sym_file) == ["data0", "dense.weight", "dense.bias", "data1"]
    back = gluon.SymbolBlock.imports(sym_file, ["data0", "data1"], params_file)
    onp.testing.assert_array_equal(back(x, y).asnumpy(), ref)
    with pytest.raises(ValueError, match="expected 2 inputs"):
        back(x)


def test_graphs_exported_with_data0_still_import(tmp_path):
    net = _net()
    net.hybridize()
    x = np.array(onp.ones((2, 4), onp.float32))
    ref = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "net"))
    doc = json.load(open(sym_file))
    doc["nodes"][doc["arg_nodes"][0]]["name"] = "data0"  # as ndx named it before
    old = str(tmp_path / "old-symbol.json")
    json.dump(doc, open(old, "w"))
    for names in (["data"], ["data0"]):
        onp.testing.assert_array_equal(
            gluon.SymbolBlock.imports(old, names, params_file)(x).asnumpy(), ref)
    onp.testing.assert_array_equal(
        gluon.SymbolBlock.imports(sym_file, ["data0"], params_file)(x).asnumpy(), ref)


def test_imports_checks_names_and_parameters(tmp_path):
    net = _net()
    net.hybridize()
    x = np.array(onp.ones((2, 4), onp.float32))
    ref = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "net"))
    with pytest.raises(ValueError, match="'input' is not an input of the graph"):
        gluon.SymbolBlock.imports(sym_file, ["input"], params_file)
    with pytest.raises(TypeError, match="input names must be strings"):
        gluon.SymbolBlock.imports(sym_file, [0], params_file)
    # A file with a parameter the graph does not use: MXNet's ignore_extra.
    extra = str(tmp_path / "extra.params")
    bigger = _net()
    bigger.add(gluon.nn.Dense(1, in_units=2))
    bigger.initialize()
    for (name, p), q in zip(bigger.collect_params().items(), net.collect_params().values()):
        if name != "3.weight" and name != "3.bias":
            p.set_data(q.data())
    bigger.save_parameters(extra)
    with pytest.raises(ValueError, match="does not use"):
        gluon.SymbolBlock.imports(sym_file, ["data"], extra)
    blk = gluon.SymbolBlock.imports(sym_file, ["data"], extra, ignore_extra=True)
    onp.testing.assert_array_equal(blk(x).asnumpy(), ref)
    # A file that lacks one: an error unless allow_missing, and then it has no value.
    partial = str(tmp_path / "partial.params")
    small = gluon.nn.HybridSequential()
    small.add(gluon.nn.Dense(5, in_units=4))
    small.initialize()
    small.save_parameters(partial)
    with pytest.raises(ValueError, match="needs parameter '1.gamma'"):
        gluon.SymbolBlock.imports(sym_file, ["data"], partial)
    blk = gluon.SymbolBlock.imports(sym_file, ["data"], partial, allow_missing=True)
    with pytest.raises(RuntimeError, match="1.gamma"):
        blk(x)


# ---- np.arange(start, stop, step=None) ----------------------------------------------------

@pytest.mark.parametrize("args", [(0, 5, None), (2, 9, None), (1.5, 4, None), (-3, 3, None),
                                  (5, 0, None)])
def test_arange_step_none_is_one(args):
    got = np.arange(*args)
    ref = onp.arange(*args)
    onp.testing.assert_allclose(got.asnumpy(), ref, rtol=0, atol=1e-6)
    assert got.dtype == ("int64" if ref.dtype.kind == "i" else "float32")
    onp.testing.assert_array_equal(np.arange(args[0], args[1], step=None).asnumpy(),
                                   got.asnumpy())
    onp.testing.assert_array_equal(np.arange(7, step=None).asnumpy(), onp.arange(7))


# ---- np.full(shape, fill_value=<array>) ---------------------------------------------------

@pytest.mark.parametrize("shape, fill, dtype", [
    ((2, 3), onp.array(2.5, onp.float32), None),
    ((2, 3), onp.array([1, 2, 3], onp.int32), None),
    ((4, 2, 3), onp.array([[1.5], [2.5]], onp.float32), None),
    ((2, 3), onp.array([1.7, -2.2, 3.9], onp.float32), "int32"),
    ((3,), onp.array([True, False, True]), None),
    ((0, 3), onp.array([1.0, 2.0, 3.0], onp.float32), None),
    ((), onp.array(7, onp.int64), "float32"),
    (5, onp.array(1.25, onp.float64), None),
])
def test_full_takes_an_array_fill_value(shape, fill, dtype):
    got = np.full(shape, np.array(fill), dtype=dtype)
    ref = onp.full(shape, fill, dtype=dtype)  # NumPy: broadcast, the fill's dtype by default
    assert got.shape == ref.shape and str(got.dtype) == str(ref.dtype)
    onp.testing.assert_array_equal(got.asnumpy(), ref)
    if got.size:  # a fresh array: writing it leaves the fill alone
        fill_nd = np.array(fill)
        out = np.full(shape, fill_nd)
        out[(0,) * out.ndim] = 0
        onp.testing.assert_array_equal(fill_nd.asnumpy(), fill)


def test_full_with_lists_and_numpy_arrays_and_errors():
    onp.testing.assert_array_equal(np.full((2, 2), [1, 2]).asnumpy(), onp.full((2, 2), [1, 2]))
    onp.testing.assert_array_equal(np.full((2, 2), onp.array([3.0, 4.0])).asnumpy(),
                                   onp.full((2, 2), onp.array([3.0, 4.0])))
    with pytest.raises(ValueError, match=r"\[full\] fill_value of shape \(2,\) cannot be "
                                         r"broadcast to shape \(2, 3\)"):
        np.full((2, 3), np.array([1.0, 2.0]))


def test_full_records_the_fill_for_autograd():
    v = np.array([1.0, 2.0])
    v.attach_grad()
    w = onp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with autograd.record():
        y = (np.full((3, 2), v) * np.array(w)).sum()
    y.backward()
    onp.testing.assert_allclose(v.grad.asnumpy(), w.sum(axis=0))  # d/dv sum(v * w)


# ---- npx.slice with None entries -----------------------------------------------------------

def test_npx_slice_documented_examples():
    # MXNet's slice documentation: x = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
    x = np.array([[1.0, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
    onp.testing.assert_array_equal(npx.slice(x, begin=(0, 1), end=(2, 4)).asnumpy(),
                                   [[2, 3, 4], [6, 7, 8]])
    onp.testing.assert_array_equal(
        npx.slice(x, begin=(None, 0), end=(None, 3), step=(-1, 2)).asnumpy(),
        [[9, 11], [5, 7], [1, 3]])


@pytest.mark.parametrize("begin, end, step, ref", [
    ((0, 1), (2, 3), None, (slice(0, 2), slice(1, 3))),
    ((None,), (2,), None, (slice(None, 2),)),
    ((1, None), (None, None), (None, 2), (slice(1, None), slice(None, None, 2))),
    ((None, None, None), (None, None, None), (None, -1, None),
     (slice(None), slice(None, None, -1), slice(None))),
    ((-1, -2), (None, 0), (-1, -1), (slice(-1, None, -1), slice(-2, 0, -1))),
    ((0,), (5,), (1,), (slice(0, 5, 1),)),
])
def test_npx_slice_none_bounds_match_python_slicing(begin, end, step, ref):
    xn = onp.arange(60.0).reshape(3, 4, 5)
    got = npx.slice(np.array(xn), begin, end, step)
    onp.testing.assert_array_equal(got.asnumpy(), xn[ref])


def test_npx_slice_gradient_and_hybridized():
    xn = onp.arange(12.0).reshape(3, 4)
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = (npx.slice(x, (None, 1), (None, None), (2, None)) * 3).sum()
    y.backward()
    ref = onp.zeros((3, 4))
    ref[::2, 1:] = 3
    onp.testing.assert_array_equal(x.grad.asnumpy(), ref)

    class Crop(gluon.HybridBlock):
        def forward(self, a):
            return npx.slice(a, (None, 1), (None, -1), step=None)

    blk = Crop()
    blk.hybridize()
    onp.testing.assert_array_equal(blk(np.array(xn)).asnumpy(), xn[:, 1:-1])
    onp.testing.assert_array_equal(blk(np.array(xn)).asnumpy(), xn[:, 1:-1])  # replayed


def test_npx_slice_errors():
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match=r"\[slice\] begin must be"):
        npx.slice(x, "a", (1,))
    with pytest.raises(TypeError, match=r"\[slice\] step entries must be integers"):
        npx.slice(x, (0,), (1,), (1.5,))
    with pytest.raises(ValueError, match="step cannot be zero"):
        npx.slice(x, (0,), (1,), (0,))
    with pytest.raises(ValueError, match="same length"):
        npx.slice(x, (0, 0), (1,))
    with pytest.raises(IndexError, match="3 axes sliced"):
        npx.slice(x, (0, 0, 0), (1, 1, 1))


_MAKERS = [
    lambda **kw: np.zeros((2, 3), **kw), lambda **kw: np.ones(4, **kw),
    lambda **kw: np.empty((1,), **kw), lambda **kw: np.full((2,), 7.0, **kw),
    lambda **kw: np.array([1.0, 2.0], **kw), lambda **kw: np.asarray([3], **kw),
    lambda **kw: np.arange(5, **kw), lambda **kw: np.linspace(0, 1, 3, **kw),
    lambda **kw: np.eye(2, **kw)]


@pytest.mark.parametrize("make", _MAKERS)
def test_creation_takes_mxnet_1x_ctx_keyword(make):
    # MXNet 1.x's numpy functions named the device ctx=; the values are those without it
    want = make()
    got = make(ctx=npx.cpu())
    assert got.device == want.device and got.dtype == want.dtype
    assert got.shape == want.shape
    if make is not _MAKERS[2]:  # (empty's values are not set)
        assert got.asnumpy().tolist() == want.asnumpy().tolist()
    with pytest.raises(TypeError, match="ctx="):
        make(ctx=npx.cpu(), device=npx.cpu())


def test_context_is_the_arrays_device():
    a = np.ones(3)
    assert a.context == a.ctx == a.device
