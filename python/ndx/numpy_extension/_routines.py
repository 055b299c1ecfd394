"""MXNet's npx shape and indexing routines (issue 12): reshape with MXNet's special codes,
batch_dot, index_add, index_update, gather_nd, scatter_nd, boolean_mask, slice_like. Built on
ndx's differentiable ops and indexing (whose gradients scatter-add), so autograd sees through
them."""
import math
import operator

import numpy as _onp

from .. import _core


def _np():
    from .. import numpy as np
    return np


def _array(x):
    np = _np()
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def _kind(a):
    from ..numpy._composites import _kind
    return _kind(a)


def _int(v, what, name):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"[{name}] {what} must be integers, got {type(v).__name__}") from None


# ---------------------------------------------------------------- reshape
def _special_shape(shape, codes, name):
    """MXNet 2's npx.reshape codes, read left to right against the input's dims."""
    out, infer, i, k = [], None, 0, 0
    n = len(shape)

    def take(count):
        nonlocal i
        if i + count > n:
            raise ValueError(f"[{name}] newshape {tuple(codes)} reads past the input's "
                             f"{n} dimensions {tuple(shape)}")
        dims = shape[i:i + count]
        i += count
        return dims

    while k < len(codes):
        c = codes[k]
        k += 1
        if c >= 0:
            out.append(c)
            i += 1
        elif c == -1:
            if infer is not None:
                raise ValueError(f"[{name}] can only specify one unknown dimension (-1)")
            infer = len(out)
            out.append(1)
            i += 1
        elif c == -2:  # copy this dimension
            out.extend(take(1))
        elif c == -3:  # skip a dimension of size one
            (d,) = take(1)
            if d != 1:
                raise ValueError(f"[{name}] -3 skips only a dimension of size 1; dimension "
                                 f"{i - 1} has size {d}")
        elif c == -4:  # copy all the remaining dimensions
            out.extend(shape[i:])
            i = n
        elif c == -5:  # the product of two consecutive dimensions
            d0, d1 = take(2)
            out.append(d0 * d1)
        elif c == -6:  # split one dimension into the next two codes (one may be -1)
            (d,) = take(1)
            if k + 2 > len(codes):
                raise ValueError(f"[{name}] -6 must be followed by the two sizes to split into")
            p, q = codes[k], codes[k + 1]
            k += 2
            if p < -1 or q < -1 or (p == -1 and q == -1):
                raise ValueError(f"[{name}] -6 splits into two sizes, at most one of them -1; "
                                 f"got ({p}, {q})")
            if p == -1:
                p = d // q if q else 0
            elif q == -1:
                q = d // p if p else 0
            if p * q != d:
                raise ValueError(f"[{name}] -6 cannot split dimension {d} into ({p}, {q})")
            out.extend((p, q))
        else:
            raise ValueError(f"[{name}] invalid newshape code {c}: expected a size >= 0 or one "
                             f"of -1 .. -6")
    total = math.prod(shape)
    if infer is not None:
        rest = math.prod(out[:infer] + out[infer + 1:])
        if rest == 0 or total % rest:
            raise ValueError(f"[{name}] cannot reshape array of shape {tuple(shape)} into "
                             f"{tuple(codes)}")
        out[infer] = total // rest
    if math.prod(out) != total:
        raise ValueError(f"[{name}] cannot reshape array of size {total} into shape "
                         f"{tuple(out)}")
    return tuple(out)


