"""ndx.viz.plot_network: the graph's ops, output shapes and parameter counts, against shapes
and counts worked out by hand for a small network."""
import pytest

import ndx
from ndx import gluon, np, viz


def _mlp_symbol(tmp_path):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu", in_units=8), gluon.nn.Dense(3, in_units=16))
    net.initialize()
    net.hybridize()
    net(np.ones((4, 8)))
    sym_file, _ = net.export(str(tmp_path / "mlp"))
    params = {name: p.shape for name, p in net.collect_params().items()}
    return ndx.sym.load(sym_file), params


def test_output_shapes_of_every_op(tmp_path):
    symbol, params = _mlp_symbol(tmp_path)
    import json
    doc = json.loads(symbol.tojson())
    shapes = viz.node_output_shapes(doc, dict(params, data=(4, 8)))
    by_op = [(doc["nodes"][i]["op"], s) for i, s in sorted(shapes.items())]
    # Dense(16) on (4, 8) -> (4, 16), relu keeps it, Dense(3) -> (4, 3)
    assert [s for _, s in by_op] == [(4, 16), (4, 16), (4, 3)]
    # the weights' shapes follow from the data's (MXNet's plot_network needs only data's)
    assert viz.node_output_shapes(doc, {"data": (4, 8)}) == shapes
    assert viz.node_output_shapes(doc, {"other": (4, 8)}) == {}


def test_picture_labels_carry_shapes_and_parameter_counts(tmp_path):
    pytest.importorskip("graphviz")  # requirements-dev.txt
    symbol, params = _mlp_symbol(tmp_path)
    dot = viz.plot_network(symbol, title="mlp", shape=dict(params, data=(4, 8)))
    source = dot.source
    # 8 * 16 + 16 = 144 and 16 * 3 + 3 = 51 parameters, by hand
    assert "144 params" in source and "51 params" in source
    assert "4x16" in source and "4x3" in source
    assert "num_hidden=16" in source
    plain = viz.plot_network(symbol, title="mlp").source
    assert "params" not in plain and "4x16" not in plain


def test_an_exported_flatten_serves_other_batch_sizes(tmp_path):
    # Flatten traced as reshape(x.shape[0], -1) baked the traced batch size into the graph,
    # so the exported network failed on any other batch size.
    import numpy as onp
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(2, 3, in_channels=1), gluon.nn.Flatten(), gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    net(np.ones((5, 1, 6, 6)))
    sym_file, params_file = net.export(str(tmp_path / "cnn"))
    loaded = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    x = np.array(onp.random.default_rng(0).random((2, 1, 6, 6), dtype="float32"))
    assert onp.allclose(loaded(x).asnumpy(), net(x).asnumpy(), rtol=1e-5, atol=1e-6)
    assert gluon.nn.Flatten()(np.ones((4, 2, 3))).shape == (4, 6)
    assert gluon.nn.Flatten()(np.ones(4)).shape == (4, 1)
    with pytest.raises(ValueError, match="Flatten"):
        gluon.nn.Flatten()(np.array(1.0))
