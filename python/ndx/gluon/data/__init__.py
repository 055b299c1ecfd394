"""gluon.data: datasets, samplers, batchify functions and the DataLoader, as MXNet has them."""
from . import batchify, dataloader, dataset, sampler, vision
from .dataloader import DataLoader
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import (
    BatchSampler,
    DistributedSampler,
    FilterSampler,
    IntervalSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SplitSampler,
)

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "DataLoader",
           "Sampler",
           "SequentialSampler", "RandomSampler", "BatchSampler", "IntervalSampler",
           "FilterSampler", "SplitSampler", "DistributedSampler", "batchify", "dataloader",
           "dataset", "sampler", "vision"]
