// ndx.numpy.ndarray: a C type wrapping ndx::NDArray so attribute access, arithmetic and basic
// indexing stay in C++ (no Python frames on the hot path).
#include "convert.h"  // Python.h first
#include "interop.h"

#include <structmember.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <unordered_map>
#include "ndx/autograd.h"
#include "ndx/executor.h"
#include "ndx/imperative.h"
#include "ndx/indexing.h"
#include "ndx/np.h"

namespace ndx::py {

PyTypeObject* ndarray_type = nullptr;
ArrayFreeList g_free_arrays;

bool is_ndarray(PyObject* o) {
  return Py_TYPE(o) == ndarray_type || PyObject_TypeCheck(o, ndarray_type);
}

PyObject* wrap(NDArray a) { return wrap_emplace(std::move(a)); }

namespace {

PyArray* as_py(PyObject* o) { return reinterpret_cast<PyArray*>(o); }

void dealloc(PyObject* o) {
  PyArray* self = as_py(o);
  if (self->weakrefs) PyObject_ClearWeakRefs(o);
  self->arr.~NDArray();  // may free other arrays (a NumPy base, an autograd graph) first
  PyTypeObject* tp = Py_TYPE(o);
  if (tp == ndarray_type && g_free_arrays.count < ArrayFreeList::kMax)
    g_free_arrays.items[g_free_arrays.count++] = self;
  else
    tp->tp_free(o);
  Py_DECREF(tp);
}

PyObject* shape_tuple(const Shape& s) {
  PyObject* t = PyTuple_New(s.ndim());
  for (int i = 0; i < s.ndim(); ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(s[i]));
  return t;
}

// ndarray(shape, dtype=None): an uninitialized array, as numpy.ndarray(shape).
PyObject* tp_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"shape", "dtype", nullptr};
  PyObject *shape = nullptr, *dtype = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:ndarray", const_cast<char**>(names), &shape,
                                   &dtype))
    return nullptr;
  NDX_PY_BEGIN
  Value v = value_from_py(shape, "ndarray", "shape");
  Shape s = FieldTraits<Shape>::from_value(v, {"ndarray", "shape"});
  return wrap(np::empty(s, dtype == Py_None ? std::nullopt : std::optional(dtype_from_py(dtype))));
  NDX_PY_END(nullptr)
}

// ---- attributes ----
PyObject* get_shape(PyObject* o, void*) { return shape_tuple(unwrap(o).shape()); }
PyObject* get_dtype(PyObject* o, void*) { return dtype_to_py(unwrap(o).dtype()); }
PyObject* get_ndim(PyObject* o, void*) { return PyLong_FromLong(unwrap(o).ndim()); }
PyObject* get_size(PyObject* o, void*) { return PyLong_FromLongLong(unwrap(o).size()); }
PyObject* get_itemsize(PyObject* o, void*) { return PyLong_FromLongLong(unwrap(o).itemsize()); }
PyObject* get_nbytes(PyObject* o, void*) { return PyLong_FromLongLong(unwrap(o).nbytes()); }
PyObject* get_strides(PyObject* o, void*) {
  const NDArray& a = unwrap(o);
  Shape s = a.strides();
  for (int i = 0; i < s.ndim(); ++i) s[i] *= a.itemsize();
  return shape_tuple(s);
}
NDArray run_op(const char* op, const NDArray& a,
               std::vector<std::pair<std::string_view, Value>> kw) {
  return invoke(Op::get(op)->make_attrs(kw), {a})[0];
}

// A shape op on an array autograd records: a recorded view (ndx::recorded_shape_op), or the
// op's copy where NumPy copies (copy).
NDArray recorded_view(const char* op, const NDArray& a,
                      std::vector<std::pair<std::string_view, Value>> kw,
                      const std::function<NDArray(const NDArray&)>& view, bool copy = false) {
  if (copy) return run_op(op, a, std::move(kw));
  return recorded_shape_op(Op::get(op)->make_attrs(kw), a, [&] { return view(a); });
}

NDArray transposed(const NDArray& a, std::optional<Shape> axes) {
  auto view = [&](const NDArray& x) {
    return axes ? x.transpose(axes->to_vector()) : x.transpose();
  };
  if (recorded(a))
    return recorded_view("_np_transpose", a, {{"axes", axes ? Value(*axes) : Value()}}, view);
  return view(a);
}

NDArray reshaped(const NDArray& a, const Shape& s) {
  auto view = [&](const NDArray& x) { return x.reshape_view(s); };
  if (recorded(a)) return recorded_view("_np_reshape", a, {{"newshape", Value(s)}}, view);
  return view(a);
}

void check_not_recorded(const NDArray& a, const char* what) {
  if (recorded(a))
    not_implemented(
        "[", what, "] is not differentiable yet: it cannot be used on an array that ",
        "autograd records (compute it outside autograd.record() or from a detach()ed array)");
}

PyObject* get_T(PyObject* o, void*) {
  NDX_PY_BEGIN
  return wrap(transposed(unwrap(o), std::nullopt));
  NDX_PY_END(nullptr)
}
PyObject* get_device(PyObject* o, void*) {
  return PyUnicode_FromString(unwrap(o).device().str().c_str());
}
PyObject* get_grad(PyObject* o, void*) {
  // grad_req='null' attaches no gradient buffer in MXNet: grad is None.
  const auto& e = unwrap(o).autograd_entry();
  if (e && e->is_leaf && e->grad_req == kNullOp) Py_RETURN_NONE;
  NDArray g = autograd::grad_of(unwrap(o));
  if (!g.defined()) Py_RETURN_NONE;
  return wrap(g);
}

// NumPy's `a.shape = s` / `a.dtype = t` change the array itself (every other view keeps its
// layout), so the flags stay. An array autograd tracks keeps its layout: its gradient buffer
// and recorded graph are of the old shape.
void check_layout_settable(PyObject* value, const NDArray& a, const char* what) {
  if (!value) {
    PyErr_Format(PyExc_AttributeError, "Cannot delete array %s", what);
    throw PythonErrorSet{};
  }
  if (a.autograd_entry() || is_tracing())
    value_error("[", what, "] cannot change the ", what, " of an array autograd tracks (",
                "attach_grad(), a recorded result, or hybridize's trace) in place; use ",
                std::string_view(what) == "shape" ? "reshape()" : "view()", " instead");
}

int set_shape(PyObject* o, PyObject* value, void*) {
  NDX_PY_BEGIN
  NDArray& a = unwrap(o);
  check_layout_settable(value, a, "shape");
  Value v = value_from_py(value, "shape", "shape");
  Shape s = FieldTraits<Shape>::from_value(v, {"shape", "shape"});
  NDArray b = a.reshape_view(s);
  if (!b.shares_storage_with(a)) {  // reshape_view copies when no view can hold the layout
    if (a.size() != 0) {
      PyErr_SetString(PyExc_AttributeError,
                      "Incompatible shape for in-place modification. Use `.reshape()` to make a "
                      "copy with the desired shape.");
      throw PythonErrorSet{};
    }
    b = a.view(a.byte_offset(), b.shape(), b.strides(), a.dtype());
  }
  a.adopt_layout(b);
  return 0;
  NDX_PY_END(-1)
}

NDArray retyped_view(const NDArray& a, DType t, const char* op);

int set_dtype(PyObject* o, PyObject* value, void*) {
  NDX_PY_BEGIN
  NDArray& a = unwrap(o);
  check_layout_settable(value, a, "dtype");
  a.adopt_layout(retyped_view(a, dtype_from_py(value), "dtype"));
  return 0;
  NDX_PY_END(-1)
}

// NumPy's array interface (version 3) for host arrays NumPy can describe; bfloat16 and device
// arrays have none (AttributeError, so NumPy falls back on __array__).
const char* interface_typestr(DType t);

PyObject* get_array_interface(PyObject* o, void*) {
  NDX_PY_BEGIN
  const NDArray& a = unwrap(o);
  const char* typestr = a.device().is_cpu() ? interface_typestr(a.dtype()) : nullptr;
  if (!typestr) {
    PyErr_Format(PyExc_AttributeError, "an array of %s on %s has no __array_interface__",
                 std::string(dtype_name(a.dtype())).c_str(), a.device().str().c_str());
    throw PythonErrorSet{};
  }
  PyObject* strides = Py_None;
  bool c_contiguous = true;
  int64_t expected = 1;
  for (int i = a.ndim() - 1; i >= 0; --i) {
    if (a.shape()[i] != 1 && a.strides()[i] != expected) c_contiguous = false;
    expected *= a.shape()[i];
  }
  if (!c_contiguous && a.size() != 0) {
    Shape bytes = a.strides();
    for (int i = 0; i < bytes.ndim(); ++i) bytes[i] *= a.itemsize();
    strides = shape_tuple(bytes);
  } else {
    Py_INCREF(strides);
  }
  PyObject* r =
      Py_BuildValue("{s:(N,O),s:N,s:[(s,s)],s:s,s:N,s:i}", "data", PyLong_FromVoidPtr(a.raw_data()),
                    a.writeable() ? Py_False : Py_True, "strides", strides, "descr", "", typestr,
                    "typestr", typestr, "shape", shape_tuple(a.shape()), "version", 3);
  return r;
  NDX_PY_END(nullptr)
}

