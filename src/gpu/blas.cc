// cuBLAS, opened at first use (dlopen), so libndx needs no cuBLAS to load and a CPU-only
// machine never looks for one. One handle per device per thread, on the thread's stream.
// Float32 products compute in float32 (TF32 off) unless NDX_CUDA_ALLOW_TF32=1.
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/runtime.h"
#include "ndx/error.h"

namespace ndx::cuda {
namespace {

struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasGemmStridedBatchedEx_64) gemm_strided_batched = nullptr;
  std::string error;
};

template <class F>
void bind(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
}

const Cublas& cublas() {
  static const Cublas c = [] {
    Cublas r;
    std::vector<std::string> names = {"libcublas.so.13", "libcublas.so"};
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* root = std::getenv(env))
        names.push_back(std::string(root) + "/lib64/libcublas.so.13");
    names.push_back("/usr/local/cuda/lib64/libcublas.so.13");
    void* lib = nullptr;
    for (const std::string& n : names)
      if ((lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      r.error = std::string("cuBLAS (libcublas.so.13) could not be loaded: ") + dlerror();
      return r;
    }
    bind(lib, "cublasCreate_v2", &r.create);
    bind(lib, "cublasSetStream_v2", &r.set_stream);
    bind(lib, "cublasSetMathMode", &r.set_math_mode);
    bind(lib, "cublasGemmStridedBatchedEx_64", &r.gemm_strided_batched);
    if (!r.create || !r.set_stream || !r.set_math_mode || !r.gemm_strided_batched)
      r.error = "cuBLAS lacks a function ndx needs (cublasGemmStridedBatchedEx_64)";
    return r;
  }();
  if (!c.error.empty()) raise(ErrorKind::kRuntimeError, "[matmul] ", c.error);
  return c;
}

void check(cublasStatus_t s, const char* where) {
  if (s != CUBLAS_STATUS_SUCCESS)
    raise(ErrorKind::kRuntimeError, "[", where, "] cuBLAS error ", static_cast<int>(s));
}

cublasHandle_t handle(int device) {
  thread_local std::vector<cublasHandle_t> handles;
  if (static_cast<int>(handles.size()) <= device) handles.resize(device + 1, nullptr);
  const Cublas& c = cublas();
  if (!handles[device]) {
    check(c.create(&handles[device]), "cublas");
    check(c.set_math_mode(handles[device], CUBLAS_DEFAULT_MATH), "cublas");
  }
  check(c.set_stream(handles[device], static_cast<cudaStream_t>(current_stream())), "cublas");
  return handles[device];
}

bool allow_tf32() {
  static const bool on = [] {
    const char* v = std::getenv("NDX_CUDA_ALLOW_TF32");
    return v && std::string(v) == "1";
  }();
  return on;
}

}  // namespace

void gemm(const GemmArgs& g, int device) {
  if (g.rows == 0 || g.cols == 0 || g.batch == 0) return;
  DeviceGuard guard(device);
  if (g.inner == 0) {         // an empty sum: C = beta * C, which cuBLAS will not take with k = 0
    if (g.beta != 0) return;  // only add-to (beta 1) reaches here with a nonzero beta
    const auto size = static_cast<std::size_t>(dtype_size(g.dtype));
    for (int64_t i = 0; i < g.batch; ++i)
      for (int64_t r = 0; r < g.rows; ++r)
        if (cudaMemsetAsync(static_cast<char*>(g.c) + (i * g.stride_c + r * g.ldc) * size, 0,
                            g.cols * size,
                            static_cast<cudaStream_t>(current_stream())) != cudaSuccess)
          raise(ErrorKind::kRuntimeError, "[matmul] CUDA error clearing the output");
    return;
  }
  cudaDataType type;
  cublasComputeType_t compute;
  double alpha = 1.0;
  float alpha_f = 1.0f, beta_f = static_cast<float>(g.beta);
  const void *alpha_p = &alpha_f, *beta_p = &beta_f;
  switch (g.dtype) {
    case DType::kFloat32:
      type = CUDA_R_32F;
      compute = allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case DType::kFloat64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      alpha_p = &alpha;
      beta_p = &g.beta;
      break;
    case DType::kFloat16:
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kBFloat16:
      type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
    default:
      not_implemented("[matmul] cuBLAS products of ", g.dtype, " are not supported");
  }
  // Row-major C (n x m) = op(A) (n x k) @ op(B) (k x m) is column-major C^T = op(B)^T op(A)^T:
  // cuBLAS gets B first.
  const auto opa = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const auto opb = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(cublas().gemm_strided_batched(handle(device), opb, opa, g.cols, g.rows, g.inner, alpha_p,
                                      g.b, type, g.ldb, g.stride_b, g.a, type, g.lda, g.stride_a,
                                      beta_p, g.c, type, g.ldc, g.stride_c, g.batch, compute,
                                      CUBLAS_GEMM_DEFAULT),
        "matmul");
}

}  // namespace ndx::cuda
