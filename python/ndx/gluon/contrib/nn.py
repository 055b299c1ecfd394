"""MXNet 1.x's gluon.contrib.nn: names for layers in gluon.nn (Concurrent and
HybridConcurrent are nn.Concatenate / nn.HybridConcatenate; Identity, SyncBatchNorm and
PixelShuffle1D/2D/3D) and SparseEmbedding, an embedding whose table is a row_sparse weight."""
from ..block import Block
from ..nn import Concatenate as Concurrent
from ..nn import HybridConcatenate as HybridConcurrent
from ..nn import Identity, PixelShuffle1D, PixelShuffle2D, PixelShuffle3D, SyncBatchNorm
from ..parameter import Parameter

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "PixelShuffle1D", "PixelShuffle2D",
           "PixelShuffle3D", "SyncBatchNorm", "SparseEmbedding"]


class SparseEmbedding(Block):
    """MXNet 1.x's contrib.nn.SparseEmbedding: maps ids to rows of an (input_dim, output_dim)
    table held as a row_sparse weight (Parameter(stype='row_sparse')). Each forward pulls
    only the rows of its ids from the Trainer's store and their gradient is row_sparse, so a
    step touches those rows alone (with lazy_update); a Trainer must be created with the
    parameters before the first forward pass. A Block: it does not hybridize."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = Parameter("weight", shape=(input_dim, output_dim),
                                init=weight_initializer, dtype=dtype, stype="row_sparse",
                                grad_stype="row_sparse")

    def forward(self, x):
        from ...nd import sparse
        from ...nd.ndarray import NDArray
        out = sparse.Embedding(x, self.weight.row_sparse_data(x), **self._kwargs)
        return out if type(x) is NDArray else out.as_np_ndarray()  # (the input's kind)

    def __repr__(self):
        return (f"{type(self).__name__}({self._kwargs['input_dim']} -> "
                f"{self._kwargs['output_dim']}, {self._kwargs['dtype']})")
