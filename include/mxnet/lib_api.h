// mxnet/lib_api.h: Apache MXNet's operator-library API (the 2.0 layout, namespace mxnet::ext,
// and the 1.9 layout with global names) on top of ndx's own library ABI (ndx/lib_api.h).
// An operator library written for MXNet compiles against this header unchanged and loads with
// ndx.library.load (mx.library.load):
//
//   #include "lib_api.h"            // built with -I <ndx include>/mxnet, as MXNet's examples
//   #include "mxnet/lib_api.h"      // or with -I <ndx include>
//   using namespace mxnet::ext;
//   MXReturnValue forward(const std::unordered_map<std::string, std::string>& attrs,
//                         std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
//                         const OpResource& res) {...}
//   REGISTER_OP(my_op).setForward(forward, "cpu").setInferShape(...).setInferType(...);
//   MXReturnValue initialize(int version) { return MX_SUCCESS; }
//
// The header is self-contained (nothing like MXNet's src/lib_api.cc to compile beside it; a
// library of several files includes it in each of them). Written from MXNet's documented API
// (include/mxnet/lib_api.h and example/extensions of MXNet 2.0); the implementation is ndx's.
//
// What maps onto what:
//   REGISTER_OP ops          -> ndx library ops (npx.<name>, nd.<name>, sym.<name>, autograd,
//                               hybridized blocks); MXNet's dtype codes (kFloat32 = 0, ...) are
//                               translated to and from ndx's in every call
//   MX_ERROR_MSG << ...      -> the text of the ValueError ndx raises when a function returns
//                               MX_FAIL
//   initialize(version)      -> called once when the library is loaded, with version 20000
//                               (MXNet 2.0.0); MX_FAIL makes load raise ValueError
//   OpResource::alloc_cpu    -> ndx's temporary space for the call (alloc_gpu on gpu ops)
//   get_cpu_rand_states()    -> MX_NUM_CPU_RANDOM_STATES std::mt19937 states, seeded for each
//                               call from ndx's random stream (ndx.random_seed reproduces them)
//   setCreateOpState         -> one state per use of the op (per node of a graph), created at
//                               its first forward (with that call's input shapes and dtypes)
//   setMutateInputs          -> inputs written in place
// What ndx does not support (each fails with a message saying so):
//   sparse storage (inferSType asking for row_sparse/csr, OpResource::alloc_sparse), GPU random
//   states (get_gpu_rand_states), stateful ops on gpu (a "gpu" setCreateOpState is accepted and
//   ignored: such ops run on cpu), subgraph ops (setIsSubgraphOp: load fails), and graph passes and
//   partitioners (REGISTER_PASS / REGISTER_PARTITIONER stop the compilation with a static_assert;
//   the Graph / Node / JsonVal classes they use are absent).
// Also absent: MXNet's internal C entry points (_opRegSize, _opCallFCompute, ...) and helpers
// for passes (getShapeAt, getDtypeAt, PassResource).
#ifndef MXNET_LIB_API_H_
#define MXNET_LIB_API_H_

#if defined(NDX_LIB_HIDDEN)
#error "include either ndx/lib_api.h or mxnet/lib_api.h in a translation unit, not both"
#endif

// ndx's C ABI only (its C++ layer would define a REGISTER_OP of its own).
#ifndef NDX_LIB_C_ONLY
#define NDX_LIB_C_ONLY
#define NDX_MXNET_UNDEF_C_ONLY_
#endif
#include "../ndx/lib_api.h"
#ifdef NDX_MXNET_UNDEF_C_ONLY_
#undef NDX_LIB_C_ONLY
#undef NDX_MXNET_UNDEF_C_ONLY_
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <climits>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#if defined(__NVCC__)
#include <cuda_runtime.h>
#include <curand_kernel.h>
#endif

// The API level of MXNet 2.0's lib_api.h.
#define MX_LIBRARY_VERSION 11
// The MXNet version initialize() is told: MXNET_MAJOR * 10000 + MXNET_MINOR * 100 + PATCH.
#define NDX_MXNET_VERSION 20000

#define PRIVATE_SYMBOL __attribute__((visibility("hidden")))

// DLPack's tensor description (version 0.2, as MXNet's header carries it), unless the library
// included dlpack.h itself first.
#ifndef DLPACK_VERSION
#define DLPACK_VERSION 020
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#define DLPACK_DLL
extern "C" {
typedef enum {
  kDLCPU = 1,
  kDLGPU = 2,
  kDLCPUPinned = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLExtDev = 12,
} DLDeviceType;
typedef struct {
  DLDeviceType device_type;
  int device_id;
} DLContext;
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLBfloat = 4U,
} DLDataTypeCode;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void* data;
  DLContext ctx;
  int ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // null: compact, row-major
  uint64_t byte_offset;
} DLTensor;
}  // extern "C"
#endif  // DLPACK_VERSION

namespace mxnet {
namespace ext {

// Error messages of the current call: MX_ERROR_MSG << "text"; a function that then returns
// MX_FAIL makes ndx raise ValueError with the text (several messages are joined with "; ").
class MXerrorMsgs {
 public:
  // Hidden (like every function below that keeps state): each loaded library has its own.
  PRIVATE_SYMBOL static MXerrorMsgs* get() {
    static thread_local MXerrorMsgs inst;
    return &inst;
  }
  std::stringstream& add(const char* file, int line) {
    (void)file;
    (void)line;
    messages_.emplace_back(new std::stringstream());
    return *messages_.back();
  }
  int size() { return static_cast<int>(messages_.size()); }
  const std::string* get(int idx) {
    text_ = messages_.at(static_cast<size_t>(idx))->str();
    return &text_;
  }
  // ndx: the messages so far, joined, and forgotten.
  std::string ndx_take() {
    std::string all;
    for (auto& m : messages_) {
      std::string s = m->str();
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
      if (s.empty()) continue;
      if (!all.empty()) all += "; ";
      all += s;
    }
    messages_.clear();
    return all;
  }
  void ndx_clear() { messages_.clear(); }

