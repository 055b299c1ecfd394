"""gluon.data.vision: image data sets read from local files and image transforms, as MXNet's
gluon.data.vision has them."""
from . import datasets, transforms
from .datasets import (
    CIFAR10,
    CIFAR100,
    MNIST,
    FashionMNIST,
    ImageFolderDataset,
    ImageListDataset,
    ImageRecordDataset,
)

__all__ = ["datasets", "transforms", "MNIST", "FashionMNIST", "CIFAR10", "CIFAR100",
           "ImageFolderDataset", "ImageListDataset", "ImageRecordDataset"]
