#include "convert.h"

#include <limits>
#include <unordered_map>

#include "ndx/autograd.h"
#include "ndx/executor.h"
#include "ndx/imperative.h"

namespace ndx::py {

// ---- errors ----
namespace {
constexpr int kNumKinds = 11;
PyObject* g_errors[kNumKinds] = {};  // indexed by ErrorKind; [0] is the base NDXError

PyObject* make_error(PyObject* module, const char* name, std::vector<PyObject*> bases) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(bases.size()));
  for (size_t i = 0; i < bases.size(); ++i) {
    Py_INCREF(bases[i]);
    PyTuple_SET_ITEM(tuple, i, bases[i]);
  }
  std::string qualified = std::string("ndx.") + name;
  PyObject* cls = PyErr_NewException(qualified.c_str(), tuple, nullptr);
  Py_DECREF(tuple);
  Py_INCREF(cls);
  PyModule_AddObject(module, name, cls);
  return cls;
}
}  // namespace

void init_errors(PyObject* m) {
  PyObject* base = make_error(m, "NDXError", {PyExc_Exception});
  g_errors[0] = base;
  g_errors[int(ErrorKind::kValueError)] = make_error(m, "NDXValueError", {base, PyExc_ValueError});
  g_errors[int(ErrorKind::kTypeError)] = make_error(m, "NDXTypeError", {base, PyExc_TypeError});
  g_errors[int(ErrorKind::kIndexError)] = make_error(m, "NDXIndexError", {base, PyExc_IndexError});
  g_errors[int(ErrorKind::kNotImplementedError)] =
      make_error(m, "NDXNotImplementedError", {base, PyExc_NotImplementedError});
  g_errors[int(ErrorKind::kRuntimeError)] =
      make_error(m, "NDXRuntimeError", {base, PyExc_RuntimeError});
  // NumPy's AxisError as a base, so `except numpy.exceptions.AxisError` catches ndx's too.
  PyObject* numpy_exceptions = PyImport_ImportModule("numpy.exceptions");
  PyObject* numpy_axis_error =
      numpy_exceptions ? PyObject_GetAttrString(numpy_exceptions, "AxisError") : nullptr;
  Py_XDECREF(numpy_exceptions);
  if (numpy_axis_error && PyType_Check(numpy_axis_error)) {
    g_errors[int(ErrorKind::kAxisError)] = make_error(m, "AxisError", {base, numpy_axis_error});
  } else {
    PyErr_Clear();
    g_errors[int(ErrorKind::kAxisError)] =
        make_error(m, "AxisError", {base, PyExc_ValueError, PyExc_IndexError});
  }
  Py_XDECREF(numpy_axis_error);
  g_errors[int(ErrorKind::kOverflowError)] =
      make_error(m, "NDXOverflowError", {base, PyExc_OverflowError});
  g_errors[int(ErrorKind::kZeroDivisionError)] =
      make_error(m, "NDXZeroDivisionError", {base, PyExc_ZeroDivisionError});
  g_errors[int(ErrorKind::kMemoryError)] =
      make_error(m, "NDXMemoryError", {base, PyExc_MemoryError});
  // numpy.linalg.LinAlgError (a ValueError) as a base, as for AxisError.
  PyObject* numpy_linalg = PyImport_ImportModule("numpy.linalg");
  PyObject* numpy_linalg_error =
      numpy_linalg ? PyObject_GetAttrString(numpy_linalg, "LinAlgError") : nullptr;
  Py_XDECREF(numpy_linalg);
  if (numpy_linalg_error && PyType_Check(numpy_linalg_error)) {
    g_errors[int(ErrorKind::kLinAlgError)] =
        make_error(m, "LinAlgError", {base, numpy_linalg_error});
  } else {
    PyErr_Clear();
    g_errors[int(ErrorKind::kLinAlgError)] = make_error(m, "LinAlgError", {base, PyExc_ValueError});
  }
  Py_XDECREF(numpy_linalg_error);
}

PyObject* set_error(const Error& e) {
  int k = static_cast<int>(e.kind());
  PyErr_SetString(k >= 1 && k < kNumKinds ? g_errors[k] : g_errors[0], e.what());
  return nullptr;
}

// ---- dtypes ----
namespace {
PyObject* g_dtype_objects[kNumDTypes] = {};
PyObject* g_numpy_dtype = nullptr;  // numpy.dtype
PyObject* g_dtype_cache = nullptr;  // {object: DType code}
}  // namespace

