"""gluon.data.vision.transforms: MXNet's image transforms as blocks over npx.image. Images are
(H, W, C) arrays (uint8 or float) until ToTensor; Normalize takes ToTensor's (C, H, W). The
random transforms draw from ndx's generator, so np.random.seed repeats them."""
import math
import numbers

from .... import numpy as np
from ....numpy_extension import image
from ...block import Block, HybridBlock
from ...nn.basic_layers import HybridSequential, Sequential


def _rest(out, args):
    """MXNet 2's transforms pass any further arguments (a label) through: x alone comes back
    alone, (x, label) as (transformed x, label)."""
    return (out,) + args if args else out


__all__ = ["Compose", "HybridCompose", "Cast", "ToTensor", "Normalize", "Resize", "CenterCrop",
           "CropResize", "RandomResizedCrop", "RandomCrop", "RandomFlipLeftRight",
           "RandomFlipTopBottom", "RandomBrightness", "RandomContrast", "RandomSaturation",
           "RandomHue", "RandomColorJitter", "RandomLighting", "RandomGray", "RandomApply",
           "HybridRandomApply", "Rotate", "RandomRotation"]


class Compose(Sequential):
    """The transforms in turn: Compose([ToTensor(), Normalize(0.13, 0.31)])."""

    def __init__(self, transforms):
        super().__init__()
        for t in transforms:
            if not callable(t):
                raise TypeError(f"[Compose] every transform must be callable, got "
                                f"{type(t).__name__}")
            self.add(t if isinstance(t, Block) else _Lambda(t))

    def forward(self, x, *args):
        for child in self._children.values():
            out = child(x, *args)
            x, args = (out[0], tuple(out[1:])) if args else (out, ())
        return _rest(x, args)


class HybridCompose(HybridSequential):
    """Compose of HybridBlocks, which hybridize() captures as one graph."""

    def __init__(self, transforms):
        super().__init__()
        for t in transforms:
            if not isinstance(t, HybridBlock):
                raise TypeError(f"[HybridCompose] every transform must be a HybridBlock, got "
                                f"{type(t).__name__}")
            self.add(t)


class _Lambda(Block):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def forward(self, *args):
        return self._fn(*args)


class Cast(HybridBlock):
    """x.astype(dtype)."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def forward(self, x, *args):
        return _rest(x.astype(self._dtype), args)


class ToTensor(HybridBlock):
    """(H, W, C) / (N, H, W, C) in [0, 255] -> float32 (C, H, W) / (N, C, H, W) in [0, 1]."""

    def forward(self, x, *args):
        return _rest(image.to_tensor(x), args)


class Normalize(HybridBlock):
    """(x - mean) / std per channel of (C, H, W) / (N, C, H, W); mean and std are numbers or
    one value per channel."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean, self._std = mean, std

    def forward(self, x, *args):
        return _rest(image.normalize(x, self._mean, self._std), args)


def _size(op, size):
    """(width, height) from an int or a pair."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool) and size > 0:
        return int(size), int(size)
    if (isinstance(size, (tuple, list)) and len(size) == 2
            and all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s > 0
                    for s in size)):
        return int(size[0]), int(size[1])
    raise ValueError(f"[{op}] size must be a positive int or (width, height), got {size!r}")


class Resize(HybridBlock):
    """npx.image.resize: size is (width, height), or one length for both sides (with keep_ratio:
    the shorter side); interpolation is OpenCV's code: 0 nearest, 1 bilinear, 2 bicubic, 3
    area, 4 Lanczos."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._size = size if isinstance(size, numbers.Integral) else _size("Resize", size)
        self._keep, self._interp = bool(keep_ratio), interpolation

    def forward(self, x, *args):
        return _rest(image.resize(x, self._size, self._keep, self._interp), args)


def _hw(x):
    return x.shape[-3], x.shape[-2]


def _crop_resize(x, x0, y0, w, h, size, interp):
    out = image.crop(x, x0, y0, w, h)
    if size is not None and (w, h) != size:
        out = image.resize(out, size, interp=interp)
    return out


def _scale_down(src_w, src_h, w, h):
    """(w, h) shrunk to fit inside src_w x src_h with its aspect ratio (MXNet's scale_down)."""
    w, h = float(w), float(h)
    if src_h < h:
        w, h = w * src_h / h, float(src_h)
    if src_w < w:
        w, h = float(src_w), h * src_w / w
    return int(w), int(h)


