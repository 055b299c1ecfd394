"""MXNet's image augmenters (``mx.image.Augmenter`` and its subclasses, ``CreateAugmenter``),
re-exported by ndx.image. An augmenter is called on one (H, W, C) image and returns the
augmented image; the color augmenters need a floating-point image (CastAug makes one) and, as
MXNet's, work in place where MXNet's do (brightness, contrast, saturation, lighting, color
normalization). Crop positions, flips, the order of RandomOrderAug and the brightness,
contrast, saturation and hue factors are drawn from Python's ``random`` module, the PCA
lighting noise from NumPy's global random state, as MXNet draws them, so ``random.seed`` /
``numpy.random.seed`` reproduce a run."""
import json
import numbers
import random

import numpy as onp

from . import numpy as _np
from .image import center_crop, color_normalize, fixed_crop, imresize, random_crop, resize_short

__all__ = ["Augmenter", "BrightnessJitterAug", "CastAug", "CenterCropAug", "ColorJitterAug",
           "ColorNormalizeAug", "ContrastJitterAug", "CreateAugmenter", "ForceResizeAug",
           "HorizontalFlipAug", "HueJitterAug", "LightingAug", "RandomCropAug", "RandomGrayAug",
           "RandomOrderAug", "RandomSizedCropAug", "ResizeAug", "SaturationJitterAug",
           "SequentialAug", "random_size_crop"]

# ITU-R 601 luma weights (MXNet's gray coefficients for contrast and saturation)
_LUMA = (0.299, 0.587, 0.114)
# RGB <-> YIQ (MXNet's HueJitterAug matrices)
_RGB_TO_YIQ = onp.array([[0.299, 0.587, 0.114],
                         [0.596, -0.274, -0.321],
                         [0.211, -0.523, 0.311]])
_YIQ_TO_RGB = onp.array([[1.0, 0.956, 0.621],
                         [1.0, -0.272, -0.647],
                         [1.0, -1.107, 1.705]])
# the weights RandomGrayAug mixes channels with (each output channel the same gray)
_GRAY_WEIGHTS = (0.21, 0.72, 0.07)
# ImageNet statistics CreateAugmenter uses: mean / std of RGB, PCA of the pixel covariance
_IMAGENET_MEAN = (123.68, 116.28, 103.53)
_IMAGENET_STD = (58.395, 57.12, 57.375)
_IMAGENET_EIGVAL = (55.46, 4.794, 1.148)
_IMAGENET_EIGVEC = ((-0.5675, 0.7192, 0.4009),
                   (-0.5808, -0.0045, -0.8140),
                   (-0.5836, -0.6948, 0.4203))


# ---------------------------------------------------------------------------- argument checks

def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _real(who, name, value, low=None, high=None, low_open=False):
    """value as a float, checked to lie in [low, high] ((low, high] with low_open)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"[{who}] {name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not onp.isfinite(v) or (low is not None and (v <= low if low_open else v < low)) or (
            high is not None and v > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"[{who}] {name} must be in {'(' if low_open else '['}{lo}, {hi}], "
                         f"got {value!r}")
    return v


def _data_shape(who, data_shape):
    """data_shape checked to be a (channels, height, width) tuple of positive ints."""
    if not isinstance(data_shape, (tuple, list)):
        raise TypeError(f"[{who}] data_shape must be a (channels, height, width) tuple, got "
                        f"{type(data_shape).__name__}")
    if len(data_shape) != 3 or not all(_is_int(d) and d > 0 for d in data_shape):
        raise ValueError(f"[{who}] data_shape must be (channels, height, width) of positive "
                         f"ints, got {tuple(data_shape)!r}")
    return tuple(int(d) for d in data_shape)


def _probability(who, p):
    return _real(who, "p", p, 0.0, 1.0)


def _size_pair(who, name, size):
    """size as a (width, height) tuple of positive ints."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"[{who}] {name} must be a (width, height) tuple of ints, got "
                        f"{type(size).__name__} {size!r}")
    if len(size) != 2:
        raise ValueError(f"[{who}] {name} must be (width, height), got {len(size)} values "
                         f"{tuple(size)!r}")
    if not all(_is_int(s) for s in size):
        raise TypeError(f"[{who}] {name} must hold two ints, got {tuple(size)!r}")
    if min(size) < 1:
        raise ValueError(f"[{who}] {name} must be positive, got {tuple(size)!r}")
    return int(size[0]), int(size[1])


