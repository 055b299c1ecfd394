"""ONNX export, as MXNet 2.0's mx.onnx: export_model writes an ndx (or MXNet) graph and its
parameters as an ONNX model (opset 17) for inference; get_operator_support lists the ops it
converts.

    import ndx as mx
    net.hybridize(); net(x); net.export("model")
    mx.onnx.export_model("model-symbol.json", "model-0000.params", [(1, 3, 224, 224)],
                         np.float32, "model.onnx")

Importing this package does not import the onnx package; export_model needs it (pip install
onnx) and raises ImportError without it."""
from ._export import export_model, get_operator_support

__all__ = ["export_model", "get_operator_support"]
