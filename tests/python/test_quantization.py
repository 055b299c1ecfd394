"""mx.contrib.quantization (python/ndx/contrib/quantization.py): the calibration statistics
(the KL-optimal threshold against a direct scipy.stats.entropy loop written here, min / max
and histograms against NumPy), BatchNorm folding against the float network, and whole
networks quantized to INT8 against their float32 outputs (the graph's quantized ops and int8
weights read from its JSON), with exclusions, export / import, the symbol API, custom
collectors and the argument errors."""
import json
import logging

import numpy as onp
import pytest

import ndx as mx
from ndx import gluon, np, npx
from ndx.contrib import quantization as qz
from ndx.gluon import nn

EPS = 1e-4  # the smoothing of the KL divergence (the module's documented algorithm)


# ------------------------------------------------------------------------------ references
def _smooth(v):
    """v normalized, zeros replaced by EPS, renormalized."""
    v = onp.asarray(v, dtype=onp.float64)
    v = v / v.sum()
    zero = v == 0
    return onp.where(zero, EPS, v) / (1 + EPS * zero.sum())


def _kl_threshold_reference(hist, edges, num_quantized_bins):
    """(threshold, divergence) by a direct loop: for each candidate window of 2i + 1 middle
    bins, P = the window with the outside counts added to its end bins, Q = the window's
    counts merged into num_quantized_bins groups (the last takes the rest) and spread back
    evenly over each group's nonzero bins; KL(P || Q) by scipy.stats.entropy after
    smoothing."""
    from scipy import stats
    hist = onp.asarray(hist, dtype=onp.float64)
    n, nq = len(hist), num_quantized_bins
    zero = n // 2
    best_t, best_d = None, onp.inf
    for i in range(nq // 2, zero + 1):
        lo, hi = zero - i, zero + i + 1
        kept = hist[lo:hi]
        p = kept.copy()
        p[0] += hist[:lo].sum()
        p[-1] += hist[hi:].sum()
        group = onp.minimum(onp.arange(hi - lo) // ((hi - lo) // nq), nq - 1)
        sums = onp.bincount(group, weights=kept, minlength=nq)
        nonzero = onp.bincount(group, weights=(kept > 0).astype(float), minlength=nq)
        q = onp.where(kept > 0, sums[group] / onp.maximum(nonzero[group], 1), 0.0)
        if q.sum() == 0:
            continue
        d = stats.entropy(_smooth(p), _smooth(q))
        if d < best_d:
            best_t, best_d = edges[hi], d
    return best_t, best_d


def _histogram_of(batches, quantized_dtype="int8", num_bins=8001):
    col = qz._LayerHistogramCollector(quantized_dtype, num_bins=num_bins,
                                      include_layers=["x"])
    for b in batches:
        col.collect("x", "op", np.array(onp.asarray(b, dtype=onp.float32)))
    return col


# ----------------------------------------------------------------- calibration statistics
def test_entropy_threshold_matches_direct_kl_and_ignores_outliers():
    pytest.importorskip("scipy")
    rng = onp.random.default_rng(0)
    data = [rng.normal(size=10000).astype(onp.float32) for _ in range(2)]
    data[0][:4] = [30.0, -35.0, 40.0, 38.0]  # a few large outliers
    col = _histogram_of(data)
    hist, edges, lo, hi, th = col.hist_dict["x"]
    width = edges[1] - edges[0]
    assert (lo, hi, th) == (-35.0, 40.0, 40.0) and width == pytest.approx(80 / 8001)
    assert len(hist) % 2 == 1 and hist.sum() == 20000
    ref_t, ref_d = _kl_threshold_reference(hist, edges, 255)
    _, _, t, d = qz._get_optimal_threshold(col.hist_dict["x"], "int8")
    assert t == pytest.approx(ref_t, rel=1e-12)
    assert d == pytest.approx(ref_d, rel=1e-6)
    assert 2.0 < t < 0.25 * 40.0  # the Gaussian's bulk, far below the outliers
    assert col.post_collect() == {"x": (-t, t)}


def test_entropy_threshold_nonnegative_data_uses_the_positive_half():
    pytest.importorskip("scipy")
    rng = onp.random.default_rng(1)
    x = onp.maximum(rng.normal(size=20000), 0).astype(onp.float32)
    x[:3] = [25.0, 30.0, 22.0]
    for dtype, levels in (("auto", 511), ("uint8", 511), ("int8", 255)):
        col = _histogram_of([x], dtype, num_bins=2001)
        hist, edges = col.hist_dict["x"][:2]
        ref_t, _ = _kl_threshold_reference(hist, edges, levels)
        t = qz._get_optimal_threshold(col.hist_dict["x"], dtype)[2]
        assert t == pytest.approx(ref_t, rel=1e-12)
        lo, hi = col.post_collect()["x"]
        assert hi == t and lo == (0.0 if dtype != "int8" else -t)
        assert t < 0.5 * 30.0


def test_naive_collector_is_numpy_min_max_over_all_batches():
    rng = onp.random.default_rng(2)
    batches = [rng.normal(size=(4, 5)) * s + o for s, o in ((1, 0), (3, 2), (0.5, -4))]
    col = qz._LayerOutputMinMaxCollector("int8", include_layers=["a"])
    for b in batches:
        col.collect("a", "op", np.array(b.astype(onp.float32)))
        col.collect("ignored", "op", np.array(b * 100))
    lo, hi = col.post_collect()["a"]
    allx = onp.concatenate([b.ravel() for b in batches]).astype(onp.float32)
    assert (lo, hi) == (float(allx.min()), float(allx.max()))
    assert list(col.min_max_dict) == ["a"]


def test_combine_histogram_keeps_counts_and_matches_numpy_on_growing_ranges():
    rng = onp.random.default_rng(3)
    batches = [rng.normal(size=3000) * s for s in (1.0, 0.5, 2.5, 7.0)]
    col = _histogram_of(batches, num_bins=101)
    hist, edges, lo, hi, th = col.hist_dict["x"]
    allx = onp.concatenate(batches).astype(onp.float32)
    assert hist.sum() == allx.size
    assert (lo, hi) == (float(allx.min()), float(allx.max()))
    assert th >= onp.abs(allx).max()
    # the bins keep the first batch's width, grown by whole bins on each side
    width = 2 * float(onp.abs(batches[0].astype(onp.float32)).max()) / 101
    assert len(hist) % 2 == 1 and len(hist) > 101
    assert (edges[1] - edges[0]) == pytest.approx(width, rel=1e-9)
    ref, ref_edges = onp.histogram(allx.astype(onp.float64), bins=len(hist), range=(-th, th))
    onp.testing.assert_array_equal(edges, ref_edges)
    # NumPy's last bin holds its upper edge: the first batch's largest |x| (its edge) stays in
    # the bin below that edge once the range grows, where one histogram of all the data puts
    # it in the bin above
    th0 = onp.abs(batches[0].astype(onp.float32)).max()
    diff = hist - ref
    assert diff.sum() == 0
    on_edge = onp.sum(onp.abs(allx) == th0)
    edge_bins = {int(onp.argmin(onp.abs(edges - s * th0))) + k for s in (-1, 1)
                 for k in (-1, 0)}
    assert set(onp.nonzero(diff)[0]) <= edge_bins and onp.abs(diff).sum() <= 2 * on_edge
    # a direct call: a narrower batch lands in the existing bins
    old = (onp.array([1, 2, 3]), onp.array([-1.5, -0.5, 0.5, 1.5]), -1.0, 1.0, 1.5)
    out = qz.combine_histogram(old, onp.array([0.2, -0.9, 1.2]), -0.9, 1.2, 1.2)
    assert out[0].tolist() == [2, 3, 4] and out[4] == 1.5


# ---------------------------------------------------------------------- small test networks
def _set_params(net, seed, bn_stats=True):
    """Seeded He-scaled weights, small biases and non-trivial BatchNorm parameters."""
    rng = onp.random.default_rng(seed)
    for name, p in net.collect_params().items():
        shape = p.shape
        if name.endswith("weight"):
            fan_in = int(onp.prod(shape[1:]))
            v = rng.normal(size=shape) * onp.sqrt(2.0 / fan_in)
        elif name.endswith("bias") or name.endswith("beta"):
            v = rng.normal(size=shape) * 0.1
        elif name.endswith("gamma"):
            v = rng.uniform(0.5, 1.5, size=shape)
        elif name.endswith("running_mean"):
            v = rng.normal(size=shape) * 0.3 if bn_stats else onp.zeros(shape)
        elif name.endswith("running_var"):
            v = rng.uniform(0.5, 2.0, size=shape) if bn_stats else onp.ones(shape)
        else:
            continue
        p.set_data(np.array(v.astype(onp.float32)))


def _cnn(seed=0):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, in_channels=3), nn.BatchNorm(in_channels=8),
            nn.Activation("relu"), nn.MaxPool2D(),
            nn.Conv2D(16, 3, padding=1, in_channels=8), nn.Activation("relu"),
            nn.AvgPool2D(), nn.Flatten(), nn.Dense(10, in_units=16 * 4 * 4))
    net.initialize()
    _set_params(net, seed)
    return net


