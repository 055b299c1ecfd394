"""npx.box_nms and npx.bipartite_matching against MXNet's documented examples and a plain
NumPy version of greedy non-maximum suppression written here."""
import numpy as onp
import pytest

from ndx import autograd, np, npx


def test_box_nms_mxnets_documented_example_and_gradient():
    x = onp.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                   [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]], onp.float32)
    a = np.array(x)
    a.attach_grad()
    with autograd.record():
        out = npx.box_nms(a, overlap_thresh=0.1, coord_start=2, score_index=1, id_index=0,
                          force_suppress=True, in_format="corner", out_format="corner")
    want = onp.array([[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2],
                      [-1] * 6, [-1] * 6], onp.float32)
    onp.testing.assert_allclose(out.asnumpy(), want)
    og = onp.repeat(onp.array([0.1, 0.2, 0.3, 0.4], onp.float32)[:, None], 6, axis=1)
    out.backward(np.array(og))
    want_grad = onp.array([[0.2] * 6, [0] * 6, [0] * 6, [0.1] * 6], onp.float32)
    onp.testing.assert_allclose(a.grad.asnumpy(), want_grad)


def _iou(a, b):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    area = lambda c: max(0.0, c[2] - c[0]) * max(0.0, c[3] - c[1])  # noqa: E731
    return inter / (area(a) + area(b) - inter)


def _nms_ref(x, thresh, valid, topk, by_class):
    """Greedy NMS over one batch of [id, score, x1, y1, x2, y2] rows."""
    order = [i for i in range(len(x)) if x[i, 1] > valid]
    order.sort(key=lambda i: -x[i, 1])  # stable: ties keep input order
    if topk >= 0:
        order = order[:topk]
    keep = []
    for i in order:
        if all(not (_iou(x[i, 2:6], x[j, 2:6]) > thresh and (not by_class or x[i, 0] == x[j, 0]))
               for j in keep):
            keep.append(i)
    out = -onp.ones_like(x)
    out[:len(keep)] = x[keep]
    return out


@pytest.mark.parametrize("thresh,valid,topk,by_class", [(0.5, 0.0, -1, False),
                                                        (0.3, 0.2, -1, True),
                                                        (0.7, 0.0, 5, False),
                                                        (0.0, 0.0, -1, True)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_box_nms_matches_greedy_reference(thresh, valid, topk, by_class, dtype):
    rng = onp.random.default_rng(4)
    b, n = 3, 40
    xy = rng.uniform(0, 1, (b, n, 2))
    wh = rng.uniform(0.05, 0.4, (b, n, 2))
    x = onp.concatenate([rng.integers(0, 3, (b, n, 1)), rng.uniform(0, 1, (b, n, 1)),
                         xy, xy + wh], axis=-1).astype(dtype)
    got = npx.box_nms(np.array(x), overlap_thresh=thresh, valid_thresh=valid, topk=topk,
                      id_index=0 if by_class else -1).asnumpy()
    assert got.dtype == x.dtype
    for k in range(b):
        onp.testing.assert_allclose(got[k], _nms_ref(x[k].astype(onp.float64), thresh, valid,
                                                     topk, by_class), rtol=1e-6)


def test_box_nms_formats_background_and_topk_zero():
    corner = onp.array([[[1, 0.9, 0.0, 0.0, 2.0, 2.0], [0, 0.8, 5.0, 5.0, 6.0, 7.0],
                         [1, 0.7, 0.1, 0.1, 2.0, 2.0]]], onp.float32)
    center = corner.copy()
    center[..., 2:4] = (corner[..., 2:4] + corner[..., 4:6]) / 2
    center[..., 4:6] = corner[..., 4:6] - corner[..., 2:4]
    a = npx.box_nms(np.array(corner), out_format="center").asnumpy()
    onp.testing.assert_allclose(a[0, :2], center[0, :2], rtol=1e-6)
    assert (a[0, 2] == -1).all()
    b = npx.box_nms(np.array(center), in_format="center").asnumpy()
    onp.testing.assert_allclose(b[0, :2], corner[0, :2], rtol=1e-6)
    # background_id with id_index: class-0 boxes leave before suppression.
    c = npx.box_nms(np.array(corner), id_index=0, background_id=0).asnumpy()
    onp.testing.assert_allclose(c[0, 0], corner[0, 0])
    assert (c[0, 1:] == -1).all()
    # MXNet's topk=0 gives the input back unchanged.
    onp.testing.assert_array_equal(npx.box_nms(np.array(corner), topk=0).asnumpy(), corner)
    assert npx.box_nms(np.zeros((2, 0, 6))).shape == (2, 0, 6)


@pytest.mark.parametrize("kwargs,shape,exc", [({}, (6,), ValueError), ({}, (3, 4), ValueError),
                                              ({"score_index": 3}, (3, 6), ValueError),
                                              ({"id_index": 1}, (3, 6), ValueError),
                                              ({"coord_start": 3}, (3, 6), ValueError),
                                              ({"in_format": "xywh"}, (3, 6), ValueError)])
def test_box_nms_rejects(kwargs, shape, exc):
    with pytest.raises(exc):
        npx.box_nms(np.zeros(shape), **kwargs)


def test_box_nms_rejects_integer_data():
    with pytest.raises(TypeError):
        npx.box_nms(np.zeros((3, 6), dtype="int32"))


def test_bipartite_matching_mxnets_example_and_reference():
    s = onp.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]], onp.float32)
    rows, cols = npx.bipartite_matching(np.array(s), threshold=1e-12, is_ascend=False)
    onp.testing.assert_array_equal(rows.asnumpy(), [1, -1, 0])
    onp.testing.assert_array_equal(cols.asnumpy(), [2, 0])
    rows, cols = npx.bipartite_matching(np.array(s), threshold=0.45)
    onp.testing.assert_array_equal(rows.asnumpy(), [1, -1, -1])
    onp.testing.assert_array_equal(cols.asnumpy(), [-1, 0])
    rows, _ = npx.bipartite_matching(np.array(s), threshold=0.35, is_ascend=True)
    onp.testing.assert_array_equal(rows.asnumpy(), [-1, 0, -1])
    rows, _ = npx.bipartite_matching(np.array(s), threshold=0.0, topk=1)
    onp.testing.assert_array_equal(rows.asnumpy(), [1, -1, -1])

    rng = onp.random.default_rng(2)
    batch = rng.uniform(0, 1, (4, 7, 5))
    rows, cols = npx.bipartite_matching(np.array(batch), threshold=0.1)
    for k in range(4):
        r_ref, c_ref = -onp.ones(7), -onp.ones(5)
        for idx in onp.argsort(-batch[k].ravel(), kind="stable"):
            r, c = divmod(int(idx), 5)
            if r_ref[r] < 0 and c_ref[c] < 0:
                if batch[k, r, c] <= 0.1:
                    break
                r_ref[r], c_ref[c] = c, r
        onp.testing.assert_array_equal(rows.asnumpy()[k], r_ref)
        onp.testing.assert_array_equal(cols.asnumpy()[k], c_ref)
    with pytest.raises(ValueError):
        npx.bipartite_matching(np.zeros((3,)), threshold=0.1)


