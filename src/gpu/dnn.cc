// cuDNN for convolution, opened at first use (dlopen of libcudnn.so.9) like cuBLAS: libndx
// needs no cuDNN to load. Float32 convolutions run in float32 (CUDNN_FMA_MATH: no TF32)
// unless NDX_CUDA_ALLOW_TF32=1. Algorithms are timed once per problem by cuDNN's Find (as
// MXNet autotunes by default); NDX_CUDNN_AUTOTUNE=0 takes its heuristic ranking (the _v7
// queries) instead. Either way the first usable within the workspace limit is kept.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cudnn.h>
#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/runtime.h"
#include "ndx/error.h"
#include "ndx/storage.h"

namespace ndx::cuda {
namespace {

// One entry per line, left alone: clang-format does not settle on one layout for this list.
// clang-format off
#define NDX_CUDNN_FUNCTIONS(X) \
  X(cudnnCreate) \
  X(cudnnSetStream) \
  X(cudnnCreateTensorDescriptor) \
  X(cudnnSetTensorNdDescriptor) \
  X(cudnnDestroyTensorDescriptor) \
  X(cudnnCreateFilterDescriptor) \
  X(cudnnSetFilterNdDescriptor) \
  X(cudnnDestroyFilterDescriptor) \
  X(cudnnCreateConvolutionDescriptor) \
  X(cudnnSetConvolutionNdDescriptor) \
  X(cudnnSetConvolutionGroupCount) \
  X(cudnnSetConvolutionMathType) \
  X(cudnnDestroyConvolutionDescriptor) \
  X(cudnnGetConvolutionForwardAlgorithm_v7) \
  X(cudnnFindConvolutionForwardAlgorithm) \
  X(cudnnGetConvolutionForwardWorkspaceSize) \
  X(cudnnConvolutionForward) \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7) \
  X(cudnnFindConvolutionBackwardDataAlgorithm) \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(cudnnConvolutionBackwardData) \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7) \
  X(cudnnFindConvolutionBackwardFilterAlgorithm) \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(cudnnConvolutionBackwardFilter)
// clang-format on

struct Cudnn {
#define NDX_MEMBER_(f) decltype(&::f) f = nullptr;
  NDX_CUDNN_FUNCTIONS(NDX_MEMBER_)
#undef NDX_MEMBER_
  std::string error;
};