def reshape(a, newshape, reverse=False, order="C"):
    """NumPy reshape plus MXNet's codes: -1 infers a size, -2 copies an input dim, -3 drops a
    dim of size 1, -4 copies all remaining dims, -5 merges two dims, -6 splits one into the
    two sizes after it; reverse=True reads codes and dims right to left. A view where NumPy's
    reshape gives one."""
    a = _array(a)
    if order != "C":
        raise NotImplementedError(f"[reshape] order={order!r}: only 'C' is supported")
    codes = [newshape] if isinstance(newshape, (int, _onp.integer)) else list(newshape)
    codes = [_int(c, "newshape entries", "reshape") for c in codes]
    shape = list(a.shape)
    target = tuple(_special_shape(shape[::-1], codes[::-1], "reshape")[::-1] if reverse
                   else _special_shape(shape, codes, "reshape"))  # checks the codes here
    if _core._is_tracing():
        # a traced graph keeps the codes (the _npx_reshape op), not this input's sizes, so it
        # serves other shapes: Flatten's (-2, -1) any batch size
        np = _np()
        return np._invoke(np._handle("_npx_reshape"), (a,),
                          {"newshape": tuple(codes), "reverse": bool(reverse)})
    return a.reshape(target)


# ---------------------------------------------------------------- batch_dot
def batch_dot(a, b, transpose_a=False, transpose_b=False, forward_stype=None):
    """Batched matrix product of (B..., M, K) and (B..., K, N) arrays with equal batch dims
    (MXNet's batch_dot: no broadcasting); transpose_a / transpose_b swap the last two axes."""
    a, b = _array(a), _array(b)
    if a.ndim < 3 or b.ndim < 3 or a.ndim != b.ndim:
        raise ValueError(f"[batch_dot] expects two arrays of the same rank >= 3, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"[batch_dot] batch dimensions differ: {tuple(a.shape[:-2])} and "
                         f"{tuple(b.shape[:-2])}")
    if transpose_a:
        a = a.swapaxes(-1, -2)
    if transpose_b:
        b = b.swapaxes(-1, -2)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"[batch_dot] shapes {tuple(a.shape)} and {tuple(b.shape)} (after "
                         f"transposes) do not align: {a.shape[-1]} != {b.shape[-2]}")
    return _np().matmul(a, b)


# ---------------------------------------------------------------- index routines
def _positions(a, ind, name, wrap=True):
    """ind of shape (M, N) (or (N,) for M = 1): N positions in a's first M dims. Returns the
    index tuple (M arrays of N non-negative ints) after checking types and bounds. wrap=False
    leaves negative indices as given (int64), for _flat_positions, which checks and wraps them
    when a traced graph runs: wrapped here, an index below -n would wrap twice there and
    name another row."""
    np = _np()
    ind = _array(ind)
    if _kind(ind) not in "iu":
        raise TypeError(f"[{name}] ind must be an integer array, got {ind.dtype}")
    if ind.ndim == 1:
        ind = ind.reshape((1, -1))
    if ind.ndim != 2:
        raise ValueError(f"[{name}] ind must be 2-dimensional (M, N), got shape "
                         f"{tuple(ind.shape)}")
    m = ind.shape[0]
    if m > a.ndim or m == 0:
        raise ValueError(f"[{name}] ind indexes {m} dimensions of an array with {a.ndim}")
    rows = []
    for d in range(m):
        r = ind[d].astype("int64")
        n = a.shape[d]
        if r.size and (int(np.max(r)) >= n or int(np.min(r)) < -n):
            raise IndexError(f"[{name}] index out of bounds for dimension {d} with size {n}")
        rows.append(np.where(r < 0, r + n, r) if wrap else r)
    return tuple(rows)


def _values(val, count, rest, dtype, name):
    np = _np()
    val = _array(val)
    try:
        val = np.broadcast_to(val, (count,) + tuple(rest))
    except ValueError:
        raise ValueError(f"[{name}] val of shape {tuple(val.shape)} cannot broadcast to "
                         f"{(count,) + tuple(rest)}") from None
    return val if val.dtype == dtype else val.astype(dtype)


