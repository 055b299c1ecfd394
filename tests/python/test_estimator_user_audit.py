"""A user's audit of the Gluon Fit API (``gluon.contrib.estimator``), written as MXNet 2.0
code run with ``import ndx as mx``.

The first tests are findings: MXNet behaviour that ndx lacked, each checked against an
independent reference (a NumPy recomputation, a hand count, or what MXNet's own unit tests
assert). The others are tutorial-style end-to-end scripts (MXNet's Fit API tutorial and
unit tests, on synthetic data shaped like Fashion-MNIST) whose numbers are recomputed with
NumPy."""
import os
import re
import sys
import warnings
from io import StringIO

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, gluon
from ndx.gluon import nn
from ndx.gluon.contrib.estimator import (
    BatchEnd,
    CheckpointHandler,
    EarlyStoppingHandler,
    EpochEnd,
    Estimator,
    LoggingHandler,
    TrainBegin,
    TrainEnd,
    estimator,
    event_handler,
)
from ndx.gluon.contrib.estimator.batch_processor import BatchProcessor


@pytest.fixture(autouse=True)
def _quiet():
    # (the Fit API's own warnings, default trainer and 'auto' mode, are not under test here)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# -- helpers ---------------------------------------------------------------------------------

W0 = onp.array([[0.3, -0.2, 0.1]], dtype="float32")


def _regression(n=24, seed=0):
    rng = onp.random.RandomState(seed)
    x = rng.randn(n, 3).astype("float32")
    y = (x @ onp.array([[1.0], [-2.0], [0.5]]) + 0.3).astype("float32")
    return x, y


def _loader(x, y, batch_size=8, shuffle=False):
    return gluon.data.DataLoader(gluon.data.ArrayDataset(mx.np.array(x), mx.np.array(y)),
                                 batch_size=batch_size, shuffle=shuffle)


def _linear(device=None):
    net = nn.Dense(1, in_units=3)
    net.initialize(ctx=device)
    net.weight.set_data(mx.np.array(W0))
    net.bias.set_data(mx.np.zeros(1))
    return net


def _numpy_sgd(x, y, epochs, lr, momentum=0.0, batch_size=8):
    """Minibatch SGD (MXNet's update: mom = momentum * mom - lr * grad; w += mom) of the
    L2Loss 0.5 * (w.x + b - y)^2, the gradient averaged over the batch (Trainer.step)."""
    w, b = W0.astype("float64").copy(), onp.zeros(1)
    mw, mb = onp.zeros_like(w), onp.zeros_like(b)
    for _ in range(epochs):
        for s in range(0, len(x), batch_size):
            xb, yb = x[s:s + batch_size].astype("float64"), y[s:s + batch_size]
            r = xb @ w.T + b - yb
            gw, gb = r.T @ xb / len(xb), r.sum(0) / len(xb)
            mw, mb = momentum * mw - lr * gw, momentum * mb - lr * gb
            w, b = w + mw, b + mb
    return w, b


def _fashion_like(n=48, seed=0):
    """Fashion-MNIST-shaped samples: 28x28x1 uint8 images, labels 0..9."""
    rng = onp.random.RandomState(seed)
    images = rng.randint(0, 256, size=(n, 28, 28, 1)).astype("uint8")
    labels = rng.randint(0, 10, size=(n,)).astype("int32")
    return images, labels


def _fashion_loader(images, labels, batch_size=16, shuffle=False):
    t = gluon.data.vision.transforms
    dataset = gluon.data.ArrayDataset(mx.np.array(images, dtype="uint8"), mx.np.array(labels))
    dataset = dataset.transform_first(t.Compose([t.ToTensor(), t.Normalize(0.286, 0.353)]))
    return gluon.data.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle)


def _small_cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, kernel_size=3, activation="relu"), nn.MaxPool2D(2), nn.Flatten(),
            nn.Dense(16, activation="relu"), nn.Dense(10))
    return net


