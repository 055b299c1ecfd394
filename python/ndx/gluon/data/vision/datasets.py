"""gluon.data.vision.datasets: MNIST, FashionMNIST, CIFAR10 and CIFAR100 read from the files
MXNet downloads, in MXNet's layout: data (N, H, W, C) uint8, labels int32, and `transform`
called as transform(data, label). ndx downloads nothing: the files must already be in `root`
(a missing one raises FileNotFoundError naming it). ImageFolderDataset, ImageListDataset and
ImageRecordDataset decode image files through ndx.image (Pillow)."""
import gzip
import os
import struct

import numpy as _onp

from .... import numpy as np
from ..dataset import Dataset, RecordFileDataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageFolderDataset",
           "ImageListDataset", "ImageRecordDataset"]


class _FileDataset(Dataset):
    def __init__(self, root, train, transform):
        self._root = os.path.expanduser(root)
        self._train = bool(train)
        self._transform = transform
        data, label = self._read()
        self._data = np.array(data, dtype="uint8")
        self._label = label.astype(_onp.int32)

    def _path(self, name):
        path = os.path.join(self._root, name)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"[{type(self).__name__}] {path} not found: ndx does not download data sets; "
                f"put MXNet's file {name} in {self._root}")
        return path

    def __len__(self):
        return len(self._label)

    def __getitem__(self, idx):
        data, label = self._data[idx], self._label[idx]
        if self._transform is not None:
            return self._transform(data, label)
        return data, label


def _read_idx(path, magic, dims):
    """An IDX file (gzip-compressed or not) as a NumPy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 + 4 * dims:
        raise ValueError(f"[MNIST] {path} is too short to be an IDX file")
    got, *shape = struct.unpack(f">{1 + dims}I", raw[:4 + 4 * dims])
    if got != magic:
        raise ValueError(f"[MNIST] {path} has magic number {got}, expected {magic}")
    body = _onp.frombuffer(raw, dtype=_onp.uint8, offset=4 + 4 * dims)
    if body.size != int(_onp.prod(shape)):
        raise ValueError(f"[MNIST] {path} holds {body.size} bytes of data for shape "
                         f"{tuple(shape)}")
    return body.reshape(shape)


class MNIST(_FileDataset):
    """The MNIST digits: 60,000 training or 10,000 test images of (28, 28, 1)."""
    _files = {True: ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
              False: ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "mnist"), train=True,
                 transform=None):
        super().__init__(root, train, transform)

    def _read(self):
        images, labels = self._files[self._train]
        data = _read_idx(self._path(images), 2051, 3)
        label = _read_idx(self._path(labels), 2049, 1)
        if len(data) != len(label):
            raise ValueError(f"[{type(self).__name__}] {len(data)} images but {len(label)} "
                             f"labels")
        return data[..., None], label


class FashionMNIST(MNIST):
    """Fashion-MNIST: MNIST's format and sizes, clothing instead of digits."""

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "fashion-mnist"),
                 train=True, transform=None):
        super().__init__(root, train, transform)


class CIFAR10(_FileDataset):
    """CIFAR-10: 50,000 training or 10,000 test images of (32, 32, 3), from the binary
    version's cifar-10-batches-bin/*.bin."""
    _dir, _label_bytes = "cifar-10-batches-bin", 1

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "cifar10"), train=True,
                 transform=None):
        super().__init__(root, train, transform)

    def _names(self):
        if self._train:
            return [f"data_batch_{i}.bin" for i in range(1, 6)]
        return ["test_batch.bin"]

    def _read(self):
        record = self._label_bytes + 3 * 32 * 32
        data, label = [], []
        for name in self._names():
            raw = _onp.fromfile(self._path(os.path.join(self._dir, name)), dtype=_onp.uint8)
            if raw.size % record:
                raise ValueError(f"[{type(self).__name__}] {name} is not a whole number of "
                                 f"{record}-byte records")
            raw = raw.reshape(-1, record)
            label.append(raw[:, self._label_bytes - 1])
            data.append(raw[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        return _onp.concatenate(data), _onp.concatenate(label)


class CIFAR100(CIFAR10):
    """CIFAR-100 (binary version, cifar-100-binary/*.bin): fine labels (100 classes), or the 20
    coarse ones with fine_label=False."""
    _dir = "cifar-100-binary"

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "cifar100"),
                 fine_label=False, train=True, transform=None):
        self._fine = bool(fine_label)
        super().__init__(root, train, transform)

    def _names(self):
        return ["train.bin" if self._train else "test.bin"]

    def _read(self):
        record = 2 + 3 * 32 * 32
        name = self._names()[0]
        raw = _onp.fromfile(self._path(os.path.join(self._dir, name)), dtype=_onp.uint8)
        if raw.size % record:
            raise ValueError(f"[CIFAR100] {name} is not a whole number of {record}-byte records")
        raw = raw.reshape(-1, record)
        label = raw[:, 1 if self._fine else 0]
        return raw[:, 2:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), label


