"""ndx: a deep-learning array and operator engine with a NumPy-compatible front end.

    from ndx import np, npx
    import ndx as mx      # MXNet's module layout; ndx.compat.alias_as_mxnet() serves mxnet.*
"""
import atexit as _atexit

try:
    from . import _openblas  # noqa: F401  (loads _core, OpenBLAS's kernels chosen: see there)
except ImportError as _err:  # a source checkout on PYTHONPATH, without the built extension
    import os as _os
    raise ImportError(
        "ndx's compiled extension (ndx._core) is not in " + _os.path.dirname(__file__) +
        ": this looks like a source checkout without a build. Use the pip-installed ndx "
        "(`make python`, then .venv/bin/python with no PYTHONPATH). Cause: " + str(_err)
    ) from None
from . import (
                   __config__,
                   _api_internal,
                   _core,
                   amp,
                   autograd,
                   callback,
                   compat,
                   context,
                   contrib,
                   device,
                   distributed,
                   engine,
                   executor,
                   gluon,
                   image,
                   initializer,
                   io,
                   kvstore,
                   library,
                   lr_scheduler,
                   metric,
                   model,
                   module,
                   monitor,
                   name,
                   nd,
                   numpy_op_signature,
                   operator,
                   optimizer,
                   profiler,
                   random,
                   recordio,
                   rnn,
                   runtime,
                   sym,
                   test_utils,
                   util,
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
from .context import current_context
from .device import Context, Device, cpu, current_device, gpu, num_gpus
from .util import (
                   is_np_array,
                   is_np_shape,
                   np_array,
                   np_shape,
                   set_np_shape,
                   use_np,
                   use_np_array,
                   use_np_shape,
)

numpy = np
numpy_extension = npx
ndarray = nd
symbol = sym
mod = module
mon = monitor
visualization = viz
attribute = sym
AttrScope = sym.AttrScope
init = initializer
kv = kvstore
random_seed = _core.random_seed
__version__ = _core.__version__  # CMake's project version, compiled into libndx
show_config = __config__.show
cmake_prefix_path = __config__.cmake_prefix_path

__all__ = ["_api_internal", "amp", "autograd", "distributed", "gluon", "initializer", "kvstore",
           "kv", "library", "lr_scheduler", "metric", "model", "module", "mod", "callback",
           "monitor", "mon", "name", "rnn", "contrib", "attribute", "AttrScope", "visualization",
           "operator", "optimizer", "profiler", "random", "io", "recordio", "runtime", "image",
           "sym", "viz", "np", "npx", "nd", "numpy", "test_utils", "NDXError", "MXNetError",
           "AxisError", "engine", "LinAlgError", "NDXValueError", "NDXTypeError", "NDXIndexError",
           "NDXNotImplementedError", "random_seed", "Device", "Context", "cpu", "gpu", "num_gpus",
           "current_device", "compat", "context", "device", "executor", "util", "ndarray",
           "symbol", "init", "current_context", "numpy_extension", "numpy_op_signature",
           "is_np_array", "is_np_shape", "np_array", "np_shape", "set_np_shape", "use_np", "onnx",
           "use_np_array", "use_np_shape", "show_config", "cmake_prefix_path"]


def __getattr__(name):
    """ndx.onnx (MXNet's mx.onnx), imported on first use: `import ndx` does not import the
    onnx package, which only the exporter needs."""
    if name == "onnx":
        import importlib
        return importlib.import_module(".onnx", __name__)
    raise AttributeError(f"module 'ndx' has no attribute {name!r}")


compat.serve_mxnet_spellings(__name__)  # import ndx.ndarray, from ndx.symbol import Symbol

# Before the interpreter finalizes, kernels stop releasing the GIL and daemon threads stop
# taking it back (python/src/module.cc: a thread ended inside a kernel would abort the process).
_atexit.register(_core._stop_releasing_gil)
