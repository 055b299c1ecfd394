"""MXNet 1.x's mx.rnn: symbolic cells unrolled into graphs, the fused RNN cell, the bucketing
sentence iterator and RNN checkpoints. References: NumPy re-computations of MXNet's cell
equations (LSTM gates i, f, c, o; the cuDNN GRU; tanh / relu RNN), MXNet's documented
parameter layout (unpack_weights names), and hand-worked iterator batches."""
import logging

import numpy as onp
import pytest

import ndx as mx
from ndx import np


def _sig(z):
    return 1 / (1 + onp.exp(-z))


def _weights(rng, prefix, gates, hidden, inputs):
    return {f"{prefix}i2h_weight": rng.normal(size=(gates * hidden, inputs)),
            f"{prefix}i2h_bias": rng.normal(size=gates * hidden),
            f"{prefix}h2h_weight": rng.normal(size=(gates * hidden, hidden)),
            f"{prefix}h2h_bias": rng.normal(size=gates * hidden)}


def _numpy_step(kind, p, prefix, x, h, c=None):
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
        cand = onp.tanh(i2h[:, 2 * n:] + r * h2h[:, 2 * n:])
        return (1 - z) * cand + z * h, None
    out = i2h + h2h
    return (onp.maximum(out, 0) if kind == "relu" else onp.tanh(out)), None


def _eval(sym, **arrays):
    return [o.asnumpy() for o in sym.eval(**{k: np.array(onp.asarray(v, "float32"))
                                            for k, v in arrays.items()})]


@pytest.mark.parametrize("kind", ["lstm", "gru", "relu"])
def test_unrolled_cells_equal_numpy_with_zero_begin_states(kind):
    rng = onp.random.default_rng(1)
    hidden, steps, batch, feat = 4, 3, 2, 5
    cell = {"lstm": lambda: mx.rnn.LSTMCell(hidden, prefix="c_"),
            "gru": lambda: mx.rnn.GRUCell(hidden, prefix="c_"),
            "relu": lambda: mx.rnn.RNNCell(hidden, activation="relu", prefix="c_")}[kind]()
    gates = {"lstm": 4, "gru": 3, "relu": 1}[kind]
    p = _weights(rng, "c_", gates, hidden, feat)
    data = mx.sym.Variable("data")
    outputs, states = cell.unroll(steps, inputs=data, merge_outputs=True)
    assert outputs.list_arguments() == ["data"] + list(p)
    x = rng.normal(size=(batch, steps, feat))
    got = _eval(mx.sym.Group([outputs] + states), data=x, **p)
    h, c = onp.zeros((batch, hidden)), onp.zeros((batch, hidden))
    hs = []
    for t in range(steps):
        h, c = _numpy_step(kind, p, "c_", x[:, t], h, c)
        hs.append(h)
    onp.testing.assert_allclose(got[0], onp.stack(hs, 1), rtol=1e-5, atol=1e-5)
    onp.testing.assert_allclose(got[1], h, rtol=1e-5, atol=1e-5)
    if kind == "lstm":
        onp.testing.assert_allclose(got[2], c, rtol=1e-5, atol=1e-5)


def test_stacked_and_bidirectional_cells_and_fed_begin_states():
    rng = onp.random.default_rng(2)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.RNNCell(3, prefix="a_"))
    stack.add(mx.rnn.RNNCell(2, prefix="b_"))
    begin = stack.begin_state(func=mx.sym.Variable)
    assert [s.name for s in begin] == ["a_begin_state_0", "b_begin_state_0"]
    outputs, _ = stack.unroll(2, inputs=mx.sym.Variable("data"), begin_state=begin,
                              layout="TNC")
    p = {**_weights(rng, "a_", 1, 3, 4), **_weights(rng, "b_", 1, 2, 3)}
    x = rng.normal(size=(2, 5, 4))
    h0a, h0b = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    got = _eval(mx.sym.Group(outputs), data=x, a_begin_state_0=h0a, b_begin_state_0=h0b, **p)
    ha, hb = h0a, h0b
    for t in range(2):
        ha, _ = _numpy_step("tanh", p, "a_", x[t], ha)
        hb, _ = _numpy_step("tanh", p, "b_", ha, hb)
        onp.testing.assert_allclose(got[t], hb, rtol=1e-5, atol=1e-5)

    bi = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(3, prefix="l_"),
                                  mx.rnn.RNNCell(3, prefix="r_"))
    outputs, _ = bi.unroll(3, inputs=mx.sym.Variable("data"), merge_outputs=True)
    p = {**_weights(rng, "l_", 1, 3, 4), **_weights(rng, "r_", 1, 3, 4)}
    x = rng.normal(size=(2, 3, 4))
    got = _eval(outputs, data=x, **p)[0]
    fwd, bwd = [], []
    h = onp.zeros((2, 3))
    for t in range(3):
        h, _ = _numpy_step("tanh", p, "l_", x[:, t], h)
        fwd.append(h)
    h = onp.zeros((2, 3))
    for t in reversed(range(3)):
        h, _ = _numpy_step("tanh", p, "r_", x[:, t], h)
        bwd.insert(0, h)
    onp.testing.assert_allclose(got, onp.concatenate([onp.stack(fwd, 1), onp.stack(bwd, 1)],
                                                     axis=2), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,layers,bidirectional",
                         [("lstm", 2, False), ("gru", 1, True), ("rnn_tanh", 2, True)])
