// Interchange with other array libraries: DLPack export (ndarray.__dlpack__ and
// __dlpack_device__) and import (np.from_dlpack's capsule consumer), and the memory-overlap
// test behind np.shares_memory / np.may_share_memory.
#include "interop.h"  // Python.h first

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "dlpack.h"
#include "ndx/pinned.h"
#include "ndx/runtime.h"

namespace ndx::py {
namespace {

using dlpack::DLDataType;
using dlpack::DLDevice;
using dlpack::DLManagedTensor;
using dlpack::DLManagedTensorVersioned;
using dlpack::DLTensor;

// Python's BufferError, which the DLPack protocol names for every "cannot export / import
// this" case; ndx's C++ errors have no such kind.
template <typename... Parts>
[[noreturn]] void buffer_error(Parts&&... parts) {
  PyErr_SetString(PyExc_BufferError, detail::concat(std::forward<Parts>(parts)...).c_str());
  throw PythonErrorSet{};
}

// copy= of the protocol: None, True or False (nothing else, so a typo is not read as True).
std::optional<bool> copy_flag(PyObject* o, const char* fn) {
  if (o == Py_None) return std::nullopt;
  if (!PyBool_Check(o)) type_error("[", fn, "] copy must be None, True or False, got ", repr_of(o));
  return o == Py_True;
}

// ---- dtypes and devices ----
bool dl_dtype_of(DType t, DLDataType* out) {
  const uint8_t bits = static_cast<uint8_t>(8 * dtype_size(t));
  uint8_t code;
  switch (t) {
    case DType::kBool:
      code = dlpack::kDLBool;
      break;
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
      code = dlpack::kDLInt;
      break;
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      code = dlpack::kDLUInt;
      break;
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      code = dlpack::kDLFloat;
      break;
    case DType::kBFloat16:
      code = dlpack::kDLBfloat;
      break;
    case DType::kComplex64:
    case DType::kComplex128:
      code = dlpack::kDLComplex;
      break;
    default:
      return false;
  }
  *out = DLDataType{code, bits, 1};
  return true;
}

DType dtype_of_dl(const DLDataType& d) {
  auto pick = [&](std::initializer_list<DType> candidates) {
    for (DType t : candidates)
      if (8 * dtype_size(t) == d.bits) return t;
    return DType::kUnknown;
  };
  DType t = DType::kUnknown;
  if (d.lanes == 1) {
    switch (d.code) {
      case dlpack::kDLBool:
        t = d.bits == 8 ? DType::kBool : DType::kUnknown;
        break;
      case dlpack::kDLInt:
        t = pick({DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64});
        break;
      case dlpack::kDLUInt:
        t = pick({DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64});
        break;
      case dlpack::kDLFloat:
        t = pick({DType::kFloat16, DType::kFloat32, DType::kFloat64});
        break;
      case dlpack::kDLBfloat:
        t = d.bits == 16 ? DType::kBFloat16 : DType::kUnknown;
        break;
      case dlpack::kDLComplex:
        t = pick({DType::kComplex64, DType::kComplex128});
        break;
      default:
        break;
    }
  }
  if (t == DType::kUnknown)
    buffer_error("[from_dlpack] unsupported DLPack dtype (code ", int(d.code), ", bits ",
                 int(d.bits), ", lanes ", d.lanes,
                 "); ndx reads bool, int8-64, uint8-64, float16/32/64, bfloat16 and "
                 "complex64/128 with one lane");
  return t;
}

DLDevice dl_device_of(Device d) {
  if (d.is_gpu()) return DLDevice{dlpack::kDLCUDA, d.id};
  return DLDevice{dlpack::kDLCPU, 0};
}

// The ndx device that memory on a DLPack device can be read from; BufferError when none.
Device device_of_dl(const DLDevice& d, const char* fn) {
  switch (d.device_type) {
    case dlpack::kDLCPU:
    case dlpack::kDLCUDAHost:     // pinned host memory
    case dlpack::kDLCUDAManaged:  // unified memory, host-addressable
      return cpu();
    case dlpack::kDLCUDA:
      if (d.device_id < 0 || d.device_id >= num_gpus())
        buffer_error("[", fn, "] the tensor is on CUDA device ", d.device_id, ", but ndx can use ",
                     num_gpus(), " GPU(s)");
      return gpu(d.device_id);
    default:
      buffer_error("[", fn, "] unsupported DLPack device type ", int(d.device_type),
                   " (ndx reads kDLCPU=1, kDLCUDA=2, kDLCUDAHost=3 and kDLCUDAManaged=13)");
  }
}

// A (device_type, device_id) pair from Python, as __dlpack_device__ returns it.
DLDevice dl_device_from_py(PyObject* o, const char* fn) {
  PyObject* fast = PySequence_Check(o) ? PySequence_Fast(o, "") : nullptr;
  if (!fast) PyErr_Clear();
  if (!fast || PySequence_Fast_GET_SIZE(fast) != 2) {
    Py_XDECREF(fast);
    type_error("[", fn, "] dl_device must be a (device_type, device_id) pair, got ", repr_of(o));
  }
  int64_t v[2];
  for (int i = 0; i < 2; ++i) {
    int overflow = 0;
    if (!index_value(PySequence_Fast_GET_ITEM(fast, i), &v[i], &overflow) || overflow ||
        v[i] < INT32_MIN || v[i] > INT32_MAX) {
      Py_DECREF(fast);
      type_error("[", fn, "] dl_device must be a pair of integers, got ", repr_of(o));
    }
  }
  Py_DECREF(fast);
  return DLDevice{static_cast<dlpack::DLDeviceType>(v[0]), static_cast<int32_t>(v[1])};
}

// ---- export ----
// What a capsule owns: a data-only handle on the array (which keeps its storage alive), the
// shape and strides the DLTensor points into, and the managed struct itself.
struct Exported {
  NDArray array;
  std::vector<int64_t> dims;  // shape, then strides (in elements)
  DLManagedTensorVersioned versioned{};
  DLManagedTensor legacy{};
};

// Deleters run wherever the consumer lets go, perhaps on another thread without the GIL;
// they touch no Python object (a storage wrapping foreign memory calls that producer's
// deleter, which takes what it needs).
void delete_versioned(DLManagedTensorVersioned* self) {
  delete static_cast<Exported*>(self->manager_ctx);
}
void delete_legacy(DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); }

// A capsule's destructor frees the tensor only while nobody took it: a consumer renames the
// capsule ("used_...") and calls the deleter itself when done.
void destroy_versioned_capsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, dlpack::kVersionedName)) return;
  auto* m =
      static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, dlpack::kVersionedName));
  if (m && m->deleter) m->deleter(m);
}
void destroy_legacy_capsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, dlpack::kLegacyName)) return;
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, dlpack::kLegacyName));
  if (m && m->deleter) m->deleter(m);
}