void init_dtypes() {
  PyObject* numpy = PyImport_ImportModule("numpy");
  if (!numpy) return;
  g_numpy_dtype = PyObject_GetAttrString(numpy, "dtype");
  Py_DECREF(numpy);
  g_dtype_cache = PyDict_New();
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    std::string name(dtype_name(t));
    PyObject* obj =
        t == DType::kBFloat16 ? nullptr : PyObject_CallFunction(g_numpy_dtype, "s", name.c_str());
    if (!obj) {
      PyErr_Clear();
      obj = PyUnicode_FromString(name.c_str());
    }
    g_dtype_objects[i] = obj;
  }
}

PyObject* dtype_to_py(DType t) {
  PyObject* o = g_dtype_objects[static_cast<int>(t)];
  Py_INCREF(o);
  return o;
}

DType dtype_from_py(PyObject* o) {
  if (PyUnicode_Check(o)) {
    Py_ssize_t n;
    const char* s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) type_error("[dtype] data type ", repr_of(o), " not understood");  // no UTF-8 form
    std::string_view name(s, static_cast<size_t>(n));
    for (int i = 0; i < kNumDTypes; ++i)
      if (dtype_name(static_cast<DType>(i)) == name) return static_cast<DType>(i);
  }
  PyObject* hit = PyDict_GetItem(g_dtype_cache, o);  // borrowed; no error for unhashables
  if (hit) return static_cast<DType>(PyLong_AsLong(hit));
  PyErr_Clear();
  PyObject* dt = PyObject_CallOneArg(g_numpy_dtype, o);
  if (!dt) {
    PyErr_Clear();
    type_error("[dtype] data type ", repr_of(o), " not understood");
  }
  PyObject* name = PyObject_GetAttrString(dt, "name");
  Py_DECREF(dt);
  const char* text = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  std::string n = text ? text : "";
  Py_XDECREF(name);
  if (!text) PyErr_Clear();
  DType t = dtype_from_name(n);  // raises for numpy dtypes ndx lacks (complex, str, ...)
  PyObject* code = PyLong_FromLong(static_cast<long>(t));
  if (PyDict_SetItem(g_dtype_cache, o, code) < 0) PyErr_Clear();
  Py_DECREF(code);
  return t;
}

const char* utf8_of(PyObject* str) {
  const char* s = PyUnicode_AsUTF8(str);
  if (!s) throw PythonErrorSet{};
  return s;
}

std::string repr_of(PyObject* o) {
  PyObject* r = PyObject_Repr(o);
  const char* s = r ? PyUnicode_AsUTF8(r) : nullptr;
  std::string out = s ? s : "<unprintable>";
  Py_XDECREF(r);
  if (!s) PyErr_Clear();
  return out;
}

bool index_value(PyObject* o, int64_t* out, int* overflow) {
  *overflow = 0;
  PyObject* idx = PyNumber_Index(o);
  if (!idx) {
    PyErr_Clear();
    return false;
  }
  const long long v = PyLong_AsLongLongAndOverflow(idx, overflow);
  Py_DECREF(idx);
  if (*overflow) {
    *out =
        *overflow > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  } else if (v == -1 && PyErr_Occurred()) {  // an __index__ returning a subclass that failed
    PyErr_Clear();
    return false;
  } else {
    *out = v;
  }
  return true;
}

// ---- typed values ----
namespace {
bool looks_like_dtype(PyObject* o) {
  if (PyType_Check(o)) return true;
  const char* tn = Py_TYPE(o)->tp_name;
  return std::string_view(tn).find("dtype") != std::string_view::npos;
}

int64_t to_int64(PyObject* o, std::string_view op, std::string_view field) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    value_error("[", op, "] parameter '", field, "' is out of the int64 range");
  }
  return v;
}
}  // namespace

