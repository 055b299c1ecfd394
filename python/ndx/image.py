"""MXNet's image decoding and cropping (``mx.image``): imdecode and imread give (H, W, C) uint8
arrays; imresize, resize_short, fixed_crop, center_crop, random_crop, scale_down and
color_normalize work on them as MXNet's do, resizing with npx.image.resize (OpenCV's
arithmetic for each of its interpolation codes).

ndx has no codec of its own: decoding goes through Pillow, imported when first needed
(``pip install pillow``; a missing Pillow is an ImportError saying so). MXNet decodes with
OpenCV; both use libjpeg / libpng, and PNG and other lossless images decode to the same pixels.
Color images converted to grayscale (flag=0) use Pillow's ITU-R 601 weights, which can differ
from OpenCV's by one level.

MXNet's augmenters (Augmenter, SequentialAug, RandomOrderAug, the resize / crop / color /
flip / cast augmenters, random_size_crop, CreateAugmenter) live in ndx._image_aug and
ImageIter (batches from .rec / .lst files or a list) in ndx._image_iter; both are exported
here. Resizing takes OpenCV's codes, as MXNet passes them to OpenCV: 0 nearest, 1 bilinear, 2
bicubic (MXNet's default for its crops and short-side resize), 3 area, 4 Lanczos; 9 picks
bicubic to enlarge, area to shrink, bilinear otherwise; 10 a random one of 0-4.

imrotate and random_rotate rotate float32 (C, H, W) / (N, C, H, W) tensors about their
centre, as MXNet 2.0's do (bilinear sampling, zeros outside the image)."""
import io
import os

import numpy as onp

__all__ = ["Augmenter", "BrightnessJitterAug", "CastAug", "CenterCropAug", "ColorJitterAug",
           "ColorNormalizeAug", "ContrastJitterAug", "CreateAugmenter", "ForceResizeAug",
           "HorizontalFlipAug", "HueJitterAug", "ImageIter", "LightingAug", "RandomCropAug",
           "RandomGrayAug", "RandomOrderAug", "RandomSizedCropAug", "ResizeAug",
           "SaturationJitterAug", "SequentialAug", "center_crop", "color_normalize",
           "fixed_crop", "imdecode", "imread", "imresize", "imrotate", "random_crop",
           "random_rotate", "random_size_crop", "resize_short", "scale_down"]


def _pillow(who):
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(f"[{who}] decoding images needs Pillow (pip install pillow), which ndx "
                          "uses as its image codec") from None
    return Image


def _decode(who, buf):
    """The PIL image in the bytes buf, loaded (a bad or truncated image is a ValueError)."""
    if isinstance(buf, (bytearray, memoryview)):
        buf = bytes(buf)
    elif hasattr(buf, "asnumpy"):
        buf = buf.asnumpy().tobytes()
    elif isinstance(buf, onp.ndarray):
        buf = buf.tobytes()
    if not isinstance(buf, bytes):
        raise TypeError(f"[{who}] buf must be bytes or a uint8 array, got {type(buf).__name__}")
    image = _pillow(who)
    try:
        img = image.open(io.BytesIO(buf))
        img.load()
    except (OSError, SyntaxError, ValueError) as e:
        raise ValueError(f"[{who}] cannot decode the image ({len(buf)} bytes): {e}") from None
    return img


def _pixels(img, flag, to_rgb):
    """(H, W, 3) RGB (BGR when not to_rgb) for flag 1, (H, W, 1) for flag 0."""
    if flag not in (0, 1):
        raise ValueError(f"[imdecode] flag must be 1 (color) or 0 (grayscale), got {flag!r}")
    if flag == 0:
        return onp.asarray(img.convert("L"), dtype=onp.uint8)[:, :, None]
    rgb = onp.asarray(img.convert("RGB"), dtype=onp.uint8)
    return rgb if to_rgb else rgb[:, :, ::-1]


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """The image in buf (encoded bytes, e.g. a JPEG or PNG file's contents) as an (H, W, C)
    uint8 NDArray: C = 3 in RGB order (BGR with to_rgb=False) for flag=1, C = 1 for flag=0."""
    from .nd import ndarray as _nd
    pixels = _pixels(_decode("imdecode", buf), flag, to_rgb)
    if out is not None:
        if tuple(out.shape) != pixels.shape:
            raise ValueError(f"[imdecode] out has shape {tuple(out.shape)}, the image "
                             f"{pixels.shape}")
        out[...] = pixels
        return out
    return _nd.array(pixels, dtype="uint8")


