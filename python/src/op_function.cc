// ndx._core.OpFunction: a registered op as a Python function (np.add, np.sum, ...). Calls
// use vectorcall: inputs and params are matched by position and keyword in C++, params go
// straight into the op's Param struct as typed values, and calls without params reuse
// attributes parsed once.
#include "convert.h"  // Python.h first

#include <structmember.h>

#include <cstring>

#include "ndx/autograd.h"
#include "ndx/executor.h"
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
  bool is_ufunc;   // takes NumPy's ufunc keywords (where=, dtype=, casting=, order=, subok=)
  bool is_gufunc;  // a generalized ufunc (matmul): those keywords but where=
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

// NumPy's ufunc keywords as given; null where absent.
struct UfuncKeywords {
  PyObject* where = nullptr;
  PyObject* dtype = nullptr;
  PyObject* casting = nullptr;
  bool any() const { return where || dtype || casting; }
};

bool is_python_scalar(PyObject* o) {
  return PyBool_Check(o) || PyLong_Check(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o);
}

// Takes `key` when it is a ufunc keyword: where=, dtype= and casting= are kept for
// invoke_ufunc; order= and subok= are accepted where they change nothing (every result is a
// new C-ordered ndarray); the rest raise NotImplementedError naming the keyword.
bool take_ufunc_keyword(const std::string& op, PyObject* key, PyObject* value, UfuncKeywords* kw,
                        bool gufunc) {
  if (name_is(key, "where")) {
    if (gufunc) type_error(op, "() got an unexpected keyword argument 'where'");  // NumPy's
    kw->where = value == Py_True ? nullptr : value;  // True: NumPy's default, every element
    return true;
  }
  if (name_is(key, "dtype")) {
    kw->dtype = value == Py_None ? nullptr : value;
    return true;
  }
  if (name_is(key, "casting")) {
    kw->casting = value;
    return true;
  }
  if (name_is(key, "order")) {
    const char* order = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : nullptr;
    if (!order) PyErr_Clear();
    if (order && (!std::strcmp(order, "K") || !std::strcmp(order, "C") || !std::strcmp(order, "A")))
      return true;
    if (order && !std::strcmp(order, "F"))
      not_implemented("[", op, "] order='F' is not supported: ndx results are C-ordered");
    value_error("[", op, "] order must be one of 'K', 'A', 'C', 'F'; got ", repr_of(value));
  }
  if (name_is(key, "subok")) return true;  // ndx has no ndarray subclasses to keep
  if (name_is(key, "signature") || name_is(key, "axes") || name_is(key, "axis") ||
      name_is(key, "keepdims") || name_is(key, "extobj"))
    not_implemented("[", op, "] the ufunc keyword '", utf8_of(key), "' is not supported");
  return false;
}

// Inputs for a call with ufunc keywords: with dtype=, Python scalars take that dtype (NumPy
// types them by the loop), and weak[i] marks them.
std::vector<NDArray> ufunc_operands(const Op* op, PyObject* const* objs, Py_ssize_t n,
                                    const std::optional<DType>& dtype, std::vector<bool>* weak) {
  weak->assign(static_cast<size_t>(n), false);
  for (Py_ssize_t i = 0; i < n; ++i) (*weak)[static_cast<size_t>(i)] = is_python_scalar(objs[i]);
  if (!dtype) return operands_for(op, objs, n);
  NDArray like(std::shared_ptr<Storage>(), 0, Shape{}, Shape{}, *dtype);
  std::vector<NDArray> out;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* o = objs[i];
    // (an int out of dtype='s range is NumPy's OverflowError, not wrapped)
    out.push_back(is_ndarray(o) ? unwrap(o)
                                : operand_from_py(o, is_python_scalar(o) ? &like : nullptr, false));
  }
  return out;
}

PyObject* result_to_py(std::vector<NDArray> result) {
  if (result.size() == 1) return wrap(std::move(result[0]));
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(result.size()));
  for (size_t i = 0; i < result.size(); ++i) PyTuple_SET_ITEM(t, i, wrap(std::move(result[i])));
  return t;
}

