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