def _log_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z - onp.log(onp.exp(z).sum(axis=-1, keepdims=True))


# -- findings ------------------------------------------------------------------------------


def test_resume_from_checkpoint_with_a_kvstore_trainer_keeps_the_loaded_weights(tmp_path):
    # MXNet: with a Trainer whose KVStore updates the weights (a KVStore instance, or
    # update_on_kvstore=True), load_parameters after the Trainer is made reaches the store
    # (Parameter.set_data resets it), so CheckpointHandler(resume_from_checkpoint=True)
    # continues from the checkpoint. ndx's store kept its old copy and the first step
    # pulled it back over the loaded weights.
    x, y = _regression()
    net = _linear()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                            kvstore=mx.kv.create("local"))
    est = Estimator(net, gluon.loss.L2Loss(), trainer=trainer)
    est.fit(_loader(x, y), epochs=2, event_handlers=[CheckpointHandler(str(tmp_path))])

    net = _linear()  # a fresh process: the initial weights again
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                            kvstore=mx.kv.create("local"))
    est = Estimator(net, gluon.loss.L2Loss(), trainer=trainer)
    resume = CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)
    est.fit(_loader(x, y), epochs=4, event_handlers=[resume])
    assert est.max_epoch == 2
    w, b = _numpy_sgd(x, y, epochs=4, lr=0.1)
    onp.testing.assert_allclose(net.weight.data().asnumpy(), w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net.bias.data().asnumpy(), b, rtol=1e-5, atol=1e-6)


def test_checkpoint_of_a_kvstore_trainer_keeps_the_momentum(tmp_path):
    # MXNet's Trainer.save_states / load_states save the store's optimizer states when the
    # store updates the weights (kvstore.save_optimizer_states), so a resumed momentum SGD
    # makes the updates of an uninterrupted one. ndx saved the Trainer's own (empty) states
    # and load_states gave the store a new updater: the momentum restarted from zero.
    x, y = _regression()
    devices = [mx.cpu(0), mx.cpu(1)]
    opt = {"learning_rate": 0.05, "momentum": 0.9}

    def estimator_on(net):
        trainer = gluon.Trainer(net.collect_params(), "sgd", dict(opt), kvstore="device",
                                update_on_kvstore=True)
        return Estimator(net, gluon.loss.L2Loss(), trainer=trainer, device=devices)

    est = estimator_on(_linear(devices))
    est.fit(_loader(x, y), epochs=2, event_handlers=[CheckpointHandler(str(tmp_path))])
    net = _linear(devices)
    est = estimator_on(net)
    est.fit(_loader(x, y), epochs=3,
            event_handlers=[CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)])
    w, b = _numpy_sgd(x, y, epochs=3, lr=0.05, momentum=0.9)
    for device in devices:
        onp.testing.assert_allclose(net.weight.data(device).asnumpy(), w, rtol=1e-5, atol=1e-6)
        onp.testing.assert_allclose(net.bias.data(device).asnumpy(), b, rtol=1e-5, atol=1e-6)


