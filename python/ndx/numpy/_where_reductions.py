"""NumPy's where= on reductions: masked-out elements are replaced by the reduction's identity
(0 for sum, 1 for prod, True for all, `initial` for max and min) before the ordinary reduction,
so autograd and hybridize see registered ops. The C OpFunction hands calls that pass where=
to the function stored as its `_with_where` attribute; calls without it never come here."""
import inspect

import numpy as _onp

import ndx.numpy as _np


def mask_of(where, a, name):
    """where as a bool ndarray that broadcasts to a's shape, or None for where=True."""
    if where is True:
        return None
    m = where if isinstance(where, _np.ndarray) else _np.asarray(
        where, device=_np._device_for(a))
    if m.dtype != _np.bool_:
        raise TypeError(f"[{name}] where must be a bool array; got {m.dtype}")
    shape = _onp.broadcast_shapes(m.shape, a.shape)
    if shape != a.shape:
        raise ValueError(f"[{name}] where of shape {m.shape} does not broadcast to the "
                         f"input's shape {a.shape}")
    return m


def _masked(a, m, fill):
    return _np.where(m, a, _np.array(fill, dtype=a.dtype, device=_np._device_for(a)))


def _bound(op, a, args, kwargs):
    b = inspect.signature(op).bind(a, *args, **kwargs)
    b.apply_defaults()
    return b.arguments


def _with_identity(op, identity):
    """sum, prod, all, any, count_nonzero: masked elements become the identity."""
    def with_where(a, *args, where=True, **kwargs):
        a = a if isinstance(a, _np.ndarray) else _np.asarray(a)
        m = mask_of(where, a, op.__name__)
        return op(a if m is None else _masked(a, m, identity), *args, **kwargs)
    return with_where


def _with_initial(op, reduction):
    """max, min: masked elements become `initial`, which NumPy requires here."""
    def with_where(a, *args, where=True, **kwargs):
        a = a if isinstance(a, _np.ndarray) else _np.asarray(a)
        m = mask_of(where, a, op.__name__)
        if m is None:
            return op(a, *args, **kwargs)
        initial = _bound(op, a, args, kwargs)["initial"]
        if initial is None:
            raise ValueError(f"[{op.__name__}] reduction operation '{reduction}' does not have an "
                             "identity, so to use a where mask one has to specify 'initial'")
        return op(_masked(a, m, initial), *args, **kwargs)
    return with_where


def masked_mean(a, m, axis, dtype, keepdims):
    """The mean over the elements m selects (NaN where it selects none)."""
    if dtype is None:
        floating = a.dtype == _np.bfloat16 or _onp.dtype(a.dtype).kind in "fc"  # (no NumPy bf16)
        dtype = a.dtype if floating else _np._default_float()
    total = _np.sum(_masked(a, m, 0), axis=axis, keepdims=keepdims, dtype=dtype)
    count = _np.sum(_np.broadcast_to(m, a.shape), axis=axis, keepdims=keepdims)
    return _np.true_divide(total, count).astype(dtype)


def _mean_with_where(op):
    def with_where(a, *args, where=True, **kwargs):
        a = a if isinstance(a, _np.ndarray) else _np.asarray(a)
        m = mask_of(where, a, "mean")
        if m is None:
            return op(a, *args, **kwargs)
        p = _bound(op, a, args, kwargs)
        if p["initial"] is not None:
            raise TypeError("[mean] got an unexpected keyword argument 'initial'")
        r = masked_mean(a, m, p["axis"], p["dtype"], p["keepdims"])
        if p["out"] is None:
            return r
        p["out"][...] = r
        return p["out"]
    return with_where


def install(namespace):
    """Gives the reduction op functions in `namespace` their where= handlers."""
    for name in ("sum", "prod", "all", "any"):
        identity = {"sum": 0, "prod": 1, "all": True}.get(name, False)
        namespace[name]._with_where = _with_identity(namespace[name], identity)
    for name, reduction in (("max", "maximum"), ("min", "minimum"), ("amax", "maximum"),
                            ("amin", "minimum")):
        namespace[name]._with_where = _with_initial(namespace[name], reduction)
    namespace["mean"]._with_where = _mean_with_where(namespace["mean"])