// max_version: None or a major below 1 asks for the legacy struct; otherwise the versioned
// one, at the highest 1.x minor both sides know.
bool wants_versioned(PyObject* max_version, uint32_t* minor) {
  if (max_version == Py_None) return false;
  PyObject* fast = PyTuple_Check(max_version) ? PySequence_Fast(max_version, "") : nullptr;
  int64_t v[2] = {0, 0};
  bool ok = fast && PySequence_Fast_GET_SIZE(fast) == 2;
  for (int i = 0; ok && i < 2; ++i) {
    int overflow = 0;
    ok = index_value(PySequence_Fast_GET_ITEM(fast, i), &v[i], &overflow) && !overflow;
  }
  Py_XDECREF(fast);
  if (!ok)
    type_error("[__dlpack__] max_version must be None or a (major, minor) tuple of ints, got ",
               repr_of(max_version));
  if (v[0] < 1) return false;
  *minor = v[0] == 1 ? static_cast<uint32_t>(std::clamp<int64_t>(v[1], 0, dlpack::kMinorVersion))
                     : dlpack::kMinorVersion;
  return true;
}

// Makes the exported data safe to read on the consumer's stream. ndx's GPU work runs on this
// thread's stream; waiting for it covers every stream the consumer may name.
void sync_for_stream(PyObject* stream, Device d) {
  if (d.is_cpu()) {
    if (stream != Py_None)
      value_error("[__dlpack__] stream must be None for an array on the CPU, got ",
                  repr_of(stream));
    return;
  }
  int64_t s = 0;
  int overflow = 0;
  if (stream != Py_None) {
    if (!index_value(stream, &s, &overflow) || overflow)
      type_error("[__dlpack__] stream must be None or an int (a CUDA stream), got ",
                 repr_of(stream));
    if (s == 0 || s < -1)
      value_error("[__dlpack__] stream ", s,
                  " is not allowed for CUDA (None, -1, 1, 2 or a stream handle)");
    if (s == -1) return;  // the consumer asks for no synchronization
  }
  synchronize(d);
}

