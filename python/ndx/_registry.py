"""Builds Python functions from the C++ operator registry: one function per op, with a real
signature and a docstring made from the op's declared arguments and params."""
import ast
import inspect

from . import _core

_OPS = None


def ops():
    """{name: OpInfo} for every registered op (aliases included), read once."""
    global _OPS
    if _OPS is None:
        _OPS = {}
        for name, doc, n_in, aliases, arguments, params in _core._list_ops():
            info = OpInfo(name, doc, n_in, arguments, params)
            _OPS[name] = info
            for alias in aliases:
                _OPS[alias] = info
    return _OPS


def _default_value(text):
    if text is None:
        return inspect.Parameter.empty
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


class OpInfo:
    def __init__(self, name, doc, n_inputs, arguments, params):
        self.name = name
        self.doc = doc
        self.n_inputs = n_inputs  # -1: variable
        self.inputs = [a for a in arguments if a[1].startswith("NDArray")]
        self.params = params  # [(name, type, default or None, doc)]
        self.handle = _core._op_handle(name)

    def is_variadic(self):
        """True for an op taking a list of arrays (concatenate, the multi-weight updates): its
        function takes them all by position and its params by keyword."""
        return self.n_inputs == -1 and any(a[1] == "NDArray[]" for a in self.inputs)

    def signature(self, positional=None):
        """The Python signature; `positional` (names, 'out' among them) overrides the order of
        the params that may be given by position."""
        P = inspect.Parameter
        if self.is_variadic():
            return inspect.Signature(
                [P(self.inputs[0][0], P.VAR_POSITIONAL)]
                + [P(name, P.KEYWORD_ONLY, default=_default_value(default))
                   for name, _, default, _ in self.params]
                + [P("out", P.KEYWORD_ONLY, default=None)])
        ps = [P(n, P.POSITIONAL_OR_KEYWORD) for n, _, _ in self.inputs]
        defaults = {name: _default_value(default) for name, _, default, _ in self.params}
        if positional is None:
            positional = self.positional_params()
        for name in positional:
            ps.append(P(name, P.POSITIONAL_OR_KEYWORD,
                        default=None if name == "out" else defaults[name]))
        for name, _, default, _ in self.params:
            if name not in positional:
                ps.append(P(name, P.KEYWORD_ONLY, default=defaults[name]))
        if not self.has_out_argument() and "out" not in positional:
            ps.append(P("out", P.KEYWORD_ONLY, default=None))
        return inspect.Signature(ps)

    def positional_params(self):
        """Param names that may be given positionally: up to a required param that follows an
        optional one (Python's signature rules); the rest are keyword-only."""
        names, seen_default = [], False
        for name, _, default, _ in self.params:
            if default is None and seen_default:
                break
            seen_default |= default is not None
            names.append(name)
        return names

    def has_out_argument(self):
        """True when an input or param is itself named 'out' (then out= is that argument)."""
        return any(a[0] == "out" for a in self.inputs) or any(p[0] == "out" for p in self.params)

    def docstring(self, public_name):
        lines = [self.doc, "", "Parameters", "----------"]
        for n, t, d in self.inputs:
            lines += [f"{n} : ndarray", f"    {d}"]
        for n, t, default, d in self.params:
            opt = f", optional, default={default}" if default is not None else ""
            lines += [f"{n} : {t}{opt}", f"    {d}"]
        if not self.has_out_argument():
            lines += ["out : ndarray, optional", "    Where to write the result."]
        lines += ["", f"Registered operator: ``{self.name}`` (``{public_name}``)."]
        return "\n".join(lines)


# NumPy's positional order for the functions whose ops declare their params in MXNet's order
# (NumPy's reductions take out= third: np.sum(a, 0, 'float64', out)).
NUMPY_POSITIONAL = {
    **dict.fromkeys(("sum", "prod"), ("axis", "dtype", "out", "keepdims", "initial")),
    "mean": ("axis", "dtype", "out", "keepdims"),
    **dict.fromkeys(("max", "min", "amax", "amin"), ("axis", "out", "keepdims", "initial")),
    **dict.fromkeys(("all", "any"), ("axis", "out", "keepdims")),
    **dict.fromkeys(("argmax", "argmin"), ("axis", "out")),
    **dict.fromkeys(("cumsum", "cumprod"), ("axis", "dtype", "out")),
}


def make_function(info, public_name, positional=None):
    """A callable that invokes `info`'s op (a C vectorcall object): inputs by position or name,
    extra positional args fill params in order (or in `positional`'s, where 'out' may appear),
    `out=` writes into an existing array."""
    if info.is_variadic():
        return _variadic_function(info, public_name)
    if positional is not None:
        names = {p[0] for p in info.params}
        positional = [n for n in positional if n in names or n == "out"]
    f = _core.OpFunction(info.name, public_name, [n for n, _, _ in info.inputs],
                         positional if positional is not None else info.positional_params(),
                         info.has_out_argument())
    f.__name__ = public_name
    f.__qualname__ = public_name
    f.__module__ = "ndx"
    f.__doc__ = info.docstring(public_name)
    f.__signature__ = info.signature(positional)
    return f


def _variadic_function(info, public_name):
    """The function of a variadic op, MXNet's way: every array by position
    (``nd.preloaded_multi_sgd_update(w0, g0, w1, g1, lrs, wds, num_weights=2)``), params by
    keyword; a `num_args` param left out is the number of arrays given."""
    # (a backward op takes its output gradient besides the num_args arrays: no default)
    name = info.name
    counted = any(p[0] == "num_args" for p in info.params) and not name.startswith("_backward")

    def f(*arrays, out=None, **params):
        if counted and "num_args" not in params:
            params["num_args"] = len(arrays)
        return _core._invoke(name, arrays, params, out)

    f.__name__ = f.__qualname__ = public_name
    f.__module__ = "ndx"
    f.__doc__ = info.docstring(public_name)
    f.__signature__ = info.signature()
    return f


_INTERNAL = {}


def internal_function(op_name, with_inputs=True):
    """A cached callable of registered op `op_name` for the Python wrappers: its inputs by
    position (none when with_inputs is False: an op whose inputs are optional, called with
    params alone), every param by keyword."""
    key = (op_name, with_inputs)
    f = _INTERNAL.get(key)
    if f is None:
        info = ops()[op_name]
        inputs = [n for n, _, _ in info.inputs] if with_inputs else []
        public = op_name.split("_", 2)[-1]  # "_npi_normal" -> "normal"
        f = _INTERNAL[key] = _core.OpFunction(info.name, public, inputs, [], False)
    return f


def populate(namespace, prefix, skip=(), positional_orders=None):
    """Adds a function for every op whose name starts with `prefix` (stripped) to `namespace`;
    `positional_orders` maps public names to the order their params take by position."""
    for name, info in ops().items():
        if not name.startswith(prefix):
            continue
        public = name[len(prefix):]
        if public in skip or public in namespace:
            continue
        namespace[public] = make_function(info, public, (positional_orders or {}).get(public))
