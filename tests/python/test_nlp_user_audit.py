"""A GluonNLP 1.0 / GluonCV (MXNet 2.0, numpy interface) user's audit of ndx.

The scripts below reproduce the operator usage of GluonNLP's attention_cell.py, layers.py,
op.py, sequence_sampler.py, loss.py and models (transformer / BERT), and of GluonCV's box
utilities, written afresh against ``import ndx as mx``. Values and gradients are checked
against independent NumPy implementations of the math or finite differences, eagerly, under
autograd and hybridized.

The first group of tests are findings (each failed on ndx as it was); the second group are
end-to-end checks that passed.
"""
import math

import numpy as onp
import pytest

import ndx as mx
from ndx import autograd, gluon, np, npx
from ndx.gluon import HybridBlock, nn

RNG = onp.random.RandomState(20240601)
LARGE_NEG = -1e18
_erf = onp.vectorize(math.erf)


class _Fn(HybridBlock):
    """A HybridBlock around a function of arrays (MXNet 2.0 style: forward, no F)."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def forward(self, *args):
        return self._fn(*args)


def _run(fn, inputs, grad_idx=(0,), head=None, hybridize=False):
    """fn's output (NumPy) and the gradients of sum(out * head) for inputs[grad_idx]."""
    f = fn
    if hybridize:
        f = _Fn(fn)
        f.hybridize()
    xs = [np.array(a) for a in inputs]
    for i in grad_idx:
        xs[i].attach_grad()
    with autograd.record():
        out = f(*xs)
        if grad_idx:
            h = onp.ones(out.shape, "float32") if head is None else head
            loss = (out * np.array(h, dtype=out.dtype)).sum()
    if grad_idx:
        loss.backward()
    return out.asnumpy(), [xs[i].grad.asnumpy() for i in grad_idx]


def _numgrad(f, x, eps=1e-5):
    """Central differences of the scalar f at x (float64)."""
    x = onp.array(x, dtype="float64")
    g = onp.zeros_like(x)
    it = onp.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def _np_softmax(x, axis=-1):
    e = onp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _np_masked_softmax(x, mask, axis=-1, temperature=1.0):
    x = onp.where(mask, x / temperature, -onp.inf)
    top = onp.max(x, axis=axis, keepdims=True)
    top = onp.where(onp.isfinite(top), top, 0)
    e = onp.where(mask, onp.exp(x - top), 0)
    s = e.sum(axis=axis, keepdims=True)
    return onp.where(mask, e / onp.where(s > 0, s, 1), 0)


def _close(a, b, tol=1e-5):
    onp.testing.assert_allclose(onp.asarray(a, dtype="float64"), onp.asarray(b, "float64"),
                                rtol=tol, atol=tol)


# =============================================================================== findings
@pytest.mark.parametrize("hybridize", [False, True])
def test_masked_softmax_accepts_temperature_none(hybridize):
    """GluonNLP's masked_softmax helper passes temperature=None when scaled=False
    (npx.masked_softmax(att_score, mask=mask.astype(np.bool), axis=axis,
    temperature=temperature)); MXNet's MaskedSoftmaxParam.temperature is an optional<double>
    defaulting to None (no scaling). ndx raised TypeError('temperature must be a number')."""
    x = RNG.randn(2, 3, 5).astype("float32")
    mask = RNG.rand(2, 3, 5) > 0.3
    head = RNG.randn(2, 3, 5).astype("float32")
    for op in (npx.masked_softmax, npx.masked_log_softmax):
        out, (gx,) = _run(lambda a, m, op=op: op(a, m.astype(np.bool), axis=-1,
                                                 temperature=None),
                          [x, mask], head=onp.where(mask, head, 0), hybridize=hybridize)
        if op is npx.masked_softmax:
            def ref(a):
                return _np_masked_softmax(a, mask)
        else:
            def ref(a):
                p = _np_masked_softmax(a, mask)
                return onp.where(mask, onp.log(onp.where(mask, p, 1)), 0)
        _close(onp.where(mask, out, 0), ref(x))
        _close(gx, _numgrad(lambda a: (ref(a) * onp.where(mask, head, 0)).sum(), x), 1e-4)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("shape", [(3, 0, 4), (0, 0)])
def test_masked_softmax_zero_size(hybridize, shape):
    """MXNet's own test_npx_masked_softmax runs zero-size data ((3, 0, 4), (0, 0)) on every
    axis, hybridized or not, and gets a zero-size result; ndx raised 'zero-size array to
    reduction operation maximum' when the softmax axis had length 0."""
    a = onp.zeros(shape, "float32")
    m = onp.zeros(shape, "int32")
    for axis in range(-len(shape), len(shape)):
        for op in (npx.masked_softmax, npx.masked_log_softmax):
            out, _ = _run(lambda x, k, op=op, axis=axis: op(x, k, axis=axis), [a, m],
                          grad_idx=(), hybridize=hybridize)
            assert out.shape == shape


@pytest.mark.parametrize("mode", ["raise", "clip", "wrap"])
def test_np_take_hybridized(mode):
    """np.take under hybridize: GluonNLP's LearnedPositionalEmbedding (np.take(weight,
    positions, axis=0, mode=...)) and BeamSearchSampler's _BeamSearchStepUpdate (np.take of
    int32 samples / valid lengths and of float states, hybridized in its __init__). ndx's
    take fell back to integer-array indexing, which hybridize cannot trace
    (NDXNotImplementedError) for every mode and dtype."""
    weight = RNG.randn(6, 3).astype("float32")
    pos = onp.array([[0, 5, 7], [-1, 2, 2]], "int32") if mode != "raise" else \
        onp.array([[0, 5, 1], [-1, 2, 2]], "int32")
    head = RNG.randn(2, 3, 3).astype("float32")
    ref = onp.take(weight, pos, axis=0, mode=mode)
    rows = {"raise": pos % 6, "clip": onp.clip(pos, 0, 5), "wrap": pos % 6}[mode]
    want = onp.zeros_like(weight)
    onp.add.at(want, rows, head)
    for hyb in (False, True):
        out, (gw,) = _run(lambda w, p: np.take(w, p, axis=0, mode=mode), [weight, pos],
                          head=head, hybridize=hyb)
        _close(out, ref)
        _close(gw, want)
    valid = onp.arange(6, dtype="int32").reshape(2, 3)
    out, _ = _run(lambda v, i: np.take(v.reshape((-1,)), i, axis=0), [valid, pos[1] % 6],
                  grad_idx=(), hybridize=True)
    assert out.dtype == onp.int32
    onp.testing.assert_array_equal(out, valid.reshape(-1)[pos[1] % 6])