// ---- import ----
void release_versioned(void* p) {
  auto* m = static_cast<DLManagedTensorVersioned*>(p);
  if (m->deleter) m->deleter(m);
}
void release_legacy(void* p) {
  auto* m = static_cast<DLManagedTensor*>(p);
  if (m->deleter) m->deleter(m);
}

// Calls the producer's deleter when the import ends without handing the tensor to a storage.
struct DeleterGuard {
  void (*release)(void*);
  void* managed;
  ~DeleterGuard() {
    if (managed) release(managed);
  }
};

// _from_dlpack(capsule, copy=None): an ndarray over a DLPack capsule's tensor. The capsule is
// consumed (renamed "used_..."); the tensor's memory is viewed without a copy, its deleter
// running when the last ndx array over it dies. copy=True copies (unless the producer says it
// copied already); read-only memory is copied (ndx arrays are writable), or BufferError with
// copy=False.
PyObject* from_dlpack_capsule(PyObject*, PyObject* args) {
  PyObject *capsule, *copy = Py_None;
  if (!PyArg_ParseTuple(args, "O|O:_from_dlpack", &capsule, &copy)) return nullptr;
  NDX_PY_BEGIN
  const std::optional<bool> want_copy = copy_flag(copy, "from_dlpack");
  if (!PyCapsule_CheckExact(capsule))
    type_error("[from_dlpack] expected a DLPack capsule or an object with __dlpack__, got ",
               Py_TYPE(capsule)->tp_name);
  const char* name = PyCapsule_GetName(capsule);
  if (!name) PyErr_Clear();
  const std::string_view n = name ? name : "";
  if (n == dlpack::kLegacyUsedName || n == dlpack::kVersionedUsedName)
    buffer_error(
        "[from_dlpack] the DLPack capsule was consumed already (a capsule can be "
        "imported once)");
  if (n != dlpack::kLegacyName && n != dlpack::kVersionedName)
    type_error("[from_dlpack] expected a capsule named 'dltensor' or 'dltensor_versioned', got ",
               name ? "'" + std::string(n) + "'" : std::string("an unnamed capsule"));
  const bool versioned = n == dlpack::kVersionedName;
  void* managed = PyCapsule_GetPointer(capsule, name);
  if (!managed) throw PythonErrorSet{};
  const DLTensor* t;
  uint64_t flags = 0;
  bool ours;
  if (versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(managed);
    // Another major version may lay the struct out differently: read nothing else. The
    // capsule stays unconsumed, so its destructor frees the tensor.
    if (m->version.major != dlpack::kMajorVersion)
      buffer_error("[from_dlpack] unsupported DLPack version ", m->version.major, ".",
                   m->version.minor, "; ndx reads major version ", dlpack::kMajorVersion);
    flags = m->flags;
    t = &m->dl_tensor;
    ours = m->deleter == delete_versioned;
  } else {
    auto* m = static_cast<DLManagedTensor*>(managed);
    t = &m->dl_tensor;
    ours = m->deleter == delete_legacy;
  }
  // Everything is checked before the capsule is taken, so a failure leaves it to its owner.
  const Device device = device_of_dl(t->device, "from_dlpack");
  const DType dtype = dtype_of_dl(t->dtype);
  if (t->ndim < 0 || t->ndim > Shape::kMaxDims)
    buffer_error("[from_dlpack] the tensor has ndim ", t->ndim, "; ndx supports 0 to ",
                 Shape::kMaxDims);
  const int64_t itemsize = dtype_size(dtype);
  Shape shape, strides;
  int64_t size = 1;
  for (int i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0)
      buffer_error("[from_dlpack] the tensor's shape has a negative dim ", t->shape[i]);
    shape.push_back(t->shape[i]);
    size *= t->shape[i];
  }
  if (t->strides) {
    for (int i = 0; i < t->ndim; ++i) strides.push_back(t->strides[i]);
  } else {  // legacy producers may leave it null: compact row-major
    strides = Shape::filled(t->ndim, 1);
    for (int i = t->ndim - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  }
  char* first = static_cast<char*>(t->data) + t->byte_offset;
  const int64_t align = std::min<int64_t>(is_complex(dtype) ? itemsize / 2 : itemsize, 8);
  if (size > 0 && reinterpret_cast<uintptr_t>(first) % align != 0)
    buffer_error("[from_dlpack] the tensor's data is not aligned to ", align, " bytes");
  if (size > 0 && device.is_gpu() && !is_gpu_memory(first, device.id))
    buffer_error("[from_dlpack] the tensor claims CUDA device ", device.id,
                 ", but its data pointer is not memory of that GPU");
  const bool read_only = flags & dlpack::kFlagReadOnly;
  if (read_only && want_copy == false)
    buffer_error(
        "[from_dlpack] the producer's memory is read-only and ndx arrays are "
        "writable: a copy is needed, but copy=False");
  const bool must_copy = read_only || (want_copy == true && !(flags & dlpack::kFlagIsCopied));

  if (PyCapsule_SetName(capsule,
                        versioned ? dlpack::kVersionedUsedName : dlpack::kLegacyUsedName) != 0)
    throw PythonErrorSet{};
  DeleterGuard guard{versioned ? release_versioned : release_legacy, managed};
  NDArray view;
  if (ours) {  // an ndx array coming back: the same storage, so views of it share memory
    const auto* ctx = static_cast<const Exported*>(
        versioned ? static_cast<DLManagedTensorVersioned*>(managed)->manager_ctx
                  : static_cast<DLManagedTensor*>(managed)->manager_ctx);
    view = ctx->array;
  } else if (size == 0) {
    view = NDArray(shape, dtype, device);
  } else {
    // The storage spans the bytes the strides reach, from the lowest address.
    int64_t lo = 0, hi = 0;
    for (int i = 0; i < t->ndim; ++i) {
      const int64_t reach = (shape[i] - 1) * strides[i];
      (reach < 0 ? lo : hi) += reach;
    }
    auto storage = Storage::wrap(first + lo * itemsize, (hi - lo + 1) * itemsize, device,
                                 guard.release, managed);
    guard.managed = nullptr;  // the storage calls the deleter now
    view = NDArray(std::move(storage), -lo * itemsize, shape, strides, dtype);
  }
  if (must_copy) view = view.copy();
  return wrap(std::move(view));
  NDX_PY_END(nullptr)
}