 private:
  MXerrorMsgs() {}
  std::vector<std::unique_ptr<std::stringstream>> messages_;
  std::string text_;
};

#define MX_ERROR_MSG ::mxnet::ext::MXerrorMsgs::get()->add(__FILE__, __LINE__)

// MXNet's dtype codes (mshadow's type flags). ndx's other dtypes reach a library as the
// mshadow codes 7 (bool), 8 (int16), 9 (uint16), 10 (uint32), 11 (uint64), 12 (bfloat16).
enum MXDType {
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,
  kUint8 = 3,
  kInt32 = 4,
  kInt8 = 5,
  kInt64 = 6,
  kUNSET = 100,
};

enum MXStorageType {
  kDefaultStorage = 0,
  kRowSparseStorage = 1,
  kCSRStorage = 2,
};

enum MXReturnValue {
  MX_FAIL = 0,
  MX_SUCCESS = 1,
};

// Where a tensor lives: dev_type "cpu" or "gpu", and the device index.
struct MXContext {
  MXContext() : dev_type("error"), dev_id(-1) {}
  explicit MXContext(std::string type, int id) : dev_type(std::move(type)), dev_id(id) {}
  explicit MXContext(const char* type, int id) : dev_type(type), dev_id(id) {}
  static MXContext CPU() { return MXContext("cpu", 0); }
  static MXContext GPU() { return MXContext("gpu", 0); }
  static MXContext CPU(int id) { return MXContext("cpu", id); }
  static MXContext GPU(int id) { return MXContext("gpu", id); }
  std::string dev_type;
  int dev_id;
};

// Sparse data as MXNet lays it out. ndx hands libraries dense tensors only; the struct exists so
// that code mentioning it compiles.
struct MXSparse {
  void* data = nullptr;
  int64_t data_len = 0;
  int64_t* indices = nullptr;
  int64_t indices_len = 0;
  int64_t* indptr = nullptr;
  int64_t indptr_len = 0;
  void set(void* data_ptr, const int64_t* dims, int ndims, void* idx, int64_t num_idx,
           void* idx_ptr = nullptr, int64_t num_idx_ptr = 0) {
    data = data_ptr;
    data_len = num_idx;
    if (!idx_ptr)
      for (int i = 1; i < ndims; ++i) data_len *= dims[i];
    indices = static_cast<int64_t*>(idx);
    indices_len = num_idx;
    if (idx_ptr) {
      indptr = static_cast<int64_t*>(idx_ptr);
      indptr_len = num_idx_ptr;
    }
  }
};

// A tensor handed to an op: contiguous, row-major data of `shape` and `dtype` on `ctx`.
struct MXTensor {
  MXTensor() : data_ptr(nullptr), dtype(kUNSET), verID(0), stype(kDefaultStorage) { setDLTensor(); }
  MXTensor(const MXTensor& o)
      : data_ptr(o.data_ptr),
        shape(o.shape),
        dtype(o.dtype),
        verID(o.verID),
        ctx(o.ctx),
        stype(o.stype) {
    setDLTensor();
  }
  MXTensor& operator=(const MXTensor& o) {
    data_ptr = o.data_ptr;
    shape = o.shape;
    dtype = o.dtype;
    verID = o.verID;
    ctx = o.ctx;
    stype = o.stype;
    setDLTensor();
    return *this;
  }
  MXTensor(void* data, std::vector<int64_t> dims, MXDType type, size_t vID, MXContext mx_ctx,
           MXStorageType storage = kDefaultStorage)
      : data_ptr(data),
        shape(std::move(dims)),
        dtype(type),
        verID(vID),
        ctx(std::move(mx_ctx)),
        stype(storage) {
    setDLTensor();
  }

  void setTensor(void* dptr, MXDType type, const int64_t* dims, int ndims, size_t vID,
                 MXContext mx_ctx, MXStorageType storage) {
    data_ptr = dptr;
    dtype = type;
    verID = vID;
    ctx = std::move(mx_ctx);
    stype = storage;
    shape.assign(dims, dims + ndims);
    setDLTensor();
  }

  // Fills `dltensor` from the other fields (it points into `shape`).
  void setDLTensor() {
    dltensor.data = data_ptr;
    dltensor.ndim = static_cast<int>(shape.size());
    dltensor.shape = shape.empty() ? nullptr : shape.data();
    dltensor.strides = nullptr;
    dltensor.byte_offset = 0;
    dltensor.ctx.device_id = ctx.dev_id;
    dltensor.ctx.device_type = ctx.dev_type == "gpu" ? kDLGPU : kDLCPU;
    dltensor.dtype.lanes = 1;
    // DLPack (type code, bits) per MXNet dtype code 0..12; kUNSET (a tensor not filled in yet)
    // gets (0, 0). bool is one byte; 4 is DLPack's bfloat code.
    static const uint8_t kCode[13] = {kDLFloat, kDLFloat, kDLFloat, kDLUInt, kDLInt,
                                      kDLInt,   kDLInt,   kDLUInt,  kDLInt,  kDLUInt,
                                      kDLUInt,  kDLUInt,  4};
    static const uint8_t kBits[13] = {32, 64, 16, 8, 32, 8, 64, 8, 16, 16, 32, 64, 16};
    const int t = static_cast<int>(dtype);
    dltensor.dtype.code = t >= 0 && t < 13 ? kCode[t] : 0;
    dltensor.dtype.bits = t >= 0 && t < 13 ? kBits[t] : 0;
  }

  template <typename data_type>
  data_type* data() {
    return reinterpret_cast<data_type*>(data_ptr);
  }
  template <typename data_type>
  data_type* data() const {
    return reinterpret_cast<data_type*>(data_ptr);
  }

  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }

  bool isSame(const MXTensor& o) const {
    return data_ptr == o.data_ptr && dtype == o.dtype && verID == o.verID &&
           ctx.dev_type == o.ctx.dev_type && ctx.dev_id == o.ctx.dev_id && shape == o.shape &&
           stype == o.stype;
  }