PyGetSetDef getset[] = {
    {"shape", get_shape, set_shape,
     "Tuple of array dimensions. Setting it reshapes the array in place (no copy), as NumPy's.",
     nullptr},
    {"dtype", get_dtype, set_dtype,
     "Data type of the elements (a numpy.dtype). Setting it reads the same memory as another "
     "dtype in place, as NumPy's.",
     nullptr},
    {"__array_interface__", get_array_interface, nullptr,
     "NumPy's array interface (version 3): the host memory's address, shape, strides, typestr.",
     nullptr},
    {"ndim", get_ndim, nullptr, "Number of dimensions.", nullptr},
    {"size", get_size, nullptr, "Number of elements.", nullptr},
    {"itemsize", get_itemsize, nullptr, "Bytes per element.", nullptr},
    {"nbytes", get_nbytes, nullptr, "Bytes of all elements.", nullptr},
    {"strides", get_strides, nullptr, "Bytes to step in each dimension.", nullptr},
    {"T", get_T, nullptr, "The transposed array (a view).", nullptr},
    {"device", get_device, nullptr, "The device holding the array, e.g. 'cpu(0)'.", nullptr},
    {"ctx", get_device, nullptr, "Alias of device (MXNet's name).", nullptr},
    {"context", get_device, nullptr, "Alias of device (MXNet 1.x's name).", nullptr},
    {"grad", get_grad, nullptr, "The gradient buffer attached by attach_grad() (None without one).",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---- arithmetic: cached attrs per op, weak Python scalars ----
enum BinOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kMatmul,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kXor,
  kLshift,
  kRshift,
  kNumBinOps
};
const char* kBinOpNames[kNumBinOps] = {
    "_np_add",        "_np_subtract",    "_np_multiply",   "_np_true_divide",   "_np_floor_divide",
    "_np_mod",        "_np_power",       "_np_matmul",     "_np_equal",         "_np_not_equal",
    "_np_less",       "_np_less_equal",  "_np_greater",    "_np_greater_equal", "_np_bitwise_and",
    "_np_bitwise_or", "_np_bitwise_xor", "_np_left_shift", "_np_right_shift"};
NodeAttrs* g_bin_attrs = nullptr;

PyObject* binary(BinOp op, PyObject* a, PyObject* b) {
  NDX_PY_BEGIN
  PyObject* objs[2] = {a, b};
  std::vector<NDArray> xy;
  try {
    // NumPy compares and true-divides out-of-range Python ints exactly instead of overflowing.
    bool widen = op == kDiv || (op >= kEq && op <= kGe);
    xy = operands_from_py(objs, 2, widen);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kTypeError) throw;
    Py_RETURN_NOTIMPLEMENTED;  // lets Python try the other operand's method
  }
  return wrap(invoke(g_bin_attrs[op], xy)[0]);
  NDX_PY_END(nullptr)
}

PyObject* inplace(BinOp op, PyObject* a, PyObject* b) {
  NDX_PY_BEGIN
  NDArray& x = unwrap(a);
  x.check_writeable(kBinOpNames[op] + 4, "output array");
  if (PyComplex_Check(b) && !is_complex(x.dtype()))  // (the scalar would take x's real dtype)
    type_error("[", kBinOpNames[op] + 4, "] cannot cast the result from complex to ", x.dtype(),
               " with casting rule 'same_kind'");
  if (op == kDiv && !is_inexact(x.dtype()))  // true division makes floats, as NumPy refuses
    type_error("[", kBinOpNames[op] + 4, "] cannot cast the result from ", default_float_dtype(),
               " to ", x.dtype(), " with casting rule 'same_kind'");
  NDArray y = operand_from_py(b, &x);
  if (op == kAdd || op == kSub || op == kMul || op == kDiv) {
    // The result is written back into x under NumPy's same_kind rule: uint8 += int8 (int16)
    // and float32 += complex64 are refused, not wrapped or truncated.
    const DType r = promote_types(x.dtype(), y.dtype());
    if (!can_cast(r, x.dtype(), Casting::kSameKind))
      type_error("[", kBinOpNames[op] + 4, "] cannot cast the result from ", r, " to ", x.dtype(),
                 " with casting rule 'same_kind'");
  }
  switch (op) {
    case kAdd:
      x += y;
      break;
    case kSub:
      x -= y;
      break;
    case kMul:
      x *= y;
      break;
    case kDiv:
      x /= y;
      break;
    default: {
      // floor_divide, mod, power, matmul, bitwise ops, shifts: compute, then write back with
      // NumPy's same_kind rule (bool &= 1 is refused: bitwise_and(bool, int) is int64).
      NDArray r = invoke(g_bin_attrs[op], {x, y})[0];
      if (!can_cast(r.dtype(), x.dtype(), Casting::kSameKind))
        type_error("[", kBinOpNames[op] + 4, "] cannot cast the result from ", r.dtype(), " to ",
                   x.dtype(), " with casting rule 'same_kind'");
      if (r.shape() != x.shape())
        value_error("non-broadcastable output operand with shape ", x.shape().str(),
                    " doesn't match the broadcast shape ", r.shape().str());
      x.assign(r);
    }
  }
  Py_INCREF(a);
  return a;
  NDX_PY_END(nullptr)
}

#define NDX_BIN(name, op) \
  PyObject* name(PyObject* a, PyObject* b) { return binary(op, a, b); }
#define NDX_INPLACE(name, op) \
  PyObject* name(PyObject* a, PyObject* b) { return inplace(op, a, b); }
NDX_BIN(nb_add, kAdd)
NDX_BIN(nb_sub, kSub)
NDX_BIN(nb_mul, kMul)
NDX_BIN(nb_div, kDiv)
NDX_BIN(nb_floordiv, kFloorDiv)
NDX_BIN(nb_mod, kMod)
NDX_BIN(nb_matmul, kMatmul)
NDX_INPLACE(nb_iadd, kAdd)
NDX_INPLACE(nb_isub, kSub)
NDX_INPLACE(nb_imul, kMul)
NDX_INPLACE(nb_idiv, kDiv)
NDX_INPLACE(nb_ifloordiv, kFloorDiv)
NDX_INPLACE(nb_imod, kMod)
NDX_INPLACE(nb_imatmul, kMatmul)
NDX_BIN(nb_and, kAnd)
NDX_BIN(nb_or, kOr)
NDX_BIN(nb_xor, kXor)
NDX_BIN(nb_lshift, kLshift)
NDX_BIN(nb_rshift, kRshift)
NDX_INPLACE(nb_iand, kAnd)
NDX_INPLACE(nb_ior, kOr)
NDX_INPLACE(nb_ixor, kXor)
NDX_INPLACE(nb_ilshift, kLshift)
NDX_INPLACE(nb_irshift, kRshift)
PyObject* nb_pow(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) {
    PyErr_SetString(PyExc_NotImplementedError, "pow() with a modulus is not supported");
    return nullptr;
  }
  return binary(kPow, a, b);
}
PyObject* nb_ipow(PyObject* a, PyObject* b, PyObject*) { return inplace(kPow, a, b); }

PyObject* unary(const char* op, PyObject* a) {
  NDX_PY_BEGIN
  static std::unordered_map<std::string_view, NodeAttrs> cache;
  auto it = cache.find(op);
  if (it == cache.end()) it = cache.emplace(op, Op::get(op)->make_attrs()).first;
  return wrap(invoke(it->second, {unwrap(a)})[0]);
  NDX_PY_END(nullptr)
}
PyObject* nb_neg(PyObject* a) { return unary("_np_negative", a); }
PyObject* nb_abs(PyObject* a) { return unary("_np_absolute", a); }
PyObject* nb_pos(PyObject* a) {
  NDX_PY_BEGIN
  return wrap(unwrap(a).copy());
  NDX_PY_END(nullptr)
}
PyObject* nb_invert(PyObject* a) { return unary("_np_bitwise_not", a); }

// Conversions of size-1 arrays to Python scalars.
PyObject* scalar_of(const NDArray& a) {
  if (a.dtype() == DType::kBool) return PyBool_FromLong(a.item<bool>());
  if (is_complex(a.dtype())) {
    const complex128 v = a.item<complex128>();
    return PyComplex_FromDoubles(v.real(), v.imag());
  }
  if (is_float(a.dtype())) return PyFloat_FromDouble(a.item<double>());
  if (is_unsigned(a.dtype())) return PyLong_FromUnsignedLongLong(a.item<uint64_t>());
  return PyLong_FromLongLong(a.item<int64_t>());
}
int nb_bool(PyObject* o) {
  const NDArray& a = unwrap(o);
  if (a.size() != 1) {
    PyErr_SetString(PyExc_ValueError,
                    a.size() == 0 ? "The truth value of an empty array is ambiguous."
                                  : "The truth value of an array with more than one element is "
                                    "ambiguous. Use a.any() or a.all()");
    return -1;
  }
  NDX_PY_BEGIN
  return a.item<bool>() ? 1 : 0;
  NDX_PY_END(-1)
}
PyObject* size1_convert(PyObject* o, bool to_int) {
  const NDArray& a = unwrap(o);
  if (a.size() != 1) {
    PyErr_SetString(PyExc_TypeError, "only size-1 arrays can be converted to Python scalars");
    return nullptr;
  }
  NDX_PY_BEGIN
  PyObject* s = scalar_of(a);
  PyObject* r = to_int ? PyNumber_Long(s) : PyNumber_Float(s);
  Py_DECREF(s);
  return r;
  NDX_PY_END(nullptr)
}
PyObject* nb_int(PyObject* o) { return size1_convert(o, true); }
PyObject* nb_float(PyObject* o) { return size1_convert(o, false); }
PyObject* nb_index(PyObject* o) {
  const NDArray& a = unwrap(o);
  if (a.ndim() != 0 || !(is_integer(a.dtype()) || a.dtype() == DType::kBool)) {
    PyErr_SetString(PyExc_TypeError,
                    "only integer scalar arrays can be converted to a scalar index");
    return nullptr;
  }
  return scalar_of(a);
}

