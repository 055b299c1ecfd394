"""mx.onnx.export_model: an ndx (or MXNet) graph and its parameters as an ONNX model.

The symbol is read through mx.sym.load / load_json (MXNet's legacy op names become ndx's ops
there), so one walk over ndx's graph JSON serves both. ndx infers every node's output shapes
and dtypes from in_shapes / in_types and the parameters; each node then goes through the
converter registered for its op (_ops, _nn_ops), in graph order."""
import json
import logging
import os

import numpy as onp

from . import _nn_ops
from ._ops import CONVERTERS, OPSET

_LOG = logging.getLogger(__name__)
_WHO = "[onnx.export_model]"
_IR_VERSION = 8  # (the IR version of opset 17: ONNX 1.12)
_PROTO_LIMIT = 2 ** 31 - 1  # protobuf's limit on a serialized model


def _require_onnx():
    try:
        import onnx
    except ImportError as err:
        raise ImportError(f"{_WHO} needs the onnx package: pip install onnx") from err
    return onnx


def get_operator_support(opset_version=None):
    """The sorted names of the ops the exporter converts: ndx's op names, and MXNet's legacy
    names that mx.sym.load reads as those (FullyConnected, Convolution, _plus_scalar, ...).
    The exporter writes ONNX opset 17; an older opset_version is refused."""
    if opset_version is not None:
        if isinstance(opset_version, bool) or not isinstance(opset_version, int):
            raise TypeError(f"[onnx.get_operator_support] opset_version must be an int, got "
                            f"{type(opset_version).__name__}")
        if opset_version < OPSET:
            raise ValueError(f"[onnx.get_operator_support] the exporter writes ONNX opset "
                             f"{OPSET}; opset_version={opset_version} is older")
    from ..sym import _MXNET_OPS, _SCALAR_OPS
    legacy = {name for name, entry in _MXNET_OPS.items() if entry[0] in CONVERTERS}
    legacy |= {name for name, entry in _SCALAR_OPS.items() if entry[0] in CONVERTERS}
    return sorted(set(CONVERTERS) | legacy)


# ---- arguments --------------------------------------------------------------------------------
def _load_graph(sym):
    """The graph JSON (a dict) of a Symbol or of a -symbol.json path."""
    from .. import sym as _sym
    if isinstance(sym, (str, os.PathLike)):
        sym = _sym.load(os.fspath(sym))
    elif not isinstance(sym, _sym.Symbol):
        raise TypeError(f"{_WHO} sym must be a path to a -symbol.json file or an "
                        f"mx.sym.Symbol, got {type(sym).__name__}")
    return json.loads(sym.tojson())


def _to_numpy(name, value):
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    try:
        return onp.asarray(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{_WHO} params['{name}'] must be an array, got "
                        f"{type(value).__name__}") from err


def _load_params(params):
    """{name: NumPy array} from a .params path, a dict, or [arg_params, aux_params]; MXNet's
    'arg:' / 'aux:' name prefixes are dropped."""
    if isinstance(params, (str, os.PathLike)):
        from .. import nd
        params = nd.load(os.fspath(params))
        if not isinstance(params, dict):
            raise ValueError(f"{_WHO} the params file holds unnamed arrays; expected a file "
                             f"saved from a dict (as HybridBlock.export writes)")
    elif (isinstance(params, (list, tuple)) and len(params) == 2
          and all(isinstance(p, dict) for p in params)):
        params = {**params[0], **params[1]}
    elif not isinstance(params, dict):
        raise TypeError(f"{_WHO} params must be a path to a .params file, a dict of name -> "
                        f"array or [arg_params, aux_params], got {type(params).__name__}")
    weights = {}
    for key, value in params.items():
        if not isinstance(key, str):
            raise TypeError(f"{_WHO} params keys must be str, got {type(key).__name__}")
        name = key[4:] if key.startswith(("arg:", "aux:")) else key
        weights[name] = _to_numpy(key, value)
    return weights


