"""Operators written in Python, as in MXNet: subclass CustomOp (forward/backward) and
CustomOpProp (arguments, outputs, shape and dtype inference, create_operator), register the
prop with @register(name), and call it as ndx.nd.Custom(*inputs, op_type=name, **params) or
ndx.npx.custom(...). Params arrive as strings. Custom ops work under autograd and inside
hybridized blocks; an exception raised in a callback surfaces at the call."""

from . import _core

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators"]

_REGISTRY = {}


class CustomOp:
    """Base class of a Python operator's computation."""

    def forward(self, is_train, req, in_data, out_data, aux):
        raise NotImplementedError(f"[CustomOp] {type(self).__name__} does not define forward")

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise NotImplementedError(f"[CustomOp] {type(self).__name__} does not define backward")

    def assign(self, dst, req, src):
        """Writes src into dst as req says: 'write' / 'inplace' copy, 'add' accumulates,
        'null' leaves dst alone."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[...] = src
        elif req == "add":
            dst[...] = dst + src
        else:
            raise ValueError(f"[CustomOp.assign] unknown req {req!r}")


class CustomOpProp:
    """Base class describing a Python operator."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def list_auxiliary_states(self):
        return []

    def infer_shape(self, in_shape):
        """(input shapes, output shapes, aux shapes); by default all equal the first input's."""
        return in_shape, [in_shape[0]] * len(self.list_outputs()), []

    def infer_type(self, in_type):
        return in_type, [in_type[0]] * len(self.list_outputs()), [in_type[0]] * len(
            self.list_auxiliary_states())

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx, shapes, dtypes):
        raise NotImplementedError(f"[CustomOpProp] {type(self).__name__} does not define "
                                  "create_operator")


