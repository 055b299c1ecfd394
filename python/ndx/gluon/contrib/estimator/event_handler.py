"""Event handlers of the Fit API (MXNet's ``gluon.contrib.estimator.event_handler``).

A handler is an object deriving from one or more of the mixins TrainBegin, TrainEnd,
EpochBegin, EpochEnd, BatchBegin and BatchEnd; Estimator.fit calls the matching method of
every handler at each of these moments, in ascending order of the handler's ``priority``
attribute (0 when it has none). ``epoch_end`` and ``batch_end`` return a stop flag: fit ends
the epoch (batch_end) or the training (epoch_end) when any handler returns True. BatchEnd
handlers get the batch and the sharded ``pred``, ``label`` and ``loss`` as keyword
arguments."""
import math
import numbers
import os
import re
import time
import warnings

from ...metric import CompositeEvalMetric, EvalMetric
from ...metric import Loss as LossMetric
from .utils import ArgumentTypeError, _check_metrics, _kind

__all__ = [
    "BatchBegin",
    "BatchEnd",
    "CheckpointHandler",
    "EarlyStoppingHandler",
    "EpochBegin",
    "EpochEnd",
    "GradientUpdateHandler",
    "LoggingHandler",
    "MetricHandler",
    "StoppingHandler",
    "TrainBegin",
    "TrainEnd",
    "ValidationHandler",
]


class EventHandler:
    """Base of the event mixins (what fit() accepts as a handler)."""


def _check_event_handlers(handlers, owner="Estimator"):
    """`handlers` as a new list (the caller's list is never extended with the defaults)."""
    if handlers is None:
        return []
    if isinstance(handlers, EventHandler):
        return [handlers]
    if isinstance(handlers, (list, tuple)):
        for i, h in enumerate(handlers):
            if not isinstance(h, EventHandler):
                raise ArgumentTypeError(f"[{owner}] event_handlers[{i}] must be an event "
                                        f"handler (TrainBegin, EpochEnd, ...), got {_kind(h)}")
        return list(handlers)
    raise ArgumentTypeError(f"[{owner}] event_handlers must be an event handler or a list of "
                            f"them, got {_kind(handlers)}")


class TrainBegin(EventHandler):
    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    def batch_end(self, estimator, *args, **kwargs):
        return False


def _check_period(owner, name, value, allow_none=True):
    """A period (epochs or batches between two actions): an int > 0, or None (never)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        expected = "an int > 0 or None" if allow_none else "an int > 0"
        raise ArgumentTypeError(f"[{owner}] {name} must be {expected}, got {_kind(value)}")
    if value <= 0:
        raise ValueError(f"[{owner}] {name} must be > 0, got {value}")
    return int(value)


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops the training after `max_epoch` epochs or `max_batch` batches (fit adds one,
    with its `epochs` / `batches`; at train_begin it takes the estimator's current limits,
    which a resuming CheckpointHandler may have lowered)."""

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets `metrics` at each epoch's start and updates them at each batch's end: a Loss
    metric with the batch's losses, any other with its labels and predictions. Its priority
    (-1000) runs it before the handlers that read the metrics."""

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics, "MetricHandler")
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred, label, loss = kwargs["pred"], kwargs["label"], kwargs["loss"]
        for metric in self.metrics:
            if isinstance(metric, LossMetric):
                metric.update(0, loss)
            else:
                metric.update(label, pred)
        return False


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` (the estimator's
    evaluate, by default) every `epoch_period` epochs and every `batch_period` batches
    (None: never). `event_handlers` are passed on to eval_fn."""

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        if not callable(eval_fn):
            raise ArgumentTypeError(f"[ValidationHandler] eval_fn must be callable (such as "
                                    f"estimator.evaluate), got {_kind(eval_fn)}")
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = _check_period("ValidationHandler", "epoch_period", epoch_period)
        self.batch_period = _check_period("ValidationHandler", "batch_period", batch_period)
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def _validate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=getattr(estimator, "batch_axis", 0),
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)
        return False

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)
        return False


