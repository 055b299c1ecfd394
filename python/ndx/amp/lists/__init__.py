"""The default AMP op lists (MXNet's amp.lists), in ndx's registered op names."""
from . import symbol_bf16, symbol_fp16  # noqa: F401
