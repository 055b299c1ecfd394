"""Helpers of the Fit API: argument checks shared by the Estimator and its event handlers."""
from ...metric import Accuracy, CompositeEvalMetric, EvalMetric

__all__ = []


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type. A TypeError, and a ValueError as well because MXNet's
    Fit API raises ValueError in these places: code written for MXNet that catches
    ValueError keeps catching it."""


class DeviceUnavailableError(ValueError, AssertionError):
    """A device this machine lacks (a GPU beyond num_gpus()). A ValueError, and an
    AssertionError as well because MXNet's Estimator asserts there: code written for MXNet
    that catches AssertionError keeps catching it."""


def _kind(value):
    """The type of `value` for an error message."""
    return "None" if value is None else type(value).__name__


def _check_metrics(metrics, owner="Estimator", arg="metrics"):
    """`metrics` as a list of EvalMetrics: None gives [], one metric a list of one, a
    CompositeEvalMetric the metrics it holds (handlers and the logging need each one's
    name and value)."""
    if metrics is None:
        return []
    if isinstance(metrics, CompositeEvalMetric):
        return [m for child in metrics.metrics for m in _check_metrics(child, owner, arg)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    if isinstance(metrics, (list, tuple)):
        out = []
        for i, m in enumerate(metrics):
            if not isinstance(m, EvalMetric):
                raise ArgumentTypeError(f"[{owner}] {arg}[{i}] must be an EvalMetric, got "
                                        f"{_kind(m)}")
            out.extend(_check_metrics(m, owner, arg))
        return out
    raise ArgumentTypeError(f"[{owner}] {arg} must be an EvalMetric or a list of EvalMetrics, "
                            f"got {_kind(metrics)}")


def _suggest_metric_for_loss(loss):
    """The metric MXNet adds to the loss when no training metric is given: accuracy for a
    softmax cross-entropy (a classifier), none otherwise."""
    from ...loss import SoftmaxCrossEntropyLoss
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None


def _metrics_referenced(handler):
    """The EvalMetrics a handler holds in attributes named like 'metric' or 'monitor' (a
    metric itself, or a list / tuple of them)."""
    found = []
    for attr, value in vars(handler).items():
        if "metric" not in attr and "monitor" not in attr:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        found.extend(v for v in values if isinstance(v, EvalMetric))
    return found


def _check_handler_metric_ref(handler, known_metrics):
    """ValueError when `handler` refers to a metric the estimator does not update: with a
    mix of the user's and the default handlers, the default MetricHandler updates only the
    estimator's metrics, so any other would never change."""
    known = {id(m) for m in known_metrics}
    for metric in _metrics_referenced(handler):
        if id(metric) not in known:
            raise ValueError(
                f"[Estimator] event handler {type(handler).__name__} refers to the metric "
                f"{metric.name!r}, which is not one of the estimator's metrics (expected one "
                "of estimator.train_metrics or estimator.val_metrics, which the default "
                "handlers update)")
