// ndx._core: the extension module. Generic op invoke with typed params (no string round trip),
// registry introspection for generating the np / npx / nd namespaces, and array construction.
#include "convert.h"
#include "interop.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include "ndx/amp.h"
#include "ndx/autograd.h"
#include "ndx/build_info.h"
#include "ndx/default_device.h"
#include "ndx/executor.h"
#include "ndx/graph.h"
#include "ndx/imperative.h"
#include "ndx/library.h"
#include "ndx/op_util.h"
#include "ndx/pinned.h"
#include "ndx/print_options.h"
#include "ndx/profiler.h"
#include "ndx/promote_sequence.h"
#include "ndx/random_position.h"
#include "ndx/runtime.h"

namespace ndx::py {
bool init_ndarray_type(PyObject* module);
bool init_packed_func_type(PyObject* module);
bool init_op_function_type(PyObject* module);
void register_custom_op();
PyObject* get_api(PyObject*, PyObject* name);
PyObject* list_api(PyObject*, PyObject*);

namespace {

const char* kCapsuleName = "ndx.Op";

const Op* op_from_handle(PyObject* h) {
  if (PyCapsule_IsValid(h, kCapsuleName))
    return static_cast<const Op*>(PyCapsule_GetPointer(h, kCapsuleName));
  if (PyUnicode_Check(h)) return Op::get(utf8_of(h));
  type_error("[invoke] expected an op handle or name, got ", Py_TYPE(h)->tp_name);
}

PyObject* op_handle(PyObject*, PyObject* name) {
  NDX_PY_BEGIN
  if (!PyUnicode_Check(name)) type_error("[op_handle] expected a str");
  return PyCapsule_New(const_cast<Op*>(Op::get(utf8_of(name))), kCapsuleName, nullptr);
  NDX_PY_END(nullptr)
}

// Ops for which NumPy widens out-of-range Python ints rather than raising OverflowError (their
// loops compute in a float or compare): the op's "TWidensPythonInts" attribute says so.
bool widens_python_ints(const Op* op) {
  static const auto& widens = Op::attr<bool>("TWidensPythonInts");
  return widens.get(op, false);
}

}  // namespace

// Ops whose loop is float64 whatever the inputs (float_power): "TFloat64Loop".
bool float64_loop(const Op* op) {
  static const auto& f64 = Op::attr<bool>("TFloat64Loop");
  return f64.get(op, false);
}

std::vector<NDArray> operands_for(const Op* op, PyObject* const* objs, Py_ssize_t n) {
  return operands_from_py(objs, n, op && widens_python_ints(op), op && float64_loop(op));
}

namespace {

std::vector<NDArray> inputs_from(PyObject* seq, const Op* op = nullptr) {
  if (!PyTuple_Check(seq) && !PyList_Check(seq))
    type_error("[invoke] inputs must be a tuple or list");
  return operands_from_py(PySequence_Fast_ITEMS(seq), PySequence_Fast_GET_SIZE(seq),
                          op && widens_python_ints(op), op && float64_loop(op));
}

NodeAttrs attrs_from(const Op* op, PyObject* kwargs) {
  std::vector<std::pair<std::string_view, Value>> kw;
  if (kwargs && kwargs != Py_None) {
    if (!PyDict_Check(kwargs)) type_error("[invoke] params must be a dict");
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    kw.reserve(static_cast<size_t>(PyDict_Size(kwargs)));
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      Py_ssize_t len;
      const char* k = PyUnicode_AsUTF8AndSize(key, &len);
      if (!k) {
        PyErr_Clear();
        type_error("[", op->name, "] parameter names must be str with a UTF-8 form");
      }
      std::string_view name(k, static_cast<size_t>(len));
      kw.emplace_back(name, value_from_py(value, op->name, name));
    }
  }
  return op->make_attrs(kw);
}

PyObject* outputs_to_py(std::vector<NDArray> outs) {
  if (outs.size() == 1) return wrap(std::move(outs[0]));
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(outs.size()));
  for (size_t i = 0; i < outs.size(); ++i) PyTuple_SET_ITEM(t, i, wrap(std::move(outs[i])));
  return t;
}

// _invoke(op, inputs, params=None, out=None, device=None)
PyObject* invoke_py(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2 || nargs > 5) {
    PyErr_SetString(PyExc_TypeError, "_invoke(op, inputs, params=None, out=None, device=None)");
    return nullptr;
  }
  NDX_PY_BEGIN
  const Op* op = op_from_handle(args[0]);
  std::vector<NDArray> in = inputs_from(args[1], op);
  NodeAttrs attrs = attrs_from(op, nargs > 2 ? args[2] : nullptr);
  InvokeOptions options;
  std::vector<NDArray> out;
  PyObject* out_obj = nargs > 3 ? args[3] : Py_None;
  if (out_obj != Py_None) {
    if (is_ndarray(out_obj)) {
      out.push_back(unwrap(out_obj));
    } else if (PyTuple_Check(out_obj) || PyList_Check(out_obj)) {
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(out_obj); ++i) {
        PyObject* o = PySequence_Fast_ITEMS(out_obj)[i];
        if (!is_ndarray(o)) type_error("[", op_name(attrs), "] out must hold ndarrays");
        out.push_back(unwrap(o));
      }
    } else {
      type_error("[", op_name(attrs), "] out must be an ndarray, got ", Py_TYPE(out_obj)->tp_name);
    }
    options.outputs = &out;
  }
  if (nargs > 4 && args[4] != Py_None) {
    Value v = value_from_py(args[4], op->name, "device");
    options.device = FieldTraits<Device>::from_value(v, {op->name, "device"});
  }
  std::vector<NDArray> result = invoke(attrs, in, options);
  if (out_obj != Py_None) {
    Py_INCREF(out_obj);
    return out_obj;
  }
  return outputs_to_py(std::move(result));
  NDX_PY_END(nullptr)
}

// _gradient(op, inputs, params, ograds): the input gradients FGradient builds, evaluated.
PyObject* gradient_py(PyObject*, PyObject* args) {
  PyObject *handle, *inputs, *kwargs, *ograds;
  if (!PyArg_ParseTuple(args, "OOOO:_gradient", &handle, &inputs, &kwargs, &ograds)) return nullptr;
  NDX_PY_BEGIN
  const Op* op = op_from_handle(handle);
  std::vector<NDArray> in = inputs_from(inputs), og = inputs_from(ograds);
  static const auto& fgrad = Op::attr<FGradient>("FGradient");
  if (!fgrad.count(op)) not_implemented("[", op->name, "] has no FGradient");
  std::unordered_map<const Node*, NDArray> values;
  auto fwd = std::make_shared<Node>();
  fwd->attrs = attrs_from(op, kwargs);
  for (size_t i = 0; i < in.size(); ++i) {
    NodePtr v = make_variable("x" + std::to_string(i));
    values[v.get()] = in[i];
    fwd->inputs.push_back(NodeEntry{v, 0, 0});
  }
  std::vector<NodeEntry> heads;
  for (size_t i = 0; i < og.size(); ++i) {
    NodePtr v = make_variable("ograd" + std::to_string(i));
    values[v.get()] = og[i];
    heads.push_back(NodeEntry{v, 0, 0});
  }
  auto grads = evaluate(fgrad[op](fwd, heads), values);
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(grads.size()));
  for (size_t i = 0; i < grads.size(); ++i) PyList_SET_ITEM(list, i, wrap(grads[i]));
  return list;
  NDX_PY_END(nullptr)
}

PyObject* str_or_none(const std::optional<std::string>& s) {
  if (!s) Py_RETURN_NONE;
  return PyUnicode_FromString(s->c_str());
}

// _list_ops(): [(name, description, num_inputs or -1, aliases, arguments, params)]
PyObject* list_ops(PyObject*, PyObject*) {
  NDX_PY_BEGIN
  PyObject* out = PyList_New(0);
  for (const std::string& name : Op::list_names()) {
    const Op* op = Op::get(name);
    PyObject* aliases = PyList_New(0);
    for (const auto& a : op->aliases) {
      PyObject* s = PyUnicode_FromString(a.c_str());
      PyList_Append(aliases, s);
      Py_DECREF(s);
    }
    PyObject* arguments = PyList_New(0);
    for (const auto& a : op->arguments) {
      PyObject* t = Py_BuildValue("(sss)", a.name.c_str(), a.type.c_str(), a.doc.c_str());
      PyList_Append(arguments, t);
      Py_DECREF(t);
    }
    PyObject* params = PyList_New(0);
    if (op->params)
      for (const auto& f : op->params->fields) {
        PyObject* t = Py_BuildValue("(ssNs)", f.name.c_str(), f.type_name.c_str(),
                                    str_or_none(f.default_str), f.doc.c_str());
        PyList_Append(params, t);
        Py_DECREF(t);
      }
    int n_in = op->get_num_inputs ? -1 : static_cast<int>(op->num_inputs);
    PyObject* row = Py_BuildValue("(ssiNNN)", name.c_str(), op->description.c_str(), n_in, aliases,
                                  arguments, params);
    PyList_Append(out, row);
    Py_DECREF(row);
  }
  return out;
  NDX_PY_END(nullptr)
}

PyObject* from_buffer(PyObject*, PyObject* obj) {
  NDX_PY_BEGIN
  return wrap(array_from_buffer(obj));
  NDX_PY_END(nullptr)
}

PyObject* set_default_float(PyObject*, PyObject* dtype) {
  NDX_PY_BEGIN
  set_default_float_dtype(dtype_from_py(dtype));
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}
PyObject* get_default_float(PyObject*, PyObject*) { return dtype_to_py(default_float_dtype()); }

