"""gluon.contrib: MXNet 1.x's home of layers that MXNet 2.0 moved into gluon.nn. Code written
for 1.x (``from mxnet.gluon.contrib.nn import HybridConcurrent, Identity``) runs unchanged."""
from . import nn

__all__ = ["nn"]
