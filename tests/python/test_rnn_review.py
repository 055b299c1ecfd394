"""Review tests of mx.rnn (MXNet 1.x's symbolic cells). Every reference is independent of
the code under test: NumPy re-computations of MXNet's cell equations and of its fused
parameter layout, or MXNet 1.x's documented behaviour."""
import numpy as onp
import pytest

import ndx as mx
from ndx import np

GATES = {"lstm": ["_i", "_f", "_c", "_o"], "gru": ["_r", "_z", "_o"], "rnn_tanh": [""],
         "rnn_relu": [""]}


def _sig(z):
    return 1 / (1 + onp.exp(-z))


def _w(rng, prefix, gates, hidden, inputs):
    return {f"{prefix}i2h_weight": rng.normal(size=(gates * hidden, inputs)),
            f"{prefix}i2h_bias": rng.normal(size=gates * hidden),
            f"{prefix}h2h_weight": rng.normal(size=(gates * hidden, hidden)),
            f"{prefix}h2h_bias": rng.normal(size=gates * hidden)}


def _step(kind, p, prefix, x, h, c=None):
    def fc(group, v):
        return v @ p[f"{prefix}{group}_weight"].T + p[f"{prefix}{group}_bias"]
    i2h, h2h = fc("i2h", x), fc("h2h", h)
    n = h.shape[1]
    if kind == "lstm":
        g = i2h + h2h
        c = _sig(g[:, n:2 * n]) * c + _sig(g[:, :n]) * onp.tanh(g[:, 2 * n:3 * n])
        return _sig(g[:, 3 * n:]) * onp.tanh(c), c
    if kind == "gru":
        r = _sig(i2h[:, :n] + h2h[:, :n])
        z = _sig(i2h[:, n:2 * n] + h2h[:, n:2 * n])
        return (1 - z) * onp.tanh(i2h[:, 2 * n:] + r * h2h[:, 2 * n:]) + z * h, None
    out = i2h + h2h
    return (onp.maximum(out, 0) if kind == "rnn_relu" else onp.tanh(out)), None


def _run(kind, p, prefix, xs, h=None, c=None, hidden=None):
    """Steps over the list xs; the list of outputs and the final (h, c)."""
    n = xs[0].shape[0]
    h = onp.zeros((n, hidden)) if h is None else h
    c = onp.zeros((n, hidden)) if c is None else c
    ys = []
    for x in xs:
        h, c2 = _step(kind, p, prefix, x, h, c)
        c = c2 if c2 is not None else c
        ys.append(h)
    return ys, h, c


def _eval(sym, **arrays):
    return [o.asnumpy() for o in sym.eval(**{k: np.array(onp.asarray(v, "float32"))
                                            for k, v in arrays.items()})]


def _np_fused(x, flat, mode, layers, dirs, hidden, h0, c0):
    """MXNet's fused RNN on x (T, N, I) from the flat parameters in MXNet's layout: per
    layer and direction every gate's i2h weight then every gate's h2h weight; then the
    biases in the same order."""
    t_len, _, n_in = x.shape
    p, w = 0, {}
    names = ["l", "r"][:dirs]
    for layer in range(layers):
        for d in names:
            for group, cols in (("i2h", n_in if layer == 0 else dirs * hidden),
                                ("h2h", hidden)):
                for g in GATES[mode]:
                    w[f"{d}{layer}_{group}{g}_weight"] = \
                        flat[p:p + hidden * cols].reshape(hidden, cols)
                    p += hidden * cols
    for layer in range(layers):
        for d in names:
            for group in ("i2h", "h2h"):
                for g in GATES[mode]:
                    w[f"{d}{layer}_{group}{g}_bias"] = flat[p:p + hidden]
                    p += hidden
    assert p == flat.size
    inp, hn, cn = x, [], []
    for layer in range(layers):
        outs = []
        for k, d in enumerate(names):
            pre = f"{d}{layer}_"
            q = {f"{pre}{grp}_{kind}": onp.concatenate([w[f"{pre}{grp}{g}_{kind}"]
                                                       for g in GATES[mode]])
                 for grp in ("i2h", "h2h") for kind in ("weight", "bias")}
            xs = [inp[t] for t in range(t_len)]
            if k == 1:
                xs = xs[::-1]
            ys, h, c = _run(mode, q, pre, xs, h0[layer * dirs + k],
                            None if c0 is None else c0[layer * dirs + k], hidden)
            if k == 1:
                ys = ys[::-1]
            outs.append(onp.stack(ys))
            hn.append(h)
            cn.append(c)
        inp = onp.concatenate(outs, -1)
    return inp, onp.stack(hn), onp.stack(cn)


