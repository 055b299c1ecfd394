"""Gluon's helpers: split a batch and place the pieces on devices; clip gradients by their
global norm."""
import math as _math
import numbers as _numbers
import warnings as _warnings

from .. import numpy as np


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """`data` cut into `num_slice` pieces along `batch_axis` (MXNet's split_data)."""
    size = data.shape[batch_axis]
    if num_slice < 1:
        raise ValueError(f"[split_data] num_slice must be >= 1, got {num_slice}")
    if even_split and size % num_slice != 0:
        raise ValueError(f"[split_data] data with shape {data.shape} cannot be evenly split into "
                         f"{num_slice} slices along axis {batch_axis}; use even_split=False")
    step = size // num_slice
    if step == 0:
        raise ValueError(f"[split_data] {num_slice} slices of a batch of {size}")
    bounds = [i * step for i in range(num_slice)] + [size]
    index = [slice(None)] * data.ndim
    pieces = []
    for i in range(num_slice):
        index[batch_axis] = slice(bounds[i], bounds[i + 1])
        pieces.append(data[tuple(index)])
    return pieces


def split_and_load(data, ctx_list=None, batch_axis=0, even_split=True, device_list=None):
    """`data` split along `batch_axis` into one piece per device, each piece on its device."""
    devices = device_list if device_list is not None else ctx_list
    if devices is None:
        raise TypeError("[split_and_load] expected a list of devices (device_list or ctx_list)")
    if not isinstance(data, np.ndarray):
        data = np.array(data)
    if len(devices) == 1:
        return [data.to_device(devices[0])]
    pieces = split_data(data, len(devices), batch_axis, even_split)
    return [p.to_device(d) for p, d in zip(pieces, devices)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Rescales `arrays` in place so that their global 2-norm (the 2-norm of all their
    elements together) is at most `max_norm`: each is multiplied by
    min(1, max_norm / (total_norm + 1e-8)). Returns total_norm (before scaling): a float when
    check_isfinite, else an ndarray of shape (1,) (no device sync).

    With check_isfinite, a NaN or infinite total norm warns (UserWarning); the arrays are then
    scaled all the same and the result is undefined: a NaN norm makes them NaN, an infinite
    one scales them by 0 (MXNet's behaviour)."""
    if isinstance(arrays, np.ndarray) or not isinstance(arrays, (list, tuple)):
        raise TypeError(f"[clip_global_norm] arrays must be a list of ndarrays, got "
                        f"{type(arrays).__name__}")
    if not arrays:
        raise ValueError("[clip_global_norm] arrays must not be empty")
    for i, a in enumerate(arrays):
        if not isinstance(a, np.ndarray):
            kind = ("None (the .grad of an array without attach_grad()?)" if a is None else
                    f"{type(a).__module__}.{type(a).__qualname__}")  # (numpy.ndarray, ...)
            raise TypeError(f"[clip_global_norm] arrays[{i}] must be an ndx ndarray, got "
                            f"{kind}")
    # any real number (a NumPy float32 / int64 from a config too), taken as a Python float
    if isinstance(max_norm, bool) or not isinstance(max_norm, _numbers.Real) or not max_norm > 0:
        raise ValueError(f"[clip_global_norm] max_norm must be a number > 0, got {max_norm!r}")
    max_norm = float(max_norm)
    device = arrays[0].device
    # float32 at least, so that float16 squares do not overflow the sum
    sums = [np.square(a.astype(np.promote_types(a.dtype, "float32"))).sum().to_device(device)
            for a in arrays]
    total_norm = np.sqrt(np.stack(sums).sum()).reshape((1,))
    if check_isfinite and not _math.isfinite(total_norm.item()):
        _warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."),
                       stacklevel=2)
    scale = np.min(np.concatenate([max_norm / (total_norm + 1e-8),
                                   np.ones(1, dtype=total_norm.dtype, device=device)]))
    for a in arrays:
        a *= scale.to_device(a.device).astype(a.dtype)
    return total_norm.item() if check_isfinite else total_norm


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 digest of the file's content equals `sha1_hash` (hex); as in
    MXNet, a shorter `sha1_hash` is compared with the digest's prefix."""
    import hashlib
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha1.update(chunk)
    digest = sha1.hexdigest()
    return digest[:len(sha1_hash)] == sha1_hash.lower() if sha1_hash else False


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Downloads `url` to `path` (a file, or a folder to keep the URL's file name in; the
    current folder when None) and returns the file name. An existing file is kept unless
    `overwrite`, or unless its SHA-1 differs from `sha1_hash`. The file is written under a
    temporary name and renamed, so a failed download leaves no partial file."""
    import os
    import ssl
    import tempfile
    import urllib.request
    fname = url.split("/")[-1]
    if not fname:
        raise ValueError(f"[download] cannot take a file name from the URL {url!r}")
    if path is not None:
        path = os.path.expanduser(path)
        fname = os.path.join(path, fname) if os.path.isdir(path) else path
    if not isinstance(retries, int) or retries < 0:
        raise ValueError(f"[download] retries must be an int >= 0, got {retries!r}")
    if (not overwrite and os.path.exists(fname)
            and (sha1_hash is None or check_sha1(fname, sha1_hash))):
        return fname
    folder = os.path.dirname(os.path.abspath(fname))
    os.makedirs(folder, exist_ok=True)
    context = None if verify_ssl else ssl._create_unverified_context()  # noqa: S323
    attempts = retries + 1
    for attempt in range(attempts):
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".download-")
            try:
                with os.fdopen(fd, "wb") as out, \
                        urllib.request.urlopen(url, context=context) as resp:  # noqa: S310
                    for chunk in iter(lambda: resp.read(1 << 20), b""):
                        out.write(chunk)
                if sha1_hash and not check_sha1(tmp, sha1_hash):
                    raise UserWarning(f"[download] {fname} was downloaded but its SHA-1 does "
                                      "not match: the content may be corrupted")
                os.replace(tmp, fname)
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
            return fname
        except Exception:
            if attempt + 1 == attempts:
                raise
    return fname