// Print options as the tuple (precision, threshold, edgeitems, linewidth, suppress,
// floatmode, sign, nanstr, infstr); numpy/_printing.py maps NumPy's keywords onto it.
PyObject* print_options_to_py(const PrintOptions& o) {
  const char sign[2] = {o.sign, 0};
  return Py_BuildValue("(LLLLNssss)", static_cast<long long>(o.precision),
                       static_cast<long long>(o.threshold), static_cast<long long>(o.edgeitems),
                       static_cast<long long>(o.linewidth), PyBool_FromLong(o.suppress),
                       o.floatmode.c_str(), sign, o.nanstr.c_str(), o.infstr.c_str());
}

bool print_options_from_py(PyObject* t, PrintOptions* o) {
  long long precision, threshold, edgeitems, linewidth;
  int suppress;
  const char *floatmode, *sign, *nanstr, *infstr;
  if (!PyArg_ParseTuple(t, "LLLLpssss:print options", &precision, &threshold, &edgeitems,
                        &linewidth, &suppress, &floatmode, &sign, &nanstr, &infstr))
    return false;
  if (std::strlen(sign) != 1) {
    PyErr_Format(PyExc_ValueError, "sign option must be one of ' ', '+', or '-', got '%s'", sign);
    return false;
  }
  *o = PrintOptions{precision, threshold, edgeitems, linewidth, suppress != 0,
                    floatmode, sign[0],   nanstr,    infstr};
  return true;
}

PyObject* get_print_options_py(PyObject*, PyObject*) {
  return print_options_to_py(print_options());
}

PyObject* set_print_options_py(PyObject*, PyObject* t) {
  NDX_PY_BEGIN
  PrintOptions o;
  if (!print_options_from_py(t, &o)) return nullptr;
  set_print_options(o);
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

// _array_text(a, kind, options, separator, prefix_len, suffix_len): kind 0 is array2string's
// body, 1 array_str, 2 array_repr.
PyObject* array_text_py(PyObject*, PyObject* args) {
  NDX_PY_BEGIN
  PyObject *arr, *opts;
  int kind;
  const char* separator;
  long long prefix_len, suffix_len;
  if (!PyArg_ParseTuple(args, "OiOsLL:_array_text", &arr, &kind, &opts, &separator, &prefix_len,
                        &suffix_len))
    return nullptr;
  if (!is_ndarray(arr)) {
    PyErr_SetString(PyExc_TypeError, "_array_text expects an ndarray");
    return nullptr;
  }
  PrintOptions o;
  if (!print_options_from_py(opts, &o)) return nullptr;
  const NDArray& a = unwrap(arr);
  const std::string text = kind == 2   ? array_repr(a, o)
                           : kind == 1 ? array_str(a, o)
                                       : array_to_string(a, o, separator, prefix_len, suffix_len);
  return PyUnicode_FromStringAndSize(text.data(), static_cast<Py_ssize_t>(text.size()));
  NDX_PY_END(nullptr)
}

PyObject* seed(PyObject*, PyObject* s) {
  unsigned long long v = PyLong_AsUnsignedLongLongMask(s);
  if (PyErr_Occurred()) return nullptr;
  random_seed(v);
  Py_RETURN_NONE;
}

// _random_position() -> (key, pos); _set_random_position(key, pos): np.random.get_state /
// set_state of the global stream.
PyObject* random_position_py(PyObject*, PyObject*) {
  const RandomPosition p = random_position();
  return Py_BuildValue("(KK)", static_cast<unsigned long long>(p.key),
                       static_cast<unsigned long long>(p.pos));
}

PyObject* set_random_position_py(PyObject*, PyObject* args) {
  unsigned long long key, pos;
  if (!PyArg_ParseTuple(args, "KK:_set_random_position", &key, &pos)) return nullptr;
  Py_BEGIN_ALLOW_THREADS;  // (discard is linear in pos)
  set_random_position(key, pos);
  Py_END_ALLOW_THREADS;
  Py_RETURN_NONE;
}

PyObject* result_type_py(PyObject*, PyObject* args) {
  NDX_PY_BEGIN
  std::vector<DType> types;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i) {
    PyObject* o = PyTuple_GET_ITEM(args, i);
    types.push_back(is_ndarray(o) ? unwrap(o).dtype() : dtype_from_py(o));
  }
  return dtype_to_py(promote_sequence(types.data(), types.size()));
  NDX_PY_END(nullptr)
}

std::vector<NDArray> arrays_of(PyObject* seq, const char* what) {
  std::vector<NDArray> out;
  if (seq == Py_None) return out;
  if (is_ndarray(seq)) return {unwrap(seq)};
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of ndarrays");
  if (!fast) throw PythonErrorSet{};
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    PyObject* item = PySequence_Fast_ITEMS(fast)[i];
    if (item == Py_None) {
      out.emplace_back();
    } else if (is_ndarray(item)) {
      out.push_back(unwrap(item));
    } else {
      Py_DECREF(fast);
      type_error("[", what, "] expected ndarrays, got ", Py_TYPE(item)->tp_name);
    }
  }
  Py_DECREF(fast);
  return out;
}

// The bytes of its storage an array can reach: (storage identity, first byte, one past the
// last); np.may_share_memory compares them.
PyObject* memory_extent(PyObject*, PyObject* o) {
  NDX_PY_BEGIN
  if (!is_ndarray(o)) type_error("[may_share_memory] expected an ndarray");
  const NDArray& a = unwrap(o);
  int64_t lo = a.byte_offset(), hi = a.byte_offset();
  if (a.size() > 0) {
    for (int d = 0; d < a.ndim(); ++d) {
      const int64_t reach = (a.shape()[d] - 1) * a.strides()[d] * a.itemsize();
      (reach < 0 ? lo : hi) += reach;
    }
    hi += a.itemsize();
  }
  return Py_BuildValue(
      "(KLL)", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(a.storage().get())),
      static_cast<long long>(lo), static_cast<long long>(hi));
  NDX_PY_END(nullptr)
}

PyObject* ag_set_recording(PyObject*, PyObject* on) {
  return PyBool_FromLong(autograd::set_recording(PyObject_IsTrue(on)));
}
PyObject* ag_set_training(PyObject*, PyObject* on) {
  return PyBool_FromLong(autograd::set_training(PyObject_IsTrue(on)));
}
PyObject* ag_is_recording(PyObject*, PyObject*) {
  return PyBool_FromLong(autograd::is_recording());
}
PyObject* ag_is_training(PyObject*, PyObject*) { return PyBool_FromLong(autograd::is_training()); }
// Whether autograd tracks the array (a leaf with a gradient, or a recorded result whose graph
// no backward freed): what decides whether a write into it, or a view of it, must be an op.
PyObject* ag_has_live_history(PyObject*, PyObject* a) {
  return PyBool_FromLong(is_ndarray(a) && autograd::has_live_history(unwrap(a)));
}

// _mark_variable(x, grad, grad_req): attach_grad with `grad` as the gradient buffer.
PyObject* ag_mark_variable(PyObject*, PyObject* args) {
  PyObject *x, *grad;
  const char* req;
  if (!PyArg_ParseTuple(args, "OOs:_mark_variable", &x, &grad, &req)) return nullptr;
  NDX_PY_BEGIN
  if (!is_ndarray(x) || !is_ndarray(grad))
    type_error("[mark_variables] variables and gradients must be ndarrays, got ",
               Py_TYPE(x)->tp_name, " and ", Py_TYPE(grad)->tp_name);
  const std::string_view r(req);
  const OpReqType t = r == "write"  ? kWriteTo
                      : r == "add"  ? kAddTo
                      : r == "null" ? kNullOp
                                    : kWriteInplace;
  if (t == kWriteInplace)
    value_error("[mark_variables] grad_req must be 'write', 'add' or 'null', got '", r, "'");
  autograd::attach_grad(unwrap(x), t, &unwrap(grad));
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

PyObject* ag_backward(PyObject*, PyObject* args) {
  PyObject *heads, *head_grads;
  int retain;
  if (!PyArg_ParseTuple(args, "OOp:_autograd_backward", &heads, &head_grads, &retain))
    return nullptr;
  NDX_PY_BEGIN
  autograd::backward(arrays_of(heads, "backward"), arrays_of(head_grads, "backward"), retain);
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

// _autograd_fresh_grads(arrays, clear): a list of bools, whether backward wrote each array's
// gradient since its flag was last cleared (autograd::fresh_grads).
PyObject* ag_fresh_grads(PyObject*, PyObject* args) {
  PyObject* arrays;
  int clear;
  if (!PyArg_ParseTuple(args, "Op:_autograd_fresh_grads", &arrays, &clear)) return nullptr;
  NDX_PY_BEGIN
  const std::vector<bool> fresh = autograd::fresh_grads(arrays_of(arrays, "fresh_grads"), clear);
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(fresh.size()));
  if (!out) return nullptr;
  for (size_t i = 0; i < fresh.size(); ++i)
    PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), PyBool_FromLong(fresh[i]));
  return out;
  NDX_PY_END(nullptr)
}

// _autograd_set_grad_hook(arrays, callback(index, event)) or (None, None): see
// autograd::set_grad_hook. The callback runs on the thread running backward, with the GIL; an
// exception it raises ends the backward pass with that exception.
PyObject* ag_set_grad_hook(PyObject*, PyObject* args) {
  PyObject *arrays, *callback;
  if (!PyArg_ParseTuple(args, "OO:_autograd_set_grad_hook", &arrays, &callback)) return nullptr;
  NDX_PY_BEGIN
  if (callback == Py_None) {
    autograd::set_grad_hook({}, nullptr);
    Py_RETURN_NONE;
  }
  if (!PyCallable_Check(callback)) type_error("[set_grad_hook] callback must be callable");
  Py_INCREF(callback);
  std::shared_ptr<PyObject> fn(callback, [](PyObject* o) {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(o);
    PyGILState_Release(g);
  });
  autograd::set_grad_hook(arrays_of(arrays, "set_grad_hook"), [fn](int64_t index,
                                                                   autograd::GradEvent event) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject* r = PyObject_CallFunction(fn.get(), "Li", (long long)index, static_cast<int>(event));
    Py_XDECREF(r);
    PyGILState_Release(g);
    if (!r) throw PythonErrorSet{};
  });
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