PyObject* call_ufunc(const PyOpFunction* self, PyObject* const* inputs, Py_ssize_t n_in,
                     std::vector<std::pair<std::string_view, Value>>& kwargs, PyObject* out,
                     const UfuncKeywords& kw) {
  UfuncOptions options;
  if (kw.dtype) options.dtype = dtype_from_py(kw.dtype);
  if (kw.casting) {
    if (!PyUnicode_Check(kw.casting))
      type_error("[", self->name, "] casting must be a str; got ", Py_TYPE(kw.casting)->tp_name);
    options.casting = casting_from_name(utf8_of(kw.casting), self->name);
  }
  NDArray where;
  if (kw.where) {
    where = is_ndarray(kw.where) ? unwrap(kw.where) : operand_from_py(kw.where, nullptr);
    options.where = &where;
  }
  NodeAttrs attrs = kwargs.empty() && self->has_default_attrs ? self->default_attrs
                                                              : self->op->make_attrs(kwargs);
  std::vector<NDArray> in;
  bool typed = false;
  if (options.dtype == DType::kBool) {
    // The comparisons and logical ops: dtype=bool names their output, so Python scalars are
    // typed by the arrays, as without dtype= (equal(ints, 1.5, dtype=bool) compares with 1.5).
    in = ufunc_operands(self->op, inputs, n_in, std::nullopt, &options.weak);
    typed = ufunc_gives_dtype_uncast(attrs, in, DType::kBool);
  }
  if (!typed) {
    if (options.dtype && options.casting != Casting::kUnsafe)
      for (Py_ssize_t i = 0; i < n_in; ++i) {
        // A Python scalar is weak in its value but not in its kind (NEP 50): it goes into a
        // loop of its kind or higher, as NumPy's same_kind check of the scalar's dtype.
        PyObject* o = inputs[i];
        const DType t = *options.dtype;
        const char* kind = PyBool_Check(o)                                      ? nullptr
                           : PyFloat_Check(o) && !is_float(t) && !is_complex(t) ? "float"
                           : PyComplex_Check(o) && !is_complex(t)               ? "complex"
                           : PyLong_Check(o) && t == DType::kBool               ? "int"
                                                                                : nullptr;
        if (kind)
          type_error("[", self->name, "] cannot cast input ", i, " (a Python ", kind, ") to ", t,
                     " with casting rule '", casting_name(options.casting), "'");
      }
    in = ufunc_operands(self->op, inputs, n_in, options.dtype, &options.weak);
  }
  std::vector<NDArray> out_arrays;
  if (out != Py_None) {
    if (PyTuple_Check(out)) {
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(out); ++i) {
        PyObject* o = PyTuple_GET_ITEM(out, i);
        if (!is_ndarray(o))
          type_error("[", self->name, "] out must hold ndarrays, got ", Py_TYPE(o)->tp_name);
        out_arrays.push_back(unwrap(o));
      }
    } else {
      if (!is_ndarray(out))
        type_error("[", self->name, "] out must be an ndarray, got ", Py_TYPE(out)->tp_name);
      out_arrays.push_back(unwrap(out));
    }
  }
  std::vector<NDArray> result =
      invoke_ufunc(attrs, std::move(in), out != Py_None ? &out_arrays : nullptr, options);
  if (out != Py_None) {
    // NumPy returns the array itself for out=(array,) of a one-output ufunc.
    PyObject* r = PyTuple_Check(out) && PyTuple_GET_SIZE(out) == 1 ? PyTuple_GET_ITEM(out, 0) : out;
    Py_INCREF(r);
    return r;
  }
  return result_to_py(std::move(result));
}

// NumPy's dot takes only an out of the result's dtype and shape, C-contiguous (it writes the
// product there directly): anything else is a ValueError, where other functions cast.
void check_exact_out(const std::string& name, const NodeAttrs& attrs,
                     const std::vector<NDArray>& in, const NDArray& out, DType result) {
  ShapeVector in_shapes, out_shapes(1, Shape::unknown());
  for (const NDArray& a : in) in_shapes.push_back(a.shape());
  infer_shapes(attrs, &in_shapes, &out_shapes);
  if (result != out.dtype() || out_shapes[0] != out.shape() || !out.is_contiguous())
    value_error("[", name,
                "] output array is not acceptable (must have the right datatype, number of "
                "dimensions, and be a C-Array): out is ",
                dtype_name(out.dtype()), " ", out.shape().str(),
                out.is_contiguous() ? "" : " (not contiguous)", ", the result ", dtype_name(result),
                " ", out_shapes[0].str());
}

// out= of a reduction, scan or other op: written directly when its dtype is the op's result
// dtype; otherwise (an out of the result's shape) the result is computed and cast into it,
// unsafely as NumPy's reductions do (np.sum(float_array, out=int32_array) truncates).
void write_into(const std::string& name, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                std::vector<NDArray>& out) {
  DTypeVector in_types, out_types(1, DType::kUnknown);
  for (const NDArray& a : in) in_types.push_back(a.dtype());
  if (attrs.op->outputs_for(attrs) == 1) {
    infer_types(attrs, &in_types, &out_types);
    static const auto& exact_out = Op::attr<bool>("TExactOut");
    if (exact_out.get(attrs.op, false)) check_exact_out(name, attrs, in, out[0], out_types[0]);
    const DType result = out_types[0], target = out[0].dtype();
    if (result != DType::kUnknown && result != target) {
      // The cast into out= is a write autograd cannot see: refused while it records an input
      // with history, as invoke refuses out= of the result's dtype (not silently ungraded).
      if (autograd::is_recording() || is_tracing()) {
        for (const NDArray& a : in)
          if (autograd::has_live_history(a))
            not_implemented("[", name, "] writing into existing arrays (out=) is not supported ",
                            "while autograd records an array that requires grad");
        if (autograd::requires_grad(out[0]))
          not_implemented("[", name, "] writing into an array autograd records (out=) is not ",
                          "supported: its values may be saved for backward");
      }
      NDArray r = invoke(attrs, in)[0];
      if (r.shape() != out[0].shape())
        value_error("[", name, "] out has shape ", out[0].shape().str(), ", expected ",
                    r.shape().str());
      out[0].assign(r);
      return;
    }
  }
  InvokeOptions options;
  options.outputs = &out;
  invoke(attrs, in, options);
}

