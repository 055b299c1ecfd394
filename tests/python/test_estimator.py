"""Tests of the Gluon Fit API (mx.gluon.contrib.estimator): Estimator, its event handlers and
BatchProcessor. Every expected value comes from NumPy, from the numbers of the setup (batches,
epochs, file names as MXNet names them) or from a run the handler under test takes no part in."""
import logging
import os
import re

import numpy as onp
import pytest

import ndx as mx
from ndx import gluon
from ndx.gluon.contrib.estimator import (
    BatchBegin,
    BatchEnd,
    BatchProcessor,
    CheckpointHandler,
    EarlyStoppingHandler,
    EpochBegin,
    EpochEnd,
    Estimator,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    TrainEnd,
    ValidationHandler,
)

# -- helpers ---------------------------------------------------------------------------------

W0 = onp.array([[0.2, -0.1, 0.3]], dtype="float32")
B0 = onp.array([0.05], dtype="float32")


def _regression_data(n=32, noise=0.1, seed=0):
    rng = onp.random.RandomState(seed)
    x = rng.randn(n, 3).astype("float32")
    y = (x @ onp.array([[1.5], [-2.0], [0.5]]) + 0.7 + noise * rng.randn(n, 1)).astype("float32")
    return x, y


def _loader(x, y, batch_size=8):
    dataset = gluon.data.ArrayDataset(mx.np.array(x), mx.np.array(y))
    return gluon.data.DataLoader(dataset, batch_size=batch_size, shuffle=False)


def _linear_net(w=W0, b=B0, device=None):
    """Dense(1) with known weights, on `device` (a device or a list)."""
    net = gluon.nn.Dense(1, in_units=w.shape[1])
    net.initialize(ctx=device)
    net.weight.set_data(mx.np.array(w))
    net.bias.set_data(mx.np.array(b))
    return net


def _weights(net):
    return net.weight.data().asnumpy().copy(), net.bias.data().asnumpy().copy()


def _sgd(net, lr=0.1, **kwargs):
    return gluon.Trainer(net.collect_params(), "sgd", dict(learning_rate=lr, **kwargs))


def _estimator(net, loss=None, trainer=None, **kwargs):
    if "context" not in kwargs:
        kwargs.setdefault("device", mx.cpu())  # (where _linear_net puts the parameters)
    est = Estimator(net, loss if loss is not None else gluon.loss.L2Loss(),
                    trainer=trainer if trainer is not None else _sgd(net), **kwargs)
    est.logger.handlers.clear()  # (quiet; tests that read the logs attach their own)
    return est


def _np_l2(w, b, x, y):
    """Mean over samples of L2Loss: 0.5 * (x w^T + b - y)^2."""
    return float(onp.mean(0.5 * (x @ w.T + b - y) ** 2))


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


class _Counter(TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd):
    """Counts the events it sees."""

    def __init__(self):
        self.counts = dict.fromkeys(["train_begin", "epoch_begin", "batch_begin", "batch_end",
                                     "epoch_end", "train_end"], 0)

    def train_begin(self, estimator, *args, **kwargs):
        self.counts["train_begin"] += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.counts["epoch_begin"] += 1

    def batch_begin(self, estimator, *args, **kwargs):
        self.counts["batch_begin"] += 1

    def batch_end(self, estimator, *args, **kwargs):
        self.counts["batch_end"] += 1
        return False

    def epoch_end(self, estimator, *args, **kwargs):
        self.counts["epoch_end"] += 1
        return False

    def train_end(self, estimator, *args, **kwargs):
        self.counts["train_end"] += 1


class _ScriptedMetric(gluon.metric.EvalMetric):
    """A metric whose value in epoch e is values[e] (the MetricHandler resets it at each
    epoch's start; updates change nothing)."""

    def __init__(self, values, name="scripted"):
        self.values = list(values)
        self.epoch = -1
        super().__init__(name)
        self.epoch = -1  # (EvalMetric.__init__ resets once)

    def reset(self):
        self.epoch += 1

    def update(self, labels, preds):
        pass

    def get(self):
        return (self.name, self.values[min(max(self.epoch, 0), len(self.values) - 1)])


# -- training results against NumPy -------------------------------------------------------------

def test_fit_reaches_least_squares_solution():
    x, y = _regression_data(n=32, noise=0.1)
    net = _linear_net()
    # one batch per epoch: full-batch gradient descent, whose fixed point is least squares
    est = _estimator(net, trainer=_sgd(net, lr=0.5))
    est.fit(_loader(x, y, batch_size=32), epochs=150)
    design = onp.hstack([x, onp.ones((len(x), 1), "float32")]).astype("float64")
    solution = onp.linalg.lstsq(design, y.astype("float64"), rcond=None)[0].ravel()
    w, b = _weights(net)
    onp.testing.assert_allclose(w.ravel(), solution[:3], atol=1e-4)
    onp.testing.assert_allclose(b, solution[3:], atol=1e-4)


