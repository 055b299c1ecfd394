"""MXNet's file iterators for ndx: ImageRecordIter (and its uint8 / int8 variants) over image
RecordIO files, CSVIter over comma-separated text and LibSVMIter over LibSVM-style text (CSR
batches). MXNet implements these in C++ behind
``MXDataIter``; here they are Python, with MXNet's parameter names and batching rules.

All batch examples as MXNet's C++ batch loader does:

* round_batch=True: a last batch that runs short is completed with examples from the start of
  the data (DataBatch.pad counts them), and the data is not rewound by the reset() that
  follows, so the next epoch carries on after the examples used as padding (MXNet documents
  this for CSVIter: the reset after a wrapped batch "is ignored"). A reset() at any other time
  starts over.
* round_batch=False: the short last batch is returned with DataBatch.pad set to the number of
  missing examples; those rows hold what the previous batch left there (zeros for the first),
  as MXNet's reused batch buffer does. Use pad to cut them off.

The image augmenters are ndx.image's (ResizeAug, RandomCropAug, RandomSizedCropAug, the color
jitters, LightingAug), run through an ndx.image.ImageIter that opens the record files."""
import logging
import math
import os
import random

import numpy as onp

from .._image_aug import _is_int, _real
from ..nd import ndarray as _nd
from .io import DataBatch, DataDesc, DataIter

__all__ = ["CSVIter", "ImageRecordInt8Iter", "ImageRecordIter", "ImageRecordUInt8Iter",
           "LibSVMIter"]


# ----------------------------------------------------------------------------- argument checks

def _int_arg(who, name, value, low=None):
    if not _is_int(value):
        raise TypeError(f"[{who}] {name} must be an int, got {type(value).__name__} {value!r}")
    if low is not None and value < low:
        raise ValueError(f"[{who}] {name} must be an int >= {low}, got {value!r}")
    return int(value)


def _real_arg(who, name, value, low=None, low_open=False):
    return _real(who, name, value, low=low, low_open=low_open)


def _flag_arg(who, name, value):
    """MXNet's boolean parameters: True / False, or the ints 0 / 1."""
    if isinstance(value, (bool, onp.bool_)) or (_is_int(value) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"[{who}] {name} must be a bool, got {type(value).__name__} {value!r}")


def _shape_arg(who, name, value):
    """A shape: a tuple / list of positive ints (one int is a 1-d shape)."""
    if _is_int(value):
        value = (value,)
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"[{who}] {name} must be a tuple of ints, got {type(value).__name__} "
                        f"{value!r}")
    if not value or not all(_is_int(d) and d > 0 for d in value):
        raise ValueError(f"[{who}] {name} must be a non-empty tuple of positive ints, got "
                         f"{tuple(value)!r}")
    return tuple(int(d) for d in value)


def _dtype_arg(who, name, value, allowed):
    try:
        dt = onp.dtype(value).name
    except TypeError:
        dt = None
    if dt not in allowed:
        raise ValueError(f"[{who}] {name} must be one of {allowed}, got {value!r}")
    return dt


def _path_arg(who, name, value):
    """value as a path string ('' for None / '')."""
    if value is None:
        return ""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"[{who}] {name} must be a path (str), got {type(value).__name__}")
    return os.fspath(value)


def _data_and_label_paths(who, data, label, what):
    """The (name, value) data path (required) and label path ('' for None and MXNet's
    'NULL') of a text-file iterator."""
    data_path = _path_arg(who, *data)
    if not data_path:
        raise ValueError(f"[{who}] {data[0]} ({what}) is required")
    label_path = _path_arg(who, *label)
    return data_path, "" if label_path == "NULL" else label_path


def _existing_file(who, name, path):
    if not os.path.isfile(path):
        raise FileNotFoundError(f"[{who}] {name}: no file {path!r}")
    return path


def _part_args(who, num_parts, part_index):
    """(num_parts, part_index): which of num_parts slices of the data this reader takes."""
    num_parts = _int_arg(who, "num_parts", num_parts, 1)
    part_index = _int_arg(who, "part_index", part_index, 0)
    if part_index >= num_parts:
        raise ValueError(f"[{who}] part_index must be in [0, num_parts={num_parts}), got "
                         f"{part_index}")
    return num_parts, part_index


def _name_arg(who, name, value):
    if not isinstance(value, str) or not value:
        raise TypeError(f"[{who}] {name} must be a non-empty str, got {value!r}")
    return value


def _check_extra(who, kwargs, ignored, unsupported=None):
    """Arguments MXNet takes beyond the explicit ones: `ignored` are accepted and dropped
    (threads, prefetching, logging), `unsupported` ({name: MXNet's default}) may only take
    their default (else NotImplementedError), anything else is a TypeError."""
    unsupported = unsupported or {}
    unknown = sorted(k for k in kwargs if k not in ignored and k not in unsupported)
    if unknown:
        raise TypeError(f"[{who}] unexpected keyword argument(s) {unknown}: not a parameter of "
                        f"MXNet's {who}")
    changed = sorted(f"{k}={kwargs[k]!r}" for k in kwargs
                     if k in unsupported and kwargs[k] != unsupported[k])
    if changed:
        raise NotImplementedError(
            f"[{who}] not supported by ndx: {', '.join(changed)} (MXNet's affine rotate / "
            f"shear / scale, random crop-size and HSL augmentations are not implemented; "
            f"leave these at their defaults)")


class _CurrentBatch:
    """next() and the get* accessors of an iterator whose iter_next() leaves the batch it
    made in self._current (MXNet's MXDataIter: one data and one label array)."""

    def next(self):
        if self.iter_next():
            return self._current
        raise StopIteration

    def _batch(self):
        if self._current is None:
            raise RuntimeError(f"[{type(self).__name__}] no current batch: call iter_next() "
                               f"or next() first")
        return self._current

    def getdata(self):
        """The current batch's data array (one array, as MXNet's MXDataIter)."""
        return self._batch().data[0]

    def getlabel(self):
        """The current batch's label array."""
        return self._batch().label[0]

    def getindex(self):
        """The current batch's example indices (uint64)."""
        return self._batch().index

    def getpad(self):
        """How many examples at the end of the current batch are padding."""
        return self._batch().pad


# ------------------------------------------------------------------------------- batching