def test_a_batch_processor_needs_only_fit_batch_and_evaluate_batch():
    # MXNet's Estimator._check_batch_processor takes any object whose fit_batch and
    # evaluate_batch are callable ("Customized Batch Processor must contain fit_batch() and
    # evaluate_batch() methods"); ndx accepted BatchProcessor subclasses only.
    calls = []

    class PlainProcessor:
        def fit_batch(self, est, batch, batch_axis=0):
            calls.append("fit")
            data = gluon.utils.split_and_load(batch[0], est.device, batch_axis=batch_axis)
            label = gluon.utils.split_and_load(batch[1], est.device, batch_axis=batch_axis)
            with autograd.record():
                pred = [est.net(d) for d in data]
                loss = [est.loss(p, lab) for p, lab in zip(pred, label)]
            for one in loss:
                one.backward()
            return data, label, pred, loss

        def evaluate_batch(self, est, batch, batch_axis=0):
            calls.append("evaluate")
            data = gluon.utils.split_and_load(batch[0], est.device, batch_axis=batch_axis)
            label = gluon.utils.split_and_load(batch[1], est.device, batch_axis=batch_axis)
            pred = [est.val_net(d) for d in data]
            return data, label, pred, [est.val_loss(p, lab) for p, lab in zip(pred, label)]

    x, y = _regression()
    net = _linear()
    est = Estimator(net, gluon.loss.L2Loss(), batch_processor=PlainProcessor(),
                    trainer=gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}))
    est.fit(_loader(x, y), val_data=_loader(x, y), epochs=2)
    assert calls == (["fit"] * 3 + ["evaluate"] * 3) * 2
    w, b = _numpy_sgd(x, y, epochs=2, lr=0.1)
    onp.testing.assert_allclose(net.weight.data().asnumpy(), w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net.bias.data().asnumpy(), b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="fit_batch"):
        Estimator(net, gluon.loss.L2Loss(), batch_processor=object())


def test_fit_takes_numpy_integer_epochs_and_batches():
    # MXNet's fit compares epochs / batches with its counters (and checks only that exactly
    # one is given), so a NumPy integer, such as a count computed with NumPy, works there;
    # ndx raised "epochs must be an int".
    class Counter(BatchEnd, EpochEnd):
        def __init__(self):
            self.batches = self.epochs = 0

        def batch_end(self, est, *args, **kwargs):
            self.batches += 1

        def epoch_end(self, est, *args, **kwargs):
            self.epochs += 1

    x, y = _regression()  # 24 samples: 3 batches of 8 per epoch
    net = _linear()
    est = Estimator(net, gluon.loss.L2Loss())
    count = Counter()
    est.fit(_loader(x, y), epochs=onp.int64(2), event_handlers=[count])
    assert (count.epochs, count.batches) == (2, 6)
    count = Counter()
    est.fit(_loader(x, y), batches=onp.ceil(len(x) / 8).astype("int64") + 1,
            event_handlers=[count])
    assert (count.epochs, count.batches) == (2, 4)


def test_an_unavailable_gpu_raises_assertion_error():
    # MXNet's test_gluon_estimator.py::test_context: a device list naming a GPU the machine
    # lacks raises AssertionError (MXNet asserts there); ndx raised a ValueError only.
    net = _linear()
    with pytest.raises(AssertionError, match=r"gpu\(\d+\) is not available"):
        Estimator(net, gluon.loss.L2Loss(), device=[mx.gpu(0), mx.gpu(100)])


# -- tutorial-style scripts ------------------------------------------------------------------


