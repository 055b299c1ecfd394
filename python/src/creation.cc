// np.zeros / ones / empty / full / array / asarray as C functions: the common calls (a shape of
// Python ints, a list of Python numbers, an ndarray or a NumPy array) are served here without
// a Python frame, parameter parsing or an op invocation; anything else goes to the Python
// implementation in ndx.numpy (registered with _set_creation_fallbacks), which holds every
// rule and error message, so both paths behave the same.
#include "convert.h"  // Python.h first

// NumPy's array struct (stable since NumPy 1.7) through its inline field accessors only: no
// NumPy C-API function is called, so there is no import_array() and no link to NumPy.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "ndx/default_device.h"
#include "ndx/ndarray.h"

namespace ndx::py {
namespace {

enum Fallback { kZeros, kOnes, kEmpty, kFull, kArray, kAsarray, kNumFallbacks };
PyObject* g_fallback[kNumFallbacks] = {};

PyObject* fall_back(Fallback which, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  if (!g_fallback[which]) {
    PyErr_SetString(PyExc_RuntimeError, "ndx.numpy did not register its creation functions");
    return nullptr;
  }
  return PyObject_Vectorcall(g_fallback[which], args, nargsf, kwnames);
}

// args matched to `names` by position then keyword; false for anything unexpected (the
// fallback then reports it the way the Python signature does).
template <size_t N>
bool match_args(PyObject* const* args, size_t nargsf, PyObject* kwnames,
                const char* const (&names)[N], PyObject* (&out)[N]) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs > static_cast<Py_ssize_t>(N)) return false;
  for (size_t i = 0; i < N; ++i) out[i] = i < static_cast<size_t>(nargs) ? args[i] : nullptr;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
    if (!key) {
      PyErr_Clear();
      return false;
    }
    size_t i = 0;
    while (i < N && std::strcmp(key, names[i]) != 0) ++i;
    if (i == N || out[i]) return false;
    out[i] = args[nargs + k];
  }
  return true;
}

bool is_none(PyObject* o) { return !o || o == Py_None; }

// device= absent, None or the CPU ("cpu(0)", a Device or a plain str): all make the array
// where the C path makes it (an optimizer passing its weights' device, cpu(0), would
// otherwise pay the Python path's 5 us per call).
bool no_device_or_cpu0(PyObject* o) {
  if (is_none(o)) return true;
  if (!PyUnicode_Check(o)) return false;
  Py_ssize_t n = 0;
  const char* text = PyUnicode_AsUTF8AndSize(o, &n);
  if (!text) {
    PyErr_Clear();
    return false;
  }
  return n == 6 && std::memcmp(text, "cpu(0)", 6) == 0;
}

// A shape given as a Python int or a tuple / list of them, each in [0, 2^40] and the product
// small enough that nothing overflows; false otherwise (the fallback validates).
bool simple_shape(PyObject* o, Shape* shape) {
  constexpr long long kMaxDim = 1LL << 40;
  auto dim = [&](PyObject* d) {
    if (!PyLong_CheckExact(d)) return false;
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(d, &overflow);
    if (overflow || v < 0 || v > kMaxDim) return false;
    shape->push_back(v);
    return true;
  };
  if (PyLong_CheckExact(o)) return dim(o);
  if (!PyTuple_CheckExact(o) && !PyList_CheckExact(o)) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  if (n > 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!dim(PySequence_Fast_GET_ITEM(o, i))) return false;
  int64_t size = 1;
  for (int64_t d : *shape)
    if (__builtin_mul_overflow(size, d, &size) || size > (int64_t{1} << 48)) return false;
  return true;
}

// dtype None (the default float) or something dtype_from_py reads; false for a device or
// anything else the fallback should see.
bool simple_dtype(PyObject* o, DType dflt, DType* t) {
  if (is_none(o)) {
    *t = dflt;
    return true;
  }
  *t = dtype_from_py(o);  // raises TypeError for what NumPy does not understand either
  return true;
}