PyObject* richcompare(PyObject* a, PyObject* b, int op) {
  static const BinOp map[] = {kLt, kLe, kEq, kNe, kGt, kGe};
  PyObject* r = binary(map[op], a, b);
  // == / != with what cannot be an operand (None, a str, a plain object) compare every
  // element unequal, as NumPy's: an array of False (True for !=), not Python's identity test.
  const bool plain = b == Py_None || PyUnicode_Check(b) || PyBytes_Check(b) ||
                     Py_TYPE(b)->tp_richcompare == PyBaseObject_Type.tp_richcompare;
  if (r == Py_NotImplemented && (op == Py_EQ || op == Py_NE) && is_ndarray(a) && plain) {
    Py_DECREF(r);
    NDX_PY_BEGIN
    NDArray out(unwrap(a).shape(), DType::kBool, unwrap(a).device());
    out.fill(op == Py_NE ? 1.0 : 0.0);
    return wrap(std::move(out));
    NDX_PY_END(nullptr)
  }
  return r;
}

// ---- indexing: the key becomes IndexItems; ndx::getitem / setitem do the work ----
std::optional<int64_t> slice_bound(PyObject* v) {
  if (v == Py_None) return std::nullopt;
  int64_t x;
  int overflow;  // saturated: a bound past int64 clamps as any bound past the axis does
  if (!index_value(v, &x, &overflow))
    type_error("slice indices must be integers or None or have an __index__ method");
  return x;
}

// Whether a list / tuple (nested) holds an ndx array that autograd or a trace follows.
bool holds_traced_array(PyObject* seq) {
  if (!PyList_Check(seq) && !PyTuple_Check(seq)) return false;
  PyObject* fast = PySequence_Fast(seq, "");
  if (!fast) throw PythonErrorSet{};
  bool found = false;
  for (Py_ssize_t i = 0, n = PySequence_Fast_GET_SIZE(fast); i < n && !found; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    found = is_ndarray(item) ? autograd::has_live_history(unwrap(item)) : holds_traced_array(item);
  }
  Py_DECREF(fast);
  return found;
}

IndexItem index_item(PyObject* k) {
  if (k == Py_None) return IndexItem::newaxis();
  if (k == Py_Ellipsis) return IndexItem::ellipsis();
  if (PySlice_Check(k)) {
    auto* s = reinterpret_cast<PySliceObject*>(k);
    auto step = slice_bound(s->step);
    return IndexItem::slice(slice_bound(s->start), slice_bound(s->stop), step ? *step : 1);
  }
  if (PyBool_Check(k)) return IndexItem::array_index(NDArray::scalar(k == Py_True, DType::kBool));
  if (is_ndarray(k)) return IndexItem::array_index(unwrap(k));
  if (PyLong_Check(k) || (PyIndex_Check(k) && !PyList_Check(k) && !PyTuple_Check(k))) {
    int64_t x;
    int overflow;
    if (index_value(k, &x, &overflow)) {
      if (overflow)
        index_error("index ", repr_of(k), " is out of bounds: it does not fit in int64");
      return IndexItem::integer(x);
    }
  }
  if (PyList_Check(k) && PyList_GET_SIZE(k) == 0)  // NumPy reads [] as an empty integer index
    return IndexItem::array_index(NDArray(Shape{0}, DType::kInt64));
  if (PyBytes_Check(k) || PyUnicode_Check(k))
    index_error(
        "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
        "boolean arrays are valid indices; got ",
        Py_TYPE(k)->tp_name);
  if (PyList_Check(k) || PyTuple_Check(k) || PyObject_CheckBuffer(k)) {
    if (is_tracing() && holds_traced_array(k))  // (its values would be the trace's)
      not_implemented(
          "[getitem] a list holding arrays computed from a hybridized block's inputs as an "
          "index: stack them into one array first (np.stack([i, j]))");
    try {
      return IndexItem::array_index(operand_from_py(k, nullptr));
    } catch (const Error& e) {
      // A list holding what no array holds (a slice, None, a string): NumPy's IndexError.
      if (e.kind() != ErrorKind::kTypeError || !PyList_Check(k)) throw;
      index_error(
          "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
          "boolean arrays are valid indices; got a list that is none of them: ",
          repr_of(k));
    }
  }
  // Other sequences (range, deque) index as the integer array of their items, as NumPy's
  // (d2l's y_hat[range(n), y]); strings stay refused.
  if (PySequence_Check(k) && !PyUnicode_Check(k) && !PyBytes_Check(k) && !PyDict_Check(k)) {
    PyObject* items = PySequence_List(k);
    if (!items) throw PythonErrorSet{};
    try {
      IndexItem item = index_item(items);  // the values are copied into an array
      Py_DECREF(items);
      return item;
    } catch (...) {
      Py_DECREF(items);
      throw;
    }
  }
  index_error(
      "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
      "boolean arrays are valid indices; got ",
      Py_TYPE(k)->tp_name);
}

std::vector<IndexItem> index_key(PyObject* key) {
  std::vector<IndexItem> items;
  if (PyTuple_Check(key)) {
    items.reserve(static_cast<size_t>(PyTuple_GET_SIZE(key)));
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); ++i)
      items.push_back(index_item(PyTuple_GET_ITEM(key, i)));
  } else {
    items.push_back(index_item(key));
  }
  return items;
}

// Whether hybridize is tracing and the key holds an index array computed from the block's
// inputs: the graph must read its values when it runs (index arrays the trace holds as
// constants, with no history, name fixed positions).
bool traced_index(const std::vector<IndexItem>& key) {
  return is_tracing() && std::any_of(key.begin(), key.end(), [](const IndexItem& k) {
           return k.kind == IndexItem::Kind::kArray && autograd::has_live_history(k.array);
         });
}

// Basic indexing of an array autograd records: _npx_slice (differentiable) and a reshape for the
// integer (dropped) and None (new) axes, both recorded.
NDArray recorded_getitem(const NDArray& a, const std::vector<IndexItem>& key) {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  int consumed = 0, ellipses = 0;
  for (const auto& it : key) {
    if (it.kind == IndexItem::Kind::kArray) {
      if (traced_index(key)) return traced_getitem_gather(a, key);
      return recorded_getitem_gather(a, key);
    }
    consumed += it.kind == IndexItem::Kind::kInt || it.kind == IndexItem::Kind::kSlice;
    ellipses += it.kind == IndexItem::Kind::kEllipsis;
  }
  if (ellipses > 1) index_error("an index can only have a single ellipsis ('...')");
  if (consumed > a.ndim())
    index_error("too many indices for array: array is ", a.ndim(), "-dimensional, but ", consumed,
                " were indexed");
  Shape begin = Shape::filled(a.ndim(), kNone), end = Shape::filled(a.ndim(), kNone),
        step = Shape::filled(a.ndim(), 1);
  // Per output dim: the sliced axis it comes from, or -1 for a new axis.
  std::vector<int> layout;
  int axis = 0;
  auto full = [&](int count) {
    for (int k = 0; k < count; ++k) layout.push_back(axis++);
  };
  for (const auto& it : key) {
    switch (it.kind) {
      case IndexItem::Kind::kNewAxis:
        layout.push_back(-1);
        break;
      case IndexItem::Kind::kEllipsis:
        full(a.ndim() - consumed);
        break;
      case IndexItem::Kind::kSlice:
        if (it.step == 0) value_error("[getitem] slice step cannot be zero");
        begin[axis] = it.start ? *it.start : kNone;
        end[axis] = it.stop ? *it.stop : kNone;
        step[axis] = it.step;
        layout.push_back(axis++);
        break;
      case IndexItem::Kind::kInt: {
        const int64_t n = a.shape()[axis], i = it.index;
        if (i < -n || i >= n)
          index_error("index ", i, " is out of bounds for axis ", axis, " with size ", n);
        // (a negative index stays one: x[:, -1] of a graph is the last column at any length)
        begin[axis] = i, end[axis] = i == -1 ? kNone : i + 1;
        ++axis;  // dropped from the result
        break;
      }
      case IndexItem::Kind::kArray:
        break;
    }
  }
  full(a.ndim() - axis);
  // A single element (integers on every axis, no `...`) is a copy, as NumPy's scalar and the
  // unrecorded x[1, 2]; anything else a view.
  const bool element = layout.empty() && ellipses == 0;
  // The slice as a view: every axis sliced (an integer index i as i:i+1), as _npx_slice reads.
  std::vector<IndexItem> slices;
  for (int k = 0; k < a.ndim(); ++k) {
    auto bound = [](int64_t v) { return v == kNone ? std::nullopt : std::optional<int64_t>(v); };
    slices.push_back(IndexItem::slice(bound(begin[k]), bound(end[k]), step[k]));
  }
  NDArray r = recorded_view(
      "_npx_slice", a, {{"begin", Value(begin)}, {"end", Value(end)}, {"step", Value(step)}},
      [&](const NDArray& x) { return getitem(x, slices); }, element);
  // The integer-indexed axes dropped (npx.reshape's codes: -2 copies a dim, -3 drops one of
  // length 1), then the new axes inserted one by one (expand_dims), rather than a reshape to
  // the shape this call has: a traced graph serves inputs of other lengths (x[:, None], x[:,
  // -1] of any batch).
  Shape codes = Shape::filled(r.ndim(), -3);
  Shape kept;
  for (int src : layout)
    if (src >= 0) codes[src] = -2, kept.push_back(r.shape()[src]);
  bool dropped = false;
  for (int64_t c : codes) dropped |= c == -3;
  if (dropped)
    r = recorded_view(
        "_npx_reshape", r, {{"newshape", Value(codes)}},
        [&](const NDArray& x) { return x.reshape_view(kept); }, element);
  for (size_t k = 0; k < layout.size(); ++k) {
    if (layout[k] >= 0) continue;
    std::vector<int64_t> dims = r.shape().to_vector();
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(k), 1);
    const Shape grown(dims);
    r = recorded_view("_np_expand_dims", r, {{"axis", Value(static_cast<int64_t>(k))}},
                      [&](const NDArray& x) { return x.reshape_view(grown); });
  }
  return r;
}

