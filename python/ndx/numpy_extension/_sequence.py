"""MXNet 2.0's npx sequence, masking and shape-like routines: sequence_mask / sequence_last /
sequence_reverse, masked_softmax / masked_log_softmax, reshape_like, broadcast_like,
arange_like, batch_flatten, smooth_l1, add_n, shape_array, cast, nonzero and box_iou.

Each is composed of ndx ops (where, take_along_axis, broadcast_to, reshape, ...), so autograd
differentiates it and a hybridized block traces it; nothing reads array values on the host.
Arguments are checked first, with MXNet's names in the messages."""
import math
import operator

import numpy as _onp

from .. import _core
from ._routines import _kind


def _np():
    from .. import numpy as np
    return np


def _array(x, name, what="data"):
    np = _np()
    if isinstance(x, np.ndarray):
        return x
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"[{name}] {what} must be an array, got {type(x).__name__}") from e


def _int(v, name, what):
    if isinstance(v, bool):
        raise TypeError(f"[{name}] {what} must be an int, got bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"[{name}] {what} must be an int, got {type(v).__name__}") from None


def _number(v, name, what):
    if isinstance(v, bool) or not isinstance(v, (int, float, _onp.number)):
        raise TypeError(f"[{name}] {what} must be a number, got {type(v).__name__}")
    return v


def _temperature(t, name):
    """softmax's temperature: a finite non-zero number."""
    _number(t, name, "temperature")
    if t == 0 or not math.isfinite(t):
        raise ValueError(f"[{name}] temperature must be finite and non-zero, got {t}")
    return t


def _axis(axis, ndim, name, what="axis"):
    a = _int(axis, name, what)
    if not -ndim <= a < ndim:
        raise ValueError(f"[{name}] {what} {a} is out of range for {ndim} dimensions")
    return a % ndim


def _along(index, ndim, axis):
    """index (1-d) shaped to broadcast along `axis` of an ndim-dimensional array."""
    return index.reshape(tuple(-1 if d == axis else 1 for d in range(ndim)))


# ---------------------------------------------------------------- sequences
def _sequence_args(name, data, sequence_length, use_sequence_length, axis):
    """(data, sequence axis, batch axis, lengths or None): MXNet's layout, the sequence axis
    0 or 1 and the batch axis the other."""
    data = _array(data, name)
    axis = _int(axis, name, "axis")
    if data.ndim < 2:
        raise ValueError(f"[{name}] data must have a sequence and a batch axis (at least 2 "
                         f"dimensions), got shape {data.shape}")
    if axis not in (0, 1):
        raise ValueError(f"[{name}] axis (the sequence axis) must be 0 or 1, got {axis}")
    if not use_sequence_length:
        return data, axis, 1 - axis, None
    if sequence_length is None:
        raise ValueError(f"[{name}] use_sequence_length=True needs sequence_length, got None")
    lengths = _array(sequence_length, name, "sequence_length")
    batch = data.shape[1 - axis]
    if lengths.shape != (batch,):
        raise ValueError(f"[{name}] sequence_length must have shape ({batch},), one length per "
                         f"batch entry, got {lengths.shape}")
    if _kind(lengths) not in "iuf":
        raise TypeError(f"[{name}] sequence_length must be real numbers, got {lengths.dtype}")
    return data, axis, 1 - axis, lengths


def _steps_before(lengths, steps, axis, ndim):
    """Mask of data's shape (broadcastable): step t of batch entry b lies before lengths[b]."""
    np = _np()
    t = np.arange(steps, dtype="int64", device=lengths.device)
    keep = (t.reshape(-1, 1) < lengths.reshape(1, -1)) if axis == 0 else \
        (lengths.reshape(-1, 1) > t.reshape(1, -1))
    return keep.reshape(keep.shape + (1,) * (ndim - 2))


def sequence_mask(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    """Sets the steps past each sequence's length to `value` (MXNet's SequenceMask): data is
    (max_len, batch, ...) for axis=0 or (batch, max_len, ...) for axis=1; without
    use_sequence_length every sequence is full and data comes back unchanged."""
    np = _np()
    data, axis, _, lengths = _sequence_args("sequence_mask", data, sequence_length,
                                            use_sequence_length, axis)
    _number(value, "sequence_mask", "value")
    if lengths is None:
        return np.copy(data)  # (recorded: the gradient passes)
    keep = _steps_before(lengths, data.shape[axis], axis, data.ndim)
    return np.where(keep, data, value)


def _last_steps(lengths, steps):
    """The index of each sequence's last step, clipped into [0, steps) (a length of 0 or
    past the data reads its first or last step, where MXNet's kernel reads out of range)."""
    np = _np()
    last = lengths.astype("int64") - 1
    return np.clip(last, 0, max(steps - 1, 0))


def sequence_last(data, sequence_length=None, use_sequence_length=False, axis=0):
    """Each sequence's last step (MXNet's SequenceLast): (batch, ...) from (max_len, batch,
    ...) for axis=0 or (batch, max_len, ...) for axis=1; the step at sequence_length - 1 with
    use_sequence_length, else the final one."""
    np = _np()
    data, axis, batch_axis, lengths = _sequence_args("sequence_last", data, sequence_length,
                                                     use_sequence_length, axis)
    steps = data.shape[axis]
    if steps == 0:
        raise ValueError("[sequence_last] data has no steps (its sequence axis has length 0)")
    if lengths is None:
        return np.take(data, steps - 1, axis=axis)
    index = _along(_last_steps(lengths, steps), data.ndim, batch_axis)
    shape = list(data.shape)
    shape[axis] = 1
    picked = np.take_along_axis(data, np.broadcast_to(index, tuple(shape)), axis=axis)
    return np.squeeze(picked, axis=axis)


def sequence_reverse(data, sequence_length=None, use_sequence_length=False, axis=0):
    """Reverses each sequence's first sequence_length steps, the rest left in place (MXNet's
    SequenceReverse); without use_sequence_length the whole sequence axis is reversed."""
    np = _np()
    data, axis, _, lengths = _sequence_args("sequence_reverse", data, sequence_length,
                                            use_sequence_length, axis)
    if lengths is None:
        return np.flip(data, axis=axis)
    steps = data.shape[axis]
    t = np.arange(steps, dtype="int64", device=data.device)
    n = lengths.astype("int64")
    t2, n2 = (t.reshape(-1, 1), n.reshape(1, -1)) if axis == 0 else \
        (t.reshape(1, -1), n.reshape(-1, 1))
    source = np.where(t2 < n2, np.clip(n2 - 1 - t2, 0, max(steps - 1, 0)), t2)
    source = source.reshape(source.shape + (1,) * (data.ndim - 2))
    return np.take_along_axis(data, np.broadcast_to(source, data.shape), axis=axis)


# ---------------------------------------------------------------- masked softmax
def _masked_parts(name, data, mask, axis, temperature):
    """(kept, shifted, log of the sums): the kept entries' (x / t - max) and the log of
    their exponentials' sum along axis (0 where nothing is kept)."""
    np = _np()
    data = _array(data, name)
    mask = _array(mask, name, "mask")
    if _kind(data) == "c":
        raise TypeError(f"[{name}] data must be real, got {data.dtype}")
    if _kind(data) != "f":  # (integers and bool: the default float, as MXNet's float32)
        data = data.astype(np._default_float())
    if data.ndim == 0:
        raise ValueError(f"[{name}] data must have at least 1 dimension, got a 0-d array")
    try:
        shape = _onp.broadcast_shapes(mask.shape, data.shape)
    except ValueError:
        raise ValueError(f"[{name}] mask of shape {mask.shape} does not broadcast to data's "
                         f"{data.shape}") from None
    if shape != data.shape:
        raise ValueError(f"[{name}] mask of shape {mask.shape} does not broadcast to data's "
                         f"{data.shape}")
    axis = _axis(axis, data.ndim, name)
    if temperature is not None:  # (None: MXNet's default, no scaling)
        _temperature(temperature, name)
    kept = mask if mask.dtype == _onp.bool_ else np.not_equal(mask, 0)
    x = data if temperature is None or temperature == 1 else data / temperature
    masked = np.where(kept, x, -np.inf)
    # (initial: an axis of length 0 reduces to -inf, so zero-size data gives a zero-size result)
    top = np.max(masked, axis=axis, keepdims=True, initial=-np.inf)
    top = np.where(np.isfinite(top), top, 0)  # a row with nothing kept: no shift
    shifted = masked - top
    total = np.sum(np.where(kept, np.exp(shifted), 0), axis=axis, keepdims=True)
    return kept, shifted, np.log(np.where(total > 0, total, 1))


def _out_dtype(result, dtype):
    return result if dtype is None else result.astype(dtype)


def masked_softmax(data, mask, axis=-1, temperature=1.0, dtype=None, normalize=True):
    """Softmax over the entries where mask is true (nonzero), 0 elsewhere (MXNet 2's
    npx.masked_softmax); a row with nothing kept is all 0. mask broadcasts to data; data is
    divided by temperature first (None, MXNet's optional default, leaves it unscaled).
    normalize is accepted for MXNet's signature (the max is always subtracted)."""
    np = _np()
    kept, shifted, log_total = _masked_parts("masked_softmax", data, mask, axis, temperature)
    return _out_dtype(np.where(kept, np.exp(shifted - log_total), 0), dtype)


def masked_log_softmax(data, mask, axis=-1, temperature=1.0, dtype=None, normalize=True):
    """log(masked_softmax): -inf where mask is false (MXNet 2's npx.masked_log_softmax)."""
    np = _np()
    kept, shifted, log_total = _masked_parts("masked_log_softmax", data, mask, axis,
                                             temperature)
    return _out_dtype(np.where(kept, shifted - log_total, -np.inf), dtype)


# ---------------------------------------------------------------- shapes
def _range(ndim, begin, end, name, which):
    b = 0 if begin is None else _int(begin, name, f"{which}_begin")
    e = ndim if end is None else _int(end, name, f"{which}_end")
    b, e = b + ndim if b < 0 else b, e + ndim if e < 0 else e
    if not 0 <= b <= e <= ndim:
        raise ValueError(f"[{name}] {which}_begin / {which}_end ({begin}, {end}) do not name a "
                         f"range of {which}'s {ndim} dimensions")
    return b, e


def reshape_like(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None):
    """lhs with dimensions lhs_begin:lhs_end replaced by rhs's rhs_begin:rhs_end (MXNet's
    reshape_like; by default all of them: rhs's shape). The sizes must agree."""
    np = _np()
    lhs = _array(lhs, "reshape_like", "lhs")
    rhs = _array(rhs, "reshape_like", "rhs")
    lb, le = _range(lhs.ndim, lhs_begin, lhs_end, "reshape_like", "lhs")
    rb, re = _range(rhs.ndim, rhs_begin, rhs_end, "reshape_like", "rhs")
    shape = lhs.shape[:lb] + rhs.shape[rb:re] + lhs.shape[le:]
    if math.prod(shape) != lhs.size:
        raise ValueError(f"[reshape_like] lhs of shape {lhs.shape} cannot take shape {shape} "
                         f"({lhs.size} elements against {math.prod(shape)})")
    return np.reshape(lhs, shape)


def broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None):
    """lhs broadcast to rhs's shape (MXNet's broadcast_like), or only on lhs_axes, each taking
    the size of the matching axis in rhs_axes."""
    lhs = _array(lhs, "broadcast_like", "lhs")
    rhs = _array(rhs, "broadcast_like", "rhs")
    if lhs_axes is None and rhs_axes is None:
        try:
            return _broadcast_copy(lhs, rhs.shape)
        except ValueError:
            raise ValueError(f"[broadcast_like] lhs of shape {lhs.shape} does not broadcast to "
                             f"rhs's shape {rhs.shape}") from None
    if lhs_axes is None or rhs_axes is None:
        raise ValueError("[broadcast_like] lhs_axes and rhs_axes go together: give both or "
                         "neither")
    la = (lhs_axes,) if isinstance(lhs_axes, int) else tuple(lhs_axes)
    ra = (rhs_axes,) if isinstance(rhs_axes, int) else tuple(rhs_axes)
    if len(la) != len(ra):
        raise ValueError(f"[broadcast_like] lhs_axes {la} and rhs_axes {ra} must have one "
                         f"length")
    shape = list(lhs.shape)
    for a, b in zip(la, ra):
        a, b = (_axis(a, lhs.ndim, "broadcast_like", "lhs_axes"),
                _axis(b, rhs.ndim, "broadcast_like", "rhs_axes"))
        if shape[a] not in (1, rhs.shape[b]):
            raise ValueError(f"[broadcast_like] lhs axis {a} has size {shape[a]}: only size 1 "
                             f"broadcasts to rhs axis {b}'s {rhs.shape[b]}")
        shape[a] = rhs.shape[b]
    return _broadcast_copy(lhs, tuple(shape))


def _broadcast_copy(a, shape):
    """a repeated to shape in a new array (MXNet's broadcast ops return new arrays; np's
    broadcast_to gives a read-only view)."""
    from ..numpy._manipulation import _broadcast_to_op
    return _broadcast_to_op(a, shape=shape)


def arange_like(data, start=0.0, step=1.0, repeat=1, ctx=None, axis=None, device=None):
    """start, start + step, ... in data's shape (or along one axis: 1-d, that axis's length)
    and dtype, each value repeated `repeat` times (MXNet's arange_like)."""
    np = _np()
    data = _array(data, "arange_like")
    repeat = _int(repeat, "arange_like", "repeat")
    if repeat < 1:
        raise ValueError(f"[arange_like] repeat must be >= 1, got {repeat}")
    _number(start, "arange_like", "start")
    _number(step, "arange_like", "step")
    if axis is None:
        shape = data.shape
    else:
        if data.ndim == 0:
            raise ValueError("[arange_like] axis needs data of at least 1 dimension")
        shape = (data.shape[_axis(axis, data.ndim, "arange_like")],)
    device = device or ctx or data.device
    index = np.arange(math.prod(shape), dtype="int64", device=device)
    if repeat > 1:
        index = np.floor_divide(index, repeat)
    values = index.astype("float64") * float(step) + float(start)
    return values.astype(data.dtype).reshape(shape)


def batch_flatten(data):
    """(d0, d1, ..., dk) to (d0, d1 * ... * dk) (MXNet's Flatten)."""
    data = _array(data, "batch_flatten")
    if data.ndim == 0:
        raise ValueError("[batch_flatten] data must have at least 1 dimension, got a 0-d array")
    if data.ndim >= 2 and data.shape[0] and _core._is_tracing():
        # (the codes, not this call's sizes, so a traced graph serves every batch size)
        from ._routines import reshape
        return reshape(data, (-2, -1))
    return data.reshape((data.shape[0], math.prod(data.shape[1:])))


def shape_array(data):
    """data's shape as a 1-d int64 array (MXNet's shape_array)."""
    np = _np()
    data = _array(data, "shape_array")
    return np.array(_onp.array(data.shape, dtype=_onp.int64), device=data.device)


# ---------------------------------------------------------------- elementwise
def smooth_l1(data, scalar=1.0):
    """MXNet's smooth_l1 with sigma = scalar: 0.5 (sigma x)^2 where |x| < 1 / sigma^2, else
    |x| - 0.5 / sigma^2."""
    np = _np()
    data = _array(data, "smooth_l1")
    _number(scalar, "smooth_l1", "scalar")
    if scalar == 0:
        raise ValueError("[smooth_l1] scalar (sigma) must be non-zero")
    s2 = float(scalar) ** 2
    a = np.abs(data)
    return np.where(a < 1 / s2, 0.5 * s2 * np.square(data), a - 0.5 / s2)


def add_n(*args):
    """The elementwise sum of all arguments (MXNet's add_n / ElementWiseSum); they broadcast."""
    np = _np()
    if not args:
        raise ValueError("[add_n] needs at least one array")
    arrays = [_array(a, "add_n", f"argument {i}") for i, a in enumerate(args)]
    total = arrays[0]
    for a in arrays[1:]:
        total = np.add(total, a)
    return total if len(arrays) > 1 else np.copy(total)


def cast(data, dtype):
    """data converted to dtype (MXNet's cast)."""
    return _array(data, "cast").astype(dtype)


def nonzero(a):
    """The indices of the nonzero entries as an (N, a.ndim) int64 array (MXNet 2's
    npx.nonzero, NumPy's argwhere)."""
    return _np().argwhere(_array(a, "nonzero", "a"))


def box_iou(lhs, rhs, format="corner"):
    """Intersection over union of every box in lhs with every box in rhs (MXNet's box_iou):
    shapes (..., 4) and (..., 4) give lhs.shape[:-1] + rhs.shape[:-1]. format 'corner' is
    (xmin, ymin, xmax, ymax), 'center' (x, y, width, height). Disjoint boxes give 0, and so
    do two empty ones."""
    np = _np()
    lhs = _array(lhs, "box_iou", "lhs")
    rhs = _array(rhs, "box_iou", "rhs")
    for which, a in (("lhs", lhs), ("rhs", rhs)):
        if a.ndim < 1 or a.shape[-1] != 4:
            raise ValueError(f"[box_iou] {which} must end in an axis of 4 box coordinates, got "
                             f"shape {a.shape}")
    if format not in ("corner", "center"):
        raise ValueError(f"[box_iou] format must be 'corner' or 'center', got {format!r}")

    def corners(a):
        c = [a[..., i] for i in range(4)]
        if format == "center":
            c = [c[0] - c[2] / 2, c[1] - c[3] / 2, c[0] + c[2] / 2, c[1] + c[3] / 2]
        return c

    lead = (1,) * (rhs.ndim - 1)
    l_box = [c.reshape(c.shape + lead) for c in corners(lhs)]
    r_box = corners(rhs)
    width = np.maximum(np.minimum(l_box[2], r_box[2]) - np.maximum(l_box[0], r_box[0]), 0)
    height = np.maximum(np.minimum(l_box[3], r_box[3]) - np.maximum(l_box[1], r_box[1]), 0)
    inter = width * height
    area_l = (l_box[2] - l_box[0]) * (l_box[3] - l_box[1])
    area_r = (r_box[2] - r_box[0]) * (r_box[3] - r_box[1])
    union = area_l + area_r - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0)


