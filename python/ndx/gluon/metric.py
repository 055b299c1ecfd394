"""Online evaluation metrics (MXNet 2.0's ``mxnet.gluon.metric``).

A metric accumulates over batches: ``update(labels, preds)`` takes a list of label arrays and a
list of prediction arrays (or one array each), ``get()`` returns ``(name, value)``, ``reset()``
starts over. The per-batch work is ndx array ops; only the running totals are Python numbers.
"""
import copy
import functools
import math
import numbers
from collections import OrderedDict

import numpy as _onp

from .. import numpy as _np
from .. import numpy_extension as _npx

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "Fbeta",
           "BinaryAccuracy", "MCC", "MAE", "MSE", "RMSE", "MeanPairwiseDistance",
           "MeanCosineSimilarity", "CrossEntropy", "NegativeLogLikelihood", "Perplexity",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "CustomMetric", "create", "register",
           "alias", "check_label_shapes", "np"]

_registry = {}


def register(klass):
    """Registers a metric class under its lower-cased name (for create(name))."""
    _registry[klass.__name__.lower()] = klass
    return klass


def alias(*names):
    """Registers a metric class under extra names."""
    def deco(klass):
        for name in names:
            _registry[name.lower()] = klass
        return klass
    return deco


def _as_array(x, owner, what):
    if isinstance(x, _np.ndarray):
        # An mx.nd.NDArray's methods follow MXNet's legacy semantics (comparisons give 0 / 1
        # in its dtype, not booleans): the metrics compute on the plain array.
        return x.as_np_ndarray() if type(x) is not _np.ndarray else x
    if isinstance(x, _onp.ndarray):
        return _np.array(x)
    raise TypeError(f"[{owner}] {what} must be ndx arrays, got {type(x).__name__}")


def _as_list(x, owner, what):
    if isinstance(x, (_np.ndarray, _onp.ndarray)):
        return [_as_array(x, owner, what)]
    if isinstance(x, (list, tuple)):
        return [_as_array(a, owner, what) for a in x]
    raise TypeError(f"[{owner}] {what} must be an ndx array or a list of them, got "
                    f"{type(x).__name__}")


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raises ValueError unless labels and preds match: in number (shape=False) or in shape
    (shape=True). With wrap, single arrays come back as lists of one."""
    if wrap:
        labels = _as_list(labels, "check_label_shapes", "labels")
        preds = _as_list(preds, "check_label_shapes", "preds")
    if shape:
        label_shape, pred_shape = labels.shape, preds.shape
    else:
        label_shape, pred_shape = len(labels), len(preds)
    if label_shape != pred_shape:
        raise ValueError(f"Shape of labels {label_shape} does not match shape of predictions "
                         f"{pred_shape}")
    return labels, preds


def _pairs(metric, labels, preds):
    """(label, pred) pairs of one update, preds on each label's device."""
    owner = type(metric).__name__
    labels = _as_list(labels, owner, "labels")
    preds = _as_list(preds, owner, "preds")
    if len(labels) != len(preds):
        raise ValueError(f"[{owner}] got {len(labels)} label arrays but {len(preds)} "
                         "prediction arrays")
    return [(label, pred.to_device(label.device)) for label, pred in zip(labels, preds)]


def _same_size(owner, label, pred):
    """pred in label's shape: equal sizes reshape, anything else is an error (broadcasting
    (N,) against (N, 1) would silently compare every label with every prediction)."""
    if pred.shape == label.shape:
        return pred
    if pred.size != label.size:
        raise ValueError(f"[{owner}] Shape of labels {label.shape} does not match shape of "
                         f"predictions {pred.shape}")
    return pred.reshape(label.shape)


