"""DataLoaderIter: a gluon DataLoader of (data, label) batches as an mx.io.DataIter, so that
Module.fit / score / predict read it. A last batch smaller than the first is padded with its
own first examples to the batch size (getpad() says how many), as MXNet's."""
from .. import numpy as _np
from ..io import DataDesc, DataIter

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """The batches of `loader` (each a (data, label) pair) as DataBatches named data_name /
    label_name, cast to dtype; the batch size is the first batch's."""

    def __init__(self, loader, data_name="data", label_name="softmax_label", dtype="float32"):
        super().__init__()
        self._loader = loader
        self._iter = iter(loader)
        try:
            data, label = self._pair(next(self._iter))
        except StopIteration:
            raise ValueError("[DataLoaderIter] the loader yields no batches") from None
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, tuple(data.shape), dtype)]
        self.provide_label = [DataDesc(label_name, tuple(label.shape), dtype)]
        self._current_batch = None
        self.reset()

    @staticmethod
    def _pair(batch):
        if not (isinstance(batch, (list, tuple)) and len(batch) == 2):
            raise TypeError(f"[DataLoaderIter] the loader must yield (data, label) pairs, got "
                            f"{type(batch).__name__}")
        return batch

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        try:
            self._current_batch = self._pair(next(self._iter))
        except StopIteration:
            self._current_batch = None
        return self._current_batch is not None

    def _padded(self, part):
        arr = _np.array(part, dtype=self.dtype) if not isinstance(part, _np.ndarray) \
            else part.astype(self.dtype)
        pad = self.getpad()
        if pad:  # (cycling through the batch: a pad may exceed the rows there are)
            rows = _np.array([i % arr.shape[0] for i in range(pad)], dtype="int64")
            arr = _np.concatenate([arr, arr[rows]], axis=0)
        return [arr]

    def getdata(self):
        return self._padded(self._current_batch[0])

    def getlabel(self):
        return self._padded(self._current_batch[1])

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None