def test_batch_norm_folds_into_the_convolution_and_dense_before_it():
    class ConvBnDense(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(6, 3, in_channels=3, use_bias=False)
            self.bn = nn.BatchNorm(in_channels=6, epsilon=1e-3)
            self.fc = nn.Dense(5, in_units=6 * 6 * 6)
            self.bn2 = nn.BatchNorm(in_channels=5)

        def forward(self, x):
            return self.bn2(self.fc(self.bn(self.conv(x))))

    net = ConvBnDense()
    net.initialize()
    _set_params(net, 4)
    x = np.array(onp.random.default_rng(5).normal(size=(4, 3, 8, 8)).astype(onp.float32))
    want = net(x).asnumpy()  # (inference mode: the running statistics)
    doc, names, values = qz._capture("t", net, [x], None)
    plan = qz._Plan(doc, values, names, [], [], [], "full", "t")
    folded, fvalues = plan.float_doc()
    assert [n["op"] for n in folded["nodes"] if n["op"] != "null"] == \
        ["_npx_convolution", "_npx_fully_connected"]
    # the folded weights are w * gamma / sqrt(var + eps), per output channel
    p = {k: v.data().asnumpy().astype(onp.float64) for k, v in net.collect_params().items()}
    scale = p["bn.gamma"] / onp.sqrt(p["bn.running_var"] + 1e-3)
    onp.testing.assert_allclose(fvalues["conv.weight_folded"],
                                p["conv.weight"] * scale[:, None, None, None], rtol=1e-6)
    onp.testing.assert_allclose(fvalues["conv.bias_folded"],
                                p["bn.beta"] - p["bn.running_mean"] * scale, rtol=1e-6,
                                atol=1e-7)
    block = gluon.SymbolBlock(mx._core._graph_load(json.dumps(folded)), names,
                              {k: np.array(v) for k, v in fvalues.items()})
    onp.testing.assert_allclose(block(x).asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_batch_norm_fix_gamma_and_shared_outputs_in_a_symbol():
    data = mx.sym.var("data")
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv1")
    b = mx.sym.BatchNorm(c, fix_gamma=True, eps=1e-3, name="bn1")  # gamma taken as 1
    c2 = mx.sym.Convolution(b, kernel=(1, 1), num_filter=3, name="conv2")
    b2 = mx.sym.BatchNorm(c2, fix_gamma=False, name="bn2")
    out = mx.sym.Group([b2, c2])  # conv2's output is read twice: its BatchNorm stays
    rng = onp.random.default_rng(6)
    shapes = {"conv1_weight": (4, 2, 3, 3), "conv1_bias": (4,), "bn1_gamma": (4,),
              "bn1_beta": (4,), "bn1_moving_mean": (4,), "bn1_moving_var": (4,),
              "conv2_weight": (3, 4, 1, 1), "conv2_bias": (3,), "bn2_gamma": (3,),
              "bn2_beta": (3,), "bn2_moving_mean": (3,), "bn2_moving_var": (3,)}
    values = {k: (rng.uniform(0.5, 2, s) if k.endswith("var") else rng.normal(size=s))
              .astype(onp.float32) for k, s in shapes.items()}
    plan = qz._Plan(json.loads(out.tojson()), values, ["data"], [], [], [], "full", "t")
    folded, fvalues = plan.float_doc()
    ops = [n["op"] for n in folded["nodes"] if n["op"] != "null"]
    assert ops.count("_npx_batch_norm") == 1 and "conv1_weight_folded" in fvalues
    scale = 1 / onp.sqrt(values["bn1_moving_var"].astype(onp.float64) + 1e-3)
    onp.testing.assert_allclose(fvalues["conv1_bias_folded"],
                                (values["conv1_bias"] - values["bn1_moving_mean"]) * scale
                                + values["bn1_beta"], rtol=1e-6)
    x = rng.normal(size=(2, 2, 7, 7)).astype(onp.float32)
    ref = out.eval(data=np.array(x), **{k: np.array(v) for k, v in values.items()})
    got = gluon.SymbolBlock(mx._core._graph_load(json.dumps(folded)), ["data"],
                            {k: np.array(v) for k, v in fvalues.items()})(np.array(x))
    for r, g in zip(ref, got):
        onp.testing.assert_allclose(g.asnumpy(), r.asnumpy(), rtol=1e-5, atol=1e-5)


def test_layer_names_follow_the_gluon_blocks():
    from ndx.gluon.model_zoo import vision
    net = vision.resnet18_v1()
    net.initialize()
    x = np.zeros((1, 3, 32, 32))
    doc, names, values = qz._capture("t", net, [x], None)
    plan = qz._Plan(doc, values, names, ["features.0", "features.4.0.body.3"], ["output"],
                    ["Pooling"], "full", "t")
    layers = {n["_layer"]: n for n in plan.nodes if n["op"] != "null"}
    assert len(layers) == len([n for n in plan.nodes if n["op"] != "null"])
    # the parameters' structured names (as net.export() writes them) name the layers
    exported = {k.rsplit(".", 1)[0] for k in net.collect_params()}
    convs = [n["_layer"] for n in plan.nodes if n["op"] == "_npx_convolution"]
    assert convs[0] == "features.0" and set(convs) <= exported
    excluded = {n["_layer"] for n in plan.nodes if n["op"] != "null" and n["_excluded"]}
    assert {"features.0", "features.4.0.body.3", "output"} <= excluded
    assert all(n["_excluded"] for n in plan.nodes if n["op"] == "_npx_pooling")
    assert not any(n["_excluded"] for n in plan.nodes
                   if n["op"] == "_npx_convolution" and n["_layer"] not in excluded)


def test_entropy_divergences_match_the_direct_loop_on_sparse_histograms():
    pytest.importorskip("scipy")
    rng = onp.random.default_rng(8)
    for _ in range(60):
        n = int(rng.choice([31, 51, 101, 201]))
        nq = int(rng.choice([3, 5, 7, 15, 16]))
        hist = rng.poisson(rng.uniform(0.05, 5), size=n) * (rng.uniform(size=n) < 0.6)
        hist[rng.integers(n)] += 1
        edges = onp.linspace(-1.0, 1.0, n + 1)
        ref_t, ref_d = _kl_threshold_reference(hist, edges, nq)
        _, _, t, d = qz._get_optimal_threshold((hist, edges, -1.0, 1.0), "int8", nq)
        # (equal minima; the thresholds too unless two candidates tie)
        assert d == pytest.approx(ref_d, rel=1e-9, abs=1e-12)
        if ref_d > 1e-9:
            assert t == pytest.approx(ref_t, rel=1e-12)


# ------------------------------------------------------------------- quantized networks
def _mlp(seed=0):
    net = nn.HybridSequential()
    net.add(nn.Dense(64, activation="relu", in_units=20), nn.Dense(32, in_units=64),
            nn.Activation("relu"), nn.Dense(10, in_units=32))
    net.initialize()
    _set_params(net, seed)
    return net


def _images(n, seed=1):
    return onp.random.default_rng(seed).uniform(size=(n, 3, 16, 16)).astype(onp.float32)


def _batches(x, size=64):
    return [np.array(x[i:i + size]) for i in range(0, len(x), size)]


def _graph(block):
    return json.loads(mx._core._graph_json(block._graph))


def _ops(doc):
    return [n["op"] for n in doc["nodes"] if n["op"] != "null"]


def _node(doc, name):
    (node,) = [n for n in doc["nodes"] if n["name"] == name]
    return node


def _calib(node):
    """A node's calibrated range, None when it has none."""
    lo = node.get("attrs", {}).get("min_calib_range", "None")
    hi = node.get("attrs", {}).get("max_calib_range", "None")
    return None if lo == "None" else (float(lo), float(hi))


def _assert_close_to_float(got, want, frac=0.03, agree=0.95):
    """int8 steps are 1/254 of a layer's symmetric range (1/255 of a non-negative one): a
    quantized layer adds up to half a step per value to its input's error, and the three or
    four layers here (sums over up to 256 products of quantized values) stay near 1-1.5% of
    the output's range (measured); 3% leaves room while a wrong scale, a lost bias or a
    misplaced relu moves outputs by tens of percent. The top-1 class agrees on 95% of the
    inputs (random networks have close logits: the rest are near-ties)."""
    span = float(want.max() - want.min())
    err = float(onp.abs(got - want).max())
    assert err <= frac * span, (err, span)
    assert (got.argmax(axis=1) == want.argmax(axis=1)).mean() >= agree


@pytest.mark.parametrize("calib_mode,granularity,dtype", [
    ("none", "tensor-wise", "auto"), ("none", "channel-wise", "int8"),
    ("naive", "tensor-wise", "auto"), ("naive", "channel-wise", "uint8"),
    ("entropy", "tensor-wise", "int8"), ("entropy", "channel-wise", "auto")])
def test_quantized_cnn_is_close_to_the_float_network(calib_mode, granularity, dtype):
    net = _cnn(0)
    x = _images(512)
    want = net(np.array(x)).asnumpy()
    calib = _batches(_images(128, seed=2)) if calib_mode != "none" else None
    q = qz.quantize_net(net, quantized_dtype=dtype, quantize_granularity=granularity,
                        calib_mode=calib_mode, calib_data=calib,
                        data_shapes=[(8, 3, 16, 16)] if calib is None else None)
    _assert_close_to_float(q(np.array(x)).asnumpy(), want)
    doc = _graph(q)
    ops = _ops(doc)
    assert ops.count("_contrib_quantized_conv") == 2
    assert ops.count("_contrib_quantized_fully_connected") == 1
    assert ops.count("_contrib_quantized_pooling") == 2
    assert ops.count("_contrib_quantized_flatten") == 1
    assert ops.count("_contrib_quantize_v2") == 1 and ops.count("_contrib_dequantize") == 1
    assert not [op for op in ops if op.startswith("_npx_")]  # BatchNorm folded, relu fused
    assert _node(doc, "quantized_0")["attrs"]["with_relu"] == "True"
    assert _node(doc, "quantized_4")["attrs"]["with_relu"] == "True"
    assert _node(doc, "quantized_8")["attrs"]["with_relu"] == "False"
    head = doc["nodes"][doc["heads"][0][0]]
    assert head["op"] == "_contrib_dequantize"
    quant = _node(doc, "data_quantize")["attrs"]
    if calib_mode == "none":
        assert ops.count("_contrib_requantize") == 2 and quant["out_type"] == \
            ("uint8" if dtype == "uint8" else "int8")
        assert _calib(_node(doc, "quantized_0")) is None
    else:
        assert "_contrib_requantize" not in ops  # the convolutions answer in int8 themselves
        assert quant["out_type"] == ("int8" if dtype == "int8" else "uint8")  # data >= 0
        lo, hi = _calib(_node(doc, "data_quantize"))
        if calib_mode == "naive":  # the calibration data's own min and max
            c = _images(128, seed=2)
            assert (lo, hi) == (float(c.min()), float(c.max()))
        else:
            assert (lo, hi) == ((0.0 if dtype != "int8" else -hi), hi) and 0.5 < hi <= 1.0
        for conv in ("quantized_0", "quantized_4"):  # relu'd outputs: non-negative ranges
            lo, hi = _calib(_node(doc, conv))
            assert hi > 0 and (lo >= 0 or calib_mode == "entropy" and dtype == "int8")
        # the last layer's output leaves the graph: int32, dequantized with no range loss
        assert _calib(_node(doc, "quantized_8")) is None


@pytest.mark.parametrize("granularity", ["tensor-wise", "channel-wise"])
def test_int8_weights_are_the_folded_weights_in_127_steps(granularity):
    net = _cnn(3)
    q = qz.quantize_net(net, data_shapes=[(2, 3, 16, 16)], quantize_granularity=granularity)
    params = {k: v.data().asnumpy() for k, v in q.collect_params().items()}
    p = {k: v.data().asnumpy().astype(onp.float64) for k, v in net.collect_params().items()}
    scale = p["1.gamma"] / onp.sqrt(p["1.running_var"] + 1e-5)
    cases = {"0.weight_folded": p["0.weight"] * scale[:, None, None, None],
             "4.weight": p["4.weight"], "8.weight": p["8.weight"]}
    for name, w in cases.items():
        qw = params[f"{name}_quantize"]
        lo, hi = params[f"{name}_quantize_min"], params[f"{name}_quantize_max"]
        assert qw.dtype == onp.int8 and qw.shape == w.shape
        if granularity == "channel-wise":
            r = onp.abs(w.reshape(len(w), -1)).max(axis=1)
            assert hi.shape == (len(w),)
            rb = r.reshape((-1,) + (1,) * (w.ndim - 1))
        else:
            r = rb = onp.abs(w).max()
            assert hi.shape == (1,)
        onp.testing.assert_allclose(hi, r, rtol=1e-6)
        onp.testing.assert_allclose(lo, -r, rtol=1e-6)
        assert onp.abs(qw).max() == 127
        # each weight is the nearest of the 255 levels: within half a step
        assert onp.all(onp.abs(qw * rb / 127 - w) <= rb / 254 * (1 + 1e-5))
    onp.testing.assert_allclose(params["0.bias_folded"],
                                p["1.beta"] + (p["0.bias"] - p["1.running_mean"]) * scale,
                                rtol=1e-5, atol=1e-6)


def test_quantized_mlp_int8_data_and_uint8_refusal():
    net = _mlp(1)
    rng = onp.random.default_rng(3)
    x = rng.normal(size=(400, 20)).astype(onp.float32)
    calib = [np.array(rng.normal(size=(50, 20)).astype(onp.float32)) for _ in range(3)]
    want = net(np.array(x)).asnumpy()
    for mode in ("naive", "entropy"):
        q = qz.quantize_net(net, calib_mode=mode, calib_data=calib)
        _assert_close_to_float(q(np.array(x)).asnumpy(), want)
        doc = _graph(q)
        assert _node(doc, "data_quantize")["attrs"]["out_type"] == "int8"  # data < 0 too
        assert _ops(doc).count("_contrib_quantized_fully_connected") == 3
        assert _node(doc, "quantized_1")["attrs"]["with_relu"] == "True"  # Dense + Activation
    with pytest.raises(ValueError, match=r"\[quantize_net\] quantized_dtype='uint8'.*'data'"):
        qz.quantize_net(net, quantized_dtype="uint8", calib_mode="naive", calib_data=calib)



def test_excluded_layers_and_operators_stay_float():
    net = _cnn(0)
    x = _images(256)
    want = net(np.array(x)).asnumpy()
    calib = _batches(_images(64, seed=2))
    cases = [
        (dict(exclude_layers=["0"]),  # (the pooling after it has float data: float too)
         ["_npx_convolution", "_npx_batch_norm", "_npx_relu", "_npx_pooling"]),
        (dict(exclude_layers=["_npx_pooling1"]), ["_npx_pooling", "_npx_reshape"]),
        (dict(exclude_layers_match=["pool"]), ["_npx_pooling"] * 2 + ["_npx_reshape"]),
        (dict(exclude_operators=["FullyConnected"]), ["_npx_fully_connected"]),
        (dict(exclude_operators=["Convolution"]),
         ["_npx_convolution", "_npx_batch_norm", "_npx_relu", "_npx_pooling"] +
         ["_npx_convolution", "_npx_relu", "_npx_pooling", "_npx_reshape"]),
        (dict(exclude_operators=["_npx_pooling", "Flatten"]),
         ["_npx_pooling", "_npx_pooling", "_npx_reshape"]),
    ]
    for kwargs, floats in cases:
        q = qz.quantize_net(net, calib_mode="naive", calib_data=calib, **kwargs)
        ops = _ops(_graph(q))
        assert sorted(op for op in ops if op.startswith("_npx_")) == sorted(floats), kwargs
        _assert_close_to_float(q(np.array(x)).asnumpy(), want)
    # the first convolution excluded: its BatchNorm is not folded, and the float data is
    # quantized where it enters the second convolution (after the pooling), in the range
    # calibration found there
    doc = _graph(qz.quantize_net(net, calib_mode="naive", calib_data=calib,
                                 exclude_layers=["0"]))
    quant = doc["nodes"][_node(doc, "quantized_4")["inputs"][0][0]]
    assert quant["op"] == "_contrib_quantize_v2" and quant["name"] == "_npx_pooling0_quantize"
    assert doc["nodes"][quant["inputs"][0][0]]["op"] == "_npx_pooling"
    lo, hi = _calib(quant)
    pooled = net[:4](np.array(_images(64, seed=2))).asnumpy()
    assert (lo, hi) == pytest.approx((float(pooled.min()), float(pooled.max())), rel=1e-6)
    with pytest.warns(UserWarning, match="not in the network"):
        qz.quantize_net(net, data_shapes=[(1, 3, 16, 16)], exclude_layers=["nonexistent"])


def test_smart_mode_leaves_pooling_before_float_ops_in_float():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, in_channels=3, activation="relu"), nn.MaxPool2D(),
            nn.Conv2D(8, 3, in_channels=8), nn.MaxPool2D())  # the last pool: graph output
    net.initialize()
    _set_params(net, 7)
    x = _images(64)
    want = net(np.array(x)).asnumpy().reshape(64, -1)
    calib = _batches(_images(64, seed=2))
    full = qz.quantize_net(net, quantize_mode="full", calib_mode="naive", calib_data=calib)
    smart = qz.quantize_net(net, quantize_mode="smart", calib_mode="naive", calib_data=calib)
    assert _ops(_graph(full)).count("_contrib_quantized_pooling") == 2
    ops = _ops(_graph(smart))
    assert ops.count("_contrib_quantized_pooling") == 1 and ops[-1] == "_npx_pooling"
    for q in (full, smart):
        got = q(np.array(x)).asnumpy().reshape(64, -1)
        assert onp.abs(got - want).max() <= 0.03 * (want.max() - want.min())


