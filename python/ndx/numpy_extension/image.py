"""ndx.npx.image: MXNet's image operators. Images are (H, W, C) arrays or (N, H, W, C)
batches, as MXNet's npx.image takes them, until to_tensor makes them float32 (C, H, W) /
(N, C, H, W) in [0, 1]; normalize works on that layout.

to_tensor, resize and adjust_hue are C++ ops (`_image_to_tensor`, `_image_resize`,
`_image_adjust_hue`); the others are made of
ndx's elementwise and slicing ops, so autograd and hybridize see through them. The random
ones draw from ndx's generator (np.random.seed makes them repeat)."""
import numbers

import numpy as _onp

from .. import _core

# ITU-R 601 luma weights of R, G and B, which MXNet's contrast and saturation ops use.
_LUMA = (0.299, 0.587, 0.114)
# AlexNet's PCA of ImageNet's RGB values (MXNet's adjust_lighting).
_EIGVAL = (55.46, 4.794, 1.148)
_EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140), (-0.5836, -0.6948, 0.4203))


def _np():
    from .. import numpy as np
    return np


def _image(op, data, layout="HWC"):
    """data checked to be an ndarray of 3 or 4 dims (one image or a batch)."""
    np = _np()
    if not isinstance(data, np.ndarray):
        raise TypeError(f"[{op}] data must be an ndarray, got {type(data).__name__}")
    if data.ndim not in (3, 4):
        want = "(H, W, C) or (N, H, W, C)" if layout == "HWC" else "(C, H, W) or (N, C, H, W)"
        raise ValueError(f"[{op}] data must be {want}, got shape {data.shape}")
    if data.dtype == _onp.bool_ or _onp.issubdtype(data.dtype, _onp.complexfloating):
        raise TypeError(f"[{op}] data must be an integer or float image, got dtype {data.dtype}")
    return data


def _number(op, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"[{op}] {name} must be a number, got {type(v).__name__}")
    return float(v)


def _uniform(lo, hi):
    return float(_np().random.uniform(lo, hi))


def _like_input(op, out, data):
    """out in data's dtype: integer images clamp to the dtype's range and truncate, as MXNet's
    image ops store them (its saturate_cast)."""
    np = _np()
    if _onp.issubdtype(data.dtype, _onp.integer):
        info = _onp.iinfo(data.dtype)
        return np.clip(out, info.min, info.max).astype(data.dtype)
    return out.astype(data.dtype, copy=False)


def _float(data):
    return data if _onp.issubdtype(data.dtype, _onp.floating) else data.astype("float32")


def to_tensor(data):
    """(H, W, C) or (N, H, W, C) with values in [0, 255] -> float32 (C, H, W) or (N, C, H, W)
    with values in [0, 1] (divided by 255)."""
    return _core._invoke("_image_to_tensor", (_image("to_tensor", data),), {}, None)


def normalize(data, mean=0.0, std=1.0):
    """(data - mean) / std per channel of a (C, H, W) or (N, C, H, W) float array; mean and std
    are numbers or sequences of one value or one per channel."""
    np = _np()
    data = _image("normalize", data, "CHW")
    if not _onp.issubdtype(data.dtype, _onp.floating):
        raise TypeError(f"[normalize] data must be a float array (to_tensor's output), got "
                        f"dtype {data.dtype}")
    channels = data.shape[-3]
    shaped = []
    for name, v in (("mean", mean), ("std", std)):
        vals = [v] if isinstance(v, numbers.Real) else list(v) if isinstance(
            v, (tuple, list)) else None
        if vals is None or not all(isinstance(e, numbers.Real) and not isinstance(e, bool)
                                   for e in vals):
            raise TypeError(f"[normalize] {name} must be a number or a sequence of numbers, "
                            f"got {v!r}")
        if len(vals) not in (1, channels):
            raise ValueError(f"[normalize] {name} must hold 1 or {channels} values (the "
                             f"channels), got {len(vals)}")
        shaped.append(np.array(vals, dtype=data.dtype).reshape(len(vals), 1, 1))
    return (data - shaped[0]) / shaped[1]


