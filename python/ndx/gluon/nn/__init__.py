"""Layers: Dense, Activation, Dropout, Flatten, Embedding, LayerNorm, BatchNorm, Conv1D, Conv2D,
MaxPool2D, AvgPool2D, GlobalAvgPool2D, Sequential, HybridSequential."""
from .basic_layers import (
    Activation,
    BatchNorm,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    HybridSequential,
    LayerNorm,
    Sequential,
)
from .conv_layers import AvgPool2D, Conv1D, Conv2D, GlobalAvgPool2D, MaxPool2D

__all__ = ["Activation", "AvgPool2D", "BatchNorm", "Conv1D", "Conv2D", "Dense", "Dropout",
           "Embedding", "Flatten", "GlobalAvgPool2D", "HybridSequential", "LayerNorm",
           "MaxPool2D", "Sequential"]
