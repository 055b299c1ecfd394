// ndx._core.OpFunction: a registered op as a Python function (np.add, np.sum, ...). Calls
// use vectorcall: inputs and params are matched by position and keyword in C++, params go
// straight into the op's Param struct as typed values, and calls without params reuse
// attributes parsed once.
#include "convert.h"  // Python.h first

#include <structmember.h>

#include <cstring>

#include "ndx/imperative.h"
#include "ndx/op_util.h"

namespace ndx::py {
std::vector<NDArray> operands_for(const Op* op, PyObject* const* objs, Py_ssize_t n);

namespace {

struct PyOpFunction {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* dict;
  const Op* op;
  std::vector<std::string> input_names;
  std::vector<std::string> param_names;  // in positional order
  bool out_is_argument;
  bool has_default_attrs;
  NodeAttrs default_attrs;
  std::string name;
};

PyTypeObject* op_function_type = nullptr;
constexpr Py_ssize_t kMaxInputs = 16;

bool name_is(PyObject* s, const std::string& name) {
  Py_ssize_t n;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (!p) PyErr_Clear();  // no UTF-8 form: matches no name (reported by the caller)
  return p && static_cast<size_t>(n) == name.size() &&
         std::memcmp(p, name.data(), name.size()) == 0;
}

PyObject* call(PyObject* self_obj, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* self = reinterpret_cast<PyOpFunction*>(self_obj);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t n_in = static_cast<Py_ssize_t>(self->input_names.size());
  NDX_PY_BEGIN
  PyObject* inputs[kMaxInputs] = {};
  std::vector<std::pair<std::string_view, Value>> kwargs;
  PyObject* out = Py_None;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    if (i < n_in) {
      inputs[i] = args[i];
    } else if (i - n_in < static_cast<Py_ssize_t>(self->param_names.size())) {
      const std::string& p = self->param_names[static_cast<size_t>(i - n_in)];
      kwargs.emplace_back(p, value_from_py(args[i], self->name, p));
    } else {
      type_error(self->name, "() takes at most ", n_in + self->param_names.size(),
                 " positional arguments but ", nargs, " were given");
    }
  }
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    PyObject* value = args[nargs + k];
    if (!self->out_is_argument && name_is(key, "out")) {
      out = value;
      continue;
    }
    bool matched = false;
    for (Py_ssize_t i = 0; i < n_in && !matched; ++i)
      if (name_is(key, self->input_names[static_cast<size_t>(i)])) {
        if (inputs[i])
          type_error(self->name, "() got multiple values for argument '", self->input_names[i],
                     "'");
        inputs[i] = value;
        matched = true;
      }
    if (matched) continue;
    Py_ssize_t len;
    const char* k_str = PyUnicode_AsUTF8AndSize(key, &len);
    if (!k_str) throw PythonErrorSet{};  // UnicodeEncodeError: a name with no UTF-8 form
    std::string_view kname(k_str, static_cast<size_t>(len));
    for (const auto& [existing, v] : kwargs)
      if (existing == kname)
        type_error(self->name, "() got multiple values for argument '", kname, "'");
    kwargs.emplace_back(kname, value_from_py(value, self->name, kname));
  }
  for (Py_ssize_t i = 0; i < n_in; ++i)
    if (!inputs[i])
      type_error(self->name, "() missing required argument '", self->input_names[i], "'");

  std::vector<NDArray> in = operands_for(self->op, inputs, n_in);
  InvokeOptions options;
  std::vector<NDArray> out_arrays;
  if (out != Py_None) {
    if (!is_ndarray(out))
      type_error("[", self->name, "] out must be an ndarray, got ", Py_TYPE(out)->tp_name);
    out_arrays.push_back(unwrap(out));
    options.outputs = &out_arrays;
  }
  std::vector<NDArray> result;
  if (kwargs.empty() && self->has_default_attrs) {
    result = invoke(self->default_attrs, in, options);
  } else {
    result = invoke(self->op->make_attrs(kwargs), in, options);
  }
  if (out != Py_None) {
    Py_INCREF(out);
    return out;
  }
  if (result.size() == 1) return wrap(std::move(result[0]));
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(result.size()));
  for (size_t i = 0; i < result.size(); ++i) PyTuple_SET_ITEM(t, i, wrap(std::move(result[i])));
  return t;
  NDX_PY_END(nullptr)
}