def _center_crop(x, size, interp):
    ih, iw = _hw(x)
    w, h = _scale_down(iw, ih, *size)
    return _crop_resize(x, (iw - w) // 2, (ih - h) // 2, w, h, size, interp)


class CenterCrop(Block):
    """The centre region of size (width, height); an image smaller than that gives its largest
    centred region of the same aspect ratio, resized to size (MXNet's center_crop)."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._size, self._interp = _size("CenterCrop", size), interpolation

    def forward(self, x, *args):
        return _rest(_center_crop(x, self._size, self._interp), args)


class CropResize(HybridBlock):
    """The width x height region at (x, y), resized to size (width, height) when given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._box = (x, y, width, height)
        self._size = None if size is None else _size("CropResize", size)
        self._interp = 1 if interpolation is None else interpolation

    def forward(self, x, *args):
        return _rest(_crop_resize(x, *self._box, self._size, self._interp), args)


def _randint(lo, hi):
    """An int drawn uniformly from [lo, hi] (inclusive)."""
    return int(np.random.randint(lo, hi + 1))


class RandomResizedCrop(Block):
    """A region of a random area fraction (scale) and aspect ratio (ratio, drawn log-uniformly)
    resized to size; after 10 draws that do not fit, the centre crop (MXNet's
    random_size_crop)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._size = _size("RandomResizedCrop", size)
        if isinstance(scale, numbers.Real):  # (MXNet's random_size_crop: area -> (area, 1))
            scale = (scale, 1.0)
        for name, pair in (("scale", scale), ("ratio", ratio)):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(
                    isinstance(v, numbers.Real) for v in pair)):
                raise TypeError(f"[RandomResizedCrop] {name} must be a pair of numbers "
                                f"(low, high), got {pair!r}")
            if not 0 < pair[0] <= pair[1]:
                raise ValueError(f"[RandomResizedCrop] {name} must be (low, high) with "
                                 f"0 < low <= high, got {pair!r}")
        self._scale, self._ratio, self._interp = tuple(scale), tuple(ratio), interpolation

    def forward(self, x, *args):
        ih, iw = _hw(x)
        area = ih * iw
        log_ratio = (math.log(self._ratio[0]), math.log(self._ratio[1]))
        for _ in range(10):
            target = float(np.random.uniform(*self._scale)) * area
            aspect = math.exp(float(np.random.uniform(*log_ratio)))
            w = int(round(math.sqrt(target * aspect)))
            h = int(round(math.sqrt(target / aspect)))
            if 0 < w <= iw and 0 < h <= ih:
                crop = _crop_resize(x, _randint(0, iw - w), _randint(0, ih - h), w, h,
                                    self._size, self._interp)
                return _rest(crop, args)
        return _rest(_center_crop(x, self._size, self._interp), args)


class RandomCrop(Block):
    """A random region of size (width, height), after padding each side of height and width
    by pad pixels of pad_value when pad is given."""

    def __init__(self, size, pad=None, pad_value=0):
        super().__init__()
        self._size, self._pad, self._value = _size("RandomCrop", size), pad, pad_value

    def forward(self, x, *args):
        if self._pad:
            p = self._pad
            widths = [(0, 0)] * (x.ndim - 3) + [(p, p), (p, p), (0, 0)]
            x = np.pad(x, widths, mode="constant", constant_values=self._value)
        ih, iw = _hw(x)
        w, h = self._size
        if w > iw or h > ih:
            raise ValueError(f"[RandomCrop] a {w} x {h} crop does not fit in the {iw} x {ih} "
                             f"image")
        return _rest(image.crop(x, _randint(0, iw - w), _randint(0, ih - h), w, h), args)


class RandomFlipLeftRight(Block):
    """Mirrors the width with probability p."""

    def __init__(self, p=0.5):
        super().__init__()
        self._p = p

    def forward(self, x, *args):
        return _rest(image.random_flip_left_right(x, self._p), args)


class RandomFlipTopBottom(Block):
    """Mirrors the height with probability p."""

    def __init__(self, p=0.5):
        super().__init__()
        self._p = p

    def forward(self, x, *args):
        return _rest(image.random_flip_top_bottom(x, self._p), args)


class _RandomFactor(Block):
    _fn = None

    def __init__(self, amount):
        super().__init__()
        try:
            if isinstance(amount, (str, bytes)):  # (float() would parse "0.5")
                raise TypeError
            amount = float(amount)
        except (TypeError, ValueError):
            raise TypeError(f"[{type(self).__name__}] the amount must be a number, got "
                            f"{type(amount).__name__}") from None
        if amount < 0:
            raise ValueError(f"[{type(self).__name__}] the amount must be >= 0, got {amount}")
        self._range = (max(0.0, 1.0 - amount), 1.0 + amount)

    def forward(self, x, *args):
        return _rest(type(self)._fn(x, *self._range), args)


class RandomBrightness(_RandomFactor):
    """Brightness times a factor from [max(0, 1 - brightness), 1 + brightness]."""
    _fn = staticmethod(image.random_brightness)


class RandomContrast(_RandomFactor):
    """Contrast times a factor from [max(0, 1 - contrast), 1 + contrast]."""
    _fn = staticmethod(image.random_contrast)


class RandomSaturation(_RandomFactor):
    """Saturation times a factor from [max(0, 1 - saturation), 1 + saturation]."""
    _fn = staticmethod(image.random_saturation)


class RandomHue(_RandomFactor):
    """Hue rotated by a number of turns from [max(0, 1 - hue), 1 + hue] (MXNet's range: a
    whole turn plus or minus hue)."""
    _fn = staticmethod(image.random_hue)


class RandomColorJitter(Block):
    """Brightness, contrast, saturation and hue jitter in a random order (MXNet's
    random_color_jitter)."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def forward(self, x, *args):
        return _rest(image.random_color_jitter(x, *self._args), args)


class RandomLighting(Block):
    """AlexNet-style PCA lighting noise with standard deviation alpha."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def forward(self, x, *args):
        return _rest(image.random_lighting(x, self._alpha), args)


class RandomGray(Block):
    """With probability p, every channel becomes 0.21 R + 0.72 G + 0.07 B (MXNet's weights)."""

    def __init__(self, p=0.5):
        super().__init__()
        self._p = image._probability("RandomGray", p)

    def forward(self, x, *args):
        if float(np.random.uniform()) >= self._p:
            return _rest(x, args)
        x = image._image("RandomGray", x)
        if x.shape[-1] != 3:
            raise ValueError(f"[RandomGray] images must have 3 channels, got shape {x.shape}")
        f = image._float(x)
        gray = (f * np.array([0.21, 0.72, 0.07], dtype=f.dtype)).sum(axis=-1, keepdims=True)
        gray = np.broadcast_to(gray, f.shape).copy()  # (a new image, not a read-only view)
        return _rest(image._like_input("RandomGray", gray, x), args)


class RandomApply(Block):
    """The transforms (a block or callable) with probability p, else the input unchanged."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self._p = image._probability("RandomApply", p)
        self.transforms = transforms if isinstance(transforms, Block) else _Lambda(transforms)

    def forward(self, x, *args):
        return _rest(self.transforms(x) if float(np.random.uniform()) < self._p else x, args)


class HybridRandomApply(HybridBlock):
    """A HybridBlock's transforms with probability p, else the input unchanged (MXNet 2.0's),
    by a draw made at every call. Called directly, one branch runs (a transform may change
    the shape or dtype); hybridized, both run and np.where picks one, so the transform must
    keep the input's shape and dtype there (a traced graph holds no branches)."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        if not isinstance(transforms, HybridBlock):
            raise TypeError(f"[HybridRandomApply] transforms must be a HybridBlock, got "
                            f"{type(transforms).__name__} (RandomApply takes any block)")
        self._p = image._probability("HybridRandomApply", p)
        self.transforms = transforms

    def forward(self, x, *args):
        from .... import _core
        if not _core._is_tracing():
            return _rest(self.transforms(x) if float(np.random.uniform()) < self._p else x,
                         args)
        out = self.transforms(x)
        if out.shape != x.shape or out.dtype != x.dtype:
            raise NotImplementedError(
                f"[HybridRandomApply] hybridized, the transform must keep the input's shape "
                f"and dtype ({tuple(x.shape)}, {x.dtype}), got {tuple(out.shape)}, "
                f"{out.dtype}: call the block without hybridize()")
        return _rest(np.where(np.random.uniform(size=()) < self._p, out, x), args)


def _float32_only(who, x):
    if str(x.dtype) != "float32":
        raise TypeError(f"[{who}] only float32 tensors are supported (call it after ToTensor), "
                        f"got {x.dtype}")


class Rotate(Block):
    """The (C, H, W) or (N, C, H, W) float32 tensor rotated by rotation_degrees about its
    centre, keeping its shape (mx.image.imrotate; zoom_in / zoom_out as there)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        if zoom_in and zoom_out:
            raise ValueError("[Rotate] zoom_in and zoom_out cannot both be True")
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x, *args):
        from .... import image as mx_image
        _float32_only("Rotate", x)
        return _rest(mx_image.imrotate(x, *self._args), args)


class RandomRotation(Block):
    """Rotate by an angle drawn uniformly from angle_limits = (low, high) degrees, with
    probability rotate_with_proba (mx.image.random_rotate)."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        low, high = angle_limits
        if not low < high:
            raise ValueError(f"[RandomRotation] angle_limits must be (low, high) with low < "
                             f"high, got {angle_limits}")
        if zoom_in and zoom_out:
            raise ValueError("[RandomRotation] zoom_in and zoom_out cannot both be True")
        self._args = ((low, high), zoom_in, zoom_out)
        self._p = image._probability("RandomRotation", rotate_with_proba)

    def forward(self, x, *args):
        from .... import image as mx_image
        if float(np.random.uniform()) >= self._p:
            return _rest(x, args)
        _float32_only("RandomRotation", x)
        return _rest(mx_image.random_rotate(x, *self._args), args)