def test_fused_cell_equals_its_unfused_stack_with_unpacked_weights(mode, layers,
                                                                   bidirectional):
    rng = onp.random.default_rng(3)
    fused = mx.rnn.FusedRNNCell(5, num_layers=layers, mode=mode, bidirectional=bidirectional,
                                prefix="f_")
    out_f, _ = fused.unroll(4, inputs=mx.sym.Variable("data"), layout="NTC",
                            merge_outputs=True)
    n_params = out_f.infer_shape(data=(3, 4, 6))[0][1][0]
    flat = rng.normal(size=n_params).astype("float32") * 0.5
    unpacked = fused.unpack_weights({"f_parameters": np.array(flat)})
    # MXNet's names: layer, direction, group and gate
    gate = {"lstm": "_f", "gru": "_z", "rnn_tanh": ""}[mode]
    assert f"f_l0_i2h{gate}_weight" in unpacked and f"f_l0_h2h{gate}_bias" in unpacked
    assert ("f_r0_i2h" + gate + "_weight" in unpacked) == bidirectional
    onp.testing.assert_array_equal(fused.pack_weights(unpacked)["f_parameters"].asnumpy(),
                                   flat)
    stack = fused.unfuse()
    out_u, _ = stack.unroll(4, inputs=mx.sym.Variable("data"), layout="NTC",
                            merge_outputs=True)
    unfused_args = stack.pack_weights(unpacked)
    x = rng.normal(size=(3, 4, 6))
    want = _eval(out_u, data=x, **{k: v.asnumpy() for k, v in unfused_args.items()})[0]
    got = _eval(out_f, data=x, f_parameters=flat)[0]
    onp.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_fused_initializer_sets_the_forget_biases_and_round_trips_through_json():
    fused = mx.rnn.FusedRNNCell(3, num_layers=1, mode="lstm", forget_bias=2.0, prefix="f_")
    init = mx.init.create(fused._parameter.attr("__init__"))
    values = init((4 * 3 * (2 + 3 + 2),), "float32").asnumpy()
    parts = fused.unpack_weights({"f_parameters": np.array(values)})
    for name, v in parts.items():
        v = v.asnumpy()
        if name.endswith("_f_bias"):
            onp.testing.assert_array_equal(v, onp.full(3, 2.0))  # (i2h and h2h, as MXNet)
        elif name.endswith("_bias"):
            onp.testing.assert_array_equal(v, onp.zeros(3))
        else:
            assert onp.abs(v).max() > 0


def test_lstm_cell_forget_bias_initializes_through_a_module():
    cell = mx.rnn.LSTMCell(3, prefix="l_", forget_bias=1.5)
    out, _ = cell.unroll(2, inputs=mx.sym.Variable("data"), merge_outputs=True)
    mod = mx.mod.Module(mx.sym.MakeLoss(mx.sym.sum(out)), label_names=None)
    mod.bind(data_shapes=[("data", (2, 2, 4))])
    mod.init_params(mx.init.Xavier())
    bias = mod.get_params()[0]["l_i2h_bias"].asnumpy()
    onp.testing.assert_array_equal(bias, [0] * 3 + [1.5] * 3 + [0] * 6)


def test_encode_sentences_and_bucket_iterator_by_hand(caplog):
    coded, vocab = mx.rnn.encode_sentences([["a", "b"], ["b", "c", "a"]], invalid_label=0,
                                           start_label=0)
    assert vocab == {"\n": 0, "a": 1, "b": 2, "c": 3} and coded == [[1, 2], [2, 3, 1]]
    with pytest.raises(ValueError, match="Unknown token"):
        mx.rnn.encode_sentences([["z"]], vocab=vocab)
    sents = [[1, 2], [3, 4], [5, 6, 7], [8, 9, 1], [2, 3, 4, 5, 6, 7]]
    with caplog.at_level(logging.WARNING):
        it = mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[2, 3], invalid_label=0)
    assert "discarded 1 sentences" in caplog.text
    assert it.default_bucket_key == 3 and it.provide_data == [("data", (2, 3))]
    batches = {b.bucket_key: b for b in it}
    assert sorted(batches) == [2, 3]
    for key, rows in ((2, [[1, 2], [3, 4]]), (3, [[5, 6, 7], [8, 9, 1]])):
        b = batches[key]
        data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert sorted(map(list, data.astype(int))) == rows
        onp.testing.assert_array_equal(label[:, :-1], data[:, 1:])  # next-token labels
        onp.testing.assert_array_equal(label[:, -1], [0, 0])
        assert b.provide_data == [("data", (2, key))]
    tn = mx.rnn.BucketSentenceIter(sents[:2], batch_size=2, layout="TN")
    assert next(iter(tn)).data[0].shape == (2, 2) and tn.provide_data == [("data", (2, 2))]