def _global_update(update):
    """A built-in metric's update, which also accumulates the global statistics."""

    @functools.wraps(update)
    def run(self, labels, preds):
        if not self.__dict__.get("_has_global_stats") or self.__dict__.get("_in_update"):
            return update(self, labels, preds)
        self._in_update = True
        try:
            if self._twin is not None:
                update(self, labels, preds)
                self._twin.update(labels, preds)
                self.global_sum_metric = self._twin.sum_metric
                self.global_num_inst = self._twin.num_inst
            else:
                before = (self.sum_metric, self.num_inst)
                update(self, labels, preds)
                self.global_sum_metric += self.sum_metric - before[0]
                self.global_num_inst += self.num_inst - before[1]
        finally:
            self._in_update = False

    run._tracks_global = True
    return run


def _global_reset(reset):
    """A built-in metric's reset, which also clears the global statistics; the metric's own
    reset stays reachable as the local one (reset_local)."""

    @functools.wraps(reset)
    def run(self):
        reset(self)
        self._reset_global()

    run._local_reset = reset
    return run


class EvalMetric:
    """Base class: a name, running sum_metric / num_inst, and the update / get protocol.

    As in MXNet 1.x, a metric may also keep global statistics, which reset_local() leaves
    alone: get_global() / get_global_name_value() report everything since the last reset(),
    get() only what came since the last reset() or reset_local(). The built-in metrics (and
    subclasses that keep their update) keep them; a subclass with its own update() does when
    constructed with has_global_stats=True, its update() then adding to global_sum_metric /
    global_num_inst itself (as MXNet 1.x's do); without, get_global() is get()."""

    # Metrics whose value is not a running sum (F1's counts, correlations) keep a copy that
    # sees every update since reset(): their global value is its value.
    _global_by_twin = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__ == __name__ and not cls.__dict__.get("_delegates", False):
            if "update" in cls.__dict__:
                cls.update = _global_update(cls.__dict__["update"])
            if "reset" in cls.__dict__:
                cls.reset = _global_reset(cls.__dict__["reset"])

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self._has_global_stats = bool(kwargs.pop(
            "has_global_stats", getattr(type(self).update, "_tracks_global", False)))
        self._twin = None
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """The constructor arguments, to rebuild the metric with create(**config)."""
        config = self._kwargs.copy()
        config.update({"metric": type(self).__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        """update() from name -> array dicts, picking output_names / label_names if set."""
        try:
            pred = ([pred[n] for n in self.output_names] if self.output_names is not None
                    else list(pred.values()))
            label = ([label[n] for n in self.label_names] if self.label_names is not None
                     else list(label.values()))
        except KeyError as e:
            raise KeyError(f"[{type(self).__name__}] update_dict: no array named {e}") from None
        self.update(label, pred)

    def update(self, labels, preds):
        raise NotImplementedError(f"[{type(self).__name__}] update is not implemented")

    def reset(self):
        """Starts over: the local and the global statistics."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self._reset_global()

    def _reset_global(self):
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        if self.__dict__.get("_has_global_stats") and self._global_by_twin:
            self._twin = None
            twin = copy.deepcopy(self)
            twin._has_global_stats = False
            self._twin = twin

    def reset_local(self):
        """Starts the local statistics (get()) over; the global ones (get_global()) go on."""
        local = getattr(type(self).reset, "_local_reset", None)
        if local is not None:
            local(self)
        else:
            self.num_inst = 0
            self.sum_metric = 0.0

    def get_global(self):
        """(name, value) over every update since reset() (get() when the metric keeps no
        global statistics)."""
        if not self.__dict__.get("_has_global_stats"):
            return self.get()
        if self._twin is not None:
            return self._twin.get()
        local = (self.sum_metric, self.num_inst)
        self.sum_metric, self.num_inst = self.global_sum_metric, self.global_num_inst
        try:
            return self.get()  # (a subclass's get may transform the mean: RMSE, Perplexity)
        finally:
            self.sum_metric, self.num_inst = local

    def get_global_name_value(self):
        """[(name, value), ...] of get_global()."""
        name, value = self.get_global()
        if not isinstance(name, list):
            name = [name]
        if not isinstance(value, list):
            value = [value]
        return list(zip(name, value))

    def get(self):
        """(name, value); value is NaN before any update."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        res = self.sum_metric / self.num_inst
        if isinstance(res, _np.ndarray) and res.ndim == 0:
            res = res.item()
        return (self.name, res)

    def get_name_value(self):
        """[(name, value), ...]."""
        name, value = self.get()
        if not isinstance(name, list):
            name = [name]
        if not isinstance(value, list):
            value = [value]
        return list(zip(name, value))


def create(metric, *args, **kwargs):
    """A metric from a name, an EvalMetric (returned as is), a list of either (a composite)
    or a function feval(label, pred) (a CustomMetric)."""
    if isinstance(metric, EvalMetric):
        return metric
    if isinstance(metric, (list, tuple)):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, str):
        klass = _registry.get(metric.lower())
        if klass is None:
            raise ValueError(f"[metric.create] Cannot find metric {metric!r}; expected one of "
                             f"{sorted(_registry)}")
        return klass(*args, **kwargs)
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    raise TypeError(f"[metric.create] expected a metric name, an EvalMetric, a list or a "
                    f"function, got {type(metric).__name__}")


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; get() returns ([names], [values])."""

    _delegates = True  # (its metrics keep their own global statistics)

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_metric(self, index):
        try:
            return self.metrics[index]
        except IndexError:
            raise IndexError(f"[CompositeEvalMetric] Metric index {index} is out of range 0 "
                             f"and {len(self.metrics)}") from None

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict(i for i in labels.items() if i[0] in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict(i for i in preds.items() if i[0] in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", []):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def get_global(self):
        names, values = [], []
        for metric in self.metrics:
            name, value = metric.get_global()
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return (names, values)

    def get(self):
        names, values = [], []
        for metric in self.metrics:
            name, value = metric.get()
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return (names, values)

    def get_config(self):
        config = super().get_config()
        config.update({"metrics": [m.get_config() for m in self.metrics]})
        return config


def _check_axis(owner, axis):
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"[{owner}] axis must be an int, got {axis!r}")
    return int(axis)


@register
@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of samples whose predicted class equals the label. Predictions of the label's
    shape are class indices; otherwise the class is their argmax along `axis`."""

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names)
        self.axis = _check_axis("Accuracy", axis)

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            if pred.shape != label.shape and not self._indices(label, pred):
                pred = _np.argmax(pred, axis=self.axis)
            pred = pred.astype("int32").reshape(-1)
            label = label.astype("int32").reshape(-1)
            if pred.shape != label.shape:
                raise ValueError(f"[Accuracy] {label.size} labels but {pred.size} predicted "
                                 "classes")
            self.sum_metric += float((pred == label).sum().item())
            self.num_inst += label.size

    def _indices(self, label, pred):
        """Whether pred holds class indices in another shape of label's size: a class axis of
        length 1 (an (N, 1) column of indices against (N,) labels), whose argmax is always 0."""
        return (pred.size == label.size and pred.ndim > 0
                and -pred.ndim <= self.axis < pred.ndim and pred.shape[self.axis] == 1)


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the top_k highest-scored classes
    (predictions of shape (N, classes)); 1-D predictions are class indices."""

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names)
        if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral):
            raise TypeError(f"[TopKAccuracy] top_k must be an int, got {top_k!r}")
        if top_k <= 1:
            raise ValueError(f"[TopKAccuracy] Please use Accuracy if top_k is no more than 1, "
                             f"got top_k={top_k}")
        self.top_k = int(top_k)
        self.name += f"_{self.top_k}"

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            if pred.ndim > 2:
                raise ValueError(f"[TopKAccuracy] Predictions should be no more than 2 dims, got "
                                 f"shape {pred.shape}")
            label = label.astype("int32").reshape(-1)
            if pred.shape[0] != label.size:
                raise ValueError(f"[TopKAccuracy] {label.size} labels but predictions of shape "
                                 f"{pred.shape}")
            if pred.ndim == 1:
                hits = pred.astype("int32") == label
            else:
                k = min(pred.shape[1], self.top_k)
                top = _np.argsort(pred.astype("float32"), axis=1)[:, pred.shape[1] - k:]
                hits = (top == label.reshape(-1, 1)).any(axis=1)
            self.sum_metric += float(hits.sum().item())
            self.num_inst += label.size


class _ClassificationMetrics:
    """True/false positive/negative counts per class, accumulated over batches."""

    def __init__(self, class_type="binary", threshold=0.5, beta=1):
        if class_type not in ("binary", "multiclass", "multilabel"):
            raise ValueError(f"[F1] Wrong class_type {class_type!r}! Only supports ['binary', "
                             "'multiclass', 'multilabel']")
        self.class_type = class_type
        self.threshold = threshold
        self.beta = beta
        self.reset_stats()

    def reset_stats(self):
        self.num_classes = None
        self.true_positives = self.false_positives = None
        self.false_negatives = self.true_negatives = None

    def _set(self, num):
        if self.num_classes is None:
            self.num_classes = num
            for attr in ("true_positives", "false_positives", "false_negatives",
                         "true_negatives"):
                setattr(self, attr, _onp.zeros(num, dtype="float64"))
        elif self.num_classes != num:
            raise ValueError(f"[F1] Input number of classes has changed from "
                             f"{self.num_classes} to {num}")

    def _binary(self, label, pred):
        self._set(1)
        # (a label of -1 would otherwise count as a positive)
        if label.size and (label.max().item() > 1 or label.min().item() < 0):
            raise ValueError("[F1] Wrong label for binary classification: labels must be 0 or 1")
        if pred.shape != label.shape and pred.size != label.size:
            if pred.shape[-1] > 2:
                raise ValueError(f"[F1] The shape of prediction {pred.shape} is wrong for binary "
                                 "classification.")
            if pred.shape[-1] == 2:
                pred = pred.reshape(-1, 2)[:, 1]
        return (pred > self.threshold).reshape(-1, 1), label.reshape(-1, 1)

    def _multiclass(self, label, pred):
        num = pred.shape[-1]
        self._set(num)
        if label.size and label.max().item() >= num:
            raise ValueError(f"[F1] pred contains fewer classes ({num}) than label "
                             f"(max {label.max().item()})")
        classes = _np.arange(num, dtype="int32", device=label.device)
        pred_idx = _np.argmax(pred, axis=-1).astype("int32").reshape(-1, 1)
        return pred_idx == classes, label.reshape(-1, 1) == classes

    def _multilabel(self, label, pred):
        num = pred.shape[-1]
        self._set(num)
        if pred.shape != label.shape:
            raise ValueError(f"[F1] The shape of label {label.shape} should be same as that of "
                             f"prediction {pred.shape} for multilabel classification.")
        return (pred > self.threshold).reshape(-1, num), label.reshape(-1, num) == 1

    def update_stats(self, label, pred):
        if pred.ndim == 0:
            raise ValueError("[F1] predictions must have at least one dimension")
        label = label.astype("int32")
        pred_true, label_true = getattr(self, "_" + self.class_type)(label, pred)
        label_true = label_true.astype("bool")
        if pred_true.shape != label_true.shape:
            raise ValueError(f"Shape of labels {label_true.shape} does not match shape of "
                             f"predictions {pred_true.shape}")
        pred_false, label_false = ~pred_true, ~label_true
        for attr, mask in (("true_positives", pred_true & label_true),
                           ("false_positives", pred_true & label_false),
                           ("false_negatives", pred_false & label_true),
                           ("true_negatives", pred_false & label_false)):
            getattr(self, attr)[...] += mask.astype("float64").sum(axis=0).asnumpy()

    @property
    def precision(self):
        return self.true_positives / _onp.maximum(self.true_positives + self.false_positives,
                                                  1e-12)

    @property
    def recall(self):
        return self.true_positives / _onp.maximum(self.true_positives + self.false_negatives,
                                                  1e-12)

    @property
    def micro_precision(self):
        tp = self.true_positives.sum()
        return tp / max(tp + self.false_positives.sum(), 1e-12)

    @property
    def micro_recall(self):
        tp = self.true_positives.sum()
        return tp / max(tp + self.false_negatives.sum(), 1e-12)

    @property
    def fscore(self):
        b2 = self.beta ** 2
        p, r = self.precision, self.recall
        return (1 + b2) * p * r / _onp.maximum(b2 * p + r, 1e-12)

    @property
    def micro_fscore(self):
        b2 = self.beta ** 2
        p, r = self.micro_precision, self.micro_recall
        return (1 + b2) * p * r / (b2 * p + r) if p + r > 0 else 0.0

    @property
    def total_examples(self):
        if self.num_classes is None:
            return 0
        return int(self.false_negatives[0] + self.false_positives[0] + self.true_negatives[0]
                   + self.true_positives[0])


@register
class F1(EvalMetric):
    """F1 score, 2 P R / (P + R), from counts accumulated over every update.

    class_type 'binary' (labels 0/1; predictions are P(positive), or (N, 2) scores whose
    column 1 is used, positive when > threshold), 'multiclass' (argmax of (N, classes)
    predictions) or 'multilabel' (predictions of the labels' shape, positive when >
    threshold). average 'micro' counts TP / FP / FN over all classes, 'macro' averages the
    per-class scores, None returns the per-class scores."""

    _global_by_twin = True

    def __init__(self, name="f1", output_names=None, label_names=None, class_type="binary",
                 threshold=0.5, average="micro"):
        if average not in ("micro", "macro", None):
            raise ValueError(f"[F1] average must be 'micro', 'macro' or None, got {average!r}")
        self.average = average
        self.metrics = _ClassificationMetrics(class_type=class_type, threshold=threshold)
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names)

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            self.metrics.update_stats(label, pred)
        total = self.metrics.total_examples
        if self.average == "micro":
            self.sum_metric = self.metrics.micro_fscore * total
        elif self.average == "macro":
            self.sum_metric = float(self.metrics.fscore.mean()) * total
        else:
            self.sum_metric = _np.array(self.metrics.fscore * total)
        self.num_inst = total

    def reset(self):
        self.sum_metric = 0.0
        self.num_inst = 0
        self.metrics.reset_stats()


@register
class Fbeta(F1):
    """(1 + beta^2) P R / (beta^2 P + R); otherwise as F1."""

    def __init__(self, name="fbeta", output_names=None, label_names=None, class_type="binary",
                 beta=1, threshold=0.5, average="micro"):
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         class_type=class_type, threshold=threshold, average=average)
        self.metrics = _ClassificationMetrics(class_type=class_type, threshold=threshold,
                                              beta=beta)


@register
class BinaryAccuracy(EvalMetric):
    """Fraction of (multi)label entries where (pred > threshold) equals the 0/1 label."""

    def __init__(self, name="binary_accuracy", output_names=None, label_names=None,
                 threshold=0.5):
        self.threshold = threshold
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names)

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            pred = _same_size("BinaryAccuracy", label, pred)
            hits = (pred > self.threshold).astype("int32") == label.astype("int32")
            self.sum_metric += float(hits.sum().item())
            self.num_inst += label.size


@register
class MCC(EvalMetric):
    """Matthews correlation coefficient of a binary classifier,
    (TP TN - FP FN) / sqrt((TP + FP) (TP + FN) (TN + FP) (TN + FN)), zero factors of the
    denominator left out. Predictions as F1's 'binary' class_type takes them (P(positive),
    or (N, 2) scores whose column 1 is used, positive when > 0.5). average='micro' (the
    default, MXNet 2.0's only behaviour) computes it from the counts of every update since
    reset(); 'macro' (MXNet 1.x's default) averages the coefficient of each update() call."""

    _global_by_twin = True

    def __init__(self, name="mcc", output_names=None, label_names=None, average="micro"):
        if average not in ("macro", "micro"):
            raise ValueError(f"[MCC] average must be 'macro' or 'micro', got {average!r}")
        self.average = average
        self._metrics = _ClassificationMetrics(class_type="binary")
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names)

    def _mcc(self):
        m = self._metrics
        tp, fp = float(m.true_positives[0]), float(m.false_positives[0])
        fn, tn = float(m.false_negatives[0]), float(m.true_negatives[0])
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.0:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            self._metrics.update_stats(label, pred)
        if self._metrics.num_classes is None:
            return
        if self.average == "macro":
            self.sum_metric += self._mcc()
            self.num_inst += 1
            self._metrics.reset_stats()
        else:
            self.num_inst = self._metrics.total_examples
            self.sum_metric = self._mcc() * self.num_inst

    def reset(self):
        self.sum_metric = 0.0
        self.num_inst = 0
        self._metrics.reset_stats()


class _Regression(EvalMetric):
    """Per-sample mean of f(label - pred) over the non-batch axes, summed over samples."""

    def _per_sample(self, diff):
        raise NotImplementedError

    def update(self, labels, preds):
        owner = type(self).__name__
        for label, pred in _pairs(self, labels, preds):
            if label.ndim == 0:
                raise ValueError(f"[{owner}] labels need a batch axis, got a 0-d array")
            pred = _same_size(owner, label, pred)
            n = label.shape[0]
            if n == 0:
                continue
            diff = (label.astype("float64") - pred.astype("float64")).reshape(n, -1)
            self.sum_metric += float(self._per_sample(diff).mean(axis=-1).sum().item())
            self.num_inst += n


@register
class MAE(_Regression):
    """Mean absolute error."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _per_sample(self, diff):
        return _np.abs(diff)


@register
class MSE(_Regression):
    """Mean squared error."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _per_sample(self, diff):
        return _np.square(diff)


@register
class RMSE(MSE):
    """Square root of the mean squared error over all samples seen."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.sqrt(self.sum_metric / self.num_inst))


@register
@alias("ce")
class CrossEntropy(EvalMetric):
    """Mean of -log(max(eps, p[label])) over samples, p being the predicted probabilities
    along `axis` (softmax of them with from_logits). Samples labelled ignore_label count
    neither in the sum nor in the number of samples."""

    def __init__(self, eps=1e-12, ignore_label=None, axis=-1, from_logits=False,
                 name="cross-entropy", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.ignore_label = ignore_label
        self.axis = _check_axis(type(self).__name__, axis)
        self.from_logits = from_logits
        self.eps = eps

    def _picked(self, label, pred):
        owner = type(self).__name__
        if pred.ndim == 0:
            raise ValueError(f"[{owner}] predictions need a class axis, got a 0-d array")
        if pred.shape[self.axis] == 0 or label.size != pred.size // pred.shape[self.axis]:
            raise ValueError(f"[{owner}] shape mismatch: labels {label.shape} vs. predictions "
                             f"{pred.shape} (one label per prediction row along axis "
                             f"{self.axis})")
        if self.from_logits:
            pred = _npx.softmax(pred, axis=self.axis)
        num_classes = pred.shape[self.axis]
        rows = _np.moveaxis(pred, self.axis, -1).reshape(-1, num_classes)
        label = label.reshape(-1).astype("int64")
        ignore = None
        if self.ignore_label is not None:
            ignore = label == self.ignore_label
            label = _np.where(ignore, _np.zeros_like(label), label)
        if label.size and (label.min().item() < 0 or label.max().item() >= num_classes):
            raise IndexError(f"[{owner}] labels must lie in [0, {num_classes}), got "
                             f"[{label.min().item()}, {label.max().item()}]")
        prob = _np.take_along_axis(rows, label.reshape(-1, 1), axis=1).reshape(-1)
        if ignore is not None:
            prob = _np.where(ignore, _np.ones_like(prob), prob)
        return prob, (0 if ignore is None else int(ignore.sum().item()))

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            prob, ignored = self._picked(label, pred)
            loss = -_np.log(_np.maximum(prob.astype("float64"), self.eps)).sum()
            self.sum_metric += float(loss.item())
            self.num_inst += prob.size - ignored


@register
@alias("nll_loss")
class NegativeLogLikelihood(CrossEntropy):
    """Mean of -log(max(eps, p[label])) over samples: CrossEntropy under MXNet's other
    name."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps=eps, name=name, output_names=output_names,
                         label_names=label_names)


