// ndx._core.PackedFunc: a registered FFI function as a Python callable. Calls use vectorcall and
// convert arguments straight into typed values on the stack: no kwargs dict, no strings.
#include "convert.h"  // Python.h first

#include <structmember.h>

#include "ndx/ffi.h"

namespace ndx::py {
namespace {

struct PyPackedFunc {
  PyObject_HEAD vectorcallfunc vectorcall;
  const ffi::FuncEntry* entry;
};

PyTypeObject* packed_func_type = nullptr;
constexpr int kMaxArgs = 16;

void to_arg(PyObject* o, ffi::Arg* a, std::string_view func, int index) {
  if (is_ndarray(o)) {
    a->kind = ffi::Arg::Kind::kArray;
    a->array = unwrap(o);
    return;
  }
  if ((PyList_Check(o) || PyTuple_Check(o)) && PySequence_Fast_GET_SIZE(o) > 0 &&
      is_ndarray(PySequence_Fast_ITEMS(o)[0])) {
    a->kind = ffi::Arg::Kind::kArrayList;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = PySequence_Fast_ITEMS(o)[i];
      if (!is_ndarray(item))
        type_error("[", func, "] argument ", index, " mixes ndarrays and other values");
      a->arrays.push_back(unwrap(item));
    }
    return;
  }
  a->value = value_from_py(o, func, "arg" + std::to_string(index));
}

PyObject* ret_to_py(ffi::Ret& r) {
  switch (r.kind) {
    case ffi::Ret::Kind::kNone:
      Py_RETURN_NONE;
    case ffi::Ret::Kind::kArray:
      return wrap(std::move(r.array));
    case ffi::Ret::Kind::kArrayList: {
      PyObject* list = PyList_New(static_cast<Py_ssize_t>(r.arrays.size()));
      for (size_t i = 0; i < r.arrays.size(); ++i) PyList_SET_ITEM(list, i, wrap(r.arrays[i]));
      return list;
    }
    case ffi::Ret::Kind::kValue: {
      const Value& v = r.value;
      switch (v.kind) {
        case Value::Kind::kNone:
          Py_RETURN_NONE;
        case Value::Kind::kBool:
          return PyBool_FromLong(v.b);
        case Value::Kind::kInt:
          return PyLong_FromLongLong(v.i);
        case Value::Kind::kFloat:
          return PyFloat_FromDouble(v.f);
        case Value::Kind::kStr:
          return PyUnicode_FromStringAndSize(v.str.data(), static_cast<Py_ssize_t>(v.str.size()));
        case Value::Kind::kDType:
          return dtype_to_py(v.dtype);
        case Value::Kind::kDevice:
          return PyUnicode_FromString(v.device.str().c_str());
        case Value::Kind::kTuple: {
          PyObject* t = PyTuple_New(v.tuple.ndim());
          for (int i = 0; i < v.tuple.ndim(); ++i)
            PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(v.tuple[i]));
          return t;
        }
      }
    }
  }
  Py_RETURN_NONE;
}

PyObject* call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const ffi::FuncEntry* f = reinterpret_cast<PyPackedFunc*>(self)->entry;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (kwnames && PyTuple_GET_SIZE(kwnames) > 0) {
    PyErr_Format(PyExc_TypeError, "%s takes positional arguments only", f->name.c_str());
    return nullptr;
  }
  if (n > kMaxArgs) {
    PyErr_Format(PyExc_TypeError, "%s: at most %d arguments", f->name.c_str(), kMaxArgs);
    return nullptr;
  }
  NDX_PY_BEGIN
  // Only the n slots in use are constructed (an Arg is not trivial to build).
  alignas(ffi::Arg) unsigned char storage[kMaxArgs * sizeof(ffi::Arg)];
  auto* converted = reinterpret_cast<ffi::Arg*>(storage);
  struct Destroy {
    ffi::Arg* a;
    Py_ssize_t n = 0;
    ~Destroy() {
      for (Py_ssize_t i = 0; i < n; ++i) a[i].~Arg();
    }
  } destroy{converted};
  for (Py_ssize_t i = 0; i < n; ++i) {
    new (&converted[i]) ffi::Arg();
    destroy.n = i + 1;
    to_arg(args[i], &converted[i], f->name, static_cast<int>(i));
  }
  ffi::Ret ret;
  f->body(ffi::Args(converted, static_cast<int>(n), f->name), &ret);
  return ret_to_py(ret);
  NDX_PY_END(nullptr)
}

PyObject* repr(PyObject* self) {
  return PyUnicode_FromFormat("<ndx PackedFunc %s>",
                              reinterpret_cast<PyPackedFunc*>(self)->entry->name.c_str());
}

PyObject* get_doc(PyObject* self, void*) {
  return PyUnicode_FromString(reinterpret_cast<PyPackedFunc*>(self)->entry->doc.c_str());
}

PyMemberDef members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(PyPackedFunc, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};
PyGetSetDef getset[] = {{"__doc__", get_doc, nullptr, nullptr, nullptr},
                        {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

bool init_packed_func_type(PyObject* module) {
  auto fn = [](auto f) { return reinterpret_cast<void*>(f); };
  PyType_Slot slots[] = {{Py_tp_call, fn(PyVectorcall_Call)},
                         {Py_tp_repr, fn(repr)},
                         {Py_tp_members, members},
                         {Py_tp_getset, getset},
                         {0, nullptr}};
  PyType_Spec spec = {"ndx._core.PackedFunc", sizeof(PyPackedFunc), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, slots};
  packed_func_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (!packed_func_type) return false;
  Py_INCREF(packed_func_type);
  return PyModule_AddObject(module, "PackedFunc", reinterpret_cast<PyObject*>(packed_func_type)) ==
         0;
}

// _get_api(name): the registered function as a PackedFunc, or None.
PyObject* get_api(PyObject*, PyObject* name) {
  if (!PyUnicode_Check(name)) {
    PyErr_SetString(PyExc_TypeError, "_get_api expects a str");
    return nullptr;
  }
  const char* text = PyUnicode_AsUTF8(name);
  if (!text) return nullptr;  // a lone surrogate: UnicodeEncodeError is set
  const ffi::FuncEntry* f = ffi::FuncRegistry::global().find(text);
  if (!f) Py_RETURN_NONE;
  auto* obj = PyObject_New(PyPackedFunc, packed_func_type);
  obj->vectorcall = call;
  obj->entry = f;
  return reinterpret_cast<PyObject*>(obj);
}

PyObject* list_api(PyObject*, PyObject*) {
  auto names = ffi::FuncRegistry::global().list_names();
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(names.size()));
  for (size_t i = 0; i < names.size(); ++i)
    PyList_SET_ITEM(list, i, PyUnicode_FromString(names[i].c_str()));
  return list;
}

}  // namespace ndx::py