def resize(data, size, keep_ratio=False, interp=1):
    """Resizes (H, W, C) / (N, H, W, C) as OpenCV does: size is (width, height), or one length
    for both sides (with keep_ratio: for the shorter side); interp is OpenCV's code: 0 nearest,
    1 bilinear, 2 bicubic, 3 area, 4 Lanczos (8x8). Integer images round and saturate."""
    data = _image("resize", data)
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        size = (int(size),)
    elif isinstance(size, (tuple, list)) and len(size) in (1, 2) and all(
            isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in size):
        size = tuple(int(s) for s in size)
    else:
        raise TypeError(f"[resize] size must be an int or (width, height), got {size!r}")
    return _core._invoke("_image_resize", (data,),
                         {"size": size, "keep_ratio": bool(keep_ratio), "interp": interp}, None)


def crop(data, x, y, width, height):
    """The height x width region of (H, W, C) / (N, H, W, C) whose top left pixel is (x, y)."""
    data = _image("crop", data)
    h, w = data.shape[-3], data.shape[-2]
    for name, v in (("x", x), ("y", y), ("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"[crop] {name} must be an int, got {type(v).__name__}")
    if x < 0 or y < 0 or width <= 0 or height <= 0 or x + width > w or y + height > h:
        raise ValueError(f"[crop] the region x={x}, y={y}, width={width}, height={height} is "
                         f"not inside the {w} x {h} image")
    return data[..., y:y + height, x:x + width, :]


def flip_left_right(data):
    """Mirrors (H, W, C) / (N, H, W, C) images along their width."""
    return _np().flip(_image("flip_left_right", data), axis=-2)


def flip_top_bottom(data):
    """Mirrors (H, W, C) / (N, H, W, C) images along their height."""
    return _np().flip(_image("flip_top_bottom", data), axis=-3)


def _probability(op, p):
    p = _number(op, "p", p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"[{op}] p must be in [0, 1], got {p}")
    return p


def random_flip_left_right(data, p=0.5):
    """flip_left_right with probability p (the whole input at once)."""
    p = _probability("random_flip_left_right", p)
    data = _image("random_flip_left_right", data)
    return flip_left_right(data) if _uniform(0.0, 1.0) < p else data


def random_flip_top_bottom(data, p=0.5):
    """flip_top_bottom with probability p (the whole input at once)."""
    p = _probability("random_flip_top_bottom", p)
    data = _image("random_flip_top_bottom", data)
    return flip_top_bottom(data) if _uniform(0.0, 1.0) < p else data


def _factors(op, lo, hi):
    lo, hi = _number(op, "min_factor", lo), _number(op, "max_factor", hi)
    if lo < 0 or hi < lo:
        raise ValueError(f"[{op}] needs 0 <= min_factor <= max_factor, got {lo}, {hi}")
    return lo, hi


def _channels(op, data):
    """data checked to hold images of 1 or 3 (RGB) channels, as MXNet's colour ops take."""
    data = _image(op, data)
    if data.shape[-1] not in (1, 3):
        raise ValueError(f"[{op}] images must have 1 or 3 channels, got shape {data.shape}")
    return data


def _gray(x):
    """0.299 R + 0.587 G + 0.114 B of float (..., 3) pixels, keeping the channel axis."""
    np = _np()
    return (x * np.array(_LUMA, dtype=x.dtype)).sum(axis=-1, keepdims=True)


def adjust_brightness(data, alpha):
    """data * alpha, in data's dtype."""
    data = _image("adjust_brightness", data)
    return _like_input("adjust_brightness", _float(data) * _number(
        "adjust_brightness", "alpha", alpha), data)


def adjust_contrast(data, alpha):
    """data * alpha + (1 - alpha) * each image's mean luma (0.299 R + 0.587 G + 0.114 B; the
    value itself for one channel)."""
    data = _channels("adjust_contrast", data)
    alpha = _number("adjust_contrast", "alpha", alpha)
    x = _float(data)
    mean = (_gray(x) if x.shape[-1] == 3 else x).mean(axis=(-3, -2, -1), keepdims=True)
    return _like_input("adjust_contrast", x * alpha + mean * (1.0 - alpha), data)


def adjust_saturation(data, alpha):
    """data * alpha + (1 - alpha) * each pixel's luma (0.299 R + 0.587 G + 0.114 B); images of
    one channel are returned as they are. (MXNet's kernel takes 0.114 B alone for the luma, a
    slip in its loop; ndx uses the whole weighted sum, which its documentation describes.)"""
    data = _channels("adjust_saturation", data)
    alpha = _number("adjust_saturation", "alpha", alpha)
    if data.shape[-1] == 1:
        return data.copy()
    x = _float(data)
    return _like_input("adjust_saturation", x * alpha + _gray(x) * (1.0 - alpha), data)


def random_brightness(data, min_factor, max_factor):
    """adjust_brightness by a factor drawn uniformly from [min_factor, max_factor]."""
    lo, hi = _factors("random_brightness", min_factor, max_factor)
    return adjust_brightness(data, _uniform(lo, hi))


def random_contrast(data, min_factor, max_factor):
    """adjust_contrast by a factor drawn uniformly from [min_factor, max_factor]."""
    lo, hi = _factors("random_contrast", min_factor, max_factor)
    return adjust_contrast(data, _uniform(lo, hi))


def random_saturation(data, min_factor, max_factor):
    """adjust_saturation by a factor drawn uniformly from [min_factor, max_factor]."""
    lo, hi = _factors("random_saturation", min_factor, max_factor)
    return adjust_saturation(data, _uniform(lo, hi))


def adjust_hue(data, alpha):
    """Rotates each pixel's hue by alpha turns (through HLS, RGB values in [0, 255]); images of
    one channel are returned as they are."""
    data = _channels("adjust_hue", data)
    return _core._invoke("_image_adjust_hue", (data,),
                         {"alpha": _number("adjust_hue", "alpha", alpha)}, None)


def random_hue(data, min_factor, max_factor):
    """adjust_hue by a number of turns drawn uniformly from [min_factor, max_factor] (gluon's
    RandomHue(h) passes [max(0, 1 - h), 1 + h]: a whole turn plus or minus h)."""
    lo, hi = _factors("random_hue", min_factor, max_factor)
    return adjust_hue(data, _uniform(lo, hi))


def random_color_jitter(data, brightness=0.0, contrast=0.0, saturation=0.0, hue=0.0):
    """Brightness, contrast and saturation by factors 1 + U(-v, v), and hue by U(-hue, hue)
    turns, in a random order, as MXNet's random_color_jitter (v = 0 leaves one out)."""
    values = []
    for name, v in (("brightness", brightness), ("contrast", contrast),
                    ("saturation", saturation), ("hue", hue)):
        values.append(_number("random_color_jitter", name, v))
        if values[-1] < 0:
            raise ValueError(f"[random_color_jitter] {name} must be >= 0, got {v}")
    data = _channels("random_color_jitter", data)
    adjust = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)
    for k in _np().random.permutation(4).asnumpy().tolist():
        if values[k] > 0:
            shift = _uniform(-values[k], values[k])
            data = adjust[k](data, shift if k == 3 else 1.0 + shift)
    return data


def adjust_lighting(data, alpha):
    """AlexNet's PCA lighting: adds eigvec @ (alpha * eigval) to each pixel's RGB values;
    alpha holds 3 numbers. Images of one channel are returned as they are."""
    np = _np()
    data = _channels("adjust_lighting", data)
    if not isinstance(alpha, (tuple, list)) or len(alpha) != 3:
        raise ValueError(f"[adjust_lighting] alpha must hold 3 numbers, got {alpha!r}")
    a = [_number("adjust_lighting", "alpha", v) for v in alpha]
    if data.shape[-1] == 1:
        return data.copy()
    rgb = _onp.array(_EIGVEC) @ (_onp.array(a) * _onp.array(_EIGVAL))
    x = _float(data)
    return _like_input("adjust_lighting", x + np.array(rgb, dtype=x.dtype), data)


def random_lighting(data, alpha_std=0.05):
    """adjust_lighting with alpha drawn from N(0, alpha_std) per channel."""
    s = _number("random_lighting", "alpha_std", alpha_std)
    if s < 0:
        raise ValueError(f"[random_lighting] alpha_std must be >= 0, got {alpha_std}")
    alpha = _np().random.normal(0.0, s, size=(3,)).asnumpy().tolist() if s > 0 else [0.0] * 3
    return adjust_lighting(data, alpha)
