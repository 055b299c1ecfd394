"""MXNet 1.x's module API (mx.mod.Module, BucketingModule, mx.callback): training a symbol
over DataIter batches. References: NumPy re-computations of the forward pass, of
SoftmaxOutput's gradient (softmax - one_hot) and of MXNet's SGD rule (rescale_grad = 1 /
batch size, weight decay only on '*_weight' / '*_gamma' when the optimizer is named), and
MXNet's own test of lr_mult / wd_mult through a Module (tests/python/unittest/
test_module.py::test_lr_wd_mult in MXNet 1.x)."""
import logging

import numpy as onp
import pytest

import ndx as mx
from ndx import np

LR, MOM, WD = 0.1, 0.9, 1e-3


def _mlp(hidden=16, classes=3):
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, name="fc1", num_hidden=hidden)
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, name="fc2", num_hidden=classes)
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def _data(n=120, d=10, classes=3, seed=0):
    rng = onp.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype("float32")
    y = (x @ rng.normal(size=(d, classes))).argmax(1).astype("float32")
    return x, y


def _numpy_forward(p, x):
    h = onp.maximum(x @ p["fc1_weight"].T + p["fc1_bias"], 0)
    z = h @ p["fc2_weight"].T + p["fc2_bias"]
    e = onp.exp(z - z.max(1, keepdims=True))
    return h, e / e.sum(1, keepdims=True)


def _numpy_sgd_steps(p, batches, lr=LR, momentum=MOM, wd=WD):
    """MXNet's SGD over SoftmaxOutput: grad = (softmax - one_hot) summed over the batch,
    times rescale_grad = 1 / batch; wd on the weights only (biases get wd_mult 0)."""
    p = {k: v.astype("float64") for k, v in p.items()}
    mom = {k: onp.zeros_like(v) for k, v in p.items()}
    for x, y in batches:
        h, prob = _numpy_forward(p, x.astype("float64"))
        dz = prob.copy()
        dz[onp.arange(len(y)), y.astype(int)] -= 1
        grads = {"fc2_weight": dz.T @ h, "fc2_bias": dz.sum(0)}
        dh = (dz @ p["fc2_weight"]) * (h > 0)
        grads.update({"fc1_weight": dh.T @ x, "fc1_bias": dh.sum(0)})
        for k in p:
            g = grads[k] / len(x) + (wd * p[k] if k.endswith("_weight") else 0)
            mom[k] = momentum * mom[k] - lr * g
            p[k] = p[k] + mom[k]
    return p


def _params_np(mod):
    arg, _ = mod.get_params()
    return {k: v.asnumpy() for k, v in arg.items()}


def _bound_module(batch=20, d=10, context=None, **kwargs):
    mod = mx.mod.Module(_mlp(), context=context or mx.cpu(), **kwargs)
    mod.bind(data_shapes=[("data", (batch, d))], label_shapes=[("softmax_label", (batch,))])
    mod.init_params(mx.init.Xavier())
    return mod


def test_training_steps_match_numpy_sgd_with_momentum_and_bias_without_weight_decay():
    x, y = _data()
    mod = _bound_module()
    start = _params_np(mod)
    mod.init_optimizer(optimizer="sgd",
                       optimizer_params={"learning_rate": LR, "momentum": MOM, "wd": WD})
    batches = [(x[i:i + 20], y[i:i + 20]) for i in range(0, 60, 20)]
    for bx, by in batches:
        mod.forward_backward(mx.io.DataBatch([np.array(bx)], [np.array(by)]))
        mod.update()
    ref = _numpy_sgd_steps(start, batches)
    got = _params_np(mod)
    for k in ref:
        onp.testing.assert_allclose(got[k], ref[k], rtol=2e-4, atol=2e-6, err_msg=k)
    # MXNet's rule for a named optimizer: no weight decay on the biases
    assert mod._optimizer.wd_mult == {"fc1_bias": 0.0, "fc2_bias": 0.0}
    assert mod._optimizer.rescale_grad == pytest.approx(1 / 20)