PyObject* ag_grad(PyObject*, PyObject* args) {
  PyObject *heads, *variables, *head_grads;
  int create_graph, retain;
  if (!PyArg_ParseTuple(args, "OOOpp:_autograd_grad", &heads, &variables, &head_grads,
                        &create_graph, &retain))
    return nullptr;
  NDX_PY_BEGIN
  auto grads = autograd::grad(arrays_of(heads, "grad"), arrays_of(variables, "grad"),
                              arrays_of(head_grads, "grad"), create_graph, retain);
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(grads.size()));
  for (size_t i = 0; i < grads.size(); ++i) PyList_SET_ITEM(list, i, wrap(grads[i]));
  return list;
  NDX_PY_END(nullptr)
}

// ---- graphs: tracing, the cached executor, JSON ----
const char* kGraphCapsule = "ndx.Graph";

// A graph and its executor, planned on first run: a symbol built op by op makes a handle per
// op, and planning each one would cost time linear in the graph (quadratic for the chain).
struct GraphHandle {
  Graph graph;
  std::unique_ptr<Executor> executor;  // created under the GIL, so once
};

void free_graph(PyObject* capsule) {
  delete static_cast<GraphHandle*>(PyCapsule_GetPointer(capsule, kGraphCapsule));
}

PyObject* graph_capsule(Graph g) {
  auto* handle = new GraphHandle{std::move(g), nullptr};
  PyObject* capsule = PyCapsule_New(handle, kGraphCapsule, free_graph);
  if (!capsule) delete handle;
  return capsule;
}

GraphHandle& handle_of(PyObject* h) {
  if (!PyCapsule_IsValid(h, kGraphCapsule)) type_error("[graph] expected a graph handle");
  return *static_cast<GraphHandle*>(PyCapsule_GetPointer(h, kGraphCapsule));
}

const Executor& executor_of(PyObject* h) {
  GraphHandle& handle = handle_of(h);
  if (!handle.executor) handle.executor = std::make_unique<Executor>(handle.graph);
  return *handle.executor;
}

PyObject* list_of(const std::vector<NDArray>& arrays) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(arrays.size()));
  for (size_t i = 0; i < arrays.size(); ++i) PyList_SET_ITEM(list, i, wrap(arrays[i]));
  return list;
}

PyObject* set_tracing_py(PyObject*, PyObject* on) {
  return PyBool_FromLong(set_tracing(PyObject_IsTrue(on)));
}
PyObject* is_tracing_py(PyObject*, PyObject*) { return PyBool_FromLong(is_tracing()); }

// The device creation calls use when given none (ndx/default_device.h); None clears it.
std::optional<Device> optional_device(PyObject* o, const char* fn) {
  if (o == Py_None) return std::nullopt;
  return FieldTraits<Device>::from_value(value_from_py(o, fn, "device"), {fn, "device"});
}

PyObject* set_scope_device_py(PyObject*, PyObject* device) {
  NDX_PY_BEGIN
  set_scope_device(optional_device(device, "_set_scope_device"));
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

PyObject* set_process_default_device_py(PyObject*, PyObject* device) {
  NDX_PY_BEGIN
  set_process_default_device(optional_device(device, "_set_process_default_device"));
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

PyObject* trace_input_py(PyObject*, PyObject* args) {
  PyObject* arr;
  const char* name;
  if (!PyArg_ParseTuple(args, "Os:_trace_input", &arr, &name)) return nullptr;
  NDX_PY_BEGIN
  if (!is_ndarray(arr)) type_error("[trace] expected an ndarray");
  return wrap(trace_input(unwrap(arr), name));
  NDX_PY_END(nullptr)
}

PyObject* graph_from_outputs(PyObject*, PyObject* outputs) {
  NDX_PY_BEGIN
  return graph_capsule(traced_graph(arrays_of(outputs, "trace")));
  NDX_PY_END(nullptr)
}

PyObject* graph_inputs(PyObject*, PyObject* h) {
  NDX_PY_BEGIN
  const auto names = handle_of(h).graph.input_names();
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(names.size()));
  for (size_t i = 0; i < names.size(); ++i)
    PyList_SET_ITEM(list, i, PyUnicode_FromString(names[i].c_str()));
  return list;
  NDX_PY_END(nullptr)
}

PyObject* graph_run(PyObject*, PyObject* args) {
  PyObject *h, *inputs;
  if (!PyArg_ParseTuple(args, "OO:_graph_run", &h, &inputs)) return nullptr;
  NDX_PY_BEGIN
  return list_of(executor_of(h).run(arrays_of(inputs, "graph")));
  NDX_PY_END(nullptr)
}

// What the graph's last run did: kernels invoked, fused nodes, memory planning.
PyObject* graph_stats(PyObject*, PyObject* h) {
  NDX_PY_BEGIN
  const Executor::PlanStats s = executor_of(h).last_plan();
  return Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "kernels", s.kernels, "fused_nodes",
                       s.fused_nodes, "fused_ops", s.fused_ops, "outputs_in_place",
                       s.outputs_in_place, "outputs_reused", s.outputs_reused, "outputs_allocated",
                       s.outputs_allocated, "direct", s.direct);
  NDX_PY_END(nullptr)
}

PyObject* graph_json(PyObject*, PyObject* h) {
  NDX_PY_BEGIN
  return PyUnicode_FromString(graph_to_json(handle_of(h).graph).c_str());
  NDX_PY_END(nullptr)
}

PyObject* graph_load(PyObject*, PyObject* text) {
  NDX_PY_BEGIN
  if (!PyUnicode_Check(text)) type_error("[graph_from_json] expected a str");
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(text, &n);  // null for lone surrogates
  if (!s) throw PythonErrorSet{};                     // UnicodeEncodeError, a ValueError
  return graph_capsule(graph_from_json(std::string(s, static_cast<size_t>(n))));
  NDX_PY_END(nullptr)
}

PyObject* graph_infer(PyObject*, PyObject* args) {
  PyObject *h, *shapes, *dtypes;
  if (!PyArg_ParseTuple(args, "OOO:_graph_infer", &h, &shapes, &dtypes)) return nullptr;
  NDX_PY_BEGIN
  std::vector<Shape> s;
  std::vector<DType> t;
  for (Py_ssize_t i = 0; i < PySequence_Size(shapes); ++i) {
    PyObject* item = PySequence_GetItem(shapes, i);
    Value v = value_from_py(item, "infer_shape", "shape");
    Py_DECREF(item);
    s.push_back(FieldTraits<Shape>::from_value(v, {"infer_shape", "shape"}));
  }
  for (Py_ssize_t i = 0; i < PySequence_Size(dtypes); ++i) {
    PyObject* item = PySequence_GetItem(dtypes, i);
    DType d = dtype_from_py(item);
    Py_DECREF(item);
    t.push_back(d);
  }
  GraphTypes r = infer_graph(handle_of(h).graph, s, t);
  PyObject* out_s = PyList_New(0);
  PyObject* out_t = PyList_New(0);
  for (size_t i = 0; i < r.output_shapes.size(); ++i) {
    PyObject* tup = PyTuple_New(r.output_shapes[i].ndim());
    for (int k = 0; k < r.output_shapes[i].ndim(); ++k)
      PyTuple_SET_ITEM(tup, k, PyLong_FromLongLong(r.output_shapes[i][k]));
    PyList_Append(out_s, tup);
    Py_DECREF(tup);
    PyObject* d = dtype_to_py(r.output_types[i]);
    PyList_Append(out_t, d);
    Py_DECREF(d);
  }
  return Py_BuildValue("(NN)", out_s, out_t);
  NDX_PY_END(nullptr)
}

// A shape as a tuple, None when unknown; a dtype likewise.
PyObject* shape_or_none(const Shape& s) {
  if (!s.is_known()) Py_RETURN_NONE;
  PyObject* tup = PyTuple_New(s.ndim());
  for (int k = 0; k < s.ndim(); ++k) PyTuple_SET_ITEM(tup, k, PyLong_FromLongLong(s[k]));
  return tup;
}
PyObject* dtype_or_none(DType t) {
  if (t == DType::kUnknown) Py_RETURN_NONE;
  return dtype_to_py(t);
}
template <typename T, typename F>
PyObject* list_of(const std::vector<T>& v, F convert) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i)
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), convert(v[i]));
  return list;
}

// (input shapes, input dtypes, output shapes, output dtypes) from some inputs' shapes and
// dtypes (None: unknown), MXNet's inference filling what the ops can work out.
PyObject* graph_infer_partial(PyObject*, PyObject* args) {
  PyObject *h, *shapes, *dtypes;
  if (!PyArg_ParseTuple(args, "OOO:_graph_infer_partial", &h, &shapes, &dtypes)) return nullptr;
  NDX_PY_BEGIN
  if (!PyList_Check(shapes) || !PyList_Check(dtypes))
    type_error("[infer_shape] expected lists of shapes and dtypes");
  std::vector<Shape> s;
  std::vector<DType> t;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(shapes); ++i) {
    PyObject* item = PyList_GET_ITEM(shapes, i);
    if (item == Py_None) {
      s.push_back(Shape::unknown());
      continue;
    }
    Value v = value_from_py(item, "infer_shape", "shape");
    s.push_back(FieldTraits<Shape>::from_value(v, {"infer_shape", "shape"}));
  }
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(dtypes); ++i) {
    PyObject* item = PyList_GET_ITEM(dtypes, i);
    t.push_back(item == Py_None ? DType::kUnknown : dtype_from_py(item));
  }
  PartialGraphTypes r = infer_graph_partial(handle_of(h).graph, s, t);
  return Py_BuildValue(
      "(NNNN)", list_of(r.input_shapes, shape_or_none), list_of(r.input_types, dtype_or_none),
      list_of(r.output_shapes, shape_or_none), list_of(r.output_types, dtype_or_none));
  NDX_PY_END(nullptr)
}