const Cudnn& lib() {
  static const Cudnn c = [] {
    Cudnn r;
    void* h = nullptr;
    for (const char* name : {"libcudnn.so.9", "libcudnn.so"})
      if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!h) {
      r.error = std::string("cuDNN (libcudnn.so.9) could not be loaded: ") + dlerror();
      return r;
    }
#define NDX_BIND_(f)                                    \
  r.f = reinterpret_cast<decltype(&::f)>(dlsym(h, #f)); \
  if (!r.f && r.error.empty()) r.error = "cuDNN lacks " #f;
    NDX_CUDNN_FUNCTIONS(NDX_BIND_)
#undef NDX_BIND_
    return r;
  }();
  return c;
}

void check(cudnnStatus_t s, const char* where) {
  if (s != CUDNN_STATUS_SUCCESS)
    raise(ErrorKind::kRuntimeError, "[", where, "] cuDNN error ", static_cast<int>(s));
}

cudnnHandle_t handle(int device) {
  thread_local std::vector<cudnnHandle_t> handles;
  if (static_cast<int>(handles.size()) <= device) handles.resize(device + 1, nullptr);
  if (!handles[device]) check(lib().cudnnCreate(&handles[device]), "convolution");
  check(lib().cudnnSetStream(handles[device], static_cast<cudaStream_t>(current_stream())),
        "convolution");
  return handles[device];
}

bool allow_tf32() {
  static const bool on = [] {
    const char* v = std::getenv("NDX_CUDA_ALLOW_TF32");
    return v && std::string(v) == "1";
  }();
  return on;
}

// The descriptors of one convolution, destroyed with it.
class Problem {
 public:
  explicit Problem(const ConvArgs& a) : lib_(lib()) {
    const cudnnDataType_t t = a.dtype == DType::kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    check(lib_.cudnnCreateTensorDescriptor(&x_), "convolution");
    check(lib_.cudnnCreateTensorDescriptor(&y_), "convolution");
    check(lib_.cudnnCreateFilterDescriptor(&w_), "convolution");
    check(lib_.cudnnCreateConvolutionDescriptor(&conv_), "convolution");
    // (n, c, [d,] h, w) with packed strides; the spatial fields of (d, h, w) that are used.
    const int nsp = a.volumetric ? 3 : 2;
    const auto spatial = [&](int64_t dz, int64_t hy, int64_t wx) {
      return a.volumetric ? std::array<int, 3>{dim(dz), dim(hy), dim(wx)}
                          : std::array<int, 3>{dim(hy), dim(wx), 0};
    };
    const auto tensor = [&](cudnnTensorDescriptor_t desc, int64_t channels, int64_t dz, int64_t hy,
                            int64_t wx) {
      const auto sp = spatial(dz, hy, wx);
      int dims[5] = {dim(a.n), dim(channels), sp[0], sp[1], sp[2]}, strides[5];
      strides[nsp + 1] = 1;
      for (int i = nsp; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
      check(lib_.cudnnSetTensorNdDescriptor(desc, t, nsp + 2, dims, strides), "convolution");
    };
    tensor(x_, a.c, a.d, a.h, a.w);
    tensor(y_, a.f, a.od, a.oh, a.ow);
    const auto k = spatial(a.kd, a.kh, a.kw);
    const int filter[5] = {dim(a.f), dim(a.c / a.groups), k[0], k[1], k[2]};
    check(lib_.cudnnSetFilterNdDescriptor(w_, t, CUDNN_TENSOR_NCHW, nsp + 2, filter),
          "convolution");
    const auto pad = spatial(a.pd, a.ph, a.pw), stride = spatial(a.sd, a.sh, a.sw),
               dilate = spatial(a.dd, a.dh, a.dw);
    check(lib_.cudnnSetConvolutionNdDescriptor(conv_, nsp, pad.data(), stride.data(), dilate.data(),
                                               CUDNN_CROSS_CORRELATION, t),
          "convolution");
    check(lib_.cudnnSetConvolutionGroupCount(conv_, dim(a.groups)), "convolution");
    check(lib_.cudnnSetConvolutionMathType(conv_, a.dtype == DType::kFloat32 && allow_tf32()
                                                      ? CUDNN_DEFAULT_MATH
                                                      : CUDNN_FMA_MATH),
          "convolution");
  }
  ~Problem() {
    lib_.cudnnDestroyTensorDescriptor(x_);
    lib_.cudnnDestroyTensorDescriptor(y_);
    lib_.cudnnDestroyFilterDescriptor(w_);
    lib_.cudnnDestroyConvolutionDescriptor(conv_);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;

 private:
  static int dim(int64_t v) {
    if (v > (int64_t{1} << 31) - 1)
      not_implemented("[convolution] dimensions past 2**31 are not supported by cuDNN");
    return static_cast<int>(v);
  }
  const Cudnn& lib_;
};

constexpr std::size_t kMaxWorkspace = std::size_t{1} << 30;

// Whether algorithms are chosen by timing them (cuDNN's Find, once per problem), as MXNet's
// MXNET_CUDNN_AUTOTUNE_DEFAULT=1 does; NDX_CUDNN_AUTOTUNE=0 takes cuDNN's heuristic ranking.
bool autotune() {
  static const bool on = [] {
    const char* v = std::getenv("NDX_CUDNN_AUTOTUNE");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

// The first algorithm of a ranking that succeeded, fits the workspace limit and, in float32
// without TF32, is not a tensor-op result; -1 when none is.
template <class Perf>
int first_usable(const Perf* perf, int count, DType t) {
  for (int i = 0; i < count; ++i) {
    const bool tensor_ops = perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
                            perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace &&
        !(tensor_ops && t == DType::kFloat32 && !allow_tf32()))
      return i;
  }
  return -1;
}

// The algorithm for one problem: the fastest cuDNN measured (autotune), or, when timing is off
// or fails (it allocates its own buffers), the first of the heuristic ranking; and its
// workspace size.
template <class Perf, int kCount, class Find, class Heuristic, class Bytes>
auto rank_and_pick(DType t, Find find, Heuristic heuristic, Bytes bytes_of) {
  Perf perf[kCount];
  int n = 0, i = -1;
  if (autotune() && find(kCount, &n, perf) == CUDNN_STATUS_SUCCESS) i = first_usable(perf, n, t);
  if (i < 0) {
    check(heuristic(kCount, &n, perf), "convolution");
    i = first_usable(perf, n, t);
  }
  if (i < 0)
    raise(ErrorKind::kRuntimeError, "[convolution] cuDNN found no algorithm for this problem");
  std::size_t bytes = 0;
  check(bytes_of(perf[i].algo, &bytes), "convolution");
  return std::pair{perf[i].algo, bytes};
}

struct Scalars {
  double one_d = 1, zero_d = 0;
  float one_f = 1, zero_f = 0;
  const void* one(DType t) const {
    return t == DType::kFloat64 ? &one_d : static_cast<const void*>(&one_f);
  }
  const void* zero(DType t) const {
    return t == DType::kFloat64 ? &zero_d : static_cast<const void*>(&zero_f);
  }
};

// cuDNN 9 answers the _v7 heuristic queries slowly (they build engine configurations through
// its graph API): the choice is kept per problem, as PyTorch keeps its own.
using ProblemKey = std::array<int64_t, 28>;
ProblemKey key_of(const ConvArgs& a, int kind, int device) {
  return {static_cast<int64_t>(a.dtype),
          a.volumetric ? 1 : 0,
          a.n,
          a.c,
          a.d,
          a.h,
          a.w,
          a.f,
          a.groups,
          a.kd,
          a.kh,
          a.kw,
          a.sd,
          a.sh,
          a.sw,
          a.pd,
          a.ph,
          a.pw,
          a.dd,
          a.dh,
          a.dw,
          a.od,
          a.oh,
          a.ow,
          kind,
          device,
          allow_tf32() ? 1 : 0,
          0};
}
struct Choice {
  int algo = 0;
  std::size_t bytes = 0;
};
std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<ProblemKey, Choice>& cache() {
  static auto* c = new std::map<ProblemKey, Choice>();
  return *c;
}
// The cached choice for (a, kind), or the one `find` makes (then cached).
template <class Find>
Choice choose(const ConvArgs& a, int kind, int device, Find find) {
  const ProblemKey k = key_of(a, kind, device);
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    auto it = cache().find(k);
    if (it != cache().end()) return it->second;
  }
  const Choice c = find();
  std::lock_guard<std::mutex> lock(cache_mutex());
  cache()[k] = c;
  return c;
}

std::shared_ptr<Storage> workspace(std::size_t bytes, int device) {
  return bytes ? Storage::allocate(bytes, gpu(device)) : nullptr;
}

}  // namespace

bool dnn_available() { return lib().error.empty(); }

void conv_forward(const ConvArgs& a, const void* x, const void* w, void* y, int device) {
  DeviceGuard guard(device);
  Problem p(a);
  const Cudnn& c = lib();
  cudnnHandle_t h = handle(device);
  const Choice ch = choose(a, 0, device, [&] {
    const auto [algo, bytes] =
        rank_and_pick<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
            a.dtype,
            [&](int k, int* n, auto* perf) {
              return c.cudnnFindConvolutionForwardAlgorithm(h, p.x_, p.w_, p.conv_, p.y_, k, n,
                                                            perf);
            },
            [&](int k, int* n, auto* perf) {
              return c.cudnnGetConvolutionForwardAlgorithm_v7(h, p.x_, p.w_, p.conv_, p.y_, k, n,
                                                              perf);
            },
            [&](auto algo, std::size_t* bytes) {
              return c.cudnnGetConvolutionForwardWorkspaceSize(h, p.x_, p.w_, p.conv_, p.y_, algo,
                                                               bytes);
            });
    return Choice{static_cast<int>(algo), bytes};
  });
  const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(ch.algo);
  const std::size_t bytes = ch.bytes;
  auto ws = workspace(bytes, device);
  const Scalars s;
  check(c.cudnnConvolutionForward(h, s.one(a.dtype), p.x_, x, p.w_, w, p.conv_, algo,
                                  ws ? ws->data() : nullptr, bytes, s.zero(a.dtype), p.y_, y),
        "convolution");
}

void conv_backward_data(const ConvArgs& a, const void* w, const void* dy, void* dx, int device) {
  DeviceGuard guard(device);
  Problem p(a);
  const Cudnn& c = lib();
  cudnnHandle_t h = handle(device);
  const Choice ch = choose(a, 1, device, [&] {
    const auto [algo, bytes] =
        rank_and_pick<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT>(
            a.dtype,
            [&](int k, int* n, auto* perf) {
              return c.cudnnFindConvolutionBackwardDataAlgorithm(h, p.w_, p.y_, p.conv_, p.x_, k, n,
                                                                 perf);
            },
            [&](int k, int* n, auto* perf) {
              return c.cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p.w_, p.y_, p.conv_, p.x_, k,
                                                                   n, perf);
            },
            [&](auto algo, std::size_t* bytes) {
              return c.cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.w_, p.y_, p.conv_, p.x_,
                                                                    algo, bytes);
            });
    return Choice{static_cast<int>(algo), bytes};
  });
  const auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(ch.algo);
  const std::size_t bytes = ch.bytes;
  auto ws = workspace(bytes, device);
  const Scalars s;
  check(c.cudnnConvolutionBackwardData(h, s.one(a.dtype), p.w_, w, p.y_, dy, p.conv_, algo,
                                       ws ? ws->data() : nullptr, bytes, s.zero(a.dtype), p.x_, dx),
        "convolution");
}