def test_outputs_and_predict_drop_the_padding_of_the_last_batch():
    x, y = _data(n=130)
    mod = _bound_module(batch=50)
    it = mx.io.NDArrayIter(x, y, batch_size=50)  # 3 batches, the last padded by 20
    out = mod.predict(it)
    _, ref = _numpy_forward(_params_np(mod), x)
    assert out.shape == (130, 3)
    onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    per_batch = mod.predict(it, merge_batches=False)
    assert [o[0].shape[0] for o in per_batch] == [50, 50, 30]
    seen = [(nbatch, o[0].shape[0]) for o, nbatch, _ in mod.iter_predict(it)]
    assert seen == [(0, 50), (1, 50), (2, 30)]
    one = mod.predict(x[:50])  # an array: one forward
    onp.testing.assert_allclose(one.asnumpy(), ref[:50], rtol=1e-5, atol=1e-6)


def test_fit_learns_and_logs_train_and_validation_metrics(caplog):
    x, y = _data(n=600, seed=1)
    # NDArrayIter shuffles with NumPy's global state, as MXNet's: seeded, so the batch order
    # (and the accuracy reached, 0.91-0.98 over twelve seeds) does not change between runs.
    onp.random.seed(0)
    train = mx.io.NDArrayIter(x[:500], y[:500], batch_size=50, shuffle=True)
    val = mx.io.NDArrayIter(x[500:], y[500:], batch_size=50)
    mx.random.seed(0)
    mod = mx.mod.Module(_mlp(hidden=32))
    epochs = []
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_data=val, eval_metric="acc", optimizer="sgd",
                optimizer_params={"learning_rate": 0.5, "momentum": 0.9},
                initializer=mx.init.Xavier(), num_epoch=8,
                epoch_end_callback=lambda e, s, a, x_: epochs.append((e, sorted(a))))
    acc = dict(mod.score(val, "acc"))["accuracy"]
    # the score is the fraction of argmax hits, recomputed with NumPy
    _, prob = _numpy_forward(_params_np(mod), x[500:])
    assert acc == pytest.approx(float((prob.argmax(1) == y[500:]).mean()))
    assert acc > 0.9
    assert [e for e, _ in epochs] == list(range(8))
    assert epochs[0][1] == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]
    text = caplog.text
    assert "Epoch[0] Train-accuracy=" in text and "Epoch[7] Validation-accuracy=" in text
    assert "Epoch[3] Time cost=" in text


def test_lr_mult_and_wd_mult_from_symbol_attributes_as_mxnets_own_test():
    data = mx.sym.Variable("data")
    bias = mx.sym.Variable("fc1_bias", lr_mult=1.0)
    fc1 = mx.sym.FullyConnected(data=data, bias=bias, name="fc1", num_hidden=10, lr_mult=0)
    fc2 = mx.sym.FullyConnected(data=fc1, name="fc2", num_hidden=10, wd_mult=0.5)
    mod = mx.mod.Module(symbol=fc2, label_names=None)
    mod.bind(data_shapes=[("data", (5, 10))])
    mod.init_params(initializer=mx.init.Uniform(1.0))
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    args1 = _params_np(mod)
    mod.forward(mx.io.DataBatch(data=[mx.random.uniform(low=-1.0, high=1.0, shape=(5, 10))],
                                label=None), is_train=True)
    mod.backward(mod.get_outputs())
    mod.update()
    args2 = _params_np(mod)
    assert mod._optimizer.lr_mult == {"fc1_bias": 1.0, "fc1_weight": 0.0}
    assert mod._optimizer.wd_mult == {"fc2_bias": 0.5, "fc2_weight": 0.5, "fc1_bias": 0.0}
    onp.testing.assert_array_equal(args1["fc1_weight"], args2["fc1_weight"])
    assert not onp.allclose(args1["fc1_bias"], args2["fc1_bias"], atol=1e-1)
    assert not onp.allclose(args1["fc2_weight"], args2["fc2_weight"], atol=1e-1)


def test_attr_scope_and_layer_attr_reach_the_parameter_variables():
    with mx.AttrScope(lr_mult="0.5", group="g"):
        w = mx.sym.Variable("w")
        with mx.AttrScope(wd_mult="2"):
            fc = mx.sym.FullyConnected(mx.sym.Variable("x"), name="fc", num_hidden=2,
                                       attr={"__init__": '["zero", {}]'})
    attrs = fc.attr_dict()
    assert w.attr_dict()["w"] == {"__lr_mult__": "0.5", "group": "g"}
    assert attrs["fc_weight"]["__wd_mult__"] == "2"
    assert attrs["fc_weight"]["__lr_mult__"] == "0.5"
    assert attrs["fc_bias"]["__init__"] == '["zero", {}]'
    with pytest.raises(ValueError, match="string"):
        mx.AttrScope(lr_mult=0.5)