@register
@alias("mpd")
class MeanPairwiseDistance(EvalMetric):
    """Mean over samples of the p-norm of label - pred (each sample flattened)."""

    def __init__(self, name="mpd", output_names=None, label_names=None, p=2):
        self.p = p
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names)

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            n = label.shape[0] if label.ndim else 1
            diff = _np.abs(label.reshape(n, -1).astype("float64")
                           - pred.reshape(n, -1).astype("float64"))
            dist = (diff ** self.p).sum(axis=-1) ** (1.0 / self.p)
            self.sum_metric += float(dist.sum().item())
            self.num_inst += n


@register
@alias("cos_sim")
class MeanCosineSimilarity(EvalMetric):
    """Mean of the cosine similarity of label and pred along the last axis,
    sum(l p) / max(|l| |p|, eps) (1-d inputs are one sample)."""

    def __init__(self, name="cos_sim", output_names=None, label_names=None, eps=1e-8):
        self.eps = eps
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names)

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            label = label.astype("float64")
            pred = pred.astype("float64")
            if label.ndim == 1:
                label = label.reshape(1, -1)
            if pred.ndim == 1:
                pred = pred.reshape(1, -1)
            if label.shape != pred.shape:
                raise ValueError(f"[MeanCosineSimilarity] Shape of labels {label.shape} does "
                                 f"not match shape of predictions {pred.shape}")
            dot = (label * pred).sum(axis=-1)
            norms = _np.sqrt((label * label).sum(axis=-1)) * _np.sqrt((pred * pred).sum(axis=-1))
            sim = dot / _np.maximum(norms, self.eps)
            self.sum_metric += float(sim.sum().item())
            self.num_inst += sim.size