def test_minibatch_sgd_steps_match_numpy():
    """Each batch: the mean gradient of L2Loss over the batch, times lr (the trainer's step
    with the batch's size)."""
    x, y = _regression_data(n=24, noise=0.3)
    net = _linear_net()
    est = _estimator(net, trainer=_sgd(net, lr=0.05))
    est.fit(_loader(x, y, batch_size=8), epochs=2)
    w, b = W0.astype("float64"), B0.astype("float64")
    for _ in range(2):
        for i in range(0, 24, 8):
            xb, yb = x[i:i + 8], y[i:i + 8]
            err = xb @ w.T + b - yb  # d(0.5 err^2)/d pred
            w = w - 0.05 * (err.T @ xb) / 8
            b = b - 0.05 * err.sum(axis=0) / 8
    got_w, got_b = _weights(net)
    onp.testing.assert_allclose(got_w, w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(got_b, b, rtol=1e-5, atol=1e-6)


def test_training_loss_metric_equals_numpy():
    x, y = _regression_data(n=24)
    net = _linear_net()
    # learning rate 0: the parameters stay W0, B0, so every batch's loss is known
    est = _estimator(net, trainer=_sgd(net, lr=0.0), train_metrics=gluon.metric.Loss("loss"))
    est.fit(_loader(x, y), epochs=1)
    name, value = est.train_metrics[0].get()
    assert name == "training loss"
    assert value == pytest.approx(_np_l2(W0, B0, x, y), rel=1e-5)


def test_evaluate_after_fit_equals_numpy_on_final_parameters():
    x, y = _regression_data(n=32)
    xv, yv = _regression_data(n=16, seed=1)
    net = _linear_net()
    est = _estimator(net, trainer=_sgd(net, lr=0.1),
                     val_metrics=[gluon.metric.MAE(), gluon.metric.Loss()])
    est.fit(_loader(x, y), epochs=3)
    est.evaluate(_loader(xv, yv, batch_size=5))  # (a last batch of 1)
    w, b = _weights(net)
    pred = xv @ w.T + b
    names = [m.get()[0] for m in est.val_metrics]
    values = [m.get()[1] for m in est.val_metrics]
    assert names == ["validation mae", "validation loss"]
    assert values[0] == pytest.approx(float(onp.mean(onp.abs(pred - yv))), rel=1e-5)
    assert values[1] == pytest.approx(_np_l2(w, b, xv, yv), rel=1e-5)


def test_evaluate_classifier_accuracy_and_cross_entropy():
    rng = onp.random.RandomState(3)
    x = rng.randn(20, 4).astype("float32")
    labels = rng.randint(0, 3, size=20).astype("float32")
    w = rng.randn(3, 4).astype("float32")
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize()
    net.weight.set_data(mx.np.array(w))
    net.bias.set_data(mx.np.zeros(3))
    est = _estimator(net, loss=gluon.loss.SoftmaxCrossEntropyLoss())
    est.evaluate(_loader(x, labels, batch_size=6))
    logits = (x @ w.T).astype("float64")
    logp = logits - logits.max(1, keepdims=True)
    logp -= onp.log(onp.exp(logp).sum(1, keepdims=True))
    expected_acc = float(onp.mean(logits.argmax(1) == labels))
    expected_ce = float(-onp.mean(logp[onp.arange(20), labels.astype(int)]))
    (acc_name, acc), (ce_name, ce) = [m.get() for m in est.val_metrics]
    assert (acc_name, ce_name) == ("validation accuracy",
                                   "validation softmaxcrossentropyloss")
    assert acc == pytest.approx(expected_acc)
    assert ce == pytest.approx(expected_ce, rel=1e-5)


def test_val_net_and_val_loss_are_used_by_evaluate():
    xv, yv = _regression_data(n=12)
    net = _linear_net()
    w2 = onp.array([[1.0, 1.0, -1.0]], "float32")
    val_net = _linear_net(w=w2, b=onp.zeros(1, "float32"))
    est = _estimator(net, val_net=val_net, val_loss=gluon.loss.L1Loss())
    est.evaluate(_loader(xv, yv, batch_size=4))
    # the validation loss metric (named after the training loss) holds val_loss's values
    name, value = est.val_metrics[0].get()
    assert name == "validation l2loss"
    assert value == pytest.approx(float(onp.mean(onp.abs(xv @ w2.T - yv))), rel=1e-5)


def test_two_cpu_devices_give_the_one_device_result():
    x, y = _regression_data(n=16)
    results = []
    for devices in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        net = _linear_net(device=devices)
        est = _estimator(net, trainer=_sgd(net, lr=0.1), context=devices)
        est.fit(_loader(x, y), epochs=3)
        results.append(_weights(net))
    # NumPy: the same full steps (mean gradient of each batch of 8)
    w, b = W0.astype("float64"), B0.astype("float64")
    for _ in range(3):
        for i in range(0, 16, 8):
            err = x[i:i + 8] @ w.T + b - y[i:i + 8]
            w, b = w - 0.1 * (err.T @ x[i:i + 8]) / 8, b - 0.1 * err.sum(0) / 8
    for got_w, got_b in results:
        onp.testing.assert_allclose(got_w, w, rtol=1e-5, atol=1e-6)
        onp.testing.assert_allclose(got_b, b, rtol=1e-5, atol=1e-6)


def test_fit_batch_splits_across_devices_and_writes_gradients():
    x, y = _regression_data(n=8)
    devices = [mx.cpu(0), mx.cpu(1)]
    net = _linear_net(device=devices)
    est = _estimator(net, device=devices)
    data, _label, pred, loss = est.fit_batch((mx.np.array(x), mx.np.array(y)))
    assert [d.shape for d in data] == [(4, 3), (4, 3)]
    assert [str(p.device) for p in pred] == ["cpu(0)", "cpu(1)"]
    got = onp.concatenate([p.asnumpy() for p in loss])
    onp.testing.assert_allclose(got, (0.5 * (x @ W0.T + B0 - y) ** 2).ravel(), rtol=1e-5)
    # each device's copy holds the gradient of its half: summed, the whole batch's
    err = x @ W0.T + B0 - y
    grad = sum(g.asnumpy() for g in net.weight.list_grad())
    onp.testing.assert_allclose(grad, err.T @ x, rtol=1e-4, atol=1e-5)


# -- the loop and its handlers -----------------------------------------------------------------

def test_fit_batches_runs_exactly_that_many_batches():
    x, y = _regression_data(n=40)  # 5 batches an epoch
    net = _linear_net()
    est = _estimator(net)
    counter = _Counter()
    est.fit(_loader(x, y), batches=7, event_handlers=[counter])
    assert counter.counts == {"train_begin": 1, "epoch_begin": 2, "batch_begin": 7,
                              "batch_end": 7, "epoch_end": 2, "train_end": 1}
    assert est.trainer.optimizer.num_update == 7


def test_fit_epochs_runs_every_batch_of_every_epoch():
    x, y = _regression_data(n=36)  # 4 full batches and one of 4
    net = _linear_net()
    est = _estimator(net)
    counter = _Counter()
    est.fit(_loader(x, y), epochs=3, event_handlers=counter)
    assert counter.counts["batch_end"] == 15
    assert counter.counts["epoch_end"] == 3
    assert est.max_epoch == 3 and est.max_batch is None


def test_handlers_run_in_priority_order():
    x, y = _regression_data(n=16)
    net = _linear_net()
    est = _estimator(net, train_metrics=gluon.metric.Loss())
    calls = []

    class Probe(BatchEnd):
        def __init__(self, tag, priority=None):
            self.tag = tag
            if priority is not None:
                self.priority = priority

        def batch_end(self, estimator, *args, **kwargs):
            # what the metric has seen when this handler runs
            calls.append((self.tag, estimator.train_metrics[0].num_inst,
                          estimator.trainer.optimizer.num_update))
            return False

    handlers = [Probe("p5", 5), Probe("none"), Probe("m1500", -1500), Probe("m500", -500),
                Probe("m3000", -3000)]
    est.fit(_loader(x, y), epochs=1, event_handlers=handlers)
    first_batch = calls[:5]
    assert [c[0] for c in first_batch] == ["m3000", "m1500", "m500", "none", "p5"]
    # -3000 runs before the gradient update (-2000); -1500 after it and before the metric
    # handler (-1000); -500 after both
    assert first_batch[0][1:] == (0, 0)
    assert first_batch[1][1:] == (0, 1)
    assert first_batch[2][1:] == (8, 1)


def test_default_handlers_and_their_order():
    x, y = _regression_data(n=8)
    net = _linear_net()
    est = _estimator(net)
    early = EarlyStoppingHandler(monitor=est.val_metrics[0], mode="min")
    user = [early]
    handlers = est._prepare_default_handlers(val_data=None, event_handlers=user)
    assert [type(h) for h in handlers] == [GradientUpdateHandler, MetricHandler,
                                           EarlyStoppingHandler, StoppingHandler,
                                           LoggingHandler]
    assert user == [early]  # the caller's list is left as it was
    with_val = est._prepare_default_handlers(val_data=_loader(x, y), event_handlers=None)
    assert sum(isinstance(h, ValidationHandler) for h in with_val) == 1
    # a handler of a kind given replaces the default of that kind
    mine = MetricHandler(metrics=est.train_metrics)
    handlers = est._prepare_default_handlers(val_data=None, event_handlers=[mine])
    assert [h for h in handlers if isinstance(h, MetricHandler)] == [mine]
    train_begin, epoch_begin, _batch_begin, batch_end, epoch_end, _train_end = \
        est._categorize_handlers(handlers)
    assert [type(h) for h in train_begin] == [StoppingHandler, LoggingHandler]
    assert mine in epoch_begin and mine in batch_end and mine not in epoch_end


def test_foreign_metric_in_a_handler_mixed_with_defaults_raises():
    x, y = _regression_data(n=8)
    net = _linear_net()
    est = _estimator(net)
    foreign = LoggingHandler(metrics=[gluon.metric.RMSE("val rmse")])
    with pytest.raises(ValueError, match=r"LoggingHandler.*val rmse"):
        est.fit(_loader(x, y), epochs=1, event_handlers=[foreign])
    with pytest.raises(ValueError, match=r"LoggingHandler.*val rmse"):
        est.evaluate(_loader(x, y), event_handlers=[foreign])
    # the estimator's own metrics are fine
    est.fit(_loader(x, y), epochs=1,
            event_handlers=[LoggingHandler(metrics=est.train_metrics + est.val_metrics)])
    est.evaluate(_loader(x, y), event_handlers=[LoggingHandler(metrics=est.val_metrics)])


def test_stopping_handler_counts_epochs_and_batches():
    class Est:
        max_epoch, max_batch = 2, None

    by_epochs = StoppingHandler()
    by_epochs.train_begin(Est())
    assert [by_epochs.batch_end(Est()) for _ in range(5)] == [False] * 5
    assert [by_epochs.epoch_end(Est()) for _ in range(2)] == [False, True]
    Est.max_epoch, Est.max_batch = None, 3
    by_batches = StoppingHandler()
    by_batches.train_begin(Est())
    assert [by_batches.batch_end(Est()) for _ in range(3)] == [False, False, True]


def test_custom_handler_stops_the_training():
    x, y = _regression_data(n=32)  # 4 batches an epoch

    class StopAt(BatchEnd):
        def __init__(self, n):
            self.n, self.seen = n, 0

        def batch_end(self, estimator, *args, **kwargs):
            self.seen += 1
            return self.seen == self.n

    net = _linear_net()
    est = _estimator(net)
    counter = _Counter()
    est.fit(_loader(x, y), epochs=5, event_handlers=[StopAt(3), counter])
    # the stop ends the epoch (every handler still sees that batch's end); the next one
    # starts, as in MXNet: only an epoch_end stop ends the training
    assert counter.counts["batch_end"] == 3 + 4 * 4
    assert counter.counts["epoch_end"] == 5


def test_validation_handler_periods():
    x, y = _regression_data(n=32)  # 4 batches an epoch
    calls = []

    def eval_fn(val_data, batch_axis, event_handlers):
        calls.append((val_data, batch_axis, event_handlers))

    val = _loader(x, y)
    net = _linear_net()
    est = _estimator(net)
    handler = ValidationHandler(val, eval_fn, epoch_period=1, batch_period=3)
    est.fit(_loader(x, y), epochs=2, event_handlers=[handler])
    # batches 3 and 6 of the 8, and the 2 epoch ends
    assert len(calls) == 4
    assert all(c[0] is val and c[1] == 0 and c[2] is None for c in calls)


def test_early_stopping_after_patience_epochs_without_improvement():
    x, y = _regression_data(n=8)
    metric = _ScriptedMetric([1.0, 0.5, 0.6, 0.55, 0.4, 0.3])
    net = _linear_net()
    est = _estimator(net, train_metrics=metric)
    early = EarlyStoppingHandler(monitor=metric, patience=2, mode="min")
    counter = _Counter()
    est.fit(_loader(x, y), epochs=10, event_handlers=[early, counter])
    # improvements in epochs 0 and 1; epochs 2 and 3 do not beat 0.5: stop after epoch 3
    assert counter.counts["epoch_end"] == 4
    assert early.stopped_epoch == 3
    assert early.best == 0.5


def test_early_stopping_min_delta_max_mode_and_baseline():
    x, y = _regression_data(n=8)
    # max mode, min_delta 0.1: 0.65 is not enough over 0.6; patience 0 stops at once
    metric = _ScriptedMetric([0.6, 0.65, 0.9])
    net = _linear_net()
    est = _estimator(net, train_metrics=metric)
    early = EarlyStoppingHandler(monitor=metric, min_delta=0.1, patience=0, mode="max")
    counter = _Counter()
    est.fit(_loader(x, y), epochs=3, event_handlers=[early, counter])
    assert counter.counts["epoch_end"] == 2 and early.stopped_epoch == 1
    # a baseline not beaten by the first epoch
    metric = _ScriptedMetric([0.6, 0.9])
    est = _estimator(net, train_metrics=metric)
    early = EarlyStoppingHandler(monitor=metric, patience=0, mode="max", baseline=0.7)
    counter = _Counter()
    est.fit(_loader(x, y), epochs=2, event_handlers=[early, counter])
    assert counter.counts["epoch_end"] == 1 and early.stopped_epoch == 0


def test_early_stopping_auto_mode_from_the_metric_name():
    with pytest.warns(UserWarning, match="greater"):
        assert EarlyStoppingHandler(gluon.metric.Accuracy()).mode == "max"
    with pytest.warns(UserWarning, match="smaller"):
        assert EarlyStoppingHandler(gluon.metric.Loss()).mode == "min"


# -- CheckpointHandler ---------------------------------------------------------------------------

def _files(folder):
    return sorted(os.listdir(folder))


def test_checkpoint_epoch_files_and_max_checkpoints(tmp_path):
    x, y = _regression_data(n=32)  # 4 batches an epoch
    net = _linear_net()
    est = _estimator(net)
    handler = CheckpointHandler(str(tmp_path), model_prefix="lin", max_checkpoints=2)
    est.fit(_loader(x, y), epochs=3, event_handlers=[handler])
    # MXNet's names: at an epoch's end, the epoch and the number of batches trained
    assert _files(tmp_path) == ["lin-epoch1batch8.params", "lin-epoch1batch8.states",
                                "lin-epoch2batch12.params", "lin-epoch2batch12.states"]
    assert handler.current_epoch == 3 and handler.current_batch == 12
    fresh = _linear_net(w=onp.zeros((1, 3), "float32"), b=onp.zeros(1, "float32"))
    fresh.load_parameters(str(tmp_path / "lin-epoch2batch12.params"))
    for got, want in zip(_weights(fresh), _weights(net)):
        onp.testing.assert_array_equal(got, want)


def test_checkpoint_batch_period_and_symbol_file(tmp_path):
    x, y = _regression_data(n=32)  # 4 batches an epoch
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(1, in_units=3))
    net.initialize()
    net.hybridize()
    est = _estimator(net)
    handler = CheckpointHandler(str(tmp_path), epoch_period=None, batch_period=3)
    est.fit(_loader(x, y), batches=10, event_handlers=[handler])
    # at a batch's end: its epoch and its index (batches 2, 5 and 8)
    assert _files(tmp_path) == ["model-epoch0batch2.params", "model-epoch0batch2.states",
                                "model-epoch1batch5.params", "model-epoch1batch5.states",
                                "model-epoch2batch8.params", "model-epoch2batch8.states",
                                "model-symbol.json"]
    with open(tmp_path / "model-symbol.json") as f:
        assert f.read().lstrip().startswith("{")