def imread(filename, flag=1, to_rgb=True, out=None):
    """The image file at filename, as imdecode gives it."""
    path = os.fspath(filename)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"[imread] no image file {path}")
    with open(path, "rb") as f:
        return imdecode(f.read(), flag, to_rgb, out)


def imresize(src, w, h, interp=1):
    """src (H, W, C) resized to (h, w, C) with OpenCV's interpolation code: 0 nearest, 1
    bilinear, 2 bicubic, 3 area, 4 Lanczos; 9 and 10 as MXNet's (see _interp_method)."""
    from .numpy_extension import image as _image
    interp = _interp_method(interp, (src.shape[0], src.shape[1], int(h), int(w)))
    return _image.resize(src, (int(w), int(h)), interp=interp)


def _interp_method(interp, sizes):
    """MXNet's rule for its two meta codes: 9 is bicubic (2) when both sides grow, area (3)
    when both shrink, else bilinear (1); 10 is a random one of 0-4 (Python's random)."""
    if interp == 9:
        oh, ow, nh, nw = sizes
        if nh > oh and nw > ow:
            return 2
        return 3 if nh < oh and nw < ow else 1
    if interp == 10:
        import random
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"[imresize] interp must be 0 (nearest), 1 (bilinear), 2 (bicubic), "
                         f"3 (area), 4 (Lanczos), 9 (auto) or 10 (random), got {interp!r}")
    return interp


def scale_down(src_size, size):
    """(w, h) scaled down to fit in src_size = (width, height), keeping its aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def resize_short(src, size, interp=2):
    """src resized so that its shorter side is size (the other scaled, rounded down)."""
    h, w = src.shape[0], src.shape[1]
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """src[y0:y0 + h, x0:x0 + w], resized to size = (width, height) when given."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        out = imresize(out, size[0], size[1],
                       interp=_interp_method(interp, (h, w, size[1], size[0])))
    return out