// Basic indexing (Python ints, slices, `...`, None, or a tuple of them) as one view, built
// without an index key; false for anything else or anything out of range, which the general
// path handles (and reports).
bool basic_view(const NDArray& a, PyObject* key, NDArray* out) {
  PyObject* const* items = &key;
  Py_ssize_t n = 1;
  if (PyTuple_CheckExact(key)) items = &PyTuple_GET_ITEM(key, 0), n = PyTuple_GET_SIZE(key);
  int consumed = 0, ellipses = 0;
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* it = items[k];
    if (it == Py_Ellipsis) {
      ++ellipses;
    } else if (PySlice_Check(it) || PyLong_CheckExact(it)) {
      ++consumed;
    } else if (it != Py_None) {
      return false;
    }
  }
  if (ellipses > 1 || consumed > a.ndim()) return false;
  Shape shape, strides;
  int64_t offset = a.byte_offset();
  const int64_t itemsize = a.itemsize();
  int axis = 0;
  auto keep = [&](int count) {
    for (int c = 0; c < count; ++c, ++axis) {
      shape.push_back(a.shape()[axis]);
      strides.push_back(a.strides()[axis]);
    }
  };
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* it = items[k];
    if (it == Py_None) {
      shape.push_back(1);
      strides.push_back(0);
    } else if (it == Py_Ellipsis) {
      keep(a.ndim() - consumed);
    } else if (PyLong_CheckExact(it)) {
      const int64_t len = a.shape()[axis];
      int overflow = 0;
      long long i = PyLong_AsLongLongAndOverflow(it, &overflow);
      if (overflow || i < -len || i >= len) return false;
      if (i < 0) i += len;
      offset += i * a.strides()[axis] * itemsize;
      ++axis;
    } else {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(it, &start, &stop, &step) < 0) {
        PyErr_Clear();
        return false;
      }
      const Py_ssize_t len = PySlice_AdjustIndices(a.shape()[axis], &start, &stop, step);
      if (len > 0) offset += start * a.strides()[axis] * itemsize;
      shape.push_back(len);
      // Two or more elements bound |step| by the axis length; otherwise the stride is unused
      // and a huge step must not overflow it.
      strides.push_back(len > 1 ? a.strides()[axis] * step : a.strides()[axis]);
      ++axis;
    }
  }
  keep(a.ndim() - axis);
  *out = a.view(offset, std::move(shape), std::move(strides), a.dtype());
  return true;
}

// An element as a new 0-d array: its bytes copied straight on the CPU (kernel::copy's
// iterator cost more than the rest of a[i]), through copy() on a GPU.
NDArray element_copy(const NDArray& v) {
  if (!v.device().is_cpu()) return v.copy();
  NDArray r(Shape{}, v.dtype());
  std::memcpy(r.raw_data(), v.raw_data(), static_cast<size_t>(v.itemsize()));
  return r;
}

bool has_ellipsis(PyObject* key) {
  if (key == Py_Ellipsis) return true;
  if (!PyTuple_Check(key)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); ++i)
    if (PyTuple_GET_ITEM(key, i) == Py_Ellipsis) return true;
  return false;
}

PyObject* getitem(PyObject* o, PyObject* key) {
  NDX_PY_BEGIN
  const NDArray& a = unwrap(o);
  if (recorded(a)) return wrap(recorded_getitem(a, index_key(key)));
  // An element (a 0-d result without an Ellipsis in the key) is a copy, as NumPy's scalar
  // is: `s = x[2]; s += 10` must leave x alone. Other basic results are views.
  if (PyLong_CheckExact(key)) {  // the common a[i]: a view without building a key
    long long i = PyLong_AsLongLong(key);
    if (!(i == -1 && PyErr_Occurred())) return wrap(a.ndim() == 1 ? element_copy(a[i]) : a[i]);
    PyErr_Clear();
  }
  NDArray view;
  if (basic_view(a, key, &view)) {
    if (view.ndim() == 0 && !has_ellipsis(key)) return wrap(element_copy(view));
    return wrap(std::move(view));
  }
  // NumPy integer scalars (a[np.int64(3)]) and other index kinds take the general path: an
  // element is a copy there too.
  std::vector<IndexItem> items = index_key(key);
  if (traced_index(items)) return wrap(traced_getitem_gather(a, items));  // (a constant table)
  NDArray r = ndx::getitem(a, items);
  if (r.ndim() == 0 && !has_ellipsis(key) && r.shares_storage_with(a)) r = element_copy(r);
  return wrap(std::move(r));
  NDX_PY_END(nullptr)
}

// A Python scalar NumPy refuses to store: NaN or infinity into integers (ValueError,
// OverflowError), a complex into a real array (TypeError). Arrays are cast as they are.
void check_scalar_fits(PyObject* value, DType t) {
  if (PyFloat_Check(value) && is_integer(t)) {
    const double v = PyFloat_AS_DOUBLE(value);
    if (std::isnan(v)) value_error("[setitem] cannot convert float NaN to integer (", t, ")");
    if (std::isinf(v))
      overflow_error("[setitem] cannot convert float infinity to integer (", t, ")");
  }
  if (PyComplex_Check(value) && !is_complex(t))
    type_error("[setitem] cannot store a complex value in an array of ", t,
               " (take .real, or use a complex array)");
}

// A complex array stored into a real one keeps the real parts, with NumPy's ComplexWarning
// (an error where warnings are: then nothing is written).
void warn_complex_to_real() {
  static PyObject* category = [] {
    PyObject* mod = PyImport_ImportModule("numpy.exceptions");
    PyObject* c = mod ? PyObject_GetAttrString(mod, "ComplexWarning") : nullptr;
    Py_XDECREF(mod);
    if (!c) PyErr_Clear();
    return c ? c : PyExc_RuntimeWarning;
  }();
  if (PyErr_WarnEx(category, "Casting complex values to real discards the imaginary part", 1) < 0)
    throw PythonErrorSet{};
}

int setitem(PyObject* o, PyObject* key, PyObject* value) {
  if (!value) {
    PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
    return -1;
  }
  NDX_PY_BEGIN
  NDArray& a = unwrap(o);
  a.check_writeable("setitem");
  // A NumPy scalar is stored as its Python value, as NumPy does (np.int64(300) into int8 is
  // an OverflowError, not a wrapped 44); 0-d NumPy arrays still cast.
  PyObject* item = nullptr;
  if (std::strncmp(Py_TYPE(value)->tp_name, "numpy.", 6) == 0 &&
      std::strcmp(Py_TYPE(value)->tp_name, "numpy.ndarray") != 0 &&
      PyObject_HasAttrString(value, "item")) {
    item = PyObject_CallMethod(value, "item", nullptr);
    if (!item) throw PythonErrorSet{};
    value = item;
  }
  struct Release {
    PyObject* p;
    ~Release() { Py_XDECREF(p); }
  } release{item};
  check_scalar_fits(value, a.dtype());
  NDArray src = operand_from_py(value, &a);
  if (is_complex(src.dtype()) && !is_complex(a.dtype())) {
    if (PyList_Check(value) || PyTuple_Check(value))  // Python complex numbers: NumPy's TypeError
      type_error("[setitem] cannot store complex values in an array of ", a.dtype(),
                 " (take their real parts, or use a complex array)");
    warn_complex_to_real();
  }
  if (recorded(a) || recorded(src)) {
    if (is_tracing())
      not_implemented("[setitem] assigning into an array while hybridize traces a block");
    const auto& entry = a.autograd_entry();
    if (entry && entry->is_leaf && entry->grad_req != kNullOp)
      value_error(
          "[setitem] cannot assign into an array with an attached gradient while autograd "
          "records (assign into a copy of it)");
    NDArray updated = recorded_setitem_update(a, index_key(key), src);
    if (recorded(a)) {
      a = std::move(updated);  // a's old data may be saved for backward: a new buffer
    } else {
      a.assign(updated);  // views of a see the write; a becomes the recorded result
      a.set_autograd_entry(updated.autograd_entry());
    }
    return 0;
  }
  std::vector<IndexItem> items = index_key(key);
  if (traced_index(items))  // (the positions would be the trace's, replayed on every run)
    not_implemented(
        "[setitem] assigning at positions computed from a hybridized block's inputs (use "
        "npx.index_update or np.where)");
  ndx::setitem(a, items, src);
  return 0;
  NDX_PY_END(-1)
}

Py_ssize_t length(PyObject* o) {
  const NDArray& a = unwrap(o);
  if (a.ndim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of unsized object");
    return -1;
  }
  return a.shape()[0];
}

PyObject* sq_item(PyObject* o, Py_ssize_t i) {
  NDX_PY_BEGIN
  const NDArray& a = unwrap(o);
  if (a.ndim() == 0) type_error("iteration over a 0-d array");
  if (recorded(a)) return wrap(recorded_getitem(a, {IndexItem::integer(i)}));
  return wrap(a[i]);
  NDX_PY_END(nullptr)
}