// A Python dict of params as the string dict ops parse (values converted with str()).
std::map<std::string, std::string> string_dict(PyObject* params) {
  std::map<std::string, std::string> dict;
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(params, &pos, &k, &v)) {
    PyObject* s = PyObject_Str(v);
    if (!s) throw PythonErrorSet{};
    const char* key = PyUnicode_AsUTF8(k);
    if (!key) {
      Py_DECREF(s);
      throw PythonErrorSet{};
    }
    const char* text = PyUnicode_AsUTF8(s);
    if (!text) {
      Py_DECREF(s);
      throw PythonErrorSet{};
    }
    dict[key] = text;
    Py_DECREF(s);
  }
  return dict;
}

// _invoke_str(op, inputs, {name: str}): params as strings, through the op's parser (Custom).
PyObject* invoke_str(PyObject*, PyObject* args) {
  const char* name;
  PyObject *inputs, *params;
  if (!PyArg_ParseTuple(args, "sOO!:_invoke_str", &name, &inputs, &PyDict_Type, &params))
    return nullptr;
  NDX_PY_BEGIN
  std::map<std::string, std::string> dict = string_dict(params);
  const Op* op = Op::get(name);
  NodeAttrs attrs = op->make_attrs(std::move(dict));
  return outputs_to_py(invoke(attrs, inputs_from(inputs, op)));
  NDX_PY_END(nullptr)
}

PyObject* library_op_is_stateful_py(PyObject*, PyObject* name) {
  NDX_PY_BEGIN
  if (!PyUnicode_Check(name)) type_error("[library] expected an op name str");
  const char* s = PyUnicode_AsUTF8(name);
  if (!s) throw PythonErrorSet{};
  return PyBool_FromLong(library_op_is_stateful(s));
  NDX_PY_END(nullptr)
}

PyObject* load_library_py(PyObject*, PyObject* path) {
  NDX_PY_BEGIN
  if (!PyUnicode_Check(path)) type_error("[library.load] expected a path str");
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(path, &n);
  if (!s) throw PythonErrorSet{};
  if (std::strlen(s) != static_cast<size_t>(n))
    value_error("[library.load] the path contains a null character");
  auto names = load_library(s);
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(names.size()));
  for (size_t i = 0; i < names.size(); ++i)
    PyList_SET_ITEM(list, i, PyUnicode_FromString(names[i].c_str()));
  return list;
  NDX_PY_END(nullptr)
}

// Parsed attributes kept from Python: _attrs_str(op, {name: str}) once, _invoke_attrs(h, inputs)
// many times (custom ops reuse their prop object this way).
const char* kAttrsCapsule = "ndx.NodeAttrs";
void free_attrs(PyObject* c) {
  delete static_cast<NodeAttrs*>(PyCapsule_GetPointer(c, kAttrsCapsule));
}

PyObject* attrs_str(PyObject*, PyObject* args) {
  const char* name;
  PyObject* params;
  if (!PyArg_ParseTuple(args, "sO!:_attrs_str", &name, &PyDict_Type, &params)) return nullptr;
  NDX_PY_BEGIN
  std::map<std::string, std::string> dict = string_dict(params);
  auto* attrs = new NodeAttrs(Op::get(name)->make_attrs(std::move(dict)));
  return PyCapsule_New(attrs, kAttrsCapsule, free_attrs);
  NDX_PY_END(nullptr)
}

PyObject* invoke_attrs(PyObject*, PyObject* args) {
  PyObject *h, *inputs;
  if (!PyArg_ParseTuple(args, "OO:_invoke_attrs", &h, &inputs)) return nullptr;
  NDX_PY_BEGIN
  if (!PyCapsule_IsValid(h, kAttrsCapsule))
    type_error("[invoke] expected attributes from _attrs_str");
  const auto* attrs = static_cast<const NodeAttrs*>(PyCapsule_GetPointer(h, kAttrsCapsule));
  return outputs_to_py(invoke(*attrs, inputs_from(inputs, attrs->op)));
  NDX_PY_END(nullptr)
}

// ---- symbols: graphs built without values ----
const Graph& graph_of(PyObject* h) { return handle_of(h).graph; }

// _sym_var(name[, {attribute: str}]): a graph input with MXNet's symbol attributes.
PyObject* sym_var(PyObject*, PyObject* args) {
  PyObject *name, *attrs = nullptr;
  if (!PyArg_ParseTuple(args, "O|O!:_sym_var", &name, &PyDict_Type, &attrs)) return nullptr;
  NDX_PY_BEGIN
  if (!PyUnicode_Check(name)) type_error("[sym.var] expected a name str");
  NodePtr v = make_variable(utf8_of(name));
  if (attrs) v->attrs.dict = string_dict(attrs);
  Graph g;
  g.outputs.push_back(NodeEntry{std::move(v), 0, 0});
  return graph_capsule(std::move(g));
  NDX_PY_END(nullptr)
}

// Constants and the Python scalars of symbol arithmetic (sym * 2): operands, not inputs or
// layers, so get_internals / get_children leave them out (MXNet's _mul_scalar is one node).
bool is_operand_constant(const Node& n) {
  static const Op* const weak_scalar = Op::get("_npi_weak_scalar_like");
  return n.is_variable() ? !n.values.empty() : n.op() == weak_scalar;
}

// _sym_output_names(symbol): MXNet's names of the outputs: an input's own name, else
// '<node>_<the op's name of that output>' ('fc1_output', 'rnn0_state_output', 'split0_output1').
PyObject* sym_output_names(PyObject*, PyObject* h) {
  NDX_PY_BEGIN
  const Graph& g = graph_of(h);
  PyObject* names = PyList_New(static_cast<Py_ssize_t>(g.outputs.size()));
  if (!names) throw PythonErrorSet{};
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const NodeEntry& e = g.outputs[i];
    std::string name = e.node->attrs.name;
    if (!e.node->is_variable()) {
      const std::vector<std::string> outs = e.node->op()->output_names(e.node->attrs);
      name += "_" + (e.index < outs.size() ? outs[e.index] : "output" + std::to_string(e.index));
    }
    PyList_SET_ITEM(names, static_cast<Py_ssize_t>(i), PyUnicode_FromString(name.c_str()));
  }
  return names;
  NDX_PY_END(nullptr)
}

// _sym_internals(symbol): every entry of the graph, inputs first (MXNet's get_internals).
PyObject* sym_internals(PyObject*, PyObject* h) {
  NDX_PY_BEGIN
  Graph g;
  for (const auto& n : graph_of(h).topo_order()) {
    if (is_operand_constant(*n)) continue;
    const uint32_t k = n->is_variable() ? 1 : n->op()->visible_outputs_for(n->attrs);
    for (uint32_t j = 0; j < k; ++j) g.outputs.push_back(NodeEntry{n, j, 0});
  }
  return graph_capsule(std::move(g));
  NDX_PY_END(nullptr)
}

// _sym_compose(symbol, {input name: symbol}): a copy of the graph with each named input
// replaced by the given single-output symbol (MXNet's Symbol.__call__ / _compose). Constants
// and the given symbols' nodes are shared, every other node is new.
PyObject* sym_compose(PyObject*, PyObject* args) {
  PyObject *h, *mapping;
  if (!PyArg_ParseTuple(args, "OO!:_sym_compose", &h, &PyDict_Type, &mapping)) return nullptr;
  NDX_PY_BEGIN
  std::map<std::string, NodeEntry> replace;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(mapping, &pos, &key, &value)) {
    if (!PyUnicode_Check(key)) type_error("[Symbol.__call__] input names must be str");
    const Graph& sub = graph_of(value);
    if (sub.outputs.size() != 1)
      value_error("[Symbol.__call__] input '", utf8_of(key), "' must be a symbol with one ",
                  "output, got ", sub.outputs.size());
    replace[utf8_of(key)] = sub.outputs[0];
  }
  const Graph& src = graph_of(h);
  std::unordered_map<const Node*, NodePtr> copy;
  std::unordered_map<const Node*, NodeEntry> replaced;
  for (const auto& n : src.topo_order()) {
    if (n->is_variable()) {
      auto it = n->values.empty() ? replace.find(n->attrs.name) : replace.end();
      if (it != replace.end())
        replaced[n.get()] = it->second;
      else
        copy[n.get()] = n;  // inputs not replaced and constants stay shared
      continue;
    }
    auto c = std::make_shared<Node>();
    c->attrs = n->attrs;
    for (const auto& e : n->inputs) {
      auto r = replaced.find(e.node.get());
      c->inputs.push_back(r != replaced.end() ? r->second
                                              : NodeEntry{copy.at(e.node.get()), e.index, 0});
    }
    copy[n.get()] = std::move(c);
  }
  Graph g;
  for (const auto& o : src.outputs) {
    auto r = replaced.find(o.node.get());
    g.outputs.push_back(r != replaced.end() ? r->second
                                            : NodeEntry{copy.at(o.node.get()), o.index, 0});
  }
  return graph_capsule(std::move(g));
  NDX_PY_END(nullptr)
}

