"""The ONNX side of the exporter: a graph under construction (nodes, initializers, unique
names) and the view of one ndx node that a converter works on (its ONNX inputs, the shapes and
dtypes ndx inferred, its parsed params, and the names its outputs must take)."""
import numpy as onp
from onnx import helper, numpy_helper

_TRUE = ("True", "true", "1")
_FALSE = ("False", "false", "0")


def onnx_dtype(dtype):
    """The ONNX TensorProto element type of a NumPy dtype."""
    return helper.np_dtype_to_tensor_dtype(onp.dtype(dtype))


class GraphBuilder:
    """ONNX nodes and initializers, in topological order, with names kept unique."""

    def __init__(self):
        self.nodes = []
        self.initializers = []
        self._names = set()
        self._constants = {}
        self._produced = set()

    def produced(self):
        """The names of the tensors made so far (node outputs and initializers)."""
        return self._produced

    def unique(self, hint):
        """hint, or hint with the first free suffix '_1', '_2', ... when already taken."""
        name, k = hint, 0
        while name in self._names:
            k += 1
            name = f"{hint}_{k}"
        self._names.add(name)
        return name

    def add_node(self, op_type, inputs, outputs, name, attrs):
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self._produced.update(outputs)
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs),
                                           name=self.unique(name), **attrs))

    def initializer(self, array, name):
        """array as an initializer called name (taken as it is: the caller made it unique)."""
        self.initializers.append(numpy_helper.from_array(onp.asarray(array), name))
        self._produced.add(name)
        return name

    def constant(self, value, dtype):
        """A shared initializer holding value (an array or a scalar) as dtype."""
        array = onp.asarray(value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._constants:
            hint = "const_" + ("_".join(str(d) for d in array.shape) or "scalar")
            self._constants[key] = self.initializer(array, self.unique(hint))
        return self._constants[key]


class NodeView:
    """One ndx node as its converter sees it.

    op, name, attrs: the node's op, name and (string) params; inputs: the ONNX names of its
    inputs; in_shapes / in_dtypes, out_shapes / out_dtypes: what ndx inferred (tuples and
    NumPy dtypes; shapes are those of the in_shapes given, also for a dynamic export)."""

    def __init__(self, graph, node, inputs, in_info, out_info, out_names):
        self.graph = graph
        self.op = node["op"]
        self.name = node["name"]
        self.attrs = node.get("attrs", {})
        self.inputs = inputs
        self.in_shapes = [s for s, _ in in_info]
        self.in_dtypes = [t for _, t in in_info]
        self.out_shapes = [s for s, _ in out_info]
        self.out_dtypes = [t for _, t in out_info]
        self._out_names = out_names

    # ---- outputs and nodes ----
    def out(self, i=0):
        """The ONNX name output i of this node must take."""
        return self._out_names(i)

    def make(self, op_type, inputs, outputs=None, **attrs):
        """An ONNX node (op_type, inputs, attrs) writing outputs (default: one new tensor);
        returns its first output's name."""
        if outputs is None:
            outputs = [self.graph.unique(f"{self.name}_{op_type.lower()}")]
        self.graph.add_node(op_type, inputs, outputs, f"{self.name}_{op_type}", attrs)
        return outputs[0]

    def emit(self, op_type, inputs, **attrs):
        """The node computing output 0."""
        return self.make(op_type, inputs, outputs=[self.out(0)], **attrs)

    def emit_constant(self, array):
        """Output 0 as an initializer holding array."""
        return self.graph.initializer(onp.asarray(array, dtype=self.out_dtypes[0]), self.out(0))

    def const(self, value, dtype=None):
        """An initializer of value, as dtype (default: this node's output dtype)."""
        return self.graph.constant(value, self.out_dtypes[0] if dtype is None else dtype)

    def int64s(self, values):
        return self.graph.constant(list(values), onp.int64)

    def cast(self, name, from_dtype, to_dtype):
        """name cast to to_dtype (name itself when it has that dtype already)."""
        if onp.dtype(from_dtype) == onp.dtype(to_dtype):
            return name
        return self.make("Cast", [name], to=onnx_dtype(to_dtype))

    @staticmethod
    def onnx_type(dtype):
        return onnx_dtype(dtype)

    @staticmethod
    def tensor_attr(values, dtype):
        """A TensorProto attribute value (ConstantOfShape's value)."""
        return numpy_helper.from_array(onp.asarray(values, dtype=dtype))

    def input_as(self, i, dtype):
        return self.cast(self.inputs[i], self.in_dtypes[i], dtype)

    def rank(self, i=0):
        return len(self.in_shapes[i])

    # ---- errors ----
    def where(self):
        return f"op '{self.op}' (node '{self.name}')"

    def fail(self, what, kind=NotImplementedError):
        raise kind(f"[onnx.export_model] {self.where()}: {what}")

    # ---- params ----
    def param(self, key, default=None):
        value = self.attrs.get(key, "None")
        return default if value == "None" else value

    def flag(self, key, default=False):
        value = self.param(key)
        if value is None:
            return default
        if value in _TRUE or value in _FALSE:
            return value in _TRUE
        return self.fail(f"param {key}={value!r}: expected a boolean", ValueError)

    def number(self, key, default=None):
        value = self.param(key)
        if value is None:
            if default is None:
                self.fail(f"param {key} is required", ValueError)
            return default
        try:
            return float(value)
        except ValueError:
            return self.fail(f"param {key}={value!r}: expected a number", ValueError)

    def integer(self, key, default=None):
        value = self.number(key, default)
        if not onp.isfinite(value) or value != int(value):
            self.fail(f"param {key}={value!r}: expected an integer", ValueError)
        return int(value)

    def ints(self, key, default=None, none_ok=False):
        """A tuple param ('(1, 2)', '[1, 2]', '3'; with none_ok, None entries kept as None);
        default for 'None' or a param not given."""
        text = self.param(key)
        if text is None:
            return default
        parts = text.translate(str.maketrans("()[]", "    ")).replace(" ", "").split(",")
        try:
            return tuple(None if p == "None" and none_ok else int(p.rstrip("L"))
                         for p in parts if p)
        except ValueError:
            return self.fail(f"param {key}={text!r}: expected a tuple of integers", ValueError)

    def axis(self, value, rank=None):
        """value as a non-negative axis of input 0 (or of a tensor of the given rank)."""
        rank = self.rank() if rank is None else rank
        if not -rank <= value < max(rank, 1):
            self.fail(f"axis {value} is out of range for rank {rank}", ValueError)
        return value % rank if rank else 0