# ---------------------------------------------------------------- softmax's MXNet options
def softmax_with_options(op, name, data, axis, length, temperature, use_length, dtype, log):
    """MXNet's softmax / log_softmax with length, temperature and dtype: `op` (the C++ kernel)
    on data / temperature, or, with use_length, over each row's first length entries, 0 past
    them in both (MXNet's kernel writes 0 there, also for log_softmax)."""
    np = _np()
    data = _array(data, name)
    if data.ndim == 0:
        raise ValueError(f"[{name}] data must have at least 1 dimension, got a 0-d array")
    axis = _axis(axis, data.ndim, name)
    x = data
    if temperature is not None and _temperature(temperature, name) != 1:
        x = x / temperature
    if not use_length:
        out = op(x, axis=axis)
    else:
        if length is None:
            raise ValueError(f"[{name}] use_length=True needs the length array, got None")
        lengths = _array(length, name, "length")
        rows = data.shape[:axis] + data.shape[axis + 1:]
        if lengths.shape != rows:
            raise ValueError(f"[{name}] length must have data's shape without the axis, {rows}, "
                             f"got {lengths.shape}")
        if _kind(lengths) not in "iuf":
            raise TypeError(f"[{name}] length must be real numbers, got {lengths.dtype}")
        steps = np.arange(data.shape[axis], dtype="int64", device=data.device)
        keep = _along(steps, data.ndim, axis) < np.expand_dims(lengths, axis)
        kept, shifted, log_total = _masked_parts(name, x, keep, axis, 1.0)
        out = np.where(kept, shifted - log_total if log else np.exp(shifted - log_total), 0)
    return out if dtype is None else out.astype(dtype)