def test_fit_api_tutorial_with_custom_handler_and_best_checkpoint(tmp_path):
    """MXNet's Fit API tutorial, shrunk: a CNN on Fashion-MNIST-shaped data, the default
    metrics, a custom handler recording the loss, CheckpointHandler(save_best=True)."""
    gpu_count = mx.device.num_gpus()
    device = [mx.gpu(i) for i in range(gpu_count)] if gpu_count > 0 else mx.cpu()
    images, labels = _fashion_like()
    train_loader = _fashion_loader(images, labels, shuffle=True)
    net = _small_cnn()
    net.initialize(init=mx.init.Xavier(), device=device)
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.04})
    est = estimator.Estimator(net=net, loss=gluon.loss.SoftmaxCrossEntropyLoss(),
                              trainer=trainer, device=device)
    acc, ce = est.train_metrics
    assert (acc.name, ce.name) == ("training accuracy", "training softmaxcrossentropyloss")

    class LossRecordHandler(TrainBegin, TrainEnd, EpochEnd, BatchEnd):
        def __init__(self):
            super().__init__()
            self.loss_history = {}
            self.preds, self.labels = [], []

        def train_begin(self, est, *args, **kwargs):
            self.began = True

        def batch_end(self, est, *args, **kwargs):
            self.preds += [p.asnumpy() for p in kwargs["pred"]]
            self.labels += [lab.asnumpy() for lab in kwargs["label"]]

        def epoch_end(self, est, *args, **kwargs):
            for metric in est.train_metrics:
                if isinstance(metric, mx.gluon.metric.Loss):
                    name, value = metric.get()
                    self.loss_history.setdefault(name, []).append(value)
            # the epoch's accuracy and mean loss, from this epoch's predictions
            pred, label = onp.concatenate(self.preds), onp.concatenate(self.labels)
            nll = -_log_softmax(pred.astype("float64"))[onp.arange(len(label)), label]
            onp.testing.assert_allclose(acc.get()[1], (pred.argmax(1) == label).mean())
            onp.testing.assert_allclose(ce.get()[1], nll.mean(), rtol=1e-5)
            self.preds, self.labels = [], []

    record = LossRecordHandler()
    checkpoint = CheckpointHandler(model_dir=str(tmp_path), model_prefix="my_model",
                                   monitor=acc, save_best=True)
    est.fit(train_data=train_loader, epochs=2, event_handlers=[checkpoint, record])
    assert record.began and len(record.loss_history["training softmaxcrossentropyloss"]) == 2
    files = sorted(os.listdir(tmp_path))
    assert files == ["my_model-best.params", "my_model-best.states",
                     "my_model-epoch0batch3.params", "my_model-epoch0batch3.states",
                     "my_model-epoch1batch6.params", "my_model-epoch1batch6.states",
                     "my_model-symbol.json"]
    reloaded = _small_cnn()
    reloaded.load_parameters(str(tmp_path / "my_model-best.params"), device=device)
    batch = mx.np.array(images[:4].transpose(0, 3, 1, 2).astype("float32") / 255)
    assert reloaded(batch).shape == (4, 10)


def test_early_stopping_and_best_checkpoint_on_validation_accuracy(tmp_path):
    """EarlyStoppingHandler(patience=1) and CheckpointHandler(save_best) on the validation
    accuracy, with two devices: the stop epoch and the best parameters follow from the
    recorded accuracies."""
    images, labels = _fashion_like(n=48, seed=1)
    val_images, val_labels = _fashion_like(n=16, seed=2)
    train_loader = _fashion_loader(images, labels, shuffle=True)
    val_loader = _fashion_loader(val_images, val_labels, batch_size=8)
    devices = [mx.cpu(0), mx.cpu(1)]
    mx.random.seed(7)
    net = _small_cnn()
    net.initialize(mx.init.Xavier(), ctx=devices)
    net.hybridize()
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(),
                    train_metrics=[mx.gluon.metric.Accuracy(), mx.gluon.metric.TopKAccuracy(3)],
                    trainer=gluon.Trainer(net.collect_params(), "adam",
                                          {"learning_rate": 0.05}),
                    context=devices)
    val_acc = est.val_metrics[0]
    assert val_acc.name == "validation accuracy"

    class Snapshots(EpochEnd):
        def __init__(self):
            self.accs, self.params = [], []

        def epoch_end(self, est, *args, **kwargs):
            self.accs.append(val_acc.get()[1])
            self.params.append({k: p.data(devices[0]).asnumpy().copy()
                                for k, p in est.net.collect_params().items()})

    snaps = Snapshots()
    stopper = EarlyStoppingHandler(monitor=val_acc, patience=1, mode="max")
    best = CheckpointHandler(str(tmp_path), monitor=val_acc, save_best=True, mode="max")
    est.fit(train_loader, val_data=val_loader, epochs=8, event_handlers=[snaps, stopper, best])

    # hand count: stop after `patience` epochs in a row without a new maximum
    best_so_far, wait, expected_stop = -onp.inf, 0, None
    for epoch, value in enumerate(snaps.accs):
        if value > best_so_far:
            best_so_far, wait = value, 0
        else:
            wait += 1
            if wait >= 1:
                expected_stop = epoch
                break
    if expected_stop is None:
        assert len(snaps.accs) == 8
    else:
        assert len(snaps.accs) == expected_stop + 1
        assert stopper.stopped_epoch == expected_stop
    best_epoch = int(onp.argmax(snaps.accs))  # (the first maximum: ties do not improve)
    reloaded = _small_cnn()
    reloaded.load_parameters(str(tmp_path / "model-best.params"))
    for name, value in snaps.params[best_epoch].items():
        onp.testing.assert_array_equal(reloaded.collect_params()[name].data().asnumpy(), value)
    # the reloaded net's validation accuracy, counted with NumPy, is the best one
    pred = onp.concatenate([reloaded(data).asnumpy() for data, _ in val_loader])
    assert (pred.argmax(1) == val_labels).mean() == pytest.approx(snaps.accs[best_epoch])