std::vector<std::string> strings_of(PyObject* seq) {
  std::vector<std::string> out;
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of str");
  if (!fast) throw PythonErrorSet{};
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    const char* s = PyUnicode_AsUTF8(PySequence_Fast_ITEMS(fast)[i]);
    if (!s) {
      Py_DECREF(fast);
      throw PythonErrorSet{};
    }
    out.emplace_back(s);
  }
  Py_DECREF(fast);
  return out;
}

// OpFunction(op_name, public_name, input_names, positional_param_names, out_is_argument)
PyObject* tp_new(PyTypeObject* type, PyObject* args, PyObject*) {
  const char *op_name, *public_name;
  PyObject *inputs, *params;
  int out_is_argument = 0;
  if (!PyArg_ParseTuple(args, "ssOO|p:OpFunction", &op_name, &public_name, &inputs, &params,
                        &out_is_argument))
    return nullptr;
  NDX_PY_BEGIN
  const Op* op = Op::get(op_name);
  auto* self = reinterpret_cast<PyOpFunction*>(type->tp_alloc(type, 0));
  if (!self) return nullptr;
  new (&self->input_names) std::vector<std::string>(strings_of(inputs));
  new (&self->param_names) std::vector<std::string>(strings_of(params));
  new (&self->default_attrs) NodeAttrs();
  new (&self->name) std::string(public_name);
  self->vectorcall = call;
  self->dict = nullptr;
  self->op = op;
  self->out_is_argument = out_is_argument;
  self->has_default_attrs = false;
  if (self->input_names.size() > static_cast<size_t>(kMaxInputs))
    value_error("[OpFunction] too many inputs");
  try {  // ops whose params all have defaults can reuse one parsed set
    self->default_attrs = op->make_attrs();
    self->has_default_attrs = true;
  } catch (const Error&) {
  }
  return reinterpret_cast<PyObject*>(self);
  NDX_PY_END(nullptr)
}

void dealloc(PyObject* o) {
  auto* self = reinterpret_cast<PyOpFunction*>(o);
  PyObject_GC_UnTrack(o);
  Py_CLEAR(self->dict);
  using Strings = std::vector<std::string>;
  self->input_names.~Strings();
  self->param_names.~Strings();
  self->default_attrs.~NodeAttrs();
  using String = std::string;
  self->name.~String();
  PyTypeObject* tp = Py_TYPE(o);
  tp->tp_free(o);
  Py_DECREF(tp);
}

int traverse(PyObject* o, visitproc visit, void* arg) {
  Py_VISIT(reinterpret_cast<PyOpFunction*>(o)->dict);
  Py_VISIT(Py_TYPE(o));
  return 0;
}

PyObject* repr(PyObject* o) {
  auto* self = reinterpret_cast<PyOpFunction*>(o);
  return PyUnicode_FromFormat("<ndx function %s (%s)>", self->name.c_str(), self->op->name.c_str());
}

PyObject* descr_get(PyObject* self, PyObject* obj, PyObject*) {
  // Used as a class attribute (ndarray.sum = np.sum), bind like a Python function.
  if (!obj || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

PyMemberDef members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(PyOpFunction, vectorcall), READONLY, nullptr},
    {"__dictoffset__", T_PYSSIZET, offsetof(PyOpFunction, dict), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

}  // namespace

bool init_op_function_type(PyObject* module) {
  auto fn = [](auto f) { return reinterpret_cast<void*>(f); };
  PyType_Slot slots[] = {{Py_tp_new, fn(tp_new)},        {Py_tp_dealloc, fn(dealloc)},
                         {Py_tp_traverse, fn(traverse)}, {Py_tp_call, fn(PyVectorcall_Call)},
                         {Py_tp_repr, fn(repr)},         {Py_tp_descr_get, fn(descr_get)},
                         {Py_tp_members, members},       {0, nullptr}};
  PyType_Spec spec = {"ndx._core.OpFunction", sizeof(PyOpFunction), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC, slots};
  op_function_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (!op_function_type) return false;
  Py_INCREF(op_function_type);
  return PyModule_AddObject(module, "OpFunction", reinterpret_cast<PyObject*>(op_function_type)) ==
         0;
}

}  // namespace ndx::py