def _fused_size(mode, layers, dirs, n_in, hidden):
    m = len(GATES[mode])
    return (n_in + hidden + 2) * hidden * m * dirs + \
        (layers - 1) * m * hidden * (hidden + dirs * hidden + 2) * dirs


# ---- bugs found in review ----

def test_default_begin_states_run_on_a_second_device():
    """A graph bound on cpu(1) (Module over two devices) with default zero begin states:
    the zeros the graph makes must live on the executor's device (MXNet's executor creates
    them on its context). Reference: NumPy LSTM."""
    rng = onp.random.default_rng(0)
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    out, _ = cell.unroll(2, inputs=mx.sym.Variable("data"), merge_outputs=True)
    mod = mx.mod.Module(mx.sym.BlockGrad(out), data_names=["data"], label_names=None,
                        context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (4, 2, 5))], for_training=False)
    p = _w(rng, "l_", 4, 3, 5)
    mod.init_params(arg_params={k: mx.nd.array(v.astype("float32")) for k, v in p.items()})
    x = rng.normal(size=(4, 2, 5))
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], []), is_train=False)
    ys, _, _ = _run("lstm", p, "l_", [x[:, 0], x[:, 1]], hidden=3)
    onp.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), onp.stack(ys, 1),
                                rtol=1e-5, atol=1e-5)


def test_bucket_iterator_describes_its_layout_so_tn_batches_split_on_the_batch_axis():
    """MXNet's BucketSentenceIter gives DataDescs with the iterator's layout (default
    'NT'); with 'TN' a multi-device module must split axis 1, not the time axis."""
    sents = [[1, 2, 3, 4]] * 4
    it = mx.rnn.BucketSentenceIter(sents, 4, buckets=[4], invalid_label=0, layout="TN")
    assert it.provide_data[0].layout == "TN" and it.provide_label[0].layout == "TN"
    assert mx.rnn.BucketSentenceIter(sents, 4).provide_data[0].layout == "NT"
    batch = next(iter(it))
    assert batch.provide_data[0].layout == "TN" and batch.provide_data[0].shape == (4, 4)

    rng = onp.random.default_rng(1)
    cell = mx.rnn.RNNCell(2, prefix="r_")
    emb = mx.sym.Embedding(mx.sym.Variable("data"), input_dim=5, output_dim=3, name="e")
    out, _ = cell.unroll(4, inputs=emb, layout="TNC", merge_outputs=True)
    mod = mx.mod.Module(mx.sym.BlockGrad(out), data_names=["data"], label_names=None,
                        context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=it.provide_data, for_training=False)
    p = {**_w(rng, "r_", 1, 2, 3), "e_weight": rng.normal(size=(5, 3))}
    mod.init_params(arg_params={k: mx.nd.array(v.astype("float32")) for k, v in p.items()})
    mod.forward(mx.io.DataBatch(batch.data, []), is_train=False)
    tokens = batch.data[0].asnumpy().astype(int)  # (T, N)
    ys, _, _ = _run("rnn_tanh", p, "r_", [p["e_weight"][tokens[t]] for t in range(4)],
                    hidden=2)
    per_device = mod.get_outputs(merge_multi_context=False)[0]  # (each half of the batch)
    got = onp.concatenate([o.asnumpy() for o in per_device], axis=1)
    onp.testing.assert_allclose(got, onp.stack(ys), rtol=1e-5, atol=1e-5)


