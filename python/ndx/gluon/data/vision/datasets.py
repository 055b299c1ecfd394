"""gluon.data.vision.datasets: MNIST, FashionMNIST, CIFAR10 and CIFAR100 read from the files
MXNet downloads, in MXNet's layout: data (N, H, W, C) uint8, labels int32, and `transform`
called as transform(data, label). ndx downloads nothing: the files must already be in `root`
(a missing one raises FileNotFoundError naming it)."""
import gzip
import os
import struct

import numpy as _onp

from .... import numpy as np
from ..dataset import Dataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100"]


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
