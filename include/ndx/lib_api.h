// lib_api.h: everything an operator library includes. Header-only; the library and ndx talk
// only through the plain-C structs and function pointers below (versioned by
// NDX_LIB_API_VERSION), so a library built against one ndx release loads in the next.
//
//   #include "ndx/lib_api.h"
//   int relu_forward(const ndx_lib::Attrs& attrs, const std::vector<ndx_lib::Tensor>& in,
//                    std::vector<ndx_lib::Tensor>& out, const std::vector<int>& req,
//                    const ndx_lib::OpResource& res) {...}
//   REGISTER_OP(my_relu).setForward(relu_forward, "cpu").setBackward(relu_backward, "cpu")
//       .setInferShape(same_shape).setInferType(same_type);
//
// Build it as a shared library (no CMake needed: ndx.library.compile does it) and load it
// with ndx.library.load(path).
#ifndef NDX_LIB_API_H_
#define NDX_LIB_API_H_

#include <stddef.h>
#include <stdint.h>

#define NDX_LIB_API_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

// dtype codes: ndx's DType enum values.
enum NDXLibDType {
  kNDXLibBool = 0,
  kNDXLibInt8,
  kNDXLibInt16,
  kNDXLibInt32,
  kNDXLibInt64,
  kNDXLibUInt8,
  kNDXLibUInt16,
  kNDXLibUInt32,
  kNDXLibUInt64,
  kNDXLibFloat16,
  kNDXLibBFloat16,
  kNDXLibFloat32,
  kNDXLibFloat64
};

typedef struct {
  void* data;  // contiguous, row-major
  const int64_t* shape;
  int32_t ndim;
  int32_t dtype;        // NDXLibDType
  int32_t device_type;  // 1 cpu, 2 gpu
  int32_t device_id;
} NDXLibTensor;

typedef struct {
  void* ctx;
  // Scratch memory valid during the call; null when the engine cannot allocate it (return
  // non-zero then: ndx raises its own MemoryError).
  void* (*alloc_temp)(void* ctx, size_t bytes);
  uint64_t (*next_random)(void* ctx);  // 64 random bits
  void* cuda_stream;                   // null on cpu
} NDXLibResource;

typedef struct {
  int32_t num;
  const char* const* keys;
  const char* const* values;
} NDXLibAttrs;

#define NDX_LIB_MAX_DIMS 16

// Every function returns 0 on success; on failure it returns non-zero and
// ndx_lib_last_error() describes the problem (ndx raises it as ValueError, naming the op and
// the function). No function may let an exception out: the C++ side below turns whatever an op
// throws, `throw 42` included, into such a failure.
typedef int (*NDXLibParseAttrs)(const NDXLibAttrs* attrs, int32_t* num_inputs,
                                int32_t* num_outputs);
// out_shapes: num_out rows of NDX_LIB_MAX_DIMS int64s, filled with out_ndims[i] dims each.
typedef int (*NDXLibInferShape)(const NDXLibAttrs* attrs, int32_t num_in,
                                const int64_t* const* in_shapes, const int32_t* in_ndims,
                                int32_t num_out, int64_t* out_shapes, int32_t* out_ndims);
typedef int (*NDXLibInferType)(const NDXLibAttrs* attrs, int32_t num_in, const int32_t* in_types,
                               int32_t num_out, int32_t* out_types);
// req per output: 0 null, 1 write, 2 inplace, 3 add.
typedef int (*NDXLibCompute)(const NDXLibAttrs* attrs, int32_t num_in, const NDXLibTensor* in,
                             int32_t num_out, NDXLibTensor* out, const int32_t* req,
                             const NDXLibResource* res);

// Stateful ops: the engine creates one state per use of the op (per node), passes it to every
// forward and backward of that use, and destroys it when the use goes away.
typedef int (*NDXLibCreateState)(const NDXLibAttrs* attrs, void** state);
typedef int (*NDXLibStateCompute)(void* state, int32_t num_in, const NDXLibTensor* in,
                                  int32_t num_out, NDXLibTensor* out, const int32_t* req,
                                  const NDXLibResource* res);