def test_export_and_imports_round_trip(tmp_path):
    net = _cnn(2)
    x = np.array(_images(32))
    for mode in ("none", "entropy"):
        q = qz.quantize_net(net, calib_mode=mode, calib_data=_batches(_images(64)),
                            quantize_granularity="channel-wise")
        out = q(x).asnumpy()
        sym_file, params_file = q.export(str(tmp_path / mode))
        back = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
        onp.testing.assert_array_equal(back(x).asnumpy(), out)
        saved = mx.nd.load(params_file)
        assert {str(v.dtype) for k, v in saved.items() if k.endswith("_quantize")} == {"int8"}
        assert "_contrib_quantized_conv" in open(sym_file).read()


def test_quantize_model_on_a_checkpoint_matches_quantize_net(tmp_path):
    net = _cnn(4)
    x = np.array(_images(128))
    calib = _batches(_images(128, seed=3))
    q = qz.quantize_net(net, quantized_dtype="int8", calib_mode="naive", calib_data=calib)
    net.export(str(tmp_path / "f"))
    sym, args, auxs = mx.model.load_checkpoint(str(tmp_path / "f"), 0)
    qsym, qargs, qauxs = qz.quantize_model(sym, args, auxs, calib_mode="naive",
                                           calib_data=calib, quantized_dtype="int8")
    assert qauxs == {}  # the BatchNorm is folded: its statistics are not read any more
    assert str(qargs["4.weight_quantize"].dtype) == "int8"
    assert "_contrib_quantized_conv" in qsym.tojson()
    block = gluon.SymbolBlock(qsym, mx.sym.var("data"))
    block.load_dict({**qargs, **qauxs}, cast_dtype=True, dtype_source="saved")
    onp.testing.assert_array_equal(block(x).asnumpy(), q(x).asnumpy())
    _assert_close_to_float(block(x).asnumpy(), net(x).asnumpy())
    # MXNet's oneDNN names
    qsym2, qargs2, _ = qz.quantize_model_onednn(sym, args, auxs, calib_mode="none",
                                                ctx=mx.cpu())
    assert qz.quantize_model_mkldnn is qz.quantize_model_onednn
    assert "_contrib_requantize" in qsym2.tojson()


