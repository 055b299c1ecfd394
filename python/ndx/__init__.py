"""ndx: a deep-learning array and operator engine with a NumPy-compatible front end.

    from ndx import np, npx
    import ndx as mx
"""
from . import (
                   _api_internal,
                   _core,
                   autograd,
                   gluon,
                   initializer,
                   library,
                   nd,
                   operator,
                   optimizer,
                   random,
                   sym,
                   test_utils,
                   viz,
)
from . import numpy as np
from . import numpy_extension as npx
from .base import (
                   AxisError,
                   LinAlgError,
                   MXNetError,
                   NDXError,
                   NDXIndexError,
                   NDXNotImplementedError,
                   NDXTypeError,
                   NDXValueError,
)
from .device import Context, Device, cpu, current_device, gpu, num_gpus

numpy = np
random_seed = _core.random_seed
__version__ = "0.1.0"

__all__ = ["_api_internal", "autograd", "gluon", "initializer", "library", "operator", "optimizer",
           "random",
           "sym", "viz", "np", "npx", "nd", "numpy", "test_utils", "NDXError", "MXNetError",
           "AxisError", "LinAlgError", "NDXValueError", "NDXTypeError", "NDXIndexError",
           "NDXNotImplementedError", "random_seed", "Device", "Context", "cpu", "gpu", "num_gpus",
           "current_device"]