def _select_vectors_by_position(data, positions):
    positions = positions.astype(np.int32)
    batch_idx = np.expand_dims(npx.arange_like(positions, axis=0), axis=1).astype(np.int32)
    batch_idx = batch_idx + np.zeros_like(positions)
    return npx.gather_nd(data, np.stack([batch_idx, positions]))


def _update_vectors_by_position(base, data, positions):
    positions = positions.astype(np.int32)
    batch_idx = np.expand_dims(npx.arange_like(positions, axis=0), axis=1).astype(np.int32)
    batch_idx = batch_idx + np.zeros_like(positions)
    indices = np.stack([batch_idx.reshape(-1), positions.reshape(-1)])
    return npx.index_update(base, indices, data.reshape(-1))


@pytest.mark.parametrize("hybridize", [False, True])
def test_gather_nd_select_vectors_by_position_hybridized(hybridize):
    """GluonNLP op.select_vectors_by_position (BERT / ELECTRA masked-LM heads, hybridized):
    out[i, j, :] = data[i, positions[i, j], :] by npx.gather_nd. ndx's gather_nd used
    integer-array indexing, which hybridize cannot trace."""
    data = RNG.randn(3, 5, 4).astype("float32")
    pos = onp.array([[0, 2], [4, 4], [1, 3]], "int32")
    head = RNG.randn(3, 2, 4).astype("float32")
    out, (gd,) = _run(_select_vectors_by_position, [data, pos], head=head, hybridize=hybridize)
    rows = onp.arange(3)[:, None].repeat(2, 1)
    _close(out, data[rows, pos])
    want = onp.zeros_like(data)
    onp.add.at(want, (rows, pos), head)
    _close(gd, want)
    # M == ndim with negative indices, M == 1
    full = onp.array([[0, -1, 2], [1, 3, 0], [1, 0, 3]], "int64")
    out, _ = _run(lambda d, i: npx.gather_nd(d, i), [data, full], grad_idx=(),
                  hybridize=hybridize)
    _close(out, data[full[0], full[1], full[2]])


@pytest.mark.parametrize("hybridize", [False, True])
def test_index_update_update_vectors_by_position_hybridized(hybridize):
    """GluonNLP op.updated_vectors_by_position: npx.index_update(base, indices, data), in
    hybridized blocks. ndx's index_update assigned into a copy (out[rows] = vals), which
    hybridize cannot trace. Repeated positions: the last write wins, as eagerly."""
    base = RNG.randn(3, 5).astype("float32")
    vals = RNG.randn(3, 2).astype("float32")
    pos = onp.array([[0, 2], [4, 4], [1, 3]], "int32")  # row 1 names position 4 twice
    head = RNG.randn(3, 5).astype("float32")
    out, (gb, gv) = _run(_update_vectors_by_position, [base, vals, pos], grad_idx=(0, 1),
                         head=head, hybridize=hybridize)
    want = base.copy()
    for i in range(3):
        for j in range(2):
            want[i, pos[i, j]] = vals[i, j]
    _close(out, want)
    want_gb = head.copy()
    want_gv = onp.zeros_like(vals)
    for i in range(3):
        for j in range(2):
            want_gb[i, pos[i, j]] = 0
            if not (j == 0 and pos[i, 0] == pos[i, 1]):  # (overwritten: no gradient)
                want_gv[i, j] = head[i, pos[i, j]]
    _close(gb, want_gb)
    _close(gv, want_gv)


@pytest.mark.parametrize("hybridize", [False, True])
def test_scatter_nd_hybridized(hybridize):
    """npx.scatter_nd(data, indices, shape) under hybridize (ndx assigned into zeros, which
    hybridize cannot trace); values and the gradient (a gather) against NumPy."""
    data = RNG.randn(4, 2).astype("float32")
    ind = onp.array([[0, 2, 1, -1], [1, 3, 0, 0]], "int64")
    head = RNG.randn(3, 4, 2).astype("float32")
    out, (gd,) = _run(lambda d, i: npx.scatter_nd(d, i, (3, 4, 2)), [data, ind], head=head,
                      hybridize=hybridize)
    want = onp.zeros((3, 4, 2), "float32")
    want[ind[0], ind[1]] = data
    _close(out, want)
    _close(gd, head[ind[0], ind[1]])


@pytest.mark.parametrize("hybridize", [False, True])
def test_topk_hybridized(hybridize):
    """GluonNLP's _BeamSearchStepUpdate (hybridized by BeamSearchSampler) calls
    npx.topk(candidate_scores, axis=1, k=beam_size, ret_typ='both'). ndx's topk gathered with
    integer-array indexing, which hybridize cannot trace. The value output's gradient (MXNet's
    _backward_topk) scatters back to the chosen positions."""
    x = RNG.randn(2, 3, 7).astype("float32")
    head = RNG.randn(2, 3, 3).astype("float32")
    order = onp.argsort(-x, axis=-1, kind="stable")[..., :3]
    out, (gx,) = _run(lambda a: npx.topk(a, axis=-1, k=3, ret_typ="value"), [x], head=head,
                      hybridize=hybridize)
    _close(out, onp.take_along_axis(x, order, -1))
    want = onp.zeros_like(x)
    onp.put_along_axis(want, order, head, -1)
    _close(gx, want)
    idx, _ = _run(lambda a: npx.topk(a, axis=1, k=2, ret_typ="both")[1], [x], grad_idx=(),
                  hybridize=hybridize)
    assert idx.dtype == onp.float32  # (MXNet's default index dtype)
    onp.testing.assert_array_equal(idx, onp.argsort(-x, axis=1, kind="stable")[:, :2])
    mask, _ = _run(lambda a: npx.topk(a, axis=1, k=2, ret_typ="mask"), [x], grad_idx=(),
                   hybridize=hybridize)
    want_mask = onp.zeros_like(x)
    onp.put_along_axis(want_mask, onp.argsort(-x, axis=1)[:, :2], 1, 1)
    onp.testing.assert_array_equal(mask, want_mask)


def test_topk_mask_without_axis_keeps_data_shape():
    """MXNet's TopK with axis=None and ret_typ='mask': the mask has the input's shape (its
    ParseTopKParam keeps src_shape for the mask); ndx returned the flattened (size,) mask."""
    x = RNG.randn(2, 3, 4).astype("float32")
    mask = npx.topk(np.array(x), axis=None, k=5, ret_typ="mask").asnumpy()
    assert mask.shape == x.shape
    want = onp.zeros(x.size, "float32")
    want[onp.argsort(-x.ravel())[:5]] = 1
    onp.testing.assert_array_equal(mask, want.reshape(x.shape))


@pytest.mark.parametrize("hybridize", [False, True])
def test_ndarray_broadcast_to_method(hybridize):
    """GluonNLP's _expand_to_beam_size:
    mx.np.expand_dims(data, batch_axis + 1).broadcast_to(bcast_new_shape).reshape(new_shape).
    MXNet 2.0's numpy ndarray has the fluent broadcast_to(shape); ndx's had none
    (AttributeError)."""
    x = RNG.randn(2, 3).astype("float32")
    head = RNG.randn(8, 3).astype("float32")
    out, (gx,) = _run(lambda a: np.expand_dims(a, 1).broadcast_to((2, 4, 3)).reshape((8, 3)),
                      [x], head=head, hybridize=hybridize)
    _close(out, onp.repeat(x, 4, axis=0))
    _close(gx, head.reshape(2, 4, 3).sum(1))


_X = onp.linspace(-2, 2, 24, dtype="float32").reshape(2, 3, 4)


def _mxnet_signature_cases():
    """(name, call with MXNet 2.0's public npx arguments, reference value). The calls use
    arguments MXNet 2.0's mxnet.numpy_extension functions take and its own Gluon layers
    pass (name='fwd', cudnn_off=False), MXNet's None defaults, and its argument order."""
    x = _X
    w = onp.arange(20, dtype="float32").reshape(5, 4) / 10
    img = onp.arange(32, dtype="float32").reshape(1, 2, 4, 4)
    k = onp.ones((3, 2, 3, 3), "float32")
    window_sums = [[img[0, :, i:i + 3, j:j + 3].sum() for j in range(2)] for i in range(2)]
    conv_ref = onp.array([[window_sums] * 3])
    pool_ref = img.reshape(1, 2, 2, 2, 2, 2).mean(axis=(3, 5))
    return [
        ("fully_connected name", lambda: npx.fully_connected(
            np.array(x), np.array(w), np.zeros(5), num_hidden=5, flatten=False, name="fwd"),
         x @ w.T),
        ("activation name", lambda: npx.activation(np.array(x), act_type="relu", name="fwd"),
         onp.maximum(x, 0)),
        ("dropout cudnn_off name axes=None", lambda: npx.dropout(
            np.array(x), p=0.5, axes=None, cudnn_off=False, name="fwd"), x),
        ("embedding dtype sparse_grad", lambda: npx.embedding(
            np.array([[1, 4]]), np.array(w), input_dim=5, output_dim=4, dtype="float32",
            sparse_grad=True, name="fwd"), w[[[1, 4]]]),
        ("layer_norm None defaults", lambda: npx.layer_norm(
            np.array(x), np.ones(4), np.zeros(4), axis=None, eps=None, output_mean_var=None),
         (x - x.mean(-1, keepdims=True)) / onp.sqrt(x.var(-1, keepdims=True) + 1e-5)),
        ("batch_norm cudnn_off calib name", lambda: npx.batch_norm(
            np.array(x), np.ones(3), np.zeros(3), np.zeros(3), np.ones(3), eps=1e-3,
            fix_gamma=False, use_global_stats=True, cudnn_off=False, min_calib_range=None,
            max_calib_range=None, name="fwd"), x / onp.sqrt(1 + 1e-3)),
        ("convolution None strides workspace cudnn", lambda: npx.convolution(
            np.array(img), np.array(k), np.zeros(3), kernel=(3, 3), stride=None, dilate=None,
            pad=None, num_filter=3, workspace=1024, cudnn_tune=None, cudnn_off=False,
            name="fwd"), conv_ref),
        ("pooling None stride pad count_include_pad cudnn_off", lambda: npx.pooling(
            np.array(img), kernel=(2, 2), stride=(2, 2), pad=None, pool_type="avg",
            cudnn_off=False, count_include_pad=None, name="fwd"), pool_ref),
        ("pooling positional (kernel, stride, pad, pool_type)", lambda: npx.pooling(
            np.array(img), (2, 2), (2, 2), (0, 0), "avg"), pool_ref),
        ("pick positional (axis, mode, keepdims)", lambda: npx.pick(
            np.array(x[0]), np.array([1, 5, -1]), 1, "wrap", False),
         x[0][[0, 1, 2], [1, 1, 3]]),
        ("one_hot data=", lambda: npx.one_hot(data=np.array([2, 0]), depth=3),
         onp.eye(3, dtype="float32")[[2, 0]]),
        ("rnn lstm_state_clip_nan=None name", lambda: npx.rnn(
            np.zeros((2, 1, 3)), np.zeros(4 * 5 * (3 + 5) + 8 * 5), np.zeros((1, 1, 5)),
            np.zeros((1, 1, 5)), mode="lstm", state_size=5, num_layers=1,
            lstm_state_clip_nan=None, name="fwd"), onp.zeros((2, 1, 5))),
    ]


@pytest.mark.parametrize("case", _mxnet_signature_cases(), ids=lambda c: c[0])
def test_npx_accepts_mxnet_public_signatures(case):
    """MXNet 2.0's mxnet.numpy_extension functions take backend / symbol arguments that its
    Gluon layers pass (Dense: npx.fully_connected(..., name='fwd'); Dropout:
    npx.dropout(..., name='fwd', cudnn_off=False); Embedding: npx.embedding(..., dtype,
    sparse_grad, name='fwd')), None as "not set" for shape arguments, and their own argument
    order (pick(data, index, axis, mode, keepdims); pooling(data, kernel, stride, pad,
    pool_type, ...); one_hot(data, depth, ...)). ndx's generated ops rejected them."""
    _, call, want = case
    _close(call().asnumpy(), want, 1e-5)