class ImageFolderDataset(Dataset):
    """Images in class folders (root/<class>/<image>), as MXNet's: classes are the sorted
    folder names (``synsets``), an image's label is its folder's index, items are read with
    ndx.image.imread(path, flag) when indexed. Files other than .jpg / .jpeg / .png, and files
    directly in root, are skipped with a warning."""

    _exts = (".jpg", ".jpeg", ".png")

    def __init__(self, root, flag=1, transform=None):
        import warnings
        self._root = os.path.expanduser(root)
        if not os.path.isdir(self._root):
            raise FileNotFoundError(f"[ImageFolderDataset] {self._root} is not a directory")
        self._flag, self._transform = flag, transform
        self.synsets, self.items = [], []
        for folder in sorted(os.listdir(self._root)):
            path = os.path.join(self._root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=2)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for name in sorted(os.listdir(path)):
                file = os.path.join(path, name)
                if os.path.splitext(name)[1].lower() not in self._exts:
                    warnings.warn(f"Ignoring {file} of type {os.path.splitext(name)[1]}. Only "
                                  f"support {', '.join(self._exts)}", stacklevel=2)
                    continue
                self.items.append((file, label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        from .... import image
        path, label = self.items[idx]
        img = image.imread(path, self._flag)
        return self._transform(img, label) if self._transform is not None else (img, label)


class ImageListDataset(Dataset):
    """Images listed in imglist: a .lst file of 'index<TAB>label(s)<TAB>path' lines, or a list
    of [label(s), path] entries; paths are relative to root (MXNet's ImageListDataset)."""

    def __init__(self, root=".", imglist=None, flag=1):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self.items = []
        if isinstance(imglist, str):
            with open(os.path.join(self._root, imglist) if not os.path.isfile(imglist)
                      else imglist) as f:
                for n, line in enumerate(f, 1):
                    parts = line.strip().split("\t")
                    if parts == [""]:
                        continue
                    if len(parts) < 3:
                        raise ValueError(f"[ImageListDataset] {imglist}:{n}: expected "
                                         f"'index<TAB>label<TAB>path', got {line.strip()!r}")
                    labels = [float(v) for v in parts[1:-1]]
                    self.items.append((os.path.join(self._root, parts[-1]),
                                       labels[0] if len(labels) == 1 else _onp.array(labels)))
        elif isinstance(imglist, (list, tuple)):
            for entry in imglist:
                *labels, path = entry
                label = labels[0] if len(labels) == 1 else _onp.array(labels, _onp.float32)
                self.items.append((os.path.join(self._root, path), label))
        else:
            raise TypeError(f"[ImageListDataset] imglist must be a .lst file name or a list, "
                            f"got {type(imglist).__name__}")

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        from .... import image
        path, label = self.items[idx]
        return image.imread(path, self._flag), label


class ImageRecordDataset(RecordFileDataset):
    """Images packed in a RecordIO file (with its .idx), as MXNet's im2rec writes them: each
    item is (ndx.image.imdecode(payload, flag), header.label)."""

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag, self._transform = flag, transform

    def __getitem__(self, idx):
        from .... import image, recordio
        header, payload = recordio.unpack(super().__getitem__(idx))
        img = image.imdecode(payload, self._flag)
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label
