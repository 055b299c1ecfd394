"""MXNet 1.x's ``mx.metric``: the metrics of ``ndx.gluon.metric`` (MXNet 2.0 moved the module
there) under their 1.x module name, with 1.x's custom metrics.

``mx.metric.Accuracy()``, ``mx.metric.create('acc')``, ``CompositeEvalMetric``, ... are the
gluon classes themselves. As in MXNet 1.x, the function of ``mx.metric.CustomMetric(feval)``
(and of ``create(feval)``) receives NumPy arrays (``label.asnumpy()``, ``pred.asnumpy()``);
``mx.gluon.metric.CustomMetric`` passes ndx arrays, as MXNet 2.0's. ``Perplexity`` takes
1.x's ignore_label as its first argument (the gluon one takes eps). ``Caffe`` is 1.x's
placeholder Loss metric for Caffe operators."""
from .gluon import metric as _gluon_metric
from .gluon.metric import (  # noqa: F401
    F1,
    MAE,
    MCC,
    MSE,
    PCC,
    RMSE,
    Accuracy,
    BinaryAccuracy,
    CompositeEvalMetric,
    CrossEntropy,
    EvalMetric,
    Fbeta,
    Loss,
    MeanCosineSimilarity,
    MeanPairwiseDistance,
    NegativeLogLikelihood,
    PearsonCorrelation,
    TopKAccuracy,
    Torch,
    alias,
    check_label_shapes,
    register,
)

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "Fbeta",
           "BinaryAccuracy", "MCC", "MAE", "MSE", "RMSE", "MeanPairwiseDistance",
           "MeanCosineSimilarity", "CrossEntropy", "NegativeLogLikelihood", "Perplexity",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "create",
           "register", "alias", "check_label_shapes", "np"]


class Perplexity(_gluon_metric.Perplexity):
    """MXNet 1.x's Perplexity(ignore_label, axis=-1, ...): its first positional argument is
    ignore_label (the gluon metric's first is eps, as MXNet 2.0's), so that 1.x scripts'
    ``mx.metric.Perplexity(invalid_label)`` skips the padding labels."""

    def __init__(self, ignore_label=None, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(eps=1e-10, ignore_label=ignore_label, axis=axis, name=name,
                         output_names=output_names, label_names=label_names)
        self._kwargs = {"ignore_label": ignore_label, "axis": axis}  # (get_config's)


class Caffe(Loss):
    """Loss under the name 'caffe' (MXNet 1.x's placeholder metric for Caffe criteria)."""

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


def _on_numpy(feval):
    """feval called with NumPy copies of the label and prediction (MXNet 1.x's
    CustomMetric)."""
    def call(label, pred):
        return feval(label.asnumpy(), pred.asnumpy())
    call.__name__ = getattr(feval, "__name__", "custom")
    return call


class CustomMetric(_gluon_metric.CustomMetric):
    """MXNet 1.x's CustomMetric: feval(label, pred) gets NumPy arrays and returns sum_metric
    or (sum_metric, num_inst) for one pair of arrays."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if not callable(feval):
            raise TypeError(f"[CustomMetric] feval must be callable, got {type(feval).__name__}")
        super().__init__(_on_numpy(feval), name, allow_extra_outputs, output_names,
                         label_names)


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A CustomMetric from a function of NumPy arrays (MXNet's ``mx.metric.np``)."""
    return CustomMetric(numpy_feval, name, allow_extra_outputs)


def create(metric, *args, **kwargs):
    """A metric from a name ('acc', 'ce', 'mse', 'top_k_accuracy', ...), an EvalMetric
    (returned as is), a list of these (a CompositeEvalMetric) or a function feval(label,
    pred) of NumPy arrays (a CustomMetric), as MXNet 1.x's ``mx.metric.create``."""
    if isinstance(metric, (list, tuple)):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, str) and metric.lower() == "caffe":
        return Caffe(*args, **kwargs)
    if isinstance(metric, str) and metric.lower() == "perplexity":
        return Perplexity(*args, **kwargs)  # (1.x's: ignore_label first)
    if callable(metric) and not isinstance(metric, EvalMetric):
        return CustomMetric(metric, *args, **kwargs)
    return _gluon_metric.create(metric, *args, **kwargs)
