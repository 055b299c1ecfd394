"""Every registered operator under its registered name: ``nd._np_add(a, b)``,
``nd._backward_sqrt(g, y)``. The np and npx namespaces wrap the same ops with NumPy's names."""
from .._registry import make_function, ops

for _name, _info in ops().items():
    globals()[_name] = make_function(_info, _name)

del _name, _info
