"""Estimator: MXNet's Gluon Fit API (``gluon.contrib.estimator``), a training loop driven
by event handlers.

    est = Estimator(net, loss=gluon.loss.L2Loss(), trainer=trainer, device=mx.cpu())
    est.fit(train_loader, val_data=val_loader, epochs=5)
    est.evaluate(val_loader)
"""
import copy
import logging
import numbers
import sys
import warnings

from ....device import Device, cpu, gpu, num_gpus
from ...block import Block
from ...data import DataLoader
from ...loss import Loss as GluonLoss
from ...metric import Loss as LossMetric
from ...parameter import DeferredInitializationError
from ...trainer import Trainer
from .batch_processor import BatchProcessor
from .event_handler import (
    BatchBegin,
    BatchEnd,
    EpochBegin,
    EpochEnd,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    TrainEnd,
    ValidationHandler,
    _check_event_handlers,
)
from .utils import (
    ArgumentTypeError,
    DeviceUnavailableError,
    _check_handler_metric_ref,
    _check_metrics,
    _kind,
    _suggest_metric_for_loss,
)

__all__ = ["Estimator"]

_TRAIN_PREFIX = "training "
_VAL_PREFIX = "validation "


class Estimator:
    """Trains `net` on `loss` with `trainer` and evaluates it, calling event handlers at
    each step (see event_handler).

    train_metrics / val_metrics: EvalMetrics (or lists of them) updated during fit and
    evaluate. With no train_metrics, the loss's mean (a Loss metric named after the loss)
    is the metric, with accuracy before it for a SoftmaxCrossEntropyLoss; the names get a
    'training ' prefix. With no val_metrics, copies of the training ones, named
    'validation ...'.
    initializer: used when some parameter of `net` is not initialized yet.
    trainer: a gluon.Trainer; by default SGD with learning rate 0.001 (with a warning).
    device (context, its MXNet 1.x name): a device or a list of them; each batch is split
    across them. By default gpu(0) if there is a GPU, else cpu().
    val_net / val_loss: the net and loss evaluate() uses (by default net and loss).
    batch_processor: a BatchProcessor (or, as MXNet allows, any object with fit_batch and
    evaluate_batch methods), for a custom fit_batch / evaluate_batch.

    logger: a logging.Logger of this estimator, writing INFO and above to sys.stdout; add
    handlers to it (a logging.FileHandler, say) to send the logs elsewhere as well."""

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None, batch_processor=None,
                 device=None):
        self.net = self._check_net(net, "net")
        self.loss = self._check_loss(loss, "loss")
        self._train_metrics = _check_metrics(train_metrics, "Estimator", "train_metrics")
        self._val_metrics = _check_metrics(val_metrics, "Estimator", "val_metrics")
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss, "val_loss")
        self.val_net = self.net if val_net is None else self._check_net(val_net, "val_net")

        # a logger of this estimator's own, outside logging's registry (as MXNet's): a
        # second estimator must not add its stdout handler to this one's
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)  # noqa: LOG001
        self.logger.addHandler(logging.StreamHandler(sys.stdout))

        self.device = self._check_devices(device, context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        # set by fit(); read by the handlers
        self.max_epoch = None
        self.max_batch = None
        self.batch_axis = 0

    @property
    def context(self):
        """The devices (MXNet 1.x's name of `device`)."""
        return self.device

    # -- argument checks --------------------------------------------------------------

    @staticmethod
    def _check_net(net, arg):
        if not isinstance(net, Block):
            raise ArgumentTypeError(f"[Estimator] {arg} must be a gluon Block, got {_kind(net)}")
        return net

    @staticmethod
    def _check_loss(loss, arg="loss"):
        if not isinstance(loss, GluonLoss):
            raise ArgumentTypeError(f"[Estimator] {arg} must be a gluon.loss.Loss, got "
                                    f"{_kind(loss)}")
        return loss

    @staticmethod
    def _check_devices(device, context=None):
        """The devices as a list: `device`, or its 1.x name `context` (not both)."""
        if device is not None and context is not None and device != context:
            raise ValueError(f"[Estimator] device and context (its MXNet 1.x name) are the "
                             f"same argument, got both: device={device}, context={context}")
        arg, devices = ("device", device) if device is not None else ("context", context)
        if devices is None:
            return Estimator._default_devices()
        if isinstance(devices, Device):
            devices = [devices]
        if not isinstance(devices, (list, tuple)) or not devices or \
                not all(isinstance(d, Device) for d in devices):
            raise ArgumentTypeError(f"[Estimator] {arg} must be a device or a non-empty list "
                                    f"of devices, such as mx.cpu() or [mx.gpu(0), mx.gpu(1)], "
                                    f"got {devices!r}")
        if len(set(devices)) != len(devices):
            raise ValueError(f"[Estimator] {arg} lists a device twice, got {list(devices)} "
                             "(each device takes one part of a batch)")
        gpus = num_gpus()
        for d in devices:
            if d.device_type == "gpu" and d.device_id >= gpus:
                raise DeviceUnavailableError(f"[Estimator] device {d} is not available: this "
                                             f"machine has {gpus} GPU(s); use mx.cpu() or one "
                                             f"of {[gpu(i) for i in range(gpus)]}")
        return list(devices)

    @staticmethod
    def _default_devices():
        gpus = num_gpus()
        if gpus == 0:
            return [cpu()]
        if gpus > 1:
            warnings.warn("You have multiple GPUs, gpu(0) will be used by default. To use all "
                          "your GPUs, pass device=[mx.gpu(0), mx.gpu(1), ...]", stacklevel=3)
        return [gpu(0)]

    def _is_initialized(self):
        """Whether every parameter is initialized (shape-deferred ones count: their values
        come at the first forward)."""
        for param in self.net.collect_params().values():
            try:
                param.data()
            except DeferredInitializationError:
                continue
            except RuntimeError:
                return False
        return True

    def _initialize(self, initializer):
        if not self._is_initialized():
            # (parameters initialized already, such as a pretrained body's, are left alone)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*already initialized")
                self.net.initialize(init=initializer, ctx=self.device)
        elif initializer is not None:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your "
                          "net. You can use net.initialize(init=your_initializer, "
                          "force_reinit=True) to force re-initialize.", stacklevel=3)

    def _check_trainer(self, trainer):
        if trainer is None:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                          "0.001 is used.", stacklevel=3)
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ArgumentTypeError(f"[Estimator] trainer must be a gluon.Trainer, got "
                                    f"{_kind(trainer)}")
        return trainer

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        # (as MXNet, any object with fit_batch() and evaluate_batch() methods will do: a
        # BatchProcessor subclass is the usual one, not the only one)
        if not all(callable(getattr(batch_processor, m, None))
                   for m in ("fit_batch", "evaluate_batch")):
            raise ArgumentTypeError(f"[Estimator] batch_processor must be a BatchProcessor "
                                    f"(or an object with fit_batch() and evaluate_batch() "
                                    f"methods), got {_kind(batch_processor)}")
        return batch_processor

    # -- metrics ----------------------------------------------------------------------

    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested is not None:
                self._train_metrics = [suggested]
            # (the block's name less its instance number: 'l2loss0' -> 'l2loss')
            self._train_metrics.append(LossMetric(self.loss.name.rstrip("0123456789")))
        for metric in self._train_metrics:
            # the prefix tells the handlers training metrics from validation ones (once:
            # a metric given to a second estimator keeps its name)
            if not metric.name.startswith(_TRAIN_PREFIX):
                metric.name = _TRAIN_PREFIX + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if metric.name.startswith(_VAL_PREFIX):
                continue
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation", 1)
            else:
                metric.name = _VAL_PREFIX + metric.name

    @property
    def train_metrics(self):
        return self._train_metrics

    @property
    def val_metrics(self):
        return self._val_metrics

    # -- one batch --------------------------------------------------------------------

    def fit_batch(self, train_batch, batch_axis=0):
        """Forward and backward on one batch (the batch processor's fit_batch); returns
        (data, label, pred, loss), lists with one entry per device."""
        return self.batch_processor.fit_batch(self, train_batch, batch_axis)

    def evaluate_batch(self, val_batch, batch_axis=0):
        """val_net and val_loss on one batch (the batch processor's evaluate_batch)."""
        return self.batch_processor.evaluate_batch(self, val_batch, batch_axis)

    # -- loops ------------------------------------------------------------------------

    @staticmethod
    def _check_data(data, arg, method):
        if not isinstance(data, DataLoader):
            raise ArgumentTypeError(f"[Estimator] {method}: {arg} must be a "
                                    f"gluon.data.DataLoader, got {_kind(data)}; wrap arrays "
                                    "in DataLoader(ArrayDataset(data, label), batch_size)")

    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """One pass of val_net over val_data: the validation metrics are reset, then
        updated batch by batch. Besides `event_handlers`, a MetricHandler and a
        LoggingHandler of the validation metrics are used unless given."""
        self._check_data(val_data, "val_data", "evaluate")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.evaluate_batch(batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Trains for `epochs` passes over train_data, or for `batches` batches (exactly
        one of them), evaluating on val_data (if given) after each epoch. Besides
        `event_handlers`, the defaults are added for the kinds not given: a
        GradientUpdateHandler (the trainer's step), a MetricHandler of the training
        metrics, a ValidationHandler (with val_data) and a LoggingHandler."""
        self._check_data(train_data, "train_data", "fit")
        if val_data is not None:
            self._check_data(val_data, "val_data", "fit")
        self.max_epoch, self.max_batch = self._check_length(epochs, batches)
        self.batch_axis = batch_axis
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)
        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            self._fit_epoch(train_data, batch_axis, batch_begin, batch_end)
            # (every handler sees the epoch's end, whichever asks to stop: no short cut)
            stops = [handler.epoch_end(self) for handler in epoch_end]
            if any(stops):
                break
        for handler in train_end:
            handler.train_end(self)

    def _fit_epoch(self, train_data, batch_axis, batch_begin, batch_end):
        """One pass over train_data, up to a handler's stop at a batch's end."""
        seen = False
        for batch in train_data:
            seen = True
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.fit_batch(batch, batch_axis)
            stops = [handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                     for handler in batch_end]
            if any(stops):
                break
        if not seen:  # (training by batches would loop forever)
            raise ValueError("[Estimator] fit: train_data gave no batch: the DataLoader is "
                             "empty")

    @staticmethod
    def _check_length(epochs, batches):
        """(epochs, batches): exactly one is an int > 0, the other None."""
        if (epochs is None) == (batches is None):
            raise ValueError(f"[Estimator] fit: give exactly one of epochs or batches (train "
                             f"by number of epochs or of batches), got epochs={epochs!r}, "
                             f"batches={batches!r}")
        name, value = ("epochs", epochs) if epochs is not None else ("batches", batches)
        # (any integer: a NumPy one, from a computed count, as well as Python's)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ArgumentTypeError(f"[Estimator] fit: {name} must be an int > 0, got "
                                    f"{_kind(value)}")
        if value <= 0:
            raise ValueError(f"[Estimator] fit: {name} must be > 0, got {value}")
        value = int(value)
        return (value, None) if name == "epochs" else (None, value)

    # -- handlers ---------------------------------------------------------------------

    def _prepare_default_handlers(self, val_data, event_handlers):
        """The user's handlers, the default ones fit adds, sorted by priority."""
        handlers = _check_event_handlers(event_handlers)
        added = [StoppingHandler(self.max_epoch, self.max_batch)]

        def missing(kind):
            return not any(isinstance(h, kind) for h in handlers)

        if missing(GradientUpdateHandler):
            added.append(GradientUpdateHandler())
        if missing(MetricHandler):
            added.append(MetricHandler(metrics=self.train_metrics))
        if missing(ValidationHandler) and val_data is not None:
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if missing(LoggingHandler):
            added.append(LoggingHandler(metrics=self.train_metrics))
        # The default MetricHandler updates the estimator's metrics only: a user's handler
        # reading another metric would see it never change. (StoppingHandler is always
        # added and uses no metric: it makes no mix.)
        if handlers and len(added) > 1:
            known = self.train_metrics + self.val_metrics
            for handler in handlers + added:
                _check_handler_metric_ref(handler, known)
        return self._sorted(handlers + added)

    def _prepare_default_validation_handlers(self, event_handlers):
        """The user's handlers for evaluate, and a MetricHandler and a LoggingHandler of
        the validation metrics unless given, sorted by priority."""
        handlers = _check_event_handlers(event_handlers)
        added = []
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.val_metrics))
        if handlers and added:
            for handler in handlers + added:
                _check_handler_metric_ref(handler, self.val_metrics)
        return self._sorted(handlers + added)

    @staticmethod
    def _sorted(handlers):
        # (stable: among equal priorities the user's handlers run first, in their order)
        return sorted(handlers, key=lambda h: getattr(h, "priority", 0))

    @staticmethod
    def _categorize_handlers(event_handlers):
        """The handlers of each event: (train_begin, epoch_begin, batch_begin, batch_end,
        epoch_end, train_end)."""
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in event_handlers if isinstance(h, kind)] for kind in kinds)