@register
class Perplexity(CrossEntropy):
    """exp of the cross entropy: exp(-mean(log p[label]))."""

    def __init__(self, eps=1e-12, ignore_label=None, axis=-1, from_logits=False,
                 name="perplexity", output_names=None, label_names=None):
        super().__init__(eps=eps, ignore_label=ignore_label, axis=axis, from_logits=from_logits,
                         name=name, output_names=output_names, label_names=label_names)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of all labels and predictions seen, accumulated with Welford's
    online mean / co-moment updates."""

    _global_by_twin = True

    def __init__(self, name="pearsonr", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def reset(self):
        self._sse_p = self._mean_p = self._sse_l = self._mean_l = 0.0
        self._pred_nums = self._label_nums = 0
        self._conv = 0.0
        self.num_inst = 0
        self.sum_metric = 0.0

    @staticmethod
    def _welford(values, count, mean, m_2):
        count += values.size
        delta = values - mean
        mean += float((delta / count).sum().item())
        m_2 += float((delta * (values - mean)).sum().item())
        return count, mean, m_2

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            check_label_shapes(label, pred, False, True)
            label = label.reshape(-1).astype("float64")
            pred = pred.reshape(-1).astype("float64")
            if label.size == 0:
                continue
            self.num_inst += 1
            self._label_nums, self._mean_l, self._sse_l = self._welford(
                label, self._label_nums, self._mean_l, self._sse_l)
            # co-moment with the new label mean and the old prediction mean
            self._conv += float(((label - self._mean_l) * (pred - self._mean_p)).sum().item())
            self._pred_nums, self._mean_p, self._sse_p = self._welford(
                pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        n = self._label_nums
        denom = (n - 1) * math.sqrt(self._sse_p / (n - 1)) * math.sqrt(self._sse_l / (n - 1))
        return (self.name, self._conv / denom if denom else float("nan"))


@register
class PCC(EvalMetric):
    """The multiclass Matthews correlation (Gorodkin's R_K, MXNet's PCC): Pearson's
    correlation of the one-hot predictions and labels, from the K x K confusion matrix C
    (C[p, l] counts predictions p of label l) accumulated over every update::

        n = sum(C);  x = C.sum(axis=1);  y = C.sum(axis=0)
        PCC = sum(diag(C) * n - x * y) / sqrt(sum(x * (n - x)) * sum(y * (n - y)))

    NaN when either factor of the denominator is 0. Predictions of the labels' shape are
    class indices; others are scores, their argmax along axis 1 the class. K starts at 2
    and grows with the largest class seen. With two classes PCC is MCC."""

    _global_by_twin = True

    def __init__(self, name="pcc", output_names=None, label_names=None):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names)

    def _grow(self, inc):
        self.lcm = _onp.pad(self.lcm, ((0, inc), (0, inc)), "constant", constant_values=0)
        self.k += inc

    def _calc_mcc(self, cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = float(_onp.sum(x * (n - x)))
        cov_yy = float(_onp.sum(y * (n - y)))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = float(_onp.sum(_onp.diagonal(cmat) * n - x * y))
        return cov_xy / math.sqrt(cov_xx * cov_yy)

    def update(self, labels, preds):
        for label, pred in _pairs(self, labels, preds):
            if pred.shape != label.shape:
                if pred.ndim < 2:
                    raise ValueError(f"[PCC] predictions of shape {pred.shape} are neither "
                                     f"class indices of the labels' shape {label.shape} nor "
                                     "scores with classes along axis 1")
                pred = _np.argmax(pred, axis=1)
            p = pred.astype("int64").asnumpy().reshape(-1)
            lab = label.astype("int64").asnumpy().reshape(-1)
            if p.size != lab.size:
                raise ValueError(f"[PCC] {lab.size} labels but {p.size} predicted classes")
            if p.size == 0:
                continue
            if min(p.min(), lab.min()) < 0:
                raise ValueError("[PCC] class indices must be >= 0")
            top = int(max(p.max(), lab.max()))
            if top >= self.k:
                self._grow(top + 1 - self.k)
            self.lcm += _onp.bincount(p * self.k + lab, minlength=self.k * self.k).reshape(
                self.k, self.k).astype("float64")
        self.num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, value):  # (EvalMetric's reset assigns it; the matrix is the state)
        pass

    def reset(self):
        self.num_inst = 0
        self.lcm = _onp.zeros((self.k, self.k), dtype="float64")


@register
class Loss(EvalMetric):
    """Mean of the values passed as preds (losses); labels are ignored."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, _, preds):
        for pred in _as_list(preds, "Loss", "preds"):
            self.sum_metric += float(pred.astype("float64").sum().item())
            self.num_inst += pred.size


@register
class Torch(Loss):
    """Loss under the name 'torch' (MXNet's placeholder metric for Torch criteria)."""

    def __init__(self, name="torch", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric from feval(label, pred), which returns sum_metric or (sum_metric,
    num_inst) for one pair of arrays."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if not callable(feval):
            raise TypeError(f"[CustomMetric] feval must be callable, got {type(feval).__name__}")
        if name is None:
            name = feval.__name__
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        labels = _as_list(labels, "CustomMetric", "labels")
        preds = _as_list(preds, "CustomMetric", "preds")
        if not self._allow_extra_outputs and len(labels) != len(preds):
            raise ValueError(f"[CustomMetric] got {len(labels)} label arrays but {len(preds)} "
                             "prediction arrays")
        for pred, label in zip(preds, labels):
            reval = self._feval(label, pred.to_device(label.device))
            if isinstance(reval, tuple):
                sum_metric, num_inst = reval
                self.sum_metric += sum_metric
                self.num_inst += num_inst
            else:
                self.sum_metric += reval
                self.num_inst += 1

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A CustomMetric whose function receives NumPy arrays and returns a float."""
    def feval(label, pred):
        return numpy_feval(label.asnumpy(), pred.asnumpy())
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
