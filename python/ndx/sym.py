"""Graphs as symbols: load, save and inspect graph JSON (as written by HybridBlock.export)."""
from . import _core

__all__ = ["Symbol", "load", "load_json"]


class Symbol:
    """A graph: its inputs (list_arguments), JSON (tojson), and shape/dtype inference."""

    def __init__(self, handle):
        self._handle = handle

    def list_arguments(self):
        return _core._graph_inputs(self._handle)

    def tojson(self):
        return _core._graph_json(self._handle)

    def save(self, fname):
        with open(fname, "w") as f:
            f.write(self.tojson())

    def infer_shape(self, **shapes):
        """Output shapes from input shapes given by name (dtypes default to float32)."""
        return self.infer(shapes, {})[0]

    def infer_type(self, **dtypes):
        return self.infer({}, dtypes)[1]

    def infer(self, shapes, dtypes):
        names = self.list_arguments()
        missing = [n for n in names if n not in shapes]
        if missing:
            raise ValueError(f"[infer_shape] no shape for inputs {missing}")
        return _core._graph_infer(self._handle, [shapes[n] for n in names],
                                  [dtypes.get(n, "float32") for n in names])

    def eval(self, **inputs):
        """Runs the graph on arrays given by input name."""
        return _core._graph_run(self._handle, [inputs[n] for n in self.list_arguments()])


def load_json(text):
    return Symbol(_core._graph_load(text))


def load(fname):
    with open(fname) as f:
        return load_json(f.read())