# ---------------------------------------------------------------- interleaved attention
def _heads(heads, name):
    heads = _int(heads, name, "heads")
    if heads < 1:
        raise ValueError(f"[{name}] heads must be >= 1, got {heads}")
    return heads


def _head_part(x, heads, parts, part, name, what):
    """Part `part` of x's interleaved projections, x (seq, batch, heads * parts * dim) laid
    out as (heads, parts, dim), as a (batch * heads, seq, dim) stack of matrices."""
    np = _np()
    x = _array(x, name, what)
    if x.ndim != 3:
        raise ValueError(f"[{name}] {what} must be 3-d (seq_length, batch, projections), got "
                         f"shape {x.shape}")
    seq, batch, width = x.shape
    if width % (heads * parts):
        raise ValueError(f"[{name}] {what}'s last axis ({width}) must split into {heads} heads "
                         f"x {parts} projections")
    dim = width // (heads * parts)
    picked = x.reshape((seq, batch, heads, parts, dim))[:, :, :, part, :]
    return np.transpose(picked, (1, 2, 0, 3)).reshape((batch * heads, seq, dim))


def _attended(name, values, attention, heads, batch):
    """attention (batch * heads, seq_q, seq_k) @ values (batch * heads, seq_k, dim), laid out
    back as (seq_q, batch, heads * dim)."""
    np = _np()
    attention = _array(attention, name, "attention")
    if attention.ndim != 3 or attention.shape[0] != values.shape[0] or \
            attention.shape[2] != values.shape[1]:
        raise ValueError(f"[{name}] attention must have shape (batch * heads, seq_q, "
                         f"{values.shape[1]}) with batch * heads = {values.shape[0]}, got "
                         f"{attention.shape}")
    out = np.matmul(attention, values)
    seq_q, dim = out.shape[1], out.shape[2]
    out = np.transpose(out.reshape((batch, heads, seq_q, dim)), (2, 0, 1, 3))
    return out.reshape((seq_q, batch, heads * dim))