def test_checkpoint_no_symbol_file_for_a_plain_block(tmp_path):
    x, y = _regression_data(n=8)
    net = _linear_net()
    est = _estimator(net)
    records = _Records()
    est.logger.addHandler(records)
    est.fit(_loader(x, y), epochs=1, event_handlers=[CheckpointHandler(str(tmp_path))])
    assert "model-symbol.json" not in _files(tmp_path)
    assert any("symbol file" in m and "not saved" in m for m in records.messages)


def test_checkpoint_save_best_keeps_the_best_epoch(tmp_path):
    x, y = _regression_data(n=16)
    metric = _ScriptedMetric([3.0, 1.0, 2.0])
    net = _linear_net()
    est = _estimator(net, train_metrics=metric)
    snapshots = []

    class Snapshot(EpochEnd):
        def epoch_end(self, estimator, *args, **kwargs):
            snapshots.append(_weights(estimator.net))
            return False

    handler = CheckpointHandler(str(tmp_path), monitor=metric, save_best=True, mode="min",
                                max_checkpoints=1, verbose=1)
    records = _Records()
    est.logger.addHandler(records)
    est.fit(_loader(x, y), epochs=3, event_handlers=[handler, Snapshot()])
    best_lines = [m for m in records.messages if "improve" in m]
    assert len(best_lines) == 3
    assert "training scripted improved from inf to 3.00000" in best_lines[0]
    assert "training scripted improved from 3.00000 to 1.00000" in best_lines[1]
    assert "training scripted did not improve from 1.00000" in best_lines[2]
    assert _files(tmp_path) == ["model-best.params", "model-best.states",
                                "model-epoch2batch6.params", "model-epoch2batch6.states"]
    assert handler.best == 1.0
    fresh = _linear_net()
    fresh.load_parameters(str(tmp_path / "model-best.params"))
    for got, want in zip(_weights(fresh), snapshots[1]):  # epoch 1: the smallest value
        onp.testing.assert_array_equal(got, want)
    assert not onp.array_equal(snapshots[1][0], snapshots[2][0])