// ---- buffer protocol: NumPy reads ndx memory without a copy ----
const char* buffer_format(DType t) {
  switch (t) {
    case DType::kBool:
      return "?";
    case DType::kInt8:
      return "b";
    case DType::kInt16:
      return "h";
    case DType::kInt32:
      return "i";
    case DType::kInt64:
      return "q";
    case DType::kUInt8:
      return "B";
    case DType::kUInt16:
      return "H";
    case DType::kUInt32:
      return "I";
    case DType::kUInt64:
      return "Q";
    case DType::kFloat16:
      return "e";
    case DType::kFloat32:
      return "f";
    case DType::kFloat64:
      return "d";
    case DType::kComplex64:
      return "Zf";
    case DType::kComplex128:
      return "Zd";
    default:
      return nullptr;
  }
}

const char* interface_typestr(DType t) {
  static_assert(std::endian::native == std::endian::little, "typestrs below say '<'");
  switch (t) {
    case DType::kBool:
      return "|b1";
    case DType::kInt8:
      return "|i1";
    case DType::kInt16:
      return "<i2";
    case DType::kInt32:
      return "<i4";
    case DType::kInt64:
      return "<i8";
    case DType::kUInt8:
      return "|u1";
    case DType::kUInt16:
      return "<u2";
    case DType::kUInt32:
      return "<u4";
    case DType::kUInt64:
      return "<u8";
    case DType::kFloat16:
      return "<f2";
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kComplex64:
      return "<c8";
    case DType::kComplex128:
      return "<c16";
    default:
      return nullptr;
  }
}

int getbuffer(PyObject* o, Py_buffer* view, int flags) {
  const NDArray& a = unwrap(o);
  if (!a.device().is_cpu()) {
    PyErr_Format(PyExc_BufferError, "an array on %s has no host buffer; use asnumpy()",
                 a.device().str().c_str());
    return -1;
  }
  const char* fmt = buffer_format(a.dtype());
  if (!fmt) {
    PyErr_SetString(PyExc_BufferError, "bfloat16 arrays have no buffer format; use asnumpy()");
    return -1;
  }
  if ((flags & PyBUF_WRITABLE) && !a.writeable()) {
    PyErr_SetString(PyExc_BufferError, "the array is read-only: no writable buffer");
    return -1;
  }
  auto* dims =
      static_cast<Py_ssize_t*>(PyMem_Malloc(sizeof(Py_ssize_t) * 2 * std::max(a.ndim(), 1)));
  for (int i = 0; i < a.ndim(); ++i) {
    dims[i] = a.shape()[i];
    dims[a.ndim() + i] = a.strides()[i] * a.itemsize();
  }
  view->buf = a.raw_data();
  view->obj = o;
  Py_INCREF(o);
  view->len = a.nbytes();
  view->readonly = a.writeable() ? 0 : 1;  // NumPy's view of it is then read-only too
  view->itemsize = a.itemsize();
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(fmt) : nullptr;
  view->ndim = a.ndim();
  view->shape = dims;
  view->strides = dims + a.ndim();
  view->suboffsets = nullptr;
  view->internal = dims;
  return 0;
}
void releasebuffer(PyObject*, Py_buffer* view) { PyMem_Free(view->internal); }

// ---- methods ----
PyObject* numpy_module() {
  static PyObject* numpy = PyImport_ImportModule("numpy");
  return numpy;
}

PyObject* asnumpy(PyObject* o, PyObject*) {
  NDX_PY_BEGIN
  NDArray a = unwrap(o);
  if (a.device().is_gpu()) a = a.to(cpu());  // a host copy, then NumPy's copy of it
  if (a.dtype() == DType::kBFloat16) a = a.astype(DType::kFloat32);  // NumPy has no bfloat16
  PyObject* holder =
      is_ndarray(o) && a.shares_storage_with(unwrap(o)) ? (Py_INCREF(o), o) : wrap(a);
  PyObject* r = PyObject_CallMethod(numpy_module(), "array", "(O)", holder);
  Py_DECREF(holder);
  return r;
  NDX_PY_END(nullptr)
}

// NumPy 2's __array__: copy=True always copies; copy=None shares host memory where it can;
// copy=False shares or raises ValueError. The NumPy view is made from a memoryview of this
// array (the buffer protocol), so it keeps the ndx storage alive.
PyObject* array_method(PyObject* o, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"dtype", "copy", nullptr};
  PyObject *dtype = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", const_cast<char**>(names), &dtype,
                                   &copy))
    return nullptr;
  NDX_PY_BEGIN
  // -1: None (share when possible); 0: never copy; 1: always copy.
  const int want_copy = copy == Py_None ? -1 : PyObject_IsTrue(copy);
  if (want_copy == -1 && copy != Py_None) throw PythonErrorSet{};  // bool(copy) raised
  const NDArray& a = unwrap(o);
  const bool shareable = a.device().is_cpu() && buffer_format(a.dtype()) != nullptr;
  if (want_copy == 0 && !shareable)
    value_error("[__array__] unable to avoid a copy (copy=False): an array ",
                a.device().is_cpu() ? "of dtype bfloat16" : "on a GPU",
                " has no NumPy view; use copy=None or asnumpy()");
  PyObject* r;
  if (shareable && want_copy != 1) {
    PyObject* mv = PyMemoryView_FromObject(o);
    if (!mv) return nullptr;
    r = PyObject_CallMethod(numpy_module(), "asarray", "(O)", mv);
    Py_DECREF(mv);
  } else {
    r = asnumpy(o, nullptr);  // a new array
  }
  if (!r || dtype == Py_None) return r;
  PyObject* kw = Py_BuildValue("{s:O}", "copy", Py_False);
  PyObject* cast_args = Py_BuildValue("(O)", dtype);
  PyObject* astype = PyObject_GetAttrString(r, "astype");
  PyObject* cast = kw && cast_args && astype ? PyObject_Call(astype, cast_args, kw) : nullptr;
  Py_XDECREF(kw);
  Py_XDECREF(cast_args);
  Py_XDECREF(astype);
  if (cast && cast != r && want_copy == 0) {
    Py_DECREF(cast);
    Py_DECREF(r);
    value_error("[__array__] unable to avoid a copy (copy=False): converting ", a.dtype(),
                " to dtype ", repr_of(dtype), " copies");
  }
  Py_DECREF(r);
  return cast;
  NDX_PY_END(nullptr)
}

Device device_from_py(PyObject* o, const char* op) {
  return FieldTraits<Device>::from_value(value_from_py(o, op, "device"), {op, "device"});
}

// A copy on another device (the array itself when it is there already), as MXNet's
// as_in_context and the Array API's to_device.
PyObject* moved(PyObject* o, PyObject* device, const char* op) {
  Device d = device_from_py(device, op);
  const NDArray& a = unwrap(o);
  if (d == a.device()) {
    Py_INCREF(o);
    return o;
  }
  check_not_recorded(a, op);
  return wrap(a.to(d));
}

PyObject* to_device(PyObject* o, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"device", "stream", nullptr};
  PyObject *device, *stream = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$O:to_device", const_cast<char**>(names),
                                   &device, &stream))
    return nullptr;
  NDX_PY_BEGIN
  if (stream != Py_None) not_implemented("[to_device] the stream argument is not supported");
  return moved(o, device, "to_device");
  NDX_PY_END(nullptr)
}

PyObject* as_in_context(PyObject* o, PyObject* device) {
  NDX_PY_BEGIN
  return moved(o, device, "as_in_context");
  NDX_PY_END(nullptr)
}

// copyto(other): other's elements set from self (other's dtype and device), other returned;
// copyto(device): a copy on that device.
PyObject* copyto(PyObject* o, PyObject* other) {
  NDX_PY_BEGIN
  const NDArray& a = unwrap(o);
  if (is_ndarray(other)) {
    const NDArray& b = unwrap(other);
    if (b.shape() != a.shape())
      value_error("[copyto] the target has shape ", b.shape().str(), ", expected ",
                  a.shape().str());
    check_not_recorded(a, "copyto");
    if (recorded(b))
      not_implemented("[copyto] writing into an array autograd records is not supported (its ",
                      "values may be saved for backward): copy outside autograd.record()");
    b.assign(a);
    Py_INCREF(other);
    return other;
  }
  check_not_recorded(a, "copyto");
  return wrap(a.to(device_from_py(other, "copyto")));
  NDX_PY_END(nullptr)
}

// NumPy's astype(dtype, order='K', casting='unsafe', subok=True, copy=True). The copy is
// C-ordered whatever `order` says (ndx makes no Fortran-ordered arrays; the values are
// the same).
PyObject* astype(PyObject* o, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"dtype", "order", "casting", "subok", "copy", nullptr};
  PyObject* dtype;
  const char* order = "K";
  const char* casting = "unsafe";
  int subok = 1, copy = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|sspp:astype", const_cast<char**>(names), &dtype,
                                   &order, &casting, &subok, &copy))
    return nullptr;
  NDX_PY_BEGIN
  const std::string_view ord(order);
  if (ord != "C" && ord != "F" && ord != "A" && ord != "K")
    value_error("[astype] order must be one of 'C', 'F', 'A', 'K', got '", ord, "'");
  DType t = dtype_from_py(dtype);
  const Casting rule = casting_from_name(casting, "astype");
  if (!can_cast(unwrap(o).dtype(), t, rule))
    type_error("[astype] Cannot cast array data from dtype('", unwrap(o).dtype(), "') to dtype('",
               t, "') according to the rule '", casting, "'");
  if (recorded(unwrap(o)))  // a recorded conversion, so gradients flow back through it
    return wrap(run_op("_npi_astype", unwrap(o), {{"dtype", Value(t)}}));
  if (!copy && t == unwrap(o).dtype()) {
    Py_INCREF(o);
    return o;
  }
  return wrap(unwrap(o).astype(t));
  NDX_PY_END(nullptr)
}