def test_checkpoint_with_optimizer_states_resumes_exactly(tmp_path):
    x, y = _data()
    batches = [mx.io.DataBatch([np.array(x[i:i + 20])], [np.array(y[i:i + 20])])
               for i in range(0, 120, 20)]
    opt = {"learning_rate": LR, "momentum": MOM}

    def train(mod, part):
        for b in part:
            mod.forward_backward(b)
            mod.update()

    full = _bound_module()
    start = _params_np(full)
    full.init_optimizer(optimizer_params=opt)
    train(full, batches)

    first = _bound_module()
    first.set_params({k: np.array(v) for k, v in start.items()}, {})
    first.init_optimizer(optimizer_params=opt)
    train(first, batches[:3])
    prefix = str(tmp_path / "net")
    first.save_checkpoint(prefix, 3, save_optimizer_states=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["net-0003.params", "net-0003.states", "net-symbol.json"]

    resumed = mx.mod.Module.load(prefix, 3, load_optimizer_states=True)
    resumed.bind(data_shapes=[("data", (20, 10))], label_shapes=[("softmax_label", (20,))])
    resumed.init_optimizer(optimizer_params=opt)
    train(resumed, batches[3:])
    for k, v in _params_np(full).items():
        onp.testing.assert_allclose(_params_np(resumed)[k], v, rtol=1e-6, atol=1e-7,
                                    err_msg=k)


def test_two_devices_split_the_batch_and_train_as_one():
    """Each device runs half the batch; the KVStore sums their gradients, so the update is
    the one-device update (float summation order aside)."""
    x, y = _data()
    one = _bound_module()
    start = {k: np.array(v) for k, v in _params_np(one).items()}
    two = _bound_module(context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1, 3])
    two.set_params(start, {})
    assert [s for s in two._exec_group.slices] == [slice(0, 5), slice(5, 20)]
    for mod in (one, two):
        mod.init_optimizer(optimizer_params={"learning_rate": LR, "momentum": MOM})
        for i in range(0, 60, 20):
            mod.forward_backward(mx.io.DataBatch([np.array(x[i:i + 20])],
                                                 [np.array(y[i:i + 20])]))
            mod.update()
    assert two._kvstore is not None and two._update_on_kvstore
    assert two.get_outputs()[0].shape == (20, 3)
    assert len(two.get_outputs(merge_multi_context=False)[0]) == 2
    for k, v in _params_np(one).items():
        onp.testing.assert_allclose(_params_np(two)[k], v, rtol=1e-5, atol=1e-6, err_msg=k)


def test_a_batch_of_another_size_rebinds_and_keeps_the_parameters():
    x, _ = _data()
    mod = _bound_module(batch=20)
    out = mod.predict(x[:7])
    assert mod.data_shapes[0].shape == (7, 10)
    _, ref = _numpy_forward(_params_np(mod), x[:7])
    onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_batch_norm_moving_statistics_follow_training_forwards():
    data = mx.sym.Variable("data")
    bn = mx.sym.BatchNorm(data, name="bn", fix_gamma=False, momentum=0.9)
    net = mx.sym.MakeLoss(mx.sym.sum(bn))
    mod = mx.mod.Module(net, label_names=None)
    mod.bind(data_shapes=[("data", (8, 3))])
    mod.init_params()
    _, aux = mod.get_params()
    onp.testing.assert_array_equal(aux["bn_moving_mean"].asnumpy(), onp.zeros(3))
    onp.testing.assert_array_equal(aux["bn_moving_var"].asnumpy(), onp.ones(3))
    x = onp.random.default_rng(3).normal(2.0, 3.0, size=(8, 3)).astype("float32")
    mod.forward(mx.io.DataBatch([np.array(x)]), is_train=True)
    _, aux = mod.get_params()
    onp.testing.assert_allclose(aux["bn_moving_mean"].asnumpy(), 0.1 * x.mean(0), rtol=1e-5)