def test_checkpoint_save_best_skips_a_metric_without_values(tmp_path):
    x, y = _regression_data(n=8)
    net = _linear_net()
    est = _estimator(net)
    # no validation data: the validation metric is never updated
    handler = CheckpointHandler(str(tmp_path), monitor=est.val_metrics[0], save_best=True,
                                mode="min")
    with pytest.warns(RuntimeWarning, match="skipping save_best: validation l2loss"):
        est.fit(_loader(x, y), epochs=1, event_handlers=[handler])
    assert _files(tmp_path) == ["model-epoch0batch1.params", "model-epoch0batch1.states"]


def test_checkpoint_resume_restores_parameters_states_and_epoch(tmp_path):
    x, y = _regression_data(n=32)  # 4 batches an epoch
    # the reference: 5 epochs without interruption, SGD with momentum (state to restore)
    ref = _linear_net()
    _estimator(ref, trainer=_sgd(ref, lr=0.05, momentum=0.9)).fit(_loader(x, y), epochs=5)

    first = _linear_net()
    est = _estimator(first, trainer=_sgd(first, lr=0.05, momentum=0.9))
    est.fit(_loader(x, y), epochs=2,
            event_handlers=[CheckpointHandler(str(tmp_path), max_checkpoints=1)])
    assert _files(tmp_path) == ["model-epoch1batch8.params", "model-epoch1batch8.states"]
    after_two = _weights(first)

    seen = {}

    class AtStart(TrainBegin):
        def train_begin(self, estimator, *args, **kwargs):
            seen["weights"] = _weights(estimator.net)
            seen["num_update"] = estimator.trainer.optimizer.num_update

    second = _linear_net(w=onp.ones((1, 3), "float32"))
    est = _estimator(second, trainer=_sgd(second, lr=0.05, momentum=0.9))
    counter = _Counter()
    resume = CheckpointHandler(str(tmp_path), max_checkpoints=1, resume_from_checkpoint=True)
    est.fit(_loader(x, y), epochs=5, event_handlers=[resume, AtStart(), counter])
    for got, want in zip(seen["weights"], after_two):
        onp.testing.assert_array_equal(got, want)
    assert seen["num_update"] == 8  # 2 epochs of 4 batches
    assert est.max_epoch == 3 and counter.counts["epoch_end"] == 3
    assert _files(tmp_path) == ["model-epoch4batch20.params", "model-epoch4batch20.states"]
    for got, want in zip(_weights(second), _weights(ref)):
        onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_checkpoint_resume_errors(tmp_path):
    x, y = _regression_data(n=8)
    net = _linear_net()
    est = _estimator(net)
    est.fit(_loader(x, y), epochs=2, event_handlers=[CheckpointHandler(str(tmp_path))])
    finished = CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)
    with pytest.raises(ValueError, match="nothing left to train"):
        est.fit(_loader(x, y), epochs=2, event_handlers=[finished])
    by_batches = CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)
    with pytest.raises(ValueError, match="batch_period"):
        est.fit(_loader(x, y), batches=4, event_handlers=[by_batches])