def _bilinear(plane, y, x):
    h, w = plane.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * plane[y0, x0] + (1 - ly) * lx * plane[y0, x1]
            + ly * (1 - lx) * plane[y1, x0] + ly * lx * plane[y1, x1])


def _roi_align_ref(data, rois, pooled, scale, ratio, aligned, position_sensitive=False):
    """Detectron's RoIAlign (which MXNet's ROIAlign and torchvision's roi_align compute),
    written out as loops."""
    ph, pw = pooled
    c_out = data.shape[1] // (ph * pw) if position_sensitive else data.shape[1]
    out = onp.zeros((len(rois), c_out, ph, pw))
    off = 0.5 if aligned else 0.0
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        if not 0 <= b < data.shape[0]:
            continue
        sx, sy = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sx, y2 * scale - off - sy
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else int(onp.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(onp.ceil(rw / pw))
        for c in range(c_out):
            for i in range(ph):
                for j in range(pw):
                    ch = (c * ph + i) * pw + j if position_sensitive else c
                    acc = 0.0
                    for iy in range(gh):
                        for ix in range(gw):
                            acc += _bilinear(data[int(b), ch], sy + i * bh + (iy + 0.5) * bh / gh,
                                             sx + j * bw + (ix + 0.5) * bw / gw)
                    out[k, c, i, j] = acc / max(gh * gw, 1)
    return out


ROIS = onp.array([[0, 1.0, 1.5, 6.0, 5.0], [1, 0.0, 0.0, 7.9, 7.9], [0, 3.2, 2.1, 3.4, 2.3],
                  [1, -2.0, -1.0, 4.0, 9.5], [-1, 0, 0, 1, 1]], onp.float32)


@pytest.mark.parametrize("pooled,scale,ratio,aligned", [((2, 2), 1.0, 2, False),
                                                        ((3, 2), 0.5, -1, False),
                                                        ((2, 3), 1.0, 0, True),
                                                        ((4, 4), 2.0, 1, True)])
def test_roi_align_matches_detectrons_definition(pooled, scale, ratio, aligned):
    rng = onp.random.default_rng(6)
    data = rng.standard_normal((2, 3, 9, 8)).astype(onp.float32)
    got = npx.roi_align(np.array(data), np.array(ROIS), pooled_size=pooled, spatial_scale=scale,
                        sample_ratio=ratio, aligned=aligned).asnumpy()
    want = _roi_align_ref(data.astype(onp.float64), ROIS.astype(onp.float64), pooled, scale,
                          ratio, aligned)
    assert got.shape == want.shape and got.dtype == onp.float32
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert (got[-1] == 0).all()  # the padding row (batch -1)


def test_roi_align_position_sensitive():
    rng = onp.random.default_rng(7)
    data = rng.standard_normal((2, 8, 6, 6))
    got = npx.roi_align(np.array(data), np.array(ROIS[:3].astype(onp.float64)),
                        pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2,
                        position_sensitive=True).asnumpy()
    want = _roi_align_ref(data, ROIS[:3].astype(onp.float64), (2, 2), 1.0, 2, False, True)
    assert got.shape == (3, 2, 2, 2)
    onp.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_roi_align_gradient_matches_central_differences():
    rng = onp.random.default_rng(8)
    data = rng.standard_normal((2, 2, 6, 5))
    rois = ROIS[:4].astype(onp.float64)
    w = rng.standard_normal((4, 2, 2, 3))
    kw = {"pooled_size": (2, 3), "spatial_scale": 0.9, "sample_ratio": 2, "aligned": True}
    a = np.array(data)
    a.attach_grad()
    with autograd.record():
        y = npx.roi_align(a, np.array(rois), **kw)
    y.backward(np.array(w))

    def f(d):
        return float((npx.roi_align(np.array(d), np.array(rois), **kw).asnumpy() * w).sum())

    num = onp.zeros_like(data)
    eps = 1e-6
    for idx in onp.ndindex(data.shape):
        d = data.copy()
        d[idx] += eps
        up = f(d)
        d[idx] -= 2 * eps
        num[idx] = (up - f(d)) / (2 * eps)
    onp.testing.assert_allclose(a.grad.asnumpy(), num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("data_shape,rois_shape,kwargs,exc", [
    ((2, 3, 4), (1, 5), {"pooled_size": (2, 2), "spatial_scale": 1.0}, ValueError),
    ((1, 3, 4, 4), (1, 4), {"pooled_size": (2, 2), "spatial_scale": 1.0}, ValueError),
    ((1, 3, 4, 4), (1, 5), {"pooled_size": (0, 2), "spatial_scale": 1.0}, ValueError),
    ((1, 3, 4, 4), (1, 5), {"pooled_size": (2, 2), "spatial_scale": -1.0}, ValueError),
    ((1, 3, 4, 4), (1, 5), {"pooled_size": (2, 2), "spatial_scale": 1.0,
                            "position_sensitive": True}, ValueError)])
def test_roi_align_rejects(data_shape, rois_shape, kwargs, exc):
    with pytest.raises(exc):
        npx.roi_align(np.zeros(data_shape), np.zeros(rois_shape), **kwargs)


def _prior_ref(h, w, sizes, ratios, steps=(-1, -1), offsets=(0.5, 0.5), clip=False):
    sy = steps[0] if steps[0] > 0 else 1.0 / h
    sx = steps[1] if steps[1] > 0 else 1.0 / w
    half = [(s * h / w / 2, s / 2) for s in sizes]
    half += [(sizes[0] * h / w * onp.sqrt(r) / 2, sizes[0] / onp.sqrt(r) / 2) for r in ratios[1:]]
    out = []
    for r in range(h):
        for c in range(w):
            cy, cx = (r + offsets[0]) * sy, (c + offsets[1]) * sx
            out += [[cx - hw, cy - hh, cx + hw, cy + hh] for hw, hh in half]
    out = onp.array(out)[None]
    return onp.clip(out, 0, 1) if clip else out


def test_multibox_prior_d2l_example_and_reference():
    # Dive into Deep Learning's anchor example (MXNet edition): 561 x 728, sizes (0.75, 0.5,
    # 0.25), ratios (1, 2, 0.5): boxes[250, 250, 0] prints as [0.06, 0.07, 0.63, 0.82].
    y = npx.multibox_prior(np.zeros((1, 3, 561, 728)), sizes=[0.75, 0.5, 0.25],
                           ratios=[1, 2, 0.5])
    assert y.shape == (1, 2042040, 4) and y.dtype == onp.float32
    onp.testing.assert_allclose(y.reshape(561, 728, 5, 4)[250, 250, 0].asnumpy(),
                                [0.06, 0.07, 0.63, 0.82], atol=0.006)
    for kw in ({"sizes": (0.3,), "ratios": (1.0,)},
               {"sizes": (0.2, 0.6), "ratios": (1.0, 3.0, 0.25), "clip": True},
               {"sizes": 0.4, "ratios": (2.0, 1.0), "steps": (0.1, 0.2), "offsets": (0.0, 1.0)}):
        got = npx.multibox_prior(np.zeros((2, 1, 5, 7), dtype="float64"), **kw).asnumpy()
        sizes = kw["sizes"] if isinstance(kw["sizes"], tuple) else (kw["sizes"],)
        want = _prior_ref(5, 7, sizes, kw["ratios"], kw.get("steps", (-1, -1)),
                          kw.get("offsets", (0.5, 0.5)), kw.get("clip", False))
        onp.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for bad, exc in (({"sizes": ()}, ValueError), ({"ratios": (0.0,)}, ValueError),
                     ({"steps": (1.0,)}, ValueError), ({"sizes": "a"}, TypeError)):
        with pytest.raises(exc):
            npx.multibox_prior(np.zeros((1, 1, 2, 2)), **bad)
    with pytest.raises(ValueError):
        npx.multibox_prior(np.zeros((2, 2)))


def _detection_ref(cls, loc, anchors, threshold=0.01, nms=0.5, force=False,
                   var=(0.1, 0.1, 0.2, 0.2), clip=True, topk=-1):
    """MXNet's MultiBoxDetection for one batch, written out in NumPy."""
    rows = []
    for i in range(anchors.shape[0]):
        j = 1 + int(onp.argmax(cls[1:, i]))  # first of equal maxima, as the > loop takes
        score = cls[j, i]
        if score < threshold:
            continue
        a, d = anchors[i], loc[4 * i:4 * i + 4]
        aw, ah = a[2] - a[0], a[3] - a[1]
        ax, ay = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
        ox, oy = d[0] * var[0] * aw + ax, d[1] * var[1] * ah + ay
        ow, oh = onp.exp(d[2] * var[2]) * aw / 2, onp.exp(d[3] * var[3]) * ah / 2
        box = onp.array([ox - ow, oy - oh, ox + ow, oy + oh])
        rows.append([j - 1, score] + list(onp.clip(box, 0, 1) if clip else box))
    rows.sort(key=lambda r: -r[1])
    keep = len(rows) if topk <= 0 else min(topk, len(rows))
    for i in range(keep, len(rows)):
        rows[i][0] = -1
    for i in range(keep):
        if rows[i][0] < 0:
            continue
        for j in range(i + 1, keep):
            if rows[j][0] >= 0 and (force or rows[i][0] == rows[j][0]):
                a, b = rows[i][2:], rows[j][2:]
                iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
                ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
                u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - iw * ih
                if (0.0 if u <= 0 else iw * ih / u) >= nms:
                    rows[j][0] = -1
    out = -onp.ones((anchors.shape[0], 6))
    if rows:
        out[:len(rows)] = onp.array(rows)
    return out


def test_multibox_detection_d2l_example_and_reference():
    anchors = onp.array([[0.1, 0.08, 0.52, 0.92], [0.08, 0.2, 0.56, 0.95],
                         [0.15, 0.3, 0.62, 0.91], [0.55, 0.2, 0.9, 0.88]])
    cls = onp.array([[0.0] * 4, [0.9, 0.8, 0.7, 0.1], [0.1, 0.2, 0.3, 0.9]])
    out = npx.multibox_detection(np.array(cls[None]), np.zeros((1, 16)), np.array(anchors[None]),
                                 nms_threshold=0.5).asnumpy()[0]
    # Dive into Deep Learning's example: the dog (class 0, 0.9) and the cat (class 1, 0.9)
    # survive; the other two dog boxes are suppressed.
    kept = sorted(map(tuple, out[out[:, 0] >= 0].round(6)))
    assert kept == [(0.0, 0.9, 0.1, 0.08, 0.52, 0.92), (1.0, 0.9, 0.55, 0.2, 0.9, 0.88)]
    assert (out[out[:, 0] < 0][:, 1] <= 0.8).all()

    rng = onp.random.default_rng(12)
    b, c, n = 2, 4, 30
    cls = rng.dirichlet(onp.ones(c), size=(b, n)).transpose(0, 2, 1)
    loc = rng.normal(0, 1, (b, n * 4))
    xy = rng.uniform(0, 0.7, (n, 2))
    anchors = onp.concatenate([xy, xy + rng.uniform(0.1, 0.3, (n, 2))], 1)
    for kw in ({}, {"threshold": 0.3, "force_suppress": True}, {"nms_threshold": 0.3,
                                                               "nms_topk": 5},
               {"clip": False, "variances": (0.2, 0.2, 0.1, 0.1)}):
        got = npx.multibox_detection(np.array(cls), np.array(loc), np.array(anchors[None]),
                                     **kw).asnumpy()
        names = {"threshold": "threshold", "force_suppress": "force", "nms_threshold": "nms",
                 "nms_topk": "topk", "clip": "clip", "variances": "var"}
        ref_kw = {names[k]: v for k, v in kw.items()}
        for k in range(b):
            onp.testing.assert_allclose(got[k], _detection_ref(cls[k], loc[k], anchors, **ref_kw),
                                        rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError):
        npx.multibox_detection(np.array(cls), np.array(loc[:, :8]), np.array(anchors[None]))
    with pytest.raises(ValueError):
        npx.multibox_detection(np.array(cls), np.array(loc), np.array(anchors[None]),
                               variances=(0.1, 0.1))


def _c_round(v):
    return float(onp.sign(v) * onp.floor(abs(v) + 0.5))  # C's round: halves away from zero


def _roi_pool_ref(data, rois, pooled, scale):
    """Fast R-CNN's RoIPooling as MXNet's ROIPooling computes it, written out as loops."""
    n, c, h, w = data.shape
    ph, pw = pooled
    out = onp.zeros((len(rois), c, ph, pw))
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        if not 0 <= b < n:
            continue
        xs, ys, xe, ye = (int(_c_round(v * scale)) for v in (x1, y1, x2, y2))
        rh, rw = max(ye - ys + 1, 1), max(xe - xs + 1, 1)
        for i in range(ph):
            h0 = min(max(int(onp.floor(i * rh / ph)) + ys, 0), h)
            h1 = min(max(int(onp.ceil((i + 1) * rh / ph)) + ys, 0), h)
            for j in range(pw):
                w0 = min(max(int(onp.floor(j * rw / pw)) + xs, 0), w)
                w1 = min(max(int(onp.ceil((j + 1) * rw / pw)) + xs, 0), w)
                if h1 > h0 and w1 > w0:
                    out[k, :, i, j] = data[int(b), :, h0:h1, w0:w1].max(axis=(1, 2))
    return out


@pytest.mark.parametrize("pooled,scale", [((2, 2), 1.0), ((3, 2), 0.5), ((4, 4), 0.25)])
def test_roi_pooling_matches_fast_rcnns_definition_and_its_gradient(pooled, scale):
    rng = onp.random.default_rng(9)
    data = (rng.permutation(2 * 3 * 9 * 8).reshape(2, 3, 9, 8) * 0.01).astype(onp.float64)
    rois = ROIS.astype(onp.float64) * onp.array([1, 1.7, 1.3, 1.9, 1.1])
    a = np.array(data)
    a.attach_grad()
    w = rng.standard_normal((len(rois), 3) + pooled)
    with autograd.record():
        y = npx.roi_pooling(a, np.array(rois), pooled_size=pooled, spatial_scale=scale)
    y.backward(np.array(w))
    onp.testing.assert_allclose(y.asnumpy(), _roi_pool_ref(data, rois, pooled, scale))
    assert (y.asnumpy()[-1] == 0).all()  # the padding row

    def f(d):
        return float((_roi_pool_ref(d, rois, pooled, scale) * w).sum())

    num = onp.zeros_like(data)
    for idx in onp.ndindex(data.shape):
        d = data.copy()
        d[idx] += 1e-4
        up = f(d)
        d[idx] -= 2e-4
        num[idx] = (up - f(d)) / 2e-4
    onp.testing.assert_allclose(a.grad.asnumpy(), num, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError):
        npx.roi_pooling(a, np.array(rois[:, :4]), pooled_size=pooled, spatial_scale=scale)
    with pytest.raises(TypeError):
        npx.roi_pooling(np.zeros((1, 1, 2, 2), dtype="int32"), np.zeros((1, 5)),
                        pooled_size=(1, 1), spatial_scale=1.0)


# ---- multibox_target, box_encode, box_decode ----

def _encode_ref(a, g, var):
    """MXNet's offsets of corner box g from corner anchor a, divided by var."""
    aw, ah, gw, gh = a[2] - a[0], a[3] - a[1], g[2] - g[0], g[3] - g[1]
    return [((g[0] + g[2]) / 2 - (a[0] + a[2]) / 2) / aw / var[0],
            ((g[1] + g[3]) / 2 - (a[1] + a[3]) / 2) / ah / var[1],
            onp.log(gw / aw) / var[2], onp.log(gh / ah) / var[3]]


def _target_ref(anchors, labels, cls, thresh=0.5, ignore=-1, ratio=-1, neg_thresh=0.5,
                min_neg=0, var=(0.1, 0.1, 0.2, 0.2)):
    """MultiBoxTarget as MXNet documents its steps, one image and one anchor at a time."""
    batch, n = labels.shape[0], anchors.shape[0]
    loc, mask = onp.zeros((batch, n * 4)), onp.zeros((batch, n * 4))
    cls_t = onp.full((batch, n), float(ignore))
    for b in range(batch):
        gts = []
        for row in labels[b]:
            if row[0] == -1:
                break
            gts.append(row)
        if not gts:
            continue
        iou = onp.array([[_iou(anchors[j], g[1:5]) for g in gts] for j in range(n)])
        flag, match = [-1] * n, [-1] * n
        free = set(range(len(gts)))
        while free:  # greedy: the best (anchor, box) pair among the free ones
            best, pair = 1e-6, None
            for j in range(n):
                if flag[j] == 1:
                    continue
                for k in sorted(free):
                    if iou[j, k] > best:
                        best, pair = iou[j, k], (j, k)
            if pair is None:
                break
            flag[pair[0]], match[pair[0]] = 1, pair[1]
            free.discard(pair[1])
        if thresh > 0:
            for j in range(n):
                if flag[j] != 1 and iou[j].max() > thresh:
                    flag[j], match[j] = 1, int(iou[j].argmax())
        positives = flag.count(1)
        if ratio > 0:
            want = min(max(int(positives * ratio), min_neg), n - positives)
            cands = []
            for j in range(n):
                if flag[j] != 1 and iou[j].max() < neg_thresh:
                    e = onp.exp(cls[b, :, j] - cls[b, :, j].max())
                    cands.append((e[0] / e.sum(), j))
            cands.sort(key=lambda c: c[0])  # stable: ties by anchor index
            for _, j in cands[:want]:
                flag[j] = 0
        else:
            flag = [1 if f == 1 else 0 for f in flag]
        for j in range(n):
            if flag[j] == 0:
                cls_t[b, j] = 0
            elif flag[j] == 1:
                g = gts[match[j]]
                cls_t[b, j] = g[0] + 1
                mask[b, 4 * j:4 * j + 4] = 1
                loc[b, 4 * j:4 * j + 4] = _encode_ref(anchors[j], g[1:5], var)
    return loc, mask, cls_t


def test_multibox_target_d2l_anchor_example():
    # Dive into Deep Learning's labelling example (section "Anchor Boxes"): its printed class
    # labels, mask and offsets (its offsets take log(eps + w / w), hence 4e-6 for 0 there).
    anchors = np.array([[[0, 0.1, 0.2, 0.3], [0.15, 0.2, 0.4, 0.4], [0.63, 0.05, 0.88, 0.98],
                         [0.66, 0.45, 0.8, 0.8], [0.57, 0.3, 0.92, 0.9]]])
    labels = np.array([[[0, 0.1, 0.08, 0.52, 0.92], [1, 0.55, 0.2, 0.9, 0.88]]])
    loc, mask, cls = npx.multibox_target(anchors, labels, np.zeros((1, 3, 5)))
    assert cls.dtype == onp.float32 and loc.shape == (1, 20) and cls.shape == (1, 5)
    onp.testing.assert_array_equal(cls.asnumpy(), [[0, 1, 2, 0, 2]])
    onp.testing.assert_array_equal(mask.asnumpy(),
                                   [[0] * 4 + [1] * 8 + [0] * 4 + [1] * 4])
    want = [0, 0, 0, 0, 1.4, 10, 2.59, 7.18, -1.2, 0.269, 1.68, -1.57, 0, 0, 0, 0,
            -0.571, -1.0, 4.17e-06, 0.626]
    onp.testing.assert_allclose(loc.asnumpy()[0], want, rtol=3e-3, atol=1e-5)


def _random_boxes(rng, shape):
    lo = rng.uniform(0, 0.7, size=shape + (2,))
    return onp.concatenate([lo, lo + rng.uniform(0.05, 0.3, size=shape + (2,))], axis=-1)


@pytest.mark.parametrize("kwargs", [
    {},
    {"overlap_threshold": 0.3},
    {"overlap_threshold": 0},
    {"negative_mining_ratio": 3, "negative_mining_thresh": 0.5},
    {"negative_mining_ratio": 0.5, "minimum_negative_samples": 7, "ignore_label": -2},
    {"negative_mining_ratio": 2, "negative_mining_thresh": 0.3, "variances": (1, 1, 1, 1)},
])
def test_multibox_target_matches_reference(kwargs):
    rng = onp.random.default_rng(3)
    batch, rows, classes = 3, 5, 4
    labels = onp.full((batch, rows, 6), -1.0)
    for b, count in enumerate([3, 0, 5]):  # image 1 has no boxes: every anchor ignored
        labels[b, :count, 0] = rng.integers(0, classes - 1, size=count)
        labels[b, :count, 1:5] = _random_boxes(rng, (count,))
        labels[b, :count, 5] = 7  # extra label columns are carried, not read
    # Random anchors and, so that thresholds matter, jittered copies of the boxes.
    near = labels[[0, 0, 2, 2, 2], [0, 1, 0, 3, 4], 1:5] + rng.normal(0, 0.02, size=(5, 4))
    anchors = onp.concatenate([_random_boxes(rng, (55,)), near, near[:2] * 1.1])
    n = len(anchors)
    cls = rng.normal(size=(batch, classes, n))
    ref = {"thresh": kwargs.get("overlap_threshold", 0.5),
           "ignore": kwargs.get("ignore_label", -1),
           "ratio": kwargs.get("negative_mining_ratio", -1),
           "neg_thresh": kwargs.get("negative_mining_thresh", 0.5),
           "min_neg": kwargs.get("minimum_negative_samples", 0),
           "var": kwargs.get("variances", (0.1, 0.1, 0.2, 0.2))}
    want = _target_ref(anchors, labels, cls, **ref)
    got = npx.multibox_target(np.array(anchors[None]), np.array(labels), np.array(cls),
                              **kwargs)
    for g, w in zip(got, want):
        assert g.dtype == onp.float64
        onp.testing.assert_allclose(g.asnumpy(), w, rtol=1e-12, atol=1e-12)
    assert (want[2][1] == ref["ignore"]).all()
    if 0 < ref["thresh"] < 0.5:  # the threshold made positives beyond the greedy matches
        assert ((want[2] > 0).sum(axis=1) > [3, 0, 5]).any()
    if ref["ratio"] > 0:  # mining left some anchors ignored
        assert (want[2] == ref["ignore"]).sum() > n


def test_multibox_target_float32_and_its_zero_gradient():
    rng = onp.random.default_rng(4)
    anchors = np.array(_random_boxes(rng, (1, 20)).astype(onp.float32))
    labels = np.array(onp.array([[[1, 0.1, 0.1, 0.5, 0.6], [-1] * 5]], onp.float32))
    cls = np.array(rng.normal(size=(1, 3, 20)).astype(onp.float32))
    cls.attach_grad()
    with autograd.record():
        loc, mask, cls_t = npx.multibox_target(anchors, labels, cls, negative_mining_ratio=3)
        total = loc.sum() + mask.sum() + cls_t.sum()
    total.backward()  # the targets are constants: MXNet's zero gradient for cls_pred
    onp.testing.assert_array_equal(cls.grad.asnumpy(), 0)
    want = _target_ref(anchors.asnumpy()[0].astype(onp.float64), labels.asnumpy(),
                       cls.asnumpy().astype(onp.float64), ratio=3)
    onp.testing.assert_allclose(loc.asnumpy(), want[0], rtol=1e-5, atol=1e-5)
    onp.testing.assert_array_equal(cls_t.asnumpy(), want[2])


@pytest.mark.parametrize("shapes, kwargs, exc", [
    ([(1, 5, 3), (1, 2, 5), (1, 3, 5)], {}, ValueError),   # anchors not (1, n, 4)
    ([(2, 5, 4), (1, 2, 5), (1, 3, 5)], {}, ValueError),   # anchors for two images
    ([(1, 5, 4), (1, 2, 4), (1, 3, 5)], {}, ValueError),   # label rows narrower than 5
    ([(1, 5, 4), (1, 2, 5), (1, 3, 6)], {}, ValueError),   # cls_pred's anchors differ
    ([(1, 5, 4), (2, 2, 5), (1, 3, 5)], {}, ValueError),   # cls_pred's batch differs
    ([(1, 5, 4), (1, 2, 5), (1, 3, 5)], {"variances": (0.1, 0.2)}, ValueError),
    ([(1, 5, 4), (1, 2, 5), (1, 3, 5)],
     {"negative_mining_ratio": 3, "negative_mining_thresh": 0}, ValueError),
    ([(1, 5, 4), (1, 2, 5), (1, 3, 5)], {"minimum_negative_samples": -1}, ValueError),
    ([(1, 5, 4), (1, 2, 5), (1, 3, 5)], {"variances": "wide"}, TypeError),
])
def test_multibox_target_rejects(shapes, kwargs, exc):
    arrays = [np.zeros(s) for s in shapes]
    with pytest.raises(exc, match="multibox_target"):
        npx.multibox_target(*arrays, **kwargs)


def test_multibox_target_too_many_pairs_is_a_memory_error():
    with pytest.raises(MemoryError, match="multibox_target"):
        npx.multibox_target(np.zeros((1, 400000, 4)), np.ones((1, 1000, 5)),
                            np.zeros((1, 2, 400000)))


def test_multibox_target_rejects_integer_inputs():
    with pytest.raises(TypeError, match="multibox_target"):
        npx.multibox_target(np.zeros((1, 5, 4), dtype="int32"), np.zeros((1, 2, 5)),
                            np.zeros((1, 3, 5)))


def test_box_encode_matches_reference_and_box_decode_inverts_it():
    rng = onp.random.default_rng(5)
    b, n, m = 2, 7, 3
    anchors = _random_boxes(rng, (b, n))
    refs = _random_boxes(rng, (b, m))
    samples = rng.choice([-1.0, 0.0, 1.0], size=(b, n))
    matches = onp.where(samples > 0.5, rng.integers(0, m, size=(b, n)), -1).astype(onp.float64)
    means, stds = onp.array([0.01, -0.02, 0.03, 0.0]), onp.array([0.1, 0.1, 0.2, 0.2])
    targets, masks = npx.box_encode(np.array(samples), np.array(matches), np.array(anchors),
                                    np.array(refs), np.array(means), np.array(stds))
    want_t, want_m = onp.zeros((b, n, 4)), onp.zeros((b, n, 4))
    for i in range(b):
        for j in range(n):
            if samples[i, j] > 0.5:
                enc = _encode_ref(anchors[i, j], refs[i, int(matches[i, j])], (1, 1, 1, 1))
                want_t[i, j] = (onp.array(enc) - means) / stds
                want_m[i, j] = 1
    onp.testing.assert_allclose(targets.asnumpy(), want_t, rtol=1e-12, atol=1e-14)
    onp.testing.assert_array_equal(masks.asnumpy(), want_m)
    # box_decode with the same stds (and no means) gives the matched boxes back.
    t0, _ = npx.box_encode(np.array(samples[:1]), np.array(matches[:1]),
                           np.array(anchors[:1]), np.array(refs[:1]), np.zeros(4),
                           np.array(stds))
    decoded = npx.box_decode(t0, np.array(anchors[:1]), std0=0.1, std1=0.1, std2=0.2,
                             std3=0.2, format="corner").asnumpy()
    pos = samples[0] > 0.5
    onp.testing.assert_allclose(decoded[0][pos], refs[0][matches[0][pos].astype(int)],
                                rtol=1e-12, atol=1e-12)


def test_box_decode_center_format_and_clip():
    # center anchors [x, y, w, h]; offsets (dx, dy, dw, dh) move the centre by d * std * size
    # and scale the size by exp(min(d * std, clip)).
    anchors = onp.array([[[0.5, 0.5, 0.2, 0.4], [0.3, 0.6, 0.1, 0.1]]])
    data = onp.array([[[1.0, -1.0, 0.5, 10.0], [0, 0, 0, 0]]])
    out = npx.box_decode(np.array(data), np.array(anchors), std0=0.1, std1=0.2, std2=1,
                         std3=1, clip=2.0).asnumpy()
    cx, cy = 0.5 + 1.0 * 0.1 * 0.2, 0.5 - 1.0 * 0.2 * 0.4
    hw, hh = onp.exp(0.5) * 0.2 / 2, onp.exp(2.0) * 0.4 / 2
    onp.testing.assert_allclose(out[0, 0], [cx - hw, cy - hh, cx + hw, cy + hh], rtol=1e-6)
    onp.testing.assert_allclose(out[0, 1], [0.25, 0.55, 0.35, 0.65], rtol=1e-6)


def test_box_encode_and_decode_reject():
    z = np.zeros
    with pytest.raises(IndexError, match="box_encode"):  # a positive's match outside refs
        npx.box_encode(np.array([[1.0, 0.0]]), np.array([[3.0, 0.0]]), z((1, 2, 4)),
                       z((1, 3, 4)), z(4), np.ones(4))
    with pytest.raises(ValueError, match="box_encode"):
        npx.box_encode(z((1, 2)), z((1, 3)), z((1, 2, 4)), z((1, 3, 4)), z(4), z(4))
    with pytest.raises(ValueError, match="box_encode"):
        npx.box_encode(z((1, 2)), z((1, 2)), z((1, 2, 4)), z((1, 3, 4)), z(3), z(4))
    with pytest.raises(TypeError, match="box_encode"):
        npx.box_encode(z((1, 2)), z((1, 2)), z((1, 2, 4), dtype="int64"), z((1, 3, 4)), z(4),
                       z(4))
    with pytest.raises(ValueError, match="box_decode"):
        npx.box_decode(z((2, 3, 4)), z((2, 3, 4)))
    with pytest.raises(ValueError, match="box_decode"):
        npx.box_decode(z((2, 3, 4)), z((1, 3, 4)), format="xywh")
    # Integer samples and matches are accepted (MXNet passes them as floats).
    t, m = npx.box_encode(np.array([[1, 0]]), np.array([[2, -1]]), np.array([[[0, 0, 1, 1],
                          [0, 0, 1, 1]]], dtype="float32"), np.array(
                          [[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 2, 2]]], dtype="float32"),
                          np.zeros(4, dtype="float32"), np.ones(4, dtype="float32"))
    onp.testing.assert_allclose(t.asnumpy()[0, 0], [0.5, 0.5, onp.log(2), onp.log(2)],
                                rtol=1e-6)
