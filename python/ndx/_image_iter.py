"""MXNet's ``mx.image.ImageIter``, re-exported by ndx.image: batches of decoded, augmented
images in (N, C, H, W) float32 with their labels, read from a RecordIO file (with or without
its .idx), from a .lst image list with a root folder, or from an in-memory list."""
import logging
import numbers
import os
import random

import numpy as onp

from . import numpy as _np
from . import recordio
from ._image_aug import CreateAugmenter, _data_shape
from .image import imdecode as _imdecode
from .io import DataBatch, DataDesc, DataIter

__all__ = ["ImageIter"]

_LABEL_DTYPES = ("int32", "float32", "int64", "float64")
_LAST_BATCH = ("pad", "discard", "roll_over")


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _existing_file(who, name, path):
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"[{who}] {name}: no file {path}")
    return path


class ImageIter(DataIter):
    """Image batches as MXNet's ImageIter: each DataBatch holds data [(batch_size, C, H, W)
    float32] and label [(batch_size,) or (batch_size, label_width) of dtype].

    Sources: path_imgrec, a RecordIO file of pack / pack_img records (path_imgidx, its index,
    is needed to shuffle or shard it); path_imglist, a .lst file of lines
    'index<TAB>label(s)<TAB>path', images read from path_root; or imglist, a list of
    [label or labels..., path] items. A list given with a .rec file supplies the labels of the
    records with its indices. Each image is decoded (imdecode, RGB), passed through aug_list
    (by default CreateAugmenter(data_shape, **kwargs)) and transposed to (C, H, W); the
    result must have data_shape.

    shuffle reorders the images (Python's random.shuffle) at every reset(). num_parts /
    part_index keep the part_index-th of num_parts equal slices of the images (the remainder
    left out). last_batch_handle: 'pad' completes the last batch with images from the start
    (DataBatch.pad counts them), 'discard' drops it, 'roll_over' keeps its images for the first
    batch after reset() (whose pad, as MXNet's, counts the images that batch takes from the new
    epoch)."""

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name="data",
                 label_name="softmax_label", dtype="float32", last_batch_handle="pad",
                 **kwargs):
        super().__init__(batch_size)
        who = type(self).__name__
        if not _is_int(batch_size) or batch_size < 1:
            raise ValueError(f"[{who}] batch_size must be an int >= 1, got {batch_size!r}")
        if not _is_int(label_width) or label_width < 1:
            raise ValueError(f"[{who}] label_width must be an int >= 1, got {label_width!r}")
        if not (path_imgrec or path_imglist or isinstance(imglist, (list, tuple))):
            raise ValueError(f"[{who}] give path_imgrec (a .rec file), path_imglist (a .lst "
                             f"file) or imglist (a list of [label, path] items)")
        if imglist is not None and not isinstance(imglist, (list, tuple)):
            raise TypeError(f"[{who}] imglist must be a list of [label(s)..., path] items, got "
                            f"{type(imglist).__name__}")
        try:
            dtype = onp.dtype(dtype).name
        except TypeError:
            dtype = repr(dtype)
        if dtype not in _LABEL_DTYPES:
            raise ValueError(f"[{who}] dtype (the labels' type) must be one of "
                             f"{_LABEL_DTYPES}, got {dtype}")
        if last_batch_handle not in _LAST_BATCH:
            raise ValueError(f"[{who}] last_batch_handle must be one of {_LAST_BATCH}, got "
                             f"{last_batch_handle!r}")
        if not _is_int(num_parts) or num_parts < 1:
            raise ValueError(f"[{who}] num_parts must be an int >= 1, got {num_parts!r}")
        if not _is_int(part_index) or not 0 <= part_index < num_parts:
            raise ValueError(f"[{who}] part_index must be an int in [0, {num_parts}), got "
                             f"{part_index!r}")
        self.check_data_shape(data_shape)
        data_shape = tuple(int(d) for d in data_shape)

        self.imgrec, self.imgidx = None, None
        if path_imgrec:
            path_imgrec = _existing_file(who, "path_imgrec", path_imgrec)
            if path_imgidx:
                path_imgidx = _existing_file(who, "path_imgidx", path_imgidx)
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")

        keys = None
        if path_imglist:
            self.imglist, keys = self._read_list_file(
                _existing_file(who, "path_imglist", path_imglist), dtype)
        elif imglist is not None:
            self.imglist, keys = self._read_list(imglist, dtype)
        else:
            self.imglist = None
        self.path_root = path_root

        self.batch_size, self.data_shape = batch_size, data_shape
        self.label_width, self.dtype = label_width, dtype
        self.shuffle, self.last_batch_handle = bool(shuffle), last_batch_handle
        self.provide_data = [DataDesc(data_name, (batch_size,) + data_shape)]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [DataDesc(label_name, label_shape, onp.dtype(dtype))]

        if self.imgrec is None:
            self.seq = list(keys)
        elif self.imgidx is not None:
            self.seq = list(self.imgidx)
        elif shuffle or num_parts > 1:
            raise ValueError(f"[{who}] shuffle and num_parts > 1 need the record file's index "
                             f"(path_imgidx)")
        else:
            self.seq = None  # records read in file order
        if num_parts > 1:
            part = len(self.seq) // num_parts
            self.seq = self.seq[part_index * part:(part_index + 1) * part]
        self.num_image = len(self.seq) if self.seq is not None else None

        if aug_list is None:
            self.auglist = CreateAugmenter(data_shape, **kwargs)
        else:
            if kwargs:
                logging.warning("[%s] aug_list is given: the augmenter arguments %s are "
                                "ignored", who, sorted(kwargs))
            if not isinstance(aug_list, (list, tuple)) or not all(callable(a)
                                                                  for a in aug_list):
                raise TypeError(f"[{who}] aug_list must be a list of augmenters, got "
                                f"{type(aug_list).__name__}")
            self.auglist = list(aug_list)

        self.cur = 0
        self._ended = False      # the epoch is over: next() raises StopIteration until reset()
        self._rolled = None      # roll_over: the last short batch's (data, label) items
        self.reset()

    # ------------------------------------------------------------------------- sources

    def _label(self, values, dtype, where):
        try:
            return onp.asarray(values, dtype=onp.float64).astype(dtype).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f"[{type(self).__name__}] {where}: labels must be numbers, got "
                             f"{values!r}") from None

    def _read_list_file(self, path, dtype):
        """{index: (labels, image path)} and the indices in file order, from a .lst file."""
        items, keys = {}, []
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                parts = line.rstrip("\r\n").split("\t")
                if len(parts) < 3:
                    raise ValueError(f"[{type(self).__name__}] {path}:{n}: expected "
                                     f"'index<TAB>label(s)<TAB>path', got {line.strip()!r}")
                try:
                    key = int(parts[0])
                except ValueError:
                    raise ValueError(f"[{type(self).__name__}] {path}:{n}: the index must be "
                                     f"an int, got {parts[0]!r}") from None
                items[key] = (self._label(parts[1:-1], dtype, f"{path}:{n}"), parts[-1])
                keys.append(key)
        return items, keys

    def _read_list(self, imglist, dtype):
        """{index: (labels, image path)} for an in-memory list (indices 1, 2, ... as MXNet)."""
        who = type(self).__name__
        items, keys = {}, []
        for i, item in enumerate(imglist):
            if not isinstance(item, (list, tuple)) or len(item) < 2:
                raise TypeError(f"[{who}] imglist[{i}] must be [label(s)..., path], got "
                                f"{item!r}")
            if not isinstance(item[-1], (str, os.PathLike)):
                raise TypeError(f"[{who}] imglist[{i}] must end with the image path, got "
                                f"{type(item[-1]).__name__}")
            labels = item[:-1] if len(item) > 2 else item[0]
            items[i + 1] = (self._label(labels, dtype, f"imglist[{i}]"), os.fspath(item[-1]))
            keys.append(i + 1)
        return items, keys

    def next_sample(self):
        """(label, encoded image bytes) of the next image; StopIteration at the end of the
        epoch."""
        if self.seq is None:
            record = self.imgrec.read()
            if record is None:
                raise StopIteration
            self.cur += 1
            header, img = recordio.unpack(record)
            return header.label, img
        if self.cur >= self.num_image:
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            header, img = recordio.unpack(self.imgrec.read_idx(idx))
            if self.imglist is None:
                return header.label, img
            if idx not in self.imglist:
                raise KeyError(f"[{type(self).__name__}] record {idx} is not in the image "
                               f"list")
            return self.imglist[idx][0], img
        label, fname = self.imglist[idx]
        return label, self.read_image(fname)

    def read_image(self, fname):
        """The bytes of the image file fname, under path_root."""
        path = os.path.join(self.path_root or "", fname)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"[{type(self).__name__}] no image file {path}")
        with open(path, "rb") as f:
            return f.read()

    # ------------------------------------------------------------------ image pipeline

    def check_data_shape(self, data_shape):
        """data_shape must be (3, height, width)."""
        who = type(self).__name__
        _data_shape(who, data_shape)
        if data_shape[0] != 3:
            raise ValueError(f"[{who}] data_shape must have 3 channels (RGB images), got "
                             f"{tuple(data_shape)!r}")

    def check_valid_image(self, data):
        """A RuntimeError when the decoded image is empty (such images are skipped)."""
        if data.ndim != 3 or data.shape[0] == 0 or data.shape[1] == 0:
            raise RuntimeError(f"[{type(self).__name__}] empty image of shape "
                               f"{tuple(data.shape)}")

    def imdecode(self, s):
        """The (H, W, 3) RGB uint8 image in the bytes s (a RuntimeError naming the image when
        it cannot be decoded)."""
        try:
            return _imdecode(s)
        except (ValueError, TypeError) as e:
            idx = self.seq[self.cur - 1] if self.seq is not None else self.cur - 1
            if self.imglist is not None and idx in self.imglist:
                where = f"file {self.imglist[idx][1]}"
            else:
                where = f"record {idx}"
            raise RuntimeError(f"[{type(self).__name__}] broken image, {where}: {e}") from None

    def augmentation_transform(self, data):
        """data passed through each augmenter of auglist."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """(H, W, C) -> (C, H, W)."""
        return datum.transpose(2, 0, 1)

    def _next_item(self):
        """(data (C, H, W), label) of the next valid image; StopIteration at the end."""
        while True:
            label, s = self.next_sample()
            data = self.imdecode(s)
            try:
                self.check_valid_image(data)
            except RuntimeError as e:
                logging.debug("Invalid image, skipping: %s", e)
                continue
            data = self.postprocess_data(self.augmentation_transform(data))
            if tuple(data.shape) != self.data_shape:
                raise ValueError(f"[{type(self).__name__}] the augmenters give images of "
                                 f"shape {tuple(data.shape)} (C, H, W), data_shape is "
                                 f"{self.data_shape}")
            return data, self._checked_label(label)

    def _checked_label(self, label):
        arr = onp.asarray(label, dtype=onp.float64).reshape(-1)
        if arr.size != self.label_width:
            raise ValueError(f"[{type(self).__name__}] an image has {arr.size} labels, "
                             f"label_width is {self.label_width}")
        return arr

    # ------------------------------------------------------------------------ iteration

    def _rewind(self):
        self.cur = 0
        if self.seq is None and self.imgrec is not None:
            self.imgrec.reset()

    def reset(self):
        """Back to the first batch (reshuffled with shuffle); roll_over keeps the images left
        over for the next batch."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        self._rewind()
        self._ended = False

    def hard_reset(self):
        """reset(), dropping the images roll_over kept."""
        self._rolled = None
        self.reset()

    def _batch(self, items, pad):
        data = _np.stack([d for d, _ in items])
        if onp.dtype(data.dtype) != onp.float32:
            data = data.astype("float32")
        labels = onp.stack([lab for _, lab in items]).astype(self.dtype)
        if self.label_width == 1:
            labels = labels.reshape(-1)
        return DataBatch([data], [_np.array(labels, dtype=self.dtype)], pad=pad)

    def next(self):
        if self._ended:
            raise StopIteration
        items, self._rolled = self._rolled or [], None
        rolled = len(items)
        while len(items) < self.batch_size:
            try:
                items.append(self._next_item())
            except StopIteration:
                break
        if len(items) == self.batch_size:
            return self._batch(items, self.batch_size - rolled if rolled else 0)
        self._ended = True  # the epoch is over
        if not items or self.last_batch_handle == "discard":
            raise StopIteration
        if self.last_batch_handle == "roll_over":
            self._rolled = items
            raise StopIteration
        count = len(items)  # pad: complete the batch from the start (cycling if need be)
        self._rewind()
        while len(items) < self.batch_size:
            try:
                items.append(self._next_item())
            except StopIteration:
                self._rewind()
        return self._batch(items, self.batch_size - count)