def _check_interp(who, interp):
    """interp if it is one of MXNet's (OpenCV's) codes: 0 nearest, 1 bilinear, 2 bicubic, 3
    area, 4 Lanczos, 9 auto, 10 random."""
    if not _is_int(interp):
        raise TypeError(f"[{who}] interp must be an int, got {type(interp).__name__}")
    if interp not in (0, 1, 2, 3, 4, 9, 10):
        raise ValueError(f"[{who}] interp must be 0 (nearest), 1 (bilinear), 2 (bicubic), "
                         f"3 (area), 4 (Lanczos), 9 (auto) or 10 (random), got {interp!r}")
    return int(interp)


def _image(who, src):
    """src, checked to be an (H, W, C) ndx array."""
    if not isinstance(src, _np.ndarray):
        raise TypeError(f"[{who}] expects an (H, W, C) ndx array, got {type(src).__name__}")
    if src.ndim != 3:
        raise ValueError(f"[{who}] expects an (H, W, C) image, got shape {tuple(src.shape)}")
    return src


def _color_image(who, src):
    """src, checked to be an (H, W, 3) floating-point ndx array."""
    _image(who, src)
    if src.shape[2] != 3:
        raise ValueError(f"[{who}] expects an RGB image (H, W, 3), got shape "
                         f"{tuple(src.shape)}")
    _float_image(who, src)
    return src


def _float_image(who, src):
    if not onp.issubdtype(onp.dtype(src.dtype), onp.floating):
        raise TypeError(f"[{who}] expects a floating-point image (cast it first, e.g. with "
                        f"CastAug), got {onp.dtype(src.dtype).name}")
    return src


def _vector(who, name, value, shape):
    """value as a float64 NumPy array of the given shape."""
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    try:
        arr = onp.asarray(value, dtype=onp.float64)
    except (TypeError, ValueError):
        raise TypeError(f"[{who}] {name} must be an array of numbers of shape {shape}, got "
                        f"{type(value).__name__}") from None
    if arr.shape != shape:
        raise ValueError(f"[{who}] {name} must have shape {shape}, got {arr.shape}")
    return arr


def _jsonable(value):
    """value with arrays as (nested) lists and NumPy scalars as Python numbers."""
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    if isinstance(value, onp.ndarray):
        return value.tolist()
    if isinstance(value, onp.generic):
        return value.item()
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    return value


# ------------------------------------------------------------------------------- augmenters