typedef void (*NDXLibDestroyState)(void* state);
// Inputs the op writes in place (e.g. running statistics): up to NDX_LIB_MAX_DIMS indices.
typedef int (*NDXLibMutateInputs)(const NDXLibAttrs* attrs, int32_t* num, int32_t* indices);

// Null pointers: a function marked optional may be null, and ndx does what its comment says.
typedef struct {
  const char* name;
  NDXLibParseAttrs parse_attrs;  // optional: 1 input, 1 output without it
  NDXLibInferShape infer_shape;  // required
  // optional: every output takes the dtype of the first input (float32 for an op without
  // inputs)
  NDXLibInferType infer_type;
  NDXLibCompute forward_cpu;  // required, unless forward_gpu or create_state is given
  // optional: (ograds..., inputs..., outputs...) -> input grads; without it (and without
  // state_backward) the op has no gradient
  NDXLibCompute backward_cpu;
  NDXLibCompute forward_gpu;   // optional
  NDXLibCompute backward_gpu;  // optional
  // optional: a stateful op (then forward_cpu may be null)
  NDXLibCreateState create_state;
  NDXLibStateCompute state_forward;   // required with create_state
  NDXLibStateCompute state_backward;  // optional
  NDXLibDestroyState destroy_state;   // required with create_state
  NDXLibMutateInputs mutate_inputs;   // optional: no input is written in place
} NDXLibOp;

#ifdef __cplusplus
}  // extern "C"
#endif

// ---------------------------------------------------------------------------------------------
// The C++ side for library authors: friendly types and REGISTER_OP, adapted to the C ABI above.
// (ndx itself includes only the C part, with NDX_LIB_C_ONLY.)
#if defined(__cplusplus) && !defined(NDX_LIB_C_ONLY)
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <vector>

namespace ndx_lib {

using Attrs = std::map<std::string, std::string>;

struct Tensor {
  void* data = nullptr;
  std::vector<int64_t> shape;
  int dtype = kNDXLibFloat32;
  int device_type = 1, device_id = 0;
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data);
  }
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

struct OpResource {
  const NDXLibResource* res;
  // Throws std::bad_alloc when the engine cannot allocate (ndx then raises MemoryError).
  void* alloc_temp(size_t bytes) const {
    void* p = res->alloc_temp(res->ctx, bytes);
    if (!p && bytes) throw std::bad_alloc();
    return p;
  }
  uint64_t next_random() const { return res->next_random(res->ctx); }
  void* cuda_stream() const { return res->cuda_stream; }
};

// Request types, as ndx's OpReqType.
enum Req { kNullOp = 0, kWriteTo = 1, kWriteInplace = 2, kAddTo = 3 };

using ParseAttrsFn = int (*)(const Attrs&, int* num_inputs, int* num_outputs);
using InferShapeFn = int (*)(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                             std::vector<std::vector<int64_t>>& out);
using InferTypeFn = int (*)(const Attrs&, const std::vector<int>& in, std::vector<int>& out);
using ComputeFn = int (*)(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                          const std::vector<int>& req, const OpResource& res);

// A stateful op: one object per use of the op, kept between its forward and backward calls.
class CustomStatefulOp {
 public:
  virtual ~CustomStatefulOp() = default;
  virtual int Forward(const std::vector<Tensor>& in, std::vector<Tensor>& out,
                      const std::vector<int>& req, const OpResource& res) = 0;
  // (ograds..., inputs..., outputs...) -> input grads
  virtual int Backward(const std::vector<Tensor>& /*in*/, std::vector<Tensor>& /*out*/,
                       const std::vector<int>& /*req*/, const OpResource& /*res*/) {
    return 1;
  }
};
using CreateOpStateFn = int (*)(const Attrs&, CustomStatefulOp** state);
using MutateInputsFn = int (*)(const Attrs&, std::vector<int>& indices);

// Per-library state, defined (with hidden visibility) in the library's main translation unit,
// so each loaded library keeps its own even when several are loaded into one process.
#define NDX_LIB_HIDDEN __attribute__((visibility("hidden")))
struct CustomOp;
NDX_LIB_HIDDEN std::string& last_error();
NDX_LIB_HIDDEN std::vector<CustomOp*>& registry();
// Call from an op function before returning non-zero.
inline int fail(const std::string& message) {
  last_error() = message;
  return 1;
}
// Optional functions an op may leave out: setInferType (every output takes the dtype of the
// first input), setParseAttrs (1 input, 1 output), setBackward (no gradient), setMutateInputs.