Value value_from_py(PyObject* o, std::string_view op, std::string_view field) {
  if (o == Py_None) return Value();
  if (PyBool_Check(o)) return Value(o == Py_True);
  if (PyLong_Check(o)) return Value(to_int64(o, op, field));
  if (PyFloat_Check(o)) return Value(PyFloat_AS_DOUBLE(o));
  if (PyUnicode_Check(o)) {
    Py_ssize_t n;
    const char* s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) {  // a lone surrogate: the str has no UTF-8 form
      PyErr_Clear();
      value_error("[", op, "] parameter '", field, "' must be text with a UTF-8 form, got ",
                  repr_of(o));
    }
    return Value(std::string_view(s, static_cast<size_t>(n)));
  }
  if (PyTuple_Check(o) || PyList_Check(o)) {
    Shape s;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = items[i];
      if (PyBool_Check(item) || !PyIndex_Check(item))
        type_error("[", op, "] parameter '", field,
                   "' expected a tuple of ints, got an element of type ", Py_TYPE(item)->tp_name);
      PyObject* idx = PyNumber_Index(item);
      s.push_back(to_int64(idx, op, field));
      Py_DECREF(idx);
    }
    return Value(std::move(s));
  }
  if (looks_like_dtype(o)) return Value(dtype_from_py(o));
  if (PyIndex_Check(o)) {  // NumPy integer scalars
    PyObject* idx = PyNumber_Index(o);
    if (!idx) {  // __index__ refused (an array of several values, of floats)
      PyErr_Clear();
      type_error("[", op, "] parameter '", field, "' cannot take a value of type ",
                 Py_TYPE(o)->tp_name);
    }
    int64_t v = to_int64(idx, op, field);
    Py_DECREF(idx);
    return Value(v);
  }
  if (PyNumber_Check(o)) {  // NumPy float scalars
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
    } else {
      return Value(v);
    }
  }
  type_error("[", op, "] parameter '", field, "' cannot take a value of type ",
             Py_TYPE(o)->tp_name);
}

// ---- operands ----
namespace {
DType format_dtype(const char* fmt, Py_ssize_t itemsize) {
  if (!fmt) return DType::kUInt8;
  char c = fmt[0];
  if (c == '@' || c == '=' || c == '<' || c == '|')
    c = fmt[1];
  else if (c == '>' || c == '!')
    type_error("[array] big-endian data is not supported");
  switch (c) {
    case '?':
      return DType::kBool;
    case 'b':
      return DType::kInt8;
    case 'B':
      return DType::kUInt8;
    case 'e':
      return DType::kFloat16;
    case 'f':
      return DType::kFloat32;
    case 'd':
      return DType::kFloat64;
    case 'Z':  // complex: "Zf", "Zd"
      if (fmt[0] != 'Z' && fmt[1] == 'Z') ++fmt;
      if (fmt[1] == 'f') return DType::kComplex64;
      if (fmt[1] == 'd') return DType::kComplex128;
      type_error("[array] buffer format '", fmt, "' is not supported");
    case 'h':
    case 'i':
    case 'l':
    case 'q':
      return itemsize == 2 ? DType::kInt16 : itemsize == 4 ? DType::kInt32 : DType::kInt64;
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
      return itemsize == 2 ? DType::kUInt16 : itemsize == 4 ? DType::kUInt32 : DType::kUInt64;
  }
  type_error("[array] unsupported element format '", fmt, "'");
}

bool scalar_fits(long long v, DType t) {
  if (!is_integer(t)) return true;
  bool fits = true;
  switch (t) {
    case DType::kInt8:
      fits = v >= INT8_MIN && v <= INT8_MAX;
      break;
    case DType::kInt16:
      fits = v >= INT16_MIN && v <= INT16_MAX;
      break;
    case DType::kInt32:
      fits = v >= INT32_MIN && v <= INT32_MAX;
      break;
    case DType::kUInt8:
      fits = v >= 0 && v <= UINT8_MAX;
      break;
    case DType::kUInt16:
      fits = v >= 0 && v <= UINT16_MAX;
      break;
    case DType::kUInt32:
      fits = v >= 0 && v <= UINT32_MAX;
      break;
    case DType::kUInt64:
      fits = v >= 0;
      break;
    default:
      break;
  }
  return fits;
}
}  // namespace

NDArray array_from_buffer(PyObject* o) {
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) < 0) {
    PyErr_Clear();
    type_error("[array] object of type ", Py_TYPE(o)->tp_name, " does not expose an array buffer");
  }
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  DType t = format_dtype(view.format, view.itemsize);
  if (view.itemsize != dtype_size(t)) type_error("[array] element size mismatch in buffer");
  Shape shape, strides;
  for (int i = 0; i < view.ndim; ++i) {
    shape.push_back(view.shape[i]);
    Py_ssize_t st = view.strides ? view.strides[i] : 0;
    if (st % view.itemsize != 0) not_implemented("[array] buffers with unaligned strides");
    strides.push_back(st / view.itemsize);
  }
  if (!view.strides) strides = contiguous_strides(shape);
  auto storage = Storage::wrap(view.buf, 0, cpu(), [] {});
  return NDArray(storage, 0, shape, strides, t).copy();
}