def _format_metrics(metrics):
    """'name: value, name: value' of the metrics' current values."""
    parts = []
    for metric in metrics:
        for name, value in metric.get_name_value():
            parts.append(f"{name}: {value:.4f}")
    return ", ".join(parts)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs the training through estimator.logger: the optimizer and learning rate at the
    start, each epoch's time and `metrics` at its end, and with an int `log_interval` k the
    metrics every k batches as well ('epoch': per epoch only). Its priority (infinite by
    default) runs it after every other handler, so it logs the values of this batch."""

    def __init__(self, log_interval="epoch", metrics=None, priority=math.inf):
        if log_interval != "epoch" and (isinstance(log_interval, bool)
                                        or not isinstance(log_interval, numbers.Integral)):
            raise ArgumentTypeError(f"[LoggingHandler] log_interval must be an int or 'epoch', "
                                    f"got {log_interval!r}")
        if log_interval != "epoch" and log_interval <= 0:
            raise ValueError(f"[LoggingHandler] log_interval must be > 0, got {log_interval}")
        self.metrics = _check_metrics(metrics, "LoggingHandler")
        self.log_interval = log_interval
        self.priority = priority
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.log_interval_time = 0
        self.train_start = self.epoch_start = self.batch_start = time.time()
        self._in_training = False  # between train_begin and train_end

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        self._in_training = True
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate "
                              "%.4f ", type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        self._in_training = False
        train_time = time.time() - self.train_start
        msg = (f"Train finished using total {train_time:.3f}s with {self.current_epoch} "
               "epochs. ")
        estimator.logger.info((msg + _format_metrics(self.metrics)).rstrip(", "))

    def batch_begin(self, estimator, *args, **kwargs):
        if self.log_interval != "epoch":
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if self.log_interval != "epoch":
            self.log_interval_time += time.time() - self.batch_start
            batch = kwargs.get("batch")
            if batch is not None:
                self.processed_samples += batch[0].shape[getattr(estimator, "batch_axis", 0)]
            if self.batch_index % self.log_interval == 0:
                msg = (f"[Epoch {self.current_epoch}][Batch {self.batch_index}]"
                       f"[Samples {self.processed_samples}] "
                       f"time/interval: {self.log_interval_time:.3f}s ")
                self.log_interval_time = 0
                estimator.logger.info((msg + _format_metrics(self.metrics)).rstrip(", "))
        self.batch_index += 1
        return False

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        # (the estimator names its metrics 'training ...' and 'validation ...': a handler
        # of validation metrics only is one evaluate() runs, as MXNet tells them apart)
        training = (any("training" in m.name for m in self.metrics) if self.metrics
                    else self._in_training)
        if training:
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        epoch_time = time.time() - self.epoch_start
        msg = f"[Epoch {self.current_epoch}] Finished in {epoch_time:.3f}s, "
        estimator.logger.info((msg + _format_metrics(self.metrics)).rstrip(", "))
        self.current_epoch += 1
        self.batch_index = 0
        return False


def _monitor_op(owner, mode, monitor):
    """'max' (greater is better) or 'min' for the monitored metric: `mode` itself, or for
    'auto' max for an accuracy or F1 (by the metric's name) and min for anything else (a
    loss, an error). MXNet means the same, though its test of the name always picks max."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"[{owner}] mode {mode!r} is unknown (expected 'auto', 'min' or 'max'), "
                      "falling back to 'auto'", RuntimeWarning, stacklevel=3)
        mode = "auto"
    if mode == "auto":
        name = monitor.get()[0]
        name = " ".join(name) if isinstance(name, list) else str(name)
        mode = "max" if "acc" in name.lower() or "f1" in name.lower() else "min"
        other = "min" if mode == "max" else "max"
        warnings.warn(f"[{owner}] mode 'auto': {name} is taken as improving when it gets "
                      f"{'greater' if mode == 'max' else 'smaller'}; pass mode={mode!r} to "
                      f"silence this warning, or mode={other!r} for the opposite",
                      UserWarning, stacklevel=3)
    return mode