  void* data_ptr;
  std::vector<int64_t> shape;
  MXDType dtype;
  // Version of the data: ndx gives every tensor of every call a new one, so isSame() never
  // takes a tensor for unchanged across calls.
  size_t verID;
  MXContext ctx;
  DLTensor dltensor;
  MXStorageType stype;
};

typedef void* (*xpu_malloc_t)(void*, int);
typedef void (*sparse_malloc_t)(void*, int, int, int, void**, int64_t**, int64_t**);
typedef void (*nd_malloc_t)(const void* _ndarray_alloc, const int64_t* shapes, int num_shapes,
                            const char* dev_str, int dev_id, int dtype, const char* name, int isArg,
                            void** data);
#if defined(__NVCC__)
typedef cudaStream_t mx_stream_t;
typedef curandStatePhilox4_32_10_t mx_gpu_rand_t;
#else
typedef void* mx_stream_t;
typedef void* mx_gpu_rand_t;
#endif
typedef std::mt19937 mx_cpu_rand_t;

#define MX_NUM_CPU_RANDOM_STATES 1024
#define MX_NUM_GPU_RANDOM_STATES 32768

#define MX_STR_SUBGRAPH_SYM_JSON "subgraph_sym_json"
#define MX_STR_DTYPE "__ext_dtype__"
#define MX_STR_SHAPE "__ext_shape__"
#define MX_STR_EXTRA_INPUTS "__ext_extra_inputs__"

// What an op may ask of the engine during a call: temporary memory, the CUDA stream, random
// number states. Built by ndx for each call.
class OpResource {
 public:
  OpResource(const NDXLibResource* res, bool on_gpu) : res_(res), on_gpu_(on_gpu) {}

  // `size` bytes of memory valid until the op returns, on the cpu (for an op running on cpu).
  void* alloc_cpu(int size) const {
    if (on_gpu_)
      throw std::runtime_error(
          "OpResource::alloc_cpu called by an op running on gpu: ndx gives a call temporary "
          "memory on its own device only (use alloc_gpu)");
    return alloc(size);
  }
  // `size` bytes of gpu memory valid until the op returns (for an op running on gpu).
  void* alloc_gpu(int size) const {
    if (!on_gpu_)
      throw std::runtime_error(
          "OpResource::alloc_gpu called by an op running on cpu: ndx gives a call temporary "
          "memory on its own device only (use alloc_cpu)");
    return alloc(size);
  }
  mx_stream_t get_cuda_stream() const { return (mx_stream_t)(res_->cuda_stream); }
  void alloc_sparse(MXSparse*, int, int, int = 0) const {
    throw std::runtime_error(
        "OpResource::alloc_sparse: ndx does not support sparse storage in operator libraries");
  }
  // MX_NUM_CPU_RANDOM_STATES generators, seeded for this call from ndx's random stream (ask
  // for them before starting threads of your own: the first request seeds them).
  PRIVATE_SYMBOL mx_cpu_rand_t* get_cpu_rand_states() const;
  mx_gpu_rand_t* get_gpu_rand_states() const {
    throw std::runtime_error(
        "OpResource::get_gpu_rand_states: ndx does not provide GPU random states to operator "
        "libraries");
  }

 private:
  void* alloc(int size) const {
    if (size < 0) throw std::invalid_argument("OpResource: negative allocation size");
    void* p = res_->alloc_temp(res_->ctx, static_cast<size_t>(size));
    if (!p && size) throw std::bad_alloc();  // ndx raises its own MemoryError
    return p;
  }
  const NDXLibResource* res_;
  bool on_gpu_;
  mutable mx_cpu_rand_t* states_ = nullptr;
};

// The states of a stateful op. Subclass it, override Forward (and Backward for a gradient:
// inputs are (output grads..., inputs..., outputs...), outputs the input grads).
class CustomStatefulOp {
 public:
  CustomStatefulOp() : ignore_warn(false), created(false) {}
  virtual ~CustomStatefulOp() {}

  template <class A, typename... Ts>
  static CustomStatefulOp* create(Ts... args) {
    CustomStatefulOp* op = new A(args...);
    op->created = true;
    return op;
  }
  bool wasCreated() { return created; }

  virtual MXReturnValue Forward(std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                                const OpResource& op_res) = 0;
  virtual MXReturnValue Backward(std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                                 const OpResource& op_res) {
    (void)inputs, (void)outputs, (void)op_res;
    MX_ERROR_MSG << "Error! Operator does not support backward";
    return MX_FAIL;
  }

  bool ignore_warn;

 private:
  bool created;
};

// Partitioners' node selector (declared for source compatibility; ndx runs no partitioners).
class CustomOpSelector {
 public:
  virtual ~CustomOpSelector() {}
  virtual bool Select(int nodeID) = 0;
  virtual bool SelectInput(int nodeID, int input_nodeID) = 0;
  virtual bool SelectOutput(int nodeID, int output_nodeID) = 0;
  virtual void Filter(const std::vector<int>& candidates, std::vector<int>* keep) {
    keep->insert(keep->end(), candidates.begin(), candidates.end());
  }
  virtual void Reset() {}
};

typedef std::unordered_map<std::string, std::string> MXAttrs_;

typedef MXReturnValue (*fcomp_t)(const MXAttrs_& attributes, std::vector<MXTensor>* inputs,
                                 std::vector<MXTensor>* outputs, const OpResource& res);
typedef MXReturnValue (*parseAttrs_t)(const MXAttrs_& attributes, int* num_inputs,
                                      int* num_outputs);
typedef MXReturnValue (*inferType_t)(const MXAttrs_& attributes, std::vector<int>* in_types,
                                     std::vector<int>* out_types);
typedef MXReturnValue (*inferSType_t)(const MXAttrs_& attributes,
                                      std::vector<int>* in_storage_types,
                                      std::vector<int>* out_storage_types);
typedef MXReturnValue (*inferShape_t)(const MXAttrs_& attributes,
                                      std::vector<std::vector<unsigned int>>* in_shapes,
                                      std::vector<std::vector<unsigned int>>* out_shapes);
typedef MXReturnValue (*mutateInputs_t)(const MXAttrs_& attributes,
                                        std::vector<int>* input_indices);
// MXNet 2.0: the state is made knowing the device, input shapes and dtypes.
typedef MXReturnValue (*createOpState_t)(const MXAttrs_& attributes, const MXContext& ctx,
                                         const std::vector<std::vector<unsigned int>>& in_shapes,
                                         const std::vector<int> in_types, CustomStatefulOp**);
// MXNet 1.x: from the attributes alone.
typedef MXReturnValue (*createOpStateV1_t)(const MXAttrs_& attributes, CustomStatefulOp**);

// One registered op (REGISTER_OP(name) returns it; the setters chain).
class CustomOp {
 public:
  explicit CustomOp(const char* op_name)
      : name(op_name),
        parse_attrs(nullptr),
        infer_type(nullptr),
        infer_storage_type(nullptr),
        infer_shape(nullptr),
        mutate_inputs(nullptr),
        isSGop(false) {}