def index_add(a, ind, val):
    """a with val added at the positions ind names (ind: (M, N), N positions in a's first M
    dims; val broadcast to (N,) + a.shape[M:]); repeated positions accumulate."""
    np = _np()
    a = _array(a)
    tracing = _core._is_tracing()
    rows = _positions(a, ind, "index_add", wrap=not tracing)
    m, n = len(rows), rows[0].shape[0]
    rest = a.shape[m:]
    vals = _values(val, n, rest, a.dtype, "index_add")
    outer, inner = math.prod(a.shape[:m]), math.prod(rest)
    if n == 0 or a.size == 0:
        return a.copy()
    if tracing:  # (each index checked against its own dimension when the graph runs)
        flat = _flat_positions(rows, a.shape[:m])
    else:
        flat = np.ravel_multi_index(rows, a.shape[:m]) if m > 1 else rows[0]
    work = a.dtype if _kind(a) == "f" else "float64"  # the scatter-add kernel is float
    added = _scatter_rows(vals.reshape((n, inner)).astype(work), flat, outer)
    return np.add(a, added.reshape(a.shape).astype(a.dtype))


def _scatter_rows(rows, flat, outer):
    """(outer, inner) zeros with rows[j] added into row flat[j] (rows: (n, inner), float):
    the embedding gradient's scatter-add, which autograd differentiates (a gather) and
    hybridize traces."""
    np = _np()
    inner = rows.shape[1]
    return _core._invoke("_backward_embedding",
                         (rows, flat, np.zeros((outer, inner), dtype=rows.dtype,
                                               device=rows.device)),
                         {"input_dim": outer, "output_dim": inner}, None)


def _flat_positions(rows, shape):
    """The row numbers in C order of the positions `rows` (M index arrays) in an array of
    shape `shape` (M dims), by ops a traced graph keeps: each index is checked against its
    dimension when the graph runs (a take from arange(n): an IndexError out of range, negative
    ones wrapped), so a bad index cannot alias another row."""
    np = _np()
    flat = None
    for r, n in zip(rows, shape):
        r = np.take(np.arange(n, dtype="int64", device=r.device), r.astype("int64"))
        flat = r if flat is None else flat * n + r
    return flat


def _written_from(flat, outer):
    """For each of the `outer` rows, 1 + the number j of the last of flat's positions that
    names it (0 where none does), as int64: of repeated positions the last write wins, as in
    an assignment. Built from a sort and a scatter-add, so hybridize can trace it."""
    np = _np()
    n = flat.shape[0]
    steps = np.arange(n, dtype="int64", device=flat.device)
    order = np.argsort(flat * n + steps)  # (unique keys: equal positions keep their order)
    ranked = np.take(flat, order)
    last = np.concatenate([ranked[1:] != ranked[:-1], np.ones((1,), dtype=bool,
                                                              device=flat.device)])
    last = np.take(last, np.argsort(order))  # (back in flat's order)
    writer = np.where(last, steps + 1, 0).astype("float64").reshape((n, 1))
    return _scatter_rows(writer, flat, outer).reshape((outer,)).astype("int64")


def _assign_rows(a, flat, vals):
    """a (outer, inner) with row flat[j] replaced by vals[j] (the last write of repeated
    positions wins): a select and a take, so autograd and hybridize see through it."""
    np = _np()
    writer = _written_from(flat, a.shape[0])
    picked = np.take(vals, np.maximum(writer - 1, 0), axis=0)
    return np.where(np.expand_dims(writer > 0, 1), picked, a)


def index_update(a, ind, val):
    """A copy of a with val written at the positions ind names (as index_add; of repeated
    positions the last write wins)."""
    a = _array(a)
    tracing = _core._is_tracing()
    rows = _positions(a, ind, "index_update", wrap=not tracing)
    m, n = len(rows), rows[0].shape[0]
    vals = _values(val, n, a.shape[m:], a.dtype, "index_update")
    if tracing:  # (assignment cannot be traced)
        if n == 0 or a.size == 0:
            return _np().copy(a)
        outer, inner = math.prod(a.shape[:m]), math.prod(a.shape[m:])
        flat = _flat_positions(rows, a.shape[:m])
        out = _assign_rows(a.reshape((outer, inner)), flat, vals.reshape((n, inner)))
        return out.reshape(a.shape)
    out = a.copy()
    out[rows] = vals
    return out