// _sym_children(symbol): the entries the output nodes read (MXNet's get_children); an
// empty graph for inputs.
PyObject* sym_children(PyObject*, PyObject* h) {
  NDX_PY_BEGIN
  Graph g;
  std::set<std::pair<const Node*, uint32_t>> seen;  // (several outputs of one node: once)
  std::set<const Node*> heads;
  for (const auto& o : graph_of(h).outputs) {
    if (!heads.insert(o.node.get()).second) continue;
    for (const auto& e : o.node->inputs)
      if (!is_operand_constant(*e.node) && seen.insert({e.node.get(), e.index}).second)
        g.outputs.push_back(e);
  }
  return graph_capsule(std::move(g));
  NDX_PY_END(nullptr)
}

// _sym_cut(symbol, [input names], [node names]): a loop body or branch of sym.contrib's
// control flow, split from the graph around it as MXNet's _cut_subgraph does. The body is the
// nodes named (those made while the body function ran) and every node that reads one of the
// named inputs (the placeholders) or a body node; every other entry the body reads, or gives
// as an output (the enclosing graph's layers and variables), becomes the input 'cut<i>'.
// Returns (the body's graph, [each cut entry as a symbol of the enclosing graph, its nodes
// shared, so the enclosing graph computes it once]). Constants stay in the body.
PyObject* sym_cut(PyObject*, PyObject* args) {
  PyObject *h, *names, *made;
  if (!PyArg_ParseTuple(args, "OO!O!:_sym_cut", &h, &PyList_Type, &names, &PyList_Type, &made))
    return nullptr;
  NDX_PY_BEGIN
  std::set<std::string> own, own_nodes;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); ++i)
    own.insert(utf8_of(PyList_GET_ITEM(names, i)));
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(made); ++i)
    own_nodes.insert(utf8_of(PyList_GET_ITEM(made, i)));
  const Graph& src = graph_of(h);
  std::unordered_map<const Node*, NodePtr> copy;  // body nodes (and constants) in the new graph
  std::map<std::pair<const Node*, uint32_t>, NodeEntry> cut;  // entry -> its input variable
  Graph cuts;
  auto entry_of = [&](const NodeEntry& e) {
    if (auto it = copy.find(e.node.get()); it != copy.end())
      return NodeEntry{it->second, e.index, 0};
    auto [it, fresh] = cut.try_emplace({e.node.get(), e.index});
    if (fresh) {
      it->second = NodeEntry{make_variable("cut" + std::to_string(cuts.outputs.size())), 0, 0};
      cuts.outputs.push_back(e);
    }
    return it->second;
  };
  for (const auto& n : src.topo_order()) {
    if (n->is_variable()) {
      if (!n->values.empty() || own.count(n->attrs.name)) copy[n.get()] = n;  // (shared)
      continue;
    }
    bool reads_own = own_nodes.count(n->attrs.name) > 0;
    for (const auto& e : n->inputs) {
      const Node* in = e.node.get();
      reads_own |= copy.count(in) && (!in->is_variable() || in->values.empty());
    }
    if (!reads_own) continue;
    auto c = std::make_shared<Node>();
    c->attrs = n->attrs;
    for (const auto& e : n->inputs) c->inputs.push_back(entry_of(e));
    copy[n.get()] = std::move(c);
  }
  Graph body;
  for (const auto& o : src.outputs) body.outputs.push_back(entry_of(o));
  PyObject* entries = PyList_New(0);
  if (!entries) throw PythonErrorSet{};
  PyObject* result = nullptr;
  try {
    for (const auto& e : cuts.outputs) {
      Graph one;
      one.outputs.push_back(e);
      PyObject* capsule = graph_capsule(std::move(one));
      if (!capsule || PyList_Append(entries, capsule) < 0) {
        Py_XDECREF(capsule);
        throw PythonErrorSet{};
      }
      Py_DECREF(capsule);
    }
    PyObject* graph = graph_capsule(std::move(body));
    if (!graph) throw PythonErrorSet{};
    result = PyTuple_Pack(2, graph, entries);
    Py_DECREF(graph);
  } catch (...) {
    Py_DECREF(entries);
    throw;
  }
  Py_DECREF(entries);
  if (!result) throw PythonErrorSet{};
  return result;
  NDX_PY_END(nullptr)
}

PyObject* sym_const(PyObject*, PyObject* arr) {
  NDX_PY_BEGIN
  if (!is_ndarray(arr)) type_error("[sym] constants must be ndarrays");
  NodePtr c = make_variable("constant");
  c->values = {autograd::detach(unwrap(arr))};
  Graph g;
  g.outputs.push_back(NodeEntry{c, 0, 0});
  return graph_capsule(std::move(g));
  NDX_PY_END(nullptr)
}

// _sym_op(op, [symbols], {name: str}, node_name): a node on the outputs of the input symbols.
PyObject* sym_op(PyObject*, PyObject* args) {
  const char *op_name, *node_name;
  PyObject *inputs, *params;
  if (!PyArg_ParseTuple(args, "sOO!s:_sym_op", &op_name, &inputs, &PyDict_Type, &params,
                        &node_name))
    return nullptr;
  NDX_PY_BEGIN
  std::map<std::string, std::string> dict = string_dict(params);
  auto node = std::make_shared<Node>();
  node->attrs = Op::get(op_name)->make_attrs(std::move(dict));
  if (*node_name) node->attrs.name = node_name;
  std::unique_ptr<PyObject, decltype(&Py_DecRef)> fast(
      PySequence_Fast(inputs, "expected a sequence of symbols"), &Py_DecRef);
  if (!fast) throw PythonErrorSet{};
  PyObject** items = PySequence_Fast_ITEMS(fast.get());
  const auto n_items = static_cast<size_t>(PySequence_Fast_GET_SIZE(fast.get()));
  const uint32_t expected = node->op()->inputs_for(node->attrs);
  // As MXNet's composition, an input not given (None, or missing at the end) becomes the
  // variable '<node name>_<input name>': fully_connected(x, name='fc') reads fc_weight, fc_bias.
  // (A symbol with several outputs gives as many inputs.)
  size_t n_entries = 0;
  bool any_none = false;
  for (size_t i = 0; i < n_items; ++i) {
    const bool none = items[i] == Py_None;
    any_none |= none;
    n_entries += none ? 1 : graph_of(items[i]).outputs.size();
  }
  std::vector<std::string> names;
  if (any_none || n_entries < expected) names = node->op()->input_names(node->attrs);
  auto variable_for = [&](size_t position) {
    if (position >= names.size())
      value_error("[sym.", public_op_name(op_name), "] input ", position, " is None; the op takes ",
                  expected, " inputs");
    return NodeEntry{make_variable(node->attrs.name + "_" + names[position]), 0, 0};
  };
  for (size_t i = 0; i < n_items; ++i) {
    if (items[i] == Py_None) {
      node->inputs.push_back(variable_for(node->inputs.size()));
      continue;
    }
    for (const auto& e : graph_of(items[i]).outputs) node->inputs.push_back(e);
  }
  while (node->inputs.size() < expected && node->inputs.size() < names.size())
    node->inputs.push_back(variable_for(node->inputs.size()));
  if (node->inputs.size() != expected)
    value_error("[sym.", public_op_name(op_name), "] expected ", expected, " inputs, got ",
                node->inputs.size());
  Graph g;
  for (uint32_t j = 0; j < node->op()->visible_outputs_for(node->attrs); ++j)
    g.outputs.push_back(NodeEntry{node, j, 0});
  return graph_capsule(std::move(g));
  NDX_PY_END(nullptr)
}

// _sym_group([symbols]) and _sym_output(symbol, i).
PyObject* sym_group(PyObject*, PyObject* symbols) {
  NDX_PY_BEGIN
  Graph g;
  PyObject* fast = PySequence_Fast(symbols, "expected a sequence of symbols");
  if (!fast) throw PythonErrorSet{};
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i)
    for (const auto& e : graph_of(PySequence_Fast_ITEMS(fast)[i]).outputs) g.outputs.push_back(e);
  Py_DECREF(fast);
  return graph_capsule(std::move(g));
  NDX_PY_END(nullptr)
}

PyObject* sym_output(PyObject*, PyObject* args) {
  PyObject* h;
  Py_ssize_t i;
  if (!PyArg_ParseTuple(args, "On:_sym_output", &h, &i)) return nullptr;
  NDX_PY_BEGIN
  const Graph& src = graph_of(h);
  if (i < 0 || i >= static_cast<Py_ssize_t>(src.outputs.size()))
    index_error("[sym] output ", i, " of a symbol with ", src.outputs.size(), " outputs");
  Graph g;
  g.outputs.push_back(src.outputs[static_cast<size_t>(i)]);
  return graph_capsule(std::move(g));
  NDX_PY_END(nullptr)
}

// _sym_gradient(symbol, [names]): the symbol whose outputs are the gradients of the sum of the
// outputs (weighted by new inputs head_grad0, ...) with respect to the named inputs.
PyObject* sym_gradient(PyObject*, PyObject* args) {
  PyObject *h, *names;
  if (!PyArg_ParseTuple(args, "OO:_sym_gradient", &h, &names)) return nullptr;
  NDX_PY_BEGIN
  const Graph& g = graph_of(h);
  std::vector<NodeEntry> head_grads, targets;
  for (size_t i = 0; i < g.outputs.size(); ++i)
    head_grads.push_back(NodeEntry{make_variable("head_grad" + std::to_string(i)), 0, 0});
  auto ins = g.inputs();
  PyObject* fast = PySequence_Fast(names, "expected a list of input names");
  if (!fast) throw PythonErrorSet{};
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    const char* name = PyUnicode_AsUTF8(PySequence_Fast_ITEMS(fast)[i]);
    if (!name) {
      Py_DECREF(fast);
      throw PythonErrorSet{};
    }
    auto it = std::find_if(ins.begin(), ins.end(),
                           [&](const NodePtr& n) { return n->attrs.name == name; });
    if (it == ins.end()) {
      Py_DECREF(fast);
      value_error("[gradient] the symbol has no input named '", name, "'");
    }
    targets.push_back(NodeEntry{*it, 0, 0});
  }
  Py_DECREF(fast);
  auto grads = autograd::gradient_entries(g.outputs, head_grads, targets);
  Graph out;
  for (size_t i = 0; i < grads.size(); ++i)
    out.outputs.push_back(grads[i].node ? grads[i] : make_node("_np_zeros_like", {targets[i]}));
  return graph_capsule(std::move(out));
  NDX_PY_END(nullptr)
}