// a.view(dtype): the same bytes read as another dtype. With another itemsize the last axis
// must be contiguous and its byte length a multiple of the new itemsize, as NumPy requires.
PyObject* view_method(PyObject* o, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"dtype", "type", nullptr};
  PyObject* dtype = Py_None;
  PyObject* type = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:view", const_cast<char**>(names), &dtype,
                                   &type))
    return nullptr;
  NDX_PY_BEGIN
  if (type != Py_None && !(PyType_Check(type) &&
                           PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type), ndarray_type)))
    type_error("[view] type must be ndx.numpy.ndarray or a subclass of it, got ",
               PyType_Check(type) ? reinterpret_cast<PyTypeObject*>(type)->tp_name
                                  : Py_TYPE(type)->tp_name);
  const NDArray& a = unwrap(o);
  NDArray v = retyped_view(a, dtype == Py_None ? a.dtype() : dtype_from_py(dtype), "view");
  if (type == Py_None || type == reinterpret_cast<PyObject*>(ndarray_type))
    return wrap(std::move(v));
  // A subclass (NumPy's view(type=...)): its own allocator, which tracks it for the collector
  // when the subclass has a __dict__ or slots (the base type is not tracked).
  auto* cls = reinterpret_cast<PyTypeObject*>(type);
  PyObject* r = cls->tp_alloc(cls, 0);
  if (!r) return nullptr;
  new (&as_py(r)->arr) NDArray(std::move(v));
  as_py(r)->weakrefs = nullptr;
  return r;
  NDX_PY_END(nullptr)
}

// The same bytes read as dtype t. With another itemsize the last axis must be contiguous and
// its byte length a multiple of the new itemsize, as NumPy requires.
NDArray retyped_view(const NDArray& a, DType t, const char* op) {
  const int64_t from = a.itemsize(), to = dtype_size(t);
  Shape shape = a.shape(), strides = a.strides();
  if (from != to) {
    if (a.ndim() == 0)
      value_error("[", op, "] changing the itemsize (", from, " to ", to,
                  " bytes) is not allowed for a 0-d array");
    const int last = a.ndim() - 1;
    if (shape[last] != 1 && strides[last] != 1)
      value_error("[", op, "] to change the itemsize (", from, " to ", to,
                  " bytes) the last axis must be contiguous");
    if ((shape[last] * from) % to != 0)
      value_error("[", op, "] the last axis holds ", shape[last] * from,
                  " bytes, not a multiple of the new itemsize ", to);
    if (a.byte_offset() % to != 0)
      value_error("[", op, "] the data does not start on a multiple of the new itemsize ", to);
    for (int i = 0; i < last; ++i) {
      if ((strides[i] * from) % to != 0)
        value_error("[", op, "] axis ", i, " has a byte stride of ", strides[i] * from,
                    ", not a multiple of the new itemsize ", to);
      strides[i] = strides[i] * from / to;
    }
    shape[last] = shape[last] * from / to;
    strides[last] = 1;
  }
  return a.view(a.byte_offset(), shape, strides, t);
}

// a._nonzero(): NumPy's nonzero, a tuple of int64 coordinate arrays (ndx::nonzero).
PyObject* nonzero_method(PyObject* o, PyObject*) {
  NDX_PY_BEGIN
  std::vector<NDArray> coords = nonzero(unwrap(o));
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(coords.size()));
  if (!t) return nullptr;
  for (size_t i = 0; i < coords.size(); ++i)
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), wrap(std::move(coords[i])));
  return t;
  NDX_PY_END(nullptr)
}

// a._become(b): a's handle now refers to b's data (in-place resize, unpickling).
PyObject* become(PyObject* o, PyObject* other) {
  NDX_PY_BEGIN
  if (!is_ndarray(other)) type_error("[_become] expected an ndarray");
  unwrap(o) = unwrap(other);
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

// a._complex_part(imag): the real (imag False) or imaginary part of a complex array as a view
// of its memory, as NumPy's a.real / a.imag: the part's dtype, strides twice as many of its
// elements, the imaginary part one element further.
PyObject* complex_part(PyObject* o, PyObject* imag) {
  NDX_PY_BEGIN
  const NDArray& a = unwrap(o);
  if (!is_complex(a.dtype()))
    type_error("[_complex_part] expected a complex array, got ", a.dtype());
  const DType part = real_dtype(a.dtype());
  Shape strides = a.strides();
  for (int i = 0; i < strides.ndim(); ++i) strides[i] *= 2;
  const int64_t offset = a.byte_offset() + (PyObject_IsTrue(imag) ? dtype_size(part) : 0);
  return wrap(a.view(offset, a.shape(), strides, part));
  NDX_PY_END(nullptr)
}

// a._as_strided(shape, strides): a view of a's memory with the given shape and strides (in
// bytes, as NumPy's), starting where a starts. NumPy trusts the caller; here every element the
// view can reach must lie inside a's storage, so a wrong stride raises instead of reading
// (or writing) another allocation.
PyObject* as_strided(PyObject* o, PyObject* args) {
  PyObject *shape_obj, *strides_obj;
  int writeable = 1;
  if (!PyArg_ParseTuple(args, "OO|p:_as_strided", &shape_obj, &strides_obj, &writeable))
    return nullptr;
  NDX_PY_BEGIN
  const NDArray& a = unwrap(o);
  const Shape shape = FieldTraits<Shape>::from_value(
      value_from_py(shape_obj, "as_strided", "shape"), {"as_strided", "shape"});
  const Shape byte_strides = FieldTraits<Shape>::from_value(
      value_from_py(strides_obj, "as_strided", "strides"), {"as_strided", "strides"});
  if (byte_strides.ndim() != shape.ndim())
    value_error("[as_strided] strides has ", byte_strides.ndim(), " entries for a shape of ",
                shape.ndim(), " axes");
  const int64_t item = a.itemsize();
  Shape strides = byte_strides;
  int64_t lowest = 0, highest = 0;  // bytes from the start, over every reachable element
  for (int i = 0; i < shape.ndim(); ++i) {
    if (shape[i] < 0) value_error("[as_strided] shape ", shape.str(), " has a negative length");
    if (byte_strides[i] % item != 0)
      value_error("[as_strided] stride ", byte_strides[i], " of axis ", i,
                  " is not a multiple of the itemsize ", item, " (ndx strides count elements)");
    strides[i] = byte_strides[i] / item;
  }
  bool empty = false;
  int64_t count = 1;
  for (int i = 0; i < shape.ndim(); ++i) {
    empty = empty || shape[i] == 0;
    if (!empty && __builtin_mul_overflow(count, shape[i], &count))
      value_error("[as_strided] shape ", shape.str(), " has too many elements");
  }
  for (int i = 0; i < shape.ndim() && !empty; ++i) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(shape[i] - 1, byte_strides[i], &reach) ||
        __builtin_add_overflow(reach > 0 ? highest : lowest, reach, reach > 0 ? &highest : &lowest))
      value_error("[as_strided] shape ", shape.str(), " with these strides overflows");
  }
  // The memory the view may reach: a's storage, or where its size is not known (memory
  // another library owns, wrapped without a length) the bytes a itself spans.
  int64_t begin = 0, end = static_cast<int64_t>(a.storage()->size());
  if (end == 0 && a.size() > 0) {
    begin = end = a.byte_offset();
    for (int i = 0; i < a.ndim(); ++i) {
      const int64_t reach = (a.shape()[i] - 1) * a.strides()[i] * item;
      (reach > 0 ? end : begin) += reach;
    }
    end += item;
  }
  if (!empty && (a.byte_offset() + lowest < begin || a.byte_offset() + highest + item > end))
    value_error("[as_strided] shape ", shape.str(), " with strides ", byte_strides.str(),
                " reaches bytes [", a.byte_offset() + lowest, ", ",
                a.byte_offset() + highest + item, ") of memory spanning [", begin, ", ", end,
                "); a view must stay inside its array's memory");
  NDArray v = a.view(a.byte_offset(), shape, strides, a.dtype());
  if (!writeable) v.set_writeable(false, /*lock=*/true);  // as NumPy's: for good
  return wrap(std::move(v));
  NDX_PY_END(nullptr)
}

// a._writeable(): NumPy's flags.writeable.
PyObject* writeable_method(PyObject* o, PyObject*) {
  return PyBool_FromLong(unwrap(o).writeable());
}

// a._owns_data(): NumPy's flags.owndata (the array allocated its memory; not a view).
PyObject* owns_data_method(PyObject* o, PyObject*) {
  return PyBool_FromLong(unwrap(o).owns_data());
}