NDArray array_view_of_buffer(PyObject* o) {
  auto* view = new Py_buffer;
  if (PyObject_GetBuffer(o, view, PyBUF_RECORDS) < 0) {  // read-only buffers are copied instead
    PyErr_Clear();
    delete view;
    return NDArray();
  }
  auto release = [view] {
    if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing left to release to
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(view);
    PyGILState_Release(g);
    delete view;
  };
  DType t = DType::kUnknown;
  try {
    t = format_dtype(view->format, view->itemsize);
  } catch (const Error&) {
  }
  Shape shape, strides;
  bool ok = t != DType::kUnknown && view->itemsize == dtype_size(t) && view->ndim <= 32;
  for (int i = 0; ok && i < view->ndim; ++i) {
    shape.push_back(view->shape[i]);
    const Py_ssize_t st = view->strides ? view->strides[i] : 0;
    ok = st % view->itemsize == 0;
    strides.push_back(st / view->itemsize);
  }
  if (!ok) {
    release();
    return NDArray();
  }
  if (!view->strides) strides = contiguous_strides(shape);
  return NDArray(Storage::wrap(view->buf, 0, cpu(), release), 0, shape, strides, t);
}

namespace {
NDArray host_operand_from_py(PyObject* o, const NDArray* like, bool widen_ints);
}  // namespace

// Python scalars, NumPy arrays and lists beside an array on another device than cpu(0) (a GPU,
// or cpu(1) inside `with mx.cpu(1):`) go to its device.
NDArray operand_from_py(PyObject* o, const NDArray* like, bool widen_ints) {
  if (is_ndarray(o)) return unwrap(o);
  NDArray a = host_operand_from_py(o, like, widen_ints);
  if (like && like->defined() && like->device() != cpu()) return a.to(like->device());
  return a;
}

namespace {
NDArray host_operand_from_py(PyObject* o, const NDArray* like, bool widen_ints) {
  if (PyBool_Check(o)) {
    DType t = like ? promote_with_scalar(like->dtype(), ScalarKind::kBool) : DType::kBool;
    return NDArray::scalar(o == Py_True, t);
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow && like && is_float(like->dtype())) {  // NumPy: the int becomes a float
      const double d = PyLong_AsDouble(o);  // OverflowError past the double range, as NumPy
      if (d == -1.0 && PyErr_Occurred()) throw PythonErrorSet{};
      return NDArray::scalar(d, like->dtype());
    }
    if (overflow > 0 && like && (like->dtype() == DType::kUInt64 || widen_ints)) {
      // Past int64 but within uint64: a uint64 operand (NumPy: uint64 + 2**63 is exact, and
      // an int8 array compares with 2**63).
      const unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
        NDArray a(Shape{}, DType::kUInt64);
        *a.data<uint64_t>() = u;
        return a;
      }
      PyErr_Clear();
    }
    if (overflow) overflow_error("Python integer ", repr_of(o), " out of bounds for int64");
    DType t = like ? promote_with_scalar(like->dtype(), ScalarKind::kInt) : DType::kInt64;
    if (!scalar_fits(v, t)) {
      if (!widen_ints) overflow_error("Python integer ", v, " out of bounds for ", t);
      t = DType::kInt64;
    }
    NDArray a(Shape{}, t);
    NDArray src(Shape{}, DType::kInt64);
    *src.data<int64_t>() = v;  // exact for int64 values that a double would round
    a.assign(src);
    return a;
  }
  // Exactly float: NumPy's float64 scalars (a float subclass) are typed, not weak (NEP 50).
  if (PyFloat_CheckExact(o)) {
    DType t = like ? promote_with_scalar(like->dtype(), ScalarKind::kFloat) : default_float_dtype();
    return NDArray::scalar(PyFloat_AS_DOUBLE(o), t);
  }
  if (PyComplex_CheckExact(o)) {  // weak as floats are: complex64 beside float32 arrays
    DType t = like ? promote_with_scalar(like->dtype(), ScalarKind::kComplex)
                   : complex_dtype(default_float_dtype());
    NDArray src(Shape{}, DType::kComplex128);
    *src.data<complex128>() = {PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)};
    return t == DType::kComplex128 ? src : src.astype(t);
  }
  // NumPy arrays and scalars, lists: through NumPy, keeping their (strong) dtype.
  PyObject* numpy = PyImport_ImportModule("numpy");
  if (!numpy) throw PythonErrorSet{};  // the ImportError says why
  PyObject* arr = PyObject_CallMethod(numpy, "asarray", "(O)", o);
  Py_DECREF(numpy);
  if (!arr) {
    // NumPy's own complaint (a ragged list is a ValueError) is the useful one; keep it, except
    // for objects NumPy cannot read at all, where Python should try the other operand.
    if (PyErr_ExceptionMatches(PyExc_ValueError)) throw PythonErrorSet{};
    PyErr_Clear();
    type_error("unsupported operand type ", Py_TYPE(o)->tp_name);
  }
  NDArray out;
  try {
    out = array_from_buffer(arr);
  } catch (...) {
    Py_DECREF(arr);
    throw;
  }
  Py_DECREF(arr);
  // Python lists of floats follow np.array: the default float dtype, not NumPy's float64;
  // beside (or assigned into) a float64 / complex128 array they keep float64, so no value is
  // rounded through float32 on its way there.
  const bool sequence = PyList_Check(o) || PyTuple_Check(o);
  const bool wide_like = like && like->defined() &&
                         (like->dtype() == DType::kFloat64 || like->dtype() == DType::kComplex128);
  if (sequence && !wide_like && default_float_dtype() != DType::kFloat64) {
    if (out.dtype() == DType::kFloat64) out = out.astype(default_float_dtype());
    if (out.dtype() == DType::kComplex128) out = out.astype(complex_dtype(default_float_dtype()));
  }
  return out;
}

}  // namespace