PyObject* create(Fallback which, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  static const char* const kNames[] = {"shape", "dtype", "device"};
  static const char* const kFullNames[] = {"shape", "fill_value", "dtype", "device"};
  NDX_PY_BEGIN
  if (!default_device_is_cpu0()) return fall_back(which, args, nargsf, kwnames);  // a scope
  Shape shape;
  DType t;
  double value = 0;
  if (which == kFull) {
    PyObject* a[4];
    if (!match_args(args, nargsf, kwnames, kFullNames, a) || !a[0] || !a[1] ||
        !no_device_or_cpu0(a[3]) || !simple_shape(a[0], &shape))
      return fall_back(which, args, nargsf, kwnames);
    PyObject* v = a[1];
    DType dflt;
    if (PyBool_Check(v)) {
      dflt = DType::kBool, value = v == Py_True;
    } else if (PyFloat_CheckExact(v)) {
      dflt = default_float_dtype(), value = PyFloat_AS_DOUBLE(v);
    } else if (PyLong_CheckExact(v)) {  // exact in a double; range-checked below
      int overflow = 0;
      const long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
      if (overflow || i > (1LL << 53) || i < -(1LL << 53))
        return fall_back(which, args, nargsf, kwnames);
      dflt = DType::kInt64, value = static_cast<double>(i);
    } else {  // NumPy scalars and everything else: the fallback
      return fall_back(which, args, nargsf, kwnames);
    }
    simple_dtype(a[2], dflt, &t);
    if (is_integer(t)) {  // the fallback raises NumPy's OverflowError / casts floats its way
      double lo = 0, hi = 0;
      NDX_DTYPE_SWITCH(t, T, {
        lo = static_cast<double>(std::numeric_limits<T>::lowest());
        hi = static_cast<double>(std::numeric_limits<T>::max());
      });
      if (!PyLong_CheckExact(v) || value < lo || value > hi)
        return fall_back(which, args, nargsf, kwnames);
    }
  } else {
    PyObject* a[3];
    if (!match_args(args, nargsf, kwnames, kNames, a) || !a[0] || !no_device_or_cpu0(a[2]) ||
        !simple_shape(a[0], &shape))
      return fall_back(which, args, nargsf, kwnames);
    simple_dtype(a[1], default_float_dtype(), &t);
    value = which == kOnes ? 1.0 : 0.0;
  }
  NDArray out(shape, t);
  if (which == kZeros)
    std::memset(out.raw_data(), 0, static_cast<size_t>(out.nbytes()));
  else if (which != kEmpty)
    out.fill(value);
  return wrap(std::move(out));
  NDX_PY_END(nullptr)
}

// ---- array(list of Python numbers) ----
enum Kind { kNoKind = 0, kBoolKind = 1, kIntKind = 2, kFloatKind = 3 };

// The shape of a nested list / tuple of Python numbers and the highest kind in it; false
// when it is ragged, too deep, or holds anything but bool, int (within int64) and float.
bool discover(PyObject* o, int depth, Shape* shape, Kind* kind) {
  if (depth > 32) return false;
  if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (shape->ndim() == depth) {
      shape->push_back(n);
    } else if (shape->ndim() < depth || (*shape)[depth] != n) {
      return false;
    }
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!discover(PySequence_Fast_GET_ITEM(o, i), depth + 1, shape, kind)) return false;
    if (n == 0 && shape->ndim() != depth + 1) return false;
    return true;
  }
  if (shape->ndim() != depth) return false;  // a scalar where lists were seen (ragged)
  Kind k;
  if (PyBool_Check(o)) {
    k = kBoolKind;
  } else if (PyLong_CheckExact(o)) {
    int overflow = 0;
    PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) return false;
    k = kIntKind;
  } else if (PyFloat_CheckExact(o)) {
    k = kFloatKind;
  } else {
    return false;
  }
  *kind = std::max(*kind, k);
  return true;
}

template <class T>
void fill_from(PyObject* o, T** p) {
  if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    for (Py_ssize_t i = 0; i < n; ++i) fill_from(PySequence_Fast_GET_ITEM(o, i), p);
    return;
  }
  if (PyFloat_CheckExact(o))
    *(*p)++ = static_cast<T>(PyFloat_AS_DOUBLE(o));
  else if (PyBool_Check(o))
    *(*p)++ = static_cast<T>(o == Py_True);
  else
    *(*p)++ = static_cast<T>(PyLong_AsLongLong(o));
}

bool int_fits(PyObject* o, DType t) {
  if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); ++i)
      if (!int_fits(PySequence_Fast_GET_ITEM(o, i), t)) return false;
    return true;
  }
  if (!PyLong_CheckExact(o) || PyBool_Check(o)) return true;
  const long long v = PyLong_AsLongLong(o);
  double lo = 0, hi = 0;
  NDX_DTYPE_SWITCH(t, T, {
    lo = static_cast<double>(std::numeric_limits<T>::lowest());
    hi = static_cast<double>(std::numeric_limits<T>::max());
  });
  return static_cast<double>(v) >= lo && static_cast<double>(v) <= hi;
}