def gather_nd(data, indices):
    """out[y...] = data[indices[0, y...], ..., indices[M-1, y...], ...]: shape
    indices.shape[1:] + data.shape[M:]."""
    data, indices = _array(data), _array(indices)
    if _kind(indices) not in "iu":
        raise TypeError(f"[gather_nd] indices must be integers, got {indices.dtype}")
    if indices.ndim == 0 or indices.shape[0] > data.ndim:
        raise ValueError(f"[gather_nd] indices of shape {tuple(indices.shape)} must be (M, ...)"
                         f" with M <= data.ndim = {data.ndim}")
    m = indices.shape[0]
    return data[tuple(indices[i] for i in range(m))]


def scatter_nd(data, indices, shape):
    """zeros(shape) with out[indices[0, y...], ..., indices[M-1, y...], ...] = data[y...] (of
    repeated positions the last write wins; MXNet leaves them undefined)."""
    np = _np()
    data, indices = _array(data), _array(indices)
    shape = tuple(_int(s, "shape entries", "scatter_nd") for s in
                  ((shape,) if isinstance(shape, (int, _onp.integer)) else shape))
    if _kind(indices) not in "iu":
        raise TypeError(f"[scatter_nd] indices must be integers, got {indices.dtype}")
    if indices.ndim == 0 or indices.shape[0] > len(shape):
        raise ValueError(f"[scatter_nd] indices of shape {tuple(indices.shape)} must be "
                         f"(M, ...) with M <= len(shape) = {len(shape)}")
    m = indices.shape[0]
    want = tuple(indices.shape[1:]) + shape[m:]
    if tuple(data.shape) != want:
        raise ValueError(f"[scatter_nd] data has shape {tuple(data.shape)}, expected {want}")
    if _core._is_tracing():  # (assignment cannot be traced)
        outer, inner = math.prod(shape[:m]), math.prod(shape[m:])
        count = math.prod(indices.shape[1:])
        base = np.zeros((outer, inner), dtype=data.dtype, device=data.device)
        if count == 0 or outer * inner == 0:
            return base.reshape(shape)
        # (negative indices as given: _flat_positions checks and wraps them when the graph
        # runs; wrapped here first, one below -n would wrap twice and name another row)
        rows = [indices[d].reshape(-1).astype("int64") for d in range(m)]
        flat = _flat_positions(rows, shape[:m])
        return _assign_rows(base, flat, data.reshape((count, inner))).reshape(shape)
    out = np.zeros(shape, dtype=data.dtype)
    out[tuple(indices[i] for i in range(m))] = data
    return out


def boolean_mask(data, index, axis=0):
    """The slices of data along axis where index (1-D, data.shape[axis] long) is nonzero."""
    np = _np()
    data, index = _array(data), _array(index)
    if index.ndim != 1:
        raise ValueError(f"[boolean_mask] index must be 1-dimensional, got shape "
                         f"{tuple(index.shape)}")
    if data.ndim == 0:
        raise ValueError("[boolean_mask] data must be at least 1-dimensional")
    from ..numpy._manipulation import _axis_list
    ax = _axis_list(axis, data.ndim, "boolean_mask")[0]
    if index.shape[0] != data.shape[ax]:
        raise ValueError(f"[boolean_mask] index has {index.shape[0]} elements; axis {ax} of "
                         f"data has {data.shape[ax]}")
    mask = index if index.dtype == _onp.bool_ else np.not_equal(index, 0)
    return data[(slice(None),) * ax + (mask,)]


# ---------------------------------------------------------------- slice
_OMITTED = -(2**63)  # _npx_slice's "no bound" (INT64_MIN)


def _slice_tuple(v, what):
    """A begin / end / step argument as a tuple of ints or None (an int is one axis)."""
    if v is None or isinstance(v, (int, _onp.integer)):
        return (v,)
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"[slice] {what} must be a tuple of ints or None, got "
                        f"{type(v).__name__}")
    return tuple(None if x is None else _int(x, f"{what} entries", "slice") for x in v)