def _check_shapes(in_shapes, names):
    if in_shapes is None:
        if names:
            raise ValueError(f"{_WHO} in_shapes is required: one shape per graph input, in "
                             f"order {names}")
        return []
    if (not isinstance(in_shapes, (list, tuple))
            or not all(isinstance(s, (list, tuple)) for s in in_shapes)):
        raise TypeError(f"{_WHO} in_shapes must be a list of shapes, one per graph input "
                        f"(e.g. [(1, 3, 224, 224)]), got {in_shapes!r}")
    for shape in in_shapes:
        if not all(isinstance(d, (int, onp.integer)) and not isinstance(d, bool) and d >= 0
                   for d in shape):
            raise ValueError(f"{_WHO} in_shapes: {shape!r} is not a shape (expected "
                             f"non-negative ints)")
    if len(in_shapes) != len(names):
        raise ValueError(f"{_WHO} in_shapes has {len(in_shapes)} shape(s); the graph has "
                         f"{len(names)} input(s) {names} (its variables without a value in "
                         f"params)")
    return [tuple(int(d) for d in s) for s in in_shapes]


def _check_types(in_types, names):
    types = list(in_types) if isinstance(in_types, (list, tuple)) else [in_types] * len(names)
    if len(types) != len(names):
        raise ValueError(f"{_WHO} in_types has {len(types)} dtype(s); the graph has "
                         f"{len(names)} input(s) {names}")
    out = []
    for t in types:
        try:
            if t is None:
                raise TypeError
            out.append(onp.dtype(t))
        except TypeError as err:
            raise TypeError(f"{_WHO} in_types: {t!r} is not a dtype") from err
    return out


def _io_shapes(shapes, dynamic, dynamic_input_shapes):
    """The graph inputs' declared shapes: in_shapes, or (dynamic) None dims."""
    if not dynamic:
        if dynamic_input_shapes is not None:
            raise ValueError(f"{_WHO} dynamic_input_shapes is given: set dynamic=True too")
        return shapes
    if dynamic_input_shapes is None:
        return [(None,) * len(s) for s in shapes]
    if (not isinstance(dynamic_input_shapes, (list, tuple))
            or len(dynamic_input_shapes) != len(shapes)):
        raise ValueError(f"{_WHO} dynamic_input_shapes must be a list of {len(shapes)} "
                         f"shape(s), one per graph input, got {dynamic_input_shapes!r}")
    for shape, dyn in zip(shapes, dynamic_input_shapes):
        if (not isinstance(dyn, (list, tuple)) or len(dyn) != len(shape)
                or any(d is not None and d != s for d, s in zip(dyn, shape))):
            raise ValueError(f"{_WHO} dynamic_input_shapes: {dyn!r} does not fit in_shapes "
                             f"{shape}: expected {len(shape)} dims, each None or the same")
    return [tuple(d) for d in dynamic_input_shapes]


# ---- the graph --------------------------------------------------------------------------------
def _label_only(nodes, heads):
    """Indices of the variables used only as loss heads' labels."""
    labels, used = set(), {h[0] for h in heads}
    for node in nodes:
        label = _nn_ops.LABEL_INPUTS.get(node["op"])
        for k, entry in enumerate(node.get("inputs", [])):
            (labels if k == label else used).add(entry[0])
    return {i for i in labels - used if nodes[i]["op"] == "null"}


def _graph_inputs(graph, weights):
    """Indices of the variables that are graph inputs: not constants, not in weights, not
    labels."""
    nodes, skip = graph["nodes"], _label_only(graph["nodes"], graph["heads"])
    return [i for i, n in enumerate(nodes)
            if n["op"] == "null" and i not in skip and n["name"] not in weights
            and "__const__" not in n.get("attrs", {})]


def _entries(graph):
    """Every (node, output) that a node or a head uses, in graph order."""
    used = {(e[0], e[1]) for n in graph["nodes"] for e in n.get("inputs", [])}
    used |= {(h[0], h[1]) for h in graph["heads"]}
    return sorted(used)


def _infer(graph, entries, shapes, dtypes):
    """{entry: (shape, dtype)} as ndx infers them (shape None where it cannot)."""
    from .. import sym as _sym
    probe = _sym.load_json(json.dumps(dict(graph, heads=[[i, j, 0] for i, j in entries])))
    names = set(probe.list_inputs())
    _, out_shapes, _ = probe.infer_shape_partial(
        **{k: v for k, v in shapes.items() if k in names})
    _, out_types, _ = probe.infer_type(**{k: v for k, v in dtypes.items() if k in names})
    return {e: (None if s is None else tuple(s), onp.dtype(t))
            for e, s, t in zip(entries, out_shapes, out_types)}