class _BatchIter(_CurrentBatch, DataIter):
    """Examples from a subclass's _start_pass / _next_example put into batches by MXNet's
    rules (see the module docstring). _next_example returns (data, label, index) or None at
    the end of the pass, and keeps returning None until the next _start_pass."""

    def __init__(self, batch_size, round_batch, data_desc, label_desc, dense_buffers=True):
        super().__init__(batch_size)
        self.round_batch = round_batch
        self.provide_data = [data_desc]
        self.provide_label = [label_desc]
        if dense_buffers:
            self._data_buf = onp.zeros(data_desc.shape, onp.dtype(data_desc.dtype))
            self._label_buf = onp.zeros(label_desc.shape, onp.dtype(label_desc.dtype))
        self._index_buf = onp.zeros(batch_size, onp.uint64)
        self._wrapped = False   # the last batch wrapped to the start: reset() must not rewind
        self._current = None

    def _start_pass(self):
        raise NotImplementedError

    def _next_example(self):
        raise NotImplementedError

    def reset(self):
        """Back to the start of the data; after a batch that wrapped around (round_batch), the
        data already restarted there and the next epoch continues after the padding."""
        if self._wrapped:
            self._wrapped = False
        else:
            self._start_pass()
        self._current = None

    def _fill(self, start):
        n = start
        while n < self.batch_size:
            example = self._next_example()
            if example is None:
                break
            self._store(n, *example)
            n += 1
        return n

    def _store(self, slot, data, label, index):
        """Puts an example into slot `slot` of the batch being filled."""
        self._data_buf[slot] = data
        self._label_buf[slot] = label
        self._index_buf[slot] = index

    def _batch_arrays(self):
        """The filled batch's data and label arrays."""
        return ([_nd.array(self._data_buf, dtype=self._data_buf.dtype)],
                [_nd.array(self._label_buf, dtype=self._label_buf.dtype)])

    def iter_next(self):
        if self._wrapped:  # the epoch ended with a wrapped batch: nothing until reset()
            return False
        count = self._fill(0)
        if count == 0:
            return False
        pad = self.batch_size - count
        if pad and self.round_batch:
            filled = count
            while filled < self.batch_size:  # fewer examples than a batch: wrap again
                self._start_pass()
                more = self._fill(filled)
                if more == filled:
                    raise RuntimeError(f"[{type(self).__name__}] the data ran out while "
                                       f"wrapping around to complete the last batch")
                filled = more
            self._wrapped = True
        data, label = self._batch_arrays()
        self._current = DataBatch(
            data, label, pad=pad,
            index=self._index_buf.copy(), provide_data=self.provide_data,
            provide_label=self.provide_label)
        return True



# ------------------------------------------------------------------------ image record files

# MXNet's ImageRecordIter parameters ndx does not implement, with their defaults
_UNSUPPORTED_IMAGE_ARGS = {
    "max_rotate_angle": 0, "rotate": -1, "rotate_list": "", "max_shear_ratio": 0.0,
    "max_random_scale": 1.0, "min_random_scale": 1.0, "max_img_size": 1e10,
    "min_img_size": 0.0, "max_crop_size": -1, "min_crop_size": -1, "crop_y_start": -1,
    "crop_x_start": -1, "random_h": 0, "random_s": 0, "random_l": 0, "aug_seq": "aug_default",
}
# accepted and ignored: threading, prefetching, logging, pinned memory, chunked shuffling
_IGNORED_IMAGE_ARGS = ("preprocess_threads", "prefetch_buffer", "verbose", "ctx", "device_id",
                       "shuffle_chunk_size", "shuffle_chunk_seed")
_IMAGE_DTYPES = ("float32", "uint8", "int8")
_NORMALIZE_DEFAULTS = {"mean_img": "", "mean_r": 0.0, "mean_g": 0.0, "mean_b": 0.0,
                       "mean_a": 0.0, "std_r": 1.0, "std_g": 1.0, "std_b": 1.0, "std_a": 1.0,
                       "scale": 1.0, "max_random_contrast": 0.0,
                       "max_random_illumination": 0.0}


class _ImageTooSmall(ValueError):
    pass


class _FitsCheck:
    """Raises _ImageTooSmall when an (H, W, C) image is smaller than the crop (MXNet's crop
    never enlarges)."""

    def __init__(self, height, width):
        self.height, self.width = height, width

    def __call__(self, src):
        h, w = src.shape[0], src.shape[1]
        if h < self.height or w < self.width:
            raise _ImageTooSmall(f"the image is {h}x{w} (height x width, after resize / pad), "
                                 f"smaller than data_shape's {self.height}x{self.width}; "
                                 f"set resize (or pad) so that it fits")
        return src


class _PadAug:
    """Pads an (H, W, C) image by `pad` pixels on each side with fill_value."""

    def __init__(self, pad, fill_value):
        self.pad, self.fill_value = pad, fill_value

    def __call__(self, src):
        from .. import numpy as _np
        arr = src.asnumpy()
        p = self.pad
        out = onp.pad(arr, ((p, p), (p, p), (0, 0)), constant_values=self.fill_value)
        return _np.array(out, dtype=arr.dtype)


def _to_8bit(src):
    """The color-augmented image rounded and clipped to 0..255, as MXNet keeps it in uint8."""
    from .. import numpy as _np
    arr = onp.clip(onp.rint(src.asnumpy()), 0, 255).astype(onp.float32)
    return _np.array(arr, dtype="float32")


class _PrivateRandom:
    """Runs the augmenters (which draw from Python's `random` and, for LightingAug, NumPy's
    global state) on a generator of the iterator's own, seeded by it: the global states are
    swapped out on entry and back on exit."""

    def __init__(self, seed, with_numpy):
        self.with_numpy = with_numpy
        self.reseed(seed)

    def reseed(self, seed):
        self._py = random.Random(seed).getstate()
        if self.with_numpy:
            self._np = onp.random.RandomState(seed % (2 ** 32)).get_state()

    def __enter__(self):
        self._saved_py = random.getstate()
        random.setstate(self._py)
        if self.with_numpy:
            self._saved_np = onp.random.get_state()
            onp.random.set_state(self._np)
        return self

    def __exit__(self, *exc):
        self._py = random.getstate()
        random.setstate(self._saved_py)
        if self.with_numpy:
            self._np = onp.random.get_state()
            onp.random.set_state(self._saved_np)


def _round_half_away(x):
    return onp.sign(x) * onp.floor(onp.abs(x) + 0.5)