class Augmenter:
    """The base class of image augmenters: subclasses implement ``__call__(src)``, taking and
    returning an (H, W, C) image; the keyword arguments given to __init__ are what dumps()
    describes."""

    def __init__(self, **kwargs):
        self._kwargs = {k: _jsonable(v) for k, v in kwargs.items()}

    def dumps(self):
        """The augmenter as a JSON string: ``[class name in lower case, {argument: value}]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError(f"[{type(self).__name__}] an Augmenter subclass must define "
                                  f"__call__(src)")


def _augmenter_list(who, ts):
    if not isinstance(ts, (list, tuple)):
        raise TypeError(f"[{who}] ts must be a list of augmenters, got {type(ts).__name__}")
    for i, t in enumerate(ts):
        if not callable(t):
            raise TypeError(f"[{who}] ts[{i}] must be an augmenter (callable), got "
                            f"{type(t).__name__}")
    return list(ts)


class SequentialAug(Augmenter):
    """Applies the augmenters ts one after another."""

    def __init__(self, ts):
        super().__init__()
        self.ts = _augmenter_list(type(self).__name__, ts)

    def dumps(self):
        """``[class name in lower case, [each augmenter's dumps()]]`` (a list, as MXNet's)."""
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src):
        for t in self.ts:
            src = t(src)
        return src


class RandomOrderAug(Augmenter):
    """Applies the augmenters ts in an order drawn anew at each call (random.shuffle of ts,
    in place, as MXNet's)."""

    def __init__(self, ts):
        super().__init__()
        self.ts = _augmenter_list(type(self).__name__, ts)

    def dumps(self):
        """``[class name in lower case, [each augmenter's dumps()]]`` (a list, as MXNet's)."""
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src):
        random.shuffle(self.ts)
        for t in self.ts:
            src = t(src)
        return src


class ResizeAug(Augmenter):
    """Resizes the shorter side to size (resize_short)."""

    def __init__(self, size, interp=2):
        who = type(self).__name__
        if not _is_int(size):
            raise TypeError(f"[{who}] size must be an int (the shorter side's length), got "
                            f"{type(size).__name__}")
        if size < 1:
            raise ValueError(f"[{who}] size must be positive, got {size}")
        super().__init__(size=size, interp=interp)
        self.size, self.interp = int(size), _check_interp(who, interp)

    def __call__(self, src):
        return resize_short(_image(type(self).__name__, src), self.size, self.interp)


class ForceResizeAug(Augmenter):
    """Resizes to size = (width, height), whatever the aspect ratio."""

    def __init__(self, size, interp=2):
        who = type(self).__name__
        super().__init__(size=size, interp=interp)
        self.size, self.interp = _size_pair(who, "size", size), _check_interp(who, interp)

    def __call__(self, src):
        _image(type(self).__name__, src)
        return imresize(src, self.size[0], self.size[1], interp=self.interp)


class RandomCropAug(Augmenter):
    """A crop at a random place (random_crop), resized to size = (width, height)."""

    def __init__(self, size, interp=2):
        who = type(self).__name__
        super().__init__(size=size, interp=interp)
        self.size, self.interp = _size_pair(who, "size", size), _check_interp(who, interp)

    def __call__(self, src):
        return random_crop(_image(type(self).__name__, src), self.size, self.interp)[0]


def _area_range(who, area):
    if isinstance(area, (tuple, list)):
        if len(area) != 2:
            raise ValueError(f"[{who}] area must be a number or (min, max), got {len(area)} "
                             f"values")
        lo = _real(who, "area[0]", area[0], 0.0, 1.0, low_open=True)
        hi = _real(who, "area[1]", area[1], 0.0, 1.0, low_open=True)
        if lo > hi:
            raise ValueError(f"[{who}] area must be (min, max) with min <= max, got "
                             f"{tuple(area)!r}")
        return lo, hi
    return _real(who, "area", area, 0.0, 1.0, low_open=True), 1.0


def _ratio_range(who, ratio):
    if not isinstance(ratio, (tuple, list)):
        raise TypeError(f"[{who}] ratio must be a (min, max) tuple of aspect ratios, got "
                        f"{type(ratio).__name__}")
    if len(ratio) != 2:
        raise ValueError(f"[{who}] ratio must be (min, max), got {len(ratio)} values")
    lo = _real(who, "ratio[0]", ratio[0], 0.0, low_open=True)
    hi = _real(who, "ratio[1]", ratio[1], 0.0, low_open=True)
    if lo > hi:
        raise ValueError(f"[{who}] ratio must be (min, max) with min <= max, got "
                         f"{tuple(ratio)!r}")
    return lo, hi


def _random_size_crop(src, size, area, ratio, interp):
    h, w = src.shape[0], src.shape[1]
    log_lo, log_hi = onp.log(ratio[0]), onp.log(ratio[1])
    for _ in range(10):
        target = random.uniform(area[0], area[1]) * (h * w)
        aspect = onp.exp(random.uniform(log_lo, log_hi))  # width / height, log-uniform
        new_w = int(round(onp.sqrt(target * aspect)))
        new_h = int(round(onp.sqrt(target / aspect)))
        if 0 < new_w <= w and 0 < new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)  # no try fitted


def random_size_crop(src, size, area, ratio, interp=2):
    """(a crop of src of random area and aspect ratio, resized to size = (width, height),
    (x0, y0, w, h)), as MXNet's: up to 10 tries draw an area fraction uniformly from area (a
    number: (area, 1.0); or (min, max)) and a width / height ratio log-uniformly from ratio =
    (min, max); the first crop that fits is placed at random; if none fits, center_crop."""
    who = "random_size_crop"
    _image(who, src)
    size = _size_pair(who, "size", size)
    return _random_size_crop(src, size, _area_range(who, area), _ratio_range(who, ratio),
                             _check_interp(who, interp))


class RandomSizedCropAug(Augmenter):
    """A crop of random area and aspect ratio (random_size_crop), resized to size =
    (width, height)."""

    def __init__(self, size, area, ratio, interp=2):
        who = type(self).__name__
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = _size_pair(who, "size", size)
        _area_range(who, area)
        _ratio_range(who, ratio)
        self.area, self.ratio, self.interp = area, ratio, _check_interp(who, interp)

    def __call__(self, src):
        who = type(self).__name__
        return _random_size_crop(_image(who, src), self.size, _area_range(who, self.area),
                                 _ratio_range(who, self.ratio), self.interp)[0]


class CenterCropAug(Augmenter):
    """The centred crop (center_crop), resized to size = (width, height)."""

    def __init__(self, size, interp=2):
        who = type(self).__name__
        super().__init__(size=size, interp=interp)
        self.size, self.interp = _size_pair(who, "size", size), _check_interp(who, interp)

    def __call__(self, src):
        return center_crop(_image(type(self).__name__, src), self.size, self.interp)[0]