class _Exporter:
    """One export: the walk over the graph's nodes into a GraphBuilder."""

    def __init__(self, graph, weights, inputs, verbose):
        from ._builder import GraphBuilder
        self.graph, self.weights, self.verbose = graph, weights, verbose
        self.inputs = inputs  # [(node index, dtype, declared shape)]
        self.builder = GraphBuilder()
        self.names = {}  # (node, output) -> ONNX name
        self.info = {}
        self.value_infos = []

    def run(self, shapes, dtypes):
        nodes = self.graph["nodes"]
        entries = _entries(self.graph)
        self.info = _infer(self.graph, entries, shapes, dtypes)
        referenced = {}
        for i, j in entries:
            referenced.setdefault(i, []).append(j)
        declared = {i: (t, s) for i, t, s in self.inputs}
        # variables first: their names (the inputs' and parameters') are kept as they are
        for idx, node in enumerate(nodes):
            if node["op"] == "null":
                self._variable(idx, node, declared.get(idx))
        for idx, node in enumerate(nodes):
            if node["op"] != "null":
                self._operator(idx, node, referenced.get(idx, []))
        return self._model()

    # ---- variables ----
    def _variable(self, idx, node, declared):
        from onnx import helper

        from ._builder import onnx_dtype
        attrs, name = node.get("attrs", {}), node["name"]
        if "__const__" in attrs:
            shape = tuple(int(d) for d in attrs["__shape__"].strip("()[] ").split(",") if d)
            value = onp.asarray(attrs["__data__"], dtype=attrs["__dtype__"]).reshape(shape)
            self.names[(idx, 0)] = self.builder.initializer(value, self.builder.unique(name))
        elif name in self.weights:
            self.names[(idx, 0)] = self.builder.initializer(self.weights[name],
                                                            self.builder.unique(name))
        elif declared is not None:
            onnx_name = self.builder.unique(name)
            self.names[(idx, 0)] = onnx_name
            self.value_infos.append(helper.make_tensor_value_info(
                onnx_name, onnx_dtype(declared[0]), list(declared[1])))

    # ---- operators ----
    def _operator(self, idx, node, referenced):
        op, name = node["op"], node["name"]
        convert = CONVERTERS.get(op)
        if convert is None:
            raise NotImplementedError(
                f"{_WHO} op '{op}' (node '{name}') has no ONNX converter; the supported ops "
                f"are listed by mx.onnx.get_operator_support()")
        convert(self._view(idx, node, referenced))
        missing = [j for j in referenced
                   if self.names.get((idx, j)) not in self.builder.produced()]
        if missing:
            raise NotImplementedError(f"{_WHO} op '{op}' (node '{name}'): output(s) {missing} "
                                      f"are used but not converted (only the op's main "
                                      f"output(s) are)")
        if self.verbose:
            _LOG.info("%s converted node %d, op %s, name %s", _WHO, idx, op, name)

    def _view(self, idx, node, referenced):
        """The NodeView of an op node (its inputs' and used outputs' shapes checked known)."""
        from ._builder import NodeView
        label = _nn_ops.LABEL_INPUTS.get(node["op"])
        ins = [(e[0], e[1]) for e in node.get("inputs", [])]
        in_info = [self.info[e] for e in ins]
        self._check_known(node, [s for k, (s, _) in enumerate(in_info) if k != label])
        out_info = [self.info.get((idx, j), (None, None))
                    for j in range(max(referenced, default=0) + 1)]
        self._check_known(node, [out_info[j][0] for j in referenced])
        return NodeView(self.builder, node, [self.names.get(e, "") for e in ins], in_info,
                        out_info, lambda j: self._out_name(idx, node["name"], j))

    def _out_name(self, idx, name, j):
        if (idx, j) not in self.names:
            self.names[(idx, j)] = self.builder.unique(name if j == 0 else f"{name}_output{j}")
        return self.names[(idx, j)]

    @staticmethod
    def _check_known(node, shapes):
        if any(s is None for s in shapes):
            raise ValueError(f"{_WHO} op '{node['op']}' (node '{node['name']}'): ndx could not "
                             f"infer its shapes from in_shapes and params")

    # ---- outputs ----
    def _used_initializers(self, outputs):
        """The initializers some node or output uses (not a gamma that fix_gamma replaces)."""
        used = {name for node in self.builder.nodes for name in node.input}
        used |= {v.name for v in outputs}
        return [t for t in self.builder.initializers if t.name in used]

    def _model(self):
        from onnx import helper

        from ._builder import onnx_dtype
        outputs, taken = [], {v.name for v in self.value_infos}
        taken |= {t.name for t in self.builder.initializers}
        dynamic = any(d is None for _, _, shape in self.inputs for d in shape)
        for i, j, *_ in self.graph["heads"]:
            name = self.names[(i, j)]
            if name in taken:  # (an input, a parameter, or an output twice: a copy)
                copy = self.builder.unique(f"{name}_output")
                self.builder.add_node("Identity", [name], [copy], copy, {})
                name = copy
            taken.add(name)
            shape, dtype = self.info[(i, j)]
            dims = [None] * len(shape) if dynamic else list(shape)
            outputs.append(helper.make_tensor_value_info(name, onnx_dtype(dtype), dims))
        graph = helper.make_graph(self.builder.nodes, "ndx_model", self.value_infos, outputs,
                                  initializer=self._used_initializers(outputs))
        from .. import __version__
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                 producer_name="ndx", producer_version=__version__,
                                 ir_version=_IR_VERSION)


