"""gluon.contrib: MXNet 1.x's home of layers that MXNet 2.0 moved into gluon.nn (code written
for 1.x, ``from mxnet.gluon.contrib.nn import HybridConcurrent, Identity``, runs unchanged),
the Fit API, ``gluon.contrib.estimator`` (Estimator and its event handlers),
``gluon.contrib.data.sampler.IntervalSampler`` and ``gluon.contrib.rnn`` (the convolutional
cells, VariationalDropoutCell, LSTMPCell, dynamic_unroll)."""
from . import data, estimator, nn, rnn

__all__ = ["data", "estimator", "nn", "rnn"]