# -- LoggingHandler ------------------------------------------------------------------------------

def test_logging_per_epoch_messages_and_values():
    x, y = _regression_data(n=16)
    xv, yv = _regression_data(n=8, seed=2)
    net = _linear_net()
    est = _estimator(net, trainer=_sgd(net, lr=0.0), train_metrics=gluon.metric.Loss())
    records = _Records()
    est.logger.addHandler(records)
    est.fit(_loader(x, y), val_data=_loader(xv, yv), epochs=2)
    msgs = records.messages
    assert msgs[0].startswith("Training begin: using optimizer SGD with current learning "
                              "rate 0.0000")
    assert msgs[1] == "Train for 2 epochs."
    assert msgs[2] == "[Epoch 0] Begin, current learning rate: 0.0000"
    epoch_end = [re.fullmatch(r"\[Epoch (\d)\] Finished in \d+\.\d{3}s, (\w+) loss: "
                              r"(\d+\.\d{4})", m) for m in msgs]
    epoch_end = [m.groups() for m in epoch_end if m]
    # per epoch: the validation's line (evaluate numbers its one epoch 0), then the training's
    assert [g[:2] for g in epoch_end] == [("0", "validation"), ("0", "training"),
                                          ("0", "validation"), ("1", "training")]
    train_loss, val_loss = _np_l2(W0, B0, x, y), _np_l2(W0, B0, xv, yv)
    for _, kind, value in epoch_end:
        expected = val_loss if kind == "validation" else train_loss
        assert float(value) == pytest.approx(expected, abs=6e-5)
    assert msgs.count("Validation Begin") == 2
    last = re.fullmatch(r"Train finished using total \d+\.\d{3}s with 2 epochs\. "
                        r"training loss: (\d+\.\d{4})", msgs[-1])
    assert float(last.group(1)) == pytest.approx(train_loss, abs=6e-5)