void conv_backward_filter(const ConvArgs& a, const void* x, const void* dy, void* dw, int device) {
  DeviceGuard guard(device);
  Problem p(a);
  const Cudnn& c = lib();
  cudnnHandle_t h = handle(device);
  const Choice ch = choose(a, 2, device, [&] {
    const auto [algo, bytes] =
        rank_and_pick<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT>(
            a.dtype,
            [&](int k, int* n, auto* perf) {
              return c.cudnnFindConvolutionBackwardFilterAlgorithm(h, p.x_, p.y_, p.conv_, p.w_, k,
                                                                   n, perf);
            },
            [&](int k, int* n, auto* perf) {
              return c.cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p.x_, p.y_, p.conv_, p.w_,
                                                                     k, n, perf);
            },
            [&](auto algo, std::size_t* bytes) {
              return c.cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p.x_, p.y_, p.conv_, p.w_,
                                                                      algo, bytes);
            });
    return Choice{static_cast<int>(algo), bytes};
  });
  const auto algo = static_cast<cudnnConvolutionBwdFilterAlgo_t>(ch.algo);
  const std::size_t bytes = ch.bytes;
  auto ws = workspace(bytes, device);
  const Scalars s;
  check(
      c.cudnnConvolutionBackwardFilter(h, s.one(a.dtype), p.x_, x, p.y_, dy, p.conv_, algo,
                                       ws ? ws->data() : nullptr, bytes, s.zero(a.dtype), p.w_, dw),
      "convolution");
}

}  // namespace ndx::cuda
