"""Layers: Dense, Activation, Dropout, Flatten, Embedding, LayerNorm, Sequential,
HybridSequential."""
from .basic_layers import (
                           Activation,
                           Dense,
                           Dropout,
                           Embedding,
                           Flatten,
                           HybridSequential,
                           LayerNorm,
                           Sequential,
)

__all__ = ["Activation", "Dense", "Dropout", "Embedding", "Flatten", "HybridSequential",
           "LayerNorm", "Sequential"]