// ---- memory overlap ----
// The bytes an array can reach: device, the address of its element 0, itemsize, and its
// dims as (extent, byte stride) pairs.
struct Layout {
  Device device;
  intptr_t first = 0;
  int64_t itemsize = 0;
  int64_t size = 0;
  std::vector<std::pair<int64_t, int64_t>> dims;
};

// ndx arrays, and objects exporting a buffer (NumPy arrays, memoryviews); false otherwise.
bool layout_of(PyObject* o, Layout* l) {
  if (is_ndarray(o)) {
    const NDArray& a = unwrap(o);
    l->device = a.device();
    l->first = reinterpret_cast<intptr_t>(a.raw_data());
    l->itemsize = a.itemsize();
    l->size = a.size();
    for (int i = 0; i < a.ndim(); ++i)
      l->dims.emplace_back(a.shape()[i], a.strides()[i] * a.itemsize());
    return true;
  }
  // bytes are no array memory to NumPy (np.asarray(b"..") makes a new array); str has none.
  if (PyBytes_Check(o) || !PyObject_CheckBuffer(o)) return false;
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return false;
  }
  l->device = cpu();
  l->first = reinterpret_cast<intptr_t>(view.buf);
  l->itemsize = view.itemsize;
  l->size = 1;
  for (int i = 0; i < view.ndim; ++i) {
    l->dims.emplace_back(view.shape[i], view.strides ? view.strides[i] : 0);
    l->size *= view.shape[i];
  }
  if (!view.strides) {  // C-contiguous
    int64_t s = view.itemsize;
    for (int i = view.ndim - 1; i >= 0; --i) {
      l->dims[i].second = s;
      s *= view.shape[i];
    }
  }
  PyBuffer_Release(&view);  // only addresses are kept; the caller holds the object
  return true;
}