def mx_slice(data, begin, end, step=None, out=None):
    """MXNet's npx.slice: data[begin[0]:end[0]:step[0], begin[1]:end[1]:step[1], ...] over the
    leading len(begin) axes, the others whole. None in begin or end omits that bound (as in
    Python's slices, so a negative step starts from the end); None in step, or step=None,
    means 1. Recorded by autograd; a view's values, copied."""
    begin, end = _slice_tuple(begin, "begin"), _slice_tuple(end, "end")
    step = () if step is None else tuple(1 if s is None else s for s in _slice_tuple(step, "step"))
    params = {"begin": tuple(_OMITTED if b is None else b for b in begin),
              "end": tuple(_OMITTED if e is None else e for e in end), "step": step}
    return _core._invoke("_npx_slice", (_array(data),), params, out)


def slice_like(data, shape_like, axes=()):
    """MXNet's npx.slice_like: data[0:d_0, 0:d_1, ...] with d_k = shape_like.shape[k], on
    the axes listed in `axes` (negative ones count from data's end), or on the leading
    min(data.ndim, shape_like.ndim) axes when axes is empty. Recorded by autograd."""
    data, shape_like = _array(data), _array(shape_like)
    if isinstance(axes, int):
        axes = (axes,)
    axes = tuple(_int(a, "axes", "slice_like") for a in axes)
    if not axes:
        axes = tuple(range(min(data.ndim, shape_like.ndim)))
    key = [slice(None)] * data.ndim
    for a in axes:
        k = a + data.ndim if a < 0 else a
        if not 0 <= k < data.ndim or k >= shape_like.ndim:
            raise ValueError(f"[slice_like] axis {a} is out of range for data of shape "
                             f"{data.shape} and shape_like of shape {shape_like.shape}")
        if shape_like.shape[k] > data.shape[k]:
            raise ValueError(f"[slice_like] shape_like's size {shape_like.shape[k]} on axis "
                             f"{k} exceeds data's {data.shape[k]}")
        key[k] = slice(0, shape_like.shape[k])
    return data[tuple(key)]


# ---------------------------------------------------------------- activations / normalizations
_LEAKY_ACT_TYPES = ("leaky", "prelu", "rrelu", "elu", "selu", "gelu", "gelu_erf", "gelu_tanh")


def leaky_relu(data=None, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
               upper_bound=0.334, out=None, name=None):
    """MXNet's npx.leaky_relu, elementwise: 'leaky' x > 0 ? x : slope * x; 'prelu' the same
    with the learned slopes `gamma` ((1,) or one per channel along axis 1); 'rrelu' a random
    slope in [lower_bound, upper_bound) per element in training (autograd.record()), their
    mean in predict mode; 'elu' x > 0 ? x : slope * (exp(x) - 1); 'selu' SELU;
    'gelu_erf' (or 'gelu') x * Phi(x); 'gelu_tanh' GELU's tanh approximation. gamma is read
    by prelu only, as in MXNet. name is MXNet's and unused."""
    if act_type not in _LEAKY_ACT_TYPES:
        raise ValueError(f"[leaky_relu] act_type must be one of {_LEAKY_ACT_TYPES}, got "
                         f"{act_type!r}")
    data = _array(data)
    if act_type == "rrelu":
        return _rrelu(data, lower_bound, upper_bound, out)
    params = {"act_type": act_type, "slope": slope}
    if act_type != "prelu":
        return _core._invoke("_npx_leaky_relu", (data,), params, out)
    if gamma is None:
        raise ValueError("[leaky_relu] act_type='prelu' needs gamma, the slopes ((1,) or one "
                         "per channel), got None")
    return _core._invoke("_npx_leaky_relu", (data, _array(gamma)), params, out)


