"""Gluon's Fit API (MXNet's ``gluon.contrib.estimator``): an Estimator that runs the training
loop, event handlers that act at its steps, and the BatchProcessor of one batch."""
from . import batch_processor, estimator, event_handler, utils  # noqa: F401
from .batch_processor import BatchProcessor
from .estimator import Estimator
from .event_handler import (
    BatchBegin,
    BatchEnd,
    CheckpointHandler,
    EarlyStoppingHandler,
    EpochBegin,
    EpochEnd,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    TrainEnd,
    ValidationHandler,
)

__all__ = [
    "BatchBegin",
    "BatchEnd",
    "BatchProcessor",
    "CheckpointHandler",
    "EarlyStoppingHandler",
    "EpochBegin",
    "EpochEnd",
    "Estimator",
    "GradientUpdateHandler",
    "LoggingHandler",
    "MetricHandler",
    "StoppingHandler",
    "TrainBegin",
    "TrainEnd",
    "ValidationHandler",
]