// [lo, hi): the bytes an array reaches.
std::pair<intptr_t, intptr_t> extent(const Layout& l) {
  intptr_t lo = l.first, hi = l.first + l.itemsize;
  for (auto [n, s] : l.dims) (s < 0 ? lo : hi) += (n - 1) * s;
  return {lo, hi};
}

struct TooHard {};

// Whether sum(c[k] * x[k]) == target has a solution with 0 <= x[k] <= u[k], for c[k] > 0 in
// decreasing order. A depth-first search that visits only values of x[k] leaving a remainder
// that the later terms can both reach (by size) and express (by their gcd); `work` counts
// the values tried, against max_work when that is positive.
class BoundedSolver {
 public:
  BoundedSolver(std::vector<std::pair<int64_t, int64_t>> terms, int64_t max_work)
      : t_(std::move(terms)), max_work_(max_work) {
    const size_t n = t_.size();
    reach_.assign(n + 1, 0);
    gcd_.assign(n + 1, 0);
    for (size_t k = n; k-- > 0;) {
      reach_[k] = reach_[k + 1] + t_[k].first * t_[k].second;
      gcd_[k] = std::gcd(gcd_[k + 1], t_[k].first);
    }
  }
  bool solve(int64_t target) { return search(0, target); }

 private:
  bool search(size_t k, int64_t r) {
    if (r < 0 || r > reach_[k]) return false;
    if (k == t_.size()) return r == 0;
    if (r % gcd_[k] != 0) return false;
    const auto [c, u] = t_[k];
    const int64_t g = gcd_[k + 1];
    if (g == 0) return r % c == 0 && r / c <= u;
    // x must leave r - c x within the later terms' reach ...
    int64_t lo = std::max<int64_t>(0, (r - reach_[k + 1] + c - 1) / c);
    int64_t hi = std::min(u, r / c);
    if (lo > hi) return false;
    // ... and divisible by their gcd: c x == r (mod g) fixes x modulo g / gcd(c, g).
    const int64_t d = std::gcd(c, g), m = g / d;
    int64_t x0 = 0;
    if (m > 1) x0 = mul_mod(mod(r / d, m), inverse(mod(c / d, m), m), m);
    for (int64_t x = hi - mod(hi - x0, m); x >= lo; x -= m) {
      if (max_work_ > 0 && ++work_ > max_work_) throw TooHard{};
      if (search(k + 1, r - c * x)) return true;
    }
    return false;
  }
  static int64_t mod(int64_t a, int64_t m) { return ((a % m) + m) % m; }
  static int64_t mul_mod(int64_t a, int64_t b, int64_t m) {
    return static_cast<int64_t>(static_cast<__int128>(a) * b % m);
  }
  static int64_t inverse(int64_t a, int64_t m) {  // a and m coprime
    int64_t g0 = m, g1 = a, x0 = 0, x1 = 1;
    while (g1 != 0) {
      const int64_t q = g0 / g1;
      std::tie(g0, g1) = std::make_pair(g1, g0 - q * g1);
      std::tie(x0, x1) = std::make_pair(x1, x0 - q * x1);
    }
    return mod(x0, m);
  }

