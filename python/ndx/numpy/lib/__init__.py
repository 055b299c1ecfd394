"""np.lib: the NumPy sub-namespaces NumPy code reaches into (stride_tricks, scimath)."""
from . import stride_tricks  # noqa: F401
