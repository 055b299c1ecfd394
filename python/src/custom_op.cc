// The Custom op: operators written in Python (ndx.operator.CustomOp / CustomOpProp) registered
// as first-class ops. Params arrive as strings (as in MXNet); the prop object is created once
// per use by the attr parser; shapes, dtypes, forward and backward call back into Python with
// zero-copy ndarrays over the kernel's blobs. A Python exception in a callback reaches the caller
// unchanged and the engine stays usable.
#include "convert.h"  // Python.h first

#include <algorithm>

#include "ndx/graph.h"
#include "ndx/op_util.h"

namespace ndx::py {
namespace {

// A Python object owned from C++, released with the GIL.
struct PyRef {
  PyObject* obj = nullptr;
  explicit PyRef(PyObject* o) : obj(o) {}
  ~PyRef() {
    if (!obj || !Py_IsInitialized()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(obj);
    PyGILState_Release(g);
  }
};

struct CustomParam {
  std::string op_type;
  std::shared_ptr<PyRef> prop;  // the CustomOpProp instance
  int num_inputs = 0, num_outputs = 0, num_aux = 0;
  bool need_top_grad = true;
};

class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }

 private:
  PyGILState_STATE state_;
};

PyObject* bridge() {  // ndx.operator._bridge: helpers in Python that call the user's classes
  static PyObject* mod = [] {
    PyObject* m = PyImport_ImportModule("ndx.operator");
    return m;
  }();
  if (!mod) throw PythonErrorSet{};
  return mod;
}

PyObject* call_bridge(const char* fn, PyObject* args) {
  PyObject* f = PyObject_GetAttrString(bridge(), fn);
  if (!f) throw PythonErrorSet{};
  PyObject* r = PyObject_CallObject(f, args);
  Py_DECREF(f);
  if (!r) throw PythonErrorSet{};
  return r;
}

PyObject* dict_of(const std::map<std::string, std::string>& d) {
  PyObject* out = PyDict_New();
  for (const auto& [k, v] : d) {
    if (k == "op_type") continue;
    PyObject* s = PyUnicode_FromString(v.c_str());
    PyDict_SetItemString(out, k.c_str(), s);
    Py_DECREF(s);
  }
  return out;
}

void parse(NodeAttrs* attrs) {
  auto it = attrs->dict.find("op_type");
  if (it == attrs->dict.end()) value_error("[Custom] parameter 'op_type' is required");
  Gil gil;
  CustomParam p;
  p.op_type = it->second;
  PyObject* params = dict_of(attrs->dict);
  PyObject* args = Py_BuildValue("(sN)", p.op_type.c_str(), params);
  PyObject* info = call_bridge("_create_prop", args);  // (prop, n_in, n_out, n_aux, need_top_grad)
  Py_DECREF(args);
  PyObject* prop = PyTuple_GET_ITEM(info, 0);
  Py_INCREF(prop);
  p.prop = std::make_shared<PyRef>(prop);
  p.num_inputs = static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(info, 1)));
  p.num_outputs = static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(info, 2)));
  p.num_aux = static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(info, 3)));
  p.need_top_grad = PyObject_IsTrue(PyTuple_GET_ITEM(info, 4));
  Py_DECREF(info);
  attrs->parsed = p;
}

// Shapes as lists for a prop; an unknown one (graph inference from some inputs) is None.
PyObject* shapes_to_py(const ShapeVector& v, size_t begin, size_t end) {
  PyObject* list = PyList_New(0);
  for (size_t i = begin; i < end; ++i) {
    if (!v[i].is_known()) {
      PyList_Append(list, Py_None);
      continue;
    }
    PyObject* t = PyList_New(v[i].ndim());
    for (int k = 0; k < v[i].ndim(); ++k) PyList_SET_ITEM(t, k, PyLong_FromLongLong(v[i][k]));
    PyList_Append(list, t);
    Py_DECREF(t);
  }
  return list;
}