  std::vector<std::pair<int64_t, int64_t>> t_;  // (coefficient, bound), coefficients > 0
  std::vector<int64_t> reach_, gcd_;
  int64_t max_work_;
  int64_t work_ = 0;
};

// 1 when a and b share a byte, 0 when not, -1 when deciding exceeded max_work. max_work 0
// compares the extents only (overlapping extents are undecided: -1, as NumPy's); -1 decides
// exactly without a limit.
int overlap(const Layout& a, const Layout& b, int64_t max_work) {
  if (a.size == 0 || b.size == 0 || a.device != b.device) return 0;
  const auto [lo_a, hi_a] = extent(a);
  const auto [lo_b, hi_b] = extent(b);
  if (lo_a >= hi_b || lo_b >= hi_a) return 0;
  if (max_work == 0) return -1;  // the extents overlap: undecided without a search
  // An element of a at lo_a + sum |s| x + u (u < itemsize) meets one of b at
  // lo_b + sum |t| y + v: with y' = bound - y and v' = itemsize_b - 1 - v every term is
  // positive, sum |s| x + u + sum |t| y' + v' == lo_b - lo_a + sum |t| bound + itemsize_b - 1.
  std::vector<std::pair<int64_t, int64_t>> terms;
  int64_t target = static_cast<int64_t>(lo_b - lo_a) + b.itemsize - 1;
  auto add = [&](int64_t c, int64_t bound) {
    if (c != 0 && bound > 0) terms.emplace_back(c, bound);
  };
  for (auto [n, s] : a.dims) add(std::abs(s), n - 1);
  for (auto [n, s] : b.dims) {
    add(std::abs(s), n - 1);
    if (s != 0) target += std::abs(s) * (n - 1);
  }
  add(1, a.itemsize - 1);
  add(1, b.itemsize - 1);
  // Equal coefficients are one term with the summed bound; larger coefficients go first.
  std::sort(terms.begin(), terms.end(), std::greater<>());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (auto [c, u] : terms) {
    if (!merged.empty() && merged.back().first == c)
      merged.back().second += u;
    else
      merged.emplace_back(c, u);
  }
  try {
    return BoundedSolver(std::move(merged), max_work).solve(target) ? 1 : 0;
  } catch (const TooHard&) {
    return -1;
  }
}

// _memory_overlap(a, b, max_work): as overlap(); objects that are neither ndx arrays nor
// buffers (lists, scalars) share nothing with anything.
PyObject* memory_overlap(PyObject*, PyObject* args) {
  PyObject *a, *b;
  long long max_work;
  if (!PyArg_ParseTuple(args, "OOL:_memory_overlap", &a, &b, &max_work)) return nullptr;
  NDX_PY_BEGIN
  if (max_work < -1)
    value_error("[shares_memory] max_work must be -1, 0 or positive, got ", max_work);
  Layout la, lb;
  if (!layout_of(a, &la) || !layout_of(b, &lb)) return PyLong_FromLong(0);
  return PyLong_FromLong(overlap(la, lb, max_work));
  NDX_PY_END(nullptr)
}