def test_mxnet_resume_checkpoint_scenario_matches_an_uninterrupted_run(tmp_path):
    """MXNet's test_resume_checkpoint (max_checkpoints=1, 2 epochs then resume to 5),
    with the final weights compared to an uninterrupted NumPy run."""
    x, y = _regression(n=32)  # 4 batches of 8
    net = _linear()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05,
                                                          "momentum": 0.5})
    est = Estimator(net, gluon.loss.L2Loss(), trainer=trainer)
    handler = event_handler.CheckpointHandler(model_dir=str(tmp_path), model_prefix="test_net",
                                              max_checkpoints=1)
    est.fit(_loader(x, y), event_handlers=[handler], epochs=2)
    assert sorted(os.listdir(tmp_path)) == ["test_net-epoch1batch8.params",
                                            "test_net-epoch1batch8.states"]
    handler = event_handler.CheckpointHandler(model_dir=str(tmp_path), model_prefix="test_net",
                                              max_checkpoints=1, resume_from_checkpoint=True)
    net2 = _linear()
    est2 = Estimator(net2, gluon.loss.L2Loss(), trainer=gluon.Trainer(
        net2.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.5}))
    est2.fit(_loader(x, y), event_handlers=[handler], epochs=5)
    assert est2.max_epoch == 3
    assert sorted(os.listdir(tmp_path)) == ["test_net-epoch4batch20.params",
                                            "test_net-epoch4batch20.states"]
    w, b = _numpy_sgd(x, y, epochs=5, lr=0.05, momentum=0.5)
    onp.testing.assert_allclose(net2.weight.data().asnumpy(), w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net2.bias.data().asnumpy(), b, rtol=1e-5, atol=1e-6)


def test_logging_interval_as_in_mxnet_unit_test():
    """MXNet's test_logging_interval: 100 samples in batches of 8 (13 batches) log every
    k-th batch, batch 0 first; the sample counts grow by the batch sizes."""
    data = mx.np.ones((100, 20))
    label = mx.np.zeros((100, 1))
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(data, label), batch_size=8)
    for log_interval in (1, 5):
        old, sys.stdout = sys.stdout, StringIO()
        try:
            net = nn.Sequential()
            net.add(nn.Dense(16, activation="relu"), nn.Dense(10))
            net.initialize(ctx=mx.cpu())
            acc = mx.gluon.metric.Accuracy()
            est = estimator.Estimator(
                net=net, loss=gluon.loss.SoftmaxCrossEntropyLoss(), train_metrics=acc,
                trainer=gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.001}),
                device=mx.cpu())
            est.fit(train_data=loader, epochs=1,
                    event_handlers=[LoggingHandler(metrics=[acc], log_interval=log_interval)])
            out = sys.stdout.getvalue()
        finally:
            sys.stdout = old
        pattern = (r"\[Epoch 0\]\[Batch (\d+)\]\[Samples (\d+)\] time/interval: \d+\.\d+s "
                   r"training accuracy: \d+\.\d+")
        found = [(int(b), int(s)) for b, s in re.findall(pattern, out)]
        assert len(found) == int(100 / 8 / log_interval) + 1
        assert found == [(b, min(8 * (b + 1), 100)) for b in range(0, 13, log_interval)]