PyObject* sym_num_outputs(PyObject*, PyObject* h) {
  NDX_PY_BEGIN
  return PyLong_FromSize_t(graph_of(h).outputs.size());
  NDX_PY_END(nullptr)
}

// ---- concatenate / stack: attributes parsed once per (op, number of inputs, axis) ----

// NumPy's dtype= / casting= of concatenate and stack: each input cast to dtype, if the
// casting rule allows it; and the check of an out= of another dtype than the result's.
void check_join_cast(const char* op_name, DType from, DType to, Casting casting) {
  if (!can_cast(from, to, casting))
    type_error("[", op_name, "] Cannot cast array data from dtype('", from, "') to dtype('", to,
               "') according to the rule '", casting_name(casting), "'");
}

PyObject* join(const char* op_name, PyObject* const* args, size_t nargsf, PyObject* kwnames,
               bool axis_may_be_none) {
  static const char* const kNames[] = {"seq", "axis", "out", "dtype", "casting"};
  constexpr int kNumNames = 5;
  NDX_PY_BEGIN
  PyObject* a[kNumNames] = {};
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs > 3) type_error(op_name, "() takes at most 3 arguments (", nargs, " given)");
  for (Py_ssize_t i = 0; i < nargs; ++i) a[i] = args[i];
  for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); ++k) {
    const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
    if (!key) PyErr_Clear();  // reported below as an unexpected keyword
    int i = 0;
    while (i < kNumNames && (!key || std::strcmp(key, kNames[i]) != 0)) ++i;
    if (i == kNumNames || a[i])
      type_error(op_name, "() got an unexpected or repeated keyword argument '", key ? key : "?",
                 "'");
    a[i] = args[nargs + k];
  }
  if (!a[0]) type_error(op_name, "() missing required argument 'seq'");
  PyObject* fast = PySequence_Fast(a[0], "expected a sequence of arrays");
  if (!fast) throw PythonErrorSet{};
  std::vector<NDArray> in;
  try {
    in = operands_from_py(PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast));
  } catch (...) {
    Py_DECREF(fast);
    throw;
  }
  Py_DECREF(fast);
  if (in.empty()) value_error("[", op_name, "] need at least one array to ", op_name);
  const bool has_out = a[2] && a[2] != Py_None, has_dtype = a[3] && a[3] != Py_None;
  if (has_out && has_dtype)
    type_error("[", op_name, "] only takes `out` or `dtype` as an argument, but both were ",
               "provided.");
  Casting casting = Casting::kSameKind;
  if (a[4]) {
    if (!PyUnicode_Check(a[4]))
      type_error("[", op_name, "] casting must be a str, got ", Py_TYPE(a[4])->tp_name);
    casting = casting_from_name(utf8_of(a[4]), op_name);
  }
  std::optional<DType> dtype;
  if (has_dtype) dtype = dtype_from_py(a[3]);
  std::optional<int64_t> axis = int64_t{0};
  if (a[1] && a[1] != Py_None) {
    int64_t v;
    int overflow;  // a saturated axis is out of bounds: AxisError below
    if (!index_value(a[1], &v, &overflow))
      type_error("[", op_name, "] axis must be an int, got ", Py_TYPE(a[1])->tp_name);
    axis = v;
  } else if (a[1] == Py_None) {
    if (!axis_may_be_none) type_error("[", op_name, "] axis must be an int, got None");
    axis = std::nullopt;
  }
  static const Op* concat = Op::get("_npi_concatenate");
  static const Op* stack = Op::get("_npi_stack");
  const Op* op = axis_may_be_none ? concat : stack;
  // Attributes keyed by (op, inputs, axis): parsed once, reused by every later call.
  struct Key {
    const Op* op;
    int64_t n, axis;
    bool none;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      // Unsigned: wraps by definition (axis may be any int64).
      uint64_t mix = static_cast<uint64_t>(k.n) * 1315423911u +
                     static_cast<uint64_t>(k.axis) * 2654435761u + k.none;
      return std::hash<uint64_t>()(mix) ^ std::hash<const void*>()(k.op);
    }
  };
  static std::unordered_map<Key, NodeAttrs, Hash> cache;
  const Key key{op, static_cast<int64_t>(in.size()), axis.value_or(0), !axis};
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::vector<std::pair<std::string_view, Value>> kw{
        {"num_args", Value(static_cast<int64_t>(in.size()))},
        {"axis", axis ? Value(*axis) : Value()}};
    NodeAttrs attrs = op->make_attrs(kw);
    if (cache.size() > 4096) cache.clear();
    it = cache.emplace(key, std::move(attrs)).first;
  }
  if (has_dtype) {  // the shapes are checked first, as NumPy does, then each cast
    const DType t = *dtype;
    ShapeVector shapes, joined(1, Shape::unknown());
    for (const NDArray& x : in) shapes.push_back(x.shape());
    infer_shapes(it->second, &shapes, &joined);
    for (NDArray& x : in)
      if (x.dtype() != t) {
        check_join_cast(op_name, x.dtype(), t, casting);
        x = cast_for_autograd(x, t);
      }
  }
  InvokeOptions options;
  std::vector<NDArray> out;
  if (has_out) {
    if (!is_ndarray(a[2]))
      type_error("[", op_name, "] out must be an ndarray, got ", Py_TYPE(a[2])->tp_name);
    out.push_back(unwrap(a[2]));
    std::vector<DType> types;
    for (const NDArray& x : in) types.push_back(x.dtype());
    const DType joined = promote_sequence(types.data(), types.size());
    if (joined != out[0].dtype()) {  // joined, then cast into out (casting checked first)
      for (const NDArray& x : in) check_join_cast(op_name, x.dtype(), out[0].dtype(), casting);
      NDArray r = invoke(it->second, in)[0];
      if (r.shape() != out[0].shape())
        value_error("[", op_name, "] out has shape ", out[0].shape().str(), ", expected ",
                    r.shape().str());
      out[0].assign(r);
      Py_INCREF(a[2]);
      return a[2];
    }
    options.outputs = &out;
  }
  std::vector<NDArray> result = invoke(it->second, in, options);
  if (has_out) {
    Py_INCREF(a[2]);
    return a[2];
  }
  return wrap(std::move(result[0]));
  NDX_PY_END(nullptr)
}
PyObject* concatenate_py(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return join("concatenate", args, nargsf, kwnames, true);
}
PyObject* stack_py(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return join("stack", args, nargsf, kwnames, false);
}

// ---- threads ----
PyObject* set_num_threads_py(PyObject*, PyObject* n) {
  NDX_PY_BEGIN
  if (n == Py_None) {
    set_num_threads(0);
    Py_RETURN_NONE;
  }
  if (!PyLong_Check(n) || PyBool_Check(n))
    type_error("[set_num_threads] expected an int or None, got ", Py_TYPE(n)->tp_name);
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
  if (overflow || v < 1 || v > 1024)
    value_error("[set_num_threads] the number of threads must be in [1, 1024], got ",
                overflow ? std::string("a huge int") : std::to_string(v));
  set_num_threads(static_cast<int>(v));
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}
PyObject* get_num_threads_py(PyObject*, PyObject*) { return PyLong_FromLong(num_threads()); }
PyObject* threads_started_py(PyObject*, PyObject*) {
  return PyLong_FromLongLong(threads_started());
}
PyObject* simd_target_py(PyObject*, PyObject*) { return PyUnicode_FromString(simd_target()); }
PyObject* dnnl_enabled_py(PyObject*, PyObject*) { return PyBool_FromLong(onednn_enabled()); }
// A Python list of make_row(item) for each item; null with the error set if a row fails.
template <class Items, class MakeRow>
PyObject* list_of(const Items& items, MakeRow make_row) {
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(items.size()));
  if (!out) return nullptr;
  Py_ssize_t i = 0;
  for (const auto& item : items) {
    PyObject* row = make_row(item);
    if (!row) {
      Py_DECREF(out);
      return nullptr;
    }
    PyList_SET_ITEM(out, i++, row);
  }
  return out;
}

PyObject* profiler_set_py(PyObject*, PyObject* on) {
  const int v = PyObject_IsTrue(on);
  if (v < 0) return nullptr;
  profiler::set_recording(v != 0);
  Py_RETURN_NONE;
}
PyObject* profiler_now_py(PyObject*, PyObject*) { return PyLong_FromLongLong(profiler::now_ns()); }
// (name, category, start_ns, end_ns): a span timed in Python (data loading, user scopes).
PyObject* profiler_record_py(PyObject*, PyObject* args) {
  const char *name = nullptr, *category = nullptr;
  long long start = 0, end = 0;
  if (!PyArg_ParseTuple(args, "ssLL", &name, &category, &start, &end)) return nullptr;
  // categories from Python are interned: the event keeps a pointer to the text
  static const char* const kCategories[] = {"data", "python", "kvstore"};
  const char* cat = "python";
  for (const char* c : kCategories)
    if (std::strcmp(c, category) == 0) cat = c;
  profiler::record(name, cat, start, end);
  Py_RETURN_NONE;
}
// The events so far as (name, category, start_ns, end_ns, bytes, thread) tuples.
PyObject* profiler_events_py(PyObject*, PyObject* clear) {
  const int c = PyObject_IsTrue(clear);
  if (c < 0) return nullptr;
  return list_of(profiler::events(c != 0), [](const profiler::Event& e) {
    return Py_BuildValue("(ssLLLK)", e.name.c_str(), e.category, static_cast<long long>(e.start_ns),
                         static_cast<long long>(e.end_ns), static_cast<long long>(e.bytes),
                         static_cast<unsigned long long>(e.thread));
  });
}

