"""MXNet's legacy ``mx.nd.image``: the image operators under MXNet's names and parameters,
over ``ndx.npx.image`` (see there for layouts and semantics). Images are (H, W, C) arrays or
(N, H, W, C) batches until to_tensor makes them float32 (C, H, W) / (N, C, H, W) in [0, 1];
normalize works on that layout. The random ones draw from ndx's generator
(``mx.random.seed`` repeats them). Results are NDArrays."""
import numbers

from .. import numpy as _np
from ..numpy_extension import image as _image
from ._op import _plain_inputs
from .ndarray import _wrap

__all__ = ["to_tensor", "normalize", "resize", "crop", "random_crop", "random_resized_crop",
           "flip_left_right", "flip_top_bottom", "random_flip_left_right",
           "random_flip_top_bottom", "random_brightness", "random_contrast",
           "random_saturation", "random_hue", "random_color_jitter", "adjust_lighting",
           "random_lighting"]


def to_tensor(data):
    """(H, W, C) / (N, H, W, C) in [0, 255] -> float32 (C, H, W) / (N, C, H, W) in [0, 1]."""
    return _wrap(_image.to_tensor(data))


def normalize(data, mean=0.0, std=1.0):
    """(data - mean) / std per channel of (C, H, W) / (N, C, H, W) float data."""
    return _wrap(_image.normalize(data, mean=mean, std=std))


def resize(data, size=(), keep_ratio=False, interp=1):
    """Resizes to size (width, height), or one length for both sides (the shorter side with
    keep_ratio); interp: OpenCV's code (0 nearest, 1 bilinear, 2 bicubic, 3 area,
    4 Lanczos)."""
    if isinstance(size, (tuple, list)) and len(size) == 0:
        raise ValueError("[image.resize] size is required")
    return _wrap(_image.resize(data, size, keep_ratio=keep_ratio, interp=interp))


def crop(data, x, y, width, height):
    """The height x width region whose top left pixel is (x, y)."""
    return _wrap(_image.crop(data, x, y, width, height))


def flip_left_right(data):
    return _wrap(_image.flip_left_right(data))


def flip_top_bottom(data):
    return _wrap(_image.flip_top_bottom(data))


def random_flip_left_right(data):
    """flip_left_right with probability 0.5."""
    return _wrap(_image.random_flip_left_right(data))


def random_flip_top_bottom(data):
    """flip_top_bottom with probability 0.5."""
    return _wrap(_image.random_flip_top_bottom(data))


def random_brightness(data, min_factor, max_factor):
    return _wrap(_image.random_brightness(data, min_factor, max_factor))


def random_contrast(data, min_factor, max_factor):
    return _wrap(_image.random_contrast(data, min_factor, max_factor))


def random_saturation(data, min_factor, max_factor):
    return _wrap(_image.random_saturation(data, min_factor, max_factor))


def random_hue(data, min_factor, max_factor):
    return _wrap(_image.random_hue(data, min_factor, max_factor))


def random_color_jitter(data, brightness=0.0, contrast=0.0, saturation=0.0, hue=0.0):
    return _wrap(_image.random_color_jitter(data, brightness=brightness, contrast=contrast,
                                            saturation=saturation, hue=hue))


def adjust_lighting(data, alpha):
    """AlexNet's PCA lighting with the 3 numbers alpha."""
    return _wrap(_image.adjust_lighting(data, tuple(alpha)))


def random_lighting(data, alpha_std=0.05):
    return _wrap(_image.random_lighting(data, alpha_std=alpha_std))


def _size_of(data):
    if not isinstance(data, _np.ndarray) or data.ndim not in (3, 4):
        raise ValueError(f"[image] data must be (H, W, C) or (N, H, W, C), got "
                         f"{getattr(data, 'shape', type(data).__name__)}")
    return data.shape[-2], data.shape[-3]  # width, height


def _target(who, width, height):
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v <= 0:
            raise ValueError(f"[image.{who}] {name} must be a positive int, got {v!r}")
    return int(width), int(height)


def _scale_down(src_w, src_h, w, h):
    """(w, h) shrunk to fit inside src with its aspect ratio: gluon's transforms' helper
    (MXNet's ScaleDown), imported here lazily (gluon imports after nd)."""
    from ..gluon.data.vision.transforms import _scale_down as scale_down
    return scale_down(src_w, src_h, w, h)


def _uniform(lo, hi):
    return float(_np.random.uniform(lo, hi))


def _crop_resize(data, x, y, w, h, width, height, interp):
    out = _image.crop(data, x, y, w, h)
    if (w, h) != (width, height):
        out = _image.resize(out, (width, height), interp=interp)
    return out


def _range(who, name, r):
    r = tuple(float(v) for v in r)
    if len(r) != 2 or not 0.0 <= r[0] <= r[1] <= 1.0:
        raise ValueError(f"[image.{who}] {name} must be (lo, hi) with 0 <= lo <= hi <= 1, "
                         f"got {r}")
    return r


def random_crop(data, xrange=(0.0, 1.0), yrange=(0.0, 1.0), width=None, height=None,
                interp=1):
    """A crop of width x height (shrunk with its aspect ratio kept where the image is
    smaller, then resized up to width x height with `interp`) at a random position: its left
    edge at U(xrange) of the free width, its top at U(yrange) of the free height."""
    width, height = _target("random_crop", width, height)
    xr, yr = _range("random_crop", "xrange", xrange), _range("random_crop", "yrange", yrange)
    src_w, src_h = _size_of(data)
    w, h = _scale_down(src_w, src_h, width, height)
    x = int(_uniform(*xr) * (src_w - w))
    y = int(_uniform(*yr) * (src_h - h))
    return _wrap(_crop_resize(data, x, y, w, h, width, height, interp))


def random_resized_crop(data, width=None, height=None, area=(0.08, 1.0),
                        ratio=(3.0 / 4.0, 4.0 / 3.0), interp=1, max_trial=10):
    """A crop covering a random fraction U(area) of the image with an aspect ratio drawn
    log-uniformly from `ratio`, at a random position, resized to width x height; after
    max_trial draws that do not fit, a center crop of the target's aspect ratio. (MXNet's
    fallback misplaces that center crop; ndx centers it.)"""
    import math
    width, height = _target("random_resized_crop", width, height)
    src_w, src_h = _size_of(data)
    lo, hi = (float(v) for v in area)
    rlo, rhi = (float(v) for v in ratio)
    for _ in range(int(max_trial)):
        target = _uniform(lo, hi) * src_w * src_h
        r = math.exp(_uniform(math.log(rlo), math.log(rhi)))
        w = int(round(math.sqrt(target * r)))
        h = int(round(math.sqrt(target / r)))
        if 0 < w <= src_w and 0 < h <= src_h:
            x = int(_uniform(0.0, 1.0) * (src_w - w))
            y = int(_uniform(0.0, 1.0) * (src_h - h))
            return _wrap(_crop_resize(data, x, y, w, h, width, height, interp))
    w, h = _scale_down(src_w, src_h, width, height)
    return _wrap(_crop_resize(data, (src_w - w) // 2, (src_h - h) // 2, w, h, width, height,
                              interp))


_plain_inputs(globals())
