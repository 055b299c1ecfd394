"""gluon.contrib: MXNet 1.x's home of layers that MXNet 2.0 moved into gluon.nn (code written
for 1.x, ``from mxnet.gluon.contrib.nn import HybridConcurrent, Identity``, runs unchanged),
the Fit API, ``gluon.contrib.estimator`` (Estimator and its event handlers), and
``gluon.contrib.data.sampler.IntervalSampler``."""
from . import data, estimator, nn

__all__ = ["data", "estimator", "nn"]
