"""np.lib: the NumPy sub-namespaces NumPy code reaches into (stride_tricks, scimath)."""
from .. import emath as scimath  # noqa: F401
from . import stride_tricks  # noqa: F401