def test_fixed_params_stay_and_input_gradients_are_numpys():
    x, y = _data(n=20)
    mod = mx.mod.Module(_mlp(), fixed_param_names=["fc1_weight"])
    mod.bind(data_shapes=[("data", (20, 10))], label_shapes=[("softmax_label", (20,))],
             inputs_need_grad=True)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    p = _params_np(mod)
    mod.forward_backward(mx.io.DataBatch([np.array(x)], [np.array(y)]))
    h, prob = _numpy_forward(p, x)
    dz = prob.copy()
    dz[onp.arange(20), y.astype(int)] -= 1
    dx = ((dz @ p["fc2_weight"]) * (h > 0)) @ p["fc1_weight"]
    onp.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), dx, rtol=1e-4, atol=1e-5)
    mod.update()
    after = _params_np(mod)
    onp.testing.assert_array_equal(after["fc1_weight"], p["fc1_weight"])
    assert not onp.allclose(after["fc1_bias"], p["fc1_bias"])


def test_bucketing_module_buckets_share_one_set_of_parameters():
    """sym_gen(key): the mean over key time steps, then one FullyConnected layer: every
    bucket has the same parameters, which training on one bucket changes for all."""
    def sym_gen(key):
        data = mx.sym.Variable("data")
        pooled = mx.sym.mean(data, axis=1)
        fc = mx.sym.FullyConnected(pooled, name="fc", num_hidden=3)
        return mx.sym.SoftmaxOutput(fc, name="softmax"), ("data",), ("softmax_label",)

    rng = onp.random.default_rng(4)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=6)
    mod.bind(data_shapes=[("data", (4, 6, 5))], label_shapes=[("softmax_label", (4,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})

    def batch(key):
        x = rng.normal(size=(4, key, 5)).astype("float32")
        return x, mx.io.DataBatch([np.array(x)], [np.array([0.0, 1, 2, 1])], bucket_key=key,
                                  provide_data=[mx.io.DataDesc("data", (4, key, 5))],
                                  provide_label=[mx.io.DataDesc("softmax_label", (4,))])

    before = _params_np(mod)
    _, b3 = batch(3)
    mod.forward_backward(b3)
    mod.update()
    assert sorted(mod._buckets) == [3, 6]
    after = _params_np(mod)
    assert not onp.allclose(after["fc_weight"], before["fc_weight"])
    x6, b6 = batch(6)
    mod.forward(b6, is_train=False)
    z = x6.mean(1) @ after["fc_weight"].T + after["fc_bias"]
    ref = onp.exp(z - z.max(1, keepdims=True))
    onp.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                                ref / ref.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_callbacks_log_in_mxnets_formats_and_checkpoint_by_period(caplog, tmp_path):
    metric = mx.metric.create("acc")
    metric.update([np.array([0.0, 1.0])], [np.array([[0.9, 0.1], [0.2, 0.8]])])
    speed = mx.callback.Speedometer(batch_size=10, frequent=2)
    with caplog.at_level(logging.INFO):
        for n in range(5):
            speed(mx.model.BatchEndParam(epoch=1, nbatch=n, eval_metric=metric, locals=None))
        mx.callback.log_train_metric(2)(mx.model.BatchEndParam(1, 4, metric, None))
    lines = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Epoch[1] Batch [0-2]\tSpeed: ") and
               m.endswith(" samples/sec\taccuracy=1.000000") for m in lines)
    assert any(m.startswith("Epoch[1] Batch [2-4]\tSpeed: ") for m in lines)
    assert "Iter[1] Batch[4] Train-accuracy=" in caplog.text
    mod = _bound_module()
    save = mx.callback.do_checkpoint(str(tmp_path / "ck"), period=2)
    arg, aux = mod.get_params()
    for epoch in range(4):
        save(epoch, mod.symbol, arg, aux)
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["ck-0002.params", "ck-0004.params", "ck-symbol.json"]
    _, loaded, _ = mx.model.load_checkpoint(str(tmp_path / "ck"), 4)
    onp.testing.assert_array_equal(loaded["fc1_weight"].asnumpy(), arg["fc1_weight"].asnumpy())


def test_bad_use_raises_typed_errors():
    net = _mlp()
    with pytest.raises(ValueError, match="data_names has 'x'"):
        mx.mod.Module(net, data_names=["x"])
    with pytest.raises(TypeError, match="Symbol"):
        mx.mod.Module("net")
    mod = mx.mod.Module(net)
    with pytest.raises(mx.NDXError, match="bind"):
        mod.init_params()
    with pytest.raises(ValueError, match="data_names"):
        mod.bind(data_shapes=[("images", (2, 10))])
    with pytest.raises(ValueError, match="num_epoch"):
        mod.fit(mx.io.NDArrayIter(onp.zeros((4, 10)), onp.zeros(4), batch_size=2))
    mod.bind(data_shapes=[("data", (2, 10))], label_shapes=[("softmax_label", (2,))],
             for_training=False)
    with pytest.raises(mx.NDXError, match="init_params"):
        mod.forward(mx.io.DataBatch([np.zeros((2, 10))]))
    with pytest.raises(RuntimeError, match="fc2_bias is not presented"):
        mod.init_params(arg_params={"fc1_weight": np.zeros((16, 10)),
                                    "fc1_bias": np.zeros(16), "fc2_weight": np.zeros((3, 16))})
    mod.init_params()
    with pytest.raises(mx.NDXError, match="for_training=False"):
        mod.forward(mx.io.DataBatch([np.zeros((2, 10))]), is_train=True)
    with pytest.raises(mx.NDXError, match="for_training=False"):
        mod.backward()
    with pytest.raises(ValueError, match="shape"):
        mod.set_params({"fc1_weight": np.zeros((3, 3))}, {}, allow_missing=True)


def test_monitor_reports_forward_outputs_and_updated_weights_every_interval(caplog):
    """mx.mon.Monitor(2): batches 1 and 3 of 4 are collected; an output's statistic is the
    forward's (norm / sqrt(size), the parameters before that batch's update), a weight's is
    its value at toc, after the update (MXNet's order in fit)."""
    x, y = _data(n=80)
    mod = _bound_module()
    mon = mx.mon.Monitor(2, pattern="fc1_output|fc2_weight", sort=True)
    mod.install_monitor(mon)
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})

    def rms(a):
        return float(onp.sqrt((a.astype("float64") ** 2).sum() / a.size))

    seen = []
    for i in range(4):
        before = _params_np(mod)
        mon.tic()
        mod.forward_backward(mx.io.DataBatch([np.array(x[20 * i:20 * i + 20])],
                                             [np.array(y[20 * i:20 * i + 20])]))
        mod.update()
        res = mon.toc()
        if i % 2:
            assert res == []
            continue
        after = _params_np(mod)
        fc1 = x[20 * i:20 * i + 20] @ before["fc1_weight"].T + before["fc1_bias"]
        assert [(s, n) for s, n, _ in res] == [(i + 1, "fc1_output"), (i + 1, "fc2_weight")]
        assert float(res[0][2]) == pytest.approx(rms(fc1), rel=1e-5)
        assert float(res[1][2]) == pytest.approx(rms(after["fc2_weight"]), rel=1e-5)
        seen.append(i)
    assert seen == [0, 2]
    with caplog.at_level(logging.INFO):
        mon.tic()
        mod.forward(mx.io.DataBatch([np.array(x[:20])]), is_train=False)
        mon.toc_print()
    assert any(r.getMessage().startswith("Batch:       5 fc1_output") for r in caplog.records)


