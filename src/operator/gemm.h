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

// Runs f(T{}) with T = float or double for compute dtype t (ndx/dtype.h).
template <typename F>
void with_gemm_type(DType t, F f, const char* op = "gemm") {
  if (t == DType::kFloat32)
    f(float{});
  else if (t == DType::kFloat64)
    f(double{});
  else
    unsupported_dtype(op, t);
}

// One BLAS call, C (m x n, row-major, leading dimension ldc) = op(A) @ op(B) + beta * C, on
// the calling thread's OpenBLAS (single-threaded under blas_single_thread).
template <typename T>
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda,
               const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  const auto LA = static_cast<blasint>(lda), LB = static_cast<blasint>(ldb),
             LC = static_cast<blasint>(ldc);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, TA, TB, M, N, K, 1.0f, A, LA, B, LB, beta, C, LC);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, TA, TB, M, N, K, 1.0, A, LA, B, LB, beta, C, LC);
  } else {  // complex64 / complex128: cgemm / zgemm take alpha and beta by pointer
    const T one(1);
    if constexpr (sizeof(T) == 8)
      cblas_cgemm(CblasRowMajor, TA, TB, M, N, K, &one, A, LA, B, LB, &beta, C, LC);
    else
      cblas_zgemm(CblasRowMajor, TA, TB, M, N, K, &one, A, LA, B, LB, &beta, C, LC);
  }
}

// Multiply-adds below which a product runs on one thread: splitting costs a wake-up and a
// second packing of the shared operand, about what a product of this size takes.
inline constexpr double kGemmPanelWork = 1 << 17;

// blas_gemm split over ndx's pool into panels of C's rows (or, when C is wider than tall, its
// columns), one single-threaded OpenBLAS call per panel. OpenBLAS's edge kernels order a sum
// over k differently from its main ones, so the last bits of an element can change with the
// thread count (as with OpenBLAS's own threads, in NumPy or PyTorch); for one thread count
// they never change. Called from inside a pool job, it runs on the calling thread.
template <typename T>
void gemm_panels(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda,
                 const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  blas_single_thread();
  const bool by_rows = m >= n;
  const int64_t extent = by_rows ? m : n, units = (extent + 15) / 16;  // panels: 16-multiples
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int64_t panels = std::min<int64_t>(
      {int64_t{num_threads()}, units, static_cast<int64_t>(work / kGemmPanelWork) + 1});
  if (panels <= 1) return blas_gemm(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
  parallel_for(panels, 1, [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) {
      const int64_t lo = std::min(extent, units * p / panels * 16),
                    hi = std::min(extent, units * (p + 1) / panels * 16);
      if (hi <= lo) continue;
      if (by_rows)  // rows lo..hi of op(A): stored row lo, or stored column lo when transposed
        blas_gemm(ta, tb, hi - lo, n, k, ta ? A + lo : A + lo * lda, lda, B, ldb, beta,
                  C + lo * ldc, ldc);
      else  // columns lo..hi of op(B)
        blas_gemm(ta, tb, m, hi - lo, k, A, lda, tb ? B + lo * ldb : B + lo, ldb, beta, C + lo,
                  ldc);
    }
  });
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
  gemm_panels<T>(ta, tb, m, n, k, A, ta ? m : k, B, tb ? k : n, beta, C, n);
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