def test_unfused_stack_with_dropout_packs_and_unpacks_and_equals_the_fused_cell():
    """FusedRNNCell(dropout>0, num_layers=2).unfuse() holds a DropoutCell, which has no
    weights: MXNet's unpack/pack pass args through it. In inference the fused and unfused
    outputs agree."""
    fused = mx.rnn.FusedRNNCell(3, num_layers=2, mode="lstm", dropout=0.4, prefix="f_")
    stack = fused.unfuse()
    flat = onp.random.default_rng(2).normal(size=_fused_size("lstm", 2, 1, 4, 3)) * 0.5
    unpacked = fused.unpack_weights({"f_parameters": np.array(flat.astype("float32"))})
    packed = stack.pack_weights(unpacked)
    assert sorted(stack.unpack_weights(packed)) == sorted(unpacked)
    out_u, _ = stack.unroll(3, inputs=mx.sym.Variable("data"), merge_outputs=True)
    out_f, _ = fused.unroll(3, inputs=mx.sym.Variable("data"), merge_outputs=True)
    x = onp.random.default_rng(3).normal(size=(2, 3, 4))
    want = _np_fused(x.transpose(1, 0, 2), flat, "lstm", 2, 1, 3, onp.zeros((2, 2, 3)),
                     onp.zeros((2, 2, 3)))[0].transpose(1, 0, 2)
    onp.testing.assert_allclose(_eval(out_f, data=x, f_parameters=flat)[0], want,
                                rtol=1e-4, atol=1e-5)
    got = _eval(out_u, data=x, **{k: v.asnumpy() for k, v in packed.items()})[0]
    onp.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert mx.rnn.DropoutCell(0.5).unpack_weights({"a": 1}) == {"a": 1}


def test_modifier_form_dropout_cell_exposes_its_base_cells_params_and_weights():
    base = mx.rnn.LSTMCell(2, prefix="q_")
    cell = mx.rnn.DropoutCell(base, dropout_outputs=0.5)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(cell)
    assert sorted(stack.params._params) == sorted(f"q_{g}_{k}" for g in ("i2h", "h2h")
                                                  for k in ("weight", "bias"))
    args = {k: np.array(v.astype("float32"))
            for k, v in _w(onp.random.default_rng(4), "q_", 4, 2, 3).items()}
    unpacked = stack.unpack_weights(args)
    onp.testing.assert_array_equal(unpacked["q_i2h_f_weight"].asnumpy(),
                                   args["q_i2h_weight"].asnumpy()[2:4])