// The array of a list of Python numbers, or an undefined array when the fallback must do it
// (floats into integer dtypes, ints out of a dtype's range, bfloat16 targets of ints...).
NDArray from_sequence(PyObject* o, PyObject* dtype) {
  Shape shape;
  Kind kind = kNoKind;
  if (!discover(o, 0, &shape, &kind)) return NDArray();
  const DType dflt = kind == kBoolKind  ? DType::kBool
                     : kind == kIntKind ? DType::kInt64
                                        : default_float_dtype();  // floats, and empty lists
  DType t;
  simple_dtype(dtype, dflt, &t);
  if (is_complex(t)) return NDArray();  // the fallback builds complex arrays
  if (kind == kFloatKind && !is_float(t)) return NDArray();
  if (kind == kIntKind && is_integer(t) && !int_fits(o, t)) return NDArray();
  if (kind == kIntKind && t == DType::kBool) return NDArray();
  NDArray out(shape, t);
  NDX_DTYPE_SWITCH(t, T, {
    T* p = out.data<T>();
    fill_from<T>(o, &p);
  });
  return out;
}

PyObject* array(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  static const char* const kNames[] = {"object", "dtype", "copy", "device"};
  NDX_PY_BEGIN
  if (!default_device_is_cpu0()) return fall_back(kArray, args, nargsf, kwnames);  // a scope
  PyObject* a[4];
  if (!match_args(args, nargsf, kwnames, kNames, a) || !a[0] || !no_device_or_cpu0(a[3]) ||
      (a[2] && a[2] != Py_True))
    return fall_back(kArray, args, nargsf, kwnames);
  PyObject* o = a[0];
  if (is_ndarray(o)) {
    const NDArray& x = unwrap(o);
    if (is_none(a[1])) return wrap(x.copy());
    return wrap(x.astype(dtype_from_py(a[1])));
  }
  if (PyList_CheckExact(o) || PyTuple_CheckExact(o) || PyFloat_CheckExact(o) ||
      PyLong_CheckExact(o) || PyBool_Check(o)) {
    NDArray out = from_sequence(o, a[1]);
    if (out.defined()) return wrap(std::move(out));
  }
  return fall_back(kArray, args, nargsf, kwnames);
  NDX_PY_END(nullptr)
}

PyTypeObject* g_numpy_ndarray = nullptr;

void release_numpy_array(void* o) {
  if (this_thread_holds_gil()) {  // the usual case: the view dies in Python's dealloc
    Py_DECREF(static_cast<PyObject*>(o));
  } else if (Py_IsInitialized()) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(o));
    PyGILState_Release(g);
  }
}

// NumPy's type number as an ndx dtype; kUnknown for the types ndx has not.
DType dtype_of_numpy(int type_num) {
  switch (type_num) {
    case NPY_BOOL:
      return DType::kBool;
    case NPY_BYTE:
      return DType::kInt8;
    case NPY_UBYTE:
      return DType::kUInt8;
    case NPY_SHORT:
      return DType::kInt16;
    case NPY_USHORT:
      return DType::kUInt16;
    case NPY_INT:
      return DType::kInt32;
    case NPY_UINT:
      return DType::kUInt32;
    case NPY_LONG:
      return sizeof(long) == 8 ? DType::kInt64 : DType::kInt32;
    case NPY_ULONG:
      return sizeof(long) == 8 ? DType::kUInt64 : DType::kUInt32;
    case NPY_LONGLONG:
      return DType::kInt64;
    case NPY_ULONGLONG:
      return DType::kUInt64;
    case NPY_HALF:
      return DType::kFloat16;
    case NPY_FLOAT:
      return DType::kFloat32;
    case NPY_DOUBLE:
      return DType::kFloat64;
    case NPY_CFLOAT:
      return DType::kComplex64;
    case NPY_CDOUBLE:
      return DType::kComplex128;
    default:
      return DType::kUnknown;
  }
}

// What a view of a numpy.ndarray needs besides its dims: the dtype and the item size's log2.
struct NumpyLayout {
  DType dtype;
  int item_shift;
};

