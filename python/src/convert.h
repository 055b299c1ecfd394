// Python <-> ndx conversions shared by the extension's files: the ndarray object layout,
// exceptions, dtypes and typed argument values.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ndx/ndarray.h"
#include "ndx/op.h"
#include "ndx/param.h"

namespace ndx::py {

// Not GC-tracked: an ndarray refers to no Python object the collector could see (a NumPy
// array it views is held by its Storage, out of a traversal's reach either way), and
// tracking cost every array a link, an unlink and a share of gen-0 collections.
// Python subclasses (with a __dict__) are tracked as usual by their own type.
struct PyArray {
  PyObject_HEAD NDArray arr;
  PyObject* weakrefs;
};

// PyGILState_Check without its thread-specific-storage lookup (about 50 instructions, a
// tenth of asarray's): the thread state that holds the GIL (3.11; on 3.12+ this thread's own,
// NULL while detached) is this thread's.
inline bool this_thread_holds_gil() {
#if PY_VERSION_HEX >= 0x030D0000
  const PyThreadState* t = PyThreadState_GetUnchecked();
#else
  const PyThreadState* t = _PyThreadState_UncheckedGet();
#endif
  return t && t->thread_id == PyThread_get_thread_ident();
}

extern PyTypeObject* ndarray_type;
bool is_ndarray(PyObject* o);
PyObject* wrap(NDArray a);  // new reference

// The memory of recently freed ndarray objects (exact type only), reused before asking
// Python's allocator, as CPython's own float and tuple free lists do: a malloc and free pair
// cost a small call as much as the rest of asarray. Touched only with the GIL held.
struct ArrayFreeList {
  static constexpr int kMax = 64;
  PyArray* items[kMax];
  int count = 0;
};
extern ArrayFreeList g_free_arrays;

// A new ndarray object whose NDArray is built in place from args, with no NDArray moves (the
// asarray hot path); a new reference, or nullptr with MemoryError set and args untouched.
template <class... Args>
PyObject* wrap_emplace(Args&&... args) {
  PyArray* self;
  if (g_free_arrays.count > 0) {
    self = g_free_arrays.items[--g_free_arrays.count];
    PyObject_Init(reinterpret_cast<PyObject*>(self), ndarray_type);  // holds the type again
  } else {
    self = PyObject_New(PyArray, ndarray_type);
    if (!self) return nullptr;
  }
  new (&self->arr) NDArray(std::forward<Args>(args)...);
  self->weakrefs = nullptr;
  return reinterpret_cast<PyObject*>(self);
}
inline NDArray& unwrap(PyObject* o) { return reinterpret_cast<PyArray*>(o)->arr; }

// Sets the Python exception matching an ndx::Error (ValueError, TypeError, ... subclasses of
// ndx.NDXError); returns nullptr for `return set_error(e);`.
PyObject* set_error(const Error& e);
void init_errors(PyObject* module);

// Thrown when a Python exception is already set and should reach the caller unchanged.
struct PythonErrorSet {};

// C++ exceptions become Python's: ndx's own by kind, allocation failures and containers sized
// past max_size() (std::length_error) as MemoryError, anything else as RuntimeError.
#define NDX_PY_BEGIN try {
#define NDX_PY_END(fail)                                              \
  }                                                                   \
  catch (const ::ndx::py::PythonErrorSet&) {                          \
    return fail;                                                      \
  }                                                                   \
  catch (const ::ndx::Error& e) {                                     \
    ::ndx::py::set_error(e);                                          \
    return fail;                                                      \
  }                                                                   \
  catch (const std::bad_alloc&) {                                     \
    PyErr_NoMemory();                                                 \
    return fail;                                                      \
  }                                                                   \
  catch (const std::length_error& e) {                                \
    PyErr_SetString(PyExc_MemoryError, e.what());                     \
    return fail;                                                      \
  }                                                                   \
  catch (const std::exception& e) {                                   \
    PyErr_SetString(PyExc_RuntimeError, e.what());                    \
    return fail;                                                      \
  }                                                                   \
  catch (...) { /* nothing may unwind into CPython */                 \
    PyErr_SetString(PyExc_SystemError, "ndx: unknown C++ exception"); \
    return fail;                                                      \
  }

// dtypes: NumPy dtype objects out (bfloat16 as the string 'bfloat16'); anything NumPy accepts in.
PyObject* dtype_to_py(DType t);    // new reference
DType dtype_from_py(PyObject* o);  // raises ndx TypeError when not understood
void init_dtypes();

// The UTF-8 text of a str; a str that has none (a lone surrogate) raises Python's
// UnicodeEncodeError (a ValueError) instead of handing on a null pointer.
const char* utf8_of(PyObject* str);

// repr(o) for error messages; never leaves an error pending ("<unprintable>" if repr fails).
std::string repr_of(PyObject* o);
// Python integers (and objects with __index__) as int64 without leaving an error pending:
// false when `o` has no __index__; `*overflow` is +1 / -1 when the value passes int64's range,
// in which case `*out` is saturated to the nearest bound (as Python's slices clamp).
bool index_value(PyObject* o, int64_t* out, int* overflow);

// A Python value as a typed FFI value (ints, floats, bools, None, str, tuples/lists of ints,
// dtypes, devices). `keep` holds temporaries whose lifetime must cover the call.
Value value_from_py(PyObject* o, std::string_view op, std::string_view field);

// A Python operand as an NDArray: ndarrays as they are; Python scalars as weak scalars
// (NEP 50) against `like`; anything else through NumPy (strong dtype).
// `widen_ints`: a Python int out of range for `like`'s integer dtype becomes an int64 (strong)
// operand, as NumPy does for comparisons and true_divide; otherwise it is an OverflowError.
NDArray operand_from_py(PyObject* o, const NDArray* like, bool widen_ints = false);
// Operands of one op call with NEP 50's weak Python scalars: a scalar takes the arrays'
// dtype unless its kind is higher (a float with int arrays), in which case the arrays are cast
// to the dtype the scalar lifts them to (the default float), as NumPy computes in that dtype.
// float64_loop: the op computes in float64 whatever its inputs (float_power), so Python floats
// (and the arrays beside them) are made float64 rather than rounded to the default float.
std::vector<NDArray> operands_from_py(PyObject* const* objs, Py_ssize_t n, bool widen_ints = false,
                                      bool float64_loop = false);

// While autograd records an array that needs gradients, views and casts must be recorded ops
// too, or the gradient stops at them.
bool recorded(const NDArray& a);
// a.astype(t), as a recorded op where recorded(a).
NDArray cast_for_autograd(const NDArray& a, DType t);
// An NDArray copied from an object exposing the buffer protocol (NumPy arrays).
NDArray array_from_buffer(PyObject* o);
// An NDArray sharing a writable buffer's memory (NumPy arrays); undefined when the buffer is
// read-only or of a dtype or layout ndx cannot view.
NDArray array_view_of_buffer(PyObject* o);

// np.zeros / ones / empty / full / array / asarray as C functions (creation.cc).
bool init_creation(PyObject* module);

}  // namespace ndx::py
