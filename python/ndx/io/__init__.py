"""MXNet's data iterators (``mx.io``): DataDesc, DataBatch, the DataIter protocol, NDArrayIter
(with MXNet's pad / discard / roll_over handling of the last batch), ResizeIter and
PrefetchingIter; and MXNet's file iterators, written in Python: ImageRecordIter (with
ImageRecordUInt8Iter / ImageRecordInt8Iter) over image RecordIO files, CSVIter over CSV
text, LibSVMIter over LibSVM-style text (CSR batches), batching by MXNet's round_batch
rules, and MNISTIter over MNIST's IDX files."""
from .file_iter import (
    CSVIter,
    ImageRecordInt8Iter,
    ImageRecordIter,
    ImageRecordUInt8Iter,
    LibSVMIter,
    MNISTIter,
)
from .io import DataBatch, DataDesc, DataIter, NDArrayIter, PrefetchingIter, ResizeIter

__all__ = ["CSVIter", "DataBatch", "DataDesc", "DataIter", "ImageRecordInt8Iter",
           "ImageRecordIter", "ImageRecordUInt8Iter", "LibSVMIter", "MNISTIter", "NDArrayIter",
           "PrefetchingIter", "ResizeIter"]