// As MXNet, a prop's infer_shape / infer_type may work out inputs of unknown shape or dtype
// (a label's from the data's): it is called once any input is known (operator.py gives it an
// unknown shape as [], MXNet's way), and an input it returns as None stays unknown.
bool infer_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const auto& p = attrs.get<CustomParam>();
  if (!in->empty() &&
      std::none_of(in->begin(), in->end(), [](const Shape& s) { return s.is_known(); }))
    return false;
  Gil gil;
  PyObject* args = Py_BuildValue("(ON)", p.prop->obj, shapes_to_py(*in, 0, in->size()));
  PyObject* r = call_bridge("_infer_shape", args);  // (in_shapes, out_shapes)
  Py_DECREF(args);
  auto read = [&](PyObject* list, ShapeVector* dst, const char* what) {
    if (PySequence_Size(list) != static_cast<Py_ssize_t>(dst->size()))
      value_error("[Custom ", p.op_type, "] infer_shape returned ", PySequence_Size(list), " ",
                  what, " shapes, expected ", dst->size());
    for (size_t i = 0; i < dst->size(); ++i) {
      PyObject* item = PySequence_GetItem(list, static_cast<Py_ssize_t>(i));
      if (item == Py_None) {  // not known (yet)
        Py_DECREF(item);
        continue;
      }
      Value v = value_from_py(item, "Custom", "shape");
      Py_DECREF(item);
      Shape s = FieldTraits<Shape>::from_value(v, {"Custom", "shape"});
      assign_shape(attrs, &(*dst)[i], s, what, static_cast<int>(i));
    }
  };
  try {
    read(PyTuple_GET_ITEM(r, 0), in, "input");
    read(PyTuple_GET_ITEM(r, 1), out, "output");
  } catch (...) {
    Py_DECREF(r);
    throw;
  }
  Py_DECREF(r);
  return std::all_of(out->begin(), out->end(), [](const Shape& s) { return s.is_known(); });
}

bool infer_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const auto& p = attrs.get<CustomParam>();
  if (!in->empty() &&
      std::none_of(in->begin(), in->end(), [](DType t) { return t != DType::kUnknown; }))
    return false;
  Gil gil;
  PyObject* types = PyList_New(0);
  for (DType t : *in) {
    if (t == DType::kUnknown) {
      PyList_Append(types, Py_None);
      continue;
    }
    PyObject* d = dtype_to_py(t);
    PyList_Append(types, d);
    Py_DECREF(d);
  }
  PyObject* args = Py_BuildValue("(ON)", p.prop->obj, types);
  PyObject* r = call_bridge("_infer_type", args);  // (in_types, out_types)
  Py_DECREF(args);
  auto read = [&](PyObject* list, DTypeVector* dst, const char* what, bool only_unknown) {
    if (PySequence_Size(list) != static_cast<Py_ssize_t>(dst->size()))
      value_error("[Custom ", p.op_type, "] infer_type returned ", PySequence_Size(list), " ", what,
                  " types, expected ", dst->size());
    for (size_t i = 0; i < dst->size(); ++i) {
      PyObject* item = PySequence_GetItem(list, static_cast<Py_ssize_t>(i));
      if (item == Py_None || (only_unknown && (*dst)[i] != DType::kUnknown)) {
        Py_DECREF(item);
        continue;
      }
      DType t = dtype_from_py(item);
      Py_DECREF(item);
      (*dst)[i] = t;
    }
  };
  try {
    read(PyTuple_GET_ITEM(r, 0), in, "input", /*only_unknown=*/true);
    read(PyTuple_GET_ITEM(r, 1), out, "output", /*only_unknown=*/false);
  } catch (...) {
    Py_DECREF(r);
    throw;
  }
  Py_DECREF(r);
  return std::none_of(out->begin(), out->end(), [](DType t) { return t == DType::kUnknown; });
}

// A zero-copy ndarray over a kernel blob (valid while the callback runs).
NDArray view_of(const TBlob& b) {
  return NDArray(Storage::wrap(b.dptr, 0, b.device, [] {}), 0, b.shape, b.strides, b.dtype);
}

PyObject* arrays_to_py(const std::vector<TBlob>& blobs, size_t begin, size_t end) {
  PyObject* list = PyList_New(0);
  for (size_t i = begin; i < end; ++i) {
    PyObject* a = wrap(view_of(blobs[i]));
    PyList_Append(list, a);
    Py_DECREF(a);
  }
  return list;
}