class BrightnessJitterAug(Augmenter):
    """src * alpha, alpha = 1 + uniform(-brightness, brightness) (in place)."""

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = _real(type(self).__name__, "brightness", brightness, 0.0)

    def __call__(self, src):
        _float_image(type(self).__name__, _image(type(self).__name__, src))
        alpha = 1.0 + random.uniform(-self.brightness, self.brightness)
        src *= alpha
        return src


class ContrastJitterAug(Augmenter):
    """src * alpha + (1 - alpha) * (the image's mean gray level), alpha = 1 +
    uniform(-contrast, contrast); gray = 0.299 R + 0.587 G + 0.114 B (in place)."""

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = _real(type(self).__name__, "contrast", contrast, 0.0)
        self.coef = _np.array([[list(_LUMA)]], dtype="float32")

    def __call__(self, src):
        _color_image(type(self).__name__, src)
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        # the mean over pixels of the luma, times 1 - alpha (sum over H*W*3 values, times 3)
        gray = (src * self.coef).sum() * (3.0 * (1.0 - alpha) / src.size)
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """src * alpha + (1 - alpha) * (each pixel's gray level), alpha = 1 +
    uniform(-saturation, saturation); gray = 0.299 R + 0.587 G + 0.114 B (in place)."""

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = _real(type(self).__name__, "saturation", saturation, 0.0)
        self.coef = _np.array([[list(_LUMA)]], dtype="float32")

    def __call__(self, src):
        _color_image(type(self).__name__, src)
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        gray = (src * self.coef).sum(axis=2, keepdims=True) * (1.0 - alpha)
        src *= alpha
        src += gray
        return src


def _hue_matrix(alpha):
    """The (3, 3) matrix t with rgb' = rgb @ t rotating hue by alpha * pi in YIQ space."""
    c, s = onp.cos(alpha * onp.pi), onp.sin(alpha * onp.pi)
    rotate = onp.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    return (_YIQ_TO_RGB @ rotate @ _RGB_TO_YIQ).T


class HueJitterAug(Augmenter):
    """Rotates hue by alpha * pi, alpha = uniform(-hue, hue): pixels go to YIQ, I and Q are
    rotated and the result goes back to RGB (MXNet's linear approximation). Returns a new
    array."""

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = _real(type(self).__name__, "hue", hue, 0.0)
        self.tyiq, self.ityiq = _RGB_TO_YIQ.copy(), _YIQ_TO_RGB.copy()

    def __call__(self, src):
        _color_image(type(self).__name__, src)
        alpha = random.uniform(-self.hue, self.hue)
        return _np.dot(src, _np.array(_hue_matrix(alpha), dtype=src.dtype))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter (those given > 0), in random order."""

    def __init__(self, brightness, contrast, saturation):
        who = type(self).__name__
        ts = []
        if _real(who, "brightness", brightness, 0.0) > 0:
            ts.append(BrightnessJitterAug(brightness))
        if _real(who, "contrast", contrast, 0.0) > 0:
            ts.append(ContrastJitterAug(contrast))
        if _real(who, "saturation", saturation, 0.0) > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet's PCA lighting noise: adds eigvec @ (alpha * eigval) to every pixel, alpha
    drawn from N(0, alphastd) per component by NumPy's global random state (in place).
    eigval: (3,), eigvec: (3, 3) with the eigenvectors as columns."""

    def __init__(self, alphastd, eigval, eigvec):
        who = type(self).__name__
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = _real(who, "alphastd", alphastd, 0.0)
        self.eigval = _vector(who, "eigval", eigval, (3,))
        self.eigvec = _vector(who, "eigvec", eigvec, (3, 3))

    def __call__(self, src):
        _color_image(type(self).__name__, src)
        alpha = onp.random.normal(0, self.alphastd, size=(3,))
        rgb = (self.eigvec * alpha) @ self.eigval
        src += _np.array(rgb, dtype=src.dtype)
        return src


def _stat_array(who, name, value):
    """mean / std as an ndx float32 array (None stays None)."""
    if value is None or isinstance(value, _np.ndarray):
        return value
    if isinstance(value, (str, bytes)):
        raise TypeError(f"[{who}] {name} must be an array of numbers or None, got "
                        f"{type(value).__name__}")
    try:
        arr = onp.asarray(value, dtype=onp.float32)
    except (TypeError, ValueError):
        raise TypeError(f"[{who}] {name} must be an array of numbers or None, got "
                        f"{type(value).__name__}") from None
    return _np.array(arr)


