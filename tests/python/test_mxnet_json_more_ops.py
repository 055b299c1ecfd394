"""More ops of graphs MXNet wrote (GluonNLP / GluonCV exports): batch_dot, where, topk, the
Sequence* ops, _arange, _contrib_arange_like, _contrib_div_sqrt_dim, slice_like,
L2Normalization, InstanceNorm, smooth_l1, and the ops that load as ndx's own (one_hot, pick,
zeros_like, ones_like, expand_dims). References are NumPy computations of MXNet's documented
definitions (dot-inl.h, control_flow_op.h, ordering_op-inl.h, sequence_*-inl.h, init_op.h,
transformer-inl.h, matrix_op-inl.h, l2_normalization-inl.h, instance_norm-inl.h, mshadow_op.h),
never ndx's output."""
import json

import numpy as onp
import pytest

import ndx
from ndx import np, sym

RNG = onp.random.default_rng(7)


def f32(*shape):
    return RNG.standard_normal(shape).astype("float32")


def var(name):
    return {"op": "null", "name": name, "inputs": []}


def op(kind, name, inputs, **attrs):
    """An op node as MXNet writes it: string attrs, inputs [node, output, version]."""
    return {"op": kind, "name": name, "attrs": {k: str(v) for k, v in attrs.items()},
            "inputs": [[e, 0, 0] for e in inputs]}


def graph(nodes, heads):
    heads = [[h, 0, 0] if isinstance(h, int) else [h[0], h[1], 0] for h in heads]
    return json.dumps({"nodes": nodes,
                       "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
                       "node_row_ptr": list(range(len(nodes) + 1)), "heads": heads,
                       "attrs": {"mxnet_version": ["int", 10600]}})


def run(text, **values):
    s = sym.load_json(text)
    with ndx.autograd.predict_mode():
        outs = s.eval(**{k: np.array(v) for k, v in values.items()})
    return [o.asnumpy() for o in outs]


def apply(kind, *args, n_out=1, **attrs):
    """The outputs of one MXNet op applied to variables holding args."""
    nodes = [var(f"x{i}") for i in range(len(args))]
    nodes.append(op(kind, "y", list(range(len(args))), **attrs))
    outs = run(graph(nodes, [(len(args), k) for k in range(n_out)]),
               **{f"x{i}": a for i, a in enumerate(args)})
    return outs if n_out > 1 else outs[0]


# ---- batch_dot, where -------------------------------------------------------------------------

@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_dot_transposes(ta, tb):
    a = f32(3, 4, 2) if ta else f32(3, 2, 4)
    b = f32(3, 5, 4) if tb else f32(3, 4, 5)
    want = onp.einsum("bij,bjk->bik", a.transpose(0, 2, 1) if ta else a,
                      b.transpose(0, 2, 1) if tb else b)
    got = apply("batch_dot", a, b, transpose_a=ta, transpose_b=tb)
    assert got.shape == (3, 2, 5) and got.dtype == onp.float32
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_where_elementwise_and_one_dimensional_condition():
    x, y = f32(3, 2, 4), f32(3, 2, 4)
    cond = onp.where(f32(3, 2, 4) > 0, 2.5, 0.0).astype("float32")
    cond[0, 0, 0] = onp.nan  # (nonzero: x)
    onp.testing.assert_array_equal(apply("where", cond, x, y), onp.where(cond != 0, x, y))
    rows = onp.array([1, 0, -3], "float32")  # selects x's first-axis slices
    onp.testing.assert_array_equal(apply("where", rows, x, y),
                                   onp.where((rows != 0)[:, None, None], x, y))
    sq = f32(3, 3)  # (a square x: the condition still goes with the first axis)
    onp.testing.assert_array_equal(apply("where", rows, sq, -sq),
                                   onp.where((rows != 0)[:, None], sq, -sq))


# ---- topk -------------------------------------------------------------------------------------

def _topk(x, axis, k, is_ascend):
    """Indices of the k largest (smallest) along axis, no ties in the data."""
    order = onp.argsort(x if is_ascend else -x, axis=axis, kind="stable")
    n = x.shape[axis]
    return onp.take(order, onp.arange(k if k >= 1 else n), axis=axis)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("is_ascend", [False, True])
def test_topk_indices_values_and_mask(axis, is_ascend):
    x = f32(3, 5, 4)
    k = 2
    idx = _topk(x, axis, k, is_ascend)
    got = apply("topk", x, axis=axis, k=k, is_ascend=is_ascend)
    assert got.dtype == onp.float32  # (MXNet's default dtype for the indices)
    onp.testing.assert_array_equal(got, idx.astype("float32"))
    value, indices = apply("topk", x, n_out=2, axis=axis, k=k, ret_typ="both",
                           is_ascend=is_ascend, dtype="int32")
    assert indices.dtype == onp.int32
    onp.testing.assert_array_equal(indices, idx)
    onp.testing.assert_array_equal(value, onp.take_along_axis(x, idx, axis=axis))
    onp.testing.assert_array_equal(
        apply("topk", x, axis=axis, k=k, ret_typ="value", is_ascend=is_ascend),
        onp.take_along_axis(x, idx, axis=axis))
    mask = onp.zeros_like(x)
    onp.put_along_axis(mask, idx, 1, axis=axis)
    got = apply("topk", x, axis=axis, k=k, ret_typ="mask", is_ascend=is_ascend)
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(got, mask)


def test_topk_defaults_full_sort_and_flattened():
    x = f32(4, 6)
    onp.testing.assert_array_equal(apply("topk", x), x.argmax(axis=-1)[:, None])
    onp.testing.assert_array_equal(apply("topk", x, k=0, ret_typ="value"),
                                   -onp.sort(-x, axis=-1))
    flat = x.reshape(-1)
    onp.testing.assert_array_equal(apply("topk", x, axis="None", k=3),
                                   onp.argsort(-flat)[:3].astype("float32"))
    i = onp.array([[3, 9, 1], [7, 2, 8]], "int32")
    got = apply("topk", i, k=2, ret_typ="value")
    assert got.dtype == onp.int32 and got.tolist() == [[9, 3], [8, 7]]
    assert apply("topk", i, k=1, ret_typ="mask").tolist() == [[0, 1, 0], [0, 0, 1]]


# ---- Sequence* ops ---------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_mask(axis):
    x = f32(4, 3, 2) if axis == 0 else f32(3, 4, 2)
    lengths = onp.array([2.7, 4, 0], "float32")  # (read as int: 2, 4, 0)
    want = x.copy()
    for b, n in enumerate(lengths.astype(int)):
        if axis == 0:
            want[n:, b] = -1.5
        else:
            want[b, n:] = -1.5
    got = apply("SequenceMask", x, lengths, use_sequence_length="True", value=-1.5, axis=axis)
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(got, want)
    onp.testing.assert_array_equal(apply("SequenceMask", x, axis=axis), x)
    h = x.astype("float16")
    got = apply("SequenceMask", h, lengths, use_sequence_length="True", axis=axis)
    assert got.dtype == onp.float16
    onp.testing.assert_array_equal(got, onp.where(want == -1.5, 0, h).astype("float16"))


@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_last(axis):
    x = f32(4, 3, 2) if axis == 0 else f32(3, 4, 2)
    lengths = onp.array([2, 4, 1.5], "float32")
    steps = lengths.astype(int) - 1
    want = onp.stack([x[s, b] if axis == 0 else x[b, s] for b, s in enumerate(steps)])
    got = apply("SequenceLast", x, lengths, use_sequence_length="True", axis=axis)
    onp.testing.assert_array_equal(got, want)
    onp.testing.assert_array_equal(apply("SequenceLast", x, axis=axis),
                                   x[-1] if axis == 0 else x[:, -1])


def test_sequence_reverse_matches_mxnets_example():
    x = onp.arange(1, 19, dtype="float32").reshape(3, 2, 3)
    onp.testing.assert_array_equal(apply("SequenceReverse", x), x[::-1])
    got = apply("SequenceReverse", x, onp.array([2, 2], "float32"), use_sequence_length="True")
    onp.testing.assert_array_equal(got, [[[7, 8, 9], [10, 11, 12]], [[1, 2, 3], [4, 5, 6]],
                                         [[13, 14, 15], [16, 17, 18]]])
    got = apply("SequenceReverse", x, onp.array([2, 3], "float32"), use_sequence_length="True")
    onp.testing.assert_array_equal(got, [[[7, 8, 9], [16, 17, 18]], [[1, 2, 3], [10, 11, 12]],
                                         [[13, 14, 15], [4, 5, 6]]])


# ---- ranges ------------------------------------------------------------------------------------

def _mx_range(n, start, step, repeat, dtype):
    """init_op.h range_fwd: start + (i / repeat) * step in dtype."""
    t = onp.dtype(dtype).type
    i = (onp.arange(n) // repeat).astype(dtype)
    return (i * t(step) + t(start)).astype(dtype)


def test_arange():
    nodes = [op("_arange", "a", [], start=1, stop=4, step=0.3, repeat=2),
             op("_arange", "b", [], start=5),
             op("_arange", "c", [], start=10, stop=1, step=-2.5, dtype="int32")]
    a, b, c = run(graph(nodes, [0, 1, 2]))
    assert a.dtype == onp.float32 and b.dtype == onp.float32 and c.dtype == onp.int32
    onp.testing.assert_array_equal(a, _mx_range(20, 1, 0.3, 2, "float32"))
    onp.testing.assert_array_equal(b, onp.arange(5, dtype="float32"))
    # (ceil((1 - 10) / -2.5) = 4 values, start and step cast to int32: 10, -2)
    assert c.tolist() == [10, 8, 6, 4]


def test_arange_like_along_an_axis():
    x = f32(2, 5, 3)
    got = apply("_contrib_arange_like", x, axis=1)
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(got, onp.arange(5, dtype="float32"))
    got = apply("_contrib_arange_like", x, axis=-1, start=0.5, step=0.1, repeat=2)
    onp.testing.assert_array_equal(got, _mx_range(3, 0.5, 0.1, 2, "float32"))
    got = apply("_contrib_arange_like", x, axis=0, start=3, dtype="int64")
    assert got.dtype == onp.int64 and got.tolist() == [3, 4]


# ---- scaling and normalization -----------------------------------------------------------------

def test_div_sqrt_dim():
    for dtype, d in (("float32", 6), ("float16", 5), ("float64", 7)):
        x = f32(2, 3, d).astype(dtype)
        got = apply("_contrib_div_sqrt_dim", x)
        assert got.dtype == onp.dtype(dtype)
        onp.testing.assert_array_equal(got, x / onp.dtype(dtype).type(onp.sqrt(float(d))))


def test_slice_like_listed_axes():
    x, like = f32(2, 3, 6, 7), onp.zeros((1, 1, 4, 5), "float32")
    onp.testing.assert_array_equal(apply("slice_like", x, like, axes="(2, 3)"),
                                   x[:, :, :4, :5])
    onp.testing.assert_array_equal(apply("slice_like", x, onp.zeros((1, 2), "float32"),
                                         axes="(0, 1)"), x[:1, :2])
    i = onp.arange(12, dtype="int32").reshape(3, 4)
    got = apply("slice_like", i, onp.zeros((9, 2)), axes=(1,))
    assert got.dtype == onp.int32 and got.tolist() == i[:, :2].tolist()


@pytest.mark.parametrize("mode", ["instance", "channel", "spatial"])
def test_l2_normalization(mode):
    x = f32(2, 3, 4, 5)
    axes = {"instance": (1, 2, 3), "channel": (1,), "spatial": (2, 3)}[mode]
    want = x / onp.sqrt((x * x).sum(axis=axes, keepdims=True) + onp.float32(1e-10))
    onp.testing.assert_allclose(apply("L2Normalization", x, mode=mode), want, rtol=1e-5)
    got = apply("L2Normalization", x[:, :, 0, 0], mode=mode, eps=0.5)
    y = x[:, :, 0, 0]
    axes = {"instance": (1,), "channel": (1,), "spatial": ()}[mode]
    onp.testing.assert_allclose(got, y / onp.sqrt((y * y).sum(axis=axes, keepdims=True) + 0.5),
                                rtol=1e-5)


def test_instance_norm():
    x, gamma, beta = f32(2, 3, 4, 5) * 3 + 1, f32(3), f32(3)
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = ((x - mean) ** 2).mean(axis=(2, 3), keepdims=True)
    c = lambda v: v[None, :, None, None]  # noqa: E731
    for eps, attrs in ((1e-3, {}), (1e-5, {"eps": "1e-05"})):
        want = (x - mean) / onp.sqrt(var + onp.float32(eps)) * c(gamma) + c(beta)
        onp.testing.assert_allclose(apply("InstanceNorm", x, gamma, beta, **attrs), want,
                                    rtol=1e-4, atol=1e-5)
    x3 = f32(2, 3, 7)
    m3 = x3.mean(axis=2, keepdims=True)
    want = (x3 - m3) / onp.sqrt(((x3 - m3) ** 2).mean(axis=2, keepdims=True) + 1e-3) * \
        gamma[:, None] + beta[:, None]
    onp.testing.assert_allclose(apply("InstanceNorm", x3, gamma, beta), want, rtol=1e-4,
                                atol=1e-5)


def test_smooth_l1():
    x = onp.array([-3.0, -0.3, -0.2, 0.0, 0.1, 0.25, 0.26, 2.0, onp.nan], "float32")
    for sigma in (1.0, 2.0):
        s2 = onp.float32(sigma) ** 2
        with onp.errstate(invalid="ignore"):
            want = onp.where(onp.abs(x) > 1 / s2, onp.abs(x) - onp.float32(0.5) / s2,
                             onp.float32(0.5) * x * x * s2)
        attrs = {} if sigma == 1.0 else {"scalar": sigma}
        got = apply("smooth_l1", x, **attrs)
        assert got.dtype == onp.float32
        onp.testing.assert_allclose(got, want, rtol=1e-6)


# ---- ops that load as ndx's own --------------------------------------------------------------

def test_one_hot_pick_zeros_like_ones_like_expand_dims():
    idx = onp.array([[0, 2], [-1, 3]], "float32")
    want = onp.zeros((2, 2, 3), "float32")  # (out-of-range indices: all off_value)
    want[0, 0, 0] = want[0, 1, 2] = 1
    got = apply("one_hot", idx, depth=3)
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(got, want)
    got = apply("one_hot", idx, depth=3, on_value=5, off_value=-1, dtype="int32")
    assert got.dtype == onp.int32
    onp.testing.assert_array_equal(got, onp.where(want == 1, 5, -1))
    x = f32(2, 3)
    i = onp.array([2.9, -4], "float32")  # (truncated to int, then clipped)
    onp.testing.assert_array_equal(apply("pick", x, i, axis=1), [x[0, 2], x[1, 0]])
    onp.testing.assert_array_equal(apply("pick", x, i, axis=1, mode="wrap", keepdims="True"),
                                   [[x[0, 2]], [x[1, 2]]])
    h = x.astype("float16")
    for kind, value in (("zeros_like", 0), ("ones_like", 1)):
        got = apply(kind, h)
        assert got.dtype == onp.float16 and (got == value).all() and got.shape == (2, 3)
    assert apply("expand_dims", x, axis=1).shape == (2, 1, 3)


# ---- refusals ---------------------------------------------------------------------------------

def _one(kind, n_inputs=1, **attrs):
    nodes = [var(f"x{i}") for i in range(n_inputs)]
    return graph(nodes + [op(kind, "node7", list(range(n_inputs)), **attrs)], [n_inputs])


@pytest.mark.parametrize("kind,n,attrs,error,match", [
    ("batch_dot", 1, {}, ValueError, r"takes 2 input\(s\), got 1"),
    ("where", 3, {"bogus": "1"}, NotImplementedError, r"\['bogus'\] not supported"),
    ("topk", 1, {"ret_typ": "values"}, ValueError, "ret_typ='values' is not one of"),
    ("topk", 1, {"axis": "None", "ret_typ": "mask"}, NotImplementedError,
     "axis=None with ret_typ='mask'"),
    ("SequenceMask", 2, {"use_sequence_length": "True", "axis": "2"}, ValueError,
     "axis=2 is not supported"),
    ("SequenceLast", 2, {"use_sequence_length": "True", "axis": "2"}, ValueError,
     "axis=2 is not supported"),
    ("SequenceReverse", 2, {"use_sequence_length": "True", "axis": "1"}, ValueError,
     "axis=1 is not supported"),
    ("_arange", 0, {"start": "0", "stop": "4", "infer_range": "True"}, NotImplementedError,
     "infer_range=True"),
    ("_arange", 0, {"start": "4", "stop": "1"}, ValueError, "invalid range"),
    ("_contrib_arange_like", 1, {}, NotImplementedError, "axis=None"),
    ("_contrib_arange_like", 1, {"axis": "0", "repeat": "0"}, ValueError, "repeat=0"),
    ("_contrib_div_sqrt_dim", 1, {"axis": "1"}, NotImplementedError, r"\['axis'\]"),
    ("slice_like", 2, {}, NotImplementedError, "only non-negative axes"),
    ("slice_like", 2, {"axes": "(-1,)"}, NotImplementedError, "only non-negative axes"),
    ("L2Normalization", 1, {"mode": "batch"}, ValueError, "mode='batch' is not one of"),
    ("InstanceNorm", 3, {"axis": "1"}, NotImplementedError, r"\['axis'\]"),
    ("smooth_l1", 1, {"scalar": "x"}, ValueError, "scalar='x' is not a number"),
])
def test_params_that_cannot_be_translated_faithfully_are_refused(kind, n, attrs, error, match):
    with pytest.raises(error, match=rf"\[load\] {kind} 'node7': .*{match}"):
        sym.load_json(_one(kind, n, **attrs))


# ---- take ----------------------------------------------------------------------------------

@pytest.mark.parametrize("attrs,mode", [({}, "clip"), ({"axis": "1", "mode": "wrap"}, "wrap"),
                                        ({"axis": "-1", "mode": "raise"}, "raise")])
def test_take_modes_and_float_indices(attrs, mode):
    """MXNet's take (indexing_op.h): rows of a along axis (0 by default), the indices' shape in
    their place; float indices truncated; mode clip (the default) or wrap for those out of
    range."""
    a = f32(4, 3, 5)
    axis = int(attrs.get("axis", 0))
    idx = onp.array([[0.0, 2.7], [-1.0, 1.0]], "float32") if mode == "raise" else \
        onp.array([[0.0, 2.7], [7.0, -6.0]], "float32")
    want = onp.take(a, idx.astype("int64"), axis=axis, mode=mode)
    onp.testing.assert_array_equal(apply("take", a, idx, **attrs), want)


def test_take_raise_mode_refuses_an_index_out_of_range():
    with pytest.raises(IndexError, match="out of bounds"):
        apply("take", f32(3, 2), onp.array([3.0], "float32"), mode="raise")


# ---- detection ops (_contrib_*, ROIPooling) -----------------------------------------------

def _multibox_prior_ref(h, w, sizes, ratios):
    """MXNet's multibox_prior-inl.h: centres ((c + 0.5) / w, (r + 0.5) / h); each size with
    ratio 1, then sizes[0] with each other ratio; widths scaled by h / w."""
    out = []
    for r in range(h):
        for c in range(w):
            cy, cx = (r + 0.5) / h, (c + 0.5) / w
            boxes = [(s * h / w / 2, s / 2) for s in sizes]
            boxes += [(sizes[0] * h / w * onp.sqrt(q) / 2, sizes[0] / onp.sqrt(q) / 2)
                      for q in ratios[1:]]
            out += [[cx - bw, cy - bh, cx + bw, cy + bh] for bw, bh in boxes]
    return onp.array(out, "float32")[None]


def test_multibox_prior_and_the_contrib_symbol_namespace():
    got = apply("_contrib_MultiBoxPrior", f32(1, 3, 2, 3), sizes="(0.5, 0.25)",
                ratios="(1, 2, 0.5)")
    onp.testing.assert_allclose(got, _multibox_prior_ref(2, 3, [0.5, 0.25], [1, 2, 0.5]),
                                rtol=1e-6, atol=1e-7)
    s = sym.contrib.MultiBoxPrior(sym.var("x"), sizes=(0.5, 0.25), ratios=(1, 2, 0.5))
    onp.testing.assert_allclose(s.eval(x=np.zeros((1, 3, 2, 3)))[0].asnumpy(), got,
                                rtol=0, atol=0)


def test_box_nms_keeps_the_best_box_of_overlapping_ones():
    """[id, score, x1, y1, x2, y2] rows: box 1 overlaps box 0 (IoU 81/119 > 0.5) and has
    the lower score, so it becomes -1 rows; the kept ones are sorted by score."""
    data = onp.array([[[0, 0.9, 0, 0, 10, 10], [0, 0.8, 1, 1, 10, 10],
                       [0, 0.7, 20, 20, 30, 30]]], "float32")
    got = apply("_contrib_box_nms", data, overlap_thresh="0.5")
    want = onp.array([[[0, 0.9, 0, 0, 10, 10], [0, 0.7, 20, 20, 30, 30],
                       [-1, -1, -1, -1, -1, -1]]], "float32")
    onp.testing.assert_array_equal(got, want)


def test_roi_pooling_takes_each_bins_maximum():
    """ROIPooling (roi_pooling-inl.h): ROI [batch, x1, y1, x2, y2] scaled and rounded, split
    into pooled_size bins, each the max of its pixels: the whole 4x4 map in 2x2 bins."""
    x = onp.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    rois = onp.array([[0, 0, 0, 3, 3]], "float32")
    got = apply("ROIPooling", x, rois, pooled_size="(2, 2)", spatial_scale="1.0")
    onp.testing.assert_array_equal(got, [[[[5, 7], [13, 15]]]])


def test_crop_by_size_and_like_another_input():
    """Crop (crop-inl.h): data[:, :, y:y + h, x:x + w] with offset (y, x) and h_w, or the
    last two sizes of a second input (FCN's score crop)."""
    x = f32(2, 3, 7, 8)
    onp.testing.assert_array_equal(apply("Crop", x, offset="(1, 2)", h_w="(4, 5)"),
                                   x[:, :, 1:5, 2:7])
    like = f32(2, 1, 3, 6)
    onp.testing.assert_array_equal(apply("Crop", x, like, num_args="2", offset="(2, 1)"),
                                   x[:, :, 2:5, 1:7])
    onp.testing.assert_array_equal(apply("Crop", x, like, num_args="2"), x[:, :, :3, :6])
    with pytest.raises(NotImplementedError, match="center_crop"):
        apply("Crop", x, h_w="(2, 2)", center_crop="True")
    with pytest.raises(IndexError):  # (a crop past the data's end)
        apply("Crop", x, like, num_args="2", offset="(5, 0)")
