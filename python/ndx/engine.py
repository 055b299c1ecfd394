"""MXNet's ``mx.engine``: the bulk-execution size of its asynchronous engine.

MXNet groups up to ``bulk_size`` consecutive ops of a graph into one engine task to cut
scheduling overhead. ndx has no per-op scheduler to batch: a hybridized graph already runs as
one planned executor pass, and imperative ops run as they are called. The size is kept (so
code that sets and restores it behaves as with MXNet) and changes nothing else."""
import contextlib

__all__ = ["set_bulk_size", "bulk"]

_bulk_size = 15  # MXNet's default (MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN)


def set_bulk_size(size):
    """Sets the bulk size and returns the previous one (MXNet's engine.set_bulk_size)."""
    global _bulk_size
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"[engine.set_bulk_size] size must be an int, got {type(size).__name__}")
    if size < 0:
        raise ValueError(f"[engine.set_bulk_size] size must be >= 0, got {size}")
    previous, _bulk_size = _bulk_size, size
    return previous


@contextlib.contextmanager
def bulk(size):
    """Sets the bulk size inside the block and restores it after (MXNet's engine.bulk)."""
    previous = set_bulk_size(size)
    try:
        yield
    finally:
        set_bulk_size(previous)