bool recorded(const NDArray& a) {
  return (autograd::is_recording() || is_tracing()) && autograd::requires_grad(a);
}

NDArray cast_for_autograd(const NDArray& a, DType t) {
  if (!recorded(a)) return a.astype(t);
  return invoke(Op::get("_npi_astype")->make_attrs({{"dtype", Value(t)}}), {a})[0];
}

std::vector<NDArray> operands_from_py(PyObject* const* objs, Py_ssize_t n, bool widen_ints,
                                      bool float64_loop) {
  std::vector<NDArray> out(static_cast<size_t>(n));
  bool all_arrays = true;
  for (Py_ssize_t i = 0; i < n && all_arrays; ++i) all_arrays = is_ndarray(objs[i]);
  if (all_arrays) {  // the common case: no weak scalar to type
    for (Py_ssize_t i = 0; i < n; ++i) out[i] = unwrap(objs[i]);
    return out;
  }
  DType strong = DType::kUnknown;
  std::optional<ScalarKind> weakest_lift;
  // A list beside a float64 / complex128 array keeps its float64 values (host_operand_from_py).
  const NDArray* wide = nullptr;
  for (Py_ssize_t i = 0; i < n && !wide; ++i)
    if (is_ndarray(objs[i]) && (unwrap(objs[i]).dtype() == DType::kFloat64 ||
                                unwrap(objs[i]).dtype() == DType::kComplex128))
      wide = &unwrap(objs[i]);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* o = objs[i];
    if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o))
      continue;
    out[i] = operand_from_py(o, wide);
    strong = strong == DType::kUnknown ? out[i].dtype() : promote_types(strong, out[i].dtype());
  }
  if (strong == DType::kUnknown) {  // only scalars: NumPy's defaults, float -> ndx's default
    for (Py_ssize_t i = 0; i < n; ++i)
      out[i] = float64_loop && PyFloat_CheckExact(objs[i])
                   ? NDArray::scalar(PyFloat_AS_DOUBLE(objs[i]), DType::kFloat64)
                   : operand_from_py(objs[i], nullptr);
    return out;
  }
  // The highest kind among the weak scalars decides how far they lift the arrays' dtype.
  ScalarKind highest = ScalarKind::kBool;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (out[i].defined()) continue;
    PyObject* o = objs[i];
    ScalarKind kind = PyBool_Check(o)    ? ScalarKind::kBool
                      : PyLong_Check(o)  ? ScalarKind::kInt
                      : PyFloat_Check(o) ? ScalarKind::kFloat
                                         : ScalarKind::kComplex;
    highest = std::max(highest, kind);
  }
  DType target = promote_with_scalar(strong, highest);
  if (float64_loop) target = promote_types(target, DType::kFloat64);
  NDArray like(std::shared_ptr<Storage>(), 0, Shape{}, Shape{}, target);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!out[i].defined())
      out[i] = operand_from_py(objs[i], &like, widen_ints);
    else if (target != strong && out[i].dtype() != target)
      out[i] = cast_for_autograd(out[i], target);  // real arrays beside a complex scalar
  }
  // Operands made here from Python objects join the device of the ndx arrays among them.
  const NDArray* elsewhere = nullptr;
  for (Py_ssize_t i = 0; i < n && !elsewhere; ++i)
    if (is_ndarray(objs[i]) && unwrap(objs[i]).device() != cpu()) elsewhere = &unwrap(objs[i]);
  for (Py_ssize_t i = 0; i < n && elsewhere; ++i)
    if (!is_ndarray(objs[i])) out[i] = out[i].to(elsewhere->device());
  return out;
}

}  // namespace ndx::py
