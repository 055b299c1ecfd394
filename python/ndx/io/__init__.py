"""MXNet's data iterators (``mx.io``): DataDesc, DataBatch, the DataIter protocol, NDArrayIter
(with MXNet's pad / discard / roll_over handling of the last batch), ResizeIter and
PrefetchingIter; and MXNet's file iterators, written in Python: ImageRecordIter (with
ImageRecordUInt8Iter / ImageRecordInt8Iter) over image RecordIO files, CSVIter over CSV
text and LibSVMIter over LibSVM-style text (CSR batches), batching by MXNet's round_batch
rules. MNISTIter is not built (gluon.data.vision reads MNIST)."""
from .file_iter import (
    CSVIter,
    ImageRecordInt8Iter,
    ImageRecordIter,
    ImageRecordUInt8Iter,
    LibSVMIter,
)
from .io import DataBatch, DataDesc, DataIter, NDArrayIter, PrefetchingIter, ResizeIter

__all__ = ["CSVIter", "DataBatch", "DataDesc", "DataIter", "ImageRecordInt8Iter",
           "ImageRecordIter", "ImageRecordUInt8Iter", "LibSVMIter", "NDArrayIter",
           "PrefetchingIter", "ResizeIter"]
