"""MXNet's data iterators (``mx.io``): DataDesc, DataBatch, the DataIter protocol, NDArrayIter
(with MXNet's pad / discard / roll_over handling of the last batch), ResizeIter and
PrefetchingIter. MXNet's C++ file iterators (CSVIter, MNISTIter, ImageRecordIter, ...) are not
built; gluon.data (DataLoader, the vision data sets) covers those formats."""
from .io import DataBatch, DataDesc, DataIter, NDArrayIter, PrefetchingIter, ResizeIter

__all__ = ["DataBatch", "DataDesc", "DataIter", "NDArrayIter", "PrefetchingIter", "ResizeIter"]
