"""MXNet's image decoding (``mx.image``): imdecode and imread give (H, W, C) uint8 arrays, and
imresize resizes with npx.image.resize (OpenCV's nearest / bilinear arithmetic).

ndx has no codec of its own: decoding goes through Pillow, imported when first needed
(``pip install pillow``; a missing Pillow is an ImportError saying so). MXNet decodes with
OpenCV; both use libjpeg / libpng, and PNG and other lossless images decode to the same pixels.
Color images converted to grayscale (flag=0) use Pillow's ITU-R 601 weights, which can differ
from OpenCV's by one level."""
import io
import os

import numpy as onp

__all__ = ["imdecode", "imread", "imresize"]


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
    """src (H, W, C) resized to (h, w, C): interp 1 bilinear, 0 nearest (OpenCV's arithmetic;
    MXNet's other OpenCV modes are NotImplementedError)."""
    from .numpy_extension import image as _image
    return _image.resize(src, (int(w), int(h)), interp=interp)


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