class ImageRecordIter(_BatchIter):
    """MXNet's ImageRecordIter: batches of images read from a RecordIO file (.rec, as written
    by im2rec or ndx.recordio.pack / pack_img), decoded, augmented and normalized.

    Each DataBatch holds data [(batch_size,) + data_shape] in dtype ('float32', 'uint8' or
    'int8'), channels in RGB(A) order, and label [(batch_size,) for label_width 1, else
    (batch_size, label_width), float32]; DataBatch.index holds the records' header ids.

    Sources: path_imgrec; path_imgidx, its index, gives random access (shuffle, num_parts);
    without it the file is read in order, or scanned once for the records' offsets when
    shuffle or num_parts > 1 ask for them. Labels come from the record headers (a record
    packed with several labels must hold label_width of them) or, with path_imglist (an im2rec
    .lst file), from the list line whose index is the record's header id.

    Per image, in order: decoding (data_shape[0] = 3: RGB, 1: gray, 4: RGBA); resize (> 0:
    the shorter side to resize, inter_method); pad pixels of fill_value on each side; a crop
    to data_shape (centred, or at a random place with rand_crop; the image must be at least
    that large), or with random_resized_crop a crop of random area in [min_random_area,
    max_random_area] of the image and aspect ratio (width / height) in [min_aspect_ratio,
    max_aspect_ratio] (min_aspect_ratio None: [1 - max_aspect_ratio, 1 + max_aspect_ratio])
    resized to data_shape; brightness, contrast and saturation jitter (factors drawn from
    [1 - v, 1 + v]) in that order, then PCA lighting noise (pca_noise), the result rounded
    and clipped to 0..255 as MXNet keeps images in uint8; then for float32 output
    ``(pixel - mean) * (c * scale / std) + i * scale / std`` per channel, with mean the
    mean_r / mean_g / mean_b / mean_a values or the per-pixel mean image in mean_img (loaded
    when the file exists; otherwise computed over this iterator's images, saved there as
    MXNet does, and used), c = 1 + uniform(-max_random_contrast, max_random_contrast) and
    i = uniform(-max_random_illumination, max_random_illumination); for int8 output the pixel
    minus the rounded mean, saturated to -128..127; uint8 output is the pixel (normalization
    arguments are ignored, with a warning, as MXNet ignores them); last, the image is mirrored
    left to right with mirror, or with probability 0.5 with rand_mirror.

    shuffle reorders the records at every pass (needs path_imgidx or a scan of the file);
    num_parts / part_index keep the part_index-th of num_parts contiguous slices of the
    records in file order, each ceil(n / num_parts) long but the last (together they cover
    every record once). seed seeds the shuffling, seed_aug (or, without it, seed) the
    augmentations, on generators of the iterator's own: runs are reproducible and Python's
    and NumPy's global random states are left as they were. round_batch: see the package.

    Accepted and ignored, as they only tune MXNet's threads and buffers: preprocess_threads,
    prefetch_buffer, verbose, ctx, device_id, shuffle_chunk_size, shuffle_chunk_seed. MXNet's
    rotate / shear / random-scale / crop-size / HSL augmenters (max_rotate_angle, rotate,
    max_shear_ratio, max_random_scale, min_random_scale, max_img_size, min_img_size,
    max_crop_size, min_crop_size, random_h, random_s, random_l, ...) are not implemented and
    raise NotImplementedError unless left at their defaults."""

    def __init__(self, path_imgrec, data_shape, batch_size, label_width=1, path_imgidx="",
                 path_imglist="", shuffle=False, seed=0, seed_aug=None, part_index=0,
                 num_parts=1, round_batch=True, resize=-1, rand_crop=False,
                 random_resized_crop=False, min_random_area=1.0, max_random_area=1.0,
                 min_aspect_ratio=None, max_aspect_ratio=0.0, pad=0, fill_value=255,
                 rand_mirror=False, mirror=False, inter_method=1, brightness=0.0,
                 contrast=0.0, saturation=0.0, pca_noise=0.0, mean_img="", mean_r=0.0,
                 mean_g=0.0, mean_b=0.0, mean_a=0.0, std_r=1.0, std_g=1.0, std_b=1.0,
                 std_a=1.0, scale=1.0, max_random_contrast=0.0, max_random_illumination=0.0,
                 dtype="float32", data_name="data", label_name="softmax_label", **kwargs):
        who = type(self).__name__
        _check_extra(who, kwargs, _IGNORED_IMAGE_ARGS, _UNSUPPORTED_IMAGE_ARGS)
        path_imgrec = _path_arg(who, "path_imgrec", path_imgrec)
        if not path_imgrec:
            raise ValueError(f"[{who}] path_imgrec (the .rec file) is required")
        _existing_file(who, "path_imgrec", path_imgrec)
        path_imgidx = _path_arg(who, "path_imgidx", path_imgidx)
        if path_imgidx:
            _existing_file(who, "path_imgidx", path_imgidx)
        path_imglist = _path_arg(who, "path_imglist", path_imglist)
        if path_imglist:
            _existing_file(who, "path_imglist", path_imglist)
        batch_size = _int_arg(who, "batch_size", batch_size, 1)
        label_width = _int_arg(who, "label_width", label_width, 1)
        data_shape = _shape_arg(who, "data_shape", data_shape)
        if len(data_shape) != 3 or data_shape[0] not in (1, 3, 4):
            raise ValueError(f"[{who}] data_shape must be (channels, height, width) with 1, 3 "
                             f"or 4 channels, got {data_shape!r}")
        dtype = _dtype_arg(who, "dtype", "float32" if dtype is None else dtype, _IMAGE_DTYPES)
        num_parts, part_index = _part_args(who, num_parts, part_index)
        seed = _int_arg(who, "seed", seed)
        if seed_aug is not None:
            seed_aug = _int_arg(who, "seed_aug", seed_aug)
        flags = {name: _flag_arg(who, name, v) for name, v in (
            ("shuffle", shuffle), ("round_batch", round_batch), ("rand_crop", rand_crop),
            ("random_resized_crop", random_resized_crop), ("rand_mirror", rand_mirror),
            ("mirror", mirror))}
        self.shuffle, self.rand_mirror, self.mirror = (
            flags["shuffle"], flags["rand_mirror"], flags["mirror"])
        self.data_shape, self.label_width, self.dtype = data_shape, label_width, dtype
        self.seed, self.seed_aug = seed, seed_aug

        auglist, uses_numpy = self._augmenters(
            who, data_shape, resize, pad, fill_value, flags["rand_crop"],
            flags["random_resized_crop"], min_random_area, max_random_area, min_aspect_ratio,
            max_aspect_ratio, inter_method, brightness, contrast, saturation, pca_noise)
        norm = dict(mean_img=mean_img, mean_r=mean_r, mean_g=mean_g, mean_b=mean_b,
                    mean_a=mean_a, std_r=std_r, std_g=std_g, std_b=std_b, std_a=std_a,
                    scale=scale, max_random_contrast=max_random_contrast,
                    max_random_illumination=max_random_illumination)
        self._normalize_args(who, norm)

        from .._image_iter import ImageIter  # ndx.image imports ndx.io: import when used
        self._images = ImageIter(batch_size, (3,) + data_shape[1:], label_width=label_width,
                                 path_imgrec=path_imgrec, path_imgidx=path_imgidx or None,
                                 path_imglist=path_imglist or None, aug_list=auglist,
                                 data_name=data_name, label_name=label_name)
        self.auglist = self._images.auglist
        self._rng = _PrivateRandom(seed if seed_aug is None else seed_aug, uses_numpy)
        self._shuffle_rng = random.Random(seed)
        self._keys, self._offsets = self._record_keys(who, num_parts, part_index)
        self._order, self._pos, self._seq_pos = [], 0, 0

        label_shape = (batch_size,) if label_width == 1 else (batch_size, label_width)
        super().__init__(
            batch_size, flags["round_batch"],
            DataDesc(_name_arg(who, "data_name", data_name), (batch_size,) + data_shape,
                     onp.dtype(dtype)),
            DataDesc(_name_arg(who, "label_name", label_name), label_shape,
                     onp.dtype("float32")))
        self._mean_img = None
        if self.dtype != "uint8" and self._mean_img_path:
            self._mean_img = self._load_or_make_mean(who, self._mean_img_path)
        self.reset()

    # -------------------------------------------------------------------- set-up

    @staticmethod
    def _augmenters(who, data_shape, resize, pad, fill_value, rand_crop, random_resized_crop,
                    min_random_area, max_random_area, min_aspect_ratio, max_aspect_ratio,
                    inter_method, brightness, contrast, saturation, pca_noise):
        """The augmenter list (ndx.image's) and whether it draws from NumPy's random state."""
        from .. import _image_aug as aug
        inter_method = _int_arg(who, "inter_method", inter_method)
        if inter_method not in (0, 1, 2, 3, 4, 9, 10):
            raise ValueError(f"[{who}] inter_method must be 0 (nearest), 1 (bilinear), 2 "
                             f"(bicubic), 3 (area), 4 (Lanczos), 9 (auto) or 10 (random), got "
                             f"{inter_method}")
        resize = _int_arg(who, "resize", resize, -1)
        pad = _int_arg(who, "pad", pad, 0)
        fill_value = _int_arg(who, "fill_value", fill_value)
        if not 0 <= fill_value <= 255:
            raise ValueError(f"[{who}] fill_value must be in [0, 255], got {fill_value}")
        max_aspect_ratio = _real_arg(who, "max_aspect_ratio", max_aspect_ratio, 0.0)
        if min_aspect_ratio is not None:
            min_aspect_ratio = _real_arg(who, "min_aspect_ratio", min_aspect_ratio, 0.0, True)
        min_area = _real_arg(who, "min_random_area", min_random_area, 0.0, True)
        max_area = _real_arg(who, "max_random_area", max_random_area, 0.0, True)
        jitter = {name: _real_arg(who, name, v, 0.0) for name, v in (
            ("brightness", brightness), ("contrast", contrast), ("saturation", saturation),
            ("pca_noise", pca_noise))}
        if any(jitter.values()) and data_shape[0] != 3:
            raise ValueError(f"[{who}] brightness, contrast, saturation and pca_noise need RGB "
                             f"images (data_shape[0] == 3), got data_shape {data_shape}")

        height, width = data_shape[1], data_shape[2]
        augs = []
        if resize > 0:
            augs.append(aug.ResizeAug(resize, inter_method))
        if pad > 0:
            augs.append(_PadAug(pad, fill_value))
        if random_resized_crop:
            if not 0.0 < min_area <= max_area <= 1.0:
                raise ValueError(f"[{who}] random_resized_crop needs 0 < min_random_area <= "
                                 f"max_random_area <= 1, got {min_area}, {max_area}")
            if min_aspect_ratio is None:
                ratio = (1.0 - max_aspect_ratio, 1.0 + max_aspect_ratio)
            else:
                ratio = (min_aspect_ratio, max_aspect_ratio)
            if not 0.0 < ratio[0] <= ratio[1]:
                raise ValueError(f"[{who}] random_resized_crop needs aspect ratios 0 < min <= "
                                 f"max, got [{ratio[0]}, {ratio[1]}] (from min_aspect_ratio="
                                 f"{min_aspect_ratio}, max_aspect_ratio={max_aspect_ratio})")
            augs.append(aug.RandomSizedCropAug((width, height), (min_area, max_area), ratio,
                                               inter_method))
        else:
            if max_aspect_ratio != 0.0 or min_aspect_ratio is not None:
                raise NotImplementedError(
                    f"[{who}] max_aspect_ratio / min_aspect_ratio without random_resized_crop "
                    f"(MXNet's affine aspect-ratio augmentation) is not supported by ndx")
            augs.append(_FitsCheck(height, width))
            crop = aug.RandomCropAug if rand_crop else aug.CenterCropAug
            augs.append(crop((width, height), inter_method))
        color = []
        if jitter["brightness"] > 0:
            color.append(aug.BrightnessJitterAug(jitter["brightness"]))
        if jitter["contrast"] > 0:
            color.append(aug.ContrastJitterAug(jitter["contrast"]))
        if jitter["saturation"] > 0:
            color.append(aug.SaturationJitterAug(jitter["saturation"]))
        if jitter["pca_noise"] > 0:
            color.append(aug.LightingAug(jitter["pca_noise"], onp.array(aug._IMAGENET_EIGVAL),
                                         onp.array(aug._IMAGENET_EIGVEC)))
        if color:
            augs += [aug.CastAug("float32")] + color + [_to_8bit]
        return augs, jitter["pca_noise"] > 0

    def _normalize_args(self, who, norm):
        mean_img = norm["mean_img"] = _path_arg(who, "mean_img", norm["mean_img"])
        names = ("r", "g", "b", "a")[:self.data_shape[0]]
        self._mean = onp.array([_real_arg(who, f"mean_{c}", norm[f"mean_{c}"]) for c in names],
                               onp.float32).reshape(-1, 1, 1)
        std = []
        for c in names:
            v = _real_arg(who, f"std_{c}", norm[f"std_{c}"])
            if v == 0.0:
                raise ValueError(f"[{who}] std_{c} must not be 0")
            std.append(v)
        self._std = onp.array(std, onp.float32).reshape(-1, 1, 1)
        self._scale = _real_arg(who, "scale", norm["scale"])
        self._max_contrast = _real_arg(who, "max_random_contrast", norm["max_random_contrast"],
                                       0.0)
        self._max_illumination = _real_arg(who, "max_random_illumination",
                                           norm["max_random_illumination"], 0.0)
        self._mean_img_path = mean_img
        if self.dtype == "uint8":
            given = sorted(k for k, d in _NORMALIZE_DEFAULTS.items() if norm[k] != d)
            if given:
                logging.warning("[%s] uint8 output is not normalized: %s ignored (as MXNet "
                                "ignores them)", who, ", ".join(given))

    def _record_keys(self, who, num_parts, part_index):
        """(the keys of this part's records in file order, or None to read the file in order;
        {key: byte offset} for a scanned file without index, or None)."""
        images = self._images
        offsets = None
        if images.imgidx is not None:
            keys = sorted(images.imgidx, key=lambda k: images.imgrec.idx[k])
        elif self.shuffle or num_parts > 1:
            from .. import recordio
            offsets, reader = [], recordio.MXRecordIO(images.imgrec.uri, "r")
            try:
                while True:
                    at = reader.tell()
                    if reader.read() is None:
                        break
                    offsets.append(at)
            finally:
                reader.close()
            keys = list(range(len(offsets)))
        else:
            return None, None
        step = -(-len(keys) // num_parts)  # ceil
        return keys[part_index * step:(part_index + 1) * step], offsets

    # ----------------------------------------------------------------- records

    def _start_pass(self, shuffle=None):
        self._seq_pos = 0
        if self._keys is None:
            self._images.imgrec.reset()
            return
        self._order = list(self._keys)
        if self.shuffle if shuffle is None else shuffle:
            self._shuffle_rng.shuffle(self._order)
        self._pos = 0

    def _next_record(self):
        """(raw record bytes, key) of the next record of the pass, or None at its end."""
        rec = self._images.imgrec
        if self._keys is None:
            raw = rec.read()
            if raw is None:
                return None
            self._seq_pos += 1
            return raw, self._seq_pos - 1
        if self._pos >= len(self._order):
            return None
        key = self._order[self._pos]
        self._pos += 1
        if self._offsets is None:
            return rec.read_idx(key), key
        rec.handle.seek(self._offsets[key])
        return rec.read(), key

    def _label(self, header):
        imglist = self._images.imglist
        if imglist is not None:
            entry = imglist.get(int(header.id))
            if entry is None:
                raise ValueError(f"[{type(self).__name__}] record id {header.id} has no line "
                                 f"in path_imglist")
            label = onp.asarray(entry[0], onp.float32).reshape(-1)
        else:
            label = onp.asarray(header.label, onp.float32).reshape(-1)
        if label.size != self.label_width:
            raise ValueError(f"[{type(self).__name__}] record id {header.id} has {label.size} "
                             f"label(s), label_width is {self.label_width}")
        return label

    def _decode(self, payload, key):
        from ..image import decode_to_numpy, imdecode
        channels = self.data_shape[0]
        try:
            if channels == 4:
                arr = decode_to_numpy(payload, -1, type(self).__name__)
                if arr.ndim != 3 or arr.shape[2] != 4:
                    raise ValueError(f"data_shape asks for 4 channels (RGBA), the image has "
                                     f"{1 if arr.ndim == 2 else arr.shape[2]}")
                return _nd.array(onp.ascontiguousarray(arr[:, :, [2, 1, 0, 3]]),
                                 dtype=arr.dtype)
            return imdecode(payload, flag=1 if channels == 3 else 0)
        except (ValueError, TypeError) as e:
            raise RuntimeError(f"[{type(self).__name__}] record {key}: cannot decode its image: "
                               f"{e}") from None

    def _augmented(self, payload, key):
        """The record's image decoded and augmented, as a (C, H, W) float32 / uint8 array;
        call inside self._rng."""
        img = self._decode(payload, key)
        try:
            img = self._images.augmentation_transform(img)
        except _ImageTooSmall as e:
            raise ValueError(f"[{type(self).__name__}] record {key}: {e}") from None
        arr = img.asnumpy()
        want = self.data_shape[1:] + self.data_shape[:1]
        if arr.shape != want:
            raise ValueError(f"[{type(self).__name__}] record {key}: the augmenters give an "
                             f"image of shape {arr.shape} (H, W, C), data_shape needs {want}")
        return arr.transpose(2, 0, 1)

    def _next_example(self):
        record = self._next_record()
        if record is None:
            return None
        from .. import recordio
        raw, key = record
        header, payload = recordio.unpack(raw)
        label = self._label(header)
        if self.seed_aug is not None:
            self._rng.reseed(self.seed_aug + int(key))
        with self._rng:
            arr = self._augmented(payload, key)
            flip = self.mirror or (self.rand_mirror and random.random() < 0.5)
            if self.dtype == "float32":
                contrast = 1.0 + random.uniform(-self._max_contrast, self._max_contrast)
                illumination = random.uniform(-self._max_illumination, self._max_illumination)
        if self.dtype == "float32":
            mean = self._mean if self._mean_img is None else self._mean_img
            mult = (contrast * self._scale) / self._std
            data = (arr.astype(onp.float32) - mean) * mult + (illumination * self._scale) / \
                self._std
        elif self.dtype == "int8":
            mean = self._mean if self._mean_img is None else self._mean_img
            data = onp.clip(arr.astype(onp.float32) - _round_half_away(mean), -128, 127)
        else:
            data = arr
        if flip:
            data = data[:, :, ::-1]
        label = label[0] if self.label_width == 1 else label
        return data, label, int(header.id)

    def _load_or_make_mean(self, who, path):
        from .. import nd
        if os.path.isfile(path):
            loaded = nd.load(path)
            arrays = list(loaded.values()) if isinstance(loaded, dict) else list(loaded)
            if len(arrays) != 1:
                raise ValueError(f"[{who}] mean_img {path!r} must hold one array, it holds "
                                 f"{len(arrays)}")
            mean = arrays[0].asnumpy().astype(onp.float32)
            if mean.shape != self.data_shape:
                raise ValueError(f"[{who}] mean_img {path!r} has shape {mean.shape}, "
                                 f"data_shape is {self.data_shape}")
            return mean
        logging.info("[%s] no mean image at %s: computing it over the images", who, path)
        from .. import recordio
        total, count = onp.zeros(self.data_shape, onp.float64), 0
        self._start_pass(shuffle=False)
        while True:
            record = self._next_record()
            if record is None:
                break
            raw, key = record
            with self._rng:
                total += self._augmented(recordio.unpack(raw)[1], key)
            count += 1
        if count == 0:
            raise ValueError(f"[{who}] cannot compute mean_img: this part holds no images")
        mean = (total / count).astype(onp.float32)
        nd.save(path, {"mean_img": _nd.array(mean, dtype=mean.dtype)})
        return mean

    def close(self):
        """Closes the record file."""
        self._images.imgrec.close()


class ImageRecordUInt8Iter(ImageRecordIter):
    """ImageRecordIter with uint8 data (MXNet's deprecated name for
    ``ImageRecordIter(dtype='uint8')``): the augmented pixels, not normalized."""

    def __init__(self, *args, dtype="uint8", **kwargs):
        if dtype is not None and _dtype_arg(type(self).__name__, "dtype", dtype,
                                            _IMAGE_DTYPES) != "uint8":
            raise ValueError(f"[{type(self).__name__}] gives uint8 data; dtype must be "
                             f"'uint8', got {dtype!r}")
        super().__init__(*args, dtype="uint8", **kwargs)


class ImageRecordInt8Iter(ImageRecordIter):
    """ImageRecordIter with int8 data (MXNet's deprecated name for
    ``ImageRecordIter(dtype='int8')``): pixel minus the rounded mean, saturated to
    -128..127."""

    def __init__(self, *args, dtype="int8", **kwargs):
        if dtype is not None and _dtype_arg(type(self).__name__, "dtype", dtype,
                                            _IMAGE_DTYPES) != "int8":
            raise ValueError(f"[{type(self).__name__}] gives int8 data; dtype must be 'int8', "
                             f"got {dtype!r}")
        super().__init__(*args, dtype="int8", **kwargs)


# ------------------------------------------------------------------------------- CSV files

_CSV_DTYPES = ("float32", "int32", "int64")
_IGNORED_CSV_ARGS = ("prefetch_buffer", "ctx", "device_id")


def _csv_files(who, name, path):
    """The files a CSV argument names: the file, or a folder's files in name order."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if os.path.isfile(os.path.join(path, f)))
        if not files:
            raise ValueError(f"[{who}] {name}: the folder {path!r} holds no files")
        return files
    if not os.path.isfile(path):
        raise FileNotFoundError(f"[{who}] {name}: no file or folder {path!r}")
    return [path]


class _TextFileIter(_BatchIter):
    """A _BatchIter over text rows: self._data and self._labels (None without a label
    file) read rows as the batches need them (_CSVRows, _LibSVMRows)."""

    def _start_pass(self):
        self._data.restart()
        if self._labels is not None:
            self._labels.restart()
        self._row = 0

    def close(self):
        """Closes the files being read."""
        self._data.close()
        if self._labels is not None:
            self._labels.close()


class _CSVRows:
    """The rows of CSV files, read as they are needed: each non-blank line split at commas,
    its values parsed as dtype and checked to number `size`."""

    def __init__(self, who, name, files, shape, dtype):
        self.who, self.name, self.files = who, name, files
        self.shape, self.size = shape, math.prod(shape)
        self.dtype = onp.dtype(dtype)
        self._rows = None
        self.restart()

    def restart(self):
        if self._rows is not None:
            self._rows.close()  # closes the file it has open
        self._rows = self._read()

    def close(self):
        if self._rows is not None:
            self._rows.close()

    def next(self):
        """The next row as an array of `shape`, or None after the last."""
        return next(self._rows, None)

    def _read(self):
        for path in self.files:
            with open(path) as f:
                for n, line in enumerate(f, 1):
                    text = line.strip()
                    if text:
                        yield self._parse(text, path, n)

    def _value(self, token):
        if self.dtype.kind == "f":
            return float(token)
        try:
            return int(token)
        except ValueError:
            v = float(token)
            if not v.is_integer():
                raise ValueError(f"{token.strip()!r} is not an integer ({self.dtype.name} "
                                 f"data)") from None
            return int(v)

    def _parse(self, text, path, n):
        tokens = text.split(",")
        if len(tokens) != self.size:
            raise ValueError(f"[{self.who}] {path}:{n}: a row of {self.name} has {len(tokens)} "
                             f"values, its shape {self.shape} needs {self.size}")
        try:
            values = [self._value(t) for t in tokens]
        except ValueError as e:
            raise ValueError(f"[{self.who}] {path}:{n}: {self.name} must hold comma-separated "
                             f"numbers: {e}") from None
        try:
            return onp.array(values, dtype=self.dtype).reshape(self.shape)
        except OverflowError:
            raise ValueError(f"[{self.who}] {path}:{n}: a value of {self.name} does not fit "
                             f"in {self.dtype.name}") from None


class CSVIter(_TextFileIter):
    """MXNet's CSVIter: batches of rows of comma-separated numbers.

    data_csv: a CSV file, or a folder whose files are read one after another (in name order).
    Each non-blank line is one example: its values, parsed as dtype ('float32', 'int32' or
    'int64'), are reshaped to data_shape (a row's value count must be prod(data_shape)).
    label_csv: a CSV file (or folder) of the labels, one line per example, each reshaped to
    label_shape and read in dtype; a data row without its label line is an error, label lines
    beyond the data are not read (as MXNet). Without label_csv (None or MXNet's 'NULL') every
    label is 0 (float32, of label_shape).

    Batches: data [(batch_size,) + data_shape], label [(batch_size,) for label_shape (1,),
    else (batch_size,) + label_shape]; DataBatch.index counts the rows from 0 at every pass.
    round_batch: see the package (MXNet's documented example: four rows, batch_size 3 give
    rows 1-3 and 4, 1, 2 (pad 2); after reset() rows 3, 4, 1 (pad 1)). Files are read as the
    batches need them, so a malformed row raises when its batch is read. prefetch_buffer, ctx
    and device_id are accepted and ignored."""

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,), batch_size=1,
                 round_batch=True, dtype="float32", data_name="data",
                 label_name="softmax_label", **kwargs):
        who = type(self).__name__
        _check_extra(who, kwargs, _IGNORED_CSV_ARGS)
        data_csv, label_csv = _data_and_label_paths(
            who, ("data_csv", data_csv), ("label_csv", label_csv), "a CSV file or folder")
        batch_size = _int_arg(who, "batch_size", batch_size, 1)
        data_shape = _shape_arg(who, "data_shape", data_shape)
        label_shape = _shape_arg(who, "label_shape", label_shape)
        dtype = _dtype_arg(who, "dtype", "float32" if dtype is None else dtype, _CSV_DTYPES)
        round_batch = _flag_arg(who, "round_batch", round_batch)
        self.data_shape, self.label_shape, self.dtype = data_shape, label_shape, dtype
        self._data = _CSVRows(who, "data_csv", _csv_files(who, "data_csv", data_csv),
                              data_shape, dtype)
        self._labels = None
        label_dtype = "float32"
        if label_csv:
            self._labels = _CSVRows(who, "label_csv", _csv_files(who, "label_csv", label_csv),
                                    label_shape, dtype)
            label_dtype = dtype
        self._zero_label = onp.zeros(label_shape, onp.float32)
        self._row = 0
        batch_label = (batch_size,) if label_shape == (1,) else (batch_size,) + label_shape
        super().__init__(
            batch_size, round_batch,
            DataDesc(_name_arg(who, "data_name", data_name), (batch_size,) + data_shape,
                     onp.dtype(dtype)),
            DataDesc(_name_arg(who, "label_name", label_name), batch_label,
                     onp.dtype(label_dtype)))
        self.reset()

    def _next_example(self):
        data = self._data.next()
        if data is None:
            return None
        if self._labels is None:
            label = self._zero_label
        else:
            label = self._labels.next()
            if label is None:
                raise ValueError(f"[{type(self).__name__}] label_csv has fewer rows than "
                                 f"data_csv: no label for data row {self._row + 1}")
        if self.label_shape == (1,):
            label = label[0]
        self._row += 1
        return data, label, self._row - 1



# ---------------------------------------------------------------------------- LibSVM files

_IGNORED_LIBSVM_ARGS = ("prefetch_buffer", "ctx", "device_id")


class _LibSVMRows:
    """The rows of LibSVM-style text files: each non-blank line ``label idx:value ...`` with
    zero-based, ascending column indices below `width`, read as they are needed. A row is
    (label, columns (int64), values (float32)); `part` selects the part_index-th of num_parts
    contiguous runs of rows."""

    def __init__(self, who, name, files, width, part=(1, 0)):
        self.who, self.name, self.files, self.width = who, name, files, width
        num_parts, part_index = part
        total = 0
        for path in files:
            with open(path) as f:
                total += sum(1 for line in f if line.strip())
        self.first = total * part_index // num_parts
        self.stop = total * (part_index + 1) // num_parts
        self._rows = None
        self.restart()

    def restart(self):
        if self._rows is not None:
            self._rows.close()
        self._rows = self._read()

    def close(self):
        if self._rows is not None:
            self._rows.close()

    def next(self):
        return next(self._rows, None)

    def _read(self):
        row = 0
        for path in self.files:
            with open(path) as f:
                for n, line in enumerate(f, 1):
                    text = line.strip()
                    if not text:
                        continue
                    if self.first <= row < self.stop:
                        yield self._parse(text, path, n)
                    row += 1
                    if row >= self.stop:
                        return

    def _parse(self, text, path, n):
        tokens = text.split()
        where = f"[{self.who}] {path}:{n}: {self.name}"
        try:
            label = float(tokens[0])
            pairs = [t.split(":") for t in tokens[1:]]
            cols = onp.array([int(p[0]) for p in pairs], dtype=onp.int64)
            vals = onp.array([float(p[1]) for p in pairs], dtype=onp.float32)
            if any(len(p) != 2 for p in pairs):
                raise ValueError("an entry is not index:value")
        except (ValueError, IndexError) as e:
            raise ValueError(f"{where} a line must read 'label index:value ...': "
                             f"{e}") from None
        bad = cols[(cols < 0) | (cols >= self.width)]
        if bad.size:
            raise ValueError(f"{where} column index {int(bad[0])} is out of range for "
                             f"{self.width} columns (indices are zero-based)")
        if (onp.diff(cols) <= 0).any():
            raise ValueError(f"{where} column indices must be ascending and unique")
        return label, cols, vals


class LibSVMIter(_TextFileIter):
    """MXNet's LibSVMIter: batches of a LibSVM-style text file as CSR matrices.

    data_libsvm: a file, or a folder whose files are read in name order. Each non-blank line
    is ``label index:value index:value ...`` with zero-based, ascending column indices (MXNet's
    variant of the LibSVM format); data_shape is ``(num_columns,)``. The data batch is a
    ``CSRNDArray`` of shape ``(batch_size, num_columns)`` (float32). Without label_libsvm the
    label batch holds each line's label, dense float32 of shape ``(batch_size,)``; with it,
    the labels are that file's rows (same format, label_shape ``(width,)``), a CSR matrix.
    num_parts / part_index read one of num_parts contiguous runs of rows. round_batch as the
    package says (MXNet's LibSVMIter always rounds; round_batch=False pads with empty rows).
    prefetch_buffer, ctx and device_id are accepted and ignored."""

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,),
                 batch_size=1, round_batch=True, num_parts=1, part_index=0, data_name="data",
                 label_name="softmax_label", **kwargs):
        who = type(self).__name__
        _check_extra(who, kwargs, _IGNORED_LIBSVM_ARGS)
        data_libsvm, label_libsvm = _data_and_label_paths(
            who, ("data_libsvm", data_libsvm), ("label_libsvm", label_libsvm), "a file or folder")
        batch_size = _int_arg(who, "batch_size", batch_size, 1)
        data_shape = _shape_arg(who, "data_shape", data_shape)
        label_shape = _shape_arg(who, "label_shape", label_shape)
        for name, shape in (("data_shape", data_shape), ("label_shape", label_shape)):
            if len(shape) != 1:
                raise ValueError(f"[{who}] {name} must have one dimension (the column "
                                 f"count), got {shape}")
        num_parts, part_index = _part_args(who, num_parts, part_index)
        round_batch = _flag_arg(who, "round_batch", round_batch)
        self.data_shape, self.label_shape = data_shape, label_shape
        part = (num_parts, part_index)
        self._data = _LibSVMRows(who, "data_libsvm", _csv_files(who, "data_libsvm",
                                                                 data_libsvm),
                                 data_shape[0], part)
        self._labels = None
        if label_libsvm:
            self._labels = _LibSVMRows(who, "label_libsvm",
                                       _csv_files(who, "label_libsvm", label_libsvm),
                                       label_shape[0], part)
        self._row = 0
        self._slots = [None] * batch_size
        self._index_buf = onp.zeros(batch_size, onp.uint64)
        super().__init__(
            batch_size, round_batch,
            DataDesc(_name_arg(who, "data_name", data_name), (batch_size,) + data_shape,
                     onp.float32),
            DataDesc(_name_arg(who, "label_name", label_name),
                     (batch_size,) if self._labels is None else (batch_size,) + label_shape,
                     onp.float32),
            dense_buffers=False)
        self.reset()

    def _next_example(self):
        example = self._data.next()
        if example is None:
            return None
        label = example[0]
        if self._labels is not None:
            label = self._labels.next()
            if label is None:
                raise ValueError(f"[{type(self).__name__}] label_libsvm has fewer rows than "
                                 f"data_libsvm: no label for data row {self._row + 1}")
        self._row += 1
        return example[1:], label, self._row - 1

    def _store(self, slot, data, label, index):
        self._slots[slot] = (data, label)
        self._index_buf[slot] = index

    @staticmethod
    def _csr(rows, width):
        from ..nd import sparse
        counts = [r[0].size for r in rows]
        indptr = onp.concatenate([[0], onp.cumsum(counts)]).astype(onp.int64)
        cols = onp.concatenate([r[0] for r in rows] + [onp.zeros(0, onp.int64)])
        vals = onp.concatenate([r[1] for r in rows] + [onp.zeros(0, onp.float32)])
        return sparse.csr_matrix((vals, cols, indptr), shape=(len(rows), width))

    def _batch_arrays(self):
        empty = ((onp.zeros(0, onp.int64), onp.zeros(0, onp.float32)), None)
        filled = [s if s is not None else empty for s in self._slots]
        data = self._csr([s[0] for s in filled], self.data_shape[0])
        if self._labels is None:
            label = _nd.array(onp.array([s[1] or 0.0 for s in filled], onp.float32))
        else:
            label = self._csr([s[1][1:] if s[1] is not None else empty[0] for s in filled],
                              self.label_shape[0])
        self._slots = [None] * len(self._slots)  # a short next batch pads with empty rows
        return [data], [label]



# ---------------------------------------------------------------------------- MNIST files

def _read_idx_file(who, name, path, magic, dims):
    """An IDX file (MNIST's format; gzip-compressed too) as a uint8 NumPy array."""
    import gzip
    import struct
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    header = 4 + 4 * dims
    if len(raw) < header:
        raise ValueError(f"[{who}] {name} {path!r} is too short to be an IDX file")
    got, *shape = struct.unpack(f">{1 + dims}I", raw[:header])
    if got != magic:
        raise ValueError(f"[{who}] {name} {path!r} has magic number {got}, expected {magic} "
                         f"(an MNIST {'image' if dims == 3 else 'label'} file)")
    body = onp.frombuffer(raw, dtype=onp.uint8, offset=header)
    if body.size != math.prod(shape):
        raise ValueError(f"[{who}] {name} {path!r} holds {body.size} bytes for shape "
                         f"{tuple(shape)}")
    return body.reshape(shape)


class MNISTIter(_CurrentBatch, DataIter):
    """MXNet's MNISTIter: batches of the MNIST IDX files `image` and `label` (as published,
    or gzip-compressed).

    data: float32 pixels / 256 (MXNet's scaling), (batch_size, 1, rows, cols), or with
    flat=True (batch_size, rows * cols); label: float32 digits, (batch_size,). As MXNet's: the
    examples are shuffled once, when the iterator is made (shuffle=True by default; seed),
    every batch is full (an incomplete last batch is dropped, so pad is 0), and
    num_parts / part_index read the part_index-th of num_parts contiguous slices (each
    worker's share). silent=False logs the count and shape; other keyword arguments
    (prefetch_buffer, ctx, data_shape, ...) are ignored, as MXNet's parser ignores them."""

    def __init__(self, image="./train-images-idx3-ubyte", label="./train-labels-idx1-ubyte",
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, data_name="data", label_name="softmax_label", **kwargs):
        who = type(self).__name__  # (other keyword arguments are ignored, as MXNet's are)
        image = _existing_file(who, "image", _path_arg(who, "image", image))
        label = _existing_file(who, "label", _path_arg(who, "label", label))
        batch_size = _int_arg(who, "batch_size", batch_size, 1)
        num_parts, part_index = _part_args(who, num_parts, part_index)
        seed = _int_arg(who, "seed", seed)
        images = _read_idx_file(who, "image", image, 2051, 3)
        labels = _read_idx_file(who, "label", label, 2049, 1)
        images, labels = self._part(images, num_parts, part_index), \
            self._part(labels, num_parts, part_index)
        if len(images) != len(labels):
            raise ValueError(f"[{who}] {len(images)} images but {len(labels)} labels (in "
                             f"part {part_index} of {num_parts})")
        if _flag_arg(who, "shuffle", shuffle):
            order = onp.random.RandomState(seed).permutation(len(images))
            images, labels = images[order], labels[order]
        rows, cols = images.shape[1:]
        shape = (rows * cols,) if _flag_arg(who, "flat", flat) else (1, rows, cols)
        self._images = images.reshape((len(images),) + shape)
        self._labels = labels.astype(onp.float32)
        super().__init__(batch_size)
        self.provide_data = [DataDesc(_name_arg(who, "data_name", data_name),
                                      (batch_size,) + shape, onp.float32)]
        self.provide_label = [DataDesc(_name_arg(who, "label_name", label_name),
                                       (batch_size,), onp.float32)]
        if not _flag_arg(who, "silent", silent):
            logging.info("MNISTIter: load %d images, shuffle=%s, shape=%s", len(images),
                         bool(shuffle), (batch_size,) + shape)
        self._loc = 0
        self._current = None

    @staticmethod
    def _part(array, num_parts, part_index):
        count = len(array)  # (MXNet's split: count / num_parts * index, truncated)
        start = int(count / num_parts * part_index)
        end = int(count / num_parts * (part_index + 1))
        return array[start:end]

    def reset(self):
        self._loc = 0
        self._current = None

    def iter_next(self):
        begin, end = self._loc, self._loc + self.batch_size
        if end > len(self._images):
            return False
        data = self._images[begin:end].astype(onp.float32) * onp.float32(1 / 256)
        self._current = DataBatch(
            [_nd.array(data)], [_nd.array(self._labels[begin:end])], pad=0,
            index=onp.arange(begin, end, dtype=onp.uint64), provide_data=self.provide_data,
            provide_label=self.provide_label)
        self._loc = end
        return True