# =============================================================================== end to end
def _gen_self_attn_mask(data, valid_length, attn_type="full"):
    """GluonNLP's gen_self_attn_mask (layout NT)."""
    steps = npx.arange_like(data, axis=1)
    if attn_type == "full":
        vl = valid_length.astype(np.float32)
        mask1 = npx.reshape(steps, (1, 1, -1)) < npx.reshape(vl, (-2, 1, 1))
        mask2 = npx.reshape(steps, (1, -1, 1)) < npx.reshape(vl, (-2, 1, 1))
        mask = mask1 * mask2
    else:
        mask = (np.expand_dims(steps, axis=0) <= np.expand_dims(steps, axis=1))
        mask = mask.astype(np.float32)
        vl = valid_length.astype(np.float32)
        batch = (np.expand_dims(steps, axis=0) < np.expand_dims(vl, axis=-1)).astype(np.float32)
        mask = mask * np.expand_dims(batch, axis=-1)
    return mask.astype(np.bool)


def _gen_mem_attn_mask(mem, mem_valid_length, data, data_valid_length):
    """GluonNLP's gen_mem_attn_mask (layout NT)."""
    mem_steps = npx.arange_like(mem, axis=1)
    data_steps = npx.arange_like(data, axis=1)
    mem_mask = (npx.reshape(mem_steps, (1, 1, -1))
                < npx.reshape(mem_valid_length.astype(np.float32), (-2, 1, 1)))
    data_mask = (npx.reshape(data_steps, (1, -1, 1))
                 < npx.reshape(data_valid_length.astype(np.float32), (-2, 1, 1)))
    return (mem_mask.astype(np.float32) * data_mask.astype(np.float32)).astype(np.bool)


def _multi_head_dot_attn(query, key, value, mask, layout, use_einsum, head_units):
    """GluonNLP's multi_head_dot_attn (scaled, no dropout) for the three layouts."""
    scale = math.sqrt(head_units)
    mask = np.expand_dims(mask, axis=1).astype(np.bool)
    if layout == "NKT":
        scores = npx.batch_dot(query, key, transpose_b=True)
    elif layout == "NTK":
        scores = np.einsum("binc,bjnc->bnij", query, key) if use_einsum else \
            npx.batch_dot(np.swapaxes(query, 1, 2), np.swapaxes(key, 1, 2), transpose_b=True)
    else:
        scores = np.einsum("ibnc,jbnc->bnij", query, key) if use_einsum else \
            npx.batch_dot(query.transpose((1, 2, 0, 3)), key.transpose((1, 2, 3, 0)))
    attn = npx.masked_softmax(scores, mask, axis=-1, temperature=scale)
    attn = npx.dropout(attn, p=0.0)
    if layout == "NKT":
        ctx = np.einsum("bnij,bnjc->binc", attn, value) if use_einsum else \
            npx.batch_dot(attn, value).transpose((0, 2, 1, 3))
    elif layout == "NTK":
        ctx = np.einsum("bnij,bjnc->binc", attn, value) if use_einsum else \
            npx.batch_dot(attn, np.swapaxes(value, 1, 2)).transpose((0, 2, 1, 3))
    else:
        ctx = np.einsum("bnij,jbnc->ibnc", attn, value) if use_einsum else \
            npx.batch_dot(attn, value.transpose((1, 2, 0, 3))).transpose((2, 0, 1, 3))
    return npx.reshape(ctx, (-2, -2, -1))


@pytest.mark.parametrize("layout", ["NKT", "NTK", "TNK"])
@pytest.mark.parametrize("use_einsum", [False, True])
def test_e2e_multi_head_attention(layout, use_einsum):
    """multi_head_dot_attn with gen_self_attn_mask / gen_mem_attn_mask masks, eager and
    hybridized, against a NumPy attention; gradients of query, key and value by finite
    differences."""
    b, lq, lm, heads, c = 2, 3, 4, 2, 3
    q = RNG.randn(b, heads, lq, c).astype("float32")  # NKT
    k = RNG.randn(b, heads, lm, c).astype("float32")
    v = RNG.randn(b, heads, lm, c).astype("float32")
    qvl, mvl = onp.array([3, 2]), onp.array([4, 1])
    mask = ((onp.arange(lm)[None, None, :] < mvl[:, None, None])
            & (onp.arange(lq)[None, :, None] < qvl[:, None, None]))
    perm = {"NKT": (0, 1, 2, 3), "NTK": (0, 2, 1, 3), "TNK": (2, 0, 1, 3)}[layout]
    qq, kk, vv = (a.transpose(perm).copy() for a in (q, k, v))

    def ref(qn, kn, vn):
        qn, kn, vn = (onp.transpose(a, onp.argsort(perm)) for a in (qn, kn, vn))
        w = _np_masked_softmax(qn @ kn.swapaxes(-1, -2), mask[:, None], -1, math.sqrt(c))
        out = (w @ vn).transpose(0, 2, 1, 3).reshape(b, lq, heads * c)
        return out if layout != "TNK" else out.transpose(1, 0, 2)

    def fn(qa, ka, va, qd, md, ql, ml):
        m = _gen_mem_attn_mask(md, ml, qd, ql)
        return _multi_head_dot_attn(qa, ka, va, m, layout, use_einsum, c)

    inputs = [qq, kk, vv, onp.zeros((b, lq, 1), "float32"), onp.zeros((b, lm, 1), "float32"),
              qvl, mvl]
    want = ref(qq, kk, vv)
    head = RNG.randn(*want.shape)
    for hyb in (False, True):
        out, grads = _run(fn, inputs, grad_idx=(0, 1, 2), head=head.astype("float32"),
                          hybridize=hyb)
        _close(out, want, 1e-5)
        for i, g in enumerate(grads):
            def f(a, i=i):
                args = [qq, kk, vv]
                args[i] = a
                return (ref(*args) * head).sum()
            _close(g, _numgrad(f, inputs[i]), 2e-3)
    # the causal self-attention mask, hybridized
    x = onp.zeros((2, 4, 1), "float32")
    got, _ = _run(lambda d, vl: _gen_self_attn_mask(d, vl, "causal").astype(np.int32),
                  [x, onp.array([4, 2])], grad_idx=(), hybridize=True)
    want_mask = onp.tril(onp.ones((4, 4), "int32"))[None].repeat(2, 0)
    want_mask[1, 2:] = 0
    onp.testing.assert_array_equal(got, want_mask)