// The build's options as a list of (name, value) string pairs, in build_config()'s order.
PyObject* build_config_py(PyObject*, PyObject*) {
  return list_of(build_config(), [](const std::pair<std::string, std::string>& row) {
    return Py_BuildValue("(ss)", row.first.c_str(), row.second.c_str());
  });
}
// _amp_set_policy(target, rules): target None turns AMP off; else 'float16' or 'bfloat16' and
// rules a sequence of (op name, 'target' or 'float32', param name or None, values).
PyObject* amp_set_policy_py(PyObject*, PyObject* args) {
  PyObject *target, *rules;
  if (!PyArg_ParseTuple(args, "OO:_amp_set_policy", &target, &rules)) return nullptr;
  NDX_PY_BEGIN
  if (target == Py_None) {
    amp::set_policy(nullptr);
    Py_RETURN_NONE;
  }
  auto policy = std::make_unique<amp::Policy>();
  const char* name = PyUnicode_AsUTF8(target);
  if (!name) throw PythonErrorSet{};
  policy->target = dtype_from_name(name);
  PyObject* fast = PySequence_Fast(rules, "[amp] rules must be a sequence");
  if (!fast) throw PythonErrorSet{};
  std::unique_ptr<PyObject, void (*)(PyObject*)> hold(fast, [](PyObject* o) { Py_DECREF(o); });
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    const char *op_name, *kind, *param = nullptr;
    PyObject* values;
    if (!PyArg_ParseTuple(PySequence_Fast_ITEMS(fast)[i], "sszO", &op_name, &kind, &param, &values))
      throw PythonErrorSet{};
    amp::OpRule rule;
    if (std::strcmp(kind, "float32") == 0)
      rule.kind = amp::OpRule::kFloat32;
    else if (std::strcmp(kind, "target") != 0)
      value_error("[amp] rule kind must be 'target' or 'float32', got '", kind, "'");
    if (param) rule.param = param;
    PyObject* vals = PySequence_Fast(values, "[amp] rule values must be a sequence of str");
    if (!vals) throw PythonErrorSet{};
    std::unique_ptr<PyObject, void (*)(PyObject*)> hold_vals(vals,
                                                             [](PyObject* o) { Py_DECREF(o); });
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(vals); ++k) {
      const char* v = PyUnicode_AsUTF8(PySequence_Fast_ITEMS(vals)[k]);
      if (!v) throw PythonErrorSet{};
      rule.values.emplace_back(v);
    }
    policy->rules[Op::get(op_name)] = std::move(rule);
  }
  amp::set_policy(std::move(policy));
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}
PyObject* fusion_enabled_py(PyObject*, PyObject*) { return PyBool_FromLong(fusion_enabled()); }
PyObject* set_fusion_py(PyObject*, PyObject* on) {
  const int v = PyObject_IsTrue(on);
  if (v < 0) return nullptr;
  const bool prev = fusion_enabled();
  set_fusion_enabled(v != 0);
  return PyBool_FromLong(prev);
}
PyObject* fusion_runs_py(PyObject*, PyObject*) {
  const FusionRuns r = fusion_runs();
  return Py_BuildValue("{sLsLsLsLsL}", "vector", static_cast<long long>(r.vector), "blocks",
                       static_cast<long long>(r.blocks), "whole", static_cast<long long>(r.whole),
                       "conv_onednn", static_cast<long long>(r.conv_onednn), "conv_whole",
                       static_cast<long long>(r.conv_whole));
}

// Kernels release the GIL around long loops through these (see ndx/runtime.h), until the
// interpreter begins to exit. A daemon thread that asks for the GIL back once finalization
// has begun is ended inside PyEval_RestoreThread by pthread_exit, whose forced unwind cannot
// cross the noexcept destructor that calls it (std::terminate: the process aborted at exit).
// So an atexit callback, which runs before finalization, closes a gate: threads taking the
// GIL back pass it one at a time, and once it is closed they wait for the process to end
// instead (as Python 3.14 makes such threads do), and kernels keep the GIL (a __del__ run
// while finalizing returns normally).
// (A pointer: a forked child starts with a fresh gate, as a thread of the parent may hold it
// at the fork, waiting for the GIL; the old one is left as it is.)
std::mutex* g_gil_gate = [] {
  pthread_atfork(nullptr, nullptr, [] { g_gil_gate = new std::mutex; });
  return new std::mutex;
}();
std::atomic<bool> g_exiting{false};

PyObject* stop_releasing_gil(PyObject*, PyObject*) {
  Py_BEGIN_ALLOW_THREADS;  // (a thread holding the gate may be waiting for the GIL)
  {
    std::lock_guard<std::mutex> lock(*g_gil_gate);
    g_exiting.store(true);
  }
  Py_END_ALLOW_THREADS;
  Py_RETURN_NONE;
}

void* release_gil() {
  if (g_exiting.load(std::memory_order_relaxed)) return nullptr;
  return this_thread_holds_gil() ? static_cast<void*>(PyEval_SaveThread()) : nullptr;
}
void reacquire_gil(void* token) {
  std::unique_lock<std::mutex> lock(*g_gil_gate);
  if (g_exiting.load()) {
    lock.unlock();
    for (;;) pause();
  }
  PyEval_RestoreThread(static_cast<PyThreadState*>(token));
}

PyObject* num_gpus_py(PyObject*, PyObject*) { return PyLong_FromLong(num_gpus()); }
PyObject* gpu_unavailable_py(PyObject*, PyObject*) {
  return PyUnicode_FromString(gpu_unavailable_reason().c_str());
}
int device_id_from_py(PyObject* o) {
  const long id = PyLong_AsLong(o);
  if (id == -1 && PyErr_Occurred()) throw PythonErrorSet{};
  if (id < 0 || id > 1 << 20) value_error("device_id must be a GPU index, got ", id);
  return static_cast<int>(id);
}
PyObject* gpu_memory_info_py(PyObject*, PyObject* id) {
  NDX_PY_BEGIN
  const GpuMemoryInfo m = gpu_memory_info(device_id_from_py(id));
  return Py_BuildValue(
      "(KKKK)", static_cast<unsigned long long>(m.free), static_cast<unsigned long long>(m.total),
      static_cast<unsigned long long>(m.in_use), static_cast<unsigned long long>(m.cached));
  NDX_PY_END(nullptr)
}
PyObject* gpu_empty_cache_py(PyObject*, PyObject* id) {
  NDX_PY_BEGIN
  gpu_empty_cache(device_id_from_py(id));
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}
PyObject* synchronize_py(PyObject*, PyObject* device) {
  NDX_PY_BEGIN
  Value v = value_from_py(device, "synchronize", "device");
  synchronize(FieldTraits<Device>::from_value(v, {"synchronize", "device"}));
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}
PyObject* gpu_host_fallbacks_py(PyObject*, PyObject*) {
  NDX_PY_BEGIN
  PyObject* d = PyDict_New();
  for (const auto& [name, count] : gpu_host_fallbacks()) {
    PyObject* c = PyLong_FromLongLong(count);
    PyDict_SetItemString(d, name.c_str(), c);
    Py_DECREF(c);
  }
  return d;
  NDX_PY_END(nullptr)
}

// A page-locked copy of a CPU array (ndarray.pin_memory, DataLoader(pin_memory=True)).
PyObject* pin_memory_py(PyObject*, PyObject* o) {
  NDX_PY_BEGIN
  if (!is_ndarray(o)) type_error("[pin_memory] expected an ndarray, got ", Py_TYPE(o)->tp_name);
  const NDArray& a = unwrap(o);
  NDArray out = pin_memory(a);
  if (out.raw_data() == a.raw_data()) return Py_NewRef(o);
  return wrap(std::move(out));
  NDX_PY_END(nullptr)
}
PyObject* is_pinned_py(PyObject*, PyObject* o) {
  NDX_PY_BEGIN
  if (!is_ndarray(o)) type_error("[is_pinned] expected an ndarray, got ", Py_TYPE(o)->tp_name);
  return PyBool_FromLong(is_pinned(unwrap(o)));
  NDX_PY_END(nullptr)
}
// This thread's CUDA stream on a GPU, as an int (DLPack's stream argument).
PyObject* cuda_stream_py(PyObject*, PyObject* id) {
  NDX_PY_BEGIN
  return PyLong_FromVoidPtr(cuda_stream(device_id_from_py(id)));
  NDX_PY_END(nullptr)
}