class ColorNormalizeAug(Augmenter):
    """(src - mean) / std (color_normalize, in place); mean or std None skips that step."""

    def __init__(self, mean, std):
        who = type(self).__name__
        super().__init__(mean=mean, std=std)
        self.mean = _stat_array(who, "mean", mean)
        self.std = _stat_array(who, "std", std)

    def __call__(self, src):
        _float_image(type(self).__name__, _image(type(self).__name__, src))
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """With probability p, every channel becomes 0.21 R + 0.72 G + 0.07 B (the image keeps 3
    channels; a new array)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = _probability(type(self).__name__, p)
        self.mat = onp.repeat(onp.array(_GRAY_WEIGHTS)[:, None], 3, axis=1)

    def __call__(self, src):
        _color_image(type(self).__name__, src)
        if random.random() < self.p:
            src = _np.dot(src, _np.array(self.mat, dtype=src.dtype))
        return src


class HorizontalFlipAug(Augmenter):
    """With probability p, mirrors the image left to right."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = _probability(type(self).__name__, p)

    def __call__(self, src):
        _image(type(self).__name__, src)
        if random.random() < self.p:
            src = _np.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Casts the image to typ (float32 by default)."""

    def __init__(self, typ="float32"):
        try:
            name = onp.dtype(typ).name
        except TypeError:
            raise TypeError(f"[{type(self).__name__}] typ must be a dtype, got "
                            f"{typ!r}") from None
        super().__init__(type=name)
        self.typ = name

    def __call__(self, src):
        return _image(type(self).__name__, src).astype(self.typ)


def _stat_arg(name, value, default):
    """CreateAugmenter's mean / std: True for the ImageNet values, None / False for none, else
    an array of 1 or 3 numbers."""
    who = "CreateAugmenter"
    if value is True:
        return _np.array(default, dtype="float32")
    if value is None or value is False:
        return None
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    if isinstance(value, (str, bytes)) or not isinstance(value, (onp.ndarray, list, tuple)):
        raise TypeError(f"[{who}] {name} must be True, None or an array of 1 or 3 numbers, got "
                        f"{type(value).__name__}")
    try:
        arr = onp.asarray(value, dtype=onp.float32)
    except (TypeError, ValueError):
        raise TypeError(f"[{who}] {name} must hold numbers, got {value!r}") from None
    if arr.ndim != 1 or arr.shape[0] not in (1, 3):
        raise ValueError(f"[{who}] {name} must have shape (1,) or (3,), got {arr.shape}")
    return _np.array(arr)


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False,  # noqa: N802
                    rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                    saturation=0, hue=0, pca_noise=0, rand_gray=0, inter_method=2):
    """MXNet's standard augmenter list for images of data_shape = (C, H, W), in MXNet's order:
    ResizeAug(resize) when resize > 0; a crop to (W, H): RandomSizedCropAug (area 0.08 - 1,
    ratio 3/4 - 4/3) with rand_resize (which needs rand_crop), else RandomCropAug with
    rand_crop, else CenterCropAug; HorizontalFlipAug(0.5) with rand_mirror; CastAug(float32);
    ColorJitterAug when brightness, contrast or saturation; HueJitterAug(hue);
    LightingAug(pca_noise) with ImageNet's eigenvalues / eigenvectors; RandomGrayAug(rand_gray);
    ColorNormalizeAug(mean, std) when either is given (True: ImageNet's mean
    (123.68, 116.28, 103.53) / std (58.395, 57.12, 57.375))."""
    who = "CreateAugmenter"
    _data_shape(who, data_shape)
    if not _is_int(resize) or resize < 0:
        raise ValueError(f"[{who}] resize must be an int >= 0 (0: no resizing), got {resize!r}")
    if rand_resize and not rand_crop:
        raise ValueError(f"[{who}] rand_resize=True needs rand_crop=True (random sized "
                         f"cropping is a random crop)")
    inter_method = _check_interp(who, inter_method)
    for name, v in (("brightness", brightness), ("contrast", contrast),
                    ("saturation", saturation), ("hue", hue), ("pca_noise", pca_noise)):
        _real(who, name, v, 0.0)
    _real(who, "rand_gray", rand_gray, 0.0, 1.0)
    mean = _stat_arg("mean", mean, _IMAGENET_MEAN)
    std = _stat_arg("std", std, _IMAGENET_STD)

    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0),
                                          inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        auglist.append(LightingAug(pca_noise, onp.array(_IMAGENET_EIGVAL),
                                   onp.array(_IMAGENET_EIGVEC)))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist
