"""gluon.model_zoo: MXNet's predefined networks (`vision`) and the local store of their
parameter files (`model_store`). ndx downloads nothing: pretrained=True reads a file that is
already in `root`."""
from . import model_store, vision
from .vision import get_model

__all__ = ["get_model", "model_store", "vision"]
