"""Gluon: blocks, parameters, layers, losses, metrics, Trainer and data loading."""
from . import contrib, data, loss, metric, model_zoo, nn, probability, rnn, utils  # noqa: F401
from .block import Block, HybridBlock, SymbolBlock
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict
from .trainer import Trainer

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "Constant",
           "DeferredInitializationError", "ParameterDict", "Trainer", "nn", "rnn", "loss",
           "metric", "data", "utils"]