def register(reg_name):
    """Class decorator: registers a CustomOpProp subclass under reg_name."""
    def decorator(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise TypeError(f"[operator.register] {prop_cls!r} is not a CustomOpProp subclass")
        _REGISTRY[reg_name] = prop_cls
        return prop_cls
    return decorator


def get_all_registered_operators():
    """Names of every registered operator (built-in, from loaded libraries, and Python custom
    operators registered here), as MXNet's mx.operator.get_all_registered_operators lists
    them."""
    # Read from the registry now, not from _registry.ops(), which is read once: ops loaded from
    # a library after that would be missing.
    names = set(_REGISTRY)
    for name, _doc, _n_in, aliases, *_ in _core._list_ops():
        names.add(name)
        names.update(aliases)
    return sorted(names)


# ---- called from C++ (python/src/custom_op.cc) ----
class _Prop:
    """A prop instance with its operator, created once per use of the op."""

    def __init__(self, prop, op_type):
        self.prop = prop
        self.op_type = op_type
        self.op = None
        self.shapes = None
        self.dtypes = None
        self._config = None
        self._shape_key = self._shape_result = None
        self._type_key = self._type_result = None

    def operator(self):
        # One operator per shape and dtype configuration, as MXNet creates them.
        config = (self.shapes, tuple(self.dtypes or ()))
        if self.op is None or self._config != config:
            self.op = self.prop.create_operator("cpu(0)", self.shapes, self.dtypes)
            self._config = config
        return self.op


def _create_prop(op_type, params):
    cls = _REGISTRY.get(op_type)
    if cls is None:
        raise ValueError(f"[Custom] no custom operator is registered as '{op_type}'; registered: "
                         f"{sorted(_REGISTRY)}")
    try:
        prop = cls(**params)
    except TypeError as e:  # a param the prop does not take, or one it needs left out
        raise TypeError(f"[Custom] op_type '{op_type}': {cls.__name__}(**{params}) failed: "
                        f"{e}") from e
    n_aux = len(prop.list_auxiliary_states())
    return (_Prop(prop, op_type), len(prop.list_arguments()) + n_aux, len(prop.list_outputs()),
            n_aux, getattr(prop, "need_top_grad_", True))


def _infer_shape(p, in_shapes):
    key = tuple(None if s is None else tuple(s) for s in in_shapes)  # None: not known yet
    if p._shape_key == key:  # the same input shapes as last time: the same answer
        return p._shape_result
    p._shape_result = _infer_shape_uncached(p, in_shapes)
    p._shape_key = key
    return p._shape_result


def _infer_shape_uncached(p, in_shapes):
    n_args = len(p.prop.list_arguments())
    # An input whose shape graph inference does not know yet is [] to the prop, as MXNet
    # passes it; given back as [] (or None), it stays unknown.
    unknown = [s is None for s in in_shapes]
    # (ndx's own props may ask for None instead, which a 0-d input's [] cannot be mistaken for)
    blank = None if getattr(p.prop, "_unknown_as_none", False) else []
    result = p.prop.infer_shape([blank if s is None else list(s) for s in in_shapes[:n_args]])
    ins, outs, aux = _unpack(p, "infer_shape", result)

    def as_tuple(s, was_unknown=False):
        return None if s is None or (was_unknown and len(s) == 0) else tuple(s)
    ins_aux = [as_tuple(s, unknown[i] if i < len(unknown) else False)
               for i, s in enumerate(ins + aux)]
    if not any(unknown):  # (the shapes create_operator gets: those of a complete inference)
        p.shapes = [as_tuple(s) for s in ins + outs + aux]
    return ins_aux, [as_tuple(s) for s in outs]


def _unpack(p, what, result):
    """(inputs, outputs, aux) lists from what a prop's infer_shape / infer_type returned: two
    or three sequences, as MXNet's props return them. Anything else is the prop's mistake,
    named here rather than surfacing as an indexing error."""
    if not isinstance(result, (list, tuple)) or len(result) not in (2, 3) or \
            not all(isinstance(r, (list, tuple)) for r in result):
        raise TypeError(f"[Custom {p.op_type}] {what} must return (input, output[, aux]) lists, "
                        f"got {result!r:.200}")
    aux = list(result[2]) if len(result) > 2 else []
    return list(result[0]), list(result[1]), aux


def _infer_type(p, in_types):
    key = tuple(in_types)
    if p._type_key == key:
        return p._type_result
    p._type_result = _infer_type_uncached(p, in_types)
    p._type_key = key
    return p._type_result


def _infer_type_uncached(p, in_types):
    n_args = len(p.prop.list_arguments())
    # numpy dtypes ('bfloat16' as a str); None for one graph inference does not know yet
    result = p.prop.infer_type(list(in_types[:n_args]))
    ins, outs, aux = _unpack(p, "infer_type", result)
    if all(t is not None for t in in_types):  # (not `None in`: a float64 dtype == None)
        p.dtypes = ins + outs + aux
    return ins + aux, outs


def _forward(p, is_train, req, in_data, out_data, aux):
    p.operator().forward(is_train=is_train, req=req, in_data=in_data, out_data=out_data, aux=aux)


def _backward(p, req, out_grad, in_data, out_data, in_grad, aux):
    # As in MXNet, backward sees the gradients of the arguments only (one per in_data); the
    # auxiliary states get no gradient, which is zero.
    n_args = len(in_data)
    for g, r in zip(in_grad[n_args:], req[n_args:]):
        if r in ("write", "inplace"):
            g[...] = 0
    p.operator().backward(req=req[:n_args], out_grad=out_grad, in_data=in_data,
                          out_data=out_data, in_grad=in_grad[:n_args], aux=aux)


_ATTRS = {}  # (op_type, params) -> parsed attributes holding the prop instance


def custom(*inputs, op_type, **params):
    """Runs the custom operator registered as op_type (params are passed as strings).

    A call that autograd records, and each call traced into a graph (hybridize), gets a prop and
    operator of its own, as MXNet creates an operator per call: its backward runs on the
    operator whose forward made the outputs, so state kept on `self` in forward is the right
    one. Unrecorded eager calls reuse the parsed attributes (prop and operator) for the same
    op_type and params."""
    if op_type == "_ndx_autograd_function" or _core._is_tracing() or \
            _core._autograd_is_recording():
        # Never cached: a cached entry would pin the autograd.Function (and its saved arrays)
        # and would pair a backward with another call's forward.
        return _core._invoke_attrs(_core._attrs_str("Custom", dict(params, op_type=op_type)),
                                   list(inputs))
    key = (op_type, tuple(sorted((k, str(v)) for k, v in params.items())),
           _REGISTRY.get(op_type))
    attrs = _ATTRS.get(key)
    if attrs is None:
        attrs = _core._attrs_str("Custom", dict(params, op_type=op_type))
        if len(_ATTRS) > 1024:
            _ATTRS.clear()
        _ATTRS[key] = attrs
    return _core._invoke_attrs(attrs, list(inputs))
