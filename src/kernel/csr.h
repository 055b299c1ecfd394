// Kernels of CSR (compressed sparse row) matrices times dense row-major arrays, a vector at a
// time (operator/sparse.cc has the ops). A CSR matrix is its row starts `indptr` (rows + 1),
// the column of each stored value `indices` and the values `val`. Each call covers rows
// [r0, r1) so the caller can split the rows (or, for the transpose, columns) over threads.
#pragma once
#include <cstdint>

namespace ndx::kernel {

// The first position j < nnz whose index is outside [0, limit), or nnz when all are inside.
int64_t first_index_outside(const int64_t* indices, int64_t nnz, int64_t limit);

// out[i, :] = sum_j val[j] * rhs[indices[j], :] for rows i in [r0, r1) (rhs and out have n
// columns).
void csr_times_dense(const int64_t* indptr, const int64_t* indices, const float* val,
                     const float* rhs, int64_t n, float* out, int64_t r0, int64_t r1);
void csr_times_dense(const int64_t* indptr, const int64_t* indices, const double* val,
                     const double* rhs, int64_t n, double* out, int64_t r0, int64_t r1);

// out[indices[j], c0:c1] += val[j] * rhs[i, c0:c1] for rows i in [r0, r1): the transpose's
// product, restricted to columns [c0, c1) of out and rhs (n columns).
void csr_transpose_add(const int64_t* indptr, const int64_t* indices, const float* val,
                       const float* rhs, int64_t n, int64_t c0, int64_t c1, float* out, int64_t r0,
                       int64_t r1);
void csr_transpose_add(const int64_t* indptr, const int64_t* indices, const double* val,
                       const double* rhs, int64_t n, int64_t c0, int64_t c1, double* out,
                       int64_t r0, int64_t r1);

// g[j] = <left[row a], right[row b]> (n columns) for each stored position j of rows [r0, r1),
// with (a, b) = (i, indices[j]), or (indices[j], i) when `swap`.
void csr_sampled_dot(const int64_t* indptr, const int64_t* indices, const float* left,
                     const float* right, int64_t n, bool swap, float* g, int64_t r0, int64_t r1);
void csr_sampled_dot(const int64_t* indptr, const int64_t* indices, const double* left,
                     const double* right, int64_t n, bool swap, double* g, int64_t r0, int64_t r1);

}  // namespace ndx::kernel
