"""Errors raised by ndx. Each is a subclass of NDXError and of the matching built-in
exception, so `except ValueError` and `except ndx.NDXError` both work."""
from ._core import (
                    AxisError,
                    LinAlgError,
                    NDXError,
                    NDXIndexError,
                    NDXNotImplementedError,
                    NDXRuntimeError,
                    NDXTypeError,
                    NDXValueError,
)

MXNetError = NDXError  # MXNet's name, for code ported from it

__all__ = ["NDXError", "MXNetError", "NDXValueError", "NDXTypeError", "NDXIndexError",
           "NDXNotImplementedError", "NDXRuntimeError", "AxisError", "LinAlgError"]
