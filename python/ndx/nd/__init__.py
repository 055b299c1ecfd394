"""Every registered operator under its registered name: ``nd._np_add(a, b)``,
``nd._backward_sqrt(g, y)``. The np and npx namespaces wrap the same ops with NumPy's names.

This is also MXNet's ``mxnet.ndarray`` (``mx.nd``): the ``NDArray`` class (``nd.ndarray``),
``nd.array`` (an NDArray), ``nd.waitall``, ``nd.load`` / ``nd.save`` (MXNet's file
format), and ``nd.numpy`` / ``nd.numpy._internal`` (the ops
MXNet's Python code calls as ``_npi.<name>``)."""
from .._registry import make_function, ops
from ..numpy_extension._io import nd_load as load  # noqa: F401  (MXNet's name)
from ..numpy_extension._io import nd_save as save  # noqa: F401  (MXNet's name)
from ..operator import custom as Custom  # noqa: N812, F401  (nd.Custom(..., op_type=...))
from . import ndarray  # noqa: F401
from .ndarray import NDArray, array, waitall  # noqa: F401  (MXNet's names)

for _name, _info in ops().items():
    if _name != "Custom":
        globals()[_name] = make_function(_info, _name)

del _name, _info

from . import numpy  # noqa: E402, F401  (mx.nd.np, mx.nd.numpy._internal)

np = numpy