def test_lstm_language_model_learns_a_sequence_with_bucketing_module():
    """The 1.x bucketing example's network (Embedding, stacked LSTMCells unrolled per
    bucket, FullyConnected, SoftmaxOutput) on sentences of a cyclic sequence, where each
    token determines the next: the perplexity falls from about the vocabulary size to
    near 1."""
    vocab, hidden, batch = 6, 16, 8
    rng = onp.random.default_rng(5)
    sents = []
    for length in [4] * 48 + [6] * 48:
        start = int(rng.integers(1, vocab))
        sents.append([1 + (start + k) % (vocab - 1) for k in range(length)])
    it = mx.rnn.BucketSentenceIter(sents, batch, buckets=[4, 6], invalid_label=0)

    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(hidden, prefix="lstm_l0_"))

    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data=data, input_dim=vocab, output_dim=8, name="embed")
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=vocab, name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        return mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax"), \
            ("data",), ("softmax_label",)

    mx.random.seed(0)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=it.default_bucket_key)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Xavier())
    before = dict(mod.score(it, mx.metric.Perplexity(ignore_label=0)))["perplexity"]
    mod.fit(it, eval_metric=mx.metric.Perplexity(ignore_label=0), num_epoch=12,
            optimizer="adam", optimizer_params={"learning_rate": 0.02})
    assert sorted(mod._buckets) == [4, 6]
    ppl = dict(mod.score(it, mx.metric.Perplexity(ignore_label=0)))["perplexity"]
    assert before > 3 and ppl < 1.5


def test_rnn_checkpoints_save_unpacked_and_load_packed(tmp_path):
    cell = mx.rnn.LSTMCell(2, prefix="l_")
    out, _ = cell.unroll(2, inputs=mx.sym.Variable("data"), merge_outputs=True)
    rng = onp.random.default_rng(6)
    args = {k: np.array(v.astype("float32")) for k, v in _weights(rng, "l_", 4, 2, 3).items()}
    prefix = str(tmp_path / "lm")
    mx.rnn.save_rnn_checkpoint(cell, prefix, 1, out, args, {})
    saved, _ = mx.model.load_params(prefix, 1)
    assert sorted(saved) == sorted(f"l_{g}{gate}_{kind}" for g in ("i2h", "h2h")
                                   for gate in ("_i", "_f", "_c", "_o")
                                   for kind in ("weight", "bias"))
    onp.testing.assert_array_equal(saved["l_i2h_f_weight"].asnumpy(),
                                   args["l_i2h_weight"].asnumpy()[2:4])
    _, loaded, _ = mx.rnn.load_rnn_checkpoint(cell, prefix, 1)
    for k, v in args.items():
        onp.testing.assert_array_equal(loaded[k].asnumpy(), v.asnumpy())


def test_modifier_cells_in_inference_and_their_errors():
    rng = onp.random.default_rng(7)
    p = _weights(rng, "z_", 1, 3, 3)
    x = rng.normal(size=(2, 2, 3))
    base = _eval(mx.rnn.RNNCell(3, prefix="z_").unroll(2, mx.sym.Variable("data"),
                                                       merge_outputs=True)[0],
                 data=x, **p)[0]
    for cell in (mx.rnn.ZoneoutCell(mx.rnn.RNNCell(3, prefix="z_"), 0.5, 0.5),
                 mx.rnn.DropoutCell(mx.rnn.RNNCell(3, prefix="z_"), dropout_outputs=0.5)):
        out, _ = cell.unroll(2, mx.sym.Variable("data"), merge_outputs=True)
        onp.testing.assert_allclose(_eval(out, data=x, **p)[0], base, rtol=1e-6)
    res = mx.rnn.ResidualCell(mx.rnn.RNNCell(3, prefix="z_"))
    out, _ = res.unroll(2, mx.sym.Variable("data"), merge_outputs=True)
    onp.testing.assert_allclose(_eval(out, data=x, **p)[0], base + x, rtol=1e-6, atol=1e-6)
    inner = mx.rnn.RNNCell(3, prefix="y_")
    mx.rnn.DropoutCell(inner, dropout_outputs=0.1)
    with pytest.raises(ValueError, match="modifier"):
        inner.begin_state()
    with pytest.raises(NotImplementedError, match="unroll"):
        mx.rnn.FusedRNNCell(3)(mx.sym.Variable("x"), [])
    with pytest.raises(ValueError, match="mode"):
        mx.rnn.FusedRNNCell(3, mode="lstmx")
    with pytest.raises(ValueError, match="3 steps got 2"):
        mx.rnn.RNNCell(3).unroll(3, inputs=[mx.sym.Variable("a"), mx.sym.Variable("b")])