// a._set_writeable(flag): NumPy's setflags(write=flag); a view of a read-only array cannot be
// made writeable (ValueError).
PyObject* set_writeable_method(PyObject* o, PyObject* flag) {
  NDX_PY_BEGIN
  const int on = PyObject_IsTrue(flag);
  if (on < 0) return nullptr;
  unwrap(o).set_writeable(on);
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

// a._broadcast_view(shape): np.broadcast_to's read-only view (the data is not repeated).
PyObject* broadcast_view(PyObject* o, PyObject* shape_obj) {
  NDX_PY_BEGIN
  const Shape shape = FieldTraits<Shape>::from_value(
      value_from_py(shape_obj, "broadcast_to", "shape"), {"broadcast_to", "shape"});
  NDArray v = unwrap(o).broadcast_to(shape);
  if (v.writeable()) v.set_writeable(false);
  return wrap(std::move(v));
  NDX_PY_END(nullptr)
}

// a.copy(order='C'): a C-contiguous copy; 'F' a column-major one; 'A' / 'K' column-major
// only when a is F-contiguous and not C-contiguous (NumPy's rule for a copy).
PyObject* copy_method(PyObject* o, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  NDX_PY_BEGIN
  const NDArray& a = unwrap(o);
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs == 0 && nkw == 0) return wrap(a.copy());
  if (nargs + nkw > 1 || (nkw == 1 && !PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0))))
    type_error("[copy] takes at most one argument, order");
  if (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "order") != 0)
    type_error("[copy] got an unexpected keyword argument ", repr_of(PyTuple_GET_ITEM(kwnames, 0)));
  PyObject* order = args[0];
  const char* o_str = PyUnicode_Check(order) ? PyUnicode_AsUTF8(order) : nullptr;
  if (!o_str) PyErr_Clear();
  const std::string ord = o_str ? o_str : (order == Py_None ? "K" : "?");
  if (ord != "C" && ord != "F" && ord != "A" && ord != "K")
    value_error("[copy] order must be one of 'C', 'F', 'A', 'K', got ", repr_of(order));
  bool fortran = ord == "F";
  if (ord == "A" || ord == "K") {  // F-contiguous and not C-contiguous: keep column-major
    const NDArray t = a.transpose();
    fortran = a.ndim() > 1 && !a.is_contiguous() && t.is_contiguous();
  }
  if (!fortran || a.ndim() < 2) return wrap(a.copy());
  return wrap(a.transpose().copy().transpose());
  NDX_PY_END(nullptr)
}

Shape shape_from_args(PyObject* args, const char* op) {
  PyObject* src = PyTuple_GET_SIZE(args) == 1 && !PyIndex_Check(PyTuple_GET_ITEM(args, 0))
                      ? PyTuple_GET_ITEM(args, 0)
                      : args;
  Value v = value_from_py(src, op, "shape");
  return FieldTraits<Shape>::from_value(v, {op, "shape"});
}

// Calls ndx.numpy._manipulation.<name>(*args, **kwargs): the orders other than C, which
// read the array through a transposed view, are written once there.
PyObject* call_manipulation(const char* name, PyObject* args, PyObject* kwargs) {
  PyObject* module = PyImport_ImportModule("ndx.numpy._manipulation");
  if (!module) return nullptr;
  PyObject* fn = PyObject_GetAttrString(module, name);
  Py_DECREF(module);
  if (!fn) return nullptr;
  PyObject* out = PyObject_Call(fn, args, kwargs);
  Py_DECREF(fn);
  return out;
}

// A tuple (self, *rest).
PyObject* prepend_self(PyObject* o, PyObject* rest) {
  const Py_ssize_t n = PyTuple_GET_SIZE(rest);
  PyObject* t = PyTuple_New(n + 1);
  if (!t) return nullptr;
  Py_INCREF(o);
  PyTuple_SET_ITEM(t, 0, o);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(rest, i);
    Py_INCREF(item);
    PyTuple_SET_ITEM(t, i + 1, item);
  }
  return t;
}

PyObject* reshape(PyObject* o, PyObject* args, PyObject* kwargs) {
  NDX_PY_BEGIN
  if (kwargs && PyDict_Size(kwargs) > 0) {
    PyObject* order = PyDict_GetItemString(kwargs, "order");
    const bool only_c_order = PyDict_Size(kwargs) == 1 && order && PyUnicode_Check(order) &&
                              PyUnicode_CompareWithASCIIString(order, "C") == 0;
    if (!only_c_order) {  // order F / A, copy=: np.reshape's (which checks the arguments)
      PyObject* shape = PyTuple_GET_SIZE(args) == 1 && !PyIndex_Check(PyTuple_GET_ITEM(args, 0))
                            ? PyTuple_GET_ITEM(args, 0)
                            : args;
      PyObject* call_args = PyTuple_Pack(2, o, shape);
      if (!call_args) return nullptr;
      PyObject* out = call_manipulation("reshape", call_args, kwargs);
      Py_DECREF(call_args);
      return out;
    }
  }
  return wrap(reshaped(unwrap(o), shape_from_args(args, "reshape")));
  NDX_PY_END(nullptr)
}

PyObject* transpose_method(PyObject* o, PyObject* args) {
  NDX_PY_BEGIN
  if (PyTuple_GET_SIZE(args) == 0 ||
      (PyTuple_GET_SIZE(args) == 1 && PyTuple_GET_ITEM(args, 0) == Py_None))
    return wrap(transposed(unwrap(o), std::nullopt));
  return wrap(transposed(unwrap(o), shape_from_args(args, "transpose")));
  NDX_PY_END(nullptr)
}

PyObject* flatten(PyObject* o, PyObject* args, PyObject* kwargs) {
  NDX_PY_BEGIN
  if (PyTuple_GET_SIZE(args) > 0 || (kwargs && PyDict_Size(kwargs) > 0)) {  // an order
    PyObject* call_args = prepend_self(o, args);
    if (!call_args) return nullptr;
    PyObject* out = call_manipulation("_flatten", call_args, kwargs);
    Py_DECREF(call_args);
    return out;
  }
  if (recorded(unwrap(o)))  // (a copy, as NumPy's flatten: the op's, not reshaped()'s view)
    return wrap(run_op("_np_reshape", unwrap(o), {{"newshape", Value(Shape{-1})}}));
  return wrap(unwrap(o).copy().reshape({-1}));
  NDX_PY_END(nullptr)
}

PyObject* item(PyObject* o, PyObject* args) {
  NDX_PY_BEGIN
  const NDArray& a = unwrap(o);
  if (PyTuple_GET_SIZE(args) == 0) {
    if (a.size() != 1) value_error("can only convert an array of size 1 to a Python scalar");
    return scalar_of(a);
  }
  if (PyTuple_GET_SIZE(args) == 1 && PyTuple_Check(PyTuple_GET_ITEM(args, 0)))
    args = PyTuple_GET_ITEM(args, 0);  // item((i, j)) is item(i, j)
  if (PyTuple_GET_SIZE(args) == 1 && PyIndex_Check(PyTuple_GET_ITEM(args, 0))) {
    int64_t flat;
    int overflow;
    if (!index_value(PyTuple_GET_ITEM(args, 0), &flat, &overflow))
      type_error("[item] the index must be an integer");
    if (overflow || flat < -a.size() || flat >= a.size())
      index_error("index ", repr_of(PyTuple_GET_ITEM(args, 0)), " is out of bounds for size ",
                  a.size());
    return scalar_of(a.reshape({-1})[flat]);
  }
  if (PyTuple_GET_SIZE(args) != a.ndim())
    value_error("[item] incorrect number of indices for array: ", PyTuple_GET_SIZE(args), " for ",
                a.ndim(), " dimensions");
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i)
    if (!PyIndex_Check(PyTuple_GET_ITEM(args, i)) || PyBool_Check(PyTuple_GET_ITEM(args, i)))
      type_error("[item] the indices must be integers, got ",
                 Py_TYPE(PyTuple_GET_ITEM(args, i))->tp_name);
  return scalar_of(ndx::getitem(a, index_key(args)));
  NDX_PY_END(nullptr)
}

// format(a, spec): a 0-d array formats as its Python scalar (f"{x:.2f}"); other arrays take
// only the empty spec (their str), as NumPy's.
PyObject* format_method(PyObject* o, PyObject* spec) {
  NDX_PY_BEGIN
  if (!PyUnicode_Check(spec))
    type_error("__format__() argument must be str, not ", Py_TYPE(spec)->tp_name);
  const NDArray& a = unwrap(o);
  if (a.ndim() == 0) {
    PyObject* v = scalar_of(a);
    if (!v) return nullptr;
    PyObject* r = PyObject_Format(v, spec);
    Py_DECREF(v);
    return r;
  }
  if (PyUnicode_GetLength(spec) == 0) return PyObject_Str(o);
  type_error("unsupported format string passed to ndarray.__format__");
  NDX_PY_END(nullptr)
}

PyObject* tolist(PyObject* o, PyObject*) {
  PyObject* arr = asnumpy(o, nullptr);
  if (!arr) return nullptr;
  PyObject* r = PyObject_CallMethod(arr, "tolist", nullptr);
  Py_DECREF(arr);
  return r;
}

PyObject* wait_to_read(PyObject*, PyObject*) { Py_RETURN_NONE; }  // the engine is synchronous

PyObject* repr(PyObject* o) {
  NDX_PY_BEGIN
  return PyUnicode_FromString(unwrap(o).repr().c_str());
  NDX_PY_END(nullptr)
}
PyObject* str(PyObject* o) {
  NDX_PY_BEGIN
  return PyUnicode_FromString(unwrap(o).str().c_str());
  NDX_PY_END(nullptr)
}

PyObject* attach_grad(PyObject* o, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"grad_req", "stype", nullptr};
  const char* req = "write";
  PyObject* stype = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|sO:attach_grad", const_cast<char**>(names), &req,
                                   &stype))
    return nullptr;
  NDX_PY_BEGIN
  std::string_view r(req);
  OpReqType t = r == "write"  ? kWriteTo
                : r == "add"  ? kAddTo
                : r == "null" ? kNullOp
                              : kWriteInplace;
  if (t == kWriteInplace)
    value_error("[attach_grad] grad_req must be 'write', 'add' or 'null', got '", r, "'");
  if (stype != Py_None) not_implemented("[attach_grad] sparse gradients (stype) are not supported");
  autograd::attach_grad(unwrap(o), t);
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