def test_fit_reads_an_iterator_that_score_used_up_from_its_start():
    """MXNet's fit stops with StopIteration on an exhausted iterator; ndx resets it. An
    iterator with no batches at all is a ValueError."""
    x, y = _data(n=40)
    it = mx.io.NDArrayIter(x, y, batch_size=20)
    mod = _bound_module()
    mod.score(it, "acc")  # (reads every batch)
    seen = []
    mod.fit(it, num_epoch=1, batch_end_callback=lambda p: seen.append(p.nbatch))
    assert seen == [0, 1]

    class Empty(mx.io.DataIter):
        provide_data = [mx.io.DataDesc("data", (20, 10))]
        provide_label = [mx.io.DataDesc("softmax_label", (20,))]

    with pytest.raises(ValueError, match="no batches"):
        mod.fit(Empty(), num_epoch=1)


def test_contrib_data_loader_iter_feeds_a_module_with_the_last_batch_padded():
    """mx.contrib.io.DataLoaderIter (MXNet 1.x): a gluon DataLoader as a DataIter; a smaller
    last batch is padded with its own first rows and pad says how many, so predict drops
    them."""
    x, y = _data(n=50)
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, y), batch_size=20)
    it = mx.contrib.io.DataLoaderIter(loader)
    assert it.provide_data[0].shape == (20, 10) and it.provide_label[0].shape == (20,)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 10]
    onp.testing.assert_array_equal(batches[2].data[0].asnumpy(),
                                   onp.concatenate([x[40:], x[40:50]]))
    mod = _bound_module(batch=20)
    _, ref = _numpy_forward(_params_np(mod), x)
    onp.testing.assert_allclose(mod.predict(it).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="pairs"):
        mx.contrib.io.DataLoaderIter([x[:2]])