def test_logging_every_k_batches():
    x, y = _regression_data(n=28)  # batches of 8, 8, 8 and 4 an epoch
    net = _linear_net()
    est = _estimator(net, train_metrics=gluon.metric.Loss())
    records = _Records()
    est.logger.addHandler(records)
    handler = LoggingHandler(log_interval=3, metrics=est.train_metrics)
    est.fit(_loader(x, y), epochs=2, event_handlers=[handler])
    pattern = (r"\[Epoch (\d)\]\[Batch (\d)\]\[Samples (\d+)\] time/interval: \d+\.\d{3}s "
               r"training loss: \d+\.\d{4}")
    found = [re.fullmatch(pattern, m) for m in records.messages]
    # batches 0 and 3 of each epoch; the samples counted since the training began
    assert [m.groups() for m in found if m] == [("0", "0", "8"), ("0", "3", "28"),
                                                 ("1", "0", "36"), ("1", "3", "56")]
    assert handler.current_epoch == 2 and handler.batch_index == 0


def test_logger_can_write_to_a_file(tmp_path):
    x, y = _regression_data(n=8)
    net = _linear_net()
    est = _estimator(net)
    path = tmp_path / "train.log"
    file_handler = logging.FileHandler(path)
    est.logger.addHandler(file_handler)
    est.fit(_loader(x, y), epochs=1)
    file_handler.close()
    est.logger.removeHandler(file_handler)
    assert "[Epoch 0] Finished in" in path.read_text()


