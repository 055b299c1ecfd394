"""MXNet's ``mxnet.ndarray.numpy._internal`` (imported in MXNet code as ``_npi``): each
registered ``_npi_<name>`` op as ``<name>``, taking inputs and the op's params by keyword, as
MXNet generates this module. Where ndx registers an op MXNet had as ``_npi_<name>`` under
``_np_<name>`` instead (add, subtract, multiply, ...), that op fills the name, so
``_npi.add(a, b)`` works as in MXNet."""
from ..._registry import make_function as _make_function
from ..._registry import ops as _ops


def _populate():
    g = globals()
    table = _ops()
    for prefix in ("_npi_", "_np_"):  # _npi_ first: it wins a shared short name
        for name, info in table.items():
            if name.startswith(prefix) and name[len(prefix):] not in g:
                g[name[len(prefix):]] = _make_function(info, name[len(prefix):])


_populate()
del _populate
