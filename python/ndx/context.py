"""MXNet 1.x's ``mxnet.context`` names for ndx's devices (``ndx.device``): a Context is a
Device, ``current_context()`` is ``current_device()``."""
from .device import Context, Device, cpu, current_device, gpu, num_gpus

current_context = current_device

__all__ = ["Context", "Device", "cpu", "gpu", "num_gpus", "current_context", "current_device"]