# -- construction: defaults and checks ---------------------------------------------------------

def test_default_metrics_trainer_and_initialization():
    net = gluon.nn.Dense(2)
    with pytest.warns(UserWarning, match="No trainer specified"):
        est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss())
    assert [type(m) for m in est.train_metrics] == [gluon.metric.Accuracy, gluon.metric.Loss]
    assert [m.name for m in est.train_metrics] == ["training accuracy",
                                                   "training softmaxcrossentropyloss"]
    assert [m.name for m in est.val_metrics] == ["validation accuracy",
                                                 "validation softmaxcrossentropyloss"]
    assert all(t is not v for t, v in zip(est.train_metrics, est.val_metrics))
    assert type(est.trainer.optimizer).__name__ == "SGD"
    assert est.trainer.learning_rate == pytest.approx(0.001)
    default = mx.gpu(0) if mx.device.num_gpus() > 0 else mx.cpu()
    assert est.device == [default] and est.context == est.device
    # initialized (shape deferred to the first batch): training works
    x = onp.ones((4, 5), "float32")
    est.logger.handlers.clear()
    est.fit(_loader(x, onp.zeros(4, "float32"), batch_size=2), epochs=1)
    assert net.weight.data().shape == (2, 5)


def test_initializer_applies_to_an_uninitialized_net_only():
    net = gluon.nn.Dense(2, in_units=3)
    _estimator(net, initializer=mx.init.Constant(0.25))
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), onp.full((2, 3), 0.25))
    with pytest.warns(UserWarning, match="already fully initialized"):
        _estimator(net, initializer=mx.init.Constant(1.0))
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), onp.full((2, 3), 0.25))


def test_user_metric_names_get_prefixes():
    net = _linear_net()
    train = [gluon.metric.MAE(), gluon.metric.RMSE()]
    val = gluon.metric.MSE()
    est = _estimator(net, train_metrics=train, val_metrics=val)
    assert [m.name for m in est.train_metrics] == ["training mae", "training rmse"]
    assert [m.name for m in est.val_metrics] == ["validation mse"]
    assert est.train_metrics[0] is train[0]
    composite = gluon.metric.CompositeEvalMetric([gluon.metric.MAE(), gluon.metric.MSE()])
    est = _estimator(_linear_net(), train_metrics=composite)
    assert [m.name for m in est.train_metrics] == ["training mae", "training mse"]


