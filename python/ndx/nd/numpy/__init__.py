"""MXNet's ``mxnet.ndarray.numpy``: the NumPy-compatible functions on arrays (the same
functions as ``ndx.numpy``), and ``_internal``: the ``_npi_*`` ops under their short names."""
from ...numpy import *  # noqa: F401, F403
from ...numpy import __all__  # noqa: F401
from . import _internal  # noqa: F401