PyMethodDef module_methods[] = {
    {"_pin_memory", pin_memory_py, METH_O, "A page-locked copy of a CPU array."},
    {"_is_pinned", is_pinned_py, METH_O, "Whether a CPU array lies in page-locked memory."},
    {"_cuda_stream", cuda_stream_py, METH_O, "This thread's CUDA stream on a GPU, as an int."},
    {"_num_gpus", num_gpus_py, METH_NOARGS, "GPUs this process can use."},
    {"_gpu_unavailable_reason", gpu_unavailable_py, METH_NOARGS, "Why there is no GPU."},
    {"_gpu_memory_info", gpu_memory_info_py, METH_O,
     "(free, total, in_use, cached) bytes of a GPU."},
    {"_gpu_empty_cache", gpu_empty_cache_py, METH_O, "Frees the allocator's cached blocks."},
    {"_synchronize", synchronize_py, METH_O, "Waits for the device's queued work."},
    {"_gpu_host_fallbacks", gpu_host_fallbacks_py, METH_NOARGS,
     "{op: calls} for GPU ops that ran their CPU kernel on host copies."},
    {"concatenate", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(concatenate_py)),
     METH_FASTCALL | METH_KEYWORDS,
     "concatenate(seq, axis=0, out=None, *, dtype=None, casting='same_kind')\n--\n\n"
     "Joins arrays along an existing axis (axis=None flattens them first)."},
    {"stack", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(stack_py)),
     METH_FASTCALL | METH_KEYWORDS,
     "stack(arrays, axis=0, out=None, *, dtype=None, casting='same_kind')\n--\n\n"
     "Joins arrays along a new axis."},
    {"_set_num_threads", set_num_threads_py, METH_O,
     "Sets the threads kernels use (None: default)."},
    {"_get_num_threads", get_num_threads_py, METH_NOARGS, "The threads kernels use."},
    {"_threads_started", threads_started_py, METH_NOARGS, "Worker threads started so far."},
    {"_simd_target", simd_target_py, METH_NOARGS, "The SIMD target kernels run with."},
    {"_profiler_set", profiler_set_py, METH_O, "Turns the profiler's recording on or off."},
    {"_profiler_now", profiler_now_py, METH_NOARGS, "The profiler's clock, in nanoseconds."},
    {"_profiler_record", profiler_record_py, METH_VARARGS,
     "Records a span (name, category, start_ns, end_ns) timed elsewhere."},
    {"_profiler_events", profiler_events_py, METH_O,
     "The recorded events; a true argument also clears them."},
    {"_build_config", build_config_py, METH_NOARGS,
     "The build's version and options as (name, value) pairs."},
    {"_amp_set_policy", amp_set_policy_py, METH_VARARGS,
     "Sets automatic mixed precision's per-op dtype rules (None: off)."},
    {"_fusion_enabled", fusion_enabled_py, METH_NOARGS,
     "Whether planned graphs fuse elementwise ops (NDX_FUSION=0 turns it off)."},
    {"_set_fusion", set_fusion_py, METH_O,
     "Turns fusion in planned graphs (elementwise chains, convolutions with their epilogue) on "
     "or off; returns the previous setting."},
    {"_fusion_runs", fusion_runs_py, METH_NOARGS,
     "How fused nodes have run since the start: {'vector', 'blocks', 'whole', 'conv_onednn', "
     "'conv_whole'} counts."},
    {"_dnnl_enabled", dnnl_enabled_py, METH_NOARGS,
     "Whether convolution and pooling run on oneDNN (NDX_DNNL=0 turns it off)."},
    {"_sym_var", sym_var, METH_VARARGS, "A symbol for a named input (with attributes)."},
    {"_sym_internals", sym_internals, METH_O, "Every entry of a symbol's graph."},
    {"_sym_children", sym_children, METH_O, "The entries a symbol's output nodes read."},
    {"_sym_cut", sym_cut, METH_VARARGS, "A control-flow body cut from its enclosing graph."},
    {"_sym_output_names", sym_output_names, METH_O, "MXNet's names of a symbol's outputs."},
    {"_sym_compose", sym_compose, METH_VARARGS, "A symbol with named inputs replaced."},
    {"_sym_const", sym_const, METH_O, "A symbol holding a constant array."},
    {"_sym_op", sym_op, METH_VARARGS, "A symbol applying an op to symbols."},
    {"_sym_group", sym_group, METH_O, "The outputs of several symbols as one."},
    {"_sym_output", sym_output, METH_VARARGS, "One output of a symbol."},
    {"_sym_num_outputs", sym_num_outputs, METH_O, nullptr},
    {"_sym_gradient", sym_gradient, METH_VARARGS, "The gradient graph of a symbol."},
    {"_attrs_str", attrs_str, METH_VARARGS, "Parsed attributes of an op from string params."},
    {"_invoke_attrs", invoke_attrs, METH_VARARGS, "Runs an op with attributes from _attrs_str."},
    {"_load_library", load_library_py, METH_O, "Loads an operator library; returns its op names."},
    {"_library_op_is_stateful", library_op_is_stateful_py, METH_O, nullptr},
    {"_invoke_str", invoke_str, METH_VARARGS, "Runs an op with params given as strings."},
    {"_set_tracing", set_tracing_py, METH_O,
     "Turns graph tracing on or off; returns the previous state."},
    {"_is_tracing", is_tracing_py, METH_NOARGS, nullptr},
    {"_set_scope_device", set_scope_device_py, METH_O, nullptr},
    {"_set_process_default_device", set_process_default_device_py, METH_O, nullptr},
    {"_trace_input", trace_input_py, METH_VARARGS, "An array as a named traced graph input."},
    {"_graph_from_outputs", graph_from_outputs, METH_O,
     "The traced graph of these outputs, ready to run."},
    {"_graph_inputs", graph_inputs, METH_O, "The graph's input names."},
    {"_graph_run", graph_run, METH_VARARGS, "Runs a graph through the cached executor."},
    {"_graph_stats", graph_stats, METH_O,
     "What the graph's last run did: kernels, fused nodes, memory planning."},
    {"_graph_json", graph_json, METH_O, "The graph as JSON."},
    {"_graph_load", graph_load, METH_O, "A graph from JSON."},
    {"_graph_infer", graph_infer, METH_VARARGS, "Output shapes and dtypes from input ones."},
    {"_graph_infer_partial", graph_infer_partial, METH_VARARGS,
     "Input and output shapes and dtypes from some inputs' (None: unknown)."},
    {"_autograd_set_recording", ag_set_recording, METH_O,
     "Sets recording; returns the previous state."},
    {"_autograd_set_training", ag_set_training, METH_O,
     "Sets training mode; returns the previous state."},
    {"_autograd_is_recording", ag_is_recording, METH_NOARGS, nullptr},
    {"_autograd_has_live_history", ag_has_live_history, METH_O, nullptr},
    {"_stop_releasing_gil", stop_releasing_gil, METH_NOARGS,
     "Called at exit: kernels keep the GIL and daemon threads do not take it back."},
    {"_mark_variable", ag_mark_variable, METH_VARARGS,
     "attach_grad with a given gradient buffer (autograd.mark_variables)."},
    {"_memory_extent", memory_extent, METH_O,
     "(storage id, first byte, end byte) of the storage an array reaches."},
    {"_autograd_is_training", ag_is_training, METH_NOARGS, nullptr},
    {"_autograd_backward", ag_backward, METH_VARARGS, nullptr},
    {"_autograd_set_grad_hook", ag_set_grad_hook, METH_VARARGS, nullptr},
    {"_autograd_fresh_grads", ag_fresh_grads, METH_VARARGS, nullptr},
    {"_autograd_grad", ag_grad, METH_VARARGS, nullptr},
    {"_invoke", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(invoke_py)),
     METH_FASTCALL,
     "_invoke(op, inputs, params=None, out=None, device=None): run a registered op."},
    {"_get_api", get_api, METH_O, "A registered FFI function as a PackedFunc (None if absent)."},
    {"_list_api", list_api, METH_NOARGS, "Names of the registered FFI functions."},
    {"_op_handle", op_handle, METH_O, "A handle for a registered op, for fast repeated invokes."},
    {"_list_ops", list_ops, METH_NOARGS, "Every registered op with its arguments and params."},
    {"_gradient", gradient_py, METH_VARARGS, "Input gradients of one op from its FGradient."},
    {"_from_buffer", from_buffer, METH_O, "An ndarray copied from a buffer (a NumPy array)."},
    {"_set_default_float", set_default_float, METH_O, "Sets the default float dtype."},
    {"_default_float", get_default_float, METH_NOARGS, "The default float dtype."},
    {"random_seed", seed, METH_O, "Seeds ndx's random generator."},
    {"_random_position", random_position_py, METH_NOARGS,
     "(seed, draws since): where ndx's random generator stands."},
    {"_set_random_position", set_random_position_py, METH_VARARGS,
     "_set_random_position(seed, draws): seeds the generator, then skips draws."},
    {"_get_print_options", get_print_options_py, METH_NOARGS, "NumPy's print options, a tuple."},
    {"_set_print_options", set_print_options_py, METH_O, "Sets the print options (a tuple)."},
    {"_array_text", array_text_py, METH_VARARGS, "array2string / array_str / array_repr."},
    {"result_type", result_type_py, METH_VARARGS, "NumPy 2 promotion of arrays and dtypes."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "ndx._core", "ndx's C++ core.", -1,
                          module_methods};

}  // namespace
}  // namespace ndx::py

PyMODINIT_FUNC PyInit__core() {
  PyObject* m = PyModule_Create(&ndx::py::module_def);
  if (!m) return nullptr;
  ndx::py::init_errors(m);
  if (PyModule_AddStringConstant(m, "__version__", ndx::version_string()) < 0 ||
      !ndx::py::init_creation(m) || !ndx::py::init_interop(m)) {
    Py_DECREF(m);
    return nullptr;
  }
  ndx::set_blocking_hooks({ndx::py::release_gil, ndx::py::reacquire_gil});
  ndx::py::register_custom_op();
  ndx::py::init_dtypes();
  if (PyErr_Occurred() || !ndx::py::init_ndarray_type(m) || !ndx::py::init_packed_func_type(m) ||
      !ndx::py::init_op_function_type(m)) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