def test_custom_batch_processor_is_used():
    x, y = _regression_data(n=16)
    calls = []

    class Tracing(BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            calls.append("fit")
            return super().fit_batch(estimator, train_batch, batch_axis)

        def evaluate_batch(self, estimator, val_batch, batch_axis=0):
            calls.append("evaluate")
            return super().evaluate_batch(estimator, val_batch, batch_axis)

    net = _linear_net()
    est = _estimator(net, batch_processor=Tracing())
    est.fit(_loader(x, y), val_data=_loader(x, y), epochs=1)
    assert calls == ["fit", "fit", "evaluate", "evaluate"]


@pytest.mark.parametrize("kwargs, match", [
    ({"loss": "mse"}, r"\[Estimator\] loss must be a gluon.loss.Loss, got str"),
    ({"trainer": "sgd"}, r"\[Estimator\] trainer must be a gluon.Trainer, got str"),
    ({"train_metrics": "acc"}, r"\[Estimator\] train_metrics must be an EvalMetric"),
    ({"val_metrics": [gluon.metric.MAE(), 3]}, r"val_metrics\[1\] must be an EvalMetric"),
    ({"context": "cpu"}, r"\[Estimator\] context must be a device"),
    ({"device": []}, r"\[Estimator\] device must be a device"),
    ({"batch_processor": object()}, r"batch_processor must be a BatchProcessor"),
    ({"val_net": "net"}, r"val_net must be a gluon Block, got str"),
])
def test_bad_constructor_arguments_raise_type_errors(kwargs, match):
    net = _linear_net()
    args = {"loss": gluon.loss.L2Loss(), "trainer": _sgd(net)}
    args.update(kwargs)
    with pytest.raises(TypeError, match=match) as info:
        Estimator(net, **args)
    # also a ValueError, as MXNet raises there
    assert isinstance(info.value, ValueError)


def test_bad_device_values_raise_value_errors():
    net = _linear_net()
    with pytest.raises(ValueError, match=r"gpu\(100\) is not available"):
        Estimator(net, gluon.loss.L2Loss(), trainer=_sgd(net), device=mx.gpu(100))
    with pytest.raises(ValueError, match="lists a device twice"):
        Estimator(net, gluon.loss.L2Loss(), trainer=_sgd(net), device=[mx.cpu(0), mx.cpu(0)])
    with pytest.raises(ValueError, match="device and context"):
        Estimator(net, gluon.loss.L2Loss(), trainer=_sgd(net), device=mx.cpu(0),
                  context=mx.cpu(1))


def test_bad_fit_arguments():
    x, y = _regression_data(n=8)
    net = _linear_net()
    est = _estimator(net)
    loader = _loader(x, y)
    with pytest.raises(TypeError, match=r"fit: train_data must be a gluon.data.DataLoader"):
        est.fit([mx.np.array(x)], epochs=1)
    with pytest.raises(TypeError, match=r"evaluate: val_data must be a gluon.data.DataLoader"):
        est.evaluate(mx.np.array(x))
    with pytest.raises(ValueError, match="exactly one of epochs or batches"):
        est.fit(loader, epochs=1, batches=2)
    with pytest.raises(ValueError, match="exactly one of epochs or batches"):
        est.fit(loader)
    with pytest.raises(ValueError, match="epochs must be > 0, got 0"):
        est.fit(loader, epochs=0)
    with pytest.raises(TypeError, match="batches must be an int > 0, got float"):
        est.fit(loader, batches=2.5)
    with pytest.raises(TypeError, match=r"event_handlers\[1\] must be an event handler"):
        est.fit(loader, epochs=1, event_handlers=[_Counter(), "log"])
    empty = _loader(x[:0], y[:0])
    with pytest.raises(ValueError, match="gave no batch"):
        est.fit(empty, batches=3)


def test_bad_handler_arguments(tmp_path):
    never_made = tmp_path / "never_made"
    with pytest.raises(ValueError, match=r"\[CheckpointHandler\] save_best=True needs a monitor"):
        CheckpointHandler(str(never_made), save_best=True)
    assert not never_made.exists()
    with pytest.raises(TypeError, match=r"\[CheckpointHandler\] max_checkpoints must be an int"):
        CheckpointHandler(str(tmp_path), max_checkpoints=None)
    with pytest.raises(ValueError, match=r"\[CheckpointHandler\] epoch_period must be > 0"):
        CheckpointHandler(str(tmp_path), epoch_period=0)
    with pytest.raises(TypeError, match=r"\[EarlyStoppingHandler\] monitor must be an EvalMetric"):
        EarlyStoppingHandler(monitor="accuracy")
    with pytest.raises(TypeError, match="single metric"):
        EarlyStoppingHandler(monitor=gluon.metric.CompositeEvalMetric([gluon.metric.MAE()]))
    with pytest.raises(ValueError, match=r"\[EarlyStoppingHandler\] patience must be >= 0"):
        EarlyStoppingHandler(monitor=gluon.metric.MAE(), patience=-1, mode="min")
    with pytest.raises(TypeError, match=r"\[LoggingHandler\] log_interval must be an int"):
        LoggingHandler(log_interval="batch")
    with pytest.raises(ValueError, match=r"\[LoggingHandler\] log_interval must be > 0"):
        LoggingHandler(log_interval=0)
    with pytest.raises(TypeError, match=r"\[MetricHandler\] metrics must be an EvalMetric"):
        MetricHandler(metrics="acc")
    with pytest.raises(TypeError, match=r"\[ValidationHandler\] eval_fn must be callable"):
        ValidationHandler(val_data=None, eval_fn="evaluate")


def test_module_is_reachable_as_in_mxnet():
    assert mx.gluon.contrib.estimator.Estimator is Estimator
    from ndx.gluon.contrib.estimator import event_handler
    assert event_handler.CheckpointHandler is CheckpointHandler