  CustomOp& setForward(fcomp_t fcomp, const char* ctx) {
    set_ctx(forward_, fcomp, ctx, "setForward");
    return *this;
  }
  CustomOp& setBackward(fcomp_t fgrad, const char* ctx) {
    set_ctx(backward_, fgrad, ctx, "setBackward");
    return *this;
  }
  CustomOp& setParseAttrs(parseAttrs_t func) {
    parse_attrs = func;
    return *this;
  }
  CustomOp& setInferType(inferType_t func) {
    infer_type = func;
    return *this;
  }
  CustomOp& setInferSType(inferSType_t func) {
    infer_storage_type = func;
    return *this;
  }
  CustomOp& setInferShape(inferShape_t func) {
    infer_shape = func;
    return *this;
  }
  CustomOp& setMutateInputs(mutateInputs_t func) {
    mutate_inputs = func;
    return *this;
  }
  CustomOp& setCreateOpState(createOpState_t func, const char* ctx) {
    createOpStateV1_t none = nullptr;
    set_state(func, none, ctx);
    return *this;
  }
  CustomOp& setCreateOpState(createOpStateV1_t func, const char* ctx) {
    createOpState_t none = nullptr;
    set_state(none, func, ctx);
    return *this;
  }
  CustomOp& setIsSubgraphOp() {
    isSGop = true;
    return *this;
  }
  void mapToVector() {}

  const char* name;
  parseAttrs_t parse_attrs;
  inferType_t infer_type;
  inferSType_t infer_storage_type;
  inferShape_t infer_shape;
  mutateInputs_t mutate_inputs;
  bool isSGop;

  // ndx: the functions per device (0 cpu, 1 gpu), and a registration mistake to report at load.
  fcomp_t forward_[2] = {nullptr, nullptr};
  fcomp_t backward_[2] = {nullptr, nullptr};
  createOpState_t create_state_ = nullptr;
  createOpStateV1_t create_state_v1_ = nullptr;
  bool gpu_state_ = false;
  std::string error_;

 private:
  int device_of(const char* ctx, const char* what) {
    if (ctx && std::strcmp(ctx, "cpu") == 0) return 0;
    if (ctx && std::strcmp(ctx, "gpu") == 0) return 1;
    if (error_.empty())
      error_ = std::string(what) + " was given the context '" + (ctx ? ctx : "(null)") +
               "'; ndx runs library ops on \"cpu\" and \"gpu\"";
    return -1;
  }
  void set_ctx(fcomp_t* slots, fcomp_t f, const char* ctx, const char* what) {
    int d = device_of(ctx, what);
    if (d < 0) return;
    if (slots[d] && error_.empty())
      error_ = std::string(what) + " was called twice for the context '" + ctx + "'";
    slots[d] = f;
  }
  void set_state(createOpState_t f, createOpStateV1_t f1, const char* ctx) {
    int d = device_of(ctx, "setCreateOpState");
    if (d == 1) {
      gpu_state_ = true;  // ndx runs stateful library ops on cpu only
    } else if (d == 0) {
      if ((create_state_ || create_state_v1_) && error_.empty())
        error_ = "setCreateOpState was called twice for the context 'cpu'";
      create_state_ = f;
      create_state_v1_ = f1;
    }
  }
};

// A library's registered things, in registration order.
template <class T>
class Registry {
 public:
  PRIVATE_SYMBOL static Registry* get() {
    static Registry inst;
    return &inst;
  }
  T& add(const char* name) {
    entries_.emplace_back(new T(name));
    return *entries_.back();
  }
  int size() { return static_cast<int>(entries_.size()); }
  T& get(int idx) { return *entries_.at(static_cast<size_t>(idx)); }

