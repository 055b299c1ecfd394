"""npx.multibox_prior / multibox_target / multibox_detection: SSD's anchors, training targets
and detections (C++ ops `_npx_multibox_prior`, `_npx_multibox_target`,
`_npx_multibox_detection`). Their tuple-of-float params cross the FFI
as text, which these wrappers write."""
import numbers

from .. import _core


def _floats(op, name, v):
    """A number or a sequence of numbers as the text of a tuple of floats."""
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, (tuple, list)) or not all(
            isinstance(e, numbers.Real) and not isinstance(e, bool) for e in v):
        raise TypeError(f"[{op}] {name} must be a number or a sequence of numbers, got {v!r}")
    return "(" + ", ".join(repr(float(e)) for e in v) + ("," if len(v) == 1 else "") + ")"


def multibox_prior(data, sizes=(1.0,), ratios=(1.0,), clip=False, steps=(-1.0, -1.0),
                   offsets=(0.5, 0.5)):
    """Anchor boxes for an (N, C, H, W) feature map: (1, H * W * (len(sizes) + len(ratios) -
    1), 4) corner boxes in [0, 1]. Each pixel gets one box per size (aspect ratio 1, as MXNet
    takes the first ratio) and one per further ratio with sizes[0]."""
    params = {"sizes": _floats("multibox_prior", "sizes", sizes),
              "ratios": _floats("multibox_prior", "ratios", ratios), "clip": clip,
              "steps": _floats("multibox_prior", "steps", steps),
              "offsets": _floats("multibox_prior", "offsets", offsets)}
    return _core._invoke("_npx_multibox_prior", (data,), params, None)


def multibox_detection(cls_prob, loc_pred, anchor, clip=True, threshold=0.01, background_id=0,
                       nms_threshold=0.5, force_suppress=False,
                       variances=(0.1, 0.1, 0.2, 0.2), nms_topk=-1):
    """(batch, anchors, 6) rows [class, score, xmin, ymin, xmax, ymax] from SSD's class
    probabilities (batch, classes, anchors; class 0 the background), offsets (batch, anchors
    * 4) and anchors (1, anchors, 4): detections under `threshold` dropped, the rest sorted by
    score and suppressed per class (class -1) at IoU >= nms_threshold; unused rows are -1."""
    params = {"clip": clip, "threshold": threshold, "background_id": background_id,
              "nms_threshold": nms_threshold, "force_suppress": force_suppress,
              "variances": _floats("multibox_detection", "variances", variances),
              "nms_topk": nms_topk}
    return _core._invoke("_npx_multibox_detection", (cls_prob, loc_pred, anchor), params, None)


def multibox_target(anchor, label, cls_pred, overlap_threshold=0.5, ignore_label=-1,
                    negative_mining_ratio=-1, negative_mining_thresh=0.5,
                    minimum_negative_samples=0, variances=(0.1, 0.1, 0.2, 0.2)):
    """SSD's training targets: (loc_target, loc_mask, cls_target) for anchors (1, anchors, 4),
    labels (batch, boxes, width >= 5; rows [class, xmin, ymin, xmax, ymax], a row of class -1
    ends an image's boxes) and class scores (batch, classes, anchors).

    Each box first claims the free anchor of highest IoU; anchors whose best IoU exceeds
    overlap_threshold are positives too. A positive gets cls_target class + 1, loc_mask 1 and
    its box's offsets (x, y, log w, log h) divided by variances. With negative_mining_ratio
    <= 0 every other anchor is a negative (cls_target 0); otherwise up to ratio x positives
    (at least minimum_negative_samples) of the anchors whose best IoU is under
    negative_mining_thresh, least likely background first. The rest get ignore_label."""
    params = {"overlap_threshold": overlap_threshold, "ignore_label": ignore_label,
              "negative_mining_ratio": negative_mining_ratio,
              "negative_mining_thresh": negative_mining_thresh,
              "minimum_negative_samples": minimum_negative_samples,
              "variances": _floats("multibox_target", "variances", variances)}
    return _core._invoke("_npx_multibox_target", (anchor, label, cls_pred), params, None)