// The layout of a writable, native-order numpy.ndarray whose byte strides are whole elements,
// read from its struct (a buffer export costs NumPy as much as the rest of the call); false
// when it is not one.
bool numpy_view_layout(PyObject* o, NumpyLayout* layout) {
  if (Py_TYPE(o) != g_numpy_ndarray) return false;
  auto* a = reinterpret_cast<PyArrayObject*>(o);
  const int nd = PyArray_NDIM(a);
  if (!(PyArray_FLAGS(a) & NPY_ARRAY_WRITEABLE) || nd > 32) return false;
  const PyArray_Descr* d = PyArray_DESCR(a);
  if (d->byteorder == '>') return false;
  const DType t = dtype_of_numpy(d->type_num);
  if (t == DType::kUnknown) return false;
  // Item sizes are powers of two: a mask and a shift, not two divisions per dim (a division
  // costs as much as the rest of this function).
  const int shift = std::countr_zero(static_cast<uint64_t>(dtype_size(t)));
  const npy_intp mask = (npy_intp{1} << shift) - 1;
  const npy_intp* st = PyArray_STRIDES(a);
  for (int i = 0; i < nd; ++i)
    if (st[i] & mask) return false;
  *layout = {t, shift};
  return true;
}

// The view itself, its Shapes built straight from NumPy's dims and strides (no resize and
// fill, no out-parameters); make(storage, shape, strides, dtype) builds the
// result. The NumPy array is owned by the view's Storage.
template <class Make>
auto make_numpy_view(PyObject* o, const NumpyLayout& layout, Make make) {
  auto* a = reinterpret_cast<PyArrayObject*>(o);
  const int nd = PyArray_NDIM(a);
  // push_back, not a range constructor: for a few dims its memmove call costs more than
  // the rest of the copy.
  Shape shape, strides;
  for (int i = 0; i < nd; ++i) {
    shape.push_back(PyArray_DIMS(a)[i]);
    strides.push_back(PyArray_STRIDES(a)[i] >> layout.item_shift);  // negatives stay exact
  }
  std::shared_ptr<Storage> storage =
      Storage::wrap(PyArray_DATA(a), 0, cpu(), release_numpy_array, o);
  Py_INCREF(o);  // owned by the storage from here: its release drops it
  return make(std::move(storage), std::move(shape), std::move(strides), layout.dtype);
}

// A view sharing a numpy.ndarray's memory (see numpy_view_layout); undefined when it cannot.
NDArray numpy_view(PyObject* o) {
  NumpyLayout layout;
  if (!numpy_view_layout(o, &layout)) return NDArray();
  return make_numpy_view(o, layout, [](auto&& storage, Shape&& shape, Shape&& strides, DType t) {
    return NDArray(std::move(storage), 0, std::move(shape), std::move(strides), t);
  });
}

// The same view as a new ndx.ndarray, built in place in the Python object (asarray's hot
// path: no NDArray moves); nullptr with no error set when numpy_view_layout says no.
PyObject* wrap_numpy_view(PyObject* o) {
  NumpyLayout layout;
  if (!numpy_view_layout(o, &layout)) return nullptr;
  // On failure the storage's release drops the NumPy array's reference again.
  return make_numpy_view(o, layout, [](auto&& storage, Shape&& shape, Shape&& strides, DType t) {
    return wrap_emplace(std::move(storage), 0, std::move(shape), std::move(strides), t);
  });
}

PyObject* asarray(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  static const char* const kNames[] = {"a", "dtype", "device"};
  NDX_PY_BEGIN
  if (!default_device_is_cpu0()) return fall_back(kAsarray, args, nargsf, kwnames);  // a scope
  // asarray(numpy_array), the common call, before any argument matching.
  if (!kwnames && PyVectorcall_NARGS(nargsf) == 1 && Py_TYPE(args[0]) == g_numpy_ndarray) {
    if (PyObject* view = wrap_numpy_view(args[0])) return view;
    if (PyErr_Occurred()) return nullptr;
  }
  PyObject* a[3];
  if (!match_args(args, nargsf, kwnames, kNames, a) || !a[0] || !no_device_or_cpu0(a[2]))
    return fall_back(kAsarray, args, nargsf, kwnames);
  PyObject* o = a[0];
  if (Py_TYPE(o) == g_numpy_ndarray && is_none(a[1])) {  // the common NumPy case first
    if (PyObject* view = wrap_numpy_view(o)) return view;
    if (PyErr_Occurred()) return nullptr;
  }
  if (is_ndarray(o) && (is_none(a[1]) || unwrap(o).dtype() == dtype_from_py(a[1]))) {
    Py_INCREF(o);
    return o;
  }
  if (!is_ndarray(o) && PyObject_CheckBuffer(o)) {  // NumPy arrays: shared, not copied
    NDArray view = numpy_view(o);
    if (!view.defined()) view = array_view_of_buffer(o);
    if (view.defined() && (is_none(a[1]) || view.dtype() == dtype_from_py(a[1])))
      return wrap(std::move(view));
  }
  return fall_back(kAsarray, args, nargsf, kwnames);
  NDX_PY_END(nullptr)
}

