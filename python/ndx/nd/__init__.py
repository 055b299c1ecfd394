"""Every registered operator under its registered name: ``nd._np_add(a, b)``,
``nd._backward_sqrt(g, y)``. The np and npx namespaces wrap the same ops with NumPy's names."""
from .._registry import make_function, ops
from ..numpy import array  # noqa: F401  (nd.array, as in MXNet)
from ..operator import custom as Custom  # noqa: N812, F401  (nd.Custom(..., op_type=...))

for _name, _info in ops().items():
    if _name != "Custom":
        globals()[_name] = make_function(_info, _name)

del _name, _info