class _SinusoidalPositionalEmbedding(HybridBlock):
    """GluonNLP's SinusoidalPositionalEmbedding (a gluon.Constant of timescales)."""

    def __init__(self, units):
        super().__init__()
        half = units // 2
        val = math.log(10000) / (half - 1)
        self.base_mult = gluon.Constant(onp.exp(onp.arange(half) * -val).astype("float32"))

    def forward(self, positions):
        emb = np.expand_dims(positions.astype(np.float32), axis=-1) * self.base_mult.data()
        return np.concatenate([np.sin(emb), np.cos(emb)], axis=-1)


class _EncoderLayer(HybridBlock):
    """A post-norm transformer encoder layer in GluonNLP's style (NT layout)."""

    def __init__(self, units, heads, hidden):
        super().__init__()
        self._heads = heads
        self._head_units = units // heads
        self.attn_qkv = nn.Dense(3 * units, in_units=units, flatten=False)
        self.attention_proj = nn.Dense(units, in_units=units, flatten=False)
        self.layer_norm = nn.LayerNorm(epsilon=1e-12, in_channels=units)
        self.ffn_1 = nn.Dense(hidden, in_units=units, flatten=False)
        self.ffn_2 = nn.Dense(units, in_units=hidden, flatten=False)
        self.ffn_ln = nn.LayerNorm(epsilon=1e-12, in_channels=units)

    def forward(self, data, attn_mask):
        q, k, v = np.split(self.attn_qkv(data), 3, axis=-1)
        q, k, v = (npx.reshape(a, (-2, -2, self._heads, -1)) for a in (q, k, v))
        ctx = _multi_head_dot_attn(q, k, v, attn_mask, "NTK", False, self._head_units)
        out = self.layer_norm(data + self.attention_proj(ctx))
        ffn = self.ffn_2(npx.leaky_relu(self.ffn_1(out), act_type="gelu"))
        return self.ffn_ln(out + ffn)


class _TinyBert(HybridBlock):
    def __init__(self, vocab=30, units=8, heads=2, hidden=16, layers=2):
        super().__init__()
        self.word_embed = nn.Embedding(vocab, units)
        self.token_type_embed = nn.Embedding(2, units)
        self.pos_embed = _SinusoidalPositionalEmbedding(units)
        self.embed_ln = nn.LayerNorm(epsilon=1e-12, in_channels=units)
        self.layers = nn.HybridSequential()
        for _ in range(layers):
            self.layers.add(_EncoderLayer(units, heads, hidden))
        self.pooler = nn.Dense(units, in_units=units, flatten=False, activation="tanh")
        self.nsp = nn.Dense(2, in_units=units)
        self.mlm_proj = nn.Dense(units, in_units=units, flatten=False)
        self.mlm_decoder = nn.Dense(vocab, in_units=units, flatten=False)
        self.mlm_decoder.share_parameters({"weight": self.word_embed.weight})

    def forward(self, tokens, token_types, valid_length, masked_positions):
        x = self.word_embed(tokens) + self.token_type_embed(token_types)
        pos = self.pos_embed(npx.arange_like(tokens, axis=1))
        x = self.embed_ln(x + np.expand_dims(pos, axis=0))
        mask = _gen_self_attn_mask(x, valid_length)
        for layer in self.layers:
            x = layer(x, mask)
        pooled = self.pooler(x[:, 0, :])
        sel = _select_vectors_by_position(x, masked_positions)
        return self.nsp(pooled), self.mlm_decoder(npx.gelu(self.mlm_proj(sel)))


def _np_tiny_bert(net, tokens, types, valid, mpos):
    """The forward of _TinyBert in NumPy (float64) from the block's parameters."""
    p = {k: v.data().asnumpy().astype("float64") for k, v in net.collect_params().items()}

    def ln(x, g, b):
        return (x - x.mean(-1, keepdims=True)) / onp.sqrt(x.var(-1, keepdims=True) + 1e-12) * g + b

    def dense(x, name):
        return x @ p[name + ".weight"].T + p[name + ".bias"]

    def gelu(x):
        return 0.5 * x * (1 + _erf(x / math.sqrt(2)))

    b, t = tokens.shape
    x = p["word_embed.weight"][tokens] + p["token_type_embed.weight"][types]
    half = p["pos_embed.base_mult"][None, :] * onp.arange(t)[:, None]
    x = ln(x + onp.concatenate([onp.sin(half), onp.cos(half)], -1)[None],
           p["embed_ln.gamma"], p["embed_ln.beta"])
    steps = onp.arange(t)
    mask = (steps[None, :, None] < valid[:, None, None]) & (steps[None, None, :]
                                                            < valid[:, None, None])
    for i in range(2):
        pre = f"layers.{i}."
        q, k, v = onp.split(dense(x, pre + "attn_qkv"), 3, -1)
        q, k, v = (a.reshape(b, t, 2, -1).transpose(0, 2, 1, 3) for a in (q, k, v))
        w = _np_masked_softmax(q @ k.swapaxes(-1, -2), mask[:, None], -1, math.sqrt(4))
        ctx = (w @ v).transpose(0, 2, 1, 3).reshape(b, t, -1)
        out = ln(x + dense(ctx, pre + "attention_proj"), p[pre + "layer_norm.gamma"],
                 p[pre + "layer_norm.beta"])
        ffn = dense(gelu(dense(out, pre + "ffn_1")), pre + "ffn_2")
        x = ln(out + ffn, p[pre + "ffn_ln.gamma"], p[pre + "ffn_ln.beta"])
    pooled = onp.tanh(dense(x[:, 0], "pooler"))
    sel = x[onp.arange(b)[:, None], mpos]
    mlm = gelu(dense(sel, "mlm_proj")) @ p["word_embed.weight"].T + p["mlm_decoder.bias"]
    return dense(pooled, "nsp"), mlm


