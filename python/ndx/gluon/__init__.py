"""Gluon: blocks, parameters, layers, losses, Trainer and data loading."""
from . import data, loss, nn, utils
from .block import Block, HybridBlock, SymbolBlock
from .parameter import DeferredInitializationError, Parameter
from .trainer import Trainer

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "DeferredInitializationError",
           "Trainer", "nn", "loss", "data", "utils"]