struct CustomOp {
  std::string name;
  ParseAttrsFn parse = nullptr;
  InferShapeFn infer_shape = nullptr;
  InferTypeFn infer_type = nullptr;
  ComputeFn forward[2] = {nullptr, nullptr};  // cpu, gpu
  ComputeFn backward[2] = {nullptr, nullptr};
  CreateOpStateFn create_state = nullptr;
  bool stateful_backward = false;
  MutateInputsFn mutate_inputs = nullptr;

  explicit CustomOp(const char* n) : name(n) {}
  static int ctx_index(const char* ctx) { return std::strcmp(ctx, "gpu") == 0 ? 1 : 0; }
  CustomOp& setForward(ComputeFn f, const char* ctx) {
    forward[ctx_index(ctx)] = f;
    return *this;
  }
  CustomOp& setBackward(ComputeFn f, const char* ctx) {
    backward[ctx_index(ctx)] = f;
    return *this;
  }
  // `with_backward`: the state's Backward computes the gradient.
  CustomOp& setCreateOpState(CreateOpStateFn f, const char* ctx, bool with_backward = true) {
    (void)ctx;  // cpu states only in this version
    create_state = f;
    stateful_backward = with_backward;
    return *this;
  }
  // The inputs this op writes in place; ndx hands them over as their own memory.
  CustomOp& setMutateInputs(MutateInputsFn f) {
    mutate_inputs = f;
    return *this;
  }
  CustomOp& setParseAttrs(ParseAttrsFn f) {
    parse = f;
    return *this;
  }
  CustomOp& setInferShape(InferShapeFn f) {
    infer_shape = f;
    return *this;
  }
  CustomOp& setInferType(InferTypeFn f) {
    infer_type = f;
    return *this;
  }
};

inline CustomOp& register_op(const char* name) {
  registry().push_back(new CustomOp(name));
  return *registry().back();
}

namespace detail {
inline Attrs to_map(const NDXLibAttrs* a) {
  Attrs m;
  for (int i = 0; i < a->num; ++i) m[a->keys[i]] = a->values[i];
  return m;
}
inline CustomOp* find(const NDXLibAttrs* a) {
  // The engine passes the op's name as the attribute "__op__".
  for (int i = 0; i < a->num; ++i)
    if (std::strcmp(a->keys[i], "__op__") == 0)
      for (CustomOp* op : registry())
        if (op->name == a->values[i]) return op;
  return nullptr;
}
inline std::vector<Tensor> tensors(int n, const NDXLibTensor* t) {
  std::vector<Tensor> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    out[i].data = t[i].data;
    out[i].shape.assign(t[i].shape, t[i].shape + t[i].ndim);
    out[i].dtype = t[i].dtype;
    out[i].device_type = t[i].device_type;
    out[i].device_id = t[i].device_id;
  }
  return out;
}
#define NDX_LIB_GUARD(expr)                          \
  try {                                              \
    return (expr);                                   \
  } catch (const std::exception& e) {                \
    return ::ndx_lib::fail(e.what());                \
  } catch (...) {                                    \
    return ::ndx_lib::fail("unknown C++ exception"); \
  }

inline const char* op_name(const NDXLibAttrs* a) {
  if (a)
    for (int i = 0; i < a->num; ++i)
      if (std::strcmp(a->keys[i], "__op__") == 0) return a->values[i];
  return "?";
}

// Runs one of the library's functions. Whatever it throws (a std::exception, or anything else:
// `throw 42`) becomes an error return with a message, never an exception through the C ABI,
// which would end the process. ndx raises it as ValueError naming the op and the function.
template <typename F>
int guard(const NDXLibAttrs* a, const char* what, F&& f) noexcept {
  try {
    last_error().clear();  // a failure without fail() must not report an earlier message
    return f();
  } catch (const std::exception& e) {
    return fail(e.what());
  } catch (...) {
    try {
      return fail(std::string("unknown exception (not a std::exception) thrown by library op ") +
                  op_name(a) + "'s " + what);
    } catch (...) {
      return 1;
    }
  }
}