PyMethodDef interop_functions[] = {
    {"_from_dlpack", from_dlpack_capsule, METH_VARARGS,
     "_from_dlpack(capsule, copy=None): an ndarray over a DLPack capsule's tensor."},
    {"_memory_overlap", memory_overlap, METH_VARARGS,
     "_memory_overlap(a, b, max_work): 1 if a and b share memory, 0 if not, -1 if deciding "
     "took more than max_work steps (0: extents only, -1 where they overlap; -1: no limit)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyObject* dlpack_method(PyObject* o, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"stream", "max_version", "dl_device", "copy", nullptr};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", const_cast<char**>(names),
                                   &stream, &max_version, &dl_device, &copy))
    return nullptr;
  NDX_PY_BEGIN
  const NDArray& a = unwrap(o);
  const std::optional<bool> want_copy = copy_flag(copy, "__dlpack__");
  uint32_t minor = 0;
  const bool versioned = wants_versioned(max_version, &minor);
  DLDataType dt;
  if (!dl_dtype_of(a.dtype(), &dt))
    buffer_error("[__dlpack__] dtype ", a.dtype(), " has no DLPack type code");
  Device target = a.device();
  if (dl_device != Py_None) {
    const DLDevice d = dl_device_from_py(dl_device, "__dlpack__");
    const DLDevice here = dl_device_of(a.device());
    if (d.device_type != here.device_type || d.device_id != here.device_id) {
      if (d.device_type != dlpack::kDLCPU || d.device_id != 0)
        buffer_error("[__dlpack__] cannot export an array on ", a.device(), " to DLPack device (",
                     int(d.device_type), ", ", d.device_id,
                     "); only the array's own device or the CPU (1, 0)");
      target = cpu();
    }
  }
  NDArray out = a;
  bool copied = false;
  if (target != a.device()) {
    if (want_copy == false)
      buffer_error("[__dlpack__] exporting an array on ", a.device(),
                   " to the CPU needs a copy, but copy=False");
    out = a.to(target);
    copied = true;
  } else if (want_copy == true) {
    out = a.copy();
    copied = true;
  }
  if (!copied && !versioned && !out.writeable())  // (as NumPy: the legacy struct has no flag)
    buffer_error(
        "[__dlpack__] a read-only array cannot be exported through the legacy DLPack "
        "struct, which cannot mark it read-only; ask for max_version=(1, 0) or "
        "copy=True");
  sync_for_stream(stream, target);

  auto ctx = std::make_unique<Exported>();
  // A data-only handle: the capsule keeps the storage alive, not autograd's graph.
  ctx->array = NDArray(out.storage(), out.byte_offset(), out.shape(), out.strides(), out.dtype());
  const int nd = out.ndim();
  ctx->dims.resize(2 * std::max(nd, 1));  // valid pointers even for a 0-d array
  for (int i = 0; i < nd; ++i) {
    ctx->dims[i] = out.shape()[i];
    ctx->dims[nd + i] = out.strides()[i];
  }
  DLTensor& t = versioned ? ctx->versioned.dl_tensor : ctx->legacy.dl_tensor;
  t.data = out.raw_data();
  t.device = dl_device_of(target);
  t.ndim = nd;
  t.dtype = dt;
  t.shape = ctx->dims.data();
  t.strides = ctx->dims.data() + nd;
  t.byte_offset = 0;
  PyObject* capsule;
  if (versioned) {
    DLManagedTensorVersioned* m = &ctx->versioned;
    m->version = {dlpack::kMajorVersion, minor};
    m->manager_ctx = ctx.get();
    m->deleter = delete_versioned;
    m->flags = (copied ? dlpack::kFlagIsCopied : 0) |
               (!copied && !a.writeable() ? dlpack::kFlagReadOnly : 0);
    capsule = PyCapsule_New(m, dlpack::kVersionedName, destroy_versioned_capsule);
  } else {
    DLManagedTensor* m = &ctx->legacy;
    m->manager_ctx = ctx.get();
    m->deleter = delete_legacy;
    capsule = PyCapsule_New(m, dlpack::kLegacyName, destroy_legacy_capsule);
  }
  if (capsule) ctx.release();  // owned by the capsule (or its consumer) now
  return capsule;
  NDX_PY_END(nullptr)
}

PyObject* dlpack_device_method(PyObject* o, PyObject*) {
  const DLDevice d = dl_device_of(unwrap(o).device());
  return Py_BuildValue("(ii)", static_cast<int>(d.device_type), static_cast<int>(d.device_id));
}

bool init_interop(PyObject* module) {
  return PyModule_AddFunctions(module, interop_functions) == 0;
}

}  // namespace ndx::py