def test_bucketing_module_load_restores_the_saved_parameters(tmp_path):
    def sym_gen(key):
        data = mx.sym.Variable("data")
        fc = mx.sym.FullyConnected(mx.sym.mean(data, axis=1), name="fc", num_hidden=3)
        return mx.sym.SoftmaxOutput(fc, name="softmax"), ("data",), ("softmax_label",)

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=5)
    mod.bind(data_shapes=[("data", (2, 5, 4))], label_shapes=[("softmax_label", (2,))])
    mod.init_params(mx.init.Xavier())
    mod.save_checkpoint(str(tmp_path / "b"), 2)
    saved = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    loaded = mx.mod.BucketingModule.load(str(tmp_path / "b"), 2, sym_gen=sym_gen,
                                         default_bucket_key=5)
    loaded.bind(data_shapes=[("data", (2, 5, 4))], label_shapes=[("softmax_label", (2,))],
                for_training=False)
    assert loaded.params_initialized
    for k, v in loaded.get_params()[0].items():
        onp.testing.assert_array_equal(v.asnumpy(), saved[k])
    with pytest.raises(ValueError, match="sym_gen"):
        mx.mod.BucketingModule.load(str(tmp_path / "b"), 2)


def test_a_module_checkpoint_imports_into_a_symbol_block(tmp_path):
    """Module.save_checkpoint's files load in gluon.SymbolBlock.imports with the label as an
    input (its value unused by SoftmaxOutput's forward), giving predict's outputs."""
    x, y = _data(n=40)
    mod = mx.mod.Module(_mlp())
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=10), num_epoch=1, initializer=mx.init.Xavier())
    prefix = str(tmp_path / "ck")
    mod.save_checkpoint(prefix, 1)
    block = mx.gluon.SymbolBlock.imports(f"{prefix}-symbol.json", ["data", "softmax_label"],
                                         f"{prefix}-0001.params")
    out = block(np.array(x[:10]), np.zeros(10))
    _, ref = _numpy_forward(_params_np(mod), x[:10])
    onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_feedforward_fits_numpy_arrays_and_round_trips_through_a_checkpoint(tmp_path):
    """MXNet's old mx.model.FeedForward API over Module: fit(X, y) on NumPy arrays, predict
    equal to the NumPy forward of its parameters, score of a DataIter, save / load / create."""
    x, y = _data(n=300, seed=2)
    mx.random.seed(1)
    model = mx.model.FeedForward(_mlp(hidden=32), num_epoch=10, learning_rate=0.1,
                                 momentum=0.9, numpy_batch_size=50,
                                 initializer=mx.init.Xavier())
    model.fit(x[:250], y[:250])
    params = {k: v.asnumpy() for k, v in model.arg_params.items()}
    pred = model.predict(x[250:])
    _, ref = _numpy_forward(params, x[250:])
    onp.testing.assert_allclose(pred, ref, rtol=1e-5, atol=1e-6)
    acc = model.score(mx.io.NDArrayIter(x[250:], y[250:], batch_size=25))
    assert acc == pytest.approx(float((ref.argmax(1) == y[250:]).mean())) and acc > 0.85
    model.save(str(tmp_path / "ff"))  # (epoch: num_epoch)
    loaded = mx.model.FeedForward.load(str(tmp_path / "ff"), 10)
    onp.testing.assert_array_equal(loaded.predict(x[250:]), pred)
    out, data, _ = loaded.predict(x[:7], return_data=True)
    assert out.shape == (7, 3) and onp.array_equal(data, x[:7])
    created = mx.model.FeedForward.create(_mlp(), x[:100], y[:100], num_epoch=1)
    assert created.arg_params is not None
    with pytest.raises(ValueError, match="y is required"):
        mx.model.FeedForward(_mlp(), num_epoch=1).fit(x[:10])
    with pytest.raises(TypeError, match="DataIter"):
        model.score(x[:10])