 private:
  Registry() {}
  std::vector<std::unique_ptr<T>> entries_;
};

#define MX_STR_CONCAT_(__a, __b) __a##__b
#define MX_STR_CONCAT(__a, __b) MX_STR_CONCAT_(__a, __b)
#define MX_STRINGIFY(x) #x
#define MX_TOSTRING(x) MX_STRINGIFY(x)

#define REGISTER_OP(Name)                                                             \
  static ::mxnet::ext::CustomOp& MX_STR_CONCAT(MXNet_CustomOp_##Name##_, __COUNTER__) \
      __attribute__((unused)) =                                                       \
          ::mxnet::ext::Registry<::mxnet::ext::CustomOp>::get()->add(MX_TOSTRING(Name))

// Hidden: each loaded library keeps its own.
#pragma GCC visibility push(hidden)
namespace ndx_detail {
// REGISTER_PASS / REGISTER_PARTITIONER: not supported; the static_assert says so at compile time.
template <int kLine>
struct UnsupportedPass {
  static_assert(kLine < 0,
                "ndx does not support MXNet graph passes (REGISTER_PASS): ndx.library.load "
                "loads operators only");
  template <typename... T>
  UnsupportedPass& setBody(T&&...) {
    return *this;
  }
};
template <int kLine>
struct UnsupportedPartitioner {
  static_assert(kLine < 0,
                "ndx does not support MXNet partitioners (REGISTER_PARTITIONER): ndx.library.load "
                "loads operators only");
  template <typename... T>
  UnsupportedPartitioner& addStrategy(T&&...) {
    return *this;
  }
  template <typename... T>
  UnsupportedPartitioner& setSupportedOps(T&&...) {
    return *this;
  }
  template <typename... T>
  UnsupportedPartitioner& setCreateSelector(T&&...) {
    return *this;
  }
  template <typename... T>
  UnsupportedPartitioner& setReviewSubgraph(T&&...) {
    return *this;
  }
};
}  // namespace ndx_detail
#pragma GCC visibility pop

#define REGISTER_PASS(Name)                                                                    \
  static auto MX_STR_CONCAT(MXNet_CustomPass_##Name##_, __COUNTER__) __attribute__((unused)) = \
      ::mxnet::ext::ndx_detail::UnsupportedPass<__LINE__>()
#define REGISTER_PARTITIONER(Name)                                                                \
  static auto MX_STR_CONCAT(MXNet_CustomSubProp_##Name##_, __COUNTER__) __attribute__((unused)) = \
      ::mxnet::ext::ndx_detail::UnsupportedPartitioner<__LINE__>()

#if defined(_WIN32) || defined(_WIN64) || defined(__WINDOWS__)
#define MX_INT_RET __declspec(dllexport) int __cdecl
#define MX_VOID_RET __declspec(dllexport) void __cdecl
#else
#define MX_INT_RET int
#define MX_VOID_RET void
#endif

}  // namespace ext
}  // namespace mxnet

// The library's initialize(), called once at load. Declared weak so that a library without one
// loads with a clear error instead of an unresolved symbol; hidden so that another library's (or
// the process's) `initialize` can never stand in for it.
extern "C" __attribute__((weak, visibility("hidden"))) mxnet::ext::MXReturnValue initialize(
    int version);

// ---------------------------------------------------------------------------------------------
// The adapter: ndx's C ABI in terms of the registered MXNet ops.
namespace mxnet {
namespace ext {
// Hidden: each loaded library keeps its own.
#pragma GCC visibility push(hidden)
namespace ndx_detail {

// ndx's output requests (OpReqType).
enum { kReqNull = 0, kReqWrite = 1, kReqInplace = 2, kReqAdd = 3 };

inline std::string& last_error() {
  static thread_local std::string msg;
  return msg;
}
inline int fail(const std::string& message) {
  last_error() = message;
  return 1;
}
// After a library function returned MX_FAIL: its MX_ERROR_MSG text.
inline int failed(const char* op, const char* what) {
  std::string msg = MXerrorMsgs::get()->ndx_take();
  if (msg.empty())
    msg = std::string(what) + " of " + op + " returned MX_FAIL without an MX_ERROR_MSG message";
  return fail(msg);
}

// ndx's dtype code -> MXNet's (mshadow's), and back.
inline int to_mx_dtype(int ndx_code) {
  static const int table[13] = {7, 5, 8, 4, 6, 3, 9, 10, 11, 2, 12, 0, 1};
  return ndx_code >= 0 && ndx_code < 13 ? table[ndx_code] : -1;
}
inline int to_ndx_dtype(int mx_code) {
  for (int i = 0; i < 13; ++i)
    if (to_mx_dtype(i) == mx_code) return i;
  return -1;
}
inline size_t ndx_itemsize(int ndx_code) {
  static const size_t table[13] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8};
  return ndx_code >= 0 && ndx_code < 13 ? table[ndx_code] : 0;
}

// Process-wide initialize() result: 0 not yet, 1 succeeded, -1 failed (message kept).
inline int& init_state() {
  static int state = 0;
  return state;
}
inline std::string& init_error() {
  static std::string msg;
  return msg;
}
inline bool initialized() {
  int& state = init_state();
  if (state == 0) {
    state = -1;
    if (!&::initialize) {
      init_error() =
          "the library defines no `MXReturnValue initialize(int version)`, which MXNet's "
          "lib_api requires";
      return false;
    }
    MXerrorMsgs::get()->ndx_clear();
    MXReturnValue rc;
    try {
      rc = ::initialize(NDX_MXNET_VERSION);
    } catch (const std::exception& e) {
      init_error() =
          std::string("initialize(") + std::to_string(NDX_MXNET_VERSION) + ") threw: " + e.what();
      return false;
    } catch (...) {
      init_error() = std::string("initialize(") + std::to_string(NDX_MXNET_VERSION) +
                     ") threw an unknown exception";
      return false;
    }
    std::string msg = MXerrorMsgs::get()->ndx_take();
    if (!rc) {
      init_error() = std::string("initialize(") + std::to_string(NDX_MXNET_VERSION) +
                     ") returned MX_FAIL" + (msg.empty() ? "" : ": " + msg);
      return false;
    }
    state = 1;
  }
  return state == 1;
}

// The op an attribute list belongs to (ndx passes the op's name as "__op__"), and the
// attributes the library sees (without "__op__").
inline CustomOp* find_op(const NDXLibAttrs* a) {
  for (int i = 0; i < a->num; ++i)
    if (std::strcmp(a->keys[i], "__op__") == 0) {
      Registry<CustomOp>* reg = Registry<CustomOp>::get();
      for (int k = 0; k < reg->size(); ++k)
        if (std::strcmp(reg->get(k).name, a->values[i]) == 0) return &reg->get(k);
    }
  return nullptr;
}
inline MXAttrs_ attr_map(const NDXLibAttrs* a) {
  MXAttrs_ m;
  for (int i = 0; i < a->num; ++i)
    if (std::strcmp(a->keys[i], "__op__") != 0) m[a->keys[i]] = a->values[i];
  return m;
}

// Runs one of the library's functions: whatever it throws becomes an error return.
template <typename F>
int guard(const char* what, F&& f) noexcept {
  try {
    MXerrorMsgs::get()->ndx_clear();
    return f();
  } catch (const std::exception& e) {
    try {
      std::string msg = MXerrorMsgs::get()->ndx_take();
      return fail(std::string(what) + " threw: " + e.what() + (msg.empty() ? "" : "; " + msg));
    } catch (...) {
      return 1;
    }
  } catch (...) {
    try {
      return fail(std::string(what) + " threw an unknown exception (not a std::exception)");
    } catch (...) {
      return 1;
    }
  }
}

inline size_t next_version() {
  static std::size_t counter = 0;
  return __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
}

inline void set_tensor(MXTensor* t, const NDXLibTensor& x) {
  t->setTensor(x.data, static_cast<MXDType>(to_mx_dtype(x.dtype)), x.shape, x.ndim, next_version(),
               MXContext(x.device_type == 2 ? "gpu" : "cpu", x.device_id), kDefaultStorage);
}

template <typename T>
void add_into(void* dst, const void* src, int64_t n) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(d[i] + s[i]);
}

// Adds the op's result for an output whose request is "add to" (kAddTo).
inline int accumulate(const NDXLibTensor& out, const void* result, int64_t n) {
  if (out.device_type != 1)
    return fail("ndx cannot add a gpu output of an MXNet-API library op into its gradient");
  switch (out.dtype) {
    case kNDXLibBool: {
      uint8_t* d = static_cast<uint8_t*>(out.data);
      const uint8_t* s = static_cast<const uint8_t*>(result);
      for (int64_t i = 0; i < n; ++i) d[i] = d[i] || s[i];
      return 0;
    }
    case kNDXLibInt8:
      add_into<int8_t>(out.data, result, n);
      return 0;
    case kNDXLibInt16:
      add_into<int16_t>(out.data, result, n);
      return 0;
    case kNDXLibInt32:
      add_into<int32_t>(out.data, result, n);
      return 0;
    case kNDXLibInt64:
      add_into<int64_t>(out.data, result, n);
      return 0;
    case kNDXLibUInt8:
      add_into<uint8_t>(out.data, result, n);
      return 0;
    case kNDXLibUInt16:
      add_into<uint16_t>(out.data, result, n);
      return 0;
    case kNDXLibUInt32:
      add_into<uint32_t>(out.data, result, n);
      return 0;
    case kNDXLibUInt64:
      add_into<uint64_t>(out.data, result, n);
      return 0;
    case kNDXLibFloat32:
      add_into<float>(out.data, result, n);
      return 0;
    case kNDXLibFloat64:
      add_into<double>(out.data, result, n);
      return 0;
    default:
      return fail(
          "ndx cannot add a float16/bfloat16 output of an MXNet-API library op into its "
          "gradient (request kAddTo)");
  }
}

// One forward or backward call: MXNet's functions always overwrite their outputs, so an output
// ndx asks to be added to (or not written at all) is computed into temporary memory first.
template <typename F>
int run_compute(const char* op, const char* what, int32_t n_in, const NDXLibTensor* in,
                int32_t n_out, NDXLibTensor* out, const int32_t* req, const NDXLibResource* res,
                F&& fn) {
  std::vector<MXTensor> ins(static_cast<size_t>(n_in)), outs(static_cast<size_t>(n_out));
  for (int32_t i = 0; i < n_in; ++i) set_tensor(&ins[i], in[i]);
  bool on_gpu = n_out ? out[0].device_type == 2 : (n_in ? in[0].device_type == 2 : false);
  for (int32_t j = 0; j < n_out; ++j) {
    set_tensor(&outs[j], out[j]);
    if (req[j] == kReqNull || req[j] == kReqAdd) {
      size_t bytes = ndx_itemsize(out[j].dtype) * static_cast<size_t>(outs[j].size());
      void* p = res->alloc_temp(res->ctx, bytes);
      if (!p && bytes) return fail("out of memory for a temporary output");
      outs[j].data_ptr = p;
      outs[j].setDLTensor();
    }
  }
  OpResource r(res, on_gpu);
  MXReturnValue rc = fn(&ins, &outs, r);
  if (!rc) return failed(op, what);
  if (static_cast<int32_t>(outs.size()) != n_out)
    return fail(std::string(what) + " of " + op + " changed the number of outputs");
  for (int32_t j = 0; j < n_out; ++j)
    if (req[j] == kReqAdd) {
      int e = accumulate(out[j], outs[j].data_ptr, outs[j].size());
      if (e) return e;
    }
  return 0;
}

// ---- the C ABI functions -----------------------------------------------------------------

inline int parse_attrs(const NDXLibAttrs* a, int32_t* n_in, int32_t* n_out) {
  return guard("parseAttrs", [&]() -> int {
    CustomOp* op = find_op(a);
    if (!op) return fail("op not found in the library");
    int i = 1, o = 1;
    if (op->parse_attrs) {
      if (!op->parse_attrs(attr_map(a), &i, &o)) return failed(op->name, "parseAttrs");
    }
    *n_in = i, *n_out = o;
    return 0;
  });
}

inline int infer_shape(const NDXLibAttrs* a, int32_t n_in, const int64_t* const* in,
                       const int32_t* in_nd, int32_t n_out, int64_t* out, int32_t* out_nd) {
  return guard("inferShape", [&]() -> int {
    CustomOp* op = find_op(a);
    if (!op || !op->infer_shape) return fail("op has no inferShape");
    std::vector<std::vector<unsigned int>> ins(static_cast<size_t>(n_in)),
        outs(static_cast<size_t>(n_out));
    for (int32_t i = 0; i < n_in; ++i)
      for (int32_t k = 0; k < in_nd[i]; ++k) {
        if (in[i][k] > static_cast<int64_t>(UINT_MAX))
          return fail(std::string(op->name) + ": input " + std::to_string(i) +
                      " has a dimension too large for MXNet's unsigned int shapes");
        ins[i].push_back(static_cast<unsigned int>(in[i][k]));
      }
    if (!op->infer_shape(attr_map(a), &ins, &outs)) return failed(op->name, "inferShape");
    if (static_cast<int32_t>(outs.size()) != n_out)
      return fail(std::string("inferShape of ") + op->name + " gave " +
                  std::to_string(outs.size()) + " output shapes for " + std::to_string(n_out) +
                  " outputs");
    for (int32_t j = 0; j < n_out; ++j) {
      if (outs[j].size() > NDX_LIB_MAX_DIMS)
        return fail(std::string("inferShape of ") + op->name + " gave output " + std::to_string(j) +
                    " more than " + std::to_string(NDX_LIB_MAX_DIMS) + " dimensions");
      out_nd[j] = static_cast<int32_t>(outs[j].size());
      for (size_t k = 0; k < outs[j].size(); ++k) out[j * NDX_LIB_MAX_DIMS + k] = outs[j][k];
    }
    return 0;
  });
}

inline int infer_type(const NDXLibAttrs* a, int32_t n_in, const int32_t* in, int32_t n_out,
                      int32_t* out) {
  return guard("inferType", [&]() -> int {
    CustomOp* op = find_op(a);
    if (!op) return fail("op not found in the library");
    MXAttrs_ attrs = attr_map(a);
    if (op->infer_storage_type) {  // dense only: the op must not ask for sparse outputs
      std::vector<int> in_st(static_cast<size_t>(n_in), kDefaultStorage),
          out_st(static_cast<size_t>(n_out), -1);
      if (!op->infer_storage_type(attrs, &in_st, &out_st)) return failed(op->name, "inferSType");
      for (size_t j = 0; j < out_st.size(); ++j)
        if (out_st[j] != -1 && out_st[j] != kDefaultStorage)
          return fail(std::string("inferSType of ") + op->name + " asks for " +
                      (out_st[j] == kCSRStorage         ? "csr"
                       : out_st[j] == kRowSparseStorage ? "row_sparse"
                                                        : "an unknown") +
                      " storage for output " + std::to_string(j) +
                      "; ndx supports dense storage only in operator libraries");
    }
    if (!op->infer_type) {  // every output takes input 0's dtype (float32 without inputs)
      for (int32_t j = 0; j < n_out; ++j) out[j] = n_in ? in[0] : kNDXLibFloat32;
      return 0;
    }
    std::vector<int> ins(static_cast<size_t>(n_in)), outs(static_cast<size_t>(n_out), -1);
    for (int32_t i = 0; i < n_in; ++i) ins[i] = to_mx_dtype(in[i]);
    if (!op->infer_type(attrs, &ins, &outs)) return failed(op->name, "inferType");
    if (static_cast<int32_t>(outs.size()) != n_out)
      return fail(std::string("inferType of ") + op->name + " gave " + std::to_string(outs.size()) +
                  " output dtypes for " + std::to_string(n_out) + " outputs");
    for (int32_t j = 0; j < n_out; ++j) {
      int t = to_ndx_dtype(outs[j]);
      if (t < 0)
        return fail(std::string("inferType of ") + op->name + " gave output " + std::to_string(j) +
                    " the dtype code " + std::to_string(outs[j]) +
                    (outs[j] == -1 || outs[j] == kUNSET ? " (left unset)" : "") +
                    "; expected one of MXNet's MXDType codes");
      out[j] = t;
    }
    return 0;
  });
}

template <bool kBackward, int kDev>
int compute(const NDXLibAttrs* a, int32_t n_in, const NDXLibTensor* in, int32_t n_out,
            NDXLibTensor* out, const int32_t* req, const NDXLibResource* res) {
  const char* what = kBackward ? "backward" : "forward";
  return guard(what, [&]() -> int {
    CustomOp* op = find_op(a);
    if (!op) return fail("op not found in the library");
    fcomp_t f = kBackward ? op->backward_[kDev] : op->forward_[kDev];
    if (!f) return fail(std::string(op->name) + " has no " + what);
    MXAttrs_ attrs = attr_map(a);
    return run_compute(op->name, what, n_in, in, n_out, out, req, res,
                       [&](std::vector<MXTensor>* i, std::vector<MXTensor>* o,
                           const OpResource& r) { return f(attrs, i, o, r); });
  });
}

// A stateful op's state as ndx holds it: the library's CustomStatefulOp is made at the first
// forward, when MXNet 2.0's createOpState can be told the device, input shapes and dtypes.
struct StateBox {
  CustomOp* op = nullptr;
  MXAttrs_ attrs;
  CustomStatefulOp* inst = nullptr;
  ~StateBox() { delete inst; }
};

inline int create_state(const NDXLibAttrs* a, void** state) {
  return guard("createOpState", [&]() -> int {
    CustomOp* op = find_op(a);
    if (!op || (!op->create_state_ && !op->create_state_v1_)) return fail("op has no state");
    StateBox* box = new StateBox();
    box->op = op;
    box->attrs = attr_map(a);
    *state = box;
    return 0;
  });
}

inline int make_instance(StateBox* box, int32_t n_in, const NDXLibTensor* in) {
  CustomOp* op = box->op;
  CustomStatefulOp* inst = nullptr;
  MXReturnValue rc;
  if (op->create_state_) {
    MXContext ctx = n_in ? MXContext(in[0].device_type == 2 ? "gpu" : "cpu", in[0].device_id)
                         : MXContext::CPU();
    std::vector<std::vector<unsigned int>> shapes(static_cast<size_t>(n_in));
    std::vector<int> types(static_cast<size_t>(n_in));
    for (int32_t i = 0; i < n_in; ++i) {
      for (int32_t k = 0; k < in[i].ndim; ++k)
        shapes[i].push_back(static_cast<unsigned int>(in[i].shape[k]));
      types[i] = to_mx_dtype(in[i].dtype);
    }
    rc = op->create_state_(box->attrs, ctx, shapes, types, &inst);
  } else {
    rc = op->create_state_v1_(box->attrs, &inst);
  }
  if (!rc) {
    delete inst;
    return failed(op->name, "createOpState");
  }
  if (!inst) return fail(std::string("createOpState of ") + op->name + " made no state");
  box->inst = inst;
  return 0;
}

template <bool kBackward>
int state_compute(void* state, int32_t n_in, const NDXLibTensor* in, int32_t n_out,
                  NDXLibTensor* out, const int32_t* req, const NDXLibResource* res) {
  const char* what = kBackward ? "stateful backward" : "stateful forward";
  return guard(what, [&]() -> int {
    StateBox* box = static_cast<StateBox*>(state);
    if (!box->inst) {
      if (kBackward) return fail(std::string(box->op->name) + ": backward ran before any forward");
      int e = make_instance(box, n_in, in);
      if (e) return e;
    }
    CustomStatefulOp* inst = box->inst;
    return run_compute(
        box->op->name, what, n_in, in, n_out, out, req, res,
        [&](std::vector<MXTensor>* i, std::vector<MXTensor>* o, const OpResource& r) {
          return kBackward ? inst->Backward(i, o, r) : inst->Forward(i, o, r);
        });
  });
}

// The state's destructor is the library's own: it must not throw.
inline void destroy_state(void* state) { delete static_cast<StateBox*>(state); }

inline int mutate_inputs(const NDXLibAttrs* a, int32_t* num, int32_t* indices) {
  return guard("mutateInputs", [&]() -> int {
    CustomOp* op = find_op(a);
    if (!op || !op->mutate_inputs) return fail("op mutates no inputs");
    std::vector<int> idx;
    if (!op->mutate_inputs(attr_map(a), &idx)) return failed(op->name, "mutateInputs");
    if (idx.size() > NDX_LIB_MAX_DIMS)
      return fail(std::string("mutateInputs of ") + op->name + " names more than " +
                  std::to_string(NDX_LIB_MAX_DIMS) + " inputs");
    *num = static_cast<int32_t>(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) indices[i] = idx[i];
    return 0;
  });
}

inline void seed_states(std::vector<mx_cpu_rand_t>* states, uint64_t base) {
  // splitmix64 of base + i: independent seeds for the generators.
  for (size_t i = 0; i < states->size(); ++i) {
    uint64_t z = base + 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    (*states)[i].seed(static_cast<mx_cpu_rand_t::result_type>(z ^ (z >> 32)));
  }
}

}  // namespace ndx_detail
#pragma GCC visibility pop

inline mx_cpu_rand_t* OpResource::get_cpu_rand_states() const {
  // One set per thread, kept between calls (no allocation per call), reseeded for each call
  // at its first request.
  static thread_local std::vector<mx_cpu_rand_t> states(MX_NUM_CPU_RANDOM_STATES);
  if (!states_) {
    ndx_detail::seed_states(&states, res_->next_random(res_->ctx));
    states_ = states.data();
  }
  return states_;
}

}  // namespace ext
}  // namespace mxnet