inline int parse_attrs(const NDXLibAttrs* a, int32_t* n_in, int32_t* n_out) {
  return guard(a, "parse_attrs", [&] {
    CustomOp* op = find(a);
    if (!op) return fail("op not found");
    int i = 1, o = 1;
    if (op->parse) {
      int rc = op->parse(to_map(a), &i, &o);
      if (rc != 0) return rc;
    }
    *n_in = i, *n_out = o;
    return 0;
  });
}
inline int infer_shape(const NDXLibAttrs* a, int32_t n_in, const int64_t* const* in,
                       const int32_t* in_nd, int32_t n_out, int64_t* out, int32_t* out_nd) {
  return guard(a, "infer_shape", [&] {
    CustomOp* op = find(a);
    if (!op || !op->infer_shape) return fail("op has no infer_shape");
    std::vector<std::vector<int64_t>> ins(static_cast<size_t>(n_in)),
        outs(static_cast<size_t>(n_out));
    for (int i = 0; i < n_in; ++i) ins[i].assign(in[i], in[i] + in_nd[i]);
    int rc = op->infer_shape(to_map(a), ins, outs);
    if (rc != 0) return rc;
    if (static_cast<int>(outs.size()) != n_out)
      return fail("infer_shape returned the wrong number of outputs");
    for (int j = 0; j < n_out; ++j) {
      if (outs[j].size() > NDX_LIB_MAX_DIMS) return fail("too many dimensions");
      out_nd[j] = static_cast<int32_t>(outs[j].size());
      for (size_t k = 0; k < outs[j].size(); ++k) out[j * NDX_LIB_MAX_DIMS + k] = outs[j][k];
    }
    return 0;
  });
}
inline int infer_type(const NDXLibAttrs* a, int32_t n_in, const int32_t* in, int32_t n_out,
                      int32_t* out) {
  return guard(a, "infer_type", [&] {
    CustomOp* op = find(a);
    if (!op) return fail("op not found");
    std::vector<int> ins(in, in + n_in),
        outs(static_cast<size_t>(n_out), n_in ? in[0] : kNDXLibFloat32);
    if (op->infer_type) {
      int rc = op->infer_type(to_map(a), ins, outs);
      if (rc != 0) return rc;
      if (static_cast<int>(outs.size()) != n_out)
        return fail("infer_type returned the wrong number of outputs");
    }
    for (int j = 0; j < n_out; ++j) out[j] = outs[j];
    return 0;
  });
}
template <bool kBackward, int kDev>
int compute(const NDXLibAttrs* a, int32_t n_in, const NDXLibTensor* in, int32_t n_out,
            NDXLibTensor* out, const int32_t* req, const NDXLibResource* res) {
  return guard(a, kBackward ? "backward" : "forward", [&] {
    CustomOp* op = find(a);
    if (!op) return fail("op not found");
    ComputeFn f = kBackward ? op->backward[kDev] : op->forward[kDev];
    if (!f) return fail("no such function");
    std::vector<Tensor> ins = tensors(n_in, in), outs = tensors(n_out, out);
    std::vector<int> reqs(req, req + n_out);
    return f(to_map(a), ins, outs, reqs, OpResource{res});
  });
}
inline int create_state(const NDXLibAttrs* a, void** state) {
  return guard(a, "create_op_state", [&] {
    CustomOp* op = find(a);
    if (!op || !op->create_state) return fail("op has no state");
    CustomStatefulOp* s = nullptr;
    int rc = op->create_state(to_map(a), &s);
    if (rc != 0) return rc;
    if (!s) return fail("create_op_state gave no state");
    *state = s;
    return 0;
  });
}
template <bool kBackward>
int state_compute(void* state, int32_t n_in, const NDXLibTensor* in, int32_t n_out,
                  NDXLibTensor* out, const int32_t* req, const NDXLibResource* res) {
  return guard(nullptr, kBackward ? "stateful backward" : "stateful forward", [&] {
    auto* s = static_cast<CustomStatefulOp*>(state);
    std::vector<Tensor> ins = tensors(n_in, in), outs = tensors(n_out, out);
    std::vector<int> reqs(req, req + n_out);
    return kBackward ? s->Backward(ins, outs, reqs, OpResource{res})
                     : s->Forward(ins, outs, reqs, OpResource{res});
  });
}
// A state's destructor must not throw (C++ ends the process when one does).
inline void destroy_state(void* state) { delete static_cast<CustomStatefulOp*>(state); }
inline int mutate_inputs(const NDXLibAttrs* a, int32_t* num, int32_t* indices) {
  return guard(a, "mutate_inputs", [&] {
    CustomOp* op = find(a);
    if (!op || !op->mutate_inputs) return fail("op mutates no inputs");
    std::vector<int> idx;
    int rc = op->mutate_inputs(to_map(a), idx);
    if (rc != 0) return rc;
    if (idx.size() > NDX_LIB_MAX_DIMS) return fail("too many mutated inputs");
    *num = static_cast<int32_t>(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) indices[i] = idx[i];
    return 0;
  });
}
}  // namespace detail
}  // namespace ndx_lib

