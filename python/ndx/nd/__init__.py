"""Every registered operator under its registered name: ``nd._np_add(a, b)``,
``nd._backward_sqrt(g, y)``. The np and npx namespaces wrap the same ops with NumPy's names.

This is also MXNet's ``mxnet.ndarray`` (``mx.nd``): the ``NDArray`` class (``nd.ndarray``),
the legacy API under MXNet's names and signatures (``nd.array``, ``zeros`` / ``ones`` /
``empty`` / ``full`` / ``arange`` with ``ctx=`` and float32 by default, ``dot``, ``concat``,
``reshape`` with 0 / -1 / -2 / -3 / -4, ``FullyConnected``, ``Convolution``, ``BatchNorm``,
... in ``nd._op``; ``nd.random``; ``nd.contrib``; ``nd.linalg`` (also as ``linalg_gemm2``,
...); ``nd.image``; ``nd.sparse``: CSR and row_sparse arrays), ``nd.waitall``,
``nd.load`` / ``nd.save``
(MXNet's file format), and ``nd.numpy`` / ``nd.numpy._internal`` (the ops MXNet's Python
code calls as ``_npi.<name>``). A legacy name takes precedence over a registered op of the
same name (``zeros_like``, ``ones_like``)."""
from .._registry import make_function, ops
from ..numpy_extension._io import nd_save as save  # noqa: F401  (MXNet's name)
from ..operator import custom as _custom
from . import ndarray  # noqa: F401
from .ndarray import NDArray, array, waitall  # noqa: F401  (MXNet's names)


def Custom(*inputs, op_type, **params):  # noqa: N802  (MXNet's name)
    """Runs a Python custom operator (ndx.operator.register), as ndx.npx.custom, returning
    NDArrays as mx.nd.Custom does (params are passed as strings)."""
    return ndarray._wrap(_custom(*inputs, op_type=op_type, **params))


for _name, _info in ops().items():
    if _name != "Custom":
        globals()[_name] = make_function(_info, _name)

del _name, _info

from . import _op  # noqa: E402  (MXNet's legacy operators)

for _name in dir(_op):
    if not _name.startswith("__") and _name not in ("onp", "builtins") and \
            (not _name.startswith("_") or _name == "_copy") and callable(getattr(_op, _name)):
        globals()[_name] = getattr(_op, _name)
del _name

from . import contrib, image, linalg, random, sparse  # noqa: E402, F401
from .ndarray import (  # noqa: E402, F401
    arange,
    concatenate,
    empty,
    eye,
    full,
    imdecode,
    linspace,
    moveaxis,
    ones,
    zeros,
)

# Functions with an nd.sparse version take sparse arrays there (MXNet's sparse versions keep
# the storage type: nd.abs(csr) is a CSRNDArray); the other nd functions take sparse arrays as
# their dense values (MXNet's storage fallback).
for _name, _sparse_name in (
        [(n, n) for n in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "add",
                          "subtract", "multiply", "divide", "add_n", "sum", "mean", "norm",
                          "clip", "abs", "sign", "sqrt", "square", "negative", "relu", "sin",
                          "tan", "arcsin", "arctan", "sinh", "tanh", "arcsinh", "arctanh",
                          "expm1", "log1p", "rint", "round", "ceil", "floor", "trunc", "fix",
                          "degrees", "radians", "zeros_like", "stop_gradient", "slice",
                          "concat", "take", "Embedding")]
        + [("broadcast_mul", "multiply"), ("broadcast_div", "divide")]):
    globals()[_name] = ndarray._on_plain(globals()[_name].__wrapped__,
                                         sparse_fn=getattr(sparse, _sparse_name))
del _name, _sparse_name

# MXNet 1.x's flat names of the samplers: mx.nd.random_uniform(low, high, shape=...) and
# mx.nd.sample_uniform(low_array, high_array, shape=...) (one sample of `shape` per element)
for _name in ("uniform", "normal", "randint", "exponential", "gamma", "poisson",
              "negative_binomial", "generalized_negative_binomial"):
    globals().setdefault("random_" + _name, getattr(random, _name))
    globals().setdefault("sample_" + _name, getattr(random, _name))
globals().setdefault("sample_multinomial", random.multinomial)
globals().setdefault("shuffle", random.shuffle)
# MXNet's flat names of the linalg operators: mx.nd.linalg_gemm2(a, b) (syevd has none)
for _name in linalg.__all__:
    if _name != "syevd":
        globals()["linalg_" + _name] = getattr(linalg, _name)
del _name


def load(fname):
    """MXNet's mx.nd.load: a dict {name: NDArray} for named arrays, else a list (even of
    one)."""
    from ..numpy_extension._io import nd_load
    from .ndarray import _wrap
    data = nd_load(fname)
    if isinstance(data, dict):
        return {k: _wrap(v) for k, v in data.items()}
    return [_wrap(v) for v in data]


from . import numpy  # noqa: E402, F401  (mx.nd.np, mx.nd.numpy._internal)

np = numpy
from .. import numpy_extension  # noqa: E402, F401  (mx.nd.npx, as MXNet's ndarray has it)

npx = numpy_extension