def test_e2e_tiny_bert_trains_eager_and_hybridized():
    """A BERT-like encoder (embeddings + sinusoidal positions + 2 transformer layers + pooler
    + an MLM head through select_vectors_by_position, decoder weight tied to the word
    embedding by share_parameters) against a NumPy forward, then trained a few Adam steps on
    synthetic data with gluon.Trainer, eagerly and hybridized: the same losses, decreasing."""
    rng = onp.random.RandomState(0)
    tokens = rng.randint(0, 30, (4, 6))
    types = rng.randint(0, 2, (4, 6))
    valid = onp.array([6, 5, 3, 2])
    mpos = onp.array([[0, 1], [2, 4], [1, 2], [0, 1]])
    nsp_label = onp.array([0, 1, 1, 0])
    mlm_label = rng.randint(0, 30, (4, 2))
    curves = []
    for hybridize in (False, True):
        mx.random.seed(7)
        net = _TinyBert()
        net.initialize(mx.init.Normal(0.2))
        if hybridize:
            net.hybridize()
        args = [np.array(a) for a in (tokens, types, valid, mpos)]
        nsp, mlm = net(*args)
        want_nsp, want_mlm = _np_tiny_bert(net, tokens, types, valid, mpos)
        _close(nsp.asnumpy(), want_nsp, 1e-4)
        _close(mlm.asnumpy(), want_mlm, 1e-4)
        assert net.mlm_decoder.weight is net.word_embed.weight
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.02})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        losses = []
        for _ in range(8):
            with autograd.record():
                nsp, mlm = net(*args)
                loss = loss_fn(nsp, np.array(nsp_label)).mean() + \
                    loss_fn(mlm, np.array(mlm_label)).mean()
            loss.backward()
            trainer.step(1)
            losses.append(float(loss))
        curves.append(losses)
    _close(curves[0], curves[1], 1e-4)
    assert curves[0][-1] < 0.7 * curves[0][0]


class _Scorer(HybridBlock):
    """GluonNLP's BeamSearchScorer (alpha=1, K=5, from log-probabilities)."""

    def forward(self, outputs, scores, step):
        step = step.astype(np.float32)
        prev_lp = (5.0 + step - 1) / 6.0
        prev_lp = prev_lp * (step != 1).astype(np.float32) + (step == 1).astype(np.float32)
        lp = (5.0 + step) / 6.0
        return (outputs + np.expand_dims(scores * prev_lp, axis=-1)) / lp


class _BeamStep(HybridBlock):
    """GluonNLP's _BeamSearchStepUpdate (deterministic), operator for operator."""

    def __init__(self, beam_size, vocab_size, eos_id):
        super().__init__()
        self._beam, self._vocab, self._eos = beam_size, vocab_size, eos_id
        self._scorer = _Scorer()

    def forward(self, samples, valid_length, outputs, scores, step, alive, states, shift):
        beam, vocab = self._beam, self._vocab
        cand = self._scorer(npx.reshape(outputs, (-6, -1, beam, -2)), scores, step)
        cand = np.where(np.expand_dims(alive, axis=2), cand, np.full_like(cand, LARGE_NEG))
        finished = np.where(alive, np.full_like(scores, LARGE_NEG), scores)
        cand = np.concatenate([npx.reshape(cand, (-2, -1)), finished], axis=1)
        new_scores, indices = npx.topk(cand, axis=1, k=beam, ret_typ="both")
        indices = indices.astype(np.int32)
        use_prev = (indices >= beam * vocab).astype(np.int32)
        chosen = np.mod(indices, vocab)
        beam_ids = np.where(use_prev, indices - beam * vocab,
                            np.floor(indices / vocab).astype(np.int32))
        rows = (beam_ids + np.expand_dims(shift, axis=1)).reshape((-1,))
        chosen = np.where(use_prev, -np.ones_like(indices), chosen)
        picked = np.take(npx.reshape(samples, (-5, -2)), rows, axis=0)
        new_samples = npx.reshape(np.concatenate([picked, chosen.reshape((-1, 1))], axis=1),
                                  (-6, -1, beam, -2))
        new_valid = np.take(valid_length.reshape((-1,)), rows, axis=0).reshape((-1, beam)) \
            + 1 - use_prev
        new_states = np.take(states, rows, axis=0)
        alive = np.take(alive.reshape((-1,)), rows, axis=0).reshape((-1, beam)) \
            * (chosen != self._eos).astype(np.float32)
        return new_samples, new_valid, new_scores, chosen, alive, new_states