// The entry points ndx looks up with dlsym. Weak, so that every file of a library may include
// this header.
extern "C" {
__attribute__((weak, visibility("default"))) int ndx_lib_version() { return NDX_LIB_API_VERSION; }
__attribute__((weak, visibility("default"))) const char* ndx_lib_last_error() {
  return ::mxnet::ext::ndx_detail::last_error().c_str();
}
// Runs initialize() first (once). When it fails, the library reports one op whose lookup fails
// with initialize's message, so that ndx's load raises it.
__attribute__((weak, visibility("default"))) int ndx_lib_num_ops() {
  if (!::mxnet::ext::ndx_detail::initialized()) return 1;
  return ::mxnet::ext::Registry<::mxnet::ext::CustomOp>::get()->size();
}
__attribute__((weak, visibility("default"))) int ndx_lib_get_op(int i, NDXLibOp* out) {
  namespace d = ::mxnet::ext::ndx_detail;
  using ::mxnet::ext::CustomOp;
  if (!d::initialized()) return d::fail(d::init_error());
  auto* reg = ::mxnet::ext::Registry<CustomOp>::get();
  if (i < 0 || i >= reg->size()) return d::fail("op index out of range");
  CustomOp& op = reg->get(i);
  std::string name = op.name ? op.name : "";
  if (!op.error_.empty()) return d::fail("op '" + name + "': " + op.error_);
  if (op.isSGop)
    return d::fail("op '" + name +
                   "' is an MXNet subgraph op (setIsSubgraphOp); ndx does not run subgraph ops");
  bool stateful = op.create_state_ || op.create_state_v1_;
  if (!stateful && op.gpu_state_ && !op.forward_[0] && !op.forward_[1])
    return d::fail("op '" + name +
                   "' is stateful on gpu only (setCreateOpState(..., \"gpu\")); ndx runs "
                   "stateful library ops on cpu only");
  std::memset(out, 0, sizeof(*out));
  out->name = op.name;
  out->parse_attrs = d::parse_attrs;
  out->infer_shape = op.infer_shape ? d::infer_shape : nullptr;
  out->infer_type = d::infer_type;
  if (stateful) {
    out->create_state = d::create_state;
    out->state_forward = d::state_compute<false>;
    out->state_backward = d::state_compute<true>;  // the state's Backward says if it has none
    out->destroy_state = d::destroy_state;
  } else {
    out->forward_cpu = op.forward_[0] ? d::compute<false, 0> : nullptr;
    out->backward_cpu = op.backward_[0] ? d::compute<true, 0> : nullptr;
    out->forward_gpu = op.forward_[1] ? d::compute<false, 1> : nullptr;
    out->backward_gpu = op.backward_[1] ? d::compute<true, 1> : nullptr;
  }
  out->mutate_inputs = op.mutate_inputs ? d::mutate_inputs : nullptr;
  return 0;
}
}  // extern "C"

// MXNet 1.x declared these names globally; 2.0 code says `using namespace mxnet::ext;`. Both
// compile. Define NDX_MXNET_NO_GLOBAL_NAMES to keep them in the namespace only.
#ifndef NDX_MXNET_NO_GLOBAL_NAMES
using namespace mxnet::ext;  // NOLINT
#endif

#endif  // MXNET_LIB_API_H_