PyObject* reqs_to_py(const std::vector<OpReqType>& req) {
  static const char* names[] = {"null", "write", "inplace", "add"};
  PyObject* list = PyList_New(0);
  for (OpReqType r : req) {
    PyObject* s = PyUnicode_FromString(names[r]);
    PyList_Append(list, s);
    Py_DECREF(s);
  }
  return list;
}

void forward(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<CustomParam>();
  Gil gil;
  size_t n_args = in.size() - static_cast<size_t>(p.num_aux);
  PyObject* args =
      Py_BuildValue("(OONNNN)", p.prop->obj, ctx.is_train ? Py_True : Py_False, reqs_to_py(req),
                    arrays_to_py(in, 0, n_args), arrays_to_py(out, 0, out.size()),
                    arrays_to_py(in, n_args, in.size()));
  PyObject* r = call_bridge("_forward", args);
  Py_DECREF(args);
  Py_DECREF(r);
}

// Backward inputs: ograds (num_outputs), forward inputs (num_inputs incl. aux), forward outputs.
void backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
              const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<CustomParam>();
  Gil gil;
  size_t no = static_cast<size_t>(p.num_outputs), ni = static_cast<size_t>(p.num_inputs);
  size_t n_args = ni - static_cast<size_t>(p.num_aux);
  PyObject* args =
      Py_BuildValue("(ONNNNNN)", p.prop->obj, reqs_to_py(req), arrays_to_py(in, 0, no),
                    arrays_to_py(in, no, no + n_args), arrays_to_py(in, no + ni, no + ni + no),
                    arrays_to_py(out, 0, out.size()), arrays_to_py(in, no + n_args, no + ni));
  PyObject* r = call_bridge("_backward", args);
  Py_DECREF(args);
  Py_DECREF(r);
}

}  // namespace

void register_custom_op() {
  if (Op::find("Custom")) return;
  OpRegistry::global()
      .register_op("Custom")
      .describe(
          "An operator written in Python (ndx.operator.CustomOp), selected by op_type; other "
          "params are passed to its CustomOpProp as strings.")
      .add_argument("data", "NDArray[]",
                    "Inputs, as the prop's list_arguments() and auxiliary states.")
      .set_attr_parser(parse)
      .set_attr<bool>("TPerUseState", true)  // the prop and its operator: one per recorded call
      // Inputs come as they are, strided views too: an auxiliary state the forward updates in
      // place must be the caller's memory (a contiguous copy would lose the update).
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_num_inputs(
          [](const NodeAttrs& a) { return static_cast<uint32_t>(a.get<CustomParam>().num_inputs); })
      .set_num_outputs([](const NodeAttrs& a) {
        return static_cast<uint32_t>(a.get<CustomParam>().num_outputs);
      })
      .set_attr<FInferShape>("FInferShape", infer_shape)
      .set_attr<FInferType>("FInferType", infer_type)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", forward)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        std::vector<NodeEntry> heads(og.begin(), og.end());
        heads.insert(heads.end(), n->inputs.begin(), n->inputs.end());
        for (uint32_t i = 0; i < n->num_outputs(); ++i) heads.push_back(NodeEntry{n, i, 0});
        return make_grad_node("_backward_Custom", n, heads, /*share_params=*/true);
      });
  OpRegistry::global()
      .register_op("_backward_Custom")
      .describe("Backward of Custom: calls the Python op's backward.")
      .set_attr_parser(parse)  // shares the forward's params; a direct call must name op_type
      .set_num_inputs([](const NodeAttrs& a) {
        const auto& p = a.get<CustomParam>();
        return static_cast<uint32_t>(2 * p.num_outputs + p.num_inputs);
      })
      .set_num_outputs(
          [](const NodeAttrs& a) { return static_cast<uint32_t>(a.get<CustomParam>().num_inputs); })
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& a, ShapeVector* in, ShapeVector* out) {
                               const auto& p = a.get<CustomParam>();
                               for (int i = 0; i < p.num_inputs; ++i)
                                 assign_shape(a, &(*out)[i], (*in)[p.num_outputs + i], "output", i);
                               return true;
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& a, DTypeVector* in, DTypeVector* out) {
                              const auto& p = a.get<CustomParam>();
                              for (int i = 0; i < p.num_inputs; ++i)
                                (*out)[i] = (*in)[p.num_outputs + i];
                              return true;
                            })
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", backward);
}

}  // namespace ndx::py