def _np_beam_search(table, states, inputs, beam, vocab, eos, steps):
    """The same beam search in NumPy (float32)."""
    batch = inputs.shape[0]
    st = onp.repeat(states, beam, axis=0)
    step_input = onp.repeat(inputs, beam)
    scores = onp.zeros((batch, beam), "float32")
    scores[:, 1:] = LARGE_NEG
    alive = onp.ones((batch, beam), "float32")
    samples = step_input.reshape(batch, beam, 1)
    valid = onp.ones((batch, beam), "int32")
    shift = onp.arange(0, batch * beam, beam)
    for t in range(1, steps + 1):
        logits = table[step_input] + st
        logp = logits - logits.max(-1, keepdims=True)
        logp = (logp - onp.log(onp.exp(logp).sum(-1, keepdims=True))).astype("float32")
        st = st * onp.float32(0.5)
        prev_lp = onp.float32(1.0 if t == 1 else (5.0 + t - 1) / 6.0)
        cand = (logp.reshape(batch, beam, vocab) + (scores * prev_lp)[..., None]) \
            / onp.float32((5.0 + t) / 6.0)
        cand = onp.where(alive[..., None] > 0, cand, LARGE_NEG).astype("float32")
        fin = onp.where(alive > 0, LARGE_NEG, scores).astype("float32")
        cand = onp.concatenate([cand.reshape(batch, -1), fin], 1)
        idx = onp.argsort(-cand, axis=1, kind="stable")[:, :beam]
        scores = onp.take_along_axis(cand, idx, 1)
        use_prev = idx >= beam * vocab
        chosen = onp.where(use_prev, -1, idx % vocab)
        rows = (onp.where(use_prev, idx - beam * vocab, idx // vocab) + shift[:, None]).ravel()
        samples = onp.concatenate([samples.reshape(batch * beam, -1)[rows],
                                   chosen.reshape(-1, 1)], 1).reshape(batch, beam, -1)
        valid = valid.reshape(-1)[rows].reshape(batch, beam) + 1 - use_prev
        st = st[rows]
        alive = alive.reshape(-1)[rows].reshape(batch, beam) * (chosen != eos)
        step_input = onp.maximum(chosen, 0).ravel()
    return samples, scores, valid


def test_e2e_beam_search_hybridized_matches_numpy():
    """BeamSearchSampler's loop (states tiled by broadcast_to, the hybridized step update with
    topk / take / where / mod / floor, -1e18 scores, eos handling) against a NumPy beam
    search, eagerly and hybridized."""
    rng = onp.random.RandomState(3)
    batch, beam, vocab, eos, steps = 2, 3, 7, 0, 5
    table = (rng.randn(vocab, vocab) * 2).astype("float32")
    states0 = rng.randn(batch, vocab).astype("float32")
    inputs = onp.array([1, 2], "int32")
    want = _np_beam_search(table, states0, inputs, beam, vocab, eos, steps)
    for hybridize in (False, True):
        step_update = _BeamStep(beam, vocab, eos)
        if hybridize:
            step_update.hybridize()
        w = np.array(table)
        st = np.expand_dims(np.array(states0), 1).broadcast_to((batch, beam, vocab))
        st = st.reshape((batch * beam, vocab))
        step_input = np.expand_dims(np.array(inputs), 1).broadcast_to((batch, beam))
        step_input = step_input.reshape((-1,)).astype(np.int32)
        alive = np.ones(shape=(batch, beam), ctx=mx.cpu(), dtype=np.float32)
        valid = np.ones(shape=(batch, beam), ctx=mx.cpu(), dtype=np.int32)
        scores = np.zeros(shape=(batch, beam), ctx=mx.cpu())
        scores[:, 1:beam] = LARGE_NEG
        samples = step_input.reshape((batch, beam, 1))
        shift = np.arange(0, batch * beam, beam, ctx=mx.cpu(), dtype=np.int32)
        step = np.array(0, ctx=mx.cpu(), dtype=np.float32)
        for _ in range(steps):
            log_probs = npx.log_softmax(np.take(w, step_input, axis=0) + st)
            new_states = st * 0.5
            step = step + 1
            samples, valid, scores, chosen, alive, st = step_update(
                samples, valid, log_probs, scores, step, alive, new_states, shift)
            step_input = npx.relu(chosen).reshape((-1,))
        onp.testing.assert_array_equal(samples.asnumpy(), want[0])
        _close(scores.asnumpy(), want[1], 1e-4)
        onp.testing.assert_array_equal(valid.asnumpy(), want[2])


def _np_bucket(rel, bidirectional=True, num_buckets=32, max_distance=128):
    ret = 0
    if bidirectional:
        num_buckets //= 2
        ret = ret + (rel < 0).astype("int32") * num_buckets
        rel = onp.abs(rel)
    else:
        rel = onp.clip(rel, 0, None)
    exact = num_buckets // 2
    with onp.errstate(divide="ignore", invalid="ignore"):
        large = exact + (onp.log(onp.maximum(rel, 1).astype("float32") / exact)
                         / math.log(max_distance / exact)
                         * (num_buckets - exact)).astype("int32")
    return ret + onp.where(rel < exact, rel, onp.minimum(large, num_buckets - 1))


def test_e2e_nlp_ops_against_numpy():
    """GluonNLP op.py and loss.py pieces, hybridized, against NumPy: relative_position_bucket
    (T5), l2_normalize, gumbel_softmax's straight-through gradient, the label-smoothing loss
    (npx.pick), add_vectors_by_position (npx.index_add), softmax with length / temperature,
    and erf / tanh GELU."""
    pos = onp.arange(-150, 150, 11).astype("int32")
    rel = pos[None, :] - pos[:, None]

    def bucket(r, bidirectional):
        ret = 0
        num_buckets = 32
        if bidirectional:
            num_buckets //= 2
            ret = ret + (r < 0).astype(np.int32) * num_buckets
            r = np.abs(r)
        else:
            r = np.clip(r, a_min=0, a_max=None)
        exact = num_buckets // 2
        large = exact + (np.log(r.astype(np.float32) / exact) / math.log(128 / exact)
                         * (num_buckets - exact)).astype(np.int32)
        return ret + np.where(r < exact, r, np.minimum(large, num_buckets - 1))

    for bd in (True, False):
        got, _ = _run(lambda r, bd=bd: bucket(r, bd), [rel], grad_idx=(), hybridize=True)
        onp.testing.assert_array_equal(got, _np_bucket(rel, bd))

    x = RNG.randn(2, 3, 4).astype("float32")
    head = RNG.randn(2, 3, 4).astype("float32")

    def np_l2n(a):
        return a / (onp.linalg.norm(a, axis=-1, keepdims=True) + 1e-6)
    out, (gx,) = _run(lambda a: a / (np.linalg.norm(a, axis=-1, keepdims=True) + 1e-6), [x],
                      head=head, hybridize=True)
    _close(out, np_l2n(x))
    _close(gx, _numgrad(lambda a: (np_l2n(a) * head).sum(), x), 1e-3)

    logits = np.array(RNG.randn(3, 5).astype("float32"))
    logits.attach_grad()
    weights = onp.arange(5, dtype="float32")
    with autograd.record():
        y = npx.softmax((np.random.gumbel(np.zeros_like(logits)) + logits) / 0.5, axis=-1)
        hard = np.max(y, axis=-1, keepdims=True) == y
        st = npx.stop_gradient(hard - y) + y
        (st * np.array(weights)).sum().backward()
    yn = y.asnumpy()
    onp.testing.assert_array_equal(st.asnumpy(), (yn == yn.max(-1, keepdims=True)))
    _close(logits.grad.asnumpy(), yn * (weights - (yn * weights).sum(-1, keepdims=True)) / 0.5)

    pred = RNG.randn(4, 6).astype("float32")
    label = onp.array([0, 5, 2, 2])

    def np_ls(p):
        lp = onp.log(_np_softmax(p))
        return -0.9 * lp[onp.arange(4), label] - 0.1 / 6 * lp.sum(-1)
    ls_head = RNG.randn(4).astype("float32")
    out, (gp,) = _run(lambda p, lab: -0.9 * npx.pick(npx.log_softmax(p, axis=-1), lab, axis=-1)
                      - 0.1 / 6 * npx.log_softmax(p, axis=-1).sum(axis=-1),
                      [pred, label], head=ls_head, hybridize=True)
    _close(out, np_ls(pred))
    _close(gp, _numgrad(lambda p: (np_ls(p) * ls_head).sum(), pred), 1e-4)

    def add_vectors_by_position(base, data, positions):
        positions = positions.astype(np.int32)
        batch_idx = np.expand_dims(npx.arange_like(positions, axis=0), axis=1).astype(np.int32)
        batch_idx = batch_idx + np.zeros_like(positions)
        indices = np.stack([batch_idx.reshape(-1), positions.reshape(-1)])
        return npx.index_add(base, indices, data.reshape(-1))
    base, vals = RNG.randn(3, 5).astype("float32"), RNG.randn(3, 2).astype("float32")
    where = onp.array([[0, 2], [4, 4], [1, 3]], "int32")
    add_head = RNG.randn(3, 5).astype("float32")
    out, (gb, gv) = _run(add_vectors_by_position, [base, vals, where], grad_idx=(0, 1),
                         head=add_head, hybridize=True)
    want = base.copy()
    onp.add.at(want, (onp.arange(3)[:, None].repeat(2, 1), where), vals)
    _close(out, want)
    _close(gb, add_head)
    _close(gv, add_head[onp.arange(3)[:, None], where])

    length = onp.array([[1, 4, 2], [3, 0, 4]], "int32")
    keep = onp.arange(4)[None, None] < length[..., None]
    out, (gx,) = _run(lambda a, n: npx.softmax(a, length=n, use_length=True, axis=-1,
                                                temperature=2.0),
                      [x, length], head=head, hybridize=True)
    _close(out, _np_masked_softmax(x, keep, -1, 2.0))
    _close(gx, _numgrad(lambda a: (_np_masked_softmax(a, keep, -1, 2.0) * head).sum(), x),
           1e-4)

    out, _ = _run(lambda a: npx.leaky_relu(a, act_type="gelu"), [x], grad_idx=(),
                  hybridize=True)
    _close(out, 0.5 * x * (1 + _erf(x / math.sqrt(2))))
    out, _ = _run(lambda a: nn.GELU(approximation="tanh")(a), [x], grad_idx=())
    _close(out, 0.5 * x * (1 + onp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))))


