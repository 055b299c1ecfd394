// GEMM for the op families that multiply matrices (nn, conv): OpenBLAS for float and double,
// with the 16-bit floats computed in float.
#pragma once
#include <cblas.h>

#include "kernel/parallel.h"

#include <algorithm>
#include <type_traits>

#include "gpu/runtime.h"
#include "ndx/device.h"
#include "ndx/dtype.h"

namespace ndx::kernel {

// The type products are computed in: float for the 16-bit floats.
inline DType gemm_dtype(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 ? DType::kFloat32 : t;
}

// Runs f(T{}) with T = float or double for gemm dtype t.
template <typename F>
void with_gemm_type(DType t, F f, const char* op = "gemm") {
  if (t == DType::kFloat32)
    f(float{});
  else if (t == DType::kFloat64)
    f(double{});
  else
    unsupported_dtype(op, t);
}

// C (m x n, row-major, contiguous) = op(A) @ op(B) + beta * C, op transposing when ta / tb;
// A and B contiguous too.
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* A, const T* B, T beta, T* C) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == T(0))
      std::fill(C, C + m * n, T(0));
    else
      for (int64_t i = 0; i < m * n; ++i) C[i] *= beta;
    return;
  }
  sync_blas_threads();
  const auto lda = static_cast<blasint>(ta ? m : k), ldb = static_cast<blasint>(tb ? k : n);
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, TA, TB, static_cast<blasint>(m), static_cast<blasint>(n),
                static_cast<blasint>(k), 1.0f, A, lda, B, ldb, beta, C, static_cast<blasint>(n));
  else
    cblas_dgemm(CblasRowMajor, TA, TB, static_cast<blasint>(m), static_cast<blasint>(n),
                static_cast<blasint>(k), 1.0, A, lda, B, ldb, beta, C, static_cast<blasint>(n));
}

// The same on the device holding the matrices: cuBLAS for a GPU.
template <typename T>
void gemm(const Device& device, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* A,
          const T* B, T beta, T* C) {
  if (!device.is_gpu()) return gemm<T>(ta, tb, m, n, k, A, B, beta, C);
  cuda::GemmArgs g;
  g.dtype = dtype_of<T>;
  g.trans_a = ta;
  g.trans_b = tb;
  g.rows = m;
  g.cols = n;
  g.inner = k;
  g.a = A;
  g.b = B;
  g.c = C;
  g.lda = ta ? m : k;
  g.ldb = tb ? k : n;
  g.ldc = n;
  g.beta = static_cast<double>(beta);
  cuda::gemm(g, device.id);
}

}  // namespace ndx::kernel