def test_begin_state_func_passes_through_modifier_cells_in_stacks():
    """SequentialRNNCell.begin_state(func=mx.sym.Variable) over ZoneoutCell / ResidualCell
    children, and a ZoneoutCell around a stack: names '<prefix>begin_state_<n>' and, fed,
    the NumPy result (zoneout is the identity in inference)."""
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.ZoneoutCell(mx.rnn.RNNCell(3, prefix="a_"), 0.5, 0.5))
    stack.add(mx.rnn.ResidualCell(mx.rnn.GRUCell(3, prefix="b_")))
    begin = stack.begin_state(func=mx.sym.Variable)
    assert [s.name for s in begin] == ["a_begin_state_0", "b_begin_state_0"]
    out, _ = stack.unroll(2, inputs=mx.sym.Variable("data"), begin_state=begin,
                          merge_outputs=True)
    rng = onp.random.default_rng(5)
    p = {**_w(rng, "a_", 1, 3, 4), **_w(rng, "b_", 3, 3, 3)}
    x, h0a, h0b = rng.normal(size=(2, 2, 4)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    got = _eval(out, data=x, a_begin_state_0=h0a, b_begin_state_0=h0b, **p)[0]
    ya, _, _ = _run("rnn_tanh", p, "a_", [x[:, 0], x[:, 1]], h0a, hidden=3)
    yb, _, _ = _run("gru", p, "b_", ya, h0b, hidden=3)
    onp.testing.assert_allclose(got, onp.stack([yb[t] + ya[t] for t in range(2)], 1),
                                rtol=1e-5, atol=1e-5)

    inner = mx.rnn.SequentialRNNCell()
    inner.add(mx.rnn.RNNCell(3, prefix="c_"))
    zone = mx.rnn.ZoneoutCell(inner, zoneout_outputs=0.3)
    out, _ = zone.unroll(2, inputs=mx.sym.Variable("data"), merge_outputs=True)
    p = _w(rng, "c_", 1, 3, 4)
    ys, _, _ = _run("rnn_tanh", p, "c_", [x[:, 0], x[:, 1]], hidden=3)
    onp.testing.assert_allclose(_eval(out, data=x, **p)[0], onp.stack(ys, 1), rtol=1e-5,
                                atol=1e-5)


def test_residual_cell_keeps_the_base_cells_output_form_and_needs_inputs():
    """MXNet: merge_outputs=None gives whatever the base cell gives (a fused cell: one
    symbol), plus the inputs."""
    res = mx.rnn.ResidualCell(mx.rnn.FusedRNNCell(4, mode="rnn_tanh", prefix="f_"))
    out, _ = res.unroll(3, inputs=mx.sym.Variable("data"))
    assert isinstance(out, mx.sym.Symbol)
    rng = onp.random.default_rng(6)
    flat = rng.normal(size=_fused_size("rnn_tanh", 1, 1, 4, 4))
    x = rng.normal(size=(2, 3, 4))
    want = _np_fused(x.transpose(1, 0, 2), flat, "rnn_tanh", 1, 1, 4, onp.zeros((1, 2, 4)),
                     None)[0].transpose(1, 0, 2) + x
    onp.testing.assert_allclose(_eval(out, data=x, f_parameters=flat)[0], want, rtol=1e-5,
                                atol=1e-5)
    with pytest.raises(ValueError, match="inputs"):
        mx.rnn.ResidualCell(mx.rnn.RNNCell(2)).unroll(2)


def test_begin_state_with_dtype_keeps_the_batch_from_the_inputs():
    rng = onp.random.default_rng(7)
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    begin = cell.begin_state(dtype="float32")
    out, _ = cell.unroll(2, inputs=mx.sym.Variable("data"), begin_state=begin,
                         merge_outputs=True)
    p, x = _w(rng, "l_", 4, 3, 4), rng.normal(size=(5, 2, 4))
    ys, _, _ = _run("lstm", p, "l_", [x[:, 0], x[:, 1]], hidden=3)
    onp.testing.assert_allclose(_eval(out, data=x, **p)[0], onp.stack(ys, 1), rtol=1e-5,
                                atol=1e-5)


def test_encode_sentences_unknown_token():
    """MXNet 1.x's unknown_token: with a given vocabulary an unknown word is coded as
    unknown_token, added at the next index from start_label."""
    vocab = {"\n": -1, "a": 0, "b": 1}
    coded, out = mx.rnn.encode_sentences([["a", "z", "b", "y"]], vocab=dict(vocab),
                                         unknown_token="<unk>", start_label=2)
    assert coded == [[0, 2, 1, 2]] and out == {**vocab, "<unk>": 2}


def test_names_as_mxnet():
    bi = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="l_"),
                                  mx.rnn.RNNCell(2, prefix="r_"), output_prefix="bb_")
    out, _ = bi.unroll(2, inputs=mx.sym.Variable("data"), merge_outputs=True)
    assert out.list_outputs() == ["bb_out_output"]
    gru_out, _ = mx.rnn.GRUCell(2, prefix="g_").unroll(1, inputs=mx.sym.Variable("data"))
    internals = gru_out[0].get_internals().list_outputs()
    assert "g_t0__i2h_output" in internals and "g_t0__r_act_output" in internals
    assert gru_out[0].name == "g_t0_out"
    fused = mx.rnn.FusedRNNCell(2, mode="gru", bidirectional=True, prefix="f_")
    assert [i["__layout__"] for i in fused.state_info] == ["LNC"]
    assert fused.unfuse()._cells[0]._output_prefix == "f_bi_l0_"


# ---- checks that pass (kept as regression cover) ----

@pytest.mark.parametrize("mode,layers,bi,layout,merge,states", [
    ("lstm", 3, True, "NTC", False, True), ("gru", 2, True, "TNC", None, False),
    ("rnn_relu", 1, False, "NTC", True, True), ("lstm", 2, False, "TNC", True, False)])
