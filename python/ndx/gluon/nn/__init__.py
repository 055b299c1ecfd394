"""Layers: Dense, Activation, Dropout, Flatten, Embedding, LayerNorm, BatchNorm, GroupNorm,
InstanceNorm, SyncBatchNorm, BatchNormReLU, Lambda, HybridLambda, PixelShuffle1D/2D/3D,
ReflectionPad2D, Conv1D, Conv2D, MaxPool2D, AvgPool2D, GlobalAvgPool2D, Sequential,
HybridSequential, Concatenate, HybridConcatenate, Identity; activations: LeakyReLU, PReLU, ELU,
SELU, GELU, Swish, SiLU."""
from ..block import Block, HybridBlock, SymbolBlock
from .activations import ELU, GELU, SELU, LeakyReLU, PReLU, SiLU, Swish
from .basic_layers import (
    Activation,
    BatchNorm,
    BatchNormReLU,
    Concatenate,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    GroupNorm,
    HybridConcatenate,
    HybridLambda,
    HybridSequential,
    Identity,
    InstanceNorm,
    Lambda,
    LayerNorm,
    PixelShuffle1D,
    PixelShuffle2D,
    PixelShuffle3D,
    ReflectionPad2D,
    Sequential,
    SyncBatchNorm,
)
from .conv_layers import (
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalAvgPool3D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPool3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
)

__all__ = ["Activation", "AvgPool2D", "BatchNorm", "Conv1D", "Conv2D", "Dense", "Dropout", "ELU",
           "Embedding", "Flatten", "GELU", "GlobalAvgPool2D", "GroupNorm", "HybridLambda",
           "HybridSequential", "InstanceNorm", "Lambda", "LayerNorm", "LeakyReLU", "MaxPool2D",
           "PReLU", "PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D", "ReflectionPad2D",
           "SELU", "Sequential", "SiLU", "Swish"]
# 1-d / 3-d, transposed and global max convolution layers (issue 15)
__all__ += ["AvgPool1D", "AvgPool3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3D",
            "Conv3DTranspose", "GlobalAvgPool1D", "GlobalAvgPool3D", "GlobalMaxPool1D",
            "GlobalMaxPool2D", "GlobalMaxPool3D", "MaxPool1D", "MaxPool3D"]
# MXNet 2's containers and aliases, and the block classes gluon.nn re-exports as MXNet's does
__all__ += ["BatchNormReLU", "Block", "Concatenate", "HybridBlock", "HybridConcatenate",
            "Identity", "SymbolBlock", "SyncBatchNorm"]