// How many outputs may follow the inputs and parameters positionally: none where out is an
// argument of its own, one per output of a ufunc (divmod, modf, frexp have two), else one.
Py_ssize_t positional_outputs(const PyOpFunction& f) {
  if (f.out_is_argument) return 0;
  if (!f.is_ufunc) return 1;
  const uint32_t n =
      f.has_default_attrs ? f.op->visible_outputs_for(f.default_attrs) : f.op->num_outputs;
  return n >= 2 ? 2 : 1;
}

PyObject* call(PyObject* self_obj, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* self = reinterpret_cast<PyOpFunction*>(self_obj);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t n_in = static_cast<Py_ssize_t>(self->input_names.size());
  NDX_PY_BEGIN
  PyObject* inputs[kMaxInputs] = {};
  std::vector<std::pair<std::string_view, Value>> kwargs;
  PyObject* out = Py_None;
  UfuncKeywords ufunc_keywords;
  const Py_ssize_t n_params = static_cast<Py_ssize_t>(self->param_names.size());
  // NumPy takes the outputs positionally after the inputs and parameters (np.add(a, b, o),
  // np.round(a, 1, o), np.divmod(a, b, q, r)): one array, or one per output of a ufunc.
  PyObject* out_positional[2] = {};
  Py_ssize_t n_out_given = 0;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    if (i < n_in) {
      inputs[i] = args[i];
    } else if (i - n_in < n_params) {
      const std::string& p = self->param_names[static_cast<size_t>(i - n_in)];
      if (!self->out_is_argument && p == "out") {  // NumPy's reductions take out positionally
        out = args[i];
        continue;
      }
      kwargs.emplace_back(p, value_from_py(args[i], self->name, p));
    } else if (n_out_given < positional_outputs(*self) && out == Py_None) {
      out_positional[n_out_given++] = args[i];
    } else {
      type_error(self->name, "() takes at most ", n_in + n_params + positional_outputs(*self),
                 " positional arguments but ", nargs, " were given");
    }
  }
  PyObject* out_tuple = nullptr;  // (owned: released when the call returns)
  struct ReleaseOut {
    PyObject*& p;
    ~ReleaseOut() { Py_XDECREF(p); }
  } release_out{out_tuple};
  if (n_out_given == 1) {
    out = out_positional[0];
  } else if (n_out_given == 2) {
    out_tuple = PyTuple_Pack(2, out_positional[0], out_positional[1]);
    if (!out_tuple) throw PythonErrorSet{};
    out = out_tuple;
  }
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    PyObject* value = args[nargs + k];
    if (!self->out_is_argument && name_is(key, "out")) {
      if (out != Py_None || n_out_given)
        type_error(self->name, "() got multiple values for argument 'out'");
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
    if (self->is_ufunc &&
        take_ufunc_keyword(self->name, key, value, &ufunc_keywords, self->is_gufunc))
      continue;
    if (!self->is_ufunc && self->dict && name_is(key, "where")) {
      // Reductions take where= in Python (ndx.numpy._composites.reduce_with_where).
      if (PyObject* with_where = PyDict_GetItemString(self->dict, "_with_where"))
        return PyObject_Vectorcall(with_where, args, nargsf, kwnames);
    }
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

  // out= of a ufunc may have another dtype (cast under casting='same_kind') or be a tuple.
  if (ufunc_keywords.any() || (self->is_ufunc && out != Py_None))
    return call_ufunc(self, inputs, n_in, kwargs, out, ufunc_keywords);
  std::vector<NDArray> in = operands_for(self->op, inputs, n_in);
  NodeAttrs parsed;
  const bool defaults = kwargs.empty() && self->has_default_attrs;
  if (!defaults) parsed = self->op->make_attrs(kwargs);
  const NodeAttrs& attrs = defaults ? self->default_attrs : parsed;
  if (out == Py_None) return result_to_py(invoke(attrs, in));
  if (!is_ndarray(out))
    type_error("[", self->name, "] out must be an ndarray, got ", Py_TYPE(out)->tp_name);
  std::vector<NDArray> out_arrays{unwrap(out)};
  write_into(self->name, attrs, in, out_arrays);
  Py_INCREF(out);
  return out;
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
  static const auto& is_ufunc = Op::attr<bool>("TIsUfunc");
  static const auto& is_gufunc = Op::attr<bool>("TIsGufunc");
  self->is_gufunc = is_gufunc.get(op, false);
  self->is_ufunc = self->is_gufunc || is_ufunc.get(op, false);
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