def test_fused_cell_equals_numpy_in_mxnets_layout(mode, layers, bi, layout, merge, states):
    rng = onp.random.default_rng(8)
    dirs, hidden, t_len, n, n_in = 1 + bi, 3, 3, 2, 4
    cell = mx.rnn.FusedRNNCell(hidden, num_layers=layers, mode=mode, bidirectional=bi,
                               get_next_state=True, prefix="f_")
    begin = cell.begin_state(func=mx.sym.Variable) if states else None
    out, st = cell.unroll(t_len, inputs=mx.sym.Variable("data"), layout=layout,
                          merge_outputs=merge, begin_state=begin)
    flat = rng.normal(size=_fused_size(mode, layers, dirs, n_in, hidden)) * 0.5
    x = rng.normal(size=(t_len, n, n_in))
    shape = (layers * dirs, n, hidden)
    h0 = rng.normal(size=shape) if states else onp.zeros(shape)
    c0 = rng.normal(size=shape) if states else onp.zeros(shape)
    feed = {"data": x if layout == "TNC" else x.transpose(1, 0, 2), "f_parameters": flat}
    if states:
        feed["f_begin_state_0"] = h0
        if mode == "lstm":
            feed["f_begin_state_1"] = c0
    merged = isinstance(out, mx.sym.Symbol)
    assert merged == (merge is not False)  # (MXNet: None gives the fused op's own form)
    outs = [out] if merged else list(out)
    got = _eval(mx.sym.Group(outs + st), **feed)
    y, hn, cn = _np_fused(x, flat, mode, layers, dirs, hidden, h0,
                          c0 if mode == "lstm" else None)
    if merged:
        onp.testing.assert_allclose(got[0], y if layout == "TNC" else y.transpose(1, 0, 2),
                                    rtol=1e-4, atol=1e-5)
    else:
        for t in range(t_len):
            onp.testing.assert_allclose(got[t], y[t], rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(got[len(outs)], hn, rtol=1e-4, atol=1e-5)
    if mode == "lstm":
        onp.testing.assert_allclose(got[len(outs) + 1], cn, rtol=1e-4, atol=1e-5)


def test_module_gradient_of_a_gru_weight_equals_numpy_finite_differences():
    rng = onp.random.default_rng(9)
    t_len, n, n_in, hidden = 3, 2, 3, 2
    cell = mx.rnn.GRUCell(hidden, prefix="c_")
    out, _ = cell.unroll(t_len, inputs=mx.sym.Variable("data"), layout="TNC",
                         merge_outputs=True)
    loss = mx.sym.MakeLoss(mx.sym.sum(out * mx.sym.Variable("R")))
    mod = mx.mod.Module(loss, data_names=["data", "R"], label_names=None)
    mod.bind(data_shapes=[("data", (t_len, n, n_in)), ("R", (t_len, n, hidden))])
    p = _w(rng, "c_", 3, hidden, n_in)
    mod.init_params(arg_params={k: mx.nd.array(v.astype("float32")) for k, v in p.items()})
    x, r = rng.normal(size=(t_len, n, n_in)), rng.normal(size=(t_len, n, hidden))
    mod.forward(mx.io.DataBatch([mx.nd.array(x), mx.nd.array(r)], []), is_train=True)
    mod.backward()
    names = mod._exec_group.param_names
    grad = mod._exec_group.grad_arrays[names.index("c_h2h_weight")][0].asnumpy()

    def f(q):
        ys, _, _ = _run("gru", q, "c_", list(x), hidden=hidden)
        return sum((y * r[t]).sum() for t, y in enumerate(ys))
    num = onp.zeros_like(p["c_h2h_weight"])
    for idx in onp.ndindex(num.shape):
        hi, lo = dict(p), dict(p)
        hi["c_h2h_weight"] = p["c_h2h_weight"].copy()
        lo["c_h2h_weight"] = p["c_h2h_weight"].copy()
        hi["c_h2h_weight"][idx] += 1e-5
        lo["c_h2h_weight"][idx] -= 1e-5
        num[idx] = (f(hi) - f(lo)) / 2e-5
    onp.testing.assert_allclose(grad, num, rtol=1e-3, atol=1e-4)


def test_zoneout_in_training_keeps_each_output_or_the_previous_one():
    rng = onp.random.default_rng(10)
    t_len, n, n_in, hidden = 4, 5, 3, 6
    cell = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(hidden, prefix="z_"), zoneout_outputs=0.5)
    out, st = cell.unroll(t_len, inputs=mx.sym.Variable("data"), merge_outputs=True)
    mod = mx.mod.Module(mx.sym.Group([mx.sym.BlockGrad(out), mx.sym.BlockGrad(st[0])]),
                        data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (n, t_len, n_in))])
    p = _w(rng, "z_", 1, hidden, n_in)
    mod.init_params(arg_params={k: mx.nd.array(v.astype("float32")) for k, v in p.items()})
    x = rng.normal(size=(n, t_len, n_in))
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], []), is_train=True)
    got, state = (o.asnumpy() for o in mod.get_outputs())
    ys, h, _ = _run("rnn_tanh", p, "z_", [x[:, t] for t in range(t_len)], hidden=hidden)
    prev, new, old = onp.zeros((n, hidden)), 0, 0
    for t in range(t_len):
        is_new = onp.isclose(got[:, t], ys[t], atol=1e-5)
        is_old = onp.isclose(got[:, t], prev, atol=1e-5)
        assert (is_new | is_old).all()
        new, old = new + is_new.sum(), old + (is_old & ~is_new).sum()
        prev = got[:, t]
    assert new > 0 and old > 0
    onp.testing.assert_allclose(state, h, rtol=1e-5, atol=1e-5)  # (states not zoned out)