def interleaved_matmul_selfatt_qk(queries_keys_values, heads):
    """Self-attention scores of interleaved projections (MXNet's op of the same name):
    queries_keys_values (seq, batch, heads * 3 * dim), each head's (query, key, value) side by
    side; gives q k^T / sqrt(dim) as (batch * heads, seq, seq)."""
    np = _np()
    name = "interleaved_matmul_selfatt_qk"
    heads = _heads(heads, name)
    q = _head_part(queries_keys_values, heads, 3, 0, name, "queries_keys_values")
    k = _head_part(queries_keys_values, heads, 3, 1, name, "queries_keys_values")
    return np.matmul(q / math.sqrt(q.shape[2]), np.swapaxes(k, 1, 2))


def interleaved_matmul_selfatt_valatt(queries_keys_values, attention, heads):
    """The attention-weighted values of interleaved projections (MXNet's op of the same name):
    attention (batch * heads, seq, seq) times each head's values, as (seq, batch, heads * dim)."""
    name = "interleaved_matmul_selfatt_valatt"
    heads = _heads(heads, name)
    v = _head_part(queries_keys_values, heads, 3, 2, name, "queries_keys_values")
    return _attended(name, v, attention, heads, v.shape[0] // heads)


def interleaved_matmul_encdec_qk(queries, keys_values, heads):
    """Encoder-decoder attention scores (MXNet's op of the same name): queries (seq_q, batch,
    heads * dim), keys_values (seq_k, batch, heads * 2 * dim) with each head's (key, value)
    side by side; gives q k^T / sqrt(dim) as (batch * heads, seq_q, seq_k)."""
    np = _np()
    name = "interleaved_matmul_encdec_qk"
    heads = _heads(heads, name)
    q = _head_part(queries, heads, 1, 0, name, "queries")
    k = _head_part(keys_values, heads, 2, 0, name, "keys_values")
    if q.shape[0] != k.shape[0] or q.shape[2] != k.shape[2]:
        raise ValueError(f"[{name}] queries {_array(queries, name).shape} and keys_values "
                         f"{_array(keys_values, name).shape} differ in batch or head size")
    return np.matmul(q / math.sqrt(q.shape[2]), np.swapaxes(k, 1, 2))


def interleaved_matmul_encdec_valatt(keys_values, attention, heads):
    """The attention-weighted values of encoder-decoder attention (MXNet's op of the same
    name): (seq_q, batch, heads * dim)."""
    name = "interleaved_matmul_encdec_valatt"
    heads = _heads(heads, name)
    v = _head_part(keys_values, heads, 2, 1, name, "keys_values")
    return _attended(name, v, attention, heads, v.shape[0] // heads)
