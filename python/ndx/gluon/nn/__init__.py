"""Layers: Dense, Activation, Dropout, Flatten, Embedding, LayerNorm, BatchNorm, Sequential,
HybridSequential."""
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

__all__ = ["Activation", "BatchNorm", "Dense", "Dropout", "Embedding", "Flatten",
           "HybridSequential", "LayerNorm", "Sequential"]