def _improved(mode, value, best, min_delta=0.0):
    """Whether `value` beats `best` by more than min_delta in the direction of `mode`."""
    if mode == "max":
        return value - min_delta > best
    return value + min_delta < best


_CHECKPOINT = re.compile(r"-epoch(\d+)batch(\d+)\.params")


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves the net's parameters (``<prefix>-epoch<E>batch<B>.params``) and the trainer's
    states (``.states``) in `model_dir` every `epoch_period` epochs and every
    `batch_period` batches, keeping the newest `max_checkpoints` of them; E is the epoch
    and B the number of batches trained (at an epoch's end) or the batch's index (at a
    batch's end), as MXNet names them. With save_best, also ``<prefix>-best.params`` /
    ``.states`` whenever the `monitor` metric improved (mode: as EarlyStoppingHandler's).
    After the first batch of a hybridized net, its graph goes to ``<prefix>-symbol.json``.

    resume_from_checkpoint: at train_begin, loads the newest checkpoint in model_dir and
    lowers the estimator's epochs (batches) to those left; its periods must then be of
    the same kind as the training's (epoch_period alone to train by epochs, batch_period
    alone to train by batches)."""

    def __init__(self, model_dir, model_prefix="model", monitor=None, verbose=0,
                 save_best=False, mode="auto", epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        if not isinstance(model_dir, (str, os.PathLike)):
            raise ArgumentTypeError(f"[CheckpointHandler] model_dir must be a path, got "
                                    f"{_kind(model_dir)}")
        if monitor is not None and not isinstance(monitor, EvalMetric):
            raise ArgumentTypeError(f"[CheckpointHandler] monitor must be an EvalMetric or "
                                    f"None, got {_kind(monitor)}")
        if save_best and monitor is None:
            raise ValueError("[CheckpointHandler] save_best=True needs a monitor: one of the "
                             "metrics of estimator.train_metrics or estimator.val_metrics")
        self.model_dir = os.fspath(model_dir)
        os.makedirs(self.model_dir, exist_ok=True)
        self.model_prefix = model_prefix
        self.monitor = monitor
        self.verbose = verbose
        self.save_best = bool(save_best)
        self.epoch_period = _check_period("CheckpointHandler", "epoch_period", epoch_period)
        self.batch_period = _check_period("CheckpointHandler", "batch_period", batch_period)
        self.max_checkpoints = _check_period("CheckpointHandler", "max_checkpoints",
                                             max_checkpoints, allow_none=False)
        self.resume_from_checkpoint = bool(resume_from_checkpoint)
        self.mode = _monitor_op("CheckpointHandler", mode, monitor) if self.save_best else mode
        self.best = None
        self.saved_checkpoints = []
        self.current_batch = 0
        self.current_epoch = 0
        self.trained_epoch = -1
        self.trained_batch = -1

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        self.trained_epoch = self.trained_batch = -1
        if self.save_best:
            self.best = -math.inf if self.mode == "max" else math.inf
        if self.resume_from_checkpoint:
            self._check_resume_periods(estimator)
            self._resume(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1
        return False

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1
        return False

    def _file(self, prefix, ext):
        return os.path.join(self.model_dir, prefix + ext)

    def _numbers(self, estimator):
        """(epoch, batch) of the checkpoint saved now, counted on from a resumed one."""
        if self.trained_epoch < 0:
            return self.current_epoch, self.current_batch
        epoch = self.current_epoch + self.trained_epoch + 1
        # (at an epoch's end the batch count is already past the last batch)
        batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
        return epoch, batch

    def _save_checkpoint(self, estimator):
        epoch, batch = self._numbers(estimator)
        prefix = f"{self.model_prefix}-epoch{epoch}batch{batch}"
        self._save_params_and_trainer(estimator, prefix)
        self.saved_checkpoints.append(prefix)
        self._remove_old_checkpoints()
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if self.save_best:
            self._save_best(estimator)

    def _save_best(self, estimator):
        name, value = self.monitor.get()
        if isinstance(value, float) and math.isnan(value):
            warnings.warn(f"[CheckpointHandler] skipping save_best: {name} has no value yet; "
                          "make sure the monitor is one of the estimator's metrics, which "
                          "the estimator updates", RuntimeWarning, stacklevel=2)
            return
        if not _improved(self.mode, value, self.best):
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                      "%0.5f, skipping updating best model",
                                      self.current_epoch, name, self.best)
            return
        prefix = f"{self.model_prefix}-best"
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to "
                                  "%0.5f, updating best model at %s with prefix: %s",
                                  self.current_epoch, name, self.best, value, self.model_dir,
                                  prefix)
        self.best = value

    def _save_params_and_trainer(self, estimator, prefix):
        estimator.net.save_parameters(self._file(prefix, ".params"))
        estimator.trainer.save_states(self._file(prefix, ".states"))

    def _remove_old_checkpoints(self):
        while len(self.saved_checkpoints) > self.max_checkpoints:
            prefix = self.saved_checkpoints.pop(0)
            # (exactly these two files: a prefix match would also take 'batch10' for 'batch1')
            for ext in (".params", ".states"):
                if os.path.exists(self._file(prefix, ext)):
                    os.remove(self._file(prefix, ext))

    def _save_symbol(self, estimator):
        """The graph of a hybridized net, as export() writes it (parameters left out)."""
        symbol_file = self._file(self.model_prefix, "-symbol.json")
        cached = getattr(estimator.net, "_last_graph", None)
        if cached is None:
            estimator.logger.info("Model architecture(symbol file) is not saved, please use "
                                  "HybridBlock to construct your model, and call "
                                  "net.hybridize() before passing to Estimator in order to "
                                  "save model architecture as %s.", symbol_file)
            return
        from .... import _core
        from ....numpy_extension import _control_flow
        text = _core._graph_json(cached[0])
        try:
            _control_flow.check_exportable(text, type(estimator.net).__name__)
        except NotImplementedError as e:  # (npx.cond / while_loop nodes: no file can hold them)
            estimator.logger.info("Model architecture (symbol file) is not saved: %s", e)
            return
        with open(symbol_file, "w") as f:
            f.write(text)

    def _check_resume_periods(self, estimator):
        by_epochs = bool(estimator.max_epoch)
        if by_epochs and (not self.epoch_period or self.batch_period):
            raise ValueError("[CheckpointHandler] to resume a training by epochs, save by "
                             "epochs only: epoch_period set and batch_period=None, got "
                             f"epoch_period={self.epoch_period}, "
                             f"batch_period={self.batch_period}")
        if not by_epochs and (not self.batch_period or self.epoch_period):
            raise ValueError("[CheckpointHandler] to resume a training by batches, save by "
                             "batches only: batch_period set and epoch_period=None, got "
                             f"epoch_period={self.epoch_period}, "
                             f"batch_period={self.batch_period}")

    def _find_checkpoints(self):
        """[(epoch, batch, prefix)] of this prefix's checkpoints in model_dir, oldest first
        (those with no .states file cannot be resumed from, and are left out)."""
        found = []
        for fname in os.listdir(self.model_dir):
            if not fname.startswith(self.model_prefix):
                continue
            match = _CHECKPOINT.fullmatch(fname[len(self.model_prefix):])
            if match and os.path.exists(self._file(fname[:-len(".params")], ".states")):
                found.append((int(match.group(1)), int(match.group(2)),
                              fname[:-len(".params")]))
        return sorted(found)

    def _resume(self, estimator):
        found = self._find_checkpoints()
        if not found:
            left = (f"{estimator.max_epoch} epochs" if estimator.max_epoch else
                    f"{estimator.max_batch} batches")
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for %s", left)
            return
        self.trained_epoch, self.trained_batch, prefix = found[-1]
        left = self._remaining(estimator)
        estimator.net.load_parameters(self._file(prefix, ".params"), ctx=estimator.device)
        estimator.trainer.load_states(self._file(prefix, ".states"))
        # the checkpoints found count toward max_checkpoints, as if saved by this run
        self.saved_checkpoints = [p for _, _, p in found]
        self._remove_old_checkpoints()
        estimator.logger.warning("CheckpointHandler: Checkpoint resumed from epoch %d batch "
                                 "%d, continue to train for %s", self.trained_epoch,
                                 self.trained_batch, left)

    def _remaining(self, estimator):
        """Lowers the estimator's epochs or batches to those the checkpoint leaves."""
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError(f"[CheckpointHandler] found a checkpoint of epoch "
                                 f"{self.trained_epoch}, the last of the {estimator.max_epoch} "
                                 "epochs asked for: nothing left to train (pass "
                                 "resume_from_checkpoint=False to train from scratch)")
            estimator.max_epoch -= self.trained_epoch + 1
            return f"{estimator.max_epoch} epochs"
        if self.trained_batch >= estimator.max_batch - 1:
            raise ValueError(f"[CheckpointHandler] found a checkpoint of batch "
                             f"{self.trained_batch}, the last of the {estimator.max_batch} "
                             "batches asked for: nothing left to train (pass "
                             "resume_from_checkpoint=False to train from scratch)")
        estimator.max_batch -= self.trained_batch + 1
        return f"{estimator.max_batch} batches"


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops the training once the `monitor` metric has not improved (by more than
    `min_delta`) for `patience` epochs in a row (patience=0: at the first epoch without
    improvement). mode: 'max' (greater is better), 'min', or 'auto' (max for an accuracy
    or F1, by the metric's name; min otherwise). baseline: the value to beat at first."""

    def __init__(self, monitor, min_delta=0, patience=0, mode="auto", baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise ArgumentTypeError(f"[EarlyStoppingHandler] monitor must be an EvalMetric "
                                    f"(one of estimator.train_metrics or "
                                    f"estimator.val_metrics), got {_kind(monitor)}")
        if isinstance(monitor, CompositeEvalMetric):
            raise ArgumentTypeError("[EarlyStoppingHandler] monitor must be a single metric, "
                                    "got a CompositeEvalMetric")
        if isinstance(patience, bool) or not isinstance(patience, numbers.Integral):
            raise ArgumentTypeError(f"[EarlyStoppingHandler] patience must be an int >= 0, "
                                    f"got {_kind(patience)}")
        if patience < 0:
            raise ValueError(f"[EarlyStoppingHandler] patience must be >= 0, got {patience}")
        if not isinstance(min_delta, numbers.Real) or min_delta < 0:
            raise ValueError(f"[EarlyStoppingHandler] min_delta must be a number >= 0, got "
                             f"{min_delta!r}")
        self.monitor = monitor
        self.min_delta = float(min_delta)
        self.patience = int(patience)
        self.baseline = baseline
        self.mode = _monitor_op("EarlyStoppingHandler", mode, monitor)
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.best = None

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = -math.inf if self.mode == "max" else math.inf

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if isinstance(value, float) and math.isnan(value):
            warnings.warn(f"[EarlyStoppingHandler] {name} has no value yet: make sure the "
                          "monitor is one of the estimator's metrics, which the estimator "
                          "updates", RuntimeWarning, stacklevel=2)
        elif _improved(self.mode, value, self.best, self.min_delta):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stop_training:
            estimator.logger.info("[Epoch %d] EarlyStoppingHandler: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Applies the gradients at each batch's end: trainer.step with the batch size, the
    number of samples in the batch's losses. Its priority (-2000) runs it first, so the
    other handlers see the updated weights."""

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        losses = loss if isinstance(loss, (list, tuple)) else [loss]
        # (a loss already reduced to a scalar counts as one sample)
        batch_size = sum(x.shape[0] if x.ndim > 0 else 1 for x in losses)
        estimator.trainer.step(batch_size)
        return False