def _save(onnx, model, path, run_shape_inference, large_model):
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception as err:  # (ONNX's inference may fail: the model is kept as it is)
            _LOG.info("%s shape inference failed (%s); the model is saved without it",
                      _WHO, err)
    if large_model:
        location = os.path.basename(path) + ".data"
        onnx.save_model(model, path, save_as_external_data=True,
                        all_tensors_to_one_file=True, location=location)
        onnx.checker.check_model(path)
        return
    size = sum(t.ByteSize() for t in model.graph.initializer)
    if size > _PROTO_LIMIT:
        raise ValueError(f"{_WHO} the model's parameters take {size} bytes, over protobuf's "
                         f"2 GB: export with large_model=True")
    onnx.checker.check_model(model)
    onnx.save_model(model, path)


def export_model(sym, params, in_shapes=None, in_types=onp.float32, onnx_file_path="model.onnx",
                 verbose=False, dynamic=False, dynamic_input_shapes=None,
                 run_shape_inference=False, input_type=None, input_shape=None,
                 large_model=False):
    """Exports an ndx or MXNet model to an ONNX file (opset 17), for inference.

    sym: a -symbol.json path or an mx.sym.Symbol (ndx's graphs, and MXNet's with legacy op
    names). params: a .params path, a dict of name -> array, or [arg_params, aux_params]
    (MXNet's 'arg:' / 'aux:' prefixes accepted). in_shapes / in_types: the shape (a list of
    tuples) and dtype(s) of each graph input (the variables without a value in params, loss
    labels left out), in graph order. dynamic: the inputs' dims are left unknown (or as
    dynamic_input_shapes gives them, None for unknown). run_shape_inference: ONNX's shape
    inference is run on the model. input_type / input_shape: older names of in_types /
    in_shapes. large_model: the parameters are saved in '<onnx_file_path>.data' (for models
    over 2 GB). verbose: every node converted is logged (logger 'ndx.onnx', INFO). Returns
    onnx_file_path.

    Ops without a converter raise NotImplementedError naming the op and the node. With dynamic,
    shapes ndx's trace fixed stay fixed: a reshape to sizes read from x.shape keeps them
    (npx.reshape's codes, Flatten, Dense and pooling follow the runtime shape)."""
    onnx = _require_onnx()
    in_types = in_types if input_type is None else input_type
    in_shapes = in_shapes if input_shape is None else input_shape
    if not isinstance(onnx_file_path, (str, os.PathLike)):
        raise TypeError(f"{_WHO} onnx_file_path must be a path, got "
                        f"{type(onnx_file_path).__name__}")
    path = os.fspath(onnx_file_path)
    graph, weights = _load_graph(sym), _load_params(params)
    input_idx = _graph_inputs(graph, weights)
    names = [graph["nodes"][i]["name"] for i in input_idx]
    shapes, types = _check_shapes(in_shapes, names), _check_types(in_types, names)
    declared = _io_shapes(shapes, dynamic, dynamic_input_shapes)
    exporter = _Exporter(graph, weights, list(zip(input_idx, types, declared)), verbose)
    model = exporter.run({**{k: v.shape for k, v in weights.items()}, **dict(zip(names, shapes))},
                         {**{k: v.dtype for k, v in weights.items()}, **dict(zip(names, types))})
    _save(onnx, model, path, run_shape_inference, large_model)
    return onnx_file_path