def random_crop(src, size, interp=2):
    """(a crop of src at a random place, resized to size = (width, height), (x0, y0, w, h)):
    the largest crop with size's aspect ratio that fits, placed by Python's random module as
    MXNet's."""
    import random
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """(the centred crop of src, resized to size = (width, height), (x0, y0, w, h))."""
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = int((w - new_w) / 2), int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """(src - mean) / std, in place as MXNet's (src must be a float array)."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def decode_to_numpy(buf, iscolor, who):
    """OpenCV's imdecode result for recordio.unpack_img: BGR (H, W, 3), BGRA (H, W, 4) or gray
    (H, W); iscolor 1 color, 0 gray, -1 as stored."""
    img = _decode(who, buf)
    if iscolor == 0 or (iscolor == -1 and img.mode in ("L", "1", "I;16", "I")):
        return onp.asarray(img.convert("L"), dtype=onp.uint8)
    if iscolor == -1 and img.mode in ("RGBA", "LA", "PA") or (
            iscolor == -1 and img.mode == "P" and "transparency" in img.info):
        return onp.asarray(img.convert("RGBA"), dtype=onp.uint8)[:, :, [2, 1, 0, 3]]
    if iscolor not in (-1, 0, 1):
        raise ValueError(f"[{who}] iscolor must be -1, 0 or 1, got {iscolor!r}")
    return onp.asarray(img.convert("RGB"), dtype=onp.uint8)[:, :, ::-1]


def encode_from_numpy(img, quality, img_fmt, who):
    """img (OpenCV's layout: BGR (H, W, 3) or gray (H, W) uint8) encoded as img_fmt ('.jpg' or
    '.png'); quality is JPEG's quality, or PNG's compression level 0-9, as OpenCV takes them."""
    arr = onp.asarray(img)
    if arr.dtype != onp.uint8 or arr.ndim not in (2, 3) or (arr.ndim == 3 and
                                                             arr.shape[2] not in (1, 3)):
        raise ValueError(f"[{who}] img must be uint8 (H, W) or (H, W, 3) BGR, got {arr.dtype} "
                         f"{arr.shape}")
    if arr.ndim == 3:
        arr = arr[:, :, 0] if arr.shape[2] == 1 else arr[:, :, ::-1]
    fmt = img_fmt.lower().lstrip(".")
    image = _pillow(who)
    pil = image.fromarray(onp.ascontiguousarray(arr))
    out = io.BytesIO()
    if fmt in ("jpg", "jpeg"):
        pil.save(out, format="JPEG", quality=int(quality))
    elif fmt == "png":
        pil.save(out, format="PNG", compress_level=min(9, max(0, int(quality))))
    else:
        raise ValueError(f"[{who}] img_fmt must be '.jpg' or '.png', got {img_fmt!r}")
    return out.getvalue()


# the augmenters and ImageIter use the functions above, so they are imported last
from ._image_aug import (  # noqa: E402
    Augmenter,
    BrightnessJitterAug,
    CastAug,
    CenterCropAug,
    ColorJitterAug,
    ColorNormalizeAug,
    ContrastJitterAug,
    CreateAugmenter,
    ForceResizeAug,
    HorizontalFlipAug,
    HueJitterAug,
    LightingAug,
    RandomCropAug,
    RandomGrayAug,
    RandomOrderAug,
    RandomSizedCropAug,
    ResizeAug,
    SaturationJitterAug,
    SequentialAug,
    random_size_crop,
)
from ._image_iter import ImageIter  # noqa: E402


def _rotation_inputs(src, degrees):
    """(the images as (N, C, H, W), the N angles in radians, whether one image was given)."""
    import math
    import numbers

    from . import numpy as np
    if src.dtype != onp.float32:
        raise TypeError(f"[imrotate] only float32 images are supported (call ToTensor first), "
                        f"got {src.dtype}")
    if src.ndim not in (3, 4):
        raise ValueError(f"[imrotate] images must be (C, H, W) or (N, C, H, W), got shape "
                         f"{tuple(src.shape)}")
    single = src.ndim == 3
    if isinstance(degrees, numbers.Real):
        angles = onp.full(1 if single else src.shape[0], math.radians(float(degrees)))
    elif single:
        raise TypeError("[imrotate] one image takes one angle (a number), got "
                        f"{type(degrees).__name__}")
    else:
        angles = onp.radians(onp.asarray(degrees.asnumpy() if hasattr(degrees, "asnumpy")
                                         else degrees, dtype=onp.float64).reshape(-1))
        if angles.size != src.shape[0]:
            raise ValueError(f"[imrotate] {src.shape[0]} images need as many angles, got "
                             f"{angles.size}")
    images = np.expand_dims(src, 0) if single else src
    return images, angles, single


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """src (a float32 (C, H, W) image or (N, C, H, W) batch) rotated counterclockwise by
    rotation_degrees (a number, or one angle per image of a batch) about its centre, keeping
    its shape (MXNet 2.0's mx.image.imrotate): output pixel (y, x), centred, reads the source
    at the centred point rotated by the angle, bilinearly, zeros outside. zoom_out shrinks the
    result so the whole rotated image fits; zoom_in enlarges it so no zeros remain."""
    from . import numpy as np
    from .nd import _op as _legacy
    from .nd.ndarray import NDArray, _plain, _wrap
    if zoom_in and zoom_out:
        raise ValueError("[imrotate] zoom_in and zoom_out cannot both be True")
    legacy = type(src) is NDArray
    images, angles, single = _rotation_inputs(_plain(src), rotation_degrees)
    _, _, h, w = images.shape
    cy, cx = (h - 1) / 2.0, (w - 1) / 2.0
    ys = onp.arange(h, dtype=onp.float64)[:, None] - cy
    xs = onp.arange(w, dtype=onp.float64)[None, :] - cx
    c, s_ = onp.cos(angles)[:, None, None], onp.sin(angles)[:, None, None]
    scale = onp.ones_like(angles)
    if zoom_in or zoom_out:  # the rotated image's bounding box against the original
        box_w = w * onp.abs(onp.cos(angles)) + h * onp.abs(onp.sin(angles))
        box_h = h * onp.abs(onp.cos(angles)) + w * onp.abs(onp.sin(angles))
        scale = onp.maximum(box_w / w, box_h / h) if zoom_out else \
            onp.minimum(w / box_w, h / box_h)
    scale = scale[:, None, None]
    src_x = (xs * c - ys * s_) * scale / max(cx, 1e-12)
    src_y = (xs * s_ + ys * c) * scale / max(cy, 1e-12)
    grid = np.array(onp.stack([src_x, src_y], axis=1), dtype="float32", device=images.device)
    out = _plain(_legacy.BilinearSampler(images, grid))
    out = out[0] if single else out
    return _wrap(out) if legacy else out


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """imrotate by angles drawn uniformly from angle_limits (degrees; one per image of a
    batch), from ndx's generator (np.random.seed repeats them)."""
    from . import numpy as np
    low, high = angle_limits
    if src.ndim == 3:
        degrees = float(np.random.uniform(low, high))
    else:
        degrees = np.random.uniform(low, high, size=(src.shape[0],)).asnumpy()
    return imrotate(src, degrees, zoom_in=zoom_in, zoom_out=zoom_out)
