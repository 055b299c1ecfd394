"""MXNet 1.x's gluon.contrib.nn names for layers in gluon.nn: Concurrent and HybridConcurrent
(nn.Concatenate / nn.HybridConcatenate), Identity, SyncBatchNorm and PixelShuffle1D/2D/3D."""
from ..nn import Concatenate as Concurrent
from ..nn import HybridConcatenate as HybridConcurrent
from ..nn import Identity, PixelShuffle1D, PixelShuffle2D, PixelShuffle3D, SyncBatchNorm

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "PixelShuffle1D", "PixelShuffle2D",
           "PixelShuffle3D", "SyncBatchNorm"]