#define NDX_LIB_CONCAT_(a, b) a##b
#define NDX_LIB_CONCAT(a, b) NDX_LIB_CONCAT_(a, b)
#define REGISTER_OP(Name)                                                                 \
  static ::ndx_lib::CustomOp& NDX_LIB_CONCAT(ndx_lib_op_, __COUNTER__) [[maybe_unused]] = \
      ::ndx_lib::register_op(#Name)

// The C entry points ndx looks up with dlsym. A library of several files defines
// NDX_LIB_NO_MAIN before including this header in all but one of them.
#if !defined(NDX_LIB_NO_MAIN)
namespace ndx_lib {
NDX_LIB_HIDDEN std::string& last_error() {
  static thread_local std::string msg;
  return msg;
}
NDX_LIB_HIDDEN std::vector<CustomOp*>& registry() {
  static std::vector<CustomOp*> ops;
  return ops;
}
}  // namespace ndx_lib
extern "C" {
__attribute__((visibility("default"))) int ndx_lib_version() { return NDX_LIB_API_VERSION; }
__attribute__((visibility("default"))) const char* ndx_lib_last_error() {
  return ::ndx_lib::last_error().c_str();
}
__attribute__((visibility("default"))) int ndx_lib_num_ops() {
  return static_cast<int>(::ndx_lib::registry().size());
}
__attribute__((visibility("default"))) int ndx_lib_get_op(int i, NDXLibOp* out) {
  auto& ops = ::ndx_lib::registry();
  if (i < 0 || i >= static_cast<int>(ops.size())) return ::ndx_lib::fail("op index out of range");
  ::ndx_lib::CustomOp* op = ops[static_cast<size_t>(i)];
  out->name = op->name.c_str();
  out->parse_attrs = ::ndx_lib::detail::parse_attrs;
  out->infer_shape = op->infer_shape ? ::ndx_lib::detail::infer_shape : nullptr;
  out->infer_type = ::ndx_lib::detail::infer_type;
  out->forward_cpu = op->forward[0] ? ::ndx_lib::detail::compute<false, 0> : nullptr;
  out->backward_cpu = op->backward[0] ? ::ndx_lib::detail::compute<true, 0> : nullptr;
  out->forward_gpu = op->forward[1] ? ::ndx_lib::detail::compute<false, 1> : nullptr;
  out->backward_gpu = op->backward[1] ? ::ndx_lib::detail::compute<true, 1> : nullptr;
  out->create_state = op->create_state ? ::ndx_lib::detail::create_state : nullptr;
  out->state_forward = op->create_state ? ::ndx_lib::detail::state_compute<false> : nullptr;
  out->state_backward =
      op->create_state && op->stateful_backward ? ::ndx_lib::detail::state_compute<true> : nullptr;
  out->destroy_state = op->create_state ? ::ndx_lib::detail::destroy_state : nullptr;
  out->mutate_inputs = op->mutate_inputs ? ::ndx_lib::detail::mutate_inputs : nullptr;
  return 0;
}
}
#endif
#endif  // __cplusplus && !NDX_LIB_C_ONLY
#endif  // NDX_LIB_API_H_