def _np_iou(a, b):
    tl = onp.maximum(a[:, None, :2], b[None, :, :2])
    br = onp.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = onp.prod(onp.clip(br - tl, 0, None), -1)
    area = onp.prod(a[:, 2:] - a[:, :2], -1)[:, None] + onp.prod(b[:, 2:] - b[:, :2], -1)[None]
    return inter / (area - inter)


def _np_nms(data, thresh):
    out = onp.full_like(data, -1)
    for i, d in enumerate(data):
        keep = []
        for j in onp.argsort(-d[:, 1], kind="stable"):
            if d[j, 1] > 0 and all(d[j, 0] != d[m, 0] or
                                   _np_iou(d[j:j + 1, 2:], d[m:m + 1, 2:])[0, 0] <= thresh
                                   for m in keep):
                keep.append(j)
        out[i, :len(keep)] = d[keep]
    return out


def test_e2e_gluoncv_box_ops():
    """GluonCV-style detection post-processing, hybridized: a normalized box-center decoder
    (np.split / exp / concatenate), npx.box_iou and per-class npx.box_nms against NumPy."""
    rng = onp.random.RandomState(5)
    anchors = onp.concatenate([rng.rand(1, 8, 2) * 8, rng.rand(1, 8, 2) * 4 + 1], -1)
    anchors = anchors.astype("float32")  # (center x, center y, w, h)
    pred = (rng.randn(2, 8, 4) * 0.5).astype("float32")
    stds = (0.1, 0.1, 0.2, 0.2)

    def decode(x, a):
        p = np.split(x, 4, axis=-1)
        anc = np.split(a, 4, axis=-1)
        ox = p[0] * stds[0] * anc[2] + anc[0]
        oy = p[1] * stds[1] * anc[3] + anc[1]
        ow = np.exp(p[2] * stds[2]) * anc[2] / 2
        oh = np.exp(p[3] * stds[3]) * anc[3] / 2
        return np.concatenate([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)

    boxes, _ = _run(decode, [pred, anchors], grad_idx=(), hybridize=True)
    cx = pred[..., 0] * 0.1 * anchors[..., 2] + anchors[..., 0]
    cy = pred[..., 1] * 0.1 * anchors[..., 3] + anchors[..., 1]
    w = onp.exp(pred[..., 2] * 0.2) * anchors[..., 2] / 2
    h = onp.exp(pred[..., 3] * 0.2) * anchors[..., 3] / 2
    _close(boxes, onp.stack([cx - w, cy - h, cx + w, cy + h], -1), 1e-5)
    iou, _ = _run(lambda a, b: npx.box_iou(a, b), [boxes[0], boxes[1]], grad_idx=(),
                  hybridize=True)
    _close(iou, _np_iou(boxes[0], boxes[1]), 1e-5)
    scores = rng.rand(2, 8, 1).astype("float32")
    cls = rng.randint(0, 2, (2, 8, 1)).astype("float32")
    data = onp.concatenate([cls, scores, boxes], -1)
    got, _ = _run(lambda d: npx.box_nms(d, overlap_thresh=0.3, coord_start=2, score_index=1,
                                        id_index=0), [data], grad_idx=(), hybridize=True)
    _close(got, _np_nms(data, 0.3), 1e-6)