#define NDX_CREATE(name, which)                                                        \
  PyObject* name(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) { \
    return create(which, args, nargsf, kwnames);                                       \
  }
NDX_CREATE(zeros, kZeros)
NDX_CREATE(ones, kOnes)
NDX_CREATE(empty, kEmpty)
NDX_CREATE(full, kFull)

PyObject* set_fallbacks(PyObject*, PyObject* args) {
  PyObject* fns[kNumFallbacks];
  if (!PyArg_UnpackTuple(args, "_set_creation_fallbacks", kNumFallbacks, kNumFallbacks, &fns[0],
                         &fns[1], &fns[2], &fns[3], &fns[4], &fns[5]))
    return nullptr;
  for (int i = 0; i < kNumFallbacks; ++i) {
    Py_INCREF(fns[i]);
    Py_XSETREF(g_fallback[i], fns[i]);
  }
  Py_RETURN_NONE;
}

#define NDX_FASTCALL(f) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f))
PyMethodDef methods[] = {
    {"zeros", NDX_FASTCALL(zeros), METH_FASTCALL | METH_KEYWORDS,
     "zeros(shape, dtype=None, device=None)\n--\n\n"
     "A new array of zeros (the default float dtype, float32, unless dtype says otherwise)."},
    {"ones", NDX_FASTCALL(ones), METH_FASTCALL | METH_KEYWORDS,
     "ones(shape, dtype=None, device=None)\n--\n\n"
     "A new array of ones (the default float dtype, float32, unless dtype says otherwise)."},
    {"empty", NDX_FASTCALL(empty), METH_FASTCALL | METH_KEYWORDS,
     "empty(shape, dtype=None, device=None)\n--\n\n"
     "A new array whose contents are not initialized."},
    {"full", NDX_FASTCALL(full), METH_FASTCALL | METH_KEYWORDS,
     "full(shape, fill_value, dtype=None, device=None)\n--\n\n"
     "A new array filled with fill_value. Without dtype: a NumPy scalar's own dtype, bool for\n"
     "a bool value, int64 for an int, the default float dtype otherwise."},
    {"array", NDX_FASTCALL(array), METH_FASTCALL | METH_KEYWORDS,
     "array(object, dtype=None, copy=True, device=None)\n--\n\n"
     "An ndarray from a list, scalar, NumPy array or ndarray. Python floats become the\n"
     "default float dtype (float32) where NumPy would pick float64; NumPy arrays and\n"
     "scalars keep their dtype."},
    {"asarray", NDX_FASTCALL(asarray), METH_FASTCALL | METH_KEYWORDS,
     "asarray(a, dtype=None, device=None, *, copy=None, order=None, like=None)\n--\n\n"
     "`a` itself when it is already an ndarray of that dtype; a NumPy array's memory shared\n"
     "(not copied) when its dtype fits; else array(a, dtype). copy=True always copies;\n"
     "copy=False raises ValueError where sharing is impossible."},
    {"_set_creation_fallbacks", set_fallbacks, METH_VARARGS,
     "The Python zeros, ones, empty, full, array and asarray the C versions defer to."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool init_creation(PyObject* module) {
  PyObject* numpy = PyImport_ImportModule("numpy");
  if (!numpy) return false;
  PyObject* type = PyObject_GetAttrString(numpy, "ndarray");  // kept for the process
  Py_DECREF(numpy);
  if (!type) return false;
  g_numpy_ndarray = reinterpret_cast<PyTypeObject*>(type);
  return PyModule_AddFunctions(module, methods) == 0;
}

}  // namespace ndx::py