def _legacy_symbol():
    data = mx.sym.var("data")
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=6, pad=(1, 1), name="conv1")
    b = mx.sym.BatchNorm(c, fix_gamma=False, name="bn1")
    r = mx.sym.Activation(b, act_type="relu", name="relu1")
    p = mx.sym.Pooling(r, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    c2 = mx.sym.Convolution(p, kernel=(3, 3), num_filter=8, name="conv2")
    r2 = mx.sym.Activation(c2, act_type="relu", name="relu2")
    f = mx.sym.Flatten(r2, name="flat")
    fc = mx.sym.FullyConnected(f, num_hidden=5, name="fc1")
    rng = onp.random.default_rng(9)
    shapes = {"conv1_weight": (6, 3, 3, 3), "conv1_bias": (6,), "bn1_gamma": (6,),
              "bn1_beta": (6,), "conv2_weight": (8, 6, 3, 3), "conv2_bias": (8,),
              "fc1_weight": (5, 8 * 6 * 6), "fc1_bias": (5,)}
    args = {k: mx.nd.array(rng.normal(size=s) * (0.3 if "weight" in k else 0.1) +
                           (1.0 if "gamma" in k else 0.0)) for k, s in shapes.items()}
    auxs = {"bn1_moving_mean": mx.nd.array(rng.normal(size=6) * 0.2),
            "bn1_moving_var": mx.nd.array(rng.uniform(0.5, 2.0, size=6))}
    return fc, args, auxs


def _sym_forward(sym, params, x):
    block = gluon.SymbolBlock(sym, mx.sym.var("data"))
    block.load_dict(dict(params), cast_dtype=True, dtype_source="saved", ignore_extra=True)
    return block(np.array(x)).asnumpy()


def test_quantize_graph_and_calib_graph_with_a_filled_collector():
    sym, args, auxs = _legacy_symbol()
    rng = onp.random.default_rng(10)
    calib = [rng.uniform(size=(16, 3, 16, 16)).astype(onp.float32) for _ in range(2)]
    qsym, qargs, qauxs, collector, layers = qz.quantize_graph(
        sym, args, auxs, calib_mode="naive", quantized_dtype="auto",
        excluded_sym_names=["fc1"])
    assert layers == ["data", "conv1", "conv2"] and collector.include_layers == layers
    assert "_contrib_requantize" in qsym.tojson()
    # the values calibration wants, from the float symbol: the data, and each layer's output
    # after its BatchNorm and relu
    internals = sym.get_internals()
    probe = mx.sym.Group([internals["relu1_output"], internals["relu2_output"]])
    params = {**args, **auxs}
    for x in calib:
        collector.collect("data", "null", np.array(x))
        block = gluon.SymbolBlock(probe, mx.sym.var("data"))
        block.load_dict(params, cast_dtype=True, dtype_source="saved", ignore_extra=True)
        r1, r2 = block(np.array(x))
        collector.collect("conv1", "Convolution", r1)
        collector.collect("conv2", "Convolution", r2)
    csym, cargs, cauxs = qz.calib_graph(qsym, qargs, qauxs, collector, calib_mode="naive")
    doc = json.loads(csym.tojson())
    assert "_contrib_requantize" not in _ops(doc)
    r1max = max(float(_sym_forward(internals["relu1_output"], params, x).max()) for x in calib)
    assert _calib(_node(doc, "quantized_conv1")) == pytest.approx((0.0, r1max), rel=1e-6)
    assert [n["op"] for n in doc["nodes"] if n["name"] == "fc1"] == ["_npx_fully_connected"]
    # quantize_model's own calibration: the same but for float rounding (it reads the
    # outputs of the folded convolution, this collection those of convolution + BatchNorm)
    msym, margs, mauxs = qz.quantize_model(sym, args, auxs, calib_mode="naive",
                                           calib_data=calib, quantized_dtype="auto",
                                           excluded_sym_names=["fc1"], quantize_mode="full")
    x = rng.uniform(size=(64, 3, 16, 16)).astype(onp.float32)
    got = _sym_forward(csym, {**cargs, **cauxs}, x)
    onp.testing.assert_allclose(got, _sym_forward(msym, {**margs, **mauxs}, x), rtol=1e-5,
                                atol=1e-5)
    _assert_close_to_float(got, _sym_forward(sym, params, x), agree=0.9)
    with pytest.raises(ValueError, match=r"\[calib_graph\] arg_params lacks"):
        qz.calib_graph(qsym, args, auxs, collector, calib_mode="naive")


class _RecordingCollector(qz.CalibrationCollector):
    """A custom collector: records the calls, thresholds = its own min / max."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def collect(self, name, op_name, arr):
        self.calls.append((name, op_name, tuple(arr.shape)))
        if self.include_layers is not None and name not in self.include_layers:
            return
        a = arr.asnumpy()
        lo, hi = self.min_max_dict.get(name, (onp.inf, -onp.inf))
        self.min_max_dict[name] = (min(lo, float(a.min())), max(hi, float(a.max())))


def test_custom_collector_gets_every_layer_of_every_batch():
    net = _cnn(5)
    calib = _batches(_images(96, seed=4), size=32)
    col = _RecordingCollector()
    q = qz.quantize_net(net, calib_mode="custom", calib_data=calib, LayerOutputCollector=col)
    assert col.include_layers == ["data", "0", "4"]
    assert sorted(col.calls) == sorted(
        [("data", "null", (32, 3, 16, 16)), ("0", "_npx_convolution", (32, 8, 16, 16)),
         ("4", "_npx_convolution", (32, 16, 8, 8))] * 3)
    # its thresholds are the ones used: the same as naive calibration's
    naive = qz.quantize_net(net, calib_mode="naive", calib_data=calib)
    x = np.array(_images(64))
    onp.testing.assert_array_equal(q(x).asnumpy(), naive(x).asnumpy())
    doc = _graph(q)
    assert _calib(_node(doc, "quantized_0")) == pytest.approx(col.min_max_dict["0"])
    # include_layers chosen by the collector itself are kept
    col2 = _RecordingCollector()
    col2.include_layers = ["0"]
    doc2 = _graph(qz.quantize_net(net, calib_mode="custom", calib_data=calib,
                                  LayerOutputCollector=col2))
    assert col2.include_layers == ["0"] and _calib(_node(doc2, "data_quantize")) is None
    assert _calib(_node(doc2, "quantized_0")) is not None


def test_calibration_data_sources_and_num_calib_batches():
    net = _cnn(6)
    xs = _images(96, seed=5)
    labels = onp.arange(96) % 10
    x = np.array(_images(32))

    def quantized(data, **kw):
        return qz.quantize_net(net, calib_mode="naive", calib_data=data, **kw)(x).asnumpy()

    ref = quantized([np.array(xs)])
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(xs, labels), batch_size=32)
    onp.testing.assert_array_equal(quantized(loader), ref)  # (data, label) batches
    onp.testing.assert_array_equal(quantized(mx.io.NDArrayIter(xs, labels, batch_size=32)),
                                   ref)
    onp.testing.assert_array_equal(quantized([xs[:48], xs[48:]]), ref)  # NumPy batches
    one = quantized(loader, num_calib_batches=1)
    onp.testing.assert_array_equal(one, quantized([np.array(xs[:32])]))
    assert not onp.array_equal(one, ref)


def test_symbol_block_network_and_ctx_alias(tmp_path):
    net = _cnn(7)
    x = np.array(_images(64))
    net.hybridize()
    net(x)
    net.export(str(tmp_path / "f"))
    imported = gluon.SymbolBlock.imports(str(tmp_path / "f-symbol.json"), ["data"],
                                         str(tmp_path / "f-0000.params"))
    calib = _batches(_images(64, seed=2))
    a = qz.quantize_net(imported, calib_mode="naive", calib_data=calib, ctx=mx.cpu())
    b = qz.quantize_net(net, calib_mode="naive", calib_data=calib)
    onp.testing.assert_array_equal(a(x).asnumpy(), b(x).asnumpy())


def test_logger_gets_progress_and_default_is_silent(caplog):
    net = _cnn(0)
    calib = _batches(_images(32))
    logger = logging.getLogger("quantization-test")
    with caplog.at_level(logging.DEBUG):
        qz.quantize_net(net, calib_mode="entropy", calib_data=calib)
    assert caplog.records == []
    with caplog.at_level(logging.INFO, logger="quantization-test"):
        qz.quantize_net(net, calib_mode="entropy", calib_data=calib, logger=logger,
                        exclude_layers=["8"])
    text = caplog.text
    for line in ("Quantizing graph", "excluded ['8']", "Collected statistics from 1 batches",
                 "KL divergence", "Quantizing parameters"):
        assert line in text


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(quantized_dtype="int4"), ValueError, r"\[quantize_net\] quantized_dtype .*'int4'"),
    (dict(quantize_mode="fast"), ValueError, r"\[quantize_net\] quantize_mode .*'fast'"),
    (dict(quantize_granularity="row"), ValueError, r"quantize_granularity .*'row'"),
    (dict(calib_mode="kl"), ValueError, r"\[quantize_net\] calib_mode .*'kl'"),
    (dict(calib_mode="naive", data_shapes=[(1, 3, 16, 16)]), ValueError,
     r"calib_mode='naive' needs calib_data, got None"),
    (dict(calib_mode="custom", calib_data=[np.zeros((1, 3, 16, 16))]), ValueError,
     r"LayerOutputCollector.*got None"),
    (dict(calib_mode="custom", calib_data=[np.zeros((1, 3, 16, 16))],
          LayerOutputCollector=object()), TypeError,
     r"LayerOutputCollector must be an instance of CalibrationCollector, got object"),
    (dict(), ValueError, r"give calib_data or data_shapes"),
    (dict(data_shapes=[(1, 3, 16, 16)], exclude_layers="0"), TypeError,
     r"exclude_layers must be a list of str, got str"),
    (dict(data_shapes=[(1, 3, 16, 16)], device=mx.gpu(0)), ValueError, r"CPU only"),
    (dict(calib_mode="naive", calib_data=[np.zeros((1, 3, 16, 16))], num_calib_batches=0),
     ValueError, r"num_calib_batches must be a positive int"),
    (dict(calib_mode="naive", calib_data=5), TypeError, r"calib_data must be"),
    (dict(calib_mode="naive", calib_data=[]), ValueError, r"calib_data gave no batches"),
])
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        qz.quantize_net(_cnn(0), **kwargs)


def test_bad_arguments_of_the_symbol_functions():
    sym, args, auxs = _legacy_symbol()
    with pytest.raises(TypeError, match=r"\[quantize_net\] network must be a HybridBlock"):
        qz.quantize_net(nn.Block())
    with pytest.raises(ValueError, match=r"\[quantize_model\] calib_mode='entropy' needs "
                                         r"calib_data"):
        qz.quantize_model(sym, args, auxs)
    with pytest.raises(TypeError, match=r"\[quantize_model\] sym must be a Symbol"):
        qz.quantize_model("net", args, auxs, calib_mode="none")
    with pytest.raises(ValueError, match=r"\[quantize_model\] the symbol's inputs "
                                         r"\['fc1_weight'"):
        qz.quantize_model(sym, {k: v for k, v in args.items() if k != "fc1_weight"}, auxs,
                          calib_mode="none")
    with pytest.raises(ValueError, match=r"\[quantize_graph\] calib_mode .*'best'"):
        qz.quantize_graph(sym, args, auxs, calib_mode="best")
    qsym, qargs, qauxs, _, _ = qz.quantize_graph(sym, args, auxs, calib_mode="none")
    with pytest.raises(ValueError, match=r"\[calib_graph\] calib_mode must be"):
        qz.calib_graph(qsym, qargs, qauxs, _RecordingCollector(), calib_mode="none")
    with pytest.raises(TypeError, match=r"\[calib_graph\] collector must be"):
        qz.calib_graph(qsym, qargs, qauxs, None, calib_mode="naive")


def test_nd_contrib_wrappers_against_numpy():
    rng = onp.random.default_rng(11)
    x = rng.normal(size=(4, 6)).astype(onp.float32)
    w = rng.normal(size=(3, 6)).astype(onp.float32)
    b = rng.normal(size=3).astype(onp.float32)
    q, lo, hi = mx.nd.contrib.quantize_v2(mx.nd.array(x), min_calib_range=-2.0,
                                          max_calib_range=2.0)
    onp.testing.assert_array_equal(q.asnumpy(),
                                   onp.clip(onp.rint(x * (127 / 2.0)), -127, 127))
    assert (lo.asnumpy().tolist(), hi.asnumpy().tolist()) == ([-2.0], [2.0])
    back = mx.nd.contrib.dequantize(q, lo, hi)
    assert onp.abs(back.asnumpy() - onp.clip(x, -2, 2)).max() <= 2.0 / 254 + 1e-6
    rw = float(onp.abs(w).max())
    qw = onp.rint(w * (127 / rw)).astype(onp.int8)
    out = mx.nd.contrib.quantized_fully_connected(
        q, mx.nd.array(qw, dtype="int8"), mx.nd.array(b), lo, hi, mx.nd.array([-rw]),
        mx.nd.array([rw]), mx.nd.array([-1.0]), mx.nd.array([1.0]), num_hidden=3)
    acc = q.asnumpy().astype(onp.int64) @ qw.T.astype(onp.int64)  # exact int32 sums
    want = acc * (2.0 / 127) * (rw / 127) + b
    onp.testing.assert_allclose(mx.nd.contrib.dequantize(*out).asnumpy(), want, rtol=1e-4,
                                atol=1e-4)
    r, rlo, rhi = mx.nd.contrib.requantize(*out, min_calib_range=-20.0, max_calib_range=20.0)
    onp.testing.assert_array_equal(r.asnumpy(), onp.clip(onp.rint(want * 127 / 20), -127, 127))
    f, _, _ = mx.nd.contrib.quantized_flatten(mx.nd.array(onp.zeros((2, 3, 4), onp.int8),
                                                          dtype="int8"), lo, hi)
    assert f.shape == (2, 12)
    a, _, _ = mx.nd.contrib.quantized_act(q, lo, hi)
    onp.testing.assert_array_equal(a.asnumpy(), onp.maximum(q.asnumpy(), 0))


def test_quantized_classifier_keeps_its_accuracy():
    # ten classes in 64 dimensions (digits-sized: scikit-learn is only a demo requirement):
    # noisy non-negative points around random centers, hard enough that accuracy is not 1.0
    gen = onp.random.default_rng(0)
    centers = gen.uniform(0, 1, (10, 64))
    y = gen.integers(0, 10, 1797)
    x = onp.clip(centers[y] + gen.normal(0, 0.55, (1797, 64)), 0, None).astype(onp.float32)
    x_tr, y_tr, x_te, y_te = x[:1400], y[:1400], x[1400:], y[1400:]
    mx.random.seed(0)
    net = nn.HybridSequential()
    net.add(nn.Dense(64, activation="relu"), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(8):
        for i in range(0, len(x_tr), 64):
            xb, yb = np.array(x_tr[i:i + 64]), np.array(y_tr[i:i + 64])
            with mx.autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            trainer.step(len(xb))

    def accuracy(block):
        return float((block(np.array(x_te)).asnumpy().argmax(axis=1) == y_te).mean())

    acc = accuracy(net)
    assert acc > 0.9
    for mode in ("naive", "entropy"):
        q = qz.quantize_net(net, calib_mode=mode, calib_data=_batches(x_tr[:256]))
        assert abs(accuracy(q) - acc) <= 0.02, (mode, accuracy(q), acc)


class _Residual(gluon.HybridBlock):
    """conv-BN-relu-conv-BN plus the block's input, relu; then a bias added by broadcasting
    (an addition of two shapes, which stays float), global pooling and a dense layer."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(8, 3, padding=1, in_channels=3, activation="relu")
        self.body = nn.HybridSequential()
        self.body.add(nn.Conv2D(8, 3, padding=1, in_channels=8), nn.BatchNorm(in_channels=8),
                      nn.Activation("relu"), nn.Conv2D(8, 3, padding=1, in_channels=8),
                      nn.BatchNorm(in_channels=8))
        self.shift = gluon.Parameter("shift", shape=(1, 8, 1, 1))
        self.pool = nn.GlobalAvgPool2D()
        self.fc = nn.Dense(10, in_units=8)

    def forward(self, x):
        x = self.stem(x)
        y = mx.npx.relu(self.body(x) + x)
        return self.fc(self.pool(y + self.shift.data()))


def test_residual_addition_runs_int8():
    net = _Residual()
    net.initialize()
    _set_params(net, 12)
    net.shift.set_data(np.array(onp.full((1, 8, 1, 1), 0.2, onp.float32)))
    x = np.array(_images(256))
    want = net(x).asnumpy()
    for mode in ("none", "naive"):
        q = qz.quantize_net(net, calib_mode=mode, calib_data=_batches(_images(64, seed=2)))
        _assert_close_to_float(q(x).asnumpy(), want)
        ops = _ops(_graph(q))
        assert ops.count("_contrib_quantized_elemwise_add") == 1
        assert ops.count("_np_add") == 1  # the broadcasting one
        assert ops.count("_contrib_quantized_act") == 1  # the relu after the addition
    # without data (quantize_graph) the shapes are unknown: the additions stay float
    net.hybridize()
    net(x)
    sym = mx.sym.load_json(mx._core._graph_json(net._last_graph[0]))
    params = {k: v.data() for k, v in net.collect_params().items()}
    qsym = qz.quantize_graph(sym, params, {}, calib_mode="none")[0]
    ops = _ops(json.loads(qsym.tojson()))
    assert "_contrib_quantized_elemwise_add" not in ops and ops.count("_np_add") == 2


class _Inception(gluon.HybridBlock):
    """Two convolution branches joined by a concatenation, then a convolution: the join
    runs on int8 data as quantized_concat."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2D(4, 1, in_channels=3, activation="relu")
        self.b = nn.Conv2D(6, 3, padding=1, in_channels=3, activation="relu")
        self.head = nn.HybridSequential()
        self.head.add(nn.Conv2D(5, 3, in_channels=10), nn.GlobalAvgPool2D(), nn.Flatten())

    def forward(self, x):
        return self.head(np.concatenate([self.a(x), self.b(x)], axis=1))


def test_concatenation_of_int8_branches_stays_int8():
    mx.random.seed(3)
    net = _Inception()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    gen = onp.random.default_rng(5)
    batches = [np.array(gen.uniform(-1, 1, (8, 3, 9, 9)).astype(onp.float32)) for _ in range(4)]
    x = np.array(gen.uniform(-1, 1, (64, 3, 9, 9)).astype(onp.float32))
    want = net(x).asnumpy()
    for mode in ("none", "naive"):
        q = qz.quantize_net(net, calib_mode=mode, calib_data=batches)
        ops = [n["op"] for n in json.loads(q.export(None)[0].tojson())["nodes"]]
        assert "_contrib_quantized_concat" in ops and "_npi_concatenate" not in ops
        got = q(x).asnumpy()
        # three quantized layers, each within half a step of its range (see _assert_close)
        assert onp.abs(got - want).max() <= 0.05 * (want.max() - want.min()), mode


class _PreActivation(gluon.HybridBlock):
    """ResNet v2's / DenseNet's order: BatchNorm and relu before each convolution, so no
    convolution precedes (and absorbs) the BatchNorms after the first one."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(6, 3, padding=1, in_channels=3)
        self.bn1 = nn.BatchNorm(in_channels=6)
        self.conv = nn.Conv2D(6, 3, padding=1, in_channels=6)
        self.bn2 = nn.BatchNorm(in_channels=12)
        self.head = nn.Dense(4)

    def forward(self, x):
        s = self.stem(x)
        c = self.conv(npx.relu(self.bn1(s)))
        return self.head(npx.relu(self.bn2(np.concatenate([s, c], axis=1))))


def test_pre_activation_batch_norms_run_quantized():
    mx.random.seed(4)
    net = _PreActivation()
    net.initialize(mx.init.Xavier())
    gen = onp.random.default_rng(6)
    x = np.array(gen.uniform(-1, 1, (64, 3, 8, 8)).astype(onp.float32))
    net(x)
    for bn in (net.bn1, net.bn2):  # statistics of a trained network
        c = bn.running_mean.shape[0]
        bn.gamma.set_data(np.array(gen.uniform(0.5, 2, c).astype(onp.float32)))
        bn.beta.set_data(np.array(gen.uniform(-0.5, 0.5, c).astype(onp.float32)))
        bn.running_mean.set_data(np.array(gen.normal(0, 0.2, c).astype(onp.float32)))
        bn.running_var.set_data(np.array(gen.uniform(0.5, 2, c).astype(onp.float32)))
    net.hybridize()
    want = net(x).asnumpy()
    batches = [np.array(gen.uniform(-1, 1, (8, 3, 8, 8)).astype(onp.float32)) for _ in range(4)]
    for mode in ("none", "naive"):
        q = qz.quantize_net(net, calib_mode=mode, calib_data=batches)
        ops = [n["op"] for n in json.loads(q.export(None)[0].tojson())["nodes"]]
        assert ops.count("_contrib_quantized_batch_norm") == 2 and "_npx_batch_norm" not in ops
        got = q(x).asnumpy()
        # four quantized layers, each within half a step of its range (see _assert_close)
        assert onp.abs(got - want).max() <= 0.05 * (want.max() - want.min()), mode