def test_custom_batch_processor_val_net_and_evaluate_metrics():
    """A BatchProcessor subclass adding an L2 penalty to the training loss, a hybridized
    val_net sharing the parameters with its own val_loss, on a device list; then evaluate
    with Accuracy / TopKAccuracy / F1, all recomputed with NumPy."""
    rng = onp.random.RandomState(3)
    x = rng.randn(32, 6).astype("float32")
    y = rng.randint(0, 4, size=32).astype("float32")
    w0 = (rng.randn(4, 6) * 0.3).astype("float32")
    lam, lr = 0.1, 0.2

    class PenaltyProcessor(BatchProcessor):
        def fit_batch(self, est, batch, batch_axis=0):
            data, label = self._get_data_and_label(batch, est.context, batch_axis)
            with autograd.record():
                pred = [est.net(d) for d in data]
                loss = [est.loss(p, lab) + lam * (est.net.weight.data(d.device) ** 2).sum()
                        for p, lab, d in zip(pred, label, data)]
            for one in loss:
                one.backward()
            return data, label, pred, loss

    devices = [mx.cpu(0), mx.cpu(1)]
    net = nn.Dense(4, in_units=6, use_bias=False)
    net.initialize(ctx=devices)
    net.weight.set_data(mx.np.array(w0))
    val_net = nn.Dense(4, in_units=6, use_bias=False)
    val_net.share_parameters(net.collect_params())
    val_net.hybridize()
    metrics = [mx.gluon.metric.Accuracy(), mx.gluon.metric.TopKAccuracy(2),
               mx.gluon.metric.F1(class_type="multiclass", average="micro"),
               mx.gluon.metric.Loss("ce")]
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), train_metrics=metrics,
                    trainer=gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr}),
                    context=devices, val_net=val_net,
                    val_loss=gluon.loss.SoftmaxCrossEntropyLoss(weight=2.0),
                    batch_processor=PenaltyProcessor())
    est.fit(_loader(x, y, batch_size=16), epochs=2)

    # NumPy: each batch's gradient is the mean cross-entropy gradient plus, per device,
    # the penalty's 2 lam w (each device's loss adds it to each of its 8 samples)
    w = w0.astype("float64")
    for _ in range(2):
        for s in range(0, 32, 16):
            xb, yb = x[s:s + 16].astype("float64"), y[s:s + 16].astype(int)
            p = onp.exp(_log_softmax(xb @ w.T))
            p[onp.arange(16), yb] -= 1
            grad = p.T @ xb / 16 + 2 * (2 * lam * w) * 8 / 16
            w = w - lr * grad
    onp.testing.assert_allclose(net.weight.data(devices[1]).asnumpy(), w, rtol=1e-4,
                                atol=1e-5)

    est.evaluate(_loader(x, y, batch_size=16))
    logits = x.astype("float64") @ w.T
    top = logits.argmax(1)
    top2 = onp.argsort(logits, axis=1)[:, -2:]
    values = dict(m.get() for m in est.val_metrics)
    assert values["validation accuracy"] == pytest.approx((top == y).mean())
    assert values["validation top_k_accuracy_2"] == pytest.approx(
        onp.mean([y[i] in top2[i] for i in range(32)]))
    # micro F1 over all classes of a single-label problem is the accuracy
    assert values["validation f1"] == pytest.approx((top == y).mean())
    # val_loss (weight 2) in the validation loss metric; the penalty is training's only
    nll = -_log_softmax(logits)[onp.arange(32), y.astype(int)]
    assert values["validation ce"] == pytest.approx(2 * nll.mean(), rel=1e-5)