PyObject* backward_method(PyObject* o, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"out_grad", "retain_graph", "train_mode", nullptr};
  PyObject* out_grad = Py_None;
  int retain = 0, train = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Opp:backward", const_cast<char**>(names),
                                   &out_grad, &retain, &train))
    return nullptr;
  NDX_PY_BEGIN
  std::vector<NDArray> head_grads;
  if (out_grad != Py_None) head_grads.push_back(operand_from_py(out_grad, &unwrap(o)));
  bool prev = autograd::set_training(train);
  try {
    autograd::backward({unwrap(o)}, head_grads, retain);
  } catch (...) {
    autograd::set_training(prev);
    throw;
  }
  autograd::set_training(prev);
  Py_RETURN_NONE;
  NDX_PY_END(nullptr)
}

PyObject* detach_method(PyObject* o, PyObject*) {
  NDX_PY_BEGIN
  return wrap(autograd::detach(unwrap(o)));
  NDX_PY_END(nullptr)
}

PyMethodDef methods[] = {
    {"attach_grad", reinterpret_cast<PyCFunction>(attach_grad), METH_VARARGS | METH_KEYWORDS,
     "attach_grad(grad_req='write'): gradients of recorded computations flow into self.grad."},
    {"backward", reinterpret_cast<PyCFunction>(backward_method), METH_VARARGS | METH_KEYWORDS,
     "backward(out_grad=None, retain_graph=False, train_mode=True): back-propagates from self."},
    {"detach", detach_method, METH_NOARGS, "The same data without autograd history."},
    {"asnumpy", asnumpy, METH_NOARGS, "A NumPy copy of the array."},
    {"to_device", reinterpret_cast<PyCFunction>(to_device), METH_VARARGS | METH_KEYWORDS,
     "to_device(device): the array on `device` (itself when it is there already)."},
    {"as_in_context", as_in_context, METH_O,
     "as_in_context(device): the array on `device` (itself when it is there already)."},
    {"as_in_ctx", as_in_context, METH_O, "Alias of as_in_context."},
    {"copyto", copyto, METH_O,
     "copyto(other): copies into the ndarray `other` and returns it; copyto(device): a copy "
     "on that device."},
    {"__array__", reinterpret_cast<PyCFunction>(array_method), METH_VARARGS | METH_KEYWORDS,
     "__array__($self, /, dtype=None, copy=None)\n--\n\nThe array as a NumPy array. Host arrays "
     "are shared "
     "without a copy unless copy=True or dtype differs; copy=False raises ValueError when a "
     "copy is unavoidable (a dtype change, a GPU or bfloat16 array)."},
    {"__dlpack__", reinterpret_cast<PyCFunction>(dlpack_method), METH_VARARGS | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "The array as a DLPack capsule: 'dltensor_versioned' (DLPack 1.x) when max_version is "
     "(1, x) or later, else the legacy 'dltensor'. The memory is shared unless copy=True or "
     "dl_device names another device."},
    {"__dlpack_device__", dlpack_device_method, METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n(device_type, device_id) as DLPack numbers them: (1, 0) "
     "for the CPU, (2, id) for CUDA."},
    {"astype", reinterpret_cast<PyCFunction>(astype), METH_VARARGS | METH_KEYWORDS,
     "astype(dtype, copy=True): the array cast to dtype."},
    {"copy", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(copy_method)),
     METH_FASTCALL | METH_KEYWORDS,
     "copy(order='C'): a copy, C-contiguous ('F': column-major; 'A' / 'K': column-major when "
     "the array is)."},
    {"view", reinterpret_cast<PyCFunction>(view_method), METH_VARARGS | METH_KEYWORDS,
     "view(dtype=None, type=None): the same memory, read as dtype, as an instance of type (a\n"
     "subclass of ndarray) when given."},
    {"_become", become, METH_O, "_become(other): this handle now refers to other's data."},
    {"_complex_part", complex_part, METH_O,
     "_complex_part(imag): the real or imaginary part of a complex array, as a view."},
    {"_writeable", writeable_method, METH_NOARGS, "NumPy's flags.writeable."},
    {"_owns_data", owns_data_method, METH_NOARGS, "NumPy's flags.owndata."},
    {"_set_writeable", set_writeable_method, METH_O, "NumPy's setflags(write=flag)."},
    {"_broadcast_view", broadcast_view, METH_O,
     "_broadcast_view(shape): np.broadcast_to's read-only view."},
    {"_as_strided", as_strided, METH_VARARGS,
     "_as_strided(shape, strides): a view with strides in bytes (inside the array's memory)."},
    {"_nonzero", nonzero_method, METH_NOARGS, "NumPy's nonzero (np.nonzero wraps it)."},
    {"reshape", reinterpret_cast<PyCFunction>(reshape), METH_VARARGS | METH_KEYWORDS,
     "reshape(*shape, order='C', copy=None): a view when the strides allow one (as NumPy), else "
     "a copy; one -1 is inferred. order 'F' / 'A' and copy are np.reshape's."},
    {"transpose", transpose_method, METH_VARARGS, "transpose(*axes): a view with permuted axes."},
    {"flatten", reinterpret_cast<PyCFunction>(flatten), METH_VARARGS | METH_KEYWORDS,
     "flatten(order='C'): a 1-d copy, read in order C, F, A or K (NumPy's)."},
    {"item", item, METH_VARARGS, "item(*index): one element as a Python scalar."},
    {"__format__", format_method, METH_O, "format(a, spec): a 0-d array as its scalar."},
    {"tolist", tolist, METH_NOARGS, "Nested Python lists of the elements."},
    {"wait_to_read", wait_to_read, METH_NOARGS,
     "Waits for pending writes (ndx computes synchronously)."},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(PyArray, weakrefs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

}  // namespace

bool init_ndarray_type(PyObject* module) {
  g_bin_attrs = new NodeAttrs[kNumBinOps];
  try {
    for (int i = 0; i < kNumBinOps; ++i) g_bin_attrs[i] = Op::get(kBinOpNames[i])->make_attrs();
  } catch (const Error& e) {
    set_error(e);
    return false;
  }
  auto fn = [](auto f) { return reinterpret_cast<void*>(f); };
  PyType_Slot slots[] = {
      {Py_tp_dealloc, fn(dealloc)},
      {Py_tp_new, fn(tp_new)},
      {Py_tp_repr, fn(repr)},
      {Py_tp_str, fn(str)},
      {Py_tp_getset, getset},
      {Py_tp_methods, methods},
      {Py_tp_members, members},
      {Py_tp_hash, fn(PyObject_HashNotImplemented)},
      {Py_tp_richcompare, fn(richcompare)},
      {Py_tp_doc, const_cast<char*>("ndx.numpy.ndarray: an n-dimensional array on a device.")},
      {Py_nb_add, fn(nb_add)},
      {Py_nb_subtract, fn(nb_sub)},
      {Py_nb_multiply, fn(nb_mul)},
      {Py_nb_true_divide, fn(nb_div)},
      {Py_nb_floor_divide, fn(nb_floordiv)},
      {Py_nb_remainder, fn(nb_mod)},
      {Py_nb_power, fn(nb_pow)},
      {Py_nb_matrix_multiply, fn(nb_matmul)},
      {Py_nb_inplace_add, fn(nb_iadd)},
      {Py_nb_inplace_matrix_multiply, fn(nb_imatmul)},
      {Py_nb_inplace_subtract, fn(nb_isub)},
      {Py_nb_inplace_multiply, fn(nb_imul)},
      {Py_nb_inplace_true_divide, fn(nb_idiv)},
      {Py_nb_inplace_floor_divide, fn(nb_ifloordiv)},
      {Py_nb_inplace_remainder, fn(nb_imod)},
      {Py_nb_inplace_power, fn(nb_ipow)},
      {Py_nb_negative, fn(nb_neg)},
      {Py_nb_positive, fn(nb_pos)},
      {Py_nb_absolute, fn(nb_abs)},
      {Py_nb_invert, fn(nb_invert)},
      {Py_nb_and, fn(nb_and)},
      {Py_nb_or, fn(nb_or)},
      {Py_nb_xor, fn(nb_xor)},
      {Py_nb_lshift, fn(nb_lshift)},
      {Py_nb_rshift, fn(nb_rshift)},
      {Py_nb_inplace_and, fn(nb_iand)},
      {Py_nb_inplace_or, fn(nb_ior)},
      {Py_nb_inplace_xor, fn(nb_ixor)},
      {Py_nb_inplace_lshift, fn(nb_ilshift)},
      {Py_nb_inplace_rshift, fn(nb_irshift)},
      {Py_nb_bool, fn(nb_bool)},
      {Py_nb_int, fn(nb_int)},
      {Py_nb_float, fn(nb_float)},
      {Py_nb_index, fn(nb_index)},
      {Py_mp_length, fn(length)},
      {Py_mp_subscript, fn(getitem)},
      {Py_mp_ass_subscript, fn(setitem)},
      {Py_sq_length, fn(length)},
      {Py_sq_item, fn(sq_item)},
      {Py_bf_getbuffer, fn(getbuffer)},
      {Py_bf_releasebuffer, fn(releasebuffer)},
      {0, nullptr}};
  PyType_Spec spec = {"ndx.numpy.ndarray", sizeof(PyArray), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  auto* type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (!type) return false;
  ndarray_type = type;
  Py_INCREF(type);
  return PyModule_AddObject(module, "ndarray", reinterpret_cast<PyObject*>(type)) == 0;
}

}  // namespace ndx::py