def _rrelu(data, lower, upper, out):
    """Randomized leaky ReLU: in training a slope drawn uniformly from [lower, upper) for each
    element (composed of registered ops, so gradients flow to data); otherwise the mean slope."""
    from .. import autograd
    if not lower <= upper:
        raise ValueError(f"[leaky_relu] rrelu needs lower_bound <= upper_bound, got "
                         f"{lower} and {upper}")
    if not autograd.is_training():
        return _core._invoke("_npx_leaky_relu", (data,),
                             {"act_type": "leaky", "slope": (lower + upper) / 2.0}, out)
    np = _np()
    slopes = np.random.uniform(lower, upper, size=data.shape).astype(data.dtype)
    result = np.where(data > 0, data, data * slopes)
    if out is not None:
        out[...] = result
        return out
    return result


def _check_norm_args(name, data, gamma, beta, channels, allowed):
    """data at least 2-d (N, C, ...); gamma and beta 1-d of one of the lengths `allowed`."""
    for what, v in (("gamma", gamma), ("beta", beta)):
        if v.ndim != 1 or v.shape[0] not in allowed:
            want = " or ".join(f"({n},)" for n in sorted(set(allowed)))
            raise ValueError(f"[{name}] {what} has shape {tuple(v.shape)}, expected {want} "
                             f"for data of shape {tuple(data.shape)} ({channels} channels)")


def group_norm(data, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False):
    """Group normalization (MXNet's npx.group_norm): the channels of data (N, C, ...) split
    into num_groups groups, each group of each sample normalized by its own mean and variance
    (biased), then out = xhat * gamma + beta with gamma, beta of shape (C,) (or MXNet 1.x's
    (num_groups,), one value per group). With output_mean_var, also returns the mean and the
    std (sqrt(var + eps)) of shape (N, num_groups). Composed of registered ops: differentiable
    and hybridizable."""
    np = _np()
    data, gamma, beta = _array(data), _array(gamma), _array(beta)
    g = _int(num_groups, "num_groups", "group_norm")
    if data.ndim < 2:
        raise ValueError(f"[group_norm] data must be (N, C, ...), at least 2-d, got shape "
                         f"{tuple(data.shape)}")
    n, c = data.shape[0], data.shape[1]
    if g < 1 or c % g:
        raise ValueError(f"[group_norm] num_groups must be a positive divisor of the "
                         f"{c} channels, got {num_groups}")
    _check_norm_args("group_norm", data, gamma, beta, c, (c, g))
    per_group = math.prod(data.shape[1:]) // g
    x = data.reshape((n, g, per_group))
    mean = np.mean(x, axis=2, keepdims=True)
    centered = x - mean
    std = np.sqrt(np.mean(centered * centered, axis=2, keepdims=True) + eps)
    xhat = centered / std
    if gamma.shape[0] == c:
        bshape = (1, c) + (1,) * (data.ndim - 2)
        result = xhat.reshape(data.shape) * gamma.reshape(bshape) + beta.reshape(bshape)
    else:  # one gamma / beta per group
        result = (xhat * gamma.reshape((1, g, 1)) + beta.reshape((1, g, 1))).reshape(data.shape)
    if output_mean_var:
        return result, mean.reshape((n, g)), std.reshape((n, g))
    return result


def instance_norm(data, gamma, beta, eps=0.001, name=None):
    """Instance normalization (MXNet's npx.instance_norm): each channel of each sample of data
    (N, C, spatial...) normalized over its spatial positions, then scaled by gamma (C,) and
    shifted by beta (C,). group_norm with one group per channel."""
    data = _array(data)
    if data.ndim < 3:
        raise ValueError(f"[instance_norm] data must be (N, C, spatial...), at least 3-d, got "
                         f"shape {tuple(data.shape)}")
    c = data.shape[1]
    gamma, beta = _array(gamma), _array(beta)
    _check_norm_args("instance_norm", data, gamma, beta, c, (c,))
    if c == 0:
        return data.copy()
    return group_norm(data, gamma, beta, num_groups=c, eps=eps)
