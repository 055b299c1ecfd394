// The kernel engine's N-operand iterator: walks a shape with N operands, each with its own
// element strides (0 along broadcast dims), after dropping size-1 dims and merging dims that
// are contiguous for every operand. It hands its body runs of the innermost dim, so the body
// can vectorize when strides are 1, and it can start and stop at any flat index, so threads
// split the work by ranges of the (row-major) iteration order.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>

#include "ndx/shape.h"

namespace ndx {
// Strides of `src_strides` (for an operand of shape `src`) as seen against `out`, broadcasting
// size-1 and missing leading dims to stride 0.
Shape broadcast_strides(const Shape& src, const Shape& src_strides, const Shape& out);
}  // namespace ndx

namespace ndx::kernel {

template <int N>
struct Run {
  int64_t length;                 // elements in this run
  std::array<int64_t, N> offset;  // element offset of the run's start, per operand
  std::array<int64_t, N> stride;  // element stride inside the run, per operand
};

template <int N>
class NdIter {
 public:
  // strides[k] points at operand k's strides, one per dim of `shape`.
  NdIter(const Shape& shape, const std::array<const int64_t*, N>& strides) {
    size_ = shape.size();
    for (int i = 0; i < shape.ndim(); ++i) {
      if (shape[i] == 1) continue;
      bool merge = nd_ > 0;
      for (int k = 0; k < N && merge; ++k) merge = st_[k][nd_ - 1] == strides[k][i] * shape[i];
      if (merge) {
        dims_[nd_ - 1] *= shape[i];
        for (int k = 0; k < N; ++k) st_[k][nd_ - 1] = strides[k][i];
        continue;
      }
      dims_[nd_] = shape[i];
      for (int k = 0; k < N; ++k) st_[k][nd_] = strides[k][i];
      ++nd_;
    }
  }

  int64_t size() const { return size_; }
  int ndim() const { return nd_; }  // after coalescing
  int64_t dim(int d) const { return dims_[d]; }
  int64_t stride(int k, int d) const { return st_[k][d]; }
  // Length of the innermost (coalesced) dim: the longest run there is.
  int64_t inner() const { return nd_ ? dims_[nd_ - 1] : 1; }

  // This iteration with coalesced dim d restricted to [begin, end); *base gets each operand's
  // element offset of the restricted start.
  NdIter slice(int d, int64_t begin, int64_t end, std::array<int64_t, N>* base) const {
    NdIter s;
    s.nd_ = nd_;
    for (int i = 0; i < nd_; ++i) {
      s.dims_[i] = dims_[i];
      for (int k = 0; k < N; ++k) s.st_[k][i] = st_[k][i];
    }
    s.dims_[d] = end - begin;
    s.size_ = size_ / dims_[d] * (end - begin);
    for (int k = 0; k < N; ++k) (*base)[k] = begin * st_[k][d];
    return s;
  }

  // body(const Run<N>&) for the runs covering flat indices [begin, end).
  template <class Body>
  void for_each_run(int64_t begin, int64_t end, Body&& body) const {
    if (begin >= end) return;
    Run<N> run;
    if (nd_ == 0) {  // a single element
      run.length = 1;
      run.offset.fill(0);
      run.stride.fill(0);
      body(run);
      return;
    }
    const int inner = nd_ - 1;
    int64_t counter[Shape::kMaxDims];
    int64_t rest = begin;
    run.offset.fill(0);
    for (int d = inner; d >= 0; --d) {
      counter[d] = rest % dims_[d];
      rest /= dims_[d];
      for (int k = 0; k < N; ++k) run.offset[k] += counter[d] * st_[k][d];
    }
    for (int k = 0; k < N; ++k) run.stride[k] = st_[k][inner];
    for (int64_t pos = begin; pos < end;) {
      run.length = std::min(dims_[inner] - counter[inner], end - pos);
      body(run);
      pos += run.length;
      if (pos >= end) return;
      // Step to the start of the next row, carrying into the outer dims.
      for (int k = 0; k < N; ++k) run.offset[k] -= counter[inner] * st_[k][inner];
      counter[inner] = 0;
      for (int d = inner - 1; d >= 0; --d) {
        for (int k = 0; k < N; ++k) run.offset[k] += st_[k][d];
        if (++counter[d] < dims_[d]) break;
        for (int k = 0; k < N; ++k) run.offset[k] -= st_[k][d] * dims_[d];
        counter[d] = 0;
      }
    }
  }

 private:
  NdIter() = default;
  // Only the first nd_ entries are ever read: no zero-filling of 64-dim arrays per call.
  int nd_ = 0;
  int64_t size_ = 0;
  int64_t dims_[Shape::kMaxDims];
  int64_t st_[N][Shape::kMaxDims];
};

// dst[d] = the element strides of blob-like (shape, strides) seen against `out`: 0 along
// broadcast (size-1 or missing leading) dims.
inline void broadcast_strides_into(const Shape& shape, const Shape& strides, const Shape& out,
                                   int64_t* dst) {
  const int lead = out.ndim() - shape.ndim();
  for (int i = 0; i < lead; ++i) dst[i] = 0;
  for (int i = 0; i < shape.ndim(); ++i) dst[lead + i] = shape[i] == 1 ? 0 : strides[i];
}

}  // namespace ndx::kernel
